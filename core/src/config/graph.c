/* Graph-mode `recompute_config`: what a MindSpore Transformers
 * graph-mode run (context.mode 0) applies, read with the semantics of its
 * LayerSetting (mindformers/models/utils.py, r1.x; mindformers/
 * parallel_core/training_graph/transformer/utils.py, master) and turned
 * into the recompute / recompute_comm fields of the config, so the rules,
 * the expansion and the estimate see the plan the file runs. The file's
 * own sections stay as they are: export writes nothing new. In a PyNative
 * file the section is ignored by MindSpore Transformers and only warned
 * about. docs/graph-mode.md states the semantics and the name mapping. */
#include "config/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_GRAPH_MAX_STAGES 1024
#define MO_GRAPH_MAX_LAYERS 100000
#define MO_GRAPH_MAX_PATTERNS 64
#define MO_GRAPH_ALL INT64_MAX

/* The file's pipeline layout, as LayerSetting computes it. */
typedef struct mo_graph {
	mo_config *c;
	mo_diags *diags;
	const char *file;
	mo_arena *a;
	const mo_node *rc; /* recompute_config */
	const mo_node *mc; /* model.model_config */
	bool legacy;       /* not `use_legacy: False` */
	int64_t n;         /* layers LayerSetting places (legacy: + MTP) */
	int64_t mtp;       /* MTP layers after the decoder layers */
	int64_t total;     /* ids 0..total-1 */
	int64_t P, V;
	int64_t count[MO_GRAPH_MAX_STAGES]; /* layers of chunk i, stage j: [i*P + j] */
	int64_t start[MO_GRAPH_MAX_STAGES];
	/* per layer: chosen by the current form, and the node that chose it */
	unsigned char *on;
	const mo_node **why;
	bool failed;
	bool capped; /* the pattern cap was reported */
	/* the layer counts of a model given apart, for a file whose
	 * model_config has none (0: none given) */
	int64_t model_layers, model_mtp;
} mo_graph;

static const mo_node *graph_get(const mo_node *map, const char *key)
{
	return map && map->kind == MO_NODE_MAP ? map_get(map, key) : NULL;
}

static int64_t graph_int(const mo_node *v, int64_t dflt)
{
	int64_t x;
	bool ovf = false;
	return v && scalar_int(v, &x, &ovf) ? x : dflt;
}

static void graph_warn(mo_graph *g, const char *code, const mo_node *at,
			  const char *path, const char *hint, const char *msg)
{
	mo_diag *d = diags_add_at(g->diags, MO_SEV_WARNING, code, g->file, at,
				     path, "%s", msg);
	if (d && hint)
		diag_set_hint(g->diags, d, "%s", hint);
}

/* ---- the pipeline layout ------------------------------------------------- */

/* Offsets per virtual stage: an int, a list per stage, or per chunk and
 * stage. False when the shape is not LayerSetting's (the model import
 * reports it). */
static bool graph_offsets(mo_graph *g, const mo_node *v, int64_t *off)
{
	int64_t P = g->P, V = g->V;
	memset(off, 0, sizeof(*off) * (size_t)(P * V));
	if (!v || v->kind == MO_NODE_SCALAR) {
		int64_t x = graph_int(v, 0);
		for (int64_t k = 0; k < P * V; k++)
			off[k] = x;
		return x >= -MO_GRAPH_MAX_LAYERS && x <= MO_GRAPH_MAX_LAYERS;
	}
	bool nested = v->kind == MO_NODE_SEQ && v->n && v->items[0]->kind == MO_NODE_SEQ;
	if (v->kind != MO_NODE_SEQ || (nested && v->n != (size_t)V))
		return false;
	for (int64_t i = 0; i < V; i++) {
		const mo_node *row = nested ? v->items[i] : v;
		if (row->kind != MO_NODE_SEQ || row->n != (size_t)P)
			return false;
		for (int64_t j = 0; j < P; j++) {
			off[i * P + j] = graph_int(row->items[j], 0);
			if (off[i * P + j] < -MO_GRAPH_MAX_LAYERS || off[i * P + j] > MO_GRAPH_MAX_LAYERS)
				return false;
		}
	}
	return true;
}

