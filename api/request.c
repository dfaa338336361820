/* Request bodies: {"config", "model", "devices"} JSON or a whole YAML. */
#include "api_internal.h"
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_API_MAX_DEVICES 1048576

json_t *mo_api_json_body(mo_api_response *out, const mo_api_request *rq)
{
	json_error_t jerr;
	json_t *root = NULL;

	root = json_loadb(rq->body ? rq->body : "", rq->len,
			  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	/* jansson's text for a NUL names its own decoding flag, which no client can pass */
	if (!root)
		mo_api_problem_at(out, 400, "malformed-json",
				  json_error_code(&jerr) == json_error_null_character
					  ? "a NUL character (\\u0000) is not allowed in JSON text"
					  : jerr.text,
				  jerr.line > 0 ? jerr.line : 1,
				  jerr.column > 0 ? jerr.column : 1);
	return root;
}

static int mo_api_unprocessable(mo_api_response *out, const char *detail)
{
	mo_api_problem(out, 422, "invalid-request", detail);
	return 1;
}

static int mo_api_is_preset(const char *name)
{
	for (size_t i = 0; i < mo_presets_count(); i++)
		if (strcmp(mo_preset_name(i), name) == 0)
			return 1;
	return 0;
}

/* A model string is a preset name, or a model file's text when it has
 * the shape of one (a newline, a colon or a brace). */
static int mo_api_model_string(mo_api_input *in, mo_api_response *out,
			       const json_t *model)
{
	const char *s = json_string_value(model);
	size_t n = json_string_length(model);

	if (mo_api_is_preset(s)) {
		in->preset = s;
		return 0;
	}
	if (!memchr(s, '\n', n) && !memchr(s, ':', n) && !memchr(s, '{', n)) {
		char detail[160];

		snprintf(detail, sizeof detail,
			 "'model' names no preset: '%.60s' (GET /api/v1/presets lists them)", s);
		return mo_api_unprocessable(out, detail);
	}
	in->model_text = malloc(n + 1);
	if (!in->model_text)
		return mo_api_problem(out, 500, "internal", "out of memory"), 1;
	memcpy(in->model_text, s, n + 1);
	in->model_len = n;
	return 0;
}

static int mo_api_model_object(mo_api_input *in, mo_api_response *out,
			       const json_t *model)
{
	in->model_text = json_dumps(model, JSON_COMPACT);
	if (!in->model_text)
		return mo_api_problem(out, 500, "internal", "out of memory"), 1;
	in->model_len = strlen(in->model_text);
	return 0;
}

static int mo_api_read_model(mo_api_input *in, mo_api_response *out,
			     const json_t *model)
{
	if (!model || json_is_null(model))
		return 0;
	if (json_is_string(model))
		return mo_api_model_string(in, out, model);
	if (json_is_object(model))
		return mo_api_model_object(in, out, model);
	return mo_api_unprocessable(out,
		"'model' must be a preset name, a model object or a model file's text");
}

static int mo_api_read_devices(mo_api_input *in, mo_api_response *out,
			       const json_t *devices)
{
	json_int_t n;

	if (!devices || json_is_null(devices))
		return 0;
	if (!json_is_integer(devices))
		return mo_api_unprocessable(out, "'devices' must be an integer");
	n = json_integer_value(devices);
	if (n < 1 || n > MO_API_MAX_DEVICES)
		return mo_api_unprocessable(out, "'devices' must be between 1 and 1048576");
	in->devices = (int64_t)n;
	return 0;
}

static int mo_api_read_flag(int *flag, mo_api_response *out,
			    const json_t *v, const char *name)
{
	char detail[64];

	if (!v || json_is_null(v))
		return 0;
	snprintf(detail, sizeof detail, "'%s' must be true or false", name);
	if (!json_is_boolean(v))
		return mo_api_unprocessable(out, detail);
	*flag = json_is_true(v);
	return 0;
}

static int mo_api_check_keys(mo_api_response *out, json_t *root)
{
	const char *key;
	json_t *v;

	json_object_foreach(root, key, v) {
		char detail[224];

		if (!strcmp(key, "config") || !strcmp(key, "model") ||
		    !strcmp(key, "devices") || !strcmp(key, "all_paths") ||
		    !strcmp(key, "per_layer") ||
		    !strcmp(key, "budget") || !strcmp(key, "allow") || !strcmp(key, "form") ||
		    !strcmp(key, "detail"))
			continue;
		snprintf(detail, sizeof detail,
			 "unknown member '%.60s' (expected config, model, devices, all_paths, "
			 "per_layer, budget, allow, form, detail)", key);
		return mo_api_unprocessable(out, detail);
	}
	return 0;
}

/* "form": "canonical" (the default) or "as-written". */
static int mo_api_read_form(int *as_written, mo_api_response *out, const json_t *v)
{
	const char *s = json_string_value(v);

	if (!v || json_is_null(v))
		return 0;
	if (s && !strcmp(s, "canonical"))
		return 0;
	if (s && !strcmp(s, "as-written")) {
		*as_written = 1;
		return 0;
	}
	return mo_api_unprocessable(out, "'form' must be \"canonical\" or \"as-written\"");
}

#define MO_API_DETAIL_WORDS "summary, layers, timeline, accuracy or full"

static int mo_api_detail_word(unsigned *parts, const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "summary"))
		return 0;
	if (!strcmp(s, "layers"))
		*parts |= MO_JSON_EST_LAYERS;
	else if (!strcmp(s, "timeline"))
		*parts |= MO_JSON_EST_TIMELINE;
	else if (!strcmp(s, "accuracy"))
		*parts |= MO_JSON_EST_ACCURACY;
	else if (!strcmp(s, "full"))
		*parts |= MO_JSON_EST_ALL;
	else
		return -1;
	return 0;
}

