/* validate, expand, export, migrate, presets: the commands that read one
 * CONFIG (presets: none) with the common options. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

int mo_cli_validate_answer(mo_cli *c)
{
	bool valid = mo_diags_errors(c->diags) == 0;
	if (c->json)
		mo_cli_print_json(mo_json_diags(c->diags));
	else {
		mo_cli_print_diags(c);
		if (valid)
			printf("%s: valid%s\n", c->config_path,
			       c->model ? "" : " (no model: only the structure was checked)");
	}
	return valid ? MO_EXIT_OK : MO_EXIT_INVALID;
}

/* ---- expand: a folded per-layer table ------------------------------------ */

static void mo_cli_actions_text(const mo_plan *p, int64_t layer, char *buf, size_t size)
{
	buf[0] = '\0';
	size_t n = mo_plan_action_count(p, layer);
	for (size_t i = 0; i < n; i++) {
		const mo_action *a = mo_plan_action(p, layer, i);
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s %s [%s.%s, line %d]", i ? "; " : "",
			 mo_action_name(a->action), a->path[0] ? a->path : "(whole layer)",
			 a->rule.section, a->rule.key, a->rule.line);
	}
	if (!n)
		snprintf(buf, size, "keep");
}

static int mo_cli_expand_table(const mo_cli *c, const mo_plan *p)
{
	int64_t n = (int64_t)mo_plan_layer_count(p), nl = mo_model_num_layers(c->model);
	static char cur[8192], next[8192];
	printf("%-10s %-12s %s\n", "layers", "type", "actions");
	for (int64_t lo = 0; lo < n;) {
		size_t t = mo_model_layer_type_of(c->model, lo);
		mo_cli_actions_text(p, lo, cur, sizeof cur);
		int64_t hi = lo;
		while (hi + 1 < n && mo_model_layer_type_of(c->model, hi + 1) == t &&
		       (hi + 1 < nl) == (lo < nl)) {
			mo_cli_actions_text(p, hi + 1, next, sizeof next);
			if (strcmp(cur, next) != 0)
				break;
			hi++;
		}
		char range[48];
		if (lo == hi)
			snprintf(range, sizeof range, "%lld", (long long)lo);
		else
			snprintf(range, sizeof range, "%lld-%lld", (long long)lo, (long long)hi);
		printf("%-10s %-12s %s\n", range, mo_model_layer_type_name(c->model, t), cur);
		lo = hi + 1;
	}
	return MO_EXIT_OK;
}

int mo_cli_expand_answer(mo_cli *c)
{
	int rc = mo_cli_unpriceable(c);
	if (rc >= 0)
		return rc;
	mo_plan *p = NULL;
	mo_error err = {0};
	if (mo_cli_expand_run(c, &p, &err) != 0) {
		fprintf(stderr, "memopt: %s\n", err.text);
		return MO_EXIT_USAGE;
	}
	if (c->json) {
		json_t *j = mo_json_plan(p, c->model, c->all_paths);
		json_t *d = mo_json_diags(c->diags);
		if (j && d)
			json_object_set(j, "warnings", json_object_get(d, "warnings"));
		json_decref(d);
		rc = mo_cli_print_json(j);
	} else {
		mo_cli_print_diags(c);
		rc = mo_cli_expand_table(c, p);
	}
	mo_plan_free(p);
	return rc;
}

int mo_cli_write(const char *path, const char *text, size_t len)
{
	FILE *f = path ? fopen(path, "wb") : stdout;
	if (!f) {
		fprintf(stderr, "memopt: cannot write %s: %s\n", path, strerror(errno));
		return MO_EXIT_USAGE;
	}
	bool ok = fwrite(text, 1, len, f) == len;
	if (path)
		ok = fclose(f) == 0 && ok;
	if (!ok) {
		fprintf(stderr, "memopt: cannot write %s\n", path ? path : "stdout");
		return MO_EXIT_USAGE;
	}
	return MO_EXIT_OK;
}

/* export's and migrate's answer to a config with errors: the diagnostics. */
static int mo_cli_answer_invalid(const mo_cli *c)
{
	if (c->json)
		mo_cli_print_json(mo_json_diags(c->diags));
	else
		mo_cli_print_diags(c);
	return MO_EXIT_INVALID;
}