static bool graph_layout(mo_graph *g, const mo_node *root)
{
	const mo_node *mc = graph_get(graph_get(root, "model"), "model_config");
	const mo_node *pc = graph_get(root, "parallel_config");
	const mo_node *pl = graph_get(graph_get(root, "parallel"), "pipeline_config");
	bool legacy = true, inter = false;
	const mo_node *ul = graph_get(root, "use_legacy");
	if (ul && !scalar_bool(ul, &legacy))
		legacy = true;
	const mo_node *pi = graph_get(pl, "pipeline_interleave");
	if (pi && !scalar_bool(pi, &inter))
		inter = false;
	g->legacy = legacy;
	g->mc = mc;
	int64_t n = graph_int(graph_get(mc, "num_layers"),
				 graph_int(graph_get(mc, "num_hidden_layers"), 0));
	int64_t mtp = graph_int(graph_get(mc, "mtp_depth"),
				   graph_int(graph_get(mc, "num_nextn_predict_layers"), 0));
	if (n < 1 && g->model_layers > 0) { /* the model given apart */
		n = g->model_layers;
		mtp = g->model_mtp;
	}
	g->P = graph_int(graph_get(pc, "pipeline_stage"), 1);
	g->V = inter ? graph_int(graph_get(mc, "pp_interleave_num"), 1) : 1;
	if (n < 1 || n > MO_GRAPH_MAX_LAYERS || mtp < 0 || mtp > 1000 || g->P < 1 ||
	    g->V < 1 || g->P * g->V > MO_GRAPH_MAX_STAGES)
		return false;
	g->mtp = mtp;
	g->n = legacy ? n + mtp : n; /* legacy DeepSeek-V3 places its MTP layers */
	g->total = n + mtp;
	int64_t PV = g->P * g->V, off[MO_GRAPH_MAX_STAGES];
	bool ok = graph_offsets(g, graph_get(mc, "offset"), off);
	int64_t at = 0, sum = 0;
	for (int64_t k = 0; k < PV; k++) {
		g->count[k] = ok ? g->n / PV + off[k] : g->n / PV;
		if (g->count[k] < 0)
			ok = false;
		sum += off[k];
	}
	if (!ok || sum != g->n % PV) /* the model import reports the offset */
		for (int64_t k = 0; k < PV; k++)
			g->count[k] = g->n / PV + (k < g->n % PV);
	for (int64_t k = 0; k < PV; k++) {
		g->start[k] = at;
		at += g->count[k];
	}
	return true;
}

/* ---- one layer form: bool, per-stage counts, nested per chunk ----------- */

static void graph_mark(mo_graph *g, int64_t k, int64_t cnt, const mo_node *why)
{
	if (cnt > g->count[k])
		cnt = g->count[k];
	for (int64_t l = g->start[k]; l < g->start[k] + cnt && l < g->n; l++) {
		g->on[l] = 1;
		g->why[l] = why;
	}
}

/* _alloc_recompute_layer: a stage's count goes round-robin over its
 * interleave chunks, one layer at a time, each chunk's first layers. */
static void graph_per_stage(mo_graph *g, int64_t j, int64_t num, const mo_node *why)
{
	int64_t got[MO_GRAPH_MAX_STAGES] = {0}, cap = 0;
	for (int64_t i = 0; i < g->V; i++)
		cap += g->count[i * g->P + j];
	if (num > cap)
		num = cap;
	while (num > 0)
		for (int64_t i = 0; i < g->V && num > 0; i++)
			if (got[i] < g->count[i * g->P + j])
				got[i]++, num--;
	for (int64_t i = 0; i < g->V; i++)
		graph_mark(g, i * g->P + j, got[i], why);
}

static bool graph_count(const mo_node *v, int64_t *out)
{
	bool b, ovf = false;
	if (v->kind != MO_NODE_SCALAR)
		return false;
	if (scalar_bool(v, &b)) {
		*out = b ? MO_GRAPH_ALL : 0;
		return true;
	}
	return scalar_int(v, out, &ovf) && *out >= 0;
}

