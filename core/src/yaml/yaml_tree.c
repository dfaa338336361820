/* YAML (and JSON) text -> mo_node tree with 1-based positions and byte
 * offsets, built from libyaml's event API with explicit limits: input size,
 * nesting depth (libyaml 0.2.5 has none), node count with aliases expanded
 * (alias bombs), scalar size. Aliases share the anchored node. */
#include "yaml/yaml.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* An open collection; its items so far are items[base..] of the builder's
 * one item stack (no allocation per collection). */
typedef struct mo_frame {
	mo_node *node;
	size_t base;
} mo_frame;

typedef struct mo_anchor {
	const char *name;
	mo_node *node;
} mo_anchor;

typedef struct mo_builder {
	mo_doc *doc;
	mo_diags *diags;
	const mo_limits *lim;
	mo_error *err;
	const unsigned char *src;
	size_t srclen;
	/* char index -> byte offset cursor (libyaml marks count characters) */
	size_t cur_char, cur_byte;
	bool ascii;     /* no byte above 0x7f: a char index is a byte offset */
	mo_frame *stack;
	size_t depth, stack_cap;
	mo_node **items; /* the items of every open collection, innermost last */
	size_t n_items, cap_items;
	mo_anchor *anchors; /* open-addressing hash table */
	size_t anchor_cap, anchor_n;
	size_t total_weight;
	int docs;
	bool failed;    /* a diagnostic or error ended the build */
} mo_builder;

static bool utf8_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Byte offset of a libyaml character index. Marks arrive nearly in order,
 * so a cursor that walks forward (or back) is linear overall. */
static size_t byte_offset_utf8(mo_builder *b, size_t char_index)
{
	while (b->cur_char < char_index && b->cur_byte < b->srclen) {
		b->cur_byte++;
		while (b->cur_byte < b->srclen && utf8_cont(b->src[b->cur_byte]))
			b->cur_byte++;
		b->cur_char++;
	}
	while (b->cur_char > char_index && b->cur_byte > 0) {
		b->cur_byte--;
		while (b->cur_byte > 0 && utf8_cont(b->src[b->cur_byte]))
			b->cur_byte--;
		b->cur_char--;
	}
	return b->cur_byte;
}

static inline size_t byte_offset(mo_builder *b, size_t char_index)
{
	if (b->ascii)
		return char_index < b->srclen ? char_index : b->srclen;
	return byte_offset_utf8(b, char_index);
}

static bool all_ascii(const unsigned char *s, size_t n)
{
	uint64_t any = 0, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) { /* eight bytes a step */
		memcpy(&w, s + i, 8);
		any |= w;
	}
	for (; i < n; i++)
		any |= s[i];
	return (any & 0x8080808080808080ull) == 0;
}

