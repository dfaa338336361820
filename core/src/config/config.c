/* The three sections (docs/config-language.md): structure, types and patterns. Everything that
 * needs no model is checked here; model-dependent rules are in validate.c. */
#include "config/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_CFG_SEEN 256

typedef struct mo_cfg_parser {
	mo_config *c;
	mo_diags *diags;
	const char *file;
	mo_arena *a;
	size_t n_patterns;
	bool pattern_limit_reported;
	/* compiled patterns by text: a repeated text shares the first's regex
	 * (open addressing; a full table just stops sharing) */
	const mo_pattern *seen[MO_CFG_SEEN];
	uint32_t seen_hash[MO_CFG_SEEN];
	size_t n_seen;
} mo_cfg_parser;

static const char *const mo_sections[] = {"recompute", "recompute_comm", "swap"};
static const char *const mo_recompute_keys[] = {"mode", "full_recompute_layer",
						"select_module", "exclude_op", "discard_module"};
static const char *const mo_comm_keys[] = {"enable", "select_module"};
static const char *const mo_swap_keys[] = {"enable", "default_prefetch", "layer_swap",
					   "op_swap"};
static const char *const mo_layer_swap_keys[] = {"layers"};
static const char *const mo_op_swap_keys[] = {"op_name", "layers"};

#define MO_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void cfg_error(mo_cfg_parser *p, const char *code, const mo_node *at,
			 const char *path, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void cfg_error(mo_cfg_parser *p, const char *code, const mo_node *at,
			 const char *path, const char *hint, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	mo_diag *d = diags_add_at(p->diags, MO_SEV_ERROR, code, p->file, at, path,
				     "%s", msg);
	if (hint)
		diag_set_hint(p->diags, d, "%s", hint);
	p->c->structural_errors = true;
}

/* Key text for messages: at most 60 bytes. */
static int config_key_length(const mo_node *k)
{
	return k->len > 60 ? 60 : (int)k->len;
}

static bool key_is(const mo_node *k, const char *name)
{
	return k->kind == MO_NODE_SCALAR && k->len == strlen(name) &&
	       memcmp(k->value, name, k->len) == 0;
}

static bool key_known(const mo_node *k, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (key_is(k, keys[i]))
			return true;
	return false;
}

/* Keys of the early schema (and of graph-mode recompute_config) written
 * inside the sections, with what says the same now. */
static const char *const mo_cfg_old_keys[] = {
	"full_recompute", "did you mean 'mode: full' with 'full_recompute_layer: [...]'?",
	"recompute", "did you mean 'mode: full' with 'full_recompute_layer: [...]'?",
	"select_recompute", "did you mean 'mode: select' with 'select_module: {...}'?",
	"select_recompute_layer", "did you mean 'mode: select' with 'select_module: {...}'?",
	"select_comm_recompute", "comm recompute is its own section: 'recompute_comm: {enable: True, "
				 "select_module: {...}}'",
	"recompute_layers", "did you mean 'full_recompute_layer'?",
	NULL};

static const char *cfg_old_key_hint(const mo_node *k)
{
	for (size_t i = 0; mo_cfg_old_keys[i]; i += 2)
		if (key_is(k, mo_cfg_old_keys[i]))
			return mo_cfg_old_keys[i + 1];
	return NULL;
}

