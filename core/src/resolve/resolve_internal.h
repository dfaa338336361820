/* resolve_internal.h: what the files of core/src/resolve share while one
 * config is applied to one model. resolve.h is the folder's face to the
 * rest of the core; this header is for the folder only.
 *
 * resolve (resolve.c) runs the concepts in order, each owning its part
 * of the state:
 *   paths.c      what the model's paths alone give (lengths, subtree runs,
 *                a first / last byte index, the runs of layer types);
 *   path_memo.c  that, kept on the model with a memo of pattern matches;
 *   matches.c    the config's patterns and the paths each one matches
 *                (with the config's match memo);
 *   segments.c   layers cut into segments, and the patterns active in each;
 *   fill.c       the per-path actions of one segment (fill_runs.c: the same
 *                on types whose subtrees are runs; twins.c: segments that
 *                repeat an earlier one);
 *   findings.c   the findings merged over segments, as diagnostics;
 *   no_match.c   patterns that match nothing, with a suggestion. */
#ifndef MEMOPT_RESOLVE_INTERNAL_H
#define MEMOPT_RESOLVE_INTERNAL_H

#include "resolve/resolve.h"

/* ---- bitsets over the paths of one layer type -------------------------- */

typedef struct mo_path_bits {
	uint64_t *words;
	size_t n_words;
} mo_path_bits;

static inline void path_bits_set(mo_path_bits *b, size_t i)
{
	b->words[i / 64] |= (uint64_t)1 << (i % 64);
}

static inline bool path_bits_get(const mo_path_bits *b, size_t i)
{
	return b->words && (b->words[i / 64] >> (i % 64)) & 1;
}

static inline bool path_bits_any(const mo_path_bits *b)
{
	for (size_t i = 0; i < b->n_words; i++)
		if (b->words[i])
			return true;
	return false;
}

/* Bitset words of one pattern's matches over every layer type. */
size_t words_per_pattern(const mo_model *m);

/* ---- paths.c: what the model's paths alone give ------------------------ */

/* Per plain type, the paths by first byte, by last byte, and the
 * communication ops, as bitsets: a pattern that starts or ends with a
 * literal (regex_ends) is tried only on the paths that do too. */
typedef struct mo_path_index {
	size_t n_words;
	uint64_t *by_first, *by_last; /* [256][n_words] */
	uint64_t *any, *comm;         /* [n_words] */
} mo_path_index;

/* Consecutive layers of one type. */
typedef struct mo_layer_run {
	uint64_t lo, hi;
	size_t type;
} mo_layer_run;

typedef struct mo_resolve_paths {
	size_t **length;        /* per type, per path: strlen of the name */
	bool *plain;            /* per type: every path is printable ASCII */
	/* per type: every subtree is the run [p, subtree_end[p]) (depth-first
	 * order), so the fill works on runs of the matched bits */
	bool *subtrees_are_runs;
	uint32_t **subtree_end;
	size_t max_words;       /* bitset words of the largest type */
	mo_path_index *index;   /* per plain type; NULL until built */
	mo_layer_run *type_runs; /* of n_layers layers; NULL until built */
	size_t n_type_runs;
	uint64_t n_layers;
} mo_resolve_paths;

/* Lengths, plainness and subtree runs of every type. */
bool resolve_paths_derive(mo_resolve_paths *out, const mo_model *m, mo_arena *a);
/* The first / last byte index of every plain type. */
bool resolve_paths_index(mo_resolve_paths *paths, const mo_model *m, mo_arena *a);
/* The runs of layer types over the model's n_layers (> 0) layers. */
bool resolve_paths_type_runs(mo_resolve_paths *paths, const mo_model *m, uint64_t n_layers,
				mo_arena *a);

/* ---- matches.c: the config's patterns and what they match ------------- */

struct mo_path_memo; /* path_memo.c */

typedef enum mo_pattern_group {
	MO_GROUP_SELECT,  /* recompute.select_module */
	MO_GROUP_EXCLUDE, /* recompute.exclude_op */
	MO_GROUP_COMM,    /* recompute_comm.select_module */
	MO_GROUP_OP_SWAP, /* swap.op_swap */
	MO_GROUP_COUNT
} mo_pattern_group;

/* One pattern of the config with the rule it stands for and the paths it
 * matches in each layer type. */
typedef struct mo_pattern_ref {
	const mo_pattern *pattern;
	mo_pattern_group group;
	bool active;           /* the section applies it */
	mo_rule rule;
	mo_path_bits *match;   /* per layer type */
	bool limit_hit;
} mo_pattern_ref;

typedef struct mo_resolve_matches {
	mo_pattern_ref *refs;   /* in config order, grouped */
	size_t n_refs;
	size_t group_start[MO_GROUP_COUNT]; /* refs of group g start here */
} mo_resolve_matches;

/* Only communication ops are candidates of recompute_comm. */
static inline bool path_candidate(const mo_pattern_ref *ref, const mo_path *p)
{
	return ref->group != MO_GROUP_COMM || p->kind == MO_PATH_COMM;
}

