/* The graph-mode training YAML's own model names and rules, as MindSpore
 * Transformers applies them: the legacy `model_config` names (`num_heads`,
 * `n_kv_heads`, `multiple_of`, `ffn_dim_multiplier`, GLM's multi-query
 * groups), `moe_config`, `offset` / `pp_interleave_num` (LayerSetting's
 * stage split), and the published defaults of the model type a
 * `use_legacy: False` file names. Sources: docs/model-import.md. */
#include "import/import_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const mo_node *graph_get(const mo_node *map, const char *key)
{
	return map && map->kind == MO_NODE_MAP ? map_get(map, key) : NULL;
}

/* The type a model_config names: `model_type` (use_legacy: False) or the
 * legacy config class in `type`. */
static const char *graph_type_name(const mo_node *mc)
{
	const mo_node *t = graph_get(mc, "model_type");
	const char *s = t ? model_str(t) : NULL;
	if (!s) {
		t = graph_get(mc, "type");
		s = t ? model_str(t) : NULL;
	}
	return s;
}

/* MindSpore Transformers' config classes of models memopt does not price
 * (it prices decoder-only transformers): what each is. */
static const struct {
	const char *type, *what;
} mo_graph_unsupported[] = {
    {"BertConfig", "BERT, an encoder"},
    {"T5Config", "T5, an encoder-decoder"},
    {"ViTConfig", "a vision transformer"},
    {"ViTMAEConfig", "a masked autoencoder (vision)"},
    {"SwinConfig", "a Swin vision transformer"},
    {"CLIPConfig", "CLIP (vision and text encoders)"},
    {"WhisperConfig", "Whisper, a speech encoder-decoder"},
    {"Blip2Config", "BLIP-2, a vision-language model"},
    {NULL, NULL}};

/* A model_config of such a class: an `unsupported` error at its type. */
static void graph_check_supported(struct mo_rd *r, const mo_node *mc, const char *tn)
{
	const mo_node *t = graph_get(mc, "type");
	for (size_t i = 0; tn && t && mo_graph_unsupported[i].type; i++)
		if (strcmp(tn, mo_graph_unsupported[i].type) == 0)
			diags_add_at(r->diags, MO_SEV_ERROR, "unsupported", r->file, t,
					"model.model_config.type",
					"%s is %s: memopt prices decoder-only transformers",
					tn, mo_graph_unsupported[i].what);
}

bool model_graph_names_type(const mo_node *model_config)
{
	const char *s = graph_type_name(model_config);
	return s && model_type_find(s);
}

static bool graph_number(const mo_node *v, double *out)
{
	int64_t i;
	bool ovf = false;
	if (scalar_float(v, out))
		return isfinite(*out);
	if (scalar_int(v, &i, &ovf)) {
		*out = (double)i;
		return true;
	}
	return false;
}

void model_graph_run_begin(struct mo_rd *r, const mo_node *root,
			      const mo_node *model_config)
{
	struct mo_model_ext *x = r->m->ext;
	bool legacy = true;
	const mo_node *ul = graph_get(root, "use_legacy");
	if (ul && !scalar_bool(ul, &legacy))
		legacy = true;
	r->graph = true;
	r->legacy = legacy;
	r->model_at = model_config;
	r->moe_ffn = r->first_dense = -1;
	r->interleave = 1;
	const mo_node *ctx = graph_get(root, "context");
	const mo_node *mode = graph_get(ctx, "mode");
	int64_t mv = 0;
	bool ovf = false;
	x->graph_mode = !mode || (scalar_int(mode, &mv, &ovf) && mv == 0);
	const mo_node *pc = graph_get(graph_get(root, "parallel"),
					  "pipeline_config");
	const mo_node *pi = graph_get(pc, "pipeline_interleave");
	if (pi && !scalar_bool(pi, &r->interleave_on))
		r->interleave_on = false;
	/* the Megatron dataset's sequence length; model_config's wins */
	const mo_node *dl = graph_get(graph_get(root, "train_dataset"),
					 "data_loader");
	const mo_node *sq = graph_get(graph_get(dl, "config"),
					 "seq_length");
	int64_t seq;
	const char *sp = "train_dataset.data_loader.config.seq_length";
	if (sq && model_read_int(r, sq, sp, 1, 2147483647LL, &seq)) {
		r->m->seq_length = seq;
		model_mark(r, MF_SEQ, sq, sp);
	}
}

