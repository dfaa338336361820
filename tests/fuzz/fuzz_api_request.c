/* libFuzzer target for the API request reader: the first input byte picks
 * a POST route and the media type (JSON or YAML), the rest is the body,
 * answered by mo_api_handle as the server would (model cache, response
 * cache, answer cap, work budget). Every answer must be a documented
 * status with a body that parses as JSON and, for a problem, carries its
 * status and type. Inputs: tests/fuzz/corpus/api_request (real configs
 * from tests/data/mindformers wrapped in request bodies). */
#include "fuzz_common.h"

#include "api.h"

#include <jansson.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fuzz_routes[] = {
    "/api/v1/validate",	     "/api/v1/expand",	 "/api/v1/export",
    "/api/v1/estimate",	     "/api/v1/plan",	 "/api/v1/layout",
    "/api/v1/models/import", "/api/v1/ledger",
};

static void fuzz_check_answer(const mo_api_response *res)
{
	static const int statuses[] = {200, 400, 413, 415, 422, 500, 503};
	json_error_t jerr;
	int known = 0;

	for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++)
		known |= res->status == statuses[i];
	if (!known || !res->body || strlen(res->body) != res->len ||
	    !res->content_type)
		abort();
	if (!strstr(res->content_type, "json"))
		return; /* export's YAML */
	json_t *o = json_loadb(res->body, res->len, 0, &jerr);
	if (!o)
		abort();
	if (strcmp(res->content_type, "application/problem+json") == 0 &&
	    (json_integer_value(json_object_get(o, "status")) != res->status ||
	     !json_is_string(json_object_get(o, "type"))))
		abort();
	json_decref(o);
}

static mo_api_options opt;

static void fuzz_free_options(void)
{
	mo_api_cache_free(opt.models);
	mo_api_rcache_free(opt.responses);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	mo_api_response res = {0};

	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	if (!ready) { /* shared by every input, as in the server */
		mo_api_options_default(&opt);
		opt.max_answer = 1u << 20;
		if (mo_api_cache_new_bounded(&opt.models, 4) != 0 ||
		    mo_api_rcache_new(&opt.responses, 16, 1u << 20) != 0)
			abort();
		atexit(fuzz_free_options);
		ready = 1;
	}
	const char *route = fuzz_routes[data[0] & 7u];
	const char *ctype =
	    data[0] & 8u ? "application/yaml" : "application/json";
	mo_budget budget = {.max_ms = FUZZ_WORK_MS};
	mo_budget_begin(&budget);
	int rc = mo_api_handle(&res, "POST", route, ctype,
			       (const char *)data + 1, size - 1, &opt);
	mo_budget_end();
	if (rc == 0)
		fuzz_check_answer(&res);
	mo_api_response_free(&res);
	return 0;
}
