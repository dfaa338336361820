/*
 * memopt — the work budget: a deadline and a cancel callback per thread.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_BUDGET_H
#define MEMOPT_API_BUDGET_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Bounds the work of the estimate and planner calls (mo_estimate_run,
 * mo_planner_run, mo_planner_maximize) and of every pattern match (PCRE2,
 * in validate, expand, layout and the rest) made by the calling thread between
 * mo_budget_begin and mo_budget_end: their loops poll it, and a call whose
 * budget runs out fails with MO_ERR_BUDGET at the deadline (or when
 * backtracking patterns used it up), or MO_ERR_CANCELLED when the callback
 * asked to stop. */
typedef struct mo_budget {
	uint64_t max_ms;             /* wall-clock limit from mo_budget_begin; 0: none */
	int (*cancelled)(void *arg); /* may be NULL; polled, nonzero stops the work */
	void *arg;
} mo_budget;

/* Applies *b (copied; NULL: no budget) to this thread's calls until
 * mo_budget_end. A new begin replaces the previous budget. */
void mo_budget_begin(const mo_budget *b);
/* Ends it. Returns how it ended: MO_OK, MO_ERR_BUDGET when its deadline
 * passed (or backtracking patterns used it up), MO_ERR_CANCELLED when the
 * callback stopped it (a call may then have failed with that code). */
mo_error_code mo_budget_end(void);
/* What mo_budget_end would return, without ending it. A caller whose call
 * succeeded while it was spent got a partial answer (a pattern matched
 * nothing because the budget ran out) and must not use it. */
mo_error_code mo_budget_status(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