void model_graph_begin(struct mo_rd *r, const mo_node *root,
			  const mo_node *model_config)
{
	model_graph_run_begin(r, root, model_config);
	const char *tn = graph_type_name(model_config);
	r->type = tn ? model_type_find(tn) : NULL;
	graph_check_supported(r, model_config, tn);
	r->m->ext->model_type = tn ? arena_strdup(r->m->arena, tn) : NULL;
	const mo_node *arch = graph_get(graph_get(root, "model"), "arch");
	const mo_node *at = graph_get(arch, "type");
	r->arch_type = at ? model_str(at) : NULL;
}

/* TeleChat's r1.1.0 FeedForward (research/telechat/telechat_layer.py) takes
 * ffn_dim_multiplier, when intermediate_size is None, as the FFN width
 * itself (its 7B and 12B files: 12288): an integer above any multiplier is
 * that width. */
static bool graph_telechat_width(struct mo_rd *r, const mo_node *v, const char *path)
{
	int64_t w;
	bool ovf = false;
	if (!r->type || strcmp(r->type->name, "TelechatConfig") != 0 ||
	    !scalar_int(v, &w, &ovf) || ovf || w <= 64 || w > (1 << 26) ||
	    r->m->ext->set[MF_FFN])
		return false;
	r->m->ffn_hidden_size = w;
	model_mark(r, MF_FFN, v, path);
	return true;
}

void model_graph_key(struct mo_rd *r, enum mo_conv which, int64_t lo, int64_t hi,
			const mo_node *v, const char *path)
{
	bool b;
	int64_t i;
	double d;
	switch (which) {
	case CV_MULOF:
		if (model_read_int(r, v, path, lo, hi, &r->multiple_of))
			r->multiple_of_set = true;
		break;
	case CV_EXPAND:
		model_read_int(r, v, path, lo, hi, &r->expand_ratio);
		break;
	case CV_FFNMULT:
		if (model_is_null(v))
			break;
		if (graph_telechat_width(r, v, path))
			break;
		if (!graph_number(v, &d) || d <= 0.0 || d > 64.0)
			model_type_err(r, v, path, "a number in (0, 64]");
		else
			r->ffn_mult = d, r->ffn_mult_set = true;
		break;
	case CV_MQA:
		if (model_read_bool(r, v, path, &r->mqa))
			r->mqa_set = true;
		break;
	case CV_MQG:
		if (model_read_int(r, v, path, lo, hi, &i))
			r->mq_groups = i;
		break;
	case CV_RMSNORM:
		if (model_read_bool(r, v, path, &b)) {
			r->m->normalization = b ? "RMSNorm" : "LayerNorm";
			model_mark(r, MF_NORM, v, path);
		}
		break;
	case CV_OFFSET:
		r->offset = v;
		r->offset_path = path;
		break;
	case CV_PPI:
		if (model_read_int(r, v, path, lo, hi, &i))
			r->interleave = i;
		break;
	case CV_GA:
		if (model_read_int(r, v, path, lo, hi, &i))
			r->ga_steps = i;
		break;
	default: /* the key table hands only the keys above to this reader */
		break;
	}
}

/* ---- moe_config (MoEConfig, mindformers/modules/transformer/moe.py) ---- */

static void graph_moe_key(struct mo_rd *r, const mo_node *key,
			     const mo_node *v, const char *path)
{
	mo_model *m = r->m;
	int64_t i;
	double d;
	bool b;
	if (strcmp(key->value, "expert_num") == 0) {
		if (model_read_int(r, v, path, 1, 1 << 20, &i)) {
			m->num_moe_experts = i > 1 ? i : 0;
			model_mark(r, MF_EXPERTS, v, path);
		}
	} else if (strcmp(key->value, "num_experts_chosen") == 0) {
		if (model_read_int(r, v, path, 1, 1 << 20, &i)) {
			m->moe_router_topk = i;
			model_mark(r, MF_TOPK, v, path);
		}
	} else if (strcmp(key->value, "shared_expert_num") == 0) {
		if (!graph_number(v, &d) || d < 0.0 || d > 1024.0)
			model_type_err(r, v, path, "a number in [0, 1024]");
		else
			r->shared_count = d;
	} else if (strcmp(key->value, "moe_intermediate_size") == 0) {
		if (model_read_int(r, v, path, 1, 1 << 26, &i))
			r->moe_ffn = i;
	} else if (strcmp(key->value, "first_k_dense_replace") == 0) {
		/* MoEConfig's default is True (unused by Llama-type models) */
		if (scalar_bool(v, &b))
			return;
		if (model_read_int(r, v, path, 0, 100000, &i))
			r->first_dense = i;
	} else {
		model_account_key(r, key, v, path);
	}
}

