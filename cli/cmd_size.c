/* size: the fastest parallel layouts, each with the cheapest recompute /
 * swap plan that fits, for a model, N devices (or a range) and a global
 * batch. */
#include "cli.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct mo_size_opts {
	int64_t devices, devices_max, global_batch, per_node;
	uint64_t budget;
	double headroom;
	size_t top;
	bool top_set;
	bool base;
} mo_size_opts;

void mo_cli_size_usage(FILE *f)
{
	fputs("usage: memopt size --model M --devices N|LOW-HIGH --global-batch G\n"
	      "                   [--devices-per-node K] [--budget SIZE | --headroom PCT]\n"
	      "                   [--top K|all] [--work-limit MS] [--json] [BASE]\n"
	      "Every layout the model's framework accepts (TP, CP, PP and virtual chunks,\n"
	      "EP, expert TP, DP, sequence parallel, distributed optimizer, micro-batch\n"
	      "size and count), each with the planner's cheapest recompute / swap plan,\n"
	      "ranked by the estimate's step time; the rejected layouts counted by reason.\n"
	      "A range answers the smallest count that fits and the fastest per device.\n"
	      "BASE, a MindSpore Transformers training YAML (its own model unless --model):\n"
	      "each layout's config is BASE with its parallel keys, batch keys and memory\n"
	      "sections rewritten, every other byte kept.\n"
	      "Exit: 0 a layout fits, 1 none fits, 2 usage.\n",
	      f);
}

/* N, or LOW-HIGH */
static int mo_size_devices(mo_cli *c, void *own, const char *arg)
{
	(void)c;
	mo_size_opts *o = own;
	char *end = NULL;
	long long lo = strtoll(arg, &end, 10), hi = lo;
	if (end && *end == '-')
		hi = strtoll(end + 1, &end, 10);
	if (!end || *end || lo < 1 || hi < lo || hi > 1048576)
		return -1;
	o->devices = lo;
	o->devices_max = hi > lo ? hi : 0;
	return 0;
}

static int mo_size_top(mo_cli *c, void *own, const char *arg)
{
	(void)c;
	mo_size_opts *o = own;
	o->top_set = true;
	if (strcmp(arg, "all") == 0) {
		o->top = SIZE_MAX;
		return 0;
	}
	char *end = NULL;
	long long n = strtoll(arg, &end, 10);
	if (!end || *end || n < 1 || n > 1000000)
		return -1;
	o->top = (size_t)n;
	return 0;
}

static const mo_cli_option mo_size_options[] = {
	MO_CLI_OPT_MODEL,
	MO_CLI_OPT_JSON,
	{"devices", 'd', MO_ARG_CALL, true, 0, 0, 0,
	 "a count from 1 to 1048576, or a range LOW-HIGH", mo_size_devices},
	{"global-batch", 'g', MO_ARG_INT, true, offsetof(mo_size_opts, global_batch), 1, 16777216,
	 NULL, NULL},
	{"devices-per-node", 0, MO_ARG_INT, true, offsetof(mo_size_opts, per_node), 1, 1048576,
	 NULL, NULL},
	{"budget", 'b', MO_ARG_BYTES, true, offsetof(mo_size_opts, budget), 1, 18446744073709551615.0,
	 "a size such as 58GiB, 64GB, 1024 (B, KB, MB, GB, KiB, MiB, GiB)", NULL},
	{"headroom", 0, MO_ARG_REAL, true, offsetof(mo_size_opts, headroom), 0, 99, NULL, NULL},
	{"top", 'k', MO_ARG_CALL, true, 0, 0, 0, "a count from 1 to 1000000, or all", mo_size_top},
	MO_CLI_OPT_WORK_LIMIT,
	MO_CLI_OPT_HELP,
	MO_CLI_OPT_END};

static int mo_size_args(mo_cli *c, mo_size_opts *o, int argc, char **argv)
{
	int rc = mo_cli_parse(c, mo_size_options, o, argc, argv);
	if (rc >= 0)
		return rc;
	if ((!c->model_arg && optind >= argc) || !o->devices || !o->global_batch) {
		fputs("memopt size: give --model (or a BASE that carries its model), --devices and "
		      "--global-batch\n",
		      stderr);
		return MO_EXIT_USAGE;
	}
	if (o->budget && o->headroom > 0) {
		fputs("memopt size: give --budget or --headroom, not both\n", stderr);
		return MO_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		fputs("memopt size: give at most one BASE\n", stderr);
		return MO_EXIT_USAGE;
	}
	return -1;
}

/* BASE (its model, or --model's) or --model alone. */
static int mo_size_load_once(mo_cli *c, int argc, char **argv)
{
	if (optind >= argc)
		return mo_cli_load_model_alone(c);
	c->config_path = argv[optind];
	return mo_cli_load(c);
}

/* The model as its file states it; when that has errors (a file without a
 * device count, its layout checked on TP x PP x CP devices), again on the
 * question's device count. The search replaces the layout either way. */
