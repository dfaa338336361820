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
};

static int mo_layout_add(struct mo_lb *b, int parent, const char *leaf,
			 mo_path_kind kind)
{
	if (b->failed || b->n >= MO_LAYOUT_MAX) {
		b->failed = true;
		return -1;
	}
	const char *name = parent < 0 ? mo_arena_strdup(b->a, leaf)
				      : mo_arena_printf(b->a, "%s.%s",
							b->v[parent].name, leaf);
	if (!name) {
		b->failed = true;
		return -1;
	}
	b->v[b->n] = (mo_path){.name = name, .kind = kind, .parent = parent};
	return (int)b->n++;
}

static int mo_layout_mod(struct mo_lb *b, int parent, const char *leaf)
{
	return mo_layout_add(b, parent, leaf, MO_PATH_MODULE);
}

static void mo_layout_ops(struct mo_lb *b, int parent,
			  const char *const *ops)
{
	for (size_t i = 0; ops[i]; i++)
		mo_layout_add(b, parent, ops[i], MO_PATH_OP);
}

static bool mo_layout_tp(const struct mo_lb *b)
{
	return b->m->tensor_parallel > 1;
}

static bool mo_layout_sp(const struct mo_lb *b)
{
	return b->m->tensor_parallel > 1 && b->m->sequence_parallel;
}

/* ColwiseParallel: with SP the sequence-sharded input is all-gathered. */
static void mo_layout_col(struct mo_lb *b, int mod)
{
	if (mo_layout_sp(b))
		mo_layout_add(b, mod, "input.allgather", MO_PATH_COMM);
}

/* RowwiseParallel: partial outputs reduce-scattered (SP) or all-reduced. */
static void mo_layout_row(struct mo_lb *b, int mod)
{
	if (mo_layout_tp(b))
		mo_layout_add(b, mod,
			      mo_layout_sp(b) ? "output.reducescatter"
					      : "output.allreduce",
			      MO_PATH_COMM);
}

/* Context parallel (colossal): the core attention gathers K/V over CP. */
static int mo_layout_core(struct mo_lb *b, int attn)
{
	int core = mo_layout_mod(b, attn, "core_attention");
	if (b->m->context_parallel > 1)
		mo_layout_add(b, core, "input.allgather", MO_PATH_COMM);
	return core;
}

/* attention.py: Attention + SelfAttention (MHA / GQA). */
static void mo_layout_attn_std(struct mo_lb *b, int attn)
{
	static const char *const ops[] = {
		"split_qkv", "cast", "reshape", "bs_transpose", "tnd_transpose",
		"tile_kv", "cat", "reshape_concat",
		"get_query_key_value_tensors", "sbh2tnd", NULL};
	int qkv = mo_layout_mod(b, attn, "linear_qkv");
	mo_layout_col(b, qkv);
	if (b->m->qk_layernorm) {
		mo_layout_mod(b, attn, "q_layernorm");
		mo_layout_mod(b, attn, "k_layernorm");
	}
	mo_layout_mod(b, attn, "apply_rotary_pos_emb");
	mo_layout_core(b, attn);
	mo_layout_row(b, mo_layout_mod(b, attn, "linear_proj"));
	mo_layout_ops(b, attn, ops);
}

/* multi_latent_attention.py: MLASelfAttention. linear_qkv (the fused down
 * projections) runs on the local sequence shard; the head-sharded up
 * projections and the rotary k gather their inputs under SP. */
static void mo_layout_attn_mla(struct mo_lb *b, int attn)
{
	static const char *const ops[] = {
		"shape", "reshape", "transpose", "permute", "cast", "split",
		"tile_kv", "cat", "get_query_key_value_tensors", "sbh2tnd",
		NULL};
	mo_layout_mod(b, attn, "linear_qkv");
	if (b->m->q_lora_rank > 0) {
		mo_layout_mod(b, attn, "q_layernorm");
		mo_layout_col(b, mo_layout_mod(b, attn, "linear_qb"));
	}
	mo_layout_mod(b, attn, "k_layernorm");
	mo_layout_col(b, mo_layout_mod(b, attn, "linear_kvb"));
	mo_layout_mod(b, attn, "apply_rotary_emb_q");
	mo_layout_col(b, mo_layout_mod(b, attn, "apply_rotary_emb_k"));
	mo_layout_mod(b, attn, "q_handoff");
	mo_layout_mod(b, attn, "k_handoff");
	mo_layout_mod(b, attn, "v_handoff");
	mo_layout_core(b, attn);
	mo_layout_row(b, mo_layout_mod(b, attn, "linear_proj"));
	mo_layout_ops(b, attn, ops);
}