/* Marks the layers a `recompute` / select value names; false (with a
 * warning) on a form LayerSetting refuses. */
static bool graph_form(mo_graph *g, const mo_node *v, const char *path)
{
	int64_t x;
	memset(g->on, 0, (size_t)g->total);
	if (v->kind == MO_NODE_SCALAR && graph_count(v, &x)) {
		for (int64_t k = 0; x && k < g->P * g->V; k++)
			graph_mark(g, k, g->count[k], v);
		return true;
	}
	bool flat = v->kind == MO_NODE_SEQ, strs = flat;
	for (size_t i = 0; flat && i < v->n; i++) {
		flat &= v->items[i]->kind == MO_NODE_SCALAR &&
			graph_count(v->items[i], &x);
		strs &= v->items[i]->kind == MO_NODE_SCALAR &&
			scalar_resolve(v->items[i]) == MO_SCALAR_STR;
	}
	if (strs) { /* a list of names: every layer */
		for (int64_t k = 0; k < g->P * g->V; k++)
			graph_mark(g, k, g->count[k], v);
		return true;
	}
	if (flat && v->n == (size_t)g->P) {
		for (int64_t j = 0; j < g->P; j++) {
			graph_count(v->items[j], &x);
			graph_per_stage(g, j, x, v->items[j]);
		}
		return true;
	}
	bool nested = v->kind == MO_NODE_SEQ && v->n == (size_t)g->V;
	for (size_t i = 0; nested && i < v->n; i++) {
		const mo_node *row = v->items[i];
		if (row->kind == MO_NODE_SCALAR && graph_count(row, &x)) {
			for (int64_t j = 0; j < g->P; j++)
				graph_mark(g, (int64_t)i * g->P + j, x ? MO_GRAPH_ALL : 0, row);
			continue;
		}
		nested = row->kind == MO_NODE_SEQ && row->n == (size_t)g->P;
		for (int64_t j = 0; nested && j < g->P; j++) {
			nested = graph_count(row->items[j], &x);
			if (nested)
				graph_mark(g, (int64_t)i * g->P + j, x, row->items[j]);
		}
	}
	if (nested)
		return true;
	mo_diag *d = diags_add_at(g->diags, MO_SEV_ERROR, "type", g->file, v, path,
				     "%s: not a boolean, one count per pipeline stage (%lld) "
				     "or one list per interleave chunk (%lld x %lld)",
				     path, (long long)g->P, (long long)g->V, (long long)g->P);
	diag_set_hint(g->diags, d, "MindSpore Transformers (LayerSetting) refuses this form");
	g->c->structural_errors = true;
	return false;
}

/* mcore MTP layers take the last decoder layer's setting. */
static void graph_mtp(mo_graph *g)
{
	if (g->legacy || g->mtp == 0 || !g->on[g->n - 1])
		return;
	for (int64_t l = g->n; l < g->total; l++) {
		g->on[l] = 1;
		g->why[l] = g->why[g->n - 1];
	}
}

/* The marked layers (minus `except`) as ranges. */
static void graph_ranges(mo_graph *g, mo_layers *out, const mo_node *at,
			    const unsigned char *except)
{
	memset(out, 0, sizeof(*out));
	out->at = at;
	out->ok = true;
	/* at most one range per two layers */
	out->r = arena_alloc(g->a, sizeof(mo_range) * (size_t)(g->total / 2 + 1));
	if (!out->r) {
		g->failed = true;
		return;
	}
	for (int64_t l = 0; l < g->total; l++) {
		if (!g->on[l] || (except && except[l]))
			continue;
		mo_range *r = &out->r[out->n];
		if (out->n && r[-1].hi + 1 == (uint64_t)l) {
			r[-1].hi = (uint64_t)l;
			continue;
		}
		r->lo = r->hi = (uint64_t)l;
		r->at = g->why[l];
		out->n++;
	}
}

/* ---- names: legacy cells to the layout's paths ---------------------------- */

