/* api/: routes, header checks, request shapes and answers, without sockets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_internal.h"

static const char GOOD[] = "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n";
static const char BAD[] = "recompute:\n  mode: full\n  full_recompute_layer: [5, 0-3]\n";

typedef struct fixture {
	mo_api_options opt;
	mo_api_response res;
	json_t *json;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);

	if (!f)
		return -1;
	mo_api_options_default(&f->opt);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	mo_api_response_free(&f->res);
	json_decref(f->json);
	free(f);
	return 0;
}

/* Answers a request; parses a JSON answer into f->json. */
static int handle(fixture *f, const char *method, const char *path,
		  const char *ctype, const char *body)
{
	mo_api_response_free(&f->res);
	json_decref(f->json);
	f->json = NULL;
	memset(&f->res, 0, sizeof f->res);
	assert_int_equal(mo_api_handle(&f->res, method, path, ctype, body,
				       body ? strlen(body) : 0, &f->opt), 0);
	assert_non_null(f->res.body);
	assert_int_equal(strlen(f->res.body), f->res.len);
	if (strstr(f->res.content_type, "json"))
		f->json = json_loads(f->res.body, 0, NULL);
	return f->res.status;
}

static char *request_body(const char *config, const char *model, const char *extra)
{
	json_t *o = json_pack("{s:s}", "config", config);
	char *text;

	if (model)
		json_object_set_new(o, "model", json_string(model));
	if (extra) {
		json_t *e = json_loads(extra, 0, NULL);

		assert_non_null(e);
		json_object_update(o, e);
		json_decref(e);
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

static void assert_problem(fixture *f, int status, const char *type)
{
	assert_int_equal(f->res.status, status);
	assert_string_equal(f->res.content_type, "application/problem+json");
	assert_non_null(f->json);
	assert_int_equal(json_integer_value(json_object_get(f->json, "status")), status);
	assert_string_equal(json_string_value(json_object_get(f->json, "type")), type);
	assert_non_null(json_string_value(json_object_get(f->json, "title")));
}

static void test_routes(void **state)
{
	(void)state;
	assert_int_equal(mo_api_route_of("/api/v1/validate"), MO_ROUTE_VALIDATE);
	assert_int_equal(mo_api_route_of("/api/v1/presets"), MO_ROUTE_PRESETS);
	assert_int_equal(mo_api_route_of("/api/v1/presets/x"), MO_ROUTE_PRESET);
	assert_int_equal(mo_api_route_of("/api/v1/presets/x/y"), MO_ROUTE_UNKNOWN);
	assert_int_equal(mo_api_route_of("/api/v1/presets/"), MO_ROUTE_UNKNOWN);
	assert_int_equal(mo_api_route_of("/api/v1/nope"), MO_ROUTE_UNKNOWN);
	assert_int_equal(mo_api_route_of("/index.html"), MO_ROUTE_STATIC);
	assert_int_equal(mo_api_route_of("/metrics"), MO_ROUTE_METRICS);
	assert_string_equal(mo_api_route_name(MO_ROUTE_PRESET), "/api/v1/presets/{name}");
	assert_string_equal(mo_api_route_allow(MO_ROUTE_EXPAND), "POST");
	assert_string_equal(mo_api_route_allow(MO_ROUTE_HEALTHZ), "GET, HEAD");
}

static void test_precheck(void **state)
{
	fixture *f = *state;
	mo_api_response *r = &f->res;

	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", "application/json", 10, &f->opt), 0);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", "application/json; charset=UTF-8", -1, &f->opt), 0);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", "Application/YAML", -1, &f->opt), 0);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", "application/json",
					 (long long)f->opt.max_body + 1, &f->opt), 1);
	assert_int_equal(r->status, 413);
	mo_api_response_free(r);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", "text/plain", 10, &f->opt), 1);
	assert_int_equal(r->status, 415);
	mo_api_response_free(r);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", NULL, 10, &f->opt), 1);
	assert_int_equal(r->status, 415);
	mo_api_response_free(r);
	assert_int_equal(mo_api_precheck(r, "GET", "/api/v1/validate", NULL, -1, &f->opt), 1);
	assert_int_equal(r->status, 405);
	assert_string_equal(r->allow, "POST");
	mo_api_response_free(r);
	assert_int_equal(mo_api_precheck(r, "HEAD", "/healthz", NULL, -1, &f->opt), 0);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/estimate", "application/json", 2, &f->opt), 0);
	assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/plan", "application/json", 2, &f->opt), 0);
}

