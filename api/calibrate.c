/* POST /api/v1/calibrate: the time model's named device constants fitted
 * to measured step times (mo_calibrate), as `memopt calibrate --json`
 * answers. Body: {"runs": [{"model": preset name or model file text,
 * "devices": N, "config": config text (optional), "measured_seconds": s},
 * ...], "constants": ["launch_us", ...] (optional: all)}. At most
 * MO_API_CALIB_RUNS runs: every run is estimated a few hundred times. */
#include "api_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MO_API_CALIB_RUNS 32

typedef struct mo_api_calib {
	mo_calibrate_run runs[MO_API_CALIB_RUNS];
	mo_model *models[MO_API_CALIB_RUNS];
	mo_config *configs[MO_API_CALIB_RUNS];
	mo_steplog *logs[MO_API_CALIB_RUNS]; /* NULL: measured_seconds given */
	size_t n;
	unsigned which;
} mo_api_calib;

static int mo_api_calib_bad(mo_api_response *out, const char *detail)
{
	mo_api_problem(out, 422, "invalid-request", detail);
	return -1;
}

static int mo_api_calib_is_preset(const char *name)
{
	for (size_t i = 0; i < mo_presets_count(); i++)
		if (strcmp(mo_preset_name(i), name) == 0)
			return 1;
	return 0;
}

static int mo_api_calib_constants(mo_api_calib *c, const json_t *a, mo_api_response *out)
{
	size_t i;
	const json_t *v;
	c->which = 0;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) == 0)
		return mo_api_calib_bad(out, "'constants' must be a non-empty array of names");
	json_array_foreach(a, i, v) {
		unsigned bit;
		if (!json_is_string(v) || mo_calibrate_constant_parse(&bit, json_string_value(v)) != 0)
			return mo_api_calib_bad(out, "'constants': each one of gemm_efficiency, "
						     "attention_efficiency, launch_us, "
						     "intra_node_gbs, inter_node_gbs, all");
		c->which |= bit;
	}
	return 0;
}

/* runs[i].log read (mo_steplog_read) into c->logs[c->n]: its step time in
 * *seconds; a 422 at the log's line and column when it is not a log. */
static int mo_api_calib_log(mo_api_calib *c, const json_t *log, size_t i,
			    const mo_api_options *opt, double *seconds, mo_api_response *out)
{
	mo_steplog_options lo = {.max_bytes = opt->limits.max_bytes};
	mo_error err = {0};
	if (mo_steplog_read(&c->logs[c->n], json_string_value(log), json_string_length(log), &lo,
			    &err) != 0) {
		char text[320];
		snprintf(text, sizeof text, "runs[%zu].log: %s", i, err.text);
		if (err.code == MO_ERR_NOMEM)
			mo_api_problem(out, 500, "internal", "out of memory");
		else
			mo_api_problem_at(out, 422, err.code == MO_ERR_LIMIT ? "limit" : "invalid-log",
					  text, err.line, err.column);
		return -1;
	}
	*seconds = mo_steplog_get_summary(c->logs[c->n])->median_seconds;
	return 0;
}

/* A run's members of the right types: a string model, exactly one of
 * measured_seconds (a number in (0, 1e7)) and log (a string). */
static int mo_api_calib_run_shape(const json_t *r)
{
	const json_t *model = json_object_get(r, "model"), *cfg = json_object_get(r, "config");
	const json_t *dev = json_object_get(r, "devices"), *sec = json_object_get(r, "measured_seconds");
	const json_t *log = json_object_get(r, "log");
	bool has_sec = sec && !json_is_null(sec), has_log = log && !json_is_null(log);
	return json_is_object(r) && json_is_string(model) && has_sec != has_log &&
	       (!has_sec || (json_is_number(sec) && json_number_value(sec) > 0 &&
			     json_number_value(sec) < 1e7)) &&
	       (!has_log || json_is_string(log)) && (!cfg || json_is_null(cfg) || json_is_string(cfg)) &&
	       (!dev || json_is_null(dev) ||
		(json_is_integer(dev) && json_integer_value(dev) >= 1 &&
		 json_integer_value(dev) <= 1048576));
}

/* Loads one run's log (when it has one), model and config (mo_check: every
 * rule, as /api/v1/estimate). */
static int mo_api_calib_run(mo_api_calib *c, const json_t *r, size_t i, const mo_api_options *opt,
			    mo_api_response *out)
{
	static const char none[] = "recompute:\n  mode: None\n";
	char text[200];
	snprintf(text, sizeof text, "runs[%zu]: 'model' (a string), either 'measured_seconds' (a "
				    "number in (0, 1e7)) or 'log' (a training log's text), and "
				    "optionally 'config', 'devices'", i);
	if (!mo_api_calib_run_shape(r))
		return mo_api_calib_bad(out, text);
	const json_t *model = json_object_get(r, "model"), *cfg = json_object_get(r, "config");
	const json_t *dev = json_object_get(r, "devices"), *log = json_object_get(r, "log");
	double seconds = json_number_value(json_object_get(r, "measured_seconds"));
	if (json_is_string(log) && mo_api_calib_log(c, log, i, opt, &seconds, out) != 0)
		return -1;
	const char *ct = json_is_string(cfg) ? json_string_value(cfg) : none;
	mo_input in = {.config = ct, .config_len = strlen(ct), .config_name = "config",
		       .devices = json_is_integer(dev) ? json_integer_value(dev) : 0,
		       .limits = &opt->limits};
	const char *mt = json_string_value(model);
	if (mo_api_calib_is_preset(mt))
		in.preset = mt;
	else {
		in.model = mt;
		in.model_len = strlen(mt);
		in.model_name = "model";
	}
	mo_diags *d = NULL;
	mo_error err = {0};
	int rc = -1;
	if (mo_diags_new(&d) != 0 || mo_check(&c->configs[c->n], &c->models[c->n], d, &in, &err) != 0)
		mo_api_reply_error(out, &err);
	else if (mo_diags_errors(d)) {
		mo_diags_sort(d);
		const mo_diag *x = mo_diags_get(d, 0);
		snprintf(text, sizeof text, "runs[%zu]: %.120s", i, x->message);
		mo_api_problem_at(out, 422, "invalid-config", text, x->line, x->column);
	} else if (!c->models[c->n]) {
		snprintf(text, sizeof text, "runs[%zu]: no model", i);
		mo_api_problem(out, 422, "model-needed", text);
	} else
		rc = 0;
	c->runs[c->n] = (mo_calibrate_run){c->models[c->n], c->configs[c->n], seconds};
	c->n++; /* freed with the others either way */
	mo_diags_free(d);
	return rc;
}

