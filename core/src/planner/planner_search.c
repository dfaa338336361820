/* The search: dynamic programming over the layers of each pipeline stage,
 * with a Pareto frontier of (memory, cost) states per layer.
 *
 * Why DP and not branch and bound: the estimator's peak of a stage is a
 * function of running quantities over its layers in order (estimate_timeline.c,
 * est_stage_fixed): P, the kept bytes so far; M, the largest
 * P_p + local_p so far (a layer's forward / backward event: its swap
 * buffers, its recomputed tensors, the prefetch window, gathered weights);
 * and the swap bytes of the last `prefetch` layers (the window the next
 * backward events hold). Two partial plans with the same window that
 * compare P <= P', M <= M' and cost <= cost' leave the first at least as
 * good for every completion, so keeping only the non-dominated states per
 * window is exact, and their number stays small (choices with equal
 * effect are merged and dominated choices dropped beforehand, planner_choice.c).
 * Branch and bound would revisit the same partial states exponentially
 * often. When a stage holds no other micro-batch in flight (PP 1, the last
 * stage), M only has to stay within the budget and is dropped from the
 * state, leaving a two-dimensional frontier (P, cost) per window.
 *
 * Stages are independent: their layers, budgets and costs are disjoint,
 * swap (the only thing crossing layers) needs PP 1, and the step time is
 * the slowest stage's, so the least overhead is each stage's least (a
 * stage's segments and interleaved chunks: planner_stage.c). */
#include "planner/planner_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned search_code(mo_search *d, uint64_t v)
{
	if (!v)
		return 0;
	for (size_t i = 0; i < d->n_vals; i++)
		if (d->vals[i] == v)
			return (unsigned)i + 1;
	if (d->n_vals + 1 >= (1u << MO_SEARCH_SLOT_BITS)) {
		d->failed = true;
		return 0;
	}
	d->vals[d->n_vals++] = v;
	return (unsigned)d->n_vals;
}

/* ---- frontier ----------------------------------------------------------------- */

static int search_state_cmp_p_cost(const mo_search_state *x, const mo_search_state *y)
{
	if (x->wcode != y->wcode)
		return x->wcode < y->wcode ? -1 : 1;
	if (x->P != y->P)
		return x->P < y->P ? -1 : 1;
	return 0;
}

static int search_state_cmp(const void *a, const void *b)
{
	const mo_search_state *x = a, *y = b;
	int c = search_state_cmp_p_cost(x, y);
	if (c)
		return c;
	if (x->M != y->M)
		return x->M < y->M ? -1 : 1;
	return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* Without other micro-batches in flight M only has to fit (checked on
 * every transition): states compare on (window, P, cost). */
static int search_state_cmp_without_m(const void *a, const void *b)
{
	const mo_search_state *x = a, *y = b;
	int c = search_state_cmp_p_cost(x, y);
	if (c)
		return c;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->M < y->M ? -1 : x->M > y->M;
}

typedef struct mo_search_stair {
	uint64_t *M;
	double *cost;
	size_t n;
} mo_search_stair;

/* The least cost among kept states with M' <= M (staircase: M ascending,
 * cost strictly descending). */
static bool search_stair_dominated(const mo_search_stair *s, uint64_t M, double cost)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->M[mid] <= M)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && s->cost[lo - 1] <= cost;
}

static void search_stair_insert(mo_search_stair *s, uint64_t M, double cost)
{
	size_t i = 0;
	while (i < s->n && s->M[i] < M)
		i++;
	size_t j = i;
	while (j < s->n && s->cost[j] >= cost)
		j++;
	memmove(s->M + i + 1, s->M + j, (s->n - j) * sizeof(*s->M));
	memmove(s->cost + i + 1, s->cost + j, (s->n - j) * sizeof(*s->cost));
	s->M[i] = M;
	s->cost[i] = cost;
	s->n = s->n - (j - i) + 1;
}

/* Keeps the non-dominated states of v (sorted in place); returns their
 * count. use_m: M is part of the dominance (other micro-batches in flight);
 * otherwise each state still carries its own M, exact for its path. */
