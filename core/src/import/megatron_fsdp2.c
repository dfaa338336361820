/* MindSpeed-LLM's FSDP2 launch (`torchrun ... train_fsdp2.py RUN.yaml
 * --section.key value ...`, Ascend/MindSpeed-LLM train_fsdp2.py and
 * mindspeed_llm/fsdp2/ at c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91): its run
 * is the YAML the launch names first, read from the launch directory (the
 * MindSpeed-LLM checkout the script runs from), with the `--section.key`
 * words after it over it; its model is the Hugging Face directory
 * model.model_name_or_path names. Read as the trainer reads them
 * (mindspeed_llm/fsdp2/utils/arguments.py fsdp2_parse_args:848-881:
 * `_load_yaml_if_provided` opens os.path.abspath(argv[1]) when it ends in
 * .yaml / .yml, :1042-1048; `_merge_yaml_into_cmd_args` appends each YAML key
 * as `--section.key value` unless the command line gives it, :1054-1077, so
 * the command line wins), and mapped onto memopt's FSDP model: fully_shard
 * over the whole world (parallel_state.py:93-98: data_parallel_size must be 1
 * and fully_shard_parallel_size the world size), parameters, gradients and
 * optimizer states sharded, a layer's parameters gathered for its compute. */
#include "import/megatron_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The keys of the run that change memory, with the dataclass field that
 * holds each and its default (arguments.py at c77308a1). */
enum fsdp2_key {
	FK_MODEL_PATH,	/* ModelArguments.model_name_or_path, required (:28-30) */
	FK_QUANT,	/* ModelArguments.quant_recipe_name, None (:129-132) */
	FK_CUTOFF,	/* DataArguments.cutoff_len, 2048 (:193-196) */
	FK_PACKING,	/* DataArguments.packing, False (:253-256; cutoff_len - 1, :363-364) */
	FK_TP,		/* ParallelArguments.tp_size, 1 (:376) */
	FK_FSDP,	/* fsdp_size, 1 (:377) */
	FK_RECOMPUTE,	/* recompute, False (:378-380) */
	FK_EP,		/* ep_size, 1 (:382) */
	FK_EP_FSDP,	/* ep_fsdp_size, 1 (:383) */
	FK_CP,		/* cp_size, 1 (:384) */
	FK_CP_TYPE,	/* cp_type, ulysses (:385-388) */
	FK_FSDP_MODULES, /* fsdp_modules, layers + embed_tokens + lm_head (:389-392) */
	FK_IGNORED,	/* ignored_modules, None (:393-396) */
	FK_RESHARD,	/* reshard_after_forward, True (:397-400) */
	FK_RECOMPUTE_MODULES, /* recompute_modules, ['model.layers.{*}'] (:440-443) */
	FK_PARAM_DTYPE,	/* param_dtype, bf16 (:444-446) */
	FK_REDUCE_DTYPE, /* reduce_dtype, fp32 (:447-452) */
	FK_CHUNK,	/* enable_chunk_batch, False (:465-472) */
	FK_OPTIMIZER,	/* TrainingArguments.optimizer, adamw (:518-521) */
	FK_GAS,		/* gradient_accumulation_steps, 1 (:544-546) */
	FK_MBS,		/* per_device_train_batch_size, 8 (:625-627) */
	FK_COUNT
};

