/* The trace reader: lines from memory or a file through a bounded buffer,
 * each turned into one allocation row. MindSpore's memory tracker writes
 * plain CSV (no chosen CSV library in the project: this small reader takes
 * RFC 4180 quoting within one line); memopt traces are JSON lines, each
 * read by jansson. Every error names the line and the column. */
#include "ledger/ledger.h"
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MO_LEDGER_BLOCK (256u * 1024u)

int ledger_decimal(uint64_t *out, const char *s, size_t n, uint64_t unit)
{
	size_t i = 0;
	uint64_t whole = 0, frac = 0, scale = 1;
	if (n == 0 || s[0] < '0' || s[0] > '9')
		return -1;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(s[i] - '0'), &whole))
			return -1;
	if (i < n && s[i] == '.') {
		size_t digits = 0;
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
			if (digits < 12) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				scale *= 10;
			}
	}
	if (i != n || __builtin_mul_overflow(whole, unit, &whole))
		return -1;
	/* frac < 10^12 and unit <= 2^20: the product fits */
	uint64_t part = (frac * unit + scale / 2) / scale;
	if (__builtin_add_overflow(whole, part, out))
		return -1;
	return 0;
}

/* err = code at the reader's line and `column`; returns -1. */
static int ledger_fail(mo_error *err, mo_error_code code, const mo_ledger_reader *r, int column,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int ledger_fail(mo_error *err, mo_error_code code, const mo_ledger_reader *r, int column,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(err, code, (int)(r->line_no > INT32_MAX ? 0 : r->line_no), column, fmt, ap);
	va_end(ap);
	return -1;
}

int ledger_reader_memory(mo_ledger_reader *r, const char *data, size_t len, size_t max_line,
			mo_error *err)
{
	(void)err;
	memset(r, 0, sizeof *r);
	r->data = data ? data : "";
	r->len = data ? len : 0;
	r->max_line = max_line;
	return 0;
}

int ledger_reader_file(mo_ledger_reader *r, const char *path, size_t max_line, mo_error *err)
{
	memset(r, 0, sizeof *r);
	r->max_line = max_line;
	r->buf_cap = MO_LEDGER_BLOCK > max_line + 1 ? MO_LEDGER_BLOCK : max_line + 1;
	r->f = fopen(path, "rb");
	if (!r->f) {
		error_set(err, MO_ERR_IO, 0, 0, "%s: %s", path, strerror(errno));
		return -1;
	}
	r->buf = malloc(r->buf_cap);
	if (!r->buf) {
		fclose(r->f);
		r->f = NULL;
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	return 0;
}

void ledger_reader_close(mo_ledger_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	r->f = NULL;
	r->buf = NULL;
}

/* Moves the unread tail of the block to its start and fills the rest. */
static int ledger_refill(mo_ledger_reader *r, mo_error *err)
{
	size_t keep = r->buf_len - r->buf_pos;
	memmove(r->buf, r->buf + r->buf_pos, keep);
	r->buf_len = keep;
	r->buf_pos = 0;
	size_t got = fread(r->buf + keep, 1, r->buf_cap - keep, r->f);
	r->buf_len += got;
	if (got == 0) {
		if (ferror(r->f)) {
			error_set(err, MO_ERR_IO, 0, 0, "read error: %s", strerror(errno));
			return -1;
		}
		r->eof = true;
	}
	return 0;
}

/* The next line (without its end) in *line / *n. 1, 0 at the end, -1. */
static int ledger_line(mo_ledger_reader *r, const char **line, size_t *n, mo_error *err)
{
	const char *base;
	size_t avail;
	for (;;) {
		base = r->f ? r->buf + r->buf_pos : r->data + r->pos;
		avail = r->f ? r->buf_len - r->buf_pos : r->len - r->pos;
		const char *nl = memchr(base, '\n', avail);
		size_t len = nl ? (size_t)(nl - base) : avail;
		if (nl || !r->f || r->eof) {
			if (!nl && avail == 0)
				return 0;
			r->line_no++;
			if (len > r->max_line)
				return ledger_fail(err, MO_ERR_LIMIT, r, 0,
						  "line longer than the limit");
			if (r->f)
				r->buf_pos += len + (nl != NULL);
			else
				r->pos += len + (nl != NULL);
			*line = base;
			*n = len > 0 && base[len - 1] == '\r' ? len - 1 : len;
			return 1;
		}
		if (avail > r->max_line) {
			r->line_no++;
			return ledger_fail(err, MO_ERR_LIMIT, r, 0, "line longer than the limit");
		}
		if (ledger_refill(r, err) != 0)
			return -1;
	}
}

/* ---- CSV ------------------------------------------------------------------ */

typedef struct mo_ledger_field {
	const char *s;
	size_t n;
	int column; /* 1-based byte column where it starts */
	bool quoted;
} mo_ledger_field;

#define MO_LEDGER_MAX_FIELDS 64

/* Splits a line; quoted fields keep their quotes doubled (names only, so
 * the name copy undoubles them). Returns the count, or -1 for a bad quote
 * (err filled). */
static int ledger_split(mo_ledger_reader *r, const char *s, size_t n, mo_ledger_field *f,
			mo_error *err)
{
	int count = 0;
	size_t i = 0;
	for (;;) {
		if (count == MO_LEDGER_MAX_FIELDS)
			return ledger_fail(err, MO_ERR_LIMIT, r, (int)i + 1,
					  "more than 64 fields in a line");
		mo_ledger_field *fd = &f[count++];
		fd->column = (int)i + 1;
		fd->quoted = i < n && s[i] == '"';
		if (fd->quoted) {
			size_t j = i + 1;
			for (; j < n; j++)
				if (s[j] == '"' && !(j + 1 < n && s[j + 1] == '"'))
					break;
				else if (s[j] == '"')
					j++;
			if (j >= n || (j + 1 < n && s[j + 1] != ','))
				return ledger_fail(err, MO_ERR_INVALID, r, fd->column,
						  "unterminated or misplaced quote");
			fd->s = s + i + 1;
			fd->n = j - i - 1;
			i = j + 1;
		} else {
			const char *c = memchr(s + i, ',', n - i);
			size_t end = c ? (size_t)(c - s) : n;
			if (memchr(s + i, '"', end - i))
				return ledger_fail(err, MO_ERR_INVALID, r, fd->column,
						  "a quote inside an unquoted field");
			fd->s = s + i;
			fd->n = end - i;
			i = end;
		}
		while (fd->n && (fd->s[0] == ' ' || fd->s[0] == '\t') && !fd->quoted)
			fd->s++, fd->n--, fd->column++;
		while (fd->n && (fd->s[fd->n - 1] == ' ' || fd->s[fd->n - 1] == '\t') && !fd->quoted)
			fd->n--;
		if (i >= n)
			return count;
		i++; /* the comma */
	}
}

static int ledger_header_csv(mo_ledger_reader *r, const char *s, size_t n, mo_error *err)
{
	static const char *const want[] = {"Name", "Size(KB)", "Allocation Time(us)",
					   "Release Time(us)", "Allocation Total Allocated(MB)"};
	int *cols[] = {&r->col_name, &r->col_size, &r->col_alloc, &r->col_release, &r->col_total};
	mo_ledger_field f[MO_LEDGER_MAX_FIELDS];
	if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3, n -= 3;
	int count = ledger_split(r, s, n, f, err);
	if (count < 0)
		return -1;
	r->columns = count;
	for (size_t w = 0; w < 5; w++) {
		*cols[w] = -1;
		for (int i = 0; i < count; i++)
			if (f[i].n == strlen(want[w]) && memcmp(f[i].s, want[w], f[i].n) == 0)
				*cols[w] = i;
		if (*cols[w] < 0 && w < 4)
			return ledger_fail(err, MO_ERR_INVALID, r, 1,
					  "not a MindSpore memory-tracker ledger: the header has no "
					  "\"%s\" column",
					  want[w]);
	}
	return 0;
}

/* A time in us (or "N/A" when na_ok) as ns. */
static int ledger_time(mo_ledger_reader *r, const mo_ledger_field *f, const char *what,
			bool na_ok, int64_t *out, mo_error *err)
{
	uint64_t v;
	if (na_ok && f->n == 3 && memcmp(f->s, "N/A", 3) == 0) {
		*out = MO_LEDGER_NEVER;
		return 0;
	}
	if (ledger_decimal(&v, f->s, f->n, 1000) != 0 || v >= (uint64_t)MO_LEDGER_NEVER)
		return ledger_fail(err, MO_ERR_INVALID, r, f->column,
				  "%s: not a time in microseconds%s", what, na_ok ? " or N/A" : "");
	*out = (int64_t)v;
	return 0;
}

static int ledger_name(mo_ledger_reader *r, mo_ledger_row *row, const char *s, size_t n,
			bool quoted, int column, mo_error *err)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (o == MO_LEDGER_NAME_MAX)
			return ledger_fail(err, MO_ERR_LIMIT, r, column,
					  "op name longer than 255 bytes");
		if ((unsigned char)s[i] < 0x20)
			return ledger_fail(err, MO_ERR_INVALID, r, column + (int)i,
					  "control character in an op name");
		r->name[o++] = s[i];
		if (quoted && s[i] == '"')
			i++;
	}
	r->name[o] = '\0';
	row->name = r->name;
	row->name_len = o;
	return 0;
}

