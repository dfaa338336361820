/* Loaded preset models, shared read-only between requests (memopt.h: a
 * loaded model is a const handle that threads may share). Loading a preset
 * costs about as much as validating a config, so the server keeps the
 * (preset, devices) pairs it used last: at most max_entries, the least
 * recently used one evicted to make room. A request holds a reference to
 * the entry it borrowed (mo_api_model_release), so an entry evicted while
 * a request still reads its model is freed by the last release. */
#include "api_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MO_API_CACHE_SLOTS 64

struct mo_api_model_ref {
	mo_api_model_cache *cache;
	char *preset;
	int64_t devices;
	mo_model *model;
	uint64_t used; /* the cache's tick at the last lookup */
	size_t refs;   /* requests holding it, under the cache's lock */
	int in_cache;  /* 0: evicted, or never stored (freed at refs 0) */
};

struct mo_api_model_cache {
	pthread_mutex_t lock;
	mo_api_model_ref **slot;
	size_t n, max;
	uint64_t tick;
	mo_api_cache_stats stats;
};

int mo_api_cache_new_bounded(mo_api_model_cache **out, size_t max_entries)
{
	mo_api_model_cache *c = calloc(1, sizeof *c);

	*out = NULL;
	if (!c || max_entries == 0)
		goto free_cache;
	c->slot = calloc(max_entries, sizeof *c->slot);
	if (!c->slot)
		goto free_cache;
	if (pthread_mutex_init(&c->lock, NULL) != 0)
		goto free_slots;
	c->max = max_entries;
	*out = c;
	return 0;
free_slots:
	free(c->slot);
free_cache:
	free(c);
	return -1;
}

int mo_api_cache_new(mo_api_model_cache **out)
{
	return mo_api_cache_new_bounded(out, MO_API_CACHE_SLOTS);
}

static void mo_api_ref_free(mo_api_model_ref *r)
{
	mo_model_free(r->model);
	free(r->preset);
	free(r);
}

/* Every request has released its references before the cache is freed. */
void mo_api_cache_free(mo_api_model_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		mo_api_ref_free(c->slot[i]);
	pthread_mutex_destroy(&c->lock);
	free(c->slot);
	free(c);
}

void mo_api_cache_counters(mo_api_model_cache *c, mo_api_cache_stats *s)
{
	memset(s, 0, sizeof *s);
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	*s = c->stats;
	s->entries = c->n;
	pthread_mutex_unlock(&c->lock);
}

/* The entry of the pair, referenced, or NULL. Under the lock. */
static mo_api_model_ref *mo_api_cache_find(mo_api_model_cache *c,
					   const char *preset, int64_t devices)
{
	for (size_t i = 0; i < c->n; i++) {
		mo_api_model_ref *r = c->slot[i];

		if (r->devices == devices && strcmp(r->preset, preset) == 0) {
			r->used = ++c->tick;
			r->refs++;
			c->stats.hits++;
			return r;
		}
	}
	return NULL;
}

/* Takes the least recently used entry out (freed now, or by its last
 * release). Under the lock; the cache is full. */
static void mo_api_cache_evict(mo_api_model_cache *c)
{
	size_t old = 0;

	for (size_t i = 1; i < c->n; i++)
		if (c->slot[i]->used < c->slot[old]->used)
			old = i;
	mo_api_model_ref *r = c->slot[old];
	c->slot[old] = c->slot[--c->n];
	c->stats.evictions++;
	r->in_cache = 0;
	if (r->refs == 0)
		mo_api_ref_free(r);
}

/* Stores r (referenced once), or hands out the entry another thread stored
 * for the same pair while r was loading (r is then freed). */
static mo_api_model_ref *mo_api_cache_put(mo_api_model_cache *c,
					  mo_api_model_ref *r)
{
	pthread_mutex_lock(&c->lock);
	mo_api_model_ref *found = mo_api_cache_find(c, r->preset, r->devices);
	if (!found) {
		if (c->n == c->max)
			mo_api_cache_evict(c);
		r->used = ++c->tick;
		r->in_cache = 1;
		c->slot[c->n++] = r;
		c->stats.loads++;
	}
	pthread_mutex_unlock(&c->lock);
	if (!found)
		return r;
	mo_api_ref_free(r);
	return found;
}

/* A new entry holding the loaded preset, referenced once; NULL with err
 * filled. */
static mo_api_model_ref *mo_api_ref_load(mo_api_model_cache *c,
					 const char *preset, int64_t devices,
					 mo_error *err)
{
	mo_api_model_ref *r = calloc(1, sizeof *r);

	if (!r || !(r->preset = strdup(preset))) {
		free(r);
		*err =
		    (mo_error){.code = MO_ERR_NOMEM, .text = "out of memory"};
		return NULL;
	}
	r->cache = c;
	r->devices = devices;
	r->refs = 1;
	if (mo_model_preset(&r->model, preset, err) != 0) {
		mo_api_ref_free(r);
		return NULL;
	}
	if (devices > 0)
		mo_model_set_devices(r->model, devices);
	return r;
}

const mo_model *mo_api_cache_get(mo_api_model_cache *c, const char *preset,
				 int64_t devices, mo_api_model_ref **ref,
				 mo_error *err)
{
	mo_api_model_ref *r;

	pthread_mutex_lock(&c->lock);
	r = mo_api_cache_find(c, preset, devices);
	pthread_mutex_unlock(&c->lock);
	if (!r) {
		r = mo_api_ref_load(c, preset, devices, err);
		if (r)
			r = mo_api_cache_put(c, r);
	}
	*ref = r;
	return r ? r->model : NULL;
}

void mo_api_model_release(mo_api_model_ref *r)
{
	int gone;

	if (!r)
		return;
	pthread_mutex_lock(&r->cache->lock);
	gone = --r->refs == 0 && !r->in_cache;
	pthread_mutex_unlock(&r->cache->lock);
	if (gone)
		mo_api_ref_free(r);
}