/* Reports every key of `map` that is not in `keys`, with "did you mean". */
static void cfg_unknown_keys(mo_cfg_parser *p, const mo_node *map,
				const char *const *keys, size_t n, const char *path)
{
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const mo_node *k = map->items[i];
		if (k->kind != MO_NODE_SCALAR) {
			cfg_error(p, "type", k, path, NULL, "a key must be a string, got %s",
				     node_type_name(k));
			continue;
		}
		if (key_known(k, keys, n))
			continue;
		char kbuf[64], hint[128];
		snprintf(kbuf, sizeof kbuf, "%.*s", config_key_length(k), k->value);
		const char *best = did_you_mean(kbuf, keys, n);
		char list[256] = "";
		for (size_t j = 0; j < n; j++) {
			strncat(list, keys[j], sizeof list - strlen(list) - 1);
			if (j + 1 < n)
				strncat(list, ", ", sizeof list - strlen(list) - 1);
		}
		const char *old = cfg_old_key_hint(k);
		if (old)
			snprintf(hint, sizeof hint, "%s", old);
		else if (best)
			snprintf(hint, sizeof hint, "did you mean '%s'?", best);
		else
			snprintf(hint, sizeof hint, "known keys: %.100s", list);
		cfg_error(p, "unknown-key", k, path, hint, "unknown key '%s' in %s", kbuf,
			     path);
	}
}

static char *cfg_key_path(mo_cfg_parser *p, const char *parent, const char *key)
{
	const char *parts[] = {parent, ".", key};
	size_t lens[] = {strlen(parent), 1, strlen(key)};
	return arena_concat(p->a, parts, lens, 3);
}

/* select_module['<regex>'] with the quote that keeps it readable (the
 * regex cut at 200 bytes or at a NUL, as "%.*s" would). */
static char *cfg_pattern_path(mo_cfg_parser *p, const char *parent, size_t plen,
				 const mo_node *k)
{
	bool has_single = memchr(k->value, '\'', k->len) != NULL;
	size_t len = strnlen(k->value, k->len > 200 ? 200 : k->len);
	char *s = arena_alloc_raw(p->a, plen + len + 5);
	if (!s)
		return NULL;
	memcpy(s, parent, plen);
	memcpy(s + plen, has_single ? "[\"" : "['", 2);
	memcpy(s + plen + 2, k->value, len);
	memcpy(s + plen + 2 + len, has_single ? "\"]" : "']", 3); /* with the NUL */
	return s;
}

static bool cfg_bool(mo_cfg_parser *p, const mo_node *v, const char *path, bool *out)
{
	if (scalar_bool(v, out))
		return true;
	if (v->kind == MO_NODE_SCALAR && scalar_resolve(v) == MO_SCALAR_STR) {
		bool b;
		mo_node plain = *v;
		plain.style = MO_STYLE_PLAIN;
		plain.tag = NULL;
		if (scalar_bool(&plain, &b)) {
			char hint[64];
			snprintf(hint, sizeof hint, "write %s without quotes", b ? "True" : "False");
			cfg_error(p, "type", v, path, hint,
				     "expected a boolean, got the string '%.*s'", config_key_length(v),
				     v->value);
			return false;
		}
	}
	cfg_error(p, "type", v, path, "write True or False", "expected a boolean, got %s",
		     node_type_name(v));
	return false;
}

/* A pattern text's hash, by its length and first and last eight bytes: a
 * collision costs a memcmp, and the table holds at most 192 texts.
 * Multiplicative, modulo 2^64 by design. */
static uint32_t cfg_text_hash(const char *text, size_t len)
{
	uint64_t hh = hash_sampled(text, len);
	return (uint32_t)(hh ^ hh >> 32);
}

/* A pattern whose shape backtracks exponentially is refused where it
 * enters, at the repeat that makes it so (PCRE2's limits and the work
 * budget would bound it, at the cost of the whole budget). */
static bool cfg_shape_refused(mo_cfg_parser *p, const mo_pattern *pat, size_t len)
{
	size_t off = 0;
	const char *why = regex_shape_check(pat->regex, len, &off);

	if (!why)
		return false;
	mo_node at = *pat->key;
	at.column += (int)off + (at.style == MO_STYLE_PLAIN ? 0 : 1);
	cfg_error(p, "pattern-shape", &at, pat->dpath,
		  "repeat the wildcard once ('.*' rather than '(.*)*'), or make the inner repeat "
		  "possessive ('*+', '(?>...)')",
		  "pattern '%.*s': %s (offset %zu)", config_key_length(pat->key), pat->regex, why,
		  off);
	return true;
}