static const struct {
	const char *section, *key, *fallback;
} fsdp2_keys[FK_COUNT] = {
	[FK_MODEL_PATH] = {"model", "model_name_or_path", NULL},
	[FK_QUANT] = {"model", "quant_recipe_name", NULL},
	[FK_CUTOFF] = {"data", "cutoff_len", "2048"},
	[FK_PACKING] = {"data", "packing", "False"},
	[FK_TP] = {"parallel", "tp_size", "1"},
	[FK_FSDP] = {"parallel", "fsdp_size", "1"},
	[FK_RECOMPUTE] = {"parallel", "recompute", "False"},
	[FK_EP] = {"parallel", "ep_size", "1"},
	[FK_EP_FSDP] = {"parallel", "ep_fsdp_size", "1"},
	[FK_CP] = {"parallel", "cp_size", "1"},
	[FK_CP_TYPE] = {"parallel", "cp_type", "ulysses"},
	[FK_FSDP_MODULES] = {"parallel", "fsdp_modules",
			     "model.layers.{*} model.embed_tokens lm_head"},
	[FK_IGNORED] = {"parallel", "ignored_modules", NULL},
	[FK_RESHARD] = {"parallel", "reshard_after_forward", "True"},
	[FK_RECOMPUTE_MODULES] = {"parallel", "recompute_modules", "model.layers.{*}"},
	[FK_PARAM_DTYPE] = {"parallel", "param_dtype", "bf16"},
	[FK_REDUCE_DTYPE] = {"parallel", "reduce_dtype", "fp32"},
	[FK_CHUNK] = {"parallel", "enable_chunk_batch", "False"},
	[FK_OPTIMIZER] = {"training", "optimizer", "adamw"},
	[FK_GAS] = {"training", "gradient_accumulation_steps", "1"},
	[FK_MBS] = {"training", "per_device_train_batch_size", "8"},
};

/* One key's value as the trainer's argparse sees it (a YAML list's items
 * joined by spaces, as `_merge_yaml_into_cmd_args` passes them), where it
 * was given (file NULL: the default). */
struct fsdp2_value {
	const char *text;
	const char *file;
	int line, column;
};

struct mo_fsdp2_run {
	struct fsdp2_value v[FK_COUNT];
	const char *yaml;      /* the path the launch names, NULL: none */
	const char *yaml_why;  /* why it was not read, NULL when read */
	int yaml_line, yaml_column;
	int line, column;      /* train_fsdp2.py */
	int64_t world;         /* the launcher's device count, 0: unknown */
	const char *world_from;
	const char *config_json; /* model_name_or_path's config.json, when read */
	const char *config_json_why;
};

/* Out of memory: the reader stops (its caller returns -1). */
static void fsdp2_nomem(struct mo_megatron_import *g)
{
	if (!g->failed)
		error_set(g->err, MO_ERR_NOMEM, 0, 0, "out of memory");
	g->failed = true;
}

static bool fsdp2_ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

static enum fsdp2_key fsdp2_key_of(const char *section, size_t sn, const char *key, size_t kn)
{
	for (int k = 0; k < FK_COUNT; k++)
		if (strlen(fsdp2_keys[k].section) == sn && strlen(fsdp2_keys[k].key) == kn &&
		    memcmp(fsdp2_keys[k].section, section, sn) == 0 &&
		    memcmp(fsdp2_keys[k].key, key, kn) == 0)
			return (enum fsdp2_key)k;
	return FK_COUNT;
}

bool megatron_is_fsdp2(const struct megatron_word *w)
{
	const char *base = strrchr(w->text, '/');
	base = base ? base + 1 : w->text;
	return strcmp(base, "train_fsdp2.py") == 0;
}

/* The words after the script: `--section.key value...` or
 * `--section.key=value` (argparse's last occurrence wins). */
static void fsdp2_read_words(struct mo_megatron_import *g, struct mo_fsdp2_run *r, size_t first)
{
	for (size_t i = first; i < g->n_words && !g->failed; i++) {
		const struct megatron_word *w = &g->words[i];
		const char *t = w->text;
		if (t[0] != '-' || t[1] != '-')
			continue;
		const char *dot = strchr(t + 2, '.');
		const char *eq = strchr(t + 2, '=');
		if (!dot || (eq && eq < dot))
			continue;
		size_t kn = eq ? (size_t)(eq - dot - 1) : strlen(dot + 1);
		enum fsdp2_key k = fsdp2_key_of(t + 2, (size_t)(dot - t - 2), dot + 1, kn);
		if (k == FK_COUNT)
			continue;
		mo_buf b;
		buf_init(&b, 0);
		if (eq)
			buf_puts(&b, eq + 1);
		for (size_t j = i + 1; !eq && j < g->n_words && g->words[j].text[0] != '-'; j++)
			buf_printf(&b, "%s%s", j > i + 1 ? " " : "", g->words[j].text);
		char *text = b.failed ? NULL : arena_strndup(g->arena, b.data ? b.data : "", b.len);
		buf_free(&b);
		if (!text) {
			fsdp2_nomem(g);
			return;
		}
		r->v[k] = (struct fsdp2_value){text, g->file, w->line, w->column};
	}
}

