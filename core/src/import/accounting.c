/* Every key of a model description is accounted for: read (the tables in
 * model_file.c and graph_mode.c), known not to change the memory a
 * training step needs (the list below), known to change it in a way the
 * estimate does not model (`unmodelled`, named), or reported as
 * `unread-key` with its position. Every value the import fills in because
 * the file left it out is listed (mo_model_assumed), with where the value
 * comes from. */
#include "import/import_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Keys that do not change what a training step keeps in device memory:
 * inference and sampling settings, initialisation, numerics (eps, rope
 * bases and scaling), kernel and layout choices that keep the same
 * tensors, loss weights, router balancing, names. The dtypes of norm,
 * softmax, rotary and router compute are the op tables' assumption
 * (fp32 copies, docs/estimator.md). */
static const char *const mo_irrelevant_keys[] = {
	"type", "auto_register", "model_type", "architectures", "net_name",
	"checkpoint_name_or_path", "batch_size", "use_past", "use_past_shard",
	"is_dynamic", "block_size", "num_blocks", "num_block",
	"repetition_penalty", "max_decode_length", "top_k", "top_p",
	"do_sample", "temperature", "use_cache", "bos_token_id",
	"eos_token_id", "pad_token_id", "ignore_token_id",
	"initializer_range", "init_method_std", "sigma", "mean",
	"rms_norm_eps", "layernorm_epsilon", "norm_eps", "theta",
	"rope_theta", "rotary_emb_base", "rotary_pct", "rope_ratio",
	"extend_method", "scaling_factor", "rope_scaling",
	"rotary_scaling_factor", "beta_fast", "beta_slow", "mscale",
	"mscale_all_dim", "pretrain_seqlen",
	"max_position_embedding", "layernorm_compute_type",
	"layernorm_compute_dtype", "softmax_compute_type",
	"softmax_compute_dtype", "rotary_dtype", "router_dense_type",
	"embedding_init_type", "res_dtype", "fp32_residual_connection",
	"attention_softmax_in_fp32", "apply_query_key_layer_scaling",
	"use_fused_rope", "use_fused_swiglu", "apply_rope_fusion",
	"bias_swiglu_fusion", "bias_dropout_fusion", "qkv_concat",
	"ffn_concat", "mlp_concat", "mla_qkv_concat", "compute_in_2d",
	"use_rope_slice", "input_sliced_sig", "use_attn_mask_compression",
	"use_eod_attn_mask_compression", "use_contiguous_weight_layout_attention",
	"use_interleaved_weight_layout_mlp", "moe_grouped_gemm", "use_gmm",
	"attention_bias",
	"has_bias", "out_proj_has_bias", "post_layer_norm",
	"apply_residual_connection_post_layernorm", "quantization_bit",
	"pre_seq_len", "prefix_projection", "eod_reset", "embedding_size",
	"layers_group", "parallel_optimizer", "emb_dropout_prob", "embedding_dropout_prob",
	"embed_dropout_prob", "return_extra_loss", "mtp_loss_factor",
	"mtp_loss_scaling_factor", "norm_topk_prob", "moe_router_pre_softmax",
	"moe_token_drop_policy", "routed_scaling_factor",
	"moe_router_topk_scaling_factor", "router_aux_loss_coef",
	"moe_aux_loss_coeff", "moe_router_load_balancing_type",
	"scoring_func", "moe_router_score_function", "topk_group", "n_group",
	"topk_method", "moe_z_loss_coeff", "use_pad_tokens",
	"moe_token_dispatcher_type", "moe_router_force_expert_balance",
	"npu_nums_per_device", "moe_router_enable_expert_bias",
	"moe_router_bias_update_rate", "use_fused_ops_topkrouter",
	"use_fused_ops_permute", "enable_gmm_safe_tokens", "ep_size",
	"moe_layer_freq", "qk_clip",
	"num_hash_layers", "offset", "hc_eps", "mhc_init_gating_factor", "compress_rope_theta",
	/* the indexer loss's weight (the kernels' saves do not depend on it) */
	"dsa_indexer_loss_coeff",
	"mhc_layernorm_epsilon",
	"context_parallel_method", "disable_gradient_division", "hidden_act", "use_flash_attention",
	/* moe_config */
	"aux_loss_factor", "aux_loss_factors", "aux_loss_types",
	"z_loss_factor", "routing_policy", "enable_sdrop", "expert_group_size",
	"balance_via_topk_bias", "topk_bias_update_rate",
	"use_gating_sigmoid", "use_shared_expert_gating",
	"callback_moe_droprate", "expert_model_parallel", "group_wise_a2a",
	"comp_comm_parallel", "comp_comm_parallel_degree", "ep_extend_tp",
	/* parallel_config / parallelism */
	"vocab_emb_dp", "gradient_aggregation_group",
	"pipeline_parallel_comm_overlap", "recompute", "select_recompute",
	/* model_config: the recompute plan's (config/graph.c reads it) */
	"no_recompute_layers",
	/* inference kernels: the prompt flash attention runs only when not
	 * training (mindformers/modules/transformer/transformer.py:1610 at
	 * v1.1.0, :2006 at v1.5.0; research/glm32k/glm32k_transformer.py:449 at
	 * v1.0.0 swaps it in for the flash kernel, a kernel without a
	 * backward); the incremental one is stored by ChatGLM2Config and
	 * YiZhaoConfig and read by no module (mindformers/models/glm2 at
	 * v1.1.0, research/yizhao at v1.5.0) */
	"use_prompt_flash_attention", "use_incre_flash_attention",
	/* token ids and names (PanGu-alpha's eod, GLM's [MASK] / [gMASK],
	 * Baichuan2's chat roles, WizardCoder's eos / pad, TeleChat's
	 * model_name for its weight converter) and generation settings */
	"eod_token_id", "mask_token_id", "gmask_token_id", "user_token_id",
	"assistant_token_id", "eos_token", "pad_token", "max_new_tokens",
	"model_name", "single_checkpoint_name_or_path", "is_sample_acceleration",
	/* inference-only switches of InternLM's cache (mindformers/models/
	 * llama/llama.py:127-128, :204-217 at v1.0.0: the kv-cache op and its
	 * shapes) */
	"use_kvcache_op", "is_flexible_shape",
	/* the loss's mask of eod tokens (CodeGeeX) */
	"eod_mask_loss",
	/* kernel and layout choices that keep the same tensors: the fused
	 * RMSNorm kernel (llama.py:183-189 at v1.3.0), the residual taken after
	 * the norm (pangualpha.py:136, :162 at v1.0.0), GLM's 2D rotary (two
	 * halves of the head rotated, attention.py:369 at v1.0.0), CodeGeeX2's
	 * interleaved_qkv and rotary_percent (no module of
	 * mindformers/models/glm2 reads either, v1.0.0 to v1.2.0) */
	"fused_rms_norm", "post_layernorm_residual", "position_encoding_2d",
	"interleaved_qkv", "rotary_percent",
	/* norm and softmax compute dtypes under WizardCoder's names
	 * (research/wizardcoder/wizardcoder.py:277, :305-306 at v1.0.0: the
	 * layernorm_compute_type / softmax_compute_type of the layers); the
	 * residual's dtype (fp32_residual_connection under its v1.7.0 name,
	 * mindformers/parallel_core/transformer_config_utils.py:247) */
	"layernorm_dtype", "softmax_dtype", "residual_dtype",
	/* muP's scaling of the logits (research/telechat/telechat.py:310-313,
	 * :439-440 at v1.5.0): a multiplier, the same tensors */
	"use_mup", "output_mult", "mup_scale_factor",
	NULL};

