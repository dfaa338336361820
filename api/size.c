/* POST /api/v1/size: {"model": preset name | model file text | object,
 * "devices": N | "LOW-HIGH", "global_batch": G, "devices_per_node"?,
 * "budget"? (bytes or "58GiB"), "headroom"? (percent), "top"? (K or
 * "all"), "base"? (a MindSpore Transformers training YAML's text: each
 * layout's config is that file rewritten; without "model", its own model)}
 * -> the size answer (json.h mo_json_size). */
#include "api_internal.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mo_api_size_bad(mo_api_response *out, const char *detail)
{
	return mo_api_problem(out, 422, "invalid-request", detail);
}

/* A positive integer member in [1, hi]; absent: *v unchanged. 0 or -1. */
static int mo_api_size_int(int64_t *v, const json_t *root, const char *key, int64_t hi,
			   mo_api_response *out)
{
	const json_t *j = json_object_get(root, key);
	if (!j)
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 1 || json_integer_value(j) > hi) {
		char d[128];
		snprintf(d, sizeof d, "'%s' must be an integer from 1 to %lld", key, (long long)hi);
		mo_api_size_bad(out, d);
		return -1;
	}
	*v = (int64_t)json_integer_value(j);
	return 0;
}

static int mo_api_size_devices(mo_size_input *in, const json_t *root, mo_api_response *out)
{
	const json_t *j = json_object_get(root, "devices");
	if (json_is_string(j)) {
		long long lo = 0, hi = 0;
		int used = 0;
		if (sscanf(json_string_value(j), "%lld-%lld%n", &lo, &hi, &used) == 2 &&
		    (size_t)used == json_string_length(j) && lo >= 1 && hi >= lo && hi <= 1048576) {
			in->devices = lo;
			in->devices_max = hi;
			return 0;
		}
		return mo_api_size_bad(out, "'devices' must be a count or a range \"LOW-HIGH\""), -1;
	}
	if (!j)
		return mo_api_size_bad(out, "'devices' is required"), -1;
	return mo_api_size_int(&in->devices, root, "devices", 1048576, out);
}

static int mo_api_size_budget(mo_size_input *in, const json_t *root, mo_api_response *out)
{
	const json_t *b = json_object_get(root, "budget"), *h = json_object_get(root, "headroom");
	if (b && json_is_integer(b) && json_integer_value(b) > 0)
		in->budget = (uint64_t)json_integer_value(b);
	else if (b && !(json_is_string(b) && mo_parse_size(&in->budget, json_string_value(b)) == 0 &&
			in->budget > 0))
		return mo_api_size_bad(out, "'budget' must be a positive byte count or a size such "
					    "as \"58GiB\""),
		       -1;
	if (h && (!json_is_number(h) || json_number_value(h) < 0 || json_number_value(h) >= 100))
		return mo_api_size_bad(out, "'headroom' must be a percentage from 0 to 99"), -1;
	if (h && b)
		return mo_api_size_bad(out, "give 'budget' or 'headroom', not both"), -1;
	in->headroom_percent = h ? json_number_value(h) : 0;
	return 0;
}

static int mo_api_size_top(mo_size_input *in, const json_t *root, mo_api_response *out)
{
	const json_t *t = json_object_get(root, "top");
	if (json_is_string(t) && strcmp(json_string_value(t), "all") == 0) {
		in->top = SIZE_MAX;
		return 0;
	}
	int64_t k = 10;
	if (mo_api_size_int(&k, root, "top", 1000000, out) != 0)
		return -1;
	in->top = (size_t)k;
	return 0;
}

static int mo_api_size_keys(const json_t *root, mo_api_response *out)
{
	static const char *const known[] = {"model", "devices", "global_batch", "devices_per_node",
					    "budget", "headroom", "top", "base"};
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)root, key, v) {
		bool ok = false;
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			ok |= strcmp(key, known[i]) == 0;
		if (!ok) {
			char d[200];
			snprintf(d, sizeof d,
				 "unknown member '%.60s' (expected model, devices, global_batch, "
				 "devices_per_node, budget, headroom, top, base)",
				 key);
			return mo_api_size_bad(out, d), -1;
		}
	}
	return 0;
}

static int mo_api_size_read(mo_size_input *in, const json_t *root, mo_api_response *out)
{
	if (!json_is_object(root))
		return mo_api_size_bad(out, "the body must be a JSON object"), -1;
	if (mo_api_size_keys(root, out) != 0 || mo_api_size_devices(in, root, out) != 0)
		return -1;
	if (!json_object_get(root, "global_batch"))
		return mo_api_size_bad(out, "'global_batch' is required"), -1;
	if (mo_api_size_int(&in->global_batch, root, "global_batch", 16777216, out) != 0 ||
	    mo_api_size_int(&in->devices_per_node, root, "devices_per_node", 1048576, out) != 0)
		return -1;
	return mo_api_size_budget(in, root, out) || mo_api_size_top(in, root, out) ? -1 : 0;
}