static bool mo_layout_gated(const mo_model *m)
{
	return strcmp(m->hidden_act, "swiglu") == 0 ||
	       strcmp(m->hidden_act, "fusedswiglu") == 0;
}

/* activation.py: the activation is a Cell holding one functional op. */
static void mo_layout_act(struct mo_lb *b, int parent)
{
	const char *h = b->m->hidden_act;
	const char *op = strcmp(h, "fusedswiglu") == 0 ? "swiglu"
			 : strcmp(h, "gelu") == 0      ? "gelu"
						       : "silu";
	int act = mo_layout_mod(b, parent, "activation_func");
	mo_layout_add(b, act, op, MO_PATH_OP);
}

/* mlp.py: MLP (also the body of SharedExpertMLP). `gather`: the input is
 * sequence-sharded (dense layer) rather than already gathered (MoE). */
static void mo_layout_mlp_body(struct mo_lb *b, int mlp, bool gather)
{
	static const char *const ops[] = {"split", "reshape", "add",
					  "transpose", NULL};
	int fc1 = mo_layout_mod(b, mlp, "linear_fc1");
	if (gather)
		mo_layout_col(b, fc1);
	mo_layout_act(b, mlp);
	mo_layout_row(b, mo_layout_mod(b, mlp, "linear_fc2"));
	if (mo_layout_gated(b->m))
		mo_layout_add(b, mlp, "mul", MO_PATH_OP);
	mo_layout_ops(b, mlp, ops);
}

/* moe/router.py: TopKRouter. */
static void mo_layout_router(struct mo_lb *b, int mlp)
{
	static const char *const ops[] = {"linear", "sigmoid", "softmax",
					  "cast", "gather", "reshape", "topk",
					  "sum", "div", "mul", "histc", NULL};
	int router = mo_layout_mod(b, mlp, "router");
	mo_layout_mod(b, router, "moe_aux_loss_auto_scaler");
	mo_layout_ops(b, router, ops);
}

/* moe/experts.py: GroupedMLP. distributed/expert_parallel.py registers the
 * token dispatcher's collectives on it (over the EP mesh, or the TP mesh
 * when EP is off: gpt/parallelize.py apply_moe_ep_tp). */
static void mo_layout_experts(struct mo_lb *b, int mlp)
{
	static const char *const ops[] = {
		"cast", "reshape", "chunk", "mul", "unsqueeze", "histc",
		"argsort", "cumsum", "permute", "unpermute", "experts_forward",
		NULL};
	int ex = mo_layout_mod(b, mlp, "experts");
	if (b->m->expert_parallel > 1 || mo_layout_tp(b)) {
		mo_layout_add(b, ex, "expert_counts.alltoall", MO_PATH_COMM);
		mo_layout_add(b, ex, "input.alltoallsingle", MO_PATH_COMM);
		mo_layout_add(b, ex, "output.alltoallsingle", MO_PATH_COMM);
	}
	mo_layout_act(b, ex);
	mo_layout_ops(b, ex, ops);
}

/* moe/moe_layer.py: MoELayer. Under TP + SP the layer gathers its input
 * once (PrepareModuleInputOutput); the shared experts' output is gathered
 * back from the row-parallel reduce-scatter. */
static void mo_layout_moe(struct mo_lb *b, int base)
{
	static const char *const ops[] = {"reshape", "zeros", "sum", "add",
					  "mul", "bmm", "unsqueeze", "cast",
					  "ones_like", NULL};
	int mlp = mo_layout_mod(b, base, "mlp");
	if (mo_layout_sp(b))
		mo_layout_add(b, mlp, "input.allgather", MO_PATH_COMM);
	mo_layout_router(b, mlp);
	mo_layout_experts(b, mlp);
	if (b->m->moe_shared_expert_intermediate_size > 0) {
		int sh = mo_layout_mod(b, mlp, "shared_experts");
		if (mo_layout_sp(b))
			mo_layout_add(b, sh, "output.allgather", MO_PATH_COMM);
		mo_layout_mlp_body(b, sh, false);
		mo_layout_add(b, sh, "cast", MO_PATH_OP);
	}
	mo_layout_ops(b, mlp, ops);
}

/* transformer_layer.py: TransformerLayer. `base` is the parent index (-1
 * for a decoder layer, transformer_layer inside an MTP layer). */