static void test_healthz_and_openapi(void **state)
{
	fixture *f = *state;

	assert_int_equal(handle(f, "GET", "/healthz", NULL, NULL), 200);
	assert_string_equal(json_string_value(json_object_get(f->json, "status")), "ok");
	assert_int_equal(handle(f, "GET", "/api/v1/openapi.yaml", NULL, NULL), 200);
	assert_string_equal(f->res.content_type, "application/yaml");
	assert_non_null(strstr(f->res.body, "openapi: 3.0.3"));
	assert_int_equal(handle(f, "GET", "/nope", NULL, NULL), 404);
	assert_problem(f, 404, "urn:memopt:problem:not-found");
}

static void test_malformed_json(void **state)
{
	fixture *f = *state;

	handle(f, "POST", "/api/v1/validate", "application/json", "{\n  \"config\": \"x\",\n  oops\n}");
	assert_problem(f, 400, "urn:memopt:problem:malformed-json");
	assert_int_equal(json_integer_value(json_object_get(f->json, "line")), 3);
	assert_true(json_integer_value(json_object_get(f->json, "column")) >= 1);
	handle(f, "POST", "/api/v1/validate", "application/json", "{\"config\": \"a\", \"config\": \"b\"}");
	assert_problem(f, 400, "urn:memopt:problem:malformed-json");
	handle(f, "POST", "/api/v1/validate", "application/json", "");
	assert_problem(f, 400, "urn:memopt:problem:malformed-json");
	handle(f, "POST", "/api/v1/validate", "application/json", "{\"config\": \"\\u0000\"}");
	assert_problem(f, 400, "urn:memopt:problem:malformed-json");
	/* in memopt's words, not jansson's decoding flag */
	const char *detail = json_string_value(json_object_get(f->json, "detail"));
	assert_non_null(detail);
	assert_non_null(strstr(detail, "NUL character"));
	assert_null(strstr(detail, "JSON_ALLOW_NUL"));
}

/* The device count unknown: the core's detail, the API's hint, and the
 * path a client names its own control by. */
static void test_model_needed_problem(void **state)
{
	fixture *f = *state;

	handle(f, "POST", "/api/v1/estimate", "application/json",
	       "{\"config\": \"recompute:\\n  full_recompute_layer: []\\n\", \"model\": \"model:\\n  num_layers: 2\\n"
	       "parallelism:\\n  data_parallel_shard: -1\\n\"}");
	assert_problem(f, 422, "urn:memopt:problem:model-needed");
	assert_string_equal(json_string_value(json_object_get(f->json, "path")), "parallel.world_size");
	assert_non_null(strstr(json_string_value(json_object_get(f->json, "hint")), "\"devices\""));
	const char *detail = json_string_value(json_object_get(f->json, "detail"));
	assert_non_null(strstr(detail, "device count is unknown"));
	assert_null(strstr(detail, "devices\""));
}

static void test_wrong_shapes(void **state)
{
	fixture *f = *state;
	static const char *const bodies[] = {
		"[]", "42", "{\"config\": 1}", "{}", "{\"config\": \"a\", \"model\": 3}",
		"{\"config\": \"a\", \"model\": \"no-such-preset\"}",
		"{\"config\": \"a\", \"devices\": 0}", "{\"config\": \"a\", \"devices\": 1.5}",
		"{\"config\": \"a\", \"devices\": 5000000000}", "{\"config\": \"a\", \"extra\": 1}",
		"{\"config\": \"a\", \"all_paths\": \"yes\"}",
		"{\"config\": \"a\", \"model\": \"num_layers: [\"}",
	};

	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		handle(f, "POST", "/api/v1/validate", "application/json", bodies[i]);
		if (f->res.status != 422)
			fprintf(stderr, "body %s: %d %s\n", bodies[i], f->res.status, f->res.body);
		assert_int_equal(f->res.status, 422);
		assert_string_equal(f->res.content_type, "application/problem+json");
	}
}

