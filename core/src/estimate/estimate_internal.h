/* Private to the estimator (estimate*.c, ops*.c): how it builds an
 * estimate. The op tables each framework's save rules are written in, the
 * named dimensions, the per-layer-type tensor graph built from them, the
 * per-model cache, and the weights, timeline, cost and report code.
 *
 * An op table is data: one row per op of a layer block, with the module path
 * that owns it (what recompute / swap act on), its input and output tensors
 * (shapes as products of named dimensions), what autograd keeps for its
 * backward and its forward FLOPs. `framework: pytorch` rows name the saved
 * tensors (autograd's minimal sets); `framework: mindspore` rows leave `save`
 * NULL: the op keeps every input and its outputs. */
#ifndef MEMOPT_ESTIMATE_INTERNAL_H
#define MEMOPT_ESTIMATE_INTERNAL_H

#include "estimate/estimate.h"

/* ---- op tables ------------------------------------------------------------ */

/* Conditions a row needs (`when`, all of them) or forbids (`unless`). */
enum {
	MO_C_GATED = 1u << 0,   /* swiglu / fusedswiglu */
	MO_C_LN = 1u << 1,      /* LayerNorm (else RMSNorm) */
	MO_C_FLASH = 1u << 2,   /* flash attention (else eager) */
	MO_C_HDROP = 1u << 3,   /* hidden_dropout > 0 */
	MO_C_ADROP = 1u << 4,   /* attention_dropout > 0 */
	MO_C_GQA = 1u << 5,     /* query groups < heads */
	MO_C_SP = 1u << 6,      /* TP > 1 with sequence parallel */
	MO_C_TP = 1u << 7,      /* TP > 1 */
	MO_C_CP = 1u << 8,      /* CP > 1 */
	MO_C_QKLN = 1u << 9,    /* qk_layernorm under transformer_engine */
	MO_C_QLORA = 1u << 10,  /* MLA with q_lora_rank */
	MO_C_SHARED = 1u << 11, /* MoE shared experts */
	MO_C_EPCOMM = 1u << 12, /* the token dispatcher communicates */
	MO_C_FUSEDACT = 1u << 13, /* hidden_act: fusedswiglu */
	MO_C_GELU = 1u << 14,   /* hidden_act: gelu */
	MO_C_P32 = 1u << 15,    /* fp32 parameters, lower-precision compute */
	MO_C_TEKV = 1u << 16,   /* Transformer Engine's fused attention copies K
				 * and V (GQA, flash, no CP: ops_pytorch.c) */
	MO_C_LPOS = 1u << 17,   /* learned absolute position embeddings */
	MO_C_HC = 1u << 18,     /* hyper-connections (mHC streams) */
	MO_C_HCF = 1u << 19,    /* mHC with the fused npu_mhc_* kernels */
	MO_C_R4 = 1u << 20,     /* DeepSeek-V4 layer of compress ratio 4 */
	MO_C_R128 = 1u << 21,   /* DeepSeek-V4 layer of compress ratio 128 */
	MO_C_HCH = 1u << 22,    /* the hyper-connection head */
	MO_C_DSAU = 1u << 23,   /* DeepSeek-V4's sparse attention in small ops
				 * (apply_dsa_kernel_fusion false) */
	MO_C_RMSNC = 1u << 24,  /* FusedRMSNorm runs on its input's dtype, without
				 * the fp32 casts (every build with the hybrid
				 * or the DSA attention; ops_mindspore.c) */
	MO_C_DSA = 1u << 25     /* DeepSeek-V3.2's sparse attention (dsa) */
};

/* One op of a block. Tables write rows with designated initialisers; a
 * field left out is 0 / NULL: no condition, no FLOPs, no collective. `save`
 * is always written, with one of the two names below or a list. */
typedef struct mo_op_row {
	unsigned when, unless;
	const char *path;  /* owning path relative to the block; "" = the layer */
	const char *op;    /* op name */
	const char *in;    /* space-separated tensor names */
	const char *out;   /* "name:dtype:dim*dim" or "name@base" (a view) */
	const char *save;  /* saved tensor names, or one of the two below */
	const char *flops; /* forward FLOPs as a product, or NULL */
	mo_est_comm comm;
	/* gradient buffers the op's backward holds together beside what is
	 * saved ("dtype:dim*dim ..."), or NULL: the layer's backward working
	 * set is the largest of them */
	const char *bwd;
} mo_op_row;

/* `save` of an op that keeps every input and every output for its backward
 * (MindSpore's first-cut rule) / that keeps nothing (views, casts whose
 * backward reads nothing). */