/* Keys whose value changes device memory in a way the estimate does not
 * model, with the value from which on they do (0: any true / non-zero /
 * non-empty value; otherwise a number above it). */
struct mo_unmodelled_key {
	const char *key;
	double above;
	const char *what;
	const char *plain; /* a string value that is what the estimate models */
	/* how the figures are off (NULL: that memory is left out) */
	const char *effect;
};

static const struct mo_unmodelled_key mo_unmodelled_keys[] = {
	{"use_sparse_attention", 0, "sparse attention", NULL, NULL},
	{"use_sliding_window", 0, "sliding-window attention", NULL, NULL},
	{"capacity_factor", 1, "expert capacity padding (capacity_factor)", NULL, NULL},
	{"seq_split_num", 1, "sequence pipelining (seq_split_num)", NULL, NULL},
	{"fine_grain_interleave", 1, "fine-grained interleaving", NULL, NULL},
	{"use_ring_attention", 0, "ring attention buffers", NULL, NULL},
	{"pipeline_parallel_schedule", 0, "a pipeline schedule other than 1F1B", "1f1b", NULL},
	{"pipeline_parallel_microbatch_size", 1, "pipeline micro-batch splitting", NULL, NULL},
	{"data_parallel_shard_strategy", 0, "FSDP that shards less than parameters, gradients and optimizer states", "optim_grads_params", NULL},
	/* MindSpore Transformers' parameter-efficient tuning (LoRA, P-Tuning
	 * v2, prefix tuning): PetAdapter.freeze_pretrained_model
	 * (mindformers/pet/tuners/pet_adapter.py:36, v1.2.0) freezes every
	 * pretrained weight, so only the adapters' weights are trainable:
	 * they alone get gradients and optimizer states */
	/* parallel_config.mem_coeff weighs memory in auto parallel's
	 * recursive-programming strategy search (_set_rp_matmul_mem_coef,
	 * mindformers/core/parallel_config.py:56 at v1.0.0 and v1.2.0;
	 * parallel.parallel_mode 2): the search picks each operator's sharding
	 * itself */
	{"mem_coeff", 0, "auto parallel's strategy search (mem_coeff weighs memory in it)", NULL,
	 "it prices parallel_config's data_parallel and model_parallel on every operator; the "
	 "search may shard operators otherwise, and the run's memory follows its choice"},
	{"pet_config", 0, "parameter-efficient tuning (pet_config: the pretrained weights frozen, adapters trained)", NULL,
	 "it prices a full fine-tune: the gradients and optimizer states of the frozen weights are "
	 "counted although the run keeps none, and the adapters' own weights and activations are left out"},
	{NULL, 0, NULL, NULL, NULL}};