static void assert_diags_shape(fixture *f, int valid)
{
	assert_int_equal(f->res.status, 200);
	assert_string_equal(f->res.content_type, "application/json");
	assert_non_null(f->json);
	assert_int_equal(json_is_true(json_object_get(f->json, "valid")), valid);
	assert_true(json_is_array(json_object_get(f->json, "errors")));
	assert_true(json_is_array(json_object_get(f->json, "warnings")));
	assert_int_equal(json_array_size(json_object_get(f->json, "errors")) == 0, valid);
}

static void test_validate(void **state)
{
	fixture *f = *state;
	char *good = request_body(GOOD, mo_preset_name(0), NULL);
	char *bad = request_body(BAD, mo_preset_name(0), "{\"devices\": 8}");
	json_t *d;

	handle(f, "POST", "/api/v1/validate", "application/json", good);
	assert_diags_shape(f, 1);
	handle(f, "POST", "/api/v1/validate", "application/json", bad);
	assert_diags_shape(f, 0);
	d = json_array_get(json_object_get(f->json, "errors"), 0);
	assert_non_null(json_string_value(json_object_get(d, "code")));
	assert_true(json_integer_value(json_object_get(d, "line")) >= 1);
	handle(f, "POST", "/api/v1/validate", "application/json",
	       "{\"config\": \"recompute: [\"}");
	assert_diags_shape(f, 0);
	free(good);
	free(bad);
}

static void test_expand_export(void **state)
{
	fixture *f = *state;
	char *good = request_body(GOOD, mo_preset_name(0), NULL);
	char *all = request_body(GOOD, mo_preset_name(0), "{\"all_paths\": true}");
	char *bad = request_body(BAD, mo_preset_name(0), NULL);
	char *nomodel = request_body(GOOD, NULL, NULL);

	handle(f, "POST", "/api/v1/expand", "application/json", good);
	assert_diags_shape(f, 1);
	assert_true(json_array_size(json_object_get(f->json, "layers")) > 0);
	handle(f, "POST", "/api/v1/expand", "application/json", all);
	assert_diags_shape(f, 1);
	handle(f, "POST", "/api/v1/expand", "application/json", bad);
	assert_diags_shape(f, 0);
	assert_null(json_object_get(f->json, "layers"));
	handle(f, "POST", "/api/v1/expand", "application/json", nomodel);
	assert_true(f->res.status == 422 || f->res.status == 200);
	handle(f, "POST", "/api/v1/export", "application/json", good);
	assert_diags_shape(f, 1);
	assert_non_null(strstr(json_string_value(json_object_get(f->json, "yaml")), "recompute"));
	handle(f, "POST", "/api/v1/export", "application/yaml", GOOD);
	assert_int_equal(f->res.status, 200);
	free(good);
	free(all);
	free(bad);
	free(nomodel);
}

/* An estimate answers what was asked: the summary by default (stages
 * without timelines, no per-layer list), layers and timeline on request,
 * everything for a whole YAML body; a word it does not know is a 422. */
