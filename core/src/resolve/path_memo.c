/* The model's path info and pattern memo. What resolve derives from the
 * model's paths alone (paths.c) is built once per model, and the paths
 * each pattern text matches are memoised with it (bounded): a server
 * validating config after config against a loaded model, or the web UI's
 * slider round trips, derive the paths and match each pattern once.
 *
 * Ownership: the memo is an attachment on the model (its resolve slot,
 * model.h), in an arena of its own that the slot's destructor frees with
 * the model; the layout is built once, at load. The model's resolve lock
 * guards the slot and the memo's entries: it is taken twice per resolve,
 * never while matching. A model whose layout changed after the memo was
 * built gets no memo (the caller derives its own path info). */
#include "resolve/resolve_internal.h"

#include <string.h>

#define MO_PATH_MEMO_SLOTS 1024     /* a power of two, at most half used */
#define MO_PATH_MEMO_MAX_TEXT 256   /* longer pattern texts are matched every time */
#define MO_PATH_MEMO_MAX_BYTES ((size_t)1 << 20)

typedef struct mo_path_memo_entry {
	uint64_t hash;
	const char *text;
	size_t len;
	uint32_t match_limit, depth_limit;
	bool comm;
	uint64_t *words; /* the words per ref (every type's bits) */
} mo_path_memo_entry;

struct mo_path_memo {
	mo_arena *arena; /* everything below */
	const mo_layer_type *types_at; /* what it was built for */
	size_t n_types;
	uint64_t layout_hash;
	mo_resolve_paths paths;
	size_t words; /* per pattern */
	size_t n_entries, bytes;
	mo_path_memo_entry *slots[MO_PATH_MEMO_SLOTS];
};

static void path_memo_destroy(void *data)
{
	struct mo_path_memo *memo = data;
	arena_free(memo->arena);
}

/* The path info of m, every part of it, in an arena of its own. */
static struct mo_path_memo *path_memo_build(const mo_model *m)
{
	mo_arena *a = arena_new();
	struct mo_path_memo *memo = a ? arena_alloc(a, sizeof(*memo)) : NULL;
	uint64_t n_layers = (uint64_t)(m->num_layers + m->mtp_num_layers);
	if (!memo || !resolve_paths_derive(&memo->paths, m, a) ||
	    (n_layers > 0 && !resolve_paths_type_runs(&memo->paths, m, n_layers, a)) ||
	    !resolve_paths_index(&memo->paths, m, a))
		goto fail_arena;
	memo->arena = a;
	memo->types_at = m->types;
	memo->n_types = m->n_types;
	memo->layout_hash = m->layout_hash;
	memo->words = words_per_pattern(m);
	return memo;
fail_arena:
	arena_free(a);
	return NULL;
}

struct mo_path_memo *path_memo_get(const mo_model *m)
{
	mo_attachment *slot = model_resolve_slot(m);
	pthread_mutex_lock(model_resolve_lock(m));
	struct mo_path_memo *memo = slot->data;
	if (!memo && (memo = path_memo_build(m)) != NULL)
		*slot = (mo_attachment){.data = memo, .destroy = path_memo_destroy};
	pthread_mutex_unlock(model_resolve_lock(m));
	if (memo && (memo->types_at != m->types || memo->n_types != m->n_types ||
		     memo->layout_hash != m->layout_hash))
		return NULL; /* the layout changed since: not memoised */
	return memo;
}

mo_resolve_paths *path_memo_paths(struct mo_path_memo *memo)
{
	return &memo->paths;
}

/* A pattern text's key: the text, whether it acts on communication paths,
 * and the PCRE2 limits it was matched under. */
static uint64_t text_hash(const char *t, size_t n, bool comm, const mo_limits *lim)
{
	uint64_t h = hash_bytes(MO_HASH_SEED, t, n);
	h = hash_u64(h, comm);
	h = hash_u64(h, (uint64_t)lim->match_limit << 32 | lim->depth_limit);
	return h ^ h >> 32;
}

static bool path_memo_takes(const mo_pattern_ref *ref)
{
	return ref->pattern->re && ref->pattern->key &&
	       ref->pattern->key->len <= MO_PATH_MEMO_MAX_TEXT;
}

/* The memo's slot for a ref's text: its entry, or the empty slot where it
 * would go (NULL when the table is full and it is absent). */
