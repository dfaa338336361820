/* The expanded plan (docs/config-language.md, what wins): per layer, the root decisions and the
 * effective action of every path, shared by segments of identical layers. */
#include "resolve/resolve.h"

#include <stdlib.h>

struct mo_plan {
	mo_resolved *r;
	int64_t prefetch;
};

const char *mo_action_name(mo_action_kind a)
{
	switch (a) {
	case MO_ACT_RECOMPUTE:
		return "recompute";
	case MO_ACT_RECOMPUTE_COMM:
		return "recompute_comm";
	case MO_ACT_SWAP:
		return "swap";
	case MO_ACT_DISCARD_OUTPUT:
		return "discard_output";
	default:
		return "keep";
	}
}

int mo_expand(mo_plan **out, const mo_config *c, const mo_model *m, mo_error *err)
{
	*out = NULL;
	if (!c || !c->doc || !m) {
		error_set(err, MO_ERR_USAGE, 0, 0, "expand needs a parsed config and a model");
		return -1;
	}
	mo_plan *p = calloc(1, sizeof(*p));
	if (!p) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	if (resolve(&p->r, c, m, NULL, err) != 0) {
		free(p);
		return -1;
	}
	p->prefetch = c->prefetch;
	*out = p;
	return 0;
}

int mo_expand_resolved(mo_plan **out, const mo_resolved *r, mo_error *err)
{
	*out = NULL;
	if (!r) {
		error_set(err, MO_ERR_USAGE, 0, 0, "expand needs a resolution (a valid config and a model)");
		return -1;
	}
	mo_plan *p = calloc(1, sizeof(*p));
	if (!p) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	resolved_hold(r);
	p->r = (mo_resolved *)r; /* shared read-only: the plan holds a reference */
	p->prefetch = r->c->prefetch;
	*out = p;
	return 0;
}

void mo_plan_free(mo_plan *p)
{
	if (!p)
		return;
	resolved_free(p->r);
	free(p);
}

size_t mo_plan_layer_count(const mo_plan *p)
{
	return p ? (size_t)p->r->n_layers : 0;
}

size_t mo_plan_action_count(const mo_plan *p, int64_t layer)
{
	const mo_seg *g = p && layer >= 0 ? resolved_seg(p->r, (uint64_t)layer) : NULL;
	return g ? g->n_roots : 0;
}

const mo_action *mo_plan_action(const mo_plan *p, int64_t layer, size_t i)
{
	const mo_seg *g = p && layer >= 0 ? resolved_seg(p->r, (uint64_t)layer) : NULL;
	return g && i < g->n_roots ? &g->roots[i] : NULL;
}

mo_action_kind mo_plan_path_action(const mo_plan *p, int64_t layer, size_t path_index)
{
	const mo_seg *g = p && layer >= 0 ? resolved_seg(p->r, (uint64_t)layer) : NULL;
	if (!g || path_index >= p->r->m->types[g->type].n_paths)
		return MO_ACT_KEEP;
	return g->act[path_index];
}

int64_t mo_plan_prefetch(const mo_plan *p)
{
	return p ? p->prefetch : 1;
}
