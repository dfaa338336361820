/* The response cache: POST answers are a pure function of the route, the
 * Content-Type and the body (presets are built in, limits fixed for the
 * server's life, nothing reads the clock), so a 200 answer can be replayed
 * for an identical request. Bounded (entries and bytes), least recently
 * used first out, thread-safe: one mutex over the table and the LRU list;
 * an entry is immutable and reference-counted, so a hit copies its body
 * outside the lock while another thread may evict it.
 *
 * The key is SipHash-2-4 (a random key per cache: no precomputed flooding)
 * of the route, content type and body; a hit also compares them byte for
 * byte, so a hash collision can only cost a miss, never a wrong answer. */
#include "api_internal.h"

#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

typedef struct mo_response_cache_entry {
	struct mo_response_cache_entry *chain;	 /* next in the hash bucket */
	struct mo_response_cache_entry *prev, *next; /* LRU list, most recent first */
	atomic_uint refs;		 /* the cache's + each reader's */
	uint64_t hash;
	size_t size; /* bytes charged to the cache */
	int route, status;
	const char *content_type; /* the answer's (a static string) */
	char *ctype;		  /* the request's, NUL-terminated */
	char *body;		  /* the request's */
	size_t body_len;
	char *answer; /* the response body, NUL-terminated */
	size_t answer_len;
} mo_response_cache_entry;

struct mo_api_rcache {
	pthread_mutex_t lock;
	mo_response_cache_entry **table;
	size_t mask; /* table size - 1 (a power of two) */
	mo_response_cache_entry *head, *tail;
	size_t entries, bytes;
	size_t max_entries, max_bytes;
	uint64_t k0, k1; /* SipHash key */
	atomic_ullong hits, misses, stores, evictions;
};

/* ---- SipHash-2-4 (Aumasson and Bernstein), over several pieces ----------
 * Its additions and rotations are modulo 2^64 by design (MO_WRAPS). */

typedef struct mo_siphash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail; /* pending bytes, little-endian */
	size_t ntail, total;
} mo_siphash;

