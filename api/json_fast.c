/* A fast reader for the common request body: one flat JSON object whose
 * members are strings, integers, true, false or null. jansson's reader
 * costs about 110 instructions a byte (its lexer pulls every character
 * through a callback), a quarter of a validate request; this one builds the
 * same json_t in one pass. Anything else (nesting, reals, \u0000, lone
 * surrogates, duplicate keys, invalid UTF-8, any syntax error) answers "not
 * handled" and the caller falls back to json_loadb, so every error and its
 * line and column stay jansson's. */
#include "api_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* At most 18 digits: always fits a json_int_t, never jansson's overflow. */
#define MO_FJ_MAX_DIGITS 18

typedef struct mo_fj {
	const char *p, *end;
	char *buf;     /* decoded string; never longer than the body */
	unsigned high; /* the last string had bytes >= 0x80 (UTF-8 to check) */
} mo_fj;

static void mo_fj_ws(mo_fj *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
				 *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int mo_fj_hex4(const char *p, const char *end, unsigned *v)
{
	*v = 0;
	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		*v = *v * 16 + d;
	}
	return 0;
}

static size_t mo_fj_utf8(char *w, unsigned cp)
{
	if (cp < 0x80) {
		w[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		w[0] = (char)(0xC0 | (cp >> 6));
		w[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		w[0] = (char)(0xE0 | (cp >> 12));
		w[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		w[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	w[0] = (char)(0xF0 | (cp >> 18));
	w[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	w[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	w[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* \uXXXX at s->p (after the backslash and 'u'), a surrogate pair
 * included. The code point, or 0 when it is one this reader leaves to
 * jansson (\u0000, a lone or reversed surrogate). */
static unsigned mo_fj_unicode(mo_fj *s)
{
	unsigned hi, lo;

	if (mo_fj_hex4(s->p, s->end, &hi) != 0)
		return 0;
	s->p += 4;
	if (hi >= 0xDC00 && hi <= 0xDFFF)
		return 0;
	if (hi < 0xD800 || hi > 0xDBFF)
		return hi;
	if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' ||
	    mo_fj_hex4(s->p + 2, s->end, &lo) != 0 || lo < 0xDC00 ||
	    lo > 0xDFFF)
		return 0;
	s->p += 6;
	return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
}

/* One escape at s->p (after the backslash), written at w. Bytes written,
 * or 0 when not handled. */
static size_t mo_fj_escape(mo_fj *s, char *w)
{
	char c;

	if (s->p >= s->end)
		return 0;
	c = *s->p++;
	if (c == 'u') {
		unsigned cp = mo_fj_unicode(s);

		return cp ? mo_fj_utf8(w, cp) : 0;
	}
	switch (c) {
	case '"': *w = '"'; return 1;
	case '\\': *w = '\\'; return 1;
	case '/': *w = '/'; return 1;
	case 'b': *w = '\b'; return 1;
	case 'f': *w = '\f'; return 1;
	case 'n': *w = '\n'; return 1;
	case 'r': *w = '\r'; return 1;
	case 't': *w = '\t'; return 1;
	default: return 0;
	}
}

/* The string at s->p (its opening quote) decoded at `to` (in s->buf); *n
 * its length. 0, or -1 when not handled. UTF-8 is checked by json_stringn
 * and json_object_set_new (both refuse invalid text). */
/* Eight bytes at a time: none is a control byte, a quote or a backslash
 * (exact as a yes/no: any such byte says no). */
#define MO_FJ_ONES 0x0101010101010101ull
#define MO_FJ_HIGHS 0x8080808080808080ull
#define MO_FJ_ZERO(x) (((x) - MO_FJ_ONES) & ~(x) & MO_FJ_HIGHS)
/* The high bit of each byte of x that is a control byte, a quote or a
 * backslash; the lowest one is exact (higher ones may be false: borrows
 * run upward), so it locates the first such byte. */
static uint64_t mo_fj_stops8(uint64_t x)
{
	uint64_t ctl = (x - MO_FJ_ONES * 0x20) & ~x & MO_FJ_HIGHS;

	return ctl | MO_FJ_ZERO(x ^ (MO_FJ_ONES * '"')) | MO_FJ_ZERO(x ^ (MO_FJ_ONES * '\\'));
}

/* A run of bytes that need no decoding: copied as is, its high bits
 * noted. Returns where it stops (a quote, a backslash, a control byte or
 * the end). Eight bytes are stored at a time: the decoded text never runs
 * ahead of the source (each string decodes to at most its length, and the
 * value is decoded after its key), so *w + 8 stays within the body's
 * length of s->buf while p + 8 stays within the body. */
static const char *mo_fj_plain(mo_fj *s, const char *p, char **w)
{
	char *o = *w;
	uint64_t high = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (s->end - p >= 8) {
		uint64_t x, m;

		memcpy(&x, p, 8);
		memcpy(o, p, 8);
		m = mo_fj_stops8(x);
		if (m) {
			unsigned k = (unsigned)__builtin_ctzll(m) / 8;

			high |= x & ((1ull << (8 * k)) - 1);
			p += k;
			o += k;
			goto done;
		}
		high |= x;
		p += 8;
		o += 8;
	}
#endif
	while (p < s->end) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 || c == '"' || c == '\\')
			break;
		high |= c;
		*o++ = (char)c;
		p++;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
done:
#endif
	*w = o;
	if (high & MO_FJ_HIGHS)
		s->high = 0x80;
	return p;
}

static int mo_fj_string(mo_fj *s, char *to, size_t *n)
{
	char *w = to;

	s->high = 0;
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	for (;;) {
		size_t k;

		s->p = mo_fj_plain(s, s->p, &w);
		if (s->p >= s->end || (unsigned char)*s->p < 0x20)
			return -1;
		if (*s->p == '"') {
			s->p++;
			*n = (size_t)(w - to);
			*w = '\0';
			return 0;
		}
		s->p++; /* the backslash */
		k = mo_fj_escape(s, w);
		if (!k)
			return -1;
		w += k;
	}
}

/* An integer: -?(0|[1-9][0-9]*), no fraction or exponent, not "-0". */
static json_t *mo_fj_integer(mo_fj *s)
{
	int neg = 0, digits = 0;
	json_int_t v = 0;

	if (*s->p == '-') {
		neg = 1;
		s->p++;
	}
	if (s->p < s->end && *s->p == '0') {
		s->p++;
		if (neg || (s->p < s->end && *s->p >= '0' && *s->p <= '9'))
			return NULL;
		digits = 1;
	}
	for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++) {
		if (++digits > MO_FJ_MAX_DIGITS)
			return NULL;
		v = v * 10 + (*s->p - '0');
	}
	if (!digits ||
	    (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E')))
		return NULL;
	return json_integer(neg ? -v : v);
}

static json_t *mo_fj_word(mo_fj *s, const char *word, json_t *value)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return NULL;
	s->p += n;
	return value;
}

/* A member's value: string (decoded at `to`), integer, true, false or
 * null; NULL when not handled (or out of memory: jansson then fails the
 * same way). */
static json_t *mo_fj_value(mo_fj *s, char *to)
{
	size_t n;

	if (s->p >= s->end)
		return NULL;
	switch (*s->p) {
	case '"':
		if (mo_fj_string(s, to, &n) != 0)
			return NULL;
		/* ASCII, or UTF-8 this reader encoded itself: nothing to check
		 */
		return s->high ? json_stringn(to, n)
			       : json_stringn_nocheck(to, n);
	case 't':
		return mo_fj_word(s, "true", json_true());
	case 'f':
		return mo_fj_word(s, "false", json_false());
	case 'n':
		return mo_fj_word(s, "null", json_null());
	default:
		if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
			return mo_fj_integer(s);
		return NULL;
	}
}

/* "key": value, added to o. 0, or -1 when not handled. The key is
 * decoded at the start of s->buf, the value right after it: each decodes
 * to at most its source length, so both fit. */
static int mo_fj_member(mo_fj *s, json_t *o)
{
	size_t n;
	json_t *v;

	if (mo_fj_string(s, s->buf, &n) != 0)
		return -1;
	if (json_object_get(o, s->buf)) /* a duplicate: jansson's error */
		return -1;
	mo_fj_ws(s);
	if (s->p >= s->end || *s->p++ != ':')
		return -1;
	mo_fj_ws(s);
	v = mo_fj_value(s, s->buf + n + 1);
	return v ? json_object_set_new(o, s->buf, v) : -1;
}

static int mo_fj_members(mo_fj *s, json_t *o)
{
	mo_fj_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return 0;
	}
	for (;;) {
		mo_fj_ws(s);
		if (mo_fj_member(s, o) != 0)
			return -1;
		mo_fj_ws(s);
		if (s->p >= s->end)
			return -1;
		if (*s->p == '}') {
			s->p++;
			return 0;
		}
		if (*s->p++ != ',')
			return -1;
	}
}

int mo_api_json_fast(json_t **out, const char *body, size_t len)
{
	mo_fj s = {body, body + len, NULL, 0};
	json_t *o;
	int rc = -1;

	*out = NULL;
	mo_fj_ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return -1;
	s.p++;
	s.buf = malloc(len + 1);
	o = json_object();
	if (s.buf && o && mo_fj_members(&s, o) == 0) {
		mo_fj_ws(&s);
		rc = s.p == s.end ? 0 : -1;
	}
	free(s.buf);
	if (rc == 0)
		*out = o;
	else
		json_decref(o);
	return rc;
}
