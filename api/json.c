/* Serializers for the shapes every face shares (docs/api.md): one writer,
 * so the CLI's --json, the API and the binding cannot drift apart. */
#include "json.h"

#include <stdio.h>
#include <string.h>

json_t *mo_json_diag(const mo_diag *d)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:s}", "code", d->code, "message",
			      d->message, "line", (json_int_t)d->line, "column",
			      (json_int_t)d->column, "path", d->path ? d->path : "");
	if (!o)
		return NULL;
	if (d->hint)
		json_object_set_new(o, "hint", json_string(d->hint));
	if (d->layers)
		json_object_set_new(o, "layers", json_string(d->layers));
	if (d->file && d->file[0])
		json_object_set_new(o, "file", json_string(d->file));
	json_object_set_new(o, "severity",
			    json_string(d->severity == MO_SEV_ERROR ? "error" : "warning"));
	return o;
}

/* What one answer carries of a config's diagnostics: the first
 * MO_JSON_DIAGS_MAX of them, and no more than MO_JSON_DIAGS_BYTES of their
 * text; the rest are counted in "omitted" (a 1 MiB body can hold thousands
 * of mistakes, and the first ones are what a user fixes first). */
#define MO_JSON_DIAGS_MAX 200
#define MO_JSON_DIAGS_BYTES (256u * 1024u)

static size_t mo_json_diag_bytes(const mo_diag *d)
{
	return strlen(d->code) + strlen(d->message) + (d->path ? strlen(d->path) : 0) +
	       (d->hint ? strlen(d->hint) : 0) + (d->layers ? strlen(d->layers) : 0) +
	       (d->file ? strlen(d->file) : 0);
}

/* Diagnostics beyond the ones listed: the stored ones not listed, and the
 * errors the core counted but did not store (past its own bound). */
static size_t mo_json_diags_omitted(const mo_diags *d, size_t listed, size_t stored_errors)
{
	size_t unstored = mo_diags_errors(d) > stored_errors ? mo_diags_errors(d) - stored_errors
							    : 0;
	return mo_diags_count(d) - listed + unstored;
}

json_t *mo_json_diags(const mo_diags *d)
{
	json_t *errors = json_array(), *warnings = json_array();
	size_t listed = 0, stored_errors = 0, bytes = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		int error = g->severity == MO_SEV_ERROR;
		stored_errors += (size_t)error;
		bytes += mo_json_diag_bytes(g);
		if (listed == MO_JSON_DIAGS_MAX || bytes > MO_JSON_DIAGS_BYTES)
			continue;
		json_array_append_new(error ? errors : warnings, mo_json_diag(g));
		listed++;
	}
	json_t *o = json_pack("{s:b, s:o, s:o}", "valid", mo_diags_errors(d) == 0, "errors",
			      errors, "warnings", warnings);
	size_t omitted = mo_json_diags_omitted(d, listed, stored_errors);
	if (o && omitted) {
		char note[128];
		snprintf(note, sizeof note,
			 "%zu more diagnostics left out (an answer lists the first %d)", omitted,
			 MO_JSON_DIAGS_MAX);
		json_object_set_new(o, "omitted", json_integer((json_int_t)omitted));
		json_object_set_new(o, "note", json_string(note));
	}
	return o;
}

static json_t *mo_json_action(const mo_action *a)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:I}}", "path", a->path, "action",
			 mo_action_name(a->action), "rule", "section", a->rule.section, "key",
			 a->rule.key, "line", (json_int_t)a->rule.line);
}

static json_t *mo_json_layer(const mo_plan *p, const mo_model *m, int64_t layer, int all_paths)
{
	size_t t = mo_model_layer_type_of(m, layer);
	json_t *actions = json_array();
	for (size_t i = 0; i < mo_plan_action_count(p, layer); i++)
		json_array_append_new(actions, mo_json_action(mo_plan_action(p, layer, i)));
	json_t *o = json_pack("{s:I, s:s, s:b, s:o}", "layer", (json_int_t)layer, "type",
			      mo_model_layer_type_name(m, t), "mtp",
			      layer >= mo_model_num_layers(m), "actions", actions);
	if (o && all_paths) {
		json_t *paths = json_object();
		for (size_t i = 0; i < mo_model_path_count(m, t); i++)
			json_object_set_new(paths, mo_model_path(m, t, i),
					    json_string(mo_action_name(mo_plan_path_action(p, layer, i))));
		json_object_set_new(o, "paths", paths);
	}
	return o;
}

json_t *mo_json_plan(const mo_plan *p, const mo_model *m, int all_paths)
{
	json_t *layers = json_array();
	for (size_t l = 0; l < mo_plan_layer_count(p); l++)
		json_array_append_new(layers, mo_json_layer(p, m, (int64_t)l, all_paths));
	return json_pack("{s:o, s:I}", "layers", layers, "default_prefetch",
			 (json_int_t)mo_plan_prefetch(p));
}

json_t *mo_json_presets(void)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < mo_presets_count(); i++)
		json_array_append_new(arr, json_pack("{s:s, s:s}", "name", mo_preset_name(i),
						     "description", mo_preset_description(i)));
	return json_pack("{s:o}", "presets", arr);
}
