/* The estimate as JSON (docs/api.md's shape; clients ignore keys they do not know): peak, reserved,
 * capacity, per stage (with the peak event and its buckets), per layer,
 * cost, and optionally each stage's timeline. */
#include "api_internal.h"
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys are constant ASCII: set without jansson's UTF-8 check of each key,
 * and without json_pack's format parsing (an estimate answer holds ~1,250
 * values; building them was a quarter of an uncached request). */
static void mo_json_set_int(json_t *o, const char *key, int64_t v)
{
	json_object_set_new_nocheck(o, key, json_integer((json_int_t)v));
}

static void mo_json_set_uint(json_t *o, const char *key, uint64_t v)
{
	json_object_set_new_nocheck(o, key, json_integer((json_int_t)v));
}

static void mo_json_set_real(json_t *o, const char *key, double v)
{
	json_object_set_new_nocheck(o, key, json_real(v));
}

static void mo_json_set_text(json_t *o, const char *key, const char *v)
{
	json_object_set_new_nocheck(o, key, json_string(v));
}

static json_t *mo_json_buckets(const uint64_t *bytes)
{
	json_t *o = json_object();
	for (int k = 0; o && k < MO_EST_BUCKETS; k++)
		mo_json_set_uint(o, mo_estimate_bucket_name(k), bytes[k]);
	return o;
}

static json_t *mo_json_est_stage(const mo_estimate_stage *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	mo_json_set_int(o, "stage", s->stage);
	mo_json_set_uint(o, "peak_bytes", s->peak_bytes);
	mo_json_set_uint(o, "reserved_peak_bytes", s->reserved_peak_bytes);
	mo_json_set_text(o, "peak_event", s->peak_event);
	mo_json_set_uint(o, "weights_bytes", s->weights_bytes);
	mo_json_set_uint(o, "gradients_bytes", s->gradients_bytes);
	mo_json_set_uint(o, "optimizer_bytes", s->optimizer_bytes);
	mo_json_set_uint(o, "activations_bytes", s->activations_bytes);
	mo_json_set_uint(o, "swap_buffer_bytes", s->swap_buffer_bytes);
	json_object_set_new_nocheck(o, "peak_by_bucket", mo_json_buckets(s->peak_by_bucket));
	mo_json_set_int(o, "first_layer", s->first_layer);
	mo_json_set_int(o, "num_layers", s->num_layers);
	mo_json_set_int(o, "in_flight", s->in_flight);
	mo_json_set_real(o, "compute_seconds", s->compute_seconds);
	mo_json_set_real(o, "overhead_seconds", s->overhead_seconds);
	mo_json_set_uint(o, "between_steps_bytes", s->between_steps_bytes);
	return o;
}

static json_t *mo_json_est_layer(const mo_estimate_layer *l)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	mo_json_set_int(o, "layer", l->layer);
	mo_json_set_int(o, "stage", l->stage);
	mo_json_set_text(o, "type", l->type);
	mo_json_set_uint(o, "activation_bytes", l->activation_bytes);
	mo_json_set_uint(o, "baseline_activation_bytes", l->baseline_activation_bytes);
	mo_json_set_real(o, "recompute_flops", l->recompute_flops);
	mo_json_set_uint(o, "swap_bytes", l->swap_bytes);
	mo_json_set_uint(o, "recomputed_bytes", l->recomputed_bytes);
	mo_json_set_real(o, "forward_flops", l->forward_flops);
	mo_json_set_uint(o, "comm_recompute_bytes", l->comm_recompute_bytes);
	return o;
}

static json_t *mo_json_est_cost(const mo_estimate_cost *c)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	mo_json_set_real(o, "recompute_flops", c->recompute_flops);
	mo_json_set_real(o, "recompute_seconds", c->recompute_seconds);
	mo_json_set_real(o, "comm_recompute_bytes", c->comm_recompute_bytes);
	mo_json_set_real(o, "comm_recompute_seconds", c->comm_recompute_seconds);
	mo_json_set_uint(o, "comm_recompute_ops", c->comm_recompute_ops);
	mo_json_set_real(o, "swap_bytes", c->swap_bytes);
	mo_json_set_real(o, "swap_seconds", c->swap_seconds);
	mo_json_set_real(o, "swap_hidden_seconds", c->swap_hidden_seconds);
	mo_json_set_real(o, "step_seconds_baseline", c->step_seconds_baseline);
	mo_json_set_real(o, "step_seconds", c->step_seconds);
	mo_json_set_real(o, "overhead_percent", c->overhead_percent);
	return o;
}

