/* JSON lines on stderr: one per request, and MHD's own errors.
 *
 * Access lines are buffered: a write(2) per request cost about a third of
 * a /healthz answer (7-10 us of server CPU against 20). Request threads
 * append whole lines to a 64 KiB buffer under a mutex; a writer thread
 * hands the buffer to write(2) every 20 ms, or a request thread does when
 * it is full. Two buffers take turns, so one is written while the other
 * fills; only one is ever being written, so chunks (and lines) keep their
 * order and never interleave. Stopping the server writes what is left.
 * MHD's error lines, rare, are written at once. */
#include "srv_internal.h"

#include <errno.h>
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

static void mo_srv_write_line(char *buf, size_t pos)
{
	buf[pos++] = '\n';
	mo_srv_write_all(STDERR_FILENO, buf, pos);
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
	mo_srv_write_all(l->fd, b, n);
	pthread_mutex_lock(&l->lock);
	l->spare = b;
	pthread_cond_broadcast(&l->room);
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
		pthread_cond_timedwait(&l->wake, &l->lock, &until);
		mo_srv_log_drain(l);
	}
	while (l->len > 0 && !l->spare) /* a request thread is writing */
		pthread_cond_wait(&l->room, &l->lock);
	mo_srv_log_drain(l);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int mo_srv_log_start(mo_srv_log *l, int fd)
{
	memset(l, 0, sizeof *l);
	l->fd = fd;
	l->buf = malloc(MO_SRV_LOG_BUF);
	l->spare = malloc(MO_SRV_LOG_BUF);
	if (!l->buf || !l->spare)
		goto fail;
	if (pthread_mutex_init(&l->lock, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&l->wake, NULL) != 0)
		goto fail_lock;
	if (pthread_cond_init(&l->room, NULL) != 0)
		goto fail_wake;
	if (pthread_create(&l->thread, NULL, mo_srv_log_run, l) != 0)
		goto fail_room;
	l->started = true;
	return 0;
fail_room:
	pthread_cond_destroy(&l->room);
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
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->room);
	pthread_cond_destroy(&l->wake);
	pthread_mutex_destroy(&l->lock);
	free(l->buf);
	free(l->spare);
	memset(l, 0, sizeof *l);
}

/* One whole line into the buffer; a full buffer is written first (by
 * this thread, or by the one already writing). */
static void mo_srv_log_append(mo_srv_log *l, const char *line, size_t n)
{
	pthread_mutex_lock(&l->lock);
	while (l->len + n > MO_SRV_LOG_BUF) {
		if (l->spare)
			mo_srv_log_drain(l);
		else
			pthread_cond_wait(&l->room, &l->lock);
	}
	memcpy(l->buf + l->len, line, n);
	l->len += n;
	pthread_mutex_unlock(&l->lock);
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
	char msg[512], buf[MO_SRV_LOG_LINE], ts[40];
	size_t pos = 0, n;

	(void)cls;
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
	mo_srv_write_line(buf, pos);
}
