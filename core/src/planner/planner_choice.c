/* The planner's per-layer choices and what each costs, from the estimator.
 *
 * A choice is what the config will say for one layer: keep; select of
 * '.*mlp', '.*self_attention', '.*core_attention' (alone, or mlp with one of
 * the other two); full; full with the comm ops excluded; comm recompute of
 * the comm ops (alone or beside a select); layer swap; op swap of '.*mlp'
 * (alone, beside an attention select, or beside comm recompute when the MLP
 * has no comm op). For each, the per-path actions are built exactly as
 * resolve.c would resolve those patterns on the layer (select children
 * inherit, exclude only inside recomputed regions, comm only on kept comm
 * ops, op swap on the module and its descendants, an op-recompute-swap
 * conflict drops the choice), then priced by est_keep_eval on the type's
 * tensor graph: the same call, on the same graph, as mo_estimate_run. */
#include "planner/planner.h"

#include <stdlib.h>
#include <string.h>

const char *const mo_planner_comm_keys[MO_PLANNER_COMM_KINDS] = {
    ".*allgather", ".*reducescatter", ".*allreduce", ".*alltoall", ".*alltoallsingle"};

/* What a '.*X' key full-matches: the paths ending in X. */
static bool planner_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && memcmp(name + n - k, suffix, k) == 0;
}

static bool planner_select_match(const mo_path *p, unsigned what)
{
	return ((what & MO_CHOICE_SELECT_MLP) && planner_ends(p->name, "mlp")) ||
	       ((what & MO_CHOICE_SELECT_ATTENTION) &&
		planner_ends(p->name, "self_attention")) ||
	       ((what & MO_CHOICE_SELECT_CORE_ATTENTION) &&
		planner_ends(p->name, "core_attention"));
}

static bool planner_comm_match(const mo_path *p, unsigned kinds)
{
	for (int i = 0; i < MO_PLANNER_COMM_KINDS; i++)
		if ((kinds >> i & 1u) && planner_ends(p->name, mo_planner_comm_keys[i] + 2))
			return true;
	return false;
}

static bool planner_is_descendant(const mo_layer_type *lt, size_t q, size_t p)
{
	for (int a = lt->paths[q].parent; a >= 0; a = lt->paths[a].parent)
		if ((size_t)a == p)
			return true;
	return false;
}

static void planner_recompute(const mo_layer_type *lt, unsigned what, mo_action_kind *act)
{
	for (size_t p = 0; p < lt->n_paths; p++) {
		int parent = lt->paths[p].parent;
		if ((what & MO_CHOICE_FULL) || (parent >= 0 && act[parent] == MO_ACT_RECOMPUTE) ||
		    planner_select_match(&lt->paths[p], what))
			act[p] = MO_ACT_RECOMPUTE;
	}
}

static void planner_exclude(const mo_layer_type *lt, unsigned kinds, mo_action_kind *act,
			       bool *excl)
{
	for (size_t p = 0; p < lt->n_paths; p++) {
		int parent = lt->paths[p].parent;
		if ((parent >= 0 && excl[parent]) ||
		    (planner_comm_match(&lt->paths[p], kinds) && act[p] == MO_ACT_RECOMPUTE)) {
			excl[p] = true;
			act[p] = MO_ACT_KEEP;
		}
	}
}

/* op swap of the '.*mlp' paths; false on an op-recompute-swap conflict. */
static bool planner_op_swap(const mo_layer_type *lt, mo_action_kind *act)
{
	for (size_t p = 0; p < lt->n_paths; p++) {
		if (!planner_ends(lt->paths[p].name, "mlp") || act[p] == MO_ACT_SWAP)
			continue;
		for (size_t q = p; q < lt->n_paths; q++)
			if ((q == p || planner_is_descendant(lt, q, p)) &&
			    (act[q] == MO_ACT_RECOMPUTE || act[q] == MO_ACT_RECOMPUTE_COMM))
				return false;
		for (size_t q = p; q < lt->n_paths; q++)
			if (q == p || planner_is_descendant(lt, q, p))
				act[q] = MO_ACT_SWAP;
	}
	return true;
}