static void cfg_compile(mo_cfg_parser *p, mo_pattern *pat)
{
	if (++p->n_patterns > p->c->lim.max_patterns) {
		if (!p->pattern_limit_reported)
			cfg_error(p, "regex", pat->key, pat->dpath, NULL,
				     "more than %zu patterns: the rest are not compiled",
				     p->c->lim.max_patterns);
		p->pattern_limit_reported = true;
		return;
	}
	const char *msg;
	size_t off;
	size_t len = pat->key->len;
	uint32_t h = cfg_text_hash(pat->regex, len);
	size_t slot = h & (MO_CFG_SEEN - 1);
	for (; p->seen[slot]; slot = (slot + 1) & (MO_CFG_SEEN - 1)) {
		const mo_pattern *q = p->seen[slot];
		if (p->seen_hash[slot] == h && q->key->len == len &&
		    memcmp(q->regex, pat->regex, len) == 0) {
			pat->re = regex_share(q->re);
			return;
		}
	}
	if (cfg_shape_refused(p, pat, len))
		return;
	pat->re = regex_compile(pat->regex, len, &p->c->lim, p->a, &msg, &off);
	if (pat->re) {
		if (p->n_seen < MO_CFG_SEEN * 3 / 4) {
			p->seen[slot] = pat;
			p->seen_hash[slot] = h;
			p->n_seen++;
		}
		return;
	}
	/* point at the offending character: quoted keys start one column later */
	mo_node at = *pat->key;
	at.column += (int)off + (at.style == MO_STYLE_PLAIN ? 0 : 1);
	cfg_error(p, "regex", &at, pat->dpath, "patterns are PCRE2, full-matched like re.fullmatch",
		     "pattern '%.*s' does not compile: %s at offset %zu", config_key_length(pat->key),
		     pat->regex, msg ? msg : "error", off);
}

static bool cfg_pattern_key(mo_cfg_parser *p, const mo_node *k, const char *path)
{
	if (k->kind != MO_NODE_SCALAR || scalar_resolve(k) != MO_SCALAR_STR) {
		cfg_error(p, "type", k, path, "quote the pattern: '...'",
			     "a pattern must be a string, got %s", node_type_name(k));
		return false;
	}
	if (k->len == 0) {
		cfg_error(p, "regex", k, path, NULL, "empty pattern matches no path");
		return false;
	}
	return true;
}

/* {regex: layer specs} */
static void cfg_patterns(mo_cfg_parser *p, mo_pattern_list *out, const mo_node *v,
			    const char *path)
{
	memset(out, 0, sizeof(*out));
	if (!v || scalar_resolve(v) == MO_SCALAR_NULL)
		return;
	out->at = v;
	if (v->kind != MO_NODE_MAP) {
		cfg_error(p, "type", v, path, "write a mapping such as {'.*mlp': [0-31]}",
			     "expected a mapping of pattern to layers, got %s",
			     node_type_name(v));
		return;
	}
	out->p = v->n ? arena_alloc(p->a, v->n / 2 * sizeof(*out->p)) : NULL;
	size_t plen = strlen(path);
	for (size_t i = 0; out->p && i + 1 < v->n; i += 2) {
		const mo_node *k = v->items[i];
		if (!cfg_pattern_key(p, k, path))
			continue;
		mo_pattern *pat = &out->p[out->n++];
		pat->key = k;
		pat->regex = k->value;
		pat->dpath = cfg_pattern_path(p, path, plen, k);
		layers_parse(&pat->layers, p->a, p->diags, p->file, v->items[i + 1],
				pat->dpath);
		if (!pat->layers.ok)
			p->c->structural_errors = true;
		cfg_compile(p, pat);
	}
}

