/* The config applied to a model: matching (each pattern against the
 * distinct path set of each layer type, never per layer), segments of
 * layers with identical settings, per-path actions with the rule that caused
 * them (SPEC 2.4), and the rules that need paths (no-match, op-recompute-swap,
 * exclude-no-effect). */
#include "resolve/resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum mo_group { MO_G_SELECT, MO_G_EXCLUDE, MO_G_COMM, MO_G_OPSWAP } mo_group;

typedef struct mo_ref {
	const mo_pattern *p;
	mo_group group;
	bool active;      /* the section applies it */
	mo_rule rule;
	mo_bits *match;   /* per layer type */
	bool limit_hit;
} mo_ref;

/* The refs that apply to a segment, by group, in config order. */
typedef struct mo_active {
	const mo_ref **sel, **exc, **comm, **ops;
	size_t n_sel, n_exc, n_comm, n_ops;
} mo_active;

typedef struct mo_finding {
	const char *code;
	const void *k1, *k2;
	uint64_t lo, hi;
} mo_finding;

/* A finding of one segment, without its layers: a twin repeats it. */
typedef struct mo_seg_finding {
	const char *code;
	const void *k1, *k2;
} mo_seg_finding;

typedef struct mo_run {
	uint64_t lo, hi;
	size_t type;
} mo_run;

/* A registered segment: its key's hash and index (its key, key[0] its
 * length then its words, is in mo_rs.seg_key). */
typedef struct mo_twin {
	uint32_t hash;
	uint32_t seg; /* index + 1; 0 = empty slot */
} mo_twin;

typedef struct mo_rs {
	mo_resolved *r;
	const mo_config *c;
	const mo_model *m;
	mo_diags *diags;
	mo_arena *a;
	mo_ref *refs;
	size_t n_refs;
	mo_finding *f;
	size_t n_f, cap_f;
	mo_run *runs;
	size_t n_runs;
	size_t *cursor; /* per ref: its first range not below the segment */
	size_t n_on;    /* refs set in `on` */
	uint32_t *seg_at;  /* per layer that starts a segment: its index */
	uint64_t *on;      /* per ref: applies to the current segment */
	size_t on_nw;
	uint32_t *add_start, *del_start; /* per segment: its events in ev_* */
	uint32_t *ev_add, *ev_del;       /* ref indices */
	bool *slow_of;     /* per ref: tracked by cursor, not by events */
	uint32_t *slow;
	size_t n_slow;
	size_t **plen;  /* per type, per path: strlen of the name */
	/* per type: every subtree is the run [p, end[p]) (depth-first order),
	 * so the fill works on runs of the matched bits */
	bool *runs_ok;
	uint32_t **end;
	uint64_t *u;    /* scratch: union of the active refs' bits */
	bool need_rules; /* the segment's fill on runs keeps rules per path */
	uint32_t *ex_lo, *ex_hi; /* fill on runs: the excluded runs [lo, hi) */
	size_t n_ex;
	mo_active *active; /* the active refs by group, kept by mo_on_set */
	size_t grp[4];     /* refs of group g start at index grp[g] */
	bool full_asc;   /* full_recompute_layer ascending: walked by full_cur */
	size_t full_cur;
	size_t nw_max;  /* words of the largest type */
	struct mo_path_cache *pc; /* the model's path info and memo, or NULL */
	bool *plain;    /* per type: every path is printable ASCII */
	/* validation only: one scratch set of per-path arrays for every
	 * segment instead of a plan kept per segment */
	bool scratch;
	bool report;    /* findings become diagnostics */
	const char **layer_swap_keys; /* "layer_swap[i]", made once */
	mo_twin *twins; /* plan building: segments by key, to share plans */
	size_t twin_cap;
	const uint32_t **seg_key; /* per registered segment: its key */
	uint32_t *key;
	mo_action_kind *s_act;
	mo_rule *s_rule;
	/* a full segment's act array (every path recomputed by
	 * full_recompute_layer), built once, copied per full segment */
	mo_action_kind *full_act;
	mo_action *s_roots;
	/* per segment: its findings, so a twin (same key) repeats them
	 * without computing its actions */
	mo_seg_finding *log;
	size_t n_log, cap_log;
	uint32_t *log_start, *log_n;
	bool nomem;
} mo_rs;

/* ---- bitsets over the paths of one layer type -------------------------- */

static void mo_bits_set(mo_bits *b, size_t i)
{
	b->w[i / 64] |= (uint64_t)1 << (i % 64);
}

static bool mo_bits_get(const mo_bits *b, size_t i)
{
	return b->w && (b->w[i / 64] >> (i % 64)) & 1;
}

static bool mo_bits_any(const mo_bits *b)
{
	for (size_t i = 0; i < b->nw; i++)
		if (b->w[i])
			return true;
	return false;
}

/* ---- findings merged over segments --------------------------------------- */

static void mo_rs_find(mo_rs *s, const char *code, const void *k1, const void *k2,
		       uint64_t lo, uint64_t hi)
{
	if (s->n_f && s->f[s->n_f - 1].code == code && s->f[s->n_f - 1].k1 == k1 &&
	    s->f[s->n_f - 1].k2 == k2 && s->f[s->n_f - 1].hi + 1 == lo) {
		s->f[s->n_f - 1].hi = hi;
		return;
	}
	if (s->n_f == s->cap_f) {
		size_t cap = s->cap_f ? s->cap_f * 2 : 32;
		mo_finding *f = realloc(s->f, cap * sizeof(*f));
		if (!f) {
			s->nomem = true;
			return;
		}
		s->f = f;
		s->cap_f = cap;
	}
	s->f[s->n_f++] = (mo_finding){code, k1, k2, lo, hi};
}

/* A finding of segment g, logged for the segments that share its key. */
static void mo_rs_seg_find(mo_rs *s, const mo_seg *g, const char *code, const void *k1,
			   const void *k2)
{
	mo_rs_find(s, code, k1, k2, g->lo, g->hi);
	if (!s->report)
		return;
	if (s->n_log == s->cap_log) {
		size_t cap = s->cap_log ? s->cap_log * 2 : 32;
		mo_seg_finding *l = realloc(s->log, cap * sizeof(*l));
		if (!l) {
			s->nomem = true;
			return;
		}
		s->log = l;
		s->cap_log = cap;
	}
	s->log[s->n_log++] = (mo_seg_finding){code, k1, k2};
	s->log_n[g - s->r->segs]++;
}

/* Segment g has the key of segment `twin`: the same findings, on g's layers
 * (mo_rs_find merges them with the previous ones exactly as computing them
 * would). */
static void mo_rs_seg_replay(mo_rs *s, const mo_seg *twin, const mo_seg *g)
{
	size_t t = (size_t)(twin - s->r->segs);
	for (uint32_t k = s->log_start[t]; k < s->log_start[t] + s->log_n[t]; k++)
		mo_rs_find(s, s->log[k].code, s->log[k].k1, s->log[k].k2, g->lo, g->hi);
}

/* Ranges of every finding with this code/k1/k2, marking them consumed. */
static void mo_rs_collect(mo_rs *s, size_t first, char *buf, size_t size)
{
	buf[0] = '\0';
	mo_finding *f0 = &s->f[first];
	for (size_t i = first; i < s->n_f; i++) {
		mo_finding *f = &s->f[i];
		if (f->code && f->code == f0->code && f->k1 == f0->k1 && f->k2 == f0->k2) {
			mo_ranges_append(buf, size, f->lo, f->hi);
			if (i != first)
				f->code = NULL;
		}
	}
}

/* ---- matching ---------------------------------------------------------- */

static bool mo_path_candidate(const mo_ref *ref, const mo_path *p)
{
	return ref->group != MO_G_COMM || p->kind == MO_PATH_COMM;
}

/* Path lengths per type, and whether the type's paths are all plain. */
/* Subtree ends of type t, and whether every subtree is one run. Sizes
 * add up children first (a parent comes before its children); a path
 * lying inside every ancestor's run, with runs as long as subtrees, makes
 * each subtree exactly its run. */
static bool mo_rs_subtrees(mo_rs *s, size_t t)
{
	const mo_layer_type *lt = &s->m->types[t];
	size_t np = lt->n_paths;
	uint32_t *end = mo_arena_alloc(s->a, (np ? np : 1) * sizeof(*end));
	if (!end)
		return false;
	s->end[t] = end;
	bool ok = np < UINT32_MAX;
	for (size_t p = 0; ok && p < np; p++) {
		end[p] = 1; /* the subtree size, for now */
		ok = lt->paths[p].parent < (int)p;
	}
	for (size_t p = np; ok && p-- > 0;)
		if (lt->paths[p].parent >= 0)
			end[lt->paths[p].parent] += end[p];
	for (size_t p = 0; ok && p < np; p++)
		end[p] += (uint32_t)p;
	for (size_t q = 0; ok && q < np; q++)
		for (int a = lt->paths[q].parent; ok && a >= 0; a = lt->paths[a].parent)
			ok = (size_t)a < q && q < end[a];
	s->runs_ok[t] = ok;
	return true;
}

static bool mo_rs_path_info(mo_rs *s)
{
	const mo_model *m = s->m;
	size_t nt = m->n_types ? m->n_types : 1, nw = 1;
	s->plen = mo_arena_alloc(s->a, nt * sizeof(*s->plen));
	s->plain = mo_arena_alloc(s->a, nt * sizeof(*s->plain));
	s->runs_ok = mo_arena_alloc(s->a, nt * sizeof(*s->runs_ok));
	s->end = mo_arena_alloc(s->a, nt * sizeof(*s->end));
	if (!s->plen || !s->plain || !s->runs_ok || !s->end)
		return false;
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		nw = (lt->n_paths + 63) / 64 > nw ? (lt->n_paths + 63) / 64 : nw;
		s->plen[t] = mo_arena_alloc(s->a, (lt->n_paths ? lt->n_paths : 1) * sizeof(size_t));
		if (!s->plen[t] || !mo_rs_subtrees(s, t))
			return false;
		s->plain[t] = true;
		for (size_t i = 0; i < lt->n_paths; i++) {
			s->plen[t][i] = strlen(lt->paths[i].name);
			s->plain[t] &= mo_subject_is_plain(lt->paths[i].name, s->plen[t][i]);
		}
	}
	s->nw_max = nw;
	return true;
}

/* Per plain type, the paths by first byte, by last byte, and the
 * communication ops, as bitsets: a pattern that starts or ends with a
 * literal (mo_regex_ends) is tried only on the paths that do too. */
typedef struct mo_path_index {
	size_t nw;
	uint64_t *by_first, *by_last; /* [256][nw] */
	uint64_t *any, *comm;         /* [nw] */
} mo_path_index;

