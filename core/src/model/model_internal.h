/* Private to the model modules (model*.c, layout.c, presets.c). */
#ifndef MEMOPT_MODEL_INTERNAL_H
#define MEMOPT_MODEL_INTERNAL_H

#include "model/model.h"

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
	MF_COUNT
};

/* Where a field came from: 1-based position of its value node (0 when
 * not from a document) and the key path as written. */
struct mo_model_pos {
	int line, column;
	const char *path;
};

struct mo_model_ext {
	struct mo_model_pos pos[MF_COUNT];
	int64_t global_batch_size; /* 0 = not given */
	bool set[MF_COUNT];        /* the file gave the field */
	bool mbn_derived;          /* micro_batch_num from global batch */
	/* where each field's value came from when the file did not give it
	 * (a model type's published default, a rule); NULL: memopt's own
	 * default or derived (model_keys.c lists them) */
	const char *assumed_from[MF_COUNT];
	struct mo_assumed *assumed;  /* the list, built once by the import */
	size_t n_assumed;
	const char *model_type;      /* the type or config class the file names */
	bool graph_mode;             /* a graph-mode (context.mode 0) YAML */
	bool dp_auto;              /* data parallel from the device count */
	/* a Megatron import without a device count: --devices sets
	 * data_parallel, the DDP shard degree (1) stays */
	bool dp_follows_devices;
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

/* Published defaults of a model type (model_types.c): what a file that
 * names the type and leaves a field out gets. 0 = no default. */
struct mo_type_defaults {
	const char *name;   /* model_type, or the legacy config class */
	const char *source; /* the configuration class it comes from */
	int64_t layers, hidden, ffn, heads, kv, head_dim, vocab, seq;
	int64_t experts, topk, moe_ffn, n_shared, first_dense, mtp;
	int64_t q_lora, kv_lora, qk_nope, qk_rope, v_head;
	bool tied, qk_layernorm;
	bool legacy_ffn;    /* FFN from multiple_of rounding when absent */
	bool legacy_moe_ffn; /* experts use moe_config.moe_intermediate_size */
};
const struct mo_type_defaults *mo_model_type_find(const char *name);

/* Reader state for one document (model_import.c, import_graph.c,
 * model_keys.c). */
struct mo_rd {
	mo_model *m;
	mo_diags *diags;
	const char *file;
	int64_t n_shared, dp_replicate, max_pos;
	bool glu, glu_set, hf; /* hf: flat Hugging Face config */
	bool failed;           /* out of memory */
	/* graph-mode YAML */
	bool graph, legacy;    /* legacy: not `use_legacy: False` */
	bool layers_default;   /* the layer count is the type's default */
	const struct mo_type_defaults *type;
	const mo_node *model_at; /* model.model_config */
	int64_t multiple_of, interleave, ga_steps, mq_groups;
	double ffn_mult, shared_count;
	bool ffn_mult_set, multiple_of_set, mqa, mqa_set, interleave_on;
	int64_t moe_ffn, first_dense; /* moe_config, -1 when absent */
	const mo_node *offset, *moe_at;
	const char *offset_path;
};

/* Graph-mode keys kept aside (order of CV_MULOF.. in model_import.c). */
enum mo_graph_key {
	GK_MULTIPLE_OF,
	GK_FFN_MULT,
	GK_MQA,
	GK_MQ_GROUPS,
	GK_RMSNORM,
	GK_OFFSET,
	GK_INTERLEAVE,
	GK_GA_STEPS
};

/* model_import.c: helpers the other readers share. */
void mo_model_type_err(struct mo_rd *r, const mo_node *v, const char *path,
		       const char *want);
bool mo_model_is_null(const mo_node *v);
const char *mo_model_str(const mo_node *v);
bool mo_model_read_int(struct mo_rd *r, const mo_node *v, const char *path,
		       int64_t lo, int64_t hi, int64_t *out);
bool mo_model_read_bool(struct mo_rd *r, const mo_node *v, const char *path,
			bool *out);
void mo_model_mark(struct mo_rd *r, enum mo_mf f, const mo_node *v,
		   const char *path);

/* import_graph.c: the graph-mode YAML's own names and rules. */
bool mo_model_graph_names_type(const mo_node *model_config);
void mo_model_graph_begin(struct mo_rd *r, const mo_node *root,
			  const mo_node *model_config);
void mo_model_graph_key(struct mo_rd *r, int which, int64_t lo, int64_t hi,
			const mo_node *v, const char *path);
void mo_model_graph_moe(struct mo_rd *r, const mo_node *moe_config);
void mo_model_graph_finish(struct mo_rd *r);

/* model_keys.c: every key accounted for, every default listed. */
void mo_model_account_key(struct mo_rd *r, const mo_node *key,
			  const mo_node *v, const char *path);
void mo_model_assume(struct mo_rd *r, enum mo_mf f, const char *source);
void mo_model_note_assumed(struct mo_rd *r);
void mo_model_check_unmodelled(struct mo_rd *r, const mo_node *root);
void mo_model_missing_layers(struct mo_rd *r, const mo_node *root);

/* model.c: one model-file key and its value, as mo_model_to_yaml and the
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
bool mo_model_write_item(struct mo_yaml_writer *w, const struct mo_item *it);

/* import_megatron.c: Megatron-LM arguments (a launch line, an arguments
 * file, a functional-test model_config.yaml) as a model, as mo_model_load. */
int mo_model_load_megatron(mo_model **out, mo_diags *diags, const char *text, size_t len,
			   const char *name, const mo_limits *lim, mo_error *err);

/* Limits on values read from files (hostile input). */
#define MO_MODEL_MAX_LAYERS 100000
#define MO_MODEL_MAX_MTP 1000
#define MO_MODEL_MAX_DEGREE 1048576

/* model.c */
mo_model *mo_model_alloc(const char *name);
void mo_model_set_defaults(mo_model *m);
/* Fills derived defaults (kv_channels, groups, world size, ...). */
void mo_model_derive(mo_model *m);
/* micro_batch_num from global / (local * dp) when possible. */
void mo_model_derive_batches(mo_model *m);
/* a * b, saturating at INT64_MAX; both non-negative. */
int64_t mo_model_mul(int64_t a, int64_t b);

/* presets.c */
/* Fills *out from a device preset name (case-insensitive). 0 or -1. */
int mo_device_preset(mo_device *out, const char *name);
size_t mo_device_preset_count(void);
const char *mo_device_preset_name(size_t i);

/* model_check.c: the name of a field as the diagnostics print it when
 * the model has no position for it. */
const char *mo_model_field_path(const mo_model *m, enum mo_mf f);

#endif