/* Per-path actions of a choice, as resolve.c gives them. */
static bool planner_actions(const mo_layer_type *lt, unsigned what, unsigned kinds,
			       mo_action_kind *act, bool *excl)
{
	memset(act, 0, lt->n_paths * sizeof(*act));
	memset(excl, 0, lt->n_paths * sizeof(*excl));
	if (what & MO_CHOICE_LAYER_SWAP) {
		for (size_t p = 0; p < lt->n_paths; p++)
			act[p] = MO_ACT_SWAP;
		return true;
	}
	planner_recompute(lt, what, act);
	if (what & MO_CHOICE_EXCLUDE_COMM)
		planner_exclude(lt, kinds, act, excl);
	if ((what & MO_CHOICE_COMM) && !(what & MO_CHOICE_FULL))
		for (size_t p = 0; p < lt->n_paths; p++)
			if (lt->paths[p].kind == MO_PATH_COMM && !excl[p] &&
			    act[p] == MO_ACT_KEEP && planner_comm_match(&lt->paths[p], kinds))
				act[p] = MO_ACT_RECOMPUTE_COMM;
	if ((what & MO_CHOICE_OP_SWAP) && !(what & MO_CHOICE_FULL))
		return planner_op_swap(lt, act);
	return true;
}

static unsigned planner_layer_type_comm_kinds(const mo_layer_type *lt)
{
	unsigned k = 0;
	for (size_t p = 0; p < lt->n_paths; p++)
		for (int i = 0; i < MO_PLANNER_COMM_KINDS; i++)
			if (lt->paths[p].kind == MO_PATH_COMM &&
			    planner_ends(lt->paths[p].name, mo_planner_comm_keys[i] + 2))
				k |= 1u << i;
	return k;
}

/* The combinations the mechanisms allowed make possible. */
static size_t planner_combinations(const mo_planner_problem *pl, unsigned kinds, unsigned *out)
{
	static const unsigned sel[] = {0,
				       MO_CHOICE_SELECT_MLP,
				       MO_CHOICE_SELECT_ATTENTION,
				       MO_CHOICE_SELECT_CORE_ATTENTION,
				       MO_CHOICE_SELECT_MLP | MO_CHOICE_SELECT_ATTENTION,
				       MO_CHOICE_SELECT_MLP | MO_CHOICE_SELECT_CORE_ATTENTION};
	unsigned a = pl->allow;
	size_t n = 0;
	for (size_t s = 0; s < sizeof sel / sizeof *sel; s++) {
		if (sel[s] && !(a & MO_PLAN_ALLOW_SELECT))
			continue;
		for (unsigned comm = 0; comm < 2; comm++) {
			if (comm && (!(a & MO_PLAN_ALLOW_COMM) || !kinds))
				continue;
			for (unsigned ops = 0; ops < 2; ops++) {
				if (ops && (!(a & MO_PLAN_ALLOW_OP_SWAP) || !pl->swap_ok ||
					    (sel[s] & MO_CHOICE_SELECT_MLP)))
					continue;
				out[n++] = sel[s] | (comm ? MO_CHOICE_COMM : 0) |
					   (ops ? MO_CHOICE_OP_SWAP : 0);
			}
		}
	}
	if (a & MO_PLAN_ALLOW_FULL) {
		out[n++] = MO_CHOICE_FULL;
		if ((a & MO_PLAN_ALLOW_EXCLUDE) && kinds)
			out[n++] = MO_CHOICE_FULL | MO_CHOICE_EXCLUDE_COMM;
	}
	if ((a & MO_PLAN_ALLOW_LAYER_SWAP) && pl->swap_ok)
		out[n++] = MO_CHOICE_LAYER_SWAP;
	return n;
}

