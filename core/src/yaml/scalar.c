/* Scalar typing with PyYAML's YAML 1.1 resolver (lib/yaml/resolver.py),
 * because MindSpore Transformers loads configs with PyYAML: `yes`/`on` are
 * booleans, `010` is octal 8, `0x1F` is 31, `1:30` is 90, `1e5` is a string
 * but `1.e-8` a float. Only plain scalars are resolved; quoted scalars are
 * strings; an explicit standard tag wins. */
#include "yaml/yaml.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MO_TAG_PREFIX "tag:yaml.org,2002:"

static bool str_in(const char *s, size_t len, const char *const *set)
{
	for (; *set; set++)
		if (len && (*set)[0] == s[0] && strlen(*set) == len && memcmp(*set, s, len) == 0)
			return true;
	return false;
}

/* The first letters of the null and bool words below. */
static bool word_start(char c)
{
	switch (c) {
	case '~': case 'n': case 'N': case 'y': case 'Y': case 't': case 'T': case 'o': case 'O':
	case 'f': case 'F':
		return true;
	default:
		return false;
	}
}

static const char *const mo_null_words[] = {"~", "null", "Null", "NULL", NULL};
static const char *const mo_true_words[] = {"yes", "Yes", "YES", "true", "True",
					    "TRUE", "on", "On", "ON", NULL};
static const char *const mo_false_words[] = {"no", "No", "NO", "false", "False",
					     "FALSE", "off", "Off", "OFF", NULL};

/* The character classes of the resolver's regexes. */
typedef enum mo_cclass {
	MO_CC_DEC,  /* [0-9] */
	MO_CC_DEC_, /* [0-9_] */
	MO_CC_BIN_, /* [01_] */
	MO_CC_OCT_, /* [0-7_] */
	MO_CC_HEX_  /* [0-9a-fA-F_] */
} mo_cclass;

static bool in_class(char c, mo_cclass k)
{
	if (c == '_')
		return k != MO_CC_DEC;
	switch (k) {
	case MO_CC_BIN_:
		return c == '0' || c == '1';
	case MO_CC_OCT_:
		return c >= '0' && c <= '7';
	case MO_CC_HEX_:
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	default:
		return c >= '0' && c <= '9';
	}
}

static bool all_of(const char *s, size_t len, mo_cclass k)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!in_class(s[i], k))
			return false;
	return true;
}

/* [-+]? prefix; returns the offset past it. */
static size_t scalar_sign(const char *s, size_t len)
{
	return (len && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
}

/* [1-9][0-9_]*(:[0-5]?[0-9])+ */
static bool is_sexagesimal_int(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);
	if (!colon || colon == s || s[0] < '1' || s[0] > '9')
		return false;
	if (!all_of(s, (size_t)(colon - s), MO_CC_DEC_))
		return false;
	const char *p = colon, *end = s + len;
	while (p < end) {
		if (*p != ':')
			return false;
		p++;
		const char *q = p;
		while (q < end && isdigit((unsigned char)*q))
			q++;
		size_t n = (size_t)(q - p);
		if (n == 0 || n > 2 || (n == 2 && p[0] > '5'))
			return false;
		p = q;
	}
	return true;
}

static bool scalar_is_int(const char *s, size_t len)
{
	size_t o = scalar_sign(s, len);
	s += o;
	len -= o;
	if (len == 0)
		return false;
	if (len > 2 && s[0] == '0' && s[1] == 'b')
		return all_of(s + 2, len - 2, MO_CC_BIN_);
	if (len > 2 && s[0] == '0' && s[1] == 'x')
		return all_of(s + 2, len - 2, MO_CC_HEX_);
	if (s[0] == '0')
		return len == 1 || all_of(s + 1, len - 1, MO_CC_OCT_);
	if (s[0] >= '1' && s[0] <= '9' && all_of(s, len, MO_CC_DEC_))
		return true;
	return is_sexagesimal_int(s, len);
}

static bool is_exponent(const char *s, size_t len)
{
	/* [eE][-+][0-9]+ : PyYAML requires the sign */
	return len >= 3 && (s[0] == 'e' || s[0] == 'E') && (s[1] == '-' || s[1] == '+') &&
	       all_of(s + 2, len - 2, MO_CC_DEC);
}

static bool is_float(const char *s, size_t len)
{
	if (str_in(s, len, (const char *const[]){".nan", ".NaN", ".NAN", NULL}))
		return true;
	size_t o = scalar_sign(s, len);
	const char *p = s + o, *end = s + len;
	if (str_in(p, (size_t)(end - p), (const char *const[]){".inf", ".Inf", ".INF", NULL}))
		return true;
	const char *dot = memchr(p, '.', (size_t)(end - p));
	if (!dot)
		return false;
	const char *exp = dot + 1;
	while (exp < end && (isdigit((unsigned char)*exp) || *exp == '_'))
		exp++;
	if (exp < end && !is_exponent(exp, (size_t)(end - exp)))
		return false;
	if (dot == p) /* \.[0-9_]+ : no sign allowed, digits required */
		return o == 0 && exp > dot + 1;
	/* [0-9][0-9_]* or sexagesimal before the dot */
	if (!isdigit((unsigned char)p[0]))
		return false;
	if (all_of(p, (size_t)(dot - p), MO_CC_DEC_))
		return true;
	return is_sexagesimal_int(p, (size_t)(dot - p)) && exp == end;
}

