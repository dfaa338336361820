/* Weights, gradients and optimizer states per layer and per device: the
 * parameter count of each layer type after TP (experts after EP, or after
 * the TP mesh when EP is off: gpt/parallelize.py apply_moe_ep_tp), sharded
 * by FSDP over data_parallel_shard x CP (experts over dp_shard x CP x TP /
 * EP), optimizer states over DP when the optimizer is distributed.
 * Gradients are kept in the parameters' dtype (or grads_dtype); AdamW keeps
 * fp32 m and v (8 B/param), Muon an fp32 momentum (4 B/param), both plus an
 * fp32 master copy when the parameters are not fp32. `framework: pytorch`
 * with data_parallel_shard 1 is Megatron-LM's DDP: nothing sharded but the
 * distributed optimizer's state, its buffers padded; Megatron's learned
 * position table and linear biases counted when the model says so. */
#include "estimate/estimate_internal.h"

#include <math.h>
#include <string.h>

static double est_max(double a, double b)
{
	return a > b ? a : b;
}

static int64_t est_pos(int64_t v)
{
	return v > 0 ? v : 1;
}

static bool est_is_gated(const mo_model *m)
{
	return strcmp(m->hidden_act, "swiglu") == 0 ||
	       strcmp(m->hidden_act, "fusedswiglu") == 0 ||
	       strcmp(m->hidden_act, "geglu") == 0;
}

static double est_vocab_padded(const mo_model *m)
{
	int64_t mult = est_pos(m->make_vocab_size_divisible_by) * est_pos(m->tensor_parallel);
	return (double)((m->vocab_size + mult - 1) / mult * mult);
}

/* The ranks each layer's experts are split over. Megatron (framework
 * pytorch): E / EP experts per rank, each expert's FFN split over the
 * expert tensor-parallel size (model_etp; moe/experts.py builds the
 * expert Linears over the expert TP group): EP x ETP. The mindspore rules:
 * EP, or the TP mesh when EP is off. */
static double est_ep_eff(const mo_model *m)
{
	int64_t etp = model_etp(m);
	if (etp > 0)
		return (double)est_pos(m->expert_parallel) * (double)etp;
	if (m->expert_parallel > 1)
		return (double)m->expert_parallel;
	return (double)est_pos(m->tensor_parallel);
}

/* Transformer Engine's dummy weight gradients. With Megatron's gradient
 * accumulation fusion (its default; --no-gradient-accumulation-fusion,
 * arguments.py:2377-2381 at Megatron 11debfa7) every TE Linear passes
 * fuse_wgrad_accumulation (extensions/transformer_engine.py:618 TELinear,
 * :820 TELayerNormColumnParallelLinear, :1508 TEGroupedLinear), writes its
 * weight gradient into main_grad and hands autograd a dummy so that the
 * DDP hook still fires (Megatron's DDP marks every parameter
 * grad_added_to_main_grad, distributed_data_parallel.py:118):
 * get_dummy_wgrad(main_grad.shape, weight.dtype) (TransformerEngine
 * c188b533 module/linear.py:953-962, layernorm_linear.py:1002-1011,
 * grouped_linear.py:488-499), a torch.empty kept in the module-global dict
 * _dummy_wgrads per (rows, cols, dtype) and never freed (module/base.py:64,
 * :79-92). Megatron's own output layer (ColumnParallelLinear) takes the
 * same cache when TE is installed, in its input's dtype
 * (tensor_parallel/layers.py:587-604). Megatron's DDP only (FSDP keeps no
 * main_grad); allocated at each shape's first backward, then kept. */
static bool est_fused_wgrads(const mo_model *m)
{
	return strcmp(m->framework, "pytorch") == 0 && est_pos(m->data_parallel_shard) == 1 &&
	       strcmp(m->transformer_impl, "transformer_engine") == 0 &&
	       m->gradient_accumulation_fusion;
}

/* Megatron-LM's DDP (`framework: pytorch`, data_parallel_shard 1): nothing
 * is sharded but the distributed optimizer's state, over the data-parallel
 * group with CP for dense parameters (distributed_data_parallel.py:294-296
 * at 09eb91e5: buffers over intra_dp_cp_group) and over the expert
 * data-parallel group for experts (:299-302, expt_dp_group): the ranks of
 * a stage, DP x CP x TP, over EP x ETP (parallel_state.py:
 * expert_data_parallel_size = world_size // (expert_tensor_parallel_size x
 * expert_model_parallel_size x pipeline_model_parallel_size)). */
static bool est_cfg_div_megatron(mo_est_cfg *c, const mo_model *m)
{
	if (strcmp(m->framework, "pytorch") != 0 || c->dps != 1)
		return false;
	double dp_cp = (double)(c->dp * c->cp);
	double edp = est_max(1.0, dp_cp * (double)c->tp / est_ep_eff(m));
	c->fsdp_div = 1.0;
	c->expert_div = 1.0;
	c->opt_div = m->distributed_optimizer ? dp_cp : 1.0;
	c->opt_expert_div = m->distributed_optimizer ? edp : 1.0;
	return true;
}

static void est_cfg_div(mo_est_cfg *c, const mo_model *m)
{
	if (est_cfg_div_megatron(c, m))
		return;
	double shard = (double)(c->dps * c->cp);
	double ep_eff = est_ep_eff(m);
	double over = c->dp > c->dps && m->distributed_optimizer ? (double)c->dp / (double)c->dps : 1.0;
	c->fsdp_div = est_max(1.0, shard);
	c->expert_div = est_max(1.0, shard * (double)c->tp / ep_eff);
	c->opt_div = c->fsdp_div * over;
	c->opt_expert_div = c->expert_div * over;
}