void model_graph_moe(struct mo_rd *r, const mo_node *moe_config)
{
	if (!moe_config || moe_config->kind != MO_NODE_MAP)
		return;
	r->moe_at = moe_config;
	for (size_t i = 0; i + 1 < moe_config->n && !r->failed; i += 2) {
		const mo_node *k = moe_config->items[i];
		const mo_node *v = moe_config->items[i + 1];
		if (k->kind != MO_NODE_SCALAR || strlen(k->value) != k->len)
			continue;
		char *path = arena_printf(r->m->arena, "moe_config.%s",
					     k->value);
		if (!path) {
			r->failed = true;
			return;
		}
		graph_moe_key(r, k, v, path);
	}
}

/* ---- finishing: defaults, FFN rounding, MoE, stage split ---------------- */

static void graph_default(struct mo_rd *r, enum mo_mf f, int64_t *field,
			     int64_t value)
{
	struct mo_model_ext *x = r->m->ext;
	if (x->set[f] || value <= 0)
		return;
	*field = value;
	x->set[f] = true;
	x->assumed_from[f] = r->type->source;
}

/* A field the file leaves out takes the class's value. */
static void graph_default_str(struct mo_rd *r, enum mo_mf f, const char **field,
				 const char *value)
{
	struct mo_model_ext *x = r->m->ext;
	if (x->set[f] || !value)
		return;
	*field = value;
	x->set[f] = true;
	x->assumed_from[f] = r->type->source;
}

static void graph_default_bool(struct mo_rd *r, enum mo_mf f, bool *field, bool value)
{
	struct mo_model_ext *x = r->m->ext;
	if (x->set[f])
		return;
	*field = value;
	x->set[f] = true;
	x->assumed_from[f] = r->type->source;
}

/* A probability the file leaves out takes the class's value. */
static void graph_default_double(struct mo_rd *r, enum mo_mf f, double *field, double value)
{
	struct mo_model_ext *x = r->m->ext;
	if (x->set[f] || value <= 0)
		return;
	*field = value;
	x->set[f] = true;
	x->assumed_from[f] = r->type->source;
}

/* GPT-2-like classes (GPT2Config, BloomConfig, GLMConfig, WizardCoderConfig):
 * a non-gated GeLU FFN of expand_ratio x hidden, LayerNorm, biases on every
 * linear, the vocabulary unpadded, their own positions. */
static void graph_gpt_defaults(struct mo_rd *r, const struct mo_type_defaults *t)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	int64_t ratio = r->expand_ratio > 0 ? r->expand_ratio : t->expand_ratio;
	if (ratio > 0 && !x->set[MF_FFN] && m->hidden_size > 0 &&
	    m->hidden_size <= (1 << 20)) {
		m->ffn_hidden_size = ratio * m->hidden_size;
		x->set[MF_FFN] = true;
		x->assumed_from[MF_FFN] = t->source;
	}
	if (!t->gpt)
		return;
	graph_default_double(r, MF_HDROP, &m->hidden_dropout, t->hidden_dropout);
	graph_default_double(r, MF_ADROP, &m->attention_dropout, t->attention_dropout);
	graph_default_str(r, MF_NORM, &m->normalization, "LayerNorm");
	graph_default_str(r, MF_ACT, &m->hidden_act, "gelu");
	graph_default_bool(r, MF_BIAS, &m->add_bias_linear, true);
	graph_default_bool(r, MF_QKV_BIAS, &m->add_qkv_bias, true);
	graph_default(r, MF_VOCAB_DIV, &m->make_vocab_size_divisible_by, 1);
	graph_default_str(r, MF_POS_TYPE, &m->position_embedding_type, t->positions);
	if (t->positions && strcmp(t->positions, "learned_absolute") == 0)
		graph_default(r, MF_MAX_POS, &m->max_position_embeddings, m->seq_length);
}

