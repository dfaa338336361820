/* Internal structures of libmemopt, shared between core modules only. */
#ifndef MEMOPT_INTERNAL_H
#define MEMOPT_INTERNAL_H

#include "memopt/memopt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- arena: one per parsed document / model / plan ---------------------- */

typedef struct mo_arena mo_arena;
mo_arena *mo_arena_new(void);
void mo_arena_free(mo_arena *a);
/* The arena's layout, for the inline fast path below (arena.c owns it). */
#define MO_ARENA_ALIGN 16
struct mo_chunk {
	struct mo_chunk *next;
	size_t used, size; /* both multiples of MO_ARENA_ALIGN */
	_Alignas(MO_ARENA_ALIGN) unsigned char data[];
};
struct mo_arena {
	struct mo_chunk *head;
};
/* The out-of-line path of mo_arena_alloc_raw (a new chunk, size 0, NULL a). */
void *mo_arena_alloc_slow(mo_arena *a, size_t size);
/* Like mo_arena_alloc, without the zeroing: for bytes about to be written.
 * Inline when the head chunk has room: the free space is a multiple of the
 * alignment, so 1 <= size <= free means the rounded size fits too. */
static inline void *mo_arena_alloc_raw(mo_arena *a, size_t size)
{
	struct mo_chunk *c;
	if (a && (c = a->head) != NULL && size - 1 < c->size - c->used) {
		void *p = c->data + c->used;
		c->used += (size + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
		return p;
	}
	return mo_arena_alloc_slow(a, size);
}
/* Gives back the end of p's block (old bytes) past its first n bytes when
 * it is the arena's last allocation (else keeps it whole). */
static inline void mo_arena_shrink(mo_arena *a, void *p, size_t old, size_t n)
{
	struct mo_chunk *c = a ? a->head : NULL;
	size_t ro = (old + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	size_t rn = (n + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	if (c && rn <= ro && (unsigned char *)p + ro == c->data + c->used)
		c->used -= ro - rn;
}
/* Zeroed memory; NULL on failure. Freed all at once with the arena. */
static inline void *mo_arena_alloc(mo_arena *a, size_t size)
{
	void *p = mo_arena_alloc_raw(a, size);
	if (p)
		memset(p, 0, size);
	return p;
}
char *mo_arena_strndup(mo_arena *a, const char *s, size_t n);
char *mo_arena_strdup(mo_arena *a, const char *s);
/* The n parts (lens[i] bytes each) joined, NUL-terminated: the printf-free
 * way to build paths in hot code. */
char *mo_arena_concat(mo_arena *a, const char *const *parts, const size_t *lens, size_t n);
/* "name[i]" (printf-free). */
char *mo_arena_indexed(mo_arena *a, const char *name, size_t i);
char *mo_arena_printf(mo_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- growable buffer with a cap (curl's dynbuf) ------------------------ */

typedef struct mo_buf {
	char *data;
	size_t len, cap, max; /* max 0 = no cap */
	bool failed;          /* an append failed (cap or memory) */
} mo_buf;
void mo_buf_init(mo_buf *b, size_t max);
void mo_buf_free(mo_buf *b);
bool mo_buf_append(mo_buf *b, const char *s, size_t n);
bool mo_buf_puts(mo_buf *b, const char *s);
bool mo_buf_printf(mo_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hands the NUL-terminated data to the caller (free()). */
char *mo_buf_take(mo_buf *b, size_t *len);

/* ---- YAML node tree with source positions ------------------------------ */

typedef enum mo_node_kind {
	MO_NODE_SCALAR,
	MO_NODE_SEQ,
	MO_NODE_MAP
} mo_node_kind;

typedef enum mo_scalar_style {
	MO_STYLE_PLAIN,
	MO_STYLE_SINGLE,
	MO_STYLE_DOUBLE,
	MO_STYLE_LITERAL,
	MO_STYLE_FOLDED
} mo_scalar_style;

typedef struct mo_node mo_node;
struct mo_node { /* fields ordered without padding holes: 96 bytes */
	mo_node_kind kind;
	int line, column;      /* 1-based start */
	mo_scalar_style style; /* scalar */
	size_t start, end;     /* byte offsets of the node in the source */
	const char *tag;       /* explicit tag or NULL */
	/* scalar */
	const char *value;     /* NUL-terminated (may contain NUL: use len) */
	size_t len;
	/* seq: items[0..n); map: items[2i] key, items[2i+1] value */
	mo_node **items;
	size_t n;
	size_t weight;         /* nodes in the subtree, aliases expanded */
	const char *anchor;    /* anchor name or NULL */
	bool flow;             /* flow-style collection */
	bool is_alias_target;  /* referenced by an alias */
};

typedef struct mo_doc {
	mo_arena *arena;
	const char *src;  /* copy of the text, owned by arena */
	size_t srclen;
	mo_node *root;    /* NULL for an empty document */
	const char *name; /* label for diagnostics */
} mo_doc;

/* Parses YAML (libyaml event API) with the limits. Syntax problems become
 * a `yaml-syntax` diagnostic (return 1); aliases are resolved by sharing
 * the anchored node, with the node count of every expansion bounded by
 * lim->max_nodes. Returns 0 ok, 1 diagnostics (no doc), -1 hard error. */
int mo_yaml_parse(mo_doc **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err);
/* Same tree from JSON (jansson, duplicate keys reported). */
int mo_json_parse(mo_doc **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err);
void mo_doc_free(mo_doc *d);

/* Map lookup: first value whose key scalar equals `key`, or NULL. */
mo_node *mo_map_get(const mo_node *map, const char *key);
/* Map lookup that also returns the key node. */
mo_node *mo_map_get_kv(const mo_node *map, const char *key, mo_node **key_out);

/* ---- scalar typing, PyYAML's YAML 1.1 resolver (MindSpore loads configs
 * with PyYAML): only plain scalars are typed; quoted ones are strings. --- */

typedef enum mo_scalar_type {
	MO_SCALAR_NULL,
	MO_SCALAR_BOOL,
	MO_SCALAR_INT,
	MO_SCALAR_FLOAT,
	MO_SCALAR_STR
} mo_scalar_type;

mo_scalar_type mo_scalar_resolve(const mo_node *n);
/* Converts per the resolver. Return false when the node is not that type
 * (or an int overflows int64: *overflow set). */
bool mo_scalar_bool(const mo_node *n, bool *out);
bool mo_scalar_int(const mo_node *n, int64_t *out, bool *overflow);
bool mo_scalar_float(const mo_node *n, double *out);
/* "mapping", "sequence", "string", "integer", "boolean", "null", "float" */
const char *mo_node_type_name(const mo_node *n);

/* ---- diagnostics -------------------------------------------------------- */

/* Adds a diagnostic; strings are copied. `path` may be NULL. Returns the
 * stored diagnostic (for adding a hint) or NULL on memory failure. */
mo_diag *mo_diags_add(mo_diags *d, mo_severity sev, const char *code,
		      const char *file, int line, int column,
		      const char *path, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
mo_diag *mo_diags_add_at(mo_diags *d, mo_severity sev, const char *code,
			 const char *file, const mo_node *at,
			 const char *path, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
void mo_diag_set_hint(mo_diags *d, mo_diag *diag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The layers a diagnostic is about ("8-11, 14"), copied. */
void mo_diag_set_layers(mo_diags *d, mo_diag *diag, const char *layers);

/* Levenshtein distance, capped: returns cap+1 when larger. */
size_t mo_edit_distance(const char *a, const char *b, size_t cap);
/* Closest candidate within max(2, strlen(word)/3) edits, or NULL. */
const char *mo_did_you_mean(const char *word, const char *const *cands,
			    size_t n);

void mo_error_set(mo_error *err, mo_error_code code, int line, int column,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- layer specs (SPEC 2.1) --------------------------------------------- */

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
void mo_layers_parse(mo_layers *out, mo_arena *a, mo_diags *diags,
		     const char *file, const mo_node *list, const char *path);
bool mo_layers_contains(const mo_layers *l, uint64_t id);
/* Appends "lo" or "lo-hi" (comma-separated) to a NUL-terminated buffer,
 * ending with ", ..." when it runs out of room. */
void mo_ranges_append(char *buf, size_t size, uint64_t lo, uint64_t hi);

/* ---- the parsed configuration ------------------------------------------- */

typedef enum mo_mode { MO_MODE_NONE, MO_MODE_FULL, MO_MODE_SELECT } mo_mode;

typedef struct mo_regex mo_regex;

typedef struct mo_pattern {
	const char *regex;      /* the key text */
	const mo_node *key;     /* key node (position of the regex) */
	mo_layers layers;
	const char *dpath;      /* diagnostic path, e.g. recompute.select_module['.*mlp'] */
	mo_regex *re;           /* compiled, or NULL (bad pattern) */
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
	mo_pattern_list select;      /* select_module */
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

	/* Pattern matches against the last layout seen (validate, then
	 * expand or estimate, match once): see resolve.c. The lock keeps a
	 * config shared read-only between threads safe. */
	pthread_mutex_t match_lock;
	struct mo_match_cache *match_cache;
	/* The last plan resolved against a model (validate keeps the one it
	 * builds for expand or estimate): see resolve.c. Same lock. */
	struct mo_resolved *resolved;
};

/* ---- model layouts (SPEC 4) ----------------------------------------------
 * A layer type is a tree of paths relative to the layer. Each path has a
 * kind and the index of its parent path (-1 for top level). Paths are
 * stored parent-before-child. */

typedef enum mo_path_kind {
	MO_PATH_MODULE, /* a cell: self_attention, mlp.linear_fc1 */
	MO_PATH_OP,     /* an op / callable attribute: add, mlp.mul, self_attention.cast */
	MO_PATH_COMM    /* a communication op: <module>.input.allgather */
} mo_path_kind;

typedef struct mo_path {
	const char *name;  /* full dotted path relative to the layer */
	mo_path_kind kind;
	int parent;        /* index of the parent module path, -1 at top */
} mo_path;

typedef struct mo_layer_type {
	const char *name;  /* "dense", "moe", "mla-dense", "mla-moe", "mtp" ... */
	mo_path *paths;
	size_t n_paths;
} mo_layer_type;

typedef struct mo_device {
	const char *name;
	double memory_gib;
	double host_bandwidth_gbs;
	double tflops;
	double reserved_gib;
	double collective_bandwidth_gbs;
	double comm_buffer_mib; /* buffer each collective group holds */
	double fragmentation;   /* pool reserved beyond the allocated peak */
} mo_device;

struct mo_model {
	mo_arena *arena;
	const char *name;       /* preset name or file label */

	/* model (SPEC 4 spelling) */
	int64_t num_layers, mtp_num_layers;
	int64_t hidden_size, ffn_hidden_size;
	int64_t num_attention_heads, num_query_groups, kv_channels;
	int64_t vocab_size, make_vocab_size_divisible_by;
	bool untie_embeddings_and_output_weights;
	int64_t seq_length;
	const char *normalization;   /* RMSNorm | LayerNorm */
	const char *hidden_act;      /* swiglu | silu | gelu */
	const char *attention;       /* flash | eager */
	double hidden_dropout, attention_dropout;
	int64_t num_moe_experts, moe_router_topk, moe_ffn_hidden_size;
	int64_t moe_shared_expert_intermediate_size, first_k_dense_replace;
	bool multi_latent_attention;
	int64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
		v_head_dim;
	bool qk_layernorm;

	/* training */
	int64_t micro_batch_size, micro_batch_num;
	const char *compute_dtype, *params_dtype;
	const char *optimizer;       /* adamw | muon */
	const char *framework;       /* mindspore | pytorch */

	/* parallel; world_size 0 = unknown */
	int64_t world_size, data_parallel, data_parallel_shard;
	int64_t tensor_parallel, pipeline_parallel, virtual_pipeline;
	int64_t expert_parallel, context_parallel;
	bool sequence_parallel, distributed_optimizer;
	/* explicit per-stage layer lists (pipeline_parallel_layers_per_stage),
	 * n_stage_layers = 0 for auto */
	mo_layers *stage_layers;
	size_t n_stage_layers;

	mo_device device;

	/* where each key came from, for `parallel` diagnostics */
	const mo_doc *doc;           /* may be NULL (presets parsed then kept) */
	const mo_node *parallel_at;  /* the parallel/parallelism section */

	/* layouts */
	mo_layer_type *types;
	size_t n_types;
	size_t *type_of;             /* [num_layers + mtp_num_layers] */
	uint64_t layout_hash;        /* of the types' path sets */

	/* model_*.c private: key positions, batch sizes (model_internal.h) */
	struct mo_model_ext *ext;
	/* resolve.c: path info and pattern matches, built on first use in the
	 * model's arena (freed with it), under resolve.c's lock */
	struct mo_path_cache *path_cache;
};

/* Reads a model from a parsed document: a model file (SPEC 4, either
 * spelling), a PyNative or graph-mode training YAML, or a Hugging Face
 * config.json. Returns 0 with *out set, 1 when the document holds no model,
 * -1 on a hard error. Diagnostics (type errors in model keys, `parallel`)
 * go to diags with the document's name as file. The model keeps no pointer
 * into doc after return except through m->doc when keep_doc is true. */
int mo_model_from_doc(mo_model **out, mo_diags *diags, const mo_doc *doc,
		      mo_error *err);

/* Builds types/type_of from the fields (call after any field change). */
int mo_model_build_layout(mo_model *m, mo_error *err);

/* ---- matching (PCRE2) ----------------------------------------------------- */

/* Compiles with ANCHORED|ENDANCHORED|UTF (+ JIT). On failure returns NULL
 * and sets *errmsg (arena) and *erroffset. */
/* The regex's block comes from `a`: call mo_regex_free before freeing a. */
mo_regex *mo_regex_compile(const char *pattern, size_t len,
			   const mo_limits *lim, mo_arena *a,
			   const char **errmsg, size_t *erroffset);
void mo_regex_free(mo_regex *re);
/* One more holder of re: mo_regex_free then frees it on its last holder's
 * call. Not synchronised: share and free while re is private to one thread
 * (e.g. while parsing the config that holds it). */
mo_regex *mo_regex_share(mo_regex *re);
/* 1 match, 0 no match, -1 limit hit or error. Allocates match data per
 * call; for many subjects use a matcher. */
int mo_regex_match(const mo_regex *re, const char *subject, size_t len);

/* Match data reusable across patterns (one per thread / per call). */
typedef struct mo_matcher mo_matcher;
mo_matcher *mo_matcher_new(void);
void mo_matcher_free(mo_matcher *mt);
int mo_matcher_match(mo_matcher *mt, const mo_regex *re, const char *subject,
		     size_t len);
/* The byte a full match needs first / last (a simple pattern's literal
 * first / last token), -1 when any may do: a filter before matching. */
void mo_regex_ends(const mo_regex *re, int *first, int *last);
/* Printable ASCII: the subjects the fast paths below accept. */
bool mo_subject_is_plain(const char *subject, size_t len);
/* mo_matcher_match for a subject known to be plain (checked once by the
 * caller for a whole path set). */
int mo_matcher_match_plain(mo_matcher *mt, const mo_regex *re, const char *subject,
			   size_t len);

/* ---- resolution: the config applied to the model ---------------------------
 * Layers are cut into segments where no layer list and no layer type
 * changes, so every layer of a segment gets the same actions: the work is
 * per segment, never per layer (1,000 layers, 20,000 patterns). */

typedef struct mo_bits {
	uint64_t *w;
	size_t nw;
} mo_bits;

typedef struct mo_seg {
	uint64_t lo, hi;     /* layer ids, inclusive */
	size_t type;
	bool full;           /* whole layer recomputed */
	bool swapped;        /* whole layer swapped */
	mo_action_kind *act; /* per path of the type */
	mo_rule *rule;       /* per path, while the segment is filled only */
	mo_action *roots;    /* root decisions */
	size_t n_roots, cap_roots;
} mo_seg;

/* What a resolved plan was built from (the model's layout), to reuse it
 * only for the same, unchanged model. */
typedef struct mo_resolved_snap {
	uint64_t layout_hash;
	const mo_layer_type *types_at;
	mo_layer_type *types;
	size_t n_types;
	mo_path **paths;
	size_t *type_of;
} mo_resolved_snap;

typedef struct mo_resolved {
	mo_arena *arena;
	const mo_config *c;
	const mo_model *m;
	uint64_t n_layers;     /* num_layers + mtp */
	mo_seg *segs;
	size_t n_segs;
	int refs;              /* holders: callers and the config's memo */
	mo_resolved_snap snap;
} mo_resolved;

/* A plan kept by validation for reuse holds at most this many per-path
 * slots (segments x paths of the largest type); larger ones are not kept. */
#define MO_MEMO_MAX_SLOTS ((size_t)1 << 20)

/* Applies c to m. When diags is non-NULL, the model-dependent findings
 * (layer-range, no-match, conflicts, ...) are reported. With out NULL it
 * only checks (no per-segment plan is kept). Returns 0 or -1 (out of
 * memory: err). */
int mo_resolve(mo_resolved **out, const mo_config *c, const mo_model *m,
	       mo_diags *diags, mo_error *err);
/* Drops one reference (plans are shared with the config's memo). */
void mo_resolved_free(mo_resolved *r);
/* Drops the config's memo (mo_config_free). */
void mo_resolved_memo_free(mo_config *c);
/* Segment holding a layer (binary search), or NULL past the model. */
const mo_seg *mo_resolved_seg(const mo_resolved *r, uint64_t layer);
void mo_match_cache_free(struct mo_match_cache *mc);

#endif
