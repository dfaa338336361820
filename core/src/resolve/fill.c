/* The fill: the per-path actions of each segment, with the rule that
 * caused each one, in the order the sections apply (what wins):
 * full_recompute_layer or select (recompute, children inherit), exclude_op
 * (kept inside a recomputed region), recompute_comm (comm ops outside
 * recomputed regions), then swap (whole layer, or op_swap paths that no
 * recompute touches). Types whose subtrees are runs take fill_runs.c;
 * a segment that repeats an earlier one (twins.c) shares its plan. */
#include "resolve/resolve_internal.h"

#include <string.h>

static bool is_descendant(const mo_layer_type *lt, size_t q, size_t p)
{
	for (int up = lt->paths[q].parent; up >= 0; up = lt->paths[up].parent)
		if ((size_t)up == p)
			return true;
	return false;
}

/* The roots gathered in the scratch array, kept at their exact size. */
static bool segment_keep_roots(mo_resolve_fill *f, mo_seg *g)
{
	if (f->scratch)
		return true;
	arena_shrink(f->arena, g->roots, g->cap_roots * sizeof(*g->roots),
			g->n_roots * sizeof(*g->roots));
	g->cap_roots = g->n_roots;
	return true;
}

static mo_rule full_rule(const mo_config *c)
{
	return (mo_rule){"recompute", "full_recompute_layer", c->full.at ? c->full.at->line : 0};
}

/* For every path, the first ref (in config order) of the list that
 * matches it; NULL where none does. */
static void first_match(const mo_pattern_ref **refs, size_t n, size_t type,
			   const mo_pattern_ref **first, size_t np)
{
	memset(first, 0, np * sizeof(*first));
	for (size_t left = n; left > 0;
	     left--) { /* the earliest ref writes last */
		const mo_pattern_ref *ref = refs[left - 1];
		for (size_t w = 0; w < ref->match[type].n_words; w++)
			for (uint64_t bits = ref->match[type].words[w]; bits;
			     bits &= bits - 1)
				first[w * 64 + (size_t)__builtin_ctzll(bits)] =
				    ref;
	}
}

/* select: selected roots recompute, children inherit; full wins. */
static bool fill_recompute(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	const mo_pattern_ref **first = f->first;
	if (g->full) {
		/* no rules per path: a full segment's are never read (op_swap
		 * skips full layers; an exclusion inherits its own rule) */
		if (lt->n_paths)
			memcpy(g->act, f->full_actions, lt->n_paths * sizeof(*g->act));
		return segment_add_root(g, "", MO_ACT_RECOMPUTE, full_rule(f->config));
	}
	if (!lists->n_select)
		return true;
	if (f->paths->subtrees_are_runs[g->type])
		return runs_recompute(f, g, lt);
	first_match(lists->select, lists->n_select, g->type, first, lt->n_paths);
	for (size_t p = 0; p < lt->n_paths; p++) {
		int parent = lt->paths[p].parent;
		if (parent >= 0 && action_recomputes(g->act[parent])) {
			g->act[p] = g->act[parent];
			g->rule[p] = g->rule[parent];
		} else if (first[p]) {
			g->act[p] = pattern_ref_action(first[p]);
			g->rule[p] = first[p]->rule;
			if (!segment_add_root(g, lt->paths[p].name, g->act[p], first[p]->rule))
				return false;
		}
	}
	return true;
}

/* exclude-no-effect: an exclusion that matches paths of the segment's
 * type, none of them recomputed. */
static void fill_exclude_effect(mo_resolve_fill *f, const mo_seg *g)
{
	const mo_active_lists *lists = &f->active->lists;
	for (size_t i = 0; i < lists->n_exclude; i++) {
		const mo_path_bits *m = &lists->exclude[i]->match[g->type];
		if (!path_bits_any(m))
			continue; /* no-match says it better */
		bool effect = false;
		for (size_t w = 0; w < m->n_words && !effect; w++)
			for (uint64_t bits = m->words[w]; bits && !effect; bits &= bits - 1)
				effect = action_recomputes(
				    g->act[w * 64 + (size_t)__builtin_ctzll(bits)]);
		if (!effect)
			findings_add_segment(f->findings, g, "exclude-no-effect",
						lists->exclude[i], NULL);
	}
}

/* exclude_op: kept from forward inside a recomputed region. */
static bool fill_exclude(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	const mo_pattern_ref **first = f->first;
	bool *excl = f->excluded;
	if (!lists->n_exclude)
		return true;
	fill_exclude_effect(f, g);
	if (f->paths->subtrees_are_runs[g->type])
		return runs_exclude(f, g, lt);
	first_match(lists->exclude, lists->n_exclude, g->type, first, lt->n_paths);
	for (size_t p = 0; p < lt->n_paths; p++) {
		int parent = lt->paths[p].parent;
		if (parent >= 0 && excl[parent]) {
			excl[p] = true;
			g->act[p] = MO_ACT_KEEP;
			g->rule[p] = g->rule[parent];
		} else if (first[p] && action_recomputes(g->act[p])) {
			excl[p] = true;
			g->act[p] = MO_ACT_KEEP;
			g->rule[p] = first[p]->rule;
			if (!segment_add_root(g, lt->paths[p].name, MO_ACT_KEEP, first[p]->rule))
				return false;
		}
	}
	return true;
}

