/* Layer layouts: the module tree of each layer type, with the cell and
 * attribute names of MindSpore Transformers PyNative (mindformers/pynative/
 * transformers/ sources; see notes/model-layouts.md). A path is what the
 * trainer's recompute whitelist lists for a layer: child cells, callable
 * attributes (ops) and the communication ops the parallel styles register
 * (`<module>.input.<op>` / `<module>.output.<op>`). Communication paths
 * exist only when TP / SP / EP / CP create them. Order: a module, its
 * communication ops, its children depth first, then its ops. */
#include "model/model_internal.h"

#include <string.h>

#define MO_LAYOUT_MAX 512

struct mo_lb {
	const mo_model *m;
	mo_arena *a;
	mo_path *v;
	size_t n;
	bool failed;
	int64_t ratio; /* DeepSeek-V4: the type's compress ratio */
};

static int layout_add(struct mo_lb *b, int parent, const char *leaf,
			 mo_path_kind kind)
{
	if (b->failed || b->n >= MO_LAYOUT_MAX) {
		b->failed = true;
		return -1;
	}
	const char *name = parent < 0 ? arena_strdup(b->a, leaf)
				      : arena_printf(b->a, "%s.%s",
							b->v[parent].name, leaf);
	if (!name) {
		b->failed = true;
		return -1;
	}
	b->v[b->n] = (mo_path){.name = name, .kind = kind, .parent = parent};
	return (int)b->n++;
}

static int layout_mod(struct mo_lb *b, int parent, const char *leaf)
{
	return layout_add(b, parent, leaf, MO_PATH_MODULE);
}

static void layout_ops(struct mo_lb *b, int parent,
			  const char *const *ops)
{
	for (size_t i = 0; ops[i]; i++)
		layout_add(b, parent, ops[i], MO_PATH_OP);
}

static bool layout_tp(const struct mo_lb *b)
{
	return b->m->tensor_parallel > 1;
}

static bool layout_sp(const struct mo_lb *b)
{
	return b->m->tensor_parallel > 1 && b->m->sequence_parallel;
}

/* ColwiseParallel: with SP the sequence-sharded input is all-gathered. */
static void layout_col(struct mo_lb *b, int mod)
{
	if (layout_sp(b))
		layout_add(b, mod, "input.allgather", MO_PATH_COMM);
}

/* RowwiseParallel: partial outputs reduce-scattered (SP) or all-reduced. */
static void layout_row(struct mo_lb *b, int mod)
{
	if (layout_tp(b))
		layout_add(b, mod,
			      layout_sp(b) ? "output.reducescatter"
					      : "output.allreduce",
			      MO_PATH_COMM);
}

/* Context parallel (colossal): the core attention gathers K/V over CP. */
static int layout_core(struct mo_lb *b, int attn)
{
	int core = layout_mod(b, attn, "core_attention");
	if (b->m->context_parallel > 1)
		layout_add(b, core, "input.allgather", MO_PATH_COMM);
	return core;
}

/* attention.py: Attention + SelfAttention (MHA / GQA). */
static void layout_attn_std(struct mo_lb *b, int attn)
{
	static const char *const ops[] = {
		"split_qkv", "cast", "reshape", "bs_transpose", "tnd_transpose",
		"tile_kv", "cat", "reshape_concat",
		"get_query_key_value_tensors", "sbh2tnd", NULL};
	int qkv = layout_mod(b, attn, "linear_qkv");
	layout_col(b, qkv);
	if (b->m->qk_layernorm) {
		layout_mod(b, attn, "q_layernorm");
		layout_mod(b, attn, "k_layernorm");
	}
	layout_mod(b, attn, "apply_rotary_pos_emb");
	layout_core(b, attn);
	layout_row(b, layout_mod(b, attn, "linear_proj"));
	layout_ops(b, attn, ops);
}

/* multi_latent_attention.py: MLASelfAttention. linear_qkv (the fused down
 * projections) runs on the local sequence shard; the head-sharded up
 * projections and the rotary k gather their inputs under SP. */