static bool mo_index_build(mo_rs *s, mo_path_index *ix, size_t t)
{
	const mo_layer_type *lt = &s->m->types[t];
	ix->nw = (lt->n_paths + 63) / 64;
	size_t nw = ix->nw ? ix->nw : 1;
	ix->by_first = mo_arena_alloc(s->a, 256 * nw * sizeof(uint64_t));
	ix->by_last = mo_arena_alloc(s->a, 256 * nw * sizeof(uint64_t));
	ix->any = mo_arena_alloc(s->a, nw * sizeof(uint64_t));
	ix->comm = mo_arena_alloc(s->a, nw * sizeof(uint64_t));
	if (!ix->by_first || !ix->by_last || !ix->any || !ix->comm)
		return false;
	for (size_t i = 0; i < lt->n_paths; i++) {
		uint64_t bit = (uint64_t)1 << (i % 64);
		size_t w = i / 64, n = s->plen[t][i];
		const unsigned char *name = (const unsigned char *)lt->paths[i].name;
		ix->any[w] |= bit;
		if (lt->paths[i].kind == MO_PATH_COMM)
			ix->comm[w] |= bit;
		if (n) {
			ix->by_first[name[0] * ix->nw + w] |= bit;
			ix->by_last[name[n - 1] * ix->nw + w] |= bit;
		}
	}
	return true;
}

static void mo_match_one(mo_ref *ref, size_t t, size_t i, int rc)
{
	if (rc > 0)
		mo_bits_set(&ref->match[t], i);
	else if (rc < 0)
		ref->limit_hit = true;
}

/* The candidates of word w for a pattern with these end bytes. */
static uint64_t mo_index_cands(const mo_path_index *ix, const mo_ref *ref, size_t w, int first,
			       int last)
{
	uint64_t c = ref->group == MO_G_COMM ? ix->comm[w] : ix->any[w];
	if (first >= 0)
		c &= ix->by_first[(size_t)first * ix->nw + w];
	if (last >= 0)
		c &= ix->by_last[(size_t)last * ix->nw + w];
	return c;
}

static bool mo_rs_match_ref(mo_rs *s, mo_ref *ref, mo_matcher *mt, const mo_path_index *ix)
{
	const mo_model *m = s->m;
	if (!ref->p->re)
		return true;
	int first, last;
	mo_regex_ends(ref->p->re, &first, &last);
	for (size_t t = 0; t < m->n_types; t++) {
		const mo_layer_type *lt = &m->types[t];
		if (s->plain[t]) {
			for (size_t w = 0; w < ix[t].nw; w++)
				for (uint64_t c = mo_index_cands(&ix[t], ref, w, first, last); c; c &= c - 1) {
					size_t i = w * 64 + (size_t)__builtin_ctzll(c);
					mo_match_one(ref, t, i,
						     mo_matcher_match_plain(mt, ref->p->re, lt->paths[i].name,
									    s->plen[t][i]));
				}
			continue;
		}
		for (size_t i = 0; i < lt->n_paths; i++)
			if (mo_path_candidate(ref, &lt->paths[i]))
				mo_match_one(ref, t, i,
					     mo_matcher_match(mt, ref->p->re, lt->paths[i].name,
							      s->plen[t][i]));
	}
	return true;
}

static void mo_rs_add_ref(mo_rs *s, const mo_pattern *p, mo_group g, bool active,
			  const char *section, const char *key)
{
	mo_ref *ref = &s->refs[s->n_refs++];
	ref->p = p;
	ref->group = g;
	ref->active = active;
	ref->rule = (mo_rule){section, key, p->key ? p->key->line : 0};
}

/* dpath "recompute.select_module['x']" -> key "select_module['x']" */
static const char *mo_rule_key(const char *dpath)
{
	const char *dot = strchr(dpath, '.');
	return dot ? dot + 1 : dpath;
}

/* ---- the model's path info and pattern memo ----------------------------
 * What resolve derives from the model's paths alone (lengths, plainness,
 * subtree runs, the first / last byte index) is built once per model, and
 * the paths each pattern text matches are memoised with it (bounded): a
 * server validating config after config against a loaded model, or the web
 * UI's slider round trips, derive the paths and match each pattern once.
 * Both live in an arena of their own attached to the model (its resolve
 * slot, freed with the model; the layout is built once, at load). The
 * model's resolve lock guards them: it is taken twice per resolve, never
 * while matching. */

#define MO_PC_SLOTS 1024      /* memo slots (a power of two), at most half used */
#define MO_PC_MAX_TEXT 256    /* longer pattern texts are matched every time */
#define MO_PC_MAX_BYTES ((size_t)1 << 20)

typedef struct mo_pc_ent {
	uint64_t hash;
	const char *text;
	size_t len;
	uint32_t match_limit, depth_limit;
	bool comm;
	uint64_t *words; /* the words per ref (every type's bits) */
} mo_pc_ent;

struct mo_path_cache {
	mo_arena *arena; /* everything below */
	const mo_layer_type *types_at; /* what it was built for */
	size_t n_types;
	uint64_t layout_hash;
	size_t **plen;
	bool *plain, *runs_ok;
	uint32_t **end;
	struct mo_path_index *ix;
	size_t nw_max, words;
	struct mo_run *runs; /* the layer type runs of n_layers layers */
	size_t n_runs;
	uint64_t n_layers;
	size_t n_ent, bytes;
	mo_pc_ent *slots[MO_PC_SLOTS];
};

static bool mo_index_build(mo_rs *s, struct mo_path_index *ix, size_t t);
static size_t mo_rs_words_per_ref(const mo_rs *s);
static bool mo_rs_type_runs(mo_rs *s);

static void mo_pc_destroy(void *data)
{
	struct mo_path_cache *pc = data;
	mo_arena_free(pc->arena);
}

/* Builds the path info into an arena of its own. */
static struct mo_path_cache *mo_pc_build(const mo_model *m)
{
	mo_arena *a = mo_arena_new();
	mo_resolved r = {.n_layers = (uint64_t)(m->num_layers + m->mtp_num_layers)};
	mo_rs b = {.r = &r, .m = m, .a = a};
	struct mo_path_cache *pc = a ? mo_arena_alloc(a, sizeof(*pc)) : NULL;
	size_t nt = m->n_types ? m->n_types : 1;
	if (!pc || !mo_rs_path_info(&b) || (r.n_layers > 0 && !mo_rs_type_runs(&b)))
		goto fail_arena;
	pc->arena = a;
	pc->runs = b.runs;
	pc->n_runs = b.n_runs;
	pc->n_layers = r.n_layers;
	pc->ix = mo_arena_alloc(a, nt * sizeof(*pc->ix));
	if (!pc->ix)
		goto fail_arena;
	for (size_t t = 0; t < m->n_types; t++)
		if (b.plain[t] && !mo_index_build(&b, &pc->ix[t], t))
			goto fail_arena;
	pc->types_at = m->types;
	pc->n_types = m->n_types;
	pc->layout_hash = m->layout_hash;
	pc->plen = b.plen;
	pc->plain = b.plain;
	pc->runs_ok = b.runs_ok;
	pc->end = b.end;
	pc->nw_max = b.nw_max;
	pc->words = mo_rs_words_per_ref(&b);
	return pc;
fail_arena:
	mo_arena_free(a);
	return NULL;
}

/* The model's cache (built on first use), or NULL: then s derives its own. */
static struct mo_path_cache *mo_pc_get(const mo_model *m)
{
	mo_attachment *slot = mo_model_resolve_slot(m);
	pthread_mutex_lock(mo_model_resolve_lock(m));
	struct mo_path_cache *pc = slot->data;
	if (!pc && (pc = mo_pc_build(m)) != NULL)
		*slot = (mo_attachment){.data = pc, .destroy = mo_pc_destroy};
	pthread_mutex_unlock(mo_model_resolve_lock(m));
	if (pc && (pc->types_at != m->types || pc->n_types != m->n_types ||
		   pc->layout_hash != m->layout_hash))
		return NULL; /* the layout changed since: not cached */
	return pc;
}

static uint64_t mo_text_hash(const char *t, size_t n, bool comm, const mo_limits *lim)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n ^ (uint64_t)comm << 63, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, t + i, 8);
		h = (h ^ w) * 0xC2B2AE3D27D4EB4Full;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)t[i]) * 1099511628211ull;
	h ^= (uint64_t)lim->match_limit << 32 | lim->depth_limit;
	h *= 0x9E3779B97F4A7C15ull;
	return h ^ h >> 32;
}

static bool mo_pc_memoisable(const mo_ref *ref)
{
	return ref->p->re && ref->p->key && ref->p->key->len <= MO_PC_MAX_TEXT;
}

/* The memo's slot for a ref's text: its entry, or the empty slot where it
 * would go (NULL when the table is full and it is absent). */
static mo_pc_ent **mo_pc_slot(struct mo_path_cache *pc, const mo_ref *ref, uint64_t h,
			      const mo_limits *lim)
{
	const char *text = ref->p->regex;
	size_t len = ref->p->key->len;
	bool comm = ref->group == MO_G_COMM;
	for (size_t i = (size_t)h & (MO_PC_SLOTS - 1), k = 0; k < MO_PC_SLOTS;
	     i = (i + 1) & (MO_PC_SLOTS - 1), k++) {
		mo_pc_ent *e = pc->slots[i];
		if (!e)
			return &pc->slots[i];
		if (e->hash == h && e->len == len && e->comm == comm &&
		    e->match_limit == lim->match_limit && e->depth_limit == lim->depth_limit &&
		    memcmp(e->text, text, len) == 0)
			return &pc->slots[i];
	}
	return NULL;
}

/* Copies memoised matches into the refs; hit[i] marks those found. */
static void mo_pc_load(mo_rs *s, bool *hit, uint64_t *hash)
{
	const mo_limits *lim = &s->c->lim;
	size_t nt = s->m->n_types;
	pthread_mutex_lock(mo_model_resolve_lock(s->m));
	for (size_t i = 0; i < s->n_refs; i++) {
		mo_ref *ref = &s->refs[i];
		if (!mo_pc_memoisable(ref))
			continue;
		hash[i] = mo_text_hash(ref->p->regex, ref->p->key->len, ref->group == MO_G_COMM, lim);
		mo_pc_ent **slot = mo_pc_slot(s->pc, ref, hash[i], lim);
		if (!slot || !*slot)
			continue;
		const uint64_t *w = (*slot)->words;
		for (size_t t = 0; t < nt; t++) {
			mo_bits *b = &ref->match[t];
			for (size_t x = 0; x < b->nw; x++)
				b->w[x] = w[x];
			w += b->nw;
		}
		hit[i] = true;
	}
	pthread_mutex_unlock(mo_model_resolve_lock(s->m));
}

