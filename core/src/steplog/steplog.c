/* A training log's time lines and the step time calibration takes from
 * them (memopt/steplog.h): one pass over the lines, the times kept in log
 * order, the median of those after the warm-up.
 *
 * The warm-up: the first MO_STEPLOG_WARMUP time lines. Megatron-LM logs
 * its first iteration on its own line whatever the log interval
 * (NVIDIA/Megatron-LM d98e8a64, megatron/training/training.py:3289 and
 * :4901, is_first_iteration), and that iteration carries the set-up the
 * later ones do not (the allocator's first growth, communicator creation;
 * in MindSpore Transformers' graph mode, compiling the graph). The
 * Megatron-LM CI runs' measured times (notes/step-time.md) are the median
 * from step 3 on, and `memopt calibrate` skipped two lines before this
 * reader existed; a fixed two keeps its answers. */
#include "steplog/steplog.h"

#include <stdlib.h>
#include <string.h>

struct mo_steplog {
	mo_steplog_time *times;
	size_t n, cap;
	mo_steplog_summary sum;
};

static int steplog_push(mo_steplog *l, const mo_steplog_time *t, size_t max_times,
			mo_error *err)
{
	if (l->n == max_times) {
		error_set(err, MO_ERR_LIMIT, t->line > INT32_MAX ? INT32_MAX : (int)t->line, 1,
			  "more than %zu time lines (the limit)", max_times);
		return -1;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64, bytes;
		if (cap > max_times)
			cap = max_times;
		mo_steplog_time *grown = NULL;
		if (!__builtin_mul_overflow(cap, sizeof *grown, &bytes))
			grown = realloc(l->times, bytes);
		if (!grown) {
			error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
			return -1;
		}
		l->times = grown;
		l->cap = cap;
	}
	l->times[l->n++] = *t;
	return 0;
}

/* Every line of text; the time lines pushed onto l. */
static int steplog_scan(mo_steplog *l, const char *text, size_t len, size_t max_times,
			mo_error *err)
{
	steplog_span s = {.p = text, .no = 0};
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		s = (steplog_span){.p = text + pos, .len = end - pos, .no = s.no + 1};
		mo_steplog_time t;
		int rc = steplog_line(&t, &s, err);
		if (rc < 0 || (rc == 1 && steplog_push(l, &t, max_times, err) != 0))
			return -1;
		pos = end + 1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *steplog_format_name(const mo_steplog *l)
{
	bool megatron = false, mindformers = false;
	for (size_t i = 0; i < l->n; i++) {
		megatron |= l->times[i].format == MO_STEPLOG_MEGATRON;
		mindformers |= l->times[i].format == MO_STEPLOG_MINDFORMERS;
	}
	return megatron && mindformers ? "mixed" : megatron ? "megatron-lm" : "mindformers";
}

/* -1 when no line says; else the sum (saturating) of those that do. */
static int64_t sum_known(int64_t total, int64_t v)
{
	if (v < 0)
		return total;
	int64_t r;
	return __builtin_add_overflow(total < 0 ? 0 : total, v, &r) ? INT64_MAX : r;
}

/* The summary over the lines after the warm-up (at least one). */
static int steplog_summarise(mo_steplog *l, mo_error *err)
{
	mo_steplog_summary *sum = &l->sum;
	*sum = (mo_steplog_summary){.format = steplog_format_name(l), .times = l->n,
				    .warmup = MO_STEPLOG_WARMUP, .used = l->n - MO_STEPLOG_WARMUP,
				    .skipped = -1, .nan = -1};
	double *v = malloc(sum->used * sizeof *v);
	if (!v) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		mo_steplog_time *t = &l->times[i];
		t->warmup = i < MO_STEPLOG_WARMUP;
		if (t->warmup)
			continue;
		v[i - MO_STEPLOG_WARMUP] = t->seconds;
		sum->skipped = sum_known(sum->skipped, t->skipped);
		sum->nan = sum_known(sum->nan, t->nan);
	}
	qsort(v, sum->used, sizeof *v, cmp_double);
	size_t m = sum->used / 2;
	sum->median_seconds = sum->used % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
	sum->min_seconds = v[0];
	sum->max_seconds = v[sum->used - 1];
	free(v);
	return 0;
}

static int steplog_enough(const mo_steplog *l, mo_error *err)
{
	if (l->n == 0) {
		error_set(err, MO_ERR_INVALID, 0, 0,
			  "no per-iteration time line: neither Megatron-LM's 'elapsed time per "
			  "iteration (ms): T' nor MindSpore Transformers' 'per_step_time: Tms'");
		return -1;
	}
	if (l->n <= MO_STEPLOG_WARMUP) {
		error_set(err, MO_ERR_INVALID, 0, 0,
			  "%zu time line%s: the first %d are warm-up, so none is left to measure",
			  l->n, l->n == 1 ? "" : "s", MO_STEPLOG_WARMUP);
		return -1;
	}
	return 0;
}

int mo_steplog_read(mo_steplog **out, const char *text, size_t len,
		    const mo_steplog_options *opt, mo_error *err)
{
	mo_error scratch;
	if (!err)
		err = &scratch;
	if (out)
		*out = NULL;
	if (!out || (!text && len > 0)) {
		error_set(err, MO_ERR_USAGE, 0, 0, "mo_steplog_read: NULL out or text");
		return -1;
	}
	size_t max_bytes = opt && opt->max_bytes ? opt->max_bytes : MO_STEPLOG_MAX_BYTES;
	size_t max_times = opt && opt->max_times ? opt->max_times : MO_STEPLOG_MAX_TIMES;
	if (len > max_bytes) {
		error_set(err, MO_ERR_LIMIT, 0, 0, "the log has %zu bytes, over the limit of %zu",
			  len, max_bytes);
		return -1;
	}
	mo_steplog *l = calloc(1, sizeof *l);
	if (!l) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	if (steplog_scan(l, text, len, max_times, err) != 0 || steplog_enough(l, err) != 0 ||
	    steplog_summarise(l, err) != 0) {
		mo_steplog_free(l);
		return -1;
	}
	*out = l;
	return 0;
}

void mo_steplog_free(mo_steplog *l)
{
	if (!l)
		return;
	free(l->times);
	free(l);
}

const mo_steplog_summary *mo_steplog_get_summary(const mo_steplog *l)
{
	return l ? &l->sum : NULL;
}

size_t mo_steplog_count(const mo_steplog *l)
{
	return l ? l->n : 0;
}

const mo_steplog_time *mo_steplog_get(const mo_steplog *l, size_t i)
{
	return l && i < l->n ? &l->times[i] : NULL;
}
