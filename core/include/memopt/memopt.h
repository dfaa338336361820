/*
 * memopt — validate, expand, price and export the recompute / recompute_comm /
 * swap sections of a MindSpore Transformers training config.
 *
 * Conventions (libgit2 / jansson style):
 *  - every public symbol starts with mo_; opaque handles have a matching _free;
 *  - out-parameters come first; a function returning a new object through
 *    `**out` gives the caller ownership (free it with the matching _free);
 *  - pointers returned as values are borrowed and live as long as their
 *    parent handle; `char *` results (mo_export, mo_model_to_yaml, ...) are
 *    malloc'd, NUL-terminated, and released by the caller with free();
 *  - every _free accepts NULL; on failure a `**out` is set to NULL;
 *  - input texts (config, model) are copied: the caller may release them as
 *    soon as the call returns; a mo_limits is copied too;
 *  - hard failures (out of memory, limits, unreadable input) fill a
 *    caller-owned mo_error (usually on the stack; NULL when the caller does
 *    not want the details); findings about the config are diagnostics
 *    collected in a mo_diags list.
 *
 * Threads: every function is safe to call from several threads on distinct
 * handles, and const handles (a loaded model, a parsed config) may be shared
 * read-only. Behind that promise, a few caches change inside const handles,
 * each under a lock of its own: a config keeps the matches and the plan of
 * its last resolution against a model (the config's lock); a model keeps the
 * estimator's layer graphs and result memo, and the path information and
 * pattern matches of its layouts (one lock each, per model). The only
 * process-wide state is a pool of at most 64 free 16 KiB arena chunks, under
 * its own lock, that a long-running server reuses instead of returning warm
 * memory to the system. docs/architecture.md lists them. Each thread also
 * has its own work budget (mo_budget_begin), thread-local.
 */
#ifndef MEMOPT_MEMOPT_H
#define MEMOPT_MEMOPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shared library exports only what this header declares. */
#pragma GCC visibility push(default)

#define MO_VERSION_STRING "0.1.0"

/* ---- hard errors ------------------------------------------------------ */

typedef enum mo_error_code {
	MO_OK = 0,
	MO_ERR_NOMEM,   /* allocation failed */
	MO_ERR_LIMIT,   /* a size/depth/count limit was hit */
	MO_ERR_IO,      /* file unreadable */
	MO_ERR_USAGE,   /* bad argument (unknown preset, NULL where not allowed) */
	MO_ERR_INVALID, /* the input has errors: see the diagnostics */
	MO_ERR_INTERNAL,
	MO_ERR_BUDGET   /* the work budget (mo_budget) ran out or was cancelled */
} mo_error_code;

/* Caller-owned (no pointers inside, nothing to free); filled only by a
 * function that fails with -1. */
typedef struct mo_error {
	mo_error_code code;
	int line;   /* 1-based, 0 when unknown */
	int column; /* 1-based, 0 when unknown */
	char text[256];
} mo_error;

/* ---- limits (hostile input) -------------------------------------------- */

typedef struct mo_limits {
	size_t max_bytes;        /* input size (default 16 MiB) */
	size_t max_depth;        /* nesting depth (default 64) */
	size_t max_nodes;        /* nodes, aliases expanded (default 2,000,000) */
	size_t max_scalar_bytes; /* one scalar (default 1 MiB) */
	size_t max_patterns;     /* regex keys over all sections (default 10,000) */
	size_t max_pattern_bytes;/* one regex (default 4096) */
	uint32_t match_limit;    /* PCRE2 match limit per subject (default 100,000) */
	uint32_t depth_limit;    /* PCRE2 depth limit (default 1,000) */
} mo_limits;

/* Fills *lim with the defaults above. */
void mo_limits_default(mo_limits *lim);

/* ---- work budget ------------------------------------------------------
 * Bounds the work of the estimate and planner calls (mo_estimate_run,
 * mo_planner_run, mo_planner_maximize) made by the calling thread between
 * mo_budget_begin and mo_budget_end: their loops poll it, and a call whose
 * budget runs out fails with MO_ERR_BUDGET (text "work-limit: ..." at the
 * deadline, "cancelled: ..." when the callback asked to stop). */

