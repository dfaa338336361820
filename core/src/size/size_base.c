/* A layout written into a base training YAML: the parallel keys and the
 * training batch keys set in place (the value's bytes replaced, its
 * anchor, comment and line kept; a key the layout needs and the file lacks
 * added as the last line of its section), the three memory sections
 * written from the plan (export_rewrite, the one YAML writer), every other
 * byte kept.
 *
 * The keys are MindSpore Transformers', as the model import reads them
 * (import/model_file.c, import/graph_mode.c):
 *  - graph mode (`parallel_config`): parallel_config.{data_parallel,
 *    model_parallel, pipeline_stage, micro_batch_num, context_parallel,
 *    expert_parallel, use_seq_parallel}, runner_config.{batch_size,
 *    gradient_accumulation_steps} (the micro-batches: micro_batch_num
 *    with PP, the accumulation steps without, as the import reads them),
 *    parallel.
 *    enable_parallel_optimizer, model.model_config.{offset,
 *    pp_interleave_num} and parallel.pipeline_config.pipeline_interleave;
 *  - PyNative (`parallelism`): parallelism.{tensor_parallel,
 *    context_parallel, pipeline_parallel, expert_parallel,
 *    pipeline_parallel_interleave_num, pipeline_parallel_layers_per_stage,
 *    data_parallel_shard}, training.{local_batch_size, global_batch_size}
 *    (the device count is the run's, as for the file itself).
 *
 * The same writer exports the layout of a model given apart into a file
 * that carries its own model (mo_export_run): the file's own layout is
 * recorded first, and only the keys whose value text differs are written,
 * the three sections left as written. */
#include "size/size.h"
#include "config/config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_BASE_MAX_EDITS 24
/* a key's text: an offset list of up to about 2,700 chunks */
#define SIZE_BASE_TEXT 8192

typedef struct mo_base_edits {
	const mo_config *c;
	mo_text_edit v[SIZE_BASE_MAX_EDITS];
	char text[SIZE_BASE_MAX_EDITS][SIZE_BASE_TEXT];
	/* the section and key of each write (a recording's, below) */
	const char *where[SIZE_BASE_MAX_EDITS], *key[SIZE_BASE_MAX_EDITS];
	size_t n;
	/* write nothing: note each key's value text (where, key, text), the
	 * layout the file already states, for an export's comparison */
	bool record;
	/* a recording: a key it holds with the same value text is left as
	 * written (the export writes only what the layout changes) */
	const struct mo_base_edits *same;
	/* a shard over the whole data-parallel group written as the number
	 * unless the file writes -1 (the recording then tells 2 of 2 from 4
	 * of 4, which -1 would not) */
	bool as_file;
	/* what the next value stands for beyond its text (the stage count of
	 * an offset 0), compared with a recording's and never written */
	int64_t dep, deps[SIZE_BASE_MAX_EDITS];
	const char *what; /* names the operation in errors: "base", "export" */
	mo_error *err;
	bool failed;
} mo_base_edits;

/* When a key is written. */
typedef enum mo_base_when {
	BASE_SET,       /* replaced when present; added when absent */
	BASE_IF_PRESENT /* replaced when present only */
} mo_base_when;

static const mo_node *base_section(const mo_config *c, const char *a, const char *b)
{
	const mo_node *n = map_get(c->doc->root, a);
	if (n && b)
		n = n->kind == MO_NODE_MAP ? map_get(n, b) : NULL;
	return n && n->kind == MO_NODE_MAP ? n : NULL;
}

static mo_text_edit *base_next(mo_base_edits *e)
{
	if (e->failed)
		return NULL;
	if (e->n == SIZE_BASE_MAX_EDITS) {
		error_set(e->err, MO_ERR_INTERNAL, 0, 0, "%s: too many edits", e->what);
		e->failed = true;
		return NULL;
	}
	mo_text_edit *t = &e->v[e->n];
	t->text = e->text[e->n];
	e->n++;
	return t;
}

/* The file's spelling of a boolean: True/False unless it writes true/false. */
static const char *base_bool(const mo_node *old, bool b)
{
	bool lower = old && old->kind == MO_NODE_SCALAR && old->value &&
		     (strcmp(old->value, "true") == 0 || strcmp(old->value, "false") == 0);
	if (lower)
		return b ? "true" : "false";
	return b ? "True" : "False";
}