/* Memoises the refs matched here (not found, within the limits). Returns
 * whether every one of them is in the memo now. */
static bool mo_pc_store(mo_rs *s, const bool *hit, const bool *matched, const uint64_t *hash)
{
	bool all = true;
	const mo_limits *lim = &s->c->lim;
	struct mo_path_cache *pc = s->pc;
	mo_arena *a = pc->arena;
	pthread_mutex_lock(mo_model_resolve_lock(s->m));
	for (size_t i = 0; i < s->n_refs; i++) {
		const mo_ref *ref = &s->refs[i];
		if (hit[i] || !matched[i] || !ref->p->re)
			continue;
		if (ref->limit_hit || !mo_pc_memoisable(ref)) {
			all = false;
			continue;
		}
		size_t len = ref->p->key->len, need = sizeof(mo_pc_ent) + len + 1 +
						      pc->words * sizeof(uint64_t);
		if (2 * (pc->n_ent + 1) > MO_PC_SLOTS || pc->bytes + need > MO_PC_MAX_BYTES) {
			all = false;
			break; /* full: the rest are matched every time */
		}
		mo_pc_ent **slot = mo_pc_slot(pc, ref, hash[i], lim);
		if (!slot || *slot)
			continue; /* a repeated text, stored already */
		mo_pc_ent *e = mo_arena_alloc_raw(a, sizeof(*e));
		uint64_t *words = mo_arena_alloc_raw(a, (pc->words ? pc->words : 1) * sizeof(uint64_t));
		char *text = mo_arena_strndup(a, ref->p->regex, len);
		if (!e || !words || !text) {
			all = false;
			break;
		}
		uint64_t *w = words;
		for (size_t t = 0; t < s->m->n_types; t++) {
			const mo_bits *b = &ref->match[t];
			for (size_t x = 0; x < b->nw; x++)
				w[x] = b->w[x];
			w += b->nw;
		}
		*e = (mo_pc_ent){hash[i], text, len, lim->match_limit, lim->depth_limit,
				 ref->group == MO_G_COMM, words};
		*slot = e;
		pc->n_ent++;
		pc->bytes += need;
	}
	pthread_mutex_unlock(mo_model_resolve_lock(s->m));
	return all;
}

/* ---- match memo: validate then expand/estimate match once ------------- */

struct mo_match_cache {
	uint64_t layout_hash;
	size_t n_refs, n_words; /* words per ref: sum over types */
	uint64_t *words;
	bool *limit_hit;
};

static void mo_match_cache_free(struct mo_match_cache *mc)
{
	if (!mc)
		return;
	free(mc->words);
	free(mc->limit_hit);
	free(mc);
}

static void mo_match_cache_destroy(void *mc)
{
	mo_match_cache_free(mc);
}

static size_t mo_rs_words_per_ref(const mo_rs *s)
{
	size_t n = 0;
	for (size_t t = 0; t < s->m->n_types; t++)
		n += (s->m->types[t].n_paths + 63) / 64;
	return n;
}

/* The config is const to its readers; its memo is the one mutable part,
 * behind its lock. */
static bool mo_rs_cache_load(mo_rs *s)
{
	mo_config *c = (mo_config *)s->c;
	bool hit = false;
	pthread_mutex_lock(&c->memo_lock);
	const struct mo_match_cache *mc = c->match_memo.data;
	if (mc && mc->layout_hash == s->m->layout_hash && mc->n_refs == s->n_refs &&
	    mc->n_words == mo_rs_words_per_ref(s)) {
		const uint64_t *w = mc->words;
		for (size_t i = 0; i < s->n_refs; i++) {
			s->refs[i].limit_hit = mc->limit_hit[i];
			for (size_t t = 0; t < s->m->n_types; t++) {
				mo_bits *b = &s->refs[i].match[t];
				memcpy(b->w, w, b->nw * sizeof(uint64_t));
				w += b->nw;
			}
		}
		hit = true;
	}
	pthread_mutex_unlock(&c->memo_lock);
	return hit;
}

static void mo_rs_cache_store(mo_rs *s)
{
	mo_config *c = (mo_config *)s->c;
	size_t nw = mo_rs_words_per_ref(s);
	struct mo_match_cache *mc = calloc(1, sizeof(*mc));
	if (!mc)
		return;
	mc->layout_hash = s->m->layout_hash;
	mc->n_refs = s->n_refs;
	mc->n_words = nw;
	size_t total = s->n_refs * nw;
	mc->words = malloc((total ? total : 1) * sizeof(uint64_t));
	mc->limit_hit = malloc((s->n_refs ? s->n_refs : 1) * sizeof(bool));
	if (!mc->words || !mc->limit_hit) {
		mo_match_cache_free(mc);
		return;
	}
	uint64_t *w = mc->words;
	for (size_t i = 0; i < s->n_refs; i++) {
		mc->limit_hit[i] = s->refs[i].limit_hit;
		for (size_t t = 0; t < s->m->n_types; t++) {
			const mo_bits *b = &s->refs[i].match[t];
			memcpy(w, b->w, b->nw * sizeof(uint64_t));
			w += b->nw;
		}
	}
	mo_attachment old;
	pthread_mutex_lock(&c->memo_lock);
	old = c->match_memo;
	c->match_memo = (mo_attachment){.data = mc, .destroy = mo_match_cache_destroy};
	pthread_mutex_unlock(&c->memo_lock);
	mo_attachment_clear(&old);
}

/* Every ref's bitsets (one per layer type), carved from two blocks. */
static bool mo_rs_alloc_matches(mo_rs *s)
{
	size_t nt = s->m->n_types, nw = mo_rs_words_per_ref(s);
	if (!s->n_refs || !nt)
		return true;
	mo_bits *bits = mo_arena_alloc(s->a, s->n_refs * nt * sizeof(mo_bits));
	uint64_t *w = nw ? mo_arena_alloc(s->a, s->n_refs * nw * sizeof(uint64_t)) : NULL;
	if (!bits || (nw && !w))
		return false;
	for (size_t i = 0; i < s->n_refs; i++) {
		s->refs[i].match = bits + i * nt;
		for (size_t t = 0; t < nt; t++) {
			mo_bits *b = &s->refs[i].match[t];
			b->nw = (s->m->types[t].n_paths + 63) / 64;
			b->w = b->nw ? w : NULL;
			w += b->nw;
		}
	}
	return true;
}

static bool mo_rs_info(mo_rs *s);
static bool mo_rs_match_all(mo_rs *s);

static bool mo_rs_refs(mo_rs *s)
{
	const mo_config *c = s->c;
	size_t n = c->select.n + c->exclude.n + c->comm.n + c->n_op_swap;
	s->refs = n ? mo_arena_alloc(s->a, n * sizeof(*s->refs)) : NULL;
	if (n && !s->refs)
		return false;
	bool rec = c->mode != MO_MODE_NONE;
	for (size_t i = 0; i < c->select.n; i++)
		mo_rs_add_ref(s, &c->select.p[i], MO_G_SELECT, rec, "recompute",
			      mo_rule_key(c->select.p[i].dpath));
	for (size_t i = 0; i < c->exclude.n; i++)
		mo_rs_add_ref(s, &c->exclude.p[i], MO_G_EXCLUDE, rec, "recompute",
			      mo_rule_key(c->exclude.p[i].dpath));
	for (size_t i = 0; i < c->comm.n; i++)
		mo_rs_add_ref(s, &c->comm.p[i], MO_G_COMM, c->comm_enable, "recompute_comm",
			      mo_rule_key(c->comm.p[i].dpath));
	for (size_t i = 0; i < c->n_op_swap; i++) {
		const char *key = mo_arena_indexed(s->a, "op_swap", i);
		mo_rs_add_ref(s, &c->op_swap[i].pat, MO_G_OPSWAP, c->swap_enable, "swap", key);
		s->refs[s->n_refs - 1].rule.line = c->op_swap[i].at->line;
	}
	if (!mo_rs_info(s) || !mo_rs_alloc_matches(s))
		return false;
	if (mo_rs_cache_load(s))
		return true;
	return mo_rs_match_all(s);
}

/* The path info: the model's cache, else derived here. */
static bool mo_rs_info(mo_rs *s)
{
	s->pc = mo_pc_get(s->m);
	if (s->pc) {
		s->plen = s->pc->plen;
		s->plain = s->pc->plain;
		s->runs_ok = s->pc->runs_ok;
		s->end = s->pc->end;
		s->nw_max = s->pc->nw_max;
	} else if (!mo_rs_path_info(s)) {
		return false;
	}
	s->u = mo_arena_alloc(s->a, s->nw_max * sizeof(*s->u));
	return s->u != NULL;
}

/* Every ref's matches: memoised, copied from a ref with the same regex,
 * or matched (then memoised). */
static bool mo_rs_match_all(mo_rs *s)
{
	size_t nr = s->n_refs ? s->n_refs : 1;
	mo_path_index *ix = s->pc ? s->pc->ix : mo_arena_alloc(s->a, (s->m->n_types ? s->m->n_types : 1) * sizeof(*ix));
	for (size_t t = 0; ix && !s->pc && t < s->m->n_types; t++)
		if (s->plain[t] && !mo_index_build(s, &ix[t], t))
			return false;
	bool *hit = mo_arena_alloc(s->a, 2 * nr * sizeof(bool)), *matched = hit ? hit + nr : NULL;
	uint64_t *hash = mo_arena_alloc_raw(s->a, nr * sizeof(uint64_t));
	if (!ix || !hit || !hash)
		return false;
	if (s->pc)
		mo_pc_load(s, hit, hash);
	mo_matcher *mt = mo_matcher_new();
	if (!mt)
		return false;
	/* refs sharing a regex (a repeated pattern text, see mo_cfg_compile)
	 * and its candidate paths (comm ops or all) match the same paths: the
	 * first one's bits are copied (open addressing on the regex) */
	size_t cap = 16;
	while (cap < 2 * s->n_refs)
		cap *= 2;
	uint32_t *seen = mo_arena_alloc(s->a, cap * sizeof(*seen));
	bool ok = seen != NULL;
	for (size_t i = 0; ok && i < s->n_refs; i++) {
		mo_ref *ref = &s->refs[i];
		const mo_ref *twin = NULL;
		size_t slot = 0;
		if (ref->p->re) {
			uintptr_t key = (uintptr_t)ref->p->re ^ (ref->group == MO_G_COMM);
			slot = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
			for (; seen[slot]; slot = (slot + 1) & (cap - 1)) {
				const mo_ref *o = &s->refs[seen[slot] - 1];
				if (o->p->re == ref->p->re &&
				    (o->group == MO_G_COMM) == (ref->group == MO_G_COMM)) {
					twin = o;
					break;
				}
			}
		}
		if (twin) {
			ref->limit_hit = twin->limit_hit;
			for (size_t t = 0; t < s->m->n_types; t++)
				if (ref->match[t].nw)
					memcpy(ref->match[t].w, twin->match[t].w,
					       ref->match[t].nw * sizeof(uint64_t));
			continue;
		}
		if (!hit[i]) {
			ok = mo_rs_match_ref(s, ref, mt, ix);
			matched[i] = true;
		}
		if (ref->p->re)
			seen[slot] = (uint32_t)i + 1;
	}
	mo_matcher_free(mt);
	/* the config's own memo only when the model's does not hold every
	 * pattern (then it serves the next resolve) */
	if (ok && !(s->pc && mo_pc_store(s, hit, matched, hash)))
		mo_rs_cache_store(s);
	return ok;
}