static void test_estimate_detail(void **state)
{
	static const struct {
		const char *extra;
		bool layers, timeline, runs;
		size_t parts;
	} cases[] = {
		{NULL, false, false, false, 0},
		{"{\"detail\": \"summary\"}", false, false, false, 0},
		{"{\"detail\": \"layers\"}", true, false, false, 1},
		{"{\"detail\": [\"timeline\"]}", false, true, false, 1},
		{"{\"detail\": [\"layers\", \"timeline\"]}", true, true, false, 2},
		{"{\"detail\": [\"accuracy\"]}", false, false, true, 1},
		{"{\"detail\": \"full\"}", true, true, true, 3},
	};
	fixture *f = *state;

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *body = request_body(GOOD, mo_preset_name(0), cases[i].extra);

		handle(f, "POST", "/api/v1/estimate", "application/json", body);
		assert_int_equal(f->res.status, 200);
		json_t *stage = json_array_get(json_object_get(f->json, "stages"), 0);
		assert_non_null(json_object_get(stage, "peak_event"));
		assert_int_equal(json_object_get(f->json, "layers") != NULL, cases[i].layers);
		assert_int_equal(json_object_get(stage, "timeline") != NULL, cases[i].timeline);
		assert_int_equal(json_array_size(json_object_get(f->json, "detail")), cases[i].parts);
		/* the accuracy's figures always; the runs behind them when asked */
		json_t *acc = json_object_get(f->json, "accuracy");
		assert_true(json_integer_value(json_object_get(acc, "run_count")) > 0);
		assert_int_equal(json_object_get(acc, "runs") != NULL, cases[i].runs);
		if (cases[i].runs)
			assert_int_equal(json_array_size(json_object_get(acc, "runs")),
					 json_integer_value(json_object_get(acc, "run_count")));
		free(body);
	}
	/* a YAML body: the preset's model file with the sections after it */
	size_t n = strlen(mo_preset_yaml(0)) + sizeof GOOD + 1;
	char *yaml = malloc(n);
	assert_non_null(yaml);
	snprintf(yaml, n, "%s\n%s", mo_preset_yaml(0), GOOD);
	handle(f, "POST", "/api/v1/estimate", "application/yaml", yaml);
	assert_int_equal(f->res.status, 200);
	assert_non_null(json_object_get(f->json, "layers"));
	assert_int_equal(json_array_size(json_object_get(f->json, "detail")), 3);
	free(yaml);
	char *bad = request_body(GOOD, mo_preset_name(0), "{\"detail\": [\"layers\", \"paths\"]}");
	handle(f, "POST", "/api/v1/estimate", "application/json", bad);
	assert_problem(f, 422, "urn:memopt:problem:invalid-request");
	free(bad);
}

/* "form": "as-written" answers the checked text itself (its comments and
 * range spelling kept), the default form the canonical sections; an
 * invalid config has no yaml in either form. */
static void test_export_forms(void **state)
{
	static const char text[] = "recompute:\n  mode: full  # all four\n  full_recompute_layer: [0-1, 2-3]\n";
	fixture *f = *state;
	char *written = request_body(text, mo_preset_name(0), "{\"form\": \"as-written\"}");
	char *canonical = request_body(text, mo_preset_name(0), "{\"form\": \"canonical\"}");
	char *bad = request_body(BAD, mo_preset_name(0), "{\"form\": \"as-written\"}");
	char *unknown = request_body(text, mo_preset_name(0), "{\"form\": \"pretty\"}");

	handle(f, "POST", "/api/v1/export", "application/json", written);
	assert_diags_shape(f, 1);
	assert_string_equal(json_string_value(json_object_get(f->json, "yaml")), text);
	handle(f, "POST", "/api/v1/export", "application/json", canonical);
	assert_string_equal(json_string_value(json_object_get(f->json, "yaml")),
			    "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n");
	handle(f, "POST", "/api/v1/export", "application/json", bad);
	assert_diags_shape(f, 0);
	assert_null(json_object_get(f->json, "yaml"));
	handle(f, "POST", "/api/v1/export", "application/json", unknown);
	assert_int_equal(f->res.status, 422);
	free(written);
	free(canonical);
	free(bad);
	free(unknown);
}

static void test_presets_and_import(void **state)
{
	fixture *f = *state;
	char path[128];

	assert_int_equal(handle(f, "GET", "/api/v1/presets", NULL, NULL), 200);
	assert_true(json_array_size(json_object_get(f->json, "presets")) >= 1);
	/* the devices a model may name, first the Ascend 910B (64 GiB) */
	json_t *devices = json_object_get(f->json, "devices");
	assert_int_equal(json_array_size(devices), mo_device_preset_count());
	assert_string_equal(json_string_value(json_object_get(json_array_get(devices, 0), "name")),
			    "ascend-910b");
	assert_true(json_real_value(json_object_get(json_array_get(devices, 0), "memory_gib")) == 64.0);
	snprintf(path, sizeof path, "/api/v1/presets/%s", mo_preset_name(0));
	assert_int_equal(handle(f, "GET", path, NULL, NULL), 200);
	assert_non_null(f->json);
	assert_int_equal(handle(f, "GET", "/api/v1/presets/nope", NULL, NULL), 404);
	assert_int_equal(handle(f, "POST", "/api/v1/models/import", "application/json",
				"{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_hidden_layers\": 32,"
				" \"num_attention_heads\": 32, \"intermediate_size\": 11008,"
				" \"vocab_size\": 32000}"), 200);
	assert_true(json_is_object(json_object_get(f->json, "model")));
	assert_true(json_is_boolean(json_object_get(f->json, "valid")));
	assert_int_equal(handle(f, "POST", "/api/v1/models/import", "application/json", "{}"), 422);
	assert_int_equal(handle(f, "POST", "/api/v1/models/import", "application/json", "{"), 400);
	/* a model with an error: its findings, no placeholder model beside them */
	assert_int_equal(handle(f, "POST", "/api/v1/models/import", "application/yaml",
				"model:\n  num_layers: -3\n  hidden_size: 4096\n"), 200);
	assert_true(json_is_false(json_object_get(f->json, "valid")));
	assert_null(json_object_get(f->json, "model"));
	json_t *e = json_array_get(json_object_get(f->json, "errors"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "path")), "model.num_layers");
	assert_int_equal(json_integer_value(json_object_get(e, "line")), 2);
	/* a file that does not parse: the syntax error at its line, as /validate says it */
	assert_int_equal(handle(f, "POST", "/api/v1/models/import", "application/yaml",
				"model:\n  num_layers: [\n"), 200);
	assert_true(json_is_false(json_object_get(f->json, "valid")));
	assert_null(json_object_get(f->json, "model"));
	e = json_array_get(json_object_get(f->json, "errors"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "code")), "yaml-syntax");
	assert_true(json_integer_value(json_object_get(e, "line")) >= 2);
}