static void builder_diag(mo_builder *b, const yaml_event_t *e,
			    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void builder_diag(mo_builder *b, const yaml_event_t *e,
			    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diags_vadd(b->diags, MO_SEV_ERROR, "yaml-syntax", b->doc->name,
		   (int)e->start_mark.line + 1, (int)e->start_mark.column + 1, NULL, fmt, ap);
	va_end(ap);
	b->failed = true;
}

/* A node with `extra` bytes behind it (a scalar's value: one arena
 * allocation for both). */
static inline __attribute__((always_inline)) mo_node *
node_new(mo_builder *b, mo_node_kind kind, const yaml_event_t *e, size_t extra)
{
	mo_node *n = arena_alloc_raw(b->doc->arena, sizeof(*n) + extra);
	if (!n)
		return NULL;
	/* one initializer: every field stored once, no separate zeroing */
	*n = (mo_node){.kind = kind,
		       .line = (int)(e->start_mark.line + 1),
		       .column = (int)(e->start_mark.column + 1),
		       .start = byte_offset(b, e->start_mark.index),
		       .end = byte_offset(b, e->end_mark.index),
		       .weight = 1};
	return n;
}

static mo_anchor *anchor_slot(mo_builder *b, const char *name)
{
	if (!b->anchor_cap)
		return NULL;
	size_t i = hash_str(MO_HASH_SEED, name) & (b->anchor_cap - 1);
	while (b->anchors[i].name && strcmp(b->anchors[i].name, name) != 0)
		i = (i + 1) & (b->anchor_cap - 1);
	return &b->anchors[i];
}

static bool anchor_put(mo_builder *b, const char *name, mo_node *node)
{
	if ((b->anchor_n + 1) * 2 > b->anchor_cap) {
		size_t cap = b->anchor_cap ? b->anchor_cap * 2 : 64;
		mo_anchor *old = b->anchors;
		size_t old_cap = b->anchor_cap;
		b->anchors = calloc(cap, sizeof(*b->anchors));
		if (!b->anchors) {
			b->anchors = old;
			return false;
		}
		b->anchor_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].name)
				*anchor_slot(b, old[i].name) = old[i];
		free(old);
	}
	mo_anchor *slot = anchor_slot(b, name);
	if (!slot->name)
		b->anchor_n++;
	slot->name = name; /* a redefined anchor replaces the old one */
	slot->node = node;
	return true;
}

static bool builder_nomem(mo_builder *b)
{
	error_set(b->err, MO_ERR_NOMEM, 0, 0, "out of memory parsing YAML");
	b->failed = true;
	return false;
}

/* Adds a finished node to the open collection (or makes it the root). */
static inline __attribute__((always_inline)) bool builder_attach(mo_builder *b, mo_node *n)
{
	if (b->depth == 0) {
		b->doc->root = n;
		return true;
	}
	mo_frame *f = &b->stack[b->depth - 1];
	if (b->n_items == b->cap_items) {
		size_t cap = b->cap_items ? b->cap_items * 2 : 64;
		mo_node **items = realloc(b->items, cap * sizeof(*items));
		if (!items)
			return builder_nomem(b);
		b->items = items;
		b->cap_items = cap;
	}
	b->items[b->n_items++] = n;
	f->node->weight += n->weight;
	return true;
}

static bool builder_count(mo_builder *b, size_t weight, const yaml_event_t *e)
{
	b->total_weight += weight;
	if (b->total_weight > b->lim->max_nodes || weight > b->lim->max_nodes) {
		builder_diag(b, e, "document too large: more than %zu nodes with aliases expanded",
				b->lim->max_nodes);
		return false;
	}
	return true;
}

static const char *builder_tag(mo_builder *b, const yaml_char_t *tag)
{
	return tag ? arena_strdup(b->doc->arena, (const char *)tag) : NULL;
}

static bool builder_anchor(mo_builder *b, mo_node *n, const yaml_char_t *anchor)
{
	if (!anchor)
		return true;
	n->anchor = arena_strdup(b->doc->arena, (const char *)anchor);
	if (!n->anchor)
		return builder_nomem(b);
	return true;
}

static bool on_scalar(mo_builder *b, const yaml_event_t *e)
{
	if (e->data.scalar.length > b->lim->max_scalar_bytes) {
		builder_diag(b, e, "scalar of %zu bytes exceeds the limit of %zu",
				(size_t)e->data.scalar.length, b->lim->max_scalar_bytes);
		return false;
	}
	if (!builder_count(b, 1, e))
		return false;
	size_t len = e->data.scalar.length;
	mo_node *n = node_new(b, MO_NODE_SCALAR, e, len + 1);
	if (!n)
		return builder_nomem(b);
	char *value = (char *)(n + 1);
	if (len)
		memcpy(value, e->data.scalar.value, len);
	value[len] = '\0';
	n->value = value;
	n->len = len;
	n->tag = builder_tag(b, e->data.scalar.tag);
	switch (e->data.scalar.style) {
	case YAML_SINGLE_QUOTED_SCALAR_STYLE: n->style = MO_STYLE_SINGLE; break;
	case YAML_DOUBLE_QUOTED_SCALAR_STYLE: n->style = MO_STYLE_DOUBLE; break;
	case YAML_LITERAL_SCALAR_STYLE: n->style = MO_STYLE_LITERAL; break;
	case YAML_FOLDED_SCALAR_STYLE: n->style = MO_STYLE_FOLDED; break;
	default: n->style = MO_STYLE_PLAIN; break;
	}
	if (!builder_anchor(b, n, e->data.scalar.anchor))
		return false;
	if (n->anchor && !anchor_put(b, n->anchor, n))
		return builder_nomem(b);
	return builder_attach(b, n);
}

