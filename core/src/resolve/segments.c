/* Segments: layers are cut where no layer list and no layer type changes,
 * so every layer of a segment gets the same actions and the work is per
 * segment, never per layer (1,000 layers, 20,000 patterns). And the
 * active set: the patterns that apply to each segment, walked segment by
 * segment in O(events) rather than O(patterns) a segment. */
#include "resolve/resolve_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- cuts ---------------------------------------------------------------- */

/* Marks the first layer of every range and the layer after it. */
static void cuts_mark(uint8_t *mark, const mo_layers *l, uint64_t n_layers)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->r[i].lo < n_layers)
			mark[l->r[i].lo] = 1;
		if (l->r[i].hi < n_layers - 1)
			mark[l->r[i].hi + 1] = 1;
	}
}

static void cuts_mark_config(uint8_t *mark, const mo_config *c, uint64_t n_layers)
{
	cuts_mark(mark, &c->full, n_layers);
	const mo_pattern_list *lists[] = {&c->select, &c->exclude, &c->comm};
	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			cuts_mark(mark, &lists[l]->p[i].layers, n_layers);
	for (size_t i = 0; i < c->n_layer_swap; i++)
		cuts_mark(mark, &c->layer_swap[i].layers, n_layers);
	for (size_t i = 0; i < c->n_op_swap; i++)
		cuts_mark(mark, &c->op_swap[i].pat.layers, n_layers);
}

/* Marks are 0 or 1: eight at a time, their sum in the top byte (the
 * multiply's carries past bit 63 are dropped by design: MO_WRAPS). */
static MO_WRAPS size_t cuts_count(const uint8_t *mark, uint64_t n_layers)
{
	size_t u = 0;
	uint64_t id8 = 0;
	for (; id8 + 8 <= n_layers; id8 += 8) {
		uint64_t w;
		memcpy(&w, mark + id8, 8);
		u += (size_t)((w * 0x0101010101010101ull) >> 56);
	}
	for (; id8 < n_layers; id8++)
		u += mark[id8];
	return u;
}

/* Segments start at layer 0, at every layer type change and at every
 * range boundary of every layer list. A mark per layer instead of a sort
 * of the cut points: O(layers + ranges). */
bool resolve_segments_cut(mo_resolve_segments *out, mo_resolved *r, const mo_config *c,
			     const mo_model *m, const mo_resolve_paths *paths, mo_arena *a)
{
	uint64_t N = r->n_layers;
	out->resolved = r;
	uint8_t *mark = calloc((size_t)N, 1);
	if (!mark)
		return false;
	for (size_t k = 0; k < paths->n_type_runs; k++) /* layer 0 and layer type changes */
		mark[paths->type_runs[k].lo] = 1;
	cuts_mark_config(mark, c, N);
	size_t u = cuts_count(mark, N);
	r->segs = arena_alloc_raw(a, u * sizeof(mo_seg));
	out->segment_at = arena_alloc_raw(a, (size_t)N * sizeof(*out->segment_at));
	if (!r->segs || !out->segment_at) {
		free(mark);
		return false;
	}
	size_t k = 0;
	for (uint64_t id = 0; id < N; id++) {
		if (!mark[id]) {
			uint64_t w;
			while (id + 8 < N && (memcpy(&w, mark + id + 1, 8), w == 0))
				id += 8;
			continue;
		}
		if (k)
			r->segs[k - 1].hi = id - 1;
		out->segment_at[id] = (uint32_t)k;
		r->segs[k++] = (mo_seg){.lo = id, .hi = N - 1, .type = m->type_of[id]};
	}
	r->n_segs = u;
	free(mark);
	return true;
}

/* ---- the active set -------------------------------------------------------- */

/* A ref applies to a segment when one of its ranges holds the segment's
 * first layer (segments are cut at every range boundary). */
static bool ref_eligible(const mo_pattern_ref *ref)
{
	return ref->active && ref->pattern->re;
}