/* The column of a mapping's keys (0-based), from its first key. */
static size_t base_indent(const mo_config *c, const mo_node *map)
{
	const char *src = c->doc->src;
	size_t s = map->items[0]->start;
	size_t ls = s;
	while (ls > 0 && src[ls - 1] != '\n' && src[ls - 1] != '\r')
		ls--;
	return s - ls;
}

static const char *base_break(const mo_config *c)
{
	const char *nl = memchr(c->doc->src, '\n', c->doc->srclen);
	return nl && nl > c->doc->src && nl[-1] == '\r' ? "\r\n" : "\n";
}

static void base_fail(mo_base_edits *e, const mo_node *at, const char *fmt, const char *where,
		      const char *key)
{
	error_set(e->err, MO_ERR_INVALID, at ? at->line : 0, at ? at->column : 0, fmt, e->what,
		  where, key);
	e->failed = true;
}

/* The value's own bytes (after its &anchor, before its comment). */
static void base_replace(mo_text_edit *t, const mo_config *c, const mo_node *k, const mo_node *v,
			 char *text, const char *value)
{
	t->start = export_value_start(c, v);
	t->end = export_value_end(c, v, k->end);
	if (t->end < t->start)
		t->end = t->start;
	snprintf(text, SIZE_BASE_TEXT, "%s", value);
}

/* A line `key: value` after the block mapping's last entry (its comment
 * included), at the column of its keys. */
static void base_add(mo_text_edit *t, const mo_config *c, const mo_node *map, const char *key,
		     char *text, const char *value)
{
	const mo_node *lk = map->items[map->n - 2], *lv = map->items[map->n - 1];
	const char *src = c->doc->src;
	size_t at = export_value_end(c, lv, lk->end), len = c->doc->srclen;
	while (at < len && src[at] != '\n' && src[at] != '\r')
		at++;
	t->start = t->end = at;
	bool nested = value[0] == '\n' || value[0] == '\r'; /* a sub-section's lines */
	snprintf(text, SIZE_BASE_TEXT, "%s%*s%s:%s%s", base_break(c), (int)base_indent(c, map), "",
		 key, nested ? "" : " ", value);
}

/* Sets `key` of section map (named `where` in errors) to the value text
 * (printf format): the value's own bytes replaced when present, a line
 * `key: value` added after the section's last entry otherwise. */
static void base_set(mo_base_edits *e, const mo_node *map, const char *where, const char *key,
		     mo_base_when when, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Notes where.key = value in a recording. */
static void base_note(mo_base_edits *e, const char *where, const char *key, const char *value)
{
	mo_text_edit *t = base_next(e);
	if (!t)
		return;
	snprintf(e->text[e->n - 1], SIZE_BASE_TEXT, "%s", value);
	e->where[e->n - 1] = where;
	e->key[e->n - 1] = key;
	e->deps[e->n - 1] = e->dep;
}

/* Whether recording r noted where.key with this value text (and what it
 * stands for, e->dep). */
static bool base_noted(const mo_base_edits *r, const mo_base_edits *e, const char *where,
		       const char *key, const char *value)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->where[i], where) == 0 && strcmp(r->key[i], key) == 0)
			return strcmp(r->text[i], value) == 0 && r->deps[i] == e->dep;
	return false;
}