typedef struct mo_budget {
	uint64_t max_ms;             /* wall-clock limit from mo_budget_begin; 0: none */
	int (*cancelled)(void *arg); /* may be NULL; polled, nonzero stops the work */
	void *arg;
} mo_budget;

/* Applies *b (copied; NULL: no budget) to this thread's calls until
 * mo_budget_end. A new begin replaces the previous budget. */
void mo_budget_begin(const mo_budget *b);
/* Ends it. Returns 1 when it ran out at its deadline, 2 when it was
 * cancelled (a call may then have failed with MO_ERR_BUDGET), else 0. */
int mo_budget_end(void);

/* ---- diagnostics ------------------------------------------------------- */

typedef enum mo_severity { MO_SEV_ERROR = 0, MO_SEV_WARNING = 1 } mo_severity;

/* One finding. Every string is borrowed from the mo_diags list that holds
 * it and stays valid until mo_diags_free. */
typedef struct mo_diag {
	mo_severity severity;
	const char *code;    /* stable code, e.g. "layer-order" */
	const char *message; /* one line */
	const char *hint;    /* "did you mean ..." or NULL */
	const char *path;    /* e.g. recompute.select_module['.*mlp'][1]; "" for none */
	const char *file;    /* which input: the config's or the model's name */
	int line;            /* 1-based; 0 when the diagnostic has no position */
	int column;
	const char *layers;  /* the layers it is about, as "8-11, 14" (a
			      * ", ..." tail when cut), or NULL */
} mo_diag;

/* Opaque, owned by the caller: a list the calls below append to. */
typedef struct mo_diags mo_diags;

/* Returns 0 with *out set (free it with mo_diags_free), or -1 when out of
 * memory. */
int mo_diags_new(mo_diags **out);
void mo_diags_free(mo_diags *d);
size_t mo_diags_count(const mo_diags *d);
size_t mo_diags_errors(const mo_diags *d);
size_t mo_diags_warnings(const mo_diags *d);
/* Borrowed; valid until the list is freed. Sorted by file, line, column
 * after mo_diags_sort. */
const mo_diag *mo_diags_get(const mo_diags *d, size_t i);
void mo_diags_sort(mo_diags *d);

/* ---- models ------------------------------------------------------------ */

/* Opaque; created by mo_model_preset / mo_model_load / mo_config_model /
 * mo_check, owned by the caller, freed with mo_model_free. */
typedef struct mo_model mo_model;

/* Built-in presets. Borrowed, static; NULL when i >= mo_presets_count(). */
size_t mo_presets_count(void);
const char *mo_preset_name(size_t i);
const char *mo_preset_description(size_t i);
/* The preset's model file as YAML text (static, borrowed). */
const char *mo_preset_yaml(size_t i);

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
void mo_model_free(mo_model *m);

/* Device count for files that lack it (PyNative YAML): --devices N. */
void mo_model_set_devices(mo_model *m, int64_t devices);
/* Re-runs the `parallel` consistency checks (after set_devices). */
void mo_model_check(const mo_model *m, mo_diags *diags);

/* Accessors. Strings are borrowed from the model (valid until
 * mo_model_free); indexes out of range give NULL / 0. */
int64_t mo_model_num_layers(const mo_model *m);     /* decoder layers */
int64_t mo_model_mtp_layers(const mo_model *m);
/* Parameters of the whole model, unsharded (embedding, decoder and MTP
 * layers, output head when untied). */
int64_t mo_model_parameters(const mo_model *m);
/* The values the import filled in because the file left them out: the
 * field (as a path), the value, and where the value comes from (a model
 * type's published configuration class, a MindSpore default, memopt's
 * default). Returns 0, or -1 when i is out of range. */
size_t mo_model_assumed_count(const mo_model *m);
/* Where the key that leaves the device count open (data_parallel_shard:
 * -1) is: 1-based line and column (0 when not from a file) and its path.
 * Returns 0, or -1 for a NULL model. */
int mo_model_devices_position(const mo_model *m, int *line, int *column, const char **path);
int mo_model_assumed(const mo_model *m, size_t i, const char **path,
		     const char **value, const char **source);