static size_t search_pareto(mo_search_state *v, size_t n, mo_search_stair *st, bool use_m)
{
	qsort(v, n, sizeof(*v), use_m ? search_state_cmp : search_state_cmp_without_m);
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		st->n = 0;
		for (; j < n && v[j].wcode == v[i].wcode; j++) {
			uint64_t m = use_m ? v[j].M : 0;
			if (search_stair_dominated(st, m, v[j].cost))
				continue;
			search_stair_insert(st, m, v[j].cost);
			v[out++] = v[j];
		}
		i = j;
	}
	return out;
}

/* ---- pruning: the bound, the first pass's beam, the cap ---------------------------- */

/* The first pass keeps at most MO_SEARCH_THIN states per layer: a beam of the states
 * whose cost plus the LP bound of the rest is least, and the least-P state
 * (the one most likely to stay feasible). When the
 * exact pass's frontier outgrows MO_SEARCH_CAP it stops: the first pass's plan
 * stands, not claimed optimal (mo_planner_exact). */
#define MO_SEARCH_THIN 128
#define MO_SEARCH_CAP 1024

typedef struct mo_search_rank {
	double key;
	size_t i;
} mo_search_rank;

static bool search_rank_less(const mo_search_rank *x, const mo_search_rank *y)
{
	return x->key != y->key ? x->key < y->key : x->i < y->i;
}

static void search_rank_swap(mo_search_rank *r, size_t a, size_t b)
{
	mo_search_rank t = r[a];
	r[a] = r[b];
	r[b] = t;
}

/* The median of r[a], r[b], r[c] (an index). */
static size_t search_rank_mid3(const mo_search_rank *r, size_t a, size_t b, size_t c)
{
	if (search_rank_less(&r[a], &r[b]))
		return search_rank_less(&r[b], &r[c])   ? b
		       : search_rank_less(&r[a], &r[c]) ? c
							   : a;
	return search_rank_less(&r[a], &r[c]) ? a : search_rank_less(&r[b], &r[c]) ? c : b;
}

/* Moves the k least of r[0..n) (by key, then index: no two are equal) to
 * r[0..k), in any order: which states the beam keeps does not depend on
 * the order they are found in, so a selection replaces the full sort. */
static void search_rank_select(mo_search_rank *r, size_t n, size_t k)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		search_rank_swap(r, search_rank_mid3(r, lo, lo + (hi - lo) / 2, hi - 1),
				    hi - 1);
		size_t s = lo;
		for (size_t j = lo; j + 1 < hi; j++)
			if (search_rank_less(&r[j], &r[hi - 1]))
				search_rank_swap(r, s++, j);
		search_rank_swap(r, s, hi - 1);
		if (s == k)
			return;
		if (k < s)
			hi = s;
		else
			lo = s + 1;
	}
}

/* The first state of least P (the one the beam keeps whatever its cost). */
static size_t search_least(const mo_search_state *v, size_t n)
{
	size_t least = 0;
	for (size_t i = 1; i < n; i++)
		if (v[i].P < v[least].P)
			least = i;
	return least;
}

/* The largest cost plus bound among the states but the least-P one. */
static double search_beam_top(const mo_search_state *v, const double *lbv, size_t n,
				 size_t least)
{
	double top = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (i != least && v[i].cost + lbv[i] > top)
			top = v[i].cost + lbv[i];
	return top;
}

/* The least-P state (least) and the cap - 1 others of least cost plus
 * bound (lbv: each state's bound), in their order; *top: the largest cost
 * plus bound of those others (INFINITY when out of memory). Only states of
 * cost plus bound up to lim are ranked (at least cap - 1 of them are). */
static size_t search_thin(mo_search_state *v, const double *lbv, size_t n, size_t least,
			     double lim, double *top)
{
	size_t cap = MO_SEARCH_THIN;
	mo_search_rank *r = malloc(n * sizeof(*r));
	unsigned char *keep = calloc(n, 1);
	size_t out = 0, m = 0;
	*top = INFINITY;
	if (!r || !keep) { /* out of memory: a plain cut still leaves valid states */
		free(r);
		free(keep);
		return cap;
	}
	for (size_t i = 0; i < n; i++)
		if (i != least && v[i].cost + lbv[i] <= lim)
			r[m++] = (mo_search_rank){v[i].cost + lbv[i], i};
	size_t want = cap - 1 < m ? cap - 1 : m;
	search_rank_select(r, m, want);
	keep[least] = 1; /* the one most likely to stay feasible */
	*top = -INFINITY;
	for (size_t k = 0; k < want; k++) {
		keep[r[k].i] = 1;
		*top = r[k].key > *top ? r[k].key : *top;
	}
	for (size_t i = 0; i < n; i++)
		if (keep[i])
			v[out++] = v[i];
	free(r);
	free(keep);
	return out;
}

