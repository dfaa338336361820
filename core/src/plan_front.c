/* One layer's frontier by merging, when M is no part of the dominance (no
 * other micro-batch in flight: PP 1, the last stage).
 *
 * The previous frontier is sorted by window, then P ascending with the cost
 * strictly descending (a staircase per window). One window's states under
 * one choice (a run) stay a staircase: P + kept ascending, cost + choice
 * cost not ascending (rounding may make two equal). So the successors need
 * no sort: the runs that lead to one window are merged by a heap in the
 * order mo_dp_pareto sorts them in (P, cost, M, then the order mo_dp_expand
 * makes them in: predecessor, then choice), and a successor is kept when it
 * is cheaper than every one kept before it in its window, as mo_dp_pareto
 * keeps them. A run's successors that cost no less than the cheapest kept
 * are dominated (they come later, so P is no less), and since the costs
 * along a run do not rise, such a stretch is skipped by a binary search:
 * most successors are never made. The states, their order and the window
 * codes (numbered by first use, in mo_dp_expand's order) are the ones
 * sorting would give. */
#include "plan_dp.h"

#include <math.h>
#include <stdlib.h>

typedef struct mo_run {
	uint32_t pos, hi;  /* next predecessor, end of the window's states */
	uint32_t k;        /* the choice */
	uint64_t target;   /* the window after the choice */
	uint64_t prior;    /* swap bytes of the predecessors' window */
} mo_run;

/* A run's next successor in the heap: its sort keys, the rest made only
 * when needed (M breaks ties; the budget is checked when it is kept). */
typedef struct mo_head {
	uint64_t P;
	double cost;
	mo_run *r;
} mo_head;

typedef struct mo_merge {
	mo_dp *d;
	size_t p;
	const mo_st *prev;
	const mo_pl_set *set;
	int codes[64];     /* per choice: its window code, -1 none (never fits) */
} mo_merge;

/* The successor of prev[i] under the run's choice: false when it cannot fit. */
static bool mo_run_eval(const mo_merge *g, const mo_run *r, uint32_t i, mo_st *s)
{
	const mo_dp *d = g->d;
	const mo_pl_choice *c = &g->set->c[r->k];
	const mo_st *from = &g->prev[i];
	s->P = from->P + c->kept;
	s->cost = d->min_peak ? 0 : from->cost + c->cost;
	uint64_t fwd = s->P + c->swapped + d->gf[g->p];
	uint64_t bwd = s->P + c->transient + c->swapped + r->prior + d->gb[g->p];
	s->M = from->M;
	s->M = fwd > s->M ? fwd : s->M;
	s->M = bwd > s->M ? bwd : s->M;
	s->parent = i;
	s->what = (uint16_t)c->what;
	s->wcode = r->target;
	return mo_dp_peak(d->sg, s->P + d->minrem[g->p + 1], s->M) <= d->budget;
}

static bool mo_run_cheaper(const mo_merge *g, const mo_run *r, uint32_t i, double least)
{
	return g->prev[i].cost + g->set->c[r->k].cost < least;
}

/* Moves the run to its first successor at or after pos that costs less than
 * `least`, and its head there; false when there is none. */
static bool mo_run_seek(const mo_merge *g, mo_run *r, double least, mo_head *h)
{
	uint32_t lo = r->pos, hi = r->hi;
	if (lo < hi && !mo_run_cheaper(g, r, lo, least)) {
		uint32_t step = 1; /* gallop, then bisect: the first cheaper one */
		while (lo + step < hi && !mo_run_cheaper(g, r, lo + step, least)) {
			lo += step;
			step *= 2;
		}
		uint32_t top = lo + step < hi ? lo + step : hi;
		lo++;
		while (lo < top) {
			uint32_t mid = lo + (top - lo) / 2;
			if (mo_run_cheaper(g, r, mid, least))
				top = mid;
			else
				lo = mid + 1;
		}
	}
	r->pos = lo;
	if (lo >= hi)
		return false;
	const mo_pl_choice *c = &g->set->c[r->k];
	*h = (mo_head){g->prev[lo].P + c->kept, g->prev[lo].cost + c->cost, r};
	return true;
}