static void base_set(mo_base_edits *e, const mo_node *map, const char *where, const char *key,
		     mo_base_when when, const char *fmt, ...)
{
	if (e->failed)
		return;
	char value[SIZE_BASE_TEXT - 128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(value, sizeof value, fmt, ap);
	va_end(ap);
	if (e->record) {
		base_note(e, where, key, value);
		return;
	}
	if (e->same && base_noted(e->same, e, where, key, value))
		return;
	const mo_node *k = NULL;
	const mo_node *v = map ? map_get_kv(map, key, &k) : NULL;
	if (!v && when == BASE_IF_PRESENT)
		return;
	if (v && v->start < k->end) {
		base_fail(e, k, "%s: %s.%s is an alias of a value written elsewhere; "
				"write the value there", where, key);
		return;
	}
	if (!v && (!map || map->flow || map->n == 0)) {
		base_fail(e, map, "%s: no block section %s to add %s to", where, key);
		return;
	}
	mo_text_edit *t = base_next(e);
	if (!t)
		return;
	char *text = e->text[e->n - 1];
	e->where[e->n - 1] = where;
	e->key[e->n - 1] = key;
	if (v)
		base_replace(t, e->c, k, v, text, value);
	else
		base_add(t, e->c, map, key, text, value);
	t->len = strlen(text);
}

/* The offsets that give the estimator's split (the first of the P x V
 * chunks one layer more), as MindSpore Transformers' `offset`: a list of P
 * (V = 1) or V lists of P, each chunk's layers less num_layers / (P x V).
 * False when they do not fit in size. */
static bool base_offsets(char *out, size_t size, const mo_size_cand *c, int64_t layers)
{
	int64_t nv = c->pp * c->vpp, rem = layers % nv;
	size_t at = 0;
	at += (size_t)snprintf(out + at, size - at, c->vpp > 1 ? "[" : "");
	for (int64_t v = 0; v < c->vpp && at < size; v++) {
		at += (size_t)snprintf(out + at, size - at, "%s[", v ? ", " : "");
		for (int64_t p = 0; p < c->pp && at < size; p++)
			at += (size_t)snprintf(out + at, size - at, "%s%d", p ? ", " : "",
					       v * c->pp + p < rem);
		if (at < size)
			at += (size_t)snprintf(out + at, size - at, "]");
	}
	if (at < size)
		at += (size_t)snprintf(out + at, size - at, c->vpp > 1 ? "]" : "");
	return at < size;
}

/* An integer key of a top-level section: the candidate's field, written
 * always, or only above 1 (at 1, the default, replaced when present). */
typedef struct mo_base_int {
	const char *key;
	size_t field; /* offsetof(mo_size_cand, ...) */
	bool always;
} mo_base_int;

static void base_ints(mo_base_edits *e, const char *section, const mo_base_int *keys, size_t n,
		      const mo_size_cand *c)
{
	const mo_node *map = base_section(e->c, section, NULL);
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		memcpy(&v, (const char *)c + keys[i].field, sizeof v);
		base_set(e, map, section, keys[i].key,
			 keys[i].always || v > 1 ? BASE_SET : BASE_IF_PRESENT, "%lld", (long long)v);
	}
}

static const mo_base_int mo_base_graph_ints[] = {
    {"data_parallel", offsetof(mo_size_cand, dp), true},
    {"model_parallel", offsetof(mo_size_cand, tp), true},
    {"pipeline_stage", offsetof(mo_size_cand, pp), true},
    {"context_parallel", offsetof(mo_size_cand, cp), false},
    {"expert_parallel", offsetof(mo_size_cand, ep), false},
};

static const mo_base_int mo_base_pynative_ints[] = {
    {"tensor_parallel", offsetof(mo_size_cand, tp), true},
    {"context_parallel", offsetof(mo_size_cand, cp), true},
    {"pipeline_parallel", offsetof(mo_size_cand, pp), true},
    {"expert_parallel", offsetof(mo_size_cand, ep), false},
    {"pipeline_parallel_interleave_num", offsetof(mo_size_cand, vpp), false},
};

/* parallel.pipeline_config.pipeline_interleave on (the import reads
 * pp_interleave_num only then); the sub-section added when absent. */
static void base_interleave(mo_base_edits *e, const mo_node *par)
{
	const mo_node *pl = base_section(e->c, "parallel", "pipeline_config");
	if (pl) {
		base_set(e, pl, "parallel.pipeline_config", "pipeline_interleave", BASE_SET, "%s",
			 base_bool(map_get(pl, "pipeline_interleave"), true));
		return;
	}
	size_t indent = par && par->n ? base_indent(e->c, par) : 0;
	base_set(e, par, "parallel", "pipeline_config", BASE_SET, "%s%*spipeline_interleave: True",
		 base_break(e->c), (int)indent + 2, "");
}

