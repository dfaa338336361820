/* Layer specs: a list of N or "a-b" items, strictly ascending,
 * never overlapping. YAML 1.1 quirks are caught with a hint. Ids past 2^64
 * saturate to UINT64_MAX so the range check reports them. */
#include "config/config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Parses [0-9]+ with saturation at UINT64_MAX. */
static uint64_t layers_number(const char *s, size_t len)
{
	uint64_t v = 0;
	if (len <= 19) { /* below 10^19: no overflow */
		for (size_t i = 0; i < len; i++)
			v = v * 10 + (unsigned)(s[i] - '0');
		return v;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		v = v * 10 + d;
	}
	return v;
}

static size_t layers_digits(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && (unsigned)(s[i] - '0') < 10)
		i++;
	return i;
}

/* ^\d+(-\d+)?$ after trimming; false when the text breaks the grammar. */
static bool layers_parse_text(const char *s, size_t len, mo_range *r)
{
	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	size_t a = layers_digits(s, len);
	if (a == 0)
		return false;
	r->lo = r->hi = layers_number(s, a);
	if (a == len)
		return true;
	if (s[a] != '-')
		return false;
	size_t b = layers_digits(s + a + 1, len - a - 1);
	if (b == 0 || a + 1 + b != len)
		return false;
	r->hi = layers_number(s + a + 1, b);
	return true;
}

static void layers_bad(mo_diags *diags, const char *file, const mo_node *item,
			  const char *path, const char *what, const char *hint)
{
	mo_diag *d = diags_add_at(diags, MO_SEV_ERROR, "layer-spec", file, item,
				     path, "%s", what);
	if (hint)
		diag_set_hint(diags, d, "%s", hint);
}

/* A plain integer is a layer id only when written as plain decimal. */
static bool layers_int_item(mo_diags *diags, const char *file, const mo_node *item,
			       const char *path, mo_range *r)
{
	char msg[200], hint[200];
	const char *v = item->value;
	int len = item->len > 40 ? 40 : (int)item->len;
	int64_t x = 0;
	bool overflow = false;
	bool is_int = scalar_int(item, &x, &overflow);
	size_t digits = layers_digits(v, item->len);
	if (digits == item->len && (item->len == 1 || v[0] != '0')) {
		r->lo = r->hi = layers_number(v, item->len);
		return true;
	}
	if (is_int && x < 0) {
		snprintf(msg, sizeof msg, "layer id %.*s is negative", len, v);
		layers_bad(diags, file, item, path, msg, "layer ids start at 0");
		return false;
	}
	if (digits == item->len) { /* leading zero: octal in YAML 1.1 */
		snprintf(msg, sizeof msg,
			 "'%.*s' has a leading zero: YAML 1.1 reads it as octal %lld",
			 len, v, (long long)x);
		snprintf(hint, sizeof hint, "write %llu without the leading zero",
			 (unsigned long long)layers_number(v, item->len));
		layers_bad(diags, file, item, path, msg, hint);
		return false;
	}
	snprintf(msg, sizeof msg, "'%.*s' is not a plain layer id: YAML 1.1 reads it as %lld",
		 len, v, (long long)x);
	snprintf(hint, sizeof hint, "write the id in decimal, e.g. %lld", (long long)x);
	layers_bad(diags, file, item, path, msg, is_int ? hint : NULL);
	return false;
}

static bool layers_item(mo_diags *diags, const char *file, const mo_node *item,
			   const char *path, mo_range *r)
{
	char msg[200];
	r->at = item;
	if (item->kind != MO_NODE_SCALAR) {
		layers_bad(diags, file, item, path,
			      item->kind == MO_NODE_SEQ ? "a nested list is not a layer id"
							: "a mapping is not a layer id",
			      "items are ids (5) or ranges (\"0-3\")");
		return false;
	}
	int len = item->len > 40 ? 40 : (int)item->len;
	switch (scalar_resolve(item)) {
	case MO_SCALAR_INT:
		return layers_int_item(diags, file, item, path, r);
	case MO_SCALAR_STR:
		if (!layers_parse_text(item->value, item->len, r)) {
			snprintf(msg, sizeof msg, "'%.*s' is not a layer id or range", len,
				 item->value);
			layers_bad(diags, file, item, path, msg,
				      "write an id (5) or an inclusive range (0-3)");
			return false;
		}
		if (r->lo > r->hi) {
			snprintf(msg, sizeof msg, "range '%.*s' runs backwards", len, item->value);
			layers_bad(diags, file, item, path, msg, "write the lower id first");
			return false;
		}
		return true;
	case MO_SCALAR_BOOL:
		snprintf(msg, sizeof msg, "%.*s is a boolean, not a layer id", len, item->value);
		layers_bad(diags, file, item, path, msg, NULL);
		return false;
	case MO_SCALAR_NULL:
		layers_bad(diags, file, item, path, "an empty item is not a layer id", NULL);
		return false;
	default:
		snprintf(msg, sizeof msg, "%.*s is a number with a fraction, not a layer id",
			 len, item->value);
		layers_bad(diags, file, item, path, msg, NULL);
		return false;
	}
}

