/* Configurations built from data: code that makes a config (the planner)
 * hands over modes, booleans, layer ranges and regexes, and gets a config
 * without printing YAML and parsing it back.
 *
 * The builder makes the document tree a parsed file would have (typed
 * scalars, mappings, sequences; no source text, positions 0) and the
 * section reader of config.c reads it. The tree is what the other readers
 * of a config see (validate and resolve read list sizes, pattern keys and
 * entry nodes), and one reader fills the struct (regexes compiled and
 * shared, diagnostic paths), so a built config and a parsed one cannot
 * differ in what they mean. */
#include "config/config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MO_BUILD_RECOMPUTE, MO_BUILD_COMM, MO_BUILD_SWAP, MO_BUILD_SECTIONS };

struct mo_config_builder {
	mo_doc *doc;                            /* the tree; its arena holds every node */
	mo_node *sections[MO_BUILD_SECTIONS];   /* section values, NULL until used */
	mo_node *lists[3];                      /* mo_config_list: pattern mappings */
	mo_node *layer_swap, *op_swap;          /* entry sequences */
	bool failed;                            /* out of memory */
	bool misused;                           /* a call with an argument out of range */
};

static const char *const mo_build_section_names[MO_BUILD_SECTIONS] = {"recompute",
								      "recompute_comm", "swap"};

/* ---- nodes ---------------------------------------------------------------------- */

static mo_node *build_node(mo_config_builder *b, mo_node_kind kind)
{
	mo_node *n = b->failed ? NULL : arena_alloc(b->doc->arena, sizeof(*n));
	if (!n) {
		b->failed = true;
		return NULL;
	}
	n->kind = kind;
	n->weight = 1; /* the tree is not expanded from aliases: nothing reads it */
	return n;
}

static mo_node *build_scalar(mo_config_builder *b, const char *text, mo_scalar_style style)
{
	mo_node *n = build_node(b, MO_NODE_SCALAR);
	char *value = n ? arena_strdup(b->doc->arena, text) : NULL;
	if (!value) {
		b->failed = true;
		return NULL;
	}
	n->value = value;
	n->len = strlen(value);
	n->style = style;
	return n;
}

/* Appends to a mapping or sequence; items grow by doubling from 4. */
static void build_append(mo_config_builder *b, mo_node *collection, mo_node *item)
{
	if (!collection || !item) {
		b->failed = true;
		return;
	}
	size_t n = collection->n;
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		size_t capacity = n == 0 ? 4 : 2 * n;
		mo_node **items = arena_alloc(b->doc->arena, capacity * sizeof(*items));
		if (!items) {
			b->failed = true;
			return;
		}
		if (n)
			memcpy(items, collection->items, n * sizeof(*items));
		collection->items = items;
	}
	collection->items[collection->n++] = item;
}

/* key: value in a mapping */
static void build_entry(mo_config_builder *b, mo_node *map, const char *key, mo_node *value)
{
	build_append(b, map, build_scalar(b, key, MO_STYLE_PLAIN));
	build_append(b, map, value);
}

static mo_node *build_plain(mo_config_builder *b, const char *text)
{
	return build_scalar(b, text, MO_STYLE_PLAIN);
}

static mo_node *build_bool(mo_config_builder *b, bool value)
{
	return build_plain(b, value ? "True" : "False");
}

/* A layer list: each range an int (one layer) or "lo-hi". */
static mo_node *build_layers(mo_config_builder *b, const mo_range *ranges, size_t n)
{
	mo_node *list = build_node(b, MO_NODE_SEQ);
	if (list)
		list->flow = true;
	for (size_t i = 0; list && i < n; i++) {
		char item[48];
		if (ranges[i].lo == ranges[i].hi)
			snprintf(item, sizeof item, "%" PRIu64, ranges[i].lo);
		else
			snprintf(item, sizeof item, "%" PRIu64 "-%" PRIu64, ranges[i].lo,
				 ranges[i].hi);
		build_append(b, list, build_plain(b, item));
	}
	return list;
}

static mo_node *build_section(mo_config_builder *b, int section)
{
	if (!b->sections[section]) {
		b->sections[section] = build_node(b, MO_NODE_MAP);
		build_entry(b, b->doc->root, mo_build_section_names[section],
			       b->sections[section]);
	}
	return b->sections[section];
}

static mo_node *build_entry_list(mo_config_builder *b, mo_node **list, const char *key)
{
	if (!*list) {
		*list = build_node(b, MO_NODE_SEQ);
		build_entry(b, build_section(b, MO_BUILD_SWAP), key, *list);
	}
	return *list;
}

/* ---- the calls ---------------------------------------------------------------- */