/* recompute_comm: comm ops outside recomputed regions. */
static bool fill_comm(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	const mo_pattern_ref **first = f->first;
	if (g->full || !lists->n_comm)
		return true; /* `redundant` is reported on ranges */
	if (f->paths->subtrees_are_runs[g->type])
		return runs_comm(f, g, lt);
	first_match(lists->comm, lists->n_comm, g->type, first, lt->n_paths);
	for (size_t p = 0; p < lt->n_paths; p++) {
		if (!first[p] || g->act[p] != MO_ACT_KEEP || f->excluded[p])
			continue;
		g->act[p] = MO_ACT_RECOMPUTE_COMM;
		g->rule[p] = first[p]->rule;
		if (!segment_add_root(g, lt->paths[p].name, MO_ACT_RECOMPUTE_COMM, first[p]->rule))
			return false;
	}
	return true;
}

/* An op-level recompute on p, an ancestor or a descendant of p. */
static const mo_rule *recompute_near(const mo_seg *g, const mo_layer_type *lt, size_t p)
{
	if (action_recomputes(g->act[p]) || g->act[p] == MO_ACT_RECOMPUTE_COMM)
		return &g->rule[p];
	for (size_t q = p + 1; q < lt->n_paths; q++)
		if ((action_recomputes(g->act[q]) || g->act[q] == MO_ACT_RECOMPUTE_COMM) &&
		    is_descendant(lt, q, p))
			return &g->rule[q];
	return NULL;
}

static bool fill_layer_swap(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_config *c = f->config;
	if (g->full)
		return true; /* recompute-swap-layer, reported on ranges */
	for (size_t i = 0; i < c->n_layer_swap; i++) {
		if (!layers_contains(&c->layer_swap[i].layers, g->lo))
			continue;
		mo_rule rule = {"swap", f->layer_swap_keys[i], c->layer_swap[i].at->line};
		for (size_t p = 0; p < lt->n_paths; p++) /* no rules: the fill ends here */
			g->act[p] = MO_ACT_SWAP;
		return segment_add_root(g, "", MO_ACT_SWAP, rule);
	}
	return true;
}

/* op_swap of one ref, path by path. */
static bool fill_op_swap(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt,
			    const mo_pattern_ref *ref)
{
	const mo_path_bits *m = &ref->match[g->type];
	for (size_t p = 0; p < lt->n_paths; p++) {
		if (!path_bits_get(m, p) || g->act[p] == MO_ACT_SWAP)
			continue;
		const mo_rule *near = recompute_near(g, lt, p);
		if (near) {
			findings_add_segment(f->findings, g, "op-recompute-swap", ref,
						resolve_matches_origin(f->matches, near));
			continue;
		}
		if (!segment_add_root(g, lt->paths[p].name, MO_ACT_SWAP, ref->rule))
			return false;
		for (size_t q = p; q < lt->n_paths; q++)
			if (q == p || is_descendant(lt, q, p)) {
				g->act[q] = MO_ACT_SWAP;
				g->rule[q] = ref->rule;
			}
	}
	return true;
}

/* swap: whole layer, or op_swap paths (layers in layer_swap skip op_swap). */
static bool fill_swap(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt)
{
	const mo_active_lists *lists = &f->active->lists;
	if (g->swapped)
		return fill_layer_swap(f, g, lt);
	for (size_t i = 0; i < lists->n_op_swap && !g->full; i++) {
		const mo_pattern_ref *ref = lists->op_swap[i];
		bool ok = f->paths->subtrees_are_runs[g->type] ? runs_op_swap(f, g, lt, ref)
							       : fill_op_swap(f, g, lt, ref);
		if (!ok)
			return false;
	}
	return true;
}

/* Whether full_recompute_layer holds layer id: segments come in ascending
 * order, so an ascending list is walked with a cursor; any other keeps
 * the search that defines the answer. */
static bool fill_full(mo_resolve_fill *f, uint64_t id)
{
	const mo_layers *l = &f->config->full;
	if (!f->full_ascending)
		return layers_contains(l, id);
	while (f->full_cursor < l->n && l->r[f->full_cursor].hi < id)
		f->full_cursor++;
	return f->full_cursor < l->n && l->r[f->full_cursor].lo <= id;
}

static size_t segment_swap_entry(const mo_config *c, const mo_seg *g)
{
	for (size_t i = 0; c->swap_enable && i < c->n_layer_swap; i++)
		if (layers_contains(&c->layer_swap[i].layers, g->lo))
			return i + 1;
	return 0;
}

/* The arrays segment g is filled into: the scratch set when validating,
 * else its own actions, and the roots straight to the arena, its unused
 * end given back when the segment is done (segment_keep_roots). The
 * rules per path only serve the fill (inheritance, conflicts): one
 * scratch array for every segment. */