/* Ascending, disjoint ranges: the ref's state then changes only at its own
 * range boundaries, so it is tracked by events; any other list keeps the
 * cursor walk (below) that defines the answer. */
bool layers_ascending(const mo_layers *l)
{
	for (size_t k = 0; k < l->n; k++)
		if (l->r[k].lo > l->r[k].hi || (k + 1 < l->n && l->r[k].hi >= l->r[k + 1].lo))
			return false;
	return true;
}

/* Counts (fill false) or stores (fill true) the add/remove events of the
 * event-tracked refs, bucketed by the segment where they happen. */
static void events_pass(mo_resolve_active *act, const mo_resolve_segments *segments,
			   bool fill, uint32_t *add_at, uint32_t *remove_at)
{
	const mo_resolve_matches *matches = act->matches;
	uint64_t N = segments->resolved->n_layers;
	for (size_t i = 0; i < matches->n_refs; i++) {
		const mo_pattern_ref *ref = &matches->refs[i];
		if (!ref_eligible(ref) || act->by_cursor[i])
			continue;
		const mo_layers *l = &ref->pattern->layers;
		for (size_t k = 0; k < l->n; k++) {
			if (l->r[k].lo < N) {
				uint32_t b = segments->segment_at[l->r[k].lo];
				if (fill)
					act->added[add_at[b]++] = (uint32_t)i;
				else
					act->add_start[b + 1]++;
			}
			if (l->r[k].lo < N && l->r[k].hi < N - 1) {
				uint32_t b = segments->segment_at[l->r[k].hi + 1];
				if (fill)
					act->removed[remove_at[b]++] = (uint32_t)i;
				else
					act->remove_start[b + 1]++;
			}
		}
	}
}

/* The events, bucketed per segment: counted, summed, stored. */
static bool events_build(mo_resolve_active *act, const mo_resolve_segments *segments,
			    mo_arena *a)
{
	size_t ns = segments->resolved->n_segs;
	uint32_t *add_at = malloc((ns + 1) * sizeof(uint32_t));
	uint32_t *remove_at = malloc((ns + 1) * sizeof(uint32_t));
	bool ok = add_at && remove_at;
	if (ok) {
		events_pass(act, segments, false, NULL, NULL);
		for (size_t b = 0; b < ns; b++) {
			act->add_start[b + 1] += act->add_start[b];
			act->remove_start[b + 1] += act->remove_start[b];
		}
		act->added = arena_alloc(a, (act->add_start[ns] + 1) * sizeof(uint32_t));
		act->removed = arena_alloc(a, (act->remove_start[ns] + 1) * sizeof(uint32_t));
		ok = act->added && act->removed;
	}
	if (ok) {
		memcpy(add_at, act->add_start, ns * sizeof(uint32_t));
		memcpy(remove_at, act->remove_start, ns * sizeof(uint32_t));
		events_pass(act, segments, true, add_at, remove_at);
	}
	free(add_at);
	free(remove_at);
	return ok;
}

static bool active_lists_alloc(mo_active_lists *lists, size_t nr, mo_arena *a)
{
	*lists = (mo_active_lists){0};
	lists->select = arena_alloc(a, nr * sizeof(*lists->select));
	lists->exclude = arena_alloc(a, nr * sizeof(*lists->exclude));
	lists->comm = arena_alloc(a, nr * sizeof(*lists->comm));
	lists->op_swap = arena_alloc(a, nr * sizeof(*lists->op_swap));
	return lists->select && lists->exclude && lists->comm && lists->op_swap;
}

/* The incremental active set: per segment, only the refs whose ranges
 * start or end there change (O(events) instead of O(refs) a segment). */
