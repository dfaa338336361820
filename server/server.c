/* Daemon lifecycle: options, bind, graceful shutdown on SIGTERM, SIGINT
 * and SIGHUP. */
#include "srv_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Each connection's memory pool (request line and headers, read buffer,
 * answer headers): also the header size limit (more is 431). MHD zeroes
 * the whole pool between the requests of a keep-alive connection, so its
 * size is paid on every request: 64 KiB was 11% of a /healthz answer's
 * server CPU. 32 KiB is MHD's own default; bodies are copied out chunk by
 * chunk, so they do not need room here. */
#define MO_SRV_CONN_MEMORY (32 * 1024)

/* After the grace period every connection is cut (conn.c); requests whose
 * computation does not come back within this long are abandoned. */
#define MO_SRV_CUT_WAIT_US (2u * 1000000u)

void mo_srv_config_default(mo_srv_config *cfg)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(cfg, 0, sizeof *cfg);
	cfg->host = "127.0.0.1";
	cfg->port = 8080;
	/* four workers a CPU: with the load generator (or anything else) on
	 * the same cores, two workers on two CPUs left every route's p99 near
	 * 5-6 ms; eight brought it to 3-4 ms, at a little more CPU per cheap
	 * request (bench/http.sh, notes/http-uncached-profile.md) */
	n *= 4;
	cfg->threads = n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
	/* estimates and plans: one thread a CPU (work.c) */
	n /= 4;
	cfg->compute_threads = n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
	cfg->max_body = 1024 * 1024;
	cfg->max_answer = (size_t)16 << 20;
	cfg->max_connections = 4096;
	cfg->max_per_client = 0;          /* an eighth of max_connections */
	cfg->max_inflight = 1024;
	cfg->max_inflight_per_client = 0; /* an eighth of max_inflight */
	cfg->timeout_s = 10;
	cfg->header_timeout_s = 10;
	cfg->deadline_s = 30;
	cfg->grace_s = 10;
	cfg->work_ms = 10000;
	cfg->access_log = 1;
	cfg->cache_entries = 1024;
	cfg->cache_bytes = (size_t)64 << 20;
}

/* Fills *ss from host and port. Returns the address length, 0 if the host
 * is not a numeric IPv4/IPv6 address. */
static socklen_t mo_srv_sockaddr(struct sockaddr_storage *ss, const char *host,
				 unsigned port, int *v6)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)(void *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)ss;

	memset(ss, 0, sizeof *ss);
	*v6 = 0;
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		return sizeof *in4;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*v6 = 1;
		return sizeof *in6;
	}
	return 0;
}

static int mo_srv_open_root(mo_srv *srv)
{
	srv->web_fd = -1;
	if (!srv->cfg.web_root)
		return 0;
	srv->web_fd = open(srv->cfg.web_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (srv->web_fd < 0) {
		fprintf(stderr, "memopt serve: cannot open web root '%s'\n", srv->cfg.web_root);
		return -1;
	}
	return 0;
}

/* The daemon: a pool of worker threads fed by the listener (listen.c).
 * MHD splits its connection limit evenly between the workers; each
 * worker's share is set above the whole --max-connections, which the
 * listener enforces (conn.c says why). */
static struct MHD_Daemon *mo_srv_daemon(mo_srv *srv)
{
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC |
			 MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME;
	/* a worker counts a connection a moment after the listener stops
	 * counting it (conn.c): each may be one over, hence the + threads.
	 * At most 256 x (1,000,000 + 257) (cmd_serve.c): no overflow. */
	unsigned mhd_limit = srv->cfg.threads * (srv->cfg.max_connections + srv->cfg.threads + 1);

	return MHD_start_daemon(
		flags, 0, NULL, NULL, mo_srv_access, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mo_srv_log_mhd, &srv->log,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)srv->cfg.threads,
		MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)srv->cfg.max_per_client,
		MHD_OPTION_NOTIFY_CONNECTION, mo_srv_notify_connection, srv,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MO_SRV_CONN_MEMORY,
		MHD_OPTION_NOTIFY_COMPLETED, mo_srv_completed, srv,
		MHD_OPTION_UNESCAPE_CALLBACK, mo_srv_unescape, srv,
		MHD_OPTION_URI_LOG_CALLBACK, mo_srv_uri_seen, srv,
		MHD_OPTION_END);
}

/* Listens on the configured address and starts the daemon and the
 * listener's thread. 0 or -1 (message on stderr). */