/* ---- no-match, with the pattern that would match ---------------------- */

static bool mo_pattern_matches_type(const mo_rs *s, const mo_ref *ref, const char *rx,
				    size_t t)
{
	const char *msg;
	size_t off;
	mo_regex *re = mo_regex_compile(rx, strlen(rx), &s->c->lim, s->a, &msg, &off);
	if (!re)
		return false;
	mo_matcher *mt = mo_matcher_new();
	bool hit = false;
	const mo_layer_type *lt = &s->m->types[t];
	for (size_t i = 0; mt && !hit && i < lt->n_paths; i++)
		hit = mo_path_candidate(ref, &lt->paths[i]) &&
		      mo_matcher_match(mt, re, lt->paths[i].name, strlen(lt->paths[i].name)) > 0;
	mo_matcher_free(mt);
	mo_regex_free(re);
	return hit;
}

/* Drops a leading part written as if paths were absolute
 * ("layers.*.self_attention.*" -> "self_attention.*"). */
static bool mo_suggest_strip(const mo_rs *s, const mo_ref *ref, size_t t, char *out,
			     size_t size)
{
	const char *rx = ref->p->regex;
	for (size_t i = 0; rx[i] && i < 200; i++) {
		if (rx[i] != '.' || (i && rx[i - 1] == '\\') || !rx[i + 1])
			continue;
		if (mo_pattern_matches_type(s, ref, rx + i + 1, t)) {
			snprintf(out, size, "'%.*s'", (int)(size - 3), rx + i + 1);
			return true;
		}
	}
	return false;
}

static void mo_normalize(const char *in, size_t len, char *out, size_t size)
{
	size_t j = 0;
	for (size_t i = 0; i < len && j + 1 < size; i++)
		if (in[i] != '_' && in[i] != '-')
			out[j++] = (char)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] + 32 : in[i]);
	out[j] = '\0';
}

static bool mo_word_char(char ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

/* Names other codebases use for the same cells. */
static const char *mo_synonym(const mo_rs *s, const mo_ref *ref, size_t t, const char *word)
{
	static const char *const pairs[][2] = {
		{"feedforward", "mlp"},   {"ffn", "mlp"},       {"mlps", "mlp"},
		{"attention", "self_attention"}, {"attn", "self_attention"},
		{"selfattn", "self_attention"},  {"moe", "experts"}, {"gate", "router"},
		{"qkv", "linear_qkv"},    {"oproj", "linear_proj"}, {"act", "activation_func"},
	};
	const mo_layer_type *lt = &s->m->types[t];
	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		if (strcmp(word, pairs[k][0]) != 0)
			continue;
		for (size_t i = 0; i < lt->n_paths; i++) {
			const char *name = lt->paths[i].name, *last = strrchr(name, '.');
			last = last ? last + 1 : name;
			if (mo_path_candidate(ref, &lt->paths[i]) && strcmp(last, pairs[k][1]) == 0)
				return last;
		}
	}
	return NULL;
}

/* Compares the pattern's last word with the paths' last segments
 * ("all_gather" -> "allgather", "feed_forward" -> nothing close). */
static bool mo_suggest_word(const mo_rs *s, const mo_ref *ref, size_t t, char *out,
			    size_t size)
{
	const char *rx = ref->p->regex;
	size_t len = strlen(rx), end = len, start;
	while (end && !mo_word_char(rx[end - 1]))
		end--;
	start = end;
	while (start && mo_word_char(rx[start - 1]))
		start--;
	if (end - start < 3)
		return false;
	char word[128], seg[128];
	mo_normalize(rx + start, end - start, word, sizeof word);
	const mo_layer_type *lt = &s->m->types[t];
	const char *best = NULL;
	size_t best_d = word[0] ? strlen(word) / 3 + 1 : 0;
	for (size_t i = 0; i < lt->n_paths; i++) {
		if (!mo_path_candidate(ref, &lt->paths[i]))
			continue;
		const char *name = lt->paths[i].name, *last = strrchr(name, '.');
		last = last ? last + 1 : name;
		mo_normalize(last, strlen(last), seg, sizeof seg);
		size_t d = mo_edit_distance(word, seg, best_d);
		if (d < best_d) {
			best_d = d;
			best = last;
		}
	}
	if (!best)
		best = mo_synonym(s, ref, t, word);
	if (!best)
		return false;
	snprintf(out, size, "'.*%s'", best);
	return true;
}

static void mo_rs_no_match(mo_rs *s, const mo_ref *ref, size_t t, const char *layers)
{
	const mo_layer_type *lt = &s->m->types[t];
	bool any_candidate = false;
	for (size_t i = 0; i < lt->n_paths && !any_candidate; i++)
		any_candidate = mo_path_candidate(ref, &lt->paths[i]);
	mo_diag *d = mo_diags_add_at(
		s->diags, MO_SEV_WARNING, "no-match", s->c->doc->name, ref->p->key, ref->p->dpath,
		"pattern '%.60s' matches no %s in layers %s (%s layers); it does nothing there",
		ref->p->regex, ref->group == MO_G_COMM ? "communication op" : "path", layers,
		lt->name);
	mo_diag_set_layers(s->diags, d, layers);
	char sug[160];
	static const char *const comm_ops[] = {"allgather", "all_gather", "reducescatter",
					       "reduce_scatter", "allreduce", "all_reduce",
					       "alltoall", "all_to_all"};
	bool names_comm = false;
	for (size_t i = 0; i < sizeof comm_ops / sizeof comm_ops[0]; i++)
		names_comm |= strstr(ref->p->regex, comm_ops[i]) != NULL;
	bool type_has_comm = false;
	for (size_t i = 0; i < lt->n_paths; i++)
		type_has_comm |= lt->paths[i].kind == MO_PATH_COMM;
	if (names_comm && !type_has_comm)
		any_candidate = false;
	if (!any_candidate)
		mo_diag_set_hint(s->diags, d,
				 "these layers have no communication ops: TP, EP and CP are 1");
	else if (mo_suggest_strip(s, ref, t, sug, sizeof sug) ||
		 mo_suggest_word(s, ref, t, sug, sizeof sug))
		mo_diag_set_hint(s->diags, d, "did you mean %s? paths are relative to the layer", sug);
	else
		mo_diag_set_hint(s->diags, d, "paths look like '%s' or '%s' (memopt expand --paths lists them)",
				 lt->n_paths ? lt->paths[0].name : "",
				 lt->n_paths > 1 ? lt->paths[lt->n_paths - 1].name : "");
}

/* Runs of consecutive layers of one type (types are contiguous in
 * practice; interleaved MoE gives one run per layer at worst). */
static bool mo_rs_type_runs(mo_rs *s)
{
	uint64_t N = s->r->n_layers; /* > 0 */
	if (s->pc && s->pc->n_layers == N && s->pc->runs) { /* the model's */
		s->runs = s->pc->runs;
		s->n_runs = s->pc->n_runs;
		return true;
	}
	const size_t *type_of = s->m->type_of;
	/* one pass into a small buffer (models have a few runs); counted
	 * first only when it is too small */
	mo_run small[16];
	mo_run *runs = small;
	size_t n = 0, cap = sizeof(small) / sizeof(small[0]);
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (uint64_t id = 0; id < N;) {
			uint64_t lo = id;
			size_t t = type_of[id];
			while (++id < N && type_of[id] == t)
				;
			if (n < cap)
				runs[n] = (mo_run){lo, id - 1, t};
			n++;
		}
		if (n <= cap)
			break;
		runs = mo_arena_alloc_raw(s->a, n * sizeof(*runs));
		if (!runs)
			return false;
		cap = n;
	}
	if (runs == small) {
		runs = mo_arena_alloc_raw(s->a, n * sizeof(*runs));
		if (!runs)
			return false;
		memcpy(runs, small, n * sizeof(*runs));
	}
	s->runs = runs;
	s->n_runs = n;
	return true;
}

/* The layers a pattern names that have type t, as text ("" if none). */
static void mo_rs_named_of_type(const mo_rs *s, const mo_layers *l, size_t t, char *buf,
				size_t size)
{
	buf[0] = '\0';
	size_t j = 0;
	for (size_t k = 0; k < l->n; k++) {
		while (j < s->n_runs && s->runs[j].hi < l->r[k].lo)
			j++;
		for (size_t q = j; q < s->n_runs && s->runs[q].lo <= l->r[k].hi; q++) {
			if (s->runs[q].type != t)
				continue;
			uint64_t lo = l->r[k].lo > s->runs[q].lo ? l->r[k].lo : s->runs[q].lo;
			uint64_t hi = l->r[k].hi < s->runs[q].hi ? l->r[k].hi : s->runs[q].hi;
			mo_ranges_append(buf, size, lo, hi);
		}
	}
}

/* For each pattern and layer type it names: a warning when nothing matches. */
static void mo_rs_check_no_match(mo_rs *s)
{
	char layers[160];
	for (size_t i = 0; i < s->n_refs; i++) {
		const mo_ref *ref = &s->refs[i];
		if (!ref->p->re || ref->limit_hit)
			continue;
		for (size_t t = 0; t < s->m->n_types; t++) {
			if (mo_bits_any(&ref->match[t]))
				continue;
			mo_rs_named_of_type(s, &ref->p->layers, t, layers, sizeof layers);
			if (layers[0])
				mo_rs_no_match(s, ref, t, layers);
		}
	}
}

/* ---- segments ------------------------------------------------------------ */

/* Marks the first layer of every range and the layer after it. */
static void mo_cuts_mark(uint8_t *mark, const mo_layers *l, uint64_t N)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->r[i].lo < N)
			mark[l->r[i].lo] = 1;
		if (l->r[i].hi < N - 1)
			mark[l->r[i].hi + 1] = 1;
	}
}