static bool keys_in(const char *k, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], k) == 0)
			return true;
	return false;
}

static const struct mo_unmodelled_key *keys_unmodelled(const char *k)
{
	for (size_t i = 0; mo_unmodelled_keys[i].key; i++)
		if (strcmp(mo_unmodelled_keys[i].key, k) == 0)
			return &mo_unmodelled_keys[i];
	return NULL;
}

/* A value that turns a feature on: true, a non-zero number above `above`,
 * a non-empty string other than none/false. */
static bool keys_on(const mo_node *v, double above)
{
	bool b;
	int64_t i;
	bool ovf = false;
	double d;
	if (v->kind != MO_NODE_SCALAR)
		return v->n > 0;
	if (scalar_bool(v, &b))
		return b && above == 0;
	if (scalar_int(v, &i, &ovf))
		return (double)i > above && i != 0;
	if (scalar_float(v, &d))
		return d > above && d != 0.0;
	if (model_is_null(v))
		return false;
	return v->len > 0 && above == 0;
}

void model_account_key(struct mo_rd *r, const mo_node *key,
			  const mo_node *v, const char *path)
{
	const struct mo_unmodelled_key *u = keys_unmodelled(key->value);
	if (u) {
		const char *sv = model_str(v);
		if (u->plain && sv && strcasecmp(sv, u->plain) == 0)
			return;
		if (keys_on(v, u->above))
			diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled",
					r->file, key, path,
					"%s: the estimate does not model %s; %s",
					path, u->what,
					u->effect ? u->effect : "its figures leave that memory out");
		return;
	}
	if (keys_in(key->value, mo_irrelevant_keys))
		return;
	mo_diag *d = diags_add_at(r->diags, MO_SEV_WARNING, "unread-key",
				     r->file, key, path,
				     "%s is not read: memopt does not know "
				     "what it changes in memory", path);
	if (d)
		diag_set_hint(r->diags, d,
				 "if it changes the model's size or "
				 "activations, the estimate leaves that out");
}