/* The step time and its breakdown (seconds of one step; they add up to
 * step_seconds), tokens per second per device and MFU. */
static json_t *mo_json_est_time(const mo_estimate_time *t)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	mo_json_set_real(o, "step_seconds", t->step_seconds);
	mo_json_set_real(o, "compute_seconds", t->compute_seconds);
	mo_json_set_real(o, "gemm_seconds", t->gemm_seconds);
	mo_json_set_real(o, "attention_seconds", t->attention_seconds);
	mo_json_set_real(o, "memory_bound_seconds", t->memory_bound_seconds);
	mo_json_set_real(o, "comm_tp_seconds", t->comm_tp_seconds);
	mo_json_set_real(o, "comm_cp_seconds", t->comm_cp_seconds);
	mo_json_set_real(o, "comm_ep_seconds", t->comm_ep_seconds);
	mo_json_set_real(o, "comm_pp_seconds", t->comm_pp_seconds);
	mo_json_set_real(o, "comm_dp_seconds", t->comm_dp_seconds);
	mo_json_set_real(o, "bubble_seconds", t->bubble_seconds);
	mo_json_set_real(o, "optimizer_seconds", t->optimizer_seconds);
	mo_json_set_real(o, "recompute_seconds", t->recompute_seconds);
	mo_json_set_real(o, "swap_seconds", t->swap_seconds);
	mo_json_set_real(o, "fixed_seconds", t->fixed_seconds);
	mo_json_set_real(o, "kernels", t->kernels);
	mo_json_set_uint(o, "slowest_stage", t->slowest_stage);
	mo_json_set_real(o, "tokens_per_second_per_device", t->tokens_per_second_per_device);
	mo_json_set_real(o, "model_flops", t->model_flops);
	mo_json_set_real(o, "mfu", t->mfu);
	mo_json_set_text(o, "largest_term", t->largest_term ? t->largest_term : "");
	return o;
}

/* One event of a timeline; its clock when the walk gave it one. */
static json_t *mo_json_est_event(const mo_estimate_event *ev)
{
	char name[96];
	json_t *o = json_object();
	if (!o)
		return NULL;
	mo_json_set_text(o, "event", mo_estimate_event_name(ev, name, sizeof name));
	mo_json_set_uint(o, "total_bytes", ev->total);
	json_object_set_new_nocheck(o, "bytes", mo_json_buckets(ev->bytes));
	if (isfinite(ev->start_seconds)) {
		mo_json_set_real(o, "start_seconds", ev->start_seconds);
		mo_json_set_real(o, "seconds", ev->seconds);
	}
	return o;
}

static json_t *mo_json_est_timeline(const mo_estimate *e, size_t s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < mo_estimate_event_count(e, s); i++)
		json_array_append_new(a, mo_json_est_event(mo_estimate_event_get(e, s, i)));
	return a;
}

size_t mo_json_estimate_timeline_floor(const mo_estimate *e)
{
	/* the shortest an event prints: the shortest name, no clock */
	static const mo_estimate_event zero = {.kind = MO_EV_OPTIMIZER, .start_seconds = NAN};
	json_t *o = mo_json_est_event(&zero);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t each = text ? strlen(text) : 0, events = 0, floor;

	free(text);
	json_decref(o);
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++)
		if (__builtin_add_overflow(events, mo_estimate_event_count(e, s), &events))
			return SIZE_MAX;
	return __builtin_mul_overflow(events, each, &floor) ? SIZE_MAX : floor;
}

size_t mo_json_estimate_layers_floor(const mo_estimate *e)
{
	static const mo_estimate_layer zero = {.type = ""};
	json_t *o = mo_json_est_layer(&zero);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t each = text ? strlen(text) : 0, floor;

	free(text);
	json_decref(o);
	return __builtin_mul_overflow(mo_estimate_layer_count(e), each, &floor) ? SIZE_MAX : floor;
}