static mo_path_memo_entry **path_memo_slot(struct mo_path_memo *memo,
					      const mo_pattern_ref *ref, uint64_t h,
					      const mo_limits *lim)
{
	const char *text = ref->pattern->regex;
	size_t len = ref->pattern->key->len;
	bool comm = ref->group == MO_GROUP_COMM;
	for (size_t i = (size_t)h & (MO_PATH_MEMO_SLOTS - 1), k = 0; k < MO_PATH_MEMO_SLOTS;
	     i = (i + 1) & (MO_PATH_MEMO_SLOTS - 1), k++) {
		mo_path_memo_entry *e = memo->slots[i];
		if (!e)
			return &memo->slots[i];
		if (e->hash == h && e->len == len && e->comm == comm &&
		    e->match_limit == lim->match_limit && e->depth_limit == lim->depth_limit &&
		    memcmp(e->text, text, len) == 0)
			return &memo->slots[i];
	}
	return NULL;
}

void path_memo_load(struct mo_path_memo *memo, const mo_model *m, const mo_limits *lim,
		       mo_resolve_matches *matches, bool *hit, uint64_t *hash)
{
	size_t nt = m->n_types;
	pthread_mutex_lock(model_resolve_lock(m));
	for (size_t i = 0; i < matches->n_refs; i++) {
		mo_pattern_ref *ref = &matches->refs[i];
		if (!path_memo_takes(ref))
			continue;
		hash[i] = text_hash(ref->pattern->regex, ref->pattern->key->len,
				       ref->group == MO_GROUP_COMM, lim);
		mo_path_memo_entry **slot = path_memo_slot(memo, ref, hash[i], lim);
		if (!slot || !*slot)
			continue;
		const uint64_t *w = (*slot)->words;
		for (size_t t = 0; t < nt; t++) {
			mo_path_bits *b = &ref->match[t];
			for (size_t x = 0; x < b->n_words; x++)
				b->words[x] = w[x];
			w += b->n_words;
		}
		hit[i] = true;
	}
	pthread_mutex_unlock(model_resolve_lock(m));
}

/* One entry for ref (its text and bits), in the memo's arena. */
static mo_path_memo_entry *path_memo_entry_new(struct mo_path_memo *memo, const mo_model *m,
						  const mo_pattern_ref *ref, uint64_t hash,
						  const mo_limits *lim)
{
	mo_arena *a = memo->arena;
	size_t len = ref->pattern->key->len;
	mo_path_memo_entry *e = arena_alloc_raw(a, sizeof(*e));
	uint64_t *words = arena_alloc_raw(a, (memo->words ? memo->words : 1) * sizeof(uint64_t));
	char *text = arena_strndup(a, ref->pattern->regex, len);
	if (!e || !words || !text)
		return NULL;
	uint64_t *w = words;
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_path_bits *b = &ref->match[t];
		for (size_t x = 0; x < b->n_words; x++)
			w[x] = b->words[x];
		w += b->n_words;
	}
	*e = (mo_path_memo_entry){hash, text, len, lim->match_limit, lim->depth_limit,
				  ref->group == MO_GROUP_COMM, words};
	return e;
}

bool path_memo_store(struct mo_path_memo *memo, const mo_model *m, const mo_limits *lim,
			const mo_resolve_matches *matches, const bool *hit, const bool *matched,
			const uint64_t *hash)
{
	bool all = true;
	pthread_mutex_lock(model_resolve_lock(m));
	for (size_t i = 0; i < matches->n_refs; i++) {
		const mo_pattern_ref *ref = &matches->refs[i];
		if (hit[i] || !matched[i] || !ref->pattern->re)
			continue;
		if (ref->limit_hit || !path_memo_takes(ref)) {
			all = false;
			continue;
		}
		size_t need = sizeof(mo_path_memo_entry) + ref->pattern->key->len + 1 +
			      memo->words * sizeof(uint64_t);
		if (2 * (memo->n_entries + 1) > MO_PATH_MEMO_SLOTS ||
		    memo->bytes + need > MO_PATH_MEMO_MAX_BYTES) {
			all = false;
			break; /* full: the rest are matched every time */
		}
		mo_path_memo_entry **slot = path_memo_slot(memo, ref, hash[i], lim);
		if (!slot || *slot)
			continue; /* a repeated text, stored already */
		mo_path_memo_entry *e = path_memo_entry_new(memo, m, ref, hash[i], lim);
		if (!e) {
			all = false;
			break;
		}
		*slot = e;
		memo->n_entries++;
		memo->bytes += need;
	}
	pthread_mutex_unlock(model_resolve_lock(m));
	return all;
}
