/* POST /api/v1/layout: what the web UI builds its controls from. The
 * model's layer types with their paths (and kinds), the type of every
 * layer, what each pattern of the config matches (PCRE2 full match, the
 * core's own compiled regexes and candidate rules), and the config's three
 * sections as JSON typed the way PyYAML types them, with the lines they
 * span in the text. Built on the public header's read-only views of a model
 * and a config (mo_model_path_kind, mo_config_pattern_*, mo_config_section,
 * mo_node_*). */
#include "api_internal.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

static const char *const mo_layout_kinds[] = {"module", "op", "comm"};

static json_t *mo_layout_types(const mo_model *m)
{
	json_t *types = json_array();

	for (size_t t = 0; types && t < mo_model_layer_type_count(m); t++) {
		json_t *paths = json_array();

		for (size_t p = 0; paths && p < mo_model_path_count(m, t); p++)
			json_array_append_new(paths, json_pack("{s:s, s:s}", "name",
							       mo_model_path(m, t, p), "kind",
							       mo_layout_kinds[mo_model_path_kind(m, t, p)]));
		json_array_append_new(types, json_pack("{s:s, s:o*}", "name",
						       mo_model_layer_type_name(m, t), "paths", paths));
	}
	return types;
}

static json_t *mo_layout_layer_types(const mo_model *m)
{
	json_t *a = json_array();
	int64_t n = mo_model_num_layers(m) + mo_model_mtp_layers(m);

	for (int64_t l = 0; a && l < n; l++)
		json_array_append_new(a, json_integer((json_int_t)mo_model_layer_type_of(m, l)));
	return a;
}

/* ---- patterns ------------------------------------------------------------ */

/* {"section", "key", "pattern", "error"?, "matches": [[path...] per type]}.
 * Communication patterns only match communication ops (as the rules do). */
static json_t *mo_layout_pattern(const mo_config *c, size_t i, const mo_model *m, mo_matcher *mt)
{
	mo_config_pattern p;
	json_t *o, *matches;

	if (mo_config_pattern_get(&p, c, i) != 0)
		return NULL;
	o = json_pack("{s:s, s:s, s:s}", "section", p.section, "key", p.key, "pattern", p.regex);
	matches = json_array();
	if (!o || !matches) {
		json_decref(o);
		json_decref(matches);
		return NULL;
	}
	for (size_t t = 0; t < mo_model_layer_type_count(m); t++) {
		json_t *hits = json_array();

		for (size_t k = 0; p.compiled && hits && k < mo_model_path_count(m, t); k++) {
			const char *name = mo_model_path(m, t, k);

			if (p.comm_only && mo_model_path_kind(m, t, k) != MO_PATH_COMM)
				continue;
			if (mo_config_pattern_match(mt, c, i, name, strlen(name)) == 1)
				json_array_append_new(hits, json_string(name));
		}
		json_array_append_new(matches, hits);
	}
	json_object_set_new(o, "matches", matches);
	if (!p.compiled)
		json_object_set_new(o, "error", json_string("the pattern does not compile"));
	return o;
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
	for (size_t i = 0; i < mo_config_pattern_count(c); i++)
		json_array_append_new(a, mo_layout_pattern(c, i, m, mt));
	mo_matcher_free(mt);
	return a;
}

/* ---- sections as JSON (PyYAML typing) ------------------------------------- */

static json_t *mo_layout_scalar(const mo_node *n)
{
	size_t len;
	const char *text;

	switch (mo_node_value_type(n)) {
	case MO_VALUE_NULL:
		return json_null();
	case MO_VALUE_BOOL:
		return json_boolean(mo_node_bool(n));
	case MO_VALUE_INT:
		return json_integer((json_int_t)mo_node_int(n));
	case MO_VALUE_FLOAT:
		return json_real(mo_node_float(n));
	default:
		text = mo_node_text(n, &len);
		return json_stringn(text ? text : "", len);
	}
}

/* The node as JSON; mapping keys as their text (a key that is not a
 * scalar is left out: the rules report it). */
