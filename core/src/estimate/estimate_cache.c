/* What the estimator learns about a model, kept with the model for the next
 * estimate: the tensor graph of each layer type, the loss region and the
 * embedding (they depend on the model alone), and a bounded memo of plan
 * results (a layer type's kept / swapped / recomputed bytes under one set of
 * per-path actions). A server estimating the same preset for many requests,
 * the web UI re-estimating after each slider step and the planner's
 * re-estimates all find their layer types already simulated.
 *
 * Validity: the cache records the dimensions, framework and layout it was
 * built for; an estimate whose model no longer matches (the device count or
 * a shape changed) builds a new one, which replaces it. Lifetime: estimates
 * borrow the graphs and hold a reference; the model holds one; the last
 * release frees. Threads: the model's estimator lock guards which cache the model
 * holds, the cache's own lock guards its memo; graphs never change once
 * built. */
#include "estimate/estimate_internal.h"

#include <stdlib.h>
#include <string.h>

/* The memo stops growing here and starts over (every estimate copies what
 * it takes from the memo, so clearing it never pulls memory from under
 * one). */
#define MO_MEMO_MAX_BYTES (8u << 20)
#define MO_MEMO_SLOTS 4096 /* a power of two; at most half used */

typedef struct mo_memo_entry {
	uint64_t hash;
	size_t type, np;
	unsigned char flags; /* full | swapped << 1 | no_recompute << 2 */
	mo_action_kind *act; /* np, or NULL */
	mo_est_keep k;
	unsigned char *marks; /* n_t of the type's graph */
} mo_memo_entry;

struct mo_est_cache {
	int refs; /* atomic */
	mo_arena *a;
	/* what it was built for */
	mo_est_dims dims;
	const mo_framework *fw;
	uint64_t layout_hash;
	size_t n_types;
	/* the graphs */
	mo_est_graph *types, head, embed;
	/* what the graphs' structure was built for besides the layout hash
	 * (per type: moe | mtp << 1, the compress ratio) */
	unsigned char *type_kind;
	int64_t *type_ratio;
	bool mla, hybrid;
	/* the cache whose arena holds the graphs' names, index lists and
	 * rows, when these were rescaled from it (a reference), else NULL */
	struct mo_est_cache *owner;
	/* the memo */
	pthread_mutex_t lock;
	mo_arena *memo_a;
	size_t memo_bytes, memo_n;
	mo_memo_entry *slots[MO_MEMO_SLOTS];
};

static bool dims_same(const mo_est_dims *a, const mo_est_dims *b)
{
	if (a->n != b->n || a->cond != b->cond || strcmp(a->cdtype, b->cdtype) != 0 ||
	    strcmp(a->pdtype, b->pdtype) != 0)
		return false;
	for (size_t i = 0; i < a->n; i++) /* names are literals: the same address */
		if (a->vals[i] != b->vals[i] ||
		    (a->names[i] != b->names[i] && strcmp(a->names[i], b->names[i]) != 0))
			return false;
	return true;
}

static bool cache_fits(const mo_est_cache *c, const mo_model *m, const mo_framework *fw,
			  const mo_est_dims *d)
{
	return c->fw == fw && c->layout_hash == m->layout_hash && c->n_types == m->n_types &&
	       dims_same(&c->dims, d);
}

void est_cache_release(mo_est_cache *c);

static void cache_free(mo_est_cache *c)
{
	est_cache_release(c->owner);
	pthread_mutex_destroy(&c->lock);
	arena_free(c->memo_a);
	arena_free(c->a);
	free(c);
}

void est_cache_release(mo_est_cache *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		cache_free(c);
}

/* True when prev's graphs have the structure a build for (m, fw, d) would
 * give: the same framework, layer types, conditions, dtypes and dimension
 * names (only the dimensions' values differ), so that rescaling them under
 * d gives what building does. */
