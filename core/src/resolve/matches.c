/* The config's patterns (select, exclude, recompute_comm, op_swap) as refs
 * with their rules, and the paths each one matches: each pattern against
 * the distinct path set of each layer type, never per layer. A pattern's
 * matches come from the model's memo (path_memo.c), an earlier ref
 * with the same regex, or PCRE2 (through the path index: only the paths
 * whose first / last byte fit). */
#include "resolve/resolve_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- matching one ref against every type -------------------------------- */

static void match_one(mo_pattern_ref *ref, size_t t, size_t i, int rc)
{
	if (rc > 0)
		path_bits_set(&ref->match[t], i);
	else if (rc < 0)
		ref->limit_hit = true;
}

/* The candidates of word w for a pattern with these end bytes. */
static uint64_t index_candidates(const mo_path_index *ix, const mo_pattern_ref *ref, size_t w,
				    int first, int last)
{
	uint64_t c = ref->group == MO_GROUP_COMM ? ix->comm[w] : ix->any[w];
	if (first >= 0)
		c &= ix->by_first[(size_t)first * ix->n_words + w];
	if (last >= 0)
		c &= ix->by_last[(size_t)last * ix->n_words + w];
	return c;
}

static void match_ref(mo_pattern_ref *ref, const mo_model *m, const mo_resolve_paths *paths,
			 mo_matcher *mt)
{
	if (!ref->pattern->re)
		return;
	int first, last;
	regex_ends(ref->pattern->re, &first, &last);
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		const size_t *length = paths->length[t];
		if (paths->plain[t]) {
			const mo_path_index *ix = &paths->index[t];
			for (size_t w = 0; w < ix->n_words; w++)
				for (uint64_t c = index_candidates(ix, ref, w, first, last); c;
				     c &= c - 1) {
					size_t i = w * 64 + (size_t)__builtin_ctzll(c);
					match_one(ref, t, i,
						     matcher_match_plain(mt, ref->pattern->re,
									    lt->paths[i].name, length[i]));
				}
			continue;
		}
		for (size_t i = 0; i < lt->n_paths; i++)
			if (path_candidate(ref, &lt->paths[i]))
				match_one(ref, t, i,
					     matcher_match(mt, ref->pattern->re, lt->paths[i].name,
							      length[i]));
	}
}

/* ---- the refs ------------------------------------------------------------ */

static void matches_add(mo_resolve_matches *matches, const mo_pattern *p,
			   mo_pattern_group g, bool active, const char *section, const char *key)
{
	mo_pattern_ref *ref = &matches->refs[matches->n_refs++];
	ref->pattern = p;
	ref->group = g;
	ref->active = active;
	ref->rule = (mo_rule){section, key, p->key ? p->key->line : 0};
}

/* dpath "recompute.select_module['x']" -> key "select_module['x']" */
static const char *rule_key(const char *dpath)
{
	const char *dot = strchr(dpath, '.');
	return dot ? dot + 1 : dpath;
}

static bool matches_list(mo_resolve_matches *matches, const mo_config *c, mo_arena *a)
{
	size_t n = c->select.n + c->exclude.n + c->comm.n + c->n_op_swap;
	matches->refs = n ? arena_alloc(a, n * sizeof(*matches->refs)) : NULL;
	if (n && !matches->refs)
		return false;
	bool recompute = c->mode != MO_MODE_NONE;
	matches->group_start[MO_GROUP_SELECT] = 0;
	for (size_t i = 0; i < c->select.n; i++)
		matches_add(matches, &c->select.p[i], MO_GROUP_SELECT, recompute, "recompute",
			       rule_key(c->select.p[i].dpath));
	matches->group_start[MO_GROUP_EXCLUDE] = matches->n_refs;
	for (size_t i = 0; i < c->exclude.n; i++)
		matches_add(matches, &c->exclude.p[i], MO_GROUP_EXCLUDE, recompute, "recompute",
			       rule_key(c->exclude.p[i].dpath));
	matches->group_start[MO_GROUP_COMM] = matches->n_refs;
	for (size_t i = 0; i < c->comm.n; i++)
		matches_add(matches, &c->comm.p[i], MO_GROUP_COMM, c->comm_enable,
			       "recompute_comm", rule_key(c->comm.p[i].dpath));
	matches->group_start[MO_GROUP_OP_SWAP] = matches->n_refs;
	for (size_t i = 0; i < c->n_op_swap; i++) {
		const char *key = arena_indexed(a, "op_swap", i);
		matches_add(matches, &c->op_swap[i].pat, MO_GROUP_OP_SWAP, c->swap_enable, "swap",
			       key);
		matches->refs[matches->n_refs - 1].rule.line = c->op_swap[i].at->line;
	}
	return true;
}

