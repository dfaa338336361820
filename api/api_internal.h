/* Shared between api/ modules only. */
#ifndef MEMOPT_API_INTERNAL_H
#define MEMOPT_API_INTERNAL_H

#include "api.h"

#include <jansson.h>
#include <stdint.h>

typedef struct mo_api_request {
	const char *path;
	const char *tail;   /* after a prefix route ("/api/v1/presets/"), else NULL */
	int kind;           /* MO_API_BODY_JSON / _YAML */
	const char *body;
	size_t len;
} mo_api_request;

typedef int (*mo_api_fn)(mo_api_response *out, const mo_api_request *rq,
			 const mo_api_options *opt);

/* What a validate / expand / export request asks about. */
typedef struct mo_api_input {
	json_t *root;            /* parsed JSON body (NULL for YAML) */
	const char *config;      /* the YAML text (borrowed from root or body) */
	size_t config_len;
	const char *preset;      /* model: preset name, or */
	char *model_text;        /* model: file text (malloc'ed), or NULL */
	size_t model_len;
	int64_t devices;         /* 0 when absent */
	int all_paths;           /* expand: list every path's action */
} mo_api_input;

/* The preset's model with the device count applied: borrowed from the
 * cache, or (cache full) a copy in *owned for the caller to free. NULL
 * with err filled when the preset is unknown. */
const mo_model *mo_api_cache_get(mo_api_model_cache *c, const char *preset,
				 int64_t devices, mo_model **owned,
				 mo_error *err);

/* A cached answer for the request: 1 with *out filled (out->cached set),
 * or 0 (a miss; *out untouched). */
int mo_api_rcache_get(mo_api_rcache *c, mo_api_response *out, int route,
		      const char *ctype, const char *body, size_t len);
/* Keeps a copy of a 200 answer for the request (other answers, and ones
 * over a sixteenth of the byte bound, are not kept). */
void mo_api_rcache_put(mo_api_rcache *c, int route, const char *ctype,
		       const char *body, size_t len, const mo_api_response *res);

/* Reads a request body into *in. Returns 0, or 1 with *out filled (400,
 * 413, 415, 422, 500). */
int mo_api_input_read(mo_api_input *in, mo_api_response *out,
		      const mo_api_request *rq, const mo_api_options *opt);
void mo_api_input_free(mo_api_input *in);

/* Parses the body as JSON (JSON_REJECT_DUPLICATES). NULL with *out filled
 * (400 with line and column) when it is not JSON. */
json_t *mo_api_json_body(mo_api_response *out, const mo_api_request *rq);

/* api/json_fast.c: a flat object of strings, integers, booleans and
 * nulls, read in one pass. 0 with *out (a new reference) equal to what
 * json_loadb makes of it, or -1 for anything else (the caller then asks
 * json_loadb, whose errors it reports). */
int mo_api_json_fast(json_t **out, const char *body, size_t len);

/* api/json_writer.c: JSON text as json_dumps(JSON_COMPACT) writes it,
 * without a tree. Commas are placed from the text itself. `bad` is set
 * when the value could not be written the way jansson would (out of
 * memory, invalid UTF-8, a real that is not finite). */
typedef struct mo_jw {
	char *buf; /* malloc'ed, NUL-terminated */
	size_t len, cap;
	int bad;
} mo_jw;

void mo_jw_raw(mo_jw *w, const char *s, size_t n);
void mo_jw_str(mo_jw *w, const char *s);
/* Opens an object ('{') or array ('['), as a member when key is set. */
void mo_jw_open(mo_jw *w, const char *key, char bracket);
void mo_jw_close(mo_jw *w, char bracket);
void mo_jw_int(mo_jw *w, const char *key, long long v);
void mo_jw_real(mo_jw *w, const char *key, double v);
void mo_jw_kstr(mo_jw *w, const char *key, const char *s);
void mo_jw_bool(mo_jw *w, const char *key, int v);
/* The members of mo_json_diags(d): "valid", "errors", "warnings". */
void mo_jw_diags(mo_jw *w, const mo_diags *d);
/* Appends the members of object o (its dump without braces). */
void mo_jw_members_of(mo_jw *w, const json_t *o);

/* api/json_estimate.c: the members mo_json_estimate makes, as text. */
void mo_json_estimate_write(mo_jw *w, const mo_estimate *e, int with_timeline);

/* out = 200 application/json with the dump of o (reference stolen).
 * Returns 0, or -1 (out of memory; out is then a 500 or empty). */
int mo_api_reply_json(mo_api_response *out, json_t *o);
/* out = a 500 problem for a hard core error. Returns 0/-1 as above. */
int mo_api_reply_error(mo_api_response *out, const mo_error *err);

int mo_api_validate(mo_api_response *out, const mo_api_request *rq,
		    const mo_api_options *opt);
int mo_api_expand(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
int mo_api_export(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
int mo_api_estimate(mo_api_response *out, const mo_api_request *rq,
		    const mo_api_options *opt);
/* validate and estimate answers built through a jansson tree (the
 * reference the tests compare the text answers with). */
int mo_api_validate_tree(mo_api_response *out, const mo_api_request *rq,
			 const mo_api_options *opt);
int mo_api_estimate_tree(mo_api_response *out, const mo_api_request *rq,
			 const mo_api_options *opt);
/* api/layout.c: the model's layout, pattern matches and parsed sections. */
int mo_api_layout(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
int mo_api_presets(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt);
int mo_api_preset(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
int mo_api_import(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
/* POST /api/v1/plan: the ConfigRequest plus "budget" and "allow". */
int mo_api_plan(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt);
int mo_api_not_implemented(mo_api_response *out, const mo_api_request *rq,
			   const mo_api_options *opt);
int mo_api_healthz(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt);
int mo_api_openapi(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt);

#endif
