/* What the fuzz harnesses share: the per-input limits (a small input cap,
 * the work budget) and the checks of a finished estimate. Header-only so
 * each harness stays one translation unit with replay.c. */
#ifndef MEMOPT_FUZZ_COMMON_H
#define MEMOPT_FUZZ_COMMON_H

#include <memopt/memopt.h>

#include <stdint.h>
#include <stdlib.h>

/* Inputs over this are not interesting (the real configs are < 16 KiB). */
#define FUZZ_MAX_INPUT (256u * 1024u)
/* Wall-clock work per estimate or plan call: a pathological pipeline is
 * stopped by the library's budget (MO_ERR_BUDGET), not by the fuzzer's
 * timeout. */
#define FUZZ_WORK_MS 1500u

static inline void fuzz_limits(mo_limits *lim)
{
	mo_limits_default(lim);
	lim->max_bytes = FUZZ_MAX_INPUT;
	lim->max_nodes = 200000;
}

/* A finished estimate must be self-consistent: the peak is the largest
 * stage peak, reserved is at least allocated, buckets sum to the peak. */
static inline void fuzz_check_estimate(const mo_estimate *e)
{
	uint64_t top = 0;

	if (!e || mo_estimate_stage_count(e) == 0)
		abort();
	for (size_t i = 0; i < mo_estimate_stage_count(e); i++) {
		const mo_estimate_stage *s = mo_estimate_stage_get(e, i);
		uint64_t sum = 0;

		if (!s || s->reserved_peak_bytes < s->peak_bytes ||
		    !s->peak_event)
			abort();
		for (int b = 0; b < MO_EST_BUCKETS; b++) {
			if (s->peak_by_bucket[b] > UINT64_MAX - sum)
				abort();
			sum += s->peak_by_bucket[b];
		}
		if (sum != s->peak_bytes)
			abort();
		if (s->peak_bytes > top)
			top = s->peak_bytes;
	}
	if (mo_estimate_peak_bytes(e) != top)
		abort();
}

#endif