/* Per state of d->buf, the bound of the rest of the layers at its room. */
static bool search_bounds(mo_search *d, size_t p, size_t n)
{
	if (n > d->lbv_cap) {
		double *b = realloc(d->lbv, n * sizeof(*b));
		if (!b)
			return false;
		d->lbv = b;
		d->lbv_cap = n;
	}
	size_t seg = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t P = d->buf[i].P;
		uint64_t room = d->kmax > P ? d->kmax - P : 0;
		d->lbv[i] = bound_cost_near(&d->lb, p + 1, room, &seg);
	}
	return true;
}

/* search_prune's answer when the beam's bound skipped too much: the layer
 * is to be made again without it. */
#define MO_SEARCH_AGAIN (SIZE_MAX - 1)

/* How far above the last beam's largest key the next layer's bound starts,
 * per unit of its rise over the layer before (measured: 4 to 8 leave the
 * fewest layers made twice on the bench's models, with few extra states). */
#define MO_SEARCH_RISE 4.0

/* Whether the states frontier_successors kept under the beam's bound d->tau
 * (the k of d->buf left by the incumbent) hold the beam the layer would
 * keep without it. They do when the beam's least-P state is among them and
 * at least MO_SEARCH_THIN - 1 others are within the bound: it skipped only
 * successors beyond the bound (and what they dominate, dearer still: the
 * bound only grows with P), never one of the least P that fits, so every
 * state of the frontier within the bound or of the least P is there, each
 * in its place; and those within the bound are then the beam. */
static bool search_tau_holds(const mo_search *d, size_t k, size_t least)
{
	size_t in = 0;
	if (!k || d->buf[least].P != d->pexempt)
		return false;
	for (size_t i = 0; i < k; i++)
		in += i != least && d->buf[i].cost + d->lbv[i] <= d->tau;
	return in + 1 >= MO_SEARCH_THIN;
}

/* The first pass's beam: the thinned states, and the next layer's bound:
 * the largest key kept, and as much again as it rose from the last layer's
 * (keys rising, they mostly go on rising). least: the least-P state; under
 * a bound that held, the others kept are all within it. */
static size_t search_beam(mo_search *d, size_t k, size_t least)
{
	double top;
	if (k > MO_SEARCH_THIN)
		k = search_thin(d->buf, d->lbv, k, least, d->tau_used ? d->tau : INFINITY, &top);
	else
		top = k == MO_SEARCH_THIN ? search_beam_top(d->buf, d->lbv, k, least) : INFINITY;
	d->tau = top > d->top && d->top < INFINITY ? top + MO_SEARCH_RISE * (top - d->top) : top;
	d->top = top;
	return k;
}

/* Drops from d->buf the states that cannot end cheaper than the incumbent,
 * thins the first pass, caps the exact pass. The new count, SIZE_MAX, or
 * MO_SEARCH_AGAIN. */
static size_t search_prune(mo_search *d, size_t p, size_t n)
{
	bool hope = !d->min_peak && d->incumbent != INFINITY;
	bool beam = d->thin && (n >= MO_SEARCH_THIN || d->tau_used);
	if (!hope && !beam) {
		d->tau = d->top = INFINITY;
		return d->thin || n <= MO_SEARCH_CAP ? n : (d->capped = true, 0);
	}
	if (!search_bounds(d, p, n))
		return SIZE_MAX;
	size_t k = n;
	if (hope) {
		k = 0;
		for (size_t i = 0; i < n; i++)
			if (!(d->buf[i].cost + d->lbv[i] * (1.0 - 1e-9) >= d->incumbent)) {
				if (k != i) {
					d->buf[k] = d->buf[i];
					d->lbv[k] = d->lbv[i];
				}
				k++;
			}
	}
	size_t least = d->thin && k ? search_least(d->buf, k) : 0;
	if (d->tau_used && !search_tau_holds(d, k, least))
		return MO_SEARCH_AGAIN;
	if (d->thin)
		k = search_beam(d, k, least);
	if (!d->thin && k > MO_SEARCH_CAP) {
		k = 0; /* too many to prove anything: the first pass's plan stands */
		d->capped = true;
	}
	return k;
}

