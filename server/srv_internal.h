/* Shared between server/ modules only. */
#ifndef MEMOPT_SRV_INTERNAL_H
#define MEMOPT_SRV_INTERNAL_H

#include "api.h"
#include "server.h"

#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- metrics: counters with atomics, owned by the server ---------------- */

#define MO_SRV_NSTATUS 19  /* the statuses we send, plus "other" */
#define MO_SRV_NBUCKETS 12 /* latency buckets, the last is +Inf */

typedef struct mo_srv_metrics {
	atomic_uint_fast64_t requests[MO_ROUTE_COUNT][MO_SRV_NSTATUS];
	atomic_uint_fast64_t buckets[MO_ROUTE_COUNT][MO_SRV_NBUCKETS];
	atomic_uint_fast64_t sum_us[MO_ROUTE_COUNT];
	atomic_int_fast64_t in_flight;
	atomic_uint_fast64_t rejected; /* 503 for the in-flight cap */
	atomic_uint_fast64_t client_rejected; /* 429 for a client's share of it */
	atomic_uint_fast64_t log_dropped; /* access log lines dropped: the sink was stuck */
} mo_srv_metrics;

void mo_srv_metrics_observe(mo_srv_metrics *m, mo_api_route_id route,
			    int status, uint64_t usec);
/* Prometheus text format 0.0.4, the response cache's counters included
 * (cache may be NULL). Caller frees. NULL on failure. */
struct mo_srv_conns;
char *mo_srv_metrics_render(mo_srv_metrics *m, struct mo_srv_conns *conns,
			    mo_api_rcache *cache, size_t *len);

/* ---- the access log: buffered lines, a writer thread (log.c) -------------- */

typedef struct mo_srv_log {
	pthread_mutex_t lock;
	pthread_cond_t wake;  /* the writer's timer; signalled when a buffer fills or to stop */
	char *buf, *spare;    /* filling / free (NULL while being written) */
	size_t len;
	int fd;
	bool stop, started;
	atomic_bool stopping; /* read by the writer outside the lock */
	atomic_uint_fast64_t *dropped; /* lines dropped for want of room */
	pthread_t thread;
} mo_srv_log;

/* Starts the writer thread for fd; lines that find no room are counted in
 * *dropped. 0 or -1 (then lines are written at once). */
int mo_srv_log_start(mo_srv_log *l, int fd, atomic_uint_fast64_t *dropped);
/* Writes what is buffered and stops the thread (after the last request). */
void mo_srv_log_stop(mo_srv_log *l);

/* ---- open connections: count, deadlines, shutdown (conn.c) --------------- */

enum {
	MO_SRV_PHASE_HEADERS,  /* waiting for a request's headers */
	MO_SRV_PHASE_BODY,     /* receiving its body */
	MO_SRV_PHASE_WORKING,  /* the whole request is in; being computed */
	MO_SRV_PHASE_ANSWERED, /* an answer is queued or being sent */
};

/* One open connection (MHD's socket context). */
typedef struct mo_srv_conn {
	struct mo_srv_conn *prev, *next; /* under the table's lock */
	int fd;
	atomic_int phase;
	atomic_uint_fast64_t deadline_us; /* monotonic; 0: none */
	atomic_bool cut;                  /* shut down by the server */
	atomic_bool gone;                 /* the peer hung up while its request was computed */
	bool hung_up;                     /* the peer had hung up at the last sweep */
} mo_srv_conn;

typedef struct mo_srv_conns {
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* the sweeper's timer; signalled to stop */
	mo_srv_conn *head;
	atomic_uint open;          /* handed to MHD and not yet closed */
	atomic_uint_fast64_t timed_out; /* connections cut at a deadline */
	uint64_t header_us, body_us, idle_us;
	char *answer_408, *answer_503, *answer_413; /* canned answers for cut connections */
	struct pollfd *polls;      /* the sweeper's (under the lock) */
	size_t poll_cap;
	size_t answer_408_len, answer_503_len, answer_413_len;
	bool stop, started;
	pthread_t thread;
} mo_srv_conns;

/* 0 or -1. The deadlines: headers within header_timeout_s of the
 * connection (or of the previous answer plus the idle timeout), the body
 * and then the answer each within body_deadline_s. */
int mo_srv_conns_init(mo_srv_conns *t, unsigned header_timeout_s,
		      unsigned body_deadline_s, unsigned idle_timeout_s);
/* Starts / stops the sweeper thread. 0 or -1. */
int mo_srv_conns_start(mo_srv_conns *t);
void mo_srv_conns_stop(mo_srv_conns *t);
/* Answers 503 on every connection whose request is in and unanswered and
 * shuts every open connection down. Returns how many it cut. */
