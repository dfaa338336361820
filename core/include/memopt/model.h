/*
 * memopt — models: presets, model files, training YAMLs, HF config.json, Megatron-LM arguments.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_MODEL_H
#define MEMOPT_API_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/limits.h>
#include <memopt/diags.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Opaque; created by mo_model_preset / mo_model_load / mo_config_model /
 * mo_check, owned by the caller, freed with mo_model_free. */
typedef struct mo_model mo_model;

/* How many built-in presets there are. */
size_t mo_presets_count(void);
/* Preset i's name (e.g. "llama2-7b"); static, NULL when i >= mo_presets_count(). */
const char *mo_preset_name(size_t i);
/* Preset i's one-line description; static, NULL when out of range. */
const char *mo_preset_description(size_t i);
/* Preset i's model file as YAML text; static, NULL when out of range. */
const char *mo_preset_yaml(size_t i);

/* How many built-in devices there are (the names a model's `device:` takes). */
size_t mo_device_preset_count(void);
/* Device i's name (e.g. "ascend-910b"); static, NULL when out of range. */
const char *mo_device_preset_name(size_t i);
/* Device i's whole memory in GiB, before the runtime's reserve; 0 when out
 * of range. */
double mo_device_preset_memory_gib(size_t i);

/* Loads a preset by name. Returns 0 with *out set (caller frees with
 * mo_model_free), or -1 with err filled. */
int mo_model_preset(mo_model **out, const char *name, mo_error *err);

/* Loads a model from text: a model file (YAML or JSON, either spelling),
 * a MindSpore Transformers PyNative or graph-mode training YAML, or a
 * Hugging Face config.json. `name` labels diagnostics. Findings (including
 * type errors in model keys) go to diags. Returns 0 with *out set when a model
 * was found (even with errors in diags), 1 when the text holds no model,
 * -1 on a hard error. The `parallel` rule is not run here: call
 * mo_model_check after mo_model_set_devices (mo_check does both). */
int mo_model_load(mo_model **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err);
/* Frees the model; NULL is fine. */
void mo_model_free(mo_model *m);

/* Device count for files that lack it (PyNative YAML): --devices N. Values
 * below 1 or above the largest parallel degree are ignored. */
void mo_model_set_devices(mo_model *m, int64_t devices);
/* Re-runs the `parallel` consistency checks (after set_devices). */
void mo_model_check(const mo_model *m, mo_diags *diags);

/* Accessors. Strings are borrowed from the model (valid until
 * mo_model_free); indexes out of range give NULL / 0. */
/* Decoder layers. */
int64_t mo_model_num_layers(const mo_model *m);
/* Multi-token-prediction layers (ids after the decoder layers). */
int64_t mo_model_mtp_layers(const mo_model *m);
/* Parameters of the whole model, unsharded (embedding, decoder and MTP
 * layers with their norms and the linear biases of standard attention and
 * the dense MLP, output head when untied). */
int64_t mo_model_parameters(const mo_model *m);
/* Where the key that leaves the device count open (data_parallel_shard:
 * -1) is: 1-based line and column (0 when not from a file) and its path.
 * Returns 0, or -1 for a NULL model. */
int mo_model_devices_position(const mo_model *m, int *line, int *column, const char **path);
/* How many values the import filled in because the file left them out. */
size_t mo_model_assumed_count(const mo_model *m);
/* Assumed value i: the field (as a path), the value, and where the value
 * comes from (a model type's published configuration class, a MindSpore
 * default, memopt's default). Returns 0, or -1 when i is out of range. */
int mo_model_assumed(const mo_model *m, size_t i, const char **path,
		     const char **value, const char **source);
/* Where a field of the model came from when a training YAML's run (its
 * parallel_config, parallel, training, ... sections) was read over a model
 * given apart (docs/rules.md, model-replaced): the model priced is then
 * partly the YAML's. */
struct mo_model_source {
	const char *path; /* the field, in the model file's spelling: parallel.pipeline_parallel */
	const char *file; /* the YAML that gave it (its name as given) */
	const char *key;  /* the key as written there: parallel_config.pipeline_stage */
	int line, column; /* 1-based position of its value (0 when not known) */
};
/* How many fields the run of a training YAML gave (0: the model is all the
 * model's own). */
size_t mo_model_run_field_count(const mo_model *m);
/* Run field i (in the model file's field order). Returns 0, or -1 when i is
 * out of range. The strings are borrowed from the model. */
int mo_model_run_field(const mo_model *m, size_t i, struct mo_model_source *out);
/* How many layer types (dense, moe, mtp, ...) the model has. */
size_t mo_model_layer_type_count(const mo_model *m);
/* Layer type t's name; NULL out of range. */
const char *mo_model_layer_type_name(const mo_model *m, size_t t);
/* The type index of layer `layer` (decoder then MTP ids); (size_t)-1 out of
 * range. */
size_t mo_model_layer_type_of(const mo_model *m, int64_t layer);
/* How many paths (modules, ops, communication ops) layer type t has. */
size_t mo_model_path_count(const mo_model *m, size_t t);
/* Path p of layer type t, relative to the layer (e.g. "mlp.linear_fc1");
 * NULL out of range. */
