/* Growable buffer with a cap (curl's dynbuf): an append past the cap or a
 * failed allocation marks the buffer failed and later appends do nothing. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(mo_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void buf_free(mo_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static bool buf_reserve(mo_buf *b, size_t extra)
{
	if (b->failed)
		return false;
	if (extra > SIZE_MAX - b->len - 1 || (b->max && b->len + extra > b->max)) {
		b->failed = true;
		return false;
	}
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

bool buf_append(mo_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return false;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return true;
}

bool buf_puts(mo_buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

bool buf_printf(mo_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t)n))
		return false;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return true;
}

char *buf_take(mo_buf *b, size_t *len)
{
	if (b->failed) {
		buf_free(b);
		return NULL;
	}
	if (!b->data) {
		if (!buf_reserve(b, 0))
			return NULL;
		b->data[0] = '\0';
	}
	char *p = b->data;
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