static int mo_size_load(mo_cli *c, const mo_size_opts *o, int argc, char **argv)
{
	int rc = mo_size_load_once(c, argc, argv);
	if (rc != MO_EXIT_OK || !mo_diags_errors(c->diags))
		return rc;
	mo_cli_free(c);
	c->devices = o->devices;
	return mo_size_load_once(c, argc, argv);
}

/* ---- text output ---------------------------------------------------------------- */

static void mo_size_print_layout(size_t rank, const mo_size_layout *l)
{
	char etp[24] = "-";
	if (l->expert_tensor_parallel > 0)
		snprintf(etp, sizeof etp, "%lld", (long long)l->expert_tensor_parallel);
	printf("%4zu %5lld %3lld %3lld %3lld %3lld %3lld %3s %5lld %3s %3s %4lld %5lld %9.2f %9.3f "
	       "%10.0f %5.1f%% %-4s %s%s\n",
	       rank, (long long)l->devices, (long long)l->tensor_parallel,
	       (long long)l->pipeline_parallel, (long long)l->virtual_pipeline,
	       (long long)l->context_parallel, (long long)l->expert_parallel, etp,
	       (long long)l->data_parallel, l->sequence_parallel ? "on" : "off",
	       l->distributed_optimizer ? "on" : "off", (long long)l->micro_batch_size,
	       (long long)l->micro_batch_num, (double)l->peak_bytes / 1073741824.0,
	       l->step_seconds, l->tokens_per_second_per_device, 100.0 * l->mfu,
	       l->fits ? "fits" : "over",
	       l->plan, l->pareto ? "  (front)" : "");
}

static void mo_size_print(const mo_size_result *r, const mo_size_opts *o)
{
	printf("size: %llu layouts accepted, %llu estimated, %llu planned%s\n",
	       (unsigned long long)mo_size_accepted(r), (unsigned long long)mo_size_estimated(r),
	       (unsigned long long)mo_size_planned(r),
	       mo_size_complete(r) ? "" : " (stopped by the work limit: the best found so far)");
	if (o->devices_max)
		printf("smallest device count with a layout that fits: %lld\n",
		       (long long)mo_size_smallest_devices(r));
	printf("rank   dev  TP  PP VPP  CP  EP ETP    DP  SP  DO    B     M  peak GiB    step s "
	       "tok/s/dev    MFU      plan\n");
	for (size_t i = 0; i < mo_size_count(r); i++)
		mo_size_print_layout(i + 1, mo_size_get(r, i));
	if (mo_size_rejected_count(r))
		puts("rejected:");
	for (size_t i = 0; i < mo_size_rejected_count(r); i++) {
		const mo_size_rejection *g = mo_size_rejected_at(r, i);
		if (g)
			printf("  %10llu  [%s] %s\n", (unsigned long long)g->count, g->code_name,
			       g->text);
	}
	const mo_size_layout *best = mo_size_get(r, 0);
	if (best && best->fits && best->megatron_args)
		printf("\nthe fastest layout as Megatron-LM arguments:\n%s\n", best->megatron_args);
	if (best && best->fits && best->megatron_plan_note)
		printf("(not its plan: %s)\n", best->megatron_plan_note);
	if (best && best->fits)
		printf("\nthe fastest layout's %s:\n%s", o->base ? "config (the base rewritten)" : "plan",
		       best->config_yaml);
}

int mo_cli_size(mo_cli *c, int argc, char **argv)
{
	mo_size_opts o = {0};
	int rc = mo_size_args(c, &o, argc, argv);
	if (rc >= 0)
		return rc;
	bool has_base = optind < argc;
	o.base = has_base;
	rc = mo_size_load(c, &o, argc, argv);
	if (rc != MO_EXIT_OK || !c->model || mo_diags_errors(c->diags)) {
		if (c->diags)
			mo_cli_print_diags(c);
		if (rc != MO_EXIT_OK)
			return rc;
		return c->model ? MO_EXIT_INVALID : MO_EXIT_USAGE;
	}
	mo_size_input in = {.model = c->model, .devices = o.devices, .devices_max = o.devices_max,
			    .global_batch = o.global_batch, .devices_per_node = o.per_node,
			    .budget = o.budget, .headroom_percent = o.headroom, .top = o.top,
			    .base = has_base ? c->cfg : NULL};
	mo_size_result *r = NULL;
	mo_error err = {0};
	mo_cli_budget_begin(c);
	int run = mo_size_run(&r, &in, &err);
	mo_budget_end();
	if (run != 0) {
		fprintf(stderr, "memopt size: %s\n", err.text);
		return MO_EXIT_USAGE;
	}
	const mo_size_layout *best = mo_size_get(r, 0);
	int fits = best && best->fits;
	if (c->json)
		rc = mo_cli_print_json(mo_json_size(r));
	else
		mo_size_print(r, &o);
	mo_size_result_free(r);
	if (rc != MO_EXIT_OK && rc != 0)
		return rc;
	return fits ? MO_EXIT_OK : MO_EXIT_INVALID;
}