/* Megatron-LM's loss backward and gradient buffers (`framework: pytorch`). */
static void est_cfg_pytorch(mo_est_cfg *c, const mo_model *m)
{
	bool pytorch = strcmp(m->framework, "pytorch") == 0;
	/* The loss backward: the unfused cross-entropy's fp32 gradient plane
	 * and its cast to the compute dtype (first cut, mindspore). Megatron's
	 * vocab_parallel_cross_entropy writes the gradient into its saved fp32
	 * softmax in place (cross_entropy.py:91, :117 at 09eb91e5), so only the
	 * cast is new; with fp32 logits `.float()` (:28) is the logits
	 * themselves and nothing is cast. */
	c->loss_bytes = 4.0 + c->cbytes;
	if (pytorch)
		c->loss_bytes = c->cbytes < 4.0 ? c->cbytes : 0.0;
	/* Megatron's distributed optimizer pads each bucket of its parameter
	 * and gradient buffers to a multiple of lcm(DP x CP, 128) elements
	 * (param_and_grad_buffer.py:839-856 at 09eb91e5); buckets hold
	 * max(4e7, 1e6 x DP) elements with --overlap-grad-reduce, else the
	 * whole buffer is one (distributed_data_parallel.py:65-68). */
	/* Megatron builds the embedding on every stage that runs the MTP
	 * layers too (gpt_model.py:144-147 at 11debfa7, `if self.pre_process or
	 * self.mtp_process`): with PP > 1 the last stage holds a second copy,
	 * its weight tied to the first stage's like a shared output layer
	 * (:772), so with its own gradient and optimizer state */
	c->mtp_embed_params = pytorch && c->mtp > 0 && c->pp > 1 ? c->embed_params : 0.0;
	c->pad_multiple = 0;
	c->bucket_params = 0;
	if (pytorch && c->dps == 1 && m->distributed_optimizer && c->dp * c->cp > 1) {
		int64_t a = c->dp * c->cp, b = 128;
		while (b != 0) {
			int64_t r = a % b;
			a = b;
			b = r;
		}
		c->pad_multiple = (double)(c->dp * c->cp / a * 128);
		c->bucket_params = m->overlap_grad_reduce ? est_max(4e7, 1e6 * (double)c->dp) : 0;
	}
}

/* Elements a stage's buffers gain from the padding above, for `local`
 * parameters: each bucket's end rounded up (the buckets taken as equal). */
double est_buffer_padding(const mo_est_cfg *c, double local)
{
	if (c->pad_multiple <= 0 || local <= 0)
		return 0;
	double buckets = c->bucket_params > 0 ? ceil(local / c->bucket_params) : 1.0;
	double each = ceil(local / buckets / c->pad_multiple) * c->pad_multiple;
	return each * buckets - local;
}

/* Multi-latent attention's YaRN rotary tables (Megatron 11debfa7): MLA
 * builds its own YarnRotaryEmbedding per attention module (rope_type
 * defaults to "yarn" for MLA, transformer_config.py:1814;
 * multi_latent_attention.py:126-145), whose __init__ registers cos_cached
 * and sin_cached buffers of original_max_position_embeddings (default
 * 4096, transformer_config.py:1826; no argument at 11debfa7) positions x
 * qk_rope_head_dim in the default dtype (yarn_rotary_pos_embedding.py:
 * 97-99, 164-176), cast with the model by Float16Module under --bf16 /
 * --fp16 (module.py:401-407): the parameters' dtype. Its forward is
 * @lru_cache(maxsize=32) (:105), one cache for every instance, so it keeps
 * the fp32 embedding [rotary_seq_len = s (x TP under SP x CP,
 * rotary_pos_embedding.py:219-228), 1, 1, rope dim] (:142-157), sliced to
 * the rank's s / CP under CP (:158-161), of the 32 modules called last.
 * Without rope fusion MLA calls that forward every step
 * (multi_latent_attention.py:532); with it (Megatron's default)
 * get_cached_cos_sin (:521-523), which on its first call finds the cached
 * dtype (the default, fp32) unlike the compute dtype and remakes the
 * buffers through the same forward at the run's length
 * (yarn_rotary_pos_embedding.py:178-189): cos/sin of s / CP positions in
 * the compute dtype, and the cached embedding. */
static void est_cfg_mla_rope(mo_est_cfg *c, const mo_model *m, const mo_est_dims *d)
{
	if (strcmp(m->framework, "pytorch") != 0 || !m->multi_latent_attention)
		return;
	double rope = (double)m->qk_rope_head_dim, sq = est_expr("sq", d);
	c->rope_fusion = m->apply_rope_fusion;
	c->mla_rope_lru = u64_of(sq * rope * 4.0);
	c->mla_rope_module = u64_of(2.0 * rope *
				       (m->apply_rope_fusion ? sq * c->cbytes : 4096.0 * c->pbytes));
}

/* Megatron's alltoall MoE dispatcher keeps its last micro-batch's routing
 * on the module: dispatch_preprocess stores self.probs (the router's
 * probabilities, [tokens, experts] in the router's dtype: the input's
 * unless --moe-router-dtype, router.py:94-99 gating, and the score
 * functions keep it, moe_utils.py:591-603 type_as(logits)),
 * self.routing_map (bool [tokens, experts]) and
 * self.reversed_local_input_permutation_mapping (token_dispatcher.py:610-611,
 * 636 at Megatron 11debfa7), and nothing clears them after the step (only
 * tokens_per_expert, :743). The mapping is what permute returns: with
 * --moe-permute-fusion TransformerEngine's row_id_map, int32 [tokens,
 * 2 x experts + 1] (TE c188b533 triton/permutation.py:52,
 * permutation.py:575), else the int64 sorted_indices of the routed copies,
 * tokens x top-k (moe_utils.py permute, masked_select). Tokens: the MoE
 * layer's input on this rank, [s / CP (/ TP under SP), b]. */
