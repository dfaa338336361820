/* A stage's plan: its one segment, or under a virtual pipeline its chunks;
 * and the predicted peak of a given plan, priced as the search prices it.
 *
 * Interleaved stages (several chunks a stage): at any event a stage holds
 * the running chunk's own bytes and, for every other chunk unit in flight
 * (a micro-batch of a chunk), the bytes that chunk keeps. Every unit in
 * flight priced at the most any of the stage's chunks keeps under the plan
 * (Kmax), with as many embeddings, loss regions and gradient buffers as the
 * schedule ever has in flight, bounds the estimator's timeline from above:
 * the argument of one plan copied to alike chunks (the template), which
 * holds as well when the chunks differ. The plan's own kept bytes, not the
 * unoptimised ones: priced at the baseline's, the other chunks left no room
 * when only recomputing all of them fits (Llama 3 405B, PP 16 VPP 2: "no
 * plan fits" at 80 GiB beside a staged plan at 76 GiB); priced at a
 * starting config's, a plan could keep more than the room it was given.
 *
 * With Kmax held at a cap the chunks are independent: each is solved with
 * its kept bytes within the cap and the other chunks in flight at the cap.
 * The cap is searched over the range the chunks' choices reach: a grid,
 * then halving steps around the best; a plan whose chunks keep less than
 * its cap is tried again at what they keep (the same plan, more room).
 * When the chunks are alike the template's plan is a candidate too, so the
 * answer is never dearer than the template's. A safe plan, not claimed
 * optimal. */
#include "estimate/estimate.h"
#include "planner/planner_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the schedule's in-flight terms ------------------------------------------------ */

/* The most units of the first chunk (*first) and of the last (*last) in
 * flight at once on stage s besides the one running, over the estimator's
 * schedule (warmup forwards, one forward one backward, cool-down): those
 * hold an embedding or a loss region, in the order the estimator's
 * timeline walks (estimate_timeline.c, timeline_order_of). A long step is
 * walked over a shorter one with the same groups (its steady state repeats
 * group after group). */
static void planner_in_flight_ends(const mo_estimate *e, size_t s, int64_t *first, int64_t *last)
{
	int64_t V = e->cfg.vpp;
	mo_vpp_order o;
	timeline_order_of(e, e->cfg.mbn, &o);
	order_shorten(&o, 64);
	int64_t N = o.mbn * V, W = order_warmup(&o, e->cfg.pp, s);
	int64_t in[2] = {0, 0}; /* in flight: first-chunk units, last-chunk units */
	*first = *last = 0;
	for (int64_t t = 0; t < N + (N - W); t++) {
		/* step t: the warmup forwards, then forward W+i and backward i in
		 * turn, then the remaining backwards */
		bool fwd = t < W || (t < W + 2 * (N - W) && (t - W) % 2 == 0);
		int64_t k = t < W		  ? t
			    : t < W + 2 * (N - W) ? (fwd ? W + (t - W) / 2 : (t - W) / 2)
						  : t - (N - W);
		int64_t mb, c;
		order_unit(&o, k, fwd, &mb, &c);
		int64_t is_first = c == 0, is_last = c == V - 1;
		if (fwd) { /* the others at its forward, then it joins them */
			*first = in[0] > *first ? in[0] : *first;
			*last = in[1] > *last ? in[1] : *last;
			in[0] += is_first;
			in[1] += is_last;
		} else { /* it leaves, then the others at its backward */
			in[0] -= is_first;
			in[1] -= is_last;
			*first = in[0] > *first ? in[0] : *first;
			*last = in[1] > *last ? in[1] : *last;
		}
	}
}

/* What the other chunk units in flight on an interleaved stage hold that
 * no plan changes: an embedding per first-chunk unit, a loss region per
 * last-chunk unit (as many as the schedule ever has in flight besides the
 * running one), a gradient buffer per unit but the model's last chunk's;
 * and the pipeline input (with its gradient) each other chunk keeps from
 * its last backward of a step to its first forward of the next, inside the
 * step too while the running chunk works (estimate_timeline.c). */