static int mo_srv_open(mo_srv *srv, struct sockaddr_storage *ss, socklen_t len, int v6)
{
	if (mo_srv_listen_open(&srv->listener, (struct sockaddr *)ss, len, v6) != 0) {
		fprintf(stderr, "memopt serve: cannot listen on %s port %u: %s\n", srv->cfg.host,
			srv->cfg.port, strerror(errno));
		return -1;
	}
	srv->daemon = mo_srv_daemon(srv);
	if (!srv->daemon ||
	    mo_srv_listen_start(&srv->listener, srv->daemon, &srv->conns,
				srv->cfg.max_connections) != 0) {
		fprintf(stderr, "memopt serve: cannot start the server threads\n");
		if (srv->daemon)
			MHD_stop_daemon(srv->daemon);
		mo_srv_listen_close(&srv->listener);
		return -1;
	}
	srv->port = mo_srv_listen_port(&srv->listener);
	return 0;
}

/* Room for the descriptors that are not connections: the listening
 * socket and its wake-up pipe, MHD's per-worker wake-up pipes, the web
 * root, stdio, files opened for static answers. */
#define MO_SRV_SPARE_FDS 64u

/* Raises the soft descriptor limit toward the hard one when it is below
 * --max-connections plus MO_SRV_SPARE_FDS, and says so when it stays
 * below: the listener then stops at EMFILE well before the limit the
 * operator asked for, and new connections wait in the backlog. */
static void mo_srv_check_fd_limit(const mo_srv_config *cfg)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)cfg->max_connections + MO_SRV_SPARE_FDS;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= need)
		return;
	fprintf(stderr, "{\"level\":\"warning\",\"message\":\"the open file limit (%llu, "
		"ulimit -n) is below --max-connections %u plus %u: connections past about %llu "
		"wait in the backlog; raise the limit or lower --max-connections\"}\n",
		(unsigned long long)rl.rlim_cur, cfg->max_connections, MO_SRV_SPARE_FDS,
		rl.rlim_cur > MO_SRV_SPARE_FDS ? (unsigned long long)(rl.rlim_cur - MO_SRV_SPARE_FDS)
					       : 0ull);
	fflush(stderr);
}

/* A client's share when not set: an eighth of the whole (at least 1), so
 * one address never holds more than that of the connections or of the
 * requests in flight (5,000 idle connections from 5 addresses filled the
 * 4,096 and /healthz waited 9 s for the idle timeout). */
#define MO_SRV_CLIENT_SHARE 8u

static void mo_srv_client_shares(mo_srv_config *cfg)
{
	if (!cfg->max_per_client)
		cfg->max_per_client = cfg->max_connections / MO_SRV_CLIENT_SHARE
					      ? cfg->max_connections / MO_SRV_CLIENT_SHARE
					      : 1;
	if (!cfg->max_inflight_per_client)
		cfg->max_inflight_per_client = cfg->max_inflight / MO_SRV_CLIENT_SHARE
						       ? cfg->max_inflight / MO_SRV_CLIENT_SHARE
						       : 1;
}

int mo_srv_start(mo_srv **out, const mo_srv_config *cfg)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int v6;
	mo_srv *srv = calloc(1, sizeof *srv);

	*out = NULL;
	if (!srv)
		return -1;
	srv->cfg = *cfg;
	mo_srv_client_shares(&srv->cfg);
	mo_api_options_default(&srv->api);
	srv->api.max_body = cfg->max_body;
	srv->api.max_answer = cfg->max_answer;
	srv->api.limits.max_bytes = cfg->max_body;
	len = mo_srv_sockaddr(&ss, cfg->host, cfg->port, &v6);
	if (!len) {
		fprintf(stderr, "memopt serve: --host must be an IPv4 or IPv6 address: '%s'\n",
			cfg->host);
		goto free_srv;
	}
	if (mo_api_cache_new(&srv->api.models) != 0)
		goto free_srv;
	if (mo_api_rcache_new(&srv->api.responses, cfg->cache_entries, cfg->cache_bytes) != 0)
		goto free_cache;
	if (mo_srv_open_root(srv) != 0)
		goto free_cache;
	if (mo_srv_conns_init(&srv->conns, cfg->header_timeout_s, cfg->deadline_s,
			      cfg->timeout_s) != 0)
		goto close_root;
	if (mo_srv_conns_start(&srv->conns) != 0)
		goto destroy_conns;
	if (mo_srv_clients_init(&srv->clients, srv->cfg.max_inflight_per_client) != 0)
		goto stop_conns;
	if (mo_srv_pool_start(srv, cfg->compute_threads) != 0)
		goto destroy_clients;
	signal(SIGPIPE, SIG_IGN);
	json_object_seed(0);
	/* started with --quiet too: MHD's error lines go through it */
	if (mo_srv_log_start(&srv->log, STDERR_FILENO, &srv->metrics.log_dropped) != 0)
		fprintf(stderr, "memopt serve: the access log is unbuffered (no writer thread)\n");
	mo_srv_check_fd_limit(cfg);
	if (mo_srv_open(srv, &ss, len, v6) != 0)
		goto stop_log;
	*out = srv;
	return 0;