int config_builder_new(mo_config_builder **out, const char *name, mo_error *err)
{
	*out = NULL;
	mo_config_builder *b = calloc(1, sizeof(*b));
	mo_arena *arena = b ? arena_new() : NULL;
	mo_doc *doc = arena ? arena_alloc(arena, sizeof(*doc)) : NULL;
	if (doc) {
		doc->arena = arena;
		doc->name = arena_strdup(arena, name ? name : "<built>");
		b->doc = doc;
		doc->root = doc->name ? build_node(b, MO_NODE_MAP) : NULL;
	}
	if (!doc || !doc->root) {
		arena_free(arena);
		free(b);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	*out = b;
	return 0;
}

void config_builder_free(mo_config_builder *b)
{
	if (!b)
		return;
	doc_free(b->doc);
	free(b);
}

void config_build_mode(mo_config_builder *b, mo_mode mode)
{
	static const char *const modes[] = {"None", "full", "select"};
	build_entry(b, build_section(b, MO_BUILD_RECOMPUTE), "mode",
		       build_plain(b, (unsigned)mode < 3 ? modes[mode] : "None"));
}

void config_build_full(mo_config_builder *b, const mo_range *ranges, size_t n)
{
	build_entry(b, build_section(b, MO_BUILD_RECOMPUTE), "full_recompute_layer",
		       build_layers(b, ranges, n));
}

void config_build_pattern(mo_config_builder *b, mo_config_list list, const char *regex,
			     const mo_range *ranges, size_t n)
{
	static const char *const keys[] = {"select_module", "exclude_op", "select_module"};
	if ((unsigned)list > MO_CONFIG_COMM_SELECT_MODULE) {
		b->misused = true;
		return;
	}
	if (!b->lists[list]) {
		int section = list == MO_CONFIG_COMM_SELECT_MODULE ? MO_BUILD_COMM
								    : MO_BUILD_RECOMPUTE;
		b->lists[list] = build_node(b, MO_NODE_MAP);
		build_entry(b, build_section(b, section), keys[list], b->lists[list]);
	}
	build_append(b, b->lists[list], build_scalar(b, regex, MO_STYLE_SINGLE));
	build_append(b, b->lists[list], build_layers(b, ranges, n));
}

void config_build_comm(mo_config_builder *b, bool enable)
{
	build_entry(b, build_section(b, MO_BUILD_COMM), "enable", build_bool(b, enable));
}

void config_build_swap(mo_config_builder *b, bool enable)
{
	build_entry(b, build_section(b, MO_BUILD_SWAP), "enable", build_bool(b, enable));
}

void config_build_prefetch(mo_config_builder *b, int64_t prefetch)
{
	char text[32];
	snprintf(text, sizeof text, "%" PRId64, prefetch);
	build_entry(b, build_section(b, MO_BUILD_SWAP), "default_prefetch",
		       build_plain(b, text));
}

void config_build_layer_swap(mo_config_builder *b, const mo_range *ranges, size_t n)
{
	mo_node *entry = build_node(b, MO_NODE_MAP);
	build_entry(b, entry, "layers", build_layers(b, ranges, n));
	build_append(b, build_entry_list(b, &b->layer_swap, "layer_swap"), entry);
}

void config_build_op_swap(mo_config_builder *b, const char *regex, const mo_range *ranges,
			     size_t n)
{
	mo_node *entry = build_node(b, MO_NODE_MAP);
	build_entry(b, entry, "op_name", build_scalar(b, regex, MO_STYLE_SINGLE));
	build_entry(b, entry, "layers", build_layers(b, ranges, n));
	build_append(b, build_entry_list(b, &b->op_swap, "op_swap"), entry);
}

/* The reader's first error as the builder's. */
static int config_build_problem(const mo_diags *d, mo_error *err)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		if (g->severity == MO_SEV_ERROR) {
			error_set(err, MO_ERR_INVALID, 0, 0, "built config: %s: %s", g->code,
				     g->message);
			return -1;
		}
	}
	return 0;
}

int config_builder_finish(mo_config **out, mo_config_builder *b, mo_error *err)
{
	mo_diags *diags = NULL;
	mo_config *c = NULL;
	int rc = -1;
	*out = NULL;
	if (b->misused) {
		error_set(err, MO_ERR_USAGE, 0, 0, "built config: no such pattern list");
		goto out_free_builder;
	}
	if (b->failed || mo_diags_new(&diags) != 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		goto out_free_builder;
	}
	mo_doc *doc = b->doc;
	b->doc = NULL; /* the config owns it from here */
	if (config_read_tree(&c, diags, doc, NULL, err) != 0)
		goto out_free_builder;
	if (config_build_problem(diags, err) != 0) {
		mo_config_free(c);
		goto out_free_builder;
	}
	*out = c;
	rc = 0;
out_free_builder:
	mo_diags_free(diags);
	config_builder_free(b);
	return rc;
}