static const char *const mo_graph_names[] = {
	"feed_forward", "mlp", "attention", "self_attention",
	"attention_norm", "input_layernorm", "ffn_norm", "pre_mlp_layernorm",
	"w_qkv", "linear_qkv", "wq", "linear_qkv", "wk", "linear_qkv",
	"wv", "linear_qkv", "wo", "linear_proj", "w1", "linear_fc1",
	"w3", "linear_fc1", "w_gate_hidden", "linear_fc1", "w2", "linear_fc2",
	"activation", "activation_func", NULL};

/* Rewrites a LayerSetting pattern (components joined by `\.`) into the
 * layout's names; `w1.activation` (the activation inside legacy w1) is the
 * MLP's activation_func. NULL when out of memory. */
static char *graph_translate(mo_graph *g, const char *pat)
{
	char out[1024];
	size_t o = 0;
	const char *s = pat;
	bool last_fc1 = false;
	while (s && *s) {
		const char *e = strstr(s, "\\.");
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const char *name = NULL;
		for (size_t i = 0; mo_graph_names[i]; i += 2)
			if (strlen(mo_graph_names[i]) == len && memcmp(mo_graph_names[i], s, len) == 0)
				name = mo_graph_names[i + 1];
		if (name && last_fc1 && strcmp(name, "activation_func") == 0)
			o -= strlen("linear_fc1\\.");
		const char *put = name ? name : s;
		size_t plen = name ? strlen(name) : len;
		if (o + plen + 3 >= sizeof out)
			return arena_strdup(g->a, pat);
		memcpy(out + o, put, plen);
		o += plen;
		last_fc1 = name && strcmp(name, "linear_fc1") == 0;
		if (e) {
			memcpy(out + o, "\\.", 2);
			o += 2;
		}
		s = e ? e + 2 : NULL;
	}
	out[o] = '\0';
	return arena_strdup(g->a, out);
}

/* The communication op a select_comm_recompute pattern marks is the one
 * redistributing that op's output: after a norm, the all-gather at the
 * next module's input (sequence parallel); after a module's reshape, the
 * all-gather at that module's input. */
static char *graph_comm_pattern(mo_graph *g, const char *translated)
{
	const char *last = translated;
	for (const char *p = strstr(translated, "\\."); p; p = strstr(p + 2, "\\."))
		last = p + 2;
	if (strstr(last, "norm"))
		return arena_strdup(g->a, ".*\\.input\\.allgather");
	if (last == translated)
		return arena_strdup(g->a, translated);
	return arena_printf(g->a, "%.*sinput\\.allgather", (int)(last - translated), translated);
}

/* ---- patterns ------------------------------------------------------------ */

static void graph_pattern(mo_graph *g, mo_pattern_list *pl, const char *regex,
			     const mo_node *key, const mo_node *val, const char *dpath,
			     const unsigned char *except)
{
	if (!regex) {
		g->failed = true;
		return;
	}
	if (pl->n >= MO_GRAPH_MAX_PATTERNS) {
		if (pl->n == MO_GRAPH_MAX_PATTERNS && !g->capped) {
			graph_warn(g, "unmodelled", key, dpath, NULL,
				      "recompute_config: more than 64 patterns in one list; "
				      "the rest are not applied");
			g->capped = true;
		}
		return;
	}
	mo_pattern *p = &pl->p[pl->n];
	memset(p, 0, sizeof(*p));
	p->regex = regex;
	p->key = key;
	p->dpath = dpath;
	graph_ranges(g, &p->layers, val, except);
	if (g->failed || p->layers.n == 0)
		return;
	const char *msg;
	size_t off = 0;
	msg = regex_shape_check(regex, strlen(regex), &off);
	if (msg) { /* exponential backtracking: refused where it enters, at the repeat */
		mo_node at = *key;
		at.column += (int)off + (at.style == MO_STYLE_PLAIN ? 0 : 1);
		mo_diag *d = diags_add_at(g->diags, MO_SEV_ERROR, "pattern-shape", g->file, &at,
					  dpath, "%s: pattern '%s': %s (offset %zu)", dpath, regex,
					  msg, off);
		diag_set_hint(g->diags, d, "repeat the wildcard once ('.*' rather than '(.*)*')");
		g->c->structural_errors = true;
		return;
	}
	p->re = regex_compile(regex, strlen(regex), &g->c->lim, g->a, &msg, &off);
	if (!p->re) {
		diags_add_at(g->diags, MO_SEV_ERROR, "regex", g->file, key, dpath,
				"%s: %s at offset %zu", dpath, msg ? msg : "bad pattern", off);
		g->c->structural_errors = true;
		return;
	}
	pl->n++;
}

