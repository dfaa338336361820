/* The model handle: defaults, derived values, accessors, loading from text,
 * a copy, and the canonical YAML (written with yaml/yaml_writer.c) and JSON
 * forms (SPEC 4 spelling). */
#include "model/model_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t mo_model_mul(int64_t a, int64_t b)
{
	int64_t r;
	if (a < 0 || b < 0)
		return -1;
	if (__builtin_mul_overflow(a, b, &r))
		return INT64_MAX;
	return r;
}

void mo_model_set_defaults(mo_model *m)
{
	m->num_layers = 1;
	m->hidden_size = 4096;
	m->ffn_hidden_size = 0;
	m->num_attention_heads = 32;
	m->vocab_size = 32000;
	m->make_vocab_size_divisible_by = 128;
	m->untie_embeddings_and_output_weights = true;
	m->seq_length = 4096;
	m->normalization = "RMSNorm";
	m->hidden_act = "swiglu";
	m->attention = "flash";
	m->micro_batch_size = 1;
	m->micro_batch_num = 1;
	m->compute_dtype = "bfloat16";
	m->params_dtype = "float32";
	m->optimizer = "adamw";
	m->framework = "mindspore";
	m->position_embedding_type = "rope";
	m->transformer_impl = "transformer_engine";
	m->apply_rope_fusion = true; /* Megatron's default */
	m->moe_token_dispatcher_type = "allgather"; /* Megatron's default */
	m->data_parallel = 1;
	m->data_parallel_shard = 0; /* = data_parallel unless given */
	m->tensor_parallel = 1;
	m->pipeline_parallel = 1;
	m->virtual_pipeline = 1;
	m->expert_parallel = 1;
	m->context_parallel = 1;
	m->distributed_optimizer = true;
	mo_device_preset(&m->device, "ascend-910b");
}

mo_model *mo_model_alloc(const char *name)
{
	mo_arena *a = mo_arena_new();
	if (!a)
		return NULL;
	mo_model *m = mo_arena_alloc(a, sizeof(*m));
	struct mo_model_ext *x = m ? mo_arena_alloc(a, sizeof(*x)) : NULL;
	if (!x) {
		mo_arena_free(a);
		return NULL;
	}
	m->arena = a;
	m->ext = x;
	m->name = mo_arena_strdup(a, name ? name : "<model>");
	if (!m->name) {
		mo_arena_free(a);
		return NULL;
	}
	pthread_mutex_init(&x->estimator_lock, NULL);
	pthread_mutex_init(&x->resolve_lock, NULL);
	mo_model_set_defaults(m);
	return m;
}

void mo_model_free(mo_model *m)
{
	if (!m)
		return;
	mo_attachment_clear(&m->ext->estimator_memo);
	pthread_mutex_destroy(&m->ext->estimator_lock);
	mo_attachment_clear(&m->ext->resolve_memo);
	pthread_mutex_destroy(&m->ext->resolve_lock);
	mo_arena_free(m->arena);
}

/* ---- copy ------------------------------------------------------------------ */

static const char *mo_model_copy_text(mo_model *c, const char *s, bool *failed)
{
	if (!s)
		return NULL;
	char *t = mo_arena_strdup(c->arena, s);
	*failed |= t == NULL;
	return t;
}

/* Stage layer lists, without their source nodes (the copy has no document). */
static bool mo_model_copy_stages(mo_model *c, const mo_model *m)
{
	c->stage_layers = NULL;
	if (m->n_stage_layers == 0)
		return true;
	c->stage_layers = mo_arena_alloc(c->arena, m->n_stage_layers * sizeof(*c->stage_layers));
	if (!c->stage_layers)
		return false;
	for (size_t s = 0; s < m->n_stage_layers; s++) {
		const mo_layers *from = &m->stage_layers[s];
		mo_layers *to = &c->stage_layers[s];
		*to = (mo_layers){.n = from->n, .ok = from->ok};
		if (from->n == 0)
			continue;
		to->r = mo_arena_alloc(c->arena, from->n * sizeof(*to->r));
		if (!to->r)
			return false;
		for (size_t i = 0; i < from->n; i++)
			to->r[i] = (mo_range){.lo = from->r[i].lo, .hi = from->r[i].hi};
	}
	return true;
}

