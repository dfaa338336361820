/* The `parallel` rule: parallel settings that cannot run. Each
 * finding points at the value of the key that carries the setting when the
 * model came from a document (0/0 and the canonical path otherwise). */
#include "model/model_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mo_model_canon_paths[MF_COUNT] = {
	[MF_NUM_LAYERS] = "model.num_layers",
	[MF_MTP] = "model.mtp_num_layers",
	[MF_HIDDEN] = "model.hidden_size",
	[MF_FFN] = "model.ffn_hidden_size",
	[MF_KV_CHANNELS] = "model.kv_channels",
	[MF_VOCAB] = "model.vocab_size",
	[MF_UNTIE] = "model.untie_embeddings_and_output_weights",
	[MF_MOE_FFN] = "model.moe_ffn_hidden_size",
	[MF_SHARED_FFN] = "model.moe_shared_expert_intermediate_size",
	[MF_FIRST_DENSE] = "model.first_k_dense_replace",
	[MF_QK_LN] = "model.qk_layernorm",
	[MF_ATTN] = "model.attention",
	[MF_HDROP] = "model.hidden_dropout",
	[MF_ADROP] = "model.attention_dropout",
	[MF_OPT] = "training.optimizer",
	[MF_DEVICE] = "device",
	[MF_MBS] = "training.micro_batch_size",
	[MF_CDTYPE] = "training.compute_dtype",
	[MF_PDTYPE] = "training.params_dtype",
	[MF_DISTOPT] = "parallel.distributed_optimizer",
	[MF_HEADS] = "model.num_attention_heads",
	[MF_GROUPS] = "model.num_query_groups",
	[MF_SEQ] = "model.seq_length",
	[MF_EXPERTS] = "model.num_moe_experts",
	[MF_TOPK] = "model.moe_router_topk",
	[MF_MBN] = "training.micro_batch_num",
	[MF_GBS] = "training.global_batch_size",
	[MF_WORLD] = "parallel.world_size",
	[MF_DP] = "parallel.data_parallel",
	[MF_DP_SHARD] = "parallel.data_parallel_shard",
	[MF_TP] = "parallel.tensor_parallel",
	[MF_PP] = "parallel.pipeline_parallel",
	[MF_VPP] = "parallel.virtual_pipeline",
	[MF_EP] = "parallel.expert_parallel",
	[MF_ETP] = "parallel.expert_tensor_parallel",
	[MF_CP] = "parallel.context_parallel",
	[MF_SP] = "parallel.sequence_parallel",
	[MF_STAGES] = "parallel.pipeline_parallel_layers_per_stage",
	[MF_GDTYPE] = "training.grads_dtype",
	[MF_POS_TYPE] = "model.position_embedding_type",
	[MF_MAX_POS] = "model.max_position_embeddings",
	[MF_BIAS] = "model.add_bias_linear",
	[MF_QKV_BIAS] = "model.add_qkv_bias",
	[MF_TE_IMPL] = "training.transformer_impl",
	[MF_OVERLAP] = "training.overlap_grad_reduce",
	[MF_GROUPED] = "training.moe_grouped_gemm",
	[MF_GRAD_FUSION] = "training.gradient_accumulation_fusion",
	[MF_CUBLAS_WS] = "training.cublas_workspace_kib",
	[MF_SKEW] = "training.moe_routing_skew",
	[MF_ROPE_FUSION] = "training.apply_rope_fusion",
	[MF_DISPATCHER] = "training.moe_token_dispatcher_type",
	[MF_ROUTER_DTYPE] = "training.moe_router_dtype",
	[MF_PERMUTE_FUSION] = "training.moe_permute_fusion",
	[MF_EP_OVERLAP] = "training.overlap_moe_expert_parallel_comm",
	[MF_TP_OVERLAP] = "training.tp_comm_overlap",
	[MF_DETERMINISTIC] = "training.deterministic_mode",
	[MF_HC] = "model.enable_hyper_connections",
	[MF_HC_MULT] = "model.hc_mult",
	[MF_HC_FUSED] = "model.use_fused_mhc",
	[MF_HC_SINKHORN] = "model.hc_sinkhorn_iters",
	[MF_ATTN_VARIANT] = "model.experimental_attention_variant",
	[MF_HC_HEAD] = "model.enable_hc_head",
	[MF_RATIOS] = "model.compress_ratios",
	[MF_O_GROUPS] = "model.o_groups",
	[MF_O_LORA] = "model.o_lora_rank",
	[MF_IDX_HEADS] = "model.index_n_heads",
	[MF_IDX_DIM] = "model.index_head_dim",
	[MF_IDX_TOPK] = "model.index_topk",
	[MF_CSA_WINDOW] = "model.sliding_window",
	[MF_DSA_FUSED] = "model.apply_dsa_kernel_fusion",
	[MF_DSA_SPARSE] = "model.dsa_indexer_use_sparse_loss",
	[MF_KV_REPLICA] = "model.replicate_kv_heads",
};