static void est_cfg_dispatcher(mo_est_cfg *c, const mo_model *m, const mo_est_dims *d)
{
	if (strcmp(m->framework, "pytorch") != 0 || m->num_moe_experts <= 0 ||
	    strcmp(m->moe_token_dispatcher_type, "alltoall") != 0)
		return;
	double tokens = est_expr("tsp", d), experts = (double)m->num_moe_experts;
	double router = m->moe_router_dtype ? (double)est_dtype_bytes(m->moe_router_dtype, d)
					    : c->cbytes;
	double map = m->moe_permute_fusion ? (2.0 * experts + 1.0) * 4.0
					   : (double)m->moe_router_topk * 8.0;
	c->dispatcher_state = u64_of(tokens * (experts * router + experts + map));
}

/* The all-gather dispatcher (Megatron's default) gathers each MoE layer's
 * local tokens [s / CP (/ TP under SP) x b, h] over the TP x EP group into
 * the global "mpu" buffer (token_dispatcher.py:281-303 token_dispatch,
 * gather_from_sequence_parallel_region(..., use_global_buffer=True);
 * tensor_parallel/mappings.py:118-156 _gather_along_first_dim ->
 * get_global_memory_buffer().get_tensor(dim_size, dtype, "mpu"), at
 * Megatron d98e8a64): the buffer the output layer's gather shares, kept at
 * its largest request and never freed. A group of one gathers nothing. */
static void est_cfg_allgather(mo_est_cfg *c, const mo_model *m, const mo_est_dims *d)
{
	if (strcmp(m->framework, "pytorch") != 0 || m->num_moe_experts <= 0 ||
	    strcmp(m->moe_token_dispatcher_type, "allgather") != 0)
		return;
	double group = (double)est_pos(m->tensor_parallel) * (double)est_pos(m->expert_parallel);
	if (group <= 1)
		return;
	c->dispatcher_gather = u64_of(est_expr("tsp", d) * group *
				      (double)m->hidden_size * c->cbytes);
}