static uint64_t planner_in_flight_held(const mo_planner_problem *pl, size_t s,
				       const mo_est_fixed *fx)
{
	int64_t first, last;
	planner_in_flight_ends(pl->base, s, &first, &last);
	int64_t sending = fx->last ? fx->others - last : fx->others;
	uint64_t ends =
	    u64_add(u64_mul((uint64_t)first, fx->embed), u64_mul((uint64_t)last, fx->head));
	uint64_t recv = u64_mul((uint64_t)(sending > 0 ? sending : 0), fx->recv);
	uint64_t inputs = u64_mul((uint64_t)fx->chunks - 1, timeline_input_pair(pl->base));
	return u64_add(u64_add(ends, recv), inputs);
}

/* ---- segment problems ---------------------------------------------------------------- */

/* What every segment problem of a stage takes from its fixed terms. */
static mo_search_segment_problem planner_segment_base(const mo_est_chunk *ch,
						      const mo_est_fixed *fx, bool sends)
{
	/* a chunk that sends holds its output's gradient buffer for as long
	 * as the embedding is held: priced with it */
	uint64_t embed = fx->embed + (sends ? fx->recv : 0);
	return (mo_search_segment_problem){.ids = ch->ids,
					   .n = ch->n,
					   .base = fx->base,
					   .embed = embed,
					   .head = fx->head,
					   .loss = fx->loss,
					   .grads = fx->grads,
					   .floor = fx->base + fx->grads + fx->opt,
					   .others = fx->others,
					   .held = (uint64_t)fx->others * (embed + fx->head),
					   .kcap = UINT64_MAX,
					   .last = fx->last};
}

/* Chunk c of stage s. Interleaved: its kept bytes within kcap, every other
 * chunk unit in flight keeping kcap and holding its share of `held`
 * (planner_in_flight_held). */
static mo_search_segment_problem planner_segment_of(const mo_planner_problem *pl, size_t s,
						    size_t c, const mo_est_fixed *fx, uint64_t held,
						    uint64_t kcap)
{
	mo_search_segment_problem sg = planner_segment_base(&pl->base->chunks[s * fx->chunks + c],
							    fx, !(fx->last && c + 1 == fx->chunks));
	if (fx->chunks > 1) {
		sg.base = u64_add(sg.base, u64_add(held, u64_mul((uint64_t)fx->others, kcap)));
		sg.held = 0;
		sg.others = 0;
		sg.kcap = kcap;
		sg.last = fx->last && c + 1 == fx->chunks;
	}
	return sg;
}

/* Whether every chunk of stage s has the layer types of its first chunk,
 * position by position, and no layer the starting config names: then one
 * plan fits them all. */
static bool planner_chunks_alike(const mo_planner_problem *pl, size_t s, size_t chunks)
{
	const mo_est_chunk *first = &pl->base->chunks[s * chunks];
	for (size_t c = 0; c < chunks; c++) {
		const mo_est_chunk *ch = &pl->base->chunks[s * chunks + c];
		if (ch->n != first->n)
			return false;
		for (size_t i = 0; i < ch->n; i++)
			if (pl->fixed[ch->ids[i]] ||
			    pl->m->type_of[ch->ids[i]] != pl->m->type_of[first->ids[i]])
				return false;
	}
	return true;
}

/* The template problem of a stage of alike chunks: its first chunk's
 * layers, with every chunk in flight (`others` counts chunks) holding the
 * template's kept bytes. */
static mo_search_segment_problem planner_template_of(const mo_planner_problem *pl, size_t s,
						     const mo_est_fixed *fx, uint64_t held)
{
	mo_search_segment_problem sg =
	    planner_segment_base(&pl->base->chunks[s * fx->chunks], fx, true);
	sg.held = held;
	return sg;
}

/* The template's choices copied to the same positions of every chunk. */
static void planner_template_copy(const mo_planner_problem *pl, size_t s, size_t chunks,
				  unsigned *what)
{
	const mo_est_chunk *first = &pl->base->chunks[s * chunks];
	for (size_t c = 1; c < chunks; c++) {
		const mo_est_chunk *ch = &pl->base->chunks[s * chunks + c];
		for (size_t i = 0; i < ch->n; i++)
			what[ch->ids[i]] = what[first->ids[i]];
	}
}