/* The same answers with the preset cache as without it. */
/* charset: only UTF-8 (any case, quoted or not); "utf-8x" and the like are
 * other charsets (415), a later parameter is fine. */
static void test_charset(void **state)
{
	fixture *f = *state;
	mo_api_response *r = &f->res;
	static const char *const good[] = {
		"application/json;charset=utf-8", "application/json; charset=UTF-8",
		"application/json; charset=\"utf-8\"", "application/json; charset=utf-8 ; q=1",
		"application/yaml; charset=Utf-8;x=y"};
	static const char *const bad[] = {
		"application/json; charset=utf-8x", "application/json; charset=\"utf-8x\"",
		"application/json; charset=utf-88", "application/json; charset=\"utf-8",
		"application/json; charset=utf-8\"", "application/json; charset=latin1",
		"application/json; charset=", "application/yaml; charset=utf-8,latin1"};

	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", good[i], 2, &f->opt), 0);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(mo_api_precheck(r, "POST", "/api/v1/validate", bad[i], 2, &f->opt), 1);
		assert_int_equal(r->status, 415);
		mo_api_response_free(r);
	}
}

/* The model cache keeps the pairs used last: with room for 2, touching A
 * before C comes in evicts B, not A; a model borrowed while its entry is
 * evicted stays usable until released (ASan in make check). */
static void test_model_cache_lru(void **state)
{
	mo_api_model_cache *c = NULL;
	mo_api_model_ref *a = NULL, *b = NULL, *held = NULL, *r = NULL;
	mo_api_cache_stats st;
	mo_error err = {0};
	const char *preset = mo_preset_name(0);
	const mo_model *held_model;

	(void)state;
	assert_int_equal(mo_api_cache_new_bounded(&c, 2), 0);
	assert_non_null(mo_api_cache_get(c, preset, 8, &a, &err));
	assert_non_null(mo_api_cache_get(c, preset, 16, &b, &err));
	mo_api_model_release(a);
	mo_api_model_release(b);
	assert_non_null(mo_api_cache_get(c, preset, 8, &a, &err)); /* A used last */
	mo_api_model_release(a);
	held_model = mo_api_cache_get(c, preset, 8, &held, &err);  /* and held */
	assert_non_null(mo_api_cache_get(c, preset, 32, &r, &err)); /* C evicts B */
	mo_api_model_release(r);
	mo_api_cache_counters(c, &st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.loads, 3);
	assert_int_equal(st.evictions, 1);
	assert_non_null(mo_api_cache_get(c, preset, 8, &r, &err)); /* A: a hit */
	mo_api_model_release(r);
	mo_api_cache_counters(c, &st);
	assert_int_equal(st.loads, 3);
	assert_non_null(mo_api_cache_get(c, preset, 16, &r, &err)); /* B: loaded again, */
	mo_api_model_release(r);                                     /* C evicted */
	assert_non_null(mo_api_cache_get(c, preset, 64, &r, &err)); /* evicts A, held */
	mo_api_model_release(r);
	mo_api_cache_counters(c, &st);
	assert_int_equal(st.loads, 5);
	assert_int_equal(st.evictions, 3);
	assert_true(mo_model_num_layers(held_model) > 0); /* still readable */
	mo_api_model_release(held);
	assert_null(mo_api_cache_get(c, "no-such-preset", 8, &r, &err));
	assert_null(r);
	mo_api_cache_free(c);
}