bool resolve_active_init(mo_resolve_active *out, const mo_resolve_matches *matches,
			    const mo_resolve_segments *segments, mo_arena *a)
{
	size_t ns = segments->resolved->n_segs, nr = matches->n_refs ? matches->n_refs : 1;
	*out = (mo_resolve_active){.matches = matches};
	if (!active_lists_alloc(&out->lists, nr, a))
		return false;
	out->cursor = arena_alloc(a, nr * sizeof(*out->cursor));
	out->on_words = (nr + 63) / 64;
	out->on = arena_alloc(a, out->on_words * sizeof(*out->on));
	out->by_cursor = arena_alloc(a, nr * sizeof(*out->by_cursor));
	out->cursor_refs = arena_alloc(a, nr * sizeof(*out->cursor_refs));
	out->add_start = arena_alloc(a, (ns + 1) * sizeof(uint32_t));
	out->remove_start = arena_alloc(a, (ns + 1) * sizeof(uint32_t));
	if (!out->cursor || !out->on || !out->by_cursor || !out->cursor_refs || !out->add_start ||
	    !out->remove_start)
		return false;
	for (size_t i = 0; i < matches->n_refs; i++)
		if (ref_eligible(&matches->refs[i]) &&
		    !layers_ascending(&matches->refs[i].pattern->layers)) {
			out->by_cursor[i] = true;
			out->cursor_refs[out->n_cursor_refs++] = (uint32_t)i;
		}
	return events_build(out, segments, a);
}

/* Adds ref to (on) or removes it from a list kept in config order (refs
 * is one array: pointer order is config order). */
static void list_set(const mo_pattern_ref **list, size_t *n, const mo_pattern_ref *ref,
			bool on)
{
	size_t k = *n;
	if (on) {
		for (; k > 0 && list[k - 1] > ref; k--)
			list[k] = list[k - 1];
		list[k] = ref;
		(*n)++;
		return;
	}
	for (k = 0; k < *n && list[k] != ref; k++)
		;
	if (k == *n)
		return; /* not listed (not reached: the list follows `on`) */
	for (; k + 1 < *n; k++)
		list[k] = list[k + 1];
	(*n)--;
}

/* Ref i's state; the active lists follow each change (a segment changes
 * few refs: cheaper than listing the active set per segment). */
static void active_set(mo_resolve_active *act, size_t i, bool on)
{
	uint64_t bit = (uint64_t)1 << (i % 64), old = act->on[i / 64];
	uint64_t now = on ? old | bit : old & ~bit;
	if (now == old)
		return;
	act->n_on = on ? act->n_on + 1 : act->n_on - 1;
	act->on[i / 64] = now;
	const mo_resolve_matches *matches = act->matches;
	mo_active_lists *lists = &act->lists;
	const mo_pattern_ref *ref = &matches->refs[i];
	if (i < matches->group_start[MO_GROUP_EXCLUDE])
		list_set(lists->select, &lists->n_select, ref, on);
	else if (i < matches->group_start[MO_GROUP_COMM])
		list_set(lists->exclude, &lists->n_exclude, ref, on);
	else if (i < matches->group_start[MO_GROUP_OP_SWAP])
		list_set(lists->comm, &lists->n_comm, ref, on);
	else
		list_set(lists->op_swap, &lists->n_op_swap, ref, on);
}

/* The refs that apply to segment si (the set `on`): its events applied
 * (removals first: a range may end where the next begins), the cursor walk
 * for the other refs (segments come in ascending order, so every cursor
 * only moves forward). */
void resolve_active_advance(mo_resolve_active *act, size_t si, const mo_seg *g)
{
	for (uint32_t k = act->remove_start[si]; k < act->remove_start[si + 1]; k++)
		active_set(act, act->removed[k], false);
	for (uint32_t k = act->add_start[si]; k < act->add_start[si + 1]; k++)
		active_set(act, act->added[k], true);
	for (size_t j = 0; j < act->n_cursor_refs; j++) {
		size_t i = act->cursor_refs[j];
		const mo_layers *l = &act->matches->refs[i].pattern->layers;
		size_t *cur = &act->cursor[i];
		while (*cur < l->n && l->r[*cur].hi < g->lo)
			(*cur)++;
		active_set(act, i, *cur < l->n && l->r[*cur].lo <= g->lo);
	}
}