static json_t *mo_layout_node(const mo_node *n, int depth)
{
	mo_value_type type = mo_node_value_type(n);
	json_t *o;

	if (!n || depth > 64)
		return json_null();
	if (type == MO_VALUE_LIST) {
		o = json_array();
		for (size_t i = 0; o && i < mo_node_count(n); i++)
			json_array_append_new(o, mo_layout_node(mo_node_item(n, i), depth + 1));
		return o;
	}
	if (type != MO_VALUE_MAP)
		return mo_layout_scalar(n);
	o = json_object();
	for (size_t i = 0; o && i < mo_node_count(n); i++) {
		size_t len;
		const char *text = mo_node_text(mo_node_key(n, i), &len);
		char *key;

		if (!text)
			continue;
		key = strndup(text, len);
		if (key)
			json_object_set_new(o, key, mo_layout_node(mo_node_item(n, i), depth + 1));
		free(key);
	}
	return o;
}

static void mo_layout_section(json_t *sections, json_t *spans, const mo_config *c,
			      const char *name)
{
	int first, end;
	const mo_node *val = mo_config_section(c, name, &first, &end);

	if (!val)
		return;
	json_object_set_new(sections, name, mo_layout_node(val, 1));
	if (first > 0)
		json_object_set_new(spans, name, json_pack("{s:i, s:i}", "start", first, "end", end));
}

static void mo_layout_config(json_t *o, const mo_config *c)
{
	json_t *sections = json_object(), *spans = json_object();

	mo_layout_section(sections, spans, c, "recompute");
	mo_layout_section(sections, spans, c, "recompute_comm");
	mo_layout_section(sections, spans, c, "swap");
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
	json_object_set_new(o, "num_layers", json_integer((json_int_t)mo_model_num_layers(m)));
	json_object_set_new(o, "mtp_num_layers", json_integer((json_int_t)mo_model_mtp_layers(m)));
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
static int mo_layout_check(mo_config **cfg, mo_model **owned, mo_api_model_ref **ref,
			   const mo_model **m, mo_diags *diags, const mo_api_input *in,
			   const mo_api_options *opt, mo_error *err)
{
	mo_input ci = {0};
	mo_model *unused = NULL;

	ci.config = in->config;
	ci.config_len = in->config_len;
	ci.config_name = "config";
	ci.limits = &opt->limits;
	if (opt->models && in->preset) {
		*m = mo_api_cache_get(opt->models, in->preset, in->devices, ref, err);
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
	mo_api_model_ref *ref = NULL;
	const mo_model *m = NULL;
	int rc = 0;

	if (mo_api_input_read(&in, out, rq, opt))
		goto free_input;
	if (mo_diags_new(&diags) != 0) {
		rc = mo_api_problem(out, 500, "internal", "out of memory");
		goto free_input;
	}
	if (mo_layout_check(&cfg, &model, &ref, &m, diags, &in, opt, &err) != 0) {
		rc = mo_api_reply_error(out, &err);
		goto free_all;
	}
	if (!m) {
		rc = mo_api_problem(out, 422, "model-needed",
				    "layout needs a model: give 'model', or a training YAML that has one");
		goto free_all;
	}
	/* "layer_types" lists every layer, at least "0," each: a floor to
	 * refuse the answer before it is built */
	size_t floor = 2 * (size_t)(mo_model_num_layers(m) + mo_model_mtp_layers(m));
	if (opt->max_answer && floor > opt->max_answer) {
		rc = mo_api_answer_too_large_how(out, floor, opt->max_answer, true,
						 "the layout lists the type of every layer");
		goto free_all;
	}
	json_t *o = mo_layout_json(cfg, m, diags);
	rc = o ? mo_api_reply_json(out, o) : mo_api_problem(out, 500, "internal", "out of memory");
free_all:
	mo_model_free(model);
	mo_config_free(cfg);
	mo_api_model_release(ref);
	mo_diags_free(diags);
free_input:
	mo_api_input_free(&in);
	return rc;
}