static bool mo_head_less(const mo_head *a, const mo_head *b)
{
	return a->P != b->P ? a->P < b->P : a->cost < b->cost;
}

static bool mo_head_eq(const mo_head *a, const mo_head *b)
{
	return a->P == b->P && a->cost == b->cost;
}

/* Sifts h[i] down the heap of n heads (ordered by P, then cost). */
static void mo_heap_down(mo_head *h, size_t n, size_t i)
{
	mo_head x = h[i];
	for (;;) {
		size_t l = 2 * i + 1;
		if (l >= n)
			break;
		if (l + 1 < n && mo_head_less(&h[l + 1], &h[l]))
			l++;
		if (!mo_head_less(&h[l], &x))
			break;
		h[i] = h[l];
		i = l;
	}
	h[i] = x;
}

static void mo_heap_up(mo_head *h, size_t i)
{
	mo_head x = h[i];
	while (i > 0 && mo_head_less(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

/* The runs whose heads equal the top in (P, cost), taken off the heap into
 * grp (the equal ones form a subtree at the root); their count. */
static size_t mo_heap_take_ties(mo_head *h, size_t *live, mo_run **grp)
{
	mo_head top = h[0];
	size_t n = 0;
	do {
		grp[n++] = h[0].r;
		h[0] = h[--*live];
		mo_heap_down(h, *live, 0);
	} while (*live && mo_head_eq(&h[0], &top));
	return n;
}

/* Of the successors at the heads of grp (equal in P and cost), the one
 * mo_dp_pareto meets first among those that fit (by M, then predecessor,
 * then choice) into *s; false when none fits. */
static bool mo_ties_best(const mo_merge *g, mo_run **grp, size_t n, mo_st *s)
{
	bool found = false;
	uint32_t bk = 0;
	for (size_t i = 0; i < n; i++) {
		mo_st x;
		if (!mo_run_eval(g, grp[i], grp[i]->pos, &x))
			continue;
		if (!found || x.M < s->M || (x.M == s->M && (x.parent < s->parent ||
		    (x.parent == s->parent && grp[i]->k < bk)))) {
			*s = x;
			bk = grp[i]->k;
			found = true;
		}
	}
	return found;
}

/* Merges the runs of one window into d->buf from `out` on (h, grp: room for
 * one per run); the new count of d->buf. A head that costs no less than the
 * cheapest kept is dominated; one that costs less is kept if it fits: then
 * it, and any other with the same (P, cost), are done with. */
static size_t mo_merge_window(const mo_merge *g, mo_run *runs, size_t n, mo_head *h,
			      mo_run **grp, size_t out)
{
	double least = INFINITY;
	size_t live = 0;
	for (size_t i = 0; i < n; i++)
		live += mo_run_seek(g, &runs[i], least, &h[live]);
	for (size_t i = live / 2; i-- > 0;)
		mo_heap_down(h, live, i);
	while (live) {
		mo_run *r = h[0].r;
		bool tie = (live > 1 && mo_head_eq(&h[1], &h[0])) ||
			   (live > 2 && mo_head_eq(&h[2], &h[0]));
		if (h[0].cost < least && !tie) { /* the common case: one head */
			if (mo_run_eval(g, r, r->pos, &g->d->buf[out]))
				least = g->d->buf[out++].cost;
			r->pos++;
		} else if (h[0].cost < least) {
			size_t ng = mo_heap_take_ties(h, &live, grp);
			if (mo_ties_best(g, grp, ng, &g->d->buf[out]))
				least = g->d->buf[out++].cost;
			for (size_t i = 0; i < ng; i++) {
				grp[i]->pos++;
				if (mo_run_seek(g, grp[i], least, &h[live]))
					mo_heap_up(h, live++);
			}
			continue;
		}
		if (!mo_run_seek(g, r, least, &h[0]))
			h[0] = h[--live];
		mo_heap_down(h, live, 0);
	}
	return out;
}

/* The successor under choice k of prev[i] fits the budget. */
static bool mo_fits(const mo_merge *g, uint32_t i, uint32_t k)
{
	mo_run r = {.k = k, .prior = mo_dp_window(g->d, g->prev[i].wcode)};
	mo_st s;
	return mo_run_eval(g, &r, i, &s);
}

/* Window codes of the choices. A swap size not seen before gets the next
 * code where mo_dp_expand would give it one: at its first successor that
 * fits, predecessor by predecessor, choice by choice. */
static void mo_merge_codes(mo_merge *g, size_t np)
{
	const mo_pl_set *set = g->set;
	size_t unknown = 0;
	for (size_t k = 0; k < set->n; k++) {
		uint64_t v = set->c[k].swapped;
		g->codes[k] = v ? -1 : 0;
		for (size_t j = 0; v && j < g->d->n_vals; j++)
			if (g->d->vals[j] == v)
				g->codes[k] = (int)j + 1;
		unknown += g->codes[k] < 0;
	}
	for (uint32_t i = 0; i < np && unknown; i++)
		for (uint32_t k = 0; k < set->n && unknown; k++) {
			if (g->codes[k] >= 0 || !mo_fits(g, i, k))
				continue;
			int code = (int)mo_dp_code(g->d, set->c[k].swapped);
			for (size_t q = 0; q < set->n; q++)
				if (g->codes[q] < 0 && set->c[q].swapped == set->c[k].swapped) {
					g->codes[q] = code;
					unknown--;
				}
		}
}

static int mo_run_by_target(const void *a, const void *b)
{
	const mo_run *x = a, *y = b;
	return x->target < y->target ? -1 : x->target > y->target;
}

/* Every (window, choice) run, by target window. */
static size_t mo_merge_runs(const mo_merge *g, size_t np, mo_run *runs)
{
	size_t n = 0;
	for (uint32_t lo = 0, hi; lo < np; lo = hi) {
		for (hi = lo + 1; hi < np && g->prev[hi].wcode == g->prev[lo].wcode; hi++)
			;
		uint64_t prior = mo_dp_window(g->d, g->prev[lo].wcode);
		for (uint32_t k = 0; k < g->set->n; k++)
			if (g->codes[k] >= 0)
				runs[n++] = (mo_run){.pos = lo, .hi = hi, .k = k, .prior = prior,
						     .target = mo_dp_shift(g->d, g->prev[lo].wcode,
									   (unsigned)g->codes[k])};
	}
	qsort(runs, n, sizeof(*runs), mo_run_by_target);
	return n;
}

size_t mo_dp_front_nom(mo_dp *d, size_t p)
{
	static const mo_st root = {0};
	size_t np = p ? d->n_front[p - 1] : 1;
	mo_merge g = {.d = d, .p = p, .prev = p ? d->front[p - 1] : &root, .set = &d->sets[p]};
	size_t nr = np * g.set->n, out = 0;
	if (!np)
		return 0;
	if (g.set->n > sizeof g.codes / sizeof *g.codes)
		return SIZE_MAX; /* more choices than any layer has */
	mo_run *runs = malloc((nr + 1) * sizeof(*runs));
	mo_head *h = malloc((nr + 1) * sizeof(*h));
	mo_run **grp = malloc((nr + 1) * sizeof(*grp));
	if (!runs || !h || !grp || !mo_dp_reserve(d, nr)) {
		out = SIZE_MAX;
		goto done;
	}
	mo_merge_codes(&g, np);
	nr = mo_merge_runs(&g, np, runs);
	for (size_t a = 0, b; a < nr; a = b) {
		for (b = a; b < nr && runs[b].target == runs[a].target; b++)
			;
		out = mo_merge_window(&g, runs + a, b - a, h, grp, out);
	}
done:
	free(runs);
	free(h);
	free(grp);
	return out;
}
