/* The work budget of the calls a thread makes (memopt.h, mo_budget): the
 * estimate's simulation and the planner's search poll it in their loops,
 * and every PCRE2 match looks at it first (match.c), so a request that
 * would compute for minutes stops at its deadline, or when its caller
 * cancels it (a server whose client hung up, or that is shutting down),
 * whatever route it came by: validate, expand and layout spend their
 * time matching patterns. Thread-local: each server worker, CLI or binding thread
 * sets its own around the calls it makes, and nothing in the core's
 * structures has to carry it. */
#include "util/util.h"

#include <time.h>

/* Polls between two looks at the clock and the callback: a poll is a
 * counter increment; 256 of the cheapest (a timeline event) take ~10 us. */
#define MO_BUDGET_STRIDE 256u

/* PCRE2 matches that may run into their per-call match or depth limit
 * under one budget. Each such call costs the whole per-call limit (some
 * 10 ms for 100,000 steps of backtracking); 1,474 patterns of that shape
 * in a 63 KB body computed for 13.5 s. Past this many the budget is
 * spent: the request stops with work-limit. A config with a handful of
 * over-complex patterns still gets its diagnostics. */
#define MO_BUDGET_LIMIT_HITS 256u

typedef struct mo_budget_state {
	mo_budget b;
	uint64_t until_ns; /* monotonic; 0: no deadline */
	unsigned polls, limit_hits;
	bool active, spent, cancelled, patterns;
} mo_budget_state;

static _Thread_local mo_budget_state mo_budget_now;

static uint64_t budget_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mo_budget_begin(const mo_budget *b)
{
	mo_budget_state *s = &mo_budget_now;

	memset(s, 0, sizeof *s);
	if (!b)
		return;
	s->b = *b;
	s->active = true;
	/* at most ~49 days: no overflow below */
	if (b->max_ms)
		s->until_ns = budget_clock_ns() +
			      (b->max_ms < (1ull << 32) ? b->max_ms : (1ull << 32)) * 1000000u;
}

mo_error_code mo_budget_status(void)
{
	return mo_budget_now.cancelled ? MO_ERR_CANCELLED : mo_budget_now.spent ? MO_ERR_BUDGET : MO_OK;
}

mo_error_code mo_budget_end(void)
{
	mo_error_code how = mo_budget_now.cancelled ? MO_ERR_CANCELLED
			    : mo_budget_now.spent   ? MO_ERR_BUDGET
						    : MO_OK;

	memset(&mo_budget_now, 0, sizeof mo_budget_now);
	return how;
}

static bool budget_look(mo_budget_state *s)
{
	if (s->b.cancelled && s->b.cancelled(s->b.arg)) {
		s->cancelled = true;
		s->spent = true;
	} else if (s->until_ns && budget_clock_ns() >= s->until_ns) {
		s->spent = true;
	}
	return s->spent;
}

bool budget_spent(void)
{
	mo_budget_state *s = &mo_budget_now;

	if (!s->active)
		return false;
	if (s->spent)
		return true;
	if (++s->polls % MO_BUDGET_STRIDE != 0)
		return false;
	return budget_look(s);
}

bool budget_spent_now(void)
{
	mo_budget_state *s = &mo_budget_now;

	return s->active && (s->spent || budget_look(s));
}

void budget_limit_hit(void)
{
	mo_budget_state *s = &mo_budget_now;

	if (s->active && ++s->limit_hits >= MO_BUDGET_LIMIT_HITS && !s->spent) {
		s->spent = true;
		s->patterns = true;
	}
}

bool budget_error(mo_error *err)
{
	mo_budget_state *s = &mo_budget_now;

	if (!s->active || !(s->spent || budget_look(s)))
		return false;
	if (s->cancelled)
		error_set(err, MO_ERR_CANCELLED, 0, 0, "cancelled: the caller stopped the computation");
	else if (s->patterns)
		error_set(err, MO_ERR_BUDGET, 0, 0,
			     "work-limit: %u pattern matches ran into the match limit "
			     "(backtracking patterns); the request stopped",
			     s->limit_hits);
	else
		error_set(err, MO_ERR_BUDGET, 0, 0,
			     "work-limit: the computation took longer than its limit of %llu ms",
			     (unsigned long long)s->b.max_ms);
	return true;
}
