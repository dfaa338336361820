/* Reads a model from a parsed document: the model file (docs/model-file.md; Megatron or
 * Hugging Face key names, both accepted everywhere), a MindSpore
 * Transformers PyNative training YAML (`model` + `parallelism` + `training`
 * + `optimizer`), the older graph-mode YAML (`model.model_config`,
 * `parallel_config`, `runner_config`) and a Hugging Face config.json (flat
 * keys). Unknown keys are ignored: real files carry many. */
#include "import/import_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct mo_mkey {
	const char *key;
	unsigned char field; /* enum mo_mf (unused for temporaries) */
	unsigned char conv;
	int64_t lo, hi;
};

#define I32 2147483647LL
#define DEG MO_MODEL_MAX_DEGREE

static const struct mo_mkey mo_model_keys[] = {
	{"num_layers", MF_NUM_LAYERS, CV_INT, 1, MO_MODEL_MAX_LAYERS},
	{"num_hidden_layers", MF_NUM_LAYERS, CV_INT, 1, MO_MODEL_MAX_LAYERS},
	{"mtp_num_layers", MF_MTP, CV_INT, 0, MO_MODEL_MAX_MTP},
	{"num_nextn_predict_layers", MF_MTP, CV_INT, 0, MO_MODEL_MAX_MTP},
	{"mtp_depth", MF_MTP, CV_INT, 0, MO_MODEL_MAX_MTP},
	{"hidden_size", MF_HIDDEN, CV_INT, 1, 1 << 24},
	{"ffn_hidden_size", MF_FFN, CV_INT, 1, 1 << 26},
	{"intermediate_size", MF_FFN, CV_INT, 1, 1 << 26},
	{"num_attention_heads", MF_HEADS, CV_INT, 1, 1 << 20},
	{"num_heads", MF_HEADS, CV_INT, 1, 1 << 20},
	{"multi_query_attention", MF_GROUPS, CV_MQA, 0, 0},
	{"multi_query_group_num", MF_GROUPS, CV_MQG, 1, 1 << 20},
	{"multiple_of", MF_FFN, CV_MULOF, 1, 1 << 20},
	{"ffn_dim_multiplier", MF_FFN, CV_FFNMULT, 0, 0},
	{"expand_ratio", MF_FFN, CV_EXPAND, 1, 64},
	{"num_query_groups", MF_GROUPS, CV_INT, 1, 1 << 20},
	{"num_key_value_heads", MF_GROUPS, CV_INT, 1, 1 << 20},
	{"n_kv_heads", MF_GROUPS, CV_INT, 1, 1 << 20},
	{"replicate_kv_heads", MF_KV_REPLICA, CV_BOOL, 0, 0},
	{"kv_channels", MF_KV_CHANNELS, CV_INT, 1, 1 << 20},
	{"head_dim", MF_KV_CHANNELS, CV_INT, 1, 1 << 20},
	{"vocab_size", MF_VOCAB, CV_INT, 1, I32},
	{"padded_vocab_size", MF_VOCAB, CV_INT, 1, I32},
	{"make_vocab_size_divisible_by", MF_VOCAB_DIV, CV_INT, 1, 1 << 20},
	{"untie_embeddings_and_output_weights", MF_UNTIE, CV_BOOL, 0, 0},
	{"tie_word_embeddings", MF_UNTIE, CV_TIE, 0, 0},
	{"seq_length", MF_SEQ, CV_INT, 1, I32},
	{"seq_len", MF_SEQ, CV_INT, 1, I32},
	{"max_position_embeddings", MF_MAX_POS, CV_MAXPOS, 1, I32},
	{"position_embedding_type", MF_POS_TYPE, CV_POSEMB, 0, 0},
	{"add_bias_linear", MF_BIAS, CV_BOOL, 0, 0},
	{"add_qkv_bias", MF_QKV_BIAS, CV_BOOL, 0, 0},
	/* MindSpore Transformers' LlamaConfig spelling (Qwen1.5 / Qwen2 / Qwen2.5 YAMLs):
	 * biases on wq, wk and wv (or the fused w_qkv); wo's is attn_proj_has_bias, off by default
	 * (mindformers/models/llama/llama_transformer.py:233-276 at v1.6.0 68fa8494;
	 * llama_config.py default False at every release v1.0.0 to v1.9.0) */
	{"qkv_has_bias", MF_QKV_BIAS, CV_BOOL, 0, 0},
	{"normalization", MF_NORM, CV_NORM, 0, 0},
	{"rmsnorm", MF_NORM, CV_RMSNORM, 0, 0},
	{"hidden_act", MF_ACT, CV_ACT, 0, 0},
	{"gated_linear_unit", MF_ACT, CV_GLU, 0, 0},
	{"attention", MF_ATTN, CV_ATTN, 0, 0},
	{"use_flash_attention", MF_ATTN, CV_FLASH, 0, 0},
	{"hidden_dropout", MF_HDROP, CV_DBL, 0, 1},
	{"attention_dropout", MF_ADROP, CV_DBL, 0, 1},
	{"hidden_dropout_prob", MF_HDROP, CV_DBL, 0, 1},
	{"attention_dropout_prob", MF_ADROP, CV_DBL, 0, 1},
	/* GPT2Config, BloomConfig, GLMConfig, PanguAlphaConfig
	 * (mindformers/models/<type>/<type>_config.py, v1.0.0 to v1.5.0):
	 * the dropout after attention and FFN, and on the attention
	 * probabilities; WizardCoderConfig's BERT-style name for the latter
	 * (research/wizardcoder/wizardcoder_config.py:45, v1.0.0) */
	{"hidden_dropout_rate", MF_HDROP, CV_DBL, 0, 1},
	{"attention_dropout_rate", MF_ADROP, CV_DBL, 0, 1},
	{"attention_probs_dropout_prob", MF_ADROP, CV_DBL, 0, 1},
	{"num_moe_experts", MF_EXPERTS, CV_INT, 0, 1 << 20},
	{"n_routed_experts", MF_EXPERTS, CV_INT, 0, 1 << 20},
	{"num_experts", MF_EXPERTS, CV_INT, 0, 1 << 20},
	{"num_local_experts", MF_EXPERTS, CV_INT, 0, 1 << 20},
	{"moe_router_topk", MF_TOPK, CV_INT, 1, 1 << 20},
	{"num_experts_per_tok", MF_TOPK, CV_INT, 1, 1 << 20},
	{"moe_ffn_hidden_size", MF_MOE_FFN, CV_INT, 1, 1 << 26},
	{"moe_intermediate_size", MF_MOE_FFN, CV_INT, 1, 1 << 26},
	{"moe_shared_expert_intermediate_size", MF_SHARED_FFN, CV_INT, 0,
	 1 << 26},
	{"shared_expert_intermediate_size", MF_SHARED_FFN, CV_INT, 0, 1 << 26},
	{"n_shared_experts", MF_SHARED_FFN, CV_NSHARED, 0, 1024},
	{"first_k_dense_replace", MF_FIRST_DENSE, CV_INT, 0,
	 MO_MODEL_MAX_LAYERS},
	{"multi_latent_attention", MF_MLA, CV_BOOL, 0, 0},
	{"q_lora_rank", MF_Q_LORA, CV_INT, 0, 1 << 24},
	{"kv_lora_rank", MF_KV_LORA, CV_INT, 0, 1 << 24},
	{"qk_nope_head_dim", MF_QK_NOPE, CV_INT, 0, 1 << 20},
	{"qk_head_dim", MF_QK_NOPE, CV_INT, 0, 1 << 20},
	{"qk_rope_head_dim", MF_QK_ROPE, CV_INT, 0, 1 << 20},
	{"qk_pos_emb_head_dim", MF_QK_ROPE, CV_INT, 0, 1 << 20},
	{"v_head_dim", MF_V_HEAD, CV_INT, 0, 1 << 20},
	{"qk_layernorm", MF_QK_LN, CV_BOOL, 0, 0},
	{"enable_hyper_connections", MF_HC, CV_BOOL, 0, 0},
	{"hc_mult", MF_HC_MULT, CV_INT, 1, 64},
	{"num_residual_streams", MF_HC_MULT, CV_INT, 1, 64},
	{"use_fused_mhc", MF_HC_FUSED, CV_BOOL, 0, 0},
	{"enable_hc_head", MF_HC_HEAD, CV_BOOL, 0, 0},
	{"hc_sinkhorn_iters", MF_HC_SINKHORN, CV_INT, 0, 1000},
	{"mhc_sinkhorn_iterations", MF_HC_SINKHORN, CV_INT, 0, 1000},
	{"experimental_attention_variant", MF_ATTN_VARIANT, CV_ATTNVAR, 0, 0},
	{"compress_ratios", MF_RATIOS, CV_RATIOS, 0, 0},
	{"csa_compress_ratios", MF_RATIOS, CV_RATIOS, 0, 0},
	{"o_groups", MF_O_GROUPS, CV_INT, 1, 1 << 20},
	{"o_lora_rank", MF_O_LORA, CV_INT, 1, 1 << 24},
	{"index_n_heads", MF_IDX_HEADS, CV_INT, 1, 1 << 20},
	{"dsa_indexer_n_heads", MF_IDX_HEADS, CV_INT, 1, 1 << 20},
	{"index_head_dim", MF_IDX_DIM, CV_INT, 1, 1 << 20},
	{"dsa_indexer_head_dim", MF_IDX_DIM, CV_INT, 1, 1 << 20},
	{"index_topk", MF_IDX_TOPK, CV_INT, 1, 1 << 24},
	{"dsa_indexer_topk", MF_IDX_TOPK, CV_INT, 1, 1 << 24},
	{"apply_dsa_kernel_fusion", MF_DSA_FUSED, CV_BOOL, 0, 0},
	{"dsa_indexer_use_sparse_loss", MF_DSA_SPARSE, CV_BOOL, 0, 0},
	{"sliding_window", MF_CSA_WINDOW, CV_INT, 1, 1 << 24},
	{"csa_window_size", MF_CSA_WINDOW, CV_INT, 1, 1 << 24},
	/* training */
	{"micro_batch_size", MF_MBS, CV_INT, 1, 1 << 20},
	{"local_batch_size", MF_MBS, CV_INT, 1, 1 << 20},
	{"batch_size", MF_MBS, CV_INT, 1, 1 << 20},
	{"micro_batch_num", MF_MBN, CV_INT, 1, I32},
	{"gradient_accumulation_steps", MF_MBN, CV_GA, 1, I32},
	{"global_batch_size", MF_GBS, CV_INT, 1, 1LL << 40},
	{"compute_dtype", MF_CDTYPE, CV_DTYPE, 0, 0},
	{"params_dtype", MF_PDTYPE, CV_DTYPE, 0, 0},
	{"param_init_type", MF_PDTYPE, CV_DTYPE, 0, 0},
	{"grads_dtype", MF_GDTYPE, CV_DTYPE, 0, 0},
	{"main_grads_dtype", MF_GDTYPE, CV_DTYPE, 0, 0},
	{"accumulate_allreduce_grads_in_fp32", MF_GDTYPE, CV_ACCUM, 0, 0},
	{"transformer_impl", MF_TE_IMPL, CV_TEIMPL, 0, 0},
	{"overlap_grad_reduce", MF_OVERLAP, CV_BOOL, 0, 0},
	{"moe_grouped_gemm", MF_GROUPED, CV_BOOL, 0, 0},
	{"gradient_accumulation_fusion", MF_GRAD_FUSION, CV_BOOL, 0, 0},
	{"cublas_workspace_kib", MF_CUBLAS_WS, CV_INT, 0, 1 << 24},
	{"moe_routing_skew", MF_SKEW, CV_SKEW, 1, 1024},
	{"apply_rope_fusion", MF_ROPE_FUSION, CV_BOOL, 0, 0},
	{"moe_token_dispatcher_type", MF_DISPATCHER, CV_DISPATCH, 0, 0},
	{"moe_router_dtype", MF_ROUTER_DTYPE, CV_DTYPE, 0, 0},
	{"moe_permute_fusion", MF_PERMUTE_FUSION, CV_BOOL, 0, 0},
	{"overlap_moe_expert_parallel_comm", MF_EP_OVERLAP, CV_BOOL, 0, 0},
	{"tp_comm_overlap", MF_TP_OVERLAP, CV_BOOL, 0, 0},
	{"deterministic_mode", MF_DETERMINISTIC, CV_BOOL, 0, 0},
	{"optimizer", MF_OPT, CV_OPT, 0, 0},
	{"framework", MF_FRAMEWORK, CV_FRAME, 0, 0},
	/* parallel */
	{"world_size", MF_WORLD, CV_DEGREE, 1, DEG},
	{"data_parallel", MF_DP, CV_DEGREE, 1, DEG},
	{"data_parallel_shard", MF_DP_SHARD, CV_DEGREE, -1, DEG},
	{"data_parallel_replicate", MF_DP, CV_DPREP, 1, DEG},
	{"tensor_parallel", MF_TP, CV_DEGREE, 1, DEG},
	{"model_parallel", MF_TP, CV_DEGREE, 1, DEG},
	{"pipeline_parallel", MF_PP, CV_DEGREE, 1, DEG},
	{"pipeline_stage", MF_PP, CV_DEGREE, 1, DEG},
	{"virtual_pipeline", MF_VPP, CV_DEGREE, 1, DEG},
	{"pipeline_parallel_interleave_num", MF_VPP, CV_DEGREE, 1, DEG},
	{"virtual_pipeline_model_parallel_size", MF_VPP, CV_DEGREE, 1, DEG},
	{"expert_parallel", MF_EP, CV_DEGREE, 1, DEG},
	{"expert_model_parallel_size", MF_EP, CV_DEGREE, 1, DEG},
	{"expert_tensor_parallel", MF_ETP, CV_DEGREE, 1, DEG},
	{"expert_tensor_parallel_size", MF_ETP, CV_DEGREE, 1, DEG},
	{"context_parallel", MF_CP, CV_DEGREE, 1, DEG},
	{"sequence_parallel", MF_SP, CV_BOOL, 0, 0},
	{"use_seq_parallel", MF_SP, CV_BOOL, 0, 0},
	{"distributed_optimizer", MF_DISTOPT, CV_BOOL, 0, 0},
	{"use_distributed_optimizer", MF_DISTOPT, CV_BOOL, 0, 0},
	{"enable_parallel_optimizer", MF_DISTOPT, CV_BOOL, 0, 0},
	{"optimizer_shard", MF_DISTOPT, CV_BOOL, 0, 0},
	{"offset", MF_STAGES, CV_OFFSET, 0, 0},
	{"pp_interleave_num", MF_VPP, CV_PPI, 1, DEG},
	{"pipeline_parallel_layers_per_stage", MF_STAGES, CV_STAGES, 0, 0},
	{"pipeline_model_parallel_layout", MF_STAGES, CV_PPLAYOUT, 0, 0},
	{"device", MF_DEVICE, CV_DEVICE, 0, 0},
};