#define KEEPS_INPUTS_AND_OUTPUTS NULL
#define KEEPS_NOTHING ""

typedef struct mo_op_block {
	const char *name;
	const mo_op_row *rows;
	size_t n;
} mo_op_block;

/* Blocks of a layer; a framework provides every one. */
typedef enum mo_block_id {
	MO_BLK_NORM_ATTN,  /* x -> ln1 */
	MO_BLK_ATTN,       /* ln1 -> ctx (standard MHA / GQA) */
	MO_BLK_ATTN_MLA,   /* ln1 -> ctx (multi-latent) */
	MO_BLK_ATTN_PROJ,  /* ctx -> attn (output projection, either attention) */
	MO_BLK_ATTN_HYBRID, /* ln1 -> attn (DeepSeek-V4's hybrid attention, its own projection) */
	MO_BLK_ATTN_DSA,   /* ln1 -> ctx (DeepSeek-V3.2's sparse attention) */
	MO_BLK_RESID_ATTN, /* x, attn -> x2, ln2 */
	MO_BLK_MLP,        /* ln2 -> mlp */
	MO_BLK_MOE,        /* ln2 -> mlp */
	MO_BLK_RESID_MLP,  /* x2, mlp -> y */
	MO_BLK_MTP_IN,     /* x, emb -> x (of the inner layer) */
	MO_BLK_MTP_OUT,    /* y -> y */
	MO_BLK_HEAD,       /* y -> loss (final norm, output layer, cross-entropy) */
	MO_BLK_EMBED,      /* ids -> x */
	MO_BLK_COUNT
} mo_block_id;

/* A framework's blocks, from its tables named P_norm_attn, P_attn, ... (file-scope compound
 * literals: static storage): one list, so a block is added to every framework at once. A block
 * only some frameworks have (MindSpore's DeepSeek-V4 hybrid attention, DeepSeek-V3.2's DSA) is added beside
 * MO_OP_BLOCKS_COMMON; a framework without it leaves it NULL and the graph builds nothing. */
