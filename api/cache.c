/* Loaded preset models, shared read-only between requests (memopt.h: a
 * loaded model is a const handle that threads may share). Loading a preset
 * costs about as much as validating a config, so the server keeps each
 * (preset, devices) pair it has seen. Entries are never evicted while the
 * cache lives, so a borrowed model stays valid until mo_api_cache_free.
 * A slot is written once, under the lock, before the count that publishes
 * it (release): lookups read the count (acquire) and the slots below it
 * without the lock, which every request took before. */
#include "api_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MO_API_CACHE_SLOTS 64

typedef struct mo_api_cache_slot {
	char *preset;
	int64_t devices;
	mo_model *model;
} mo_api_cache_slot;

struct mo_api_model_cache {
	pthread_mutex_t lock;  /* writers */
	atomic_size_t n;       /* published slots */
	mo_api_cache_slot slot[MO_API_CACHE_SLOTS];
};

int mo_api_cache_new(mo_api_model_cache **out)
{
	mo_api_model_cache *c = calloc(1, sizeof *c);

	*out = NULL;
	if (!c)
		return -1;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return -1;
	}
	atomic_init(&c->n, 0);
	*out = c;
	return 0;
}

void mo_api_cache_free(mo_api_model_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < atomic_load(&c->n); i++) {
		mo_model_free(c->slot[i].model);
		free(c->slot[i].preset);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The model stored for the pair, or NULL; no lock (see the top). */
static const mo_model *mo_api_cache_find(mo_api_model_cache *c,
					 const char *preset, int64_t devices)
{
	size_t n = atomic_load_explicit(&c->n, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (c->slot[i].devices == devices && strcmp(c->slot[i].preset, preset) == 0)
			return c->slot[i].model;
	return NULL;
}

/* Stores m (or frees it when another thread stored the same pair first,
 * or the cache is full and *owned is set for the caller to free it). */
static const mo_model *mo_api_cache_put(mo_api_model_cache *c, const char *preset,
					int64_t devices, mo_model *m, mo_model **owned)
{
	const mo_model *found;
	char *name = strdup(preset);

	*owned = NULL;
	pthread_mutex_lock(&c->lock);
	found = mo_api_cache_find(c, preset, devices);
	size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
	if (!found && name && n < MO_API_CACHE_SLOTS) {
		c->slot[n] = (mo_api_cache_slot){name, devices, m};
		atomic_store_explicit(&c->n, n + 1, memory_order_release);
		name = NULL;
		found = m;
		m = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	free(name);
	if (found && m)
		mo_model_free(m); /* lost the race: use the stored one */
	else if (m)
		*owned = m;       /* no room: the caller's own copy */
	return found ? found : *owned;
}

const mo_model *mo_api_cache_get(mo_api_model_cache *c, const char *preset,
				 int64_t devices, mo_model **owned,
				 mo_error *err)
{
	const mo_model *hit = mo_api_cache_find(c, preset, devices);
	mo_model *m = NULL;

	*owned = NULL;
	if (hit)
		return hit;
	if (mo_model_preset(&m, preset, err) != 0)
		return NULL;
	if (devices > 0)
		mo_model_set_devices(m, devices);
	return mo_api_cache_put(c, preset, devices, m, owned);
}