static inline __attribute__((always_inline)) bool
on_start(mo_builder *b, const yaml_event_t *e, mo_node_kind kind)
{
	if (b->depth >= b->lim->max_depth) {
		builder_diag(b, e, "nesting deeper than %zu levels", b->lim->max_depth);
		return false;
	}
	if (!builder_count(b, 1, e))
		return false;
	mo_node *n = node_new(b, kind, e, 0);
	if (!n)
		return builder_nomem(b);
	const yaml_char_t *anchor, *tag;
	if (kind == MO_NODE_SEQ) {
		anchor = e->data.sequence_start.anchor;
		tag = e->data.sequence_start.tag;
		n->flow = e->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
	} else {
		anchor = e->data.mapping_start.anchor;
		tag = e->data.mapping_start.tag;
		n->flow = e->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
	}
	n->tag = builder_tag(b, tag);
	if (!builder_anchor(b, n, anchor))
		return false;
	if (b->depth == b->stack_cap) {
		size_t cap = b->stack_cap ? b->stack_cap * 2 : 16;
		mo_frame *s = realloc(b->stack, cap * sizeof(*s));
		if (!s)
			return builder_nomem(b);
		b->stack = s;
		b->stack_cap = cap;
	}
	b->stack[b->depth++] = (mo_frame){.node = n, .base = b->n_items};
	return true;
}

static int key_cmp(const void *pa, const void *pb)
{
	const mo_node *a = **(const mo_node *const *const *)pa;
	const mo_node *b = **(const mo_node *const *const *)pb;
	size_t la = a->len, lb = b->len;
	int c = memcmp(a->value, b->value, la < lb ? la : lb);
	if (c)
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	/* equal keys: source order, so the later one is reported */
	return a->start < b->start ? -1 : (a->start > b->start);
}

static void insertion_sort(mo_node ***keys, size_t m)
{
	for (size_t i = 1; i < m; i++) {
		mo_node **k = keys[i];
		size_t j = i;
		for (; j > 0 && key_cmp(&keys[j - 1], &k) > 0; j--)
			keys[j] = keys[j - 1];
		keys[j] = k;
	}
}

/* A key's slot hash: sampled (a collision costs only a memcmp, <= 64
 * keys). */
static uint64_t bytes_hash(const char *s, size_t n)
{
	uint64_t h = hash_sampled(s, n);
	return h ^ h >> 29;
}

/* Whether two scalar keys of a map of at most 64 keys are equal: a hash
 * set on the stack, so the sort below runs only when there is something
 * to report (rare). */
static bool small_map_has_duplicate(const mo_node *map)
{
	const mo_node *slot[128];
	size_t cap = 8; /* a power of two >= twice the keys (<= 64) */
	if (map->n <= 16) { /* up to 8 keys: each pair, no table to clear */
		for (size_t i = 0; i + 1 < map->n; i += 2) {
			const mo_node *a = map->items[i];
			if (a->kind != MO_NODE_SCALAR)
				continue;
			for (size_t j = i + 2; j + 1 < map->n; j += 2) {
				const mo_node *k = map->items[j];
				if (k->kind == MO_NODE_SCALAR && k->len == a->len &&
				    memcmp(k->value, a->value, a->len) == 0)
					return true;
			}
		}
		return false;
	}
	while (cap < map->n)
		cap *= 2;
	memset(slot, 0, cap * sizeof(*slot));
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const mo_node *k = map->items[i];
		if (k->kind != MO_NODE_SCALAR)
			continue;
		size_t j = (size_t)bytes_hash(k->value, k->len) & (cap - 1);
		for (; slot[j]; j = (j + 1) & (cap - 1))
			if (slot[j]->len == k->len && memcmp(slot[j]->value, k->value, k->len) == 0)
				return true;
		slot[j] = k;
	}
	return false;
}