size_t mo_model_layer_type_count(const mo_model *m);
const char *mo_model_layer_type_name(const mo_model *m, size_t t);
size_t mo_model_layer_type_of(const mo_model *m, int64_t layer);
size_t mo_model_path_count(const mo_model *m, size_t t);
const char *mo_model_path(const mo_model *m, size_t t, size_t p);
/* What a path is: a cell, an op (callable attribute) or a communication op
 * (`<module>.input.<op>`); MO_PATH_MODULE when out of range. */
typedef enum mo_path_kind {
	MO_PATH_MODULE, /* a cell: self_attention, mlp.linear_fc1 */
	MO_PATH_OP,     /* an op / callable attribute: add, mlp.mul, self_attention.cast */
	MO_PATH_COMM    /* a communication op: <module>.input.allgather */
} mo_path_kind;
mo_path_kind mo_model_path_kind(const mo_model *m, size_t t, size_t p);
/* The model as a canonical model file (YAML, SPEC 4 spelling). Caller
 * frees with free(); NULL when out of memory. */
char *mo_model_to_yaml(const mo_model *m);
/* The model as JSON text (same keys). Caller frees with free(). */
char *mo_model_to_json(const mo_model *m);

/* Megatron-LM arguments: a launch line (`torchrun ... pretrain_gpt.py
 * --num-layers 32 ...`), an arguments file (one flag per line or shell
 * continuation lines) or a functional-test model_config.yaml (MODEL_ARGS),
 * read with the semantics of Megatron's arguments.py. mo_model_load reads
 * such a text as a model itself; these two give the model file.
 * mo_megatron_detect: 1 when the text looks like one of the three, else 0. */
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

/* ---- configs ----------------------------------------------------------- */

/* Opaque; created by mo_config_parse / mo_check, owned by the caller,
 * freed with mo_config_free (after every plan made from it). */
typedef struct mo_config mo_config;

/* Parses text holding the three sections, alone or in a whole training
 * YAML. Syntax and structure problems go to diags (code, line, column).
 * Returns 0 with *out set (even when diags has errors, as long as the
 * text was YAML), or -1 with *out NULL and err filled on a hard error.
 * `name` labels diagnostics. The text and name are copied; *out belongs to
 * the caller (mo_config_free). */
int mo_config_parse(mo_config **out, mo_diags *diags, const char *text,
		    size_t len, const char *name, const mo_limits *lim,
		    mo_error *err);
void mo_config_free(mo_config *c);

/* 1 when the file is a whole training YAML (has keys other than the
 * three sections), else 0. */
int mo_config_is_training_yaml(const mo_config *c);

/* The model the config file carries itself (a PyNative/graph-mode
 * training YAML), as mo_model_load: a new model the caller frees with
 * mo_model_free. Returns 1 when it has none. */
int mo_config_model(mo_model **out, mo_diags *diags, const mo_config *c,
		    mo_error *err);

/* ---- reading a parsed config (what an editor builds its controls from) ---- */

/* A node of the parsed document, borrowed from its config (valid until
 * mo_config_free). Values are typed the way PyYAML (what MindSpore
 * Transformers loads configs with) types them. */
typedef struct mo_node mo_node;
typedef enum mo_value_type {
	MO_VALUE_NULL,
	MO_VALUE_BOOL,
	MO_VALUE_INT,    /* fits int64 (larger integers read as strings) */
	MO_VALUE_FLOAT,
	MO_VALUE_STRING,
	MO_VALUE_LIST,
	MO_VALUE_MAP
} mo_value_type;
mo_value_type mo_node_value_type(const mo_node *n);
/* The scalar's value; 0 / 0.0 when the node is not of that type. */
int mo_node_bool(const mo_node *n);
int64_t mo_node_int(const mo_node *n);
double mo_node_float(const mo_node *n);
/* The scalar's text as written (may hold NUL bytes: use *len), NULL when
 * the node is a list or map. */
const char *mo_node_text(const mo_node *n, size_t *len);
/* Items of a list, key / value pairs of a map, 0 for a scalar. */
size_t mo_node_count(const mo_node *n);
/* List item i, or the value of map pair i; NULL out of range. */
const mo_node *mo_node_item(const mo_node *n, size_t i);
/* The key of map pair i; NULL out of range or not a map. */
const mo_node *mo_node_key(const mo_node *n, size_t i);

