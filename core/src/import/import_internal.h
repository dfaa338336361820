/* Private to the importers (the import/ files): the reader's state for one
 * document, the key conversions, the helpers the readers share, and the
 * published defaults of model types. */
#ifndef MEMOPT_IMPORT_INTERNAL_H
#define MEMOPT_IMPORT_INTERNAL_H

#include "import/import.h"

/* How a key's value is read (the key table in model_file.c). The keys of
 * the graph-mode YAML's own rules (CV_MULOF .. CV_GA) are handed to
 * graph_mode.c with their conversion, which it switches on. */
enum mo_conv {
	CV_INT,     /* int64 field, range lo..hi */
	CV_BOOL,    /* bool field */
	CV_DBL,     /* double field, 0..1 */
	CV_NORM,    /* normalization name */
	CV_ACT,     /* hidden_act */
	CV_ATTN,    /* attention: flash | eager */
	CV_FLASH,   /* use_flash_attention: bool -> attention */
	CV_DTYPE,   /* dtype names */
	CV_FRAME,   /* framework */
	CV_OPT,     /* optimizer: a name or {type: name} */
	CV_TIE,     /* tie_word_embeddings: !untie */
	CV_STAGES,  /* pipeline_parallel_layers_per_stage */
	CV_DEVICE,  /* device preset name or mapping */
	CV_NSHARED, /* n_shared_experts (count; x moe ffn) */
	CV_GLU,     /* gated_linear_unit */
	CV_MAXPOS,  /* max_position_embeddings (seq default) */
	CV_DPREP,   /* data_parallel_replicate (multiplies dp) */
	CV_DEGREE,  /* int >= 1 (or -1 for data_parallel_shard) */
	CV_MULOF,   /* multiple_of (legacy FFN rounding) */
	CV_FFNMULT, /* ffn_dim_multiplier (legacy FFN rounding) */
	CV_EXPAND,  /* expand_ratio (GPT-2's FFN: the ratio x hidden) */
	CV_MQA,     /* multi_query_attention (GLM) */
	CV_MQG,     /* multi_query_group_num (GLM) */
	CV_RMSNORM, /* rmsnorm: bool (GLM) */
	CV_OFFSET,  /* offset: per-stage layer offsets (graph mode) */
	CV_PPI,     /* pp_interleave_num (graph mode) */
	CV_GA,      /* gradient_accumulation_steps */
	CV_POSEMB,  /* position_embedding_type */
	CV_TEIMPL,  /* transformer_impl */
	CV_DISPATCH, /* moe_token_dispatcher_type */
	CV_ACCUM,   /* accumulate_allreduce_grads_in_fp32: grads_dtype */
	CV_PPLAYOUT, /* pipeline_model_parallel_layout: Megatron's layout string */
	CV_SKEW,     /* moe_routing_skew: a number in [lo, hi] */
	CV_ATTNVAR,  /* experimental_attention_variant */
	CV_RATIOS    /* compress_ratios: a list of 0, 4, 128 */
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
	int64_t expand_ratio; /* FFN = expand_ratio x hidden, not gated */
	bool gpt;	    /* LayerNorm, GeLU, biases, no vocabulary padding */
	const char *positions; /* position_embedding_type (NULL: rope) */
	bool legacy_ffn;    /* FFN from multiple_of rounding when absent */
	bool legacy_moe_ffn; /* experts use moe_config.moe_intermediate_size */
	/* the class reads no head width: kv_channels / head_dim in its file
	 * are left unread (the head is hidden / heads) */
	bool no_head_dim;
	/* TP above the K/V groups runs: the class's attention shards the
	 * fused projection by columns and repeats K/V per head on each rank */
	bool kv_tiled;
	/* ffn_hidden_size is the two gated halves: the gate and the up
	 * projection are each half of it wide, a gated GeLU (geglu) */
	bool ffn_halves;
	/* the class's dropout probabilities (hidden: after attention and
	 * FFN; attention: on its probabilities) */
	double hidden_dropout, attention_dropout;
};
const struct mo_type_defaults *model_type_find(const char *name);

/* Reader state for one document (model_file.c, graph_mode.c,
 * accounting.c). */
struct mo_rd {
	mo_model *m;
	mo_diags *diags;
	const char *file;
	/* the training YAML read over a model given apart (NULL: none): the
	 * file of the run's own keys (context, optimizer, top-level keys) */
	const char *run_file;
	int64_t n_shared, dp_replicate, max_pos;
	bool glu, glu_set, hf; /* hf: flat Hugging Face config */
	bool failed;           /* out of memory */
	/* graph-mode YAML */
	bool graph, legacy;    /* legacy: not `use_legacy: False` */
	bool layers_default;   /* the layer count is the type's default */
	bool layers_given;     /* a layer count key is there (refused when out of range) */
	const struct mo_type_defaults *type;
	const mo_node *model_at; /* model.model_config */
	int64_t multiple_of, interleave, ga_steps, mq_groups;
	double ffn_mult, shared_count;
	bool ffn_mult_set, multiple_of_set, mqa, mqa_set, interleave_on;
	int64_t expand_ratio; /* the file's expand_ratio, 0 when absent */
	int64_t moe_ffn, first_dense; /* moe_config, -1 when absent */
	const mo_node *offset, *moe_at;
	const char *offset_path;
	/* pipeline_model_parallel_layout, read once the pipeline degree and
	 * the layer counts are known (pp_layout.c) */
	const char *pp_layout, *pp_layout_path;
	int pp_layout_line, pp_layout_column;
	/* PanguAlphaConfig's MoE switch and the values it gates
	 * (graph_class_keys.c), and the model's arch type (model.arch.type) */
	bool class_moe, class_moe_set;
	const mo_node *class_experts, *class_topk;
	const char *class_experts_path, *class_topk_path;
	const char *arch_type;
};

