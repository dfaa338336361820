/* The HTTP server (libmicrohttpd): routes requests to api/, serves the
 * web UI's static files, counts metrics, logs one JSON line per request. */
#ifndef MEMOPT_SERVER_H
#define MEMOPT_SERVER_H

#include <stddef.h>

typedef struct mo_srv_config {
	const char *host;          /* "127.0.0.1"; an IPv6 literal works too */
	unsigned port;             /* 0: an ephemeral port */
	unsigned threads;          /* thread pool size (default: online CPUs) */
	unsigned compute_threads;  /* long estimates and plans run here (default: online
				    * CPUs); 0: on the pool's threads */
	size_t max_body;           /* request body cap (default 1 MiB) */
	size_t max_answer;         /* answer cap: 422 answer-too-large above (default 16 MiB) */
	const char *web_root;      /* static files; NULL: the embedded web/ files */
	const char *cors_origin;   /* Access-Control-Allow-Origin, or NULL */
	const char *const *allowed_hosts; /* host names a Host header may carry besides IP
					   * literals and localhost ("*": any); host.c */
	size_t allowed_host_count;
	unsigned max_connections;  /* concurrent connections (default 4096) */
	unsigned max_per_client;   /* concurrent connections from one address (default 0:
				    * an eighth of max_connections) */
	unsigned max_inflight;     /* requests being handled; 503 above it (default 1024) */
	unsigned max_inflight_per_client; /* requests from one address being handled; 429
					   * above it (default 0: an eighth of max_inflight) */
	unsigned timeout_s;        /* idle connection timeout (default 10 s) */
	unsigned header_timeout_s; /* a request's headers must arrive within this (default 10 s) */
	unsigned deadline_s;       /* a request's body, and then its answer, must go
				    * through within this (default 30 s) */
	unsigned grace_s;          /* wait for in-flight requests on shutdown (default 10 s) */
	unsigned work_ms;          /* a request's computation stops after this (default 10,000 ms;
				    * 0: no limit); it also stops when its client hangs up */
	int access_log;            /* one JSON line per request on stderr (default 1) */
	size_t cache_entries;      /* response cache entries; 0 disables it (default 1024) */
	size_t cache_bytes;        /* response cache bytes (default 64 MiB) */
} mo_srv_config;

typedef struct mo_srv mo_srv;

void mo_srv_config_default(mo_srv_config *cfg);

/* Starts the daemon. Returns 0 with *out set, or -1 (message on stderr). */
int mo_srv_start(mo_srv **out, const mo_srv_config *cfg);
/* The bound port (useful with port 0). */
unsigned mo_srv_port(const mo_srv *srv);
/* Closes the port, lets in-flight requests finish (up to grace_s), then
 * answers 503 to those still unanswered and closes every connection;
 * stops and frees. Returns 0, or the number of requests whose computation
 * had still not returned 2 s later: then nothing is stopped or freed (their
 * threads still use it) and the caller should end the process. */
size_t mo_srv_stop(mo_srv *srv);

/* Blocks SIGINT/SIGTERM/SIGHUP, ignores SIGPIPE, starts, prints
 * `listening on http://HOST:PORT` on stderr, waits for a signal, stops.
 * Returns the process exit status (0, or 1 when the server did not start);
 * ends the process with _exit(1) when mo_srv_stop abandoned requests. */
int mo_srv_run(const mo_srv_config *cfg);

#endif
