/* The no-match warning: a pattern that matches no path (or no
 * communication op) in a layer type it names, with the pattern the user
 * probably meant: the same one relative to the layer, a path whose last
 * word is close to the pattern's, or a synonym from another codebase. */
#include "resolve/resolve_internal.h"

#include <stdio.h>
#include <string.h>

/* What the suggestions read. */
typedef struct mo_suggest_context {
	const mo_config *config;
	const mo_model *model;
	mo_arena *arena;
} mo_suggest_context;

static bool pattern_matches_type(const mo_suggest_context *sc, const mo_pattern_ref *ref,
				    const char *rx, size_t t)
{
	const char *msg;
	size_t off;
	mo_regex *re = regex_compile(rx, strlen(rx), &sc->config->lim, sc->arena, &msg, &off);
	if (!re)
		return false;
	mo_matcher *mt = mo_matcher_new();
	bool hit = false;
	const mo_layer_type *lt = &sc->model->types[t];
	for (size_t i = 0; mt && !hit && i < lt->n_paths; i++)
		hit = path_candidate(ref, &lt->paths[i]) &&
		      matcher_match(mt, re, lt->paths[i].name, strlen(lt->paths[i].name)) > 0;
	mo_matcher_free(mt);
	regex_free(re);
	return hit;
}

/* Drops a leading part written as if paths were absolute
 * ("layers.*.self_attention.*" -> "self_attention.*"). */
static bool suggest_strip(const mo_suggest_context *sc, const mo_pattern_ref *ref, size_t t,
			     char *out, size_t size)
{
	const char *rx = ref->pattern->regex;
	for (size_t i = 0; rx[i] && i < 200; i++) {
		if (rx[i] != '.' || (i && rx[i - 1] == '\\') || !rx[i + 1])
			continue;
		if (pattern_matches_type(sc, ref, rx + i + 1, t)) {
			snprintf(out, size, "'%.*s'", (int)(size - 3), rx + i + 1);
			return true;
		}
	}
	return false;
}

static void no_match_normalize(const char *in, size_t len, char *out, size_t size)
{
	size_t j = 0;
	for (size_t i = 0; i < len && j + 1 < size; i++)
		if (in[i] != '_' && in[i] != '-')
			out[j++] = (char)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] + 32 : in[i]);
	out[j] = '\0';
}

static bool word_char(char ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

/* Names other codebases use for the same cells. */
static const char *no_match_synonym(const mo_layer_type *lt, const mo_pattern_ref *ref,
			      const char *word)
{
	static const char *const pairs[][2] = {
		{"feedforward", "mlp"},   {"ffn", "mlp"},       {"mlps", "mlp"},
		{"attention", "self_attention"}, {"attn", "self_attention"},
		{"selfattn", "self_attention"},  {"moe", "experts"}, {"gate", "router"},
		{"qkv", "linear_qkv"},    {"oproj", "linear_proj"}, {"act", "activation_func"},
	};
	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		if (strcmp(word, pairs[k][0]) != 0)
			continue;
		for (size_t i = 0; i < lt->n_paths; i++) {
			const char *name = lt->paths[i].name, *last = strrchr(name, '.');
			last = last ? last + 1 : name;
			if (path_candidate(ref, &lt->paths[i]) && strcmp(last, pairs[k][1]) == 0)
				return last;
		}
	}
	return NULL;
}

/* Compares the pattern's last word with the paths' last segments
 * ("all_gather" -> "allgather", "feed_forward" -> nothing close). */
static bool suggest_word(const mo_layer_type *lt, const mo_pattern_ref *ref, char *out,
			    size_t size)
{
	const char *rx = ref->pattern->regex;
	size_t len = strlen(rx), end = len, start;
	while (end && !word_char(rx[end - 1]))
		end--;
	start = end;
	while (start && word_char(rx[start - 1]))
		start--;
	if (end - start < 3)
		return false;
	char word[128], segment[128];
	no_match_normalize(rx + start, end - start, word, sizeof word);
	const char *best = NULL;
	size_t best_distance = word[0] ? strlen(word) / 3 + 1 : 0;
	for (size_t i = 0; i < lt->n_paths; i++) {
		if (!path_candidate(ref, &lt->paths[i]))
			continue;
		const char *name = lt->paths[i].name, *last = strrchr(name, '.');
		last = last ? last + 1 : name;
		no_match_normalize(last, strlen(last), segment, sizeof segment);
		size_t d = edit_distance(word, segment, best_distance);
		if (d < best_distance) {
			best_distance = d;
			best = last;
		}
	}
	if (!best)
		best = no_match_synonym(lt, ref, word);
	if (!best)
		return false;
	snprintf(out, size, "'.*%s'", best);
	return true;
}

