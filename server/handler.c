/* The access handler: per-request state, capped body, dispatch to api/. */
#include "srv_internal.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Body bytes over the cap read (and dropped) before answering 413 at
 * once rather than at the end of the body (a chunked body of unannounced
 * size; an announced one over the cap is refused before it is read). */
#define MO_SRV_MAX_DISCARD ((uint64_t)64 * 1024 * 1024)

uint64_t mo_srv_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int mo_srv_hex(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

size_t mo_srv_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *w = s;

	(void)cls;
	(void)c;
	for (const char *r = s; *r; r++) {
		int hi = r[0] == '%' ? mo_srv_hex(r[1]) : -1;
		int lo = hi >= 0 ? mo_srv_hex(r[2]) : -1;

		if (lo < 0 || (hi == 0 && lo == 0)) {
			*w++ = *r; /* not an escape, or %00: kept as it is */
			continue;
		}
		*w++ = (char)(hi * 16 + lo);
		r += 2;
	}
	*w = '\0';
	return (size_t)(w - s);
}

void mo_srv_common_headers(const mo_srv *srv, struct MHD_Response *r)
{
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; object-src 'none'; base-uri 'none'; "
				"frame-ancestors 'none'; form-action 'self'");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	if (srv->cfg.cors_origin) {
		MHD_add_response_header(r, "Access-Control-Allow-Origin",
					srv->cfg.cors_origin);
		MHD_add_response_header(r, "Vary", "Origin");
	}
	if (atomic_load(&srv->quiescing))
		MHD_add_response_header(r, "Connection", "close");
}

enum MHD_Result mo_srv_queue(const mo_srv *srv, struct MHD_Connection *c,
			     mo_srv_req *rq, int status, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mo_srv_common_headers(srv, r);
	if (rq->close && !atomic_load(&srv->quiescing))
		MHD_add_response_header(r, "Connection", "close");
	ret = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	rq->answered = true;
	rq->status = status;
	mo_srv_conn_enter(&srv->conns, rq->conn, MO_SRV_PHASE_ANSWERED, mo_srv_now_us());
	return ret;
}

/* Answers compressed on the connection thread at most this long: a
 * cache hit (bigger computed answers are compressed on the pool thread
 * that computed them). Level 1 takes ~0.5 ms for this much. */
#define MO_SRV_GZIP_INLINE_MAX ((size_t)256 << 10)

/* Compresses res for rq's client when it takes gzip and the answer is
 * worth it and at most max bytes. True when res's body is now gzip. */
static bool mo_srv_compress(const mo_srv_req *rq, mo_api_response *res, size_t max)
{
	return rq->gzip && res->body && mo_srv_gzip_worth(res->len) && res->len <= max &&
	       mo_srv_gzip(&res->body, &res->len) == 0;
}

/* A GET answer's ETag (its body's hash; the answer is a pure function of
 * the request): 1 when the client's If-None-Match already names it, so
 * a 304 goes instead. */
static int mo_srv_api_etag(struct MHD_Connection *c, const mo_srv_req *rq,
			   const mo_api_response *res, char *etag, size_t cap)
{
	etag[0] = '\0';
	if (res->status != 200 || strcmp(rq->method, "GET") != 0)
		return 0;
	snprintf(etag, cap, "\"%016llx\"",
		 (unsigned long long)mo_srv_hash(res->body, res->len));
	return mo_srv_etag_match(c, etag);
}