#define MO_OP_BLOCK(p, b)                                                                        \
	(&(const mo_op_block){#p "_" #b, p##_##b, sizeof(p##_##b) / sizeof(p##_##b)[0]})
#define MO_OP_BLOCKS_COMMON(p)                                                                   \
	[MO_BLK_NORM_ATTN] = MO_OP_BLOCK(p, norm_attn), [MO_BLK_ATTN] = MO_OP_BLOCK(p, attn),     \
	[MO_BLK_ATTN_MLA] = MO_OP_BLOCK(p, attn_mla),                                            \
	[MO_BLK_ATTN_PROJ] = MO_OP_BLOCK(p, attn_proj),                                          \
	[MO_BLK_RESID_ATTN] = MO_OP_BLOCK(p, resid_attn), [MO_BLK_MLP] = MO_OP_BLOCK(p, mlp),     \
	[MO_BLK_MOE] = MO_OP_BLOCK(p, moe), [MO_BLK_RESID_MLP] = MO_OP_BLOCK(p, resid_mlp),       \
	[MO_BLK_MTP_IN] = MO_OP_BLOCK(p, mtp_in), [MO_BLK_MTP_OUT] = MO_OP_BLOCK(p, mtp_out),     \
	[MO_BLK_HEAD] = MO_OP_BLOCK(p, head), [MO_BLK_EMBED] = MO_OP_BLOCK(p, embed)
#define MO_OP_BLOCKS(p) {MO_OP_BLOCKS_COMMON(p)}

typedef struct mo_framework {
	const char *name;
	uint64_t align;                      /* allocator rounding (bytes) */
	bool recompute_needs_world;          /* recompute off on one device */
	const mo_op_block *blocks[MO_BLK_COUNT];
	const char *note;                    /* one line for the report */
} mo_framework;

/* ops_pytorch.c, ops_mindspore.c */
extern const mo_framework mo_ops_pytorch;
extern const mo_framework mo_ops_mindspore;

void est_dims_init(mo_est_dims *d, const mo_model *m);
int64_t est_dtype_bytes(const char *dtype, const mo_est_dims *d);
/* Product of '*'-separated dimension names and integers; -1 when a name is
 * unknown. */
double est_expr(const char *expr, const mo_est_dims *d);

/* Builds the graph of a layer type, or of the head / embedding (type
 * SIZE_MAX with blk MO_BLK_HEAD / MO_BLK_EMBED). Returns 0, or -1 with err. */
int est_graph_build(mo_est_graph *g, mo_arena *a, const mo_framework *fw,
		       const mo_model *m, const mo_est_dims *d, size_t type,
		       int blk, mo_error *err);

/* The graph `from` (built by est_graph_build for the same framework, model
 * type and conditions, with the same dimension names and dtypes) under the
 * dimensions d: the same ops, tensors and names (shared with from, whose
 * arena must outlive g), the bytes and FLOPs of d, as a build under d gives
 * them. Returns 0, or -1 when an expression does not evaluate (build
 * instead: it reports the error). */
int est_graph_rescale(mo_est_graph *g, mo_arena *a, const mo_framework *fw, const mo_model *m,
		      const mo_est_dims *d, size_t type, const mo_est_graph *from);

/* estimate_cache.c: the graphs of a model and a memo of plan results, kept
 * with the model across estimates (see the file's comment). */
typedef struct mo_est_cache mo_est_cache;
typedef struct mo_memo_key {
	uint64_t hash;
	size_t type, np;
	unsigned char flags;         /* full | swapped << 1 | no_recompute << 2 */
	const mo_action_kind *act;   /* np, or NULL */
} mo_memo_key;
/* A reference to the model's cache for these dimensions (built on first
 * use); NULL with err when out of memory. */
mo_est_cache *est_cache_get(const mo_model *m, const mo_framework *fw, const mo_est_dims *d,
			       mo_error *err);
void est_cache_release(mo_est_cache *c);
const mo_est_graph *est_cache_graph(const mo_est_cache *c, size_t type);
const mo_est_graph *est_cache_head(const mo_est_cache *c);
const mo_est_graph *est_cache_embed(const mo_est_cache *c);
/* Copies a memoised result (k, n_t marks) out; false when absent. */
bool est_memo_find(mo_est_cache *c, const mo_memo_key *key, mo_est_keep *k,
		      unsigned char *marks, size_t n_t);
void est_memo_put(mo_est_cache *c, const mo_memo_key *key, const mo_est_keep *k,
		     const unsigned char *marks, size_t n_t);

/* estimate_weights.c */
/* Elements Megatron's distributed-optimizer buffers add by padding to a
 * stage with `local` parameters (estimate_weights.c). */
double est_buffer_padding(const mo_est_cfg *c, double local);
void est_cfg_init(mo_est_cfg *cfg, const mo_model *m);
void est_type_params(mo_est_type *t, const mo_model *m, size_t type);
/* Static bytes of a layer on its device: weights, grads, optimizer, and the
 * FSDP all-gather of its full weights minus the local shard. */
void est_layer_static(const mo_estimate *e, const mo_est_type *t, double *w,
			 double *g, double *o, double *gathered);
/* What a stage keeps for the whole step per layer of type t under PP with
 * FSDP (HyperParallel): its all-gathered weights and, with cfg.pp_unsharded,
 * its unsharded gradients (`*grads`). */
void est_layer_pp_resident(const mo_estimate *e, const mo_est_type *t, double *gathered,
			      double *grads);
/* Bytes of Transformer Engine's dummy weight gradients a stage keeps:
 * one per distinct (shape, dtype) over the layer types with count[t] > 0
 * and, on the last stage (`last`), the output layer's. */
uint64_t est_dummy_wgrads(const mo_estimate *e, const size_t *count, bool last);
/* Elements of the largest local parameter tensor of a layer type. */
double est_type_max_local(const mo_estimate *e, const mo_est_type *t);
void est_explain_weights(const mo_estimate *e, mo_buf *b);

/* estimate_timeline.c */
int est_stages(mo_estimate *e, const mo_model *m, mo_error *err);
int est_timeline(mo_estimate *e, mo_error *err);
/* Pipeline stages an estimate answers for (estimate.c est_check). */
#define MO_EST_MAX_STAGES 4096

/* Writes the tensors alive at stage s's peak event; returns their total
 * bytes (which equals the stage's peak), or 0 when out of memory. */
uint64_t est_explain_peak(const mo_estimate *e, size_t s, mo_buf *b);

/* Caches stage s keeps from the first step on, in its `workspaces`
 * bucket beside the GEMM workspaces (framework pytorch; 0 otherwise). */
uint64_t est_stage_caches(const mo_estimate *e, size_t s);

/* estimate_cost.c */
void est_cost(mo_estimate *e);
/* estimate_time.c: the step time (e->time, the cost's step seconds);
 * -1 when out of memory */
int est_time(mo_estimate *e, const mo_model *m);
/* estimate_clock.c: each listed event's start and seconds (after est_time);
 * -1 when out of memory */
int est_clock(mo_estimate *e);

/* estimate_report.c */
void est_explain_types(const mo_estimate *e, mo_buf *b);

#endif
