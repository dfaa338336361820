/* The route table, header checks and dispatch. */
#include "api_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MO_API_ANY_BODY (MO_API_BODY_JSON | MO_API_BODY_YAML)
/* A route's path and its length. */
#define MO_API_PATH(p) p, sizeof p - 1

typedef struct mo_api_route {
	mo_api_route_id id;
	const char *path;   /* exact path, or prefix when `prefix` */
	size_t len;         /* strlen(path) */
	int prefix;
	const char *method; /* "GET" (HEAD too) or "POST" */
	const char *allow;
	int bodies;         /* accepted body kinds (POST) */
	mo_api_fn fn;       /* NULL: answered by the server */
	const char *label;  /* the metrics label, when not the path */
} mo_api_route;

/* A route that takes a body of the given kinds; one that answers GET and HEAD (at a path, or
 * under a prefix). */
#define MO_API_POST(id, path, bodies, fn) {id, MO_API_PATH(path), 0, "POST", "POST", bodies, fn, NULL}
#define MO_API_GET(id, path, fn) {id, MO_API_PATH(path), 0, "GET", "GET, HEAD", 0, fn, NULL}
#define MO_API_GET_UNDER(id, path, fn, label)                                                   \
	{id, MO_API_PATH(path), 1, "GET", "GET, HEAD", 0, fn, label}

static const mo_api_route mo_api_routes[] = {
	MO_API_POST(MO_ROUTE_VALIDATE, "/api/v1/validate", MO_API_ANY_BODY, mo_api_validate),
	MO_API_POST(MO_ROUTE_EXPAND, "/api/v1/expand", MO_API_ANY_BODY, mo_api_expand),
	MO_API_POST(MO_ROUTE_ESTIMATE, "/api/v1/estimate", MO_API_ANY_BODY, mo_api_estimate),
	MO_API_POST(MO_ROUTE_PLAN, "/api/v1/plan", MO_API_ANY_BODY, mo_api_plan),
	MO_API_POST(MO_ROUTE_EXPORT, "/api/v1/export", MO_API_ANY_BODY, mo_api_export),
	MO_API_POST(MO_ROUTE_LAYOUT, "/api/v1/layout", MO_API_ANY_BODY, mo_api_layout),
	MO_API_POST(MO_ROUTE_MIGRATE, "/api/v1/migrate", MO_API_ANY_BODY, mo_api_migrate),
	MO_API_GET(MO_ROUTE_PRESETS, "/api/v1/presets", mo_api_presets),
	MO_API_GET_UNDER(MO_ROUTE_PRESET, "/api/v1/presets/", mo_api_preset,
			 "/api/v1/presets/{name}"),
	MO_API_POST(MO_ROUTE_IMPORT, "/api/v1/models/import", MO_API_ANY_BODY, mo_api_import),
	MO_API_POST(MO_ROUTE_LEDGER, "/api/v1/ledger", MO_API_BODY_JSON, mo_api_ledger),
	MO_API_POST(MO_ROUTE_CALIBRATE, "/api/v1/calibrate", MO_API_BODY_JSON, mo_api_calibrate),
	MO_API_POST(MO_ROUTE_SIZE, "/api/v1/size", MO_API_BODY_JSON, mo_api_size),
	MO_API_GET(MO_ROUTE_OPENAPI, "/api/v1/openapi.yaml", mo_api_openapi),
	MO_API_GET(MO_ROUTE_HEALTHZ, "/healthz", mo_api_healthz),
	MO_API_GET(MO_ROUTE_METRICS, "/metrics", NULL),
};

#define MO_API_NROUTES (sizeof mo_api_routes / sizeof mo_api_routes[0])

void mo_api_options_default(mo_api_options *opt)
{
	mo_limits_default(&opt->limits);
	opt->models = NULL;
	opt->responses = NULL;
	opt->max_body = 1024 * 1024;
	opt->max_answer = (size_t)16 << 20;
	opt->limits.max_bytes = opt->max_body;
}

int mo_api_answer_too_large(mo_api_response *out, size_t len, size_t max, bool at_least)
{
	return mo_api_answer_too_large_how(out, len, max, at_least,
					   "fewer pipeline stages or micro-batches make a "
					   "shorter timeline");
}

int mo_api_answer_too_large_how(mo_api_response *out, size_t len, size_t max, bool at_least,
				const char *how)
{
	char detail[256];

	snprintf(detail, sizeof detail, "the answer would be %s%zu bytes, over the server's limit "
		 "of %zu: %s", at_least ? "at least " : "", len, max, how);
	mo_api_response_free(out);
	return mo_api_problem(out, 422, "answer-too-large", detail);
}

/* An answer over opt->max_answer (a 700-byte estimate of a deep pipeline
 * can make a timeline of tens of MB) becomes a 422 saying so. */
