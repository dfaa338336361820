/* Diagnostics: a list owned by the caller, strings copied into its arena. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_DIAGS_MAX 5000

typedef struct mo_diag_entry {
	mo_diag d;
	size_t seq;
	size_t file_rank;
} mo_diag_entry;

struct mo_diags {
	mo_arena *arena;
	mo_diag_entry **v;
	size_t n, cap;
	size_t errors, warnings;
	size_t dropped;
	const char **files; /* distinct file labels, in order of appearance */
	size_t n_files;
};

int mo_diags_new(mo_diags **out)
{
	*out = NULL;
	mo_diags *d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	d->arena = arena_new();
	if (!d->arena) {
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

void mo_diags_free(mo_diags *d)
{
	if (!d)
		return;
	arena_free(d->arena);
	free(d->v);
	free(d->files);
	free(d);
}

MO_ACCESSOR(size_t, mo_diags_count, mo_diags, n)
MO_ACCESSOR(size_t, mo_diags_errors, mo_diags, errors)
MO_ACCESSOR(size_t, mo_diags_warnings, mo_diags, warnings)

const mo_diag *mo_diags_get(const mo_diags *d, size_t i)
{
	return (d && i < d->n) ? &d->v[i]->d : NULL;
}

static size_t diags_file_rank(mo_diags *d, const char *file)
{
	for (size_t i = 0; i < d->n_files; i++)
		if (strcmp(d->files[i], file) == 0)
			return i;
	const char **f = realloc(d->files, (d->n_files + 1) * sizeof(*f));
	if (!f)
		return d->n_files;
	d->files = f;
	d->files[d->n_files] = arena_strdup(d->arena, file);
	if (!d->files[d->n_files])
		return d->n_files;
	return d->n_files++;
}

static int diag_cmp(const void *pa, const void *pb)
{
	const mo_diag_entry *a = *(const mo_diag_entry *const *)pa;
	const mo_diag_entry *b = *(const mo_diag_entry *const *)pb;
	if (a->file_rank != b->file_rank)
		return a->file_rank < b->file_rank ? -1 : 1;
	/* diagnostics without a position go last within their file */
	int la = a->d.line ? a->d.line : 1 << 30, lb = b->d.line ? b->d.line : 1 << 30;
	if (la != lb)
		return la < lb ? -1 : 1;
	if (a->d.column != b->d.column)
		return a->d.column < b->d.column ? -1 : 1;
	return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

void mo_diags_sort(mo_diags *d)
{
	if (d && d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), diag_cmp);
}

/* Appends n bytes of s to buf (cap bytes, NUL kept in room), as
 * vsnprintf truncates. */
static void fmt_put(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	size_t room = cap - 1 - *len;
	if (n > room)
		n = room;
	memcpy(buf + *len, s, n);
	*len += n;
}

static void fmt_unsigned(char *buf, size_t cap, size_t *len, unsigned long long v, bool neg)
{
	char d[24];
	size_t i = sizeof d;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (neg)
		d[--i] = '-';
	fmt_put(buf, cap, len, d + i, sizeof d - i);
}

/* vsnprintf(buf, cap, fmt, ap) for the conversions diagnostics use (%s,
 * %.Ns, %.*s, %d, %zu, %lld, %llu, %%): the same bytes, and their length.
 * SIZE_MAX for anything else (or a NULL string), which the caller formats
 * with vsnprintf from a copy of ap. Saves vsnprintf's setup, most of a
 * diagnostic's cost. */
static size_t diag_format(char *buf, size_t cap, const char *fmt, va_list ap)
{
	size_t len = 0;
	for (const char *f = fmt; *f;) {
		const char *pct = strchr(f, '%');
		if (!pct) {
			fmt_put(buf, cap, &len, f, strlen(f));
			break;
		}
		fmt_put(buf, cap, &len, f, (size_t)(pct - f));
		f = pct + 1;
		long prec = -1;
		if (*f == '.') {
			f++;
			if (*f == '*') {
				int pr = va_arg(ap, int);
				prec = pr < 0 ? -1 : pr;
				f++;
			} else if (*f >= '0' && *f <= '9') {
				prec = 0;
				for (; *f >= '0' && *f <= '9' && prec < 100000; f++)
					prec = prec * 10 + (*f - '0');
				if (*f >= '0' && *f <= '9')
					return SIZE_MAX;
			} else {
				return SIZE_MAX;
			}
			if (*f != 's')
				return SIZE_MAX;
		}
		if (*f == 's') {
			const char *str = va_arg(ap, const char *);
			if (!str)
				return SIZE_MAX;
			size_t n = prec < 0 ? strlen(str) : strnlen(str, (size_t)prec);
			fmt_put(buf, cap, &len, str, n);
			f++;
		} else if (*f == '%') {
			fmt_put(buf, cap, &len, "%", 1);
			f++;
		} else if (*f == 'd') {
			long long v = va_arg(ap, int);
			fmt_unsigned(buf, cap, &len, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v,
					v < 0);
			f++;
		} else if (f[0] == 'z' && f[1] == 'u') {
			fmt_unsigned(buf, cap, &len, va_arg(ap, size_t), false);
			f += 2;
		} else if (f[0] == 'l' && f[1] == 'l' && f[2] == 'd') {
			long long v = va_arg(ap, long long);
			fmt_unsigned(buf, cap, &len, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v,
					v < 0);
			f += 3;
		} else if (f[0] == 'l' && f[1] == 'l' && f[2] == 'u') {
			fmt_unsigned(buf, cap, &len, va_arg(ap, unsigned long long), false);
			f += 3;
		} else {
			return SIZE_MAX;
		}
	}
	buf[len] = '\0';
	return len;
}

/* Formats into msg (cap bytes) like vsnprintf; the length written. */
static size_t fmt_msg(char *msg, size_t cap, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	size_t n = diag_format(msg, cap, fmt, cp);
	va_end(cp);
	if (n == SIZE_MAX) {
		vsnprintf(msg, cap, fmt, ap);
		n = strlen(msg);
	}
	return n;
}

mo_diag *diags_vadd(mo_diags *d, mo_severity sev, const char *code,
		       const char *file, int line, int column, const char *path,
		       const char *fmt, va_list ap)
{
	if (!d)
		return NULL;
	if (d->n >= MO_DIAGS_MAX) {
		d->dropped++;
		if (sev == MO_SEV_ERROR)
			d->errors++; /* still counts: the config stays invalid */
		return NULL;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		mo_diag_entry **v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		d->v = v;
		d->cap = cap;
	}
	mo_diag_entry *e = arena_alloc(d->arena, sizeof(*e));
	if (!e)
		return NULL;
	char msg[512];
	size_t n = fmt_msg(msg, sizeof msg, fmt, ap);
	e->d.severity = sev;
	e->d.code = arena_strdup(d->arena, code);
	e->d.message = arena_strndup(d->arena, msg, n);
	e->d.path = arena_strdup(d->arena, path ? path : "");
	/* the file label table holds the same text */
	e->file_rank = diags_file_rank(d, file ? file : "");
	e->d.file = e->file_rank < d->n_files ? d->files[e->file_rank]
					      : arena_strdup(d->arena, file ? file : "");
	e->d.line = line;
	e->d.column = column;
	if (!e->d.code || !e->d.message || !e->d.path || !e->d.file)
		return NULL;
	e->seq = d->n;
	d->v[d->n++] = e;
	if (sev == MO_SEV_ERROR)
		d->errors++;
	else
		d->warnings++;
	return &e->d;
}

mo_diag *diags_add(mo_diags *d, mo_severity sev, const char *code,
		      const char *file, int line, int column, const char *path,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mo_diag *r = diags_vadd(d, sev, code, file, line, column, path, fmt, ap);
	va_end(ap);
	return r;
}

void diag_set_hint(mo_diags *d, mo_diag *diag, const char *fmt, ...)
{
	if (!d || !diag)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	size_t n = fmt_msg(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag->hint = arena_strndup(d->arena, msg, n);
}

void diag_set_layers(mo_diags *d, mo_diag *diag, const char *layers)
{
	if (d && diag && layers && layers[0])
		diag->layers = arena_strdup(d->arena, layers);
}

size_t edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 256 || lb > 256)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	size_t prev[257], cur[257];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		size_t rowmin = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t m = sub < del ? sub : del;
			cur[j] = m < ins ? m : ins;
			if (cur[j] < rowmin)
				rowmin = cur[j];
		}
		if (rowmin > cap)
			return cap + 1;
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb] > cap ? cap + 1 : prev[lb];
}

const char *did_you_mean(const char *word, const char *const *cands, size_t n)
{
	size_t len = strlen(word);
	size_t cap = len / 3 > 2 ? len / 3 : 2;
	const char *best = NULL;
	size_t best_d = cap + 1;
	for (size_t i = 0; i < n; i++) {
		size_t dist = edit_distance(word, cands[i], cap);
		if (dist < best_d) {
			best_d = dist;
			best = cands[i];
		}
	}
	return best;
}

void error_vset(mo_error *err, mo_error_code code, int line, int column, const char *fmt,
		va_list ap)
{
	if (!err)
		return;
	err->code = code;
	err->line = line;
	err->column = column;
	vsnprintf(err->text, sizeof err->text, fmt, ap);
}

void error_set(mo_error *err, mo_error_code code, int line, int column,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(err, code, line, column, fmt, ap);
	va_end(ap);
}

void mo_limits_default(mo_limits *lim)
{
	lim->max_bytes = 16u << 20;
	lim->max_depth = 64;
	lim->max_nodes = 2000000;
	lim->max_scalar_bytes = 1u << 20;
	lim->max_patterns = 10000;
	lim->max_pattern_bytes = 4096;
	lim->match_limit = 100000;
	lim->depth_limit = 1000;
}