/* Segments start at layer 0, at every layer type change and at every
 * range boundary of every layer list. A mark per layer instead of a sort
 * of the cut points: O(layers + ranges). */
static bool mo_rs_segments(mo_rs *s)
{
	const mo_config *c = s->c;
	const mo_model *m = s->m;
	uint64_t N = s->r->n_layers;
	uint8_t *mark = calloc((size_t)N, 1);
	if (!mark)
		return false;
	for (size_t r = 0; r < s->n_runs; r++) /* layer 0 and layer type changes */
		mark[s->runs[r].lo] = 1;
	mo_cuts_mark(mark, &c->full, N);
	const mo_pattern_list *lists[] = {&c->select, &c->exclude, &c->comm};
	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			mo_cuts_mark(mark, &lists[l]->p[i].layers, N);
	for (size_t i = 0; i < c->n_layer_swap; i++)
		mo_cuts_mark(mark, &c->layer_swap[i].layers, N);
	for (size_t i = 0; i < c->n_op_swap; i++)
		mo_cuts_mark(mark, &c->op_swap[i].pat.layers, N);
	/* marks are 0 or 1: eight at a time, their sum in the top byte */
	size_t u = 0;
	uint64_t id8 = 0;
	for (; id8 + 8 <= N; id8 += 8) {
		uint64_t w;
		memcpy(&w, mark + id8, 8);
		u += (size_t)((w * 0x0101010101010101ull) >> 56);
	}
	for (; id8 < N; id8++)
		u += mark[id8];
	s->r->segs = mo_arena_alloc_raw(s->a, u * sizeof(mo_seg));
	s->seg_at = mo_arena_alloc_raw(s->a, (size_t)N * sizeof(*s->seg_at));
	if (!s->r->segs || !s->seg_at) {
		free(mark);
		return false;
	}
	size_t k = 0;
	for (uint64_t id = 0; id < N; id++) {
		if (!mark[id]) {
			uint64_t w;
			while (id + 8 < N && (memcpy(&w, mark + id + 1, 8), w == 0))
				id += 8;
			continue;
		}
		if (k)
			s->r->segs[k - 1].hi = id - 1;
		s->seg_at[id] = (uint32_t)k;
		s->r->segs[k++] = (mo_seg){.lo = id, .hi = N - 1, .type = m->type_of[id]};
	}
	s->r->n_segs = u;
	free(mark);
	return true;
}

/* ---- actions of one segment --------------------------------------------- */

static bool mo_is_desc(const mo_layer_type *lt, size_t q, size_t p)
{
	for (int a = lt->paths[q].parent; a >= 0; a = lt->paths[a].parent)
		if ((size_t)a == p)
			return true;
	return false;
}

/* Appends a root decision. A path roots at most one decision, so a
 * segment has at most n_paths + 1 of them: they go to a scratch array of
 * that size, copied at their count when the segment is done. */
static bool mo_seg_root(mo_rs *s, mo_seg *g, const char *path, mo_action_kind k, mo_rule rule)
{
	(void)s;
	if (g->n_roots < g->cap_roots)
		g->roots[g->n_roots++] = (mo_action){path, k, rule};
	return true;
}

/* The roots gathered in the scratch array, kept at their exact size. */
static bool mo_seg_keep_roots(mo_rs *s, mo_seg *g)
{
	if (s->scratch)
		return true;
	mo_arena_shrink(s->a, g->roots, g->cap_roots * sizeof(*g->roots),
			g->n_roots * sizeof(*g->roots));
	g->cap_roots = g->n_roots;
	return true;
}



/* A ref applies to a segment when one of its ranges holds the segment's
 * first layer (segments are cut at every range boundary). */
static bool mo_rs_eligible(const mo_ref *ref)
{
	return ref->active && ref->p->re;
}

/* Ascending, disjoint ranges: the ref's state then changes only at its own
 * range boundaries, so it is tracked by events; any other list keeps the
 * cursor walk (below) that defines the answer. */
static bool mo_layers_ascending(const mo_layers *l)
{
	for (size_t k = 0; k < l->n; k++)
		if (l->r[k].lo > l->r[k].hi || (k + 1 < l->n && l->r[k].hi >= l->r[k + 1].lo))
			return false;
	return true;
}

/* Counts (fill false) or stores (fill true) the add/remove events of the
 * event-tracked refs, bucketed by the segment where they happen. */
static void mo_rs_events_pass(mo_rs *s, bool fill, uint32_t *add_at, uint32_t *del_at)
{
	uint64_t N = s->r->n_layers;
	for (size_t i = 0; i < s->n_refs; i++) {
		const mo_ref *ref = &s->refs[i];
		if (!mo_rs_eligible(ref) || s->slow_of[i])
			continue;
		const mo_layers *l = &ref->p->layers;
		for (size_t k = 0; k < l->n; k++) {
			if (l->r[k].lo < N) {
				uint32_t b = s->seg_at[l->r[k].lo];
				if (fill)
					s->ev_add[add_at[b]++] = (uint32_t)i;
				else
					s->add_start[b + 1]++;
			}
			if (l->r[k].lo < N && l->r[k].hi < N - 1) {
				uint32_t b = s->seg_at[l->r[k].hi + 1];
				if (fill)
					s->ev_del[del_at[b]++] = (uint32_t)i;
				else
					s->del_start[b + 1]++;
			}
		}
	}
}

/* The incremental active set: per segment, only the refs whose ranges
 * start or end there change (O(events) instead of O(refs) a segment). */
static bool mo_rs_events(mo_rs *s)
{
	size_t ns = s->r->n_segs, nr = s->n_refs ? s->n_refs : 1;
	s->on_nw = (nr + 63) / 64;
	s->on = mo_arena_alloc(s->a, s->on_nw * sizeof(*s->on));
	s->slow_of = mo_arena_alloc(s->a, nr * sizeof(*s->slow_of));
	s->slow = mo_arena_alloc(s->a, nr * sizeof(*s->slow));
	s->add_start = mo_arena_alloc(s->a, (ns + 1) * sizeof(uint32_t));
	s->del_start = mo_arena_alloc(s->a, (ns + 1) * sizeof(uint32_t));
	uint32_t *add_at = malloc((ns + 1) * sizeof(uint32_t));
	uint32_t *del_at = malloc((ns + 1) * sizeof(uint32_t));
	bool ok = s->on && s->slow_of && s->slow && s->add_start && s->del_start && add_at && del_at;
	for (size_t i = 0; ok && i < s->n_refs; i++)
		if (mo_rs_eligible(&s->refs[i]) && !mo_layers_ascending(&s->refs[i].p->layers)) {
			s->slow_of[i] = true;
			s->slow[s->n_slow++] = (uint32_t)i;
		}
	if (ok) {
		mo_rs_events_pass(s, false, NULL, NULL);
		for (size_t b = 0; b < ns; b++) {
			s->add_start[b + 1] += s->add_start[b];
			s->del_start[b + 1] += s->del_start[b];
		}
		s->ev_add = mo_arena_alloc(s->a, (s->add_start[ns] + 1) * sizeof(uint32_t));
		s->ev_del = mo_arena_alloc(s->a, (s->del_start[ns] + 1) * sizeof(uint32_t));
		ok = s->ev_add && s->ev_del;
	}
	if (ok) {
		memcpy(add_at, s->add_start, ns * sizeof(uint32_t));
		memcpy(del_at, s->del_start, ns * sizeof(uint32_t));
		mo_rs_events_pass(s, true, add_at, del_at);
	}
	free(add_at);
	free(del_at);
	return ok;
}

/* Adds ref to (on) or removes it from a list kept in config order (refs
 * is one array: pointer order is config order). */
static void mo_list_set(const mo_ref **list, size_t *n, const mo_ref *ref, bool on)
{
	size_t k = *n;
	if (on) {
		for (; k > 0 && list[k - 1] > ref; k--)
			list[k] = list[k - 1];
		list[k] = ref;
		(*n)++;
		return;
	}
	for (k = 0; k < *n && list[k] != ref; k++)
		;
	if (k == *n)
		return; /* not listed (not reached: the list follows `on`) */
	for (; k + 1 < *n; k++)
		list[k] = list[k + 1];
	(*n)--;
}

/* Ref i's state; the active lists follow each change (a segment changes
 * few refs: cheaper than listing the active set per segment). */
static void mo_on_set(mo_rs *s, size_t i, bool on)
{
	uint64_t bit = (uint64_t)1 << (i % 64), old = s->on[i / 64];
	uint64_t now = on ? old | bit : old & ~bit;
	if (now == old)
		return;
	s->n_on = on ? s->n_on + 1 : s->n_on - 1;
	s->on[i / 64] = now;
	mo_active *act = s->active;
	const mo_ref *ref = &s->refs[i];
	if (i < s->grp[1])
		mo_list_set(act->sel, &act->n_sel, ref, on);
	else if (i < s->grp[2])
		mo_list_set(act->exc, &act->n_exc, ref, on);
	else if (i < s->grp[3])
		mo_list_set(act->comm, &act->n_comm, ref, on);
	else
		mo_list_set(act->ops, &act->n_ops, ref, on);
}

/* The refs that apply to segment si (the set `on`): its events applied
 * (removals first: a range may end where the next begins), the cursor walk
 * for the other refs (segments come in ascending order, so every cursor
 * only moves forward). */
static void mo_rs_advance(mo_rs *s, size_t si, const mo_seg *g)
{
	for (uint32_t k = s->del_start[si]; k < s->del_start[si + 1]; k++)
		mo_on_set(s, s->ev_del[k], false);
	for (uint32_t k = s->add_start[si]; k < s->add_start[si + 1]; k++)
		mo_on_set(s, s->ev_add[k], true);
	for (size_t j = 0; j < s->n_slow; j++) {
		size_t i = s->slow[j];
		const mo_layers *l = &s->refs[i].p->layers;
		size_t *cur = &s->cursor[i];
		while (*cur < l->n && l->r[*cur].hi < g->lo)
			(*cur)++;
		mo_on_set(s, i, *cur < l->n && l->r[*cur].lo <= g->lo);
	}
}

static mo_rule mo_full_rule(const mo_config *c)
{
	return (mo_rule){"recompute", "full_recompute_layer", c->full.at ? c->full.at->line : 0};
}

/* For every path, the first ref (in config order) of the list that
 * matches it; NULL where none does. */