/* read.c: helpers every reader shares. */
void model_type_err(struct mo_rd *r, const mo_node *v, const char *path,
		       const char *want);
bool model_is_null(const mo_node *v);
const char *model_str(const mo_node *v);
bool model_read_int(struct mo_rd *r, const mo_node *v, const char *path,
		       int64_t lo, int64_t hi, int64_t *out);
bool model_read_bool(struct mo_rd *r, const mo_node *v, const char *path,
			bool *out);
/* The file gave field f: at v (model_mark) or at line, column, under
 * the key path `path`. */
void model_mark(struct mo_rd *r, enum mo_mf f, const mo_node *v,
		   const char *path);
void model_mark_at(struct mo_rd *r, enum mo_mf f, int line, int column, const char *path);
/* The file that gave field f (the model's own, or the training YAML read
 * over it). */
const char *model_pos_file(const struct mo_rd *r, enum mo_mf f);

/* graph_mode.c: the graph-mode YAML's own names and rules. */
bool model_graph_names_type(const mo_node *model_config);
void model_graph_begin(struct mo_rd *r, const mo_node *root,
			  const mo_node *model_config);
/* model_graph_begin without the model type: the run's settings (legacy
 * names, graph or PyNative mode, interleave, the dataset's sequence
 * length), for a training YAML read over a model given apart. */
void model_graph_run_begin(struct mo_rd *r, const mo_node *root,
			      const mo_node *model_config);
void model_graph_key(struct mo_rd *r, enum mo_conv which, int64_t lo, int64_t hi,
			const mo_node *v, const char *path);
void model_graph_moe(struct mo_rd *r, const mo_node *moe_config);
void model_graph_finish(struct mo_rd *r);
/* graph_class_keys.c: a key of model_config that one legacy config class
 * names its own way (read as the model-file key it means, known not to
 * change memory for that class, or said unmodelled): true when it is one
 * (the finding, if any, said); model_graph_class_finish applies what waits
 * for the whole mapping (PanguAlphaConfig's use_moe), before
 * model_graph_finish. */
bool model_graph_class_key(struct mo_rd *r, const mo_node *key, const mo_node *v,
			      const char *path);
void model_graph_class_finish(struct mo_rd *r);
/* model_file.c: v read as the model-file key `as` (false: no such key). */
bool model_read_as(struct mo_rd *r, const char *as, const mo_node *v, const char *path);

/* pp_layout.c: Megatron's layout string as per-stage layer lists and the
 * virtual pipeline degree (a `parallel` error when Megatron refuses it). */
void pp_layout_apply(struct mo_rd *r);

/* accounting.c: every key accounted for, every default listed. */
void model_account_key(struct mo_rd *r, const mo_node *key,
			  const mo_node *v, const char *path);
void model_assume(struct mo_rd *r, enum mo_mf f, const char *source);
void model_note_assumed(struct mo_rd *r);
void model_dsa_defaults(struct mo_rd *r);
void model_check_unmodelled(struct mo_rd *r, const mo_node *root);
void model_missing_layers(struct mo_rd *r, const mo_node *root);

/* hf_config.c: a Hugging Face config.json's model_type and own keys, after
 * the flat keys are read: the class's fixed parts, what is not modelled, and
 * the architectures refused (hf_config_refused: an `unsupported` error at
 * the key; true when refused, also for a document with no model keys). */
/* tokenizer.c: the vocabulary of a tokenizer on disk. */
enum tokenizer_kind {
	TOKENIZER_HF,		/* a Hugging Face tokenizer's folder: len(tokenizer) */
	TOKENIZER_SENTENCEPIECE /* a SentencePiece .model file: its pieces */
};
enum tokenizer_basis {
	TOKENIZER_ENTRIES,   /* the tokenizer's own count */
	TOKENIZER_MODEL_ROWS /* config.json's vocab_size: the rows that hold it */
};
struct tokenizer_vocab {
	int64_t entries;
	enum tokenizer_basis basis;
	const char *file; /* the file of the folder that gave it ("": the path itself) */
};
/* The vocabulary of the tokenizer at path (opened as given: the caller
 * joins it to the launch folder). false with *why (a static text) when
 * there is none to read. */
bool tokenizer_read(const char *path, enum tokenizer_kind kind, struct tokenizer_vocab *out,
		    const char **why);

void hf_config_read(struct mo_rd *r, const mo_node *root);
bool hf_config_refused(mo_diags *diags, const char *file, const mo_node *root);

/* model_file.c: a model filled from an importer's typed items (the keys
 * and sections of a model file, model_write_item's), each through the
 * same store as a document's key, with where it was written (a finding
 * points there; 0 when from a default). Returns 0 with *out set, or -1. */
struct mo_import_item {
	const struct mo_item *item;
	int line, column;
};
int model_from_items(mo_model **out, mo_diags *diags, const struct mo_import_item *v,
			size_t n, const char *name, mo_error *err);

#endif
