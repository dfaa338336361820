/* Private to plan.c and plan_staged.c: the planner's result. */
#ifndef MEMOPT_PLAN_RESULT_H
#define MEMOPT_PLAN_RESULT_H

#include "planner/planner.h"

typedef struct mo_plan_step_own {
	char *label, *yaml;
} mo_plan_step_own;

struct mo_planner_result {
	int fits, exact;
	uint64_t budget, predicted_peak;
	char *yaml;
	mo_config *cfg;
	mo_estimate *est;
	const mo_model *model;   /* during the build; the owned copy after */
	mo_model *owned_model;   /* maximize: the model with the value set */
	mo_plan_step_own *steps; /* owned strings of pub_steps */
	mo_planner_step *pub_steps;
	size_t n_steps;
	long answer;
};

/* plan.c */
int mo_plan_search(const mo_pl *pl, uint64_t budget, mo_pl_sol *best);
/* Plans against `owned` (taken over, freed with the result) or, when NULL,
 * in->model. */
int mo_plan_run_model(mo_planner_result **out, const mo_planner_input *in, mo_model *owned,
		      const mo_plan_opts *opts, mo_error *err);

/* plan_staged.c */
int mo_plan_staged(mo_planner_result *r, const mo_pl *pl, mo_error *err);

#endif