void est_cfg_init(mo_est_cfg *c, const mo_model *m)
{
	mo_est_dims d;
	est_dims_init(&d, m);
	memset(c, 0, sizeof(*c));
	c->pp = est_pos(m->pipeline_parallel);
	c->vpp = est_pos(m->virtual_pipeline);
	c->mbn = est_pos(m->micro_batch_num);
	c->tp = est_pos(m->tensor_parallel);
	c->cp = est_pos(m->context_parallel);
	c->dp = est_pos(m->data_parallel);
	c->dps = est_pos(m->data_parallel_shard);
	c->ep = est_pos(m->expert_parallel);
	c->routing_skew = m->moe_routing_skew;
	c->prefetch = 1;
	c->num_layers = m->num_layers;
	c->mtp = m->mtp_num_layers;
	c->world = m->world_size;
	c->pbytes = (double)est_dtype_bytes("p", &d);
	c->cbytes = (double)est_dtype_bytes("c", &d);
	/* gradient buffers: the params' dtype unless grads_dtype says
	 * otherwise (Megatron's fp32 main_grad under --bf16) */
	c->gbytes = m->grads_dtype ? (double)est_dtype_bytes(m->grads_dtype, &d) : c->pbytes;
	bool master = c->pbytes < 4;
	c->optimizer = strcmp(m->optimizer, "muon") == 0 ? "muon" : "adamw";
	c->obytes = (strcmp(c->optimizer, "muon") == 0 ? 4.0 : 8.0) + (master ? 4.0 : 0.0);
	/* MindSpore Transformers' Muon (pynative/optimizer/muon.py
	 * _build_muon_filter:1935-1957, _initialize_state:2020-2041) keeps an
	 * fp32 master (bf16 parameters, _init_main_params:1977-1993) and an
	 * fp32 momentum per 2-D / 3-D weight, but sends the word embedding and
	 * the output layer (the default adamw_include) and every 1-D weight to
	 * AdamW: fp32 exp_avg and exp_avg_sq. The layers' norms are counted at
	 * the Muon rate (h per norm). */
	c->table_obytes = strcmp(c->optimizer, "muon") == 0 && strcmp(m->framework, "pytorch") != 0
				  ? 8.0 + (master ? 4.0 : 0.0)
				  : c->obytes;
	/* MindSpore's functional grad returns fresh gradients during backward
	 * and the trainer drops them after the step: with fp32 parameters (no
	 * master copy) nothing of them exists at the loss (notes/calibration.md,
	 * DSv3-mini term 1). bf16 parameters keep the first-cut 16 B/param. */
	c->late_grads = strcmp(m->framework, "pytorch") != 0 && c->pbytes >= 4.0 &&
			c->cbytes < c->pbytes;
	est_cfg_div(c, m);
	/* HyperParallel's pipeline schedule unshards a rank's whole stage before
	 * its first compute step and reshards it after the last
	 * (add_fsdp_unshard_reshard), and reduces gradients once, after the
	 * last micro-batch's backward (add_fsdp_reduce_grad): notes/calibration.md,
	 * "PP 2". */
	c->pp_unsharded = strcmp(m->framework, "pytorch") != 0 && c->pp > 1 && c->fsdp_div > 1.0;
	/* MindSpore Transformers' AdamW (optimizer/adamw.py `_run_adamw_opt`)
	 * updates one parameter at a time in fp32: next_param, denom,
	 * exp_avg / denom and its product with the step size are alive at once
	 * (4 x 4 B per element); with non-fp32 parameters the fp32 casts of the
	 * parameter and of its gradient are locals alive for the whole update
	 * (+2 x 4 B). Measured with fp32 parameters: the DSv3-mini pp 2 stage-0
	 * ledger peaks in the embedding's update with 4 table-sized
	 * temporaries (notes/ledger-decode-pp2-stage0.md). */
	c->opt_scratch = strcmp(m->framework, "pytorch") != 0 && strcmp(c->optimizer, "adamw") == 0
				 ? 16.0 + (c->pbytes < 4.0 ? 8.0 : 0.0)
				 : 0.0;
	/* MindSpore Transformers' Muon (pynative/optimizer/muon.py at
	 * 26354ff6, its default comm_strategy "allgather": the sequential
	 * loop of construct :2385-2427, one weight at a time) updates the
	 * embedding and the output layer with `_run_adamw_opt` (use_fused_adamw
	 * defaults to False, :1773) on their fp32 master (fp32_params, so the
	 * parameter's cast is a no-op): the four fp32 temporaries the AdamW
	 * ledger measured (16 B) plus the gradient's fp32 cast when the
	 * gradients are not fp32 (adamw.py:40-41). Its layers' weights take
	 * est_muon_weight's update, per weight in units of these bytes
	 * (est_type_max_local). */
	if (strcmp(m->framework, "pytorch") != 0 && strcmp(c->optimizer, "muon") == 0) {
		c->opt_scratch = 16.0 + (c->gbytes < 4.0 ? 4.0 : 0.0);
		c->muon_step = true;
	}
	double vpad = est_vocab_padded(m), h = (double)m->hidden_size;
	c->embed_params = vpad * h / (double)c->tp;
	/* the final norm: weight (and LayerNorm's bias) */
	double final_norm = strcmp(m->normalization, "LayerNorm") == 0 ? 2 * h : h;
	c->head_params = final_norm + (m->untie_embeddings_and_output_weights || c->pp > 1
				      ? vpad * h / (double)c->tp
				      : 0.0);
	/* Megatron's learned absolute position embeddings: a
	 * torch.nn.Embedding(max_position_embeddings, hidden) on the first
	 * stage, not split by TP (language_model_embedding.py:67) */
	c->pos_params = strcmp(m->position_embedding_type, "learned_absolute") == 0
				? (double)m->max_position_embeddings * h
				: 0.0;
	c->tok = est_expr("tok", &d);
	c->vocab = est_expr("vocab", &d);
	est_cfg_pytorch(c, m);
	c->dev = m->device;
	/* PyTorch's GEMM workspaces (the device preset's workspace_mib, its
	 * sources in model/presets.c), allocated at the first GEMM and kept;
	 * MindSpore's workspace is inside its calibrated rules */
	c->workspace = strcmp(m->framework, "pytorch") == 0
			       ? u64_of(m->device.workspace_mib * 1048576.0)
			       : 0;
	/* the run's CUBLAS_WORKSPACE_CONFIG replaces the preset's assumed
	 * :4096:8: one cuBLAS workspace for the forward's thread and one for
	 * autograd's device thread, plus Transformer Engine's GEMM workspace
	 * (the device's gemm_workspace_mib; model/presets.c) */
	if (c->workspace && m->cublas_workspace_kib > 0)
		c->workspace = u64_add(u64_mul(2, u64_mul((uint64_t)m->cublas_workspace_kib, 1024)),
				       u64_of(m->device.gemm_workspace_mib * 1048576.0));
	/* Transformer Engine's GroupedLinear (Megatron's --moe-grouped-gemm
	 * with transformer_engine) runs its GEMMs on 4 streams, each with its
	 * own workspace, allocated at the first grouped GEMM and kept
	 * (gemm.py:49-65 lru_cache, general_grouped_gemm :415; the count
	 * common/util/multi_stream.cpp:53, TransformerEngine d0067d0d) */
	if (c->workspace && m->moe_grouped_gemm && m->num_moe_experts > 0 &&
	    strcmp(m->transformer_impl, "transformer_engine") == 0) {
		c->grouped_workspaces = true;
		c->workspace += u64_of(4.0 * m->device.gemm_workspace_mib * 1048576.0);
	}
	/* Megatron's pipeline schedules hand each model chunk the activation
	 * received from the previous stage through set_input_tensor
	 * (transformer_block.py: self.input_tensor = input_tensor) and
	 * backward_step retains its gradient (schedules.py: x.retain_grad()),
	 * so the chunk keeps both until its next forward replaces them. One
	 * received tensor: [s / CP (/ TP under SP), b, h] in the compute dtype
	 * (p2p_communication.py, get_tensor_shapes). */
	if (strcmp(m->framework, "pytorch") == 0 && c->pp > 1)
		c->pp_input = u64_of(est_expr("tsp", &d) * (double)m->hidden_size * c->cbytes);
	/* HyperParallel's PipelineStage allocates, when a chunk sends its
	 * output forward, the buffer that output's gradient will be received
	 * into (core/pipeline_parallel/stage.py exec_fwd_send_ops ->
	 * _construct_backward_recv_info: platform.new_tensor of the output's
	 * shape) and drops it only after that micro-batch's backward
	 * (platform/mindspore/pipeline_parallel/stage.py backward_one_chunk,
	 * _clear_recv_buffer), at hyper-parallel fdd0a808. The output is the
	 * hidden states [s / CP (/ TP under SP), b, h], or the packed mHC
	 * streams (x hc_mult), in the compute dtype. */
	if (strcmp(m->framework, "mindspore") == 0 && c->pp > 1)
		c->pp_grad_recv = u64_of(est_expr("tsp", &d) * (double)m->hidden_size *
					 (double)(m->hyper_connections ? m->hc_mult : 1) * c->cbytes);
	/* the output layer's dummy wgrad: [padded vocab / TP, hidden] */
	c->dummy_wgrads = est_fused_wgrads(m);
	c->head_wgrad = (mo_est_wgrad){(int64_t)(vpad / (double)c->tp), m->hidden_size};
	/* Under sequence parallelism Megatron's output layer (its own
	 * ColumnParallelLinear, whatever transformer_impl) gathers its input
	 * [s / CP / TP, b, h] over TP into get_global_memory_buffer()
	 * .get_tensor(dim_size, input.dtype, "mpu") (tensor_parallel/
	 * layers.py:478-484, again in backward :514-521, at Megatron
	 * 11debfa7; :474 at adc69dba, :620 at 93ebf8d7), and GlobalMemoryBuffer
	 * keeps one tensor per (name, dtype), grown to the largest request and
	 * never freed (utils.py:625-651 at 11debfa7). The MTP layers' logits
	 * reuse it (same shape). Megatron's all-gather MoE dispatcher gathers
	 * into the same buffer (token_dispatcher.py:259-261 at adc69dba), which
	 * can make it larger (cfg.dispatcher_gather). */
	if (strcmp(m->framework, "pytorch") == 0 && (d.cond & MO_C_SP))
		c->head_gather = u64_of(est_expr("tok", &d) * (double)m->hidden_size *
					   c->cbytes);
	est_cfg_mla_rope(c, m, &d);
	est_cfg_dispatcher(c, m, &d);
	est_cfg_allgather(c, m, &d);
}