static const char *const mo_graph_default_legacy[] = {
	"feed_forward\\.mul", "feed_forward\\.w1\\.activation\\.silu", NULL};
/* mcore's four defaults (shared_experts and mlp, mul and silu) as two
 * patterns, so a dense layer does not report the shared-expert half */
static const char *const mo_graph_default_mcore[] = {
	"mlp\\.(shared_experts\\.)?mul", "mlp\\.(shared_experts\\.)?activation_func\\.silu",
	NULL};
static const char *const mo_graph_default_comm[] = {".*\\.norm", NULL};

/* select_recompute / select_comm_recompute: false, true (the default
 * patterns), a per-stage form (the default patterns there), a list of
 * names (every layer), or {pattern: form}. */
static void graph_select(mo_graph *g, const char *key, mo_pattern_list *pl,
			    const char *const *defaults, bool comm,
			    const unsigned char *full)
{
	const mo_node *kn = NULL;
	const mo_node *v = map_get_kv(g->rc, key, &kn);
	bool b;
	if (!v || (scalar_bool(v, &b) && !b) || scalar_resolve(v) == MO_SCALAR_NULL)
		return;
	pl->at = g->rc;
	pl->p = arena_alloc(g->a, sizeof(mo_pattern) * MO_GRAPH_MAX_PATTERNS);
	if (!pl->p) {
		g->failed = true;
		return;
	}
	bool names = v->kind == MO_NODE_SEQ && v->n &&
		     v->items[0]->kind == MO_NODE_SCALAR &&
		     scalar_resolve(v->items[0]) == MO_SCALAR_STR;
	size_t n = v->kind == MO_NODE_MAP ? v->n / 2 : names ? v->n : 0;
	for (size_t i = 0; (n ? i < n : defaults[i] != NULL) && !g->failed; i++) {
		const mo_node *pk = v->kind == MO_NODE_MAP ? v->items[2 * i]
				    : names                 ? v->items[i]
							    : kn;
		const mo_node *pv = v->kind == MO_NODE_MAP ? v->items[2 * i + 1] : v;
		const char *raw = n ? pk->value : defaults[i];
		char *dpath = arena_printf(g->a, "recompute_config.%s['%s']", key, raw);
		if (!dpath || !graph_form(g, pv, dpath))
			continue;
		graph_mtp(g);
		char *t = graph_translate(g, raw);
		if (comm && t)
			t = graph_comm_pattern(g, t);
		graph_pattern(g, pl, t, pk, pv, dpath, full);
	}
}

/* ---- the section --------------------------------------------------------- */

static void graph_flags(mo_graph *g)
{
	const mo_node *k = NULL;
	const mo_node *slice = map_get_kv(g->rc, "recompute_slice_activation", &k);
	const mo_node *rec = graph_get(g->rc, "recompute");
	bool on = false, all = false;
	if (slice && scalar_bool(slice, &on) && on && rec && scalar_bool(rec, &all) && all)
		graph_warn(g, "unmodelled", k, "recompute_config.recompute_slice_activation",
			      NULL,
			      "recompute_config.recompute_slice_activation: the recomputed "
			      "layers' inputs are kept sliced over the model-parallel "
			      "devices; the estimate keeps them whole");
	static const char *const excl[] = {"select_recompute_exclude",
					   "select_comm_recompute_exclude"};
	for (size_t i = 0; i < 2; i++) {
		const mo_node *v = map_get_kv(g->rc, excl[i], &k);
		if (v && !(scalar_bool(v, &on) && !on) && v->kind != MO_NODE_SCALAR)
			graph_warn(g, "unmodelled", k, excl[i], NULL,
				      "recompute_config exclusions are not applied: the "
				      "estimate recomputes what the select lists name");
	}
}

