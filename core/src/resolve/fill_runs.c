/* The fill on runs: for layer types whose every subtree is the run
 * [p, subtree_end[p]) in path order (all real models), the same decisions
 * as fill.c's path-by-path loops, visiting only the matched paths: a
 * matched path outside every decided run roots a decision for its whole
 * run (its descendants inherit), in path order. */
#include "resolve/resolve_internal.h"

#include <string.h>

/* f->path_union = the union over refs of their bits on type t, and for
 * each of its paths first[q] = the earliest ref (config order) matching q:
 * a path's first ref is the one adding it. Returns the word count. */
static size_t runs_union(mo_resolve_fill *f, const mo_pattern_ref *const *refs, size_t n,
		       size_t t)
{
	size_t nw = (f->model->types[t].n_paths + 63) / 64;
	uint64_t *u = f->path_union;
	const mo_pattern_ref **first = f->first;
	u[0] = 0; /* nw >= 1 here (a path matched); one word mostly: no memset call */
	if (nw > 1)
		memset(u + 1, 0, (nw - 1) * sizeof(*u));
	for (size_t i = 0; i < n; i++)
		for (size_t w = 0; w < nw; w++) {
			uint64_t bits = refs[i]->match[t].words[w], add = bits & ~u[w];
			u[w] |= bits;
			for (; add; add &= add - 1)
				first[w * 64 + (size_t)__builtin_ctzll(add)] = refs[i];
		}
	return nw;
}

/* The first set bit of u at or after `from`, or SIZE_MAX. */
static inline __attribute__((always_inline)) size_t next_bit(const uint64_t *u, size_t nw,
								 size_t from)
{
	size_t w = from / 64;
	if (w >= nw)
		return SIZE_MAX;
	uint64_t bits =
	    u[w] >> (from % 64)
			<< (from % 64); /* the bits below `from` cleared */
	while (!bits) {
		if (++w == nw)
			return SIZE_MAX;
		bits = u[w];
	}
	return w * 64 + (size_t)__builtin_ctzll(bits);
}

/* The actions of a run, and their rules when something reads them later
 * (`rules`: op_swap's conflicts with recomputed paths). */
static void run_set(mo_seg *g, size_t lo, size_t hi, mo_action_kind k, mo_rule rule,
		       bool rules)
{
	for (size_t p = lo; p < hi; p++)
		g->act[p] = k;
	for (size_t p = lo; rules && p < hi; p++)
		g->rule[p] = rule;
}

bool runs_recompute(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	const uint32_t *end = f->paths->subtree_end[g->type];
	const uint64_t *u = f->path_union;
	size_t nw = runs_union(f, lists->select, lists->n_select, g->type);
	for (size_t q = next_bit(u, nw, 0); q < lt->n_paths; q = next_bit(u, nw, end[q])) {
		const mo_pattern_ref *ref = f->first[q];
		mo_action_kind k = pattern_ref_action(ref);
		run_set(g, q, end[q], k, ref->rule, f->need_rules);
		if (!segment_add_root(g, lt->paths[q].name, k, ref->rule))
			return false;
	}
	return true;
}

bool runs_exclude(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	const uint32_t *end = f->paths->subtree_end[g->type];
	const uint64_t *u = f->path_union;
	size_t nw = runs_union(f, lists->exclude, lists->n_exclude, g->type);
	for (size_t q = next_bit(u, nw, 0); q < lt->n_paths;) {
		if (!action_recomputes(g->act[q])) {
			q = next_bit(u, nw, q + 1);
			continue;
		}
		const mo_pattern_ref *ref = f->first[q];
		run_set(g, q, end[q], MO_ACT_KEEP, ref->rule, false);
		f->excluded_lo[f->n_excluded] = (uint32_t)q; /* ascending, disjoint */
		f->excluded_hi[f->n_excluded++] = end[q];
		if (!segment_add_root(g, lt->paths[q].name, MO_ACT_KEEP, ref->rule))
			return false;
		q = next_bit(u, nw, end[q]);
	}
	return true;
}

bool runs_comm(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	const uint64_t *u = f->path_union;
	size_t nw = runs_union(f, lists->comm, lists->n_comm, g->type), k = 0;
	for (size_t q = next_bit(u, nw, 0); q < lt->n_paths; q = next_bit(u, nw, q + 1)) {
		while (k < f->n_excluded && f->excluded_hi[k] <= q) /* the excluded runs, in order */
			k++;
		if (g->act[q] != MO_ACT_KEEP || (k < f->n_excluded && f->excluded_lo[k] <= q))
			continue;
		const mo_pattern_ref *ref = f->first[q];
		g->act[q] = MO_ACT_RECOMPUTE_COMM;
		if (f->need_rules)
			g->rule[q] = ref->rule;
		if (!segment_add_root(g, lt->paths[q].name, MO_ACT_RECOMPUTE_COMM, ref->rule))
			return false;
	}
	return true;
}

static bool fill_recomputed(mo_action_kind k)
{
	return action_recomputes(k) || k == MO_ACT_RECOMPUTE_COMM;
}

/* An op-level recompute on p or inside its run (the first in path order). */
static const mo_rule *runs_recompute_near(const mo_seg *g, const uint32_t *end, size_t p)
{
	for (size_t q = p; q < end[p]; q++)
		if (fill_recomputed(g->act[q]))
			return &g->rule[q];
	return NULL;
}

bool runs_op_swap(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt,
		     const mo_pattern_ref *ref)
{
	const mo_path_bits *m = &ref->match[g->type];
	const uint32_t *end = f->paths->subtree_end[g->type];
	for (size_t q = next_bit(m->words, m->n_words, 0); q < lt->n_paths;
	     q = next_bit(m->words, m->n_words, q + 1)) {
		if (g->act[q] == MO_ACT_SWAP)
			continue;
		const mo_rule *near = runs_recompute_near(g, end, q);
		if (near) {
			findings_add_segment(f->findings, g, "op-recompute-swap", ref,
						resolve_matches_origin(f->matches, near));
			continue;
		}
		if (!segment_add_root(g, lt->paths[q].name, MO_ACT_SWAP, ref->rule))
			return false;
		run_set(g, q, end[q], MO_ACT_SWAP, ref->rule, false);
	}
	return true;
}
