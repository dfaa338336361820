/* libFuzzer target for the estimator: a training YAML (model, parallelism,
 * recompute and swap sections) checked by mo_check, then estimated under a
 * work budget when it is valid. Inputs: tests/fuzz/corpus/estimate (real
 * MindSpore Transformers configs from tests/data/mindformers). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mo_limits lim;
	mo_diags *diags = NULL;
	mo_config *cfg = NULL;
	mo_model *model = NULL;
	mo_estimate *est = NULL;
	mo_error err = {0};

	if (size > FUZZ_MAX_INPUT || mo_diags_new(&diags) != 0)
		return 0;
	fuzz_limits(&lim);
	mo_input in = {.config = (const char *)data,
		       .config_len = size,
		       .config_name = "fuzz.yaml",
		       .limits = &lim,
		       .devices = 0};
	if (mo_check(&cfg, &model, diags, &in, &err) != 0 || !cfg || !model ||
	    mo_diags_errors(diags) != 0)
		goto free_all;
	mo_budget budget = {.max_ms = FUZZ_WORK_MS};
	mo_budget_begin(&budget);
	int rc = mo_estimate_run(&est, cfg, model, &err);
	mo_budget_end();
	if (rc == 0)
		fuzz_check_estimate(est);
	else if (err.code == MO_OK || !err.text[0])
		abort(); /* a failure always says why */
free_all:
	mo_estimate_free(est);
	mo_config_free(cfg);
	mo_model_free(model);
	mo_diags_free(diags);
	return 0;
}
