/* Private to the planner (planner*.c).
 *
 * The planner's memory and cost model is the estimator's: each per-layer
 * choice is priced by est_keep_eval on the layer type's tensor graph (the
 * numbers mo_estimate_run fills per layer), and a stage's peak is assembled
 * from them by the formula of estimate_timeline.c (est_stage_fixed). */
#ifndef MEMOPT_PLANNER_H
#define MEMOPT_PLANNER_H

#include "estimate/estimate.h"

/* Largest default_prefetch the search tries (window slots in a state). */
#define MO_PLANNER_MAX_PREFETCH 4

/* A plan's cost below this is no real overhead (rounding). */
#define MO_PLANNER_FREE_SECONDS 1e-12

/* What one layer does, as the config will say it. */
enum {
	MO_CHOICE_SELECT_MLP = 1u << 0,		   /* select_module '.*mlp' */
	MO_CHOICE_SELECT_ATTENTION = 1u << 1,	   /* select_module '.*self_attention' */
	MO_CHOICE_SELECT_CORE_ATTENTION = 1u << 2, /* select_module '.*core_attention' */
	MO_CHOICE_FULL = 1u << 3,		   /* full_recompute_layer */
	MO_CHOICE_EXCLUDE_COMM = 1u << 4,	   /* exclude_op of the comm ops (with FULL) */
	MO_CHOICE_COMM = 1u << 5,		   /* recompute_comm of the comm ops */
	MO_CHOICE_LAYER_SWAP = 1u << 6,		   /* layer_swap */
	MO_CHOICE_OP_SWAP = 1u << 7,		   /* op_swap '.*mlp' */
	MO_CHOICE_FIXED = 1u << 8		   /* the starting config's own settings */
};

/* One candidate for one layer: what it keeps and what it costs (one
 * micro-batch, one device). */
typedef struct mo_planner_choice {
	unsigned what; /* MO_CHOICE_* */
	uint64_t kept, transient, swapped;
	double recompute_s;  /* its recompute's seconds per micro-batch (est_time_recompute) */
	uint64_t comm_bytes;
	double cost;         /* extra seconds per micro-batch at the run's prefetch */
} mo_planner_choice;

/* The choices of one layer type (or of one fixed layer). */
typedef struct mo_planner_choice_set {
	mo_planner_choice *c;
	size_t n;
} mo_planner_choice_set;

/* Comm op kinds a layer type has, as exclude / comm regex keys. */
#define MO_PLANNER_COMM_KINDS 5
extern const char *const mo_planner_comm_keys[MO_PLANNER_COMM_KINDS];

typedef struct mo_planner_layer_type {
	mo_planner_choice_set all; /* every valid choice, before pruning */
	unsigned comm_kinds; /* bit i: the type has a path matching key i */
	double fwd_flops;
} mo_planner_layer_type;

/* A planning problem: the model, its baseline estimate, the choice sets. */
typedef struct mo_planner_problem {
	const mo_model *m;
	mo_estimate *base;        /* no optimisation */
	mo_estimate *start_est;   /* the starting config's estimate, or NULL */
	const mo_config *start;
	unsigned allow;           /* MO_PLAN_ALLOW_* */
	uint64_t n_layers;
	mo_planner_layer_type *types;
	/* per layer: 0 free, 1 named by the starting config (fixed, may become
	 * full), 2 fixed for good (swapped or under exclude_op) */
	unsigned char *fixed;
	int64_t fixed_prefetch;   /* the start's default_prefetch, 0 = free */
	int64_t max_prefetch;	  /* the caller's limit, 0 = MO_PLANNER_MAX_PREFETCH */
	bool swap_ok;             /* PP == 1 and swap allowed */
	bool sort_fronts;	  /* every frontier by sorting (mo_planner_options) */
	double flops_rate, coll_rate, host_rate;
} mo_planner_problem;

/* A solution: per layer the choice (MO_CHOICE_*) and the prefetch. */
typedef struct mo_planner_solution {
	unsigned *what;           /* per layer */
	int64_t prefetch;
	bool feasible;
	bool exact;
	uint64_t peak;            /* predicted: busiest stage */
	uint64_t *stage_peak;     /* predicted, per stage */
	double cost;              /* sum over layers of choice costs */
} mo_planner_solution;

/* Options of one planner run that only tests set (per call: the library
 * keeps no mutable global state, a server plans on several threads). */
typedef struct mo_planner_options {
	/* every frontier by sorting, as with M in the dominance, instead of
	 * frontier_successors's merge: the merge's reference */
	bool sort_fronts;
	/* when no plan fits, answer the searches' best without the search for
	 * the smallest peak (its own search per prefetch): for a caller that
	 * only needs to know that nothing fits (the layout search) */
	bool no_min_peak;
	/* the staged escalation only when the search's plan does not fit, and
	 * its step the answer only when that step fits: a plan that fits
	 * stands, and a layout nothing fits keeps the search's answer (the
	 * layout search) */
	bool staged_if_unfit;
} mo_planner_options;

/* planner.c: mo_planner_run with options (NULL: the defaults). */
int planner_run_opts(mo_planner_result **out, const mo_planner_input *in,
			const mo_planner_options *opts, mo_error *err);

/* planner_choice.c */
int planner_problem_init(mo_planner_problem *pl, const mo_model *m, const mo_config *start,
			    unsigned allow, mo_error *err);
void planner_problem_fini(mo_planner_problem *pl);
/* The candidate set of one layer at a prefetch, dominated ones dropped.
 * Caller frees out->c. */
int planner_layer_choices(const mo_planner_problem *pl, uint64_t id, int64_t prefetch,
			     mo_planner_choice_set *out);
/* One choice of one layer, unpruned (its cost at the prefetch). -1 when
 * the layer has no such choice. */
int planner_choice_of(const mo_planner_problem *pl, uint64_t id, int64_t prefetch, unsigned what,
			 mo_planner_choice *out);
/* Per-micro-batch extra seconds of a choice on a layer of a type (the
 * estimate's time model: est_time_recompute, est_time_swap). */
double planner_choice_cost(const mo_planner_problem *pl, const mo_planner_choice *c,
			      size_t type, int64_t prefetch);

/* Whether the plan keeps the starting config's recompute and recompute_comm
 * settings: not when they come from a graph-mode recompute_config, which
 * the plan's sections replace (a plan on top of it would price its
 * overhead as the baseline's). */
bool planner_start_keeps_recompute(const mo_config *c);

/* planner_search.c: the best solution under the budget at one prefetch (sol
 * allocated by the caller: what[n_layers], stage_peak[stages]). Budget 0:
 * the plan of the smallest peak on every stage instead. bound: with one
 * stage, only plans cheaper than it are looked for (INFINITY: any).
 * Returns 0 or -1 (memory). */
int planner_solve(const mo_planner_problem *pl, uint64_t budget, int64_t prefetch, double bound,
		     mo_planner_solution *sol);
/* The predicted per-stage peaks of a given assignment (what[] per layer). */
int planner_predict(const mo_planner_problem *pl, const unsigned *what, int64_t prefetch,
		       uint64_t *stage_peak);

/* planner_config.c: the config of an assignment (with the start's own sections
 * kept), named `name` in diagnostics. 0 or -1 (err). */
int planner_build_config(mo_config **out, const mo_planner_problem *pl, const unsigned *what,
			    int64_t prefetch, const char *name, mo_error *err);

#endif