/* The value of a section ("recompute", "recompute_comm" or "swap") as
 * written, NULL when the config has no such section. When the section is a
 * block at the start of a line, *first_line and *end_line (both optional)
 * get the 1-based lines [first, end) it spans in the text; else 0. */
const mo_node *mo_config_section(const mo_config *c, const char *name, int *first_line,
				 int *end_line);

/* The config's regex patterns, in the order: recompute.select_module,
 * recompute.exclude_op, recompute_comm.select_module, swap.op_swap. */
typedef struct mo_config_pattern {
	const char *section; /* "recompute", "recompute_comm", "swap" */
	const char *key;     /* "select_module", "exclude_op", "op_swap" */
	const char *regex;   /* the pattern as written */
	int compiled;        /* 0: it does not compile (a `regex` finding says why) */
	int comm_only;       /* it acts on communication paths only */
} mo_config_pattern;
size_t mo_config_pattern_count(const mo_config *c);
/* Pattern i; 0, or -1 out of range. Strings are borrowed from c. */
int mo_config_pattern_get(mo_config_pattern *out, const mo_config *c, size_t i);
/* Scratch space for matching many paths (PCRE2 match data): one per thread. */
typedef struct mo_matcher mo_matcher;
mo_matcher *mo_matcher_new(void);
void mo_matcher_free(mo_matcher *mt);
/* Whether pattern i fully matches path (PCRE2, the same compiled regex the
 * rules use; comm_only is the caller's to apply): 1 match, 0 no match or
 * a pattern that does not compile, -1 a match limit hit or an error. */
int mo_config_pattern_match(mo_matcher *mt, const mo_config *c, size_t i, const char *path,
			    size_t len);

/* Every rule of SPEC 2.3 against the model (NULL: checks that need one
 * report `model-needed`). Appends to diags. Returns the number of errors
 * appended. */
size_t mo_validate(mo_diags *diags, const mo_config *c, const mo_model *m);

/* ---- one call for the faces: config + model + every rule ----------------- */

/* Caller-owned, usually on the stack; only read during the call. Initialise
 * it with designated initialisers or = {0}: later versions may append
 * fields, and a zero field always means its default. (Bindings that mirror
 * the struct, like bindings/python, must follow it field for field.) */
typedef struct mo_input {
	const char *config;      /* config text (required) */
	size_t config_len;
	const char *config_name; /* label for diagnostics */
	const char *preset;      /* a preset name, or NULL */
	const char *model;       /* model file text, or NULL */
	size_t model_len;
	const char *model_name;
	int64_t devices;         /* 0 = as the model says */
	const mo_limits *limits; /* NULL = defaults */
	/* A loaded model to check against instead (borrowed, read-only, its
	 * devices already applied: e.g. a server's cached preset). *model
	 * stays NULL then. */
	const mo_model *shared_model;
} mo_input;

/* Parses the config, takes the model from the preset, the model text or
 * else the config file itself (a training YAML), applies devices, and runs
 * every rule (the model's `parallel` checks included). *cfg and *model are
 * set when available (model may stay NULL: then `model-needed` applies).
 * Returns 0 (diags tell whether it is valid), or -1 on a hard error: an
 * unknown preset (MO_ERR_USAGE), limits, memory.
 * Ownership: the caller owns diags (appended to), and on return 0 owns *cfg
 * and *model whenever they are non-NULL, valid or not: free them with
 * mo_config_free / mo_model_free. On -1 both are NULL. Every text in *in is
 * copied; *in may go away after the call. */
int mo_check(mo_config **cfg, mo_model **model, mo_diags *diags, const mo_input *in,
	     mo_error *err);

/* ---- expansion (SPEC 2.4) ---------------------------------------------- */

typedef enum mo_action_kind {
	MO_ACT_KEEP = 0,
	MO_ACT_RECOMPUTE,
	MO_ACT_RECOMPUTE_COMM,
	MO_ACT_SWAP
} mo_action_kind;

/* "keep", "recompute", "recompute_comm", "swap": static strings. */
const char *mo_action_name(mo_action_kind a);

typedef struct mo_rule {
	const char *section; /* "recompute", "recompute_comm", "swap" */
	const char *key;     /* e.g. "full_recompute_layer", "select_module['.*mlp']" */
	int line;            /* YAML line of the entry */
} mo_rule;

