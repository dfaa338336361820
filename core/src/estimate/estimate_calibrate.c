/* Calibration: the time model's named device constants fitted to measured
 * step times. Only the constants a caller names move (GEMM efficiency,
 * attention efficiency, the launch cost, the link bandwidths); every other
 * figure stays the device's. The fit is coordinate descent on a log
 * scale, minimising the mean |log(estimated / measured)| over the runs:
 * each round tries each constant at factors around its value, keeps the
 * best, then narrows the factors; a constant stays within a factor
 * MO_CALIB_RANGE of its starting value. Work: rounds x constants x factors x
 * runs estimates, bounded by MO_CALIB_MAX_RUNS. */
#include "estimate/estimate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MO_CALIB_ROUNDS 8
#define MO_CALIB_FACTORS 7
/* each constant stays within this factor of where it started */
#define MO_CALIB_RANGE 2.0

static const char *const mo_calib_names[MO_CALIB_N] = {
	"gemm_efficiency", "attention_efficiency", "launch_us", "intra_node_gbs",
	"inter_node_gbs"};

const char *mo_calibrate_constant_name(int i)
{
	return i >= 0 && i < MO_CALIB_N ? mo_calib_names[i] : NULL;
}

int mo_calibrate_constant_parse(unsigned *out, const char *text)
{
	*out = 0;
	const char *p = text;
	while (p && *p) {
		size_t n = strcspn(p, ",");
		bool found = n == 3 && strncmp(p, "all", 3) == 0;
		if (found)
			*out |= (1u << MO_CALIB_N) - 1;
		for (int i = 0; i < MO_CALIB_N && !found; i++)
			if (strlen(mo_calib_names[i]) == n && strncmp(p, mo_calib_names[i], n) == 0) {
				*out |= 1u << i;
				found = true;
			}
		if (!found)
			return -1;
		p += n;
		if (*p == ',')
			p++;
	}
	return *out ? 0 : -1;
}

static double *calib_field(mo_device *d, int i)
{
	double *f[MO_CALIB_N] = {&d->gemm_efficiency, &d->attention_efficiency, &d->launch_us,
				 &d->intra_node_gbs, &d->inter_node_gbs};
	return f[i];
}

/* Where the search starts: the device's value, or the time model's
 * fallback when it has none (a launch cost of 0 starts at 1 us: the
 * search scales values). */
static double calib_start(const mo_device *d, int i)
{
	mo_device c = *d;
	double v = *calib_field(&c, i);
	if (v > 0 || i == MO_CALIB_LAUNCH)
		return v > 0 ? v : 1.0;
	const double fallback[MO_CALIB_N] = {0.7, 0.5, 1.0, d->collective_bandwidth_gbs, 20.0};
	return fallback[i] > 0 ? fallback[i] : 100.0;
}

typedef struct mo_calib {
	const mo_calibrate_run *runs;
	mo_model **models;  /* copies whose device the fit changes */
	size_t n;
	mo_error *err;
} mo_calib;

static void calib_set(mo_calib *c, const mo_device *d)
{
	for (size_t i = 0; i < c->n; i++)
		c->models[i]->device = *d;
}

/* Estimated seconds of every run into est; -1 with err when one fails. */
static int calib_eval(mo_calib *c, const mo_device *d, double *est)
{
	calib_set(c, d);
	for (size_t i = 0; i < c->n; i++) {
		mo_estimate *e = NULL;
		if (mo_estimate_run(&e, c->runs[i].config, c->models[i], c->err) != 0)
			return -1;
		est[i] = mo_estimate_get_time(e)->step_seconds;
		mo_estimate_free(e);
	}
	return 0;
}

static double calib_loss(const mo_calib *c, const double *est)
{
	double s = 0;
	for (size_t i = 0; i < c->n; i++)
		s += fabs(log(est[i] > 0 ? est[i] / c->runs[i].measured_seconds : 1e-9));
	return s / (double)c->n;
}

static int calib_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double calib_median_error(const mo_calibrate_run *runs, const double *est, size_t n)
{
	double *e = malloc(n * sizeof *e);
	if (!e)
		return NAN;
	for (size_t i = 0; i < n; i++)
		e[i] = fabs(est[i] - runs[i].measured_seconds) / runs[i].measured_seconds;
	qsort(e, n, sizeof *e, calib_cmp);
	double m = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
	free(e);
	return m;
}

/* One coordinate: the best of the factors around the current value. */
static int calib_step(mo_calib *c, mo_device *d, int k, double spread, double start,
			 double *best, double *est)
{
	double base = *calib_field(d, k), keep = base;
	for (int f = 0; f < MO_CALIB_FACTORS; f++) {
		double x = base * pow(spread, (double)(f - MO_CALIB_FACTORS / 2));
		/* a calibration corrects a constant, it does not replace it */
		x = fmin(fmax(x, start / MO_CALIB_RANGE), start * MO_CALIB_RANGE);
		if (k <= MO_CALIB_ATTN && x > 1.0)
			x = 1.0; /* an efficiency is a share of the peak */
		if (x == base && f != MO_CALIB_FACTORS / 2)
			continue;
		*calib_field(d, k) = x;
		if (calib_eval(c, d, est) != 0)
			return -1;
		double l = calib_loss(c, est);
		if (l < *best - 1e-12) {
			*best = l;
			keep = x;
		}
	}
	*calib_field(d, k) = keep;
	return 0;
}

