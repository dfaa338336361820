/* JSON lines on stderr: one per request, and MHD's own errors. Each line
 * is one write(2), so lines from several threads do not interleave. */
#include "srv_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static void mo_srv_write_line(char *buf, size_t pos)
{
	ssize_t w;

	buf[pos++] = '\n';
	w = write(STDERR_FILENO, buf, pos);
	(void)w;
}

static size_t mo_srv_put(char *buf, size_t pos, size_t cap, const char *s)
{
	size_t n = strlen(s);

	if (pos + n >= cap)
		return pos;
	memcpy(buf + pos, s, n);
	return pos + n;
}

void mo_srv_log_access(const mo_srv_req *rq, uint64_t usec)
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
	mo_srv_write_line(buf, pos);
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
