/* The loader: where a model comes from, decided once. A preset by name, a
 * model text (Megatron-LM arguments, else a JSON or YAML document: a model
 * file, a training YAML, a Hugging Face config.json), or else the training
 * YAML the config itself is (mo_check's order). The readers are import/'s;
 * the model handle is model/'s. */
#include "load/load.h"

#include "import/import.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool model_text_is_json(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		return c == '{';
	}
	return false;
}

/* mo_model_load, with the folders a Megatron script's files are read
 * from (NULL: none) and the training YAML whose run is read over the
 * model (NULL: none; a Megatron script carries its own run). */
static int load_text(mo_model **out, mo_diags *diags, const char *text, size_t len,
		     const char *name, const mo_megatron_dirs *dirs, const mo_doc *run,
		     const mo_limits *lim, mo_error *err)
{
	mo_doc *doc = NULL;
	mo_limits dl;
	*out = NULL;
	if (!text) {
		error_set(err, MO_ERR_USAGE, 0, 0, "no model text");
		return -1;
	}
	if (!lim) {
		mo_limits_default(&dl);
		lim = &dl;
	}
	if (!model_text_is_json(text, len) && mo_megatron_detect(text, len))
		return model_load_megatron(out, diags, text, len, name, dirs, lim, err);
	int rc = model_text_is_json(text, len)
			 ? json_parse(&doc, diags, text, len, name, lim, err)
			 : yaml_tree_parse(&doc, diags, text, len, name, lim, err);
	if (rc < 0)
		return -1;
	if (rc > 0 || !doc) {
		doc_free(doc);
		error_set(err, MO_ERR_INVALID, 0, 0,
			     "%s: the model file does not parse",
			     name ? name : "<model>");
		return -1;
	}
	rc = model_from_doc_run(out, diags, doc, run, err);
	doc_free(doc);
	return rc;
}

int mo_model_load(mo_model **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err)
{
	return load_text(out, diags, text, len, name, NULL, NULL, lim, err);
}

/* Presets have no source positions: their diagnostics carry 0/0. A
 * field a training YAML gave over the preset keeps its position there. */
static void preset_clear_positions(mo_model *m)
{
	for (size_t f = 0; f < MF_COUNT; f++) {
		if (m->ext->pos[f].file)
			continue;
		m->ext->pos[f].line = 0;
		m->ext->pos[f].column = 0;
		m->ext->pos[f].path = NULL;
	}
}

static int preset_load(mo_model **out, const char *name, const char *yaml,
			  mo_error *err)
{
	mo_diags *d = NULL;
	if (mo_diags_new(&d) != 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	int rc = mo_model_load(out, d, yaml, strlen(yaml), name, NULL,
			       err);
	if (rc == 0 && mo_diags_errors(d) > 0) {
		const mo_diag *g = mo_diags_get(d, 0);
		error_set(err, MO_ERR_INTERNAL, 0, 0, "preset %s: %s",
			     name, g ? g->message : "invalid");
		mo_model_free(*out);
		*out = NULL;
		rc = -1;
	} else if (rc == 1) {
		error_set(err, MO_ERR_INTERNAL, 0, 0, "preset %s: no model",
			     name);
		rc = -1;
	}
	mo_diags_free(d);
	if (rc == 0)
		preset_clear_positions(*out);
	return rc;
}

/* The index of the preset named name (case-insensitive), or -1. */
static long preset_index(const char *name)
{
	size_t n = mo_presets_count();
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(name, mo_preset_name(i)) == 0)
			return (long)i;
	return -1;
}

/* An unknown preset's usage error, with the nearest name. */
static int preset_unknown(const char *name, mo_error *err)
{
	size_t n = mo_presets_count();
	const char *names[64];
	if (n > sizeof names / sizeof *names)
		n = sizeof names / sizeof *names;
	for (size_t i = 0; i < n; i++)
		names[i] = mo_preset_name(i);
	const char *best = did_you_mean(name, names, n);
	error_set(err, MO_ERR_USAGE, 0, 0, "unknown preset '%s'%s%s%s",
		     name, best ? " (did you mean '" : "", best ? best : "",
		     best ? "'?)" : "");
	return -1;
}

int mo_model_preset(mo_model **out, const char *name, mo_error *err)
{
	*out = NULL;
	if (!name) {
		error_set(err, MO_ERR_USAGE, 0, 0, "no preset name");
		return -1;
	}
	long i = preset_index(name);
	if (i < 0)
		return preset_unknown(name, err);
	return preset_load(out, mo_preset_name((size_t)i), mo_preset_yaml((size_t)i), err);
}