/* What the import noted it filled in (mo_model_assumed). */
static bool mo_model_copy_assumed(mo_model *c, const struct mo_model_ext *from)
{
	struct mo_model_ext *to = c->ext;
	bool failed = false;
	to->assumed = NULL;
	to->n_assumed = 0;
	if (from->n_assumed == 0)
		return true;
	to->assumed = mo_arena_alloc(c->arena, from->n_assumed * sizeof(*to->assumed));
	if (!to->assumed)
		return false;
	for (size_t i = 0; i < from->n_assumed; i++)
		to->assumed[i] = (struct mo_assumed){
			mo_model_copy_text(c, from->assumed[i].path, &failed),
			mo_model_copy_text(c, from->assumed[i].value, &failed),
			mo_model_copy_text(c, from->assumed[i].source, &failed)};
	to->n_assumed = from->n_assumed;
	return !failed;
}

/* What model_*.c keep beside the fields: positions, what the file set,
 * where defaults came from. */
static bool mo_model_copy_ext(mo_model *c, const mo_model *m)
{
	struct mo_model_ext *to = c->ext;
	const struct mo_model_ext *from = m->ext;
	bool failed = false;
	for (int f = 0; f < MF_COUNT; f++) {
		to->pos[f] = from->pos[f];
		to->pos[f].path = mo_model_copy_text(c, from->pos[f].path, &failed);
		to->set[f] = from->set[f];
		to->assumed_from[f] = mo_model_copy_text(c, from->assumed_from[f], &failed);
	}
	to->global_batch_size = from->global_batch_size;
	to->mbn_derived = from->mbn_derived;
	to->dp_auto = from->dp_auto;
	to->dp_follows_devices = from->dp_follows_devices;
	to->graph_mode = from->graph_mode;
	to->model_type = mo_model_copy_text(c, from->model_type, &failed);
	return !failed && mo_model_copy_assumed(c, from);
}

mo_model *mo_model_copy(const mo_model *m)
{
	mo_model *c = m ? mo_model_alloc(m->name) : NULL;
	if (!c)
		return NULL;
	mo_arena *arena = c->arena;
	struct mo_model_ext *ext = c->ext;
	const char *name = c->name;
	bool failed = false;
	*c = *m;
	c->arena = arena;
	c->ext = ext;
	c->name = name;
	c->doc = NULL;
	c->parallel_at = NULL;
	c->types = NULL;
	c->n_types = 0;
	c->type_of = NULL;
	const char **texts[] = {&c->normalization,     &c->hidden_act,
				&c->attention,         &c->compute_dtype,
				&c->params_dtype,      &c->optimizer,
				&c->framework,         &c->device.name,
				&c->position_embedding_type, &c->transformer_impl,
				&c->moe_token_dispatcher_type, &c->moe_router_dtype};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
		*texts[i] = mo_model_copy_text(c, *texts[i], &failed);
	if (failed || !mo_model_copy_ext(c, m) || !mo_model_copy_stages(c, m) ||
	    mo_model_build_layout(c, NULL) != 0) {
		mo_model_free(c);
		return NULL;
	}
	return c;
}

pthread_mutex_t *mo_model_estimator_lock(const mo_model *m)
{
	return &m->ext->estimator_lock;
}

mo_attachment *mo_model_estimator_slot(const mo_model *m)
{
	return &m->ext->estimator_memo;
}

pthread_mutex_t *mo_model_resolve_lock(const mo_model *m)
{
	return &m->ext->resolve_lock;
}

mo_attachment *mo_model_resolve_slot(const mo_model *m)
{
	return &m->ext->resolve_memo;
}

/* tp * pp * cp, saturating. */
static int64_t mo_model_mp(const mo_model *m)
{
	return mo_model_mul(mo_model_mul(m->tensor_parallel,
					 m->pipeline_parallel),
			    m->context_parallel);
}

