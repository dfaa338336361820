/* libFuzzer target for the config language: parse + every rule against a
 * preset model (mo_check), then expand and export when the config is valid.
 * Built with gcc and replay.c by `make test` / `make check` (replays
 * tests/fuzz/corpus/config), and with clang -fsanitize=fuzzer by
 * tests/fuzz/run-libfuzzer.sh. */
#include <memopt/memopt.h>

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two models: a TP+SP+EP MoE (communication paths exist) and a dense one
 * with MTP-free ids; the first input byte picks one so both layouts get
 * coverage without doubling the work. */
static const char *const fuzz_presets[] = {"mixtral-8x7b", "std"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mo_limits lim;
	mo_limits_default(&lim);
	lim.max_bytes = 1u << 20;
	mo_diags *diags = NULL;
	if (mo_diags_new(&diags) != 0)
		return 0;
	mo_input in = {
		.config = (const char *)data,
		.config_len = size,
		.config_name = "fuzz.yaml",
		.preset = fuzz_presets[size ? data[0] % 2 : 0],
		.limits = &lim,
	};
	mo_config *cfg = NULL;
	mo_model *model = NULL;
	mo_error err = {0};
	if (mo_check(&cfg, &model, diags, &in, &err) == 0) {
		/* every diagnostic must be well formed */
		for (size_t i = 0; i < mo_diags_count(diags); i++) {
			const mo_diag *d = mo_diags_get(diags, i);
			if (!d || !d->code || !d->message || !d->path || d->line < 0 ||
			    d->column < 0)
				abort();
		}
		if (cfg && model && mo_diags_errors(diags) == 0) {
			mo_plan *plan = NULL;
			if (mo_expand(&plan, cfg, model, &err) == 0) {
				size_t n = mo_plan_layer_count(plan);
				for (size_t l = 0; l < n; l++)
					for (size_t a = 0; a < mo_plan_action_count(plan, (int64_t)l); a++)
						if (!mo_plan_action(plan, (int64_t)l, a)->path)
							abort();
				mo_plan_free(plan);
			}
			char *out = NULL;
			size_t len = 0;
			if (mo_export(&out, &len, cfg, &err) == 0)
				free(out);
			out = NULL;
			if (mo_export_sections(&out, &len, cfg, &err) == 0)
				free(out);
		}
	}
	mo_config_free(cfg);
	mo_model_free(model);
	mo_diags_free(diags);
	return 0;
}
