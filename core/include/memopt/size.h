/*
 * memopt — sizing a job: the fastest parallel layouts, each with the
 * cheapest recompute / swap plan that fits, for a model, a device count
 * (or a range of them) and a global batch.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_SIZE_H
#define MEMOPT_API_SIZE_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/model.h>
#include <memopt/config.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Caller-owned; initialise with = {0} (fields may be appended; a zero
 * field means its default). */
typedef struct mo_size_input {
	const mo_model *model;    /* required (borrowed): shapes, dtypes,
				   * framework, device; its own layout is
				   * replaced by each candidate's */
	int64_t devices;          /* required, >= 1 */
	int64_t devices_max;      /* 0: devices only; else the range
				   * devices..devices_max (counts that are
				   * multiples of devices_per_node) */
	int64_t global_batch;     /* sequences per step, required, >= 1 */
	int64_t devices_per_node; /* 0 = 8: tensor parallel stays in a node */
	uint64_t budget;          /* bytes per device; 0 = the device capacity
				   * less headroom_percent */
	double headroom_percent;  /* with budget 0: keep this share free */
	size_t top;               /* layouts returned; 0 = 10; SIZE_MAX = all */
	/* NULL, or a whole MindSpore Transformers training YAML (borrowed,
	 * from mo_config_parse; graph mode or PyNative, block style): each
	 * layout's config_yaml is then this file with its parallel keys, batch
	 * keys and three memory sections rewritten, every other byte kept */
	const mo_config *base;
} mo_size_input;

/* One layout and its plan. Strings are borrowed from the result. */
typedef struct mo_size_layout {
	int64_t devices;
	int64_t tensor_parallel, pipeline_parallel, virtual_pipeline;
	int64_t context_parallel, expert_parallel, expert_tensor_parallel;
	int64_t data_parallel, data_parallel_shard;
	int sequence_parallel, distributed_optimizer;
	int64_t micro_batch_size, micro_batch_num;
	uint64_t peak_bytes;     /* the estimate's allocated peak with the plan */
	uint64_t budget_bytes;
	double step_seconds;     /* the estimate's step time with the plan */
	double tokens_per_second_per_device;
	int fits;
	int pareto;              /* on the memory / step-time front of the
				  * layouts evaluated */
	const char *plan;        /* what the plan does, one line ("none",
				  * "recompute 12 layers, swap 3", ...) */
	const char *config_yaml; /* the three sections (canonical YAML); with
				  * a base, the base file with this layout */
	const char *model_yaml;  /* the whole model file with this layout */
	/* framework pytorch: the layout as Megatron-LM arguments
	 * ("--tensor-model-parallel-size 2 ..."), with the plan's recompute
	 * flags when Megatron-LM has flags for it (whole layers, the first n
	 * of every model chunk: --recompute-method block, or every layer:
	 * uniform); NULL for other frameworks */
	const char *megatron_args;
	double mfu;              /* model FLOPs utilisation (the estimate's) */
	/* framework pytorch, a plan Megatron-LM's recompute flags cannot say
	 * (swap, selected modules, a per-layer choice): why, in one sentence;
	 * the plan is then in config_yaml only. NULL otherwise. */
	const char *megatron_plan_note;
} mo_size_layout;

/* Opaque, owned by the caller, freed with mo_size_result_free. */
typedef struct mo_size_result mo_size_result;

/* Searches. Returns 0 with *out set (also when nothing fits: then no
 * layout has fits set and the rejections say why), or -1 with err:
 * MO_ERR_USAGE (no model, devices or batch out of range), MO_ERR_NOMEM.
 * The work budget (mo_budget_begin) stops the search with the best
 * layouts found so far (mo_size_complete says 0). */
int mo_size_run(mo_size_result **out, const mo_size_input *in, mo_error *err);
void mo_size_result_free(mo_size_result *r);

/* Returned layouts: fitting ones first, each group by step time (a
 * device range: by tokens per second per device). */
size_t mo_size_count(const mo_size_result *r);
const mo_size_layout *mo_size_get(const mo_size_result *r, size_t i);
/* The rule that rejected a layout. The values are stable (appended only);
 * faces switch on them, never on the text. */