/* ---- transitions ------------------------------------------------------------------ */

bool search_reserve(mo_search *d, size_t n)
{
	if (n <= d->buf_cap)
		return true;
	free(d->buf); /* nothing in it is kept: no copy */
	d->buf = malloc(n * sizeof(*d->buf));
	d->buf_cap = d->buf ? n : 0;
	return d->buf != NULL;
}

/* The successors of state `from` (index fi) at position p, appended to
 * d->buf (room reserved). */
static void search_expand(mo_search *d, size_t p, const mo_search_state *from, uint32_t fi,
			     size_t *n)
{
	const mo_search_segment_problem *sg = d->sg;
	uint64_t gf = d->gf[p], gb = d->gb[p];
	uint64_t prior = search_window(d, from->wcode);
	const mo_planner_choice_set *set = &d->sets[p];
	for (size_t k = 0; k < set->n; k++) {
		const mo_planner_choice *c = &set->c[k];
		mo_search_state s = {.P = from->P + c->kept,
				     .cost = d->min_peak ? 0 : from->cost + c->cost,
				     .parent = fi,
				     .what = (uint16_t)c->what};
		uint64_t fwd = s.P + c->swapped + gf;
		uint64_t bwd = s.P + c->transient + c->swapped + prior + gb;
		s.M = from->M;
		s.M = fwd > s.M ? fwd : s.M;
		s.M = bwd > s.M ? bwd : s.M;
		if (search_peak(sg, s.P + d->minrem[p + 1], s.M) > d->budget)
			continue;
		s.wcode = search_shift(d, from->wcode, search_code(d, c->swapped));
		d->buf[(*n)++] = s;
	}
}

/* Every successor, sorted, the dominated ones dropped: with M in the
 * dominance (other micro-batches in flight, or the peak as the objective),
 * and the reference of frontier_successors without. */
static size_t search_frontier_sorted(mo_search *d, size_t p, mo_search_stair *st, bool use_m)
{
	mo_search_state root = {0};
	const mo_search_state *prev = p ? d->front[p - 1] : &root;
	size_t np = p ? d->n_front[p - 1] : 1, n = 0;
	if (!search_reserve(d, np * d->sets[p].n + 1))
		return SIZE_MAX;
	for (size_t i = 0; i < np; i++)
		search_expand(d, p, &prev[i], (uint32_t)i, &n);
	if (!n)
		return 0;
	uint64_t *m = realloc(st->M, n * sizeof(uint64_t));
	if (m)
		st->M = m;
	double *c = m ? realloc(st->cost, n * sizeof(double)) : NULL;
	if (c)
		st->cost = c;
	if (!m || !c)
		return SIZE_MAX;
	return search_pareto(d->buf, n, st, use_m);
}

static bool search_layer(mo_search *d, size_t p, mo_search_stair *st)
{
	bool use_m = d->sg->others > 0 || d->min_peak;
	bool sorted = use_m || d->pl->sort_fronts || d->sets[p].n > MO_FRONTIER_MAX_CHOICES;
	d->tau_used = false;
	size_t n =
	    sorted ? search_frontier_sorted(d, p, st, use_m) : frontier_successors(d, p);
	if (n && n != SIZE_MAX)
		n = search_prune(d, p, n);
	if (n == MO_SEARCH_AGAIN) { /* the bound skipped too much: without it */
		d->tau = INFINITY;
		n = frontier_successors(d, p);
		if (n && n != SIZE_MAX)
			n = search_prune(d, p, n);
	}
	if (n == SIZE_MAX)
		return false;
	mo_search_state *v = NULL;
	if (n) { /* the states stay where they are: buf becomes the frontier */
		v = d->buf;
		d->buf = NULL;
		d->buf_cap = 0;
		mo_search_state *fit = realloc(v, n * sizeof(*v)); /* shrinks in place */
		v = fit ? fit : v;
	}
	d->front[p] = v;
	d->n_front[p] = n;
	return true;
}

