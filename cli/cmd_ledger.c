/* ledger: reads a measured memory trace (MindSpore's allocation ledger, or
 * a memopt trace converted from a PyTorch snapshot) and prints its peak,
 * what is alive there, the steps and the per-layer kept sizes; with a
 * model (and CONFIG) the estimate beside it. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mo_ledger_args {
	mo_ledger_options opt;
	int64_t stage;
	const char *trace;
} mo_ledger_args;

void mo_cli_ledger_usage(FILE *f)
{
	fputs("usage: memopt ledger TRACE [--model M] [CONFIG] [options]\n"
	      "  TRACE                a MindSpore memory-tracker CSV, or a memopt trace\n"
	      "                       (bindings/python/memopt_torch_snapshot.py)\n"
	      "  -m, --model M        compare with the estimate of M (preset or file)\n"
	      "  -d, --devices N      device count for files that lack it\n"
	      "      --stage N        the pipeline stage the trace is from (default: the\n"
	      "                       estimate's busiest)\n"
	      "      --step-start OP[:KB]   a row of that op (and size) starts a step\n"
	      "      --layer-start OP[:KB]  a row of that op (and size) starts a layer\n"
	      "      --first-layer N        the model layer the first layer start opens (0;\n"
	      "                       -1 when the first marked region is the embedding's)\n"
	      "      --transient-ms MS      shorter-lived rows are transients (20)\n"
	      "  -j, --json           JSON instead of the table\n"
	      "See memopt-ledger(1).\n",
	      f);
}

static const mo_cli_option mo_ledger_cli_options[] = {
	MO_CLI_OPT_MODEL,
	MO_CLI_OPT_DEVICES,
	MO_CLI_OPT_JSON,
	MO_CLI_OPT_HELP,
	{"stage", 0, MO_ARG_INT, true, offsetof(mo_ledger_args, stage), 0, 100000,
	 "a number from 0 to 100000", NULL},
	{"step-start", 0, MO_ARG_TEXT, true, offsetof(mo_ledger_args, opt.step_start), 0, 0, NULL,
	 NULL},
	{"layer-start", 0, MO_ARG_TEXT, true, offsetof(mo_ledger_args, opt.layer_start), 0, 0, NULL,
	 NULL},
	{"transient-ms", 0, MO_ARG_REAL, true, offsetof(mo_ledger_args, opt.transient_ms), 0.001,
	 1e8, "a number from 0.001 to 1e+08", NULL},
	{"first-layer", 0, MO_ARG_INT, true, offsetof(mo_ledger_args, opt.first_layer), -1000000,
	 1000000, "a number from -1e+06 to 1e+06", NULL},
	MO_CLI_OPT_END};

static int mo_ledger_parse(mo_cli *c, mo_ledger_args *a, int argc, char **argv)
{
	int rc = mo_cli_parse(c, mo_ledger_cli_options, a, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc || argc - optind > 2) {
		mo_cli_ledger_usage(stderr);
		return MO_EXIT_USAGE;
	}
	a->trace = argv[optind];
	if (strcmp(a->trace, "-") == 0) {
		fputs("memopt ledger: TRACE must be a file, not stdin (it is read twice)\n", stderr);
		return MO_EXIT_USAGE;
	}
	c->config_path = optind + 1 < argc ? argv[optind + 1] : NULL;
	return -1;
}

/* The estimate to compare with, when a model or CONFIG was given. */
static int mo_ledger_estimate(mo_cli *c, mo_estimate **e)
{
	*e = NULL;
	if (!c->config_path && !c->model_arg)
		return MO_EXIT_OK;
	int rc = c->config_path ? mo_cli_load(c) : mo_cli_load_model_alone(c);
	if (rc != MO_EXIT_OK)
		return rc;
	if (mo_diags_errors(c->diags) || !c->model) {
		mo_cli_print_diags(c);
		if (!c->model)
			fputs("memopt ledger: the comparison needs a model: pass --model\n", stderr);
		return c->model ? MO_EXIT_INVALID : MO_EXIT_USAGE;
	}
	mo_error err = {0};
	if (mo_cli_estimate_run(c, e, &err) != 0) {
		fprintf(stderr, "memopt ledger: estimate: %s\n", err.text);
		return mo_cli_exit_of(&err);
	}
	return MO_EXIT_OK;
}

static int mo_ledger_print(const mo_cli *c, const mo_ledger_args *a, const mo_ledger *l,
			   const mo_ledger_compare *cmp)
{
	char *text = c->json ? mo_ledger_json(l, cmp, a->trace) : mo_ledger_report(l, cmp, a->trace);
	if (!text) {
		fputs("memopt: out of memory\n", stderr);
		return MO_EXIT_USAGE;
	}
	if (c->json) {
		json_error_t je;
		json_t *j = json_loads(text, 0, &je);
		free(text);
		return mo_cli_print_json(j);
	}
	fputs(text, stdout);
	free(text);
	return MO_EXIT_OK;
}

int mo_cli_ledger(mo_cli *c, int argc, char **argv)
{
	mo_ledger_args a = {.stage = -1};
	int rc = mo_ledger_parse(c, &a, argc, argv);
	if (rc >= 0)
		return rc;
	mo_estimate *e = NULL;
	mo_ledger *l = NULL;
	mo_ledger_compare *cmp = NULL;
	mo_error err = {0};
	rc = mo_ledger_estimate(c, &e);
	if (rc != MO_EXIT_OK)
		goto out_free;
	if (mo_ledger_read_file(&l, a.trace, &a.opt, &err) != 0) {
		if (err.line > 0)
			fprintf(stderr, "%s:%d:%d: error[ledger]: %s\n", a.trace, err.line,
				err.column, err.text);
		else
			fprintf(stderr, "%s: error[ledger]: %s\n", a.trace, err.text);
		rc = err.code == MO_ERR_INVALID || err.code == MO_ERR_LIMIT ? MO_EXIT_INVALID
									    : MO_EXIT_USAGE;
		goto out_free;
	}
	if (e && mo_ledger_compare_run(&cmp, l, e, a.stage, &err) != 0) {
		fprintf(stderr, "memopt ledger: %s\n", err.text);
		rc = MO_EXIT_USAGE;
		goto out_free;
	}
	rc = mo_ledger_print(c, &a, l, cmp);
out_free:
	mo_ledger_compare_free(cmp);
	mo_ledger_free(l);
	mo_estimate_free(e);
	return rc;
}
