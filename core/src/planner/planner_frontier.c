/* One layer's frontier by merging, when M is no part of the dominance (no
 * other micro-batch in flight: PP 1, the last stage).
 *
 * The previous frontier is sorted by window, then P ascending with the cost
 * strictly descending (a staircase per window). One window's states under
 * one choice (a run) stay in that order: P + kept ascending, cost + choice
 * cost not ascending (rounding may make two equal). So the successors need
 * no sort. search_pareto sorts them by window, then (P, cost, M), then the
 * order search_expand makes them in (predecessor, then choice), and keeps one
 * when it is cheaper than every one kept before it in its window: one
 * dominates another when it comes first and costs no more. That relation is
 * transitive, so the states kept from a union are the states kept from the
 * union of what each part keeps: the runs of a window are merged two by two
 * (a tree of merges), each merge keeping its staircase. Within a merge a
 * list's states that cost no less than the cheapest kept are dominated and,
 * the costs along a list not rising, skipped as a stretch by a binary
 * search: most successors are never made, only those kept by some merge are
 * checked against the budget. Choices another covers make no run at all.
 * The states, their order and the window codes (numbered by first use, in
 * search_expand's order) are the ones sorting would give. */
#include "planner/planner_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One window's predecessors under one choice, with what the successors
 * need of both at hand. */
typedef struct mo_frontier_run {
	const mo_search_state *prev; /* the previous frontier */
	uint32_t pos, hi;	     /* next predecessor, end of the window's states */
	uint16_t k, what;	     /* the choice */
	uint32_t bucket; /* its target's place among the layer's (frontier_runs_by_target) */
	double c;	 /* its cost */
	uint64_t kept;	 /* its kept bytes */
	uint64_t fb;	 /* added to P at its forward or backward event, the more */
	uint64_t target; /* the window after the choice */
} mo_frontier_run;

/* A run's next successor's sort keys (the rest made only when needed). */
typedef struct mo_frontier_head {
	uint64_t P;
	double cost;
} mo_frontier_head;

/* A merge's result: a staircase of states in order. */
typedef struct mo_frontier_list {
	mo_search_state *v;
	size_t n;
} mo_frontier_list;

typedef struct mo_frontier_merge {
	mo_search *d;
	size_t p;
	const mo_search_segment_problem *sg;
	/* a state fits when its M <= mlim and its P <= plim (search_peak within
	 * the budget with no other micro-batch in flight, the rest of the layers
	 * keeping their least); none: nothing fits */
	uint64_t mlim, plim;
	bool none;
	const mo_search_state *prev;
	const mo_planner_choice_set *set;
	double tau;			      /* the first pass's beam bound (INFINITY: none) */
	int codes[MO_FRONTIER_MAX_CHOICES];   /* per choice: its window code, -1: none fits */
	bool useful[MO_FRONTIER_MAX_CHOICES]; /* per choice: not all its successors dominated */
} mo_frontier_merge;

static mo_frontier_run frontier_run_make(const mo_frontier_merge *g, uint32_t lo, uint32_t hi,
					    uint32_t k, uint64_t prior, uint64_t target)
{
	const mo_planner_choice *c = &g->set->c[k];
	uint64_t fwd = c->swapped + g->d->gf[g->p];
	uint64_t bwd = c->transient + c->swapped + prior + g->d->gb[g->p];
	return (mo_frontier_run){.prev = g->prev,
				 .pos = lo,
				 .hi = hi,
				 .k = (uint16_t)k,
				 .what = (uint16_t)c->what,
				 .c = c->cost,
				 .kept = c->kept,
				 .fb = fwd > bwd ? fwd : bwd,
				 .target = target};
}

/* search_peak(sg, P + minrem, M) <= budget with sg->others == 0 (the merge's
 * case): base + embed + max(M + grads, last ? P + minrem + head + loss : 0),
 * and P + minrem within the segment's cap. */
static void frontier_merge_limits(mo_frontier_merge *g, uint64_t minrem, uint64_t budget)
{
	const mo_search_segment_problem *sg = g->sg;
	uint64_t fm = sg->base + sg->embed + sg->grads;
	uint64_t fp = sg->base + sg->embed + minrem + sg->head + sg->loss;
	g->none = budget < fm || budget < sg->floor || (sg->last && budget < fp);
	g->mlim = g->none ? 0 : budget - fm;
	g->plim = g->none || !sg->last ? UINT64_MAX : budget - fp;
	if (!g->none && sg->kcap < UINT64_MAX) { /* P + minrem <= kcap */
		g->none = sg->kcap < minrem;
		uint64_t cap = g->none ? 0 : sg->kcap - minrem;
		g->plim = cap < g->plim ? cap : g->plim;
	}
}

