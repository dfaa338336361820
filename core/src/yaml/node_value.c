/* The public read-only view of a document node (memopt.h, mo_node_*): what
 * a face needs to show a section as typed values without seeing the tree.
 * Typing is PyYAML's (scalar.c); a scalar whose conversion fails (an integer
 * past int64, a bool or float that does not convert) reads as its text,
 * which is what the editor shows. */
#include "yaml/yaml.h"

mo_value_type mo_node_value_type(const mo_node *n)
{
	bool b, overflow = false;
	int64_t i;
	double d;

	if (!n)
		return MO_VALUE_NULL;
	if (n->kind == MO_NODE_SEQ)
		return MO_VALUE_LIST;
	if (n->kind == MO_NODE_MAP)
		return MO_VALUE_MAP;
	switch (scalar_resolve(n)) {
	case MO_SCALAR_NULL:
		return MO_VALUE_NULL;
	case MO_SCALAR_BOOL:
		return scalar_bool(n, &b) ? MO_VALUE_BOOL : MO_VALUE_STRING;
	case MO_SCALAR_INT:
		return scalar_int(n, &i, &overflow) ? MO_VALUE_INT : MO_VALUE_STRING;
	case MO_SCALAR_FLOAT:
		return scalar_float(n, &d) ? MO_VALUE_FLOAT : MO_VALUE_STRING;
	case MO_SCALAR_STR:
		break;
	}
	return MO_VALUE_STRING;
}

int mo_node_bool(const mo_node *n)
{
	bool b = false;

	return n && n->kind == MO_NODE_SCALAR && scalar_bool(n, &b) && b;
}

int64_t mo_node_int(const mo_node *n)
{
	bool overflow = false;
	int64_t i = 0;

	if (!n || n->kind != MO_NODE_SCALAR || !scalar_int(n, &i, &overflow))
		return 0;
	return i;
}

double mo_node_float(const mo_node *n)
{
	double d = 0.0;

	if (!n || n->kind != MO_NODE_SCALAR || !scalar_float(n, &d))
		return 0.0;
	return d;
}

const char *mo_node_text(const mo_node *n, size_t *len)
{
	if (!n || n->kind != MO_NODE_SCALAR) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = n->len;
	return n->value;
}

size_t mo_node_count(const mo_node *n)
{
	if (!n || n->kind == MO_NODE_SCALAR)
		return 0;
	return n->kind == MO_NODE_MAP ? n->n / 2 : n->n;
}

const mo_node *mo_node_item(const mo_node *n, size_t i)
{
	if (i >= mo_node_count(n))
		return NULL;
	return n->kind == MO_NODE_MAP ? n->items[2 * i + 1] : n->items[i];
}

const mo_node *mo_node_key(const mo_node *n, size_t i)
{
	if (!n || n->kind != MO_NODE_MAP || i >= mo_node_count(n))
		return NULL;
	return n->items[2 * i];
}
