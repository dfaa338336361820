/* Private to the search (planner_search.c, planner_frontier.c,
 * planner_bound.c): the states of the dynamic programme, one segment's
 * problem, and the lower bound of the cost still to pay. */
#ifndef MEMOPT_PLANNER_SEARCH_H
#define MEMOPT_PLANNER_SEARCH_H

#include "planner/planner.h"

#define MO_SEARCH_SLOT_BITS 6
#define MO_SEARCH_MAX_SLOTS 10

typedef struct mo_search_state {
	uint64_t P, M;
	double cost;
	uint64_t wcode;
	uint32_t parent;
	uint16_t what;
	uint16_t k; /* its choice's index (planner_frontier.c's order) */
} mo_search_state;

/* One run of layers solved together: a stage, or a chunk of one. */
typedef struct mo_search_segment_problem {
	const int64_t *ids;
	size_t n;
	uint64_t base, embed, head, loss; /* peak = base + embed + others*K + held */
	uint64_t grads;			  /*  + max(grads+M, last ? K+head+loss : 0) */
	uint64_t held; /* the embeddings and loss regions the others hold: with one
			* chunk per stage others * (embed + head) */
	uint64_t floor;			  /* the optimizer step: base + grads + its
					   * scratch; the peak is never below it */
	int64_t others;
	/* the most the segment may keep in all (a virtual-pipeline chunk: what
	 * its stage's other chunks in flight are priced at) */
	uint64_t kcap;
	bool last;
} mo_search_segment_problem;

/* ---- lower bound of the remaining cost (branch and bound inside the DP) -----
 * The relaxation of the rest of the layers to a multiple-choice knapsack over
 * their kept bytes, solved as a linear program: each layer starts at its
 * cheapest choice, and bytes are bought back along the lower convex hull of
 * its (kept, cost) choices, cheapest slope first, fractionally. Layers with
 * the same choice set share a hull (a class); a suffix is its class counts. */

typedef struct mo_bound_segment {
	double slope, dk; /* cost per byte, bytes */
	size_t cls;
} mo_bound_segment;

typedef struct mo_bound {
	size_t n_cls;
	double *base_cost;	/* per class: its cheapest choice's cost */
	uint64_t *base_kept;	/* per class: that choice's kept bytes */
	mo_bound_segment *segs; /* every class's hull segments, by slope */
	size_t n_segs;
	size_t *cls_of;	 /* per position */
	uint32_t *count; /* [position][class]: classes at positions >= p */
	/* per position, the bound's running sums as bound_cost adds them: the
	 * cheapest choices' cost and kept bytes, and after each segment taken
	 * whole, the bytes bought back and the cost ([position][segment]) */
	double *pcost, *pkept, *cum_take, *cum_cost;
	bool fast; /* every byte sum exact in a double (below 2^53) */
} mo_bound;

typedef struct mo_search {
	const mo_planner_problem *pl;
	const mo_search_segment_problem *sg;
	uint64_t budget;
	bool min_peak; /* objective: the peak (cost ignored) */
	int64_t pf;
	uint64_t vals[64]; /* window codes: swap byte values (code = index + 1) */
	size_t n_vals;
	mo_planner_choice_set *sets; /* per position */
	/* per position with at most MO_FRONTIER_MAX_CHOICES choices: bit k set
	 * when another choice covers choice k (frontier_covered) */
	uint64_t *covered;
	uint64_t *minrem;	 /* kept lower bound of positions >= p */
	uint64_t *gf, *gb;	 /* per position: gathered weights at forward / backward */
	mo_search_state **front; /* per position */
	size_t *n_front;
	bool thin; /* first pass: a few states per window (an incumbent) */
	/* first pass: the beam's bound, the largest cost plus bound the last
	 * layer's beam kept (INFINITY: none); frontier_successors skips successors
	 * beyond it (tau_used), but none of P up to pexempt, the least P of a
	 * successor that fits and may beat the incumbent (search_tau_holds:
	 * why that is exact, or the layer is made again without it) */
	double tau;
	double top; /* the largest key the last layer's beam kept */
	bool tau_used;
	uint64_t pexempt;
	bool capped;	  /* the exact pass had to thin: not proven optimal */
	double incumbent; /* cost of a known plan: states that cannot beat it go */
	uint64_t kmax;	  /* the most kept bytes of the whole segment that can fit */
	mo_bound lb;	  /* lower bound of the cost still to pay */
	bool failed;
	mo_search_state *buf; /* scratch: one layer's states before they are kept */
	size_t buf_cap;
	double *lbv; /* scratch: per state of buf, its bound */
	size_t lbv_cap;
	void *fscr;	 /* scratch of frontier_successors, kept across layers */
	size_t fscr_cap; /* successors it has room for */
} mo_search;

/* A segment's peak with K kept bytes in all and M its largest P + local
 * (UINT64_MAX: K over the segment's cap, no budget holds it). */
static inline uint64_t search_peak(const mo_search_segment_problem *sg, uint64_t K, uint64_t M)
{
	if (K > sg->kcap)
		return UINT64_MAX;
	uint64_t tail = sg->last ? K + sg->head + sg->loss : 0;
	M += sg->grads;
	uint64_t pk = sg->base + sg->embed + (uint64_t)sg->others * K + sg->held +
		      (M > tail ? M : tail);
	return pk > sg->floor ? pk : sg->floor;
}