/* Borrowed from the plan: the strings (and the mo_rule inside) stay valid
 * until mo_plan_free. */
typedef struct mo_action {
	const char *path;    /* "" = the whole layer */
	mo_action_kind action;
	mo_rule rule;
} mo_action;

/* Opaque, owned by the caller, freed with mo_plan_free. */
typedef struct mo_plan mo_plan;

/* Expands a config that validated without errors. Returns 0 with *out set,
 * or -1 with *out NULL and err filled. The plan borrows c and m: free it
 * before them. */
int mo_expand(mo_plan **out, const mo_config *c, const mo_model *m,
	      mo_error *err);
void mo_plan_free(mo_plan *p);
size_t mo_plan_layer_count(const mo_plan *p);
/* Root actions of a layer (borrowed from p; NULL when out of range): one per decision (a whole-layer recompute or
 * swap, each selected module, each excluded op kept inside it, ...). */
size_t mo_plan_action_count(const mo_plan *p, int64_t layer);
const mo_action *mo_plan_action(const mo_plan *p, int64_t layer, size_t i);
/* Effective action of every path of the layer's type (index as
 * mo_model_path). */
mo_action_kind mo_plan_path_action(const mo_plan *p, int64_t layer,
				   size_t path_index);
/* Default prefetch window of the swap section (1 when absent). */
int64_t mo_plan_prefetch(const mo_plan *p);

/* ---- export ------------------------------------------------------------ */

/* Canonical YAML of the three sections (seed key order, flow-style merged
 * layer lists). For a whole training YAML, the original text with the
 * three sections replaced and every other byte kept. *out is malloc'd and
 * NUL-terminated (*out_len excludes the NUL; out_len may be NULL); the
 * caller frees it with free(). Returns 0, or -1 with *out NULL and err
 * filled. Does not validate: call mo_validate first. */
int mo_export(char **out, size_t *out_len, const mo_config *c, mo_error *err);
/* Canonical YAML of the three sections only (ownership as mo_export). */
int mo_export_sections(char **out, size_t *out_len, const mo_config *c,
		       mo_error *err);

/* ---- migrate (issue 14) ------------------------------------------------ */

/* A graph-mode training YAML with its top-level recompute_config replaced
 * by the recompute / recompute_comm sections that mean the same plan (the
 * plan mo_config_parse read from it), written in canonical form in the
 * block's place; every byte outside the block is kept. Keys of the block
 * that ask for something the sections cannot say (recompute_slice_activation,
 * the *_exclude lists, mp_comm_recompute, ...) are dropped with a
 * `no-equivalent` warning in diags; swap_config is left as it is, with the
 * same warning. Fails (MO_ERR_INVALID) when the file has no recompute_config,
 * already has a recompute / recompute_comm section, or the block is not
 * applied (PyNative file, nothing switched on, layers not placeable).
 * Ownership of *out as mo_export. Does not validate: call mo_validate first. */
int mo_migrate(char **out, size_t *out_len, mo_diags *diags, const mo_config *c,
	       mo_error *err);

/* Parses a size such as 58GiB, 64GB, 1024 (bytes). Returns 0 or -1. */
int mo_parse_size(uint64_t *out, const char *text);

/* ---- estimate (SPEC 3) ---------------------------------------------------
 * Memory per device and pipeline stage, per layer, on a timeline of one
 * training step, and the cost of the plan. Activations come from a
 * tensor-level simulation of what the framework's autograd keeps
 * (`training.framework`: mindspore or pytorch), once per layer type and
 * distinct plan segment. All byte counts are per device. */

typedef struct mo_estimate mo_estimate;

/* Runs the estimate of model m under config c (NULL: no optimisation; c
 * must have validated without errors). Returns 0 with *out set (free with
 * mo_estimate_free), or -1 with err filled: MO_ERR_INVALID with a text
 * starting "model-needed:" when the device count is unknown
 * (data_parallel_shard -1 without --devices / world_size), MO_ERR_NOMEM,
 * MO_ERR_USAGE for NULL arguments. The estimate does not borrow c or m. */
int mo_estimate_run(mo_estimate **out, const mo_config *c, const mo_model *m,
		    mo_error *err);
void mo_estimate_free(mo_estimate *e);