static const struct mo_mkey *model_key_find(const char *key)
{
	for (size_t i = 0; i < sizeof(mo_model_keys) / sizeof(*mo_model_keys);
	     i++)
		if (strcmp(mo_model_keys[i].key, key) == 0)
			return &mo_model_keys[i];
	return NULL;
}

/* Case-insensitive lookup of s in a NULL-terminated list of
 * {spelling, canonical} pairs. */
static const char *model_canon(const char *s, const char *const *pairs)
{
	for (size_t i = 0; pairs[i]; i += 2)
		if (strcasecmp(s, pairs[i]) == 0)
			return pairs[i + 1];
	return NULL;
}

static const char *const mo_norm_names[] = {
	"RMSNorm", "RMSNorm", "FusedRMSNorm", "RMSNorm", "rms_norm", "RMSNorm",
	"LayerNorm", "LayerNorm", "FusedLayerNorm", "LayerNorm",
	"layer_norm", "LayerNorm", NULL};
static const char *const mo_act_names[] = {
	"swiglu", "swiglu", "fusedswiglu", "fusedswiglu", "silu", "silu",
	"swish", "silu", "gelu", "gelu", "gelu_new", "gelu",
	"gelu_pytorch_tanh", "gelu", "fast_gelu", "gelu", "geglu", "geglu", NULL};
