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

/* ---- the same keys as text (api/json_writer.c), for the HTTP answer ----- */

static void mo_jw_buckets(mo_jw *w, const char *key, const uint64_t *bytes)
{
	mo_jw_open(w, key, '{');
	for (int k = 0; k < MO_EST_BUCKETS; k++)
		mo_jw_int(w, mo_estimate_bucket_name(k), (long long)bytes[k]);
	mo_jw_close(w, '}');
}

static void mo_jw_est_timeline(mo_jw *w, const mo_estimate *e, size_t s)
{
	char name[96];

	mo_jw_open(w, "timeline", '[');
	for (size_t i = 0; i < mo_estimate_event_count(e, s); i++) {
		const mo_estimate_event *ev = mo_estimate_event_get(e, s, i);

		mo_jw_open(w, NULL, '{');
		mo_jw_kstr(w, "event", mo_estimate_event_name(ev, name, sizeof name));
		mo_jw_int(w, "total_bytes", (long long)ev->total);
		mo_jw_buckets(w, "bytes", ev->bytes);
		mo_jw_close(w, '}');
	}
	mo_jw_close(w, ']');
}

static void mo_jw_est_stage(mo_jw *w, const mo_estimate *e, size_t i, int with_timeline)
{
	const mo_estimate_stage *s = mo_estimate_stage_get(e, i);

	mo_jw_open(w, NULL, '{');
	mo_jw_int(w, "stage", (long long)s->stage);
	mo_jw_int(w, "peak_bytes", (long long)s->peak_bytes);
	mo_jw_int(w, "reserved_peak_bytes", (long long)s->reserved_peak_bytes);
	mo_jw_kstr(w, "peak_event", s->peak_event);
	mo_jw_int(w, "weights_bytes", (long long)s->weights_bytes);
	mo_jw_int(w, "gradients_bytes", (long long)s->gradients_bytes);
	mo_jw_int(w, "optimizer_bytes", (long long)s->optimizer_bytes);
	mo_jw_int(w, "activations_bytes", (long long)s->activations_bytes);
	mo_jw_int(w, "swap_buffer_bytes", (long long)s->swap_buffer_bytes);
	mo_jw_buckets(w, "peak_by_bucket", s->peak_by_bucket);
	mo_jw_int(w, "first_layer", (long long)s->first_layer);
	mo_jw_int(w, "num_layers", (long long)s->num_layers);
	mo_jw_int(w, "in_flight", (long long)s->in_flight);
	mo_jw_real(w, "compute_seconds", s->compute_seconds);
	mo_jw_real(w, "overhead_seconds", s->overhead_seconds);
	if (with_timeline)
		mo_jw_est_timeline(w, e, i);
	mo_jw_close(w, '}');
}

static void mo_jw_est_layer(mo_jw *w, const mo_estimate_layer *l)
{
	mo_jw_open(w, NULL, '{');
	mo_jw_int(w, "layer", (long long)l->layer);
	mo_jw_int(w, "stage", (long long)l->stage);
	mo_jw_kstr(w, "type", l->type);
	mo_jw_int(w, "activation_bytes", (long long)l->activation_bytes);
	mo_jw_int(w, "baseline_activation_bytes", (long long)l->baseline_activation_bytes);
	mo_jw_real(w, "recompute_flops", l->recompute_flops);
	mo_jw_int(w, "swap_bytes", (long long)l->swap_bytes);
	mo_jw_int(w, "recomputed_bytes", (long long)l->recomputed_bytes);
	mo_jw_real(w, "forward_flops", l->forward_flops);
	mo_jw_int(w, "comm_recompute_bytes", (long long)l->comm_recompute_bytes);
	mo_jw_close(w, '}');
}

static void mo_jw_est_cost(mo_jw *w, const mo_estimate_cost *c)
{
	mo_jw_open(w, "cost", '{');
	mo_jw_real(w, "recompute_flops", c->recompute_flops);
	mo_jw_real(w, "recompute_seconds", c->recompute_seconds);
	mo_jw_real(w, "comm_recompute_bytes", c->comm_recompute_bytes);
	mo_jw_real(w, "comm_recompute_seconds", c->comm_recompute_seconds);
	mo_jw_int(w, "comm_recompute_ops", (long long)c->comm_recompute_ops);
	mo_jw_real(w, "swap_bytes", c->swap_bytes);
	mo_jw_real(w, "swap_seconds", c->swap_seconds);
	mo_jw_real(w, "swap_hidden_seconds", c->swap_hidden_seconds);
	mo_jw_real(w, "step_seconds_baseline", c->step_seconds_baseline);
	mo_jw_real(w, "step_seconds", c->step_seconds);
	mo_jw_real(w, "overhead_percent", c->overhead_percent);
	mo_jw_close(w, '}');
}

void mo_json_estimate_write(mo_jw *w, const mo_estimate *e, int with_timeline)
{
	mo_jw_int(w, "peak_bytes", (long long)mo_estimate_peak_bytes(e));
	mo_jw_int(w, "reserved_peak_bytes", (long long)mo_estimate_reserved_peak_bytes(e));
	mo_jw_int(w, "capacity_bytes", (long long)mo_estimate_capacity_bytes(e));
	mo_jw_kstr(w, "framework", mo_estimate_framework(e));
	mo_jw_open(w, "stages", '[');
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++)
		mo_jw_est_stage(w, e, s, with_timeline);
	mo_jw_close(w, ']');
	mo_jw_open(w, "layers", '[');
	for (size_t l = 0; l < mo_estimate_layer_count(e); l++)
		mo_jw_est_layer(w, mo_estimate_layer_get(e, (int64_t)l));
	mo_jw_close(w, ']');
	mo_jw_real(w, "overhead_percent", mo_estimate_overhead_percent(e));
	mo_jw_est_cost(w, mo_estimate_get_cost(e));
	mo_jw_bool(w, "timeline_truncated", mo_estimate_timeline_truncated(e) != 0);
}
