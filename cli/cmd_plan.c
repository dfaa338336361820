/* plan: the cheapest recompute / swap config that fits a memory budget,
 * beside the seed's staged escalation; --maximize: the largest micro-batch
 * size or sequence length some plan fits. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mo_plan_opts {
	uint64_t budget;
	unsigned allow;
	const char *maximize;
	int64_t limit;
} mo_plan_opts;

void mo_cli_plan_usage(FILE *f)
{
	fputs("usage: memopt plan --model M [--devices N] [--budget SIZE]\n"
	      "                   [--allow select,full,exclude,comm,layer_swap,op_swap]\n"
	      "                   [--maximize micro_batch_size|seq_length [--limit N]]\n"
	      "                   [--work-limit MS]\n"
	      "                   [-o FILE] [--json] [CONFIG]\n"
	      "Prints the config on stdout, a summary on stderr. Exit: 0 a plan fits,\n"
	      "1 none fits or CONFIG has errors, 2 usage.\n",
	      f);
}

static int mo_plan_allow(mo_cli *c, void *own, const char *arg)
{
	(void)c;
	return mo_planner_parse_allow(&((mo_plan_opts *)own)->allow, arg);
}

static const mo_cli_option mo_plan_options[] = {
	MO_CLI_OPT_MODEL,
	MO_CLI_OPT_DEVICES,
	MO_CLI_OPT_JSON,
	MO_CLI_OPT_OUTPUT,
	{"budget", 'b', MO_ARG_BYTES, true, offsetof(mo_plan_opts, budget), 1, 18446744073709551615.0,
	 "a size such as 58GiB, 64GB, 1024 (B, KB, MB, GB, KiB, MiB, GiB)", NULL},
	{"allow", 0, MO_ARG_CALL, true, 0, 0, 0,
	 "a list of select, full, exclude, comm, layer_swap, op_swap (or all)", mo_plan_allow},
	{"maximize", 0, MO_ARG_TEXT, true, offsetof(mo_plan_opts, maximize), 0, 0, NULL, NULL},
	{"limit", 0, MO_ARG_INT, true, offsetof(mo_plan_opts, limit), 1, 100000000, NULL, NULL},
	MO_CLI_OPT_WORK_LIMIT,
	MO_CLI_OPT_HELP,
	MO_CLI_OPT_END};

static int mo_plan_args(mo_cli *c, mo_plan_opts *o, int argc, char **argv)
{
	int rc = mo_cli_parse(c, mo_plan_options, o, argc, argv);
	if (rc >= 0)
		return rc;
	if (o->maximize && strcmp(o->maximize, "micro_batch_size") != 0 &&
	    strcmp(o->maximize, "seq_length") != 0) {
		fprintf(stderr, "memopt plan: --maximize takes micro_batch_size or seq_length\n");
		return MO_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "memopt plan: give at most one CONFIG\n");
		return MO_EXIT_USAGE;
	}
	return -1;
}

/* CONFIG, or an empty config when none is given (then --model is needed). */
static int mo_plan_load(mo_cli *c, int argc, char **argv, bool *has_start)
{
	*has_start = optind < argc;
	if (*has_start) {
		c->config_path = argv[optind];
		return mo_cli_load(c);
	}
	if (!c->model_arg) {
		fputs("memopt plan: give --model (or a CONFIG that carries its model)\n", stderr);
		return MO_EXIT_USAGE;
	}
	return mo_cli_load_model_alone(c);
}

/* ---- output ------------------------------------------------------------------ */

static void mo_plan_gib(char *buf, size_t n, uint64_t b)
{
	snprintf(buf, n, "%.2f GiB", (double)b / 1073741824.0);
}

static void mo_plan_summary_stages(const mo_planner_result *r)
{
	const mo_estimate *e = mo_planner_estimate(r);
	char a[32], b[32];
	mo_plan_gib(b, sizeof b, mo_planner_budget(r));
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++) {
		const mo_estimate_stage *st = mo_estimate_stage_get(e, s);
		mo_plan_gib(a, sizeof a, st->peak_bytes);
		fprintf(stderr, "  stage %lld: peak %s of %s (%s)%s\n", (long long)st->stage, a, b,
			st->peak_event, st->peak_bytes > mo_planner_budget(r) ? "  OVER" : "");
	}
}

static void mo_plan_summary_staged(const mo_planner_result *r)
{
	char a[32];
	long ans = mo_planner_staged_answer(r);
	if (!mo_planner_staged_count(r))
		return;
	fputs("staged escalation (the seed's manual steps):\n", stderr);
	for (size_t i = 0; i < mo_planner_staged_count(r); i++) {
		const mo_planner_step *st = mo_planner_staged_get(r, i);
		mo_plan_gib(a, sizeof a, st->peak_bytes);
		fprintf(stderr, "  %-44s peak %12s  overhead %6.2f%%  %s%s\n", st->label, a,
			st->overhead_percent, st->fits ? "fits" : "over",
			(long)i == ans ? "  <- staged answer" : "");
	}
	double po = mo_estimate_overhead_percent(mo_planner_estimate(r));
	if (ans >= 0 && mo_planner_fits(r))
		fprintf(stderr, "planner: overhead %.2f%% vs staged %.2f%%\n", po,
			mo_planner_staged_get(r, (size_t)ans)->overhead_percent);
	else if (mo_planner_fits(r))
		fprintf(stderr, "planner: overhead %.2f%%; the staged escalation never fits\n", po);
}