static void mo_model_derive_dp(mo_model *m)
{
	const struct mo_model_ext *x = m->ext;
	int64_t mp = mo_model_mp(m);
	if (!x->set[MF_DP] && x->set[MF_DP_SHARD] &&
	    m->data_parallel_shard > 0 && m->data_parallel <= 1)
		m->data_parallel = m->data_parallel_shard;
	if (!x->set[MF_DP] && m->data_parallel_shard < 0) {
		m->data_parallel = -1;
		m->ext->dp_auto = true;
	}
	if (!x->set[MF_DP] && !x->set[MF_DP_SHARD] && m->world_size > 0 &&
	    mp > 0 && m->world_size % mp == 0)
		m->data_parallel = m->world_size / mp;
	if (m->data_parallel < 0 && m->world_size > 0 && mp > 0 &&
	    m->world_size % mp == 0)
		m->data_parallel = m->world_size / mp;
	if (m->data_parallel_shard < 0 && m->data_parallel > 0)
		m->data_parallel_shard = m->data_parallel;
	if (m->data_parallel_shard == 0)
		m->data_parallel_shard = m->data_parallel;
	if (m->world_size == 0 && m->data_parallel > 0 && !x->set[MF_WORLD])
		m->world_size = mo_model_mul(m->data_parallel, mp);
}

void mo_model_derive_batches(mo_model *m)
{
	struct mo_model_ext *x = m->ext;
	if (x->set[MF_MBN] || x->global_batch_size <= 0)
		return;
	int64_t per = mo_model_mul(m->micro_batch_size, m->data_parallel);
	if (m->data_parallel <= 0 || per <= 0 ||
	    x->global_batch_size % per != 0 || x->global_batch_size < per)
		return;
	m->micro_batch_num = x->global_batch_size / per;
	x->mbn_derived = true;
}

int64_t mo_model_etp(const mo_model *m)
{
	if (strcmp(m->framework, "pytorch") != 0)
		return 0;
	if (m->expert_tensor_parallel > 0)
		return m->expert_tensor_parallel;
	return m->tensor_parallel > 0 ? m->tensor_parallel : 1;
}

void mo_model_derive(mo_model *m)
{
	const struct mo_model_ext *x = m->ext;
	if (!x->set[MF_GROUPS])
		m->num_query_groups = m->num_attention_heads;
	if (!x->set[MF_KV_CHANNELS] && m->num_attention_heads > 0)
		m->kv_channels = m->hidden_size / m->num_attention_heads;
	if (m->kv_channels < 1)
		m->kv_channels = 1;
	if (!x->set[MF_FFN])
		m->ffn_hidden_size = 4 * m->hidden_size;
	if (!x->set[MF_MAX_POS])
		m->max_position_embeddings = m->seq_length;
	if (!x->set[MF_QKV_BIAS])
		m->add_qkv_bias = m->add_bias_linear;
	if (m->num_moe_experts > 0 && !x->set[MF_MOE_FFN])
		m->moe_ffn_hidden_size = m->ffn_hidden_size;
	if (m->num_moe_experts > 0 && !x->set[MF_TOPK])
		m->moe_router_topk = 1;
	if (m->num_moe_experts == 0) {
		m->moe_router_topk = x->set[MF_TOPK] ? m->moe_router_topk : 0;
		m->first_k_dense_replace = 0;
	}
	if (m->multi_latent_attention) {
		if (!x->set[MF_QK_NOPE])
			m->qk_nope_head_dim = m->kv_channels;
		if (!x->set[MF_QK_ROPE])
			m->qk_rope_head_dim = 64;
		if (!x->set[MF_V_HEAD])
			m->v_head_dim = m->kv_channels;
		if (!x->set[MF_KV_LORA])
			m->kv_lora_rank = 512;
	}
	mo_model_derive_dp(m);
	mo_model_derive_batches(m);
}