/* duplicate-key: PyYAML would silently keep the last value. */
static void check_duplicates(mo_builder *b, const mo_node *map)
{
	size_t nk = map->n / 2, m = 0;
	if (nk < 2 || (nk <= 64 && !small_map_has_duplicate(map)))
		return;
	/* small maps (most) sort on the stack: the order is total (keys, then
	 * source offsets), so any sort gives the same pairs */
	mo_node **small[32];
	mo_node ***keys = nk <= 32 ? small : malloc(nk * sizeof(*keys));
	if (!keys)
		return;
	for (size_t i = 0; i < nk; i++)
		if (map->items[2 * i]->kind == MO_NODE_SCALAR)
			keys[m++] = &map->items[2 * i];
	if (keys == small)
		insertion_sort(keys, m);
	else
		qsort(keys, m, sizeof(*keys), key_cmp);
	for (size_t i = 1; i < m; i++) {
		const mo_node *prev = *keys[i - 1], *k = *keys[i];
		if (prev->len == k->len && memcmp(prev->value, k->value, k->len) == 0) {
			mo_diag *d = diags_add_at(
				b->diags, MO_SEV_ERROR, "duplicate-key", b->doc->name, k,
				NULL, "duplicate key '%.*s' (first at line %d); a YAML loader keeps only the last",
				(int)(k->len > 80 ? 80 : k->len), k->value, prev->line);
			diag_set_hint(b->diags, d, "remove one of the two '%.*s' entries",
					 (int)(k->len > 80 ? 80 : k->len), k->value);
		}
	}
	if (keys != small)
		free(keys);
}

static bool on_end(mo_builder *b, const yaml_event_t *e)
{
	mo_frame f = b->stack[--b->depth];
	mo_node *n = f.node;
	size_t count = b->n_items - f.base;
	n->end = byte_offset(b, e->end_mark.index);
	n->n = count;
	if (count) {
		n->items = arena_alloc_raw(b->doc->arena, count * sizeof(*n->items));
		if (!n->items)
			return builder_nomem(b);
		memcpy(n->items, b->items + f.base, count * sizeof(*n->items));
	}
	b->n_items = f.base;
	if (n->kind == MO_NODE_MAP) {
		n->n /= 2;
		n->n *= 2; /* libyaml always pairs keys and values */
		check_duplicates(b, n);
	}
	if (n->anchor && !anchor_put(b, n->anchor, n))
		return builder_nomem(b);
	return builder_attach(b, n);
}

static bool on_alias(mo_builder *b, const yaml_event_t *e)
{
	mo_anchor *a = anchor_slot(b, (const char *)e->data.alias.anchor);
	if (!a || !a->name) {
		builder_diag(b, e, "alias '*%.80s' refers to no complete anchor",
				(const char *)e->data.alias.anchor);
		return false;
	}
	/* the expansion counts in full: a billion laughs stops here */
	if (!builder_count(b, a->node->weight, e))
		return false;
	a->node->is_alias_target = true;
	if (b->depth == 0) {
		b->doc->root = a->node;
		return true;
	}
	return builder_attach(b, a->node);
}

static bool on_event(mo_builder *b, const yaml_event_t *e)
{
	switch (e->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1) {
			builder_diag(b, e, "a second YAML document starts here; a config file holds one");
			return false;
		}
		return true;
	case YAML_SCALAR_EVENT:
		return on_scalar(b, e);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, e, MO_NODE_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, e, MO_NODE_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b, e);
	case YAML_ALIAS_EVENT:
		return on_alias(b, e);
	default:
		return true;
	}
}