int mo_config_model(mo_model **out, mo_diags *diags, const mo_config *c, mo_error *err)
{
	*out = NULL;
	if (!c || !c->doc || !c->doc->root || !c->training_yaml)
		return 1;
	int rc = model_from_doc(out, diags, c->doc, err);
	if (rc == 1)
		model_no_architecture(diags, c->doc, NULL);
	return rc;
}

/* The model of a training YAML that names none of its own: its
 * pretrained_model_dir's config.json when the caller opens files and it is
 * there, with the YAML's run read over it (model_from_doc_run). 0 with
 * *model, 1 when there is none (*unread: why, or NULL when the YAML names
 * no such folder), -1 on a hard error. */
static int load_pretrained_model(mo_model **model, mo_diags *diags, const mo_config *c,
				 const mo_input *in, const char **unread, mo_error *err)
{
	const mo_node *dir = map_get(c->doc->root, "pretrained_model_dir");
	const char *ds = dir && dir->kind == MO_NODE_SCALAR ? dir->value : NULL;
	*unread = NULL;
	if (!ds || !*ds)
		return 1;
	if (!in->config_dir) {
		*unread = "this caller opens no files";
		return 1;
	}
	mo_limits dl;
	const mo_limits *lim = in->limits;
	if (!lim) {
		mo_limits_default(&dl);
		lim = &dl;
	}
	/* as MindSpore Transformers opens it (merge_model_config,
	 * mindformers/models/build_config.py:125-136 at 167a50de:
	 * os.path.join(pretrained_model_dir, "config.json") from the launch
	 * directory) */
	char *path = file_join(in->config_dir, ds, "config.json");
	size_t len = 0;
	enum file_read_status status;
	char *text = path ? file_read_bounded(path, lim->max_bytes, &len, &status, unread) : NULL;
	if (!path)
		*unread = "out of memory";
	int rc = 1;
	if (text)
		rc = load_text(model, diags, text, len, path, NULL, c->doc, lim, err);
	if (text && rc == 1)
		*unread = "it holds no model";
	free(text);
	free(path);
	return rc;
}

/* The model a training YAML gives, else its pretrained_model_dir's. */
static int load_config_model(mo_model **model, mo_diags *diags, const mo_config *c,
			     const mo_input *in, mo_error *err)
{
	*model = NULL;
	if (!c || !c->doc || !c->doc->root || !c->training_yaml)
		return 0;
	int rc = model_from_doc(model, diags, c->doc, err);
	if (rc != 1)
		return rc < 0 ? -1 : 0;
	const char *unread = NULL;
	rc = load_pretrained_model(model, diags, c, in, &unread, err);
	if (rc == 1)
		model_no_architecture(diags, c->doc, unread);
	return rc < 0 ? -1 : 0;
}

/* A preset, with a training YAML's run read over it when that YAML names
 * no model of its own (model_from_doc_run). */
static int preset_with_run(mo_model **model, mo_diags *diags, const char *name,
			   const mo_doc *run, const mo_limits *lim, mo_error *err)
{
	long i = preset_index(name);
	if (i < 0)
		return preset_unknown(name, err);
	const char *yaml = mo_preset_yaml((size_t)i);
	int rc = load_text(model, diags, yaml, strlen(yaml), mo_preset_name((size_t)i), NULL, run,
			   lim, err);
	if (rc == 0)
		preset_clear_positions(*model);
	return rc < 0 ? -1 : 0;
}

/* The training YAML whose run (parallel, training, optimizer sections) a
 * model given apart may take (model_from_doc_run decides): the config
 * itself when it is one. */
static const mo_doc *load_run_doc(const mo_config *c)
{
	return c && c->training_yaml && c->doc && c->doc->root ? c->doc : NULL;
}

int load_model(mo_model **model, mo_diags *diags, const mo_config *c, const mo_input *in,
		  mo_error *err)
{
	const mo_doc *run = load_run_doc(c);
	if (in->preset)
		return run ? preset_with_run(model, diags, in->preset, run, in->limits, err)
			   : mo_model_preset(model, in->preset, err);
	if (in->model) {
		/* a script's tokenizer opens from where the run is launched, as
		 * a training YAML's pretrained_model_dir does */
		mo_megatron_dirs dirs = {.script = in->model_dir, .launch = in->config_dir};
		int rc = load_text(model, diags, in->model, in->model_len,
				   in->model_name ? in->model_name : "<model>", &dirs, run,
				   in->limits, err);
		if (rc == 1) {
			error_set(err, MO_ERR_USAGE, 0, 0, "%s holds no model",
				     in->model_name ? in->model_name : "the model text");
			return -1;
		}
		return rc < 0 ? -1 : 0;
	}
	return load_config_model(model, diags, c, in, err);
}
