/* The config of a plan, built as data (config/config_build.c): the starting
 * config's active entries kept (layers the planner made full leave its
 * select / comm lists, where full wins anyway), the planner's entries added
 * under the same keys when the regex is the same, layer lists ascending and
 * merged. The result is a real config: validated, estimated and exported
 * (canonically) like any other. */
#include "planner/planner.h"

#include <stdlib.h>
#include <string.h>

typedef struct mo_planner_pattern {
	const char *regex;
	unsigned char *on; /* per layer */
} mo_planner_pattern;

typedef struct mo_planner_pattern_list {
	mo_planner_pattern *k;
	size_t n, cap;
} mo_planner_pattern_list;

typedef struct mo_planner_config_spec {
	const mo_planner_problem *pl;
	uint64_t N;
	unsigned char *full, *lswap;
	mo_planner_pattern_list sel, exc, comm, ops;
	bool failed;
	mo_range *ranges; /* scratch: one list's ranges */
	mo_config_builder *b;
} mo_planner_config_spec;

static unsigned char *planner_config_find(mo_planner_config_spec *y, mo_planner_pattern_list *l,
					     const char *regex)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->k[i].regex, regex) == 0)
			return l->k[i].on;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 8;
		mo_planner_pattern *k = realloc(l->k, nc * sizeof(*k));
		if (!k) {
			y->failed = true;
			return NULL;
		}
		l->k = k;
		l->cap = nc;
	}
	unsigned char *on = calloc(y->N + 1, 1);
	if (!on) {
		y->failed = true;
		return NULL;
	}
	l->k[l->n++] = (mo_planner_pattern){regex, on};
	return on;
}

static void planner_config_layers(mo_planner_config_spec *y, unsigned char *on,
				     const mo_layers *l)
{
	for (size_t i = 0; on && i < l->n; i++)
		for (uint64_t id = l->r[i].lo; id <= l->r[i].hi && id < y->N; id++)
			on[id] = 1;
}

static void planner_config_patterns(mo_planner_config_spec *y, mo_planner_pattern_list *dst,
				       const mo_pattern_list *src)
{
	for (size_t i = 0; i < src->n; i++)
		planner_config_layers(y, planner_config_find(y, dst, src->p[i].regex),
					 &src->p[i].layers);
}

static void planner_config_start(mo_planner_config_spec *y, const mo_config *c)
{
	bool keep = planner_start_keeps_recompute(c);
	if (keep && c->mode != MO_MODE_NONE) {
		planner_config_layers(y, y->full, &c->full);
		planner_config_patterns(y, &y->sel, &c->select);
		planner_config_patterns(y, &y->exc, &c->exclude);
	}
	if (keep && c->comm_enable)
		planner_config_patterns(y, &y->comm, &c->comm);
	if (!c->swap_enable)
		return;
	for (size_t i = 0; i < c->n_layer_swap; i++)
		planner_config_layers(y, y->lswap, &c->layer_swap[i].layers);
	for (size_t i = 0; i < c->n_op_swap; i++)
		planner_config_layers(
		    y, planner_config_find(y, &y->ops, c->op_swap[i].pat.regex),
		    &c->op_swap[i].pat.layers);
}

static void planner_config_set(mo_planner_config_spec *y, mo_planner_pattern_list *l,
				  const char *regex, uint64_t id)
{
	unsigned char *on = planner_config_find(y, l, regex);
	if (on)
		on[id] = 1;
}

static void planner_config_comm(mo_planner_config_spec *y, mo_planner_pattern_list *l,
				   uint64_t id)
{
	unsigned kinds = y->pl->types[y->pl->m->type_of[id]].comm_kinds;
	for (int i = 0; i < MO_PLANNER_COMM_KINDS; i++)
		if (kinds >> i & 1u)
			planner_config_set(y, l, mo_planner_comm_keys[i], id);
}

/* A layer the planner made full leaves the select and comm lists. */
static void planner_config_unlist(mo_planner_config_spec *y, uint64_t id)
{
	for (size_t i = 0; i < y->sel.n; i++)
		y->sel.k[i].on[id] = 0;
	for (size_t i = 0; i < y->comm.n; i++)
		y->comm.k[i].on[id] = 0;
}

static void planner_config_layer(mo_planner_config_spec *y, uint64_t id, unsigned w)
{
	if (w & MO_CHOICE_FULL) {
		y->full[id] = 1;
		planner_config_unlist(y, id);
	}
	if (w & MO_CHOICE_EXCLUDE_COMM)
		planner_config_comm(y, &y->exc, id);
	if (w & MO_CHOICE_SELECT_MLP)
		planner_config_set(y, &y->sel, ".*mlp", id);
	if (w & MO_CHOICE_SELECT_ATTENTION)
		planner_config_set(y, &y->sel, ".*self_attention", id);
	if (w & MO_CHOICE_SELECT_CORE_ATTENTION)
		planner_config_set(y, &y->sel, ".*core_attention", id);
	if (w & MO_CHOICE_COMM)
		planner_config_comm(y, &y->comm, id);
	if (w & MO_CHOICE_LAYER_SWAP)
		y->lswap[id] = 1;
	if (w & MO_CHOICE_OP_SWAP)
		planner_config_set(y, &y->ops, ".*mlp", id);
}