static int planner_layer_type_init(mo_planner_problem *pl, size_t t)
{
	const mo_layer_type *lt = &pl->m->types[t];
	mo_planner_layer_type *pt = &pl->types[t];
	unsigned combos[64];
	int rc = -1;
	pt->comm_kinds = planner_layer_type_comm_kinds(lt);
	pt->fwd_flops = pl->base->types[t].g.flops;
	size_t n = planner_combinations(pl, pt->comm_kinds, combos);
	mo_action_kind *act = calloc(lt->n_paths + 1, sizeof(*act));
	bool *excl = calloc(lt->n_paths + 1, sizeof(*excl));
	pt->all.c = calloc(n + 1, sizeof(*pt->all.c));
	if (!act || !excl || !pt->all.c)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (!planner_actions(lt, combos[i], pt->comm_kinds, act, excl))
			continue;
		mo_est_keep k;
		if (est_keep_eval(
			&k, &pl->base->types[t].g, lt, act, (combos[i] & MO_CHOICE_FULL) != 0,
			(combos[i] & MO_CHOICE_LAYER_SWAP) != 0, pl->base->cfg.no_recompute) != 0)
			goto out;
		pt->all.c[pt->all.n++] = (mo_planner_choice){.what = combos[i],
							     .kept = k.kept,
							     .transient = u64_add(
								 k.transient,
								 pl->base->types[t].g.bwd_grads),
							     .swapped = k.swapped,
							     .recompute_s = est_time_recompute(
								     pl->base, t, &k.recompute, k.comm_bytes),
							     .comm_bytes = k.comm_bytes};
	}
	rc = 0;
out:
	free(act);
	free(excl);
	return rc;
}

double planner_choice_cost(const mo_planner_problem *pl, const mo_planner_choice *c,
			      size_t type, int64_t prefetch)
{
	return c->recompute_s + est_time_swap(pl->base, type, c->swapped, prefetch);
}

static bool planner_dominates(const mo_planner_choice *b, const mo_planner_choice *a)
{
	return b->kept <= a->kept && b->transient <= a->transient && b->swapped <= a->swapped &&
	       b->cost <= a->cost;
}

/* Drops every choice another is at least as good as in every respect (the
 * earlier one wins a tie: simpler configs come first). */
static void planner_prune(mo_planner_choice_set *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++) {
		bool dom = false;
		for (size_t j = 0; j < s->n && !dom; j++)
			dom = j != i && planner_dominates(&s->c[j], &s->c[i]) &&
			      (j < i || !planner_dominates(&s->c[i], &s->c[j]));
		if (!dom)
			s->c[n++] = s->c[i];
	}
	s->n = n;
}

static bool planner_swaps(unsigned what)
{
	return (what & (MO_CHOICE_LAYER_SWAP | MO_CHOICE_OP_SWAP)) != 0;
}

/* The starting config's own settings on a layer it names. */
static mo_planner_choice planner_fixed_choice(const mo_planner_problem *pl, uint64_t id)
{
	const mo_estimate_layer *l = &pl->start_est->layers[id];
	/* the layer's backward also holds its gradient buffers (the
	 * estimate's workspaces bucket at that event) */
	uint64_t bwd = pl->base->types[pl->m->type_of[id]].g.bwd_grads;
	return (mo_planner_choice){.what = MO_CHOICE_FIXED,
				   .kept = l->activation_bytes,
				   .transient = u64_add(l->recomputed_bytes, bwd),
				   .swapped = l->swap_bytes,
				   .recompute_s = est_time_layer_recompute(pl->start_est, id),
				   .comm_bytes = l->comm_recompute_bytes};
}

int planner_layer_choices(const mo_planner_problem *pl, uint64_t id, int64_t prefetch,
			     mo_planner_choice_set *out)
{
	const mo_planner_layer_type *pt = &pl->types[pl->m->type_of[id]];
	out->n = 0;
	out->c = malloc((pt->all.n + 2) * sizeof(*out->c));
	if (!out->c)
		return -1;
	bool swap_here = (int64_t)id + prefetch < pl->m->num_layers;
	if (pl->fixed[id])
		out->c[out->n++] = planner_fixed_choice(pl, id);
	for (size_t i = 0; i < pt->all.n; i++) {
		unsigned w = pt->all.c[i].what;
		if (pl->fixed[id] == 2 || (pl->fixed[id] == 1 && !(w & MO_CHOICE_FULL)))
			continue;
		if (planner_swaps(w) && !swap_here)
			continue;
		out->c[out->n++] = pt->all.c[i];
	}
	for (size_t i = 0; i < out->n; i++)
		out->c[i].cost = planner_choice_cost(pl, &out->c[i], (size_t)(pt - pl->types), prefetch);
	planner_prune(out);
	return 0;
}

/* ---- the starting config -------------------------------------------------- */

bool planner_start_keeps_recompute(const mo_config *c)
{
	return c && !c->from_recompute_config;
}