/* ---- one segment ---------------------------------------------------------------- */

/* Whether layers a and b have the same choice set at the prefetch pf
 * (planner_layer_choices's inputs): free, of one type, swapping allowed at both
 * or at neither. */
static bool search_same_set(const mo_planner_problem *pl, int64_t a, int64_t b, int64_t pf)
{
	const mo_model *m = pl->m;
	return !pl->fixed[a] && !pl->fixed[b] && m->type_of[a] == m->type_of[b] &&
	       (a + pf < m->num_layers) == (b + pf < m->num_layers);
}

/* The choice set of position p and the choices in it others cover: the
 * ones before's again when it is the same (a model's layers mostly are). */
static int search_set(mo_search *d, size_t p)
{
	const int64_t *ids = d->sg->ids;
	if (!p || !search_same_set(d->pl, ids[p - 1], ids[p], d->pf)) {
		if (planner_layer_choices(d->pl, (uint64_t)ids[p], d->pf, &d->sets[p]) != 0)
			return -1;
		if (d->sets[p].n <= MO_FRONTIER_MAX_CHOICES)
			d->covered[p] = frontier_covered(&d->sets[p]);
		return 0;
	}
	const mo_planner_choice_set *prev = &d->sets[p - 1];
	d->covered[p] = d->covered[p - 1];
	d->sets[p].c = malloc((prev->n + 1) * sizeof(*prev->c));
	if (!d->sets[p].c)
		return -1;
	memcpy(d->sets[p].c, prev->c, prev->n * sizeof(*prev->c));
	d->sets[p].n = prev->n;
	return 0;
}

static int search_prepare(mo_search *d)
{
	size_t n = d->sg->n;
	d->sets = calloc(n + 1, sizeof(*d->sets));
	d->minrem = calloc(n + 1, sizeof(*d->minrem));
	d->front = calloc(n + 1, sizeof(*d->front));
	d->n_front = calloc(n + 1, sizeof(*d->n_front));
	d->gf = calloc(n + 1, sizeof(*d->gf));
	d->gb = calloc(n + 1, sizeof(*d->gb));
	d->covered = calloc(n + 1, sizeof(*d->covered));
	if (!d->sets || !d->minrem || !d->front || !d->n_front || !d->gf || !d->gb || !d->covered)
		return -1;
	for (size_t p = 0; p < n; p++) {
		d->gf[p] = est_layer_gathered(d->pl->base, d->sg->ids[p], false);
		d->gb[p] = est_layer_gathered(d->pl->base, d->sg->ids[p], true);
	}
	for (size_t p = 0; p < n; p++)
		if (search_set(d, p) != 0)
			return -1;
	for (size_t left = n; left > 0; left--) {
		size_t p = left - 1;
		uint64_t lo = UINT64_MAX;
		for (size_t k = 0; k < d->sets[p].n; k++)
			lo = d->sets[p].c[k].kept < lo ? d->sets[p].c[k].kept : lo;
		d->minrem[p] = d->minrem[p + 1] + (lo == UINT64_MAX ? 0 : lo);
	}
	return 0;
}

static void search_free(mo_search *d)
{
	for (size_t p = 0; d->sets && p < d->sg->n; p++) {
		free(d->sets[p].c);
		if (d->front)
			free(d->front[p]);
	}
	free(d->sets);
	free(d->minrem);
	free(d->front);
	free(d->n_front);
	free(d->gf);
	free(d->gb);
	free(d->covered);
	free(d->buf);
	free(d->lbv);
	frontier_free(d);
	bound_free(&d->lb);
}

/* The cheapest final state within the budget (ties: the lower peak). */
static bool search_best(const mo_search *d, size_t *best, uint64_t *peak)
{
	size_t n = d->sg->n;
	bool found = false;
	double bc = 0;
	for (size_t i = 0; n && i < d->n_front[n - 1]; i++) {
		const mo_search_state *s = &d->front[n - 1][i];
		uint64_t pk = search_peak(d->sg, s->P, s->M);
		if (pk > d->budget)
			continue;
		if (!found || s->cost < bc || (s->cost == bc && pk < *peak)) {
			found = true;
			bc = s->cost;
			*best = i;
			*peak = pk;
		}
	}
	return found;
}

