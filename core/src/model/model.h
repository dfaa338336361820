/* model: the model handle a config is applied to: its fields, its layer
 * types with their module paths (layout.c), the `parallel` rules its
 * settings follow (model_check.c), parameter counts (params.c), the preset
 * and device tables (presets.c) and its canonical YAML and JSON forms
 * (model_write.c). Reading models from files is import/'s; choosing the
 * source (preset, model file, training YAML, Megatron arguments) is
 * load/'s. */
#ifndef MEMOPT_MODEL_H
#define MEMOPT_MODEL_H

#include "config/config.h"

/* ---- model layouts ----------------------------------------------
 * A layer type is a tree of paths relative to the layer. Each path has a
 * kind and the index of its parent path (-1 for top level). Paths are
 * stored parent-before-child. */


typedef struct mo_path {
	const char *name;  /* full dotted path relative to the layer */
	mo_path_kind kind;
	int parent;        /* index of the parent module path, -1 at top */
} mo_path;

typedef struct mo_layer_type {
	const char *name;  /* "dense", "moe", "mla-dense", "mla-moe", "mtp" ... */
	mo_path *paths;
	size_t n_paths;
	bool moe;          /* routed experts in its MLP */
	bool mtp;          /* a multi-token-prediction layer */
	int64_t compress_ratio; /* DeepSeek-V4's hybrid attention: 0, 4 or 128 */
} mo_layer_type;

typedef struct mo_device {
	const char *name;
	double memory_gib;
	double host_bandwidth_gbs;
	double tflops;
	double reserved_gib;
	double collective_bandwidth_gbs;
	double comm_buffer_mib; /* buffer each collective group holds */
	double fragmentation;   /* pool reserved beyond the allocated peak */
	double workspace_mib;   /* GEMM workspaces kept (framework pytorch) */
	double gemm_workspace_mib; /* one Transformer Engine GEMM workspace */
	/* the time model (estimate_time.c; presets.c gives each source) */
	double peak_tflops;        /* dense 16-bit tensor peak */
	double gemm_efficiency;    /* of peak, large GEMMs */
	double attention_efficiency; /* of peak, fused attention fwd + bwd */
	double hbm_gbs;            /* memory-bound kernels' achieved bandwidth */
	double intra_node_gbs;     /* collective bus bandwidth inside a node */
	double inter_node_gbs;     /* per device across nodes */
	double link_latency_us;    /* per collective step (alpha) */
	double launch_us;          /* host cost of one kernel */
	double step_overhead_ms;   /* per-step host work of the framework */
	double devices_per_node;
	double compute_units;      /* SMs / AI cores: GEMM wave quantisation */
	double gemm_tile;          /* output tile edge of the GEMM kernels */
} mo_device;

/* The time model's keys of a `device:` map, in mo_device's order. */
#define MO_DEVICE_TIME_KEYS                                                          \
	"peak_tflops", "gemm_efficiency", "attention_efficiency", "hbm_gbs",         \
		"intra_node_gbs", "inter_node_gbs", "link_latency_us", "launch_us",  \
		"step_overhead_ms", "devices_per_node", "compute_units", "gemm_tile"
#define MO_DEVICE_TIME_FIELDS(d)                                                     \
	&(d)->peak_tflops, &(d)->gemm_efficiency, &(d)->attention_efficiency,        \
		&(d)->hbm_gbs, &(d)->intra_node_gbs, &(d)->inter_node_gbs,           \
		&(d)->link_latency_us, &(d)->launch_us, &(d)->step_overhead_ms,      \
		&(d)->devices_per_node, &(d)->compute_units, &(d)->gemm_tile
#define MO_DEVICE_TIME_COUNT 12

struct mo_model {
	mo_arena *arena;
	const char *name;       /* preset name or file label */

