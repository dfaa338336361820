/* libFuzzer target for model import: mo_model_load on a model file, a
 * training YAML or a Hugging Face config.json; a model that loads without
 * errors is exported (YAML and JSON) and both exports must load again to
 * the same layer counts and parameters. Inputs: tests/fuzz/corpus/model
 * (real MindSpore Transformers configs, the HF config.json and the
 * training.yaml fixtures of tests/api/fixtures, Megatron-LM's functional-test
 * model_config.yaml files and hostile Megatron arguments). Megatron
 * arguments are also imported as a model file (mo_megatron_import), which
 * must load without errors to the model mo_model_load read from them. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* text (an export of m) loads again to the same shape. */
static void fuzz_reload(const mo_model *m, char *text, const mo_limits *lim)
{
	mo_diags *diags = NULL;
	mo_model *again = NULL;
	mo_error err = {0};

	if (!text)
		return; /* out of memory */
	if (mo_diags_new(&diags) != 0)
		goto free_text;
	if (mo_model_load(&again, diags, text, strlen(text), "export", lim,
			  &err) != 0 ||
	    mo_diags_errors(diags) != 0)
		abort(); /* an export that does not load */
	if (mo_model_num_layers(again) != mo_model_num_layers(m) ||
	    mo_model_mtp_layers(again) != mo_model_mtp_layers(m) ||
	    mo_model_parameters(again) != mo_model_parameters(m) ||
	    mo_model_layer_type_count(again) != mo_model_layer_type_count(m))
		abort();
	mo_model_free(again);
	mo_diags_free(diags);
free_text:
	free(text);
}

/* The model file mo_megatron_import writes for Megatron arguments without
 * errors loads without errors, to the same model as the arguments. */
static void fuzz_megatron(const mo_model *m, const char *text, size_t size,
			  const mo_limits *lim)
{
	mo_diags *diags = NULL;
	char *yaml = NULL;
	mo_error err = {0};

	if (mo_diags_new(&diags) != 0)
		return;
	int rc =
	    mo_megatron_import(&yaml, diags, text, size, "fuzz", 0, lim, &err);
	if (rc < 0 && (err.code == MO_OK || !err.text[0]))
		abort();
	if (rc == 0 && !yaml)
		abort();
	if (rc == 0 && mo_diags_errors(diags) == 0 && m)
		fuzz_reload(m, yaml, lim); /* frees yaml */
	else
		free(yaml);
	mo_diags_free(diags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mo_limits lim;
	mo_diags *diags = NULL;
	mo_model *m = NULL;
	mo_error err = {0};

	if (size > FUZZ_MAX_INPUT || mo_diags_new(&diags) != 0)
		return 0;
	fuzz_limits(&lim);
	int rc = mo_model_load(&m, diags, (const char *)data, size, "fuzz",
			       &lim, &err);
	if (rc < 0 && (err.code == MO_OK || !err.text[0]))
		abort();
	if (rc == 0 && m) {
		for (size_t t = 0; t < mo_model_layer_type_count(m); t++)
			for (size_t p = 0; p < mo_model_path_count(m, t); p++)
				if (!mo_model_path(m, t, p))
					abort();
		if (mo_diags_errors(diags) == 0) {
			fuzz_reload(m, mo_model_to_yaml(m), &lim);
			fuzz_reload(m, mo_model_to_json(m), &lim);
		}
		mo_model_set_devices(
		    m, 64); /* the parallel rule on a device count */
		mo_model_check(m, diags);
	}
	if (mo_megatron_detect((const char *)data, size))
		fuzz_megatron(rc == 0 && mo_diags_errors(diags) == 0 ? m : NULL,
			      (const char *)data, size, &lim);
	if (mo_fsdp2_detect((const char *)data, size)) {
		/* an FSDP2 launch over the model read (if any), opening no path */
		mo_model *f = NULL;
		mo_diags *fd = NULL;
		mo_error ferr = {0};
		if (mo_diags_new(&fd) == 0)
			(void)mo_fsdp2_import(&f, fd, (const char *)data, size, "fuzz", NULL,
					      rc == 0 ? m : NULL, 8, &lim, &ferr);
		mo_model_free(f);
		mo_diags_free(fd);
	}
	mo_model_free(m);
	mo_diags_free(diags);
	return 0;
}