/* The successor of prev[i] under the run's choice (as search_expand makes
 * it; M is never the objective here): false when it cannot fit. */
static inline bool frontier_run_eval(const mo_frontier_merge *g, const mo_frontier_run *r,
					uint32_t i, mo_search_state *s)
{
	const mo_search_state *from = &r->prev[i];
	uint64_t P = from->P + r->kept, M = from->M;
	M = P + r->fb > M ? P + r->fb : M;
	*s = (mo_search_state){.P = P,
			       .M = M,
			       .cost = from->cost + r->c,
			       .wcode = r->target,
			       .parent = i,
			       .what = r->what,
			       .k = r->k};
	return M <= g->mlim && P <= g->plim && !g->none;
}

/* The first state of v[i..n) whose cost plus add is below least (the costs fall along a
 * staircase, or a run's successors): gallop, then bisect. */
static inline size_t frontier_seek(const mo_search_state *v, size_t i, size_t n, double add,
				   double least)
{
	if (i >= n || v[i].cost + add < least)
		return i;
	size_t step = 1;
	while (i + step < n && !(v[i + step].cost + add < least)) {
		i += step;
		step *= 2;
	}
	size_t top = i + step < n ? i + step : n;
	i++;
	while (i < top) {
		size_t mid = i + (top - i) / 2;
		if (v[mid].cost + add < least)
			top = mid;
		else
			i = mid + 1;
	}
	return i;
}

/* Moves the run to its first successor at or after pos that costs less than
 * `least` (the costs along a run do not rise: the ones skipped are a
 * stretch), and its head there; false when there is none. */
static inline bool frontier_run_seek(mo_frontier_run *r, double least, mo_frontier_head *h)
{
	uint32_t lo = (uint32_t)frontier_seek(r->prev, r->pos, r->hi, r->c, least);
	r->pos = lo;
	if (lo >= r->hi)
		return false;
	*h = (mo_frontier_head){r->prev[lo].P + r->kept, r->prev[lo].cost + r->c};
	return true;
}

static bool frontier_head_less(const mo_frontier_head *a, const mo_frontier_head *b)
{
	return a->P != b->P ? a->P < b->P : a->cost < b->cost;
}

/* search_pareto's order (within a window). */
static bool search_state_before(const mo_search_state *a, const mo_search_state *b)
{
	if (a->P != b->P)
		return a->P < b->P;
	if (a->cost != b->cost)
		return a->cost < b->cost;
	if (a->M != b->M)
		return a->M < b->M;
	if (a->parent != b->parent)
		return a->parent < b->parent;
	return a->k < b->k;
}

/* The successor at the run's head (h: its P and cost, as frontier_run_eval makes
 * them), moved past; false when it cannot fit. */
static inline bool frontier_run_take(const mo_frontier_merge *g, mo_frontier_run *r,
					const mo_frontier_head *h, mo_search_state *s)
{
	uint32_t i = r->pos++;
	uint64_t M = r->prev[i].M;
	M = h->P + r->fb > M ? h->P + r->fb : M;
	*s = (mo_search_state){.P = h->P,
			       .M = M,
			       .cost = h->cost,
			       .wcode = r->target,
			       .parent = i,
			       .what = r->what,
			       .k = r->k};
	return M <= g->mlim && h->P <= g->plim; /* g->none: no merge (frontier_successors) */
}

/* Heads equal in (P, cost): the first in order of those that fit into *s;
 * both moved past (the other is dominated). */
static bool frontier_runs_take_tie(const mo_frontier_merge *g, mo_frontier_run *a,
				      const mo_frontier_head *ha, mo_frontier_run *b,
				      const mo_frontier_head *hb, mo_search_state *s)
{
	mo_search_state y;
	bool fa = frontier_run_take(g, a, ha, s), fb = frontier_run_take(g, b, hb, &y);
	if (fb && (!fa || search_state_before(&y, s)))
		*s = y;
	return fa || fb;
}