/* discard_module's patterns join select_module's, after them, marked. */
static void cfg_discard(mo_cfg_parser *p, const mo_node *v)
{
	mo_config *c = p->c;
	mo_pattern_list d;
	cfg_patterns(p, &d, v, "recompute.discard_module");
	c->discard_at = d.at;
	if (!d.n)
		return;
	mo_pattern *all = arena_alloc(p->a, (c->select.n + d.n) * sizeof(*all));
	if (!all) {
		for (size_t i = 0; i < d.n; i++)
			regex_free(d.p[i].re);
		return;
	}
	if (c->select.n)
		memcpy(all, c->select.p, c->select.n * sizeof(*all));
	for (size_t i = 0; i < d.n; i++) {
		all[c->select.n + i] = d.p[i];
		all[c->select.n + i].discard = true;
	}
	c->select.p = all;
	c->select.n += d.n;
}

static void cfg_layers(mo_cfg_parser *p, mo_layers *out, const mo_node *v,
			  const char *path)
{
	if (v && scalar_resolve(v) == MO_SCALAR_NULL && v->kind == MO_NODE_SCALAR) {
		memset(out, 0, sizeof(*out));
		return;
	}
	layers_parse(out, p->a, p->diags, p->file, v, path);
	if (v && !out->ok)
		p->c->structural_errors = true;
}

static void cfg_mode(mo_cfg_parser *p, const mo_node *v)
{
	static const char *const modes[] = {"None", "full", "select"};
	mo_config *c = p->c;
	c->mode_at = v;
	if (v->kind == MO_NODE_SCALAR && scalar_resolve(v) == MO_SCALAR_NULL) {
		diags_add_at(p->diags, MO_SEV_WARNING, "mode-invalid", p->file, v,
				"recompute.mode", "mode is null; read as \"None\" (no recompute)");
		return;
	}
	if (v->kind == MO_NODE_SCALAR && scalar_resolve(v) == MO_SCALAR_STR) {
		for (size_t i = 0; i < 3; i++)
			if (key_is(v, modes[i])) {
				c->mode = (mo_mode)i;
				return;
			}
	}
	char vbuf[64], hint[96] = "use None, full or select";
	snprintf(vbuf, sizeof vbuf, "%.*s", v->kind == MO_NODE_SCALAR ? config_key_length(v) : 0,
		 v->kind == MO_NODE_SCALAR ? v->value : "");
	for (size_t i = 0; i < 3; i++)
		if (strcasecmp(vbuf, modes[i]) == 0 ||
		    edit_distance(vbuf, modes[i], 2) <= 2)
			snprintf(hint, sizeof hint, "did you mean '%s'?", modes[i]);
	if (v->kind == MO_NODE_SCALAR)
		cfg_error(p, "mode-invalid", v, "recompute.mode", hint,
			     "mode '%s' is not None, full or select", vbuf);
	else
		cfg_error(p, "mode-invalid", v, "recompute.mode", hint,
			     "mode must be None, full or select, got %s", node_type_name(v));
}

static bool cfg_section_map(mo_cfg_parser *p, const mo_node *v, const char *name)
{
	if (scalar_resolve(v) == MO_SCALAR_NULL && v->kind == MO_NODE_SCALAR)
		return false; /* `recompute:` with nothing: the defaults */
	if (v->kind == MO_NODE_MAP)
		return true;
	cfg_error(p, "type", v, name, NULL, "section %s must be a mapping, got %s", name,
		     node_type_name(v));
	return false;
}