/* ---- assumed values ----------------------------------------------------- */

void model_assume(struct mo_rd *r, enum mo_mf f, const char *source)
{
	r->m->ext->assumed_from[f] = source;
}

/* The fields listed when the file did not give them: the model's shape
 * and the training settings that scale memory. */
static const enum mo_mf mo_listed[] = {
	MF_NUM_LAYERS, MF_MTP, MF_HIDDEN, MF_FFN, MF_HEADS, MF_GROUPS,
	MF_KV_CHANNELS, MF_VOCAB, MF_UNTIE, MF_SEQ, MF_EXPERTS, MF_TOPK,
	MF_MOE_FFN, MF_SHARED_FFN, MF_FIRST_DENSE, MF_QK_LN, MF_MBS,
	MF_CDTYPE, MF_PDTYPE, MF_DISTOPT, MF_SKEW, MF_IDX_HEADS, MF_IDX_DIM,
	MF_IDX_TOPK, MF_DSA_SPARSE};

static const char *assumed_value(struct mo_rd *r, enum mo_mf f)
{
	const mo_model *m = r->m;
	mo_arena *a = m->arena;
	switch (f) {
	case MF_UNTIE:
		return m->untie_embeddings_and_output_weights ? "untied" : "tied";
	case MF_QK_LN: return m->qk_layernorm ? "true" : "false";
	case MF_DISTOPT: return m->distributed_optimizer ? "true" : "false";
	case MF_DSA_SPARSE: return m->dsa_sparse ? "true" : "false";
	case MF_CDTYPE: return m->compute_dtype;
	case MF_PDTYPE: return m->params_dtype;
	case MF_SKEW: return arena_printf(a, "%g", m->moe_routing_skew);
	default: break;
	}
	const int64_t *p = NULL;
	switch (f) {
	case MF_NUM_LAYERS: p = &m->num_layers; break;
	case MF_MTP: p = &m->mtp_num_layers; break;
	case MF_HIDDEN: p = &m->hidden_size; break;
	case MF_FFN: p = &m->ffn_hidden_size; break;
	case MF_HEADS: p = &m->num_attention_heads; break;
	case MF_GROUPS: p = &m->num_query_groups; break;
	case MF_KV_CHANNELS: p = &m->kv_channels; break;
	case MF_VOCAB: p = &m->vocab_size; break;
	case MF_SEQ: p = &m->seq_length; break;
	case MF_EXPERTS: p = &m->num_moe_experts; break;
	case MF_TOPK: p = &m->moe_router_topk; break;
	case MF_MOE_FFN: p = &m->moe_ffn_hidden_size; break;
	case MF_SHARED_FFN: p = &m->moe_shared_expert_intermediate_size; break;
	case MF_FIRST_DENSE: p = &m->first_k_dense_replace; break;
	case MF_MBS: p = &m->micro_batch_size; break;
	case MF_IDX_HEADS: p = &m->index_n_heads; break;
	case MF_IDX_DIM: p = &m->index_head_dim; break;
	case MF_IDX_TOPK: p = &m->index_topk; break;
	default: return NULL;
	}
	return arena_printf(a, "%lld", (long long)*p);
}

/* Derived rather than assumed: a MoE field of a dense model, the head
 * width and K/V groups (from the heads), the FFN of a legacy file (its
 * own rounding rule). */
static bool assumed_skip(const mo_model *m, enum mo_mf f)
{
	bool moe = m->num_moe_experts > 0;
	if (!moe && (f == MF_TOPK || f == MF_MOE_FFN || f == MF_SHARED_FFN ||
		     f == MF_FIRST_DENSE || f == MF_SKEW))
		return true;
	if (m->multi_latent_attention && (f == MF_GROUPS || f == MF_KV_CHANNELS))
		return true;
	/* the indexer's keys are listed for DeepSeek-V3.2's sparse attention */
	if (!m->dsa && (f == MF_IDX_HEADS || f == MF_IDX_DIM || f == MF_IDX_TOPK ||
			f == MF_DSA_SPARSE))
		return true;
	return false;
}