/* The staircase of two runs (b may be NULL) into out; its length. The runs
 * are worked on in copies (what is written to out cannot touch them). */
static size_t frontier_merge_runs2(const mo_frontier_merge *g, mo_frontier_run *ra,
				      mo_frontier_run *rb, mo_search_state *out)
{
	double least = INFINITY;
	size_t n = 0;
	mo_frontier_head ha = {0}, hb = {0};
	mo_frontier_run ca = *ra, cb = rb ? *rb : *ra, *a = &ca, *b = &cb;
	bool la = frontier_run_seek(a, least, &ha);
	bool lb = rb && frontier_run_seek(b, least, &hb);
	while (la && lb) {
		bool kept, ta = true, tb = true; /* the heads taken */
		if (ha.P == hb.P && ha.cost == hb.cost)
			kept = frontier_runs_take_tie(g, a, &ha, b, &hb, &out[n]);
		else if (frontier_head_less(&ha, &hb))
			kept = frontier_run_take(g, a, &ha, &out[n]), tb = false;
		else
			kept = frontier_run_take(g, b, &hb, &out[n]), ta = false;
		if (kept)
			least = out[n++].cost;
		if (ta || !(ha.cost < least))
			la = frontier_run_seek(a, least, &ha);
		if (tb || !(hb.cost < least))
			lb = frontier_run_seek(b, least, &hb);
	}
	mo_frontier_run *r = la ? a : b; /* the rest of the one left, alone */
	mo_frontier_head *h = la ? &ha : &hb;
	for (bool l = la || lb; l; l = frontier_run_seek(r, least, h))
		if (frontier_run_take(g, r, h, &out[n]))
			least = out[n++].cost;
	return n;
}

/* The staircase of two staircases into out; its length. The list taken
 * from stays cheaper than all kept (its costs fall); only the other's head
 * may fall behind. Once one runs out the rest of the other is all kept. */
static size_t frontier_merge_lists2(const mo_frontier_list *a, const mo_frontier_list *b,
				       mo_search_state *out)
{
	size_t i = 0, j = 0, n = 0;
	while (i < a->n && j < b->n) {
		if (search_state_before(&a->v[i], &b->v[j])) {
			out[n] = a->v[i++];
			j = frontier_seek(b->v, j, b->n, 0.0, out[n++].cost);
		} else {
			out[n] = b->v[j++];
			i = frontier_seek(a->v, i, a->n, 0.0, out[n++].cost);
		}
	}
	const mo_frontier_list *rest = i < a->n ? a : b;
	size_t from = i < a->n ? i : j;
	memcpy(out + n, rest->v + from, (rest->n - from) * sizeof(*out));
	return n + rest->n - from;
}

static int frontier_run_kept_cmp(const void *a, const void *b)
{
	const mo_frontier_run *x = a, *y = b;
	return x->kept < y->kept ? -1 : x->kept > y->kept;
}

/* Pairs of like kept bytes dominate more of each other: runs by kept (the
 * order only changes the work). By insertion: a window has a handful. */