static void mo_plan_summary(const mo_planner_result *r)
{
	const mo_estimate *e = mo_planner_estimate(r);
	char a[32], b[32];
	mo_plan_gib(a, sizeof a, mo_estimate_peak_bytes(e));
	mo_plan_gib(b, sizeof b, mo_planner_budget(r));
	long adopted = mo_planner_from_staged(r);
	if (mo_planner_fits(r) && adopted >= 0)
		fprintf(stderr, "plan: fits: peak %s of %s, overhead %.2f%% (the staged step '%s', "
				"cheaper than the search's plan under its safe bound)\n",
			a, b, mo_estimate_overhead_percent(e),
			mo_planner_staged_get(r, (size_t)adopted)->label);
	else if (mo_planner_fits(r))
		fprintf(stderr, "plan: fits: peak %s of %s, overhead %.2f%% (%s)\n", a, b,
			mo_estimate_overhead_percent(e),
			mo_planner_exact(r) ? "least overhead of every plan that fits"
					    : "a safe plan, not proven optimal");
	else
		fprintf(stderr, "plan: no plan fits %s; the smallest peak any plan reaches is %s "
				"(this plan, overhead %.2f%%)\n",
			b, a, mo_estimate_overhead_percent(e));
	mo_plan_summary_stages(r);
	mo_plan_summary_staged(r);
}

static int mo_plan_write(const mo_cli *c, const char *yaml)
{
	if (!c->out_path) {
		fputs(yaml, stdout);
		return MO_EXIT_OK;
	}
	FILE *f = fopen(c->out_path, "w");
	if (!f || fputs(yaml, f) < 0) {
		fprintf(stderr, "memopt plan: cannot write %s: %s\n", c->out_path, strerror(errno));
		if (f)
			fclose(f);
		return MO_EXIT_USAGE;
	}
	return fclose(f) == 0 ? MO_EXIT_OK : MO_EXIT_USAGE;
}

static int mo_plan_print(const mo_cli *c, const mo_planner_result *r, json_t *extra)
{
	int rc = MO_EXIT_OK;
	if (c->json) {
		json_t *j = mo_json_planner(r);
		if (j && extra)
			json_object_update(j, extra);
		rc = mo_cli_print_json(j);
	} else {
		mo_plan_summary(r);
	}
	if (rc == MO_EXIT_OK && (c->out_path || !c->json))
		rc = mo_plan_write(c, mo_planner_yaml(r));
	if (rc == MO_EXIT_OK && !mo_planner_fits(r))
		rc = MO_EXIT_INVALID;
	return rc;
}

static int mo_plan_error(const mo_error *err)
{
	fprintf(stderr, "memopt plan: %s\n", err->text);
	return mo_cli_exit_of(err);
}

static int mo_plan_maximize(mo_cli *c, const mo_planner_input *in, const mo_plan_opts *o)
{
	mo_planner_dim dim = strcmp(o->maximize, "seq_length") == 0 ? MO_PLAN_SEQ_LENGTH
								    : MO_PLAN_MICRO_BATCH_SIZE;
	int64_t limit = o->limit ? o->limit : dim == MO_PLAN_SEQ_LENGTH ? 1 << 20 : 4096;
	int64_t best = 0;
	mo_planner_result *r = NULL;
	mo_error err = {0};
	mo_cli_budget_begin(c);
	int failed = mo_planner_maximize(&best, &r, in, dim, limit, &err) != 0;
	mo_budget_end();
	if (failed)
		return mo_plan_error(&err);
	if (!c->json)
		fprintf(stderr, "plan: the largest %s some plan fits: %lld%s\n", o->maximize,
			(long long)best, best == limit ? " (the --limit)" : "");
	if (!r) {
		if (c->json)
			mo_cli_print_json(json_pack("{s:s, s:I, s:b}", "maximize", o->maximize,
						    "value", (json_int_t)0, "fits", 0));
		return MO_EXIT_INVALID;
	}
	json_t *extra = json_pack("{s:s, s:I}", "maximize", o->maximize, "value", (json_int_t)best);
	int rc = mo_plan_print(c, r, extra);
	json_decref(extra);
	mo_planner_result_free(r);
	return rc;
}

int mo_cli_plan(mo_cli *c, int argc, char **argv)
{
	mo_plan_opts o = {0};
	bool has_start;
	int rc = mo_plan_args(c, &o, argc, argv);
	if (rc >= 0)
		return rc;
	rc = mo_plan_load(c, argc, argv, &has_start);
	if (rc != MO_EXIT_OK)
		return rc;
	if (mo_diags_errors(c->diags) || !c->model) {
		mo_cli_print_diags(c);
		if (!c->model && !mo_diags_errors(c->diags))
			fputs("memopt: plan needs a model: pass --model\n", stderr);
		return c->model ? MO_EXIT_INVALID : MO_EXIT_USAGE;
	}
	mo_planner_input in = {.model = c->model, .budget = o.budget, .allow = o.allow,
			       .start = has_start ? c->cfg : NULL};
	if (o.maximize)
		return mo_plan_maximize(c, &in, &o);
	mo_planner_result *r = NULL;
	mo_error err = {0};
	mo_cli_budget_begin(c);
	int failed = mo_planner_run(&r, &in, &err) != 0;
	mo_budget_end();
	if (failed)
		return mo_plan_error(&err);
	rc = mo_plan_print(c, r, NULL);
	mo_planner_result_free(r);
	return rc;
}