static void mo_first_match(const mo_ref **refs, size_t n, size_t type, const mo_ref **first,
			   size_t np)
{
	memset(first, 0, np * sizeof(*first));
	for (size_t i = n; i-- > 0;) /* the earliest ref writes last */
		for (size_t w = 0; w < refs[i]->match[type].nw; w++)
			for (uint64_t bits = refs[i]->match[type].w[w]; bits; bits &= bits - 1)
				first[w * 64 + (size_t)__builtin_ctzll(bits)] = refs[i];
}

static const void *mo_rule_origin(const mo_rs *s, const mo_rule *rule)
{
	for (size_t i = 0; i < s->n_refs; i++)
		if (s->refs[i].rule.key == rule->key)
			return &s->refs[i];
	return NULL;
}

/* ---- the fill on runs: types whose subtrees are runs [p, end[p]) ------
 * Same decisions as the path-by-path loops below, visiting only matched
 * paths: a matched path outside every decided run roots a decision for
 * its whole run (its descendants inherit), in path order. */

/* s->u = the union over refs of their bits on type t, and for each of its
 * paths first[q] = the earliest ref (config order) matching q: the refs
 * write in reverse order. Returns the word count. */
static size_t mo_union(mo_rs *s, const mo_ref *const *refs, size_t n, size_t t,
		       const mo_ref **first)
{
	size_t nw = (s->m->types[t].n_paths + 63) / 64;
	uint64_t *u = s->u;
	u[0] = 0; /* nw >= 1 here (a path matched); one word mostly: no memset call */
	if (nw > 1)
		memset(u + 1, 0, (nw - 1) * sizeof(*u));
	for (size_t i = 0; i < n; i++) /* a path's first ref is the one adding it */
		for (size_t w = 0; w < nw; w++) {
			uint64_t bits = refs[i]->match[t].w[w], add = bits & ~u[w];
			u[w] |= bits;
			for (; add; add &= add - 1)
				first[w * 64 + (size_t)__builtin_ctzll(add)] = refs[i];
		}
	return nw;
}

/* The first set bit of u at or after `from`, or SIZE_MAX. */
static inline __attribute__((always_inline)) size_t mo_next_bit(const uint64_t *u, size_t nw,
								 size_t from)
{
	size_t w = from / 64;
	if (w >= nw)
		return SIZE_MAX;
	uint64_t bits = u[w] & (~(uint64_t)0 << (from % 64));
	while (!bits) {
		if (++w == nw)
			return SIZE_MAX;
		bits = u[w];
	}
	return w * 64 + (size_t)__builtin_ctzll(bits);
}

/* The actions of a run, and their rules when something reads them later
 * (`rules`: op_swap's conflicts with recomputed paths). */
static void mo_run_set(mo_seg *g, size_t lo, size_t hi, mo_action_kind k, mo_rule rule,
		       bool rules)
{
	for (size_t p = lo; p < hi; p++)
		g->act[p] = k;
	for (size_t p = lo; rules && p < hi; p++)
		g->rule[p] = rule;
}

static bool mo_runs_recompute(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_active *act,
			      const mo_ref **first)
{
	const uint32_t *end = s->end[g->type];
	size_t nw = mo_union(s, act->sel, act->n_sel, g->type, first);
	for (size_t q = mo_next_bit(s->u, nw, 0); q < lt->n_paths; q = mo_next_bit(s->u, nw, end[q])) {
		const mo_ref *ref = first[q];
		mo_run_set(g, q, end[q], MO_ACT_RECOMPUTE, ref->rule, s->need_rules);
		if (!mo_seg_root(s, g, lt->paths[q].name, MO_ACT_RECOMPUTE, ref->rule))
			return false;
	}
	return true;
}

static bool mo_runs_exclude(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_active *act,
			    const mo_ref **first)
{
	const uint32_t *end = s->end[g->type];
	size_t nw = mo_union(s, act->exc, act->n_exc, g->type, first);
	for (size_t q = mo_next_bit(s->u, nw, 0); q < lt->n_paths;) {
		if (g->act[q] != MO_ACT_RECOMPUTE) {
			q = mo_next_bit(s->u, nw, q + 1);
			continue;
		}
		const mo_ref *ref = first[q];
		mo_run_set(g, q, end[q], MO_ACT_KEEP, ref->rule, false);
		s->ex_lo[s->n_ex] = (uint32_t)q; /* ascending, disjoint */
		s->ex_hi[s->n_ex++] = end[q];
		if (!mo_seg_root(s, g, lt->paths[q].name, MO_ACT_KEEP, ref->rule))
			return false;
		q = mo_next_bit(s->u, nw, end[q]);
	}
	return true;
}

static bool mo_runs_comm(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_active *act,
			 const mo_ref **first)
{
	size_t nw = mo_union(s, act->comm, act->n_comm, g->type, first), k = 0;
	for (size_t q = mo_next_bit(s->u, nw, 0); q < lt->n_paths; q = mo_next_bit(s->u, nw, q + 1)) {
		while (k < s->n_ex && s->ex_hi[k] <= q) /* the excluded runs, in order */
			k++;
		if (g->act[q] != MO_ACT_KEEP || (k < s->n_ex && s->ex_lo[k] <= q))
			continue;
		const mo_ref *ref = first[q];
		g->act[q] = MO_ACT_RECOMPUTE_COMM;
		if (s->need_rules)
			g->rule[q] = ref->rule;
		if (!mo_seg_root(s, g, lt->paths[q].name, MO_ACT_RECOMPUTE_COMM, ref->rule))
			return false;
	}
	return true;
}

static bool mo_recomputed(mo_action_kind k)
{
	return k == MO_ACT_RECOMPUTE || k == MO_ACT_RECOMPUTE_COMM;
}

/* An op-level recompute on p or inside its run (the first in path order). */
static const mo_rule *mo_runs_recompute_near(const mo_rs *s, const mo_seg *g, size_t p)
{
	const uint32_t *end = s->end[g->type];
	for (size_t q = p; q < end[p]; q++)
		if (mo_recomputed(g->act[q]))
			return &g->rule[q];
	return NULL;
}

static bool mo_runs_op_swap(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_ref *ref)
{
	const mo_bits *m = &ref->match[g->type];
	const uint32_t *end = s->end[g->type];
	for (size_t q = mo_next_bit(m->w, m->nw, 0); q < lt->n_paths;
	     q = mo_next_bit(m->w, m->nw, q + 1)) {
		if (g->act[q] == MO_ACT_SWAP)
			continue;
		const mo_rule *near = mo_runs_recompute_near(s, g, q);
		if (near) {
			mo_rs_seg_find(s, g, "op-recompute-swap", ref, mo_rule_origin(s, near));
			continue;
		}
		if (!mo_seg_root(s, g, lt->paths[q].name, MO_ACT_SWAP, ref->rule))
			return false;
		mo_run_set(g, q, end[q], MO_ACT_SWAP, ref->rule, false);
	}
	return true;
}

/* select: selected roots recompute, children inherit; full wins. */
static bool mo_seg_recompute(mo_rs *s, mo_seg *g, const mo_layer_type *lt,
			     const mo_active *act, const mo_ref **first)
{
	const mo_config *c = s->c;
	if (g->full) {
		/* no rules per path: a full segment's are never read (op_swap
		 * skips full layers; an exclusion inherits its own rule) */
		if (lt->n_paths)
			memcpy(g->act, s->full_act, lt->n_paths * sizeof(*g->act));
		return mo_seg_root(s, g, "", MO_ACT_RECOMPUTE, mo_full_rule(c));
	}
	if (!act->n_sel)
		return true;
	if (s->runs_ok[g->type])
		return mo_runs_recompute(s, g, lt, act, first);
	mo_first_match(act->sel, act->n_sel, g->type, first, lt->n_paths);
	for (size_t p = 0; p < lt->n_paths; p++) {
		int parent = lt->paths[p].parent;
		if (parent >= 0 && g->act[parent] == MO_ACT_RECOMPUTE) {
			g->act[p] = MO_ACT_RECOMPUTE;
			g->rule[p] = g->rule[parent];
		} else if (first[p]) {
			g->act[p] = MO_ACT_RECOMPUTE;
			g->rule[p] = first[p]->rule;
			if (!mo_seg_root(s, g, lt->paths[p].name, MO_ACT_RECOMPUTE, first[p]->rule))
				return false;
		}
	}
	return true;
}

/* exclude_op: kept from forward inside a recomputed region. */
static bool mo_seg_exclude(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_active *act,
			   const mo_ref **first, bool *excl)
{
	if (!act->n_exc)
		return true;
	for (size_t i = 0; i < act->n_exc; i++) {
		const mo_bits *m = &act->exc[i]->match[g->type];
		if (!mo_bits_any(m))
			continue; /* no-match says it better */
		bool effect = false;
		for (size_t w = 0; w < m->nw && !effect; w++)
			for (uint64_t bits = m->w[w]; bits && !effect; bits &= bits - 1)
				effect = g->act[w * 64 + (size_t)__builtin_ctzll(bits)] ==
					 MO_ACT_RECOMPUTE;
		if (!effect)
			mo_rs_seg_find(s, g, "exclude-no-effect", act->exc[i], NULL);
	}
	if (s->runs_ok[g->type])
		return mo_runs_exclude(s, g, lt, act, first);
	mo_first_match(act->exc, act->n_exc, g->type, first, lt->n_paths);
	for (size_t p = 0; p < lt->n_paths; p++) {
		int parent = lt->paths[p].parent;
		if (parent >= 0 && excl[parent]) {
			excl[p] = true;
			g->act[p] = MO_ACT_KEEP;
			g->rule[p] = g->rule[parent];
		} else if (first[p] && g->act[p] == MO_ACT_RECOMPUTE) {
			excl[p] = true;
			g->act[p] = MO_ACT_KEEP;
			g->rule[p] = first[p]->rule;
			if (!mo_seg_root(s, g, lt->paths[p].name, MO_ACT_KEEP, first[p]->rule))
				return false;
		}
	}
	return true;
}

/* recompute_comm: comm ops outside recomputed regions. */
static bool mo_seg_comm(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_active *act,
			const mo_ref **first, const bool *excl)
{
	if (g->full || !act->n_comm)
		return true; /* `redundant` is reported on ranges */
	if (s->runs_ok[g->type])
		return mo_runs_comm(s, g, lt, act, first);
	mo_first_match(act->comm, act->n_comm, g->type, first, lt->n_paths);
	for (size_t p = 0; p < lt->n_paths; p++) {
		if (!first[p] || g->act[p] != MO_ACT_KEEP || excl[p])
			continue;
		g->act[p] = MO_ACT_RECOMPUTE_COMM;
		g->rule[p] = first[p]->rule;
		if (!mo_seg_root(s, g, lt->paths[p].name, MO_ACT_RECOMPUTE_COMM, first[p]->rule))
			return false;
	}
	return true;
}

