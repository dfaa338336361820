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
	bool dp_auto;              /* data parallel from the device count */
	/* the estimator's graphs and memo for this model (estimate_cache.c),
	 * shared by the threads estimating it; estimator_lock guards the slot */
	pthread_mutex_t estimator_lock;
	mo_attachment estimator_memo;
	/* resolve's path info and match memo for this model (resolve/
	 * path_memo.c); resolve_lock guards the slot */
	pthread_mutex_t resolve_lock;
	mo_attachment resolve_memo;
};

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