static void frontier_runs_by_kept(mo_frontier_run *runs, size_t n)
{
	if (n > 32) {
		qsort(runs, n, sizeof(*runs), frontier_run_kept_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		mo_frontier_run x = runs[i];
		size_t j = i;
		for (; j > 0 && runs[j - 1].kept > x.kept; j--)
			runs[j] = runs[j - 1];
		runs[j] = x;
	}
}

/* Scratch for merging one window's runs: two buffers of states (each room
 * for every successor) and the lists of a level. */
typedef struct mo_frontier_tree {
	mo_search_state *a, *b;
	mo_frontier_list *lists;
} mo_frontier_tree;

/* Merges the staircases t->lists[0..nl) (in t->a), two by two, level by
 * level, into dst (the last merge writes there); the states written. */
static size_t frontier_merge_levels(mo_frontier_tree *t, size_t nl, mo_search_state *dst)
{
	mo_search_state *w, *next = t->b;
	if (nl < 2) {
		size_t c = nl ? t->lists[0].n : 0;
		memcpy(dst, nl ? t->lists[0].v : dst, c * sizeof(*dst));
		return c;
	}
	while (nl > 2) {
		size_t m = 0;
		w = next;
		for (size_t i = 0; i < nl; i += 2) {
			size_t c = t->lists[i].n;
			if (i + 1 < nl)
				c = frontier_merge_lists2(&t->lists[i], &t->lists[i + 1], w);
			else
				memcpy(w, t->lists[i].v, c * sizeof(*w));
			t->lists[m++] = (mo_frontier_list){w, c};
			w += c;
		}
		nl = m;
		next = next == t->a ? t->b : t->a;
	}
	return frontier_merge_lists2(&t->lists[0], &t->lists[1], dst);
}

/* Merges the runs of one window, two by two, level by level, into d->buf
 * from `out` on (the last merge writes there); the new count of d->buf. */
static size_t frontier_merge_window(const mo_frontier_merge *g, mo_frontier_run *runs, size_t n,
				       mo_frontier_tree *t, size_t out)
{
	mo_search_state *dst = g->d->buf + out, *w = t->a;
	size_t nl = 0;
	frontier_runs_by_kept(runs, n);
	if (n <= 2)
		return out + frontier_merge_runs2(g, &runs[0], n > 1 ? &runs[1] : NULL, dst);
	for (size_t i = 0; i < n; i += 2) {
		size_t c = frontier_merge_runs2(g, &runs[i], i + 1 < n ? &runs[i + 1] : NULL, w);
		t->lists[nl++] = (mo_frontier_list){w, c};
		w += c;
	}
	return out + frontier_merge_levels(t, nl, dst);
}

/* The successor under choice k of prev[i] fits the budget. */
static bool frontier_fits(const mo_frontier_merge *g, uint32_t i, uint32_t k)
{
	mo_frontier_run r =
	    frontier_run_make(g, i, i + 1, k, search_window(g->d, g->prev[i].wcode), 0);
	mo_search_state s;
	return frontier_run_eval(g, &r, i, &s);
}

/* Window codes of the choices. A swap size not seen before gets the next
 * code where search_expand would give it one: at its first successor that
 * fits, predecessor by predecessor, choice by choice. */
static void frontier_merge_codes(mo_frontier_merge *g, size_t np)
{
	const mo_planner_choice_set *set = g->set;
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
			if (g->codes[k] >= 0 || !frontier_fits(g, i, k))
				continue;
			int code = (int)search_code(g->d, set->c[k].swapped);
			for (size_t q = 0; q < set->n; q++)
				if (g->codes[q] < 0 && set->c[q].swapped == set->c[k].swapped) {
					g->codes[q] = code;
					unknown--;
				}
		}
}

/* Choice a's successor of any state dominates choice b's (same window,
 * ahead in the order, no dearer) and fits whenever b's does (M no larger:
 * the same swap, no more kept and transient bytes at the backward event). */
static bool frontier_choice_covers(const mo_planner_choice *a, const mo_planner_choice *b)
{
	return a->swapped == b->swapped && a->kept < b->kept && a->cost <= b->cost &&
	       a->kept + a->transient <= b->kept + b->transient;
}

uint64_t frontier_covered(const mo_planner_choice_set *set)
{
	uint64_t bits = 0;
	for (size_t k = 0; k < set->n; k++)
		for (size_t j = 0; j < set->n; j++)
			if (frontier_choice_covers(&set->c[j], &set->c[k])) {
				bits |= 1ull << k;
				break;
			}
	return bits;
}

/* The choices worth a run: those no other covers (their codes stay as
 * frontier_merge_codes gave them, from every choice). */
static void frontier_merge_useful(mo_frontier_merge *g)
{
	uint64_t covered = g->d->covered[g->p];
	for (size_t k = 0; k < g->set->n; k++)
		g->useful[k] = g->codes[k] >= 0 && !(covered >> k & 1);
}

/* Index of target x in the sorted tg[0..n) (it is there). */
static size_t frontier_target_at(const uint64_t *tg, size_t n, uint64_t x)
{
	size_t lo = 0;
	while (n > 1) {
		size_t half = n / 2;
		if (tg[lo + half] <= x)
			lo += half;
		n -= half;
	}
	return lo;
}

/* Runs by target window into tmp: the few distinct targets sorted (by
 * insertion: a handful), then the runs bucketed by them. */
