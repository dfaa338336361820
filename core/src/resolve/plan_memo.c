/* The resolved plan the config keeps: validate then expand or estimate
 * resolve once. The plan points into the model (path names), so it is
 * reused only for the same model object whose layout is unchanged: same
 * layout hash, same type and path arrays (pointers, kinds, parents) and
 * same type per layer, compared with a snapshot taken when it was built.
 * The memo is the config's memos->plan attachment, under memos->lock
 * (config.h); plans are reference counted, shared by the memo and its
 * callers. */
#include "resolve/resolve_internal.h"

#include <string.h>

/* A plan kept by validation for reuse holds at most this many per-path
 * slots (segments x paths of the largest type); larger ones are not kept. */
#define MO_PLAN_MEMO_MAX_SLOTS ((size_t)1 << 20)

/* What a resolved plan was built from (the model's layout). */
struct mo_plan_snapshot {
	uint64_t layout_hash;
	const mo_layer_type *types_at;
	mo_layer_type *types;
	size_t n_types;
	mo_path **paths;
	size_t *type_of;
};

bool plan_memo_snapshot(mo_resolved *r, const mo_model *m)
{
	size_t N = (size_t)r->n_layers, nt = m->n_types ? m->n_types : 1;
	struct mo_plan_snapshot *sn = arena_alloc(r->arena, sizeof(*sn));
	if (!sn)
		return false;
	sn->layout_hash = m->layout_hash;
	sn->types_at = m->types;
	sn->n_types = m->n_types;
	sn->types = arena_alloc_raw(r->arena, nt * sizeof(*sn->types));
	sn->paths = arena_alloc(r->arena, nt * sizeof(*sn->paths));
	sn->type_of = arena_alloc_raw(r->arena, (N ? N : 1) * sizeof(*sn->type_of));
	if (!sn->types || !sn->paths || !sn->type_of)
		return false;
	memcpy(sn->types, m->types, m->n_types * sizeof(*sn->types));
	memcpy(sn->type_of, m->type_of, N * sizeof(*sn->type_of));
	for (size_t t = 0; t < m->n_types; t++) {
		size_t np = m->types[t].n_paths;
		sn->paths[t] = arena_alloc_raw(r->arena, (np ? np : 1) * sizeof(mo_path));
		if (!sn->paths[t])
			return false;
		memcpy(sn->paths[t], m->types[t].paths, np * sizeof(mo_path));
	}
	r->snapshot = sn;
	return true;
}

static bool snapshot_same(const mo_resolved *r, const mo_model *m)
{
	const struct mo_plan_snapshot *sn = r->snapshot;
	if (r->m != m || !sn || sn->layout_hash != m->layout_hash || sn->types_at != m->types ||
	    sn->n_types != m->n_types ||
	    r->n_layers != (uint64_t)(m->num_layers + m->mtp_num_layers))
		return false;
	if (memcmp(sn->types, m->types, m->n_types * sizeof(*sn->types)) != 0 ||
	    memcmp(sn->type_of, m->type_of, (size_t)r->n_layers * sizeof(*sn->type_of)) != 0)
		return false;
	for (size_t t = 0; t < m->n_types; t++)
		if (memcmp(sn->paths[t], m->types[t].paths, m->types[t].n_paths * sizeof(mo_path)))
			return false;
	return true;
}

static void resolved_destroy(void *r)
{
	resolved_free(r);
}

mo_resolved *plan_memo_get(const mo_config *c, const mo_model *m)
{
	mo_config_memos *memos = c->memos; /* the config's one mutable part */
	mo_resolved *r = NULL;
	pthread_mutex_lock(&memos->lock);
	if (memos->plan.data && snapshot_same(memos->plan.data, m)) {
		r = memos->plan.data;
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
	}
	pthread_mutex_unlock(&memos->lock);
	return r;
}

void plan_memo_put(const mo_config *c, mo_resolved *r)
{
	mo_config_memos *memos = c->memos;
	mo_attachment old;
	pthread_mutex_lock(&memos->lock);
	old = memos->plan;
	memos->plan = (mo_attachment){.data = r, .destroy = resolved_destroy};
	pthread_mutex_unlock(&memos->lock);
	attachment_clear(&old);
}

bool plan_memo_keeps(const mo_resolved *r, const mo_model *m)
{
	size_t np = 1;
	for (size_t t = 0; t < m->n_types; t++)
		np = m->types[t].n_paths > np ? m->types[t].n_paths : np;
	return r->n_segs <= MO_PLAN_MEMO_MAX_SLOTS / np;
}
