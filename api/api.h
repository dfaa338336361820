/* HTTP JSON API without sockets: method, path, content type and body in;
 * status, content type and body out. server/ routes bytes to it. */
#ifndef MEMOPT_API_H
#define MEMOPT_API_H

#include "memopt/memopt.h"

#include <stddef.h>
#include <stdint.h>

/* For the faces' hashes (the response cache's SipHash, the server's buckets): their unsigned
 * arithmetic wraps modulo 2^64 by design, which clang's unsigned-overflow check (make check)
 * would stop on; GCC has no such check. The core keeps its own (util.h), faces see only this. */
#ifndef MO_WRAPS /* a file that also includes the core's util.h has it already */
#if defined(__clang__)
#define MO_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow", "unsigned-shift-base")))
#else
#define MO_WRAPS
#endif
#endif

/* Routes, also the label set of the server's metrics. */
typedef enum mo_api_route_id {
	MO_ROUTE_VALIDATE = 0,
	MO_ROUTE_EXPAND,
	MO_ROUTE_ESTIMATE,
	MO_ROUTE_PLAN,
	MO_ROUTE_EXPORT,
	MO_ROUTE_LAYOUT,
	MO_ROUTE_MIGRATE,
	MO_ROUTE_PRESETS,
	MO_ROUTE_PRESET,
	MO_ROUTE_IMPORT,
	MO_ROUTE_LEDGER,
	MO_ROUTE_CALIBRATE,
	MO_ROUTE_SIZE,
	MO_ROUTE_OPENAPI,
	MO_ROUTE_HEALTHZ,
	MO_ROUTE_METRICS, /* answered by the server (its counters) */
	MO_ROUTE_STATIC,  /* everything outside /api/, answered by the server */
	MO_ROUTE_UNKNOWN, /* /api/... that matches no route */
	MO_ROUTE_COUNT
} mo_api_route_id;

/* Body kinds a route accepts. */
enum {
	MO_API_BODY_NONE = 0,
	MO_API_BODY_JSON = 1,
	MO_API_BODY_YAML = 2
};

/* Preset models loaded once and shared read-only (api/cache.c). */
typedef struct mo_api_model_cache mo_api_model_cache;

/* Answers to identical POST requests, replayed (api/rcache.c). */
typedef struct mo_api_rcache mo_api_rcache;

typedef struct mo_api_options {
	size_t max_body;     /* request body cap in bytes (default 1 MiB) */
	size_t max_answer;   /* a bigger answer is replaced by a 422 answer-too-large
			      * (default 16 MiB; 0: no cap) */
	mo_limits limits;    /* core parser and regex limits */
	mo_api_model_cache *models; /* NULL: every request loads its preset */
	mo_api_rcache *responses;   /* NULL: every request is computed */
} mo_api_options;

typedef struct mo_api_response {
	int status;
	const char *content_type; /* static string */
	const char *allow;        /* static "GET, HEAD" etc. for 405, else NULL */
	char *body;               /* malloc'ed, NUL-terminated; may be NULL */
	size_t len;
	mo_api_route_id route;
	int cached;               /* replayed from the response cache */
	int no_store;             /* not for the response cache: a partial
				   * answer the work limit cut short */
	const char *problem;      /* a problem+json answer's code ("work-limit", ...):
				   * the static string given to mo_api_problem; NULL
				   * for other answers */
} mo_api_response;

/* Defaults: max_body 1 MiB, mo_limits_default, max_bytes = max_body, no
 * model cache. */
void mo_api_options_default(mo_api_options *opt);

/* The cache of preset models (thread-safe; the caller owns it and frees it
 * after the last request). Returns 0 or -1. */
int mo_api_cache_new(mo_api_model_cache **out);
/* The same with a bound other than the default 64 (preset, devices) pairs;
 * past it the least recently used pair is evicted. */
int mo_api_cache_new_bounded(mo_api_model_cache **out, size_t max_entries);
void mo_api_cache_free(mo_api_model_cache *c);
/* A borrowed cache entry (api/cache.c); NULL is accepted by release. */
typedef struct mo_api_model_ref mo_api_model_ref;
void mo_api_model_release(mo_api_model_ref *ref);

