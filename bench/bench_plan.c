/* bench_plan: the planner's speed (it runs inside an interactive "fit to
 * budget" request) on a 128-layer dense model and a
 * 1,000-layer MoE model, each at a budget that needs real work (70% of the
 * unoptimised peak). Prints the planner's time (search, config made real and
 * estimated; the staged escalation is left out: it is the comparison, not
 * the search) and its ratio to one estimate of the planned config in the
 * same run. Median of several runs. Targets: 20 ms and 500 ms. Also prints
 * the answer (overhead, peak of the planned config, whether proven optimal):
 * a faster search must give the same.
 *
 *   build/bench/bench_plan [ITERATIONS [CASE]]   (default 7, both cases)
 */
#include <memopt/memopt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"

static const char *const dense_128 =
	"model:\n  num_layers: 128\n  hidden_size: 4096\n  ffn_hidden_size: 11008\n"
	"  num_attention_heads: 32\n  vocab_size: 32000\n  seq_length: 4096\n"
	"  hidden_act: swiglu\n  attention: flash\n"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: 8\n"
	"parallel:\n  world_size: 8\n  data_parallel: 4\n  tensor_parallel: 2\n"
	"  sequence_parallel: true\n"
	"device: ascend-910b\n";

static const char *const moe_1000 =
	"model:\n  num_layers: 1000\n  hidden_size: 2048\n  ffn_hidden_size: 6144\n"
	"  num_attention_heads: 16\n  num_query_groups: 4\n  vocab_size: 32000\n"
	"  seq_length: 2048\n  hidden_act: swiglu\n  num_moe_experts: 16\n"
	"  moe_router_topk: 2\n  moe_ffn_hidden_size: 1408\n  first_k_dense_replace: 1\n"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: 8\n"
	"parallel:\n  world_size: 64\n  data_parallel: 32\n  tensor_parallel: 2\n"
	"  expert_parallel: 4\n  sequence_parallel: true\n"
	"device: ascend-910b\n";

/* milliseconds, from bench_time.h's clock */
static double now_ms(void)
{
	return now_us() / 1e3;
}

static mo_model *load(const char *text)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	if (mo_diags_new(&d) != 0 || mo_model_load(&m, d, text, strlen(text), "bench", NULL, NULL) != 0) {
		fputs("bench_plan: cannot load the model\n", stderr);
		exit(2);
	}
	mo_model_check(m, d);
	if (mo_diags_errors(d)) {
		fprintf(stderr, "bench_plan: model: %s\n", mo_diags_get(d, 0)->message);
		exit(2);
	}
	mo_diags_free(d);
	return m;
}

/* One case: median planner time and median estimate time. */
static void bench(const char *name, const char *text, double target, int iters)
{
	mo_model *m = load(text);
	mo_estimate *e0 = NULL;
	if (mo_estimate_run(&e0, NULL, m, NULL) != 0)
		exit(2);
	mo_planner_input in = {.model = m, .budget = mo_estimate_peak_bytes(e0) / 10 * 7,
			       .no_staged = 1};
	double *tp = calloc((size_t)iters, sizeof *tp), *te = calloc((size_t)iters, sizeof *te);
	if (!tp || !te)
		exit(2);
	int fits = 0, exact = 0;
	double over = 0;
	uint64_t peak = 0;
	for (int i = 0; i < iters; i++) {
		mo_planner_result *r = NULL;
		double t0 = now_ms();
		if (mo_planner_run(&r, &in, NULL) != 0)
			exit(2);
		double t1 = now_ms();
		mo_estimate *e = NULL;
		if (mo_estimate_run(&e, mo_planner_config(r), m, NULL) != 0)
			exit(2);
		double t2 = now_ms();
		tp[i] = t1 - t0;
		te[i] = t2 - t1;
		fits = mo_planner_fits(r);
		exact = mo_planner_exact(r);
		peak = mo_estimate_peak_bytes(e);
		over = mo_estimate_overhead_percent(e);
		mo_estimate_free(e);
		mo_planner_result_free(r);
	}
	double p = median(tp, (size_t)iters), es = median(te, (size_t)iters);
	printf("plan: %s %.1f ms (target %.0f), ratio to estimate %.1f (estimate %.2f ms); "
	       "budget 70%% of %.2f GiB: %s, overhead %.4f%%, peak %llu B%s\n",
	       name, p, target, p / es, es, (double)mo_estimate_peak_bytes(e0) / 1073741824.0,
	       fits ? "fits" : "no fit", over, (unsigned long long)peak,
	       exact ? ", proven optimal" : "");
	free(tp);
	free(te);
	mo_estimate_free(e0);
	mo_model_free(m);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 7;
	const char *only = argc > 2 ? argv[2] : NULL; /* one case (profiling) */
	if (iters < 1)
		iters = 1;
	if (!only || !strcmp(only, "dense-128"))
		bench("dense-128", dense_128, 20, iters);
	if (!only || !strcmp(only, "moe-1000"))
		bench("moe-1000", moe_1000, 500, iters);
	return 0;
}