/* Lists the config's patterns and matches them against the model's paths
 * (from the config's memo, the model's memo `memo` when non-NULL, a ref
 * with the same regex, or PCRE2). `paths` gets its index built when it has
 * none and matching needs it. */
bool resolve_matches_build(mo_resolve_matches *out, const mo_config *c, const mo_model *m,
			      mo_resolve_paths *paths, struct mo_path_memo *memo, mo_arena *a);
/* The ref whose rule is `rule` (by key), or NULL. */
const mo_pattern_ref *resolve_matches_origin(const mo_resolve_matches *matches,
						const mo_rule *rule);

/* ---- path_memo.c: the model's path info and pattern memo -------------- */

/* The model's memo (built on first use and attached to it), or NULL when
 * the layout changed since it was built or memory ran out: then the
 * caller derives the path info itself. */
struct mo_path_memo *path_memo_get(const mo_model *m);
/* The memo's path info. */
mo_resolve_paths *path_memo_paths(struct mo_path_memo *memo);
/* Copies memoised matches into the refs; hit[i] marks those found, hash[i]
 * gets ref i's text hash (for path_memo_store). */
void path_memo_load(struct mo_path_memo *memo, const mo_model *m, const mo_limits *lim,
		       mo_resolve_matches *matches, bool *hit, uint64_t *hash);
/* Memoises the refs matched here (not hit, within the limits). Returns
 * whether every one of them is in the memo now. */
bool path_memo_store(struct mo_path_memo *memo, const mo_model *m, const mo_limits *lim,
			const mo_resolve_matches *matches, const bool *hit, const bool *matched,
			const uint64_t *hash);

/* ---- segments.c: segments and the patterns active in each ------------- */

typedef struct mo_resolve_segments {
	mo_resolved *resolved;  /* segs, n_segs, n_layers */
	uint32_t *segment_at;   /* per layer that starts a segment: its index */
} mo_resolve_segments;

/* Cuts the layers at layer type changes and at every range boundary of
 * every layer list. */
bool resolve_segments_cut(mo_resolve_segments *out, mo_resolved *r, const mo_config *c,
			     const mo_model *m, const mo_resolve_paths *paths, mo_arena *a);

/* The refs that apply to a segment, by group, in config order. */
typedef struct mo_active_lists {
	const mo_pattern_ref **select, **exclude, **comm, **op_swap;
	size_t n_select, n_exclude, n_comm, n_op_swap;
} mo_active_lists;

/* The active set, walked segment by segment: refs with ascending ranges
 * change state by events bucketed per segment, the others by a cursor. */
typedef struct mo_resolve_active {
	const mo_resolve_matches *matches;
	uint64_t *on;            /* per ref: applies to the current segment */
	size_t on_words, n_on;   /* words of `on`, refs set in it */
	uint32_t *add_start, *remove_start; /* per segment: its events */
	uint32_t *added, *removed;          /* ref indices */
	bool *by_cursor;         /* per ref: tracked by cursor, not by events */
	uint32_t *cursor_refs;
	size_t n_cursor_refs;
	size_t *cursor;          /* per ref: its first range not below the segment */
	mo_active_lists lists;   /* kept in step with `on` */
} mo_resolve_active;

/* Ascending, disjoint ranges (walked with a cursor as segments go). */
bool layers_ascending(const mo_layers *l);

bool resolve_active_init(mo_resolve_active *out, const mo_resolve_matches *matches,
			    const mo_resolve_segments *segments, mo_arena *a);
/* Makes the active set that of segment index si (segments in order). */
void resolve_active_advance(mo_resolve_active *act, size_t si, const mo_seg *g);

/* ---- findings.c: findings merged over segments ------------------------ */

typedef struct mo_finding {
	const char *code;
	const mo_pattern_ref *about, *other; /* other: a conflict's other side */
	uint64_t lo, hi;
} mo_finding;

/* A finding of one segment, without its layers: a twin repeats it. */
typedef struct mo_segment_finding {
	const char *code;
	const mo_pattern_ref *about, *other; /* other: a conflict's other side */
} mo_segment_finding;

typedef struct mo_resolve_findings {
	mo_finding *list;
	size_t n, cap;
	bool report;             /* findings become diagnostics */
	/* per segment (when reporting): its findings, so a twin (same key)
	 * repeats them without computing its actions */
	const mo_seg *segments;
	mo_segment_finding *log;
	size_t n_log, cap_log;
	uint32_t *log_start, *log_count;
	bool out_of_memory;
} mo_resolve_findings;

/* Ready for r's segments (their log, when reporting). */
bool findings_init(mo_resolve_findings *f, const mo_resolved *r, mo_arena *a);
void findings_add(mo_resolve_findings *f, const char *code, const mo_pattern_ref *about,
		     const mo_pattern_ref *other, uint64_t lo, uint64_t hi);