static const char *assumed_source(struct mo_rd *r, enum mo_mf f)
{
	const struct mo_model_ext *x = r->m->ext;
	if (x->assumed_from[f])
		return x->assumed_from[f];
	if (x->set[f])
		return NULL;
	switch (f) {
	case MF_GROUPS: return "num_attention_heads (no grouped K/V)";
	case MF_KV_CHANNELS: return "hidden_size / num_attention_heads";
	case MF_FFN: return "4 x hidden_size (memopt default)";
	case MF_MOE_FFN: return "the dense FFN width (memopt default)";
	case MF_SKEW: return "balanced routing: each rank's experts receive top-k copies of its "
			     "tokens (memopt default; give a measured imbalance)";
	default: return "memopt default";
	}
}

void model_note_assumed(struct mo_rd *r)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	size_t n = sizeof(mo_listed) / sizeof(*mo_listed);
	x->assumed = arena_alloc(m->arena, n * sizeof(*x->assumed));
	if (!x->assumed) {
		r->failed = true;
		return;
	}
	x->n_assumed = 0;
	for (size_t i = 0; i < n; i++) {
		enum mo_mf f = mo_listed[i];
		const char *src = assumed_source(r, f);
		if (!src || assumed_skip(m, f))
			continue;
		const char *path = model_field_path(m, f);
		const char *val = assumed_value(r, f);
		if (!val) {
			r->failed = true;
			return;
		}
		x->assumed[x->n_assumed++] =
			(struct mo_assumed){path, val, src};
	}
}

/* ---- whole-file checks --------------------------------------------------- */

static const mo_node *keys_get(const mo_node *map, const char *key)
{
	return map && map->kind == MO_NODE_MAP ? map_get(map, key) : NULL;
}

/* The estimate prices MindSpore Transformers' Muon step as muon.py at
 * 26354ff6 runs it with its defaults (estimate_weights.c): comm_strategy
 * "allgather", one weight at a time, and the embedding's and output layer's
 * unfused AdamW (use_fused_adamw False, :1773). Another comm_strategy
 * (167a50de batches same-shape weights up to 4 GiB per apply, :61-110) or
 * the fused AdamW changes that step's temporaries: said at the key. */
static void model_check_muon_options(struct mo_rd *r, const mo_node *root)
{
	const mo_model *mm = r->m;
	if (!mm->ext->set[MF_OPT] || strcmp(mm->optimizer, "muon") != 0 ||
	    strcmp(mm->framework, "pytorch") == 0)
		return;
	const mo_node *opt = keys_get(root, "optimizer");
	const mo_node *strategy = keys_get(opt, "comm_strategy");
	if (strategy && strategy->kind == MO_NODE_SCALAR && strcmp(strategy->value, "allgather") != 0)
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", model_pos_file(r, MF_OPT), strategy,
			     "optimizer.comm_strategy",
			     "optimizer.comm_strategy: the optimizer step is priced as comm_strategy "
			     "allgather (one weight at a time); '%s' holds other temporaries",
			     strategy->value);
	const mo_node *fused = keys_get(opt, "use_fused_adamw");
	if (fused && keys_on(fused, 0))
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", model_pos_file(r, MF_OPT), fused,
			     "optimizer.use_fused_adamw",
			     "optimizer.use_fused_adamw: the embedding's and output layer's update "
			     "is priced as the unfused AdamW (four fp32 temporaries per element), "
			     "an upper bound for the fused kernel");
}

/* DeepSeek-V4's hybrid attention has an op table for MindSpore
 * Transformers' PyNative layers only (ops_mindspore.c); Megatron-LM has no
 * such layer (MindSpeed-LLM's is read as MLA with a warning), so a PyTorch
 * model that names it is refused at the key instead of failing in the
 * estimator. */