typedef enum mo_size_reason {
	MO_SIZE_REJ_OTHER = 0,        /* reasons past the result's table */
	MO_SIZE_REJ_TP_NODE,          /* TP spans more than a node */
	MO_SIZE_REJ_TP_HEADS,         /* TP does not divide the attention heads */
	MO_SIZE_REJ_TP_KV_GROUPS,     /* TP does not divide the query groups */
	MO_SIZE_REJ_TP_KV_REPLICATE,  /* replicated K/V: TP neither divides the
				       * groups nor is a multiple that splits */
	MO_SIZE_REJ_CP_SEQUENCE,      /* CP does not divide the sequence */
	MO_SIZE_REJ_CP_CHUNKS,        /* Megatron-LM: 2 x CP does not divide it */
	MO_SIZE_REJ_PP_LAYERS,        /* PP above the layers */
	MO_SIZE_REJ_PP_EVEN,          /* Megatron-LM: PP does not divide them */
	MO_SIZE_REJ_DP_BATCH,         /* the global batch not a multiple of DP */
	MO_SIZE_REJ_VPP_LIMIT,        /* VPP above the searched limit */
	MO_SIZE_REJ_VPP_EVEN,         /* Megatron-LM: VPP does not divide a stage */
	MO_SIZE_REJ_EP_DEVICES,       /* EP above the devices */
	MO_SIZE_REJ_DOPT_SAME,        /* distributed optimizer off = on here */
	MO_SIZE_REJ_SP_MOE,           /* Megatron-LM MoE needs SP with TP, EP > 1 */
	MO_SIZE_REJ_MBS_LIMIT,        /* micro-batch size above the searched limit */
	MO_SIZE_REJ_PARALLEL_RULE,    /* the model's `parallel` rule, a finding
				       * without a code below (none today) */
	MO_SIZE_REJ_STATE_BUDGET,     /* weights, gradients, optimizer > budget */
	MO_SIZE_REJ_NO_PLAN,          /* no recompute / swap plan fits */
	MO_SIZE_REJ_SLOWER,           /* slower than the returned ones, unplanned */
	MO_SIZE_REJ_NOT_ESTIMATED,    /* the work limit ran out before its estimate */
	MO_SIZE_REJ_NOT_PLANNED,      /* the work limit ran out before its plan */
	MO_SIZE_REJ_ETP_NODE,         /* expert TP spans more than a node */
	/* the model's `parallel` rule (core/src/model/model_check.c), one code
	 * a rule; the words are the model's finding, field the key it names */
	MO_SIZE_REJ_TOPK_EXPERTS,     /* top-k above the experts */
	MO_SIZE_REJ_EP_NO_EXPERTS,    /* EP on a dense model */
	MO_SIZE_REJ_EP_EXPERTS,       /* EP does not divide the experts */
	MO_SIZE_REJ_EP_GROUPS,        /* EP does not divide DP (shard) x CP x TP */
	MO_SIZE_REJ_EP_ETP_GROUPS,    /* EP x expert TP does not divide DP x CP x TP */
	MO_SIZE_REJ_ETP_FFN,          /* expert TP does not divide the experts' FFN */
	MO_SIZE_REJ_VPP_NO_PP,        /* virtual chunks without PP */
	MO_SIZE_REJ_STAGE_LISTS,      /* per-stage lists not PP x VPP */
	MO_SIZE_REJ_STAGE_OUTSIDE,    /* a per-stage list names a layer past the model */
	MO_SIZE_REJ_STAGE_TWICE,      /* a layer in two stages */
	MO_SIZE_REJ_STAGE_MISSING,    /* a layer in no stage */
	MO_SIZE_REJ_WORLD_SIZE,       /* DP x TP x PP x CP not the devices */
	MO_SIZE_REJ_COUNT
} mo_size_reason;

/* One group of rejected layouts: one rule with the same parameters (the
 * numbers it compared, named). Strings are borrowed from the result. */
typedef struct mo_size_rejection {
	mo_size_reason code;
	const char *code_name;     /* stable, e.g. "tp_kv_groups" */
	const char *text;          /* one line, e.g. "tensor_parallel 16 does not
				    * divide the 8 query groups (KV heads)" */
	size_t n_params;           /* 0 to 3 */
	const char *param_names[3]; /* e.g. "tensor_parallel", "query_groups" */
	int64_t params[3];
	const char *field;         /* a rule of the model's `parallel` rule:
				    * the model field its finding names;
				    * else NULL */
	uint64_t count;            /* layouts it rejected */
} mo_size_rejection;

/* The stable name of a code ("tp_kv_groups"); "other" out of range. */
const char *mo_size_reason_name(mo_size_reason code);

/* Rejected layouts by rule and parameters: how many groups, and each
 * (NULL out of range). */
size_t mo_size_rejected_count(const mo_size_result *r);
const mo_size_rejection *mo_size_rejected_at(const mo_size_result *r, size_t i);
/* The same as text and count only (kept for callers from before the
 * codes). Returns 0, or -1 out of range. */
int mo_size_rejected_get(const mo_size_result *r, size_t i, const char **reason,
			 uint64_t *count);
/* Layouts the framework accepts (enumerated, before the memory bounds),
 * the ones estimated, the ones planned. */
uint64_t mo_size_accepted(const mo_size_result *r);
uint64_t mo_size_estimated(const mo_size_result *r);
uint64_t mo_size_planned(const mo_size_result *r);
/* 1 when the search ran to its end (the top layouts are the true top),
 * 0 when the work budget stopped it (the best found so far). */
int mo_size_complete(const mo_size_result *r);
/* With a device range: the smallest count with a fitting layout (0: none). */
int64_t mo_size_smallest_devices(const mo_size_result *r);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
