/*
 * memopt — the read-only view of a parsed YAML document (what an editor builds its
 * controls from), its values typed the way PyYAML types them.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_NODE_H
#define MEMOPT_API_NODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

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
/* The node's type; MO_VALUE_NULL for a NULL node. */
mo_value_type mo_node_value_type(const mo_node *n);
/* The scalar's boolean value; 0 when the node is not a bool. */
int mo_node_bool(const mo_node *n);
/* The scalar's integer value; 0 when the node is not an int. */
int64_t mo_node_int(const mo_node *n);
/* The scalar's float value; 0.0 when the node is not a float. */
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

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
