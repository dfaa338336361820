/*
 * memopt — the memory and cost estimate of a config on a model.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_ESTIMATE_H
#define MEMOPT_API_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/model.h>
#include <memopt/config.h>
#include <memopt/check.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Memory per device and pipeline stage, per layer, on a timeline of one
 * training step, and the cost of the plan. Activations come from a
 * tensor-level simulation of what the framework's autograd keeps
 * (`training.framework`: mindspore or pytorch), once per layer type and
 * distinct plan segment. All byte counts are per device. */

/* Opaque, owned by the caller, freed with mo_estimate_free. */
typedef struct mo_estimate mo_estimate;

/* Runs the estimate of model m under config c (NULL: no optimisation; c
 * must have validated without errors). Returns 0 with *out set (free with
 * mo_estimate_free), or -1 with err filled: MO_ERR_MODEL_NEEDED when the
 * device count is unknown (data_parallel_shard -1 without --devices /
 * world_size), MO_ERR_BUDGET / MO_ERR_CANCELLED (mo_budget), MO_ERR_NOMEM,
 * MO_ERR_USAGE for NULL arguments. The estimate does not borrow c or m. */
int mo_estimate_run(mo_estimate **out, const mo_config *c, const mo_model *m,
		    mo_error *err);
/* mo_estimate_run of the config and model a resolution was built from (mo_validate_resolve,
 * mo_check_resolved), without resolving again. */
int mo_estimate_resolved(mo_estimate **out, const mo_resolved *r, mo_error *err);
/* mo_estimate_resolved in summary mode: every figure the same, but the timeline of a stage
 * whose step is too long to list whole is not listed (mo_estimate_event_count 0 there; its
 * figures come from the schedule's closed form either way), so that a caller that shows no
 * events pays neither the listing's memory nor its walk. */
int mo_estimate_resolved_summary(mo_estimate **out, const mo_resolved *r, mo_error *err);
/* Frees the estimate; NULL is fine. */
void mo_estimate_free(mo_estimate *e);

/* Allocated peak of the busiest stage. */
uint64_t mo_estimate_peak_bytes(const mo_estimate *e);
/* The pool reserved at the busiest stage's peak (allocator fragmentation
 * and collective buffers added). */
uint64_t mo_estimate_reserved_peak_bytes(const mo_estimate *e);
/* The memory the framework may use (device memory minus the runtime's
 * reserve). */
uint64_t mo_estimate_capacity_bytes(const mo_estimate *e);
/* Step-time overhead of the plan against no optimisation, in percent. */
double mo_estimate_overhead_percent(const mo_estimate *e);
/* The framework whose save rules were used: "mindspore" or "pytorch". */
const char *mo_estimate_framework(const mo_estimate *e);
/* What those rules assume and where they are known to miss, in one
 * sentence (static; the CLI's "assumptions:" line). */
const char *mo_estimate_rules_note(const mo_estimate *e);

/* Timeline buckets: what the bytes at an event are for. */
typedef enum mo_estimate_bucket {
	MO_EST_WEIGHTS = 0,   /* this device's parameter shard */
	MO_EST_GRADIENTS,
	MO_EST_OPTIMIZER,
	MO_EST_ACTIVATIONS,   /* kept for backward, all micro-batches in flight */
	MO_EST_RECOMPUTED,    /* a recomputed layer's tensors, during its backward */
	MO_EST_SWAP_BUFFERS,  /* prefetched swap buffers (the prefetch window) */
	MO_EST_GATHERED,      /* FSDP all-gathered weights (and unsharded grads) */
	MO_EST_LOSS,          /* cross-entropy backward scratch */
	MO_EST_WORKSPACES,    /* GEMM workspaces and kept caches: the
			       * workspaces from the first layer's forward on
			       * (framework pytorch: the device's
			       * workspace_mib; mindspore: 0, inside its
			       * rules); caches allocated in the first step
			       * and never freed (pytorch: Transformer
			       * Engine's dummy weight gradients under
			       * gradient accumulation fusion, Megatron's
			       * buffer of the output layer's gathered input
			       * under SP, MLA's YaRN rotary tables, the
			       * alltoall MoE dispatcher's last routing) in
			       * every event */
	MO_EST_PIPELINE_INPUTS, /* pipeline parallel, framework pytorch: each
				 * model chunk that receives its input from the
				 * previous stage keeps the last one and its
				 * gradient until its next forward */
	MO_EST_BUCKETS
} mo_estimate_bucket;

/* "weights", "gradients", "optimizer", "activations", "recomputed",
 * "swap_buffers", "gathered_weights", "loss_scratch", "workspaces",
 * "pipeline_inputs". Static; NULL out of range. */
const char *mo_estimate_bucket_name(int bucket);