/* Allocated peak of the busiest stage, the pool reserved at that moment
 * (allocator fragmentation and collective buffers added), and the memory
 * the framework may use (device memory minus the runtime's reserve). */
uint64_t mo_estimate_peak_bytes(const mo_estimate *e);
uint64_t mo_estimate_reserved_peak_bytes(const mo_estimate *e);
uint64_t mo_estimate_capacity_bytes(const mo_estimate *e);
/* Step-time overhead of the plan against no optimisation, in percent. */
double mo_estimate_overhead_percent(const mo_estimate *e);
/* The framework whose save rules were used: "mindspore" or "pytorch". */
const char *mo_estimate_framework(const mo_estimate *e);

/* Timeline buckets. */
typedef enum mo_estimate_bucket {
	MO_EST_WEIGHTS = 0,   /* this device's parameter shard */
	MO_EST_GRADIENTS,
	MO_EST_OPTIMIZER,
	MO_EST_ACTIVATIONS,   /* kept for backward, all micro-batches in flight */
	MO_EST_RECOMPUTED,    /* a recomputed layer's tensors, during its backward */
	MO_EST_SWAP_BUFFERS,  /* prefetched swap buffers (the prefetch window) */
	MO_EST_GATHERED,      /* FSDP all-gathered weights (and unsharded grads) */
	MO_EST_LOSS,          /* cross-entropy backward scratch */
	MO_EST_WORKSPACES,    /* GEMM workspaces and kept caches: the
			       * workspaces from the first layer's forward on
			       * (framework pytorch: the device's
			       * workspace_mib; mindspore: 0, inside its
			       * rules); caches allocated in the first step
			       * and never freed (pytorch: Transformer
			       * Engine's dummy weight gradients under
			       * gradient accumulation fusion, Megatron's
			       * buffer of the output layer's gathered input
			       * under SP, MLA's YaRN rotary tables, the
			       * alltoall MoE dispatcher's last routing) in
			       * every event */
	MO_EST_PIPELINE_INPUTS, /* pipeline parallel, framework pytorch: each
				 * model chunk that receives its input from the
				 * previous stage keeps the last one and its
				 * gradient until its next forward */
	MO_EST_BUCKETS
} mo_estimate_bucket;

/* "weights", "gradients", "optimizer", "activations", "recomputed",
 * "swap_buffers", "gathered_weights", "loss_scratch", "workspaces",
 * "pipeline_inputs". Static. */
const char *mo_estimate_bucket_name(int bucket);

typedef struct mo_estimate_stage {
	int64_t stage;
	uint64_t peak_bytes;          /* allocated peak */
	uint64_t reserved_peak_bytes; /* pool reserved at the peak */
	const char *peak_event;       /* e.g. "backward mb 0 layer 31" */
	uint64_t weights_bytes, gradients_bytes, optimizer_bytes;
	uint64_t activations_bytes;   /* kept activations at the peak event */
	uint64_t swap_buffer_bytes;   /* prefetch buffers at the peak event */
	uint64_t peak_by_bucket[MO_EST_BUCKETS]; /* at the peak event */
	int64_t first_layer, num_layers; /* layers held (first id; count) */
	int64_t in_flight;            /* micro-batches in flight (1F1B) */
	double compute_seconds;       /* one step, no optimisation */
	double overhead_seconds;      /* extra time of the plan */
	/* allocated after the optimizer step, until the next step's first
	 * forward: the parameter state kept across steps, the workspaces and
	 * the pipeline inputs (Megatron logs it as mem-allocated-bytes) */
	uint64_t between_steps_bytes;
} mo_estimate_stage;

size_t mo_estimate_stage_count(const mo_estimate *e);
/* Borrowed; NULL past the end. */
const mo_estimate_stage *mo_estimate_stage_get(const mo_estimate *e, size_t i);

typedef struct mo_estimate_layer {
	int64_t layer, stage;
	const char *type;                   /* layer type name */
	uint64_t activation_bytes;          /* kept, one micro-batch, this plan */
	uint64_t baseline_activation_bytes; /* kept with no optimisation */
	uint64_t recomputed_bytes;          /* exists again during its backward */
	uint64_t swap_bytes;                /* to host and back, per micro-batch */
	double recompute_flops;             /* extra forward FLOPs per micro-batch */
	double forward_flops;
	uint64_t comm_recompute_bytes;      /* extra collective bytes */
} mo_estimate_layer;

