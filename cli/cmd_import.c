/* memopt import FILE: what a user has (Megatron-LM arguments: a launch
 * line, an arguments file, a functional-test model_config.yaml; or any
 * model description mo_model_load reads) written as a memopt model file,
 * so that it can be read, edited and passed to --model. Megatron arguments
 * come out with each key's source flag in a comment (mo_megatron_import);
 * other files as the canonical model file (mo_model_to_yaml). */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mo_cli_import_usage(FILE *f)
{
	fputs("usage: memopt import FILE [--model MODEL] [--devices N] [-o OUT] [--json]\n"
	      "  FILE   Megatron-LM arguments (torchrun ... pretrain_gpt.py "
	      "--num-layers ...,\n"
	      "         an arguments file, a functional-test "
	      "model_config.yaml), a model file,\n"
	      "         a training YAML or a config.json; - for stdin\n"
	      "  --devices N  the device count when FILE has none (torchrun's\n"
	      "         --nproc-per-node x --nnodes)\n"
	      "  --model MODEL  for a MindSpeed-LLM FSDP2 launch (train_fsdp2.py):\n"
	      "         its model, a preset or a model file (a config.json); else\n"
	      "         model_name_or_path's config.json from the working directory\n"
	      "Exit: 0 imported, 1 the file has errors, 2 usage or unreadable "
	      "file.\n",
	      f);
}

/* A training YAML that holds no model of its own, read as estimate reads
 * it: its pretrained_model_dir's config.json (opened from the working
 * directory) with the YAML's run over it. c->diags becomes the check's;
 * 0 with *m, 1 when that gives no model either. */
static int mo_cli_import_run(mo_cli *c, mo_model **m, mo_error *err)
{
	mo_diags *d = NULL;
	mo_config *cfg = NULL;
	if (mo_diags_new(&d) != 0)
		return 1;
	mo_input in = {.config = c->model_text, .config_len = c->model_len,
		       .config_name = c->model_arg, .devices = c->devices, .config_dir = "."};
	if (mo_check(&cfg, m, d, &in, err) != 0) {
		mo_diags_free(d);
		return 1;
	}
	/* the check's findings: with no model, its model-needed hint says
	 * which config.json was not found */
	mo_config_free(cfg);
	mo_diags_free(c->diags);
	c->diags = d;
	return *m ? 0 : 1;
}

/* The model file of a text mo_model_load reads (not Megatron arguments). */
static int mo_cli_import_model(mo_cli *c, char **yaml, mo_error *err)
{
	mo_model *m = NULL;
	int rc = mo_model_load(&m, c->diags, c->model_text, c->model_len,
			       c->model_arg, NULL, err);
	if (rc == 1 && mo_diags_errors(c->diags) > 0)
		return 1; /* refused: the diagnostics say why */
	if (rc == 1 && mo_cli_import_run(c, &m, err) == 0)
		rc = 0;
	if (rc == 1) {
		err->code = MO_ERR_MODEL_NEEDED;
		snprintf(err->text, sizeof err->text, "%.200s holds no model",
			 c->model_arg);
		return -1;
	}
	if (rc != 0)
		return -1;
	if (c->devices > 0)
		mo_model_set_devices(m, c->devices);
	mo_model_check(m, c->diags);
	*yaml = mo_model_to_yaml(m);
	mo_model_free(m);
	if (!*yaml)
		snprintf(err->text, sizeof err->text, "out of memory");
	return *yaml ? 0 : -1;
}

/* The model --model names for an FSDP2 launch (a preset, else a file), or NULL
 * when none is given. 0, or an exit status. */
static int mo_cli_import_arch(mo_cli *c, const char *given, mo_model **arch)
{
	mo_error err = {0};
	*arch = NULL;
	if (!given)
		return 0;
	if (mo_cli_is_preset(given)) {
		if (mo_model_preset(arch, given, &err) == 0)
			return 0;
		fprintf(stderr, "memopt: %s\n", err.text);
		return MO_EXIT_USAGE;
	}
	size_t len = 0;
	char *text = mo_cli_read(given, &len, 16u << 20);
	if (!text)
		return MO_EXIT_USAGE;
	int rc = mo_model_load(arch, c->diags, text, len, given, NULL, &err);
	free(text);
	if (rc == 0)
		return 0;
	fprintf(stderr, "memopt: %s\n", err.text[0] ? err.text : "--model holds no model");
	return MO_EXIT_USAGE;
}

/* MindSpeed-LLM's FSDP2 launch: its run over the model --model gives (or
 * model_name_or_path's config.json), paths opened from the working directory,
 * as train_fsdp2.py opens them where it is launched. 0 with *yaml, 1 (no
 * model: the diagnostics say what was read), -1. */
