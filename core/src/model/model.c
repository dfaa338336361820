/* The model handle: defaults, derived values, accessors, a copy, and the
 * attachment slots other folders keep their caches in. */
#include "model/model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t model_mul(int64_t a, int64_t b)
{
	int64_t r;
	if (a < 0 || b < 0)
		return -1;
	if (__builtin_mul_overflow(a, b, &r))
		return INT64_MAX;
	return r;
}

/* A model before any file says otherwise: one layer of a 4096-wide Llama on one Ascend
 * 910B, and Megatron-LM's defaults where its flags have them. */
static const mo_model model_defaults = {
	.num_layers = 1,
	.hidden_size = 4096,
	.ffn_hidden_size = 0,
	.num_attention_heads = 32,
	.vocab_size = 32000,
	.make_vocab_size_divisible_by = 128,
	.untie_embeddings_and_output_weights = true,
	.seq_length = 4096,
	.normalization = "RMSNorm",
	.hidden_act = "swiglu",
	.attention = "flash",
	.micro_batch_size = 1,
	.micro_batch_num = 1,
	.compute_dtype = "bfloat16",
	.params_dtype = "float32",
	.optimizer = "adamw",
	.framework = "mindspore",
	.position_embedding_type = "rope",
	.transformer_impl = "transformer_engine",
	.apply_rope_fusion = true, /* Megatron's default */
	.moe_token_dispatcher_type = "allgather", /* Megatron's default */
	.moe_routing_skew = 1.0, /* balanced */
	/* MindSpore Transformers' defaults (parallel_core/transformer_config.py
	 * num_residual_streams 4, mhc_sinkhorn_iterations 20) */
	.hc_mult = 4,
	.hc_sinkhorn_iters = 20,
	/* DeepseekV4Config's defaults (models/deepseek4/configuration_deepseek_v4.py
	 * :184-188) */
	.o_groups = 16,
	.o_lora_rank = 1024,
	.index_n_heads = 64,
	.index_head_dim = 128,
	.index_topk = 1024,
	/* transformer_config.py csa_window_size (default 128, :2808) */
	.csa_window = 128,
	.dsa_fused = true,
	.data_parallel = 1,
	.data_parallel_shard = 0, /* = data_parallel unless given */
	.tensor_parallel = 1,
	.pipeline_parallel = 1,
	.virtual_pipeline = 1,
	.expert_parallel = 1,
	.context_parallel = 1,
	.distributed_optimizer = true,
};

mo_model *model_alloc(const char *name)
{
	mo_arena *a = arena_new();
	if (!a)
		return NULL;
	mo_model *m = arena_alloc(a, sizeof(*m));
	struct mo_model_ext *x = m ? arena_alloc(a, sizeof(*x)) : NULL;
	if (!x) {
		arena_free(a);
		return NULL;
	}
	*m = model_defaults;
	device_preset(&m->device, "ascend-910b");
	m->arena = a;
	m->ext = x;
	m->name = arena_strdup(a, name ? name : "<model>");
	if (!m->name) {
		arena_free(a);
		return NULL;
	}
	pthread_mutex_init(&x->estimator_lock, NULL);
	pthread_mutex_init(&x->resolve_lock, NULL);
	return m;
}

int64_t model_default_vocab_size(void)
{
	return model_defaults.vocab_size;
}

void mo_model_free(mo_model *m)
{
	if (!m)
		return;
	attachment_clear(&m->ext->estimator_memo);
	pthread_mutex_destroy(&m->ext->estimator_lock);
	attachment_clear(&m->ext->resolve_memo);
	pthread_mutex_destroy(&m->ext->resolve_lock);
	arena_free(m->arena);
}

/* ---- copy ------------------------------------------------------------------ */

static const char *model_copy_text(mo_model *c, const char *s, bool *failed)
{
	if (!s)
		return NULL;
	char *t = arena_strdup(c->arena, s);
	*failed |= t == NULL;
	return t;
}

/* Stage layer lists, without their source nodes (the copy has no document). */
static bool model_copy_stages(mo_model *c, const mo_model *m)
{
	c->stage_layers = NULL;
	if (m->n_stage_layers == 0)
		return true;
	c->stage_layers = arena_alloc(c->arena, m->n_stage_layers * sizeof(*c->stage_layers));
	if (!c->stage_layers)
		return false;
	for (size_t s = 0; s < m->n_stage_layers; s++) {
		const mo_layers *from = &m->stage_layers[s];
		mo_layers *to = &c->stage_layers[s];
		*to = (mo_layers){.n = from->n, .ok = from->ok};
		if (from->n == 0)
			continue;
		to->r = arena_alloc(c->arena, from->n * sizeof(*to->r));
		if (!to->r)
			return false;
		for (size_t i = 0; i < from->n; i++)
			to->r[i] = (mo_range){.lo = from->r[i].lo, .hi = from->r[i].hi};
	}
	return true;
}

/* DeepSeek-V4's per-layer compress ratios. */
static bool model_copy_ratios(mo_model *c, const mo_model *m)
{
	c->compress_ratios = NULL;
	if (!m->compress_ratios)
		return true;
	c->compress_ratios = arena_alloc(c->arena, (m->n_compress_ratios + 1) * sizeof(int64_t));
	if (!c->compress_ratios)
		return false;
	if (m->n_compress_ratios)
		memcpy(c->compress_ratios, m->compress_ratios,
		       m->n_compress_ratios * sizeof(int64_t));
	return true;
}