/* export's and migrate's answer: the diagnostics and the YAML (--json), or
 * the diagnostics on stderr and the YAML to -o / stdout. Frees yaml. */
static int mo_cli_answer_yaml(const mo_cli *c, char *yaml, size_t len)
{
	int rc;
	if (c->json) {
		json_t *j = mo_json_diags(c->diags);
		json_object_set_new(j, "yaml", json_stringn(yaml, len));
		rc = mo_cli_print_json(j);
	} else {
		mo_cli_print_diags(c);
		rc = mo_cli_write(c->out_path, yaml, len);
	}
	free(yaml);
	return rc;
}

int mo_cli_export_answer(mo_cli *c)
{
	if (mo_diags_errors(c->diags))
		return mo_cli_answer_invalid(c);
	char *yaml = NULL;
	size_t len = 0;
	mo_error err = {0};
	if (mo_export(&yaml, &len, c->cfg, &err) != 0) {
		fprintf(stderr, "memopt: %s\n", err.text);
		return MO_EXIT_USAGE;
	}
	return mo_cli_answer_yaml(c, yaml, len);
}

/* migrate: the file with recompute_config rewritten as the sections
 * (mo_migrate); exit codes as export. */
int mo_cli_migrate_answer(mo_cli *c)
{
	if (mo_diags_errors(c->diags))
		return mo_cli_answer_invalid(c);
	char *yaml = NULL;
	size_t len = 0;
	mo_error err = {0};
	if (mo_migrate(&yaml, &len, c->diags, c->cfg, &err) != 0) {
		if (err.code != MO_ERR_INVALID) {
			fprintf(stderr, "memopt: %s\n", err.text);
			return MO_EXIT_USAGE;
		}
		if (c->json) {
			json_t *j = mo_json_diags(c->diags);
			json_object_set_new(j, "valid", json_false());
			json_object_set_new(j, "error", json_string(err.text));
			mo_cli_print_json(j);
		} else {
			mo_cli_print_diags(c);
			if (err.line > 0)
				fprintf(stderr, "%s:%d:%d: error[migrate]: %s\n", c->config_path,
					err.line, err.column, err.text);
			else /* the file as a whole (no recompute_config): no position */
				fprintf(stderr, "%s: error[migrate]: %s\n", c->config_path, err.text);
		}
		return MO_EXIT_INVALID;
	}
	return mo_cli_answer_yaml(c, yaml, len);
}

static int mo_cli_presets_answer(const mo_cli *c, const char *name)
{
	if (!name) {
		if (c->json)
			return mo_cli_print_json(mo_json_presets());
		for (size_t i = 0; i < mo_presets_count(); i++)
			printf("%-16s %s\n", mo_preset_name(i), mo_preset_description(i));
		return MO_EXIT_OK;
	}
	for (size_t i = 0; i < mo_presets_count(); i++)
		if (strcmp(mo_preset_name(i), name) == 0) {
			fputs(mo_preset_yaml(i), stdout);
			return MO_EXIT_OK;
		}
	fprintf(stderr, "memopt: unknown preset '%s' (memopt presets lists them)\n", name);
	return MO_EXIT_USAGE;
}

int mo_cli_one_config(mo_cli *c, int argc, char **argv, int (*answer)(mo_cli *c))
{
	int rc = mo_cli_parse(c, mo_cli_common_options, NULL, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind + 1 != argc) {
		fprintf(stderr, "memopt %s: give exactly one CONFIG (or - for stdin)\n", c->cmd);
		return MO_EXIT_USAGE;
	}
	c->config_path = argv[optind];
	rc = mo_cli_load(c);
	return rc == MO_EXIT_OK ? answer(c) : rc;
}

int mo_cli_presets(mo_cli *c, int argc, char **argv)
{
	int rc = mo_cli_parse(c, mo_cli_common_options, NULL, argc, argv);
	if (rc >= 0)
		return rc;
	return mo_cli_presets_answer(c, optind < argc ? argv[optind] : NULL);
}
