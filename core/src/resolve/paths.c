/* What resolve derives from the model's paths alone, before any pattern:
 * path lengths and plainness (for the matcher), subtree runs (so the fill
 * works on runs of matched bits), a first / last byte index (so a pattern
 * is tried only on the paths that can match), and the runs of layer types
 * (for segments and the layers a no-match names). Built once per model
 * (path_memo.c) or, when the model's memo is stale, per resolve. */
#include "resolve/resolve_internal.h"

#include <string.h>

size_t words_per_pattern(const mo_model *m)
{
	size_t n = 0;
	for (size_t t = 0; t < m->n_types; t++)
		n += (m->types[t].n_paths + 63) / 64;
	return n;
}

/* Subtree ends of type t, and whether every subtree is one run. Sizes
 * add up children first (a parent comes before its children); a path
 * lying inside every ancestor's run, with runs as long as subtrees, makes
 * each subtree exactly its run. */
static bool paths_subtrees(mo_resolve_paths *paths, const mo_layer_type *lt, size_t t,
			      mo_arena *a)
{
	size_t np = lt->n_paths;
	uint32_t *end = arena_alloc(a, (np ? np : 1) * sizeof(*end));
	if (!end)
		return false;
	paths->subtree_end[t] = end;
	bool ok = np < UINT32_MAX;
	for (size_t p = 0; ok && p < np; p++) {
		end[p] = 1; /* the subtree size, for now */
		ok = lt->paths[p].parent < (int)p;
	}
	for (size_t left = np; ok && left > 0; left--) {
		size_t p = left - 1;
		if (lt->paths[p].parent >= 0)
			end[lt->paths[p].parent] += end[p];
	}
	for (size_t p = 0; ok && p < np; p++)
		end[p] += (uint32_t)p;
	for (size_t q = 0; ok && q < np; q++)
		for (int up = lt->paths[q].parent; ok && up >= 0; up = lt->paths[up].parent)
			ok = (size_t)up < q && q < end[up];
	paths->subtrees_are_runs[t] = ok;
	return true;
}

bool resolve_paths_derive(mo_resolve_paths *out, const mo_model *m, mo_arena *a)
{
	size_t nt = m->n_types ? m->n_types : 1, nw = 1;
	*out = (mo_resolve_paths){0};
	out->length = arena_alloc(a, nt * sizeof(*out->length));
	out->plain = arena_alloc(a, nt * sizeof(*out->plain));
	out->subtrees_are_runs = arena_alloc(a, nt * sizeof(*out->subtrees_are_runs));
	out->subtree_end = arena_alloc(a, nt * sizeof(*out->subtree_end));
	if (!out->length || !out->plain || !out->subtrees_are_runs || !out->subtree_end)
		return false;
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		nw = (lt->n_paths + 63) / 64 > nw ? (lt->n_paths + 63) / 64 : nw;
		out->length[t] = arena_alloc(a, (lt->n_paths ? lt->n_paths : 1) * sizeof(size_t));
		if (!out->length[t] || !paths_subtrees(out, lt, t, a))
			return false;
		out->plain[t] = true;
		for (size_t i = 0; i < lt->n_paths; i++) {
			out->length[t][i] = strlen(lt->paths[i].name);
			out->plain[t] &= subject_is_plain(lt->paths[i].name, out->length[t][i]);
		}
	}
	out->max_words = nw;
	return true;
}

static bool path_index_build(mo_path_index *ix, const mo_layer_type *lt,
				const size_t *length, mo_arena *a)
{
	ix->n_words = (lt->n_paths + 63) / 64;
	size_t nw = ix->n_words ? ix->n_words : 1;
	ix->by_first = arena_alloc(a, 256 * nw * sizeof(uint64_t));
	ix->by_last = arena_alloc(a, 256 * nw * sizeof(uint64_t));
	ix->any = arena_alloc(a, nw * sizeof(uint64_t));
	ix->comm = arena_alloc(a, nw * sizeof(uint64_t));
	if (!ix->by_first || !ix->by_last || !ix->any || !ix->comm)
		return false;
	for (size_t i = 0; i < lt->n_paths; i++) {
		uint64_t bit = (uint64_t)1 << (i % 64);
		size_t w = i / 64, n = length[i];
		const unsigned char *name = (const unsigned char *)lt->paths[i].name;
		ix->any[w] |= bit;
		if (lt->paths[i].kind == MO_PATH_COMM)
			ix->comm[w] |= bit;
		if (n) {
			ix->by_first[name[0] * ix->n_words + w] |= bit;
			ix->by_last[name[n - 1] * ix->n_words + w] |= bit;
		}
	}
	return true;
}

bool resolve_paths_index(mo_resolve_paths *paths, const mo_model *m, mo_arena *a)
{
	mo_path_index *ix = arena_alloc(a, (m->n_types ? m->n_types : 1) * sizeof(*ix));
	if (!ix)
		return false;
	for (size_t t = 0; t < m->n_types; t++)
		if (paths->plain[t] && !path_index_build(&ix[t], &m->types[t], paths->length[t], a))
			return false;
	paths->index = ix;
	return true;
}

/* Runs of consecutive layers of one type (types are contiguous in
 * practice; interleaved MoE gives one run per layer at worst). */
bool resolve_paths_type_runs(mo_resolve_paths *paths, const mo_model *m, uint64_t n_layers,
				mo_arena *a)
{
	const size_t *type_of = m->type_of;
	/* one pass into a small buffer (models have a few runs); counted
	 * first only when it is too small */
	mo_layer_run small[16];
	mo_layer_run *runs = small;
	size_t n = 0, cap = sizeof(small) / sizeof(small[0]);
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (uint64_t id = 0; id < n_layers;) {
			uint64_t lo = id;
			size_t t = type_of[id];
			while (++id < n_layers && type_of[id] == t)
				;
			if (n < cap)
				runs[n] = (mo_layer_run){lo, id - 1, t};
			n++;
		}
		if (n <= cap)
			break;
		runs = arena_alloc_raw(a, n * sizeof(*runs));
		if (!runs)
			return false;
		cap = n;
	}
	if (runs == small) {
		runs = arena_alloc_raw(a, n * sizeof(*runs));
		if (!runs)
			return false;
		memcpy(runs, small, n * sizeof(*runs));
	}
	paths->type_runs = runs;
	paths->n_type_runs = n;
	paths->n_layers = n_layers;
	return true;
}