static void graph_type_defaults(struct mo_rd *r)
{
	const struct mo_type_defaults *t = r->type;
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	if (!t)
		return;
	r->layers_default = !x->set[MF_NUM_LAYERS] && t->layers > 0;
	graph_default(r, MF_NUM_LAYERS, &m->num_layers, t->layers);
	graph_default(r, MF_HIDDEN, &m->hidden_size, t->hidden);
	graph_default(r, MF_FFN, &m->ffn_hidden_size, t->ffn);
	graph_default(r, MF_HEADS, &m->num_attention_heads, t->heads);
	graph_default(r, MF_GROUPS, &m->num_query_groups, t->kv);
	graph_default(r, MF_KV_CHANNELS, &m->kv_channels, t->head_dim);
	graph_default(r, MF_VOCAB, &m->vocab_size, t->vocab);
	graph_default(r, MF_SEQ, &m->seq_length, t->seq);
	graph_default(r, MF_MTP, &m->mtp_num_layers, t->mtp);
	graph_default(r, MF_Q_LORA, &m->q_lora_rank, t->q_lora);
	graph_default(r, MF_KV_LORA, &m->kv_lora_rank, t->kv_lora);
	graph_default(r, MF_QK_NOPE, &m->qk_nope_head_dim, t->qk_nope);
	graph_default(r, MF_QK_ROPE, &m->qk_rope_head_dim, t->qk_rope);
	graph_default(r, MF_V_HEAD, &m->v_head_dim, t->v_head);
	if (!x->set[MF_UNTIE]) {
		m->untie_embeddings_and_output_weights = !t->tied;
		x->assumed_from[MF_UNTIE] = t->source;
	}
	if (!x->set[MF_KV_REPLICA] && t->kv_tiled) {
		m->replicate_kv_heads = true;
		x->assumed_from[MF_KV_REPLICA] = t->source;
	}
	if (!x->set[MF_QK_LN] && t->qk_layernorm) {
		m->qk_layernorm = true;
		x->assumed_from[MF_QK_LN] = t->source;
	}
	graph_gpt_defaults(r, t);
	if (t->ffn_halves && m->ffn_hidden_size >= 2) {
		/* the class halves the width it reads and gates it: whatever the
		 * file's hidden_act, it is the gate's activation (GeLU) */
		m->ffn_hidden_size /= 2;
		m->hidden_act = "geglu";
		x->set[MF_ACT] = true;
		x->assumed_from[MF_ACT] = t->source;
	}
	if (r->legacy) /* legacy MoE is moe_config's (MoEConfig defaults) */
		return;
	graph_default(r, MF_EXPERTS, &m->num_moe_experts, t->experts);
	if (m->num_moe_experts <= 0)
		return;
	graph_default(r, MF_TOPK, &m->moe_router_topk, t->topk);
	graph_default(r, MF_MOE_FFN, &m->moe_ffn_hidden_size, t->moe_ffn);
	graph_default(r, MF_FIRST_DENSE, &m->first_k_dense_replace,
			 t->first_dense);
	if (!x->set[MF_SHARED_FFN] && r->n_shared == 0 && t->n_shared > 0) {
		r->n_shared = t->n_shared;
		x->assumed_from[MF_SHARED_FFN] = t->source;
	}
}

/* LlamaFeedForward: intermediate_size if given, else 4h, times
 * (ffn_dim_multiplier + 0.01) when given, then int(2 * h / 3) rounded up
 * to multiple_of (LlamaConfig's default 256). */
static void graph_legacy_ffn(struct mo_rd *r)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	if (x->set[MF_FFN] || !r->legacy || (r->type && !r->type->legacy_ffn))
		return;
	if (!r->multiple_of_set) {
		r->multiple_of = 256;
		x->assumed_from[MF_FFN] =
			"multiple_of 256 (LlamaConfig default)";
	}
	double h = 4.0 * (double)m->hidden_size;
	if (r->ffn_mult_set)
		h = floor((r->ffn_mult + 0.01) * h);
	h = floor(2.0 * h / 3.0);
	double q = (double)r->multiple_of;
	double ffn = q * ceil(h / q);
	if (!(ffn >= 1.0 && ffn <= (double)(1 << 26)))
		return;
	m->ffn_hidden_size = (int64_t)ffn;
	x->set[MF_FFN] = true;
	x->pos[MF_FFN].path = r->multiple_of_set || r->ffn_mult_set
				      ? "model.model_config.multiple_of"
				      : "model.model_config";
}