static const char *const mo_attn_names[] = {
	"flash", "flash", "flash_attention", "flash", "eager", "eager",
	"sdpa", "flash", NULL};
static const char *const mo_dtype_names[] = {
	"bfloat16", "bfloat16", "bf16", "bfloat16", "float16", "float16",
	"fp16", "float16", "half", "float16", "float32", "float32",
	"fp32", "float32", "float", "float32", NULL};
/* Megatron's --position-embedding-type choices; yarn and mrope are rotary
 * variants (no parameters, the same kept tensors as rope here) */
static const char *const mo_posemb_names[] = {
	"rope", "rope", "rotary", "rope", "yarn", "rope", "mrope", "rope",
	"learned_absolute", "learned_absolute", "none", "none", NULL};
static const char *const mo_teimpl_names[] = {
	"transformer_engine", "transformer_engine", "te", "transformer_engine",
	"local", "local", NULL};
/* Megatron's --moe-token-dispatcher-type choices */
static const char *const mo_dispatch_names[] = {
	"allgather", "allgather", "alltoall", "alltoall", "flex", "flex", NULL};
static const char *const mo_frame_names[] = {
	"mindspore", "mindspore", "pytorch", "pytorch", "torch", "pytorch",
	NULL};

static const char *model_opt_name(const char *s)
{
	char low[64];
	size_t n = strlen(s);
	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	if (strstr(low, "muon"))
		return "muon";
	if (strstr(low, "adam"))
		return "adamw";
	return NULL;
}

static int64_t *model_int_field(mo_model *m, enum mo_mf f)
{
	switch (f) {
	case MF_NUM_LAYERS: return &m->num_layers;
	case MF_MTP: return &m->mtp_num_layers;
	case MF_HIDDEN: return &m->hidden_size;
	case MF_FFN: return &m->ffn_hidden_size;
	case MF_HEADS: return &m->num_attention_heads;
	case MF_GROUPS: return &m->num_query_groups;
	case MF_KV_CHANNELS: return &m->kv_channels;
	case MF_VOCAB: return &m->vocab_size;
	case MF_VOCAB_DIV: return &m->make_vocab_size_divisible_by;
	case MF_SEQ: return &m->seq_length;
	case MF_EXPERTS: return &m->num_moe_experts;
	case MF_TOPK: return &m->moe_router_topk;
	case MF_MOE_FFN: return &m->moe_ffn_hidden_size;
	case MF_SHARED_FFN: return &m->moe_shared_expert_intermediate_size;
	case MF_FIRST_DENSE: return &m->first_k_dense_replace;
	case MF_Q_LORA: return &m->q_lora_rank;
	case MF_KV_LORA: return &m->kv_lora_rank;
	case MF_QK_NOPE: return &m->qk_nope_head_dim;
	case MF_QK_ROPE: return &m->qk_rope_head_dim;
	case MF_V_HEAD: return &m->v_head_dim;
	case MF_HC_MULT: return &m->hc_mult;
	case MF_HC_SINKHORN: return &m->hc_sinkhorn_iters;
	case MF_O_GROUPS: return &m->o_groups;
	case MF_O_LORA: return &m->o_lora_rank;
	case MF_IDX_HEADS: return &m->index_n_heads;
	case MF_IDX_DIM: return &m->index_head_dim;
	case MF_IDX_TOPK: return &m->index_topk;
	case MF_CSA_WINDOW: return &m->csa_window;
	case MF_MBS: return &m->micro_batch_size;
	case MF_CUBLAS_WS: return &m->cublas_workspace_kib;
	case MF_MBN: return &m->micro_batch_num;
	case MF_WORLD: return &m->world_size;
	case MF_DP: return &m->data_parallel;
	case MF_DP_SHARD: return &m->data_parallel_shard;
	case MF_TP: return &m->tensor_parallel;
	case MF_PP: return &m->pipeline_parallel;
	case MF_VPP: return &m->virtual_pipeline;
	case MF_EP: return &m->expert_parallel;
	case MF_ETP: return &m->expert_tensor_parallel;
	case MF_CP: return &m->context_parallel;
	case MF_GBS: return &m->ext->global_batch_size;
	default: return NULL;
	}
}

static bool *model_bool_field(mo_model *m, enum mo_mf f)
{
	switch (f) {
	case MF_UNTIE: return &m->untie_embeddings_and_output_weights;
	case MF_MLA: return &m->multi_latent_attention;
	case MF_QK_LN: return &m->qk_layernorm;
	case MF_SP: return &m->sequence_parallel;
	case MF_DISTOPT: return &m->distributed_optimizer;
	case MF_BIAS: return &m->add_bias_linear;
	case MF_QKV_BIAS: return &m->add_qkv_bias;
	case MF_OVERLAP: return &m->overlap_grad_reduce;
	case MF_GROUPED: return &m->moe_grouped_gemm;
	case MF_GRAD_FUSION: return &m->gradient_accumulation_fusion;
	case MF_ROPE_FUSION: return &m->apply_rope_fusion;
	case MF_PERMUTE_FUSION: return &m->moe_permute_fusion;
	case MF_EP_OVERLAP: return &m->overlap_moe_ep_comm;
	case MF_TP_OVERLAP: return &m->tp_comm_overlap;
	case MF_DETERMINISTIC: return &m->deterministic_mode;
	case MF_HC: return &m->hyper_connections;
	case MF_HC_FUSED: return &m->hc_fused;
	case MF_DSA_FUSED: return &m->dsa_fused;
	case MF_DSA_SPARSE: return &m->dsa_sparse;
	case MF_HC_HEAD: return &m->hc_head;
	case MF_KV_REPLICA: return &m->replicate_kv_heads;
	default: return NULL;
	}
}

static const char **model_str_field(mo_model *m, enum mo_mf f)
{
	switch (f) {
	case MF_NORM: return &m->normalization;
	case MF_ACT: return &m->hidden_act;
	case MF_ATTN: return &m->attention;
	case MF_CDTYPE: return &m->compute_dtype;
	case MF_PDTYPE: return &m->params_dtype;
	case MF_GDTYPE: return &m->grads_dtype;
	case MF_OPT: return &m->optimizer;
	case MF_FRAMEWORK: return &m->framework;
	case MF_POS_TYPE: return &m->position_embedding_type;
	case MF_TE_IMPL: return &m->transformer_impl;
	case MF_DISPATCHER: return &m->moe_token_dispatcher_type;
	case MF_ROUTER_DTYPE: return &m->moe_router_dtype;
	default: return NULL;
	}
}

