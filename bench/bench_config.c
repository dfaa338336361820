/* bench_config: in one process, the time to validate and expand a
 * 1,000-layer MoE config with 100 patterns (mo_config_parse + mo_validate_resolve +
 * mo_expand_resolved against an already-loaded model) against libyaml parsing the
 * same text alone (the yaml_parser_parse event loop). Median of many runs.
 * Target: ratio <= 2 (the rules should cost no more than the YAML parse
 * they follow, so a scheduler can check every job it queues).
 *
 *   build/bench/bench_config [ITERATIONS]      (default 41)
 */
#include <memopt/memopt.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "bench_gen.h"

/* Phase times of the last run_memopt call (parse, validate, expand), in us. */
typedef struct phases {
	double parse, validate, expand;
} phases;

static int run_memopt(const char *text, size_t len, const mo_model *model, const mo_limits *lim,
		      size_t *errors, size_t *warnings, phases *ph)
{
	double t0 = now_us(), t1 = t0, t2 = t0, t3 = t0;
	bench_checked ck;
	mo_plan *plan = NULL;
	mo_error err = {0};
	int rc = -1;
	if (bench_parse_validate(text, len, model, lim, 1, &ck, &err, &t1) != 0)
		goto out;
	t2 = t3 = now_us();
	*errors = mo_diags_errors(ck.d);
	*warnings = mo_diags_warnings(ck.d);
	if (*errors)
		goto out;
	if (mo_expand_resolved(&plan, ck.r, &err) != 0)
		goto out;
	t3 = now_us();
	if (mo_plan_layer_count(plan) != NUM_LAYERS)
		goto out;
	rc = 0;
out:
	ph->parse = t1 - t0;
	ph->validate = t2 - t1;
	ph->expand = t3 - t2;
	if (rc && err.text[0])
		fprintf(stderr, "bench_config: %s\n", err.text);
	mo_plan_free(plan);
	bench_checked_free(&ck);
	return rc;
}

static int run_libyaml(const char *text, size_t len, size_t *events)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	if (!yaml_parser_initialize(&parser))
		return -1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	size_t n = 0;
	int rc = 0;
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = -1;
			break;
		}
		yaml_event_type_t t = ev.type;
		yaml_event_delete(&ev);
		n++;
		if (t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	*events = n;
	return rc;
}

int main(int argc, char **argv)
{
	bench_setup b;
	if (bench_setup_init(&b, argc, argv, "bench_config") != 0)
		return 1;
	size_t errors = 0, warnings = 0, events = 0;
	phases ph;
	if (run_memopt(b.text, b.len, b.model, &b.lim, &errors, &warnings, &ph) != 0) {
		fprintf(stderr, "bench_config: the generated config is not valid (%zu errors)\n", errors);
		fputs(b.text, stderr);
		return 1;
	}
	if (run_libyaml(b.text, b.len, &events) != 0) {
		fputs("bench_config: libyaml rejects the generated config\n", stderr);
		return 1;
	}

	size_t ni = (size_t)b.iters;
	double *tm = calloc(ni, sizeof *tm), *ty = calloc(ni, sizeof *ty);
	double *tp = calloc(ni, sizeof *tp), *tv = calloc(ni, sizeof *tv), *te = calloc(ni, sizeof *te);
	if (!tm || !ty || !tp || !tv || !te)
		return 2;
	for (size_t i = 0; i < ni; i++) {
		double t0 = now_us();
		run_memopt(b.text, b.len, b.model, &b.lim, &errors, &warnings, &ph);
		double t1 = now_us();
		run_libyaml(b.text, b.len, &events);
		double t2 = now_us();
		tm[i] = t1 - t0;
		ty[i] = t2 - t1;
		tp[i] = ph.parse;
		tv[i] = ph.validate;
		te[i] = ph.expand;
	}
	double m = median(tm, ni), y = median(ty, ni);
	printf("config input: %d layers (MoE, TP 2 EP 4), %d patterns, %zu bytes, %zu YAML events, "
	       "%zu warnings; %d iterations, median\n",
	       NUM_LAYERS, b.npat, b.len, events, warnings, b.iters);
	printf("config phases (median): mo_config_parse %.0f us, mo_validate_resolve %.0f us, mo_expand_resolved %.0f us\n",
	       median(tp, ni), median(tv, ni), median(te, ni));
	printf("config: validate+expand %.0f us, libyaml parse %.0f us, ratio %.2f (target <= 2)\n", m,
	       y, m / y);
	free(tm);
	free(ty);
	free(tp);
	free(tv);
	free(te);
	bench_setup_free(&b);
	return 0;
}