/* Every ref's bitsets (one per layer type), carved from two blocks. */
static bool matches_alloc_bits(mo_resolve_matches *matches, const mo_model *m, mo_arena *a)
{
	size_t nt = m->n_types, nw = words_per_pattern(m);
	if (!matches->n_refs || !nt)
		return true;
	mo_path_bits *bits = arena_alloc(a, matches->n_refs * nt * sizeof(mo_path_bits));
	uint64_t *w = nw ? arena_alloc(a, matches->n_refs * nw * sizeof(uint64_t)) : NULL;
	if (!bits || (nw && !w))
		return false;
	for (size_t i = 0; i < matches->n_refs; i++) {
		matches->refs[i].match = bits + i * nt;
		for (size_t t = 0; t < nt; t++) {
			mo_path_bits *b = &matches->refs[i].match[t];
			b->n_words = (m->types[t].n_paths + 63) / 64;
			b->words = b->n_words ? w : NULL;
			w += b->n_words;
		}
	}
	return true;
}

/* ---- every ref's matches ------------------------------------------------- */

/* Refs sharing a regex (a repeated pattern text, see cfg_compile) and
 * its candidate paths (comm ops or all) match the same paths: the first
 * one's bits are copied (open addressing on the regex). */
typedef struct mo_regex_seen {
	uint32_t *slots; /* ref index + 1; 0 = empty */
	size_t cap;
} mo_regex_seen;

/* Fibonacci hashing of the regex's address (modulo 2^64 by design). */
static MO_WRAPS size_t regex_seen_hash(uintptr_t key)
{
	return (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20);
}

static const mo_pattern_ref *regex_seen_find(const mo_regex_seen *seen,
						const mo_resolve_matches *matches,
						const mo_pattern_ref *ref, size_t *slot)
{
	uintptr_t key = (uintptr_t)ref->pattern->re ^ (ref->group == MO_GROUP_COMM);
	*slot = regex_seen_hash(key) & (seen->cap - 1);
	for (; seen->slots[*slot]; *slot = (*slot + 1) & (seen->cap - 1)) {
		const mo_pattern_ref *o = &matches->refs[seen->slots[*slot] - 1];
		if (o->pattern->re == ref->pattern->re &&
		    (o->group == MO_GROUP_COMM) == (ref->group == MO_GROUP_COMM))
			return o;
	}
	return NULL;
}

static void match_copy(mo_pattern_ref *ref, const mo_pattern_ref *twin, size_t n_types)
{
	ref->limit_hit = twin->limit_hit;
	for (size_t t = 0; t < n_types; t++)
		if (ref->match[t].n_words)
			memcpy(ref->match[t].words, twin->match[t].words,
			       ref->match[t].n_words * sizeof(uint64_t));
}

/* Matches the refs not hit in a memo; matched[i] marks those matched. */
static bool matches_run(mo_resolve_matches *matches, const mo_model *m,
			   const mo_resolve_paths *paths, const bool *hit, bool *matched,
			   mo_arena *a)
{
	mo_matcher *mt = mo_matcher_new();
	if (!mt)
		return false;
	mo_regex_seen seen = {.cap = 16};
	while (seen.cap < 2 * matches->n_refs)
		seen.cap *= 2;
	seen.slots = arena_alloc(a, seen.cap * sizeof(*seen.slots));
	for (size_t i = 0; seen.slots && i < matches->n_refs; i++) {
		mo_pattern_ref *ref = &matches->refs[i];
		const mo_pattern_ref *twin = NULL;
		size_t slot = 0;
		if (ref->pattern->re)
			twin = regex_seen_find(&seen, matches, ref, &slot);
		if (twin) {
			match_copy(ref, twin, m->n_types);
			continue;
		}
		if (!hit[i]) {
			match_ref(ref, m, paths, mt);
			matched[i] = true;
		}
		if (ref->pattern->re)
			seen.slots[slot] = (uint32_t)i + 1;
	}
	mo_matcher_free(mt);
	return seen.slots != NULL;
}

/* Every ref's matches: memoised by the model, copied from a ref with the
 * same regex, or matched (then memoised). */
static bool matches_all(mo_resolve_matches *matches, const mo_config *c, const mo_model *m,
			   mo_resolve_paths *paths, struct mo_path_memo *memo, mo_arena *a)
{
	size_t nr = matches->n_refs ? matches->n_refs : 1;
	if (!paths->index && !resolve_paths_index(paths, m, a))
		return false;
	bool *hit = arena_alloc(a, 2 * nr * sizeof(bool)), *matched = hit ? hit + nr : NULL;
	uint64_t *hash = arena_alloc_raw(a, nr * sizeof(uint64_t));
	if (!hit || !hash)
		return false;
	if (memo)
		path_memo_load(memo, m, &c->lim, matches, hit, hash);
	if (!matches_run(matches, m, paths, hit, matched, a))
		return false;
	if (memo)
		path_memo_store(memo, m, &c->lim, matches, hit, matched, hash);
	return true;
}

bool resolve_matches_build(mo_resolve_matches *out, const mo_config *c, const mo_model *m,
			      mo_resolve_paths *paths, struct mo_path_memo *memo, mo_arena *a)
{
	*out = (mo_resolve_matches){0};
	if (!matches_list(out, c, a) || !matches_alloc_bits(out, m, a))
		return false;
	return matches_all(out, c, m, paths, memo, a);
}

const mo_pattern_ref *resolve_matches_origin(const mo_resolve_matches *matches,
						const mo_rule *rule)
{
	for (size_t i = 0; i < matches->n_refs; i++)
		if (matches->refs[i].rule.key == rule->key)
			return &matches->refs[i];
	return NULL;
}