stop_log:
	mo_srv_log_stop(&srv->log);
	mo_srv_pool_stop(&srv->pool);
destroy_clients:
	mo_srv_clients_destroy(&srv->clients);
stop_conns:
	mo_srv_conns_stop(&srv->conns);
destroy_conns:
	mo_srv_conns_destroy(&srv->conns);
close_root:
	if (srv->web_fd >= 0)
		close(srv->web_fd);
free_cache:
	mo_api_rcache_free(srv->api.responses);
	mo_api_cache_free(srv->api.models);
free_srv:
	free(srv);
	return -1;
}

unsigned mo_srv_port(const mo_srv *srv)
{
	return srv->port;
}

/* Waits until no request is in flight or until (monotonic us). */
static void mo_srv_wait_idle(mo_srv *srv, uint64_t until)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	while (atomic_load(&srv->metrics.in_flight) > 0 && mo_srv_now_us() < until)
		nanosleep(&tick, NULL);
}

size_t mo_srv_stop(mo_srv *srv)
{
	int_fast64_t left;

	if (!srv)
		return 0;
	atomic_store(&srv->quiescing, true);
	/* the port closes at once: new connections are refused, not queued */
	mo_srv_listen_close(&srv->listener);
	mo_srv_wait_idle(srv, mo_srv_now_us() + (uint64_t)srv->cfg.grace_s * 1000000u);
	if (atomic_load(&srv->metrics.in_flight) > 0) {
		atomic_store(&srv->cancel, true); /* polled by the core (mo_budget) */
		mo_srv_conns_cut_all(&srv->conns);
		mo_srv_wait_idle(srv, mo_srv_now_us() + MO_SRV_CUT_WAIT_US);
	}
	left = atomic_load(&srv->metrics.in_flight);
	if (left > 0) /* a computation that does not return: MHD_stop_daemon would wait forever */
		return (size_t)left;
	mo_srv_pool_stop(&srv->pool); /* idle: no request left, so no job */
	MHD_stop_daemon(srv->daemon);
	mo_srv_conns_destroy(&srv->conns);
	mo_srv_clients_destroy(&srv->clients);
	mo_srv_log_stop(&srv->log); /* after the last request's line */
	if (srv->web_fd >= 0)
		close(srv->web_fd);
	mo_api_rcache_free(srv->api.responses);
	mo_api_cache_free(srv->api.models);
	free(srv);
	return 0;
}

static void mo_srv_print_listening(const mo_srv_config *cfg, unsigned port)
{
	int v6 = strchr(cfg->host, ':') != NULL;

	fprintf(stderr, "listening on http://%s%s%s:%u\n", v6 ? "[" : "", cfg->host,
		v6 ? "]" : "", port);
	fflush(stderr);
}

/* A supervisor may start the server with stdin, stdout or stderr closed
 * (`<&- >&- 2>&-`): the next descriptors opened would take their numbers,
 * and the log lines written to "stderr" would land in whatever got fd 2
 * (libmicrohttpd's wake-up pipe did: the server then accepted nothing).
 * Each closed one is opened on /dev/null first. */
static void mo_srv_sound_stdio(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

		if (got >= 0 && got != fd) { /* cannot happen: open takes the lowest free */
			dup2(got, fd);
			close(got);
		}
	}
}

int mo_srv_run(const mo_srv_config *cfg)
{
	sigset_t set, old;
	mo_srv *srv;
	size_t abandoned;
	int sig = 0;

	mo_srv_sound_stdio();
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* before MHD_start_daemon: its threads inherit the mask */
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (mo_srv_start(&srv, cfg) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	mo_srv_print_listening(cfg, mo_srv_port(srv));
	while (sigwait(&set, &sig) != 0)
		;
	fprintf(stderr, "{\"level\":\"info\",\"message\":\"signal %d: finishing in-flight requests\"}\n",
		sig);
	fflush(stderr); /* the CLI buffers stderr fully */
	/* the signals stay blocked: a second SIGTERM while draining must not
	 * kill the process with requests in flight */
	abandoned = mo_srv_stop(srv);
	if (abandoned) {
		/* their threads are still computing: the process ends without
		 * waiting for them (exit() would run while they use the heap) */
		fprintf(stderr, "{\"level\":\"error\",\"message\":\"%zu request(s) still computing "
			"after the grace period: answered 503 and abandoned\"}\n", abandoned);
		fflush(stderr);
		_exit(1);
	}
	fprintf(stderr, "{\"level\":\"info\",\"message\":\"stopped\"}\n");
	fflush(stderr);
	return 0;
}