static void layout_attn_mla(struct mo_lb *b, int attn)
{
	static const char *const ops[] = {
		"shape", "reshape", "transpose", "permute", "cast", "split",
		"tile_kv", "cat", "get_query_key_value_tensors", "sbh2tnd",
		NULL};
	layout_mod(b, attn, "linear_qkv");
	if (b->m->q_lora_rank > 0) {
		layout_mod(b, attn, "q_layernorm");
		layout_col(b, layout_mod(b, attn, "linear_qb"));
	}
	layout_mod(b, attn, "k_layernorm");
	layout_col(b, layout_mod(b, attn, "linear_kvb"));
	layout_mod(b, attn, "apply_rotary_emb_q");
	layout_col(b, layout_mod(b, attn, "apply_rotary_emb_k"));
	layout_mod(b, attn, "q_handoff");
	layout_mod(b, attn, "k_handoff");
	layout_mod(b, attn, "v_handoff");
	layout_core(b, attn);
	layout_row(b, layout_mod(b, attn, "linear_proj"));
	layout_ops(b, attn, ops);
}

/* DeepSeek-V3.2's sparse attention (multi_latent_attention.py dsa_forward,
 * :460-553 at mindspore-ai/mindformers 167a50de): the MLA's modules and
 * handoffs, the DSAttention core (dsa.py:158-218) with its DSAIndexer
 * (dsa_indexer.py:145-215), its DSAIndexerLoss (dsa_indexer_loss.py:137-150)
 * and the sparse (or, in the dense warm-up stage, the dense) flash
 * attention cell; the weight absorb's batched matmuls are ops of the MLA. */
static void layout_attn_dsa(struct mo_lb *b, int attn)
{
	static const char *const ops[] = {"shape", "reshape", "transpose", "permute", "cast",
					  "split", "cat", "absorb_matmul", NULL};
	static const char *const indexer_cells[] = {
		"linear_wq_b", "linear_wk", "k_norm", "linear_weights_proj",
		"apply_rotary_emb_q", "apply_rotary_emb_k", "hadamard_q", "hadamard_k",
		"compute_sparse_indices", "key_handoff", NULL};
	static const char *const handoffs[] = {
		"q_handoff", "k_handoff", "v_handoff", "dsa_indexer_key_handoff",
		"dsa_value_handoff", "dsa_loss_key_indexer_handoff", NULL};
	layout_mod(b, attn, "linear_qkv");
	layout_mod(b, attn, "q_layernorm");
	layout_col(b, layout_mod(b, attn, "linear_qb"));
	layout_mod(b, attn, "k_layernorm");
	layout_col(b, layout_mod(b, attn, "linear_kvb"));
	layout_mod(b, attn, "apply_rotary_emb_q");
	layout_col(b, layout_mod(b, attn, "apply_rotary_emb_k"));
	for (size_t i = 0; handoffs[i]; i++)
		layout_mod(b, attn, handoffs[i]);
	int core = layout_core(b, attn);
	int idx = layout_mod(b, core, "indexer");
	for (size_t i = 0; indexer_cells[i]; i++)
		layout_mod(b, idx, indexer_cells[i]);
	layout_mod(b, layout_mod(b, core, "indexer_loss"), "compute_indexer_loss");
	if (b->m->dsa_sparse) {
		layout_mod(b, core, "sparse_flash_attention");
		layout_mod(b, core, "sparse_key_handoff");
		layout_mod(b, core, "sparse_value_handoff");
		layout_mod(b, core, "sparse_key_rope_handoff");
	} else {
		layout_mod(b, core, "dense_flash_attention");
		layout_mod(b, core, "softmax_converter");
	}
	layout_row(b, layout_mod(b, attn, "linear_proj"));
	layout_ops(b, attn, ops);
}

/* deepseek_v4_hybrid_attention.py: DSv4HybridSelfAttention, its
 * CompressedSparseAttention (csa.py) with the Compressor of ratios 4 and
 * 128 and the Indexer of ratio 4 (:591-626). */