static int mo_api_calib_parse(mo_api_calib *c, const json_t *root, const mo_api_options *opt,
			      mo_api_response *out)
{
	const json_t *runs = json_object_get(root, "runs"), *r;
	const char *key;
	const json_t *v;
	size_t i;
	if (!json_is_object(root))
		return mo_api_calib_bad(out, "the body must be a JSON object");
	json_object_foreach((json_t *)root, key, v) if (strcmp(key, "runs") != 0 &&
							 strcmp(key, "constants") != 0)
	{
		char text[120];
		snprintf(text, sizeof text, "unknown member '%.60s' (expected runs, constants)", key);
		return mo_api_calib_bad(out, text);
	}
	if (!json_is_array(runs) || json_array_size(runs) == 0 ||
	    json_array_size(runs) > MO_API_CALIB_RUNS)
		return mo_api_calib_bad(out, "'runs' must be an array of 1 to 32 measured runs");
	if (mo_api_calib_constants(c, json_object_get(root, "constants"), out) != 0)
		return -1;
	json_array_foreach(runs, i, r) if (mo_api_calib_run(c, r, i, opt, out) != 0) return -1;
	return 0;
}

/* What a run's log gave: the summary and the warm-up lines it skipped. */
static json_t *mo_api_calib_log_json(const mo_steplog *l)
{
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	json_t *o = json_pack("{s:s, s:I, s:I, s:f, s:f, s:f}", "format", s->format, "times",
			      (json_int_t)s->times, "used", (json_int_t)s->used, "median_seconds",
			      s->median_seconds, "min_seconds", s->min_seconds, "max_seconds",
			      s->max_seconds);
	json_t *warm = json_array();
	for (size_t i = 0; i < s->warmup; i++) {
		const mo_steplog_time *t = mo_steplog_get(l, i);
		json_array_append_new(warm, json_pack("{s:I, s:I, s:f}", "line", (json_int_t)t->line,
						      "iteration", (json_int_t)t->iteration,
						      "seconds", t->seconds));
	}
	json_object_set_new(o, "warmup", warm);
	if (s->skipped >= 0)
		json_object_set_new(o, "skipped_iterations", json_integer(s->skipped));
	if (s->nan >= 0)
		json_object_set_new(o, "nan_iterations", json_integer(s->nan));
	return o;
}

static json_t *mo_api_calib_json(const mo_api_calib *c, const mo_calibrate_result *r)
{
	json_t *o = json_object(), *k = json_array(), *runs = json_array();
	char *yaml = mo_calibrate_device_yaml(r);
	for (int i = 0; i < MO_CALIB_N; i++)
		json_array_append_new(k, json_pack("{s:s, s:f, s:f}", "name", r->names[i], "before",
						   r->before[i], "after", r->after[i]));
	for (size_t i = 0; i < r->n; i++) {
		json_t *run = json_pack("{s:f, s:f, s:f}", "measured_seconds",
					c->runs[i].measured_seconds, "estimated_before",
					r->est_before[i], "estimated_after", r->est_after[i]);
		if (c->logs[i])
			json_object_set_new(run, "log", mo_api_calib_log_json(c->logs[i]));
		json_array_append_new(runs, run);
	}
	json_object_set_new(o, "preset", json_string(r->preset));
	json_object_set_new(o, "constants", k);
	json_object_set_new(o, "runs", runs);
	json_object_set_new(o, "median_error_before", json_real(r->median_error_before));
	json_object_set_new(o, "median_error_after", json_real(r->median_error_after));
	json_object_set_new(o, "device_yaml", yaml ? json_string(yaml) : json_null());
	free(yaml);
	return o;
}

int mo_api_calibrate(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt)
{
	mo_api_calib *c = calloc(1, sizeof *c);
	mo_calibrate_result r;
	mo_error err = {0};
	int rc = -1;
	json_t *root = mo_api_json_body(out, rq);
	if (!root || !c) {
		free(c);
		json_decref(root);
		if (!out->body)
			mo_api_problem(out, 500, "internal", "out of memory");
		return 0;
	}
	if (mo_api_calib_parse(c, root, opt, out) != 0)
		goto out_free;
	if (mo_calibrate(&r, c->runs, c->n, c->which, &err) != 0) {
		if (err.code == MO_ERR_USAGE)
			mo_api_problem(out, 422, "invalid-request", err.text);
		else
			mo_api_reply_error(out, &err);
		goto out_free;
	}
	rc = mo_api_reply_json(out, mo_api_calib_json(c, &r));
	mo_calibrate_result_free(&r);
out_free:
	for (size_t i = 0; i < c->n; i++) {
		mo_model_free(c->models[i]);
		mo_config_free(c->configs[i]);
		mo_steplog_free(c->logs[i]);
	}
	free(c);
	json_decref(root);
	return out->body ? 0 : rc;
}
