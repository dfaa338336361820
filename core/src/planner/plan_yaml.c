/* The config text of a plan: the starting config's active entries kept
 * (layers the planner made full leave its select / comm lists, where full
 * wins anyway), the planner's entries added under the same keys when the
 * regex is the same, layer lists ascending and merged. The caller parses it
 * (mo_config_parse), so the result is a real config and goes through the
 * canonical export like any other. */
#include "planner/planner.h"

#include <stdlib.h>
#include <string.h>

typedef struct mo_yk {
	const char *regex;
	unsigned char *on; /* per layer */
} mo_yk;

typedef struct mo_ylist {
	mo_yk *k;
	size_t n, cap;
} mo_ylist;

typedef struct mo_yspec {
	const mo_pl *pl;
	uint64_t N;
	unsigned char *full, *lswap;
	mo_ylist sel, exc, comm, ops;
	bool failed;
} mo_yspec;

static unsigned char *mo_ys_find(mo_yspec *y, mo_ylist *l, const char *regex)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->k[i].regex, regex) == 0)
			return l->k[i].on;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 8;
		mo_yk *k = realloc(l->k, nc * sizeof(*k));
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
	l->k[l->n++] = (mo_yk){regex, on};
	return on;
}

static void mo_ys_layers(mo_yspec *y, unsigned char *on, const mo_layers *l)
{
	for (size_t i = 0; on && i < l->n; i++)
		for (uint64_t id = l->r[i].lo; id <= l->r[i].hi && id < y->N; id++)
			on[id] = 1;
}

static void mo_ys_patterns(mo_yspec *y, mo_ylist *dst, const mo_pattern_list *src)
{
	for (size_t i = 0; i < src->n; i++)
		mo_ys_layers(y, mo_ys_find(y, dst, src->p[i].regex), &src->p[i].layers);
}

static void mo_ys_start(mo_yspec *y, const mo_config *c)
{
	if (c->mode != MO_MODE_NONE) {
		mo_ys_layers(y, y->full, &c->full);
		mo_ys_patterns(y, &y->sel, &c->select);
		mo_ys_patterns(y, &y->exc, &c->exclude);
	}
	if (c->comm_enable)
		mo_ys_patterns(y, &y->comm, &c->comm);
	if (!c->swap_enable)
		return;
	for (size_t i = 0; i < c->n_layer_swap; i++)
		mo_ys_layers(y, y->lswap, &c->layer_swap[i].layers);
	for (size_t i = 0; i < c->n_op_swap; i++)
		mo_ys_layers(y, mo_ys_find(y, &y->ops, c->op_swap[i].pat.regex),
			     &c->op_swap[i].pat.layers);
}

static void mo_ys_set(mo_yspec *y, mo_ylist *l, const char *regex, uint64_t id)
{
	unsigned char *on = mo_ys_find(y, l, regex);
	if (on)
		on[id] = 1;
}

static void mo_ys_comm(mo_yspec *y, mo_ylist *l, uint64_t id)
{
	unsigned kinds = y->pl->types[y->pl->m->type_of[id]].comm_kinds;
	for (int i = 0; i < MO_PL_COMM_KINDS; i++)
		if (kinds >> i & 1u)
			mo_ys_set(y, l, mo_pl_comm_keys[i], id);
}

/* A layer the planner made full leaves the select and comm lists. */
static void mo_ys_unlist(mo_yspec *y, uint64_t id)
{
	for (size_t i = 0; i < y->sel.n; i++)
		y->sel.k[i].on[id] = 0;
	for (size_t i = 0; i < y->comm.n; i++)
		y->comm.k[i].on[id] = 0;
}

static void mo_ys_layer(mo_yspec *y, uint64_t id, unsigned w)
{
	if (w & MO_PC_FULL) {
		y->full[id] = 1;
		mo_ys_unlist(y, id);
	}
	if (w & MO_PC_EXCL)
		mo_ys_comm(y, &y->exc, id);
	if (w & MO_PC_SEL_MLP)
		mo_ys_set(y, &y->sel, ".*mlp", id);
	if (w & MO_PC_SEL_ATTN)
		mo_ys_set(y, &y->sel, ".*self_attention", id);
	if (w & MO_PC_SEL_CORE)
		mo_ys_set(y, &y->sel, ".*core_attention", id);
	if (w & MO_PC_COMM)
		mo_ys_comm(y, &y->comm, id);
	if (w & MO_PC_LSWAP)
		y->lswap[id] = 1;
	if (w & MO_PC_OPSWAP)
		mo_ys_set(y, &y->ops, ".*mlp", id);
}

/* ---- text ---------------------------------------------------------------------- */

static bool mo_ys_any(const mo_yspec *y, const unsigned char *on)
{
	for (uint64_t i = 0; i < y->N; i++)
		if (on[i])
			return true;
	return false;
}

static bool mo_ys_list_any(const mo_yspec *y, const mo_ylist *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (mo_ys_any(y, l->k[i].on))
			return true;
	return false;
}

