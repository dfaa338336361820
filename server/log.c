/* JSON lines on stderr: one per request, and MHD's own errors.
 *
 * Lines are buffered: a write(2) per request cost about a third of a
 * /healthz answer (7-10 us of server CPU against 20). Request threads
 * append whole lines to a 64 KiB buffer under a mutex; only the writer
 * thread calls write(2), every 20 ms or at once when the buffer fills.
 * Two buffers take turns, so one is written while the other fills; lines
 * keep their order and never interleave. A request thread never waits for
 * the sink: when both buffers are full (stderr is a pipe nobody reads, a
 * stuck terminal) the line is dropped and counted
 * (memopt_log_lines_dropped_total). Before, a stderr pipe left unread
 * froze every request thread, /healthz included, after about 62 KB of
 * log. The writer waits for the sink with poll(2) so that stopping the
 * server gives up on a stuck sink after MO_SRV_LOG_STOP_MS. */
#include "srv_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MO_SRV_LOG_BUF (64 * 1024)
#define MO_SRV_LOG_FLUSH_NS (20 * 1000 * 1000)

#define MO_SRV_LOG_LINE 2048
#define MO_SRV_LOG_FIELD 600

/* Appends s as a JSON string (quotes included), at most `max` source
 * bytes; bytes >= 0x80 and controls become \u00XX, so the line is always
 * valid JSON whatever the client sent. Returns the new position. */
static size_t mo_srv_json_str(char *buf, size_t pos, size_t cap,
			      const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";

	if (pos + 2 >= cap)
		return pos;
	buf[pos++] = '"';
	for (size_t i = 0; s && s[i] && i < max && pos + 8 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\') {
			buf[pos++] = '\\';
			buf[pos++] = (char)ch;
		} else if (ch < 0x20 || ch >= 0x7f) {
			memcpy(buf + pos, "\\u00", 4);
			buf[pos + 4] = hex[ch >> 4];
			buf[pos + 5] = hex[ch & 15];
			pos += 6;
		} else {
			buf[pos++] = (char)ch;
		}
	}
	buf[pos++] = '"';
	return pos;
}

static size_t mo_srv_timestamp(char *buf, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(buf + n, cap - n, ".%03ldZ", ts.tv_nsec / 1000000);
	return n;
}

static void mo_srv_write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* stderr gone: the log is lost, the server goes on */
		buf += w;
		n -= (size_t)w;
	}
}

/* How long a stopping server still waits for a stuck sink. */
#define MO_SRV_LOG_STOP_MS 1000
/* Writes of at most a pipe's atomic size after poll(2) said there is
 * room, so a write never waits long for a reader. */
#define MO_SRV_LOG_PIECE 4096

/* The writer's write: waits for room in pieces, checking l->stop; once
 * stopping, gives up on a sink that takes nothing for
 * MO_SRV_LOG_STOP_MS. Called without the lock. */
static void mo_srv_log_write(mo_srv_log *l, const char *buf, size_t n)
{
	int idle_ms = 0;

	while (n > 0) {
		struct pollfd pf = {l->fd, POLLOUT, 0};
		int r = poll(&pf, 1, 100);
		ssize_t w;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (pf.revents & (POLLERR | POLLNVAL)))
			return; /* the sink is gone */
		if (r == 0) {
			if (atomic_load(&l->stopping) && (idle_ms += 100) >= MO_SRV_LOG_STOP_MS)
				return;
			continue;
		}
		w = write(l->fd, buf, n < MO_SRV_LOG_PIECE ? n : MO_SRV_LOG_PIECE);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			return;
		idle_ms = 0;
		buf += w;
		n -= (size_t)w;
	}
}

/* ---- the access log buffer ------------------------------------------------ */

/* Under the lock, with l->spare set: writes the filled buffer outside the
 * lock while the spare takes the new lines. */
static void mo_srv_log_drain(mo_srv_log *l)
{
	char *b = l->buf;
	size_t n = l->len;

	if (n == 0 || !l->spare)
		return;
	l->buf = l->spare;
	l->spare = NULL;
	l->len = 0;
	pthread_mutex_unlock(&l->lock);
	mo_srv_log_write(l, b, n);
	pthread_mutex_lock(&l->lock);
	l->spare = b;
}