/* ---- structured values -------------------------------------------------- */

/* "a-b" or "a" (trimmed) into a range; false on bad syntax. */
static bool model_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	unsigned long long a, b;
	int n = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	if (sscanf(s, "%llu-%llu%n", &a, &b, &n) == 2) {
	} else if (sscanf(s, "%llu%n", &a, &n) == 1) {
		b = a;
	} else {
		return false;
	}
	for (s += n; *s == ' ' || *s == '\t'; s++)
		;
	if (*s || a > b || b > MO_MODEL_MAX_LAYERS * 2ULL)
		return false;
	*lo = a;
	*hi = b;
	return true;
}

static bool model_stage_item(struct mo_rd *r, const mo_node *it,
				const char *path, mo_range *out)
{
	int64_t i;
	bool ovf = false;
	const char *s = model_str(it);
	if (it->kind == MO_NODE_SCALAR && scalar_int(it, &i, &ovf) &&
	    i >= 0 && i <= MO_MODEL_MAX_LAYERS * 2LL) {
		out->lo = out->hi = (uint64_t)i;
		return true;
	}
	if (s && model_range(s, &out->lo, &out->hi))
		return true;
	diags_add_at(r->diags, MO_SEV_ERROR, "type", r->file, it, path,
			"%s: each item must be a layer id or a \"a-b\" range",
			path);
	return false;
}

/* pipeline_parallel_layers_per_stage: auto / null, or one list of layer
 * ranges per stage ([["0-3"], ["4-7"]] or ["0-3", "4-7"]). */
static void model_read_stages(struct mo_rd *r, const mo_node *v,
				 const char *path)
{
	mo_model *m = r->m;
	const char *s = model_str(v);
	if (model_is_null(v) || (s && strcasecmp(s, "auto") == 0))
		return;
	if (v->kind != MO_NODE_SEQ) {
		model_type_err(r, v, path, "auto or a list of layer ranges");
		return;
	}
	if (v->n > MO_MODEL_MAX_DEGREE) {
		model_type_err(r, v, path, "a shorter list");
		return;
	}
	mo_layers *st = arena_alloc(m->arena, sizeof(*st) * (v->n + 1));
	if (!st) {
		r->failed = true;
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		const mo_node *it = v->items[i];
		size_t cnt = it->kind == MO_NODE_SEQ ? it->n : 1;
		st[i].r = arena_alloc(m->arena, sizeof(mo_range) * (cnt + 1));
		if (!st[i].r) {
			r->failed = true;
			return;
		}
		st[i].ok = true;
		for (size_t k = 0; k < cnt; k++) {
			const mo_node *e = it->kind == MO_NODE_SEQ ? it->items[k]
								   : it;
			if (model_stage_item(r, e, path, &st[i].r[st[i].n]))
				st[i].n++;
			else
				st[i].ok = false;
		}
	}
	m->stage_layers = st;
	m->n_stage_layers = v->n;
}

static void model_read_device_map(struct mo_rd *r, const mo_node *v,
				     const char *path)
{
	static const char *const keys[] = {
		"memory_gib", "host_bandwidth_gbs", "tflops", "reserved_gib",
		"collective_bandwidth_gbs", "comm_buffer_mib", "fragmentation",
		"workspace_mib", "gemm_workspace_mib", MO_DEVICE_TIME_KEYS};
	mo_device *d = &r->m->device;
	double *dst[] = {&d->memory_gib, &d->host_bandwidth_gbs, &d->tflops,
			 &d->reserved_gib, &d->collective_bandwidth_gbs,
			 &d->comm_buffer_mib, &d->fragmentation, &d->workspace_mib,
			 &d->gemm_workspace_mib, MO_DEVICE_TIME_FIELDS(d)};
	const mo_node *base = map_get(v, "preset");
	const char *bn = base ? model_str(base) : NULL;
	if (bn && device_preset(d, bn) != 0)
		model_type_err(r, base, path, "a device preset name");
	d->name = "custom";
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		const mo_node *kv = map_get(v, keys[i]);
		double x;
		int64_t n;
		bool ovf;
		if (!kv)
			continue;
		char *p = arena_printf(r->m->arena, "%s.%s", path, keys[i]);
		if (scalar_float(kv, &x)) {
		} else if (scalar_int(kv, &n, &ovf)) {
			x = (double)n;
		} else {
			model_type_err(r, kv, p ? p : path, "a number");
			continue;
		}
		if (!(x >= 0.0 && x <= 1e9)) {
			model_type_err(r, kv, p ? p : path,
					  "a number in [0, 1e9]");
			continue;
		}
		*dst[i] = x;
	}
}

static void model_read_device(struct mo_rd *r, const mo_node *v,
				 const char *path)
{
	const char *s = model_str(v);
	if (s) {
		if (device_preset(&r->m->device, s) != 0) {
			const char *names[8];
			size_t n = mo_device_preset_count();
			for (size_t i = 0; i < n && i < 8; i++)
				names[i] = mo_device_preset_name(i);
			mo_diag *d = diags_add_at(
				r->diags, MO_SEV_ERROR, "type", r->file, v,
				path, "%s: unknown device preset '%s'", path,
				s);
			const char *best = did_you_mean(s, names,
							   n < 8 ? n : 8);
			if (d && best)
				diag_set_hint(r->diags, d,
						 "did you mean '%s'?", best);
		}
		return;
	}
	if (v->kind == MO_NODE_MAP) {
		model_read_device_map(r, v, path);
		return;
	}
	model_type_err(r, v, path, "a device preset name or a mapping");
}

static void model_read_opt(struct mo_rd *r, const mo_node *v,
			      const char *path)
{
	const mo_node *t = v;
	if (v->kind == MO_NODE_MAP) {
		t = map_get(v, "type");
		if (!t)
			return;
	}
	const char *s = model_str(t);
	const char *c = s ? model_opt_name(s) : NULL;
	if (!c) {
		diags_add_at(r->diags, MO_SEV_ERROR, "type", r->file, t,
				path, "%s must be adamw or muon", path);
		return;
	}
	r->m->optimizer = c;
	model_mark(r, MF_OPT, t, path);
}

/* experimental_attention_variant: `dsv4_hybrid` is DeepSeek-V4's hybrid
 * attention, `dsa` DeepSeek-V3.2's sparse attention (an MLA layer with the
 * lightning indexer, multi_latent_attention.py:174 `use_dsa`), both with op
 * tables of their own in the MindSpore rules; `mla` the plain MLA. Any
 * other name is not modelled: the MLA op table stands for it. */
static void model_read_attn_variant(struct mo_rd *r, const mo_node *v, const char *path)
{
	const char *s = model_str(v);
	if (!s) {
		model_type_err(r, v, path, "an attention variant name");
		return;
	}
	r->m->dsv4_hybrid = strcasecmp(s, "dsv4_hybrid") == 0;
	r->m->dsa = strcasecmp(s, "dsa") == 0;
	if (!r->m->dsv4_hybrid && !r->m->dsa && strcasecmp(s, "mla") != 0)
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", r->file, v, path,
				"%s: the estimate does not model the attention variant '%s'; "
				"the MLA op table stands for it",
				path, s);
	model_mark(r, MF_ATTN_VARIANT, v, path);
}