void mo_model_set_devices(mo_model *m, int64_t devices)
{
	if (!m || devices < 1 || devices > MO_MODEL_MAX_DEGREE)
		return;
	struct mo_model_ext *x = m->ext;
	int64_t mp = mo_model_mp(m);
	bool free_dp = x->dp_auto || (!x->set[MF_DP] && !x->set[MF_DP_SHARD]);
	m->world_size = devices;
	x->set[MF_WORLD] = true;
	if (x->dp_follows_devices && mp > 0) {
		/* DDP: the shard degree stays 1 */
		m->data_parallel = devices / mp > 0 ? devices / mp : 1;
	} else if ((m->data_parallel < 0 || free_dp) && mp > 0) {
		/* not a multiple: the world-size check reports it */
		m->data_parallel = devices / mp > 0 ? devices / mp : 1;
		m->data_parallel_shard = m->data_parallel;
	}
	if (x->mbn_derived)
		m->micro_batch_num = 1;
	x->mbn_derived = false;
	mo_model_derive_batches(m);
}

int64_t mo_model_num_layers(const mo_model *m)
{
	return m ? m->num_layers : 0;
}

int64_t mo_model_mtp_layers(const mo_model *m)
{
	return m ? m->mtp_num_layers : 0;
}

size_t mo_model_layer_type_count(const mo_model *m)
{
	return m ? m->n_types : 0;
}

const char *mo_model_layer_type_name(const mo_model *m, size_t t)
{
	return m && t < m->n_types ? m->types[t].name : NULL;
}

size_t mo_model_layer_type_of(const mo_model *m, int64_t layer)
{
	if (!m || !m->type_of || layer < 0 ||
	    layer >= m->num_layers + m->mtp_num_layers)
		return (size_t)-1;
	return m->type_of[layer];
}

size_t mo_model_path_count(const mo_model *m, size_t t)
{
	return m && t < m->n_types ? m->types[t].n_paths : 0;
}

const char *mo_model_path(const mo_model *m, size_t t, size_t p)
{
	if (!m || t >= m->n_types || p >= m->types[t].n_paths)
		return NULL;
	return m->types[t].paths[p].name;
}

mo_path_kind mo_model_path_kind(const mo_model *m, size_t t, size_t p)
{
	if (!m || t >= m->n_types || p >= m->types[t].n_paths)
		return MO_PATH_MODULE;
	return m->types[t].paths[p].kind;
}

/* ---- loading from text --------------------------------------------------- */

static bool mo_model_text_is_json(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		return c == '{';
	}
	return false;
}

int mo_model_load(mo_model **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err)
{
	mo_doc *doc = NULL;
	mo_limits dl;
	*out = NULL;
	if (!text) {
		mo_error_set(err, MO_ERR_USAGE, 0, 0, "no model text");
		return -1;
	}
	if (!lim) {
		mo_limits_default(&dl);
		lim = &dl;
	}
	if (!mo_model_text_is_json(text, len) && mo_megatron_detect(text, len))
		return mo_model_load_megatron(out, diags, text, len, name, lim, err);
	int rc = mo_model_text_is_json(text, len)
			 ? mo_json_parse(&doc, diags, text, len, name, lim, err)
			 : mo_yaml_parse(&doc, diags, text, len, name, lim, err);
	if (rc < 0)
		return -1;
	if (rc > 0 || !doc) {
		mo_doc_free(doc);
		mo_error_set(err, MO_ERR_INVALID, 0, 0,
			     "%s: the model file does not parse",
			     name ? name : "<model>");
		return -1;
	}
	rc = mo_model_from_doc(out, diags, doc, err);
	mo_doc_free(doc);
	return rc;
}

/* ---- canonical forms ------------------------------------------------------ */

struct mo_items {
	struct mo_item v[64];
	size_t n;
};

static void mo_it(struct mo_items *l, int sect, const char *key, int type,
		  int64_t i, double d, const char *s)
{
	if (l->n < sizeof(l->v) / sizeof(*l->v))
		l->v[l->n++] = (struct mo_item){sect, type, key, i, d, s};
}

#define IT_I(l, s, k, v) mo_it(l, s, k, MO_IT_INT, v, 0, NULL)
#define IT_B(l, s, k, v) mo_it(l, s, k, MO_IT_BOOL, v, 0, NULL)
#define IT_D(l, s, k, v) mo_it(l, s, k, MO_IT_DBL, 0, v, NULL)
#define IT_S(l, s, k, v) mo_it(l, s, k, MO_IT_STR, 0, 0, v)