static void mo_ys_ranges(mo_buf *b, const mo_yspec *y, const unsigned char *on)
{
	bool first = true;
	mo_buf_puts(b, "[");
	for (uint64_t i = 0; i < y->N; i++) {
		if (!on[i])
			continue;
		uint64_t j = i;
		while (j + 1 < y->N && on[j + 1])
			j++;
		if (j == i)
			mo_buf_printf(b, "%s%llu", first ? "" : ", ", (unsigned long long)i);
		else
			mo_buf_printf(b, "%s%llu-%llu", first ? "" : ", ", (unsigned long long)i,
				      (unsigned long long)j);
		first = false;
		i = j;
	}
	mo_buf_puts(b, "]");
}

static void mo_ys_quoted(mo_buf *b, const char *s)
{
	mo_buf_puts(b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			mo_buf_puts(b, "''");
		else
			mo_buf_append(b, s, 1);
	}
	mo_buf_puts(b, "'");
}

static void mo_ys_map(mo_buf *b, const mo_yspec *y, const mo_ylist *l, const char *key)
{
	if (!mo_ys_list_any(y, l))
		return;
	mo_buf_printf(b, "  %s:\n", key);
	for (size_t i = 0; i < l->n; i++) {
		if (!mo_ys_any(y, l->k[i].on))
			continue;
		mo_buf_puts(b, "    ");
		mo_ys_quoted(b, l->k[i].regex);
		mo_buf_puts(b, ": ");
		mo_ys_ranges(b, y, l->k[i].on);
		mo_buf_puts(b, "\n");
	}
}

static const char *mo_ys_mode(const mo_yspec *y)
{
	bool sel = mo_ys_list_any(y, &y->sel), full = mo_ys_any(y, y->full);
	const mo_config *c = y->pl->start;
	if (full && (!sel || (c && c->mode == MO_MODE_FULL)))
		return "full";
	return sel ? "select" : "None";
}

static void mo_ys_recompute(mo_buf *b, const mo_yspec *y)
{
	const char *mode = mo_ys_mode(y);
	mo_buf_printf(b, "recompute:\n  mode: %s\n", mode);
	if (strcmp(mode, "None") == 0)
		return;
	if (mo_ys_any(y, y->full)) {
		mo_buf_puts(b, "  full_recompute_layer: ");
		mo_ys_ranges(b, y, y->full);
		mo_buf_puts(b, "\n");
	}
	mo_ys_map(b, y, &y->sel, "select_module");
	mo_ys_map(b, y, &y->exc, "exclude_op");
}

static void mo_ys_swap(mo_buf *b, const mo_yspec *y, int64_t prefetch)
{
	bool ls = mo_ys_any(y, y->lswap), os = mo_ys_list_any(y, &y->ops);
	const mo_config *c = y->pl->start;
	if (!ls && !os && !(c && c->swap_enable)) {
		mo_buf_puts(b, "swap:\n  enable: False\n");
		return;
	}
	mo_buf_printf(b, "swap:\n  enable: True\n  default_prefetch: %lld\n", (long long)prefetch);
	if (ls) {
		mo_buf_puts(b, "  layer_swap:\n    - layers: ");
		mo_ys_ranges(b, y, y->lswap);
		mo_buf_puts(b, "\n");
	}
	if (!os)
		return;
	mo_buf_puts(b, "  op_swap:\n");
	for (size_t i = 0; i < y->ops.n; i++) {
		if (!mo_ys_any(y, y->ops.k[i].on))
			continue;
		mo_buf_puts(b, "    - op_name: ");
		mo_ys_quoted(b, y->ops.k[i].regex);
		mo_buf_puts(b, "\n      layers: ");
		mo_ys_ranges(b, y, y->ops.k[i].on);
		mo_buf_puts(b, "\n");
	}
}

static char *mo_ys_text(const mo_yspec *y, int64_t prefetch)
{
	mo_buf b;
	mo_buf_init(&b, 0);
	mo_ys_recompute(&b, y);
	if (mo_ys_list_any(y, &y->comm)) {
		mo_buf_puts(&b, "recompute_comm:\n  enable: True\n");
		mo_ys_map(&b, y, &y->comm, "select_module");
	} else {
		mo_buf_puts(&b, "recompute_comm:\n  enable: False\n");
	}
	mo_ys_swap(&b, y, prefetch);
	if (b.failed) {
		mo_buf_free(&b);
		return NULL;
	}
	return mo_buf_take(&b, NULL);
}

static void mo_ylist_free(mo_ylist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->k[i].on);
	free(l->k);
}

char *mo_pl_yaml(const mo_pl *pl, const unsigned *what, int64_t prefetch)
{
	mo_yspec y = {.pl = pl, .N = pl->n_layers};
	char *text = NULL;
	y.full = calloc(y.N + 1, 1);
	y.lswap = calloc(y.N + 1, 1);
	if (!y.full || !y.lswap)
		goto out;
	if (pl->start)
		mo_ys_start(&y, pl->start);
	for (uint64_t id = 0; id < y.N; id++)
		if (what[id] != MO_PC_FIXED)
			mo_ys_layer(&y, id, what[id]);
	if (!y.failed)
		text = mo_ys_text(&y, prefetch);
out:
	free(y.full);
	free(y.lswap);
	mo_ylist_free(&y.sel);
	mo_ylist_free(&y.exc);
	mo_ylist_free(&y.comm);
	mo_ylist_free(&y.ops);
	return text;
}