static void mo_api_cap_answer(mo_api_response *out, const mo_api_options *opt)
{
	if (!opt->max_answer || out->len <= opt->max_answer || out->status != 200)
		return;
	mo_api_answer_too_large(out, out->len, opt->max_answer, false);
}

const char *mo_api_route_name(mo_api_route_id id)
{
	for (size_t i = 0; i < MO_API_NROUTES; i++)
		if (mo_api_routes[i].id == id)
			return mo_api_routes[i].label ? mo_api_routes[i].label : mo_api_routes[i].path;
	return id == MO_ROUTE_STATIC ? "static" : "unknown";
}

/* Several lookups a request: lengths first, then the bytes. */
static const mo_api_route *mo_api_find(const char *path, const char **tail)
{
	size_t n = strlen(path);

	*tail = NULL;
	for (size_t i = 0; i < MO_API_NROUTES; i++) {
		const mo_api_route *r = &mo_api_routes[i];

		if (!r->prefix && n == r->len && memcmp(path, r->path, n) == 0)
			return r;
		if (r->prefix && n > r->len && memcmp(path, r->path, r->len) == 0 &&
		    !strchr(path + r->len, '/')) {
			*tail = path + r->len;
			return r;
		}
	}
	return NULL;
}

mo_api_route_id mo_api_route_of(const char *path)
{
	const char *tail;
	const mo_api_route *r = mo_api_find(path, &tail);

	if (r)
		return r->id;
	return strncmp(path, "/api/", 5) == 0 || strcmp(path, "/api") == 0
		       ? MO_ROUTE_UNKNOWN
		       : MO_ROUTE_STATIC;
}

const char *mo_api_route_allow(mo_api_route_id id)
{
	if (id == MO_ROUTE_STATIC)
		return "GET, HEAD";
	for (size_t i = 0; i < MO_API_NROUTES; i++)
		if (mo_api_routes[i].id == id)
			return mo_api_routes[i].allow;
	return NULL;
}

static int mo_api_method_ok(const mo_api_route *r, const char *method)
{
	if (strcmp(method, r->method) == 0)
		return 1;
	return strcmp(r->method, "GET") == 0 && strcmp(method, "HEAD") == 0;
}

/* The parameters after a media type (from its ';'): 1 when they name no
 * charset or exactly UTF-8 (any case, quoted or not), 0 otherwise:
 * "utf-8x", "utf-8;" glued to another value or "latin1" are refused. */
static int mo_api_charset_ok(const char *params)
{
	const char *cs = strcasestr(params, "charset=");
	size_t n;

	if (!cs)
		return 1;
	cs += 8;
	if (*cs == '"') {
		const char *close = strchr(cs + 1, '"');

		if (!close)
			return 0;
		n = (size_t)(close - cs - 1);
		cs++;
	} else {
		n = strcspn(cs, " \t;");
	}
	if (n != 5 || strncasecmp(cs, "utf-8", 5) != 0)
		return 0;
	cs += cs[-1] == '"' ? 6 : 5;
	cs += strspn(cs, " \t");
	return *cs == '\0' || *cs == ';';
}

/* MO_API_BODY_JSON / _YAML, 0 for another type, -1 for a charset other
 * than UTF-8. */
static int mo_api_media(const char *ct)
{
	static const char *const yaml[] = {"application/yaml", "application/x-yaml",
					   "text/yaml", "text/x-yaml"};
	size_t n;
	const char *semi;
	int kind = 0;

	if (!ct)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	semi = strchr(ct, ';');
	n = semi ? (size_t)(semi - ct) : strlen(ct);
	while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	if (n == 16 && strncasecmp(ct, "application/json", n) == 0)
		kind = MO_API_BODY_JSON;
	for (size_t i = 0; i < 4 && !kind; i++)
		if (n == strlen(yaml[i]) && strncasecmp(ct, yaml[i], n) == 0)
			kind = MO_API_BODY_YAML;
	if (kind && semi && !mo_api_charset_ok(semi))
		return -1;
	return kind;
}

static int mo_api_check_route(mo_api_response *out, const mo_api_route *r,
			      const char *method, const char *path)
{
	if (!r) {
		out->route = MO_ROUTE_UNKNOWN;
		mo_api_problem(out, 404, "not-found", "no such resource");
		return 1;
	}
	out->route = r->id;
	if (!mo_api_method_ok(r, method)) {
		mo_api_problem(out, 405, "method-not-allowed",
			       "this resource does not take that method");
		out->allow = r->allow;
		return 1;
	}
	(void)path;
	return 0;
}

