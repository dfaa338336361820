/* Bump allocator: everything a parsed document, model or plan owns lives in
 * one arena and is freed at once (nginx pools). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_ARENA_CHUNK 16384
#define MO_ARENA_ALIGN 16

struct mo_chunk {
	struct mo_chunk *next;
	size_t used, size;
	_Alignas(MO_ARENA_ALIGN) unsigned char data[];
};

struct mo_arena {
	struct mo_chunk *head;
};

mo_arena *mo_arena_new(void)
{
	return calloc(1, sizeof(mo_arena));
}

void mo_arena_free(mo_arena *a)
{
	if (!a)
		return;
	struct mo_chunk *c = a->head;
	while (c) {
		struct mo_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(a);
}

static struct mo_chunk *mo_arena_grow(mo_arena *a, size_t need)
{
	size_t size = need > MO_ARENA_CHUNK ? need : MO_ARENA_CHUNK;
	struct mo_chunk *c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->used = 0;
	c->size = size;
	/* a large block goes behind the head so the head keeps its space */
	if (need > MO_ARENA_CHUNK / 2 && a->head) {
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
	return c;
}

void *mo_arena_alloc(mo_arena *a, size_t size)
{
	if (!a || size > SIZE_MAX - MO_ARENA_ALIGN)
		return NULL;
	size_t rounded = (size + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	if (rounded == 0)
		rounded = MO_ARENA_ALIGN;
	struct mo_chunk *c = a->head;
	if (!c || c->size - c->used < rounded) {
		c = mo_arena_grow(a, rounded);
		if (!c)
			return NULL;
	}
	void *p = c->data + c->used;
	c->used += rounded;
	memset(p, 0, size);
	return p;
}

void *mo_arena_alloc_raw(mo_arena *a, size_t size)
{
	if (!a || size > SIZE_MAX - MO_ARENA_ALIGN)
		return NULL;
	size_t rounded = (size + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	if (rounded == 0)
		rounded = MO_ARENA_ALIGN;
	struct mo_chunk *c = a->head;
	if (!c || c->size - c->used < rounded) {
		c = mo_arena_grow(a, rounded);
		if (!c)
			return NULL;
	}
	void *p = c->data + c->used;
	c->used += rounded;
	return p;
}

char *mo_arena_concat(mo_arena *a, const char *const *parts, const size_t *lens, size_t n)
{
	size_t total = 1;
	for (size_t i = 0; i < n; i++) {
		if (lens[i] > SIZE_MAX - total)
			return NULL;
		total += lens[i];
	}
	char *p = mo_arena_alloc_raw(a, total), *w = p;
	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (lens[i])
			memcpy(w, parts[i], lens[i]);
		w += lens[i];
	}
	*w = '\0';
	return p;
}

char *mo_arena_strndup(mo_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = mo_arena_alloc_raw(a, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *mo_arena_strdup(mo_arena *a, const char *s)
{
	return mo_arena_strndup(a, s, strlen(s));
}

char *mo_arena_printf(mo_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = mo_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