/* compress_ratios: one of 0, 4, 128 per layer, MTP layers included
 * (parallel_core/transformer_config.py:2901-2912). */
static void model_read_ratios(struct mo_rd *r, const mo_node *v, const char *path)
{
	if (v->kind != MO_NODE_SEQ || v->n > MO_MODEL_MAX_LAYERS + MO_MODEL_MAX_MTP) {
		model_type_err(r, v, path, "a list of compress ratios (0, 4 or 128), one per layer");
		return;
	}
	int64_t *q = arena_alloc(r->m->arena, sizeof(*q) * (v->n + 1));
	if (!q) {
		r->failed = true;
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		bool overflow = false;
		if (!scalar_int(v->items[i], &q[i], &overflow) ||
		    (q[i] != 0 && q[i] != 4 && q[i] != 128)) {
			model_type_err(r, v->items[i], path, "a compress ratio: 0, 4 or 128");
			return;
		}
	}
	r->m->compress_ratios = q;
	r->m->n_compress_ratios = v->n;
	model_mark(r, MF_RATIOS, v, path);
}

/* The conversions of a document's value that are not one typed value (a
 * list of stage layers, a device, the graph-mode YAML's own keys). */
static void model_read_special(struct mo_rd *r, const struct mo_mkey *k,
				  const mo_node *v, const char *path)
{
	switch (k->conv) {
	case CV_MULOF:
	case CV_FFNMULT:
	case CV_EXPAND:
	case CV_MQA:
	case CV_MQG:
	case CV_RMSNORM:
	case CV_OFFSET:
	case CV_PPI:
	case CV_GA:
		model_graph_key(r, (enum mo_conv)k->conv, k->lo, k->hi, v, path);
		break;
	case CV_STAGES:
		model_read_stages(r, v, path);
		model_mark(r, MF_STAGES, v, path);
		break;
	case CV_DEVICE:
		model_read_device(r, v, path);
		model_mark(r, MF_DEVICE, v, path);
		break;
	case CV_ATTNVAR:
		model_read_attn_variant(r, v, path);
		break;
	case CV_RATIOS:
		model_read_ratios(r, v, path);
		break;
	default:
		break;
	}
}

static const char *model_enum_want(int conv, const char *const **names)
{
	switch (conv) {
	case CV_NORM: *names = mo_norm_names; return "RMSNorm or LayerNorm";
	case CV_ACT:
		*names = mo_act_names;
		return "swiglu, fusedswiglu, silu, gelu or geglu";
	case CV_ATTN: *names = mo_attn_names; return "flash or eager";
	case CV_DTYPE:
		*names = mo_dtype_names;
		return "bfloat16, float16 or float32";
	case CV_FRAME: *names = mo_frame_names; return "mindspore or pytorch";
	case CV_POSEMB:
		*names = mo_posemb_names;
		return "rope, learned_absolute or none";
	case CV_TEIMPL: *names = mo_teimpl_names; return "transformer_engine or local";
	case CV_DISPATCH: *names = mo_dispatch_names; return "allgather, alltoall or flex";
	default: *names = NULL; return NULL;
	}
}

/* The type of value a conversion takes (MO_IT_*), -1 for the ones
 * model_read_special reads from the document itself. */
static int model_conv_type(int conv)
{
	switch (conv) {
	case CV_INT:
	case CV_DEGREE:
	case CV_NSHARED:
	case CV_MAXPOS:
	case CV_DPREP:
		return MO_IT_INT;
	case CV_BOOL:
	case CV_FLASH:
	case CV_TIE:
	case CV_GLU:
	case CV_ACCUM:
		return MO_IT_BOOL;
	case CV_DBL:
	case CV_SKEW:
		return MO_IT_DBL;
	case CV_NORM:
	case CV_ACT:
	case CV_ATTN:
	case CV_DTYPE:
	case CV_FRAME:
	case CV_POSEMB:
	case CV_TEIMPL:
	case CV_DISPATCH:
	case CV_OPT:
	case CV_PPLAYOUT:
		return MO_IT_STR;
	default:
		return -1;
	}
}

