/* Private to planner.c and planner_staged.c: the planner's result. */
#ifndef MEMOPT_PLANNER_RESULT_H
#define MEMOPT_PLANNER_RESULT_H

#include "planner/planner.h"

typedef struct mo_planner_step_owned {
	char *label, *yaml;
} mo_planner_step_owned;

struct mo_planner_result {
	int fits, exact;
	uint64_t budget, predicted_peak;
	char *yaml;
	mo_config *cfg;
	mo_estimate *est;
	const mo_model *model;	      /* during the build; the owned copy after */
	mo_model *owned_model;	      /* maximize: the model with the value set */
	mo_planner_step_owned *steps; /* owned strings of pub_steps */
	mo_planner_step *pub_steps;
	size_t n_steps;
	long answer;
	long from_staged; /* the staged step adopted as the answer, -1 when the search's own */
};

/* planner.c */
int planner_search(const mo_planner_problem *pl, uint64_t budget, mo_planner_solution *best);
/* Plans against `owned` (taken over, freed with the result) or, when NULL,
 * in->model. */
int planner_run_model(mo_planner_result **out, const mo_planner_input *in, mo_model *owned,
			 const mo_planner_options *opts, mo_error *err);

/* planner_staged.c: the steps into r (r->answer: the first that fits); the
 * best step (that one, else the one of least peak; -1: no step) into
 * *best_step, its choices into best[n_layers] and its prefetch into *best_pf. */
int planner_run_staged(mo_planner_result *r, const mo_planner_problem *pl, unsigned *best,
		       int64_t *best_pf, long *best_step, mo_error *err);

#endif