static double est_norm_params(const mo_model *m)
{
	double h = (double)m->hidden_size;
	return strcmp(m->normalization, "LayerNorm") == 0 ? 2 * h : h;
}

/* DeepSeek-V4's hybrid attention on one rank (heads split by TP), its
 * parameters as the model counts them (model/params.c), and its largest
 * weight: the query's projections, the output's, the compressor's kv and
 * gate projections, the indexer's query projection. */
static double est_hybrid_params(const mo_model *m, int64_t ratio, double *largest)
{
	double h = (double)m->hidden_size, tp = (double)est_pos(m->tensor_parallel);
	double a = (double)m->num_attention_heads / tp, vd = (double)m->v_head_dim;
	double ql = (double)m->q_lora_rank, olr = (double)(m->o_groups * m->o_lora_rank);
	double mx = est_max(est_max(h * ql, ql * a * vd), olr * h);
	if (ratio > 0)
		mx = est_max(mx, h * (ratio == 4 ? 2.0 : 1.0) * vd);
	if (ratio == 4)
		mx = est_max(mx, ql * (double)(m->index_n_heads * m->index_head_dim));
	*largest = mx;
	return model_hybrid_attention_params(m, ratio, a);
}

static double est_attn_params(const mo_model *m)
{
	double h = (double)m->hidden_size, tp = (double)est_pos(m->tensor_parallel);
	double a = (double)m->num_attention_heads, g = (double)m->num_query_groups;
	double d = (double)m->kv_channels;
	if (!m->multi_latent_attention)
		return h * (a + 2 * g) * d / tp + a * d / tp * h +
		       (m->qk_layernorm ? 2 * d : 0);
	double ql = (double)m->q_lora_rank, kvl = (double)m->kv_lora_rank;
	double rope = (double)m->qk_rope_head_dim, nope = (double)m->qk_nope_head_dim;
	double vd = (double)m->v_head_dim, dqk = nope + rope;
	double p = h * (kvl + rope) + kvl + kvl * a * (nope + vd) / tp + a * vd / tp * h;
	if (ql > 0)
		p += h * ql + ql + ql * a * dqk / tp;
	else
		p += h * a * dqk / tp;
	/* DSA's indexer is not split over TP ("single card only, no parallel
	 * sharding", DSAIndexer in dsa_indexer.py at mindformers 167a50de); the
	 * PyTorch rules price the MLA alone and say so (accounting.c) */
	if (model_dsa_table(m))
		p += model_dsa_indexer_params(m);
	return p;
}

/* One HyperConnectionModule (model/params.c). Its parameters are fp32
 * (params_dtype=mstype.float32), counted here in the model's parameter
 * dtype: 0.4M per module at h 4096, n 4. Not split by TP. */
static double est_hc_params(const mo_model *m)
{
	return model_hc_params(m);
}

static double est_mlp_params(const mo_model *m, double ffn, double tp)
{
	double h = (double)m->hidden_size, g = est_is_gated(m) ? 2.0 : 1.0;
	return h * g * ffn / tp + ffn / tp * h;
}

/* Megatron's linear biases (transformer_config.py:176-182 at 09eb91e5):
 * QKV's when add_bias_linear or add_qkv_bias (attention.py builds
 * linear_qkv with bias=add_bias_linear or add_qkv_bias), split by TP like
 * its columns; the projection's and FC2's (row-parallel: the whole hidden
 * width on every rank) and FC1's (split by TP) with add_bias_linear.
 * Standard attention and the dense MLP only: MLA and expert biases are
 * not counted. */
static double est_bias_params(const mo_model *m, bool moe)
{
	double h = (double)m->hidden_size, tp = (double)est_pos(m->tensor_parallel);
	double a = (double)m->num_attention_heads, g = (double)m->num_query_groups;
	double d = (double)m->kv_channels, p = 0;
	if (m->multi_latent_attention)
		return 0;
	if (m->add_bias_linear || m->add_qkv_bias)
		p += (a + 2 * g) * d / tp;
	if (!m->add_bias_linear)
		return p;
	p += h;
	if (!moe)
		p += (est_is_gated(m) ? 2.0 : 1.0) * (double)m->ffn_hidden_size / tp + h;
	return p;
}

/* The largest of an MLP's two weights (fc1 holds gate and up). */
static double est_mlp_max(const mo_model *m, double ffn, double tp)
{
	double h = (double)m->hidden_size, g = est_is_gated(m) ? 2.0 : 1.0;
	return h * g * ffn / tp;
}

/* The largest attention weight: the fused qkv projection, the output
 * projection, or MLA's fused down projection / up projections. */
