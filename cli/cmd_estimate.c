/* estimate: memory per stage and layer, the timeline's peak, the cost. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* The estimator's own hard errors (e.g. `model-needed`: the device count
 * is unknown) in the diagnostics' shape. */
static int mo_cli_estimate_error(const mo_cli *c, const mo_error *err)
{
	const char *text = err->text;
	const char *code = mo_cli_error_word(err);
	int line = err->line, column = err->column;
	const char *path = "parallel.world_size";
	/* the core says what is missing; how to give it on the command line is ours to say */
	const char *hint = err->code == MO_ERR_MODEL_NEEDED ? "pass --devices N" : NULL;
	/* the position is the model's: in the --model file when one was given, else in the
	 * training YAML that holds the model */
	const char *file = c->config_path;
	if (err->code == MO_ERR_MODEL_NEEDED) {
		mo_model_devices_position(c->model, &line, &column, &path);
		if (c->model_arg && !mo_cli_is_preset(c->model_arg))
			file = c->model_arg;
	}
	if (c->json) {
		json_t *d = json_pack("{s:s, s:s, s:i, s:i, s:s, s:s, s:s}", "code", code, "message",
				      text, "line", line, "column", column, "path", path,
				      "file", file, "severity", "error");
		if (d && hint)
			json_object_set_new(d, "hint", json_string(hint));
		mo_cli_print_json(json_pack("{s:b, s:[o], s:[]}", "valid", 0, "errors", d,
					    "warnings"));
	} else if (line > 0) {
		fprintf(stderr, "%s:%d:%d: error[%s]: %s\n", file, line, column, code, text);
	} else {
		fprintf(stderr, "%s: error[%s]: %s\n", file, code, text);
	}
	if (!c->json && hint)
		fprintf(stderr, "  = help: %s\n", hint);
	return mo_cli_exit_of(err);
}

/* --explain: the values the model import filled in, with their source. */
static void mo_cli_estimate_assumed(const mo_model *m)
{
	size_t n = mo_model_assumed_count(m);
	printf("\nassumed model values (the file leaves them out):%s\n", n ? "" : " none");
	for (size_t i = 0; i < n; i++) {
		const char *path = NULL, *value = NULL, *source = NULL;
		if (mo_model_assumed(m, i, &path, &value, &source) == 0)
			printf("  %s = %s  (%s)\n", path ? path : "?", value ? value : "?",
			       source ? source : "?");
	}
}

/* How the rules in use did on measured runs: one line (the runs are in
 * --json's "accuracy"). */
static void mo_cli_estimate_accuracy(const mo_estimate *e)
{
	json_t *a = mo_json_accuracy(e);
	size_t n = json_array_size(json_object_get(a, "runs"));

	if (n)
		printf("  measured accuracy of the %s rules: %zu runs, median |error| %.2f%%, "
		       "worst |error| %.2f%% (%s); every run with --json (accuracy)\n",
		       json_string_value(json_object_get(a, "rules")), n,
		       json_real_value(json_object_get(a, "median_abs_error_percent")),
		       json_real_value(json_object_get(a, "max_abs_error_percent")),
		       json_string_value(json_object_get(a, "worst_run")));
	else if (a)
		printf("  measured accuracy of the %s rules: no measured run\n",
		       json_string_value(json_object_get(a, "rules")));
	json_decref(a);
}

/* The first few items of a list, then how many more: a line stays short. */
#define MO_CLI_TRUST_NAMES 4

/* The values the model import filled in, by name (their sources with
 * --explain). */
static void mo_cli_estimate_assumed_short(const mo_model *m)
{
	size_t n = mo_model_assumed_count(m);

	if (!n) {
		printf("  assumed: no model value (the file gives every one)\n");
		return;
	}
	printf("  assumed: %zu model value%s the file leaves out (", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < MO_CLI_TRUST_NAMES; i++) {
		const char *path = NULL, *value = NULL, *source = NULL;
		if (mo_model_assumed(m, i, &path, &value, &source) == 0)
			printf("%s%s = %s", i ? ", " : "", path ? path : "?", value ? value : "?");
	}
	if (n > MO_CLI_TRUST_NAMES)
		printf(", %zu more", n - MO_CLI_TRUST_NAMES);
	printf("); --explain gives their sources\n");
}

/* What the estimate leaves out: the findings that name a setting it does
 * not model (the warnings above say each one whole). */
static void mo_cli_estimate_left_out(const mo_diags *d)
{
	size_t n = 0;

	for (size_t i = 0; i < mo_diags_count(d); i++)
		if (strcmp(mo_diags_get(d, i)->code, "unmodelled") == 0)
			n++;
	if (!n) {
		printf("  left out: nothing this file sets is known to be left out\n");
		return;
	}
	printf("  left out: %zu setting%s not modelled (", n, n == 1 ? "" : "s");
	for (size_t i = 0, k = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		if (strcmp(g->code, "unmodelled") != 0)
			continue;
		if (k < MO_CLI_TRUST_NAMES)
			printf("%s%s", k ? ", " : "", g->path && *g->path ? g->path : g->message);
		k++;
	}
	if (n > MO_CLI_TRUST_NAMES)
		printf(", %zu more", n - MO_CLI_TRUST_NAMES);
	printf("; see the warnings)\n");
}

/* How far to trust the figures, always shown: the rules' measured
 * accuracy, the values assumed, what is left out. */
static void mo_cli_estimate_trust(const mo_cli *c, const mo_estimate *e)
{
	printf("\ntrust:\n");
	mo_cli_estimate_accuracy(e);
	mo_cli_estimate_assumed_short(c->model);
	mo_cli_estimate_left_out(c->diags);
}

static int mo_cli_estimate_print(const mo_cli *c, const mo_estimate *e)
{
	if (c->json) {
		json_t *j = mo_json_estimate(e, 1);
		json_t *d = mo_json_diags(c->diags);
		if (j && d)
			json_object_set(j, "warnings", json_object_get(d, "warnings"));
		if (j)
			json_object_set_new(j, "assumed", mo_json_assumed(c->model));
		if (j)
			json_object_set_new(j, "accuracy", mo_json_accuracy(e));
		json_decref(d);
		return mo_cli_print_json(j);
	}
	mo_cli_print_diags(c);
	char *text = mo_estimate_report(e, c->explain);
	if (!text) {
		fputs("memopt: out of memory\n", stderr);
		return MO_EXIT_USAGE;
	}
	fputs(text, stdout);
	free(text);
	mo_cli_estimate_trust(c, e);
	if (c->explain)
		mo_cli_estimate_assumed(c->model);
	return MO_EXIT_OK;
}

int mo_cli_estimate(mo_cli *c, int argc, char **argv)
{
	int rc = mo_cli_parse(c, mo_cli_common_options, NULL, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind + 1 != argc) {
		fprintf(stderr, "memopt estimate: give exactly one CONFIG (or - for stdin)\n");
		return MO_EXIT_USAGE;
	}
	c->config_path = argv[optind];
	rc = mo_cli_load(c);
	if (rc != MO_EXIT_OK)
		return rc;
	rc = mo_cli_unpriceable(c);
	if (rc >= 0)
		return rc;
	mo_estimate *e = NULL;
	mo_error err = {0};
	mo_cli_budget_begin(c);
	/* the JSON answer lists the timeline; the report does not */
	int failed = (c->json ? mo_cli_estimate_run : mo_cli_estimate_summary)(c, &e, &err) != 0;
	mo_budget_end();
	if (failed)
		return mo_cli_estimate_error(c, &err);
	rc = mo_cli_estimate_print(c, e);
	mo_estimate_free(e);
	return rc;
}
