/* The server's own table of open connections, for what libmicrohttpd does
 * not do itself:
 *
 * - The connection count the listener gates on (listen.c). MHD's own limit
 *   is split evenly between the pool's workers, and Debian 12's MHD 0.9.75
 *   leaves a worker's cleanup mutex locked when an externally added
 *   connection finds that worker at its share (new_connection_process_,
 *   "Firm check under lock"; fixed in 1.0.0): every worker then blocks for
 *   good. The server therefore gives MHD a limit no worker can reach (each
 *   worker's share above the whole --max-connections) and enforces
 *   --max-connections here, counting a connection from the moment it is
 *   handed to MHD until MHD reports it closed.
 * - Deadlines: MHD's timeout is an idle timeout, reset by every byte, so a
 *   client trickling a byte every few seconds holds a connection (and an
 *   in-flight slot) forever. Each connection has an absolute deadline for
 *   its request headers, then for its body, then for sending the answer;
 *   a sweeper thread shuts down the socket of a connection past its
 *   deadline (answering 408 first when nothing has been sent yet).
 * - Clients gone before their headers were complete. MHD 0.9.75 polls
 *   edge-triggered: a connection whose client had sent part of a request
 *   and closed before it was accepted reads the part, never sees the end
 *   of the stream and waits for the idle timeout; a flood of those (the
 *   listener accepts them as fast as it can, see listen.c) would hold
 *   every slot. The sweeper cuts a connection still waiting for its
 *   headers whose peer has hung up on two sweeps in a row.
 * - Shutdown after the grace period: every connection still open is
 *   answered 503 (when nothing was sent) and shut down.
 *
 * Records are linked under a mutex when MHD reports a connection started
 * and unlinked when it reports it closed, which MHD does before closing
 * the socket: the sweeper, holding the mutex, only ever shuts down a
 * socket that still belongs to the connection it has a record for. */
#include "srv_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often the sweeper looks for connections past their deadline. */
#define MO_SRV_SWEEP_MS 200

/* A whole HTTP answer, written straight to a socket nothing else writes
 * to at that moment: head and problem+json body. Caller frees. */
static char *mo_srv_raw_answer(int status, const char *code, const char *detail,
			       size_t *len)
{
	mo_api_response res = {0};
	char *text = NULL;
	int n;

	if (mo_api_problem(&res, status, code, detail) != 0)
		return NULL;
	n = asprintf(&text,
		     "HTTP/1.1 %d %s\r\nContent-Type: application/problem+json\r\n"
		     "Connection: close\r\n%sContent-Length: %zu\r\n\r\n%s",
		     status, mo_api_status_text(status),
		     status == 503 ? "Retry-After: 1\r\n" : "", res.len, res.body);
	mo_api_response_free(&res);
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return text;
}

int mo_srv_conns_init(mo_srv_conns *t, unsigned header_timeout_s,
		      unsigned body_deadline_s, unsigned idle_timeout_s)
{
	memset(t, 0, sizeof *t);
	t->answer_408 = mo_srv_raw_answer(408, "timeout",
					  "the request did not arrive in time", &t->answer_408_len);
	t->answer_503 = mo_srv_raw_answer(503, "shutting-down",
					  "the server is shutting down", &t->answer_503_len);
	t->answer_413 = mo_srv_raw_answer(413, "body-too-large",
					  "the request body is over the size limit",
					  &t->answer_413_len);
	if (!t->answer_408 || !t->answer_503 || !t->answer_413)
		goto free_answers;
	t->header_us = (uint64_t)header_timeout_s * 1000000u;
	t->body_us = (uint64_t)body_deadline_s * 1000000u;
	t->idle_us = (uint64_t)idle_timeout_s * 1000000u;
	if (pthread_mutex_init(&t->lock, NULL) != 0)
		goto free_answers;
	if (pthread_cond_init(&t->wake, NULL) != 0)
		goto destroy_lock;
	return 0;
destroy_lock:
	pthread_mutex_destroy(&t->lock);
free_answers:
	free(t->answer_408);
	free(t->answer_503);
	free(t->answer_413);
	return -1;
}