static void mo_model_items_model(const mo_model *m, struct mo_items *l)
{
	int s = MO_SEC_MODEL;
	IT_I(l, s, "num_layers", m->num_layers);
	IT_I(l, s, "mtp_num_layers", m->mtp_num_layers);
	IT_I(l, s, "hidden_size", m->hidden_size);
	IT_I(l, s, "ffn_hidden_size", m->ffn_hidden_size);
	IT_I(l, s, "num_attention_heads", m->num_attention_heads);
	IT_I(l, s, "num_query_groups", m->num_query_groups);
	IT_I(l, s, "kv_channels", m->kv_channels);
	IT_I(l, s, "vocab_size", m->vocab_size);
	IT_I(l, s, "make_vocab_size_divisible_by",
	     m->make_vocab_size_divisible_by);
	IT_B(l, s, "untie_embeddings_and_output_weights",
	     m->untie_embeddings_and_output_weights);
	IT_I(l, s, "seq_length", m->seq_length);
	IT_S(l, s, "normalization", m->normalization);
	IT_S(l, s, "hidden_act", m->hidden_act);
	IT_S(l, s, "attention", m->attention);
	IT_D(l, s, "hidden_dropout", m->hidden_dropout);
	IT_D(l, s, "attention_dropout", m->attention_dropout);
	IT_B(l, s, "qk_layernorm", m->qk_layernorm);
	IT_I(l, s, "num_moe_experts", m->num_moe_experts);
	if (m->num_moe_experts > 0) {
		IT_I(l, s, "moe_router_topk", m->moe_router_topk);
		IT_I(l, s, "moe_ffn_hidden_size", m->moe_ffn_hidden_size);
		IT_I(l, s, "moe_shared_expert_intermediate_size",
		     m->moe_shared_expert_intermediate_size);
		IT_I(l, s, "first_k_dense_replace", m->first_k_dense_replace);
	}
	IT_B(l, s, "multi_latent_attention", m->multi_latent_attention);
	if (m->multi_latent_attention) {
		IT_I(l, s, "q_lora_rank", m->q_lora_rank);
		IT_I(l, s, "kv_lora_rank", m->kv_lora_rank);
		IT_I(l, s, "qk_nope_head_dim", m->qk_nope_head_dim);
		IT_I(l, s, "qk_rope_head_dim", m->qk_rope_head_dim);
		IT_I(l, s, "v_head_dim", m->v_head_dim);
	}
	/* Megatron's keys, written when they change the estimate */
	if (strcmp(m->position_embedding_type, "rope") != 0) {
		IT_S(l, s, "position_embedding_type", m->position_embedding_type);
		IT_I(l, s, "max_position_embeddings", m->max_position_embeddings);
	}
	if (m->add_bias_linear || m->add_qkv_bias) {
		IT_B(l, s, "add_bias_linear", m->add_bias_linear);
		IT_B(l, s, "add_qkv_bias", m->add_qkv_bias);
	}
}