static void mo_layout_layer(struct mo_lb *b, int base, bool moe)
{
	mo_layout_mod(b, base, "input_layernorm");
	int attn = mo_layout_mod(b, base, "self_attention");
	if (b->m->multi_latent_attention)
		mo_layout_attn_mla(b, attn);
	else
		mo_layout_attn_std(b, attn);
	mo_layout_mod(b, base, "pre_cross_attn_layernorm");
	mo_layout_mod(b, base, "cross_attention");
	mo_layout_mod(b, base, "pre_mlp_layernorm");
	if (moe)
		mo_layout_moe(b, base);
	else
		mo_layout_mlp_body(b, mo_layout_mod(b, base, "mlp"), true);
	mo_layout_mod(b, base, "hidden_states_dropout");
	mo_layout_add(b, base, "add", MO_PATH_OP);
}

/* multi_token_prediction.py: MultiTokenPredictionLayer. */
static void mo_layout_mtp(struct mo_lb *b, bool moe)
{
	static const char *const ops[] = {"cat", "cast", "reshape", NULL};
	mo_layout_mod(b, -1, "enorm");
	mo_layout_mod(b, -1, "hnorm");
	mo_layout_row(b, mo_layout_mod(b, -1, "eh_proj"));
	mo_layout_layer(b, mo_layout_mod(b, -1, "transformer_layer"), moe);
	mo_layout_mod(b, -1, "final_layernorm");
	mo_layout_ops(b, -1, ops);
}

/* Builds one type into the arena; returns its index or -1. */
static int mo_layout_type(mo_model *m, const char *name, bool mtp, bool moe)
{
	for (size_t t = 0; t < m->n_types; t++)
		if (strcmp(m->types[t].name, name) == 0)
			return (int)t;
	struct mo_lb b = {.m = m, .a = m->arena};
	b.v = mo_arena_alloc(m->arena, sizeof(mo_path) * MO_LAYOUT_MAX);
	if (!b.v)
		return -1;
	if (mtp)
		mo_layout_mtp(&b, moe);
	else
		mo_layout_layer(&b, -1, moe);
	if (b.failed)
		return -1;
	mo_layer_type *lt = &m->types[m->n_types];
	lt->name = name;
	lt->paths = b.v;
	lt->n_paths = b.n;
	return (int)m->n_types++;
}

static const char *mo_layout_type_name(const mo_model *m, bool mtp, bool moe)
{
	static const char *const names[2][2][2] = {
		{{"dense", "moe"}, {"mla-dense", "mla-moe"}},
		{{"mtp-dense", "mtp-moe"}, {"mtp-mla-dense", "mtp-mla-moe"}}};
	return names[mtp][m->multi_latent_attention][moe];
}

/* FNV-1a over every type's name and path names: two models with the same
 * hash have the same path sets (what pattern matching depends on). */
static uint64_t mo_layout_hash(const mo_model *m)
{
	uint64_t h = MO_HASH_SEED;
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		h = mo_hash_str(h, lt->name);
		for (size_t p = 0; p < lt->n_paths; p++) {
			h = mo_hash_u64(h, 0x1f);
			h = mo_hash_str(h, lt->paths[p].name);
			h = mo_hash_u64(h, (unsigned)lt->paths[p].kind);
		}
		h = mo_hash_u64(h, 0x1e);
	}
	return h;
}

int mo_model_build_layout(mo_model *m, mo_error *err)
{
	int64_t total = m->num_layers + m->mtp_num_layers;
	if (m->num_layers < 1 || m->num_layers > MO_MODEL_MAX_LAYERS ||
	    m->mtp_num_layers < 0 || m->mtp_num_layers > MO_MODEL_MAX_MTP) {
		mo_error_set(err, MO_ERR_LIMIT, 0, 0, "layer count out of range");
		return -1;
	}
	m->types = mo_arena_alloc(m->arena, sizeof(mo_layer_type) * 8);
	m->type_of = mo_arena_alloc(m->arena, sizeof(size_t) * (size_t)total);
	if (!m->types || !m->type_of)
		goto nomem;
	m->n_types = 0;
	bool has_moe = m->num_moe_experts > 0;
	for (int64_t i = 0; i < total; i++) {
		bool mtp = i >= m->num_layers;
		bool moe = has_moe && (mtp || i >= m->first_k_dense_replace);
		int t = mo_layout_type(m, mo_layout_type_name(m, mtp, moe), mtp,
				       moe);
		if (t < 0)
			goto nomem;
		m->type_of[i] = (size_t)t;
	}
	m->layout_hash = mo_layout_hash(m);
	return 0;
nomem:
	mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory building layouts");
	return -1;
}