/* Queues an api/ answer; takes its body. */
static enum MHD_Result mo_srv_queue_api(const mo_srv *srv,
					struct MHD_Connection *c,
					mo_srv_req *rq, mo_api_response *res)
{
	struct MHD_Response *r;
	char etag[24];
	bool gz, vary;

	if (!res->body)
		return MHD_NO;
	if (mo_srv_api_etag(c, rq, res, etag, sizeof etag)) {
		mo_api_response_free(res);
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		if (r)
			MHD_add_response_header(r, "ETag", etag);
		return mo_srv_queue(srv, c, rq, 304, r);
	}
	vary = mo_srv_gzip_worth(res->len);
	gz = res == &rq->res && rq->computed ? rq->gzipped
					     : mo_srv_compress(rq, res, MO_SRV_GZIP_INLINE_MAX);
	r = MHD_create_response_from_buffer(res->len, res->body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		mo_api_response_free(res);
		return MHD_NO;
	}
	res->body = NULL;
	MHD_add_response_header(r, "Content-Type", res->content_type);
	if (gz)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	if (vary)
		MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (etag[0]) {
		MHD_add_response_header(r, "ETag", etag);
		MHD_add_response_header(r, "Cache-Control", "no-cache");
	} else {
		MHD_add_response_header(r, "Cache-Control", "no-store");
	}
	if (srv->api.responses && res->status == 200 && strcmp(rq->method, "POST") == 0)
		MHD_add_response_header(r, "X-Memopt-Cache", res->cached ? "hit" : "miss");
	if (res->allow)
		MHD_add_response_header(r, "Allow", res->allow);
	if (res->status == 503 || res->status == 429)
		MHD_add_response_header(r, "Retry-After", "1");
	rq->bytes = res->len; /* X-Memopt-Cache above: only POST answers are cached */
	return mo_srv_queue(srv, c, rq, res->status, r);
}

enum MHD_Result mo_srv_problem(const mo_srv *srv, struct MHD_Connection *c,
			       mo_srv_req *rq, int status, const char *code,
			       const char *detail)
{
	mo_api_response res = {0};

	mo_api_problem(&res, status, code, detail);
	return mo_srv_queue_api(srv, c, rq, &res);
}

static const struct sockaddr *mo_srv_peer(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	return ci ? ci->client_addr : NULL;
}

static void mo_srv_remote(mo_srv_req *rq, const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
			  rq->remote, sizeof rq->remote);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  rq->remote, sizeof rq->remote);
}

static long long mo_srv_content_length(struct MHD_Connection *c)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	char *end;
	unsigned long long n;

	if (!v || *v < '0' || *v > '9')
		return -1;
	n = strtoull(v, &end, 10);
	return n > (unsigned long long)INT64_MAX ? INT64_MAX : (long long)n;
}

/* Caps of the server's own, checked before MHD's: MHD 0.9.75 answers a
 * request line or header section that does not fit the connection's
 * memory (MO_SRV_CONN_MEMORY, 32 KiB) with its own HTML page; below that,
 * these answer problem+json. */
#define MO_SRV_MAX_URI 8192
#define MO_SRV_MAX_HEADERS 16384

/* Query arguments a request target may carry. MHD stores each in the
 * connection's 32 KiB pool (a record of some 50 bytes beside its text);
 * past about 450 short ones the pool is full, and MHD 0.9.75 then queues
 * its 431 but goes on reading headers over it: the answer is never sent
 * and the client waits for the idle timeout. No route reads more than a
 * few arguments. */
#define MO_SRV_MAX_ARGS 64

/* The marker mo_srv_uri_seen hands the access handler (as its req_cls)
 * for a target over MO_SRV_MAX_ARGS arguments. */
static char mo_srv_too_many_args;

/* Query arguments in a target's query (the text after '?'): its
 * '&'-separated items, empty ones included (MHD skips none). */
static size_t mo_srv_arg_count(const char *query)
{
	size_t n = 1;

	for (; *query && *query != ' '; query++)
		n += *query == '&';
	return n;
}

void *mo_srv_uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	char *query = uri ? strchr(uri, '?') : NULL;

	(void)cls;
	(void)c;
	if (!query || !query[1] || mo_srv_arg_count(query + 1) <= MO_SRV_MAX_ARGS)
		return NULL;
	/* MHD 0.9.75 calls this with the request line in the connection's
	 * read buffer, and parses the arguments after '?' from that same
	 * text once it returns: an empty query stores none, so the request
	 * reaches the access handler, which answers 414. (A library that
	 * handed a copy would parse them itself; the 414 stays.) */
	query[1] = '\0';
	return &mo_srv_too_many_args;
}

static enum MHD_Result mo_srv_header_add(void *cls, enum MHD_ValueKind kind, const char *key,
					 size_t key_size, const char *value, size_t value_size)
{
	size_t *total = cls;

	(void)kind;
	(void)key;
	(void)value;
	*total += key_size + value_size + 4; /* ": " and CRLF */
	return MHD_YES;
}