/* planner_search.c */
unsigned search_code(mo_search *d, uint64_t v);
/* Solves one segment; writes the choices into what[] (by layer id), its
 * peak and its cost. Budget 0: the least peak instead. `bound`: only plans
 * cheaper than it (INFINITY: any). 1 found, 0 none, -1 out of memory;
 * *inexact set when the exact pass had to give up. */
int search_segment(const mo_planner_problem *pl, const mo_search_segment_problem *sg,
		   uint64_t budget, int64_t pf, double bound, unsigned *what, uint64_t *peak,
		   double *cost, bool *inexact);
/* The swap bytes of a window (inline: once per window of every layer). */
static inline uint64_t search_window(const mo_search *d, uint64_t wcode)
{
	uint64_t w = 0;
	for (int64_t i = 0; i < d->pf; i++) {
		unsigned c = (unsigned)(wcode >> (i * MO_SEARCH_SLOT_BITS)) &
			     ((1u << MO_SEARCH_SLOT_BITS) - 1);
		if (c)
			w += d->vals[c - 1];
	}
	return w;
}
/* The window after a layer of swap code `code` (inline: once per run). */
static inline uint64_t search_shift(const mo_search *d, uint64_t wcode, unsigned code)
{
	if (d->pf <= 0)
		return 0;
	int bits = (int)d->pf * MO_SEARCH_SLOT_BITS;
	uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
	return ((wcode << MO_SEARCH_SLOT_BITS) | code) & mask;
}
/* Room for n states in d->buf (what it held is dropped); false when out of
 * memory. */
bool search_reserve(mo_search *d, size_t n);

/* The most choices a layer may have for frontier_successors (more: sorted). */
#define MO_FRONTIER_MAX_CHOICES 64

/* planner_frontier.c: the non-dominated successors of the frontier before
 * position p (the root at 0) when M is no part of the dominance, written to
 * d->buf as search_pareto leaves them; their count, or SIZE_MAX when out of
 * memory. */
size_t frontier_successors(mo_search *d, size_t p);
/* The choices of a set (at most MO_FRONTIER_MAX_CHOICES) that another covers
 * (its successor of any state dominates theirs and fits whenever theirs
 * does), as bits: they make no run in frontier_successors. */
uint64_t frontier_covered(const mo_planner_choice_set *set);
/* Frees frontier_successors's scratch. */
void frontier_free(mo_search *d);

/* planner_bound.c */
int bound_build(mo_search *d);
void bound_free(mo_bound *lb);
/* Least cost of positions >= p keeping at most `room` bytes (LP bound). */
double bound_cost(const mo_bound *lb, size_t p, uint64_t room);
/* The bound as a plain loop: the definition (and the fallback when byte
 * sums are too large for a double to hold them exactly). */
double bound_cost_loop(const mo_bound *lb, size_t p, uint64_t room);

/* Byte counts below this are exact in a double, and so are their sums and
 * differences while they stay below it. */
#define MO_BOUND_EXACT 9007199254740992.0 /* 2^53 */

/* bound_cost, the search for its segment started at *seg (updated); inline:
 * it is asked once per state of every frontier.
 *
 * The loop takes whole segments while the bytes still needed exceed them,
 * then the rest of the need from the first segment that covers it (i): with
 * exact byte sums that is cum_cost[i - 1] + (need - cum_take[i - 1]) *
 * slope_i, the very additions the loop makes (a segment with no layer in
 * the suffix adds 0). *seg: where to start looking for i (the last i: the
 * states come by P ascending, so i mostly stays or moves on a little);
 * updated. */
static inline double bound_cost_near(const mo_bound *lb, size_t p, uint64_t room, size_t *seg)
{
	if (!lb->fast || (double)room >= MO_BOUND_EXACT)
		return bound_cost_loop(lb, p, room);
	double need = lb->pkept[p] - (double)room;
	if (!(need > 0))
		return lb->pcost[p];
	const double *take = lb->cum_take + p * lb->n_segs;
	const double *cost = lb->cum_cost + p * lb->n_segs;
	size_t i = *seg < lb->n_segs ? *seg : lb->n_segs;
	if (i > 0 && take[i - 1] >= need) { /* behind: bisect */
		size_t lo = 0, hi = i;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (take[mid] >= need)
				hi = mid;
			else
				lo = mid + 1;
		}
		i = lo;
	}
	while (i < lb->n_segs && take[i] < need) /* the first whose running take covers need */
		i++;
	*seg = i;
	if (i == lb->n_segs)
		return i ? cost[i - 1] : lb->pcost[p];
	double before = i ? cost[i - 1] : lb->pcost[p];
	double taken = i ? take[i - 1] : 0;
	return before + (need - taken) * lb->segs[i].slope;
}

/* bound_cost_near, and in *slope a slope of the bound there as room
 * shrinks (per byte; a subgradient where it is convex: up to the most the
 * rest can buy back, flat beyond). */
static inline double bound_cost_slope(const mo_bound *lb, size_t p, uint64_t room, size_t *seg,
					 double *slope)
{
	double v = bound_cost_near(lb, p, room, seg);
	bool walked = lb->fast && (double)room < MO_BOUND_EXACT && lb->pkept[p] - (double)room > 0;
	/* walked: *seg is the segment the need ends in, whose slope is the
	 * bound's left derivative there; otherwise 0 bounds it (it never falls) */
	*slope = walked && *seg < lb->n_segs ? lb->segs[*seg].slope : 0;
	return v;
}

#endif