/* A `type` finding at line, column. */
static void model_value_err(struct mo_rd *r, int line, int column, const char *path,
			       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void model_value_err(struct mo_rd *r, int line, int column, const char *path,
			       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diags_vadd(r->diags, MO_SEV_ERROR, "type", r->file, line, column, path, fmt, ap);
	va_end(ap);
}

static void model_range_err(struct mo_rd *r, const struct mo_mkey *k, const char *path,
			       int line, int column)
{
	model_value_err(r, line, column, path, "%s must be an integer in [%lld, %lld]", path,
			   (long long)k->lo, (long long)k->hi);
}

static bool model_in_range(struct mo_rd *r, const struct mo_mkey *k, int64_t i,
			      const char *path, int line, int column)
{
	if (i >= k->lo && i <= k->hi)
		return true;
	model_range_err(r, k, path, line, column);
	return false;
}

/* Stores one typed value (it->type as model_conv_type says) into the
 * field of key k, with the range of an integer, [0, 1] of a fraction and
 * the spellings of a choice checked; findings at line, column. The one
 * place a key's value meets the model: for a document's scalar
 * (model_read_key decodes it first) and for an importer's item
 * (model_from_items). */
static void model_store(struct mo_rd *r, const struct mo_mkey *k, const struct mo_item *it,
			   const char *path, int line, int column)
{
	mo_model *m = r->m;
	enum mo_mf f = (enum mo_mf)k->field;
	const char *const *names;
	const char *want = model_enum_want(k->conv, &names);
	int64_t i = it->i;
	bool b = it->i != 0;
	switch (k->conv) {
	case CV_INT:
	case CV_DEGREE:
		if (!model_in_range(r, k, i, path, line, column))
			return;
		if (k->conv == CV_DEGREE && i == 0 && k->lo < 0)
			i = -1;
		*model_int_field(m, f) = i;
		break;
	case CV_NSHARED:
		if (model_in_range(r, k, i, path, line, column))
			r->n_shared = i;
		return;
	case CV_DPREP:
		if (model_in_range(r, k, i, path, line, column))
			r->dp_replicate = i;
		return;
	case CV_MAXPOS: /* the table's rows, and the sequence length of a file
			 * that gives none (Hugging Face) */
		if (!model_in_range(r, k, i, path, line, column))
			return;
		r->max_pos = i;
		m->max_position_embeddings = i;
		break;
	case CV_BOOL:
		*model_bool_field(m, f) = b;
		break;
	case CV_FLASH:
		m->attention = b ? "flash" : "eager";
		f = MF_ATTN;
		break;
	case CV_TIE:
		m->untie_embeddings_and_output_weights = !b;
		f = MF_UNTIE;
		break;
	case CV_GLU:
		r->glu = b;
		r->glu_set = true;
		return;
	case CV_ACCUM: /* Megatron's flag for fp32 main_grad buffers: the
			* same state as grads_dtype float32 (false: the
			* parameters' dtype) */
		m->grads_dtype = b ? "float32" : NULL;
		f = MF_GDTYPE;
		break;
	case CV_DBL:
		if (!(it->d >= 0.0 && it->d <= 1.0)) {
			model_value_err(r, line, column, path, "%s must be a number in [0, 1]",
					   path);
			return;
		}
		*(f == MF_HDROP ? &m->hidden_dropout : &m->attention_dropout) = it->d;
		break;
	case CV_SKEW:
		if (!(it->d >= (double)k->lo && it->d <= (double)k->hi)) {
			model_value_err(r, line, column, path, "%s must be a number in [%lld, %lld]",
					path, (long long)k->lo, (long long)k->hi);
			return;
		}
		m->moe_routing_skew = it->d;
		break;
	case CV_OPT: {
		const char *c = it->s ? model_opt_name(it->s) : NULL;
		if (!c) {
			model_value_err(r, line, column, path, "%s must be adamw or muon", path);
			return;
		}
		m->optimizer = c;
		break;
	}
	case CV_PPLAYOUT: /* expanded once the layer counts are known */
		if (!it->s) {
			model_value_err(r, line, column, path,
					"%s must be a Megatron layout string", path);
			return;
		}
		r->pp_layout = arena_strdup(m->arena, it->s);
		r->pp_layout_path = path;
		r->pp_layout_line = line;
		r->pp_layout_column = column;
		if (!r->pp_layout)
			r->failed = true;
		break;
	default: {
		const char *c = want && it->s ? model_canon(it->s, names) : NULL;
		if (!want)
			return;
		if (!c) {
			model_value_err(r, line, column, path, "%s must be %s", path, want);
			return;
		}
		*model_str_field(m, f) = c;
		break;
	}
	}
	model_mark_at(r, f, line, column, path);
}

/* A document's value as the typed value its key's conversion takes: false
 * (with the `type` finding at the node) when it is not one. *at is the
 * node the value is (an optimizer's `type` inside its mapping). */
static bool model_decode(struct mo_rd *r, const struct mo_mkey *k, const mo_node *v,
			    const char *path, struct mo_item *it, const mo_node **at)
{
	bool overflow = false, b;
	*at = v;
	switch (model_conv_type(k->conv)) {
	case MO_IT_INT:
		if (scalar_int(v, &it->i, &overflow))
			return true;
		if (overflow)
			model_range_err(r, k, path, v->line, v->column);
		else
			model_type_err(r, v, path, "an integer");
		return false;
	case MO_IT_BOOL:
		if (!scalar_bool(v, &b)) {
			model_type_err(r, v, path, "a boolean");
			return false;
		}
		it->i = b;
		return true;
	case MO_IT_DBL:
		if (scalar_float(v, &it->d))
			return true;
		if (scalar_int(v, &it->i, &overflow)) {
			it->d = (double)it->i;
			return true;
		}
		model_type_err(r, v, path, "a number");
		return false;
	case MO_IT_STR:
		if (k->conv == CV_OPT && v->kind == MO_NODE_MAP) {
			*at = map_get(v, "type");
			if (!*at)
				return false;
		}
		it->s = model_str(*at); /* NULL: not a string, said by the store */
		return true;
	default:
		return false;
	}
}

static void model_read_key(struct mo_rd *r, const struct mo_mkey *k,
			      const mo_node *v, const char *path)
{
	struct mo_item it = {.type = model_conv_type(k->conv)};
	const mo_node *at;
	if (model_is_null(v) && k->conv != CV_STAGES)
		return; /* HF writes null for "not used" (q_lora_rank) */
	if (k->field == MF_NUM_LAYERS)
		r->layers_given = true; /* its own error says what is wrong with it */
	if (it.type < 0)
		model_read_special(r, k, v, path);
	else if (model_decode(r, k, v, path, &it, &at))
		model_store(r, k, &it, path, at->line, at->column);
}

bool model_read_as(struct mo_rd *r, const char *as, const mo_node *v, const char *path)
{
	const struct mo_mkey *k = model_key_find(as);
	if (!k)
		return false;
	model_read_key(r, k, v, path);
	return true;
}

/* A head width in model_config of a legacy class that reads none (a
 * LlamaConfig file carrying Qwen's kv_channels): left unread, as the class
 * leaves it. */
static bool model_class_ignores(const struct mo_rd *r, const struct mo_mkey *k)
{
	return r->graph && r->type && r->type->no_head_dim && k->field == MF_KV_CHANNELS;
}

/* The fields a training YAML sets for its run rather than for its model:
 * what it adds over a model given apart. The architecture (layers, widths,
 * heads, vocabulary, experts, attention variant) stays the model's. */
static bool model_field_is_run(enum mo_mf f)
{
	switch (f) {
	case MF_SEQ: case MF_HDROP: case MF_ADROP: case MF_ATTN: case MF_MBS: case MF_MBN:
	case MF_CDTYPE: case MF_PDTYPE: case MF_GDTYPE: case MF_OPT: case MF_WORLD:
	case MF_DP: case MF_DP_SHARD: case MF_TP: case MF_PP: case MF_VPP: case MF_EP:
	case MF_ETP: case MF_CP: case MF_SP: case MF_DISTOPT: case MF_STAGES: case MF_DEVICE:
	case MF_GBS: case MF_TE_IMPL: case MF_OVERLAP: case MF_GROUPED: case MF_GRAD_FUSION:
	case MF_ROPE_FUSION: case MF_DISPATCHER: case MF_ROUTER_DTYPE:
	case MF_PERMUTE_FUSION: case MF_EP_OVERLAP: case MF_TP_OVERLAP:
	case MF_DETERMINISTIC: case MF_CUBLAS_WS: case MF_SKEW: case MF_HC_FUSED:
	case MF_DSA_FUSED:
		return true;
	default:
		return false;
	}
}

/* Reads every known key of one mapping; `sect` prefixes the paths. With
 * `account`, a key that is not read is looked up in the tables of keys
 * known not to affect memory (import_keys.c), and reported otherwise.
 * With `run_only`, only the run's keys are read (model_field_is_run). */
static void model_read_keys(struct mo_rd *r, const mo_node *map, const char *sect,
			       bool account, bool run_only)
{
	if (!map || map->kind != MO_NODE_MAP)
		return;
	for (size_t i = 0; i + 1 < map->n && !r->failed; i += 2) {
		const mo_node *key = map->items[i], *v = map->items[i + 1];
		if (key->kind != MO_NODE_SCALAR || strlen(key->value) != key->len)
			continue;
		const struct mo_mkey *k = model_key_find(key->value);
		if (run_only && (!k || !model_field_is_run(k->field)))
			continue;
		if (!k && !account)
			continue;
		char *path = sect && *sect
				     ? arena_printf(r->m->arena, "%s.%s",
						       sect, key->value)
				     : arena_strdup(r->m->arena, key->value);
		if (!path) {
			r->failed = true;
			return;
		}
		if (k && model_class_ignores(r, k))
			diags_add_at(r->diags, MO_SEV_WARNING, "unread-key", r->file, key, path,
					"%s: %s does not read it (its head width is hidden / heads)",
					path, r->type->name);
		else if (k)
			model_read_key(r, k, v, path);
		else if (!r->graph || !model_graph_class_key(r, key, v, path))
			model_account_key(r, key, v, path);
	}
}

static void model_read_map(struct mo_rd *r, const mo_node *map,
			      const char *sect, bool account)
{
	model_read_keys(r, map, sect, account, false);
}

/* A mapping that looks like model keys: it has a layer count or a hidden
 * size. */
static bool model_has_model_keys(const mo_node *map)
{
	return map && map->kind == MO_NODE_MAP &&
	       (map_get(map, "num_layers") ||
		map_get(map, "num_hidden_layers") ||
		map_get(map, "hidden_size"));
}

static const mo_node *model_get_map(const mo_node *map, const char *key)
{
	const mo_node *v = map_get(map, key);
	return v && v->kind == MO_NODE_MAP ? v : NULL;
}

/* The graph-mode YAML: model.model_config (legacy or `use_legacy: False`
 * names), moe_config, runner_config, parallel_config and the `parallel`
 * context. */
static void model_read_graph(struct mo_rd *r, const mo_node *root,
				const mo_node *mc)
{
	model_graph_begin(r, root, mc);
	model_read_map(r, mc, "model.model_config", true);
	model_read_map(r, model_get_map(root, "runner_config"),
			  "runner_config", false);
	model_read_map(r, model_get_map(root, "parallel_config"),
			  "parallel_config", true);
	model_graph_moe(r, model_get_map(root, "moe_config"));
}

/* Walks the sections of the document's form. Returns false when the
 * document has no model. */
static bool model_read_doc(struct mo_rd *r, const mo_node *root)
{
	const mo_node *model = model_get_map(root, "model");
	const mo_node *mc = model ? model_get_map(model, "model_config")
				  : NULL;
	if (mc && (model_has_model_keys(mc) ||
		   model_graph_names_type(mc))) {
		model_read_graph(r, root, mc);
	} else if (model_has_model_keys(model)) {
		model_read_map(r, model, "model", true);
	} else if (model_has_model_keys(root) && !model) {
		r->hf = true;
		model_read_map(r, root, "", false);
		hf_config_read(r, root);
		return true;
	} else {
		return false;
	}
	model_read_map(r, model_get_map(root, "training"), "training",
			  false);
	model_read_map(r, model_get_map(root, "parallel"), "parallel",
			  false);
	model_read_map(r, model_get_map(root, "parallelism"),
			  "parallelism", true);
	const mo_node *opt = map_get(root, "optimizer");
	if (opt && !r->m->ext->set[MF_OPT])
		model_read_opt(r, opt, "optimizer");
	const mo_node *dev = map_get(root, "device");
	if (dev) {
		model_read_device(r, dev, "device");
		model_mark(r, MF_DEVICE, dev, "device");
	}
	return true;
}

/* The PyNative trainer runs tensor parallelism with sequence parallelism
 * only: TrainingConfig.__post_init__ refuses tensor_parallel > 1 without
 * it (mindspore-ai/mindformers 167a50de, mindformers/pynative/config/
 * config.py:523-529). A file that turns it off is priced with it on, and
 * told so at its key. */
static void model_sequence_parallel_on(struct mo_rd *r)
{
	mo_model *m = r->m;
	const struct mo_model_pos *p = &m->ext->pos[MF_SP];
	if (m->ext->set[MF_SP] && !m->sequence_parallel)
		diags_add(r->diags, MO_SEV_WARNING, "parallel", model_pos_file(r, MF_SP), p->line,
			  p->column, p->path,
			  "%s: false with tensor_parallel %lld: MindSpore Transformers' PyNative "
			  "trainer refuses tensor parallelism without sequence parallelism; priced "
			  "with it on",
			  p->path ? p->path : "sequence_parallel", (long long)m->tensor_parallel);
	m->sequence_parallel = true;
}

/* Applies what the reader kept aside (gated units, shared-expert counts,
 * max positions, replicate degree). */
static void model_apply_temps(struct mo_rd *r, bool pynative)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	bool gated = r->glu_set ? r->glu : r->hf;
	if (gated && strcmp(m->hidden_act, "silu") == 0)
		m->hidden_act = "swiglu";
	if (r->glu_set && !r->glu && strcmp(m->hidden_act, "swiglu") == 0)
		m->hidden_act = "silu";
	/* only an explicit gated_linear_unit gates a GeLU: Hugging Face's
	 * GeLU models (GPT-NeoX, Phi) are not gated */
	if (r->glu_set && r->glu && strcmp(m->hidden_act, "gelu") == 0)
		m->hidden_act = "geglu";
	if (r->glu_set && !r->glu && strcmp(m->hidden_act, "geglu") == 0)
		m->hidden_act = "gelu";
	if (!x->set[MF_SEQ] && r->max_pos > 0) {
		m->seq_length = r->max_pos < 4096 ? r->max_pos : 4096;
		model_assume(r, MF_SEQ, "max_position_embeddings, at most 4096");
	}
	if (!x->set[MF_SHARED_FFN] && r->n_shared > 0) {
		int64_t ffn = x->set[MF_MOE_FFN] ? m->moe_ffn_hidden_size
						 : m->ffn_hidden_size;
		m->moe_shared_expert_intermediate_size =
			model_mul(r->n_shared, ffn);
	}
	if (!x->set[MF_MLA] && x->set[MF_KV_LORA] && m->kv_lora_rank > 0)
		m->multi_latent_attention = true;
	if (r->dp_replicate > 1 && !x->set[MF_DP] &&
	    m->data_parallel_shard > 0)
		m->data_parallel =
			model_mul(m->data_parallel_shard, r->dp_replicate);
	if (pynative && m->tensor_parallel > 1)
		model_sequence_parallel_on(r);
}

