/* Bump allocator: everything a parsed document, model or plan owns lives in
 * one arena and is freed at once (nginx pools). */
#include "util/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_ARENA_CHUNK 16384
/* struct mo_chunk, struct mo_arena and MO_ARENA_ALIGN are in internal.h
 * (the inline arena_alloc_raw). */

/* Freed standard chunks wait here for the next arena (at most
 * MO_POOL_MAX, 1 MiB): a process parsing request after request reuses warm
 * memory instead of handing it back to the system (glibc trims the heap
 * top) and faulting it in again, which cost more than the parsing itself.
 * Not under AddressSanitizer, which should see every free. */
#if defined(__SANITIZE_ADDRESS__)
#define MO_POOL_MAX 0
#else
#define MO_POOL_MAX 64
#endif

#if MO_POOL_MAX
static struct {
	pthread_mutex_t lock;
	struct mo_chunk *head;
	size_t n;
} mo_pool = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static struct mo_chunk *pool_take(void)
{
	pthread_mutex_lock(&mo_pool.lock);
	struct mo_chunk *c = mo_pool.head;
	if (c) {
		mo_pool.head = c->next;
		mo_pool.n--;
	}
	pthread_mutex_unlock(&mo_pool.lock);
	return c;
}

/* Keeps c for reuse when it is a standard chunk and the pool has room. */
static bool pool_give(struct mo_chunk *c)
{
	if (c->size != MO_ARENA_CHUNK)
		return false;
	bool kept = false;
	pthread_mutex_lock(&mo_pool.lock);
	if (mo_pool.n < MO_POOL_MAX) {
		c->next = mo_pool.head;
		mo_pool.head = c;
		mo_pool.n++;
		kept = true;
	}
	pthread_mutex_unlock(&mo_pool.lock);
	return kept;
}
#else
static struct mo_chunk *pool_take(void)
{
	return NULL;
}

static bool pool_give(struct mo_chunk *c)
{
	(void)c;
	return false;
}
#endif

mo_arena *arena_new(void)
{
	return calloc(1, sizeof(mo_arena));
}

void arena_free(mo_arena *a)
{
	if (!a)
		return;
	struct mo_chunk *c = a->head;
	while (c) {
		struct mo_chunk *next = c->next;
		if (!pool_give(c))
			free(c);
		c = next;
	}
	free(a);
}

static struct mo_chunk *arena_grow(mo_arena *a, size_t need)
{
	size_t size = need > MO_ARENA_CHUNK ? need : MO_ARENA_CHUNK;
	struct mo_chunk *c = size == MO_ARENA_CHUNK ? pool_take() : NULL;
	if (!c)
		c = malloc(sizeof(*c) + size);
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

void *arena_alloc_slow(mo_arena *a, size_t size)
{
	if (!a || size > SIZE_MAX - MO_ARENA_ALIGN)
		return NULL;
	size_t rounded = (size + MO_ARENA_ALIGN - 1) & ~(size_t)(MO_ARENA_ALIGN - 1);
	if (rounded == 0)
		rounded = MO_ARENA_ALIGN;
	struct mo_chunk *c = a->head;
	if (!c || c->size - c->used < rounded) {
		c = arena_grow(a, rounded);
		if (!c)
			return NULL;
	}
	void *p = c->data + c->used;
	c->used += rounded;
	return p;
}

char *arena_concat(mo_arena *a, const char *const *parts, const size_t *lens, size_t n)
{
	size_t total = 1;
	for (size_t i = 0; i < n; i++) {
		if (lens[i] > SIZE_MAX - total)
			return NULL;
		total += lens[i];
	}
	char *p = arena_alloc_raw(a, total), *w = p;
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

char *arena_indexed(mo_arena *a, const char *name, size_t i)
{
	char num[24];
	size_t n = sizeof num, len = strlen(name);
	num[--n] = ']';
	do
		num[--n] = (char)('0' + i % 10);
	while ((i /= 10) != 0);
	num[--n] = '[';
	size_t k = sizeof num - n;
	char *p = len < SIZE_MAX - k - 1 ? arena_alloc_raw(a, len + k + 1) : NULL;
	if (!p)
		return NULL;
	memcpy(p, name, len);
	memcpy(p + len, num + n, k);
	p[len + k] = '\0';
	return p;
}

char *arena_strndup(mo_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = arena_alloc_raw(a, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(mo_arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(mo_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