/* The default cache holds the last 64 pairs, not the first 64 forever: the
 * 65th pair asked for twice is loaded once. */
static void test_model_cache_recent(void **state)
{
	mo_api_model_cache *c = NULL;
	mo_api_model_ref *r = NULL;
	mo_api_cache_stats st;
	mo_error err = {0};

	(void)state;
	assert_int_equal(mo_api_cache_new(&c), 0);
	for (int64_t d = 1; d <= 65; d++) {
		assert_non_null(mo_api_cache_get(c, mo_preset_name(0), d, &r, &err));
		mo_api_model_release(r);
	}
	assert_non_null(mo_api_cache_get(c, mo_preset_name(0), 65, &r, &err));
	mo_api_model_release(r);
	mo_api_cache_counters(c, &st);
	assert_int_equal(st.loads, 65);
	assert_int_equal(st.entries, 64);
	assert_int_equal(st.hits, 1);
	mo_api_cache_free(c);
}

/* A config with 600 mistakes: the answer lists the first 200 and says how
 * many it left out. */
static void test_diagnostics_capped(void **state)
{
	fixture *f = *state;
	size_t cap = 64 * 1024, len = 0;
	char *yaml = malloc(cap);

	assert_non_null(yaml);
	len += (size_t)snprintf(yaml, cap, "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n");
	for (int i = 0; i < 600; i++)
		len += (size_t)snprintf(yaml + len, cap - len, "  bogus_%d: 1\n", i);
	char *body = request_body(yaml, mo_preset_name(0), NULL);
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", body), 200);
	assert_false(json_is_true(json_object_get(f->json, "valid")));
	assert_int_equal(json_array_size(json_object_get(f->json, "errors")) +
				 json_array_size(json_object_get(f->json, "warnings")),
			 200);
	assert_int_equal(json_integer_value(json_object_get(f->json, "omitted")), 400);
	assert_non_null(strstr(json_string_value(json_object_get(f->json, "note")), "400 more"));
	assert_true(f->res.len < 200 * 1024);
	free(body);
	free(yaml);
}

static void test_cached_presets(void **state)
{
	fixture *f = *state;
	char *bodies[] = {
		request_body(GOOD, mo_preset_name(0), NULL),
		request_body(BAD, mo_preset_name(0), NULL),
		request_body(GOOD, mo_preset_name(0), "{\"devices\": 16}"),
		request_body(GOOD, "no-such-preset", NULL),
	};
	static const char *const paths[] = {"/api/v1/validate", "/api/v1/expand", "/api/v1/export",
					    "/api/v1/migrate", "/api/v1/layout", "/api/v1/estimate"};

	for (size_t p = 0; p < sizeof paths / sizeof *paths; p++)
		for (size_t i = 0; i < 4; i++) {
			char *plain;

			f->opt.models = NULL;
			handle(f, "POST", paths[p], "application/json", bodies[i]);
			plain = strdup(f->res.body);
			assert_int_equal(mo_api_cache_new(&f->opt.models), 0);
			for (int round = 0; round < 2; round++) {
				handle(f, "POST", paths[p], "application/json", bodies[i]);
				assert_string_equal(f->res.body, plain);
			}
			mo_api_cache_free(f->opt.models);
			f->opt.models = NULL;
			free(plain);
		}
	for (size_t i = 0; i < 4; i++)
		free(bodies[i]);
}

static void test_problem_detail_not_utf8(void **state)
{
	fixture *f = *state;

	/* a detail with invalid UTF-8 is dropped, the problem stays JSON */
	assert_int_equal(mo_api_problem(&f->res, 422, "x", "bad \xff byte"), 0);
	f->json = json_loads(f->res.body, 0, NULL);
	assert_non_null(f->json);
	assert_null(json_object_get(f->json, "detail"));
	assert_string_equal(mo_api_status_text(413), "Content Too Large");
}