/* A YAML value as argparse receives it: a scalar's text, a list's items
 * joined by spaces; NULL for a null or a mapping (a mapping is JSON text
 * there, which none of the keys read takes). */
static char *fsdp2_node_text(mo_arena *a, const mo_node *v)
{
	if (v->kind == MO_NODE_SCALAR)
		return model_is_null(v) ? NULL : arena_strndup(a, v->value, v->len);
	if (v->kind != MO_NODE_SEQ)
		return NULL;
	mo_buf b;
	buf_init(&b, 0);
	for (size_t i = 0; i < v->n; i++)
		if (v->items[i]->kind == MO_NODE_SCALAR)
			buf_printf(&b, "%s%s", b.len ? " " : "", v->items[i]->value);
	char *text = b.failed ? NULL : arena_strndup(a, b.data ? b.data : "", b.len);
	buf_free(&b);
	return text;
}

/* The YAML's keys the command line does not give. */
static void fsdp2_read_doc(struct mo_megatron_import *g, struct mo_fsdp2_run *r, const mo_doc *doc,
			   const char *shown)
{
	const mo_node *root = doc->root;
	for (size_t i = 0; root && root->kind == MO_NODE_MAP && i + 1 < root->n; i += 2) {
		const mo_node *sect = root->items[i], *map = root->items[i + 1];
		if (sect->kind != MO_NODE_SCALAR || map->kind != MO_NODE_MAP)
			continue;
		for (size_t j = 0; j + 1 < map->n; j += 2) {
			const mo_node *key = map->items[j];
			if (key->kind != MO_NODE_SCALAR)
				continue;
			enum fsdp2_key k = fsdp2_key_of(sect->value, sect->len, key->value, key->len);
			if (k == FK_COUNT || r->v[k].file)
				continue;
			char *text = fsdp2_node_text(g->arena, map->items[j + 1]);
			if (text)
				r->v[k] = (struct fsdp2_value){text, shown, key->line, key->column};
		}
	}
}

/* Why a path the launch names cannot be opened, NULL when it may. */
static const char *fsdp2_refusal(const struct mo_megatron_import *g, const char *path)
{
	if (!g->launch_dir)
		return "this caller opens no files";
	if (strchr(path, '$') || strchr(path, '`'))
		return "its path is a shell expansion this reader does not know";
	return NULL;
}

/* A file of the launch directory, whole, into *text (malloc'd), or why not. */
static const char *fsdp2_open(struct mo_megatron_import *g, const char *path, const char *name,
			      char **text, size_t *len)
{
	*text = NULL;
	const char *why = fsdp2_refusal(g, path);
	if (why)
		return why;
	char *full = file_join(g->launch_dir, path, name);
	if (!full)
		return "out of memory";
	enum file_read_status status;
	*text = file_read_bounded(full, g->max_bytes, len, &status, &why);
	free(full);
	return *text ? NULL : why ? why : "not read";
}

static void fsdp2_read_yaml(struct mo_megatron_import *g, struct mo_fsdp2_run *r)
{
	char *text = NULL;
	size_t len = 0;
	r->yaml_why = fsdp2_open(g, r->yaml, NULL, &text, &len);
	if (!text) {
		mo_diag *d = diags_add(g->diags, MO_SEV_WARNING, "megatron-script", g->file,
				       r->yaml_line, r->yaml_column, NULL,
					   "the run's YAML %.200s is not read (%s): its keys are "
					   "left at MindSpeed-LLM's defaults, the command line's "
					   "--section.key words read",
					   r->yaml, r->yaml_why);
		if (d && g->launch_dir)
			diag_set_hint(g->diags, d,
				      "train_fsdp2.py opens it from the directory it runs in "
				      "(the MindSpeed-LLM checkout): run memopt from there");
		return;
	}
	mo_doc *doc = NULL;
	mo_limits lim;
	mo_limits_default(&lim);
	int rc = yaml_tree_parse(&doc, g->diags, text, len, r->yaml, &lim, g->err);
	free(text);
	if (rc < 0) {
		g->failed = true;
		return;
	}
	if (rc == 0 && doc)
		fsdp2_read_doc(g, r, doc, r->yaml);
	else
		r->yaml_why = "it does not parse";
	doc_free(doc);
}