size_t mo_srv_conns_cut_all(mo_srv_conns *t);
void mo_srv_conns_destroy(mo_srv_conns *t);
/* MHD_OPTION_NOTIFY_CONNECTION (cls: the mo_srv). */
void mo_srv_notify_connection(void *cls, struct MHD_Connection *c,
			      void **socket_context,
			      enum MHD_ConnectionNotificationCode toe);
/* A body that goes on past the server's patience (chunked, so the size
 * was not announced): answers 413 straight on the socket, which MHD has
 * not written to, ends the sending side, and gives the client the body
 * deadline to stop sending (the rest is read and dropped meanwhile, so
 * the answer is not lost to a reset). */
void mo_srv_conn_refuse_body(const mo_srv_conns *t, mo_srv_conn *rec);
/* The record of c, or NULL. */
mo_srv_conn *mo_srv_conn_of(struct MHD_Connection *c);
/* rec (may be NULL) enters phase at from_us; sets its deadline. */
void mo_srv_conn_enter(const mo_srv_conns *t, mo_srv_conn *rec, int phase,
		       uint64_t from_us);

/* ---- the listening socket and its accept thread (listen.c) -------------- */

typedef struct mo_srv_listener {
	int fd;                   /* the listening socket */
	int wake[2];              /* a pipe: a byte stops the thread */
	pthread_t thread;
	bool started;
	unsigned max_connections; /* accepting pauses at this many */
	struct MHD_Daemon *daemon;
	mo_srv_conns *conns;      /* counts what is open */
} mo_srv_listener;

/* Binds and listens (SO_REUSEADDR; IPV6_V6ONLY for an IPv6 address). 0 or
 * -1 (errno set). */
int mo_srv_listen_open(mo_srv_listener *l, const struct sockaddr *sa,
		       socklen_t len, int v6);
unsigned mo_srv_listen_port(const mo_srv_listener *l);
/* Starts the thread that hands accepted connections to d. 0 or -1. */
int mo_srv_listen_start(mo_srv_listener *l, struct MHD_Daemon *d,
			mo_srv_conns *conns, unsigned max_connections);
/* Stops accepting; the socket stays open. */
void mo_srv_listen_stop(mo_srv_listener *l);
/* Stops accepting if needed and closes the socket. */
void mo_srv_listen_close(mo_srv_listener *l);

/* ---- requests in flight per client address (clients.c) ------------------ */

#define MO_SRV_CLIENT_BUCKETS 1024

typedef struct mo_srv_client mo_srv_client;
typedef struct mo_srv_clients {
	pthread_mutex_t lock;
	mo_srv_client *buckets[MO_SRV_CLIENT_BUCKETS];
	unsigned max_in_flight; /* a client's share; 0: no cap */
} mo_srv_clients;

int mo_srv_clients_init(mo_srv_clients *t, unsigned max_in_flight);
void mo_srv_clients_destroy(mo_srv_clients *t);
/* Counts a request from sa in; *over when the client is now past its
 * share. The client's entry, or NULL (no address, no memory: uncounted). */
mo_srv_client *mo_srv_client_enter(mo_srv_clients *t, const struct sockaddr *sa, bool *over);
/* Counts it out (e may be NULL). */
void mo_srv_client_leave(mo_srv_clients *t, mo_srv_client *e);
/* Jobs of the client a pool thread is computing; delta +1 / -1. */
unsigned mo_srv_client_running(mo_srv_clients *t, const mo_srv_client *e);
void mo_srv_client_run(mo_srv_clients *t, mo_srv_client *e, int delta);

/* ---- the compute pool (work.c) ------------------------------------------ */

struct mo_srv_req;
typedef struct mo_srv_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct mo_srv_req *head, *tail; /* jobs waiting, oldest first */
	size_t queued;
	pthread_t *threads;
	size_t n;                       /* threads started; 0: no pool */
	bool stop, inited;
} mo_srv_pool;

/* Starts n threads (0: none, estimates and plans stay on MHD's workers).
 * 0 or -1. */
int mo_srv_pool_start(mo_srv *srv, unsigned n);
/* Suspends c and queues rq for a pool thread; false (c untouched) when
 * the queue is full. */
bool mo_srv_pool_push(mo_srv_pool *p, struct mo_srv_req *rq, struct MHD_Connection *c);
/* Stops and joins the threads once the queue is empty. */
void mo_srv_pool_stop(mo_srv_pool *p);

/* ---- the server ---------------------------------------------------------- */