/* What the import noted it filled in (mo_model_assumed). */
static bool model_copy_assumed(mo_model *c, const struct mo_model_ext *from)
{
	struct mo_model_ext *to = c->ext;
	bool failed = false;
	to->assumed = NULL;
	to->n_assumed = 0;
	if (from->n_assumed == 0)
		return true;
	to->assumed = arena_alloc(c->arena, from->n_assumed * sizeof(*to->assumed));
	if (!to->assumed)
		return false;
	for (size_t i = 0; i < from->n_assumed; i++)
		to->assumed[i] = (struct mo_assumed){
			model_copy_text(c, from->assumed[i].path, &failed),
			model_copy_text(c, from->assumed[i].value, &failed),
			model_copy_text(c, from->assumed[i].source, &failed)};
	to->n_assumed = from->n_assumed;
	return !failed;
}

/* What model_*.c keep beside the fields: positions, what the file set,
 * where defaults came from. */
static bool model_copy_ext(mo_model *c, const mo_model *m)
{
	struct mo_model_ext *to = c->ext;
	const struct mo_model_ext *from = m->ext;
	bool failed = false;
	for (int f = 0; f < MF_COUNT; f++) {
		to->pos[f] = from->pos[f];
		to->pos[f].path = model_copy_text(c, from->pos[f].path, &failed);
		to->pos[f].file = model_copy_text(c, from->pos[f].file, &failed);
		to->set[f] = from->set[f];
		to->assumed_from[f] = model_copy_text(c, from->assumed_from[f], &failed);
	}
	to->global_batch_size = from->global_batch_size;
	to->mbn_derived = from->mbn_derived;
	to->dp_auto = from->dp_auto;
	to->dp_follows_devices = from->dp_follows_devices;
	to->devices_unsaid = from->devices_unsaid;
	to->graph_mode = from->graph_mode;
	to->layers_refused = from->layers_refused;
	to->model_type = model_copy_text(c, from->model_type, &failed);
	return !failed && model_copy_assumed(c, from);
}

mo_model *model_copy(const mo_model *m)
{
	mo_model *c = m ? model_alloc(m->name) : NULL;
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
		*texts[i] = model_copy_text(c, *texts[i], &failed);
	if (failed || !model_copy_ext(c, m) || !model_copy_stages(c, m) ||
	    !model_copy_ratios(c, m) ||
	    model_build_layout(c, NULL) != 0) {
		mo_model_free(c);
		return NULL;
	}
	return c;
}

pthread_mutex_t *model_estimator_lock(const mo_model *m)
{
	return &m->ext->estimator_lock;
}

mo_attachment *model_estimator_slot(const mo_model *m)
{
	return &m->ext->estimator_memo;
}

pthread_mutex_t *model_resolve_lock(const mo_model *m)
{
	return &m->ext->resolve_lock;
}

mo_attachment *model_resolve_slot(const mo_model *m)
{
	return &m->ext->resolve_memo;
}

/* tp * pp * cp, saturating. */
static int64_t model_mp(const mo_model *m)
{
	return model_mul(model_mul(m->tensor_parallel,
					 m->pipeline_parallel),
			    m->context_parallel);
}

static void model_derive_dp(mo_model *m)
{
	const struct mo_model_ext *x = m->ext;
	int64_t mp = model_mp(m);
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
		m->world_size = model_mul(m->data_parallel, mp);
}

void model_derive_batches(mo_model *m)
{
	struct mo_model_ext *x = m->ext;
	if (x->set[MF_MBN] || x->global_batch_size <= 0)
		return;
	int64_t per = model_mul(m->micro_batch_size, m->data_parallel);
	if (m->data_parallel <= 0 || per <= 0 ||
	    x->global_batch_size % per != 0 || x->global_batch_size < per)
		return;
	m->micro_batch_num = x->global_batch_size / per;
	x->mbn_derived = true;
}

int64_t model_etp(const mo_model *m)
{
	if (strcmp(m->framework, "pytorch") != 0)
		return 0;
	if (m->expert_tensor_parallel > 0)
		return m->expert_tensor_parallel;
	return m->tensor_parallel > 0 ? m->tensor_parallel : 1;
}

int64_t model_kv_heads_per_rank(const mo_model *m, int64_t tp)
{
	int64_t g = m->num_query_groups, a = m->num_attention_heads;
	if (tp < 1 || g < 1)
		return 0;
	if (g % tp == 0)
		return g / tp;
	int64_t columns = model_mul(a + 2 * g, m->kv_channels);
	if (m->replicate_kv_heads && tp % g == 0 && a % tp == 0 && columns > 0 && columns % tp == 0)
		return 1;
	return 0;
}

const char *model_kv_split_rule(const mo_model *m)
{
	return m->replicate_kv_heads
		       ? "tensor_parallel %lld neither divides the %lld query groups (KV heads) "
			 "nor is a multiple of them that splits the heads and the fused QKV "
			 "projection evenly"
		       : "tensor_parallel %lld does not divide the %lld query groups (KV heads)";
}

void model_derive(mo_model *m)
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
	model_derive_dp(m);
	model_derive_batches(m);
}

void model_set_batches(mo_model *m, int64_t micro_batch_num, int64_t global_batch_size)
{
	struct mo_model_ext *x = m->ext;
	m->micro_batch_num = micro_batch_num;
	x->global_batch_size = global_batch_size;
	x->set[MF_MBN] = true;
	x->set[MF_WORLD] = true;
	x->mbn_derived = false;
}

void mo_model_set_devices(mo_model *m, int64_t devices)
{
	if (!m || devices < 1 || devices > MO_MODEL_MAX_DEGREE)
		return;
	struct mo_model_ext *x = m->ext;
	int64_t mp = model_mp(m);
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
	model_derive_batches(m);
}

MO_ACCESSOR(int64_t, mo_model_num_layers, mo_model, num_layers)
MO_ACCESSOR(int64_t, mo_model_mtp_layers, mo_model, mtp_num_layers)
MO_ACCESSOR(size_t, mo_model_layer_type_count, mo_model, n_types)

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