static const char *fsdp2_text(const struct mo_fsdp2_run *r, enum fsdp2_key k)
{
	return r->v[k].text ? r->v[k].text : fsdp2_keys[k].fallback;
}

/* argparse's int(): the whole text a decimal integer; fallback otherwise. */
static int64_t fsdp2_int(const struct mo_fsdp2_run *r, enum fsdp2_key k)
{
	const char *t = fsdp2_text(r, k);
	char *end = NULL;
	long long v = t ? strtoll(t, &end, 10) : 0;
	if (!t || end == t || *end || v < 1 || v > (1LL << 40))
		return strtoll(fsdp2_keys[k].fallback, NULL, 10);
	return v;
}

/* `_string_to_bool` (arguments.py:768-778), the fallback for any other text. */
static bool fsdp2_bool(const struct mo_fsdp2_run *r, enum fsdp2_key k)
{
	static const char *const yes[] = {"yes", "true", "t", "y", "1"};
	const char *t = fsdp2_text(r, k);
	for (size_t i = 0; t && i < sizeof yes / sizeof *yes; i++)
		if (strcasecmp(t, yes[i]) == 0)
			return true;
	return false;
}

static bool fsdp2_is(const struct mo_fsdp2_run *r, enum fsdp2_key k, const char *v)
{
	const char *t = fsdp2_text(r, k);
	return t && strcmp(t, v) == 0;
}

/* A warning at a key the run gave (nothing for a default). */
static void fsdp2_say(struct mo_megatron_import *g, const struct mo_fsdp2_run *r,
		      enum fsdp2_key k, mo_severity sev, const char *code, const char *what)
{
	const struct fsdp2_value *v = &r->v[k];
	int line = v->file ? v->line : r->line, column = v->file ? v->column : r->column;
	const char *file = v->file ? v->file : g->file;
	mo_diag *d = diags_add(g->diags, sev, code, file, line, column, NULL, "%s.%s %s: %s",
			       fsdp2_keys[k].section, fsdp2_keys[k].key,
			       v->text ? v->text : "(default)", what);
	if (d && !v->file)
		diag_set_hint(g->diags, d, "MindSpeed-LLM's default (mindspeed_llm/fsdp2/utils/"
					   "arguments.py)");
}

/* The keys memopt does not price as the trainer runs them: `unmodelled`
 * where they are given (or, for a default that matters, at the script). */
