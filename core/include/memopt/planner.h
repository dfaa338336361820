/*
 * memopt — the planner: the cheapest config whose estimated peak fits a budget.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_PLANNER_H
#define MEMOPT_API_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/model.h>
#include <memopt/config.h>
#include <memopt/estimate.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The planner: the recompute / swap config with the least step-time
 * overhead (the estimator's cost model) whose estimated peak fits a budget on
 * every pipeline stage. Its memory and cost model is the estimator's: each
 * per-layer choice is priced by the estimator's own per-layer simulation and
 * the peak is assembled as the estimator's timeline assembles it, so the
 * planner's predicted peak equals mo_estimate_peak_bytes of the config it
 * returns. The search is exact (dynamic programming over layers with Pareto
 * frontiers, core/src/planner/planner_search.c) except with virtual
 * pipeline (a safe plan) and when swap would need a default_prefetch above
 * max_prefetch's default (mo_planner_exact says which).
 * Per layer it chooses among: keep; select of '.*mlp', '.*self_attention',
 * '.*core_attention' (mlp with one of the other two too); full; full with
 * the comm ops excluded; comm recompute of the comm ops (beside a select);
 * layer swap; op swap of '.*mlp' (beside an attention select). */

/* Mechanisms the planner may use (bit flags; 0 = all). */
enum {
	MO_PLAN_ALLOW_SELECT = 1u << 0,
	MO_PLAN_ALLOW_FULL = 1u << 1,
	MO_PLAN_ALLOW_EXCLUDE = 1u << 2,   /* full with the comm ops excluded */
	MO_PLAN_ALLOW_COMM = 1u << 3,      /* recompute_comm */
	MO_PLAN_ALLOW_LAYER_SWAP = 1u << 4,
	MO_PLAN_ALLOW_OP_SWAP = 1u << 5,
	MO_PLAN_ALLOW_ALL = 0x3f
};

/* "select,full,exclude,comm,layer_swap,op_swap" (any of them, comma
 * separated; "all"). Returns 0, or -1 naming an unknown word. */
int mo_planner_parse_allow(unsigned *out, const char *text);

/* Caller-owned; initialise with = {0} (fields may be appended). */
typedef struct mo_planner_input {
	const mo_model *model;  /* required, device count known (borrowed) */
	uint64_t budget;        /* bytes per device; 0 = the device capacity
				 * (mo_estimate_capacity_bytes) */
	const mo_config *start; /* optional, validated without errors: layers it
				 * recomputes or swaps keep that (they may only
				 * become full), its entries stay in the result */
	unsigned allow;         /* MO_PLAN_ALLOW_*; 0 = all */
	int no_staged;          /* 1: skip the staged escalation */
	int64_t max_prefetch;   /* largest default_prefetch to consider; 0 = 4
				 * (exact then only when a larger window could
				 * not hide more swap) */
} mo_planner_input;

/* Opaque, owned by the caller, freed with mo_planner_result_free. */
typedef struct mo_planner_result mo_planner_result;

/* Plans. Returns 0 with *out set (also when nothing fits: then the result
 * is the plan with the smallest peak any plan reaches), or -1 with err:
 * MO_ERR_USAGE (no model), MO_ERR_MODEL_NEEDED (as mo_estimate_run),
 * MO_ERR_BUDGET / MO_ERR_CANCELLED, MO_ERR_NOMEM. The result does not
 * borrow the input. */
int mo_planner_run(mo_planner_result **out, const mo_planner_input *in, mo_error *err);
/* Frees the result; NULL is fine. */
void mo_planner_result_free(mo_planner_result *r);

/* 1 when every stage's peak is within the budget. */
int mo_planner_fits(const mo_planner_result *r);
/* 1 when the search proved the plan optimal (see above). */
int mo_planner_exact(const mo_planner_result *r);
/* The budget planned for, in bytes per device (the capacity when the
 * input gave 0). */
uint64_t mo_planner_budget(const mo_planner_result *r);
/* The planner's own peak of the plan (busiest stage), equal to the
 * estimate's when exact. */
uint64_t mo_planner_predicted_peak(const mo_planner_result *r);
/* The config's canonical YAML (the three sections). Borrowed. */
const char *mo_planner_yaml(const mo_planner_result *r);
/* The plan as a config. Borrowed from r. */
const mo_config *mo_planner_config(const mo_planner_result *r);
/* The estimate of that config. Borrowed from r. */
const mo_estimate *mo_planner_estimate(const mo_planner_result *r);

/* One step of the seed's manual escalation for comparison: no optimisation (it stops
 * there when that fits), select of
 * '.*mlp' on every layer, full recompute of the first k layers (the least k
 * that fits, else all), then (without PP) full on the first k and swap of
 * the rest (the most k that fits, else k = 0). Borrowed strings. */
typedef struct mo_planner_step {
	const char *label;        /* e.g. "full 0-11" */
	const char *yaml;
	uint64_t peak_bytes;
	double overhead_percent;
	int fits;
} mo_planner_step;
/* Steps of the escalation (0 with no_staged). */
size_t mo_planner_staged_count(const mo_planner_result *r);
/* Step i; borrowed from r, NULL out of range. */
const mo_planner_step *mo_planner_staged_get(const mo_planner_result *r, size_t i);
/* Index of the step the escalation stops at (the first that fits; 0 when
 * no optimisation is needed), or -1 when none does. */
long mo_planner_staged_answer(const mo_planner_result *r);
/* Index of the staged step the plan is, when one was a better answer than the
 * search's own plan (the search's peak bound is safe but not tight under an
 * interleaved pipeline), or -1. */
long mo_planner_from_staged(const mo_planner_result *r);

/* The training setting mo_planner_maximize grows. */
typedef enum mo_planner_dim {
	MO_PLAN_MICRO_BATCH_SIZE = 0,
	MO_PLAN_SEQ_LENGTH
} mo_planner_dim;
/* The largest micro_batch_size, or longest seq_length (a multiple of the
 * context parallel size), up to `limit`, for which some plan fits the budget
 * (in->model's other settings kept). *best = 0 when not even 1 (or one
 * multiple) fits. With plan non-NULL, *plan receives the planner's result at
 * *best (NULL when 0). Returns 0 or -1 with err. */
int mo_planner_maximize(int64_t *best, mo_planner_result **plan, const mo_planner_input *in,
			mo_planner_dim dim, int64_t limit, mo_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