static void mo_model_items(const mo_model *m, struct mo_items *l)
{
	mo_model_items_model(m, l);
	int s = MO_SEC_TRAIN;
	IT_I(l, s, "micro_batch_size", m->micro_batch_size);
	IT_I(l, s, "micro_batch_num", m->micro_batch_num);
	if (m->ext->global_batch_size > 0)
		IT_I(l, s, "global_batch_size", m->ext->global_batch_size);
	IT_S(l, s, "compute_dtype", m->compute_dtype);
	IT_S(l, s, "params_dtype", m->params_dtype);
	if (m->grads_dtype)
		IT_S(l, s, "grads_dtype", m->grads_dtype);
	IT_S(l, s, "optimizer", m->optimizer);
	IT_S(l, s, "framework", m->framework);
	if (strcmp(m->framework, "pytorch") == 0) {
		IT_S(l, s, "transformer_impl", m->transformer_impl);
		IT_B(l, s, "overlap_grad_reduce", m->overlap_grad_reduce);
		if (m->moe_grouped_gemm)
			IT_B(l, s, "moe_grouped_gemm", true);
		if (m->gradient_accumulation_fusion)
			IT_B(l, s, "gradient_accumulation_fusion", true);
		if (!m->apply_rope_fusion)
			IT_B(l, s, "apply_rope_fusion", false);
		if (strcmp(m->moe_token_dispatcher_type, "allgather") != 0)
			IT_S(l, s, "moe_token_dispatcher_type", m->moe_token_dispatcher_type);
		if (m->moe_router_dtype)
			IT_S(l, s, "moe_router_dtype", m->moe_router_dtype);
		if (m->moe_permute_fusion)
			IT_B(l, s, "moe_permute_fusion", true);
	}
	s = MO_SEC_PAR;
	if (m->world_size > 0)
		IT_I(l, s, "world_size", m->world_size);
	if (m->data_parallel > 0)
		IT_I(l, s, "data_parallel", m->data_parallel);
	IT_I(l, s, "data_parallel_shard", m->data_parallel_shard);
	IT_I(l, s, "tensor_parallel", m->tensor_parallel);
	IT_I(l, s, "pipeline_parallel", m->pipeline_parallel);
	IT_I(l, s, "virtual_pipeline", m->virtual_pipeline);
	IT_I(l, s, "expert_parallel", m->expert_parallel);
	if (m->expert_tensor_parallel > 0)
		IT_I(l, s, "expert_tensor_parallel", m->expert_tensor_parallel);
	IT_I(l, s, "context_parallel", m->context_parallel);
	IT_B(l, s, "sequence_parallel", m->sequence_parallel);
	IT_B(l, s, "distributed_optimizer", m->distributed_optimizer);
}

const char *const mo_sec_names[MO_NSEC] = {"model", "training", "parallel"};

/* The shortest text that reads back the same value: %.15g, else %.17g. */
static bool mo_model_yaml_double(mo_yaml_writer *w, double d)
{
	char text[40];
	snprintf(text, sizeof text, "%.15g", d);
	if (strtod(text, NULL) != d)
		snprintf(text, sizeof text, "%.17g", d);
	return mo_yaml_write_plain(w, text);
}

bool mo_model_write_item(mo_yaml_writer *w, const struct mo_item *it)
{
	char text[32];
	if (!mo_yaml_write_plain(w, it->key))
		return false;
	switch (it->type) {
	case MO_IT_INT:
		snprintf(text, sizeof text, "%lld", (long long)it->i);
		return mo_yaml_write_plain(w, text);
	case MO_IT_BOOL:
		return mo_yaml_write_plain(w, it->i ? "true" : "false");
	case MO_IT_DBL:
		return mo_model_yaml_double(w, it->d);
	default: /* canonical enumeration values: plain-safe */
		return mo_yaml_write_plain(w, it->s);
	}
}

/* pipeline_parallel_layers_per_stage: a list of flow lists of "lo-hi". */
static bool mo_model_yaml_stages(const mo_model *m, mo_yaml_writer *w)
{
	if (m->n_stage_layers == 0)
		return true;
	if (!mo_yaml_write_plain(w, "pipeline_parallel_layers_per_stage") ||
	    !mo_yaml_write_sequence_start(w, false))
		return false;
	for (size_t s = 0; s < m->n_stage_layers; s++) {
		const mo_layers *l = &m->stage_layers[s];
		if (!mo_yaml_write_sequence_start(w, true))
			return false;
		for (size_t i = 0; i < l->n; i++) {
			char range[64];
			snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)l->r[i].lo,
				 (unsigned long long)l->r[i].hi);
			if (!mo_yaml_write_double_quoted(w, range))
				return false;
		}
		if (!mo_yaml_write_sequence_end(w))
			return false;
	}
	return mo_yaml_write_sequence_end(w);
}

static bool mo_model_device_times_equal(mo_device *a, const mo_device *b)
{
	double *x[] = {MO_DEVICE_TIME_FIELDS(a)};
	mo_device bc = *b;
	double *y[] = {MO_DEVICE_TIME_FIELDS(&bc)};
	for (size_t i = 0; i < MO_DEVICE_TIME_COUNT; i++)
		if (*x[i] != *y[i])
			return false;
	return true;
}