	/* model (the model file's spelling) */
	int64_t num_layers, mtp_num_layers;
	int64_t hidden_size, ffn_hidden_size;
	int64_t num_attention_heads, num_query_groups, kv_channels;
	/* tensor parallelism above the query groups is run by giving each
	 * rank one group's K/V (model_kv_heads_per_rank); false: TP must
	 * divide the groups */
	bool replicate_kv_heads;
	int64_t vocab_size, make_vocab_size_divisible_by;
	bool untie_embeddings_and_output_weights;
	int64_t seq_length;
	const char *normalization;   /* RMSNorm | LayerNorm */
	const char *hidden_act;      /* swiglu | silu | gelu */
	const char *attention;       /* flash | eager */
	double hidden_dropout, attention_dropout;
	int64_t num_moe_experts, moe_router_topk, moe_ffn_hidden_size;
	int64_t moe_shared_expert_intermediate_size, first_k_dense_replace;
	bool multi_latent_attention;
	int64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
		v_head_dim;
	bool qk_layernorm;
	/* Megatron-LM's position embeddings (--position-embedding-type):
	 * "rope" (memopt's default: no parameters), "learned_absolute" (a
	 * [max_position_embeddings, hidden] table on the first stage, not
	 * split by TP: LanguageModelEmbedding) or "none" */
	const char *position_embedding_type;
	int64_t max_position_embeddings; /* the table's rows; seq_length */
	/* biases on QKV, the attention projection, FC1 and FC2 (Megatron's
	 * add_bias_linear, default true there; --disable-bias-linear), and on
	 * QKV alone (add_qkv_bias, default add_bias_linear) */
	bool add_bias_linear, add_qkv_bias;
	/* Manifold-constrained hyper-connections (MindSpore Transformers
	 * pynative/transformers/hyper_connection.py, transformer_layer.py
	 * HyperConnectionTransformerLayer): with hyper_connections the
	 * residual stream is hc_mult packed streams [s, b, hc_mult x hidden]
	 * and each layer mixes them twice (attn_hc, ffn_hc); hc_fused: the
	 * npu_mhc_pre_sinkhorn / npu_mhc_post kernels (use_fused_mhc);
	 * hc_sinkhorn_iters: the unfused Sinkhorn's iterations */
	bool hyper_connections, hc_fused;
	/* enable_hc_head: the learnable head that collapses the streams before
	 * the final norms; unset, it follows hyper_connections
	 * (transformer_config.py:2158-2159): model_hc_head */
	bool hc_head;
	int64_t hc_mult, hc_sinkhorn_iters;
	/* DeepSeek-V4's hybrid attention (experimental_attention_variant
	 * dsv4_hybrid; pynative/transformers/experimental_attention_variant/
	 * deepseek_v4_hybrid_attention.py, csa.py, compressor.py, indexer.py):
	 * per-layer compress ratios (0, 4 or 128; NULL: every layer 0), the
	 * grouped output projection (o_groups x o_lora_rank), the DSA indexer
	 * of the ratio-4 layers; dsa_fused: apply_dsa_kernel_fusion */
	bool dsv4_hybrid, dsa_fused;
	/* DeepSeek-V3.2's sparse attention (experimental_attention_variant
	 * dsa; pynative/transformers/multi_latent_attention.py dsa_forward,
	 * experimental_attention_variant/dsa.py, dsa_indexer.py,
	 * dsa_indexer_loss.py): an MLA layer with the lightning indexer
	 * (index_n_heads x index_head_dim, index_topk) and its KL loss;
	 * dsa_sparse: dsa_indexer_use_sparse_loss, the sparse training stage
	 * (top-k sparse flash attention over the absorbed latent), else the
	 * dense warm-up stage */
	bool dsa, dsa_sparse;
	int64_t o_groups, o_lora_rank, index_n_heads, index_head_dim, index_topk;
	/* csa_window: the sliding window of the sparse attention (sliding_window) */
	int64_t csa_window;
	int64_t *compress_ratios;
	size_t n_compress_ratios;

