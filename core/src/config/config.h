/* config: the three sections (recompute, recompute_comm, swap) parsed into a
 * struct, with every rule that needs no model, layer specs, and the YAML
 * export. */
#ifndef MEMOPT_CONFIG_H
#define MEMOPT_CONFIG_H

#include "match/match.h"
#include "yaml/yaml.h"

#include <pthread.h>

/* ---- layer specs (docs/config-language.md, layer lists) ----------------- */

typedef struct mo_range {
	uint64_t lo, hi;   /* inclusive; UINT64_MAX when past 2^64 */
	const mo_node *at; /* the item's node */
} mo_range;

typedef struct mo_layers {
	const mo_node *at; /* the list node (NULL when absent) */
	mo_range *r;       /* parsed, valid items in source order */
	size_t n;
	bool ok;           /* a list whose every item parsed */
} mo_layers;

/* Parses a layer list node. Problems -> diags (type, layer-spec,
 * layer-order) with `path` as the diagnostic path prefix. */
void layers_parse(mo_layers *out, mo_arena *a, mo_diags *diags,
		     const char *file, const mo_node *list, const char *path);
bool layers_contains(const mo_layers *l, uint64_t id);
/* Appends "lo" or "lo-hi" (comma-separated) to a NUL-terminated buffer,
 * ending with ", ..." when it runs out of room. */
void ranges_append(char *buf, size_t size, uint64_t lo, uint64_t hi);

/* ---- the parsed configuration ------------------------------------------- */

typedef enum mo_mode { MO_MODE_NONE, MO_MODE_FULL, MO_MODE_SELECT } mo_mode;


typedef struct mo_pattern {
	const char *regex;      /* the key text */
	const mo_node *key;     /* key node (position of the regex) */
	mo_layers layers;
	const char *dpath;      /* diagnostic path, e.g. recompute.select_module['.*mlp'] */
	mo_regex *re;           /* compiled, or NULL (bad pattern) */
	bool discard;           /* recompute.discard_module: recomputed, its output freed */
} mo_pattern;

typedef struct mo_pattern_list {
	const mo_node *at;      /* the mapping (or NULL when absent) */
	mo_pattern *p;
	size_t n;
} mo_pattern_list;

typedef struct mo_swap_layer {
	const mo_node *at;
	mo_layers layers;
} mo_swap_layer;

typedef struct mo_op_swap {
	const mo_node *at;
	mo_pattern pat;          /* regex = op_name */
} mo_op_swap;

struct mo_config {
	mo_doc *doc;
	mo_limits lim;
	bool training_yaml;          /* other top-level keys present */
	/* section nodes (key and value) for splicing on export */
	const mo_node *recompute_key, *recompute_val;
	const mo_node *comm_key, *comm_val;
	const mo_node *swap_key, *swap_val;

	/* recompute */
	bool has_recompute;
	mo_mode mode;
	const mo_node *mode_at;
	mo_layers full;              /* full_recompute_layer */
	/* select_module, then discard_module (pattern.discard): both recompute,
	 * so every rule over select's patterns holds for both */
	mo_pattern_list select;
	const mo_node *discard_at;   /* the discard_module mapping (NULL when absent) */
	mo_pattern_list exclude;     /* exclude_op */

	/* recompute_comm */
	bool has_comm;
	bool comm_enable;
	const mo_node *comm_enable_at;
	mo_pattern_list comm;        /* recompute_comm.select_module */

	/* swap */
	bool has_swap;
	bool swap_enable;
	const mo_node *swap_enable_at;
	int64_t prefetch;            /* default_prefetch, 1 when absent */
	const mo_node *prefetch_at;
	mo_swap_layer *layer_swap;
	size_t n_layer_swap;
	const mo_node *layer_swap_at;
	mo_op_swap *op_swap;
	size_t n_op_swap;
	const mo_node *op_swap_at;

	bool structural_errors;      /* parse found errors in the sections */
	/* the recompute fields come from a graph-mode recompute_config
	 * (graph.c), not from sections of the file: export writes none */
	bool from_recompute_config;
	/* graph.c read the recompute_config as a graph-mode run applies it
	 * (even when it switches nothing on): migrate may rewrite it */
	bool recompute_config_read;
	/* a graph-mode recompute_config whose file has no layer count (the
	 * model is pretrained_model_dir's config.json): placed by
	 * config_graph_place once the model is known */
	const mo_node *graph_pending_root, *graph_pending_key, *graph_pending_val;

};

/* graph.c: a top-level recompute_config / swap_config (key, value) of the
 * document `root`: warned about; in a graph-mode file recompute_config is
 * read into the recompute fields. Call after the sections are parsed. */
void config_graph(mo_config *c, mo_diags *diags, const mo_node *root, const mo_node *key,
		     const mo_node *val);