static int mo_cli_import_fsdp2(mo_cli *c, const char *given, const mo_megatron_dirs *dirs,
			       char **yaml, mo_error *err)
{
	mo_model *arch = NULL, *m = NULL;
	int rc = mo_cli_import_arch(c, given, &arch);
	if (rc != 0) {
		snprintf(err->text, sizeof err->text, "--model %.200s not loaded", given);
		err->code = MO_ERR_USAGE;
		return -1;
	}
	rc = mo_fsdp2_import(&m, c->diags, c->model_text, c->model_len, c->model_arg, dirs, arch,
			     c->devices, NULL, err);
	mo_model_free(arch);
	if (rc != 0)
		return rc;
	mo_model_check(m, c->diags);
	*yaml = mo_model_to_yaml(m);
	mo_model_free(m);
	if (!*yaml) {
		snprintf(err->text, sizeof err->text, "out of memory");
		return -1;
	}
	return 0;
}

static int mo_cli_import_answer(mo_cli *c, char *yaml)
{
	bool invalid = mo_diags_errors(c->diags) > 0;
	int rc;
	mo_diags_sort(c->diags);
	if (c->json) {
		json_t *j = mo_json_diags(c->diags);
		if (j && yaml)
			json_object_set_new(j, "yaml", json_string(yaml));
		rc = mo_cli_print_json(j);
	} else {
		mo_cli_print_diags(c);
		rc = yaml && !invalid
			 ? mo_cli_write(c->out_path, yaml, strlen(yaml))
			 : MO_EXIT_OK;
	}
	free(yaml);
	return rc != MO_EXIT_OK ? rc : invalid ? MO_EXIT_INVALID : MO_EXIT_OK;
}

/* Nothing imported (the file does not parse, holds no model, is over a limit): the
 * diagnostics and the reason, in JSON too, so a script reading --json always gets an
 * answer. Exit 2. */
static int mo_cli_import_failed(mo_cli *c, const mo_error *err)
{
	if (!c->json) {
		mo_cli_print_diags(c);
		fprintf(stderr, "memopt import: %s\n", err->text);
		return MO_EXIT_USAGE;
	}
	mo_diags_sort(c->diags);
	json_t *j = mo_json_diags(c->diags);
	json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:s, s:s}", "code", mo_cli_error_word(err),
			      "message", err->text, "line", err->line, "column", err->column,
			      "file", c->model_arg, "severity", "error");
	if (j && e) {
		json_object_set_new(j, "valid", json_false());
		json_array_append(json_object_get(j, "errors"), e);
	}
	json_decref(e);
	mo_cli_print_json(j);
	return MO_EXIT_USAGE;
}

int mo_cli_import(mo_cli *c, int argc, char **argv)
{
	mo_error err = {0};
	char *yaml = NULL;
	int rc = mo_cli_parse(c, mo_cli_common_options, NULL, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1) {
		mo_cli_import_usage(stderr);
		return MO_EXIT_USAGE;
	}
	const char *given = c->model_arg; /* --model, for an FSDP2 launch */
	c->model_arg = c->config_path = argv[optind];
	c->model_text = mo_cli_read(c->model_arg, &c->model_len, 16u << 20);
	if (!c->model_text)
		return MO_EXIT_USAGE;
	if (mo_diags_new(&c->diags) != 0) {
		fputs("memopt: out of memory\n", stderr);
		return MO_EXIT_USAGE;
	}
	c->model_dir = mo_cli_dir_of(c->model_arg);
	/* a script's sourced files open from its folder; the paths the
	 * launched program opens (its tokenizer, an FSDP2 launch's YAML and
	 * model directory) from where it is launched: the working directory */
	mo_megatron_dirs dirs = {.script = c->model_dir, .launch = "."};
	if (mo_fsdp2_detect(c->model_text, c->model_len))
		rc = mo_cli_import_fsdp2(c, given, &dirs, &yaml, &err);
	else if (mo_megatron_detect(c->model_text, c->model_len))
		rc = mo_megatron_import_at(&yaml, c->diags, c->model_text, c->model_len,
					   c->model_arg, &dirs, c->devices, NULL, &err);
	else
		rc = mo_cli_import_model(c, &yaml, &err);
	if (rc == 1) /* the arguments do not parse: the diagnostics say where */
		return mo_cli_import_answer(c, NULL);
	if (rc < 0)
		return mo_cli_import_failed(c, &err);
	return mo_cli_import_answer(c, yaml);
}