/* Copies stage s's choices from src to dst. */
static void planner_stage_copy(const mo_planner_problem *pl, size_t s, size_t chunks, unsigned *dst,
			       const unsigned *src)
{
	for (size_t c = 0; c < chunks; c++) {
		const mo_est_chunk *ch = &pl->base->chunks[s * chunks + c];
		for (size_t i = 0; i < ch->n; i++)
			dst[ch->ids[i]] = src[ch->ids[i]];
	}
}

/* ---- prediction of a given assignment ------------------------------------------------ */

/* The kept bytes (*K) and the largest P + local (*M) of a given assignment
 * over a run of layers. */
static int planner_predict_run(const mo_planner_problem *pl, const int64_t *ids, size_t n,
			       const unsigned *what, int64_t pf, uint64_t *K, uint64_t *M_out,
			       uint64_t *Pv, uint64_t *fv, uint64_t *bv)
{
	uint64_t P = 0, M = 0, hist[MO_SEARCH_MAX_SLOTS + 1] = {0};
	for (size_t p = 0; p < n; p++) {
		mo_planner_choice c;
		int64_t id = ids[p];
		if (planner_choice_of(pl, (uint64_t)id, pf, what[id], &c) != 0)
			return -1;
		uint64_t prior = 0;
		for (int64_t i = 0; i < pf && i < MO_SEARCH_MAX_SLOTS; i++)
			prior += hist[i];
		memmove(hist + 1, hist, MO_SEARCH_MAX_SLOTS * sizeof(*hist));
		hist[0] = c.swapped;
		P += c.kept;
		uint64_t fwd = P + c.swapped + est_layer_gathered(pl->base, id, false);
		uint64_t bwd =
		    P + c.transient + c.swapped + prior + est_layer_gathered(pl->base, id, true);
		M = fwd > M ? fwd : M;
		M = bwd > M ? bwd : M;
		if (Pv) { /* per layer, for the combined 1F1B's pairs */
			Pv[p] = P;
			fv[p] = fwd;
			bv[p] = bwd;
		}
	}
	*K = P;
	*M_out = M;
	return 0;
}

/* Megatron's combined 1F1B on a stage of one chunk (PP 1,
 * cfg.ep_overlap; estimate_timeline.c timeline_pair): after the first
 * forward alone, forward i + 1 runs beside backward i, its embedding and
 * the backward's loss first, then forward layer j beside backward layer
 * n - 1 - j, then the forward's loss region and the backward's embedding.
 * With P_j the kept bytes of layers 0..j, at forward layer j and at
 * backward layer n - 1 - j the stage holds both embeddings, the forward's
 * P_j and the backward's P_(n-1-j): the peak is the largest of
 *   base + embed + grads + M                      (the units alone)
 *   base + 2 embed + K + head + max(loss, grads)  (the backward's loss,
 *                                                  and its embedding's
 *                                                  backward beside the
 *                                                  forward's loss region)
 *   base + 2 embed + grads + max_j max(fwd_j + P_(n-1-j), P_j + bwd_(n-1-j))
 * and the optimizer step's floor (fwd_j, bwd_j: planner_predict_run's
 * terms of layer j, P_j included). The search prices such a stage as 1F1B
 * with one micro-batch more in flight, which bounds this from above. */
static int planner_combined_peak(const mo_planner_problem *pl, const mo_search_segment_problem *sg,
				 const unsigned *what, int64_t pf, uint64_t *peak)
{
	size_t n = sg->n;
	uint64_t K, M, *v = calloc(3 * (n ? n : 1), sizeof(uint64_t));
	if (!v)
		return -1;
	uint64_t *P = v, *fwd = v + n, *bwd = v + 2 * n;
	if (planner_predict_run(pl, sg->ids, n, what, pf, &K, &M, P, fwd, bwd) != 0) {
		free(v);
		return -1;
	}
	uint64_t two = u64_add(sg->base, u64_mul(2, sg->embed)), pair = 0;
	for (size_t j = 0; j < n; j++) {
		uint64_t a = u64_add(fwd[j], P[n - 1 - j]), b = u64_add(P[j], bwd[n - 1 - j]);
		pair = a > pair ? a : pair;
		pair = b > pair ? b : pair;
	}
	free(v);
	uint64_t pk = u64_add(u64_add(sg->base, sg->embed), u64_add(sg->grads, M));
	uint64_t tail = sg->last ? (sg->loss > sg->grads ? sg->loss : sg->grads) : sg->grads;
	uint64_t ends = u64_add(two, u64_add(u64_add(K, sg->head), tail));
	uint64_t layers = u64_add(two, u64_add(sg->grads, pair));
	pk = ends > pk ? ends : pk;
	pk = layers > pk ? layers : pk;
	*peak = pk > sg->floor ? pk : sg->floor;
	return 0;
}

