/* libFuzzer target for the planner: a training YAML as the start config,
 * the first input byte choosing the mechanisms allowed, the budget (a
 * fraction of the device) and whether to run the staged escalation. A
 * result that says it fits must be within its budget; its YAML must check
 * again without errors. Inputs: tests/fuzz/corpus/plan (real MindSpore
 * Transformers configs, a selector byte in front). */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The planner's YAML answer, checked against the same model. */
static void fuzz_recheck(const mo_planner_result *r, const mo_model *model,
			 const mo_limits *lim)
{
	const char *yaml = mo_planner_yaml(r);
	mo_diags *diags = NULL;
	mo_config *cfg = NULL;
	mo_model *unused = NULL;
	mo_error err = {0};

	if (!yaml)
		abort();
	if (mo_diags_new(&diags) != 0)
		return;
	mo_input in = {.config = yaml,
		       .config_len = strlen(yaml),
		       .config_name = "plan.yaml",
		       .limits = lim,
		       .shared_model = model};
	if (mo_check(&cfg, &unused, diags, &in, &err) == 0 &&
	    mo_diags_errors(diags) != 0)
		abort(); /* the planner proposed an invalid config */
	mo_config_free(cfg);
	mo_model_free(unused);
	mo_diags_free(diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mo_limits lim;
	mo_diags *diags = NULL;
	mo_config *cfg = NULL;
	mo_model *model = NULL;
	mo_planner_result *r = NULL;
	mo_error err = {0};

	if (size < 1 || size > FUZZ_MAX_INPUT || mo_diags_new(&diags) != 0)
		return 0;
	fuzz_limits(&lim);
	mo_input in = {.config = (const char *)data + 1,
		       .config_len = size - 1,
		       .config_name = "fuzz.yaml",
		       .limits = &lim};
	if (mo_check(&cfg, &model, diags, &in, &err) != 0 || !cfg || !model ||
	    mo_diags_errors(diags) != 0)
		goto free_all;
	/* bits 0-5: allowed mechanisms (0 = all); 6: staged; 7: a tight budget
	 */
	mo_planner_input pin = {.model = model,
				.start = cfg,
				.allow = data[0] & 0x3fu,
				.no_staged = !(data[0] & 0x40u)};
	if (data[0] & 0x80u)
		pin.budget = (uint64_t)16 << 30;
	mo_budget budget = {.max_ms = FUZZ_WORK_MS};
	mo_budget_begin(&budget);
	int rc = mo_planner_run(&r, &pin, &err);
	mo_budget_end();
	if (rc != 0) {
		if (err.code == MO_OK || !err.text[0])
			abort();
		goto free_all;
	}
	if (mo_planner_fits(r) &&
	    mo_planner_predicted_peak(r) > mo_planner_budget(r))
		abort();
	if (mo_planner_estimate(r))
		fuzz_check_estimate(mo_planner_estimate(r));
	fuzz_recheck(r, model, &lim);
free_all:
	mo_planner_result_free(r);
	mo_config_free(cfg);
	mo_model_free(model);
	mo_diags_free(diags);
	return 0;
}