static bool segment_arrays(mo_resolve_fill *f, mo_seg *g, size_t np)
{
	g->rule = f->scratch_rules;
	g->roots = f->scratch_roots;
	g->cap_roots = np + 2;
	if (f->scratch) {
		g->act = f->scratch_actions;
		memset(g->act, 0, np * sizeof(*g->act));
		return true;
	}
	g->act = np ? arena_alloc(f->arena, np * sizeof(*g->act)) : NULL;
	g->roots = arena_alloc_raw(f->arena, (np + 2) * sizeof(*g->roots));
	return (!np || g->act) && g->roots;
}

static bool fill_segment(mo_resolve_fill *f, mo_seg *g)
{
	const mo_config *c = f->config;
	const mo_layer_type *lt = &f->model->types[g->type];
	size_t np = lt->n_paths;
	g->full = c->mode != MO_MODE_NONE && fill_full(f, g->lo);
	size_t swap_entry = segment_swap_entry(c, g);
	g->swapped = swap_entry > 0;
	resolve_active_advance(f->active, (size_t)(g - f->resolved->segs), g);
	const mo_seg *twin = segment_twin(&f->twins, f->resolved, f->active, g, swap_entry,
					     f->arena);
	if (twin) {
		g->act = twin->act;
		g->rule = twin->rule;
		g->roots = twin->roots;
		g->n_roots = twin->n_roots;
		findings_replay(f->findings, twin, g);
		return true;
	}
	findings_segment_start(f->findings, g);
	/* in runs, a path's rule is read only by op_swap (a recomputed path
	 * it meets): written only when op_swap acts on the segment */
	f->need_rules = f->active->lists.n_op_swap && !g->full && !g->swapped;
	if (!segment_arrays(f, g, np))
		return false;
	f->n_excluded = 0;
	if (!f->paths->subtrees_are_runs[g->type]) /* runs keep theirs in excluded_lo / hi */
		memset(f->excluded, 0, np * sizeof(*f->excluded));
	return fill_recompute(f, g, lt) && fill_exclude(f, g, lt) &&
	       fill_comm(f, g, lt) && fill_swap(f, g, lt) && segment_keep_roots(f, g);
}

/* "layer_swap[i]" for every entry, made once. */
static bool fill_layer_swap_keys(mo_resolve_fill *f)
{
	size_t nls = f->config->n_layer_swap;
	f->layer_swap_keys = arena_alloc(f->arena, (nls ? nls : 1) * sizeof(char *));
	if (!f->layer_swap_keys)
		return false;
	for (size_t i = 0; i < nls; i++)
		if (!(f->layer_swap_keys[i] = arena_indexed(f->arena, "layer_swap", i)))
			return false;
	return true;
}

/* Scratch shared by all segments, sized for the largest layer type. */
static bool fill_scratch(mo_resolve_fill *f, size_t np)
{
	mo_arena *a = f->arena;
	f->first = arena_alloc(a, np * sizeof(*f->first));
	f->excluded = arena_alloc(a, np * sizeof(*f->excluded));
	f->path_union = arena_alloc(a, f->paths->max_words * sizeof(*f->path_union));
	f->excluded_lo = arena_alloc_raw(a, 2 * np * sizeof(uint32_t));
	f->excluded_hi = f->excluded_lo ? f->excluded_lo + np : NULL;
	f->scratch_rules = arena_alloc(a, np * sizeof(*f->scratch_rules));
	f->scratch_roots = arena_alloc(a, (np + 2) * sizeof(*f->scratch_roots));
	if (!f->first || !f->excluded || !f->path_union || !f->excluded_lo || !f->scratch_rules ||
	    !f->scratch_roots)
		return false;
	if (f->config->mode != MO_MODE_NONE && f->config->full.n) {
		f->full_actions = arena_alloc_raw(a, np * sizeof(*f->full_actions));
		if (!f->full_actions)
			return false;
		for (size_t p = 0; p < np; p++)
			f->full_actions[p] = MO_ACT_RECOMPUTE;
	}
	if (f->scratch) {
		f->scratch_actions = arena_alloc(a, np * sizeof(*f->scratch_actions));
		if (!f->scratch_actions)
			return false;
	}
	return true;
}

bool resolve_fill_all(mo_resolve_fill *f)
{
	size_t np = 1;
	for (size_t t = 0; t < f->model->n_types; t++)
		if (f->model->types[t].n_paths > np)
			np = f->model->types[t].n_paths;
	if (!fill_scratch(f, np) || !fill_layer_swap_keys(f) ||
	    !segment_twins_init(&f->twins, f->resolved, f->active, f->arena) ||
	    !findings_init(f->findings, f->resolved, f->arena))
		return false;
	f->full_ascending = layers_ascending(&f->config->full);
	for (size_t i = 0; i < f->resolved->n_segs; i++)
		if (!fill_segment(f, &f->resolved->segs[i]))
			return false;
	return true;
}