/* An op-level recompute on p, an ancestor or a descendant of p. */
static const mo_rule *mo_seg_recompute_near(const mo_seg *g, const mo_layer_type *lt,
					    size_t p)
{
	if (g->act[p] == MO_ACT_RECOMPUTE || g->act[p] == MO_ACT_RECOMPUTE_COMM)
		return &g->rule[p];
	for (size_t q = p + 1; q < lt->n_paths; q++)
		if ((g->act[q] == MO_ACT_RECOMPUTE || g->act[q] == MO_ACT_RECOMPUTE_COMM) &&
		    mo_is_desc(lt, q, p))
			return &g->rule[q];
	return NULL;
}

static bool mo_seg_layer_swap(mo_rs *s, mo_seg *g, const mo_layer_type *lt)
{
	const mo_config *c = s->c;
	if (g->full)
		return true; /* recompute-swap-layer, reported on ranges */
	for (size_t i = 0; i < c->n_layer_swap; i++) {
		if (!mo_layers_contains(&c->layer_swap[i].layers, g->lo))
			continue;
		mo_rule rule = {"swap", s->layer_swap_keys[i], c->layer_swap[i].at->line};
		for (size_t p = 0; p < lt->n_paths; p++) /* no rules: the fill ends here */
			g->act[p] = MO_ACT_SWAP;
		return mo_seg_root(s, g, "", MO_ACT_SWAP, rule);
	}
	return true;
}

/* swap: whole layer, or op_swap paths (layers in layer_swap skip op_swap). */
static bool mo_seg_swap(mo_rs *s, mo_seg *g, const mo_layer_type *lt, const mo_active *act)
{
	if (g->swapped)
		return mo_seg_layer_swap(s, g, lt);
	for (size_t i = 0; i < act->n_ops && !g->full; i++) {
		const mo_ref *ref = act->ops[i];
		const mo_bits *m = &ref->match[g->type];
		if (s->runs_ok[g->type]) {
			if (!mo_runs_op_swap(s, g, lt, ref))
				return false;
			continue;
		}
		for (size_t p = 0; p < lt->n_paths; p++) {
			if (!mo_bits_get(m, p) || g->act[p] == MO_ACT_SWAP)
				continue;
			const mo_rule *near = mo_seg_recompute_near(g, lt, p);
			if (near) {
				mo_rs_seg_find(s, g, "op-recompute-swap", ref, mo_rule_origin(s, near));
				continue;
			}
			if (!mo_seg_root(s, g, lt->paths[p].name, MO_ACT_SWAP, ref->rule))
				return false;
			for (size_t q = p; q < lt->n_paths; q++)
				if (q == p || mo_is_desc(lt, q, p)) {
					g->act[q] = MO_ACT_SWAP;
					g->rule[q] = ref->rule;
				}
		}
	}
	return true;
}

/* What decides a segment's actions: its type, full/swap state and the
 * refs that apply, as a key (type, full, swap entry, then each group's
 * ref indices with its count). Segments with equal keys get equal plans. */