/* The time model's constants a custom device sets (0: the model's
 * fallback), after the memory keys. */
static bool mo_model_yaml_device_times(const mo_device *d, mo_yaml_writer *w)
{
	static const char *const keys[] = {MO_DEVICE_TIME_KEYS};
	mo_device c = *d;
	double *v[] = {MO_DEVICE_TIME_FIELDS(&c)};
	for (size_t i = 0; i < MO_DEVICE_TIME_COUNT; i++) {
		if (*v[i] == 0)
			continue;
		if (!mo_yaml_write_plain(w, keys[i]) || !mo_model_yaml_double(w, *v[i]))
			return false;
	}
	return true;
}

static bool mo_model_device_is_preset(const mo_device *d)
{
	mo_device p;
	return d->name && mo_device_preset(&p, d->name) == 0 &&
	       p.memory_gib == d->memory_gib &&
	       p.host_bandwidth_gbs == d->host_bandwidth_gbs &&
	       p.tflops == d->tflops && p.reserved_gib == d->reserved_gib &&
	       p.collective_bandwidth_gbs == d->collective_bandwidth_gbs &&
	       p.comm_buffer_mib == d->comm_buffer_mib &&
	       p.fragmentation == d->fragmentation &&
	       p.workspace_mib == d->workspace_mib &&
	       p.gemm_workspace_mib == d->gemm_workspace_mib && mo_model_device_times_equal(&p, d);
}

static bool mo_model_yaml_device(const mo_model *m, mo_yaml_writer *w)
{
	const mo_device *d = &m->device;
	if (!mo_yaml_write_plain(w, "device"))
		return false;
	if (mo_model_device_is_preset(d))
		return mo_yaml_write_plain(w, d->name);
	const char *const keys[] = {"memory_gib",      "host_bandwidth_gbs",
				    "tflops",          "reserved_gib",
				    "collective_bandwidth_gbs", "comm_buffer_mib",
				    "fragmentation", "workspace_mib", "gemm_workspace_mib"};
	const double values[] = {d->memory_gib,  d->host_bandwidth_gbs,
				 d->tflops,      d->reserved_gib,
				 d->collective_bandwidth_gbs, d->comm_buffer_mib,
				 d->fragmentation, d->workspace_mib, d->gemm_workspace_mib};
	if (!mo_yaml_write_mapping_start(w, NULL, false))
		return false;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		if (values[i] == 0 && strstr(keys[i], "workspace_mib"))
			continue; /* none: a mindspore device map reads as before */
		if (!mo_yaml_write_plain(w, keys[i]) || !mo_model_yaml_double(w, values[i]))
			return false;
	}
	return mo_model_yaml_device_times(d, w) && mo_yaml_write_mapping_end(w);
}

static bool mo_model_yaml_sections(const mo_model *m, const struct mo_items *l,
				   mo_yaml_writer *w)
{
	if (!mo_yaml_write_mapping_start(w, NULL, false))
		return false;
	for (int s = 0; s < MO_NSEC; s++) {
		if (!mo_yaml_write_plain(w, mo_sec_names[s]) ||
		    !mo_yaml_write_mapping_start(w, NULL, false))
			return false;
		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].sect == s && !mo_model_write_item(w, &l->v[i]))
				return false;
		if (s == MO_SEC_PAR && !mo_model_yaml_stages(m, w))
			return false;
		if (!mo_yaml_write_mapping_end(w))
			return false;
	}
	return mo_model_yaml_device(m, w) && mo_yaml_write_mapping_end(w);
}

char *mo_model_to_yaml(const mo_model *m)
{
	struct mo_items l = {.n = 0};
	mo_yaml_writer *w = NULL;
	mo_buf b;
	char *text = NULL;
	if (!m)
		return NULL;
	mo_model_items(m, &l);
	mo_buf_init(&b, 0);
	if (mo_yaml_writer_new(&w, MO_YAML_BREAK_LF, "model", NULL) != 0)
		goto out_free_buffer;
	if (mo_model_yaml_sections(m, &l, w) && mo_yaml_writer_finish(w, &b, 0) == 0)
		text = mo_buf_take(&b, NULL);
	mo_yaml_writer_free(w);
out_free_buffer:
	if (!text)
		mo_buf_free(&b);
	return text;
}