/* Per layer (0 .. num_layers + mtp_num_layers - 1). Borrowed. */
size_t mo_estimate_layer_count(const mo_estimate *e);
const mo_estimate_layer *mo_estimate_layer_get(const mo_estimate *e, int64_t layer);

typedef enum mo_estimate_event_kind {
	MO_EV_FORWARD = 0,     /* forward of one layer for one micro-batch */
	MO_EV_BACKWARD,        /* backward of one layer (recompute included) */
	MO_EV_EMBED_FORWARD,
	MO_EV_EMBED_BACKWARD,
	MO_EV_LOSS_FORWARD,
	MO_EV_LOSS_BACKWARD,
	MO_EV_OPTIMIZER
} mo_estimate_event_kind;

typedef struct mo_estimate_event {
	mo_estimate_event_kind kind;
	int64_t micro_batch;   /* -1 for the optimizer step */
	int64_t layer;         /* -1 when not a layer event */
	uint64_t bytes[MO_EST_BUCKETS]; /* at the event's high-water mark */
	uint64_t total;
} mo_estimate_event;

/* The stage's timeline: every event of one step in 1F1B order, then the
 * optimizer step. Long steps are cut to the first micro-batches that
 * reach the steady state (mo_estimate_timeline_truncated says so). */
size_t mo_estimate_event_count(const mo_estimate *e, size_t stage);
const mo_estimate_event *mo_estimate_event_get(const mo_estimate *e, size_t stage,
					       size_t i);
int mo_estimate_timeline_truncated(const mo_estimate *e);
/* "forward mb 3 layer 12", "loss backward mb 0", "optimizer step"... into
 * buf; returns buf. */
char *mo_estimate_event_name(const mo_estimate_event *ev, char *buf, size_t size);

/* Cost (per step): recompute FLOPs and seconds, extra collectives of
 * comm recompute, swap bytes, host-link seconds and how many of them the
 * prefetch window hides; step seconds with and without the plan. */
typedef struct mo_estimate_cost {
	double recompute_flops, recompute_seconds;
	double comm_recompute_bytes, comm_recompute_seconds;
	uint64_t comm_recompute_ops;
	double swap_bytes, swap_seconds, swap_hidden_seconds;
	double step_seconds_baseline, step_seconds;
	double overhead_percent;
} mo_estimate_cost;
const mo_estimate_cost *mo_estimate_get_cost(const mo_estimate *e);

/* Human report: per stage a bar of weights / gradients / optimizer /
 * activations / swap buffers against capacity, the peak event, per layer
 * before and after, the cost and the assumptions. explain: the formula
 * behind each figure with the model's numbers. Caller frees. */
char *mo_estimate_report(const mo_estimate *e, int explain);

/* ---- plan (issue 6) ---------------------------------------------------------
 * The planner: the recompute / swap config with the least step-time
 * overhead (the estimator's cost model) whose estimated peak fits a budget on
 * every pipeline stage. Its memory and cost model is the estimator's: each
 * per-layer choice is priced by the estimator's own per-layer simulation and
 * the peak is assembled as the estimator's timeline assembles it, so the
 * planner's predicted peak equals mo_estimate_peak_bytes of the config it
 * returns. The search is exact (dynamic programming over layers with Pareto
 * frontiers, core/src/planner/planner_search.c) except with virtual
 * pipeline (a safe plan) and when swap would need a default_prefetch above
 * max_prefetch's default (mo_planner_exact says which).
 * Per layer it chooses among: keep; select of '.*mlp', '.*self_attention',
 * '.*core_attention' (mlp with one of the other two too); full; full with
 * the comm ops excluded; comm recompute of the comm ops (beside a select);
 * layer swap; op swap of '.*mlp' (beside an attention select). */

/* Mechanisms the planner may use (bit flags; 0 = all). */
enum {
	MO_PLAN_ALLOW_SELECT = 1u << 0,
	MO_PLAN_ALLOW_FULL = 1u << 1,
	MO_PLAN_ALLOW_EXCLUDE = 1u << 2,   /* full with the comm ops excluded */
	MO_PLAN_ALLOW_COMM = 1u << 3,      /* recompute_comm */
	MO_PLAN_ALLOW_LAYER_SWAP = 1u << 4,
	MO_PLAN_ALLOW_OP_SWAP = 1u << 5,
	MO_PLAN_ALLOW_ALL = 0x3f
};