/* Whether the type has a candidate path for ref at all (a pattern naming
 * a communication op finds none where the type has no such op). */
static bool type_has_candidate(const mo_layer_type *lt, const mo_pattern_ref *ref)
{
	static const char *const comm_ops[] = {"allgather", "all_gather", "reducescatter",
					       "reduce_scatter", "allreduce", "all_reduce",
					       "alltoall", "all_to_all"};
	bool any_candidate = false;
	for (size_t i = 0; i < lt->n_paths && !any_candidate; i++)
		any_candidate = path_candidate(ref, &lt->paths[i]);
	bool names_comm = false;
	for (size_t i = 0; i < sizeof comm_ops / sizeof comm_ops[0]; i++)
		names_comm |= strstr(ref->pattern->regex, comm_ops[i]) != NULL;
	bool type_has_comm = false;
	for (size_t i = 0; i < lt->n_paths; i++)
		type_has_comm |= lt->paths[i].kind == MO_PATH_COMM;
	return any_candidate && !(names_comm && !type_has_comm);
}

static void no_match(const mo_suggest_context *sc, mo_diags *diags,
			const mo_pattern_ref *ref, size_t t, const char *layers)
{
	const mo_layer_type *lt = &sc->model->types[t];
	mo_diag *d = diags_add_at(
		diags, MO_SEV_WARNING, "no-match", sc->config->doc->name, ref->pattern->key,
		ref->pattern->dpath,
		"pattern '%.60s' matches no %s in layers %s (%s layers); it does nothing there",
		ref->pattern->regex, ref->group == MO_GROUP_COMM ? "communication op" : "path",
		layers, lt->name);
	diag_set_layers(diags, d, layers);
	char suggestion[160];
	if (!type_has_candidate(lt, ref))
		diag_set_hint(diags, d,
				 "these layers have no communication ops: TP, EP and CP are 1");
	else if (suggest_strip(sc, ref, t, suggestion, sizeof suggestion) ||
		 suggest_word(lt, ref, suggestion, sizeof suggestion))
		diag_set_hint(diags, d, "did you mean %s? paths are relative to the layer",
				 suggestion);
	else
		diag_set_hint(diags, d,
				 "paths look like '%s' or '%s' (memopt expand --paths lists them)",
				 lt->n_paths ? lt->paths[0].name : "",
				 lt->n_paths > 1 ? lt->paths[lt->n_paths - 1].name : "");
}

/* The layers a pattern names that have type t, as text ("" if none). */
static void named_of_type(const mo_resolve_paths *paths, const mo_layers *l, size_t t,
			     char *buf, size_t size)
{
	const mo_layer_run *runs = paths->type_runs;
	size_t n_runs = paths->n_type_runs, j = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < l->n; k++) {
		while (j < n_runs && runs[j].hi < l->r[k].lo)
			j++;
		for (size_t q = j; q < n_runs && runs[q].lo <= l->r[k].hi; q++) {
			if (runs[q].type != t)
				continue;
			uint64_t lo = l->r[k].lo > runs[q].lo ? l->r[k].lo : runs[q].lo;
			uint64_t hi = l->r[k].hi < runs[q].hi ? l->r[k].hi : runs[q].hi;
			ranges_append(buf, size, lo, hi);
		}
	}
}

void resolve_check_no_match(const mo_resolve_matches *matches, const mo_config *c,
			       const mo_model *m, const mo_resolve_paths *paths, mo_diags *diags,
			       mo_arena *a)
{
	mo_suggest_context sc = {c, m, a};
	char layers[160];
	for (size_t i = 0; i < matches->n_refs; i++) {
		const mo_pattern_ref *ref = &matches->refs[i];
		if (!ref->pattern->re || ref->limit_hit)
			continue;
		for (size_t t = 0; t < m->n_types; t++) {
			if (path_bits_any(&ref->match[t]))
				continue;
			named_of_type(paths, &ref->pattern->layers, t, layers, sizeof layers);
			if (layers[0])
				no_match(&sc, diags, ref, t, layers);
		}
	}
}