	/* training */
	int64_t micro_batch_size, micro_batch_num;
	const char *compute_dtype, *params_dtype;
	/* the gradient buffers' dtype; NULL: params_dtype. Megatron-LM with
	 * --bf16 accumulates and reduces gradients in fp32 main_grad buffers
	 * (arguments.py: "accumulate and all-reduce gradients in fp32 for
	 * bfloat16 data type"): float32 there. */
	const char *grads_dtype;
	const char *optimizer;       /* adamw | muon */
	const char *framework;       /* mindspore | pytorch */
	/* framework pytorch: which saved-tensor rules apply (Megatron's
	 * --transformer-impl): "transformer_engine" (Megatron's default,
	 * transformer_config.py) or "local" (Megatron's own modules, plain
	 * autograd: what `make accuracy` measures) */
	const char *transformer_impl;
	/* Megatron's --overlap-grad-reduce: gradients reduced per bucket
	 * during backward (buckets of max(4e7, 1e6 x DP) elements) */
	bool overlap_grad_reduce;
	/* Megatron's --tp-comm-overlap (needs sequence parallelism):
	 * Transformer Engine's userbuffers run each layer's TP all-gather and
	 * reduce-scatter in chunks beside the GEMM that consumes or produces
	 * them (the step time prices what stays exposed) */
	bool tp_comm_overlap;
	/* Megatron's --deterministic-mode: torch.use_deterministic_algorithms,
	 * under which PyTorch fills every tensor it allocates through
	 * empty() with NaN (the step time prices the fills) */
	bool deterministic_mode;
	/* Megatron's --moe-grouped-gemm: the experts run as one grouped GEMM
	 * (Transformer Engine's GroupedLinear, which keeps its own cuBLAS
	 * workspaces: the device's gemm_workspace_mib each) */
	bool moe_grouped_gemm;
	/* Megatron's gradient accumulation fusion (its default; turned off by
	 * --no-gradient-accumulation-fusion): weight gradients are written
	 * into main_grad and Transformer Engine hands autograd a dummy wgrad
	 * it caches per weight shape (module/base.py get_dummy_wgrad).
	 * memopt's default is false, so a file without the key keeps its
	 * answers; `memopt import` writes Megatron's value. */
	bool gradient_accumulation_fusion;
	/* PyTorch's cuBLAS workspace per handle, KiB, from the run's
	 * CUBLAS_WORKSPACE_CONFIG (":SIZE:COUNT" pairs, the sum of SIZE x COUNT
	 * KiB: aten/src/ATen/cuda/CublasHandlePool.cpp
	 * parseChosenWorkspaceSize); 0: the device preset's workspace_mib */
	int64_t cublas_workspace_kib;
	/* MoE routing skew: the tokens this rank's experts receive over their
	 * balanced share (top-k copies of its tokens), a measured or assumed
	 * imbalance; 1 is balanced (the default, listed as assumed) */
	double moe_routing_skew;
	/* Megatron's rope fusion (its default; --no-rope-fusion turns it off):
	 * with multi-latent attention, which YaRN cos/sin tables each
	 * attention module keeps (estimate_weights.c mla_rope) */
	bool apply_rope_fusion;
	/* Megatron's MoE token dispatcher (--moe-token-dispatcher-type:
	 * "allgather", its default, "alltoall" or "flex"), router dtype
	 * (--moe-router-dtype: NULL = the compute dtype) and fused permutation
	 * (--moe-permute-fusion): what the alltoall dispatcher keeps of its
	 * last micro-batch (estimate_weights.c dispatcher_state) */
	const char *moe_token_dispatcher_type;
	const char *moe_router_dtype;
	bool moe_permute_fusion;
	bool overlap_moe_ep_comm; /* overlap_moe_expert_parallel_comm */

	/* parallel; world_size 0 = unknown */
	int64_t world_size, data_parallel, data_parallel_shard;
	int64_t tensor_parallel, pipeline_parallel, virtual_pipeline;
	int64_t expert_parallel, context_parallel;
	/* each expert's weights split over this many ranks (Megatron's
	 * --expert-tensor-parallel-size); 0 = not given: model_etp */
	int64_t expert_tensor_parallel;
	bool sequence_parallel, distributed_optimizer;
	/* explicit per-stage layer lists (pipeline_parallel_layers_per_stage),
	 * n_stage_layers = 0 for auto */
	mo_layers *stage_layers;
	size_t n_stage_layers;

	mo_device device;

	/* where each key came from, for `parallel` diagnostics */
	const mo_doc *doc;           /* may be NULL (presets parsed then kept) */
	const mo_node *parallel_at;  /* the parallel/parallelism section */

	/* layouts */
	mo_layer_type *types;
	size_t n_types;
	size_t *type_of;             /* [num_layers + mtp_num_layers] */
	uint64_t layout_hash;        /* of the types' path sets */

	/* model_*.c private: key positions, batch sizes, the attachment
	 * slots below (model_internal.h) */
	struct mo_model_ext *ext;
};

/* The slot where the estimator keeps what it learned about the model
 * (estimate_cache.c: graphs per layer type, a memo of plan results), and
 * the lock that guards the slot. The model frees what is attached when it
 * is freed, through the slot's destructor, without knowing the estimator.
 * A model is read-only to its users; this slot is its one mutable part,
 * always under the lock (the server shares preset models between
 * threads). */
pthread_mutex_t *model_estimator_lock(const mo_model *m);
mo_attachment *model_estimator_slot(const mo_model *m);