/* Sends a canned answer if the socket takes it at once, then shuts the
 * connection down: MHD sees the end of the stream and closes it. */
static void mo_srv_conn_cut(const mo_srv_conn *rec, const char *answer, size_t len)
{
	if (answer)
		(void)!send(rec->fd, answer, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(rec->fd, SHUT_RDWR);
}

/* Nothing of an answer has been sent on rec yet. */
static bool mo_srv_conn_unanswered(const mo_srv_conn *rec)
{
	int phase = atomic_load(&rec->phase);

	return phase == MO_SRV_PHASE_HEADERS || phase == MO_SRV_PHASE_BODY ||
	       phase == MO_SRV_PHASE_WORKING;
}

/* Cuts rec if it is past its deadline. */
static void mo_srv_conn_check_deadline(mo_srv_conns *t, mo_srv_conn *rec, uint64_t now)
{
	uint64_t deadline = atomic_load(&rec->deadline_us);

	if (!deadline || now < deadline || atomic_load(&rec->cut))
		return;
	atomic_store(&rec->cut, true);
	atomic_fetch_add(&t->timed_out, 1);
	if (mo_srv_conn_unanswered(rec))
		mo_srv_conn_cut(rec, t->answer_408, t->answer_408_len);
	else
		mo_srv_conn_cut(rec, NULL, 0);
}

/* Connections whose peer hung up. Waiting for headers: marked on the first
 * sweep that sees it, cut on the second (MHD had a whole sweep to read
 * what was sent). Being computed: the computation is told to stop (its
 * work budget polls `gone`), as nginx treats a client that closes before
 * its answer. Called with the lock held; fds stay valid meanwhile. */
static bool mo_srv_conn_watched(const mo_srv_conn *rec)
{
	int phase = atomic_load(&rec->phase);

	return (phase == MO_SRV_PHASE_HEADERS || phase == MO_SRV_PHASE_WORKING) &&
	       !atomic_load(&rec->cut) && !atomic_load(&rec->gone);
}

static void mo_srv_conn_hung_up(mo_srv_conn *rec)
{
	if (atomic_load(&rec->phase) == MO_SRV_PHASE_WORKING) {
		atomic_store(&rec->gone, true);
	} else if (rec->hung_up) {
		atomic_store(&rec->cut, true);
		mo_srv_conn_cut(rec, NULL, 0);
	} else {
		rec->hung_up = true;
	}
}

static void mo_srv_conns_sweep_hangups(mo_srv_conns *t)
{
	size_t n = 0;
	mo_srv_conn *rec;

	for (rec = t->head; rec && n < t->poll_cap; rec = rec->next)
		if (mo_srv_conn_watched(rec))
			t->polls[n++] = (struct pollfd){rec->fd, POLLRDHUP, 0};
	if (n == 0 || poll(t->polls, n, 0) <= 0)
		return;
	n = 0;
	for (rec = t->head; rec && n < t->poll_cap; rec = rec->next) {
		if (!mo_srv_conn_watched(rec))
			continue;
		if (rec->fd != t->polls[n].fd)
			break; /* a phase changed meanwhile: the rest waits a sweep */
		if (t->polls[n++].revents & (POLLRDHUP | POLLHUP | POLLERR))
			mo_srv_conn_hung_up(rec);
		else
			rec->hung_up = false;
	}
}

/* Grows the poll array to the number of records (under the lock). */
static void mo_srv_conns_size_polls(mo_srv_conns *t)
{
	size_t n = atomic_load(&t->open);

	if (n <= t->poll_cap)
		return;
	n += n / 2 + 16;
	struct pollfd *p = realloc(t->polls, n * sizeof *p);
	if (!p)
		return; /* the first poll_cap connections are checked */
	t->polls = p;
	t->poll_cap = n;
}

static void mo_srv_conns_sweep(mo_srv_conns *t, uint64_t now)
{
	pthread_mutex_lock(&t->lock);
	for (mo_srv_conn *rec = t->head; rec; rec = rec->next)
		mo_srv_conn_check_deadline(t, rec, now);
	mo_srv_conns_size_polls(t);
	mo_srv_conns_sweep_hangups(t);
	pthread_mutex_unlock(&t->lock);
}

static void *mo_srv_conns_loop(void *arg)
{
	mo_srv_conns *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec at;

		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_nsec += MO_SRV_SWEEP_MS * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&t->wake, &t->lock, &at);
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->lock);
		mo_srv_conns_sweep(t, mo_srv_now_us());
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int mo_srv_conns_start(mo_srv_conns *t)
{
	if (pthread_create(&t->thread, NULL, mo_srv_conns_loop, t) != 0)
		return -1;
	t->started = true;
	return 0;
}