static bool cache_same_structure(const mo_est_cache *prev, const mo_model *m,
				 const mo_framework *fw, const mo_est_dims *d)
{
	const mo_est_dims *p = &prev->dims;
	if (prev->fw != fw || prev->layout_hash != m->layout_hash || prev->n_types != m->n_types ||
	    prev->mla != m->multi_latent_attention || prev->hybrid != m->dsv4_hybrid ||
	    p->cond != d->cond || p->n != d->n || strcmp(p->cdtype, d->cdtype) != 0 ||
	    strcmp(p->pdtype, d->pdtype) != 0)
		return false;
	/* a tensor keeps the compute dtype's name for "c": one named like a
	 * table's dtype token would read differently */
	if (strcmp(d->cdtype, "c") == 0 || strcmp(d->cdtype, "p") == 0)
		return false;
	for (size_t i = 0; i < d->n; i++)
		if (p->names[i] != d->names[i] && strcmp(p->names[i], d->names[i]) != 0)
			return false;
	for (size_t t = 0; t < m->n_types; t++)
		if (prev->type_kind[t] != (unsigned char)(m->types[t].moe | m->types[t].mtp << 1) ||
		    prev->type_ratio[t] != m->types[t].compress_ratio)
			return false;
	return true;
}

/* prev's graphs rescaled under d into c (0), or -1 (build instead). */
static int cache_rescale(mo_est_cache *c, const mo_est_cache *prev, const mo_model *m,
			 const mo_framework *fw)
{
	for (size_t t = 0; t < m->n_types; t++)
		if (est_graph_rescale(&c->types[t], c->a, fw, m, &c->dims, t, &prev->types[t]) != 0)
			return -1;
	if (est_graph_rescale(&c->head, c->a, fw, m, &c->dims, SIZE_MAX, &prev->head) != 0 ||
	    est_graph_rescale(&c->embed, c->a, fw, m, &c->dims, SIZE_MAX, &prev->embed) != 0)
		return -1;
	mo_est_cache *owner = prev->owner ? prev->owner : (mo_est_cache *)prev;
	__atomic_add_fetch(&owner->refs, 1, __ATOMIC_ACQ_REL);
	c->owner = owner;
	return 0;
}

/* Builds the graphs for (m, fw, d); prev (the model's cache before, or
 * NULL): when its graphs have the same structure, they are rescaled under
 * d instead of built from the op tables again (a layout search changes
 * only the numbers: TP, CP, EP, the micro-batch). */
static mo_est_cache *cache_build(const mo_model *m, const mo_framework *fw,
				    const mo_est_dims *d, const mo_est_cache *prev, mo_error *err)
{
	mo_est_cache *c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	c->refs = 1;
	c->a = arena_new();
	c->memo_a = arena_new();
	pthread_mutex_init(&c->lock, NULL);
	c->dims = *d;
	/* the dtype names live in the model: keep copies */
	c->dims.cdtype = c->a ? arena_strdup(c->a, d->cdtype) : NULL;
	c->dims.pdtype = c->a ? arena_strdup(c->a, d->pdtype) : NULL;
	c->fw = fw;
	c->layout_hash = m->layout_hash;
	c->n_types = m->n_types;
	c->types = c->a ? arena_alloc(c->a, (m->n_types + 1) * sizeof(*c->types)) : NULL;
	c->type_kind = c->a ? arena_alloc(c->a, m->n_types + 1) : NULL;
	c->type_ratio = c->a ? arena_alloc(c->a, (m->n_types + 1) * sizeof(*c->type_ratio)) : NULL;
	if (!c->memo_a || !c->types || !c->dims.cdtype || !c->dims.pdtype || !c->type_kind ||
	    !c->type_ratio)
		goto nomem;
	c->mla = m->multi_latent_attention;
	c->hybrid = m->dsv4_hybrid;
	for (size_t t = 0; t < m->n_types; t++) {
		c->type_kind[t] = (unsigned char)(m->types[t].moe | m->types[t].mtp << 1);
		c->type_ratio[t] = m->types[t].compress_ratio;
	}
	if (prev && cache_same_structure(prev, m, fw, d) && cache_rescale(c, prev, m, fw) == 0)
		return c;
	for (size_t t = 0; t < m->n_types; t++)
		if (est_graph_build(&c->types[t], c->a, fw, m, &c->dims, t, 0, err) != 0)
			goto fail;
	if (est_graph_build(&c->head, c->a, fw, m, &c->dims, SIZE_MAX, MO_BLK_HEAD, err) != 0 ||
	    est_graph_build(&c->embed, c->a, fw, m, &c->dims, SIZE_MAX, MO_BLK_EMBED, err) != 0)
		goto fail;
	return c;
nomem:
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
fail:
	if (c)
		cache_free(c);
	return NULL;
}