static void cache_body(char *buf, size_t cap, int n)
{
	snprintf(buf, cap,
		 "{\"config\": \"recompute:\\n  mode: full\\n  full_recompute_layer: [0-%d]\\n\", "
		 "\"model\": \"llama2-7b\"}", n);
}

static void test_response_cache(void **state)
{
	fixture *f = *state;
	mo_api_rcache_stats st;
	char body[256], first[512];

	assert_int_equal(mo_api_rcache_new(&f->opt.responses, 0, 1 << 20), 0);
	assert_null(f->opt.responses); /* --cache-entries 0: no cache */
	assert_int_equal(mo_api_rcache_new(&f->opt.responses, 4, 1 << 20), 0);
	assert_non_null(f->opt.responses);
	cache_body(body, sizeof body, 3);
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", body), 200);
	assert_int_equal(f->res.cached, 0);
	snprintf(first, sizeof first, "%s", f->res.body);
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", body), 200);
	assert_int_equal(f->res.cached, 1);
	assert_string_equal(f->res.body, first);
	assert_int_equal(f->res.route, MO_ROUTE_VALIDATE);
	/* another route, content type or body is another key */
	assert_int_equal(handle(f, "POST", "/api/v1/expand", "application/json", body), 200);
	assert_int_equal(f->res.cached, 0);
	assert_true(strstr(f->res.body, "\"layers\"") != NULL);
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json; charset=utf-8", body), 200);
	assert_int_equal(f->res.cached, 0);
	/* errors are never kept */
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", "{"), 400);
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", "{"), 400);
	assert_int_equal(f->res.cached, 0);
	mo_api_rcache_counters(f->opt.responses, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.entries, 3);
	/* least recently used out first: validate 0-3 is used again, so the
	 * expand answer is the oldest when the fifth entry comes */
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", body), 200);
	assert_int_equal(f->res.cached, 1);
	for (int n = 4; n < 6; n++) {
		cache_body(body, sizeof body, n);
		handle(f, "POST", "/api/v1/validate", "application/json", body);
	}
	mo_api_rcache_counters(f->opt.responses, &st);
	assert_int_equal(st.entries, 4);
	assert_int_equal(st.evictions, 1);
	cache_body(body, sizeof body, 3);
	assert_int_equal(handle(f, "POST", "/api/v1/validate", "application/json", body), 200);
	assert_int_equal(f->res.cached, 1);
	assert_int_equal(handle(f, "POST", "/api/v1/expand", "application/json", body), 200);
	assert_int_equal(f->res.cached, 0);
	mo_api_rcache_free(f->opt.responses);
	f->opt.responses = NULL;
}

typedef struct cache_thread {
	const mo_api_options *opt;
	char expected[8][512];
	int wrong;
} cache_thread;

static void *cache_worker(void *arg)
{
	cache_thread *t = arg;
	char body[256];

	for (int i = 0; i < 400; i++) {
		mo_api_response res;
		/* each thread its own walk over the bodies (from its stack) */
		int n = (int)(((unsigned)i * 7u + (unsigned)((uintptr_t)&res >> 4)) % 8u);

		cache_body(body, sizeof body, n);
		if (mo_api_handle(&res, "POST", "/api/v1/validate", "application/json", body,
				  strlen(body), t->opt) != 0 ||
		    strcmp(res.body, t->expected[n]) != 0)
			__atomic_add_fetch(&t->wrong, 1, __ATOMIC_RELAXED);
		mo_api_response_free(&res);
	}
	return NULL;
}

/* Four threads over eight bodies and a three-entry cache: every answer is
 * the computed one while entries are evicted under the readers. */
static void test_response_cache_threads(void **state)
{
	fixture *f = *state;
	cache_thread t = {.opt = &f->opt};
	pthread_t th[4];
	char body[256];

	assert_int_equal(mo_api_cache_new(&f->opt.models), 0);
	for (int n = 0; n < 8; n++) {
		cache_body(body, sizeof body, n);
		handle(f, "POST", "/api/v1/validate", "application/json", body);
		snprintf(t.expected[n], sizeof t.expected[n], "%s", f->res.body);
	}
	assert_int_equal(mo_api_rcache_new(&f->opt.responses, 3, 1 << 20), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, cache_worker, &t), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(t.wrong, 0);
	mo_api_rcache_free(f->opt.responses);
	mo_api_cache_free(f->opt.models);
	f->opt.responses = NULL;
	f->opt.models = NULL;
}

/* 1 when the answer's figures are the library's estimate of the same
 * config (the YAML as the JSON body carries it, unescaped by the caller's
 * format) on the same preset and device count. */
static size_t answer_is_library_estimate(const json_t *answer, const char *escaped,
					 const char *preset, int devices)
{
	char yaml[512];
	size_t n = 0;
	mo_diags *d = NULL;
	mo_config *c = NULL;
	mo_model *m = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};

	for (const char *p = escaped; *p && n + 1 < sizeof yaml; p++)
		yaml[n++] = p[0] == '\\' && p[1] == 'n' ? (p++, '\n') : *p;
	yaml[n] = '\0';
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_config_parse(&c, d, yaml, n, "t", NULL, &err), 0);
	assert_int_equal(mo_model_preset(&m, preset, &err), 0);
	mo_model_set_devices(m, devices);
	assert_int_equal(mo_estimate_run(&e, c, m, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(answer, "peak_bytes")),
			 (json_int_t)mo_estimate_peak_bytes(e));
	assert_int_equal(json_integer_value(json_object_get(answer, "capacity_bytes")),
			 (json_int_t)mo_estimate_capacity_bytes(e));
	json_t *stages = json_object_get(answer, "stages");
	assert_int_equal(json_array_size(stages), mo_estimate_stage_count(e));
	for (size_t s = 0; s < json_array_size(stages); s++)
		assert_true(json_is_array(json_object_get(json_array_get(stages, s), "timeline")));
	mo_estimate_free(e);
	mo_model_free(m);
	mo_config_free(c);
	mo_diags_free(d);
	return 1;
}