static size_t mo_seg_key(const mo_rs *s, const mo_seg *g, size_t swap_entry, uint32_t *key)
{
	size_t n = 0, n_on = s->n_on;
	key[n++] = (uint32_t)g->type;
	key[n++] = g->full;
	key[n++] = (uint32_t)swap_entry;
	/* the active set (refs in index order are in group order): its words
	 * when shorter, else its indices; the count picks the same form for
	 * equal sets */
	key[n++] = (uint32_t)n_on;
	if (2 * s->on_nw <= n_on) {
		for (size_t w = 0; w < s->on_nw; w++) {
			key[n++] = (uint32_t)s->on[w];
			key[n++] = (uint32_t)(s->on[w] >> 32);
		}
		return n;
	}
	for (size_t w = 0; w < s->on_nw; w++)
		for (uint64_t bits = s->on[w]; bits; bits &= bits - 1)
			key[n++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
	return n;
}

static uint64_t mo_key_hash(const uint32_t *key, size_t n)
{
	/* two words a step (the hash only pairs segments of one resolve) */
	uint64_t h = 1469598103934665603ull;
	size_t i = 0;
	for (; i + 2 <= n; i += 2)
		h = (h ^ (key[i] | (uint64_t)key[i + 1] << 32)) * 1099511628211ull;
	if (i < n)
		h = (h ^ key[i]) * 1099511628211ull;
	return h ^ h >> 32;
}

/* An earlier segment with the same key (its findings are replayed for
 * validation). Registers this one otherwise. */
static const mo_seg *mo_seg_twin(mo_rs *s, const mo_seg *g, size_t swap_entry)
{
	size_t n = mo_seg_key(s, g, swap_entry, s->key);
	uint64_t h = mo_key_hash(s->key, n);
	size_t mask = s->twin_cap - 1, i = (size_t)h & mask;
	for (; s->twins[i].seg; i = (i + 1) & mask) {
		const mo_twin *t = &s->twins[i];
		if (t->hash != (uint32_t)h)
			continue;
		const uint32_t *k = s->seg_key[t->seg - 1];
		if (k[0] == n && memcmp(k + 1, s->key, n * sizeof(uint32_t)) == 0)
			return &s->r->segs[t->seg - 1];
	}
	uint32_t *copy = mo_arena_alloc_raw(s->a, (n + 1) * sizeof(uint32_t));
	if (!copy)
		return NULL;
	copy[0] = (uint32_t)n;
	memcpy(copy + 1, s->key, n * sizeof(uint32_t));
	size_t si = (size_t)(g - s->r->segs);
	s->seg_key[si] = copy;
	s->twins[i] = (mo_twin){(uint32_t)h, (uint32_t)si + 1};
	return NULL;
}

/* Whether full_recompute_layer holds layer id: segments come in ascending
 * order, so an ascending list is walked with a cursor; any other keeps
 * the search that defines the answer. */
static bool mo_rs_full(mo_rs *s, uint64_t id)
{
	const mo_layers *l = &s->c->full;
	if (!s->full_asc)
		return mo_layers_contains(l, id);
	while (s->full_cur < l->n && l->r[s->full_cur].hi < id)
		s->full_cur++;
	return s->full_cur < l->n && l->r[s->full_cur].lo <= id;
}

static size_t mo_seg_swap_entry(const mo_config *c, const mo_seg *g)
{
	for (size_t i = 0; c->swap_enable && i < c->n_layer_swap; i++)
		if (mo_layers_contains(&c->layer_swap[i].layers, g->lo))
			return i + 1;
	return 0;
}

static bool mo_rs_fill_seg(mo_rs *s, mo_seg *g, mo_active *act, const mo_ref **first,
			   bool *excl)
{
	const mo_config *c = s->c;
	const mo_layer_type *lt = &s->m->types[g->type];
	size_t np = lt->n_paths;
	g->full = c->mode != MO_MODE_NONE && mo_rs_full(s, g->lo);
	size_t swap_entry = mo_seg_swap_entry(c, g);
	g->swapped = swap_entry > 0;
	size_t si = (size_t)(g - s->r->segs);
	mo_rs_advance(s, si, g);
	const mo_seg *twin = mo_seg_twin(s, g, swap_entry);
	if (twin) {
		g->act = twin->act;
		g->rule = twin->rule;
		g->roots = twin->roots;
		g->n_roots = twin->n_roots;
		if (s->report)
			mo_rs_seg_replay(s, twin, g);
		return true;
	}
	if (s->report)
		s->log_start[si] = (uint32_t)s->n_log;
	/* act: the active lists, kept current by mo_on_set */
	/* in runs, a path's rule is read only by op_swap (a recomputed path
	 * it meets): written only when op_swap acts on the segment */
	s->need_rules = act->n_ops && !g->full && !g->swapped;
	/* the rules per path only serve the fill (inheritance, conflicts):
	 * one scratch array for every segment */
	g->rule = s->s_rule;
	g->roots = s->s_roots;
	g->cap_roots = np + 2;
	if (s->scratch) {
		g->act = s->s_act;
		memset(g->act, 0, np * sizeof(*g->act));
	} else {
		/* the roots go straight to the arena, its unused end given back
		 * when the segment is done (mo_seg_keep_roots) */
		g->act = np ? mo_arena_alloc(s->a, np * sizeof(*g->act)) : NULL;
		g->roots = mo_arena_alloc_raw(s->a, (np + 2) * sizeof(*g->roots));
		if ((np && !g->act) || !g->roots)
			return false;
	}
	s->n_ex = 0;
	if (!s->runs_ok[g->type]) /* runs keep their excluded runs in ex_lo / ex_hi */
		memset(excl, 0, np * sizeof(*excl));
	return mo_seg_recompute(s, g, lt, act, first) &&
	       mo_seg_exclude(s, g, lt, act, first, excl) &&
	       mo_seg_comm(s, g, lt, act, first, excl) && mo_seg_swap(s, g, lt, act) &&
	       mo_seg_keep_roots(s, g);
}

/* Scratch shared by all segments: active lists, first-match and
 * excluded-path arrays sized for the largest layer type. */
static bool mo_rs_fill_all(mo_rs *s)
{
	size_t np = 1;
	for (size_t t = 0; t < s->m->n_types; t++)
		if (s->m->types[t].n_paths > np)
			np = s->m->types[t].n_paths;
	size_t nr = s->n_refs ? s->n_refs : 1;
	mo_active act = {0};
	s->active = &act;
	s->grp[1] = s->c->select.n;
	s->grp[2] = s->grp[1] + s->c->exclude.n;
	s->grp[3] = s->grp[2] + s->c->comm.n;
	act.sel = mo_arena_alloc(s->a, nr * sizeof(*act.sel));
	act.exc = mo_arena_alloc(s->a, nr * sizeof(*act.exc));
	act.comm = mo_arena_alloc(s->a, nr * sizeof(*act.comm));
	act.ops = mo_arena_alloc(s->a, nr * sizeof(*act.ops));
	s->cursor = mo_arena_alloc(s->a, nr * sizeof(*s->cursor));
	const mo_ref **first = mo_arena_alloc(s->a, np * sizeof(*first));
	bool *excl = mo_arena_alloc(s->a, np * sizeof(*excl));
	s->ex_lo = mo_arena_alloc_raw(s->a, 2 * np * sizeof(uint32_t));
	s->ex_hi = s->ex_lo ? s->ex_lo + np : NULL;
	if (!s->ex_lo)
		return false;
	if (!act.sel || !act.exc || !act.comm || !act.ops || !s->cursor || !first || !excl)
		return false;
	size_t nls = s->c->n_layer_swap;
	s->layer_swap_keys = mo_arena_alloc(s->a, (nls ? nls : 1) * sizeof(char *));
	if (!s->layer_swap_keys)
		return false;
	for (size_t i = 0; i < nls; i++)
		if (!(s->layer_swap_keys[i] = mo_arena_indexed(s->a, "layer_swap", i)))
			return false;
	if (!mo_rs_events(s))
		return false;
	s->full_asc = mo_layers_ascending(&s->c->full);
	/* at most 3/4 full */
	s->twin_cap = 16;
	while (3 * s->twin_cap < 4 * s->r->n_segs)
		s->twin_cap *= 2;
	s->twins = mo_arena_alloc(s->a, s->twin_cap * sizeof(*s->twins));
	s->seg_key = mo_arena_alloc_raw(s->a, (s->r->n_segs ? s->r->n_segs : 1) * sizeof(*s->seg_key));
	s->key = mo_arena_alloc(s->a, (4 + nr + 2 * s->on_nw) * sizeof(*s->key));
	if (!s->twins || !s->seg_key || !s->key)
		return false;
	if (s->report) {
		s->log_start = mo_arena_alloc(s->a, s->r->n_segs * sizeof(*s->log_start));
		s->log_n = mo_arena_alloc(s->a, s->r->n_segs * sizeof(*s->log_n));
		if (!s->log_start || !s->log_n)
			return false;
	}
	s->s_rule = mo_arena_alloc(s->a, np * sizeof(*s->s_rule));
	s->s_roots = mo_arena_alloc(s->a, (np + 2) * sizeof(*s->s_roots));
	if (!s->s_rule || !s->s_roots)
		return false;
	if (s->c->mode != MO_MODE_NONE && s->c->full.n) {
		s->full_act = mo_arena_alloc_raw(s->a, np * sizeof(*s->full_act));
		if (!s->full_act)
			return false;
		for (size_t p = 0; p < np; p++)
			s->full_act[p] = MO_ACT_RECOMPUTE;
	}
	if (s->scratch) {
		s->s_act = mo_arena_alloc(s->a, np * sizeof(*s->s_act));
		if (!s->s_act)
			return false;
	}
	for (size_t i = 0; i < s->r->n_segs; i++)
		if (!mo_rs_fill_seg(s, &s->r->segs[i], &act, first, excl))
			return false;
	return true;
}

/* ---- findings -> diagnostics ------------------------------------------- */

static void mo_rs_report(mo_rs *s)
{
	char layers[200];
	for (size_t i = 0; i < s->n_refs; i++)
		if (s->refs[i].limit_hit)
			mo_diags_add_at(s->diags, MO_SEV_ERROR, "regex", s->c->doc->name,
					s->refs[i].p->key, s->refs[i].p->dpath,
					"pattern '%.60s' hit the match limit: it backtracks catastrophically",
					s->refs[i].p->regex);
	for (size_t i = 0; i < s->n_f; i++) {
		mo_finding *f = &s->f[i];
		if (!f->code)
			continue;
		mo_rs_collect(s, i, layers, sizeof layers);
		const mo_ref *ref = f->k1;
		if (strcmp(f->code, "exclude-no-effect") == 0) {
			mo_diag *d = mo_diags_add_at(
				s->diags, MO_SEV_WARNING, f->code, s->c->doc->name, ref->p->key,
				ref->p->dpath,
				"exclude_op '%.60s' has no effect in layers %s: nothing it matches is recomputed there",
				ref->p->regex, layers);
			mo_diag_set_hint(s->diags, d, "exclude_op applies only inside recomputed regions");
			mo_diag_set_layers(s->diags, d, layers);
		} else {
			const mo_ref *other = f->k2;
			const mo_node *at = ref->p->layers.at;
			mo_diag *d = mo_diags_add_at(
				s->diags, MO_SEV_ERROR, f->code, s->c->doc->name, at ? at : ref->p->key,
				ref->p->dpath,
				"op_swap '%.60s' and %s.%s (line %d) act on the same module in layers %s",
				ref->p->regex, other ? other->rule.section : "recompute",
				other ? other->rule.key : "?", other ? other->rule.line : 0, layers);
			mo_diag_set_hint(s->diags, d,
					 "an op is either recomputed or swapped: drop one of the two on these layers");
			mo_diag_set_layers(s->diags, d, layers);
		}
	}
}

/* ---- entry points ------------------------------------------------------- */

void mo_resolved_free(mo_resolved *r)
{
	if (r && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
		mo_arena_free(r->arena);
}

/* ---- resolved memo: validate then expand/estimate resolve once ----------
 * The plan points into the model (path names), so a memo is reused only
 * for the same model object whose layout is unchanged: same layout hash,
 * same type and path arrays (pointers, kinds, parents) and same type per
 * layer, compared with a snapshot taken when it was built. */

static bool mo_snap_take(mo_resolved *r, const mo_model *m)
{
	mo_resolved_snap *sn = &r->snap;
	size_t N = (size_t)r->n_layers;
	sn->layout_hash = m->layout_hash;
	sn->types_at = m->types;
	sn->n_types = m->n_types;
	sn->types = mo_arena_alloc_raw(r->arena, (m->n_types ? m->n_types : 1) * sizeof(*sn->types));
	sn->paths = mo_arena_alloc(r->arena, (m->n_types ? m->n_types : 1) * sizeof(*sn->paths));
	sn->type_of = mo_arena_alloc_raw(r->arena, (N ? N : 1) * sizeof(*sn->type_of));
	if (!sn->types || !sn->paths || !sn->type_of)
		return false;
	memcpy(sn->types, m->types, m->n_types * sizeof(*sn->types));
	memcpy(sn->type_of, m->type_of, N * sizeof(*sn->type_of));
	for (size_t t = 0; t < m->n_types; t++) {
		size_t np = m->types[t].n_paths;
		sn->paths[t] = mo_arena_alloc_raw(r->arena, (np ? np : 1) * sizeof(mo_path));
		if (!sn->paths[t])
			return false;
		memcpy(sn->paths[t], m->types[t].paths, np * sizeof(mo_path));
	}
	return true;
}

static bool mo_snap_same(const mo_resolved *r, const mo_model *m)
{
	const mo_resolved_snap *sn = &r->snap;
	if (r->m != m || sn->layout_hash != m->layout_hash || sn->types_at != m->types ||
	    sn->n_types != m->n_types ||
	    r->n_layers != (uint64_t)(m->num_layers + m->mtp_num_layers))
		return false;
	if (memcmp(sn->types, m->types, m->n_types * sizeof(*sn->types)) != 0 ||
	    memcmp(sn->type_of, m->type_of, (size_t)r->n_layers * sizeof(*sn->type_of)) != 0)
		return false;
	for (size_t t = 0; t < m->n_types; t++)
		if (memcmp(sn->paths[t], m->types[t].paths, m->types[t].n_paths * sizeof(mo_path)))
			return false;
	return true;
}

static void mo_resolved_destroy(void *r)
{
	mo_resolved_free(r);
}

/* A reference to the memo when it was built for this model, else NULL. */
static mo_resolved *mo_memo_get(const mo_config *c, const mo_model *m)
{
	mo_config *cw = (mo_config *)c;
	mo_resolved *r = NULL;
	pthread_mutex_lock(&cw->memo_lock);
	if (cw->plan_memo.data && mo_snap_same(cw->plan_memo.data, m)) {
		r = cw->plan_memo.data;
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
	}
	pthread_mutex_unlock(&cw->memo_lock);
	return r;
}

/* Makes r (one reference, handed over) the config's memo. */
static void mo_memo_put(const mo_config *c, mo_resolved *r)
{
	mo_config *cw = (mo_config *)c;
	mo_attachment old;
	pthread_mutex_lock(&cw->memo_lock);
	old = cw->plan_memo;
	cw->plan_memo = (mo_attachment){.data = r, .destroy = mo_resolved_destroy};
	pthread_mutex_unlock(&cw->memo_lock);
	mo_attachment_clear(&old);
}

/* Validation keeps the plan it builds for a later expand or estimate
 * unless it would be large (then one scratch set serves every segment). */
static bool mo_rs_keep_plan(const mo_resolved *r, const mo_model *m)
{
	size_t np = 1;
	for (size_t t = 0; t < m->n_types; t++)
		np = m->types[t].n_paths > np ? m->types[t].n_paths : np;
	return r->n_segs <= MO_MEMO_MAX_SLOTS / np;
}

const mo_seg *mo_resolved_seg(const mo_resolved *r, uint64_t layer)
{
	if (!r || layer >= r->n_layers || !r->n_segs)
		return NULL;
	size_t lo = 0, hi = r->n_segs;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->segs[mid].lo <= layer)
			lo = mid;
		else
			hi = mid;
	}
	return &r->segs[lo];
}

int mo_resolve(mo_resolved **out, const mo_config *c, const mo_model *m, mo_diags *diags,
	       mo_error *err)
{
	if (out)
		*out = NULL;
	if (out && !diags && (*out = mo_memo_get(c, m)) != NULL)
		return 0;
	mo_arena *a = mo_arena_new();
	mo_resolved *r = a ? mo_arena_alloc(a, sizeof(*r)) : NULL;
	if (!r) {
		mo_arena_free(a);
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	r->arena = a;
	r->refs = 1;
	r->c = c;
	r->m = m;
	r->n_layers = (uint64_t)(m->num_layers + m->mtp_num_layers);
	mo_diags *sink = diags;
	if (!sink && mo_diags_new(&sink) != 0)
		goto fail_arena;
	mo_rs s = {.r = r, .c = c, .m = m, .diags = sink, .a = a, .report = diags != NULL};
	bool ok = r->n_layers > 0 && mo_rs_refs(&s) && mo_rs_type_runs(&s) &&
		  mo_rs_segments(&s);
	s.scratch = !out && !(ok && mo_rs_keep_plan(r, m));
	ok = ok && mo_rs_fill_all(&s);
	if (ok && diags) {
		mo_rs_check_no_match(&s);
		mo_rs_report(&s);
	}
	ok = ok && !s.nomem;
	free(s.f);
	free(s.log);
	if (sink != diags)
		mo_diags_free(sink);
	if (!ok && r->n_layers > 0)
		goto fail_arena;
	if (!ok || s.scratch || !mo_snap_take(r, m)) {
		if (out)
			*out = r;
		else
			mo_arena_free(a);
		return 0;
	}
	if (out) {
		*out = r;
		r->refs++;
	}
	mo_memo_put(c, r);
	return 0;
fail_arena:
	mo_arena_free(a);
	mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory resolving the config");
	return -1;
}