static double est_attn_max(const mo_model *m)
{
	double h = (double)m->hidden_size, tp = (double)est_pos(m->tensor_parallel);
	double a = (double)m->num_attention_heads, g = (double)m->num_query_groups;
	double d = (double)m->kv_channels;
	if (!m->multi_latent_attention)
		return est_max(h * (a + 2 * g) * d / tp, a * d / tp * h);
	double ql = (double)m->q_lora_rank, kvl = (double)m->kv_lora_rank;
	double rope = (double)m->qk_rope_head_dim, nope = (double)m->qk_nope_head_dim;
	double vd = (double)m->v_head_dim, dqk = nope + rope;
	double v = est_max(h * (ql + kvl + rope), a * vd / tp * h);
	v = est_max(v, kvl * a * (nope + vd) / tp);
	return est_max(v, ql > 0 ? ql * a * dqk / tp : h * a * dqk / tp);
}

static void est_wgrad_add(mo_est_type *t, int64_t rows, int64_t cols)
{
	if (rows > 0 && cols > 0 && t->n_wgrads < MO_EST_MAX_WGRADS)
		t->wgrads[t->n_wgrads++] = (mo_est_wgrad){rows, cols};
}

/* The local [out, in] weights of a layer's Transformer Engine Linears as
 * Megatron's TE spec builds them (Megatron 11debfa7): attention
 * linear_qkv + linear_proj (gpt_layer_specs.py:147-149); MLA
 * linear_q_down_proj (duplicated) + linear_q_up_proj, or linear_q_proj
 * without q_lora_rank, linear_kv_down_proj (duplicated), linear_kv_up_proj,
 * linear_proj (:122-127; shapes multi_latent_attention.py:364-468); the
 * MLP's fc1 (gate and up) + fc2; a MoE layer's shared expert (split by TP)
 * and its experts' per-expert fc1 + fc2 (split by ETP; GroupedLinear's
 * weight{i}, one shape for all); the MTP layer's eh_proj, 2h -> h
 * column-parallel (multi_token_prediction.py:576-586). The router's
 * weight gets a real gradient (moe_utils.py:998-1023), the norms' too. */
static void est_type_wgrads(mo_est_type *t, const mo_model *m, bool moe, bool mtp)
{
	int64_t h = m->hidden_size, tp = est_pos(m->tensor_parallel);
	int64_t a = m->num_attention_heads, gated = est_is_gated(m) ? 2 : 1;
	t->n_wgrads = 0;
	if (!est_fused_wgrads(m))
		return;
	if (m->multi_latent_attention) {
		int64_t ql = m->q_lora_rank, kvl = m->kv_lora_rank, vd = m->v_head_dim;
		int64_t dqk = m->qk_nope_head_dim + m->qk_rope_head_dim;
		if (ql > 0) {
			est_wgrad_add(t, ql, h);
			est_wgrad_add(t, a * dqk / tp, ql);
		} else {
			est_wgrad_add(t, a * dqk / tp, h);
		}
		est_wgrad_add(t, kvl + m->qk_rope_head_dim, h);
		est_wgrad_add(t, a * (m->qk_nope_head_dim + vd) / tp, kvl);
		est_wgrad_add(t, h, a * vd / tp);
	} else {
		int64_t g = m->num_query_groups, d = m->kv_channels;
		est_wgrad_add(t, (a + 2 * g) * d / tp, h);
		est_wgrad_add(t, h, a * d / tp);
	}
	if (moe) {
		int64_t sh = m->moe_shared_expert_intermediate_size, f = m->moe_ffn_hidden_size;
		int64_t etp = est_pos(model_etp(m));
		est_wgrad_add(t, gated * sh / tp, h);
		est_wgrad_add(t, h, sh / tp);
		est_wgrad_add(t, gated * f / etp, h);
		est_wgrad_add(t, h, f / etp);
	} else {
		est_wgrad_add(t, gated * m->ffn_hidden_size / tp, h);
		est_wgrad_add(t, h, m->ffn_hidden_size / tp);
	}
	if (mtp)
		est_wgrad_add(t, h / tp, 2 * h);
}

static bool est_wgrad_same(mo_est_wgrad a, mo_est_wgrad b)
{
	return a.rows == b.rows && a.cols == b.cols;
}

/* Whether shape k of type t appeared before it: in an earlier counted
 * type or earlier in t. */
static bool est_wgrad_seen(const mo_estimate *e, const size_t *count, size_t t, size_t k)
{
	for (size_t u = 0; u <= t; u++) {
		if (!count[u])
			continue;
		size_t n = u == t ? k : e->types[u].n_wgrads;
		for (size_t j = 0; j < n; j++)
			if (est_wgrad_same(e->types[u].wgrads[j], e->types[t].wgrads[k]))
				return true;
	}
	return false;
}

uint64_t est_dummy_wgrads(const mo_estimate *e, const size_t *count, bool last)
{
	const mo_est_cfg *c = &e->cfg;
	if (!c->dummy_wgrads)
		return 0;
	/* the layers' in the params dtype, one per distinct shape */
	uint64_t sum = 0;
	for (size_t t = 0; t < e->n_types; t++)
		for (size_t k = 0; count[t] && k < e->types[t].n_wgrads; k++)
			if (!est_wgrad_seen(e, count, t, k))
				sum = u64_add(sum, u64_of((double)e->types[t].wgrads[k].rows *
								(double)e->types[t].wgrads[k].cols *
								c->pbytes));
	if (!last)
		return sum;
	/* the output layer's in the compute dtype: its own key unless a
	 * layer's weight has its shape and that dtype too */
	bool shared = false;
	for (size_t t = 0; t < e->n_types && c->cbytes == c->pbytes; t++)
		for (size_t k = 0; count[t] && k < e->types[t].n_wgrads; k++)
			shared |= est_wgrad_same(e->types[t].wgrads[k], c->head_wgrad);
	if (shared)
		return sum;
	return u64_add(sum, u64_of((double)c->head_wgrad.rows * (double)c->head_wgrad.cols *
					 c->cbytes));
}