static void layout_attn_hybrid(struct mo_lb *b, int attn)
{
	static const char *const ops[] = {"reshape", "permute", "cast", "split", "cat",
					  "bmm", "rsqrt", "mul", NULL};
	layout_mod(b, attn, "linear_q_down_proj");
	layout_mod(b, attn, "q_layernorm");
	layout_mod(b, attn, "linear_q_up_proj");
	layout_mod(b, attn, "linear_kv_proj");
	layout_mod(b, attn, "kv_layernorm");
	layout_mod(b, attn, "apply_rotary_emb");
	int core = layout_core(b, attn);
	if (b->ratio > 0)
		layout_mod(b, core, "compressor");
	if (b->ratio == 4)
		layout_mod(b, core, "indexer");
	layout_mod(b, attn, "linear_proj");
	layout_ops(b, attn, ops);
}

static bool layout_gated(const mo_model *m)
{
	return strcmp(m->hidden_act, "swiglu") == 0 ||
	       strcmp(m->hidden_act, "fusedswiglu") == 0 ||
	       strcmp(m->hidden_act, "geglu") == 0;
}

/* activation.py: the activation is a Cell holding one functional op. */
static void layout_act(struct mo_lb *b, int parent)
{
	const char *h = b->m->hidden_act;
	const char *op = strcmp(h, "fusedswiglu") == 0 ? "swiglu"
			 : strcmp(h, "gelu") == 0 ||
				   strcmp(h, "geglu") == 0 ? "gelu"
						       : "silu";
	int act = layout_mod(b, parent, "activation_func");
	layout_add(b, act, op, MO_PATH_OP);
}

/* mlp.py: MLP (also the body of SharedExpertMLP). `gather`: the input is
 * sequence-sharded (dense layer) rather than already gathered (MoE). */
static void layout_mlp_body(struct mo_lb *b, int mlp, bool gather)
{
	static const char *const ops[] = {"split", "reshape", "add",
					  "transpose", NULL};
	int fc1 = layout_mod(b, mlp, "linear_fc1");
	if (gather)
		layout_col(b, fc1);
	layout_act(b, mlp);
	layout_row(b, layout_mod(b, mlp, "linear_fc2"));
	if (layout_gated(b->m))
		layout_add(b, mlp, "mul", MO_PATH_OP);
	layout_ops(b, mlp, ops);
}

/* moe/router.py: TopKRouter. */
static void layout_router(struct mo_lb *b, int mlp)
{
	static const char *const ops[] = {"linear", "sigmoid", "softmax",
					  "cast", "gather", "reshape", "topk",
					  "sum", "div", "mul", "histc", NULL};
	int router = layout_mod(b, mlp, "router");
	layout_mod(b, router, "moe_aux_loss_auto_scaler");
	layout_ops(b, router, ops);
}

/* moe/experts.py: GroupedMLP. distributed/expert_parallel.py registers the
 * token dispatcher's collectives on it (over the EP mesh, or the TP mesh
 * when EP is off: gpt/parallelize.py apply_moe_ep_tp). */
static void layout_experts(struct mo_lb *b, int mlp)
{
	static const char *const ops[] = {
		"cast", "reshape", "chunk", "mul", "unsqueeze", "histc",
		"argsort", "cumsum", "permute", "unpermute", "experts_forward",
		NULL};
	int ex = layout_mod(b, mlp, "experts");
	if (b->m->expert_parallel > 1 || layout_tp(b)) {
		layout_add(b, ex, "expert_counts.alltoall", MO_PATH_COMM);
		layout_add(b, ex, "input.alltoallsingle", MO_PATH_COMM);
		layout_add(b, ex, "output.alltoallsingle", MO_PATH_COMM);
	}
	layout_act(b, ex);
	layout_ops(b, ex, ops);
}

/* moe/moe_layer.py: MoELayer. Under TP + SP the layer gathers its input
 * once (PrepareModuleInputOutput); the shared experts' output is gathered
 * back from the row-parallel reduce-scatter. */
