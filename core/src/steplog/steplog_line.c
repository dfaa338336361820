/* One line of a training log: is it a time line, and its fields.
 *
 * Megatron-LM (NVIDIA/Megatron-LM d98e8a64, megatron/training/training.py
 * training_log): one line per log interval, printed by the last rank,
 *   ' iteration {:8d}/{:8d} |'                        (:3568)
 *   ' elapsed time per iteration (ms): {:.1f} |'      (:3574)
 *   ' number of skipped iterations: {:3d} |'          (:3638)
 *   ' number of nan iterations: {:3d} |'              (:3641)
 * with throughput, learning rate, losses and norms between them; the time
 * is the interval timer over advanced + skipped iterations (:3366, :3546).
 * Megatron-LM's own reader of these lines,
 * tests/performance_tests/shell_test_utils/determinism/
 * print_nsys_leaderboard.py:87, matches
 * "iteration\s+(\d+)/\s*\d+.*elapsed time per iteration \(ms\):\s*([\d.]+)".
 *
 * MindSpore Transformers (mindspore-ai/mindformers 167a50de):
 *   graph mode, mindformers/core/callback/callback.py:747-759 MFLossMonitor
 *     "{ Epoch:[%3d/%3d], step:[%5d/%5d], loss: ..., per_step_time: %dms,
 *      [lr: %s, ]overflow cond: %s, loss_scale: %s, global_norm: %s..."
 *     (per_step_time = the sink's time / its steps in sink mode, :500);
 *   PyNative, mindformers/pynative/callback/loss_callback.py:295-307
 *     "step:[{:5d}/{:5d}] ... per_step_time: {:6d}ms ..."
 */
#include "steplog/steplog.h"

#include <limits.h>
#include <string.h>

/* A count or a time has at most this many digits: 18 keep an int64_t
 * exact, and 15 integer digits of milliseconds are far over
 * MO_STEPLOG_MAX_MS already. */
#define STEPLOG_MAX_DIGITS 18

static const char megatron_time_key[] = "elapsed time per iteration (ms):";
static const char megatron_iter_key[] = " iteration ";
static const char megatron_skipped_key[] = "number of skipped iterations:";
static const char megatron_nan_key[] = "number of nan iterations:";
static const char mindformers_time_key[] = "per_step_time:";
static const char mindformers_step_key[] = "step:[";
static const char mindformers_overflow_key[] = "overflow cond: ";