static int mo_api_check_body(mo_api_response *out, const mo_api_route *r,
			     const char *content_type, long long length,
			     const mo_api_options *opt)
{
	int kind;

	if (!r->bodies)
		return 0;
	kind = mo_api_media(content_type);
	if (kind <= 0 || !(kind & r->bodies)) {
		mo_api_problem(out, 415, "unsupported-media-type",
			       kind < 0 ? "only UTF-8 bodies are accepted"
				        : "send application/json or application/yaml");
		return 1;
	}
	if (length >= 0 && (unsigned long long)length > opt->max_body) {
		mo_api_problem(out, 413, "body-too-large",
			       "the request body is over the size limit");
		return 1;
	}
	return 0;
}

int mo_api_precheck(mo_api_response *out, const char *method,
		    const char *path, const char *content_type,
		    long long content_length, const mo_api_options *opt)
{
	const char *tail;
	const mo_api_route *r = mo_api_find(path, &tail);

	memset(out, 0, sizeof *out);
	out->route = r ? r->id : mo_api_route_of(path);
	if (mo_api_check_route(out, r, method, path))
		return 1;
	if (r->fn == mo_api_not_implemented) {
		mo_api_not_implemented(out, NULL, opt);
		return 1;
	}
	return mo_api_check_body(out, r, content_type, content_length, opt);
}

/* POST routes answer a pure function of route, content type and body. */
static int mo_api_cacheable(const mo_api_route *r, const char *content_type,
			    const mo_api_options *opt)
{
	return opt->responses && r->bodies && content_type;
}

int mo_api_cached(mo_api_response *out, const char *method, const char *path,
		  const char *content_type, const char *body, size_t len,
		  const mo_api_options *opt)
{
	const mo_api_route *r;
	const char *tail;
	mo_api_response refusal;

	memset(out, 0, sizeof *out);
	if (mo_api_precheck(&refusal, method, path, content_type, (long long)len, opt)) {
		mo_api_response_free(&refusal); /* mo_api_handle answers it */
		return 0;
	}
	r = mo_api_find(path, &tail);
	return r->fn && mo_api_cacheable(r, content_type, opt) &&
	       mo_api_rcache_get(opt->responses, out, r->id, content_type, body ? body : "", len);
}

/* Every route stops at the caller's work budget (mo_budget): an answer
 * computed while it was spent is partial (a pattern that ran out of budget
 * matched nothing) and is replaced by the refusal (422 work-limit, or 503
 * cancelled), never cached. Estimate and plan fail with MO_ERR_BUDGET / MO_ERR_CANCELLED
 * themselves and are left as they answered. 0, or -1 out of memory. */
static int mo_api_budget_refusal(mo_api_response *out)
{
	mo_error_code how = mo_budget_status();

	if (how == MO_OK || (out->problem && (strcmp(out->problem, "work-limit") == 0 ||
					      strcmp(out->problem, "cancelled") == 0)))
		return 0;
	mo_api_response_free(out);
	return how == MO_ERR_CANCELLED ? mo_api_problem(out, 503, "cancelled",
					 "cancelled: the computation was stopped")
			: mo_api_problem(out, 422, "work-limit",
					 "work-limit: the request took more work than its limit "
					 "(time, or backtracking patterns)");
}

/* mo_api_handle, and mo_api_handle_missed when !lookup. */
static int mo_api_answer(mo_api_response *out, const char *method, const char *path,
			 const char *content_type, const char *body, size_t len,
			 const mo_api_options *opt, int lookup)
{
	mo_api_request rq = {.path = path, .body = body ? body : "", .len = len};
	const mo_api_route *r;
	int cacheable;

	if (mo_api_precheck(out, method, path, content_type, (long long)len, opt))
		return out->body ? 0 : -1;
	r = mo_api_find(path, &rq.tail);
	if (!r->fn) {
		mo_api_problem(out, 404, "not-found", "served by the HTTP server only");
		return out->body ? 0 : -1;
	}
	cacheable = mo_api_cacheable(r, content_type, opt);
	if (lookup && cacheable &&
	    mo_api_rcache_get(opt->responses, out, r->id, content_type, rq.body, len))
		return 0;
	rq.kind = r->bodies ? mo_api_media(content_type) : 0;
	if (r->fn(out, &rq, opt) != 0 && !out->body)
		return -1;
	if (mo_api_budget_refusal(out) != 0)
		return -1;
	mo_api_cap_answer(out, opt);
	if (!out->body)
		return -1;
	out->route = r->id;
	if (cacheable && !out->no_store)
		mo_api_rcache_put(opt->responses, r->id, content_type, rq.body, len, out);
	return 0;
}

int mo_api_handle(mo_api_response *out, const char *method, const char *path,
		  const char *content_type, const char *body, size_t len,
		  const mo_api_options *opt)
{
	return mo_api_answer(out, method, path, content_type, body, len, opt, 1);
}

int mo_api_handle_missed(mo_api_response *out, const char *method, const char *path,
			 const char *content_type, const char *body, size_t len,
			 const mo_api_options *opt)
{
	return mo_api_answer(out, method, path, content_type, body, len, opt, 0);
}
