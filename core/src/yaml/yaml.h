/* yaml: the document tree every reader of configs and models walks: libyaml's
 * events (or jansson's values) turned into nodes with source positions, and
 * PyYAML's scalar typing. */
#ifndef MEMOPT_YAML_H
#define MEMOPT_YAML_H

#include "util/util.h"

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
int yaml_tree_parse(mo_doc **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err);
/* Same tree from JSON (jansson, duplicate keys reported). */
int json_parse(mo_doc **out, mo_diags *diags, const char *text,
		  size_t len, const char *name, const mo_limits *lim,
		  mo_error *err);
void doc_free(mo_doc *d);

/* Map lookup: first value whose key scalar equals `key`, or NULL. */
mo_node *map_get(const mo_node *map, const char *key);
/* Map lookup that also returns the key node. */
mo_node *map_get_kv(const mo_node *map, const char *key, const mo_node **key_out);

/* ---- scalar typing, PyYAML's YAML 1.1 resolver (MindSpore loads configs
 * with PyYAML): only plain scalars are typed; quoted ones are strings. --- */

typedef enum mo_scalar_type {
	MO_SCALAR_NULL,
	MO_SCALAR_BOOL,
	MO_SCALAR_INT,
	MO_SCALAR_FLOAT,
	MO_SCALAR_STR
} mo_scalar_type;

mo_scalar_type scalar_resolve(const mo_node *n);
/* Converts per the resolver. Return false when the node is not that type
 * (or an int overflows int64: *overflow set). */
bool scalar_bool(const mo_node *n, bool *out);
bool scalar_int(const mo_node *n, int64_t *out, bool *overflow);
bool scalar_float(const mo_node *n, double *out);
/* "mapping", "sequence", "string", "integer", "boolean", "null", "float" */
const char *node_type_name(const mo_node *n);

/* A diagnostic at a node's position (0:0 when at is NULL). */
mo_diag *diags_add_at(mo_diags *d, mo_severity sev, const char *code,
			 const char *file, const mo_node *at,
			 const char *path, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* ---- writing YAML (yaml_writer.c): libyaml's emitter with memopt's styles.
 * Every YAML memopt writes goes through it. Calls after a failure do
 * nothing and return false; the first failure is in the writer's err, its
 * message prefixed with `what`. --------------------------------------------- */

typedef struct mo_yaml_writer mo_yaml_writer;

typedef enum mo_yaml_break {
	MO_YAML_BREAK_LF,
	MO_YAML_BREAK_CRLF,
	MO_YAML_BREAK_CR
} mo_yaml_break;

/* Starts a stream and an implicit document. 0 or -1 (err set). */
int yaml_tree_writer_new(mo_yaml_writer **out, mo_yaml_break line_break, const char *what,
		       mo_error *err);
void yaml_tree_writer_free(mo_yaml_writer *w);
/* A plain scalar: typed by the reader (ints, True, 0-15, key names). */
bool yaml_tree_write_plain(mo_yaml_writer *w, const char *s);
/* A string for any reader: single-quoted, double-quoted when it holds a
 * line break. n bytes (may hold a NUL); must be UTF-8. */
bool yaml_tree_write_string(mo_yaml_writer *w, const char *s, size_t n);
bool yaml_tree_write_double_quoted(mo_yaml_writer *w, const char *s);
/* anchor: NULL for none */
bool yaml_tree_write_mapping_start(mo_yaml_writer *w, const char *anchor, bool flow);
bool yaml_tree_write_mapping_end(mo_yaml_writer *w);
bool yaml_tree_write_sequence_start(mo_yaml_writer *w, bool flow);
bool yaml_tree_write_sequence_end(mo_yaml_writer *w);
bool yaml_tree_writer_failed(const mo_yaml_writer *w);
/* Records an out-of-memory failure of the caller's own (e.g. a scratch
 * allocation), so that the writer's err says it. */
void yaml_tree_writer_fail_nomem(mo_yaml_writer *w);
/* Ends the document and appends its text to dst: block sequences that are
 * mapping values indented under their key, every line after the first
 * indented by `indent` more (a section spliced at that column). 0 or -1. */
int yaml_tree_writer_finish(mo_yaml_writer *w, mo_buf *dst, size_t indent);

#endif