static void est_cache_destroy(void *c)
{
	est_cache_release(c);
}

mo_est_cache *est_cache_get(const mo_model *m, const mo_framework *fw, const mo_est_dims *d,
			       mo_error *err)
{
	pthread_mutex_t *lock = model_estimator_lock(m);
	mo_attachment *slot = model_estimator_slot(m);
	pthread_mutex_lock(lock);
	mo_est_cache *c = slot->data;
	if (!c || !cache_fits(c, m, fw, d)) {
		/* built under the lock: concurrent first estimates build it once */
		mo_est_cache *n = cache_build(m, fw, d, c, err);
		if (!n) {
			pthread_mutex_unlock(lock);
			return NULL;
		}
		attachment_clear(slot);
		*slot = (mo_attachment){.data = n, .destroy = est_cache_destroy};
		c = n;
	}
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(lock);
	return c;
}

const mo_est_graph *est_cache_graph(const mo_est_cache *c, size_t type)
{
	return &c->types[type];
}

const mo_est_graph *est_cache_head(const mo_est_cache *c)
{
	return &c->head;
}

const mo_est_graph *est_cache_embed(const mo_est_cache *c)
{
	return &c->embed;
}

/* ---- the memo of plan results ------------------------------------------------ */

static bool memo_same(const mo_memo_entry *x, const mo_memo_key *key)
{
	return x->hash == key->hash && x->type == key->type && x->np == key->np &&
	       x->flags == key->flags &&
	       (x->act == key->act ||
		(x->act && key->act && !memcmp(x->act, key->act, key->np * sizeof(*key->act))));
}

bool est_memo_find(mo_est_cache *c, const mo_memo_key *key, mo_est_keep *k,
		      unsigned char *marks, size_t n_t)
{
	bool hit = false;
	pthread_mutex_lock(&c->lock);
	for (size_t i = key->hash & (MO_MEMO_SLOTS - 1); c->slots[i];
	     i = (i + 1) & (MO_MEMO_SLOTS - 1)) {
		const mo_memo_entry *x = c->slots[i];
		if (memo_same(x, key)) {
			*k = x->k;
			memcpy(marks, x->marks, n_t);
			hit = true;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

static void memo_clear(mo_est_cache *c)
{
	mo_arena *a = arena_new();
	if (!a)
		return; /* keep the full memo: it only stops growing */
	arena_free(c->memo_a);
	c->memo_a = a;
	memset(c->slots, 0, sizeof c->slots);
	c->memo_n = c->memo_bytes = 0;
}

void est_memo_put(mo_est_cache *c, const mo_memo_key *key, const mo_est_keep *k,
		     const unsigned char *marks, size_t n_t)
{
	size_t need = sizeof(mo_memo_entry) + key->np * sizeof(*key->act) + n_t;
	pthread_mutex_lock(&c->lock);
	if (c->memo_n >= MO_MEMO_SLOTS / 2 || c->memo_bytes + need > MO_MEMO_MAX_BYTES)
		memo_clear(c);
	size_t i = key->hash & (MO_MEMO_SLOTS - 1);
	for (; c->slots[i]; i = (i + 1) & (MO_MEMO_SLOTS - 1))
		if (memo_same(c->slots[i], key))
			goto out; /* another thread put it first */
	if (c->memo_n >= MO_MEMO_SLOTS / 2)
		goto out; /* the clear above failed */
	mo_memo_entry *x = arena_alloc(c->memo_a, sizeof(*x));
	unsigned char *mk = x ? arena_alloc_raw(c->memo_a, n_t + 1) : NULL;
	mo_action_kind *act = key->act && mk ? arena_alloc_raw(c->memo_a, key->np *
									  sizeof(*act) + 1)
					     : NULL;
	if (!mk || (key->act && !act))
		goto out; /* a memo that cannot grow is still correct */
	*x = (mo_memo_entry){.hash = key->hash, .type = key->type, .np = key->np,
			     .flags = key->flags, .act = act, .k = *k, .marks = mk};
	memcpy(mk, marks, n_t);
	if (act)
		memcpy(act, key->act, key->np * sizeof(*act));
	c->slots[i] = x;
	c->memo_n++;
	c->memo_bytes += need;
out:
	pthread_mutex_unlock(&c->lock);
}