static int ledger_row_csv(mo_ledger_reader *r, mo_ledger_row *row, const char *s, size_t n,
			 mo_error *err)
{
	mo_ledger_field f[MO_LEDGER_MAX_FIELDS];
	int count = ledger_split(r, s, n, f, err);
	if (count < 0)
		return -1;
	if (count != r->columns)
		return ledger_fail(err, MO_ERR_INVALID, r, 1, "%d fields where the header has %d",
				  count, r->columns);
	const mo_ledger_field *size = &f[r->col_size];
	if (ledger_name(r, row, f[r->col_name].s, f[r->col_name].n, f[r->col_name].quoted,
		       f[r->col_name].column, err) != 0)
		return -1;
	if (ledger_decimal(&row->bytes, size->s, size->n, 1024) != 0 || row->bytes > (1ull << 50))
		return ledger_fail(err, MO_ERR_INVALID, r, size->column,
				  "Size(KB): not a size in KB up to 2^40");
	if (ledger_time(r, &f[r->col_alloc], "Allocation Time(us)", false, &row->alloc_ns, err) ||
	    ledger_time(r, &f[r->col_release], "Release Time(us)", true, &row->release_ns, err))
		return -1;
	row->total_bytes = -1;
	if (r->col_total >= 0) {
		const mo_ledger_field *t = &f[r->col_total];
		uint64_t v;
		if (t->n == 3 && memcmp(t->s, "N/A", 3) == 0)
			;
		else if (ledger_decimal(&v, t->s, t->n, 1048576) != 0 || v > (1ull << 62))
			return ledger_fail(err, MO_ERR_INVALID, r, t->column,
					  "Allocation Total Allocated(MB): not a size in MB");
		else
			row->total_bytes = (int64_t)v;
	}
	return 0;
}