static void *mo_srv_log_run(void *arg)
{
	mo_srv_log *l = arg;

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += MO_SRV_LOG_FLUSH_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (l->len < MO_SRV_LOG_BUF / 2)
			pthread_cond_timedwait(&l->wake, &l->lock, &until);
		mo_srv_log_drain(l);
	}
	mo_srv_log_drain(l);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int mo_srv_log_start(mo_srv_log *l, int fd, atomic_uint_fast64_t *dropped)
{
	memset(l, 0, sizeof *l);
	l->fd = fd;
	l->dropped = dropped;
	l->buf = malloc(MO_SRV_LOG_BUF);
	l->spare = malloc(MO_SRV_LOG_BUF);
	if (!l->buf || !l->spare)
		goto fail;
	if (pthread_mutex_init(&l->lock, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&l->wake, NULL) != 0)
		goto fail_lock;
	if (pthread_create(&l->thread, NULL, mo_srv_log_run, l) != 0)
		goto fail_wake;
	l->started = true;
	return 0;
fail_wake:
	pthread_cond_destroy(&l->wake);
fail_lock:
	pthread_mutex_destroy(&l->lock);
fail:
	free(l->buf);
	free(l->spare);
	memset(l, 0, sizeof *l);
	return -1;
}

void mo_srv_log_stop(mo_srv_log *l)
{
	if (!l->started)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	atomic_store(&l->stopping, true);
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	free(l->buf);
	free(l->spare);
	memset(l, 0, sizeof *l);
}

/* One whole line into the buffer, or dropped (and counted) when the
 * buffer is full and the other one is still being written. Wakes the
 * writer once the buffer is half full. */
static void mo_srv_log_append(mo_srv_log *l, const char *line, size_t n)
{
	bool full;

	pthread_mutex_lock(&l->lock);
	full = l->len + n > MO_SRV_LOG_BUF;
	if (!full) {
		memcpy(l->buf + l->len, line, n);
		l->len += n;
	}
	if (full || l->len >= MO_SRV_LOG_BUF / 2)
		pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	if (full && l->dropped)
		atomic_fetch_add_explicit(l->dropped, 1, memory_order_relaxed);
}

static size_t mo_srv_put(char *buf, size_t pos, size_t cap, const char *s)
{
	size_t n = strlen(s);

	if (pos + n >= cap)
		return pos;
	memcpy(buf + pos, s, n);
	return pos + n;
}

void mo_srv_log_access(mo_srv_log *l, const mo_srv_req *rq, uint64_t usec)
{
	char buf[MO_SRV_LOG_LINE], ts[40], tail[160];
	size_t pos = 0;

	mo_srv_timestamp(ts, sizeof ts);
	pos = mo_srv_put(buf, pos, sizeof buf, "{\"ts\":\"");
	pos = mo_srv_put(buf, pos, sizeof buf, ts);
	pos = mo_srv_put(buf, pos, sizeof buf, "\",\"remote\":");
	pos = mo_srv_json_str(buf, pos, sizeof buf, rq->remote, sizeof rq->remote);
	pos = mo_srv_put(buf, pos, sizeof buf, ",\"method\":");
	pos = mo_srv_json_str(buf, pos, sizeof buf, rq->method, 32);
	pos = mo_srv_put(buf, pos, sizeof buf, ",\"path\":");
	pos = mo_srv_json_str(buf, pos, sizeof buf - 256, rq->url, MO_SRV_LOG_FIELD);
	snprintf(tail, sizeof tail,
		 ",\"route\":\"%s\",\"status\":%d,\"bytes\":%llu,\"request_bytes\":%llu,\"ms\":%.3f}",
		 mo_api_route_name(rq->route), rq->status,
		 (unsigned long long)rq->bytes, (unsigned long long)rq->len,
		 (double)usec / 1000.0);
	pos = mo_srv_put(buf, pos, sizeof buf - 1, tail);
	buf[pos++] = '\n';
	if (l->started)
		mo_srv_log_append(l, buf, pos);
	else
		mo_srv_write_all(STDERR_FILENO, buf, pos);
}

void mo_srv_log_mhd(void *cls, const char *fmt, va_list ap)
{
	mo_srv_log *l = cls;
	char msg[512], buf[MO_SRV_LOG_LINE], ts[40];
	size_t pos = 0, n;

	vsnprintf(msg, sizeof msg, fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	mo_srv_timestamp(ts, sizeof ts);
	pos = mo_srv_put(buf, pos, sizeof buf, "{\"ts\":\"");
	pos = mo_srv_put(buf, pos, sizeof buf, ts);
	pos = mo_srv_put(buf, pos, sizeof buf, "\",\"level\":\"error\",\"source\":\"libmicrohttpd\",\"message\":");
	pos = mo_srv_json_str(buf, pos, sizeof buf - 8, msg, sizeof msg);
	pos = mo_srv_put(buf, pos, sizeof buf - 1, "}");
	buf[pos++] = '\n';
	if (l && l->started)
		mo_srv_log_append(l, buf, pos);
	else
		mo_srv_write_all(STDERR_FILENO, buf, pos);
}