typedef struct mo_api_cache_stats {
	size_t entries;     /* pairs held now */
	uint64_t loads;     /* presets loaded into the cache */
	uint64_t hits;      /* lookups answered from it */
	uint64_t evictions; /* pairs evicted for room */
} mo_api_cache_stats;
void mo_api_cache_counters(mo_api_model_cache *c, mo_api_cache_stats *s);

/* The response cache: at most max_entries answers and max_bytes bytes
 * (keys included), least recently used out first. Only 200 answers of
 * POST routes are kept, keyed by route, Content-Type and body. *out is
 * NULL (no cache) when either bound is 0. Thread-safe. 0 or -1. */
int mo_api_rcache_new(mo_api_rcache **out, size_t max_entries,
		      size_t max_bytes);
void mo_api_rcache_free(mo_api_rcache *c);

typedef struct mo_api_rcache_stats {
	unsigned long long hits, misses, stores, evictions;
	size_t entries, bytes, max_entries, max_bytes;
} mo_api_rcache_stats;

/* Counters so far (all zero for a NULL cache). */
void mo_api_rcache_counters(mo_api_rcache *c, mo_api_rcache_stats *s);

/* The route of a decoded path (no query string). */
mo_api_route_id mo_api_route_of(const char *path);
/* Metric label of a route ("/api/v1/validate", "static", ...). */
const char *mo_api_route_name(mo_api_route_id id);
/* "GET, HEAD", "POST", ... : the methods a route allows. */
const char *mo_api_route_allow(mo_api_route_id id);

/* Checks what is known once the headers are in (route, method, content
 * type, announced length; content_length < 0 when unknown). Returns 0 when
 * the request may go on, or 1 with *out filled with the error answer. */
int mo_api_precheck(mo_api_response *out, const char *method,
		    const char *path, const char *content_type,
		    long long content_length, const mo_api_options *opt);

/* Answers a whole request. Returns 0 (out filled, even for errors: see
 * out->status), or -1 when even the error answer could not be built
 * (out of memory). */
int mo_api_handle(mo_api_response *out, const char *method, const char *path,
		  const char *content_type, const char *body, size_t len,
		  const mo_api_options *opt);
/* The response cache's answer to the request: 1 with *out filled, or 0
 * (a miss, counted; or a request the cache does not hold). Cheap: the
 * server asks on its connection thread before handing a request to the
 * compute pool, which then calls mo_api_handle_missed (same as
 * mo_api_handle without looking in the cache again; the answer is still
 * stored). */
int mo_api_cached(mo_api_response *out, const char *method, const char *path,
		  const char *content_type, const char *body, size_t len,
		  const mo_api_options *opt);
int mo_api_handle_missed(mo_api_response *out, const char *method, const char *path,
			 const char *content_type, const char *body, size_t len,
			 const mo_api_options *opt);


/* An application/problem+json answer (RFC 9457). `code` names the problem
 * (type = "urn:memopt:problem:<code>"); detail may be NULL. Returns 0 or
 * -1 (out of memory: out->body NULL, status kept). */
int mo_api_problem(mo_api_response *out, int status, const char *code,
		   const char *detail);
/* Same, with the line and column of a malformed body. */
int mo_api_problem_at(mo_api_response *out, int status, const char *code,
		      const char *detail, int line, int column);
/* Same, with a "hint" member: how to fix it in a request (the detail stays in no face's
 * words, so a client such as the web page can say it its own way), and a "path" member
 * (NULL: none): the model key the problem is about, for a client to name its control. */
int mo_api_problem_hint(mo_api_response *out, int status, const char *code,
			const char *detail, int line, int column, const char *hint,
			const char *path);

void mo_api_response_free(mo_api_response *r);

/* The reason phrase of a status ("Not Found"). */
const char *mo_api_status_text(int status);

/* A file embedded by tools/embed.sh ("api/openapi.yaml"), or NULL. */
const unsigned char *mo_api_embedded(const char *name, size_t *size);

#endif