/* ChatGLM2-32k's no_recompute_layers: under select_recompute, its
 * set_parallel_configure_for_layer recomputes every layer not listed in
 * full and the listed ones not at all (research/glm32k/glm32k_transformer.py
 * at v1.0.0, lines 673-677, type ChatGLM32kConfig; ChatGLM2Config's
 * glm2_transformer.py at v1.1.0, lines 497-504, does the same, and v1.2.0
 * on read the key nowhere). True when the file's plan is that one; a
 * ChatGLM2Config file, whose release the file does not say, is told so. */
static bool graph_no_recompute(mo_graph *g)
{
	const mo_node *k = NULL;
	const mo_node *nr = map_get_kv(g->mc, "no_recompute_layers", &k);
	const mo_node *sel = graph_get(g->rc, "select_recompute");
	const mo_node *t = graph_get(g->mc, "type");
	bool on = false;
	if (!nr || nr->kind != MO_NODE_SEQ || nr->n == 0 || !sel || !scalar_bool(sel, &on) ||
	    !on || !t || t->kind != MO_NODE_SCALAR)
		return false;
	if (strcmp(t->value, "ChatGLM2Config") == 0)
		graph_warn(g, "unmodelled", k, "model.model_config.no_recompute_layers", NULL,
			      "model.model_config.no_recompute_layers: MindSpore Transformers "
			      "v1.1.0 recomputes every other layer in full under select_recompute "
			      "(glm2_transformer.py), v1.2.0 on ignore the key; memopt reads "
			      "recompute_config as the later releases do");
	if (strcmp(t->value, "ChatGLM32kConfig") != 0)
		return false;
	memset(g->on, 0, (size_t)g->total);
	for (int64_t l = 0; l < g->n; l++) {
		g->on[l] = 1;
		g->why[l] = nr;
	}
	for (size_t i = 0; i < nr->n; i++) {
		int64_t id = graph_int(nr->items[i], -1);
		if (id >= 0 && id < g->n)
			g->on[id] = 0;
	}
	graph_ranges(g, &g->c->full, nr, NULL);
	return true;
}

static void graph_apply(mo_graph *g)
{
	mo_config *c = g->c;
	const mo_node *kn = NULL;
	const mo_node *rec = map_get_kv(g->rc, "recompute", &kn);
	unsigned char *full = calloc((size_t)g->total, 1);
	if (!full) {
		g->failed = true;
		return;
	}
	bool listed = graph_no_recompute(g);
	if (!listed && rec && graph_form(g, rec, "recompute_config.recompute")) {
		graph_mtp(g);
		memcpy(full, g->on, (size_t)g->total);
		graph_ranges(g, &c->full, rec, NULL);
	}
	if (!listed)
		graph_select(g, "select_recompute", &c->select,
				g->legacy ? mo_graph_default_legacy : mo_graph_default_mcore, false,
				full);
	graph_select(g, "select_comm_recompute", &c->comm, mo_graph_default_comm, true, full);
	free(full);
	c->mode = c->full.n ? MO_MODE_FULL : c->select.n ? MO_MODE_SELECT : MO_MODE_NONE;
	c->mode_at = kn;
	c->comm_enable = c->comm.n > 0;
	c->comm_enable_at = c->comm_enable ? g->rc : NULL;
	c->from_recompute_config = c->mode != MO_MODE_NONE || c->comm_enable;
	graph_flags(g);
}

/* PyNative: the r2.x sections are present or context.mode is 1. */
bool config_graph_is_pynative(const mo_node *root)
{
	const mo_node *mode = graph_get(graph_get(root, "context"), "mode");
	return graph_get(root, "parallelism") || graph_int(mode, 0) == 1;
}

static void graph_read_plan(mo_config *c, mo_diags *diags, const mo_node *root,
			    const mo_node *key, const mo_node *val, int64_t model_layers,
			    int64_t model_mtp);

/* model_config gives a layer count (else the model is another file's). */
static bool graph_file_has_layers(const mo_node *root)
{
	const mo_node *mc = graph_get(graph_get(root, "model"), "model_config");
	return graph_get(mc, "num_layers") || graph_get(mc, "num_hidden_layers");
}