static void fsdp2_unmodelled(struct mo_megatron_import *g, const struct mo_fsdp2_run *r)
{
	int64_t world = r->world, ep = fsdp2_int(r, FK_EP), epf = fsdp2_int(r, FK_EP_FSDP);
	if (r->v[FK_QUANT].file)
		fsdp2_say(g, r, FK_QUANT, MO_SEV_WARNING, "unmodelled",
			  "low-precision (MXFP8) linears and FSDP all-gathers are not modelled: the "
			  "estimate prices the param_dtype compute");
	if (!fsdp2_is(r, FK_FSDP_MODULES, fsdp2_keys[FK_FSDP_MODULES].fallback))
		fsdp2_say(g, r, FK_FSDP_MODULES, MO_SEV_WARNING, "unmodelled",
			  "memopt shards every parameter (the default fsdp_modules: model.layers.{*}, "
			  "model.embed_tokens, lm_head); other modules are not modelled");
	if (r->v[FK_IGNORED].file)
		fsdp2_say(g, r, FK_IGNORED, MO_SEV_WARNING, "unmodelled",
			  "modules left out of FSDP stay whole on every device; memopt shards them");
	if (!fsdp2_bool(r, FK_RESHARD) && r->v[FK_RESHARD].file)
		fsdp2_say(g, r, FK_RESHARD, MO_SEV_WARNING, "unmodelled",
			  "each layer's gathered parameters are kept from its forward to its "
			  "backward; memopt gathers one layer at a time");
	if (fsdp2_bool(r, FK_CHUNK))
		fsdp2_say(g, r, FK_CHUNK, MO_SEV_WARNING, "unmodelled",
			  "ChunkMBS splits each micro-batch inside one unshard; not modelled");
	if (!fsdp2_is(r, FK_REDUCE_DTYPE, "fp32"))
		fsdp2_say(g, r, FK_REDUCE_DTYPE, MO_SEV_WARNING, "unmodelled",
			  "the gradients are reduce-scattered in this dtype; memopt keeps the "
			  "sharded gradients in float32, the sharded parameters' dtype "
			  "(model_loader.py loads the model in float32)");
	if (fsdp2_int(r, FK_CP) > 1 && !fsdp2_is(r, FK_CP_TYPE, "ulysses"))
		fsdp2_say(g, r, FK_CP_TYPE, MO_SEV_WARNING, "unmodelled",
			  "priced as a sequence split over cp_size ranks; this context-parallel "
			  "attention's exchange buffers are not modelled");
	if (ep > 1 && world > 0 && ep * epf != world)
		fsdp2_say(g, r, FK_EP_FSDP, MO_SEV_WARNING, "unmodelled",
			  "the experts are replicated over world / (ep_size x ep_fsdp_size) ranks "
			  "(model_factory.py:192 edp_size); memopt shards each rank's experts over "
			  "world / ep_size ranks, so it prices less expert memory than the run holds");
	/* the sizes are known when given, or when no YAML was left unread */
	bool known = !r->yaml || !r->yaml_why;
	if (fsdp2_int(r, FK_TP) > 1 && (known || r->v[FK_TP].file))
		fsdp2_say(g, r, FK_TP, MO_SEV_ERROR, "parallel",
			  "tensor parallel beside FSDP over the whole world does not fit the device "
			  "mesh (parallel_state.py:66-98: dp x fsdp x tp devices, fsdp = world)");
	if (r->world > 0 && fsdp2_int(r, FK_FSDP) != r->world && (known || r->v[FK_FSDP].file))
		fsdp2_say(g, r, FK_FSDP, MO_SEV_ERROR, "parallel",
			  "MindSpeed-LLM's FSDP2 trainer requires fsdp_size = the world size "
			  "(parallel_state.py:97-98)");
}

/* The run's recompute: a memopt config, not the model (as the Megatron
 * reader says of --recompute-granularity). */
static void fsdp2_recompute(struct mo_megatron_import *g, const struct mo_fsdp2_run *r,
			    int64_t layers)
{
	if (!fsdp2_bool(r, FK_RECOMPUTE))
		return;
	if (!fsdp2_is(r, FK_RECOMPUTE_MODULES, "model.layers.{*}")) {
		fsdp2_say(g, r, FK_RECOMPUTE_MODULES, MO_SEV_WARNING, "unmodelled",
			  "only whole-layer recompute (model.layers.{*}) maps onto a memopt config");
		return;
	}
	const struct fsdp2_value *v = &r->v[FK_RECOMPUTE];
	mo_diag *d = diags_add(g->diags, MO_SEV_WARNING, "megatron-recompute",
			       v->file ? v->file : g->file, v->file ? v->line : r->line,
			       v->file ? v->column : r->column, NULL,
			       "parallel.recompute True over model.layers.{*} (fsdp_turbo's "
			       "recompute_modules: every layer recomputed): recompute belongs in the "
			       "memopt config, not the model file; the estimate of this file alone "
			       "recomputes nothing");
	if (d && layers > 0)
		diag_set_hint(g->diags, d,
			      "the config that does the same: recompute: {mode: full, "
			      "full_recompute_layer: [0-%lld]}",
			      (long long)layers - 1);
	else if (d)
		diag_set_hint(g->diags, d, "the config that does the same: recompute: {mode: full}");
}