/* The slot where resolve keeps what it derives from the model's paths
 * (resolve/path_memo.c: path lengths, subtree runs, a path index, and a
 * bounded memo of the paths each pattern text matches), with the lock that
 * guards the slot and what is attached to it. Like the estimator's slot:
 * the attachment owns its own allocation, the model frees it through the
 * slot's destructor, and the lock is the model's own (threads resolving
 * against one shared model wait for each other, never for other models). */
pthread_mutex_t *model_resolve_lock(const mo_model *m);
mo_attachment *model_resolve_slot(const mo_model *m);

/* DeepSeek-V4's compress ratio of a layer (0 for a model without the hybrid
 * attention, or past the end of compress_ratios). */
int64_t model_compress_ratio(const mo_model *m, int64_t layer);

/* Whether the hyper-connection head collapses the streams (enable_hc_head,
 * which follows enable_hyper_connections when the file leaves it out). */
bool model_hc_head(const mo_model *m);
/* DeepSeek-V3.2's sparse attention priced by its own table (layout.c) */
bool model_dsa_table(const mo_model *m);

/* A copy of m in its own arena: every field and what the model modules keep
 * beside them, the layouts rebuilt; no estimator or resolve memo, no source
 * document (those stay with m). NULL when out of memory. */
mo_model *model_copy(const mo_model *m);

/* The experts' tensor-parallel degree: expert_tensor_parallel when given;
 * otherwise, for framework pytorch, tensor_parallel (Megatron's
 * --expert-tensor-parallel-size defaults to it: megatron/training/
 * arguments.py, `if args.expert_tensor_parallel_size is None:
 * args.expert_tensor_parallel_size = args.tensor_model_parallel_size`).
 * For framework mindspore 0: not applied (its rules split experts over EP,
 * or over the TP mesh when EP is off). */
int64_t model_etp(const mo_model *m);

/* The K/V heads one tensor-parallel rank of degree tp holds (standard
 * attention): the query groups / tp when tp divides them. When tp is a
 * multiple of the groups, each rank holds one group's K/V head, as
 * Megatron-LM does (megatron/core/transformer/attention.py:353-365 at
 * d98e8a64: num_query_groups_per_partition = 1 when num_query_groups <
 * world_size; get_query_key_value_tensors, :1851-1871, all-gathers the
 * fused projection and keeps the rank's group) and MindSpore Transformers'
 * ChatGLM2 / WizardCoder run (the fused projection sharded by columns, K/V
 * tiled per head), when replicate_kv_heads says the run does; the fused projection's (heads + 2 x groups) x
 * kv_channels columns must still split evenly over tp (ColumnParallel-
 * Linear's divide). 0 when tp fits neither way. */
int64_t model_kv_heads_per_rank(const mo_model *m, int64_t tp);
/* The refusal's printf format (TP then the groups, both long long) when
 * model_kv_heads_per_rank is 0, as the rule the model runs under says. */
const char *model_kv_split_rule(const mo_model *m);

/* The `parallel` rule's errors (mo_model_check, model_check.c), one code a
 * rule; the numbers each compares, in mo_par_finding.p's order. */
typedef enum mo_par_rule {
	MO_PAR_NONE = 0,
	MO_PAR_TP_HEADS,      /* tensor_parallel, attention heads */
	MO_PAR_TP_KV,         /* tensor_parallel, query groups (model_kv_split_rule) */
	MO_PAR_CP_SEQUENCE,   /* context_parallel, sequence length */
	MO_PAR_TOPK_EXPERTS,  /* top-k, experts */
	MO_PAR_EP_NO_EXPERTS, /* expert_parallel (a dense model) */
	MO_PAR_EP_EXPERTS,    /* expert_parallel, experts */
	MO_PAR_EP_GROUPS,     /* expert_parallel, DP (shard) x CP x TP */
	MO_PAR_EP_ETP_GROUPS, /* expert_parallel, expert_tensor_parallel, DP x CP x TP */
	MO_PAR_ETP_FFN,       /* expert_tensor_parallel, the experts' FFN size */
	MO_PAR_PP_LAYERS,     /* pipeline_parallel, layers (MTP included) */
	MO_PAR_VPP_NO_PP,     /* virtual pipeline (without PP) */
	MO_PAR_STAGE_LISTS,   /* per-stage lists, stages (PP x VPP) */
	MO_PAR_STAGE_OUTSIDE, /* layer, layers */
	MO_PAR_STAGE_TWICE,   /* layer */
	MO_PAR_STAGE_MISSING, /* layer */
	MO_PAR_WORLD,         /* DP x TP x PP x CP, world size */
} mo_par_rule;

