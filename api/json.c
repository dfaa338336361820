/* Serializers for the shapes every face shares (docs/api.md): one writer,
 * so the CLI's --json, the API and the binding cannot drift apart. */
#include "json.h"

#include <stdbool.h>
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

/* ---- the expand answer: segments, per-layer listing on request --------- */

static bool mo_json_same_action(const mo_action *x, const mo_action *y)
{
	return x->action == y->action && x->rule.line == y->rule.line &&
	       strcmp(x->path, y->path) == 0 && strcmp(x->rule.key, y->rule.key) == 0 &&
	       strcmp(x->rule.section, y->rule.section) == 0;
}

/* Layers a and b have the same type, the same mtp flag and the same
 * actions (in order). */
static bool mo_json_same_layer(const mo_plan *p, const mo_model *m, int64_t a, int64_t b)
{
	size_t n = mo_plan_action_count(p, a);
	int64_t nl = mo_model_num_layers(m);

	if (mo_model_layer_type_of(m, a) != mo_model_layer_type_of(m, b) || (a >= nl) != (b >= nl) ||
	    n != mo_plan_action_count(p, b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!mo_json_same_action(mo_plan_action(p, a, i), mo_plan_action(p, b, i)))
			return false;
	return true;
}

static json_t *mo_json_segment(const mo_plan *p, const mo_model *m, int64_t first, int64_t last)
{
	json_t *o = mo_json_layer(p, m, first, 0);

	if (!o)
		return NULL;
	json_object_del(o, "layer");
	json_object_set_new(o, "first", json_integer((json_int_t)first));
	json_object_set_new(o, "last", json_integer((json_int_t)last));
	return o;
}

json_t *mo_json_plan_segments(const mo_plan *p, const mo_model *m)
{
	json_t *segs = json_array();
	int64_t n = (int64_t)mo_plan_layer_count(p), first = 0;

	for (int64_t l = 1; segs && l <= n; l++) {
		if (l < n && mo_json_same_layer(p, m, first, l))
			continue;
		if (json_array_append_new(segs, mo_json_segment(p, m, first, l - 1)) != 0) {
			json_decref(segs);
			return NULL;
		}
		first = l;
	}
	return segs;
}

size_t mo_json_plan_bytes(const mo_plan *p, const mo_model *m, int all_paths)
{
	size_t total = 64;

	for (size_t l = 0; l < mo_plan_layer_count(p); l++) {
		size_t t = mo_model_layer_type_of(m, (int64_t)l);

		total += 64 + strlen(mo_model_layer_type_name(m, t));
		for (size_t i = 0; i < mo_plan_action_count(p, (int64_t)l); i++) {
			const mo_action *a = mo_plan_action(p, (int64_t)l, i);

			total += 80 + strlen(a->path) + strlen(a->rule.key) + strlen(a->rule.section);
		}
		for (size_t i = 0; all_paths && i < mo_model_path_count(m, t); i++)
			total += 8 + strlen(mo_model_path(m, t, i));
	}
	return total;
}

json_t *mo_json_presets(void)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < mo_presets_count(); i++)
		json_array_append_new(arr, json_pack("{s:s, s:s}", "name", mo_preset_name(i),
						     "description", mo_preset_description(i)));
	json_t *devices = json_array();
	for (size_t i = 0; i < mo_device_preset_count(); i++)
		json_array_append_new(devices, json_pack("{s:s, s:f}", "name", mo_device_preset_name(i),
							 "memory_gib", mo_device_preset_memory_gib(i)));
	return json_pack("{s:o, s:o}", "presets", arr, "devices", devices);
}