static json_t *mo_model_json_item(const struct mo_item *it)
{
	switch (it->type) {
	case MO_IT_INT: return json_integer((json_int_t)it->i);
	case MO_IT_BOOL: return json_boolean(it->i);
	case MO_IT_DBL: return json_real(it->d);
	default: return json_string(it->s);
	}
}

static json_t *mo_model_json_stages(const mo_model *m)
{
	json_t *a = json_array();
	for (size_t s = 0; a && s < m->n_stage_layers; s++) {
		const mo_layers *l = &m->stage_layers[s];
		json_t *st = json_array();
		for (size_t i = 0; st && i < l->n; i++) {
			char r[64];
			snprintf(r, sizeof(r), "%llu-%llu",
				 (unsigned long long)l->r[i].lo,
				 (unsigned long long)l->r[i].hi);
			json_array_append_new(st, json_string(r));
		}
		json_array_append_new(a, st);
	}
	return a;
}

static json_t *mo_model_json_device(const mo_model *m)
{
	const mo_device *d = &m->device;
	if (mo_model_device_is_preset(d))
		return json_string(d->name);
	json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "memory_gib",
			      d->memory_gib, "host_bandwidth_gbs",
			      d->host_bandwidth_gbs, "tflops", d->tflops,
			      "reserved_gib", d->reserved_gib,
			      "collective_bandwidth_gbs",
			      d->collective_bandwidth_gbs, "comm_buffer_mib",
			      d->comm_buffer_mib, "fragmentation", d->fragmentation);
	/* workspace_mib only when there are workspaces (a mindspore device
	 * map reads as before) */
	if (o && d->workspace_mib != 0 &&
	    json_object_set_new(o, "workspace_mib", json_real(d->workspace_mib)) != 0) {
		json_decref(o);
		return NULL;
	}
	if (o && d->gemm_workspace_mib != 0 &&
	    json_object_set_new(o, "gemm_workspace_mib", json_real(d->gemm_workspace_mib)) != 0) {
		json_decref(o);
		return NULL;
	}
	static const char *const keys[] = {MO_DEVICE_TIME_KEYS};
	mo_device c = *d;
	double *v[] = {MO_DEVICE_TIME_FIELDS(&c)};
	for (size_t i = 0; o && i < MO_DEVICE_TIME_COUNT; i++)
		if (*v[i] != 0 && json_object_set_new(o, keys[i], json_real(*v[i])) != 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

char *mo_model_to_json(const mo_model *m)
{
	struct mo_items l = {.n = 0};
	if (!m)
		return NULL;
	mo_model_items(m, &l);
	json_t *root = json_object();
	json_t *sec[MO_NSEC];
	for (int s = 0; s < MO_NSEC; s++) {
		sec[s] = json_object();
		json_object_set_new(root, mo_sec_names[s], sec[s]);
	}
	for (size_t i = 0; i < l.n; i++)
		json_object_set_new(sec[l.v[i].sect], l.v[i].key,
				    mo_model_json_item(&l.v[i]));
	if (m->n_stage_layers > 0)
		json_object_set_new(sec[MO_SEC_PAR],
				    "pipeline_parallel_layers_per_stage",
				    mo_model_json_stages(m));
	json_object_set_new(root, "device", mo_model_json_device(m));
	/* read-only facts (a model file that carries them is read without
	 * them): the parameter count and the values the import assumed */
	json_object_set_new(root, "parameters", json_integer(mo_model_parameters(m)));
	json_t *assumed = json_array();
	for (size_t i = 0; i < mo_model_assumed_count(m); i++) {
		const char *path, *value, *source;
		if (mo_model_assumed(m, i, &path, &value, &source) == 0)
			json_array_append_new(assumed,
					      json_pack("{s:s, s:s, s:s}", "path", path, "value",
							value, "source", source));
	}
	json_object_set_new(root, "assumed", assumed);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