/* moe_config: the expert FFN is the dense FFN for Llama-type models and
 * moe_intermediate_size for DeepSeek V2/V3; shared experts are
 * shared_expert_num x the expert FFN (LlamaFeedForwardWithMoE). */
static void graph_legacy_moe(struct mo_rd *r)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	if (!r->legacy || m->num_moe_experts <= 0)
		return;
	bool own = r->type && r->type->legacy_moe_ffn;
	if (own && r->moe_ffn > 0 && !x->set[MF_MOE_FFN]) {
		m->moe_ffn_hidden_size = r->moe_ffn;
		x->set[MF_MOE_FFN] = true;
	}
	if (own && r->first_dense >= 0 && !x->set[MF_FIRST_DENSE]) {
		m->first_k_dense_replace = r->first_dense;
		x->set[MF_FIRST_DENSE] = true;
	}
	if (!x->set[MF_TOPK]) {
		m->moe_router_topk = 1;
		x->set[MF_TOPK] = true;
		x->assumed_from[MF_TOPK] =
			"num_experts_chosen 1 (MoEConfig default)";
	}
	int64_t ffn = x->set[MF_MOE_FFN] ? m->moe_ffn_hidden_size
					 : m->ffn_hidden_size;
	if (r->shared_count > 0.0 && !x->set[MF_SHARED_FFN]) {
		double s = floor((double)ffn * r->shared_count);
		if (s >= 1.0 && s <= (double)(1LL << 40)) {
			m->moe_shared_expert_intermediate_size = (int64_t)s;
			x->set[MF_SHARED_FFN] = true;
		}
	}
}

/* ---- offset -> per-stage layer lists (LayerSetting) ---------------------- */

static void graph_offset_err(struct mo_rd *r, const char *fmt, long long a,
				long long b)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, a, b);
	mo_diag *d = diags_add_at(r->diags, MO_SEV_ERROR, "parallel", r->file,
				     r->offset, r->offset_path, "%s: %s",
				     r->offset_path, msg);
	if (d)
		diag_set_hint(r->diags, d,
				 "MindSpore Transformers (LayerSetting) refuses "
				 "this offset; the offsets must add up to "
				 "num_layers %% (pipeline_stage x "
				 "pp_interleave_num)");
}

/* One offset per virtual stage from an int, a list (one per stage, every
 * chunk) or a nested list (per chunk, per stage). */
static bool graph_offsets(struct mo_rd *r, int64_t *off, int64_t P,
			     int64_t V)
{
	const mo_node *v = r->offset;
	bool ovf = false;
	int64_t x;
	if (v == r->model_at) {
		memset(off, 0, sizeof(*off) * (size_t)(P * V));
		return true;
	}
	if (v->kind == MO_NODE_SCALAR) {
		if (!scalar_int(v, &x, &ovf) || x < -100000 || x > 100000) {
			diags_add_at(r->diags, MO_SEV_ERROR, "type", r->file, v,
					r->offset_path,
					"%s must be an integer in [-100000, 100000] "
					"or a list of them", r->offset_path);
			return false;
		}
		for (int64_t k = 0; k < P * V; k++)
			off[k] = x;
		return true;
	}
	bool nested = v->kind == MO_NODE_SEQ && v->n > 0 &&
		      v->items[0]->kind == MO_NODE_SEQ;
	if (v->kind != MO_NODE_SEQ || (nested && v->n != (size_t)V)) {
		graph_offset_err(r, "needs %lld lists of %lld offsets",
				    (long long)V, (long long)P);
		return false;
	}
	for (int64_t i = 0; i < V; i++) {
		const mo_node *row = nested ? v->items[i] : v;
		if (row->kind != MO_NODE_SEQ || row->n != (size_t)P) {
			graph_offset_err(r, "needs one offset per stage "
					    "(%lld), a list of %lld",
					    (long long)P,
					    row->kind == MO_NODE_SEQ
						    ? (long long)row->n
						    : 0LL);
			return false;
		}
		for (int64_t j = 0; j < P; j++) {
			if (!scalar_int(row->items[j], &x, &ovf) ||
			    x < -100000 || x > 100000) {
				diags_add_at(r->diags, MO_SEV_ERROR, "type",
						r->file, row->items[j],
						r->offset_path,
						"%s: each offset must be an "
						"integer in [-100000, 100000]",
						r->offset_path);
				return false;
			}
			off[i * P + j] = x;
		}
	}
	return true;
}