static void layout_moe(struct mo_lb *b, int base)
{
	static const char *const ops[] = {"reshape", "zeros", "sum", "add",
					  "mul", "bmm", "unsqueeze", "cast",
					  "ones_like", NULL};
	int mlp = layout_mod(b, base, "mlp");
	if (layout_sp(b))
		layout_add(b, mlp, "input.allgather", MO_PATH_COMM);
	layout_router(b, mlp);
	layout_experts(b, mlp);
	if (b->m->moe_shared_expert_intermediate_size > 0) {
		int sh = layout_mod(b, mlp, "shared_experts");
		if (layout_sp(b))
			layout_add(b, sh, "output.allgather", MO_PATH_COMM);
		layout_mlp_body(b, sh, false);
		layout_add(b, sh, "cast", MO_PATH_OP);
	}
	layout_ops(b, mlp, ops);
}

/* transformer_layer.py: TransformerLayer. `base` is the parent index (-1
 * for a decoder layer, transformer_layer inside an MTP layer). */
/* hyper_connection.py: HyperConnectionModule (attn_hc / ffn_hc of
 * HyperConnectionTransformerLayer, transformer_layer.py:286-294) with its
 * mapping projection, Sinkhorn projection and output cell. */
static void layout_hc(struct mo_lb *b, int base, const char *leaf)
{
	if (!b->m->hyper_connections)
		return;
	int hc = layout_mod(b, base, leaf);
	layout_mod(b, hc, "mapping_proj");
	layout_mod(b, hc, "_sinkhorn_op");
	layout_mod(b, hc, "output_cell");
}

static void layout_layer(struct mo_lb *b, int base, bool moe)
{
	layout_hc(b, base, "attn_hc");
	layout_hc(b, base, "ffn_hc");
	layout_mod(b, base, "input_layernorm");
	int attn = layout_mod(b, base, "self_attention");
	if (b->m->dsv4_hybrid)
		layout_attn_hybrid(b, attn);
	else if (model_dsa_table(b->m))
		layout_attn_dsa(b, attn);
	else if (b->m->multi_latent_attention)
		layout_attn_mla(b, attn);
	else
		layout_attn_std(b, attn);
	layout_mod(b, base, "pre_cross_attn_layernorm");
	layout_mod(b, base, "cross_attention");
	layout_mod(b, base, "pre_mlp_layernorm");
	if (moe)
		layout_moe(b, base);
	else
		layout_mlp_body(b, layout_mod(b, base, "mlp"), true);
	layout_mod(b, base, "hidden_states_dropout");
	layout_add(b, base, "add", MO_PATH_OP);
}

/* multi_token_prediction.py: MultiTokenPredictionLayer. */
static void layout_mtp(struct mo_lb *b, bool moe)
{
	static const char *const ops[] = {"cat", "cast", "reshape", NULL};
	layout_mod(b, -1, "enorm");
	layout_mod(b, -1, "hnorm");
	layout_row(b, layout_mod(b, -1, "eh_proj"));
	layout_layer(b, layout_mod(b, -1, "transformer_layer"), moe);
	layout_mod(b, -1, "final_layernorm");
	layout_ops(b, -1, ops);
}

/* Builds one type into the arena; returns its index or -1. */
static int layout_type(mo_model *m, const char *name, bool mtp, bool moe, int64_t ratio)
{
	for (size_t t = 0; t < m->n_types; t++)
		if (strcmp(m->types[t].name, name) == 0)
			return (int)t;
	struct mo_lb b = {.m = m, .a = m->arena, .ratio = ratio};
	b.v = arena_alloc(m->arena, sizeof(mo_path) * MO_LAYOUT_MAX);
	if (!b.v)
		return -1;
	if (mtp)
		layout_mtp(&b, moe);
	else
		layout_layer(&b, -1, moe);
	if (b.failed)
		return -1;
	mo_layer_type *lt = &m->types[m->n_types];
	*lt = (mo_layer_type){.name = name, .paths = b.v, .n_paths = b.n, .moe = moe, .mtp = mtp,
			      .compress_ratio = ratio};
	return (int)m->n_types++;
}

/* DeepSeek-V4's hybrid attention: one type per compress ratio (the layer's
 * entry of compress_ratios, 0 past its end). */
