/* ledger: reads a measured memory trace (MindSpore's allocation ledger, or
 * a memopt trace converted from a PyTorch snapshot) and prints its peak,
 * what is alive there, the steps and the per-layer kept sizes; with a
 * model (and CONFIG) the estimate beside it. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mo_ledger_args {
	mo_ledger_options opt;
	int64_t stage;
	const char *trace;
} mo_ledger_args;

static void mo_ledger_usage(FILE *f)
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

static int mo_ledger_number(double *out, const char *text, double lo, double hi,
			    const char *what)
{
	char *end;
	errno = 0;
	*out = strtod(text, &end);
	if (errno || *end || !(*out >= lo && *out <= hi)) {
		fprintf(stderr, "memopt ledger: %s takes a number from %g to %g\n", what, lo, hi);
		return -1;
	}
	return 0;
}

static int mo_ledger_parse(mo_cli *c, mo_ledger_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, NULL, 'm'},  {"devices", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
		{"stage", required_argument, NULL, 'S'},  {"step-start", required_argument, NULL, 's'},
		{"layer-start", required_argument, NULL, 'l'},
		{"transient-ms", required_argument, NULL, 't'},
		{"first-layer", required_argument, NULL, 'F'}, {NULL, 0, NULL, 0}};
	int ch;
	double v;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "m:d:jh", opts, NULL)) != -1) {
		switch (ch) {
		case 'm': c->model_arg = optarg; break;
		case 'd':
			if (mo_ledger_number(&v, optarg, 1, 1000000, "--devices") != 0)
				return MO_EXIT_USAGE;
			c->devices = (int64_t)v;
			break;
		case 'j': c->json = true; break;
		case 'h': mo_ledger_usage(stdout); return MO_EXIT_OK;
		case 'S':
			if (mo_ledger_number(&v, optarg, 0, 100000, "--stage") != 0)
				return MO_EXIT_USAGE;
			a->stage = (int64_t)v;
			break;
		case 's': a->opt.step_start = optarg; break;
		case 'l': a->opt.layer_start = optarg; break;
		case 'F':
			if (mo_ledger_number(&v, optarg, -1000000, 1000000, "--first-layer") != 0)
				return MO_EXIT_USAGE;
			a->opt.first_layer = (int64_t)v;
			break;
		case 't':
			if (mo_ledger_number(&a->opt.transient_ms, optarg, 0.001, 1e8,
					     "--transient-ms") != 0)
				return MO_EXIT_USAGE;
			break;
		default: mo_ledger_usage(stderr); return MO_EXIT_USAGE;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		mo_ledger_usage(stderr);
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
	if (mo_estimate_run(e, c->cfg, c->model, &err) != 0) {
		fprintf(stderr, "memopt ledger: estimate: %s\n", err.text);
		return err.code == MO_ERR_INVALID ? MO_EXIT_INVALID : MO_EXIT_USAGE;
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