static void base_graph(mo_base_edits *e, const mo_size_cand *c, const mo_model *m)
{
	const mo_config *f = e->c;
	const mo_node *pc = base_section(f, "parallel_config", NULL);
	base_ints(e, "parallel_config", mo_base_graph_ints, sizeof mo_base_graph_ints / sizeof *mo_base_graph_ints, c);
	/* the micro-batches are the pipeline's with PP, the accumulation steps'
	 * without (below): never both, or the batch would count them twice */
	base_set(e, pc, "parallel_config", "micro_batch_num", BASE_SET, "%lld",
		 (long long)(c->pp > 1 ? c->mbn : 1));
	base_set(e, pc, "parallel_config", "use_seq_parallel", c->sp ? BASE_SET : BASE_IF_PRESENT, "%s",
		 base_bool(pc ? map_get(pc, "use_seq_parallel") : NULL, c->sp));

	const mo_node *rc = base_section(f, "runner_config", NULL);
	base_set(e, rc, "runner_config", "batch_size", BASE_SET, "%lld", (long long)c->mbs);
	int64_t ga = c->pp > 1 ? 1 : c->mbn;
	base_set(e, rc, "runner_config", "gradient_accumulation_steps",
		 ga > 1 ? BASE_SET : BASE_IF_PRESENT, "%lld", (long long)ga);

	const mo_node *par = base_section(f, "parallel", NULL);
	base_set(e, par, "parallel", "enable_parallel_optimizer",
		 c->dopt ? BASE_SET : BASE_IF_PRESENT, "%s",
		 base_bool(par ? map_get(par, "enable_parallel_optimizer") : NULL, c->dopt));

	const mo_node *mc = base_section(f, "model", "model_config");
	char off[SIZE_BASE_TEXT - 128];
	bool uneven = m->num_layers % (c->pp * c->vpp) != 0;
	if (uneven && !base_offsets(off, sizeof off, c, m->num_layers)) {
		base_fail(e, mc, "%s: the offset list of %s is longer than %s characters", "the layout",
			  "8,000");
		return;
	}
	e->dep = model_mul(c->pp, c->vpp); /* an even split's list has one entry a chunk */
	base_set(e, mc, "model.model_config", "offset", uneven ? BASE_SET : BASE_IF_PRESENT, "%s",
		 uneven ? off : "0");
	e->dep = 0;
	base_set(e, mc, "model.model_config", "pp_interleave_num",
		 c->vpp > 1 ? BASE_SET : BASE_IF_PRESENT, "%lld", (long long)c->vpp);
	if (c->vpp > 1)
		base_interleave(e, par);
}

static void base_pynative(mo_base_edits *e, const mo_size_cand *c, int64_t global_batch)
{
	const mo_config *f = e->c;
	const mo_node *pa = base_section(f, "parallelism", NULL);
	const char *pn = "parallelism";
	base_ints(e, pn, mo_base_pynative_ints, sizeof mo_base_pynative_ints / sizeof *mo_base_pynative_ints, c);
	/* null: the estimator's split, as the file's own reader takes it */
	e->dep = model_mul(c->pp, c->vpp); /* a list names one count a chunk */
	base_set(e, pa, pn, "pipeline_parallel_layers_per_stage", BASE_IF_PRESENT, "null");
	e->dep = 0;
	/* -1: the whole data-parallel group, which every searched layout shards over */
	const mo_node *dps = pa ? map_get(pa, "data_parallel_shard") : NULL;
	bool minus_one = !e->as_file || (dps && dps->kind == MO_NODE_SCALAR && dps->value &&
					 strcmp(dps->value, "-1") == 0);
	base_set(e, pa, pn, "data_parallel_shard", BASE_SET, "%lld",
		 c->dps == c->dp && minus_one ? -1LL : (long long)c->dps);

	const mo_node *tr = base_section(f, "training", NULL);
	const char *mbs_key = tr && map_get(tr, "micro_batch_size") ? "micro_batch_size"
								   : "local_batch_size";
	base_set(e, tr, "training", mbs_key, BASE_SET, "%lld", (long long)c->mbs);
	base_set(e, tr, "training", "global_batch_size", BASE_SET, "%lld",
		 (long long)global_batch);
}

int size_base_check(const mo_config *base, mo_error *err)
{
	const mo_node *root = base && base->doc ? base->doc->root : NULL;
	if (!root || root->kind != MO_NODE_MAP || root->flow || !base->training_yaml ||
	    (!map_get(root, "parallelism") && !map_get(root, "parallel_config"))) {
		error_set(err, MO_ERR_USAGE, 0, 0,
			  "base: not a MindSpore Transformers training YAML in block style "
			  "(it needs a parallel_config or a parallelism section)");
		return -1;
	}
	return 0;
}

