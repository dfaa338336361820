/* The entry points: the config applied to a model. resolve
 * runs the concepts of this folder in order, each owning its part of the
 * state (resolve_internal.h lists them): the model's path info, the
 * patterns' matches, the segments and their active patterns, the fill of
 * each segment, the findings; then keeps the plan for the config's next
 * call (plan_memo.c). */
#include "resolve/resolve_internal.h"

/* The model's path info (its memo's, else derived here), with the runs of
 * layer types over its n_layers (> 0) layers. */
static bool resolve_path_info(mo_resolve_paths *paths, struct mo_path_memo **memo,
				 const mo_model *m, uint64_t n_layers, mo_arena *a)
{
	*memo = path_memo_get(m);
	if (*memo)
		*paths = *path_memo_paths(*memo);
	else if (!resolve_paths_derive(paths, m, a))
		return false;
	if (paths->type_runs && paths->n_layers == n_layers)
		return true;
	return resolve_paths_type_runs(paths, m, n_layers, a);
}

/* Fills r (segments and their actions), reporting to sink when report.
 * *scratch tells whether the segments share one scratch set of per-path
 * arrays (validation of a plan too large to keep): then r holds no plan. */
static bool resolve_apply(mo_resolved *r, mo_diags *sink, bool report, bool want_plan,
			     bool *scratch)
{
	const mo_config *c = r->c;
	const mo_model *m = r->m;
	mo_arena *a = r->arena;
	struct mo_path_memo *memo = NULL;
	mo_resolve_paths paths;
	mo_resolve_matches matches;
	mo_resolve_segments segments;
	mo_resolve_active active;
	mo_resolve_findings findings = {.report = report};
	bool ok = r->n_layers > 0 && resolve_path_info(&paths, &memo, m, r->n_layers, a) &&
		  resolve_matches_build(&matches, c, m, &paths, memo, a) &&
		  resolve_segments_cut(&segments, r, c, m, &paths, a);
	*scratch = !want_plan;
	mo_resolve_fill fill = {.config = c, .model = m, .paths = &paths, .matches = &matches,
				.active = &active, .findings = &findings, .resolved = r,
				.arena = a, .scratch = *scratch};
	ok = ok && resolve_active_init(&active, &matches, &segments, a) &&
	     resolve_fill_all(&fill);
	if (ok && report) {
		resolve_check_no_match(&matches, c, m, &paths, sink, a);
		findings_report(&findings, &matches, c, sink);
	}
	ok = ok && !findings.out_of_memory;
	findings_release(&findings);
	return ok;
}

void resolved_free(mo_resolved *r)
{
	if (r && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
		arena_free(r->arena);
}

void mo_resolved_free(mo_resolved *r)
{
	resolved_free(r);
}

void resolved_hold(const mo_resolved *r)
{
	/* the count is the one mutable part of a shared resolution */
	__atomic_add_fetch(&((mo_resolved *)r)->refs, 1, __ATOMIC_ACQ_REL);
}

const mo_seg *resolved_seg(const mo_resolved *r, uint64_t layer)
{
	if (!r || layer >= r->n_layers || !r->n_segs)
		return NULL;
	size_t lo = 0, hi = r->n_segs;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->segs[mid].lo <= layer)
			lo = mid;
		else
			hi = mid;
	}
	return &r->segs[lo];
}

static mo_resolved *resolved_new(const mo_config *c, const mo_model *m)
{
	mo_arena *a = arena_new();
	mo_resolved *r = a ? arena_alloc(a, sizeof(*r)) : NULL;
	if (!r) {
		arena_free(a);
		return NULL;
	}
	r->arena = a;
	r->refs = 1;
	r->c = c;
	r->m = m;
	r->n_layers = (uint64_t)(m->num_layers + m->mtp_num_layers);
	return r;
}

int resolve(mo_resolved **out, const mo_config *c, const mo_model *m, mo_diags *diags,
	       mo_error *err)
{
	if (out)
		*out = NULL;
	mo_resolved *r = resolved_new(c, m);
	if (!r) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_diags *sink = diags;
	if (!sink && mo_diags_new(&sink) != 0)
		goto fail_resolved;
	bool scratch;
	bool ok = resolve_apply(r, sink, diags != NULL, out != NULL, &scratch);
	if (sink != diags)
		mo_diags_free(sink);
	if (!ok && r->n_layers > 0)
		goto fail_resolved;
	if (out)
		*out = r;
	else
		arena_free(r->arena);
	return 0;
fail_resolved:
	arena_free(r->arena);
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory resolving the config");
	return -1;
}