void config_graph(mo_config *c, mo_diags *diags, const mo_node *root, const mo_node *key,
		     const mo_node *val)
{
	const char *file = c->doc->name;
	bool swap = key->len == strlen("swap_config");
	if (config_graph_is_pynative(root)) {
		mo_diag *d = diags_add_at(diags, MO_SEV_WARNING, "legacy-key", file, key,
					     swap ? "swap_config" : "recompute_config",
					     "'%s' is ignored by PyNative runs (context.mode 1)",
					     swap ? "swap_config" : "recompute_config");
		diag_set_hint(diags, d, "use the '%s' section", swap ? "swap" : "recompute");
		return;
	}
	bool rc_used = !swap && val && val->kind == MO_NODE_MAP && val->n > 0;
	if (rc_used && (c->recompute_val || c->comm_val)) {
		mo_diag *d = diags_add_at(
			diags, MO_SEV_WARNING, "legacy-key", file, key, "recompute_config",
			"the file has both recompute_config and the recompute sections: "
			"memopt applies the sections, a graph-mode run (context.mode 0) the "
			"recompute_config");
		diag_set_hint(diags, d, "keep one of them");
		return;
	}
	mo_diag *d = diags_add_at(
		diags, MO_SEV_WARNING, "legacy-key", file, key,
		swap ? "swap_config" : "recompute_config",
		"'%s' is what graph-mode runs (context.mode 0) apply%s; PyNative runs ignore it",
		swap ? "swap_config" : "recompute_config",
		swap ? " (memopt does not read it yet)" : ": memopt reads it as the recompute plan");
	diag_set_hint(diags, d, "in a PyNative file write the '%s' section instead",
			 swap ? "swap" : "recompute");
	if (!rc_used)
		return;
	if (!graph_file_has_layers(root)) {
		/* the model is elsewhere (pretrained_model_dir's config.json):
		 * placed once it is known (config_graph_place) */
		c->graph_pending_root = root;
		c->graph_pending_key = key;
		c->graph_pending_val = val;
		return;
	}
	graph_read_plan(c, diags, root, key, val, 0, 0);
}

void config_graph_place(mo_config *c, mo_diags *diags, int64_t layers, int64_t mtp)
{
	if (!c || !c->graph_pending_val)
		return;
	const mo_node *root = c->graph_pending_root, *key = c->graph_pending_key;
	const mo_node *val = c->graph_pending_val;
	c->graph_pending_root = c->graph_pending_key = c->graph_pending_val = NULL;
	graph_read_plan(c, diags, root, key, val, layers, mtp);
}

/* Reads recompute_config (val, at key) into the recompute fields, with the
 * layout of the file, or of the model given apart (model_layers > 0) when
 * the file has no layer count. */
static void graph_read_plan(mo_config *c, mo_diags *diags, const mo_node *root,
			    const mo_node *key, const mo_node *val, int64_t model_layers,
			    int64_t model_mtp)
{
	const char *file = c->doc->name;
	mo_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return;
	*g = (mo_graph){.c = c, .diags = diags, .file = file, .a = c->doc->arena, .rc = val,
			.model_layers = model_layers, .model_mtp = model_mtp};
	if (!graph_layout(g, root)) {
		const mo_node *rec = graph_get(val, "recompute");
		bool b = false;
		if (rec && !(scalar_bool(rec, &b) && !b))
			graph_warn(g, "model-needed", key, "recompute_config",
				      "give the model (its config.json) or the layer count in model.model_config",
				      "recompute_config: the layers cannot be placed (no layer "
				      "count in the file or the model given, more than 100000 "
				      "layers or more than 1024 pipeline stages x chunks); not "
				      "applied");
		free(g);
		return;
	}
	g->on = calloc((size_t)g->total, 1);
	g->why = calloc((size_t)g->total, sizeof(*g->why));
	if (g->on && g->why) {
		graph_apply(g);
		c->recompute_config_read = !g->failed;
	}
	free(g->on);
	free(g->why);
	free(g);
}