void est_type_params(mo_est_type *t, const mo_model *m, size_t type)
{
	bool mtp = m->types[type].mtp, moe = m->types[type].moe;
	t->moe = moe;
	t->expert_ns_sq = 0;
	double h = (double)m->hidden_size, tp = (double)est_pos(m->tensor_parallel);
	int64_t ratio = m->types[type].compress_ratio;
	double hybrid_max = 0;
	double attn = m->dsv4_hybrid ? est_hybrid_params(m, ratio, &hybrid_max) : est_attn_params(m);
	double dense = 2 * est_norm_params(m) + attn, expert = 0;
	if (moe) {
		dense += h * (double)m->num_moe_experts;
		dense += est_mlp_params(m, (double)m->moe_shared_expert_intermediate_size, tp);
		expert = (double)m->num_moe_experts / est_ep_eff(m) *
			 est_mlp_params(m, (double)m->moe_ffn_hidden_size, 1.0);
	} else {
		dense += est_mlp_params(m, (double)m->ffn_hidden_size, tp);
	}
	if (mtp)
		dense += 3 * est_norm_params(m) + 2 * h * h / tp;
	dense += est_bias_params(m, moe) + 2 * est_hc_params(m);
	t->dense_params = dense;
	t->expert_params = expert;
	/* one tensor per Linear; GroupedMLP holds each of its two weights for
	 * all local experts in one tensor */
	double mx = m->dsv4_hybrid ? hybrid_max : est_attn_max(m), ex = 0;
	if (moe) {
		mx = est_max(mx, h * (double)m->num_moe_experts);
		mx = est_max(mx, est_mlp_max(m, (double)m->moe_shared_expert_intermediate_size, tp));
		ex = (double)m->num_moe_experts / est_ep_eff(m) *
		     est_mlp_max(m, (double)m->moe_ffn_hidden_size, 1.0);
		double side = est_max(1.0, (double)m->moe_ffn_hidden_size < h
						   ? (double)m->moe_ffn_hidden_size
						   : h);
		t->expert_ns_sq = (double)m->num_moe_experts / est_ep_eff(m) * side * side;
	} else {
		mx = est_max(mx, est_mlp_max(m, (double)m->ffn_hidden_size, tp));
	}
	if (mtp)
		mx = est_max(mx, 2 * h * h / tp);
	t->max_dense = mx;
	t->max_expert = ex;
	est_type_wgrads(t, m, moe, mtp);
}

/* The bytes one weight's Muon update holds beside the states and the
 * gradients (MindSpore Transformers' pynative/optimizer/muon.py at 26354ff6,
 * the default comm_strategy "allgather"): L local elements, N the elements
 * Newton-Schulz runs on (the full tensor for a sharded 2-D weight, the
 * local one otherwise), split into `pieces` equal pieces of b x m x n
 * (m <= n) with bm2 = b x m^2.
 * `_apply_muon_update` (:982-1033) keeps, as Python locals alive to its
 * end, the gradient's fp32 cast rebound to the Nesterov sum and the new
 * momentum (:1011-1017: 2 x 4 B x L; casting the fp32 momentum is a no-op)
 * and `ns_inputs`, the bf16 cast (:1019) all-gathered to the full tensor
 * (:1020-1021, `full_tensor()` of a 2-D DTensor; 2 B x N).
 * `_apply_muon_ns` (:884-903) runs `newton_schulz` (:855-879) on each
 * piece of `muon_split_fn` and keeps every finished piece's scaled output
 * (2 B each) until the merge; in a step `x = a * x + b_mat @ x` holds x, the
 * product, a * x and the sum (4 x 2 B x piece) with a_mat and b_mat
 * (2 x 2 B x bm2), all bf16 (the cast at :1019).
 * After it, `x_ret` sharded back (2 B x L) and `param * (1 - lr * wd)` and
 * `next_param` on the fp32 master (:1028-1029, 2 x 4 B x L) beside the two
 * fp32 locals and ns_inputs: 18 L + 2 N. */
static double est_muon_weight(double L, double N, double pieces, double bm2)
{
	double np = N / pieces;
	double ns = 8.0 * L + 2.0 * N + 2.0 * (N - np) + 8.0 * np + 4.0 * bm2;
	return est_max(ns, 18.0 * L + 2.0 * N);
}

/* Muon's update of a layer type's largest weights, in bytes.
 * Dense weights (attention, shared experts, the dense MLP, the router) are
 * 2-D DTensors under FSDP / TP: Newton-Schulz runs on the full tensor, the
 * local elements x FSDP x TP (TP counted as if the largest weight were
 * TP-split; without either, the local tensor). Their pieces and shapes are
 * not tracked: one piece with b x m^2 = N (a square matrix), a bound.
 * The experts' weights are 3-D ([local experts, h, ffn x 2] and [local
 * experts, ffn, h], moe/experts.py:81-88), so updated on the local shard
 * (muon.py:1003, `needs_dtensor_redist` for 2-D only); weight1 in the two
 * halves of its last dimension ("reshape_concat", pynative/base_models/gpt/
 * gpt_model.py make_model_muon_fns), weight2 whole ("reshape_only"), each
 * piece b x min(ffn, h)^2. */
static double est_muon_step(const mo_est_cfg *c, const mo_est_type *t)
{
	double l = t->max_dense / c->fsdp_div;
	double n = c->fsdp_div * (double)c->tp > 1.0 ? t->max_dense * (double)c->tp : l;
	double best = est_muon_weight(l, n, 1.0, n);
	if (t->max_expert > 0) {
		double sq = t->expert_ns_sq / c->expert_div;
		double w1 = t->max_expert / c->expert_div;
		double w2 = t->expert_params / c->expert_div - w1;
		best = est_max(best, est_muon_weight(w1, w1, 2.0, sq));
		if (w2 > 0)
			best = est_max(best, est_muon_weight(w2, w2, 1.0, sq));
	}
	return best;
}