const char *model_field_path(const mo_model *m, enum mo_mf f)
{
	const struct mo_model_pos *p = &m->ext->pos[f];
	if (p->path)
		return p->path;
	return mo_model_canon_paths[f] ? mo_model_canon_paths[f] : "model";
}

int mo_model_devices_position(const mo_model *m, int *line, int *column, const char **path)
{
	if (!m || !m->ext)
		return -1;
	const struct mo_model_pos *p = &m->ext->pos[MF_DP_SHARD];
	*line = p->line;
	*column = p->column;
	*path = model_field_path(m, MF_DP_SHARD);
	return 0;
}

/* The fields a training YAML's run gave over a model read from another
 * document carry that YAML as their file (import/read.c); the model's own
 * fields, defaults and derived values carry none. */
static bool model_field_from_run(const mo_model *m, enum mo_mf f)
{
	return m->ext->pos[f].file != NULL && mo_model_canon_paths[f] != NULL;
}

size_t mo_model_run_field_count(const mo_model *m)
{
	size_t n = 0;
	for (int f = 0; m && m->ext && f < MF_COUNT; f++)
		n += model_field_from_run(m, (enum mo_mf)f);
	return n;
}

int mo_model_run_field(const mo_model *m, size_t i, struct mo_model_source *out)
{
	if (!m || !m->ext || !out)
		return -1;
	size_t seen = 0;
	for (int f = 0; f < MF_COUNT; f++) {
		if (!model_field_from_run(m, (enum mo_mf)f))
			continue;
		if (seen++ < i)
			continue;
		const struct mo_model_pos *p = &m->ext->pos[f];
		*out = (struct mo_model_source){.path = mo_model_canon_paths[f],
						.file = p->file,
						.key = p->path ? p->path : mo_model_canon_paths[f],
						.line = p->line,
						.column = p->column};
		return 0;
	}
	return -1;
}

/* Where the rule's findings go: the diagnostics (every finding), or the
 * first error alone, with its code and numbers (model_parallel_error). */
typedef struct mo_check_out {
	mo_diags *d;
	mo_par_finding *first;
	bool found;
} mo_check_out;

static void model_vflag(const mo_model *m, mo_check_out *o, mo_severity sev, enum mo_mf f,
			const char *fmt, va_list ap)
{
	if (!o->d)
		return;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	const struct mo_model_pos *p = &m->ext->pos[f];
	diags_add(o->d, sev, "parallel", p->file ? p->file : m->name, p->line, p->column,
		     model_field_path(m, f), "%s", msg);
}

