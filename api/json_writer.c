/* A JSON text writer for big answers (the estimate with its timelines):
 * building a jansson tree of a few thousand objects, dumping it and freeing
 * it cost nine tenths of an estimate request. The text is byte for byte
 * what json_dumps(JSON_COMPACT) makes of the equivalent tree: the same
 * string escapes and the same real format ("%.17g", ".0" appended to
 * integral values, no '+' or leading zeros in exponents). What jansson
 * would refuse (invalid UTF-8, a real that is not finite) marks the writer
 * bad, and the caller answers the tree way. */
#include "api_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mo_jw_grow(mo_jw *w, size_t need)
{
	size_t cap = w->cap ? w->cap : 16384;
	char *p;

	if (w->bad)
		return -1;
	while (cap < w->len + need + 1)
		cap *= 2;
	if (cap == w->cap)
		return 0;
	p = realloc(w->buf, cap);
	if (!p) {
		w->bad = 1;
		return -1;
	}
	w->buf = p;
	w->cap = cap;
	return 0;
}

void mo_jw_raw(mo_jw *w, const char *s, size_t n)
{
	if (w->len + n + 1 > w->cap && mo_jw_grow(w, n) != 0)
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void mo_jw_ch(mo_jw *w, char c)
{
	mo_jw_raw(w, &c, 1);
}

/* A comma unless this is the first member or element. */
static void mo_jw_sep(mo_jw *w)
{
	if (w->len && w->buf[w->len - 1] != '{' && w->buf[w->len - 1] != '[')
		mo_jw_ch(w, ',');
}

/* Non-ASCII text: valid UTF-8 as jansson checks it (json_string refuses
 * anything else). */
static int mo_jw_utf8_ok(const char *s)
{
	json_t *t = json_string(s);

	json_decref(t);
	return t != NULL;
}

void mo_jw_str(mo_jw *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *run = s;
	int checked = 0;

	if (!s) { /* json_pack refuses a NULL string */
		w->bad = 1;
		return;
	}
	mo_jw_ch(w, '"');
	for (const char *p = s;; p++) {
		unsigned char c = (unsigned char)*p;
		char esc[6] = {'\\', 'u', '0', '0', 0, 0};
		size_t n = 2;

		if (c >= 0x20 && c != '"' && c != '\\') {
			if (c >= 0x80 && !checked++ && !mo_jw_utf8_ok(s))
				w->bad = 1;
			continue;
		}
		mo_jw_raw(w, run, (size_t)(p - run));
		if (!c)
			break;
		run = p + 1;
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		mo_jw_raw(w, esc, n);
	}
	mo_jw_ch(w, '"');
}

/* ,"key": in one piece. Keys are this program's own ASCII names (member
 * names, the estimator's bucket names): nothing in them to escape. */
static void mo_jw_key(mo_jw *w, const char *key)
{
	size_t n = strlen(key);
	char *p;

	if (w->len + n + 5 > w->cap && mo_jw_grow(w, n + 4) != 0)
		return;
	p = w->buf + w->len;
	if (w->len && p[-1] != '{' && p[-1] != '[')
		*p++ = ',';
	*p++ = '"';
	memcpy(p, key, n);
	p += n;
	*p++ = '"';
	*p++ = ':';
	*p = '\0';
	w->len = (size_t)(p - w->buf);
}

void mo_jw_open(mo_jw *w, const char *key, char bracket)
{
	if (key)
		mo_jw_key(w, key);
	else
		mo_jw_sep(w);
	mo_jw_ch(w, bracket);
}

void mo_jw_close(mo_jw *w, char bracket)
{
	mo_jw_ch(w, bracket);
}

/* "%lld" without snprintf (which was half of an estimate answer), two
 * digits a division. */
void mo_jw_int(mo_jw *w, const char *key, long long v)
{
	static const char pairs[] =
	    "00010203040506070809101112131415161718192021222324"
	    "25262728293031323334353637383940414243444546474849"
	    "50515253545556575859606162636465666768697071727374"
	    "75767778798081828384858687888990919293949596979899";
	char num[24], *p = num + sizeof num;
	unsigned long long u =
	    v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	while (u >= 100) {
		unsigned d = (unsigned)(u % 100) * 2;

		u /= 100;
		*--p = pairs[d + 1];
		*--p = pairs[d];
	}
	if (u >= 10) {
		*--p = pairs[u * 2 + 1];
		*--p = pairs[u * 2];
	} else {
		*--p = (char)('0' + u);
	}
	if (v < 0)
		*--p = '-';
	mo_jw_key(w, key);
	mo_jw_raw(w, p, (size_t)(num + sizeof num - p));
}

/* jansson's jsonp_dtostr with precision 17. */
void mo_jw_real(mo_jw *w, const char *key, double v)
{
	char num[40], *e;
	int n;

	if (!isfinite(v)) {
		w->bad = 1;
		return;
	}
	/* An integral value below 1e15 (most of an estimate's: byte and FLOP
	 * counts) prints as its digits under %.17g, then ".0"; -0.0 keeps
	 * its sign the slow way. */
	if (fabs(v) < 1e15 && v == (double)(long long)v && !signbit(v)) {
		mo_jw_int(w, key, (long long)v);
		mo_jw_raw(w, ".0", 2);
		return;
	}
	n = snprintf(num, sizeof num - 3, "%.17g", v);
	if (n < 0 || n >= (int)sizeof num - 3) {
		w->bad = 1;
		return;
	}
	if (!strchr(num, '.') && !strchr(num, 'e')) {
		memcpy(num + n, ".0", 3);
		n += 2;
	}
	e = strchr(num, 'e');
	if (e) { /* "1e+020" -> "1e20", "1e-05" -> "1e-5" */
		char *start = e + 1, *end = e + 2;

		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, (size_t)(num + n - end) + 1);
			n -= (int)(end - start);
		}
	}
	mo_jw_key(w, key);
	mo_jw_raw(w, num, (size_t)n);
}