/* One pipeline stage's memory and time. */
typedef struct mo_estimate_stage {
	int64_t stage;
	uint64_t peak_bytes;          /* allocated peak */
	uint64_t reserved_peak_bytes; /* pool reserved at the peak */
	const char *peak_event;       /* e.g. "backward mb 0 layer 31" */
	uint64_t weights_bytes, gradients_bytes, optimizer_bytes;
	uint64_t activations_bytes;   /* kept activations at the peak event */
	uint64_t swap_buffer_bytes;   /* prefetch buffers at the peak event */
	uint64_t peak_by_bucket[MO_EST_BUCKETS]; /* at the peak event */
	int64_t first_layer, num_layers; /* layers held (first id; count) */
	int64_t in_flight;            /* micro-batches in flight (1F1B) */
	double compute_seconds;       /* one step, no optimisation */
	double overhead_seconds;      /* extra time of the plan */
	/* allocated after the optimizer step, until the next step's first
	 * forward: the parameter state kept across steps, the workspaces and
	 * the pipeline inputs (Megatron logs it as mem-allocated-bytes) */
	uint64_t between_steps_bytes;
} mo_estimate_stage;

/* Pipeline stages (1 without pipeline parallel). */
size_t mo_estimate_stage_count(const mo_estimate *e);
/* Stage i; borrowed from e, NULL past the end. */
const mo_estimate_stage *mo_estimate_stage_get(const mo_estimate *e, size_t i);

/* One layer's activations and cost under the plan. */
typedef struct mo_estimate_layer {
	int64_t layer, stage;
	const char *type;                   /* layer type name */
	uint64_t activation_bytes;          /* kept, one micro-batch, this plan */
	uint64_t baseline_activation_bytes; /* kept with no optimisation */
	uint64_t recomputed_bytes;          /* exists again during its backward */
	uint64_t swap_bytes;                /* to host and back, per micro-batch */
	double recompute_flops;             /* extra forward FLOPs per micro-batch */
	double forward_flops;
	uint64_t comm_recompute_bytes;      /* extra collective bytes */
} mo_estimate_layer;

/* Layers estimated: num_layers + mtp_num_layers. */
size_t mo_estimate_layer_count(const mo_estimate *e);
/* Layer `layer` (0 .. mo_estimate_layer_count - 1); borrowed from e, NULL
 * out of range. */
const mo_estimate_layer *mo_estimate_layer_get(const mo_estimate *e, int64_t layer);

/* What happens at a timeline event. */
typedef enum mo_estimate_event_kind {
	MO_EV_FORWARD = 0,     /* forward of one layer for one micro-batch */
	MO_EV_BACKWARD,        /* backward of one layer (recompute included) */
	MO_EV_EMBED_FORWARD,
	MO_EV_EMBED_BACKWARD,
	MO_EV_LOSS_FORWARD,
	MO_EV_LOSS_BACKWARD,
	MO_EV_OPTIMIZER
} mo_estimate_event_kind;

/* One event of a stage's timeline, with the bytes of each bucket. */
typedef struct mo_estimate_event {
	mo_estimate_event_kind kind;
	int64_t micro_batch;   /* -1 for the optimizer step */
	int64_t layer;         /* -1 when not a layer event */
	uint64_t bytes[MO_EST_BUCKETS]; /* at the event's high-water mark */
	uint64_t total;
	/* When the event starts, in seconds from the step's first forward on
	 * the first stage, and how long it runs: the step-time model's seconds
	 * of each layer walked through the schedule, every stage waiting for
	 * its neighbour's activation (forward) or gradient (backward). NAN when
	 * the step was too long to walk (mo_estimate_timeline_truncated). */
	double start_seconds, seconds;
} mo_estimate_event;

/* The stage's timeline: every event of one step in 1F1B order, then the
 * optimizer step. Of long steps only the first events are listed
 * (mo_estimate_timeline_truncated says so); the stages' peaks and figures
 * are those of the whole step all the same.
 * How many events stage `stage` has; 0 out of range. */
size_t mo_estimate_event_count(const mo_estimate *e, size_t stage);
/* Event i of stage `stage`; borrowed from e, NULL out of range. */
const mo_estimate_event *mo_estimate_event_get(const mo_estimate *e, size_t stage,
					       size_t i);
/* 1 when the timelines were cut (see above), else 0. */
int mo_estimate_timeline_truncated(const mo_estimate *e);
/* "forward mb 3 layer 12", "loss backward mb 0", "optimizer step"... into
 * buf; returns buf. */
char *mo_estimate_event_name(const mo_estimate_event *ev, char *buf, size_t size);

/* Cost (per step): recompute FLOPs and seconds, extra collectives of
 * comm recompute, swap bytes, host-link seconds and how many of them the
 * prefetch window hides; step seconds with and without the plan. */
