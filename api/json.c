/* Serializers for the shapes every face shares (SPEC 5). */
#include "json.h"

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

json_t *mo_json_diags(const mo_diags *d)
{
	json_t *errors = json_array(), *warnings = json_array();
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		json_array_append_new(g->severity == MO_SEV_ERROR ? errors : warnings,
				      mo_json_diag(g));
	}
	return json_pack("{s:b, s:o, s:o}", "valid", mo_diags_errors(d) == 0, "errors", errors,
			 "warnings", warnings);
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
