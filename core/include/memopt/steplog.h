/*
 * memopt steplog — the measured per-iteration times of a training log, and
 * the step time calibration uses (mo_calibrate's measured_seconds).
 *
 * Lines read (each format as the framework's source prints it; the
 * sources are cited in core/src/steplog/steplog_line.c):
 *  - Megatron-LM (megatron/training/training.py training_log):
 *      " [date] iteration <i>/<N> | consumed samples: ... |
 *        elapsed time per iteration (ms): <t> | ... |
 *        number of skipped iterations: <s> | number of nan iterations: <n> |"
 *    <t> the mean over the iterations since the previous log line;
 *  - MindSpore Transformers (mindformers/core/callback/callback.py
 *    MFLossMonitor, graph mode, and mindformers/pynative/callback/
 *    loss_callback.py):
 *      "{ Epoch:[e/E], step:[<i>/<N>], loss: ..., per_step_time: <t>ms,
 *        ... overflow cond: <True|False>, ..."
 * Any other line is passed over. The first MO_STEPLOG_WARMUP time lines
 * are warm-up (compilation, allocator growth, the first iteration's
 * set-up) and stay out of the statistic, which is the median of the rest.
 *
 * Included from memopt.h; conventions as there (mo_ prefix, opaque handle
 * with _free, caller-owned mo_error with line and column).
 */
#ifndef MEMOPT_STEPLOG_H
#define MEMOPT_STEPLOG_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Time lines skipped at the start of a log. */
#define MO_STEPLOG_WARMUP 2
/* Defaults of mo_steplog_options. */
#define MO_STEPLOG_MAX_BYTES ((size_t)64 << 20)
#define MO_STEPLOG_MAX_TIMES ((size_t)1000000)
/* A per-iteration time must be in (0, MO_STEPLOG_MAX_MS) milliseconds. */
#define MO_STEPLOG_MAX_MS 1e10

/* Caller-owned; initialise with = {0} (fields may be appended). */
typedef struct mo_steplog_options {
	size_t max_bytes; /* the log's size (0: MO_STEPLOG_MAX_BYTES) */
	size_t max_times; /* time lines kept (0: MO_STEPLOG_MAX_TIMES) */
} mo_steplog_options;

typedef enum mo_steplog_format {
	MO_STEPLOG_MEGATRON = 1, /* "elapsed time per iteration (ms):" */
	MO_STEPLOG_MINDFORMERS   /* "per_step_time: ...ms" */
} mo_steplog_format;

/* One time line of the log. */
typedef struct mo_steplog_time {
	int64_t line;       /* 1-based line in the log */
	int64_t iteration;  /* Megatron-LM's "iteration i/N", MindSpore
			     * Transformers' "step:[i/N]"; -1 when absent */
	double seconds;     /* per iteration */
	int64_t skipped;    /* iterations skipped since the previous line
			     * (Megatron-LM's loss-scale skips; MindSpore
			     * Transformers' "overflow cond: True" is 1);
			     * -1 when the line does not say */
	int64_t nan;        /* Megatron-LM's nan iterations; -1 when absent */
	mo_steplog_format format;
	int warmup;         /* 1: one of the first MO_STEPLOG_WARMUP, not in
			     * the statistic */
} mo_steplog_time;

/* What the log gives calibration. */
typedef struct mo_steplog_summary {
	const char *format;      /* "megatron-lm", "mindformers" or "mixed";
				  * static */
	size_t times;            /* time lines read */
	size_t warmup;           /* the first this many of them skipped */
	size_t used;             /* times - warmup: the median's lines */
	double median_seconds;   /* the statistic: median of the used lines */
	double min_seconds, max_seconds; /* of the used lines */
	int64_t skipped, nan;    /* summed over the used lines that say
				  * (-1: none says) */
} mo_steplog_summary;

/* Opaque, owned by the caller, freed with mo_steplog_free. */
typedef struct mo_steplog mo_steplog;

/* Reads a training log's text (len bytes; NULs are bytes like any other).
 * opt NULL: the defaults. Returns 0 with *out set, or -1 with *out NULL
 * and err: MO_ERR_INVALID (no time line; fewer than MO_STEPLOG_WARMUP + 1;
 * a time, iteration or count that is not a number, or a time outside
 * (0, MO_STEPLOG_MAX_MS) ms: the line and column of it), MO_ERR_LIMIT
 * (len over max_bytes, more time lines than max_times), MO_ERR_USAGE
 * (NULL text with a length), MO_ERR_NOMEM. The work is linear in len. */
int mo_steplog_read(mo_steplog **out, const char *text, size_t len,
		    const mo_steplog_options *opt, struct mo_error *err);
/* Frees the log; NULL is fine. */
void mo_steplog_free(mo_steplog *l);

/* The summary; borrowed from l. */
const mo_steplog_summary *mo_steplog_get_summary(const mo_steplog *l);
/* How many time lines (= the summary's times). */
size_t mo_steplog_count(const mo_steplog *l);
/* Time line i in log order; borrowed from l, NULL out of range. */
const mo_steplog_time *mo_steplog_get(const mo_steplog *l, size_t i);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
