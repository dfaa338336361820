/* bench_estimate: in one process, the time of `memopt estimate` on a
 * 1,000-layer MoE config with 100 patterns (mo_config_parse + mo_validate_resolve +
 * mo_estimate_resolved against an already-loaded model) against validate alone
 * (mo_config_parse + mo_validate) on the same text. Median of many runs.
 * Target: ratio <= 1.5, an estimate about as cheap as the validation it
 * follows (layer types are simulated once
 * per distinct plan segment, not per layer). The model keeps its layer
 * graphs and a memo of plan results across estimates (estimate_cache.c), so
 * the first estimate (cold: graphs built, every segment simulated) is
 * printed apart from the median (warm: what a server or the web UI sees
 * for a loaded model).
 *
 * Then the long steps: a 406-byte file asking for 100,000 pipeline stages
 * and 2^31-1 micro-batches (the pipeline was walked micro-batch by
 * micro-batch: 10 s of server work, minutes in the CLI; now refused at the
 * bound of stages), and the same at the bound, 4,096 stages of 100,000
 * layers (the stages' peaks from the schedule's closed form). Target: each
 * file loaded and estimated in under 50 ms.
 *
 *   build/bench/bench_estimate [ITERATIONS]      (default 41)
 */
#include <memopt/memopt.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_gen.h"

/* validate (parse + every rule), then optionally the estimate; us. */
static double run_once(const char *text, size_t len, const mo_model *model, const mo_limits *lim,
		       int estimate, size_t *errors, uint64_t *peak)
{
	double t0 = now_us();
	bench_checked ck;
	mo_estimate *e = NULL;
	mo_error err = {0};
	double t = -1;
	if (bench_parse_validate(text, len, model, lim, estimate, &ck, &err, NULL) != 0)
		goto out;
	*errors = mo_diags_errors(ck.d);
	if (*errors)
		goto out;
	if (estimate) {
		if (mo_estimate_resolved(&e, ck.r, &err) != 0) {
			fprintf(stderr, "bench_estimate: %s\n", err.text);
			goto out;
		}
		*peak = mo_estimate_peak_bytes(e);
	}
	t = now_us() - t0;
out:
	mo_estimate_free(e);
	bench_checked_free(&ck);
	return t;
}

static const char long_step[] =
	"training: {local_batch_size: 1, global_batch_size: 8}\n"
	"parallelism: {data_parallel_shard: 1, tensor_parallel: 1, pipeline_parallel: %d, "
	"micro_batch_num: 2147483647}\n"
	"model: {model_type: llama, vocab_size: 32000, seq_length: 4096, hidden_size: 2048,\n"
	"  intermediate_size: 5632, num_hidden_layers: 100000, num_attention_heads: 16, "
	"num_key_value_heads: 16}\n"
	"recompute: {mode: full, full_recompute_layer: [0-3]}\n";

/* This process's CPU time, us: the long steps are timed by the work they
 * take, which a loaded machine does not change. */
static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One long-step file: load its model and config, resolve, estimate (listed, or in summary
 * mode); CPU us (the estimate's error code in *code, 0 when it answered). */
static double long_step_once(const char *text, size_t len, bool listed, int *code)
{
	double t0 = cpu_us();
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_config *c = NULL;
	mo_resolved *r = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	*code = -1;
	if (mo_diags_new(&d) == 0 && mo_model_load(&m, d, text, len, "long.yaml", NULL, &err) == 0 &&
	    mo_config_parse(&c, d, text, len, "long.yaml", NULL, &err) == 0) {
		if (listed)
			*code = mo_estimate_run(&e, c, m, &err) == 0 ? 0 : (int)err.code;
		else if (mo_validate_resolve(d, c, m, &r) == 0 && r)
			*code = mo_estimate_resolved_summary(&e, r, &err) == 0 ? 0 : (int)err.code;
		else
			*code = MO_ERR_LIMIT; /* refused where it entered */
	}
	double t = cpu_us() - t0;
	mo_estimate_free(e);
	mo_resolved_free(r);
	mo_config_free(c);
	mo_model_free(m);
	mo_diags_free(d);
	return t;
}

static void long_steps(void)
{
	static const int stages[] = {100000, 4096, 4096};
	for (size_t i = 0; i < 3; i++) {
		char text[1024];
		int n = snprintf(text, sizeof text, long_step, stages[i]), code = 0;
		bool listed = i < 2; /* the last: mo_estimate_resolved_summary, no listing */
		double tv[5];
		for (size_t k = 0; k < 5; k++)
			tv[k] = long_step_once(text, (size_t)n, listed, &code);
		printf("estimate%s: long step, %d stages x 2^31-1 micro-batches (%d B): %s in %.1f ms "
		       "CPU (target 50; median of 5)\n",
		       listed ? "" : " (summary, no timeline listed)", stages[i], n,
		       code == 0 ? "answered" : code == MO_ERR_LIMIT ? "limit error" : "FAILED",
		       median(tv, 5) / 1000.0);
	}
}

int main(int argc, char **argv)
{
	bench_setup b;
	if (bench_setup_init(&b, argc, argv, "bench_estimate") != 0)
		return 1;
	size_t errors = 0;
	uint64_t peak = 0;
	double cold = run_once(b.text, b.len, b.model, &b.lim, 1, &errors, &peak);
	if (cold < 0) {
		fprintf(stderr, "bench_estimate: the generated config does not estimate (%zu errors)\n",
			errors);
		return 1;
	}
	size_t ni = (size_t)b.iters;
	double *tv = calloc(ni, sizeof *tv), *te = calloc(ni, sizeof *te);
	if (!tv || !te)
		return 2;
	for (size_t i = 0; i < ni; i++) {
		tv[i] = run_once(b.text, b.len, b.model, &b.lim, 0, &errors, &peak);
		te[i] = run_once(b.text, b.len, b.model, &b.lim, 1, &errors, &peak);
	}
	double v = median(tv, ni), e = median(te, ni);
	printf("estimate input: %d layers (MoE, TP 2 EP 4), %d patterns, %zu bytes; peak %.2f GiB; "
	       "%d iterations, median\n",
	       NUM_LAYERS, b.npat, b.len, (double)peak / 1073741824.0, b.iters);
	printf("estimate: validate+estimate %.0f us, validate alone %.0f us, ratio %.2f "
	       "(target <= 1.5; the model's graphs and plan results memoised)\n",
	       e, v, e / v);
	printf("estimate: first estimate of the model (cold) %.0f us, ratio %.2f to validate "
	       "alone\n",
	       cold, cold / v);
	long_steps();
	free(tv);
	free(te);
	bench_setup_free(&b);
	return 0;
}