static void model_check_hybrid_framework(struct mo_rd *r)
{
	const mo_model *mm = r->m;
	const struct mo_model_pos *at = &mm->ext->pos[MF_ATTN_VARIANT];
	if (!mm->dsv4_hybrid || strcmp(mm->framework, "pytorch") != 0)
		return;
	diags_add(r->diags, MO_SEV_ERROR, "unsupported", model_pos_file(r, MF_ATTN_VARIANT),
		  at->line, at->column, at->path,
		  "%s: the dsv4_hybrid attention is priced for MindSpore Transformers only "
		  "(framework mindspore); a PyTorch model cannot name it",
		  at->path);
}

/* DeepSeek-V3.2's sparse attention: what the file left out of the indexer
 * (MLATransformerConfig's fields, parallel_core/transformer_config.py at
 * mindspore-ai/mindformers 167a50de: dsa_indexer_n_heads / head_dim /
 * topk default None, :1427-1455, and __post_init__ accepts dsa only with
 * 64 heads of 128, :2890-2895; dsa_indexer_use_sparse_loss defaults to
 * False, :1467-1475). The top-k then is DeepSeek-V3.2's 2048
 * (configs/deepseek3/README.md:499, 530). */
void model_dsa_defaults(struct mo_rd *r)
{
	mo_model *m = r->m;
	const struct mo_model_ext *x = m->ext;
	if (!m->dsa)
		return;
	if (!x->set[MF_IDX_HEADS]) {
		m->index_n_heads = 64;
		model_assume(r, MF_IDX_HEADS, "the only dsa_indexer_n_heads MindSpore Transformers "
					      "accepts (transformer_config.py:2890-2895)");
	}
	if (!x->set[MF_IDX_DIM]) {
		m->index_head_dim = 128;
		model_assume(r, MF_IDX_DIM, "the only dsa_indexer_head_dim MindSpore Transformers "
					    "accepts (transformer_config.py:2890-2895)");
	}
	if (!x->set[MF_IDX_TOPK]) {
		m->index_topk = 2048;
		model_assume(r, MF_IDX_TOPK, "DeepSeek-V3.2's dsa_indexer_topk (configs/deepseek3/"
					     "README.md:499); the config class has none");
	}
	if (!x->set[MF_DSA_SPARSE])
		model_assume(r, MF_DSA_SPARSE, "MLATransformerConfig's default "
					       "(transformer_config.py:1467): the dense warm-up stage");
}

/* DeepSeek-V3.2's sparse attention: what MindSpore Transformers refuses or
 * the estimate leaves out. */
static void model_check_dsa(struct mo_rd *r)
{
	const mo_model *mm = r->m;
	const struct mo_model_pos *at = &mm->ext->pos[MF_ATTN_VARIANT];
	if (!mm->dsa)
		return;
	if (!mm->multi_latent_attention || mm->q_lora_rank <= 0) {
		diags_add(r->diags, MO_SEV_ERROR, "unsupported", model_pos_file(r, MF_ATTN_VARIANT), at->line, at->column,
			  at->path,
			  "%s: dsa is an MLA layer with a query down-projection: it needs "
			  "multi_latent_attention (transformer_config.py:2222-2224) and "
			  "q_lora_rank (the DSA forward up-projects through linear_qb, built "
			  "only with q_lora_rank, multi_latent_attention.py:587, :665-687)",
			  at->path);
		return;
	}
	if (strcmp(mm->framework, "pytorch") == 0) {
		diags_add(r->diags, MO_SEV_WARNING, "unmodelled", model_pos_file(r, MF_ATTN_VARIANT), at->line, at->column,
			  at->path,
			  "%s: the dsa attention has an op table in the MindSpore rules only; "
			  "the PyTorch rules price its layers as the MLA the file gives (the "
			  "indexer, its loss and the sparse attention not counted)",
			  at->path);
		return;
	}
	diags_add(r->diags, MO_SEV_WARNING, "unmodelled", model_pos_file(r, MF_ATTN_VARIANT), at->line, at->column, at->path,
		  "%s: the workspaces of the lightning indexer, the indexer loss's kernel "
		  "(npu_%s_lightning_indexer_grad_kl_loss) and the %s flash attention's "
		  "backward are not in the source: not counted",
		  at->path, mm->dsa_sparse ? "sparse" : "dense", mm->dsa_sparse ? "sparse" : "dense");
	if (!mm->dsa_sparse) {
		enum mo_mf f = mm->ext->set[MF_DSA_SPARSE] ? MF_DSA_SPARSE : MF_ATTN_VARIANT;
		const struct mo_model_pos *sp = &mm->ext->pos[f];
		diags_add(r->diags, MO_SEV_WARNING, "unmodelled", model_pos_file(r, f), sp->line, sp->column,
			  sp->path,
			  "%s: the dense warm-up stage (dsa_indexer_use_sparse_loss false) is not "
			  "modelled: it freezes every parameter outside the indexer "
			  "(gpt_model.py:287-300) and runs dense flash attention; the sparse "
			  "stage's layer and the full parameter state stand for it",
			  sp->path);
	}
	if (mm->kv_lora_rank != 512 || mm->qk_rope_head_dim != 64 || mm->index_head_dim != 128 ||
	    mm->index_n_heads != 64)
		diags_add(r->diags, MO_SEV_WARNING, "unsupported", model_pos_file(r, MF_ATTN_VARIANT), at->line, at->column,
			  at->path,
			  "%s: MindSpore Transformers accepts dsa only with kv_lora_rank 512, "
			  "qk_rope_head_dim 64, index_head_dim 128 and index_n_heads 64 "
			  "(transformer_config.py:2890-2895); priced as given",
			  at->path);
}