/* ---- the config ---------------------------------------------------------------- */

static bool planner_config_any(const mo_planner_config_spec *y, const unsigned char *on)
{
	for (uint64_t i = 0; i < y->N; i++)
		if (on[i])
			return true;
	return false;
}

static bool planner_config_list_any(const mo_planner_config_spec *y,
				       const mo_planner_pattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (planner_config_any(y, l->k[i].on))
			return true;
	return false;
}

/* The layers set in `on` as ascending, merged ranges (in y->ranges). */
static size_t planner_config_ranges(mo_planner_config_spec *y, const unsigned char *on)
{
	size_t n = 0;
	for (uint64_t i = 0; i < y->N; i++) {
		if (!on[i])
			continue;
		uint64_t j = i;
		while (j + 1 < y->N && on[j + 1])
			j++;
		y->ranges[n++] = (mo_range){.lo = i, .hi = j};
		i = j;
	}
	return n;
}

static void planner_config_list(mo_planner_config_spec *y, const mo_planner_pattern_list *l,
				   mo_config_list list)
{
	for (size_t i = 0; i < l->n; i++)
		if (planner_config_any(y, l->k[i].on))
			config_build_pattern(y->b, list, l->k[i].regex, y->ranges,
						planner_config_ranges(y, l->k[i].on));
}

static mo_mode planner_config_mode(const mo_planner_config_spec *y)
{
	bool sel = planner_config_list_any(y, &y->sel), full = planner_config_any(y, y->full);
	const mo_config *c = y->pl->start;
	if (full && (!sel || (planner_start_keeps_recompute(c) && c->mode == MO_MODE_FULL)))
		return MO_MODE_FULL;
	return sel ? MO_MODE_SELECT : MO_MODE_NONE;
}

static void planner_config_recompute(mo_planner_config_spec *y)
{
	mo_mode mode = planner_config_mode(y);
	config_build_mode(y->b, mode);
	if (mode == MO_MODE_NONE)
		return;
	if (planner_config_any(y, y->full))
		config_build_full(y->b, y->ranges, planner_config_ranges(y, y->full));
	planner_config_list(y, &y->sel, MO_CONFIG_SELECT_MODULE);
	planner_config_list(y, &y->exc, MO_CONFIG_EXCLUDE_OP);
}

static void planner_config_comm_section(mo_planner_config_spec *y)
{
	bool enable = planner_config_list_any(y, &y->comm);
	config_build_comm(y->b, enable);
	if (enable)
		planner_config_list(y, &y->comm, MO_CONFIG_COMM_SELECT_MODULE);
}

static void planner_config_swap(mo_planner_config_spec *y, int64_t prefetch)
{
	bool layer_swap = planner_config_any(y, y->lswap),
	     op_swap = planner_config_list_any(y, &y->ops);
	const mo_config *c = y->pl->start;
	if (!layer_swap && !op_swap && !(c && c->swap_enable)) {
		config_build_swap(y->b, false);
		return;
	}
	config_build_swap(y->b, true);
	config_build_prefetch(y->b, prefetch);
	if (layer_swap)
		config_build_layer_swap(y->b, y->ranges, planner_config_ranges(y, y->lswap));
	for (size_t i = 0; i < y->ops.n; i++)
		if (planner_config_any(y, y->ops.k[i].on))
			config_build_op_swap(y->b, y->ops.k[i].regex, y->ranges,
						planner_config_ranges(y, y->ops.k[i].on));
}

static void planner_pattern_list_free(mo_planner_pattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->k[i].on);
	free(l->k);
}

int planner_build_config(mo_config **out, const mo_planner_problem *pl, const unsigned *what,
			    int64_t prefetch, const char *name, mo_error *err)
{
	mo_planner_config_spec y = {.pl = pl, .N = pl->n_layers};
	int rc = -1;
	*out = NULL;
	y.full = calloc(y.N + 1, 1);
	y.lswap = calloc(y.N + 1, 1);
	y.ranges = calloc(y.N / 2 + 1, sizeof(*y.ranges)); /* runs of set layers */
	if (!y.full || !y.lswap || !y.ranges)
		goto out_nomem;
	if (pl->start)
		planner_config_start(&y, pl->start);
	for (uint64_t id = 0; id < y.N; id++)
		if (what[id] != MO_CHOICE_FIXED)
			planner_config_layer(&y, id, what[id]);
	if (y.failed)
		goto out_nomem;
	if (config_builder_new(&y.b, name, err) != 0)
		goto out_free;
	planner_config_recompute(&y);
	planner_config_comm_section(&y);
	planner_config_swap(&y, prefetch);
	rc = config_builder_finish(out, y.b, err);
	goto out_free;
out_nomem:
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
out_free:
	free(y.full);
	free(y.lswap);
	free(y.ranges);
	planner_pattern_list_free(&y.sel);
	planner_pattern_list_free(&y.exc);
	planner_pattern_list_free(&y.comm);
	planner_pattern_list_free(&y.ops);
	return rc;
}