/* The launch's run into g->fsdp2: the YAML, the command line over it. */
void megatron_fsdp2_read(struct mo_megatron_import *g, size_t script)
{
	struct mo_fsdp2_run *r = arena_alloc(g->arena, sizeof *r);
	if (!r) {
		fsdp2_nomem(g);
		return;
	}
	memset(r, 0, sizeof *r);
	const struct megatron_word *w = &g->words[script];
	r->line = w->line;
	r->column = w->column;
	size_t first = script + 1;
	if (first < g->n_words && (fsdp2_ends_with(g->words[first].text, ".yaml") ||
				   fsdp2_ends_with(g->words[first].text, ".yml"))) {
		r->yaml = g->words[first].text;
		r->yaml_line = g->words[first].line;
		r->yaml_column = g->words[first].column;
		first++;
	}
	fsdp2_read_words(g, r, first);
	if (r->yaml && !g->failed)
		fsdp2_read_yaml(g, r);
	if (g->launcher_procs > 0)
		r->world = model_mul(g->launcher_procs, g->launcher_nodes > 0 ? g->launcher_nodes : 1);
	r->world_from = "torchrun --nproc-per-node x --nnodes";
	g->fsdp2 = r;
}

/* What of the run was read, for the model-needed error. */
static void fsdp2_summary(const struct mo_fsdp2_run *r, mo_buf *b)
{
	if (r->world > 0)
		buf_printf(b, "%lld devices (%s)", (long long)r->world, r->world_from);
	else
		buf_puts(b, "no device count");
	buf_printf(b, ", fsdp_size %s, ep_size %s, ep_fsdp_size %s, cp_size %s, cutoff_len %s, "
		      "per_device_train_batch_size %s, gradient_accumulation_steps %s, optimizer %s, "
		      "recompute %s",
		   fsdp2_text(r, FK_FSDP), fsdp2_text(r, FK_EP), fsdp2_text(r, FK_EP_FSDP),
		   fsdp2_text(r, FK_CP), fsdp2_text(r, FK_CUTOFF), fsdp2_text(r, FK_MBS),
		   fsdp2_text(r, FK_GAS), fsdp2_text(r, FK_OPTIMIZER), fsdp2_text(r, FK_RECOMPUTE));
	if (r->yaml)
		buf_printf(b, "; the YAML %.200s %s", r->yaml, r->yaml_why ? "not read" : "read");
	else
		buf_puts(b, "; no YAML (the command line alone)");
}

void megatron_fsdp2_model_needed(struct mo_megatron_import *g)
{
	const struct mo_fsdp2_run *r = g->fsdp2;
	mo_buf b;
	buf_init(&b, 0);
	fsdp2_summary(r, &b);
	const char *dir = r->v[FK_MODEL_PATH].text;
	mo_diag *d = diags_add(
	    g->diags, MO_SEV_ERROR, "model-needed", g->file, r->line, r->column, "model",
	    "train_fsdp2.py is MindSpeed-LLM's FSDP2 trainer: its model is the Hugging Face "
	    "directory --model.model_name_or_path names (%.200s%s%.100s); the run read: %.600s",
	    dir ? dir : "not given here", r->config_json_why ? ": its config.json not read, " : "",
	    r->config_json_why ? r->config_json_why : "", b.failed ? "" : b.data);
	buf_free(&b);
	if (d)
		diag_set_hint(g->diags, d,
			      "give the model as for any command: --model with that directory's "
			      "config.json or a preset (memopt presets)");
	fsdp2_unmodelled(g, r);
	fsdp2_recompute(g, r, 0);
}

static const char *fsdp2_dtype(const struct mo_fsdp2_run *r)
{
	if (fsdp2_is(r, FK_PARAM_DTYPE, "fp16"))
		return "float16";
	if (fsdp2_is(r, FK_PARAM_DTYPE, "fp32"))
		return "float32";
	return "bfloat16";
}

/* Marks field f as the run's, at the key that gave it (or the script). */
static void fsdp2_mark(mo_model *m, const struct mo_megatron_import *g,
		       const struct mo_fsdp2_run *r, enum mo_mf f, enum fsdp2_key k)
{
	const struct fsdp2_value *v = k < FK_COUNT ? &r->v[k] : NULL;
	bool given = v && v->file;
	char *path = k < FK_COUNT ? arena_printf(m->arena, "%s.%s", fsdp2_keys[k].section,
						 fsdp2_keys[k].key)
				  : NULL;
	char *file = arena_strdup(m->arena, given ? v->file : g->file);
	m->ext->set[f] = true;
	m->ext->assumed_from[f] = NULL;
	m->ext->pos[f] = (struct mo_model_pos){given ? v->line : r->line,
					       given ? v->column : r->column, path, file};
}