static void graph_stage_lists(struct mo_rd *r, const int64_t *count,
				 int64_t P, int64_t V)
{
	mo_model *m = r->m;
	mo_layers *st = arena_alloc(m->arena, sizeof(*st) * (size_t)(P * V));
	if (!st) {
		r->failed = true;
		return;
	}
	int64_t next = 0;
	for (int64_t k = 0; k < P * V; k++) {
		memset(&st[k], 0, sizeof(st[k]));
		st[k].ok = true;
		st[k].at = r->offset;
		st[k].r = arena_alloc(m->arena, sizeof(mo_range));
		if (!st[k].r) {
			r->failed = true;
			return;
		}
		if (count[k] > 0) {
			st[k].r[0].lo = (uint64_t)next;
			st[k].r[0].hi = (uint64_t)(next + count[k] - 1);
			st[k].r[0].at = r->offset;
			st[k].n = 1;
		}
		next += count[k];
	}
	m->stage_layers = st;
	m->n_stage_layers = (size_t)(P * V);
	model_mark(r, MF_STAGES, r->offset, r->offset_path);
}

/* Stage k (chunk k / P, stage k % P) holds num_layers / (P V) + offset[k]
 * layers, in order; legacy DeepSeek-V3 counts its mtp_depth layers in. */
static void graph_split(struct mo_rd *r)
{
	mo_model *m = r->m;
	int64_t P = m->pipeline_parallel, V = m->virtual_pipeline;
	if (P * V <= 1 || P * V > 1024 || m->num_layers < 1)
		return;
	if (!r->offset) { /* the config classes' default: 0 */
		r->offset = r->model_at;
		r->offset_path = "model.model_config.offset";
	}
	int64_t n = m->num_layers + (r->legacy ? m->mtp_num_layers : 0);
	int64_t off[1024], count[1024], sum = 0;
	if (!graph_offsets(r, off, P, V))
		return;
	bool any = false;
	for (int64_t k = 0; k < P * V; k++) {
		sum += off[k];
		any |= off[k] != 0;
		count[k] = n / (P * V) + off[k];
	}
	if (sum != n % (P * V)) {
		graph_offset_err(r, "the offsets add up to %lld, but %lld "
				    "layers are left over",
				    (long long)sum, (long long)(n % (P * V)));
		return;
	}
	for (int64_t k = 0; k < P * V; k++) {
		bool end = k == 0 || k == P * V - 1;
		if (count[k] < (end ? 0 : 1)) {
			graph_offset_err(r, "stage %lld gets %lld layers",
					    (long long)k, (long long)count[k]);
			return;
		}
	}
	if (any)
		graph_stage_lists(r, count, P, V);
}

void model_graph_finish(struct mo_rd *r)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	graph_type_defaults(r);
	graph_legacy_ffn(r);
	if (r->mqa_set && r->mqa && r->mq_groups > 0 && !x->set[MF_GROUPS]) {
		m->num_query_groups = r->mq_groups;
		x->set[MF_GROUPS] = true;
	}
	graph_legacy_moe(r);
	if (r->interleave_on && r->interleave > 1 && !x->set[MF_VPP]) {
		m->virtual_pipeline = r->interleave;
		x->set[MF_VPP] = true;
	}
	if (m->pipeline_parallel <= 1 && r->ga_steps > 0)
		m->micro_batch_num = r->ga_steps; /* no PP: micro_batch_num unused */
	if (!x->set[MF_DISTOPT]) { /* enable_parallel_optimizer: False */
		m->distributed_optimizer = false;
		x->assumed_from[MF_DISTOPT] =
			"parallel.enable_parallel_optimizer False (MindSpore "
			"default)";
	}
	graph_split(r);
}