/* An error of rule `rule`, comparing p0, p1, p2 (mo_par_finding's order). */
static void model_flag(const mo_model *m, mo_check_out *o, enum mo_mf f, mo_par_rule rule,
		       int64_t p0, int64_t p1, int64_t p2, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

static void model_flag(const mo_model *m, mo_check_out *o, enum mo_mf f, mo_par_rule rule,
		       int64_t p0, int64_t p1, int64_t p2, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (o->d) {
		model_vflag(m, o, MO_SEV_ERROR, f, fmt, ap);
	} else if (!o->found) {
		o->found = true;
		*o->first = (mo_par_finding){.rule = rule, .p = {p0, p1, p2},
					     .path = model_field_path(m, f)};
		vsnprintf(o->first->message, sizeof o->first->message, fmt, ap);
	}
	va_end(ap);
}

static void model_warn(const mo_model *m, mo_check_out *o, enum mo_mf f,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void model_warn(const mo_model *m, mo_check_out *o, enum mo_mf f,
			  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	model_vflag(m, o, MO_SEV_WARNING, f, fmt, ap);
	va_end(ap);
}

static void model_check_tp(const mo_model *m, mo_check_out *d)
{
	int64_t tp = m->tensor_parallel;
	if (tp <= 1)
		return;
	if (m->num_attention_heads % tp != 0)
		model_flag(m, d, MF_TP, MO_PAR_TP_HEADS, tp, m->num_attention_heads, 0,
			      "tensor_parallel %lld does not divide the %lld "
			      "attention heads",
			      (long long)tp, (long long)m->num_attention_heads);
	if (!m->multi_latent_attention && model_kv_heads_per_rank(m, tp) == 0)
		model_flag(m, d, MF_TP, MO_PAR_TP_KV, tp, m->num_query_groups, 0,
			   model_kv_split_rule(m), (long long)tp,
			      (long long)m->num_query_groups);
}

static void model_check_ep(const mo_model *m, mo_check_out *d)
{
	int64_t ep = m->expert_parallel, e = m->num_moe_experts;
	if (e > 0 && m->moe_router_topk > e)
		model_flag(m, d, MF_TOPK, MO_PAR_TOPK_EXPERTS, m->moe_router_topk, e, 0,
			      "top-k %lld is larger than the %lld experts",
			      (long long)m->moe_router_topk, (long long)e);
	if (ep <= 1)
		return;
	if (e == 0) {
		model_flag(m, d, MF_EP, MO_PAR_EP_NO_EXPERTS, ep, 0, 0,
			      "expert_parallel %lld needs a MoE model "
			      "(the model has no experts)",
			      (long long)ep);
		return;
	}
	if (e % ep != 0)
		model_flag(m, d, MF_EP, MO_PAR_EP_EXPERTS, ep, e, 0,
			      "expert_parallel %lld does not divide the %lld "
			      "experts",
			      (long long)ep, (long long)e);
	/* Megatron-LM's DDP (pytorch, data_parallel_shard 1) forms expert
	 * groups over all data-parallel ranks (its expert data parallel is
	 * DP x CP x TP / (EP x expert TP)) */
	bool megatron = strcmp(m->framework, "pytorch") == 0 && m->data_parallel_shard == 1;
	int64_t shard = megatron ? m->data_parallel : m->data_parallel_shard;
	if (shard <= 0)
		return; /* -1: device count unknown */
	int64_t g = model_mul(model_mul(shard,
					      m->context_parallel),
				 m->tensor_parallel);
	int64_t etp = model_etp(m) > 0 ? model_etp(m) : 1;
	int64_t group = model_mul(ep, etp);
	if (etp == 1 && g % ep != 0)
		model_flag(m, d, MF_EP, MO_PAR_EP_GROUPS, ep, g, 0,
			      "expert_parallel %lld does not divide "
			      "%s x context_parallel x "
			      "tensor_parallel = %lld",
			      (long long)ep, megatron ? "data_parallel" : "data_parallel_shard",
			      (long long)g);
	else if (etp > 1 && group > 0 && g % group != 0)
		model_flag(m, d, MF_EP, MO_PAR_EP_ETP_GROUPS, ep, etp, g,
			      "expert_parallel %lld x expert_tensor_parallel %lld does not divide "
			      "%s x context_parallel x "
			      "tensor_parallel = %lld",
			      (long long)ep, (long long)etp,
			      megatron ? "data_parallel" : "data_parallel_shard", (long long)g);
}

/* expert_tensor_parallel splits each expert's FFN (framework pytorch); the
 * mindspore rules do not read it. */
static void model_check_etp(const mo_model *m, mo_check_out *d)
{
	int64_t etp = m->expert_tensor_parallel;
	if (etp <= 0)
		return;
	if (strcmp(m->framework, "pytorch") != 0) {
		if (etp > 1)
			model_warn(m, d, MF_ETP,
				      "expert_tensor_parallel %lld is not applied under framework "
				      "%s (its rules split experts over expert_parallel, or over "
				      "tensor_parallel when expert_parallel is 1)",
				      (long long)etp, m->framework);
		return;
	}
	if (m->num_moe_experts > 0 && m->moe_ffn_hidden_size % etp != 0)
		model_flag(m, d, MF_ETP, MO_PAR_ETP_FFN, etp, m->moe_ffn_hidden_size, 0,
			      "expert_tensor_parallel %lld does not divide the experts' FFN size "
			      "%lld",
			      (long long)etp, (long long)m->moe_ffn_hidden_size);
}

static void model_check_pp(const mo_model *m, mo_check_out *d)
{
	int64_t pp = m->pipeline_parallel;
	int64_t total = m->num_layers + m->mtp_num_layers;
	if (pp > total)
		model_flag(m, d, MF_PP, MO_PAR_PP_LAYERS, pp, total, 0,
			      "pipeline_parallel %lld is larger than the %lld "
			      "layers",
			      (long long)pp, (long long)total);
	if (m->virtual_pipeline > 1 && pp <= 1)
		model_flag(m, d, MF_VPP, MO_PAR_VPP_NO_PP, m->virtual_pipeline, 0, 0,
			      "virtual pipeline %lld needs pipeline_parallel > 1",
			      (long long)m->virtual_pipeline);
	if (pp > 1 && m->micro_batch_num < pp) {
		enum mo_mf at = m->ext->set[MF_MBN]   ? MF_MBN
				: m->ext->set[MF_GBS] ? MF_GBS
						      : MF_PP;
		/* legal (a measured MindSpore run has pp 2 with one
		 * micro-batch a step), but the pipeline idles */
		model_warn(m, d, at,
			      "%lld micro-batches do not fill %lld pipeline "
			      "stages: stages idle for most of the step "
			      "(micro_batch_num >= pipeline_parallel keeps them busy)",
			      (long long)m->micro_batch_num, (long long)pp);
	}
}

/* Marks layer ids of the stage lists; reports a layer named twice or
 * missing. Ids >= num_layers are MTP layers: optional, but when any is
 * named all must be. */
static void model_check_cover(const mo_model *m, mo_check_out *d,
				 unsigned char *seen, int64_t total)
{
	int64_t dup = -1, out = -1;
	for (size_t s = 0; s < m->n_stage_layers; s++) {
		const mo_layers *l = &m->stage_layers[s];
		for (size_t i = 0; i < l->n; i++) {
			for (uint64_t id = l->r[i].lo; id <= l->r[i].hi; id++) {
				if (id >= (uint64_t)total) {
					out = (int64_t)id;
					break;
				}
				if (seen[id]) {
					dup = (int64_t)id;
					break; /* bounds the work */
				}
				seen[id] = 1;
			}
			if (dup >= 0 || out >= 0)
				break;
		}
		if (dup >= 0 || out >= 0)
			break;
	}
	if (out >= 0)
		model_flag(m, d, MF_STAGES, MO_PAR_STAGE_OUTSIDE, out, total, 0,
			      "layer %lld of the per-stage lists is outside "
			      "the model (%lld layers)",
			      (long long)out, (long long)total);
	if (dup >= 0)
		model_flag(m, d, MF_STAGES, MO_PAR_STAGE_TWICE, dup, 0, 0,
			      "layer %lld is in more than one pipeline stage",
			      (long long)dup);
	if (dup >= 0 || out >= 0)
		return;
	bool mtp_named = false;
	for (int64_t i = m->num_layers; i < total; i++)
		mtp_named |= seen[i] != 0;
	int64_t upto = mtp_named ? total : m->num_layers;
	for (int64_t i = 0; i < upto; i++) {
		if (!seen[i]) {
			model_flag(m, d, MF_STAGES, MO_PAR_STAGE_MISSING, i, 0, 0,
				      "layer %lld is in no pipeline stage",
				      (long long)i);
			break;
		}
	}
}

static void model_check_stages(const mo_model *m, mo_check_out *d)
{
	if (m->n_stage_layers == 0)
		return;
	int64_t want = model_mul(m->pipeline_parallel, m->virtual_pipeline);
	if ((int64_t)m->n_stage_layers != want)
		model_flag(m, d, MF_STAGES, MO_PAR_STAGE_LISTS, (int64_t)m->n_stage_layers, want, 0,
			      "%zu per-stage layer lists for %lld stages "
			      "(pipeline_parallel x virtual pipeline)",
			      m->n_stage_layers, (long long)want);
	int64_t total = m->num_layers + m->mtp_num_layers;
	if (total <= 0 || total > MO_MODEL_MAX_LAYERS + MO_MODEL_MAX_MTP)
		return;
	/* not the arena: a loaded model is shared read-only across threads */
	unsigned char *seen = calloc((size_t)total, 1);
	if (seen)
		model_check_cover(m, d, seen, total);
	free(seen);
}

static void model_check_world(const mo_model *m, mo_check_out *d)
{
	if (m->world_size <= 0 || m->data_parallel <= 0)
		return;
	int64_t prod = model_mul(
		model_mul(model_mul(m->data_parallel, m->tensor_parallel),
			     m->pipeline_parallel),
		m->context_parallel);
	if (prod == m->world_size)
		return;
	enum mo_mf at = m->ext->pos[MF_WORLD].path ? MF_WORLD : MF_DP;
	if (!m->ext->pos[at].path && m->ext->pos[MF_DP_SHARD].path)
		at = MF_DP_SHARD;
	model_flag(m, d, at, MO_PAR_WORLD, prod, m->world_size, 0,
		      "data_parallel %lld x tensor_parallel %lld x "
		      "pipeline_parallel %lld x context_parallel %lld = %lld, "
		      "not the %lld devices",
		      (long long)m->data_parallel, (long long)m->tensor_parallel,
		      (long long)m->pipeline_parallel,
		      (long long)m->context_parallel, (long long)prod,
		      (long long)m->world_size);
}

/* No device count anywhere (a Hugging Face config.json, Megatron
 * arguments without torchrun's counts, and no --devices): the model is
 * priced on TP x PP x CP devices, one data-parallel rank, which the source
 * never says. A `model-needed` warning, never a silent 1. A memopt model
 * file's data_parallel defaults to 1 (docs/model-file.md) and a training
 * YAML's parallel_config to MindSpore Transformers' 1: those are said. */
static void model_check_devices(const mo_model *m, mo_check_out *d)
{
	const struct mo_model_ext *x = m->ext;
	if (!x->devices_unsaid && !x->dp_follows_devices)
		return;
	if (x->set[MF_WORLD] || x->set[MF_DP] ||
	    (x->set[MF_DP_SHARD] && !x->dp_follows_devices))
		return;
	/* how to give the count is each face's to say (flag, member, control), by this
	 * code and path */
	if (!d->d)
		return;
	diags_add(d->d, MO_SEV_WARNING, "model-needed", m->name, 0, 0, "parallel.world_size",
		  "the device count is not given (no parallel.world_size or "
		  "data_parallel): priced on tensor x pipeline x context "
		  "parallel = %lld devices, one data-parallel rank",
		  (long long)model_mul(model_mul(m->tensor_parallel, m->pipeline_parallel),
				       m->context_parallel));
}

static void model_check_all(const mo_model *m, mo_check_out *o)
{
	model_check_tp(m, o);
	if (m->context_parallel > 1 && m->seq_length % m->context_parallel != 0)
		model_flag(m, o, MF_CP, MO_PAR_CP_SEQUENCE, m->context_parallel, m->seq_length, 0,
			      "context_parallel %lld does not divide the "
			      "sequence length %lld",
			      (long long)m->context_parallel,
			      (long long)m->seq_length);
	model_check_ep(m, o);
	model_check_etp(m, o);
	model_check_pp(m, o);
	model_check_stages(m, o);
	model_check_world(m, o);
	model_check_devices(m, o);
}

void mo_model_check(const mo_model *m, mo_diags *diags)
{
	if (!m || !diags)
		return;
	mo_check_out o = {.d = diags};
	model_check_all(m, &o);
}

bool model_parallel_error(const mo_model *m, mo_par_finding *f)
{
	mo_check_out o = {.first = f};
	model_check_all(m, &o);
	return o.found;
}
