/* POST /api/v1/ledger: a measured memory trace in a JSON body ("trace":
 * the MindSpore ledger's CSV text or a memopt trace), read by the core's
 * ledger reader; with "model" (and "config") the estimate beside it. The
 * answer is the JSON `memopt ledger --json` prints. */
#include "api_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct mo_api_ledger_req {
	const char *trace;
	size_t trace_len;
	const char *config, *model;
	int64_t devices, stage;
	mo_ledger_options opt;
} mo_api_ledger_req;

static int mo_api_ledger_bad(mo_api_response *out, const char *detail)
{
	mo_api_problem(out, 422, "invalid-request", detail);
	return -1;
}

static int mo_api_ledger_string(const char **out, const json_t *root, const char *key,
				mo_api_response *out_res)
{
	const json_t *v = json_object_get(root, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		char text[96];
		snprintf(text, sizeof text, "'%s' must be a string", key);
		return mo_api_ledger_bad(out_res, text);
	}
	*out = json_string_value(v);
	return 0;
}

/* An integer member in [lo, hi], or dflt when absent. */
static int mo_api_ledger_int(int64_t *out, const json_t *root, const char *key, int64_t lo,
			     int64_t hi, int64_t dflt, mo_api_response *res)
{
	const json_t *v = json_object_get(root, key);
	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		char text[128];
		snprintf(text, sizeof text, "'%s' must be an integer from %lld to %lld", key,
			 (long long)lo, (long long)hi);
		return mo_api_ledger_bad(res, text);
	}
	*out = json_integer_value(v);
	return 0;
}

static int mo_api_ledger_keys(const json_t *root, mo_api_response *out)
{
	static const char *const known[] = {"trace",       "config",      "model",
					    "devices",     "stage",       "step_start",
					    "layer_start", "transient_ms", "first_layer"};
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)root, key, v) {
		size_t i = 0;
		while (i < sizeof known / sizeof *known && strcmp(known[i], key) != 0)
			i++;
		if (i == sizeof known / sizeof *known) {
			char text[200];
			snprintf(text, sizeof text,
				 "unknown member '%.60s' (expected trace, config, model, devices, "
				 "stage, step_start, layer_start, transient_ms, first_layer)",
				 key);
			return mo_api_ledger_bad(out, text);
		}
	}
	return 0;
}

static int mo_api_ledger_parse(mo_api_ledger_req *rq, const json_t *root, mo_api_response *out)
{
	const json_t *t = json_object_get(root, "trace"), *ms;
	memset(rq, 0, sizeof *rq);
	if (!json_is_object(root))
		return mo_api_ledger_bad(out, "the body must be a JSON object");
	if (mo_api_ledger_keys(root, out) != 0)
		return -1;
	if (!json_is_string(t))
		return mo_api_ledger_bad(out, "'trace' must be a string holding the trace's text "
					      "(MindSpore ledger CSV or memopt trace)");
	rq->trace = json_string_value(t);
	rq->trace_len = json_string_length(t);
	if (mo_api_ledger_string(&rq->config, root, "config", out) ||
	    mo_api_ledger_string(&rq->model, root, "model", out) ||
	    mo_api_ledger_string(&rq->opt.step_start, root, "step_start", out) ||
	    mo_api_ledger_string(&rq->opt.layer_start, root, "layer_start", out) ||
	    mo_api_ledger_int(&rq->devices, root, "devices", 1, 1048576, 0, out) ||
	    mo_api_ledger_int(&rq->stage, root, "stage", 0, 100000, -1, out) ||
	    mo_api_ledger_int(&rq->opt.first_layer, root, "first_layer", -1000000, 1000000, 0,
			      out))
		return -1;
	ms = json_object_get(root, "transient_ms");
	if (ms && !json_is_null(ms)) {
		double v = json_number_value(ms);
		if (!json_is_number(ms) || !isfinite(v) || v <= 0 || v > 1e8)
			return mo_api_ledger_bad(out, "'transient_ms' must be a number above 0, "
						      "up to 1e8");
		rq->opt.transient_ms = v;
	}
	return 0;
}