/* A finding of segment g, logged for the segments that share its key. */
void findings_add_segment(mo_resolve_findings *f, const mo_seg *g, const char *code,
			     const mo_pattern_ref *about, const mo_pattern_ref *other);
/* Segment g repeats segment twin: the same findings, on g's layers. */
void findings_replay(mo_resolve_findings *f, const mo_seg *twin, const mo_seg *g);
/* Marks segment g's first finding in the log (before it is filled). */
void findings_segment_start(mo_resolve_findings *f, const mo_seg *g);
/* The limit hits and the findings, as diagnostics. */
void findings_report(mo_resolve_findings *f, const mo_resolve_matches *matches,
			const mo_config *c, mo_diags *diags);
void findings_release(mo_resolve_findings *f);

/* ---- no_match.c ------------------------------------------------------- */

/* For each pattern and layer type it names: a warning when nothing
 * matches, with a suggestion. */
void resolve_check_no_match(const mo_resolve_matches *matches, const mo_config *c,
			       const mo_model *m, const mo_resolve_paths *paths, mo_diags *diags,
			       mo_arena *a);

/* ---- twins.c: segments that repeat an earlier one --------------------- */

/* A registered segment: its key's hash and index (its key, key[0] its
 * length then its words, is in key_of). */
typedef struct mo_twin_slot {
	uint32_t hash;
	uint32_t segment; /* index + 1; 0 = empty slot */
} mo_twin_slot;

typedef struct mo_segment_twins {
	mo_twin_slot *slots;
	size_t cap;
	const uint32_t **key_of; /* per registered segment: its key */
	uint32_t *key;           /* scratch: the key of the segment at hand */
} mo_segment_twins;

bool segment_twins_init(mo_segment_twins *out, const mo_resolved *r,
			   const mo_resolve_active *act, mo_arena *a);
/* An earlier segment of r with g's key (type, full, swap entry, active
 * set); registers g otherwise (NULL). */
const mo_seg *segment_twin(mo_segment_twins *tw, const mo_resolved *r,
			      const mo_resolve_active *act, const mo_seg *g, size_t swap_entry,
			      mo_arena *a);

/* ---- fill.c: the per-path actions of each segment --------------------- */

typedef struct mo_resolve_fill {
	const mo_config *config;
	const mo_model *model;
	const mo_resolve_paths *paths;
	const mo_resolve_matches *matches;
	mo_resolve_active *active;
	mo_resolve_findings *findings;
	mo_resolved *resolved;
	mo_arena *arena;
	/* validation only: one scratch set of per-path arrays for every
	 * segment instead of a plan kept per segment */
	bool scratch;
	/* scratch of one segment, sized for the largest type */
	const mo_pattern_ref **first; /* per path: the first ref matching it */
	bool *excluded;               /* per path (path-by-path fill) */
	uint64_t *path_union;         /* union of the active refs' bits */
	bool need_rules;   /* the fill on runs keeps rules per path */
	uint32_t *excluded_lo, *excluded_hi; /* fill on runs: excluded runs */
	size_t n_excluded;
	mo_action_kind *scratch_actions;
	mo_rule *scratch_rules;
	mo_action *scratch_roots;
	/* a full segment's actions (every path recomputed by
	 * full_recompute_layer), built once, copied per full segment */
	mo_action_kind *full_actions;
	bool full_ascending; /* full_recompute_layer walked by full_cursor */
	size_t full_cursor;
	const char **layer_swap_keys; /* "layer_swap[i]", made once */
	mo_segment_twins twins;
} mo_resolve_fill;

/* Fills every segment of f->resolved. */
bool resolve_fill_all(mo_resolve_fill *f);

/* Appends a root decision. A path roots at most one decision, so a
 * segment has at most n_paths + 1 of them: they go to a scratch array of
 * that size, copied at their count when the segment is done. */
static inline bool segment_add_root(mo_seg *g, const char *path, mo_action_kind k,
				       mo_rule rule)
{
	if (g->n_roots < g->cap_roots)
		g->roots[g->n_roots++] = (mo_action){path, k, rule};
	return true;
}

/* ---- fill_runs.c: the fill on types whose subtrees are runs ----------- */

bool runs_recompute(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt);
bool runs_exclude(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt);
bool runs_comm(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt);
bool runs_op_swap(mo_resolve_fill *f, mo_seg *g, const mo_layer_type *lt,
		     const mo_pattern_ref *ref);

/* Recomputed in backward: a recompute region, or one whose output is discarded too. */
static inline bool action_recomputes(mo_action_kind k)
{
	return k == MO_ACT_RECOMPUTE || k == MO_ACT_DISCARD_OUTPUT;
}

/* The action a select_module / discard_module pattern gives the paths it roots. */
static inline mo_action_kind pattern_ref_action(const mo_pattern_ref *ref)
{
	return ref->pattern->discard ? MO_ACT_DISCARD_OUTPUT : MO_ACT_RECOMPUTE;
}

#endif