void mo_srv_conns_stop(mo_srv_conns *t)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	t->started = false;
}

size_t mo_srv_conns_cut_all(mo_srv_conns *t)
{
	size_t n = 0;

	pthread_mutex_lock(&t->lock);
	for (mo_srv_conn *rec = t->head; rec; rec = rec->next) {
		if (atomic_exchange(&rec->cut, true))
			continue;
		n++;
		if (mo_srv_conn_unanswered(rec) &&
		    atomic_load(&rec->phase) != MO_SRV_PHASE_HEADERS)
			mo_srv_conn_cut(rec, t->answer_503, t->answer_503_len);
		else
			mo_srv_conn_cut(rec, NULL, 0);
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

void mo_srv_conns_destroy(mo_srv_conns *t)
{
	mo_srv_conns_stop(t);
	while (t->head) { /* only if MHD was never stopped */
		mo_srv_conn *next = t->head->next;

		free(t->head);
		t->head = next;
	}
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	free(t->polls);
	free(t->answer_408);
	free(t->answer_503);
	free(t->answer_413);
}

void mo_srv_conn_refuse_body(const mo_srv_conns *t, mo_srv_conn *rec)
{
	(void)!send(rec->fd, t->answer_413, t->answer_413_len, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(rec->fd, SHUT_WR);
	mo_srv_conn_enter(t, rec, MO_SRV_PHASE_ANSWERED, mo_srv_now_us());
}

static void mo_srv_conn_started(mo_srv_conns *t, struct MHD_Connection *c,
				void **socket_context)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	mo_srv_conn *rec = ci ? calloc(1, sizeof *rec) : NULL;

	*socket_context = rec;
	if (!rec)
		return; /* no deadline for this one; MHD's idle timeout still holds */
	rec->fd = ci->connect_fd;
	atomic_store(&rec->phase, MO_SRV_PHASE_HEADERS);
	atomic_store(&rec->deadline_us, mo_srv_now_us() + t->header_us);
	pthread_mutex_lock(&t->lock);
	rec->next = t->head;
	if (t->head)
		t->head->prev = rec;
	t->head = rec;
	pthread_mutex_unlock(&t->lock);
}

static void mo_srv_conn_closed(mo_srv_conns *t, void **socket_context)
{
	mo_srv_conn *rec = *socket_context;

	*socket_context = NULL;
	if (rec) {
		pthread_mutex_lock(&t->lock);
		if (rec->prev)
			rec->prev->next = rec->next;
		else
			t->head = rec->next;
		if (rec->next)
			rec->next->prev = rec->prev;
		pthread_mutex_unlock(&t->lock);
		free(rec);
	}
	atomic_fetch_sub(&t->open, 1);
}

void mo_srv_notify_connection(void *cls, struct MHD_Connection *c,
			      void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	mo_srv *srv = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		mo_srv_conn_started(&srv->conns, c, socket_context);
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
		mo_srv_conn_closed(&srv->conns, socket_context);
}

mo_srv_conn *mo_srv_conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void mo_srv_conn_enter(const mo_srv_conns *t, mo_srv_conn *rec, int phase,
		       uint64_t from_us)
{
	uint64_t deadline = 0;

	if (!rec)
		return;
	if (phase == MO_SRV_PHASE_HEADERS)
		deadline = from_us + t->idle_us + t->header_us;
	else if (phase == MO_SRV_PHASE_BODY || phase == MO_SRV_PHASE_ANSWERED)
		deadline = from_us + t->body_us;
	atomic_store(&rec->phase, phase);
	atomic_store(&rec->deadline_us, deadline);
}