static void planner_mark(mo_planner_problem *pl, const mo_layers *l, unsigned char how)
{
	for (size_t i = 0; i < l->n; i++)
		for (uint64_t id = l->r[i].lo; id <= l->r[i].hi && id < pl->n_layers; id++)
			if (pl->fixed[id] < how)
				pl->fixed[id] = how;
}

static void planner_mark_list(mo_planner_problem *pl, const mo_pattern_list *pl_list,
				 unsigned char how)
{
	for (size_t i = 0; i < pl_list->n; i++)
		planner_mark(pl, &pl_list->p[i].layers, how);
}

/* Layers the starting config names keep its settings: they may only become
 * full (not when swapped or under its exclude_op). Sections it leaves off
 * (mode None, enable False) do nothing and are dropped. A graph-mode
 * recompute_config is no section of the file: the plan replaces it, so its
 * layers are free (planner_start_keeps_recompute). */
static void planner_start(mo_planner_problem *pl)
{
	const mo_config *c = pl->start;
	bool keep = planner_start_keeps_recompute(c);
	if (keep && c->mode != MO_MODE_NONE) {
		planner_mark(pl, &c->full, 1);
		planner_mark_list(pl, &c->select, 1);
		planner_mark_list(pl, &c->exclude, 2);
	}
	if (keep && c->comm_enable)
		planner_mark_list(pl, &c->comm, 1);
	if (c->swap_enable) {
		for (size_t i = 0; i < c->n_layer_swap; i++)
			planner_mark(pl, &c->layer_swap[i].layers, 2);
		for (size_t i = 0; i < c->n_op_swap; i++)
			planner_mark(pl, &c->op_swap[i].pat.layers, 2);
		pl->fixed_prefetch = c->prefetch > 0 ? c->prefetch : 1;
	}
}

int planner_problem_init(mo_planner_problem *pl, const mo_model *m, const mo_config *start,
			    unsigned allow, mo_error *err)
{
	memset(pl, 0, sizeof(*pl));
	pl->m = m;
	pl->start = start;
	pl->allow = allow ? allow : MO_PLAN_ALLOW_ALL;
	pl->n_layers = (uint64_t)(m->num_layers + m->mtp_num_layers);
	pl->swap_ok = m->pipeline_parallel <= 1 &&
		      (pl->allow & (MO_PLAN_ALLOW_LAYER_SWAP | MO_PLAN_ALLOW_OP_SWAP));
	if (mo_estimate_run(&pl->base, NULL, m, err) != 0 ||
	    (start && mo_estimate_run(&pl->start_est, start, m, err) != 0))
		return -1;
	const mo_device *d = &pl->base->cfg.dev;
	pl->flops_rate = d->tflops * 1e12;
	pl->coll_rate = d->collective_bandwidth_gbs * 1e9;
	pl->host_rate = d->host_bandwidth_gbs * 1e9;
	pl->types = calloc(m->n_types + 1, sizeof(*pl->types));
	pl->fixed = calloc(pl->n_layers + 1, 1);
	if (!pl->types || !pl->fixed)
		goto nomem;
	for (size_t t = 0; t < m->n_types; t++)
		if (planner_layer_type_init(pl, t) != 0)
			goto nomem;
	if (start)
		planner_start(pl);
	return 0;
nomem:
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	return -1;
}

void planner_problem_fini(mo_planner_problem *pl)
{
	if (pl->types)
		for (size_t t = 0; t < pl->m->n_types; t++)
			free(pl->types[t].all.c);
	free(pl->types);
	free(pl->fixed);
	mo_estimate_free(pl->base);
	mo_estimate_free(pl->start_est);
	memset(pl, 0, sizeof(*pl));
}

int planner_choice_of(const mo_planner_problem *pl, uint64_t id, int64_t prefetch, unsigned what,
			 mo_planner_choice *out)
{
	const mo_planner_layer_type *pt = &pl->types[pl->m->type_of[id]];
	int rc = -1;
	if (what == MO_CHOICE_FIXED && pl->start_est) {
		*out = planner_fixed_choice(pl, id);
		rc = 0;
	}
	for (size_t k = 0; k < pt->all.n && rc; k++)
		if (pt->all.c[k].what == what) {
			*out = pt->all.c[k];
			rc = 0;
		}
	if (rc == 0)
		out->cost = planner_choice_cost(pl, out, (size_t)(pt - pl->types), prefetch);
	return rc;
}