static void cfg_recompute(mo_cfg_parser *p, const mo_node *v)
{
	mo_config *c = p->c;
	c->has_recompute = true;
	if (!cfg_section_map(p, v, "recompute"))
		return;
	cfg_unknown_keys(p, v, mo_recompute_keys, MO_COUNT(mo_recompute_keys), "recompute");
	const mo_node *mode = map_get(v, "mode");
	if (mode)
		cfg_mode(p, mode);
	cfg_layers(p, &c->full, map_get(v, "full_recompute_layer"),
		      "recompute.full_recompute_layer");
	cfg_patterns(p, &c->select, map_get(v, "select_module"), "recompute.select_module");
	cfg_patterns(p, &c->exclude, map_get(v, "exclude_op"), "recompute.exclude_op");
	cfg_discard(p, map_get(v, "discard_module"));
}

static void cfg_comm(mo_cfg_parser *p, const mo_node *v)
{
	mo_config *c = p->c;
	c->has_comm = true;
	if (!cfg_section_map(p, v, "recompute_comm"))
		return;
	cfg_unknown_keys(p, v, mo_comm_keys, MO_COUNT(mo_comm_keys), "recompute_comm");
	const mo_node *en = map_get(v, "enable");
	c->comm_enable_at = en;
	if (en && scalar_resolve(en) != MO_SCALAR_NULL)
		cfg_bool(p, en, "recompute_comm.enable", &c->comm_enable);
	cfg_patterns(p, &c->comm, map_get(v, "select_module"),
			"recompute_comm.select_module");
}

static void cfg_prefetch(mo_cfg_parser *p, const mo_node *v)
{
	int64_t x;
	bool overflow;
	p->c->prefetch_at = v;
	if (scalar_int(v, &x, &overflow)) {
		p->c->prefetch = x;
		return;
	}
	const char *hint = NULL;
	char buf[64];
	if (v->kind == MO_NODE_SCALAR && scalar_resolve(v) == MO_SCALAR_STR) {
		mo_node plain = *v;
		plain.style = MO_STYLE_PLAIN;
		plain.tag = NULL;
		if (scalar_int(&plain, &x, &overflow)) {
			snprintf(buf, sizeof buf, "write %lld without quotes", (long long)x);
			hint = buf;
		}
	}
	cfg_error(p, "type", v, "swap.default_prefetch", hint,
		     overflow ? "default_prefetch is out of range"
			      : "default_prefetch must be an integer, got %s",
		     node_type_name(v));
}

/* A list of mappings; returns false (after a diagnostic) otherwise. */
static bool cfg_entry_list(mo_cfg_parser *p, const mo_node *v, const char *path,
			      const char *example)
{
	if (v->kind == MO_NODE_SEQ)
		return true;
	cfg_error(p, "type", v, path, example, "%s must be a list of entries, got %s", path,
		     node_type_name(v));
	return false;
}

static void cfg_layer_swap(mo_cfg_parser *p, const mo_node *v)
{
	mo_config *c = p->c;
	c->layer_swap_at = v;
	if (scalar_resolve(v) == MO_SCALAR_NULL && v->kind == MO_NODE_SCALAR)
		return;
	if (!cfg_entry_list(p, v, "swap.layer_swap", "write - layers: [16-30]"))
		return;
	c->layer_swap = v->n ? arena_alloc(p->a, v->n * sizeof(*c->layer_swap)) : NULL;
	for (size_t i = 0; c->layer_swap && i < v->n; i++) {
		const mo_node *e = v->items[i];
		char *path = arena_indexed(p->a, "swap.layer_swap", i);
		if (e->kind != MO_NODE_MAP) {
			cfg_error(p, "type", e, path, "write - layers: [16-30]",
				     "a layer_swap entry must be a mapping with 'layers', got %s",
				     node_type_name(e));
			continue;
		}
		cfg_unknown_keys(p, e, mo_layer_swap_keys, 1, path);
		const mo_node *layers = map_get(e, "layers");
		if (!layers) {
			cfg_error(p, "missing-key", e, path, "add layers: [...]",
				     "layer_swap entry has no 'layers'");
			continue;
		}
		mo_swap_layer *s = &c->layer_swap[c->n_layer_swap++];
		s->at = e;
		cfg_layers(p, &s->layers, layers, cfg_key_path(p, path, "layers"));
	}
}