/* The run over the model: memopt's FSDP (data_parallel_shard) over the whole
 * world, as MindSpeed-LLM builds it. */
static void fsdp2_apply(mo_model *m, const struct mo_megatron_import *g,
			const struct mo_fsdp2_run *r, int64_t world)
{
	int64_t cp = fsdp2_int(r, FK_CP), ep = fsdp2_int(r, FK_EP);
	m->framework = "pytorch";
	/* Hugging Face modules in eager PyTorch, no Transformer Engine */
	m->transformer_impl = "local";
	m->gradient_accumulation_fusion = false;
	m->world_size = world;
	/* the dp_fsdp x cp mesh (parallel_state.py:86-91): FSDP over the whole
	 * world, the sequence split over cp; memopt's FSDP divides by
	 * data_parallel_shard x CP */
	m->data_parallel = m->data_parallel_shard = world > 0 && world % cp == 0 ? world / cp : 1;
	m->context_parallel = cp;
	m->tensor_parallel = m->pipeline_parallel = m->virtual_pipeline = 1;
	m->expert_parallel = m->num_moe_experts > 0 ? ep : 1;
	m->expert_tensor_parallel = 1;
	m->sequence_parallel = false;
	m->distributed_optimizer = false;
	m->stage_layers = NULL;
	m->n_stage_layers = 0;
	m->seq_length = fsdp2_int(r, FK_CUTOFF) - (fsdp2_bool(r, FK_PACKING) ? 1 : 0);
	m->micro_batch_size = fsdp2_int(r, FK_MBS);
	m->micro_batch_num = fsdp2_int(r, FK_GAS);
	m->ext->global_batch_size = 0;
	m->ext->mbn_derived = false;
	m->optimizer = fsdp2_is(r, FK_OPTIMIZER, "muon") ? "muon" : "adamw";
	/* fully_shard's MixedPrecisionPolicy: the model is loaded in float32
	 * (model_loader.py:117-135), gathered and computed in param_dtype; the
	 * sharded gradients take the parameters' dtype */
	m->params_dtype = "float32";
	m->grads_dtype = "float32";
	m->compute_dtype = fsdp2_dtype(r);
	m->ext->dp_follows_devices = false;
	m->ext->devices_unsaid = world <= 0;
	fsdp2_mark(m, g, r, MF_FRAMEWORK, FK_COUNT);
	fsdp2_mark(m, g, r, MF_WORLD, FK_COUNT);
	fsdp2_mark(m, g, r, MF_DP, FK_FSDP);
	fsdp2_mark(m, g, r, MF_DP_SHARD, FK_FSDP);
	fsdp2_mark(m, g, r, MF_CP, FK_CP);
	fsdp2_mark(m, g, r, MF_EP, FK_EP);
	fsdp2_mark(m, g, r, MF_SEQ, FK_CUTOFF);
	fsdp2_mark(m, g, r, MF_MBS, FK_MBS);
	fsdp2_mark(m, g, r, MF_MBN, FK_GAS);
	fsdp2_mark(m, g, r, MF_OPT, FK_OPTIMIZER);
	fsdp2_mark(m, g, r, MF_CDTYPE, FK_PARAM_DTYPE);
}

/* model_name_or_path's config.json from the launch directory, as
 * transformers' AutoConfig.from_pretrained opens a local directory. */