static int mo_api_ledger_is_preset(const char *name)
{
	for (size_t i = 0; i < mo_presets_count(); i++)
		if (strcmp(mo_preset_name(i), name) == 0)
			return 1;
	return 0;
}

/* The estimate of "model" / "config" (none when neither is given). */
static int mo_api_ledger_estimate(mo_estimate **e, const mo_api_ledger_req *rq,
				  const mo_api_options *opt, mo_api_response *out)
{
	static const char none[] = "recompute:\n  mode: None\n";
	mo_diags *d = NULL;
	mo_config *cfg = NULL;
	mo_model *m = NULL;
	mo_resolved *rs = NULL;
	mo_error err = {0};
	int rc = -1;
	*e = NULL;
	if (!rq->config && !rq->model)
		return 0;
	mo_input in = {.config = rq->config ? rq->config : none,
		       .config_len = strlen(rq->config ? rq->config : none),
		       .config_name = "config", .devices = rq->devices, .limits = &opt->limits};
	if (rq->model && mo_api_ledger_is_preset(rq->model))
		in.preset = rq->model;
	else if (rq->model) {
		in.model = rq->model;
		in.model_len = strlen(rq->model);
		in.model_name = "model";
	}
	if (mo_diags_new(&d) != 0 || mo_check_resolved(&cfg, &m, &rs, d, &in, &err) != 0) {
		mo_api_reply_error(out, &err);
		goto out_free;
	}
	if (mo_diags_errors(d)) {
		mo_diags_sort(d);
		const mo_diag *x = mo_diags_get(d, 0);
		mo_api_problem_at(out, 422, "invalid-config", x->message, x->line, x->column);
		goto out_free;
	}
	if (!m) {
		mo_api_problem(out, 422, "model-needed", "the comparison needs a model: give 'model'");
		goto out_free;
	}
	if (mo_estimate_resolved(e, rs, &err) != 0) {
		/* model-needed, the work limit, out of memory, ... as every
		 * route says them */
		mo_api_reply_error(out, &err);
		goto out_free;
	}
	rc = 0;
out_free:
	mo_resolved_free(rs);
	mo_model_free(m);
	mo_config_free(cfg);
	mo_diags_free(d);
	return rc;
}

/* The ledger's JSON text as the 200 answer. */
static int mo_api_ledger_reply(mo_api_response *out, char *text)
{
	if (!text)
		return mo_api_problem(out, 500, "internal", "out of memory");
	out->status = 200;
	out->content_type = "application/json";
	out->body = text;
	out->len = strlen(text);
	return 0;
}

int mo_api_ledger(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt)
{
	mo_api_ledger_req req;
	mo_estimate *e = NULL;
	mo_ledger *l = NULL;
	mo_ledger_compare *c = NULL;
	mo_error err = {0};
	int rc = 0;
	json_t *root = mo_api_json_body(out, rq);
	if (!root)
		return out->body ? 0 : -1;
	if (mo_api_ledger_parse(&req, root, out) != 0 ||
	    mo_api_ledger_estimate(&e, &req, opt, out) != 0)
		goto out_free;
	if (mo_ledger_read_buffer(&l, req.trace, req.trace_len, &req.opt, &err) != 0) {
		if (err.code == MO_ERR_NOMEM)
			rc = mo_api_problem(out, 500, "internal", "out of memory");
		else
			rc = mo_api_problem_at(out, 422,
					       err.code == MO_ERR_LIMIT ? "limit" : "invalid-trace",
					       err.text, err.line, err.column);
		goto out_free;
	}
	if (e && mo_ledger_compare_run(&c, l, e, req.stage, &err) != 0) {
		rc = mo_api_problem(out, 422, "invalid-request", err.text);
		goto out_free;
	}
	rc = mo_api_ledger_reply(out, mo_ledger_json(l, c, "trace"));
out_free:
	mo_ledger_compare_free(c);
	mo_ledger_free(l);
	mo_estimate_free(e);
	json_decref(root);
	return out->body ? 0 : rc;
}