/* ---- JSON lines ------------------------------------------------------------ */

static int ledger_json_line(mo_ledger_reader *r, const char *s, size_t n, json_t **out,
			   mo_error *err)
{
	json_error_t je;
	*out = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
	if (!*out) {
		error_set(err, MO_ERR_INVALID, (int)r->line_no, je.column > 0 ? je.column : 1,
			     "not JSON: %s", json_error_words(&je));
		return -1;
	}
	if (!json_is_object(*out)) {
		json_decref(*out);
		return ledger_fail(err, MO_ERR_INVALID, r, 1, "each line must be a JSON object");
	}
	return 0;
}

static int ledger_header_jsonl(mo_ledger_reader *r, const char *s, size_t n, mo_error *err)
{
	json_t *h;
	if (ledger_json_line(r, s, n, &h, err) != 0)
		return -1;
	const char *fmt = json_string_value(json_object_get(h, "format"));
	json_int_t version = json_integer_value(json_object_get(h, "version"));
	int rc = 0;
	if (!fmt || strcmp(fmt, "memopt-trace") != 0)
		rc = ledger_fail(err, MO_ERR_INVALID, r, 1,
				"the first line must be {\"format\": \"memopt-trace\", \"version\": "
				"1}");
	else if (version != 1)
		rc = ledger_fail(err, MO_ERR_INVALID, r, 1,
				"memopt-trace version %s is not supported (1 is)",
				json_is_integer(json_object_get(h, "version")) ? "other than 1"
									       : "missing");
	json_decref(h);
	return rc;
}

