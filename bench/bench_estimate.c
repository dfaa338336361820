/* bench_estimate: in one process, the time of `memopt estimate` on a
 * 1,000-layer MoE config with 100 patterns (mo_config_parse + mo_validate +
 * mo_estimate_run against an already-loaded model) against validate alone
 * (mo_config_parse + mo_validate) on the same text. Median of many runs.
 * Target: ratio <= 1.5, an estimate about as cheap as the validation it
 * follows (layer types are simulated once
 * per distinct plan segment, not per layer). The model keeps its layer
 * graphs and a memo of plan results across estimates (estimate_cache.c), so
 * the first estimate (cold: graphs built, every segment simulated) is
 * printed apart from the median (warm: what a server or the web UI sees
 * for a loaded model).
 *
 *   build/bench/bench_estimate [ITERATIONS]      (default 41)
 */
#include <memopt/memopt.h>

#include <stdarg.h>
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
	mo_diags *d = NULL;
	mo_config *cfg = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	double t = -1;
	if (mo_diags_new(&d) != 0)
		return -1;
	if (mo_config_parse(&cfg, d, text, len, "bench.yaml", lim, &err) != 0)
		goto out;
	mo_validate(d, cfg, model);
	*errors = mo_diags_errors(d);
	if (*errors)
		goto out;
	if (estimate) {
		if (mo_estimate_run(&e, cfg, model, &err) != 0) {
			fprintf(stderr, "bench_estimate: %s\n", err.text);
			goto out;
		}
		*peak = mo_estimate_peak_bytes(e);
	}
	t = now_us() - t0;
out:
	mo_estimate_free(e);
	mo_config_free(cfg);
	mo_diags_free(d);
	return t;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 41;
	if (iters < 1)
		iters = 1;
	mo_limits lim;
	mo_limits_default(&lim);
	int npat = 0;
	char *ctext = config_text(&npat);
	size_t clen = strlen(ctext), errors = 0;
	uint64_t peak = 0;
	mo_model *model = bench_load_model("bench_estimate", &lim);
	if (!model)
		return 1;
	double cold = run_once(ctext, clen, model, &lim, 1, &errors, &peak);
	if (cold < 0) {
		fprintf(stderr, "bench_estimate: the generated config does not estimate (%zu errors)\n",
			errors);
		return 1;
	}
	size_t ni = (size_t)iters;
	double *tv = calloc(ni, sizeof *tv), *te = calloc(ni, sizeof *te);
	if (!tv || !te)
		return 2;
	for (size_t i = 0; i < ni; i++) {
		tv[i] = run_once(ctext, clen, model, &lim, 0, &errors, &peak);
		te[i] = run_once(ctext, clen, model, &lim, 1, &errors, &peak);
	}
	double v = median(tv, ni), e = median(te, ni);
	printf("estimate input: %d layers (MoE, TP 2 EP 4), %d patterns, %zu bytes; peak %.2f GiB; "
	       "%d iterations, median\n",
	       NUM_LAYERS, npat, clen, (double)peak / 1073741824.0, iters);
	printf("estimate: validate+estimate %.0f us, validate alone %.0f us, ratio %.2f "
	       "(target <= 1.5; the model's graphs and plan results memoised)\n",
	       e, v, e / v);
	printf("estimate: first estimate of the model (cold) %.0f us, ratio %.2f to validate "
	       "alone\n",
	       cold, cold / v);
	free(tv);
	free(te);
	free(ctext);
	mo_model_free(model);
	return 0;
}