/* Whether stage s runs Megatron's combined 1F1B as one chunk with pairs. */
static bool planner_combined(const mo_planner_problem *pl, const mo_est_fixed *fx)
{
	return pl->base->cfg.ep_overlap && fx->chunks == 1 && fx->others > 0;
}

/* Stage s's peak under the choices in what, and the most any of its chunks
 * keeps (*kmax): each chunk's peak with the others in flight at *kmax. */
static int planner_stage_peak(const mo_planner_problem *pl, size_t s, const mo_est_fixed *fx,
			      uint64_t held, const unsigned *what, int64_t pf, uint64_t *peak,
			      uint64_t *kmax)
{
	uint64_t K, M;
	*kmax = *peak = 0;
	for (size_t c = 0; c < fx->chunks; c++) {
		const mo_est_chunk *ch = &pl->base->chunks[s * fx->chunks + c];
		if (planner_predict_run(pl, ch->ids, ch->n, what, pf, &K, &M, NULL, NULL, NULL) != 0)
			return -1;
		*kmax = K > *kmax ? K : *kmax;
	}
	for (size_t c = 0; c < fx->chunks; c++) { /* again, now that kmax is known */
		mo_search_segment_problem sg = planner_segment_of(pl, s, c, fx, held, *kmax);
		if (planner_combined(pl, fx)) {
			if (planner_combined_peak(pl, &sg, what, pf, peak) != 0)
				return -1;
			continue;
		}
		if (planner_predict_run(pl, sg.ids, sg.n, what, pf, &K, &M, NULL, NULL, NULL) != 0)
			return -1;
		uint64_t pk = search_peak(&sg, K, M);
		*peak = pk > *peak ? pk : *peak;
	}
	return 0;
}

int planner_predict(const mo_planner_problem *pl, const unsigned *what, int64_t prefetch,
		    uint64_t *stage_peak)
{
	const mo_estimate *e = pl->base;
	for (size_t s = 0; s < e->n_stages; s++) {
		mo_est_fixed fx;
		est_stage_fixed(e, s, &fx);
		uint64_t held = fx.chunks > 1 ? planner_in_flight_held(pl, s, &fx) : 0, kmax;
		if (planner_stage_peak(pl, s, &fx, held, what, prefetch, &stage_peak[s], &kmax) !=
		    0)
			return -1;
	}
	return 0;
}

/* ---- interleaved stages: the search over the cap --------------------------------------- */

/* Caps tried at most per stage: a grid, the refinement, and the caps of
 * plans that kept less than theirs. */
#define PLANNER_CAP_TRIES 48
#define PLANNER_CAP_GRID 8
#define PLANNER_CAP_HALVINGS 4

typedef struct planner_cap_search {
	const mo_planner_problem *pl;
	size_t s;
	const mo_est_fixed *fx;
	uint64_t budget, held; /* budget 0: the least peak */
	int64_t pf;
	unsigned *what, *best; /* per layer: the plan being tried, the best one */
	bool found;
	double cost;	     /* the best plan's */
	uint64_t peak, kcap; /* its predicted stage peak, the most its chunks keep */
	uint64_t tried[PLANNER_CAP_TRIES];
	size_t n_tried;
} planner_cap_search;

static bool planner_cap_better(const planner_cap_search *cs, double cost, uint64_t peak)
{
	if (!cs->found)
		return true;
	if (!cs->budget)
		return peak < cs->peak || (peak == cs->peak && cost < cs->cost);
	return cost < cs->cost || (cost == cs->cost && peak < cs->peak);
}

static int planner_cap_try(planner_cap_search *cs, uint64_t kcap);

/* The plan in cs->what, of that cost, made with the chunks within kcap:
 * kept when the best so far; tried again at what its chunks keep. */