static int ledger_json_time(mo_ledger_reader *r, const json_t *v, const char *key, bool null_ok,
			   int64_t *out, mo_error *err)
{
	if (null_ok && (!v || json_is_null(v))) {
		*out = MO_LEDGER_NEVER;
		return 0;
	}
	double d = json_number_value(v);
	if (!json_is_number(v) || !isfinite(d) || d < 0 || d >= 9.0e15)
		return ledger_fail(err, MO_ERR_INVALID, r, 1,
				  "\"%s\" must be a time in microseconds (0 to 9e15)%s", key,
				  null_ok ? " or null" : "");
	*out = (int64_t)llround(d * 1000.0);
	return 0;
}

static int ledger_row_jsonl(mo_ledger_reader *r, mo_ledger_row *row, const char *s, size_t n,
			   mo_error *err)
{
	json_t *o;
	int rc = -1;
	if (ledger_json_line(r, s, n, &o, err) != 0)
		return -1;
	const json_t *name = json_object_get(o, "name");
	const json_t *bytes = json_object_get(o, "bytes");
	const json_t *total = json_object_get(o, "total_bytes");
	if (!json_is_string(name)) {
		ledger_fail(err, MO_ERR_INVALID, r, 1, "\"name\" must be a string");
		goto out_decref;
	}
	if (ledger_name(r, row, json_string_value(name), json_string_length(name), false, 1, err))
		goto out_decref;
	if (!json_is_integer(bytes) || json_integer_value(bytes) < 0 ||
	    json_integer_value(bytes) > (json_int_t)(1ll << 50)) {
		ledger_fail(err, MO_ERR_INVALID, r, 1, "\"bytes\" must be an integer 0 to 2^50");
		goto out_decref;
	}
	row->bytes = (uint64_t)json_integer_value(bytes);
	if (ledger_json_time(r, json_object_get(o, "alloc_us"), "alloc_us", false, &row->alloc_ns,
			    err) ||
	    ledger_json_time(r, json_object_get(o, "free_us"), "free_us", true, &row->release_ns,
			    err))
		goto out_decref;
	row->total_bytes = -1;
	if (total && !json_is_null(total)) {
		if (!json_is_integer(total) || json_integer_value(total) < 0) {
			ledger_fail(err, MO_ERR_INVALID, r, 1,
				   "\"total_bytes\" must be a non-negative integer");
			goto out_decref;
		}
		row->total_bytes = (int64_t)json_integer_value(total);
	}
	rc = 0;
out_decref:
	json_decref(o);
	return rc;
}

/* ---- rows ------------------------------------------------------------------ */

static bool ledger_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

int ledger_reader_start(mo_ledger_reader *r, mo_error *err)
{
	const char *s;
	size_t n;
	int got;
	while ((got = ledger_line(r, &s, &n, err)) == 1 && ledger_blank(s, n))
		;
	if (got < 0)
		return -1;
	if (got == 0) {
		error_set(err, MO_ERR_INVALID, 1, 1, "the trace is empty");
		return -1;
	}
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	r->format = s[i] == '{' ? MO_LEDGER_JSONL : MO_LEDGER_CSV;
	return r->format == MO_LEDGER_JSONL ? ledger_header_jsonl(r, s, n, err)
					: ledger_header_csv(r, s, n, err);
}

int ledger_reader_next(mo_ledger_reader *r, mo_ledger_row *row, mo_error *err)
{
	const char *s;
	size_t n;
	int got;
	while ((got = ledger_line(r, &s, &n, err)) == 1 && ledger_blank(s, n))
		;
	if (got <= 0)
		return got;
	row->line = r->line_no;
	if ((r->format == MO_LEDGER_JSONL ? ledger_row_jsonl(r, row, s, n, err)
				      : ledger_row_csv(r, row, s, n, err)) != 0)
		return -1;
	if (row->release_ns != MO_LEDGER_NEVER && row->release_ns < row->alloc_ns)
		return ledger_fail(err, MO_ERR_INVALID, r, 1,
				  "released before it was allocated");
	return 1;
}

int ledger_reader_rewind(mo_ledger_reader *r, mo_error *err)
{
	r->line_no = 0;
	r->pos = 0;
	r->buf_len = r->buf_pos = 0;
	r->eof = false;
	if (r->f && fseek(r->f, 0, SEEK_SET) != 0) {
		error_set(err, MO_ERR_IO, 0, 0, "cannot read the trace twice: %s",
			     strerror(errno));
		return -1;
	}
	/* skip the header again */
	const char *s;
	size_t n;
	int got;
	while ((got = ledger_line(r, &s, &n, err)) == 1 && ledger_blank(s, n))
		;
	return got < 0 ? -1 : 0;
}