/* The estimate answer of every preset (three plans, two device counts) is
 * the library's estimate: the same peak, capacity and stage count, a
 * timeline per stage. */
static void test_estimate_answers(void **state)
{
	static const char *const configs[] = {
		"recompute:\\n  mode: full\\n  full_recompute_layer: [0-1]\\n",
		("recompute:\\n  mode: select\\n  select_module:\\n    '.*mlp': [0-3]\\n"
		 "swap:\\n  enable: True\\n  layer_swap:\\n    - layers: [4-5]\\n"),
		"recompute_comm:\\n  enable: True\\n  select_module:\\n    '.*': [0-2]\\n",
	};
	fixture *f = *state;
	char body[1024];
	size_t compared = 0;

	assert_int_equal(mo_api_cache_new(&f->opt.models), 0);
	for (size_t p = 0; p < mo_presets_count(); p++)
		for (size_t c = 0; c < sizeof configs / sizeof *configs; c++)
			for (int devices = 8; devices <= 64; devices *= 8) {
				mo_api_response res = {0};
				mo_api_request rq = {.path = "/api/v1/estimate",
						     .kind = MO_API_BODY_JSON, .body = body};

				snprintf(body, sizeof body,
					 "{\"config\": \"%s\", \"model\": \"%s\", \"devices\": %d, "
					 "\"detail\": \"full\"}",
					 configs[c], mo_preset_name(p), devices);
				rq.len = strlen(body);
				assert_int_equal(mo_api_estimate(&res, &rq, &f->opt), 0);
				assert_non_null(res.body);
				json_t *answer = json_loadb(res.body, res.len, 0, NULL);
				assert_non_null(answer);
				if (res.status == 200 && json_object_get(answer, "peak_bytes"))
					compared += answer_is_library_estimate(answer, configs[c],
									      mo_preset_name(p), devices);
				json_decref(answer);
				mo_api_response_free(&res);
			}
	assert_true(compared >= mo_presets_count());
	mo_api_cache_free(f->opt.models);
	f->opt.models = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test_setup_teardown(test_precheck, setup, teardown),
		cmocka_unit_test_setup_teardown(test_healthz_and_openapi, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_needed_problem, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_shapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expand_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_estimate_detail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_presets_and_import, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cached_presets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_charset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_cache_lru, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_cache_recent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diagnostics_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_problem_detail_not_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_estimate_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_response_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_response_cache_threads, setup, teardown),
	};

	return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