static int planner_cap_consider(planner_cap_search *cs, double cost, uint64_t kcap)
{
	uint64_t peak, kmax;
	if (planner_stage_peak(cs->pl, cs->s, cs->fx, cs->held, cs->what, cs->pf, &peak, &kmax) !=
	    0)
		return -1;
	if ((!cs->budget || peak <= cs->budget) && planner_cap_better(cs, cost, peak)) {
		planner_stage_copy(cs->pl, cs->s, cs->fx->chunks, cs->best, cs->what);
		cs->found = true;
		cs->cost = cost;
		cs->peak = peak;
		cs->kcap = kmax;
	}
	return kmax < kcap ? planner_cap_try(cs, kmax) : 0;
}

static bool planner_cap_tried(planner_cap_search *cs, uint64_t kcap)
{
	for (size_t i = 0; i < cs->n_tried; i++)
		if (cs->tried[i] == kcap)
			return true;
	if (cs->n_tried == PLANNER_CAP_TRIES)
		return true; /* no more tries */
	cs->tried[cs->n_tried++] = kcap;
	return false;
}

/* Every chunk solved with its kept bytes within kcap: 0 (a plan or none),
 * -1 out of memory. A budgeted try gives up on a chunk that cannot keep
 * the sum below the best so far. */
static int planner_cap_try(planner_cap_search *cs, uint64_t kcap)
{
	if (planner_cap_tried(cs, kcap))
		return 0;
	double cost = 0;
	for (size_t c = 0; c < cs->fx->chunks; c++) {
		mo_search_segment_problem sg =
		    planner_segment_of(cs->pl, cs->s, c, cs->fx, cs->held, kcap);
		double bound = cs->budget && cs->found ? cs->cost - cost : INFINITY, cc = 0;
		uint64_t pk = 0;
		bool inexact = false; /* no matter: an interleaved stage is never exact */
		int rc = search_segment(cs->pl, &sg, cs->budget, cs->pf, bound, cs->what, &pk, &cc,
					&inexact);
		if (rc <= 0)
			return rc;
		cost += cc;
	}
	return planner_cap_consider(cs, cost, kcap);
}

/* The least (*lo) and the most (*hi) any chunk of the stage can keep: the
 * range of the cap. */
static int planner_cap_range(const planner_cap_search *cs, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	for (size_t c = 0; c < cs->fx->chunks; c++) {
		const mo_est_chunk *ch = &cs->pl->base->chunks[cs->s * cs->fx->chunks + c];
		uint64_t least = 0, most = 0;
		for (size_t i = 0; i < ch->n; i++) {
			mo_planner_choice_set set;
			if (planner_layer_choices(cs->pl, (uint64_t)ch->ids[i], cs->pf, &set) != 0)
				return -1;
			uint64_t a = UINT64_MAX, b = 0;
			for (size_t k = 0; k < set.n; k++) {
				a = set.c[k].kept < a ? set.c[k].kept : a;
				b = set.c[k].kept > b ? set.c[k].kept : b;
			}
			free(set.c);
			least = u64_add(least, set.n ? a : 0);
			most = u64_add(most, b);
		}
		*lo = least > *lo ? least : *lo;
		*hi = most > *hi ? most : *hi;
	}
	/* the other units in flight at the cap leave no room beyond it */
	const mo_est_fixed *fx = cs->fx;
	uint64_t fixed = u64_add(u64_add(fx->base, cs->held), fx->grads);
	if (cs->budget && fx->others > 0) {
		uint64_t room =
		    cs->budget > fixed ? (cs->budget - fixed) / (uint64_t)fx->others : 0;
		*hi = room < *hi ? room : *hi;
	}
	*hi = *hi > *lo ? *hi : *lo;
	return 0;
}

/* The grid over [lo, hi], then halving steps around the best cap. */
static int planner_cap_walk(planner_cap_search *cs, uint64_t lo, uint64_t hi)
{
	uint64_t step = (hi - lo) / PLANNER_CAP_GRID;
	for (uint64_t i = 0; i <= PLANNER_CAP_GRID; i++)
		if (planner_cap_try(cs, i == PLANNER_CAP_GRID ? hi : lo + i * step) != 0)
			return -1;
	for (int h = 0; h < PLANNER_CAP_HALVINGS && cs->found && step > 1; h++) {
		step /= 2;
		uint64_t at = cs->kcap;
		if (at >= lo + step && planner_cap_try(cs, at - step) != 0)
			return -1;
		if (at <= hi - step && planner_cap_try(cs, at + step) != 0)
			return -1;
	}
	return 0;
}