/* graph.c: places a recompute_config left pending by config_graph with
 * the layer counts of the model given apart (layers 0: no model, warned
 * as model-needed). Does nothing when none is pending. */
void config_graph_place(mo_config *c, mo_diags *diags, int64_t layers, int64_t mtp);

/* export.c, for migrate.c: the text with the block (key, val) named
 * `name` replaced by the canonical sections of `mask` (bit 0 recompute,
 * 1 recompute_comm, 2 swap) and every other byte kept; the result is
 * checked to load. Ownership as mo_export. */
int export_splice_block(char **out, size_t *out_len, const mo_config *c,
			   const mo_node *key, const mo_node *val, const char *name,
			   unsigned mask, mo_error *err);

/* A replacement of the bytes [start, end) of a source text. */
typedef struct mo_text_edit {
	size_t start, end;
	const char *text;
	size_t len;
} mo_text_edit;

/* export.c: the whole training YAML `base` with its three sections written
 * from `plan` (a graph-mode file's recompute_config standing for the
 * recompute sections it lacks; sections plan has and base lacks added at
 * the end) and the edits applied, every other byte kept; checked to load.
 * The edits must not overlap each other or a section. Ownership as
 * mo_export. */
int export_rewrite(char **out, size_t *out_len, const mo_config *base, const mo_config *plan,
		   const mo_text_edit *edits, size_t n_edits, mo_error *err);
/* export.c: the whole training YAML `base` with the edits applied, its three
 * sections and every other byte as written; checked to load. The edits must
 * not overlap. Ownership as mo_export; -1 with err. */
int export_edit(char **out, size_t *out_len, const mo_config *base, const mo_text_edit *edits,
		size_t n_edits, mo_error *err);
/* Where a value node's own text starts (after its &anchor / !tag) and
 * ends (floor: the end of its key), in c's source. */
size_t export_value_start(const mo_config *c, const mo_node *v);
size_t export_value_end(const mo_config *c, const mo_node *v, size_t floor);

/* graph.c: a PyNative training YAML (the r2.x sections or context.mode 1). */
bool config_graph_is_pynative(const mo_node *root);

/* ---- reading and building --------------------------------------------- */

/* Reads the sections of a document tree, parsed or built (takes doc over;
 * freed with the config, or here on failure). Problems -> diags, as
 * mo_config_parse. 0, or -1 when out of memory. */
int config_read_tree(mo_config **out, mo_diags *diags, mo_doc *doc, const mo_limits *lim,
			mo_error *err);

/* A configuration built from data (config_build.c), for code that makes
 * configs (the planner): sections, layer ranges and patterns go in as values;
 * the result is read like a parsed file (config_read_tree), so validate,
 * expand, the estimator and the canonical export take it as they take a
 * parsed one. It has no source text: positions are 0. Each call adds one key
 * or entry, in the order of the calls; a section appears once something in
 * it is set. */
typedef struct mo_config_builder mo_config_builder;

/* The pattern lists. */
typedef enum mo_config_list {
	MO_CONFIG_SELECT_MODULE,      /* recompute.select_module */
	MO_CONFIG_EXCLUDE_OP,         /* recompute.exclude_op */
	MO_CONFIG_COMM_SELECT_MODULE  /* recompute_comm.select_module */
} mo_config_list;

/* name: the label diagnostics use. 0 or -1 (err). */
int config_builder_new(mo_config_builder **out, const char *name, mo_error *err);
void config_builder_free(mo_config_builder *b);
/* recompute.mode */
void config_build_mode(mo_config_builder *b, mo_mode mode);
/* recompute.full_recompute_layer; ranges inclusive (their `at` unused) */
void config_build_full(mo_config_builder *b, const mo_range *ranges, size_t n);
/* One {regex: layers} entry of a pattern list (regex NUL-terminated). */
void config_build_pattern(mo_config_builder *b, mo_config_list list, const char *regex,
			     const mo_range *ranges, size_t n);
/* recompute_comm.enable */
void config_build_comm(mo_config_builder *b, bool enable);
/* swap.enable, swap.default_prefetch */
void config_build_swap(mo_config_builder *b, bool enable);
void config_build_prefetch(mo_config_builder *b, int64_t prefetch);
/* One swap.layer_swap entry; one swap.op_swap entry. */
void config_build_layer_swap(mo_config_builder *b, const mo_range *ranges, size_t n);
void config_build_op_swap(mo_config_builder *b, const char *regex, const mo_range *ranges,
			     size_t n);
/* The config (default limits); frees b. A config the reader finds wrong
 * (a regex that does not compile, ...) is MO_ERR_INVALID with the first
 * problem; out of memory MO_ERR_NOMEM. 0 or -1. */
int config_builder_finish(mo_config **out, mo_config_builder *b, mo_error *err);

#endif