const char *mo_model_path(const mo_model *m, size_t t, size_t p);
/* What a path is: a cell, an op (callable attribute) or a communication op
 * (`<module>.input.<op>`). */
typedef enum mo_path_kind {
	MO_PATH_MODULE, /* a cell: self_attention, mlp.linear_fc1 */
	MO_PATH_OP,     /* an op / callable attribute: add, mlp.mul, self_attention.cast */
	MO_PATH_COMM    /* a communication op: <module>.input.allgather */
} mo_path_kind;
/* The kind of path p of layer type t; MO_PATH_MODULE when out of range. */
mo_path_kind mo_model_path_kind(const mo_model *m, size_t t, size_t p);
/* The model as a canonical model file (YAML, the model file's own
 * spelling). Caller frees with free(); NULL when out of memory. */
char *mo_model_to_yaml(const mo_model *m);
/* The model as JSON text (same keys). Caller frees with free(); NULL when
 * out of memory. */
char *mo_model_to_json(const mo_model *m);

/* Megatron-LM arguments: a launch line (`torchrun ... pretrain_gpt.py
 * --num-layers 32 ...`), an arguments file (one flag per line or shell
 * continuation lines) or a functional-test model_config.yaml (MODEL_ARGS),
 * read with the semantics of Megatron's arguments.py. mo_model_load reads
 * such a text as a model itself; mo_megatron_import gives the model file. */
/* 1 when the text looks like one of the three, else 0. */
int mo_megatron_detect(const char *text, size_t len);
/* The memopt model file the arguments describe (YAML, each key's source
 * flag in a comment; the caller frees it). `devices` > 0 gives the device
 * count when the text has none (torchrun's --nproc-per-node x --nnodes).
 * Flags memopt does not read, defaults assumed and recompute flags go to
 * diags, with line and column. Returns 0 with *out set (diags may hold
 * errors: values out of range, a missing --num-layers), 1 when the text
 * does not parse (diagnostics), -1 with err filled (limits, memory). */
int mo_megatron_import(char **out, mo_diags *diags, const char *text, size_t len,
		       const char *name, int64_t devices, const mo_limits *lim, mo_error *err);
/* mo_megatron_import of a script the caller read from the folder `dir`: a
 * `source FILE` / `. FILE` in it reads FILE from there (a relative path
 * inside the folder, at most 4 files deep, no cycle, all files within
 * lim's max_bytes); NULL dir: sourced files are reported, not read. Only a
 * caller that read the script from disk should give it (a server never). */
int mo_megatron_import_dir(char **out, mo_diags *diags, const char *text, size_t len,
			   const char *name, const char *dir, int64_t devices,
			   const mo_limits *lim, mo_error *err);
/* The folders the paths a launch script names are opened from, when the
 * caller read it from disk; a member left NULL opens nothing (a server
 * gives neither). */
typedef struct mo_megatron_dirs {
	/* the script's folder: `source FILE` (mo_megatron_import_dir) */
	const char *script;
	/* the folder the run is launched from (the CLI: its working
	 * directory), which the launched program opens its relative paths
	 * from: the tokenizer --tokenizer-model / --tokenizer-name-or-path
	 * names, whose entries are the vocabulary when no --vocab-size or
	 * --padded-vocab-size gives it */
	const char *launch;
} mo_megatron_dirs;
/* mo_megatron_import with the files the script names read from dirs
 * (NULL: none). */
int mo_megatron_import_at(char **out, mo_diags *diags, const char *text, size_t len,
			  const char *name, const mo_megatron_dirs *dirs, int64_t devices,
			  const mo_limits *lim, mo_error *err);

/* MindSpeed-LLM's FSDP2 launch (`torchrun ... train_fsdp2.py RUN.yaml
 * --section.key value ...`): 1 when the text runs train_fsdp2.py, else 0. */
int mo_fsdp2_detect(const char *text, size_t len);
/* The model such a launch trains: arch (a preset or model file the caller
 * loaded; copied, not kept) or else the config.json of the directory
 * model.model_name_or_path names, with the launch's run over it: the device
 * count (torchrun --nproc-per-node x --nnodes, else `devices`), the YAML the
 * launch names and the `--section.key` words over it (parallel sizes, batch,
 * sequence length, optimizer, dtypes), priced as FSDP over the whole world.
 * Paths (the YAML, model_name_or_path) are opened from dirs->launch, the
 * directory the launch runs in (NULL dirs or member: said, not read; a
 * server); dirs->script: the script's folder, for `source FILE`. Keys that
 * change memory in a way the estimate does not price are `unmodelled`
 * warnings at their line and column. Returns 0 with *out (the caller frees
 * it; diags may hold errors), 1 when there is no model (a `model-needed`
 * error saying what of the run was read) or the text is not such a launch,
 * -1 with err filled. */
int mo_fsdp2_import(mo_model **out, mo_diags *diags, const char *text, size_t len,
		    const char *name, const mo_megatron_dirs *dirs, const mo_model *arch,
		    int64_t devices, const mo_limits *lim, mo_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