/* The most kept bytes of the segment with which its peak can fit: M is
 * at least K (the last layer's forward holds all of it). */
static uint64_t search_most_kept(const mo_search_segment_problem *sg, uint64_t budget)
{
	uint64_t tail = sg->last ? sg->head + sg->loss : 0;
	uint64_t fixed = sg->base + sg->embed + sg->held + (sg->grads > tail ? sg->grads : tail);
	if (budget < sg->floor)
		return 0;
	return budget > fixed ? (budget - fixed) / (uint64_t)(sg->others + 1) : 0;
}

/* One pass over the layers; 1 with the best final state's path written,
 * 0 none, -1 out of memory. */
static int search_pass(mo_search *d, unsigned *what, uint64_t *peak, double *cost)
{
	mo_search_stair st = {0};
	int rc = -1;
	d->tau = d->top = INFINITY;
	for (size_t p = 0; p < d->sg->n; p++) {
		free(d->front[p]);
		d->front[p] = NULL;
		if (budget_spent() || !search_layer(d, p, &st))
			goto out; /* the caller tells a spent budget from no memory */
	}
	rc = 0;
	size_t bi = 0;
	if (d->failed || !search_best(d, &bi, peak))
		goto out;
	*cost = d->front[d->sg->n - 1][bi].cost;
	for (size_t left = d->sg->n; left > 0; left--) {
		size_t p = left - 1;
		const mo_search_state *s = &d->front[p][bi];
		what[d->sg->ids[p]] = s->what;
		bi = s->parent;
	}
	rc = 1;
out:
	free(st.M);
	free(st.cost);
	return rc;
}

/* Solves one segment; writes the choices into what[] and its cost. A thin
 * first pass finds a plan whose cost bounds the exact pass (branch and
 * bound on the frontier: a state whose cost plus the LP bound of the rest
 * cannot beat it is dropped); if the exact pass keeps nothing, the first
 * pass's plan was optimal. `bound`: the cost of a plan the caller already
 * has (INFINITY: none); only cheaper plans are looked for. Returns 1 found,
 * 0 none (infeasible, or none cheaper than bound), -1 out of memory. */
int search_segment(const mo_planner_problem *pl, const mo_search_segment_problem *sg,
		   uint64_t budget, int64_t pf, double bound, unsigned *what, uint64_t *peak,
		   double *cost, bool *inexact)
{
	mo_search d = {.pl = pl,
		       .sg = sg,
		       .budget = budget ? budget : UINT64_MAX,
		       .pf = pf,
		       .min_peak = budget == 0,
		       .incumbent = bound,
		       .kmax = search_most_kept(sg, budget ? budget : UINT64_MAX)};
	d.kmax = d.kmax < sg->kcap ? d.kmax : sg->kcap;
	int rc = -1, first = 0;
	if (sg->n == 0) {
		*peak = search_peak(sg, 0, 0);
		*cost = 0;
		return *peak <= budget;
	}
	if (search_prepare(&d) != 0 || bound_build(&d) != 0)
		goto out;
	if (!d.min_peak) {
		d.thin = true;
		first = search_pass(&d, what, peak, cost);
		if (first < 0)
			goto out;
		d.thin = false;
		if (first && *cost >= bound)
			first = 0; /* no better than the caller's plan */
		d.incumbent = first ? *cost : bound;
	}
	rc = search_pass(&d, what, peak, cost);
	if (rc == 0 && first)
		rc = 1; /* nothing beats the first pass's plan (already in what[]) */
	if (rc == 0 && d.min_peak && d.capped) {
		/* the least peak has no first pass: a frontier over the cap left
		 * nothing (MoE presets with swap and a wide prefetch window);
		 * the beam keeps the least-kept state, so it ends with a plan */
		d.thin = true;
		rc = search_pass(&d, what, peak, cost);
	}
	*inexact |= d.capped;
out:
	search_free(&d);
	return rc;
}