static void frontier_runs_by_target(mo_frontier_run *runs, size_t n, mo_frontier_run *tmp,
				       uint64_t *tg, size_t *at)
{
	size_t nt = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = nt;
		if (i && runs[i].target == runs[i - 1].target)
			continue; /* a window's runs of one code: one target */
		while (j > 0 && tg[j - 1] >= runs[i].target)
			j--;
		if (j < nt && tg[j] == runs[i].target)
			continue;
		for (size_t q = nt++; q > j; q--)
			tg[q] = tg[q - 1];
		tg[j] = runs[i].target;
	}
	for (size_t t = 0; t <= nt; t++)
		at[t] = 0;
	for (size_t i = 0; i < n; i++) {
		runs[i].bucket = i && runs[i].target == runs[i - 1].target
				     ? runs[i - 1].bucket
				     : (uint32_t)frontier_target_at(tg, nt, runs[i].target);
		at[runs[i].bucket + 1]++;
	}
	for (size_t t = 0; t < nt; t++)
		at[t + 1] += at[t];
	for (size_t i = 0; i < n; i++)
		tmp[at[runs[i].bucket]++] = runs[i];
}

/* ---- the first pass's beam bound ------------------------------------------------
 * The beam keeps the least-P state and the MO_SEARCH_THIN - 1 others of least
 * key (cost plus bound). A state's key is no less than that of one
 * dominating it (no dearer, no more P: the bound only grows with P), so the
 * frontier's states of key up to a bound tau are the non-dominated ones
 * among the successors of key up to tau: the others need not be made. With
 * tau the last layer's largest key kept, search_prune checks that enough
 * are left (search_tau_holds); most layers keep the keys the last did. A
 * successor is made when its key from below may be within tau, or its P is
 * at most d->pexempt (the least P of the states the beam chooses from: its
 * least-P state is kept whatever its key); and, the incumbent's test being
 * as monotone, not when it surely cannot beat the incumbent.
 *
 * The key from below: the bound is convex in P up to its top (lbtop, no
 * room left) and flat after, so with its value lb0 and a slope at x0 = P +
 * kmin (the least kept of a choice), min(lb0 + slope * (x - x0), lbtop) is
 * under it at every x >= x0. Costs and bounds are never negative, and the
 * tests leave a margin far above any rounding. */

typedef struct mo_frontier_under {
	double *a, *slope;	    /* per predecessor: cost + lb0, the slope */
	double *amin, *smin, *cmin; /* per window (at its first predecessor): the least a,
				     * slope and cost */
	double lbtop;
	double tau_t, inc_t;  /* keys over these are beyond tau / cannot beat the incumbent */
	uint64_t kmin, least; /* least: d->pexempt */
} mo_frontier_under;

/* Room for the rest of the layers after P (as search_bounds has it). */
static uint64_t frontier_merge_room(const mo_frontier_merge *g, uint64_t P)
{
	return g->d->kmax > P ? g->d->kmax - P : 0;
}

/* The key from below of the successor of prev[j] in run r. */
static inline double frontier_under_key(const mo_frontier_under *u, const mo_frontier_run *r,
					   uint32_t j)
{
	double c = r->prev[j].cost + r->c, dk = (double)(r->kept - u->kmin);
	double line = u->a[j] + r->c + u->slope[j] * dk, top = c + u->lbtop;
	return line < top ? line : top;
}

/* The least P of a successor that fits and may beat the incumbent (as
 * search_prune tests it); UINT64_MAX: none. */
static uint64_t frontier_merge_least(const mo_frontier_merge *g, const mo_frontier_under *u,
					const mo_frontier_run *runs, size_t n)
{
	const mo_search *d = g->d;
	uint64_t best = UINT64_MAX;
	size_t seg = 0;
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = runs[i].pos; j < runs[i].hi; j++) {
			mo_search_state s;
			if (runs[i].prev[j].P + runs[i].kept >= best)
				break; /* P only grows along a run */
			if (!frontier_run_eval(g, &runs[i], j, &s) ||
			    frontier_under_key(u, &runs[i], j) > u->inc_t)
				continue;
			if (d->incumbent != INFINITY &&
			    s.cost + bound_cost_near(&d->lb, g->p + 1,
							frontier_merge_room(g, s.P), &seg) *
					 (1.0 - 1e-9) >=
				d->incumbent)
				continue;
			best = s.P;
			break;
		}
	return best;
}