static int clamp_int(int64_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* Offset of key in s at or after from, or -1. */
static ptrdiff_t span_find(const steplog_span *s, size_t from, size_t to, const char *key)
{
	if (from >= to)
		return -1;
	const char *hit = memmem(s->p + from, to - from, key, strlen(key));
	return hit ? hit - s->p : -1;
}

static size_t skip_spaces(const steplog_span *s, size_t i)
{
	while (i < s->len && s->p[i] == ' ')
		i++;
	return i;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int bad_field(mo_error *err, const steplog_span *s, size_t at, const char *what)
{
	error_set(err, MO_ERR_INVALID, clamp_int(s->no), clamp_int((int64_t)at + 1),
		  "%s is not a number of at most %d digits", what, STEPLOG_MAX_DIGITS);
	return -1;
}

/* Digits at *i as an unsigned count; *i past them. -1 when there are none
 * or too many. */
static int read_count(const steplog_span *s, size_t *i, int64_t *out)
{
	int64_t v = 0;
	size_t start = *i;
	while (*i < s->len && is_digit(s->p[*i]) && *i - start < STEPLOG_MAX_DIGITS)
		v = v * 10 + (s->p[(*i)++] - '0');
	if (*i == start || (*i < s->len && is_digit(s->p[*i])))
		return -1;
	*out = v;
	return 0;
}

/* "D[.D]" at *i (no sign, no exponent: both frameworks print plain
 * decimals); *i past it. -1 when malformed or too long. Locale-free, so
 * a host program's setlocale cannot change what a log says. */
static int read_decimal(const steplog_span *s, size_t *i, double *out)
{
	int64_t whole;
	if (read_count(s, i, &whole) != 0)
		return -1;
	double v = (double)whole, scale = 1;
	if (*i < s->len && s->p[*i] == '.') {
		size_t start = ++*i;
		while (*i < s->len && is_digit(s->p[*i]) && *i - start < STEPLOG_MAX_DIGITS) {
			scale /= 10;
			v += (s->p[(*i)++] - '0') * scale;
		}
		if (*i == start || (*i < s->len && is_digit(s->p[*i])))
			return -1;
	}
	*out = v;
	return 0;
}

/* The time after a key, in milliseconds: followed by unit (MindSpore
 * Transformers' "ms"), or with unit NULL by ' ', '|' or the line's end. */
static int read_time(mo_steplog_time *t, const steplog_span *s, size_t at, const char *key,
		     const char *unit, mo_error *err)
{
	size_t i = skip_spaces(s, at);
	double ms;
	if (read_decimal(s, &i, &ms) != 0)
		return bad_field(err, s, i, key);
	bool ends = unit ? (s->len - i >= strlen(unit) && memcmp(s->p + i, unit, strlen(unit)) == 0)
			 : (i == s->len || s->p[i] == ' ' || s->p[i] == '|' || s->p[i] == '\r');
	if (!ends) {
		error_set(err, MO_ERR_INVALID, clamp_int(s->no), clamp_int((int64_t)i + 1),
			  "%s: the number is followed by %s, not %s", key,
			  i < s->len ? "another character" : "the line's end",
			  unit ? "'ms'" : "' |' or the line's end");
		return -1;
	}
	if (!(ms > 0 && ms < MO_STEPLOG_MAX_MS)) {
		error_set(err, MO_ERR_INVALID, clamp_int(s->no), clamp_int((int64_t)at + 1),
			  "%s %.1f ms is outside (0, %.0e) ms", key, ms, MO_STEPLOG_MAX_MS);
		return -1;
	}
	t->seconds = ms / 1e3;
	return 0;
}

/* The count after key (anywhere in the line), -1 when the key is absent;
 * an error when the key is there without a count. */
static int read_keyed_count(int64_t *out, const steplog_span *s, const char *key, mo_error *err)
{
	*out = -1;
	ptrdiff_t k = span_find(s, 0, s->len, key);
	if (k < 0)
		return 0;
	size_t i = skip_spaces(s, (size_t)k + strlen(key));
	return read_count(s, &i, out) == 0 ? 0 : bad_field(err, s, i, key);
}

/* "<key><spaces><digits>/" before `to`; -1 when absent, an error when the
 * digits are too many. */
static int read_iteration(int64_t *out, const steplog_span *s, size_t to, const char *key,
			  mo_error *err)
{
	*out = -1;
	for (ptrdiff_t k = span_find(s, 0, to, key); k >= 0;
	     k = span_find(s, (size_t)k + 1, to, key)) {
		size_t i = skip_spaces(s, (size_t)k + strlen(key));
		if (i >= s->len || !is_digit(s->p[i]))
			continue;
		if (read_count(s, &i, out) != 0)
			return bad_field(err, s, i, key);
		if (i < s->len && s->p[i] == '/')
			return 0;
		*out = -1;
	}
	return 0;
}

static int megatron_line(mo_steplog_time *t, const steplog_span *s, size_t k, mo_error *err)
{
	t->format = MO_STEPLOG_MEGATRON;
	if (read_time(t, s, k + strlen(megatron_time_key), megatron_time_key, NULL, err) != 0 ||
	    read_iteration(&t->iteration, s, k, megatron_iter_key, err) != 0 ||
	    read_keyed_count(&t->skipped, s, megatron_skipped_key, err) != 0 ||
	    read_keyed_count(&t->nan, s, megatron_nan_key, err) != 0)
		return -1;
	return 1;
}

/* "overflow cond: True" / "False" (a Python bool's str); -1 otherwise. */
static int64_t mindformers_overflow(const steplog_span *s)
{
	ptrdiff_t k = span_find(s, 0, s->len, mindformers_overflow_key);
	if (k < 0)
		return -1;
	size_t i = (size_t)k + strlen(mindformers_overflow_key);
	if (s->len - i >= 4 && memcmp(s->p + i, "True", 4) == 0)
		return 1;
	if (s->len - i >= 5 && memcmp(s->p + i, "False", 5) == 0)
		return 0;
	return -1;
}

static int mindformers_line(mo_steplog_time *t, const steplog_span *s, size_t k, mo_error *err)
{
	t->format = MO_STEPLOG_MINDFORMERS;
	if (read_time(t, s, k + strlen(mindformers_time_key), mindformers_time_key, "ms", err) != 0 ||
	    read_iteration(&t->iteration, s, k, mindformers_step_key, err) != 0)
		return -1;
	t->skipped = mindformers_overflow(s);
	return 1;
}

int steplog_line(mo_steplog_time *t, const steplog_span *s, mo_error *err)
{
	*t = (mo_steplog_time){.line = s->no, .iteration = -1, .skipped = -1, .nan = -1};
	ptrdiff_t k = span_find(s, 0, s->len, megatron_time_key);
	if (k >= 0)
		return megatron_line(t, s, (size_t)k, err);
	k = span_find(s, 0, s->len, mindformers_time_key);
	if (k >= 0)
		return mindformers_line(t, s, (size_t)k, err);
	return 0;
}