static const char *layout_type_name(const mo_model *m, int64_t layer, bool mtp, bool moe)
{
	static const char *const names[2][3][2] = {
		{{"dense", "moe"}, {"mla-dense", "mla-moe"}, {"dsa-dense", "dsa-moe"}},
		{{"mtp-dense", "mtp-moe"}, {"mtp-mla-dense", "mtp-mla-moe"},
		 {"mtp-dsa-dense", "mtp-dsa-moe"}}};
	static const char *const hybrid[2][3][2] = {
		{{"dsv4-r0-dense", "dsv4-r0-moe"}, {"dsv4-r4-dense", "dsv4-r4-moe"},
		 {"dsv4-r128-dense", "dsv4-r128-moe"}},
		{{"mtp-dsv4-r0-dense", "mtp-dsv4-r0-moe"}, {"mtp-dsv4-r4-dense", "mtp-dsv4-r4-moe"},
		 {"mtp-dsv4-r128-dense", "mtp-dsv4-r128-moe"}}};
	if (!m->dsv4_hybrid)
		return names[mtp][model_dsa_table(m) ? 2 : m->multi_latent_attention][moe];
	int64_t r = model_compress_ratio(m, layer);
	return hybrid[mtp][r == 4 ? 1 : r == 128 ? 2 : 0][moe];
}

/* Whether DeepSeek-V3.2's sparse attention has its own layer: an MLA layer
 * with the query down-projection, priced by the MindSpore rules (the
 * PyTorch rules and a refused file price the MLA). */
bool model_dsa_table(const mo_model *m)
{
	return m->dsa && m->multi_latent_attention && m->q_lora_rank > 0 &&
	       strcmp(m->framework, "mindspore") == 0;
}

bool model_hc_head(const mo_model *m)
{
	if (!m->hyper_connections)
		return false;
	return m->ext && m->ext->set[MF_HC_HEAD] ? m->hc_head : true;
}

int64_t model_compress_ratio(const mo_model *m, int64_t layer)
{
	if (!m->dsv4_hybrid || !m->compress_ratios || layer < 0 ||
	    (size_t)layer >= m->n_compress_ratios)
		return 0;
	return m->compress_ratios[layer];
}

/* FNV-1a over every type's name and path names: two models with the same
 * hash have the same path sets (what pattern matching depends on). */
static uint64_t layout_hash(const mo_model *m)
{
	uint64_t h = MO_HASH_SEED;
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		h = hash_str(h, lt->name);
		for (size_t p = 0; p < lt->n_paths; p++) {
			h = hash_u64(h, 0x1f);
			h = hash_str(h, lt->paths[p].name);
			h = hash_u64(h, (unsigned)lt->paths[p].kind);
		}
		h = hash_u64(h, 0x1e);
	}
	return h;
}

int model_build_layout(mo_model *m, mo_error *err)
{
	int64_t total = m->num_layers + m->mtp_num_layers;
	if (m->num_layers < 1 || m->num_layers > MO_MODEL_MAX_LAYERS ||
	    m->mtp_num_layers < 0 || m->mtp_num_layers > MO_MODEL_MAX_MTP) {
		error_set(err, MO_ERR_LIMIT, 0, 0, "layer count out of range");
		return -1;
	}
	m->types = arena_alloc(m->arena, sizeof(mo_layer_type) * 16);
	m->type_of = arena_alloc(m->arena, sizeof(size_t) * (size_t)total);
	if (!m->types || !m->type_of)
		goto nomem;
	m->n_types = 0;
	bool has_moe = m->num_moe_experts > 0;
	for (int64_t i = 0; i < total; i++) {
		bool mtp = i >= m->num_layers;
		bool moe = has_moe && (mtp || i >= m->first_k_dense_replace);
		int t = layout_type(m, layout_type_name(m, i, mtp, moe), mtp,
				       moe, model_compress_ratio(m, i));
		if (t < 0)
			goto nomem;
		m->type_of[i] = (size_t)t;
	}
	m->layout_hash = layout_hash(m);
	return 0;
nomem:
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory building layouts");
	return -1;
}