/* "model" into in: a preset name, or a model file as text or as an object
 * (*dumped: the object's text, the caller's); absent with a base, the
 * base's own model. 0, or -1 with the answer written. */
static int mo_api_size_model_input(mo_input *in, const json_t *root, bool has_base,
				   char **dumped, mo_api_response *out)
{
	const json_t *mj = json_object_get(root, "model");
	if (!mj && has_base)
		return 0;
	if (json_is_string(mj)) {
		const char *s = json_string_value(mj);
		bool preset = false;
		for (size_t i = 0; i < mo_presets_count(); i++)
			preset |= strcmp(mo_preset_name(i), s) == 0;
		if (preset)
			in->preset = s;
		in->model = preset ? NULL : s;
		in->model_len = preset ? 0 : json_string_length(mj);
	} else if (json_is_object(mj)) {
		*dumped = json_dumps(mj, JSON_COMPACT);
		in->model = *dumped;
		in->model_len = *dumped ? strlen(*dumped) : 0;
	} else {
		mo_api_size_bad(out, "'model' must be a preset name, a model file's text or an "
				     "object (or give 'base', a training YAML with its model)");
		return -1;
	}
	in->model_name = "model";
	return 0;
}

/* The model (and with a base, the base's config in *base) as the files
 * state them; when that has errors (a file without a device count), again
 * on the question's device count: the search replaces the layout. */
static mo_model *mo_api_size_model(const json_t *root, const mo_size_input *q,
				   const mo_api_options *opt, mo_config **base,
				   mo_api_response *out)
{
	const json_t *bj = json_object_get(root, "base");
	char *dumped = NULL;
	mo_input in = {.config = "recompute:\n  mode: None\n", .config_name = "<none>",
		       .limits = &opt->limits};
	in.config_len = strlen(in.config);
	if (bj && !json_is_string(bj)) {
		mo_api_size_bad(out, "'base' must be a training YAML's text");
		return NULL;
	}
	if (bj) {
		in.config = json_string_value(bj);
		in.config_len = json_string_length(bj);
		in.config_name = "base";
	}
	if (mo_api_size_model_input(&in, root, bj != NULL, &dumped, out) != 0)
		return NULL;
	mo_config *c = NULL;
	mo_model *m = NULL;
	mo_diags *d = NULL;
	mo_error err = {0};
	for (int pass = 0; pass < 2; pass++) {
		mo_config_free(c);
		mo_model_free(m);
		mo_diags_free(d);
		c = NULL, m = NULL, d = NULL;
		in.devices = pass ? q->devices : 0;
		if (mo_diags_new(&d) != 0 || mo_check(&c, &m, d, &in, &err) != 0 ||
		    (m && !mo_diags_errors(d)))
			break;
	}
	if (!d || err.code) {
		mo_api_size_bad(out, err.text[0] ? err.text : "out of memory");
	} else if (!m || mo_diags_errors(d)) {
		const mo_diag *first = mo_diags_count(d) ? mo_diags_get(d, 0) : NULL;
		mo_api_problem(out, 422, bj ? "invalid-base" : "invalid-model",
			       first ? first->message : "'model' holds no model");
		mo_model_free(m);
		m = NULL;
	}
	if (m && bj)
		*base = c;
	else
		mo_config_free(c);
	mo_diags_free(d);
	free(dumped);
	return m;
}

int mo_api_size(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt)
{
	json_t *root = mo_api_json_body(out, rq);
	if (!root)
		return 0;
	mo_size_input in = {0};
	mo_model *m = NULL;
	mo_config *base = NULL;
	if (mo_api_size_read(&in, root, out) == 0)
		m = mo_api_size_model(root, &in, opt, &base, out);
	int rc = 0;
	if (m) {
		in.model = m;
		in.base = base;
		mo_size_result *r = NULL;
		mo_error err = {0};
		if (mo_size_run(&r, &in, &err) != 0)
			rc = err.code == MO_ERR_USAGE ? mo_api_size_bad(out, err.text)
						      : mo_api_reply_error(out, &err);
		else
			rc = mo_api_reply_json(out, mo_json_size(r));
		/* the best so far depends on the time it had: never replayed */
		if (r && !mo_size_complete(r))
			out->no_store = 1;
		mo_size_result_free(r);
	}
	mo_model_free(m);
	mo_config_free(base);
	json_decref(root);
	return rc;
}
