/* The search's lower bound of the cost still to pay (see planner_search.h): the
 * hulls of the layers' choice sets, and the bound of a suffix at a room,
 * asked once per state of every frontier. The sums the bound adds up are
 * the same for every state of a position, so they are kept per position and
 * a query is a binary search: the same additions in the same order as the
 * plain loop (bound_cost_loop), so the same double, bit for bit. */
#include "planner/planner_search.h"

#include <stdlib.h>
#include <string.h>

static bool bound_sets_equal(const mo_planner_choice_set *a, const mo_planner_choice_set *b)
{
	if (a->n != b->n)
		return false;
	for (size_t k = 0; k < a->n; k++)
		if (a->c[k].kept != b->c[k].kept || a->c[k].cost != b->c[k].cost)
			return false;
	return true;
}

static int bound_segment_cmp(const void *a, const void *b)
{
	const mo_bound_segment *x = a, *y = b;
	return x->slope < y->slope ? -1 : x->slope > y->slope;
}

/* The hull of one set from its cheapest point down to its least kept. */
static bool bound_hull(mo_bound *lb, const mo_planner_choice_set *set, size_t cls)
{
	size_t cur = 0;
	for (size_t k = 1; k < set->n; k++)
		if (set->c[k].cost < set->c[cur].cost ||
		    (set->c[k].cost == set->c[cur].cost && set->c[k].kept < set->c[cur].kept))
			cur = k;
	lb->base_cost[cls] = set->c[cur].cost;
	lb->base_kept[cls] = set->c[cur].kept;
	for (;;) { /* the next hull point: the least slope among smaller kept */
		size_t nx = SIZE_MAX;
		double best = 0;
		for (size_t k = 0; k < set->n; k++) {
			if (set->c[k].kept >= set->c[cur].kept)
				continue;
			double sl = (set->c[k].cost - set->c[cur].cost) /
				    (double)(set->c[cur].kept - set->c[k].kept);
			if (nx == SIZE_MAX || sl < best ||
			    (sl == best && set->c[k].kept < set->c[nx].kept)) {
				nx = k;
				best = sl;
			}
		}
		if (nx == SIZE_MAX)
			return true;
		mo_bound_segment *g = realloc(lb->segs, (lb->n_segs + 1) * sizeof(*g));
		if (!g)
			return false;
		lb->segs = g;
		g[lb->n_segs++] = (mo_bound_segment){
		    best < 0 ? 0 : best, (double)(set->c[cur].kept - set->c[nx].kept), cls};
		cur = nx;
	}
}

/* The running sums of position p, added in bound_cost_loop's order. */
static void bound_sums(mo_bound *lb, size_t p)
{
	const uint32_t *cnt = lb->count + p * lb->n_cls;
	double cost = 0, kept = 0, take = 0;
	for (size_t c = 0; c < lb->n_cls; c++) {
		cost += cnt[c] * lb->base_cost[c];
		kept += cnt[c] * (double)lb->base_kept[c];
	}
	lb->pcost[p] = cost;
	lb->pkept[p] = kept;
	lb->fast &= kept < MO_BOUND_EXACT;
	for (size_t i = 0; i < lb->n_segs; i++) {
		double t = cnt[lb->segs[i].cls] * lb->segs[i].dk;
		take += t;
		cost += t * lb->segs[i].slope;
		lb->cum_take[p * lb->n_segs + i] = take;
		lb->cum_cost[p * lb->n_segs + i] = cost;
	}
	lb->fast &= take < MO_BOUND_EXACT;
}

static int bound_prefix(mo_bound *lb, size_t n)
{
	size_t cells = (n + 1) * lb->n_segs + 1;
	lb->pcost = calloc(n + 1, sizeof(*lb->pcost));
	lb->pkept = calloc(n + 1, sizeof(*lb->pkept));
	lb->cum_take = calloc(cells, sizeof(*lb->cum_take));
	lb->cum_cost = calloc(cells, sizeof(*lb->cum_cost));
	if (!lb->pcost || !lb->pkept || !lb->cum_take || !lb->cum_cost)
		return -1;
	lb->fast = true;
	for (size_t p = 0; p <= n; p++)
		bound_sums(lb, p);
	return 0;
}

int bound_build(mo_search *d)
{
	mo_bound *lb = &d->lb;
	size_t n = d->sg->n;
	lb->cls_of = calloc(n + 1, sizeof(*lb->cls_of));
	lb->base_cost = calloc(n + 1, sizeof(*lb->base_cost));
	lb->base_kept = calloc(n + 1, sizeof(*lb->base_kept));
	size_t *rep = calloc(n + 1, sizeof(*rep));
	int rc = -1;
	if (!lb->cls_of || !lb->base_cost || !lb->base_kept || !rep)
		goto out;
	for (size_t p = 0; p < n; p++) {
		size_t c = 0;
		while (c < lb->n_cls && !bound_sets_equal(&d->sets[rep[c]], &d->sets[p]))
			c++;
		if (c == lb->n_cls) {
			rep[lb->n_cls++] = p;
			if (!bound_hull(lb, &d->sets[p], c))
				goto out;
		}
		lb->cls_of[p] = c;
	}
	if (lb->n_segs) /* none (e.g. allow: exclude alone): segs is NULL */
		qsort(lb->segs, lb->n_segs, sizeof(*lb->segs), bound_segment_cmp);
	lb->count = calloc((n + 1) * lb->n_cls + 1, sizeof(*lb->count));
	if (!lb->count)
		goto out;
	for (size_t left = n; left > 0; left--) {
		size_t p = left - 1;
		memcpy(lb->count + p * lb->n_cls, lb->count + (p + 1) * lb->n_cls,
		       lb->n_cls * sizeof(*lb->count));
		lb->count[p * lb->n_cls + lb->cls_of[p]]++;
	}
	rc = bound_prefix(lb, n);
out:
	free(rep);
	return rc;
}

void bound_free(mo_bound *lb)
{
	free(lb->cls_of);
	free(lb->base_cost);
	free(lb->base_kept);
	free(lb->segs);
	free(lb->count);
	free(lb->pcost);
	free(lb->pkept);
	free(lb->cum_take);
	free(lb->cum_cost);
}

/* The bound as a plain loop: the definition (and the fallback when byte
 * sums are too large for a double to hold them exactly). */
double bound_cost_loop(const mo_bound *lb, size_t p, uint64_t room)
{
	const uint32_t *cnt = lb->count + p * lb->n_cls;
	double cost = 0, kept = 0;
	for (size_t c = 0; c < lb->n_cls; c++) {
		cost += cnt[c] * lb->base_cost[c];
		kept += cnt[c] * (double)lb->base_kept[c];
	}
	double need = kept - (double)room;
	for (size_t i = 0; i < lb->n_segs && need > 0; i++) {
		double take = cnt[lb->segs[i].cls] * lb->segs[i].dk;
		take = take < need ? take : need;
		cost += take * lb->segs[i].slope;
		need -= take;
	}
	return cost;
}

double bound_cost(const mo_bound *lb, size_t p, uint64_t room)
{
	size_t seg = 0;
	return bound_cost_near(lb, p, room, &seg);
}