/* The lines of the predecessors, their windows' least, the thresholds. */
static void frontier_under_make(const mo_frontier_merge *g, size_t np,
				   const mo_frontier_run *runs, size_t n, mo_frontier_under *u)
{
	const mo_bound *lb = &g->d->lb;
	double inc = g->d->incumbent;
	size_t seg = 0;
	u->kmin = UINT64_MAX;
	u->least = UINT64_MAX;
	g->d->pexempt = u->least;
	for (size_t i = 0; i < n; i++)
		u->kmin = runs[i].kept < u->kmin ? runs[i].kept : u->kmin;
	if (!n)
		return; /* no run: nothing to make */
	u->lbtop = bound_cost(lb, g->p + 1, 0);
	u->tau_t = g->tau + 4e-9 * fabs(g->tau);
	u->inc_t = (inc + 4e-9 * fabs(inc)) / (1.0 - 1e-9);
	for (size_t lo = 0, f = 0; f < np; f++) {
		const mo_search_state *x = &g->prev[f];
		double sl;
		u->a[f] = x->cost + bound_cost_slope(lb, g->p + 1,
							frontier_merge_room(g, x->P + u->kmin),
							&seg, &sl);
		u->slope[f] = sl;
		if (f == 0 || x->wcode != g->prev[lo].wcode) {
			lo = f;
			u->amin[lo] = u->a[f];
			u->smin[lo] = sl;
			u->cmin[lo] = x->cost;
		}
		u->amin[lo] = u->a[f] < u->amin[lo] ? u->a[f] : u->amin[lo];
		u->smin[lo] = sl < u->smin[lo] ? sl : u->smin[lo];
		u->cmin[lo] = x->cost < u->cmin[lo] ? x->cost : u->cmin[lo];
	}
	u->least = frontier_merge_least(g, u, runs, n);
	g->d->pexempt = u->least;
}

/* Whether some successor of the run may be made: its window's least, taken
 * together, under the threshold. */
static bool frontier_under_run_may(const mo_frontier_under *u, const mo_frontier_run *r)
{
	uint32_t w = r->pos;
	double line = u->amin[w] + r->c + u->smin[w] * (double)(r->kept - u->kmin);
	double top = u->cmin[w] + r->c + u->lbtop, low = line < top ? line : top;
	bool exempt = r->prev[w].P + r->kept <= u->least;
	return !(low > (exempt || u->inc_t < u->tau_t ? u->inc_t : u->tau_t));
}

/* The staircase of the successors of a run that are made and fit, into
 * out; its length. */
static size_t frontier_run_block(const mo_frontier_merge *g, const mo_frontier_under *u,
				    const mo_frontier_run *run, mo_search_state *out)
{
	const mo_frontier_run copy = *run, *r = &copy; /* out cannot touch it */
	double least = INFINITY, t = u->inc_t < u->tau_t ? u->inc_t : u->tau_t;
	size_t n = 0;
	for (uint32_t j = r->pos; j < r->hi; j++) {
		double key = frontier_under_key(u, r, j);
		if (key > (r->prev[j].P + r->kept <= u->least ? u->inc_t : t))
			continue;
		if (frontier_run_eval(g, r, j, &out[n]) && out[n].cost < least)
			least = out[n++].cost;
	}
	return n;
}

/* frontier_merge_window under the beam's bound: each run's staircase of the
 * successors made, then merged as frontier_merge_window merges. */
static size_t frontier_merge_window_beam(const mo_frontier_merge *g, const mo_frontier_under *u,
					    const mo_frontier_run *runs, size_t n,
					    mo_frontier_tree *t, size_t out)
{
	mo_search_state *w = t->a;
	size_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		size_t c = frontier_run_block(g, u, &runs[i], w);
		if (c) {
			t->lists[nl++] = (mo_frontier_list){w, c};
			w += c;
		}
	}
	return out + frontier_merge_levels(t, nl, g->d->buf + out);
}

/* Every (window, useful choice) run, by target window (in tmp; runs:
 * scratch); under the beam's bound (u made here), only those of which some
 * successor may be made. */