/* micro_batch_interleave_num (a top-level key of graph-mode files) splits
 * each micro-batch in two interleaved halves. */
void model_check_unmodelled(struct mo_rd *r, const mo_node *root)
{
	/* the unfused sparse attention (csa.py _construct_naive) is modelled
	 * (its saves and its backward's fp32 gradients, ops_mindspore.c); its
	 * indexer loss also scores the main attention over every compressed
	 * position from stop-gradient inputs (indexer.py :350-380), a
	 * forward-only transient the estimate does not hold */
	const mo_model *mm = r->m;
	const struct mo_model_pos *fp = &mm->ext->pos[MF_DSA_FUSED];
	if (mm->dsv4_hybrid && !mm->dsa_fused && mm->ext->set[MF_DSA_FUSED])
		diags_add(r->diags, MO_SEV_WARNING, "unmodelled", model_pos_file(r, MF_DSA_FUSED),
			     fp->line, fp->column, fp->path,
			     "%s: the unfused indexer loss's forward-only scores over every "
			     "compressed position (bf16 [heads, sq, sq / 4] and their fp32 "
			     "softmax) are not counted; a peak in that forward would be higher",
			     fp->path);
	model_check_muon_options(r, root);
	model_check_hybrid_framework(r);
	model_check_dsa(r);
	const char *run_file = r->run_file ? r->run_file : r->file;
	const mo_node *k = NULL, *v = NULL;
	for (size_t i = 0; root && i + 1 < root->n; i += 2)
		if (root->items[i]->kind == MO_NODE_SCALAR &&
		    strcmp(root->items[i]->value, "micro_batch_interleave_num") == 0)
			k = root->items[i], v = root->items[i + 1];
	if (k && keys_on(v, 1))
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", run_file,
				k, "micro_batch_interleave_num",
				"micro_batch_interleave_num: the estimate does "
				"not model interleaved micro-batch halves");
	const mo_node *ctx = keys_get(root, "context");
	const mo_node *mode = keys_get(ctx, "mode");
	if (r->m->ext->graph_mode && r->graph)
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", run_file,
				mode ? mode : r->model_at,
				mode ? "context.mode" : "model",
				"graph mode (context.mode 0) plans memory "
				"statically at compile time; the estimate "
				"models PyNative's allocator and may differ");
}

void model_missing_layers(struct mo_rd *r, const mo_node *root)
{
	const mo_node *at = r->model_at;
	if (!at) {
		const mo_node *model = keys_get(root, "model");
		at = model ? model : root;
	}
	diags_add_at(r->diags, MO_SEV_ERROR, "missing-key", r->file, at,
			r->hf ? "num_hidden_layers" : "model.num_layers",
			"the model has no layer count (num_layers or "
			"num_hidden_layers)");
}