static json_t *mo_json_est_detail(unsigned parts)
{
	json_t *a = json_array();
	if (a && (parts & MO_JSON_EST_LAYERS))
		json_array_append_new(a, json_string("layers"));
	if (a && (parts & MO_JSON_EST_TIMELINE))
		json_array_append_new(a, json_string("timeline"));
	if (a && (parts & MO_JSON_EST_ACCURACY))
		json_array_append_new(a, json_string("accuracy"));
	return a;
}

json_t *mo_json_estimate(const mo_estimate *e, int with_timeline)
{
	json_t *o = mo_json_estimate_parts(e, MO_JSON_EST_LAYERS |
					   (with_timeline ? MO_JSON_EST_TIMELINE : 0));
	if (o)
		json_object_del(o, "detail");
	return o;
}

json_t *mo_json_estimate_parts(const mo_estimate *e, unsigned parts)
{
	json_t *stages = json_array(), *o = json_object();
	json_t *layers = (parts & MO_JSON_EST_LAYERS) ? json_array() : NULL;
	for (size_t s = 0; stages && s < mo_estimate_stage_count(e); s++) {
		json_t *stage = mo_json_est_stage(mo_estimate_stage_get(e, s));
		if (stage && (parts & MO_JSON_EST_TIMELINE))
			json_object_set_new_nocheck(stage, "timeline", mo_json_est_timeline(e, s));
		json_array_append_new(stages, stage);
	}
	for (size_t l = 0; layers && l < mo_estimate_layer_count(e); l++)
		json_array_append_new(layers, mo_json_est_layer(mo_estimate_layer_get(e, (int64_t)l)));
	if (!o || !stages || ((parts & MO_JSON_EST_LAYERS) && !layers)) {
		json_decref(stages);
		json_decref(layers);
		json_decref(o);
		return NULL;
	}
	mo_json_set_uint(o, "peak_bytes", mo_estimate_peak_bytes(e));
	mo_json_set_uint(o, "reserved_peak_bytes", mo_estimate_reserved_peak_bytes(e));
	mo_json_set_uint(o, "capacity_bytes", mo_estimate_capacity_bytes(e));
	mo_json_set_text(o, "framework", mo_estimate_framework(e));
	json_object_set_new_nocheck(o, "stages", stages);
	if (layers)
		json_object_set_new_nocheck(o, "layers", layers);
	json_object_set_new_nocheck(o, "detail", mo_json_est_detail(parts));
	mo_json_set_real(o, "overhead_percent", mo_estimate_overhead_percent(e));
	json_object_set_new_nocheck(o, "cost", mo_json_est_cost(mo_estimate_get_cost(e)));
	json_object_set_new_nocheck(o, "time", mo_json_est_time(mo_estimate_get_time(e)));
	json_object_set_new_nocheck(o, "timeline_truncated",
				    json_boolean(mo_estimate_timeline_truncated(e) != 0));
	return o;
}

json_t *mo_json_assumed(const mo_model *m)
{
	json_t *a = json_array();
	for (size_t i = 0; a && m && i < mo_model_assumed_count(m); i++) {
		const char *path = NULL, *value = NULL, *source = NULL;
		if (mo_model_assumed(m, i, &path, &value, &source) != 0)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "path", path ? path : "",
						   "value", value ? value : "", "source",
						   source ? source : ""));
	}
	return a;
}

/* The run the answer priced when a training YAML's run was read over the
 * model given apart (docs/rules.md, model-replaced): the model priced, as
 * a model file, and each field the YAML gave with its key and position.
 * NULL when the model is all the model's own (or out of memory). */
json_t *mo_json_run(const mo_model *m)
{
	size_t n = mo_model_run_field_count(m);
	if (n == 0)
		return NULL;
	char *text = mo_model_to_json(m);
	json_t *model = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	json_t *fields = json_array();
	for (size_t i = 0; model && fields && i < n; i++) {
		struct mo_model_source src;
		if (mo_model_run_field(m, i, &src) != 0)
			continue;
		json_array_append_new(fields, json_pack("{s:s, s:s, s:i, s:i}", "path", src.path,
							"key", src.key, "line", src.line,
							"column", src.column));
	}
	json_t *o = model && fields ? json_pack("{s:o, s:o}", "model", model, "from_config", fields)
				    : NULL;
	if (!o) {
		json_decref(model);
		json_decref(fields);
	}
	return o;
}