char *size_base_rewrite(const mo_config *base, const mo_model *m, const mo_size_cand *c,
			int64_t global_batch, const char *plan_yaml, mo_error *err)
{
	mo_config *plan = NULL;
	char *out = NULL;
	mo_base_edits *e = calloc(1, sizeof *e);
	if (!e) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return NULL;
	}
	e->c = base;
	e->what = "base";
	e->err = err;
	if (config_graph_is_pynative(base->doc->root))
		base_pynative(e, c, global_batch);
	else
		base_graph(e, c, m);
	if (!e->failed &&
	    mo_config_parse(&plan, NULL, plan_yaml, strlen(plan_yaml), "<plan>", NULL, err) == 0)
		export_rewrite(&out, NULL, base, plan, e->v, e->n, err);
	mo_config_free(plan);
	free(e);
	return out;
}

/* ---- export: the layout a model was priced with, in the file's own keys ---- */

/* The model's layout as a candidate of the search (the writer's input). */
static void base_cand_of(mo_size_cand *c, const mo_model *m)
{
	*c = (mo_size_cand){.n = m->world_size,
			    .tp = m->tensor_parallel,
			    .cp = m->context_parallel,
			    .pp = m->pipeline_parallel > 0 ? m->pipeline_parallel : 1,
			    .vpp = m->virtual_pipeline > 0 ? m->virtual_pipeline : 1,
			    .ep = m->expert_parallel,
			    .etp = m->expert_tensor_parallel,
			    .dp = m->data_parallel,
			    .dps = m->data_parallel_shard,
			    .mbs = m->micro_batch_size,
			    .mbn = m->micro_batch_num,
			    .sp = m->sequence_parallel,
			    .dopt = m->distributed_optimizer};
}

/* The keys of layout m into e: graph mode's or PyNative's. A PyNative
 * file states the batch as global_batch_size, which MindSpore
 * Transformers splits into micro-batches per data-parallel rank: micro
 * batch x DP x micro-batches (model_derive_batches reads it back). */
static void base_layout(mo_base_edits *e, const mo_model *m)
{
	mo_size_cand c;
	base_cand_of(&c, m);
	if (config_graph_is_pynative(e->c->doc->root))
		base_pynative(e, &c, model_mul(model_mul(c.mbs, c.dp), c.mbn));
	else
		base_graph(e, &c, m);
}

/* The edits that write m's layout where it differs from own's (the
 * layout the file states): own's keys recorded first, then m's written
 * where the value text differs. */
static int base_layout_edits(mo_base_edits *rec, mo_base_edits *e, const mo_model *own,
			     const mo_model *m)
{
	rec->record = true;
	base_layout(rec, own);
	e->same = rec;
	if (!rec->failed)
		base_layout(e, m);
	return rec->failed || e->failed ? -1 : 0;
}

int mo_export_run(char **out, size_t *out_len, const mo_config *c, const mo_model *m,
		  mo_error *err)
{
	if (!out || !c || !m) {
		error_set(err, MO_ERR_USAGE, 0, 0, "export: NULL argument");
		return -1;
	}
	*out = NULL;
	if (out_len)
		*out_len = 0;
	mo_error quiet = {0};
	if (size_base_check(c, &quiet) != 0)
		return 1; /* no layout of its own to write in */
	mo_model *own = NULL;
	int rc = mo_config_model(&own, NULL, c, err);
	if (rc != 0)
		return rc; /* 1: its model is elsewhere, its run read over m */
	mo_base_edits *rec = calloc(1, sizeof *rec), *e = calloc(1, sizeof *e);
	if (!rec || !e) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		rc = -1;
	} else {
		rec->c = e->c = c;
		rec->what = e->what = "export";
		rec->as_file = e->as_file = true;
		rec->err = e->err = err;
		rc = base_layout_edits(rec, e, own, m);
	}
	if (rc == 0)
		rc = e->n ? export_edit(out, out_len, c, e->v, e->n, err) : 1;
	free(rec);
	free(e);
	mo_model_free(own);
	return rc;
}