void mo_jw_kstr(mo_jw *w, const char *key, const char *s)
{
	mo_jw_key(w, key);
	mo_jw_str(w, s);
}

void mo_jw_bool(mo_jw *w, const char *key, int v)
{
	mo_jw_key(w, key);
	mo_jw_raw(w, v ? "true" : "false", v ? 4 : 5);
}

/* The members of a jansson object (its dump without the braces). */
void mo_jw_members_of(mo_jw *w, const json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	size_t n = text ? strlen(text) : 0;

	if (n < 2) {
		w->bad = 1;
	} else if (n > 2) {
		mo_jw_sep(w);
		mo_jw_raw(w, text + 1, n - 2);
	}
	free(text);
}

/* ---- the diagnostics (mo_json_diags' members) -----------------------------
 */

static void mo_jw_diag(mo_jw *w, const mo_diag *d)
{
	mo_jw_open(w, NULL, '{');
	mo_jw_kstr(w, "code", d->code);
	mo_jw_kstr(w, "message", d->message);
	mo_jw_int(w, "line", d->line);
	mo_jw_int(w, "column", d->column);
	mo_jw_kstr(w, "path", d->path ? d->path : "");
	if (d->hint)
		mo_jw_kstr(w, "hint", d->hint);
	if (d->layers)
		mo_jw_kstr(w, "layers", d->layers);
	if (d->file && d->file[0])
		mo_jw_kstr(w, "file", d->file);
	mo_jw_kstr(w, "severity",
		   d->severity == MO_SEV_ERROR ? "error" : "warning");
	mo_jw_close(w, '}');
}

static void mo_jw_diag_list(mo_jw *w, const char *key, const mo_diags *d,
			    mo_severity sev)
{
	mo_jw_open(w, key, '[');
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);

		if ((g->severity == MO_SEV_ERROR) == (sev == MO_SEV_ERROR))
			mo_jw_diag(w, g);
	}
	mo_jw_close(w, ']');
}

void mo_jw_diags(mo_jw *w, const mo_diags *d)
{
	mo_jw_bool(w, "valid", mo_diags_errors(d) == 0);
	mo_jw_diag_list(w, "errors", d, MO_SEV_ERROR);
	mo_jw_diag_list(w, "warnings", d, MO_SEV_WARNING);
}