#define MO_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static MO_WRAPS void mo_siphash_round(mo_siphash *s)
{
	s->v0 += s->v1;
	s->v1 = MO_ROTL(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = MO_ROTL(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = MO_ROTL(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = MO_ROTL(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = MO_ROTL(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = MO_ROTL(s->v2, 32);
}

static MO_WRAPS void mo_siphash_init(mo_siphash *s, uint64_t k0, uint64_t k1)
{
	s->v0 = k0 ^ 0x736f6d6570736575ull;
	s->v1 = k1 ^ 0x646f72616e646f6dull;
	s->v2 = k0 ^ 0x6c7967656e657261ull;
	s->v3 = k1 ^ 0x7465646279746573ull;
	s->tail = 0;
	s->ntail = 0;
	s->total = 0;
}

static MO_WRAPS void mo_siphash_block(mo_siphash *s, uint64_t m)
{
	s->v3 ^= m;
	mo_siphash_round(s);
	mo_siphash_round(s);
	s->v0 ^= m;
}

static MO_WRAPS void mo_siphash_update(mo_siphash *s, const void *data,
				       size_t len)
{
	const unsigned char *p = data;

	s->total += len;
	while (len > 0 && s->ntail > 0) { /* finish a pending block */
		s->tail |= (uint64_t)*p++ << (8 * s->ntail);
		len--;
		if (++s->ntail == 8) {
			mo_siphash_block(s, s->tail);
			s->tail = 0;
			s->ntail = 0;
		}
	}
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t m;

		memcpy(&m, p, 8); /* one load; the bytes read little-endian */
		mo_siphash_block(s, le64toh(m));
	}
	for (; len > 0; len--)
		s->tail |= (uint64_t)*p++ << (8 * s->ntail++);
}

static MO_WRAPS uint64_t mo_siphash_final(mo_siphash *s)
{
	mo_siphash_block(s, s->tail | ((uint64_t)(s->total & 0xff) << 56));
	s->v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		mo_siphash_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* ---- the cache ---------------------------------------------------------- */

/* The SipHash key (the fallback mixes the clock modulo 2^64: MO_WRAPS). */
static MO_WRAPS void mo_response_cache_key(mo_api_rcache *c)
{
	uint64_t k[2];

	if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
		/* no entropy yet: still a per-process key (collisions stay
		 * harmless, the compare catches them) */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		k[0] = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^
		       (uint64_t)(uintptr_t)c;
		k[1] = (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&k;
	}
	c->k0 = k[0];
	c->k1 = k[1];
}

int mo_api_rcache_new(mo_api_rcache **out, size_t max_entries, size_t max_bytes)
{
	mo_api_rcache *c;
	size_t n = 16;

	*out = NULL;
	if (max_entries == 0 || max_bytes == 0)
		return 0; /* disabled */
	c = calloc(1, sizeof *c);
	while (n < max_entries && n < ((size_t)1 << 24))
		n *= 2;
	if (c)
		c->table = calloc(n, sizeof *c->table);
	if (!c || !c->table || pthread_mutex_init(&c->lock, NULL) != 0) {
		if (c)
			free(c->table);
		free(c);
		return -1;
	}
	c->mask = n - 1;
	c->max_entries = max_entries;
	c->max_bytes = max_bytes;
	mo_response_cache_key(c);
	*out = c;
	return 0;
}

static void mo_response_cache_unref(mo_response_cache_entry *e)
{
	if (atomic_fetch_sub(&e->refs, 1) == 1)
		free(e); /* one block: the strings live after the struct */
}

void mo_api_rcache_free(mo_api_rcache *c)
{
	mo_response_cache_entry *e, *next;

	if (!c)
		return;
	for (e = c->head; e; e = next) {
		next = e->next;
		mo_response_cache_unref(e);
	}
	pthread_mutex_destroy(&c->lock);
	free(c->table);
	free(c);
}

static uint64_t mo_response_cache_hash(const mo_api_rcache *c, int route, const char *ctype,
			   const char *body, size_t len)
{
	mo_siphash s;
	unsigned char r = (unsigned char)route;
	size_t clen = strlen(ctype);

	mo_siphash_init(&s, c->k0, c->k1);
	mo_siphash_update(&s, &r, 1);
	mo_siphash_update(&s, &clen, sizeof clen); /* no ambiguity at the seam */
	mo_siphash_update(&s, ctype, clen);
	mo_siphash_update(&s, body, len);
	return mo_siphash_final(&s);
}

static int mo_response_cache_same(const mo_response_cache_entry *e, uint64_t h, int route,
		      const char *ctype, const char *body, size_t len)
{
	return e->hash == h && e->route == route && e->body_len == len &&
	       strcmp(e->ctype, ctype) == 0 && memcmp(e->body, body, len) == 0;
}

/* Under the lock. */
static mo_response_cache_entry *mo_response_cache_find(mo_api_rcache *c, uint64_t h, int route,
			       const char *ctype, const char *body, size_t len)
{
	mo_response_cache_entry *e = c->table[h & c->mask];

	while (e && !mo_response_cache_same(e, h, route, ctype, body, len))
		e = e->chain;
	return e;
}

static void mo_response_cache_unlink(mo_api_rcache *c, mo_response_cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void mo_response_cache_push_front(mo_api_rcache *c, mo_response_cache_entry *e)
{
	e->next = c->head;
	e->prev = NULL;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

int mo_api_rcache_get(mo_api_rcache *c, mo_api_response *out, int route,
		      const char *ctype, const char *body, size_t len)
{
	uint64_t h = mo_response_cache_hash(c, route, ctype, body, len);
	mo_response_cache_entry *e;

	pthread_mutex_lock(&c->lock);
	e = mo_response_cache_find(c, h, route, ctype, body, len);
	if (e) {
		atomic_fetch_add(&e->refs, 1);
		mo_response_cache_unlink(c, e);
		mo_response_cache_push_front(c, e);
	}
	pthread_mutex_unlock(&c->lock);
	if (!e) {
		atomic_fetch_add_explicit(&c->misses, 1, memory_order_relaxed);
		return 0;
	}
	/* copied outside the lock: the entry is immutable and our reference
	 * keeps it alive even if it is evicted meanwhile */
	out->body = malloc(e->answer_len + 1);
	if (out->body) {
		memcpy(out->body, e->answer, e->answer_len + 1);
		out->len = e->answer_len;
		out->status = e->status;
		out->content_type = e->content_type;
		out->route = (mo_api_route_id)e->route;
		out->cached = 1;
	}
	mo_response_cache_unref(e);
	if (!out->body)
		return 0; /* out of memory: answered the slow way */
	atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
	return 1;
}

static mo_response_cache_entry *mo_response_cache_entry_new(uint64_t h, int route,
			const char *ctype, 
				    const char *body, size_t len,
				    const mo_api_response *res)
{
	size_t clen = strlen(ctype);
	size_t size = sizeof(mo_response_cache_entry) + clen + 1 + len + res->len + 1;
	mo_response_cache_entry *e = malloc(size);
	char *p;

	if (!e)
		return NULL;
	memset(e, 0, sizeof *e);
	atomic_init(&e->refs, 1);
	e->hash = h;
	e->size = size;
	e->route = route;
	e->status = res->status;
	e->content_type = res->content_type;
	p = (char *)(e + 1);
	e->ctype = memcpy(p, ctype, clen + 1);
	p += clen + 1;
	e->body = len ? memcpy(p, body, len) : p;
	e->body_len = len;
	p += len;
	e->answer = memcpy(p, res->body, res->len);
	e->answer[res->len] = '\0';
	e->answer_len = res->len;
	return e;
}

/* Under the lock: drops least recently used entries until e fits. */
static void mo_response_cache_evict(mo_api_rcache *c, size_t need)
{
	while (c->tail && (c->entries + 1 > c->max_entries ||
			   c->bytes + need > c->max_bytes)) {
		mo_response_cache_entry *v = c->tail, **pp = &c->table[v->hash & c->mask];

		while (*pp != v)
			pp = &(*pp)->chain;
		*pp = v->chain;
		mo_response_cache_unlink(c, v);
		c->entries--;
		c->bytes -= v->size;
		atomic_fetch_add_explicit(&c->evictions, 1,
					  memory_order_relaxed);
		mo_response_cache_unref(v);
	}
}

void mo_api_rcache_put(mo_api_rcache *c, int route, const char *ctype,
		       const char *body, size_t len, const mo_api_response *res)
{
	uint64_t h;
	mo_response_cache_entry *e;

	/* only full answers, and none so big it would flush a sixteenth of
	 * the cache on its own */
	if (res->status != 200 || !res->body || res->cached ||
	    len + res->len > c->max_bytes / 16)
		return;
	h = mo_response_cache_hash(c, route, ctype, body, len);
	e = mo_response_cache_entry_new(h, route, ctype, body, len, res);
	if (!e)
		return;
	pthread_mutex_lock(&c->lock);
	if (mo_response_cache_find(c, h, route, ctype, body, len)) {
		pthread_mutex_unlock(&c->lock); /* another thread stored it */
		mo_response_cache_unref(e);
		return;
	}
	mo_response_cache_evict(c, e->size);
	e->chain = c->table[h & c->mask];
	c->table[h & c->mask] = e;
	mo_response_cache_push_front(c, e);
	c->entries++;
	c->bytes += e->size;
	pthread_mutex_unlock(&c->lock);
	atomic_fetch_add_explicit(&c->stores, 1, memory_order_relaxed);
}

void mo_api_rcache_counters(mo_api_rcache *c, mo_api_rcache_stats *s)
{
	memset(s, 0, sizeof *s);
	if (!c)
		return;
	s->hits = atomic_load_explicit(&c->hits, memory_order_relaxed);
	s->misses = atomic_load_explicit(&c->misses, memory_order_relaxed);
	s->stores = atomic_load_explicit(&c->stores, memory_order_relaxed);
	s->evictions =
	    atomic_load_explicit(&c->evictions, memory_order_relaxed);
	pthread_mutex_lock(&c->lock);
	s->entries = c->entries;
	s->bytes = c->bytes;
	pthread_mutex_unlock(&c->lock);
	s->max_entries = c->max_entries;
	s->max_bytes = c->max_bytes;
}