static void parser_diag(mo_builder *b, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "invalid YAML";
	int line, col;
	if (p->error == YAML_READER_ERROR) {
		/* reader errors carry a byte offset only */
		size_t off = p->problem_offset, l = 1, c = 1;
		for (size_t i = 0; i < off && i < b->srclen; i++) {
			if (b->src[i] == '\n') {
				l++;
				c = 1;
			} else if (!utf8_cont(b->src[i])) {
				c++;
			}
		}
		line = (int)l;
		col = (int)c;
		diags_add(b->diags, MO_SEV_ERROR, "yaml-syntax", b->doc->name, line,
			     col, NULL, "%s (byte 0x%02x at offset %zu)", problem,
			     (unsigned)(p->problem_value & 0xff), off);
		b->failed = true;
		return;
	}
	line = (int)p->problem_mark.line + 1;
	col = (int)p->problem_mark.column + 1;
	if (p->context)
		diags_add(b->diags, MO_SEV_ERROR, "yaml-syntax", b->doc->name, line,
			     col, NULL, "%s %s (line %d)", problem, p->context,
			     (int)p->context_mark.line + 1);
	else
		diags_add(b->diags, MO_SEV_ERROR, "yaml-syntax", b->doc->name, line,
			     col, NULL, "%s", problem);
	b->failed = true;
}

static int builder_run(mo_builder *b)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return builder_nomem(b), -1;
	yaml_parser_set_input_string(&parser, b->src, b->srclen);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	b->ascii = all_ascii(b->src, b->srclen);
	bool done = false;
	while (!done && !b->failed) {
		yaml_event_t e;
		if (!yaml_parser_parse(&parser, &e)) {
			if (parser.error == YAML_MEMORY_ERROR)
				builder_nomem(b);
			else
				parser_diag(b, &parser);
			break;
		}
		done = e.type == YAML_STREAM_END_EVENT;
		on_event(b, &e);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&parser);
	free(b->items);
	free(b->stack);
	free(b->anchors);
	if (b->err && b->err->code == MO_ERR_NOMEM)
		return -1;
	return b->failed ? 1 : 0;
}

void doc_free(mo_doc *d)
{
	if (d)
		arena_free(d->arena);
}

static mo_doc *doc_new(const char *text, size_t len, const char *name)
{
	mo_arena *a = arena_new();
	if (!a)
		return NULL;
	mo_doc *d = arena_alloc(a, sizeof(*d));
	char *src = d ? arena_strndup(a, text, len) : NULL;
	const char *label = src ? arena_strdup(a, name ? name : "<input>") : NULL;
	if (!label) {
		arena_free(a);
		return NULL;
	}
	d->arena = a;
	d->src = src;
	d->srclen = len;
	d->name = label;
	return d;
}