struct mo_srv {
	mo_srv_config cfg;
	mo_api_options api;
	struct MHD_Daemon *daemon;
	mo_srv_listener listener;
	int web_fd;                 /* web root directory, or -1 (embedded) */
	unsigned port;
	atomic_bool quiescing;
	atomic_bool cancel;         /* after the grace period: computations stop */
	atomic_bool trimming;       /* a thread runs malloc_trim (handler.c) */
	atomic_bool trim_wanted;    /* a heavy request ended since it began */
	mo_srv_metrics metrics;
	mo_srv_log log;             /* started when cfg.access_log is set */
	mo_srv_conns conns;
	mo_srv_clients clients;
	mo_srv_pool pool;
};

/* Per-request state (req_cls), freed in the completed callback. */
typedef struct mo_srv_req {
	uint64_t start_us;
	mo_api_route_id route;
	const char *method;       /* MHD's, valid until completion */
	const char *url;
	char remote[48];
	char *body;               /* capped buffer */
	size_t len, cap;
	uint64_t discarded;       /* body bytes dropped over the cap */
	bool too_big;             /* body over the cap: answer 413 at the end */
	bool answered;            /* a response is queued */
	bool close;               /* the answer closes the connection (bad framing) */
	bool too_many_args;       /* the target had more query arguments than MHD can hold */
	int status;               /* for the log and the metrics */
	uint64_t bytes;           /* response body size */
	mo_srv_conn *conn;        /* the connection's record, or NULL */
	mo_srv_client *client;    /* its address's count, or NULL */
	bool client_over;         /* that address is past its share of in-flight requests */
	/* a job of the compute pool: the suspended connection, its
	 * Content-Type (valid while suspended), the answer computed */
	struct MHD_Connection *c;
	const char *content_type;
	struct mo_srv_req *next_job;
	mo_api_response res;
	uint64_t queued_us;
	bool computed;
	bool cache_checked;       /* the response cache missed already (mo_api_cached) */
	bool gzip;                /* the client accepts gzip */
	bool gzipped;             /* res's body is gzip (compressed on the pool thread) */
} mo_srv_req;

/* Computes rq's answer on a pool thread and resumes its connection. */
void mo_srv_compute_job(mo_srv *srv, mo_srv_req *rq);

enum MHD_Result mo_srv_access(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls);
void mo_srv_completed(void *cls, struct MHD_Connection *c, void **req_cls,
		      enum MHD_RequestTerminationCode toe);
/* MHD_OPTION_URI_LOG_CALLBACK: sees the request target before MHD parses
 * its query arguments, and keeps MHD from parsing more than the server
 * takes (the request is then answered 414). */
void *mo_srv_uri_seen(void *cls, const char *uri, struct MHD_Connection *c);
/* Percent-decoding that leaves %00 encoded (static paths then refuse it). */
size_t mo_srv_unescape(void *cls, struct MHD_Connection *c, char *s);

/* Headers every answer carries (nosniff, CSP, CORS). */
void mo_srv_common_headers(const mo_srv *srv, struct MHD_Response *r);
/* Queues and destroys a response; records the status. */
enum MHD_Result mo_srv_queue(const mo_srv *srv, struct MHD_Connection *c,
			     mo_srv_req *rq, int status, struct MHD_Response *r);
/* Queues an application/problem+json answer. */
enum MHD_Result mo_srv_problem(const mo_srv *srv, struct MHD_Connection *c,
			       mo_srv_req *rq, int status, const char *code,
			       const char *detail);

/* ---- the server's one hash (hash.c) ---------------------------------------- */
uint64_t mo_srv_hash(const void *data, size_t n);

/* ---- gzip (gzip.c) ------------------------------------------------------- */

/* The Accept-Encoding value (NULL: none) takes gzip (or *) with q > 0. */
bool mo_srv_accepts_gzip(const char *accept_encoding);
/* An answer this long is worth compressing. */
bool mo_srv_gzip_worth(size_t len);
/* Replaces *body (malloc'ed, *len bytes) by its gzip. 0, or -1 (left as
 * it was: out of memory, or no smaller). */
int mo_srv_gzip(char **body, size_t *len);

/* True when If-None-Match lists etag (or is "*"); weak comparison
 * (static.c). */
bool mo_srv_etag_match(struct MHD_Connection *c, const char *etag);

/* 1 when the Host header value (NULL: none) may be answered (host.c). */
int mo_srv_host_allowed(const mo_srv_config *cfg, const char *value);

/* GET/HEAD of a static file under the web root (or embedded). */
enum MHD_Result mo_srv_static(const mo_srv *srv, struct MHD_Connection *c,
			      mo_srv_req *rq);

/* One JSON line on stderr for a finished request (through l's buffer
 * when it is started). */
void mo_srv_log_access(mo_srv_log *l, const mo_srv_req *rq, uint64_t usec);
/* MHD's error log, as JSON lines (cls: the mo_srv_log, through its
 * buffer when it is started). */
void mo_srv_log_mhd(void *cls, const char *fmt, va_list ap);

uint64_t mo_srv_now_us(void);

#endif