mo_scalar_type scalar_resolve(const mo_node *n)
{
	if (!n || n->kind != MO_NODE_SCALAR)
		return MO_SCALAR_STR;
	if (n->tag && strncmp(n->tag, MO_TAG_PREFIX, strlen(MO_TAG_PREFIX)) == 0) {
		const char *t = n->tag + strlen(MO_TAG_PREFIX);
		if (!strcmp(t, "null"))
			return MO_SCALAR_NULL;
		if (!strcmp(t, "bool"))
			return MO_SCALAR_BOOL;
		if (!strcmp(t, "int"))
			return MO_SCALAR_INT;
		if (!strcmp(t, "float"))
			return MO_SCALAR_FLOAT;
		return MO_SCALAR_STR;
	}
	if (n->tag || n->style != MO_STYLE_PLAIN)
		return MO_SCALAR_STR;
	const char *s = n->value;
	size_t len = n->len;
	if (len == 0 || (word_start(s[0]) && str_in(s, len, mo_null_words)))
		return MO_SCALAR_NULL;
	if (word_start(s[0]) &&
	    (str_in(s, len, mo_true_words) || str_in(s, len, mo_false_words)))
		return MO_SCALAR_BOOL;
	if (scalar_is_int(s, len))
		return MO_SCALAR_INT;
	if (is_float(s, len))
		return MO_SCALAR_FLOAT;
	return MO_SCALAR_STR;
}

bool scalar_bool(const mo_node *n, bool *out)
{
	if (scalar_resolve(n) != MO_SCALAR_BOOL)
		return false;
	*out = str_in(n->value, n->len, mo_true_words);
	return true;
}

static bool scalar_accumulate(uint64_t *acc, unsigned base, unsigned digit)
{
	if (*acc > (UINT64_MAX - digit) / base)
		return false;
	*acc = *acc * base + digit;
	return true;
}

static int scalar_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Digits in base, '_' skipped; false on overflow or a bad digit. */
static bool parse_base(const char *s, size_t len, unsigned base, uint64_t *out)
{
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '_')
			continue;
		int d = scalar_digit(s[i]);
		if (d < 0 || (unsigned)d >= base || !scalar_accumulate(&v, base, (unsigned)d))
			return false;
	}
	*out = v;
	return true;
}

/* 1:30 = 90, 1:02:03 = 3723 (Horner in base 60). */
static bool parse_sexagesimal(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0, part = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == ':') {
			if (!scalar_accumulate(&v, 60, 0) || v > UINT64_MAX - part)
				return false;
			v += part;
			part = 0;
		} else if (s[i] != '_' && !scalar_accumulate(&part, 10, (unsigned)(s[i] - '0'))) {
			return false;
		}
	}
	*out = v;
	return true;
}

bool scalar_int(const mo_node *n, int64_t *out, bool *overflow)
{
	if (overflow)
		*overflow = false;
	if (scalar_resolve(n) != MO_SCALAR_INT)
		return false;
	const char *s = n->value;
	size_t len = n->len, o = scalar_sign(s, len);
	bool neg = o && s[0] == '-';
	s += o;
	len -= o;
	uint64_t mag = 0;
	bool ok;
	if (len > 2 && s[0] == '0' && s[1] == 'b')
		ok = parse_base(s + 2, len - 2, 2, &mag);
	else if (len > 2 && s[0] == '0' && s[1] == 'x')
		ok = parse_base(s + 2, len - 2, 16, &mag);
	else if (memchr(s, ':', len))
		ok = parse_sexagesimal(s, len, &mag);
	else if (len > 1 && s[0] == '0')
		ok = parse_base(s + 1, len - 1, 8, &mag);
	else
		ok = parse_base(s, len, 10, &mag);
	if (!ok || mag > (uint64_t)INT64_MAX + (neg ? 1 : 0)) {
		if (overflow)
			*overflow = true;
		return false;
	}
	/* -2^63 has no positive twin: negated as -(2^63 - 1) - 1 */
	*out = !neg ? (int64_t)mag : mag == 0 ? 0 : -(int64_t)(mag - 1) - 1;
	return true;
}

bool scalar_float(const mo_node *n, double *out)
{
	mo_scalar_type t = scalar_resolve(n);
	if (t == MO_SCALAR_INT) {
		int64_t v;
		if (!scalar_int(n, &v, NULL))
			return false;
		*out = (double)v;
		return true;
	}
	if (t != MO_SCALAR_FLOAT)
		return false;
	char buf[128];
	size_t j = 0;
	for (size_t i = 0; i < n->len && j + 1 < sizeof buf; i++)
		if (n->value[i] != '_')
			buf[j++] = n->value[i];
	buf[j] = '\0';
	if (strchr(buf, ':')) /* sexagesimal floats: rare; refuse */
		return false;
	const char *p = buf + ((buf[0] == '-' || buf[0] == '+') ? 1 : 0);
	if (p[0] == '.' && (p[1] == 'i' || p[1] == 'I')) {
		*out = buf[0] == '-' ? -__builtin_inf() : __builtin_inf();
		return true;
	}
	if (p[0] == '.' && (p[1] == 'n' || p[1] == 'N')) {
		*out = __builtin_nan("");
		return true;
	}
	errno = 0;
	char *end;
	*out = strtod(buf, &end);
	return *end == '\0';
}

const char *node_type_name(const mo_node *n)
{
	if (!n)
		return "nothing";
	switch (n->kind) {
	case MO_NODE_MAP:
		return "mapping";
	case MO_NODE_SEQ:
		return "sequence";
	default:
		break;
	}
	switch (scalar_resolve(n)) {
	case MO_SCALAR_NULL:
		return "null";
	case MO_SCALAR_BOOL:
		return "boolean";
	case MO_SCALAR_INT:
		return "integer";
	case MO_SCALAR_FLOAT:
		return "float";
	default:
		return "string";
	}
}
