/* The step time against measured iteration times: every Megatron-LM CI run
 * kept in tests/data/megatron/steptime (measured.tsv: the median
 * `iteration-time` of the logged steps after warm-up, read from the run's
 * golden_values_dev_dgx_<device>.json; source path and commit in each row)
 * estimated from its model file (memopt import of the run's
 * model_config.yaml plus the device of the golden values) and its config
 * (<case>.config.yaml, else none.config.yaml). Each run must stay within
 * MAX_ERROR and the median within MEDIAN_ERROR (notes/step-time.md has the
 * table and what is still missing; the target is 15% / 7%). Also: the
 * breakdown adds up to the step. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"

#define DIR "tests/data/megatron/steptime/"
#define MAX_RUNS 64
#define MAX_ERROR 0.50
#define MEDIAN_ERROR 0.25

static mo_estimate *estimate_files(const char *model_path, const char *config_path)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_config *c = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	char *mt = test_read_file(model_path, NULL);
	char *ct = test_read_file(config_path, NULL);
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, mt, strlen(mt), model_path, NULL, &err), 0);
	assert_int_equal(mo_config_parse(&c, d, ct, strlen(ct), config_path, NULL, &err), 0);
	if (mo_diags_errors(d) > 0)
		fail_msg("%s / %s: %s", model_path, config_path, mo_diags_get(d, 0)->message);
	assert_int_equal(mo_estimate_run(&e, c, m, &err), 0);
	mo_config_free(c);
	mo_model_free(m);
	mo_diags_free(d);
	free(mt);
	free(ct);
	return e;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void config_of(char *out, size_t n, const char *run)
{
	snprintf(out, n, DIR "%s.config.yaml", run);
	FILE *f = fopen(out, "rb");
	if (f)
		fclose(f);
	else
		snprintf(out, n, DIR "none.config.yaml");
}

static void check_breakdown(const mo_estimate_time *t, const char *run)
{
	double sum = t->compute_seconds + t->comm_tp_seconds + t->comm_cp_seconds +
		     t->comm_ep_seconds + t->comm_pp_seconds + t->comm_dp_seconds +
		     t->bubble_seconds + t->optimizer_seconds + t->recompute_seconds +
		     t->swap_seconds + t->fixed_seconds;
	if (fabs(sum - t->step_seconds) > 1e-9 * t->step_seconds + 1e-12)
		fail_msg("%s: breakdown %.6f s != step %.6f s", run, sum, t->step_seconds);
	assert_true(t->mfu > 0 && t->mfu < 1);
	assert_true(t->tokens_per_second_per_device > 0);
}

/* One row of measured.tsv: case, device, steps, n, median seconds. */
static double run_error(const char *line, char *name, size_t name_n)
{
	char run[160], dev[16], model[320], config[320];
	double measured;
	if (sscanf(line, "%159s %15s %*s %*s %lf", run, dev, &measured) != 3)
		fail_msg("bad measured.tsv line: %s", line);
	snprintf(model, sizeof model, DIR "%s.%s.yaml", run, dev);
	config_of(config, sizeof config, run);
	mo_estimate *e = estimate_files(model, config);
	const mo_estimate_time *t = mo_estimate_get_time(e);
	assert_non_null(t);
	assert_true(t->step_seconds == mo_estimate_get_cost(e)->step_seconds);
	check_breakdown(t, run);
	double err = (t->step_seconds - measured) / measured;
	snprintf(name, name_n, "%s (%s)", run, dev);
	printf("  %-72s measured %.4f s estimated %.4f s %+.1f%% (%s)\n", name, measured,
	       t->step_seconds, err * 100, t->largest_term);
	mo_estimate_free(e);
	return err;
}

static void test_ci_runs(void **state)
{
	(void)state;
	char *text = test_read_file(DIR "measured.tsv", NULL);
	double errs[MAX_RUNS];
	size_t n = 0;
	char *save = NULL;
	char *line = strtok_r(text, "\n", &save); /* header */
	while ((line = strtok_r(NULL, "\n", &save)) && n < MAX_RUNS) {
		char name[200];
		double err = run_error(line, name, sizeof name);
		if (fabs(err) > MAX_ERROR)
			fail_msg("%s: %+.1f%%, beyond %.0f%%", name, err * 100, MAX_ERROR * 100);
		errs[n++] = fabs(err);
	}
	free(text);
	assert_true(n >= 12);
	qsort(errs, n, sizeof *errs, cmp_double);
	double median = n % 2 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2;
	printf("  %zu runs, median |error| %.1f%%\n", n, median * 100);
	assert_true(median <= MEDIAN_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ci_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