static void cfg_op_swap(mo_cfg_parser *p, const mo_node *v)
{
	mo_config *c = p->c;
	c->op_swap_at = v;
	if (scalar_resolve(v) == MO_SCALAR_NULL && v->kind == MO_NODE_SCALAR)
		return;
	if (!cfg_entry_list(p, v, "swap.op_swap", "write - op_name: '.*mlp'\n  layers: [2-3]"))
		return;
	c->op_swap = v->n ? arena_alloc(p->a, v->n * sizeof(*c->op_swap)) : NULL;
	for (size_t i = 0; c->op_swap && i < v->n; i++) {
		const mo_node *e = v->items[i];
		char *path = arena_indexed(p->a, "swap.op_swap", i);
		if (e->kind != MO_NODE_MAP) {
			cfg_error(p, "type", e, path, NULL,
				     "an op_swap entry must be a mapping with 'op_name' and 'layers', got %s",
				     node_type_name(e));
			continue;
		}
		cfg_unknown_keys(p, e, mo_op_swap_keys, 2, path);
		const mo_node *name_key = NULL;
		const mo_node *name = map_get_kv(e, "op_name", &name_key);
		const mo_node *layers = map_get(e, "layers");
		if (!name)
			cfg_error(p, "missing-key", e, path, "add op_name: '<regex>'",
				     "op_swap entry has no 'op_name'");
		if (!layers)
			cfg_error(p, "missing-key", e, path, "add layers: [...]",
				     "op_swap entry has no 'layers'");
		char *npath = cfg_key_path(p, path, "op_name");
		if (!name || !layers || !cfg_pattern_key(p, name, npath))
			continue;
		mo_op_swap *s = &c->op_swap[c->n_op_swap++];
		s->at = e;
		s->pat.key = name;
		s->pat.regex = name->value;
		s->pat.dpath = npath;
		cfg_layers(p, &s->pat.layers, layers, cfg_key_path(p, path, "layers"));
		cfg_compile(p, &s->pat);
	}
}

static void cfg_swap(mo_cfg_parser *p, const mo_node *v)
{
	mo_config *c = p->c;
	c->has_swap = true;
	if (!cfg_section_map(p, v, "swap"))
		return;
	cfg_unknown_keys(p, v, mo_swap_keys, MO_COUNT(mo_swap_keys), "swap");
	const mo_node *en = map_get(v, "enable");
	c->swap_enable_at = en;
	if (en && scalar_resolve(en) != MO_SCALAR_NULL)
		cfg_bool(p, en, "swap.enable", &c->swap_enable);
	const mo_node *pf = map_get(v, "default_prefetch");
	if (pf && scalar_resolve(pf) != MO_SCALAR_NULL)
		cfg_prefetch(p, pf);
	const mo_node *ls = map_get(v, "layer_swap");
	if (ls)
		cfg_layer_swap(p, ls);
	const mo_node *os = map_get(v, "op_swap");
	if (os)
		cfg_op_swap(p, os);
}

/* A top-level key close to a section name is a typo, not a training key. */
static void cfg_top_key(mo_cfg_parser *p, const mo_node *k)
{
	if (k->kind != MO_NODE_SCALAR)
		return;
	if (key_is(k, "recompute_config") || key_is(k, "swap_config")) {
		p->c->training_yaml = true; /* config_graph reads it */
		return;
	}
	char kbuf[64];
	snprintf(kbuf, sizeof kbuf, "%.*s", config_key_length(k), k->value);
	for (size_t i = 0; i < MO_COUNT(mo_sections); i++) {
		size_t d = edit_distance(kbuf, mo_sections[i], 2);
		if (d > 0 && d <= (strlen(mo_sections[i]) > 5 ? 2u : 1u)) {
			char hint[64];
			snprintf(hint, sizeof hint, "did you mean '%s'?", mo_sections[i]);
			cfg_error(p, "unknown-key", k, NULL, hint,
				     "unknown top-level key '%s'", kbuf);
			return;
		}
	}
	p->c->training_yaml = true;
}