static size_t frontier_merge_runs(const mo_frontier_merge *g, size_t np, mo_frontier_run *runs,
				     mo_frontier_run *tmp, uint64_t *tg, size_t *at,
				     mo_frontier_under *u)
{
	size_t n = 0;
	for (uint32_t lo = 0, hi; lo < np; lo = hi) {
		for (hi = lo + 1; hi < np && g->prev[hi].wcode == g->prev[lo].wcode; hi++)
			;
		uint64_t prior = search_window(g->d, g->prev[lo].wcode);
		for (uint32_t k = 0; k < g->set->n; k++)
			if (g->useful[k])
				runs[n++] =
				    frontier_run_make(g, lo, hi, k, prior,
							 search_shift(g->d, g->prev[lo].wcode,
									 (unsigned)g->codes[k]));
	}
	if (g->tau < INFINITY) {
		size_t m = 0;
		frontier_under_make(g, np, runs, n, u);
		for (size_t i = 0; i < n; i++)
			if (frontier_under_run_may(u, &runs[i]))
				runs[m++] = runs[i];
		n = m;
	}
	frontier_runs_by_target(runs, n, tmp, tg, at);
	return n;
}

/* frontier_successors's scratch for up to cap successors, one block (kept in
 * d across layers and passes: no allocation per layer). */
typedef struct mo_frontier_scratch {
	mo_frontier_run *runs, *tmp;
	uint64_t *tg;
	size_t *at;
	mo_frontier_tree t;
	mo_frontier_under u;
} mo_frontier_scratch;

static bool frontier_scratch_get(mo_search *d, size_t cap, mo_frontier_scratch *s)
{
	if (cap > d->fscr_cap) {
		size_t want = cap > 2 * d->fscr_cap ? cap : 2 * d->fscr_cap;
		size_t bytes =
		    (want + 1) * (2 * sizeof(mo_frontier_run) + 2 * sizeof(mo_search_state) +
				  sizeof(mo_frontier_list) + sizeof(uint64_t) + sizeof(size_t) +
				  5 * sizeof(double)) +
		    sizeof(size_t);
		free(d->fscr);
		d->fscr = malloc(bytes);
		d->fscr_cap = d->fscr ? want : 0;
		if (!d->fscr)
			return false;
	}
	size_t c = d->fscr_cap + 1;
	unsigned char *b = d->fscr; /* every part's alignment divides 8, sizes multiples of 8 */
	s->runs = (mo_frontier_run *)(void *)b;
	b += c * sizeof(mo_frontier_run);
	s->tmp = (mo_frontier_run *)(void *)b;
	b += c * sizeof(mo_frontier_run);
	s->t.a = (mo_search_state *)(void *)b;
	b += c * sizeof(mo_search_state);
	s->t.b = (mo_search_state *)(void *)b;
	b += c * sizeof(mo_search_state);
	s->t.lists = (mo_frontier_list *)(void *)b;
	b += c * sizeof(mo_frontier_list);
	s->tg = (uint64_t *)(void *)b;
	b += c * sizeof(uint64_t);
	double **lines[] = {&s->u.a, &s->u.slope, &s->u.amin, &s->u.smin, &s->u.cmin};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
		*lines[i] = (double *)(void *)b;
		b += c * sizeof(double);
	}
	s->at = (size_t *)(void *)b;
	return true;
}

void frontier_free(mo_search *d)
{
	free(d->fscr);
	d->fscr = NULL;
	d->fscr_cap = 0;
}

size_t frontier_successors(mo_search *d, size_t p)
{
	static const mo_search_state root = {0};
	size_t np = p ? d->n_front[p - 1] : 1;
	mo_frontier_merge g = {.d = d,
			       .p = p,
			       .sg = d->sg,
			       .prev = p ? d->front[p - 1] : &root,
			       .set = &d->sets[p],
			       .tau = d->thin ? d->tau : INFINITY};
	frontier_merge_limits(&g, d->minrem[p + 1], d->budget);
	size_t nr = np * g.set->n, out = 0;
	d->tau_used = g.tau < INFINITY;
	if (!np || g.none)
		return 0; /* nothing fits: no state, no window code */
	mo_frontier_scratch s = {0};
	if (!frontier_scratch_get(d, nr, &s) || !search_reserve(d, nr))
		return SIZE_MAX;
	frontier_merge_codes(&g, np);
	frontier_merge_useful(&g);
	nr = frontier_merge_runs(&g, np, s.runs, s.tmp, s.tg, s.at, &s.u);
	for (size_t a = 0, b; a < nr; a = b) {
		for (b = a; b < nr && s.tmp[b].target == s.tmp[a].target; b++)
			;
		out = d->tau_used
			  ? frontier_merge_window_beam(&g, &s.u, s.tmp + a, b - a, &s.t, out)
			  : frontier_merge_window(&g, s.tmp + a, b - a, &s.t, out);
	}
	return out;
}