static int fsdp2_model_dir(mo_model **out, struct mo_megatron_import *g, struct mo_fsdp2_run *r)
{
	const char *dir = r->v[FK_MODEL_PATH].text;
	if (!dir || !*dir) {
		r->config_json_why = "no directory given";
		return 1;
	}
	char *text = NULL;
	size_t len = 0;
	const char *tail = dir[strlen(dir) - 1] == '/' ? "config.json" : "/config.json";
	r->config_json_why = fsdp2_open(g, dir, "config.json", &text, &len);
	if (!text)
		return 1;
	char *name = arena_printf(g->arena, "%s%s", dir, tail);
	mo_doc *doc = NULL;
	mo_limits lim;
	mo_limits_default(&lim);
	int rc = name ? json_parse(&doc, g->diags, text, len, name, &lim, g->err) : -1;
	free(text);
	if (rc == 0 && doc)
		rc = model_from_doc(out, g->diags, doc, g->err);
	else if (rc > 0)
		r->config_json_why = "it does not parse";
	if (rc == 1 && !r->config_json_why)
		r->config_json_why = "it holds no model";
	doc_free(doc);
	return rc;
}

int mo_fsdp2_detect(const char *text, size_t len)
{
	static const char name[] = "train_fsdp2.py";
	if (!text || len < sizeof name - 1)
		return 0;
	for (size_t i = 0; i + sizeof name - 1 <= len; i++)
		if (memcmp(text + i, name, sizeof name - 1) == 0)
			return 1;
	return 0;
}

/* DeepSeek-V4's hybrid attention (its config.json's model_type, read as
 * dsv4_hybrid) runs here as MindSpeed-LLM's own PyTorch module
 * (mindspeed_llm/fsdp2/models/deepseek_v4/modeling_deepseek_v4.py at
 * c77308a1); memopt's op table of that attention is MindSpore
 * Transformers' only, so the run is priced with the MLA its keys give, as a
 * Megatron launch of the same model is (megatron_dsv4.c), and says so. */
static void fsdp2_hybrid_attention(mo_model *m, struct mo_megatron_import *g,
				   const struct mo_fsdp2_run *r)
{
	if (!m->dsv4_hybrid)
		return;
	m->dsv4_hybrid = false;
	mo_diag *d = diags_add(
	    g->diags, MO_SEV_WARNING, "unmodelled", g->file, r->line, r->column, "model",
	    "the model's DeepSeek-V4 hybrid attention (compressed sparse attention, its "
	    "indexer and grouped output projection, MindSpeed-LLM's modeling_deepseek_v4.py) "
	    "is priced as the MLA of the same head widths: memopt's op table of that "
	    "attention is MindSpore Transformers' only");
	if (d)
		diag_set_hint(g->diags, d,
			      "the weights and activations of the compressors and the indexer are "
			      "left out, and the MLA's are counted in their place");
}

int megatron_fsdp2_build(mo_model **out, struct mo_megatron_import *g, const mo_model *arch,
		       int64_t devices)
{
	struct mo_fsdp2_run *r = g->fsdp2;
	mo_model *m = NULL;
	int rc = 0;
	if (arch) {
		m = model_copy(arch);
		rc = m ? 0 : -1;
	} else {
		rc = fsdp2_model_dir(&m, g, r);
	}
	if (rc != 0) {
		if (rc == 1)
			megatron_fsdp2_model_needed(g);
		return rc;
	}
	int64_t world = r->world > 0 ? r->world : devices;
	if (r->world <= 0 && devices > 0)
		r->world_from = "--devices";
	r->world = world;
	fsdp2_apply(m, g, r, world);
	fsdp2_hybrid_attention(m, g, r);
	fsdp2_unmodelled(g, r);
	/* fully_shard's MixedPrecisionPolicy (model_factory.py:170-174 passes
	 * param_dtype / reduce_dtype into the FSDP plan): each layer is
	 * all-gathered in param_dtype from its float32 shards and its unsharded
	 * gradients are made in param_dtype; memopt prices the gathered layer and
	 * the unsharded gradients in the shards' dtype */
	if (!fsdp2_is(r, FK_PARAM_DTYPE, "fp32"))
		fsdp2_say(g, r, FK_PARAM_DTYPE, MO_SEV_WARNING, "unmodelled",
			  "fully_shard gathers each layer's parameters in this dtype from the "
			  "float32 shards; memopt prices the gathered layer (and its unsharded "
			  "gradients) in float32, the shards' dtype: up to twice the gathered "
			  "layer's size");
	fsdp2_recompute(g, r, m->num_layers);
	if (model_build_layout(m, g->err) != 0) {
		mo_model_free(m);
		return -1;
	}
	*out = m;
	return 0;
}
