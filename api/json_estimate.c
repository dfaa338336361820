/* The estimate as JSON (SPEC 5 shape, more keys welcome): peak, reserved,
 * capacity, per stage (with the peak event and its buckets), per layer,
 * cost, and optionally each stage's timeline. */
#include "api_internal.h"
#include "json.h"

static json_t *mo_json_buckets(const uint64_t *bytes)
{
	json_t *o = json_object();
	for (int k = 0; o && k < MO_EST_BUCKETS; k++)
		json_object_set_new(o, mo_estimate_bucket_name(k), json_integer((json_int_t)bytes[k]));
	return o;
}

static json_t *mo_json_est_stage(const mo_estimate_stage *s)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:I}", "stage",
			      (json_int_t)s->stage, "peak_bytes", (json_int_t)s->peak_bytes,
			      "reserved_peak_bytes", (json_int_t)s->reserved_peak_bytes,
			      "peak_event", s->peak_event, "weights_bytes",
			      (json_int_t)s->weights_bytes, "gradients_bytes",
			      (json_int_t)s->gradients_bytes, "optimizer_bytes",
			      (json_int_t)s->optimizer_bytes, "activations_bytes",
			      (json_int_t)s->activations_bytes, "swap_buffer_bytes",
			      (json_int_t)s->swap_buffer_bytes);
	if (!o)
		return NULL;
	json_object_set_new(o, "peak_by_bucket", mo_json_buckets(s->peak_by_bucket));
	json_object_set_new(o, "first_layer", json_integer((json_int_t)s->first_layer));
	json_object_set_new(o, "num_layers", json_integer((json_int_t)s->num_layers));
	json_object_set_new(o, "in_flight", json_integer((json_int_t)s->in_flight));
	json_object_set_new(o, "compute_seconds", json_real(s->compute_seconds));
	json_object_set_new(o, "overhead_seconds", json_real(s->overhead_seconds));
	return o;
}

static json_t *mo_json_est_layer(const mo_estimate_layer *l)
{
	return json_pack("{s:I, s:I, s:s, s:I, s:I, s:f, s:I, s:I, s:f, s:I}", "layer",
			 (json_int_t)l->layer, "stage", (json_int_t)l->stage, "type", l->type,
			 "activation_bytes", (json_int_t)l->activation_bytes,
			 "baseline_activation_bytes", (json_int_t)l->baseline_activation_bytes,
			 "recompute_flops", l->recompute_flops, "swap_bytes",
			 (json_int_t)l->swap_bytes, "recomputed_bytes",
			 (json_int_t)l->recomputed_bytes, "forward_flops", l->forward_flops,
			 "comm_recompute_bytes", (json_int_t)l->comm_recompute_bytes);
}

static json_t *mo_json_est_cost(const mo_estimate_cost *c)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:f}",
			 "recompute_flops", c->recompute_flops, "recompute_seconds",
			 c->recompute_seconds, "comm_recompute_bytes", c->comm_recompute_bytes,
			 "comm_recompute_seconds", c->comm_recompute_seconds,
			 "comm_recompute_ops", (json_int_t)c->comm_recompute_ops, "swap_bytes",
			 c->swap_bytes, "swap_seconds", c->swap_seconds, "swap_hidden_seconds",
			 c->swap_hidden_seconds, "step_seconds_baseline",
			 c->step_seconds_baseline, "step_seconds", c->step_seconds,
			 "overhead_percent", c->overhead_percent);
}

static json_t *mo_json_est_timeline(const mo_estimate *e, size_t s)
{
	json_t *a = json_array();
	char name[96];
	for (size_t i = 0; a && i < mo_estimate_event_count(e, s); i++) {
		const mo_estimate_event *ev = mo_estimate_event_get(e, s, i);
		json_t *o = json_pack("{s:s, s:I, s:o}", "event",
				      mo_estimate_event_name(ev, name, sizeof name), "total_bytes",
				      (json_int_t)ev->total, "bytes", mo_json_buckets(ev->bytes));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *mo_json_estimate(const mo_estimate *e, int with_timeline)
{
	json_t *stages = json_array(), *layers = json_array();
	for (size_t s = 0; stages && s < mo_estimate_stage_count(e); s++) {
		json_t *o = mo_json_est_stage(mo_estimate_stage_get(e, s));
		if (o && with_timeline)
			json_object_set_new(o, "timeline", mo_json_est_timeline(e, s));
		json_array_append_new(stages, o);
	}
	for (size_t l = 0; layers && l < mo_estimate_layer_count(e); l++)
		json_array_append_new(layers, mo_json_est_layer(mo_estimate_layer_get(e, (int64_t)l)));
	json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:o, s:o, s:f, s:o, s:b}", "peak_bytes",
			      (json_int_t)mo_estimate_peak_bytes(e), "reserved_peak_bytes",
			      (json_int_t)mo_estimate_reserved_peak_bytes(e), "capacity_bytes",
			      (json_int_t)mo_estimate_capacity_bytes(e), "framework",
			      mo_estimate_framework(e), "stages", stages, "layers", layers,
			      "overhead_percent", mo_estimate_overhead_percent(e), "cost",
			      mo_json_est_cost(mo_estimate_get_cost(e)), "timeline_truncated",
			      mo_estimate_timeline_truncated(e) != 0);
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