/* "select,full,exclude,comm,layer_swap,op_swap" (any of them, comma
 * separated; "all"). Returns 0, or -1 naming an unknown word. */
int mo_planner_parse_allow(unsigned *out, const char *text);

/* Caller-owned; initialise with = {0} (fields may be appended). */
typedef struct mo_planner_input {
	const mo_model *model;  /* required, device count known (borrowed) */
	uint64_t budget;        /* bytes per device; 0 = the device capacity
				 * (mo_estimate_capacity_bytes) */
	const mo_config *start; /* optional, validated without errors: layers it
				 * recomputes or swaps keep that (they may only
				 * become full), its entries stay in the result */
	unsigned allow;         /* MO_PLAN_ALLOW_*; 0 = all */
	int no_staged;          /* 1: skip the staged escalation */
	int64_t max_prefetch;   /* largest default_prefetch to consider; 0 = 4
				 * (exact then only when a larger window could
				 * not hide more swap) */
} mo_planner_input;

/* Opaque, owned by the caller, freed with mo_planner_result_free. */
typedef struct mo_planner_result mo_planner_result;

/* Plans. Returns 0 with *out set (also when nothing fits: then the result
 * is the plan with the smallest peak any plan reaches), or -1 with err:
 * MO_ERR_USAGE (no model), MO_ERR_INVALID ("model-needed: ..." as
 * mo_estimate_run), MO_ERR_NOMEM. The result does not borrow the input. */
int mo_planner_run(mo_planner_result **out, const mo_planner_input *in, mo_error *err);
void mo_planner_result_free(mo_planner_result *r);

/* 1 when every stage's peak is within the budget. */
int mo_planner_fits(const mo_planner_result *r);
/* 1 when the search proved the plan optimal (see above). */
int mo_planner_exact(const mo_planner_result *r);
uint64_t mo_planner_budget(const mo_planner_result *r);
/* The planner's own peak of the plan (busiest stage), equal to the
 * estimate's when exact. */
uint64_t mo_planner_predicted_peak(const mo_planner_result *r);
/* The config's canonical YAML (the three sections). Borrowed. */
const char *mo_planner_yaml(const mo_planner_result *r);
/* The config and its estimate. Borrowed. */
const mo_config *mo_planner_config(const mo_planner_result *r);
const mo_estimate *mo_planner_estimate(const mo_planner_result *r);

/* The seed's manual escalation for comparison: no optimisation (it stops
 * there when that fits), select of
 * '.*mlp' on every layer, full recompute of the first k layers (the least k
 * that fits, else all), then (without PP) full on the first k and swap of
 * the rest (the most k that fits, else k = 0). Borrowed strings. */
typedef struct mo_planner_step {
	const char *label;        /* e.g. "full 0-11" */
	const char *yaml;
	uint64_t peak_bytes;
	double overhead_percent;
	int fits;
} mo_planner_step;
size_t mo_planner_staged_count(const mo_planner_result *r);
const mo_planner_step *mo_planner_staged_get(const mo_planner_result *r, size_t i);
/* Index of the step the escalation stops at (the first that fits; 0 when
 * no optimisation is needed), or -1 when none does. */
long mo_planner_staged_answer(const mo_planner_result *r);

/* The largest micro_batch_size, or longest seq_length (a multiple of the
 * context parallel size), up to `limit`, for which some plan fits the budget
 * (in->model's other settings kept). *best = 0 when not even 1 (or one
 * multiple) fits. With plan non-NULL, *plan receives the planner's result at
 * *best (NULL when 0). Returns 0 or -1 with err. */
typedef enum mo_planner_dim {
	MO_PLAN_MICRO_BATCH_SIZE = 0,
	MO_PLAN_SEQ_LENGTH
} mo_planner_dim;
int mo_planner_maximize(int64_t *best, mo_planner_result **plan, const mo_planner_input *in,
			mo_planner_dim dim, int64_t limit, mo_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

/* Measured traces against the estimate (memopt ledger). */
#include <memopt/ledger.h>

#endif