static int calib_check(const mo_calibrate_run *runs, size_t n, mo_error *err)
{
	if (n == 0 || n > MO_CALIB_MAX_RUNS) {
		error_set(err, MO_ERR_USAGE, 0, 0, "calibrate needs 1 to %d runs, got %zu",
			     MO_CALIB_MAX_RUNS, n);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const mo_device *a = &runs[0].model->device, *b = &runs[i].model->device;
		if (!(runs[i].measured_seconds > 0 && runs[i].measured_seconds < 1e7)) {
			error_set(err, MO_ERR_USAGE, 0, 0,
				     "run %zu: the measured step time must be in (0, 1e7) s", i + 1);
			return -1;
		}
		if (strcmp(a->name ? a->name : "", b->name ? b->name : "") != 0) {
			error_set(err, MO_ERR_USAGE, 0, 0,
				     "calibrate fits one device: run 1 is on %s, run %zu on %s",
				     a->name ? a->name : "custom", i + 1, b->name ? b->name : "custom");
			return -1;
		}
	}
	return 0;
}

static int calib_fit(mo_calib *c, mo_calibrate_result *r, unsigned which)
{
	mo_device d = c->runs[0].model->device;
	r->preset = d.name ? d.name : "custom";
	if (calib_eval(c, &d, r->est_before) != 0)
		return -1;
	for (int k = 0; k < MO_CALIB_N; k++)
		if (which & (1u << k))
			*calib_field(&d, k) = calib_start(&d, k);
	if (calib_eval(c, &d, r->est_after) != 0)
		return -1;
	double best = calib_loss(c, r->est_after), spread = 1.6, start[MO_CALIB_N];
	for (int k = 0; k < MO_CALIB_N; k++)
		start[k] = *calib_field(&d, k);
	for (int round = 0; round < MO_CALIB_ROUNDS; round++, spread = sqrt(spread))
		for (int k = 0; k < MO_CALIB_N; k++)
			if ((which & (1u << k)) &&
			    calib_step(c, &d, k, spread, start[k], &best, r->est_after) != 0)
				return -1;
	for (int k = 0; k < MO_CALIB_N; k++)
		r->after[k] = *calib_field(&d, k);
	return calib_eval(c, &d, r->est_after);
}

int mo_calibrate(mo_calibrate_result *out, const mo_calibrate_run *runs, size_t n,
		 unsigned which, mo_error *err)
{
	memset(out, 0, sizeof *out);
	if (calib_check(runs, n, err) != 0)
		return -1;
	mo_calib c = {runs, calloc(n, sizeof(mo_model *)), n, err};
	out->est_before = calloc(n, sizeof(double));
	out->est_after = calloc(n, sizeof(double));
	out->n = n;
	int rc = -1;
	if (!c.models || !out->est_before || !out->est_after)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!(c.models[i] = model_copy(runs[i].model)))
			goto nomem;
	mo_device dev = runs[0].model->device;
	for (int k = 0; k < MO_CALIB_N; k++) {
		out->names[k] = mo_calib_names[k];
		out->before[k] = out->after[k] = *calib_field(&dev, k);
	}
	rc = calib_fit(&c, out, which ? which : (1u << MO_CALIB_N) - 1);
	out->median_error_before = calib_median_error(runs, out->est_before, n);
	out->median_error_after = calib_median_error(runs, out->est_after, n);
	goto done;
nomem:
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
done:
	for (size_t i = 0; c.models && i < n; i++)
		mo_model_free(c.models[i]);
	free(c.models);
	if (rc != 0)
		mo_calibrate_result_free(out);
	return rc;
}

void mo_calibrate_result_free(mo_calibrate_result *r)
{
	if (!r)
		return;
	free(r->est_before);
	free(r->est_after);
	r->est_before = r->est_after = NULL;
}

char *mo_calibrate_device_yaml(const mo_calibrate_result *r)
{
	mo_buf b;
	buf_init(&b, 0);
	buf_printf(&b, "# memopt calibrate: %zu runs, median |error| %.1f%% -> %.1f%%\n", r->n,
		      r->median_error_before * 100, r->median_error_after * 100);
	buf_printf(&b, "device:\n  preset: %s\n", r->preset ? r->preset : "custom");
	for (int k = 0; k < MO_CALIB_N; k++)
		buf_printf(&b, "  %s: %.6g  # was %.6g\n", r->names[k], r->after[k],
			      r->before[k]);
	return buf_take(&b, NULL);
}