/* The bytes of c's values of kind (headers, or query arguments). */
static size_t mo_srv_value_bytes(struct MHD_Connection *c, enum MHD_ValueKind kind)
{
	size_t total = 0;

	MHD_get_connection_values_n(c, kind, mo_srv_header_add, &total);
	return total;
}

/* The framing headers of a request, all of them (a header may be sent
 * more than once). */
typedef struct mo_srv_framing {
	const char *length;  /* the first Content-Length value */
	bool lengths_differ; /* another Content-Length value, or a list of differing ones */
	bool has_te;         /* any Transfer-Encoding */
	bool te_not_chunked; /* a coding other than one final "chunked" */
} mo_srv_framing;

/* A Content-Length value differs from `first` (a list "2, 44" counts as
 * its items; equal items are allowed by RFC 9112 section 6.3). */
static bool mo_srv_length_differs(const char *first, const char *value)
{
	size_t n = strcspn(first, ", \t");

	for (const char *p = value; *p;) {
		p += strspn(p, ", \t");
		size_t m = strcspn(p, ", \t");

		if (m && (m != n || strncmp(p, first, n) != 0))
			return true;
		p += m;
	}
	return false;
}

static enum MHD_Result mo_srv_framing_add(void *cls, enum MHD_ValueKind kind, const char *key,
					  size_t key_size, const char *value, size_t value_size)
{
	mo_srv_framing *f = cls;

	(void)kind;
	(void)value_size;
	if (key_size == 14 && strcasecmp(key, "Content-Length") == 0) {
		if (!f->length)
			f->length = value;
		if (mo_srv_length_differs(f->length, value))
			f->lengths_differ = true;
	} else if (key_size == 17 && strcasecmp(key, "Transfer-Encoding") == 0) {
		/* only one coding is implemented, chunked, and it must be the
		 * only one: another coding under it would reach the handler
		 * still encoded */
		f->te_not_chunked |= f->has_te || strcasecmp(value, "chunked") != 0;
		f->has_te = true;
	}
	return MHD_YES;
}

/* RFC 9112 section 6: a request whose body length is ambiguous is refused
 * with 400 and the connection closed (another hop may read the length
 * differently and take the bytes after the body for a second request);
 * a transfer coding other than chunked is 501 (MHD 0.9.75 would wait for
 * the body until the client closed, answering nothing); HTTP/1.1 requires
 * Host (section 3.2). Returns the status to refuse with, or 0. */
static int mo_srv_framing_refusal(struct MHD_Connection *c, const char *version,
				  const char **code, const char **detail)
{
	mo_srv_framing f = {0};

	MHD_get_connection_values_n(c, MHD_HEADER_KIND, mo_srv_framing_add, &f);
	if (f.has_te && f.length) {
		*code = "bad-framing";
		*detail = "a request may not carry both Content-Length and Transfer-Encoding";
		return 400;
	}
	if (f.lengths_differ) {
		*code = "bad-framing";
		*detail = "the request carries different Content-Length values";
		return 400;
	}
	if (f.te_not_chunked) {
		*code = "transfer-coding";
		*detail = "the only transfer coding accepted is chunked, alone";
		return 501;
	}
	if (version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
	    !MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")) {
		*code = "host-required";
		*detail = "an HTTP/1.1 request must carry a Host header";
		return 400;
	}
	return 0;
}

static enum MHD_Result mo_srv_preflight(const mo_srv *srv,
					struct MHD_Connection *c,
					mo_srv_req *rq)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
								  MHD_RESPMEM_PERSISTENT);

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, POST");
	MHD_add_response_header(r, "Access-Control-Allow-Headers", "Content-Type");
	MHD_add_response_header(r, "Access-Control-Max-Age", "600");
	return mo_srv_queue(srv, c, rq, 204, r);
}

/* What the headers alone decide: overload, CORS preflight, route, method,
 * content type, announced length. /healthz is never refused for overload:
 * it answers at once, and an orchestrator must not restart a server that
 * is merely busy (or being fed slow uploads). */
