/* Shared between api/ modules only. */
#ifndef MEMOPT_API_INTERNAL_H
#define MEMOPT_API_INTERNAL_H

#include "api.h"

#include <jansson.h>
#include <stdbool.h>
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
	int per_layer;           /* expand: list each layer (1), not (0), by the count (-1) */
	int as_written;          /* export: the checked text itself, not the
				    canonical sections ("form": "as-written") */
	unsigned detail;         /* estimate: MO_JSON_EST_* parts beyond the
				    summary ("detail"; a YAML body: all) */
} mo_api_input;

/* The preset's model with the device count applied, borrowed from the
 * cache: *ref holds it until mo_api_model_release(*ref), eviction or not.
 * NULL (and *ref NULL) with err filled when the preset is unknown. */
const mo_model *mo_api_cache_get(mo_api_model_cache *c, const char *preset,
				 int64_t devices, mo_api_model_ref **ref, mo_error *err);

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


/* out = 200 application/json with the dump of o (reference stolen).
 * Returns 0, or -1 (out of memory; out is then a 500 or empty). */
int mo_api_reply_json(mo_api_response *out, json_t *o);
/* out = a 500 problem for a hard core error. Returns 0/-1 as above. */
int mo_api_reply_error(mo_api_response *out, const mo_error *err);
/* out (freed first) = 422 answer-too-large: the answer would be len bytes
 * (at_least: len is a floor), over max. */
int mo_api_answer_too_large(mo_api_response *out, size_t len, size_t max, bool at_least);
/* The same, saying how to ask for less (how: a clause). */
int mo_api_answer_too_large_how(mo_api_response *out, size_t len, size_t max, bool at_least,
				const char *how);

int mo_api_validate(mo_api_response *out, const mo_api_request *rq,
		    const mo_api_options *opt);
int mo_api_expand(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
int mo_api_migrate(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt);
int mo_api_export(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt);
int mo_api_estimate(mo_api_response *out, const mo_api_request *rq,
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
/* api/size.c: POST /api/v1/size, layouts and plans for N devices. */
int mo_api_size(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt);
/* api/ledger.c: POST /api/v1/ledger, a measured trace (and the estimate). */
int mo_api_ledger(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt);
/* POST /api/v1/calibrate (calibrate.c) */
int mo_api_calibrate(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt);
int mo_api_not_implemented(mo_api_response *out, const mo_api_request *rq,
			   const mo_api_options *opt);
int mo_api_healthz(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt);
int mo_api_openapi(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt);

#endif