typedef struct mo_estimate_cost {
	double recompute_flops, recompute_seconds;
	double comm_recompute_bytes, comm_recompute_seconds;
	uint64_t comm_recompute_ops;
	double swap_bytes, swap_seconds, swap_hidden_seconds;
	double step_seconds_baseline, step_seconds;
	double overhead_percent;
} mo_estimate_cost;
/* The plan's cost; borrowed from e, NULL for a NULL estimate. */
const mo_estimate_cost *mo_estimate_get_cost(const mo_estimate *e);

/* The step time from the per-op time model (estimate_time.c): every op
 * of the op tables priced on the device (GEMMs at a size-dependent
 * efficiency, attention at its own rate, memory-bound ops at HBM
 * bandwidth, a launch cost per kernel), the collectives of the layout
 * (alpha-beta per link kind), the pipeline schedule from per-stage
 * times, the optimizer step, recompute, swap and the per-step fixed cost.
 * The terms are seconds of one step and add up to step_seconds; they are
 * the slowest stage's (the one the schedule waits on). step_seconds here
 * equals mo_estimate_cost.step_seconds. */
typedef struct mo_estimate_time {
	double step_seconds;
	double compute_seconds;     /* GEMMs, attention, memory-bound ops */
	double gemm_seconds, attention_seconds, memory_bound_seconds; /* of compute */
	double comm_tp_seconds;     /* exposed TP all-gather / reduce-scatter / all-reduce */
	double comm_cp_seconds;     /* exposed context-parallel exchange */
	double comm_ep_seconds;     /* exposed expert-parallel dispatch / combine */
	double comm_pp_seconds;     /* pipeline send / receive on the critical path */
	double comm_dp_seconds;     /* exposed gradient reduce / parameter gather */
	double bubble_seconds;      /* pipeline fill and drain */
	double optimizer_seconds;   /* the optimizer step (memory-bound) */
	double recompute_seconds;   /* ops re-run in backward */
	double swap_seconds;        /* exposed host-link transfers */
	double fixed_seconds;       /* launch-bound kernels and the per-step cost */
	double kernels;             /* kernels the slowest stage issues a step */
	size_t slowest_stage;
	double tokens_per_second_per_device;
	double model_flops;         /* per step, whole job: 6 x params x tokens
				     * + attention (causal) */
	double mfu;                 /* model_flops / (step x devices x peak) */
	const char *largest_term;   /* name of the largest term */
} mo_estimate_time;
const mo_estimate_time *mo_estimate_get_time(const mo_estimate *e);

/* ---- calibrate ---------------------------------------------------------------
 * The time model's named device constants fitted to measured step times
 * (docs/estimator.md "Calibrate"). Each run: a model (its device; every run
 * on the same device), its config (NULL: no plan) and the measured step. */
#define MO_CALIB_MAX_RUNS 256
enum {
	MO_CALIB_GEMM = 0,   /* gemm_efficiency */
	MO_CALIB_ATTN,       /* attention_efficiency */
	MO_CALIB_LAUNCH,     /* launch_us */
	MO_CALIB_INTRA,      /* intra_node_gbs */
	MO_CALIB_INTER,      /* inter_node_gbs */
	MO_CALIB_N
};
typedef struct mo_calibrate_run {
	const mo_model *model;   /* borrowed */
	const mo_config *config; /* borrowed; NULL: no plan */
	double measured_seconds;
} mo_calibrate_run;
typedef struct mo_calibrate_result {
	const char *preset;      /* the runs' device preset ("custom": a map) */
	const char *names[MO_CALIB_N];
	double before[MO_CALIB_N], after[MO_CALIB_N]; /* each constant */
	double *est_before, *est_after; /* per run, seconds (n of them) */
	size_t n;
	double median_error_before, median_error_after; /* |est - measured| / measured */
} mo_calibrate_result;
/* which: bits 1 << MO_CALIB_* (0: all). Returns 0, or -1 with err
 * (MO_ERR_USAGE: no runs, too many, runs on different devices, a measured
 * time out of range; an estimate's error). Free with
 * mo_calibrate_result_free. */
int mo_calibrate(mo_calibrate_result *out, const mo_calibrate_run *runs, size_t n,
		 unsigned which, mo_error *err);
void mo_calibrate_result_free(mo_calibrate_result *r);
/* "gemm_efficiency,launch_us" (any of the names, comma separated; "all")
 * into bits; -1 on an unknown name. */
int mo_calibrate_constant_parse(unsigned *out, const char *text);
/* The fitted device as a model file's `device:` map (the preset and the
 * fitted constants, each with its value before in a comment). Caller
 * frees; NULL when out of memory. */
char *mo_calibrate_device_yaml(const mo_calibrate_result *r);
const char *mo_calibrate_constant_name(int i);

/* Human report: per stage a bar of weights / gradients / optimizer /
 * activations / swap buffers against capacity, the peak event, per layer
 * before and after, the cost and the assumptions. explain: the formula
 * behind each figure with the model's numbers. Caller frees. */
char *mo_estimate_report(const mo_estimate *e, int explain);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