static enum MHD_Result mo_srv_headers(mo_srv *srv, struct MHD_Connection *c,
				      mo_srv_req *rq, const char *version)
{
	mo_api_response res = {0};
	int_fast64_t n = atomic_fetch_add(&srv->metrics.in_flight, 1) + 1;
	const char *code = NULL, *detail = NULL;
	int refusal = mo_srv_framing_refusal(c, version, &code, &detail);

	if (refusal) {
		rq->close = true;
		return mo_srv_problem(srv, c, rq, refusal, code, detail);
	}
	if (!mo_srv_host_allowed(&srv->cfg,
				 MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
		return mo_srv_problem(srv, c, rq, 421, "host-not-allowed",
				      "the Host header names a host this server does not answer "
				      "for (memopt serve --allowed-host)");
	if (rq->too_many_args) {
		rq->close = true;
		return mo_srv_problem(srv, c, rq, 414, "uri-too-long",
				      "the request target has more than 64 query arguments");
	}
	if (strlen(rq->url) + mo_srv_value_bytes(c, MHD_GET_ARGUMENT_KIND) > MO_SRV_MAX_URI)
		return mo_srv_problem(srv, c, rq, 414, "uri-too-long",
				      "the request target is over 8 KiB");
	if (mo_srv_value_bytes(c, MHD_HEADER_KIND) > MO_SRV_MAX_HEADERS)
		return mo_srv_problem(srv, c, rq, 431, "headers-too-large",
				      "the request headers are over 16 KiB");
	if (n > (int_fast64_t)srv->cfg.max_inflight && rq->route != MO_ROUTE_HEALTHZ) {
		atomic_fetch_add(&srv->metrics.rejected, 1);
		return mo_srv_problem(srv, c, rq, 503, "overloaded",
				      "too many requests in flight; retry shortly");
	}
	if (rq->client_over && rq->route != MO_ROUTE_HEALTHZ) {
		atomic_fetch_add(&srv->metrics.client_rejected, 1);
		return mo_srv_problem(srv, c, rq, 429, "client-overloaded",
				      "this address has its share of the requests in flight; "
				      "retry shortly");
	}
	if (srv->cfg.cors_origin && strcmp(rq->method, "OPTIONS") == 0 &&
	    rq->route != MO_ROUTE_STATIC)
		return mo_srv_preflight(srv, c, rq);
	if (rq->route == MO_ROUTE_STATIC) {
		if (strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0)
			return MHD_YES;
		res.allow = "GET, HEAD";
		mo_api_problem(&res, 405, "method-not-allowed",
			       "static files take GET and HEAD");
		return mo_srv_queue_api(srv, c, rq, &res);
	}
	if (!mo_api_precheck(&res, rq->method, rq->url,
			     MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
			     mo_srv_content_length(c), &srv->api))
		return MHD_YES;
	return mo_srv_queue_api(srv, c, rq, &res);
}

static enum MHD_Result mo_srv_begin(mo_srv *srv, struct MHD_Connection *c,
				    const char *url, const char *method,
				    const char *version, void **req_cls)
{
	mo_srv_req *rq = calloc(1, sizeof *rq);
	const struct sockaddr *sa;

	if (!rq)
		return MHD_NO;
	rq->start_us = mo_srv_now_us();
	rq->url = url;
	rq->method = method;
	rq->route = mo_api_route_of(url);
	rq->too_many_args = *req_cls == &mo_srv_too_many_args;
	rq->conn = mo_srv_conn_of(c);
	mo_srv_conn_enter(&srv->conns, rq->conn, MO_SRV_PHASE_BODY, rq->start_us);
	rq->gzip = mo_srv_accepts_gzip(
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding"));
	sa = mo_srv_peer(c);
	rq->client = mo_srv_client_enter(&srv->clients, sa, &rq->client_over);
	if (srv->cfg.access_log) /* only the log line shows it */
		mo_srv_remote(rq, sa);
	*req_cls = rq;
	return mo_srv_headers(srv, c, rq, version);
}

static bool mo_srv_grow(mo_srv_req *rq, size_t need, size_t max)
{
	size_t cap = rq->cap ? rq->cap : 4096;
	char *p;

	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max;
	p = realloc(rq->body, cap + 1);
	if (!p)
		return false;
	rq->body = p;
	rq->cap = cap;
	return true;
}

/* Appends a piece of body to the capped buffer, or discards it once over
 * the cap (413 at the end; the connection is dropped past
 * MO_SRV_MAX_DISCARD bytes or the request deadline). */
static enum MHD_Result mo_srv_body(const mo_srv *srv, mo_srv_req *rq,
				   const char *data, size_t *size)
{
	size_t n = *size;

	*size = 0;
	if (mo_srv_now_us() - rq->start_us > (uint64_t)srv->cfg.deadline_s * 1000000u) {
		if (rq->conn) /* conn.c answers 408 and closes at its next sweep */
			return MHD_YES;
		rq->status = 408; /* too slow: drop the connection */
		return MHD_NO;
	}
	if (rq->answered)
		return MHD_YES;
	if (rq->too_big || n > srv->api.max_body - rq->len) {
		rq->too_big = true;
		rq->discarded += n;
		if (rq->discarded <= MO_SRV_MAX_DISCARD || rq->status == 413)
			return MHD_YES;
		if (!rq->conn)
			return MHD_NO;
		mo_srv_conn_refuse_body(&srv->conns, rq->conn);
		rq->status = 413;
		return MHD_YES;
	}
	if (rq->len + n > rq->cap && !mo_srv_grow(rq, rq->len + n, srv->api.max_body))
		return MHD_NO;
	memcpy(rq->body + rq->len, data, n);
	rq->len += n;
	rq->body[rq->len] = '\0';
	return MHD_YES;
}

static enum MHD_Result mo_srv_metrics_page(mo_srv *srv, struct MHD_Connection *c,
					   mo_srv_req *rq)
{
	size_t len = 0;
	char *text = mo_srv_metrics_render(&srv->metrics, &srv->conns, srv->api.responses, &len);
	struct MHD_Response *r;

	if (!text)
		return mo_srv_problem(srv, c, rq, 500, "internal", "out of memory");
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rq->bytes = len;
	return mo_srv_queue(srv, c, rq, 200, r);
}

/* The work budget's callback: stop when the client hung up or the server
 * is past its grace period. */
typedef struct mo_srv_work {
	const mo_srv *srv;
	const mo_srv_req *rq;
} mo_srv_work;

static int mo_srv_work_cancelled(void *arg)
{
	const mo_srv_work *w = arg;

	return atomic_load(&w->srv->cancel) ||
	       (w->rq->conn && atomic_load(&w->rq->conn->gone));
}

/* An api/ answer computed within the request's work budget (max_ms; 0:
 * none). *how: mo_budget_end's (MO_ERR_BUDGET: the deadline, MO_ERR_CANCELLED). */
static int mo_srv_compute(mo_srv *srv, const char *content_type, mo_srv_req *rq,
			  mo_api_response *res, uint64_t max_ms, mo_error_code *how)
{
	mo_srv_work w = {srv, rq};
	mo_budget b = {.max_ms = max_ms, .cancelled = mo_srv_work_cancelled, .arg = &w};
	int rc;

	mo_budget_begin(&b);
	rc = (rq->cache_checked ? mo_api_handle_missed : mo_api_handle)(
		res, rq->method, rq->url, content_type, rq->body, rq->len, &srv->api);
	*how = mo_budget_end();
	return rc;
}

/* The work limit counts from the moment the job was queued: a request
 * that waited it out for a free thread is answered 503 (retry), one that
 * waited part of it computes for the rest. */
void mo_srv_compute_job(mo_srv *srv, mo_srv_req *rq)
{
	uint64_t waited_ms = (mo_srv_now_us() - rq->queued_us) / 1000u, max_ms = 0;
	mo_error_code how;

	if (srv->cfg.work_ms && waited_ms >= srv->cfg.work_ms)
		mo_api_problem(&rq->res, 503, "overloaded",
			       "no compute thread was free within the work limit; retry shortly");
	else if (srv->cfg.work_ms)
		max_ms = srv->cfg.work_ms - waited_ms;
	if (!rq->res.body &&
	    mo_srv_compute(srv, rq->content_type, rq, &rq->res, max_ms, &how) != 0 &&
	    !rq->res.body)
		mo_api_problem(&rq->res, 500, "internal", "out of memory");
	rq->gzipped = mo_srv_compress(rq, &rq->res, SIZE_MAX);
	rq->computed = true;
	/* before the resume: the request (and its client's entry) may be
	 * gone once MHD has it back */
	mo_srv_client_run(&srv->clients, rq->client, -1);
	MHD_resume_connection(rq->c); /* MHD calls mo_srv_access again */
}

/* Routes whose work polls the budget (mo_budget), so a slice of it on
 * the worker can be cut short (mo_srv_offload). */
static bool mo_srv_heavy(mo_api_route_id route)
{
	return route == MO_ROUTE_ESTIMATE || route == MO_ROUTE_PLAN || route == MO_ROUTE_SIZE;
}

/* Routes answered on the worker: fixed or small answers that compute
 * nothing in proportion to the request. Every other route goes to the
 * compute pool. */
static bool mo_srv_computes(mo_api_route_id route)
{
	return route != MO_ROUTE_HEALTHZ && route != MO_ROUTE_PRESETS &&
	       route != MO_ROUTE_PRESET && route != MO_ROUTE_OPENAPI &&
	       route != MO_ROUTE_UNKNOWN;
}

/* How long a heavy request may compute on the worker before it is handed
 * to the pool (and computed again there): most estimates and plans take a
 * few ms and never pay the handoff (suspend, a pool thread's wake-up,
 * resume: ~25 us of CPU measured on uncached estimates); a long one holds
 * the worker this long at most. */
#define MO_SRV_INLINE_MS 50u

/* A body this big skips the worker slice even on a route that polls the
 * budget: parsing it alone can take longer than the slice. */
#define MO_SRV_BIG_BODY ((size_t)64 << 10)

/* Suspends the connection and queues the request for the pool, its work
 * limit counting from now. */
static enum MHD_Result mo_srv_to_pool(mo_srv *srv, struct MHD_Connection *c, mo_srv_req *rq,
				      const char *content_type)
{
	rq->c = c;
	rq->content_type = content_type;
	rq->queued_us = mo_srv_now_us();
	if (mo_srv_pool_push(&srv->pool, rq, c))
		return MHD_YES;
	atomic_fetch_add(&srv->metrics.rejected, 1);
	return mo_srv_problem(srv, c, rq, 503, "overloaded",
			      "the compute queue is full; retry shortly");
}

/* A heavy request: computed here within MO_SRV_INLINE_MS; past that,
 * suspended and queued for the pool with the rest of its work limit. */
static enum MHD_Result mo_srv_offload(mo_srv *srv, struct MHD_Connection *c, mo_srv_req *rq,
				      const char *content_type)
{
	mo_api_response res = {0};
	uint64_t slice = srv->cfg.work_ms && srv->cfg.work_ms < MO_SRV_INLINE_MS
				 ? srv->cfg.work_ms
				 : MO_SRV_INLINE_MS;
	mo_error_code how;

	if (mo_srv_compute(srv, content_type, rq, &res, slice, &how) != 0 && !res.body)
		return mo_srv_problem(srv, c, rq, 500, "internal", "out of memory");
	if (how != MO_ERR_BUDGET || slice == srv->cfg.work_ms)
		return mo_srv_queue_api(srv, c, rq, &res); /* done, or its whole limit spent */
	mo_api_response_free(&res); /* the slice ran out: the pool starts it over */
	return mo_srv_to_pool(srv, c, rq, content_type);
}

/* The whole request is in: answer it. */
static enum MHD_Result mo_srv_finish(mo_srv *srv, struct MHD_Connection *c,
				     mo_srv_req *rq)
{
	mo_api_response res = {0};
	const char *content_type;
	mo_error_code how;

	if (rq->computed) /* back from the compute pool */
		return mo_srv_queue_api(srv, c, rq, &rq->res);
	mo_srv_conn_enter(&srv->conns, rq->conn, MO_SRV_PHASE_WORKING, 0);
	if (rq->too_big && rq->status == 413)
		return MHD_NO; /* answered on the socket already (conn.c) */
	if (rq->too_big)
		return mo_srv_problem(srv, c, rq, 413, "body-too-large",
				      "the request body is over the size limit");
	if (rq->route == MO_ROUTE_STATIC)
		return mo_srv_static(srv, c, rq);
	if (rq->route == MO_ROUTE_METRICS)
		return mo_srv_metrics_page(srv, c, rq);
	content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	if (srv->pool.n && mo_srv_computes(rq->route)) {
		if (mo_api_cached(&res, rq->method, rq->url, content_type, rq->body, rq->len,
				  &srv->api))
			return mo_srv_queue_api(srv, c, rq, &res);
		rq->cache_checked = true;
		if (mo_srv_heavy(rq->route) && rq->len < MO_SRV_BIG_BODY)
			return mo_srv_offload(srv, c, rq, content_type);
		return mo_srv_to_pool(srv, c, rq, content_type);
	}
	if (mo_srv_compute(srv, content_type, rq, &res, srv->cfg.work_ms, &how) != 0)
		return mo_srv_problem(srv, c, rq, 500, "internal", "out of memory");
	return mo_srv_queue_api(srv, c, rq, &res);
}

enum MHD_Result mo_srv_access(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	mo_srv *srv = cls;
	mo_srv_req *rq = *req_cls;

	if (!rq || *req_cls == &mo_srv_too_many_args)
		return mo_srv_begin(srv, c, url, method, version, req_cls);
	if (*upload_data_size)
		return mo_srv_body(srv, rq, upload_data, upload_data_size);
	if (rq->answered)
		return MHD_YES;
	return mo_srv_finish(srv, c, rq);
}

/* A request that took this long (a big layout, estimate or plan) gives
 * the memory it used back to the system when it ends. glibc keeps what is
 * freed in its per-thread arenas: eight 1 MiB layouts at once left 588 MB
 * resident, 58 MB after malloc_trim; a 60 MB timeline refused as
 * answer-too-large, 474 MB (notes/server-survival.md). Ordinary requests
 * (a few ms) never trim. */
#define MO_SRV_TRIM_US 50000u

/* malloc_trim(0) (every arena), once at a time: a request ending while
 * another thread trims has that thread trim again. */
static void mo_srv_trim(mo_srv *srv)
{
	atomic_store(&srv->trim_wanted, true);
	for (;;) {
		if (atomic_exchange(&srv->trimming, true))
			return; /* the trimming thread sees trim_wanted */
		while (atomic_exchange(&srv->trim_wanted, false))
			malloc_trim(0);
		atomic_store(&srv->trimming, false);
		if (!atomic_load(&srv->trim_wanted))
			return;
	}
}

void mo_srv_completed(void *cls, struct MHD_Connection *c, void **req_cls,
		      enum MHD_RequestTerminationCode toe)
{
	mo_srv *srv = cls;
	mo_srv_req *rq = *req_cls;
	uint64_t usec;

	(void)c;
	if ((void *)rq == &mo_srv_too_many_args)
		*req_cls = NULL; /* the headers never came */
	if (!*req_cls)
		return;
	usec = mo_srv_now_us() - rq->start_us;
	if (!rq->answered && rq->conn && atomic_load(&rq->conn->cut))
		rq->status = atomic_load(&srv->quiescing) ? 503 : 408; /* conn.c answered */
	if ((toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !rq->status) ||
	    (rq->conn && atomic_load(&rq->conn->gone)))
		rq->status = 499; /* the client went away before an answer */
	mo_srv_conn_enter(&srv->conns, rq->conn, MO_SRV_PHASE_HEADERS, mo_srv_now_us());
	mo_srv_metrics_observe(&srv->metrics, rq->route, rq->status, usec);
	if (srv->cfg.access_log)
		mo_srv_log_access(&srv->log, rq, usec);
	atomic_fetch_sub(&srv->metrics.in_flight, 1);
	mo_srv_client_leave(&srv->clients, rq->client);
	mo_api_response_free(&rq->res); /* a computed answer never queued */
	free(rq->body);
	free(rq);
	*req_cls = NULL;
	if (usec >= MO_SRV_TRIM_US)
		mo_srv_trim(srv);
}