/* The largest parameter tensor of a layer type on its device (elements of
 * the local shard). Under MindSpore's Muon: the bytes of its largest
 * weights' update (est_muon_step) over cfg.opt_scratch, so that the
 * optimizer step's scratch, max(table, this) x opt_scratch, holds either
 * the tables' AdamW update or the layer weights' Newton-Schulz. */
double est_type_max_local(const mo_estimate *e, const mo_est_type *t)
{
	const mo_est_cfg *c = &e->cfg;
	if (c->muon_step && c->opt_scratch > 0)
		return est_muon_step(c, t) / c->opt_scratch;
	return est_max(t->max_dense / c->fsdp_div, t->max_expert / c->expert_div);
}

void est_layer_static(const mo_estimate *e, const mo_est_type *t, double *w,
			 double *g, double *o, double *gathered)
{
	const mo_est_cfg *c = &e->cfg;
	double local = t->dense_params / c->fsdp_div + t->expert_params / c->expert_div;
	*w = local * c->pbytes;
	*g = local * c->gbytes;
	*o = (t->dense_params / c->opt_div + t->expert_params / c->opt_expert_div) * c->obytes;
	*gathered = (t->dense_params + t->expert_params - local) * c->pbytes;
}

/* Under PP with FSDP a stage holds, per layer: the gathered full weights
 * (param dtype) for the whole step and, MindSpore (pp_unsharded), the
 * unsharded gradients: the fp32 accumulator the deferred reduce-scatter
 * reads plus each backward's fresh gradient in the param dtype. Measured:
 * std pp 2, MHA - GQA on the last stage = 768 MiB = 4 layers x (96 kept +
 * 6.29M params x 16 B); 16 B/param = 8 B of sharded state (FSDP 2) + 2 + 4 + 2
 * (notes/calibration.md). Without pp_unsharded: the all-gather's extra only. */
void est_layer_pp_resident(const mo_estimate *e, const mo_est_type *t, double *gathered,
			      double *grads)
{
	const mo_est_cfg *c = &e->cfg;
	double w, g, o;
	est_layer_static(e, t, &w, &g, &o, gathered);
	*grads = 0;
	if (!c->pp_unsharded)
		return;
	double full = t->dense_params + t->expert_params;
	*gathered = full * c->pbytes;
	*grads = full * (4.0 + c->pbytes);
}

void est_explain_weights(const mo_estimate *e, mo_buf *b)
{
	const mo_est_cfg *c = &e->cfg;
	buf_printf(b,
		      "weights: params x %.0f B (params_dtype); gradients: params x %.0f B%s; "
		      "optimizer (%s): params x %.0f B\n",
		      c->pbytes, c->gbytes, c->gbytes != c->pbytes ? " (grads_dtype)" : "",
		      c->optimizer, c->obytes);
	buf_printf(b,
		      "  FSDP: dense params / (data_parallel_shard %lld x CP %lld) = / %.0f; "
		      "experts / %.0f; optimizer states / %.0f (experts / %.0f)\n",
		      (long long)c->dps, (long long)c->cp, c->fsdp_div, c->expert_div, c->opt_div,
		      c->opt_expert_div);
	for (size_t t = 0; t < e->n_types; t++) {
		double w, g, o, ga;
		est_layer_static(e, &e->types[t], &w, &g, &o, &ga);
		buf_printf(b,
			      "  %-14s dense %.0f + expert %.0f params per device after TP/EP -> "
			      "weights %.1f MiB, gradients %.1f MiB, optimizer %.1f MiB, "
			      "all-gathered extra %.1f MiB per layer\n",
			      e->types[t].name, e->types[t].dense_params,
			      e->types[t].expert_params, w / 1048576.0, g / 1048576.0,
			      o / 1048576.0, ga / 1048576.0);
	}
	buf_printf(b,
		      "  embedding %.0f params (first stage), output layer + final norm %.0f "
		      "params (last stage), per device after TP, / %.0f by FSDP\n",
		      c->embed_params, c->head_params, c->fsdp_div);
	if (c->mtp_embed_params > 0)
		buf_printf(b, "  the MTP layers' embedding %.0f params (last stage, tied to the first "
				 "stage's)\n",
			      c->mtp_embed_params);
	if (c->pos_params > 0)
		buf_printf(b,
			      "  learned position embeddings %.0f params (first stage, not split by "
			      "TP)\n",
			      c->pos_params);
	if (c->pad_multiple > 0)
		buf_printf(b,
			      "  distributed optimizer: parameter and gradient buffers padded to "
			      "multiples of %.0f elements per bucket (%s)\n",
			      c->pad_multiple,
			      c->bucket_params > 0 ? "buckets of max(4e7, 1e6 x DP) elements"
						   : "one bucket");
	if (c->pp_unsharded)
		buf_printf(b,
			      "  PP with FSDP (HyperParallel unshards a stage for the whole step and "
			      "reduces gradients after its last micro-batch): per layer, gathered "
			      "weights full params x %.0f B + unsharded gradients full params x "
			      "(4 B fp32 accumulator + %.0f B fresh)\n",
			      c->pbytes, c->pbytes);
	if (c->opt_scratch > 0 && c->muon_step)
		buf_printf(b,
			      "  optimizer step: Muon updates one weight at a time (comm_strategy "
			      "allgather); on top of the states and gradients, the larger of the "
			      "embedding's / output layer's AdamW update (%.0f B per local element) "
			      "and the stage's largest layer-weight update: fp32 momentum and "
			      "Nesterov sum, Newton-Schulz in bf16 on the all-gathered 2-D weight "
			      "(the local shard of 3-D expert weights), the fp32 master's update\n",
			      c->opt_scratch);
	else if (c->opt_scratch > 0)
		buf_printf(b,
			      "  optimizer step: AdamW updates one parameter at a time; its fp32 "
			      "temporaries (%.0f B per element) for the stage's largest local "
			      "parameter tensor come on top of the states and gradients\n",
			      c->opt_scratch);
}