/* What every reader does once the keys are read: the graph-mode rules, the
 * values kept aside, the derived values, the assumed values listed, the
 * layouts. root: the document (NULL for an importer's items). Returns 0
 * with *out set, or -1 (m freed). */
static int model_finish(mo_model **out, struct mo_rd *r, const mo_node *root, bool pynative,
			   mo_error *err)
{
	mo_model *m = r->m;
	if (r->graph) {
		model_graph_class_finish(r); /* before moe_config's rules */
		model_graph_finish(r);
	}
	if (!m->ext->set[MF_NUM_LAYERS] && !r->layers_default && !r->layers_given)
		model_missing_layers(r, root);
	m->ext->layers_refused = !m->ext->set[MF_NUM_LAYERS] && !r->layers_default && r->layers_given;
	model_apply_temps(r, pynative);
	pp_layout_apply(r);
	model_derive(m);
	model_dsa_defaults(r);
	model_note_assumed(r);
	model_check_unmodelled(r, root);
	if (r->failed) {
		mo_model_free(m);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	if (model_build_layout(m, err) != 0) {
		mo_model_free(m);
		return -1;
	}
	/* the `parallel` rule runs in mo_model_check, once the device count
	 * is known (mo_check calls it after --devices) */
	*out = m;
	return 0;
}

/* A model document that states its own run (a memopt model file with its
 * parallel or training section, a preset, a training YAML): the run is
 * that, not another file's. */
static bool model_doc_states_run(const mo_node *root)
{
	static const char *const keys[] = {"parallel", "parallelism", "parallel_config",
					   "training"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (map_get(root, keys[i]))
			return true;
	return false;
}

/* A training YAML whose model is another file: it names
 * pretrained_model_dir, or its model_config has no layer count, hidden
 * size or known type (the configs/general templates); its run is what it
 * adds to that model. */
static bool model_doc_model_elsewhere(const mo_node *root)
{
	if (map_get(root, "pretrained_model_dir"))
		return true;
	const mo_node *model = model_get_map(root, "model");
	const mo_node *mc = model ? model_get_map(model, "model_config") : NULL;
	return mc && !model_has_model_keys(mc) && !model_graph_names_type(mc);
}

/* The run states a parallel layout of its own. */
static bool model_doc_has_parallel(const mo_node *root)
{
	return map_get(root, "parallel_config") || map_get(root, "parallelism") ||
	       map_get(root, "parallel");
}

/* Whether model_config's own layer count or hidden size is not the
 * model's: the YAML describes another model than the one given. */
static bool model_run_describes_other(const struct mo_rd *r, const mo_node *mc)
{
	static const char *const keys[] = {"num_layers", "num_hidden_layers", "hidden_size"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const mo_node *v = map_get(mc, keys[i]);
		int64_t n = 0;
		bool overflow = false;
		if (!v || !scalar_int(v, &n, &overflow) || overflow)
			continue;
		int64_t have = i < 2 ? r->m->num_layers : r->m->hidden_size;
		if (n != have)
			return true;
	}
	return false;
}

/* The run's parallel layout replaces the model's whole: a device count
 * or a degree the model text wrote (a model object written out whole
 * writes every one) does not stay beside the YAML's. */
static void model_clear_parallel(struct mo_rd *r)
{
	static const enum mo_mf fields[] = {MF_WORLD, MF_DP, MF_DP_SHARD, MF_TP, MF_PP, MF_VPP,
					    MF_EP,    MF_ETP, MF_CP,      MF_SP, MF_DISTOPT, MF_STAGES};
	mo_model *m = r->m;
	m->world_size = 0;
	m->data_parallel = 1;
	m->data_parallel_shard = 0;
	m->tensor_parallel = m->pipeline_parallel = m->virtual_pipeline = 1;
	m->expert_parallel = m->context_parallel = 1;
	m->expert_tensor_parallel = 0;
	m->sequence_parallel = false;
	m->distributed_optimizer = true;
	m->stage_layers = NULL;
	m->n_stage_layers = 0;
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
		m->ext->set[fields[i]] = false;
		m->ext->pos[fields[i]] = (struct mo_model_pos){0, 0, NULL, NULL};
		m->ext->assumed_from[fields[i]] = NULL;
	}
}

/* The run a training YAML describes, read over a model read from another
 * document (model_from_doc_run says when), as MindSpore Transformers reads a YAML's
 * model_config over pretrained_model_dir's config.json: its
 * parallel_config, parallel, parallelism, training, runner_config and
 * optimizer sections, its graph or PyNative mode and the run's keys of
 * model_config (sequence length, dtypes, offsets: model_field_is_run). An
 * architecture the YAML names is not read over the model given: said when
 * it is another one. Positions name the YAML. */
static void model_read_run(struct mo_rd *r, const mo_doc *run)
{
	const mo_node *root = run->root;
	const mo_node *model = model_get_map(root, "model");
	const mo_node *mc = model ? model_get_map(model, "model_config") : NULL;
	const char *own = r->file;
	r->run_file = arena_strdup(r->m->arena, run->name ? run->name : "<config>");
	if (!r->run_file) {
		r->failed = true;
		return;
	}
	r->file = r->run_file;
	if (model_doc_has_parallel(root))
		model_clear_parallel(r);
	if (mc) {
		model_graph_run_begin(r, root, mc);
		if (model_run_describes_other(r, mc))
			diags_add_at(r->diags, MO_SEV_WARNING, "model-replaced", r->file, mc,
				     "model.model_config",
				     "model.model_config describes another model (its layer count "
				     "or hidden size): the model given (%s) is priced, and only the "
				     "run's keys of model_config (sequence length, dtypes, offsets) "
				     "are read",
				     own);
	}
	model_read_keys(r, mc, "model.model_config", false, true);
	model_read_keys(r, model_get_map(root, "runner_config"), "runner_config", false, true);
	model_read_keys(r, model_get_map(root, "parallel_config"), "parallel_config", false, true);
	model_read_keys(r, model_get_map(root, "training"), "training", false, true);
	model_read_keys(r, model_get_map(root, "parallel"), "parallel", false, true);
	model_read_keys(r, model_get_map(root, "parallelism"), "parallelism", false, true);
	const mo_node *opt = map_get(root, "optimizer");
	if (opt)
		model_read_opt(r, opt, "optimizer");
	r->file = own;
}

int model_from_doc_run(mo_model **out, mo_diags *diags, const mo_doc *doc, const mo_doc *run,
			  mo_error *err)
{
	*out = NULL;
	if (!doc || !doc->root || doc->root->kind != MO_NODE_MAP)
		return 1;
	mo_model *m = model_alloc(doc->name ? doc->name : "<model>");
	if (!m) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	struct mo_rd r = {.m = m, .diags = diags, .file = m->name};
	if (!model_read_doc(&r, doc->root)) {
		/* a multimodal config.json keeps its language model under
		 * text_config: refused at the key rather than "no model" */
		if (!map_get(doc->root, "model"))
			hf_config_refused(diags, m->name, doc->root);
		mo_model_free(m);
		return 1;
	}
	bool takes_run = run && run->root && run->root->kind == MO_NODE_MAP &&
			 (r.hf || !model_doc_states_run(doc->root) ||
			  model_doc_model_elsewhere(run->root));
	if (takes_run)
		model_read_run(&r, run);
	if (r.failed) {
		mo_model_free(m);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	const mo_node *root = takes_run ? run->root : doc->root;
	bool pynative = map_get(root, "parallelism") != NULL;
	/* a training YAML's parallel_config defaults to MindSpore
	 * Transformers' data_parallel 1: said, as in the YAML read alone */
	m->ext->devices_unsaid = r.hf && !takes_run;
	return model_finish(out, &r, root, pynative, err);
}

int model_from_doc(mo_model **out, mo_diags *diags, const mo_doc *doc, mo_error *err)
{
	return model_from_doc_run(out, diags, doc, NULL, err);
}

int model_from_items(mo_model **out, mo_diags *diags, const struct mo_import_item *v,
			size_t n, const char *name, mo_error *err)
{
	*out = NULL;
	mo_model *m = model_alloc(name ? name : "<model>");
	if (!m) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	struct mo_rd r = {.m = m, .diags = diags, .file = m->name};
	for (size_t i = 0; i < n && !r.failed; i++) {
		const struct mo_item *it = v[i].item;
		const struct mo_mkey *k = model_key_find(it->key);
		char *path = arena_printf(m->arena, "%s.%s", mo_sec_names[it->sect], it->key);
		if (!path) {
			r.failed = true;
			break;
		}
		if (!k || model_conv_type(k->conv) != it->type) { /* an importer's bug */
			mo_model_free(m);
			error_set(err, MO_ERR_INTERNAL, 0, 0,
				     "%s: not a model-file key of that type", path);
			return -1;
		}
		model_store(&r, k, it, path, v[i].line, v[i].column);
	}
	if (r.failed) {
		mo_model_free(m);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	return model_finish(out, &r, NULL, false, err);
}

/* A training YAML whose model_config names no architecture (the
 * `configs/general` templates: it comes from pretrained_model_dir's
 * config.json at run time); unread: why that config.json was not read, or
 * NULL. */
void model_no_architecture(mo_diags *diags, const mo_doc *doc, const char *unread)
{
	const mo_node *key = NULL;
	const mo_node *model = model_get_map(doc->root, "model");
	const mo_node *mc = model ? map_get_kv(model, "model_config", &key) : NULL;
	if (!mc || !key)
		return;
	const mo_node *dir = map_get(doc->root, "pretrained_model_dir");
	const char *ds = dir ? model_str(dir) : NULL;
	mo_diag *d = diags_add_at(diags, MO_SEV_WARNING, "model-needed",
				     doc->name ? doc->name : "<config>", key,
				     "model.model_config",
				     "model.model_config names no architecture "
				     "(no layer count, no known model_type): "
				     "estimate and plan need its model");
	if (d && ds)
		diag_set_hint(diags, d,
				 "the run takes it from pretrained_model_dir "
				 "(%.200s)%s%.200s: give its config.json as the model",
				 ds, unread ? ", not read: " : "", unread ? unread : "");
}
