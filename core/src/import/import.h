/* import: models read from what users have: model files (either
 * spelling), MindSpore Transformers PyNative and graph-mode training YAMLs,
 * Hugging Face config.json (import/model_file.c, graph_mode.c,
 * accounting.c, model_types.c) and Megatron-LM arguments (launch lines,
 * arguments files, training scripts, functional-test model_config.yaml:
 * import/megatron*.c files). The loader (load/) chooses which; this is what it
 * calls. */
#ifndef MEMOPT_IMPORT_H
#define MEMOPT_IMPORT_H

#include "model/model.h"

/* Reads a model from a parsed document: a model file (either spelling), a
 * PyNative or graph-mode training YAML, or a Hugging Face config.json.
 * Returns 0 with *out set, 1 when the document holds no model, -1 on a
 * hard error. Diagnostics (type errors in model keys, keys not read) go to
 * diags with the document's name as file. The model keeps no pointer into
 * doc. */
int model_from_doc(mo_model **out, mo_diags *diags, const mo_doc *doc,
		      mo_error *err);

/* model_from_doc, with the run a training YAML `run` describes read over
 * the model when the model states none (a config.json, a model file
 * without parallel or training sections) or the YAML's model is elsewhere
 * (pretrained_model_dir, a model_config without architecture): its
 * parallel, training and
 * optimizer sections, its mode, the run's keys of model_config, not its
 * architecture, as MindSpore Transformers reads a YAML over
 * pretrained_model_dir's config.json. run NULL: model_from_doc. */
int model_from_doc_run(mo_model **out, mo_diags *diags, const mo_doc *doc, const mo_doc *run,
			  mo_error *err);

/* Megatron-LM arguments (a launch line, an arguments
 * file, a functional-test model_config.yaml) as a model, as mo_model_load;
 * dirs: where the files it names are read from (NULL: none). */
int model_load_megatron(mo_model **out, mo_diags *diags, const char *text, size_t len,
			   const char *name, const mo_megatron_dirs *dirs,
			   const mo_limits *lim, mo_error *err);

/* A training YAML whose model_config names no architecture (the
 * `configs/general` templates): a `model-needed` warning at
 * model.model_config saying where the run takes it from. */
void model_no_architecture(mo_diags *diags, const mo_doc *doc, const char *unread);

#endif