int yaml_tree_parse(mo_doc **out, mo_diags *diags, const char *text, size_t len,
		  const char *name, const mo_limits *lim, mo_error *err)
{
	mo_limits defaults;
	if (!lim) {
		mo_limits_default(&defaults);
		lim = &defaults;
	}
	*out = NULL;
	if (len > lim->max_bytes) {
		error_set(err, MO_ERR_LIMIT, 0, 0,
			     "input is %zu bytes; the limit is %zu", len, lim->max_bytes);
		return -1;
	}
	mo_doc *doc = doc_new(text ? text : "", text ? len : 0, name);
	if (!doc) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_builder b = {.doc = doc, .diags = diags, .lim = lim, .err = err,
			.src = (const unsigned char *)doc->src, .srclen = doc->srclen};
	/* libyaml's marks do not count a UTF-8 byte order mark: start the
	 * character cursor past it so byte offsets still index doc->src */
	if (doc->srclen >= 3 && memcmp(doc->src, "\xEF\xBB\xBF", 3) == 0)
		b.cur_byte = 3;
	int rc = builder_run(&b);
	if (rc != 0) {
		doc_free(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

/* The non-finite number Python's json module writes by default
 * (allow_nan=True: Infinity, -Infinity, NaN), when it is the token a
 * failed decode stopped at (je.position: the byte after it); NULL when the
 * token is anything else. Hugging Face's config.json files are written by
 * that module (Nemotron-H's time_step_limit: [0.0, Infinity]). */
static const char *json_python_nonfinite(const char *text, size_t len, const json_error_t *je)
{
	static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
	if (json_error_code(je) != json_error_invalid_syntax || je->position <= 0 ||
	    (size_t)je->position > len)
		return NULL;
	size_t end = (size_t)je->position, start = end;
	while (start > 0 && (isalpha((unsigned char)text[start - 1]) || text[start - 1] == '-'))
		start--;
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (end - start == strlen(words[i]) && memcmp(text + start, words[i], end - start) == 0)
			return words[i];
	return NULL;
}

/* JSON: jansson decides whether the text is JSON (exact errors with line
 * and column); the tree itself comes from libyaml, which reads JSON as a
 * YAML flow document and keeps every node's position. A non-finite number
 * as Python writes it is read that way too (a plain scalar, the text
 * itself), with a warning: JSON has no such number, and the rest of the
 * text is left to libyaml's syntax check. */
int json_parse(mo_doc **out, mo_diags *diags, const char *text, size_t len,
		  const char *name, const mo_limits *lim, mo_error *err)
{
	*out = NULL;
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	const char *nonfinite = j ? NULL : json_python_nonfinite(text, len, &je);
	if (nonfinite) {
		/* jansson's column is the token's last character */
		int column = je.column - (int)strlen(nonfinite) + 1;
		diags_add(diags, MO_SEV_WARNING, "yaml-syntax", name ? name : "<input>",
			  je.line > 0 ? je.line : 1, column > 0 ? column : 1, NULL,
			  "JSON has no %s: Python's json module writes it for a non-finite "
			  "float; read as the text '%s'",
			  nonfinite, nonfinite);
		return yaml_tree_parse(out, diags, text, len, name, lim, err);
	}
	if (!j) {
		bool dup = json_error_code(&je) == json_error_duplicate_key;
		diags_add(diags, MO_SEV_ERROR, dup ? "duplicate-key" : "yaml-syntax",
			     name ? name : "<input>", je.line > 0 ? je.line : 1,
			     je.column > 0 ? je.column : 1, NULL, "JSON: %s", json_error_words(&je));
		return 1;
	}
	json_decref(j);
	/* JSON's plain scalars (numbers, true, false, null) resolve the same
	 * under the YAML 1.1 rules; its strings are quoted, hence strings. */
	return yaml_tree_parse(out, diags, text, len, name, lim, err);
}

mo_node *map_get_kv(const mo_node *map, const char *key, const mo_node **key_out)
{
	if (key_out)
		*key_out = NULL;
	if (!map || map->kind != MO_NODE_MAP)
		return NULL;
	size_t klen = strlen(key);
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		mo_node *k = map->items[i];
		if (k->kind == MO_NODE_SCALAR && k->len == klen &&
		    memcmp(k->value, key, klen) == 0) {
			if (key_out)
				*key_out = k;
			return map->items[i + 1];
		}
	}
	return NULL;
}

mo_node *map_get(const mo_node *map, const char *key)
{
	return map_get_kv(map, key, NULL);
}

mo_diag *diags_add_at(mo_diags *d, mo_severity sev, const char *code,
			 const char *file, const mo_node *at, const char *path,
			 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mo_diag *r = diags_vadd(d, sev, code, file, at ? at->line : 0,
				   at ? at->column : 0, path, fmt, ap);
	va_end(ap);
	return r;
}
