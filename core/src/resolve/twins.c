/* Segment twins: what decides a segment's actions is its layer type, its
 * full / layer-swap state and the set of patterns active on it. Segments
 * with the same key get the same actions, so a later one shares the
 * earlier one's plan (and replays its findings) instead of being filled:
 * a model whose pattern ranges cut it into hundreds of segments is filled
 * a few times. */
#include "resolve/resolve_internal.h"

#include <string.h>

bool segment_twins_init(mo_segment_twins *out, const mo_resolved *r,
			   const mo_resolve_active *act, mo_arena *a)
{
	size_t nr = act->matches->n_refs ? act->matches->n_refs : 1;
	out->cap = 16; /* at most 3/4 full */
	while (3 * out->cap < 4 * r->n_segs)
		out->cap *= 2;
	out->slots = arena_alloc(a, out->cap * sizeof(*out->slots));
	out->key_of = arena_alloc_raw(a, (r->n_segs ? r->n_segs : 1) * sizeof(*out->key_of));
	out->key = arena_alloc(a, (4 + nr + 2 * act->on_words) * sizeof(*out->key));
	return out->slots && out->key_of && out->key;
}

/* The key of segment g: type, full, swap entry, then the active set (refs
 * in index order are in group order): its words when shorter, else its
 * indices; the count picks the same form for equal sets. */
static size_t segment_key(const mo_resolve_active *act, const mo_seg *g, size_t swap_entry,
			     uint32_t *key)
{
	size_t n = 0, n_on = act->n_on;
	key[n++] = (uint32_t)g->type;
	key[n++] = g->full;
	key[n++] = (uint32_t)swap_entry;
	key[n++] = (uint32_t)n_on;
	if (2 * act->on_words <= n_on) {
		for (size_t w = 0; w < act->on_words; w++) {
			key[n++] = (uint32_t)act->on[w];
			key[n++] = (uint32_t)(act->on[w] >> 32);
		}
		return n;
	}
	for (size_t w = 0; w < act->on_words; w++)
		for (uint64_t bits = act->on[w]; bits; bits &= bits - 1)
			key[n++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
	return n;
}

static uint64_t key_hash(const uint32_t *key, size_t n)
{
	/* two words a step (the hash only pairs segments of one resolve) */
	uint64_t h = MO_HASH_SEED;
	size_t i = 0;
	for (; i + 2 <= n; i += 2)
		h = hash_u64(h, key[i] | (uint64_t)key[i + 1] << 32);
	if (i < n)
		h = hash_u64(h, key[i]);
	return h ^ h >> 32;
}

const mo_seg *segment_twin(mo_segment_twins *tw, const mo_resolved *r,
			      const mo_resolve_active *act, const mo_seg *g, size_t swap_entry,
			      mo_arena *a)
{
	size_t n = segment_key(act, g, swap_entry, tw->key);
	uint64_t h = key_hash(tw->key, n);
	size_t mask = tw->cap - 1, i = (size_t)h & mask;
	for (; tw->slots[i].segment; i = (i + 1) & mask) {
		const mo_twin_slot *t = &tw->slots[i];
		if (t->hash != (uint32_t)h)
			continue;
		const uint32_t *k = tw->key_of[t->segment - 1];
		if (k[0] == n && memcmp(k + 1, tw->key, n * sizeof(uint32_t)) == 0)
			return &r->segs[t->segment - 1];
	}
	uint32_t *copy = arena_alloc_raw(a, (n + 1) * sizeof(uint32_t));
	if (!copy)
		return NULL;
	copy[0] = (uint32_t)n;
	memcpy(copy + 1, tw->key, n * sizeof(uint32_t));
	size_t si = (size_t)(g - r->segs);
	tw->key_of[si] = copy;
	tw->slots[i] = (mo_twin_slot){(uint32_t)h, (uint32_t)si + 1};
	return NULL;
}