typedef struct mo_par_finding {
	mo_par_rule rule;
	int64_t p[3];      /* the numbers it compared (0 past the rule's) */
	const char *path;  /* the field it points at (the model's) */
	char message[512]; /* its words, as the diagnostic says them */
} mo_par_finding;

/* The first error of the `parallel` rule, in mo_model_check's order, in *f
 * (only its words are formatted): true, or false when the rule finds none. */
bool model_parallel_error(const mo_model *m, mo_par_finding *f);

/* States the micro-batch count and the global batch (both written by
 * mo_model_to_yaml): a layout search sets them with the parallel fields. */
void model_set_batches(mo_model *m, int64_t micro_batch_num, int64_t global_batch_size);

/* Builds types/type_of from the fields (call after any field change). */
int model_build_layout(mo_model *m, mo_error *err);

/* ---- filling a model (the importers, import/) ------------------------------
 * What an importer sets beside the fields: which fields the file gave, where,
 * and which values it assumed; the typed items a model file is written in. */

/* Every model field a file can set; positions are kept per field so the
 * `parallel` rule can point at the offending key. */
enum mo_mf {
	MF_NUM_LAYERS,
	MF_MTP,
	MF_HIDDEN,
	MF_FFN,
	MF_HEADS,
	MF_GROUPS,
	MF_KV_CHANNELS,
	MF_VOCAB,
	MF_VOCAB_DIV,
	MF_UNTIE,
	MF_SEQ,
	MF_NORM,
	MF_ACT,
	MF_ATTN,
	MF_HDROP,
	MF_ADROP,
	MF_EXPERTS,
	MF_TOPK,
	MF_MOE_FFN,
	MF_SHARED_FFN,
	MF_FIRST_DENSE,
	MF_MLA,
	MF_Q_LORA,
	MF_KV_LORA,
	MF_QK_NOPE,
	MF_QK_ROPE,
	MF_V_HEAD,
	MF_QK_LN,
	MF_MBS,
	MF_MBN,
	MF_CDTYPE,
	MF_PDTYPE,
	MF_OPT,
	MF_FRAMEWORK,
	MF_WORLD,
	MF_DP,
	MF_DP_SHARD,
	MF_TP,
	MF_PP,
	MF_VPP,
	MF_EP,
	MF_CP,
	MF_SP,
	MF_DISTOPT,
	MF_STAGES,
	MF_DEVICE,
	MF_GBS, /* global_batch_size (ext) */
	MF_GDTYPE, /* grads_dtype */
	MF_POS_TYPE, /* position_embedding_type */
	MF_MAX_POS,  /* max_position_embeddings */
	MF_BIAS,     /* add_bias_linear */
	MF_QKV_BIAS, /* add_qkv_bias */
	MF_TE_IMPL,  /* transformer_impl */
	MF_OVERLAP,  /* overlap_grad_reduce */
	MF_ETP,      /* expert_tensor_parallel */
	MF_GROUPED,  /* moe_grouped_gemm */
	MF_GRAD_FUSION, /* gradient_accumulation_fusion */
	MF_ROPE_FUSION, /* apply_rope_fusion */
	MF_DISPATCHER, /* moe_token_dispatcher_type */
	MF_ROUTER_DTYPE, /* moe_router_dtype */
	MF_PERMUTE_FUSION, /* moe_permute_fusion */
	MF_EP_OVERLAP, /* overlap_moe_expert_parallel_comm */
	MF_TP_OVERLAP, /* tp_comm_overlap */
	MF_DETERMINISTIC, /* deterministic_mode */
	MF_CUBLAS_WS, /* cublas_workspace_kib */
	MF_SKEW,      /* moe_routing_skew */
	MF_HC,         /* enable_hyper_connections */
	MF_HC_MULT,    /* hc_mult */
	MF_HC_FUSED,   /* use_fused_mhc */
	MF_HC_SINKHORN, /* hc_sinkhorn_iters */
	MF_ATTN_VARIANT, /* experimental_attention_variant */
	MF_HC_HEAD,    /* enable_hc_head */
	MF_RATIOS,     /* compress_ratios */
	MF_O_GROUPS,   /* o_groups */
	MF_O_LORA,     /* o_lora_rank */
	MF_IDX_HEADS,  /* index_n_heads */
	MF_IDX_DIM,    /* index_head_dim */
	MF_IDX_TOPK,   /* index_topk */
	MF_DSA_FUSED,  /* apply_dsa_kernel_fusion */
	MF_DSA_SPARSE, /* dsa_indexer_use_sparse_loss */
	MF_CSA_WINDOW, /* sliding_window */
	MF_KV_REPLICA, /* replicate_kv_heads */
	MF_COUNT
};