/* "detail": one word or a list of them (summary, layers, timeline,
 * accuracy, full):
 * what an estimate answers beyond its summary; absent: the summary. */
static int mo_api_read_detail(unsigned *parts, mo_api_response *out, const json_t *v)
{
	*parts = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		if (mo_api_detail_word(parts, json_string_value(v)) == 0)
			return 0;
	} else if (json_is_array(v)) {
		size_t i;
		for (i = 0; i < json_array_size(v); i++)
			if (mo_api_detail_word(parts, json_string_value(json_array_get(v, i))) != 0)
				break;
		if (i == json_array_size(v))
			return 0;
	}
	return mo_api_unprocessable(out, "'detail' is one of " MO_API_DETAIL_WORDS
				    ", or a list of them");
}

static int mo_api_read_json(mo_api_input *in, mo_api_response *out,
			    const mo_api_request *rq)
{
	json_t *config;

	in->root = mo_api_json_body(out, rq);
	if (!in->root)
		return 1;
	if (!json_is_object(in->root))
		return mo_api_unprocessable(out, "the body must be a JSON object");
	if (mo_api_check_keys(out, in->root))
		return 1;
	config = json_object_get(in->root, "config");
	if (!json_is_string(config))
		return mo_api_unprocessable(out, "'config' must be a string holding the YAML text");
	in->config = json_string_value(config);
	in->config_len = json_string_length(config);
	if (mo_api_read_model(in, out, json_object_get(in->root, "model")))
		return 1;
	if (mo_api_read_flag(&in->all_paths, out, json_object_get(in->root, "all_paths"),
			     "all_paths"))
		return 1;
	if (mo_api_read_flag(&in->per_layer, out, json_object_get(in->root, "per_layer"),
			     "per_layer"))
		return 1;
	if (mo_api_read_form(&in->as_written, out, json_object_get(in->root, "form")))
		return 1;
	if (mo_api_read_detail(&in->detail, out, json_object_get(in->root, "detail")))
		return 1;
	return mo_api_read_devices(in, out, json_object_get(in->root, "devices"));
}

int mo_api_input_read(mo_api_input *in, mo_api_response *out,
		      const mo_api_request *rq, const mo_api_options *opt)
{
	(void)opt;
	memset(in, 0, sizeof *in);
	in->per_layer = -1;
	if (rq->kind == MO_API_BODY_JSON)
		return mo_api_read_json(in, out, rq);
	in->config = rq->body ? rq->body : "";
	in->config_len = rq->len;
	in->detail = MO_JSON_EST_ALL; /* a whole YAML body has no members to ask with */
	return 0;
}

void mo_api_input_free(mo_api_input *in)
{
	json_decref(in->root);
	free(in->model_text);
	memset(in, 0, sizeof *in);
}