/* The common case without diagnostics: a plain decimal id or a valid
 * quoted/plain "a-b" string. */
static bool layers_item_ok(const mo_node *item, mo_range *r)
{
	r->at = item;
	if (item->kind != MO_NODE_SCALAR || item->tag)
		return false;
	size_t d = layers_digits(item->value, item->len);
	if (item->style == MO_STYLE_PLAIN && d == item->len && d > 0 &&
	    (d == 1 || item->value[0] != '0')) {
		r->lo = r->hi = layers_number(item->value, d);
		return true;
	}
	/* "lo-hi": a string to the resolver (never an int, float or bool) */
	if (item->style == MO_STYLE_PLAIN && d > 0 && d + 1 < item->len && item->value[d] == '-') {
		const char *b = item->value + d + 1;
		size_t e = layers_digits(b, item->len - d - 1);
		if (d + 1 + e == item->len) {
			r->lo = layers_number(item->value, d);
			r->hi = layers_number(b, e);
			return r->lo <= r->hi;
		}
	}
	if (scalar_resolve(item) != MO_SCALAR_STR)
		return false;
	return layers_parse_text(item->value, item->len, r) && r->lo <= r->hi;
}

static void layers_type_error(mo_diags *diags, const char *file, const mo_node *list,
				 const char *path)
{
	mo_diag *d = diags_add_at(diags, MO_SEV_ERROR, "type", file, list, path,
				     "expected a list of layer ids, got %s",
				     node_type_name(list));
	if (list->kind != MO_NODE_SCALAR)
		return;
	mo_range r;
	mo_scalar_type t = scalar_resolve(list);
	if ((t == MO_SCALAR_INT || t == MO_SCALAR_STR) &&
	    layers_parse_text(list->value, list->len, &r))
		diag_set_hint(diags, d, "write [%.*s]", (int)(list->len > 40 ? 40 : list->len),
				 list->value);
	else
		diag_set_hint(diags, d, "write a list such as [0-15] or [0-3, 8]");
}

void layers_parse(mo_layers *out, mo_arena *a, mo_diags *diags, const char *file,
		     const mo_node *list, const char *path)
{
	memset(out, 0, sizeof(*out));
	out->at = list;
	if (!list)
		return;
	if (list->kind != MO_NODE_SEQ) {
		layers_type_error(diags, file, list, path);
		return;
	}
	out->ok = true;
	out->r = list->n ? arena_alloc(a, list->n * sizeof(*out->r)) : NULL;
	if (list->n && !out->r) {
		out->ok = false;
		return;
	}
	const mo_range *prev = NULL;
	char ipath[512];
	for (size_t i = 0; i < list->n; i++) {
		mo_range r;
		if (!layers_item_ok(list->items[i], &r)) {
			/* the slow path formats the item's path for the diagnostic */
			snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
			layers_item(diags, file, list->items[i], ipath, &r);
			out->ok = false;
			continue;
		}
		if (prev && r.lo <= prev->hi) {
			snprintf(ipath, sizeof ipath, "%s[%zu]", path, i);
			bool overlap = r.hi >= prev->lo;
			mo_diag *d = diags_add_at(
				diags, MO_SEV_ERROR, "layer-order", file, r.at, ipath,
				overlap ? "'%.*s' overlaps '%.*s' before it"
					: "'%.*s' comes after '%.*s': items must be ascending",
				(int)(r.at->len > 40 ? 40 : r.at->len), r.at->value,
				(int)(prev->at->len > 40 ? 40 : prev->at->len), prev->at->value);
			diag_set_hint(diags, d, "list each layer once, in ascending order");
			out->ok = false;
			continue;
		}
		out->r[out->n++] = r;
		prev = &out->r[out->n - 1];
	}
}

bool layers_contains(const mo_layers *l, uint64_t id)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->r[mid].hi < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->r[lo].lo <= id;
}

/* Writes v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	return p;
}

void ranges_append(char *buf, size_t size, uint64_t lo, uint64_t hi)
{
	size_t len = strlen(buf);
	if (len + 48 >= size) {
		if (len + 6 < size && !strstr(buf, "..."))
			strcat(buf, ", ...");
		return;
	}
	/* at most ", " + 20 digits + "-" + 20 digits: fits in the 48 left */
	char *p = buf + len;
	if (len) {
		*p++ = ',';
		*p++ = ' ';
	}
	p = put_u64(p, lo);
	if (lo != hi) {
		*p++ = '-';
		p = put_u64(p, hi);
	}
	*p = '\0';
}