/* Where a field came from: 1-based position of its value node (0 when
 * not from a document) and the key path as written. */
struct mo_model_pos {
	int line, column;
	const char *path;
	/* the file that gave the field when it is not the model's own (a
	 * training YAML's run keys read over a model given apart); NULL: m->name */
	const char *file;
};

struct mo_model_ext {
	struct mo_model_pos pos[MF_COUNT];
	int64_t global_batch_size; /* 0 = not given */
	bool set[MF_COUNT];        /* the file gave the field */
	bool mbn_derived;          /* micro_batch_num from global batch */
	/* where each field's value came from when the file did not give it
	 * (a model type's published default, a rule); NULL: memopt's own
	 * default or derived (import/accounting.c lists them) */
	const char *assumed_from[MF_COUNT];
	struct mo_assumed *assumed;  /* the list, built once by the import */
	size_t n_assumed;
	const char *model_type;      /* the type or config class the file names */
	bool graph_mode;             /* a graph-mode (context.mode 0) YAML */
	/* the file's layer count was refused (out of range): the model stands
	 * without one, and layer ids cannot be checked against it */
	bool layers_refused;
	bool dp_auto;              /* data parallel from the device count */
	/* a Megatron import without a device count: --devices sets
	 * data_parallel, the DDP shard degree (1) stays */
	bool dp_follows_devices;
	/* the source has no device count and no default for one (a Hugging
	 * Face config.json describes the model only): without --devices the
	 * parallel rule says so (model_check_devices) */
	bool devices_unsaid;
	/* the estimator's graphs and memo for this model (estimate_cache.c),
	 * shared by the threads estimating it; estimator_lock guards the slot */
	pthread_mutex_t estimator_lock;
	mo_attachment estimator_memo;
	/* resolve's path info and match memo for this model (resolve/
	 * path_memo.c); resolve_lock guards the slot */
	pthread_mutex_t resolve_lock;
	mo_attachment resolve_memo;
};

/* One value the import filled in: the field as the file would spell it,
 * the value, and where the value comes from. */
struct mo_assumed {
	const char *path, *value, *source;
};

/* model_write.c: one model-file key and its value, as mo_model_to_yaml and the
 * Megatron import write them (section by section, one writer). */
enum { MO_IT_INT, MO_IT_BOOL, MO_IT_DBL, MO_IT_STR };
enum { MO_SEC_MODEL, MO_SEC_TRAIN, MO_SEC_PAR, MO_NSEC };
struct mo_item {
	int sect, type;
	const char *key;
	int64_t i;
	double d;
	const char *s;
};
extern const char *const mo_sec_names[MO_NSEC]; /* "model", "training", "parallel" */
/* `key: value` into w; a double as the shortest text that reads back the
 * same value; strings are canonical enumeration values (plain-safe). */
bool model_write_item(struct mo_yaml_writer *w, const struct mo_item *it);

/* Limits on values read from files (hostile input). */
#define MO_MODEL_MAX_LAYERS 100000
#define MO_MODEL_MAX_MTP 1000
#define MO_MODEL_MAX_DEGREE 1048576

/* model.c: a new model with memopt's defaults; NULL when out of memory. */
mo_model *model_alloc(const char *name);
/* params.c: the parameters of DeepSeek-V3.2's indexer in one layer (0
 * without dsa). */
double model_dsa_indexer_params(const mo_model *m);
/* DeepSeek-V4's hybrid attention of one layer at compress ratio `ratio`
 * with `heads` attention heads on the rank (all of them for the model's
 * count, heads / TP for a device's), and one hyper-connection module
 * (two per decoder layer); params.c gives the sources. */
double model_hybrid_attention_params(const mo_model *m, int64_t ratio, double heads);
double model_hc_params(const mo_model *m);
/* The vocabulary a model has when no file gives one. */
int64_t model_default_vocab_size(void);
/* Fills derived defaults (kv_channels, groups, world size, ...). */
void model_derive(mo_model *m);
/* a * b, saturating at INT64_MAX; both non-negative. */
int64_t model_mul(int64_t a, int64_t b);

/* presets.c */
/* Fills *out from a device preset name (case-insensitive). 0 or -1. */
int device_preset(mo_device *out, const char *name);

/* model_check.c: the name of a field as the diagnostics print it when
 * the model has no position for it. */
const char *model_field_path(const mo_model *m, enum mo_mf f);

#endif