/* One interleaved stage: the template's plan when the chunks are alike,
 * then the search over the cap. 1 found, 0 none, -1 memory. */
static int planner_solve_interleaved(const mo_planner_problem *pl, size_t s, const mo_est_fixed *fx,
				     uint64_t budget, int64_t prefetch, mo_planner_solution *sol)
{
	planner_cap_search cs = {.pl = pl,
				 .s = s,
				 .fx = fx,
				 .budget = budget,
				 .held = planner_in_flight_held(pl, s, fx),
				 .pf = prefetch,
				 .what = calloc(pl->n_layers + 1, sizeof(unsigned)),
				 .best = calloc(pl->n_layers + 1, sizeof(unsigned))};
	int rc = -1;
	uint64_t lo, hi;
	if (!cs.what || !cs.best)
		goto out;
	if (planner_chunks_alike(pl, s, fx->chunks)) {
		mo_search_segment_problem tpl = planner_template_of(pl, s, fx, cs.held);
		uint64_t pk = 0;
		double cost = 0;
		bool inexact = false;
		int t = search_segment(pl, &tpl, budget, prefetch, INFINITY, cs.what, &pk, &cost,
				       &inexact);
		if (t < 0)
			goto out;
		planner_template_copy(pl, s, fx->chunks, cs.what);
		if (t > 0 && planner_cap_consider(&cs, cost * (double)fx->chunks, UINT64_MAX) != 0)
			goto out;
	}
	if (planner_cap_range(&cs, &lo, &hi) != 0 || planner_cap_walk(&cs, lo, hi) != 0)
		goto out;
	rc = cs.found;
	if (cs.found) {
		planner_stage_copy(pl, s, fx->chunks, sol->what, cs.best);
		sol->cost += cs.cost;
		sol->stage_peak[s] = cs.peak;
	}
out:
	free(cs.what);
	free(cs.best);
	return rc;
}

/* ---- stages -------------------------------------------------------------------------- */

/* A stage of one chunk: 1 found, 0 none, -1 memory. */
static int planner_solve_segment(const mo_planner_problem *pl, size_t s, const mo_est_fixed *fx,
				 uint64_t budget, int64_t prefetch, double bound,
				 mo_planner_solution *sol)
{
	mo_search_segment_problem sg = planner_segment_of(pl, s, 0, fx, 0, UINT64_MAX);
	uint64_t pk = 0;
	double cost = 0;
	bool inexact = false;
	int rc = search_segment(pl, &sg, budget, prefetch, bound, sol->what, &pk, &cost, &inexact);
	sol->exact &= !inexact;
	if (rc <= 0)
		return rc;
	/* the combined 1F1B: searched at a bound (one more micro-batch in
	 * flight), the plan's own peak priced as the timeline runs it; not
	 * claimed the cheapest */
	if (planner_combined(pl, fx)) {
		if (planner_combined_peak(pl, &sg, sol->what, prefetch, &pk) != 0)
			return -1;
		sol->exact = false;
	}
	sol->cost += cost;
	sol->stage_peak[s] = pk;
	return 1;
}

int planner_solve(const mo_planner_problem *pl, uint64_t budget, int64_t prefetch, double bound,
		  mo_planner_solution *sol)
{
	const mo_estimate *e = pl->base;
	if (e->n_stages != 1 || e->cfg.vpp != 1)
		bound = INFINITY; /* per-stage costs: no single bound */
	sol->feasible = true;
	sol->exact = true;
	sol->prefetch = prefetch;
	sol->cost = 0;
	sol->peak = 0;
	for (size_t s = 0; s < e->n_stages; s++) {
		mo_est_fixed fx;
		est_stage_fixed(e, s, &fx);
		sol->exact &= fx.chunks == 1;
		sol->stage_peak[s] = 0;
		int rc = fx.chunks > 1
			     ? planner_solve_interleaved(pl, s, &fx, budget, prefetch, sol)
			     : planner_solve_segment(pl, s, &fx, budget, prefetch, bound, sol);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			sol->feasible = false;
			return 0;
		}
		sol->peak = sol->stage_peak[s] > sol->peak ? sol->stage_peak[s] : sol->peak;
	}
	return 0;
}
