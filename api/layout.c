/* POST /api/v1/layout: what the web UI builds its controls from. The
 * model's layer types with their paths (and kinds), the type of every
 * layer, what each pattern of the config matches (PCRE2 full match, the
 * core's own compiled regexes and candidate rules), and the config's three
 * sections as JSON typed the way PyYAML types them, with the lines they
 * span in the text. Reads the core's internal structures (like the unit
 * tests do): the public header has no path kinds nor parsed sections. */
#include "api_internal.h"
#include "model/model.h" /* core-private: see the Makefile */
#include "json.h"

#include <stdlib.h>
#include <string.h>

static const char *const mo_layout_kinds[] = {"module", "op", "comm"};

static json_t *mo_layout_types(const mo_model *m)
{
	json_t *types = json_array();

	for (size_t t = 0; types && t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		json_t *paths = json_array();

		for (size_t p = 0; paths && p < lt->n_paths; p++)
			json_array_append_new(paths, json_pack("{s:s, s:s}", "name", lt->paths[p].name,
							       "kind", mo_layout_kinds[lt->paths[p].kind]));
		json_array_append_new(types, json_pack("{s:s, s:o*}", "name", lt->name,
						       "paths", paths));
	}
	return types;
}

static json_t *mo_layout_layer_types(const mo_model *m)
{
	json_t *a = json_array();
	int64_t n = m->num_layers + m->mtp_num_layers;

	for (int64_t l = 0; a && l < n; l++)
		json_array_append_new(a, json_integer((json_int_t)m->type_of[l]));
	return a;
}

/* ---- patterns ------------------------------------------------------------ */

/* {"section", "key", "pattern", "error"?, "offset"?, "matches": [[path...]
 * per type]}. Communication patterns only match communication ops (as in
 * resolve.c). */
static json_t *mo_layout_pattern(const mo_pattern *p, const char *section,
				 const char *key, int comm_only, const mo_model *m,
				 mo_matcher *mt)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "section", section, "key", key,
			      "pattern", p->regex ? p->regex : "");
	json_t *matches = json_array();

	if (!o || !matches) {
		json_decref(o);
		json_decref(matches);
		return NULL;
	}
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		json_t *hits = json_array();

		for (size_t i = 0; p->re && hits && i < lt->n_paths; i++) {
			const char *name = lt->paths[i].name;

			if (comm_only && lt->paths[i].kind != MO_PATH_COMM)
				continue;
			if (mo_matcher_match(mt, p->re, name, strlen(name)) == 1)
				json_array_append_new(hits, json_string(name));
		}
		json_array_append_new(matches, hits);
	}
	json_object_set_new(o, "matches", matches);
	if (!p->re)
		json_object_set_new(o, "error", json_string("the pattern does not compile"));
	return o;
}

static void mo_layout_list(json_t *out, const mo_pattern_list *l, const char *section,
			   const char *key, int comm_only, const mo_model *m, mo_matcher *mt)
{
	for (size_t i = 0; i < l->n; i++)
		json_array_append_new(out, mo_layout_pattern(&l->p[i], section, key, comm_only,
							     m, mt));
}

static json_t *mo_layout_patterns(const mo_config *c, const mo_model *m)
{
	json_t *a = json_array();
	mo_matcher *mt = mo_matcher_new();

	if (!a || !mt) {
		json_decref(a);
		mo_matcher_free(mt);
		return NULL;
	}
	mo_layout_list(a, &c->select, "recompute", "select_module", 0, m, mt);
	mo_layout_list(a, &c->exclude, "recompute", "exclude_op", 0, m, mt);
	mo_layout_list(a, &c->comm, "recompute_comm", "select_module", 1, m, mt);
	for (size_t i = 0; i < c->n_op_swap; i++)
		json_array_append_new(a, mo_layout_pattern(&c->op_swap[i].pat, "swap", "op_swap",
							   0, m, mt));
	mo_matcher_free(mt);
	return a;
}

/* ---- sections as JSON (PyYAML typing) ------------------------------------- */

static json_t *mo_layout_scalar(const mo_node *n)
{
	bool b, overflow = false;
	int64_t i;
	double d;

	switch (mo_scalar_resolve(n)) {
	case MO_SCALAR_NULL:
		return json_null();
	case MO_SCALAR_BOOL:
		return mo_scalar_bool(n, &b) ? json_boolean(b) : json_stringn(n->value, n->len);
	case MO_SCALAR_INT:
		if (mo_scalar_int(n, &i, &overflow))
			return json_integer((json_int_t)i);
		break;
	case MO_SCALAR_FLOAT:
		if (mo_scalar_float(n, &d))
			return json_real(d);
		break;
	case MO_SCALAR_STR:
		break;
	}
	return json_stringn(n->value, n->len);
}

/* The node as JSON; mapping keys as their text (a key that is not a
 * scalar is left out: the rules report it). */
static json_t *mo_layout_node(const mo_node *n, int depth)
{
	json_t *o;

	if (!n || depth > 64)
		return json_null();
	if (n->kind == MO_NODE_SCALAR)
		return mo_layout_scalar(n);
	if (n->kind == MO_NODE_SEQ) {
		o = json_array();
		for (size_t i = 0; o && i < n->n; i++)
			json_array_append_new(o, mo_layout_node(n->items[i], depth + 1));
		return o;
	}
	o = json_object();
	for (size_t i = 0; o && i + 1 < n->n; i += 2) {
		const mo_node *k = n->items[i];
		char *key;

		if (!k || k->kind != MO_NODE_SCALAR)
			continue;
		key = strndup(k->value, k->len);
		if (key)
			json_object_set_new(o, key, mo_layout_node(n->items[i + 1], depth + 1));
		free(key);
	}
	return o;
}

