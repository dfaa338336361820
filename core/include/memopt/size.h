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
/* Rejected layouts by reason, e.g. "tensor_parallel 16 does not divide the
 * 8 query groups": the reason and how many layouts it rejected. Returns 0,
 * or -1 out of range. */
size_t mo_size_rejected_count(const mo_size_result *r);
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