static void cfg_root(mo_cfg_parser *p, const mo_node *root)
{
	mo_config *c = p->c;
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const mo_node *k = root->items[i], *v = root->items[i + 1];
		if (key_is(k, "recompute")) {
			c->recompute_key = k;
			c->recompute_val = v;
		} else if (key_is(k, "recompute_comm")) {
			c->comm_key = k;
			c->comm_val = v;
		} else if (key_is(k, "swap")) {
			c->swap_key = k;
			c->swap_val = v;
		} else {
			cfg_top_key(p, k);
		}
	}
	/* a duplicated section: the last one counts, as in PyYAML (reported
	 * as duplicate-key by the tree builder) */
	if (c->recompute_val)
		cfg_recompute(p, c->recompute_val);
	if (c->comm_val)
		cfg_comm(p, c->comm_val);
	if (c->swap_val)
		cfg_swap(p, c->swap_val);
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const mo_node *k = root->items[i];
		if (key_is(k, "recompute_config") || key_is(k, "swap_config"))
			config_graph(c, p->diags, root, k, root->items[i + 1]);
	}
}

static void config_free_regexes(mo_config *c)
{
	mo_pattern_list *lists[] = {&c->select, &c->exclude, &c->comm};
	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			regex_free(lists[l]->p[i].re);
	for (size_t i = 0; i < c->n_op_swap; i++)
		regex_free(c->op_swap[i].pat.re);
}

void mo_config_free(mo_config *c)
{
	if (!c)
		return;
	config_free_regexes(c);
	doc_free(c->doc);
	free(c);
}

static mo_config *config_alloc(const mo_limits *lim)
{
	mo_config *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (lim)
		c->lim = *lim;
	else
		mo_limits_default(&c->lim);
	c->prefetch = 1;
	return c;
}

static void config_read_root(mo_config *c, mo_diags *diags)
{
	mo_cfg_parser p = {.c = c, .diags = diags, .file = c->doc->name, .a = c->doc->arena};
	const mo_node *root = c->doc->root;
	if (!root || (root->kind == MO_NODE_SCALAR && scalar_resolve(root) == MO_SCALAR_NULL)) {
		const mo_node first = {.line = 1, .column = 1};
		cfg_error(&p, "type", &first, NULL,
			     "write the recompute, recompute_comm and swap sections",
			     "the file is empty: expected a mapping");
	} else if (root->kind != MO_NODE_MAP) {
		cfg_error(&p, "type", root, NULL, NULL,
			     "the file must be a mapping with recompute, recompute_comm or swap, got %s",
			     node_type_name(root));
	} else {
		cfg_root(&p, root);
	}
}

int config_read_tree(mo_config **out, mo_diags *diags, mo_doc *doc, const mo_limits *lim,
			mo_error *err)
{
	*out = NULL;
	mo_config *c = config_alloc(lim);
	if (!c) {
		doc_free(doc);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	c->doc = doc;
	config_read_root(c, diags);
	*out = c;
	return 0;
}

int mo_config_parse(mo_config **out, mo_diags *diags, const char *text, size_t len,
		    const char *name, const mo_limits *lim, mo_error *err)
{
	*out = NULL;
	mo_config *c = config_alloc(lim);
	if (!c) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	int rc = yaml_tree_parse(&c->doc, diags, text, len, name, &c->lim, err);
	if (rc < 0) {
		free(c);
		return -1;
	}
	if (rc > 0) /* yaml-syntax already reported */
		c->structural_errors = true;
	else
		config_read_root(c, diags);
	*out = c;
	return 0;
}

int mo_config_is_training_yaml(const mo_config *c)
{
	return c && c->training_yaml;
}