/* 1-based line of a byte offset. */
static int mo_layout_line_of(const mo_doc *d, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off && i < d->srclen; i++)
		if (d->src[i] == '\n')
			line++;
	return line;
}

/* Lines [start, end) of a top-level block section: from its key's line to
 * the line where its value ends (exclusive). Only for a key in column 1. */
static json_t *mo_layout_span(const mo_doc *d, const mo_node *key, const mo_node *val)
{
	int end;

	if (!key || !val || key->column != 1 || !d->src)
		return NULL;
	end = mo_layout_line_of(d, val->end);
	if (val->end > 0 && val->end <= d->srclen && d->src[val->end - 1] != '\n')
		end++;
	if (end <= key->line)
		end = key->line + 1;
	return json_pack("{s:i, s:i}", "start", key->line, "end", end);
}

static void mo_layout_section(json_t *sections, json_t *spans, const mo_config *c,
			      const char *name, const mo_node *key, const mo_node *val)
{
	json_t *span;

	if (!key)
		return;
	json_object_set_new(sections, name, mo_layout_node(val, 1));
	span = c->doc && c->doc->root && !c->doc->root->flow
		       ? mo_layout_span(c->doc, key, val) : NULL;
	if (span)
		json_object_set_new(spans, name, span);
}

static void mo_layout_config(json_t *o, const mo_config *c)
{
	json_t *sections = json_object(), *spans = json_object();

	mo_layout_section(sections, spans, c, "recompute", c->recompute_key, c->recompute_val);
	mo_layout_section(sections, spans, c, "recompute_comm", c->comm_key, c->comm_val);
	mo_layout_section(sections, spans, c, "swap", c->swap_key, c->swap_val);
	json_object_set_new(o, "sections", sections);
	json_object_set_new(o, "section_lines", spans);
	json_object_set_new(o, "training_yaml", json_boolean(mo_config_is_training_yaml(c)));
}

/* ---- the handler ------------------------------------------------------------ */

static int mo_layout_is_yaml(const mo_diags *diags)
{
	for (size_t i = 0; i < mo_diags_count(diags); i++)
		if (strcmp(mo_diags_get(diags, i)->code, "yaml-syntax") == 0)
			return 0;
	return 1;
}

static json_t *mo_layout_json(const mo_config *c, const mo_model *m, const mo_diags *diags)
{
	json_t *o = mo_json_diags(diags);

	if (!o)
		return NULL;
	json_object_set_new(o, "num_layers", json_integer((json_int_t)m->num_layers));
	json_object_set_new(o, "mtp_num_layers", json_integer((json_int_t)m->mtp_num_layers));
	json_object_set_new(o, "types", mo_layout_types(m));
	json_object_set_new(o, "layer_types", mo_layout_layer_types(m));
	if (c && mo_layout_is_yaml(diags)) {
		json_object_set_new(o, "patterns", mo_layout_patterns(c, m));
		mo_layout_config(o, c);
	}
	return o;
}

/* The config checked against the request's model: the cached preset
 * (shared, read-only) when there is one, else mo_check loads it. 0, or -1
 * with err filled. */
static int mo_layout_check(mo_config **cfg, mo_model **owned, const mo_model **m,
			   mo_diags *diags, const mo_api_input *in,
			   const mo_api_options *opt, mo_error *err)
{
	mo_input ci = {0};
	mo_model *unused = NULL;

	ci.config = in->config;
	ci.config_len = in->config_len;
	ci.config_name = "config";
	ci.limits = &opt->limits;
	if (opt->models && in->preset) {
		*m = mo_api_cache_get(opt->models, in->preset, in->devices, owned, err);
		if (!*m)
			return -1;
		ci.shared_model = *m;
		return mo_check(cfg, &unused, diags, &ci, err);
	}
	ci.preset = in->preset;
	ci.model = in->model_text;
	ci.model_len = in->model_len;
	ci.model_name = "model";
	ci.devices = in->devices;
	if (mo_check(cfg, owned, diags, &ci, err) != 0)
		return -1;
	*m = *owned;
	return 0;
}

int mo_api_layout(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt)
{
	mo_api_input in;
	mo_error err = {0};
	mo_diags *diags = NULL;
	mo_config *cfg = NULL;
	mo_model *model = NULL;
	const mo_model *m = NULL;
	int rc = 0;

	if (mo_api_input_read(&in, out, rq, opt))
		goto free_input;
	if (mo_diags_new(&diags) != 0) {
		rc = mo_api_problem(out, 500, "internal", "out of memory");
		goto free_input;
	}
	if (mo_layout_check(&cfg, &model, &m, diags, &in, opt, &err) != 0) {
		rc = mo_api_reply_error(out, &err);
		goto free_all;
	}
	if (!m) {
		rc = mo_api_problem(out, 422, "model-needed",
				    "layout needs a model: give 'model', or a training YAML that has one");
		goto free_all;
	}
	json_t *o = mo_layout_json(cfg, m, diags);
	rc = o ? mo_api_reply_json(out, o) : mo_api_problem(out, 500, "internal", "out of memory");
free_all:
	mo_model_free(model);
	mo_config_free(cfg);
	mo_diags_free(diags);
free_input:
	mo_api_input_free(&in);
	return rc;
}
