/* Megatron-LM's pipeline layout string (`--pipeline-model-parallel-layout`,
 * the model-file key `pipeline_model_parallel_layout`): which layers each
 * virtual pipeline stage holds, read as Megatron reads it
 * (megatron/core/transformer/pipeline_parallel_layer_layout.py at
 * d98e8a64, `parse_str_to_list` :283-321, `__init__` :25-84,
 * `validate_layer_layout` :86-151):
 *   - commas are cosmetic and removed;
 *   - `(xy)*n` repeats xy n times (one pass, no nesting), then `x*n`
 *     repeats one character;
 *   - `|` separates virtual stages, in virtual-stage order: stage k is
 *     chunk k / PP of pipeline rank k % PP, so VPP = stages / PP;
 *   - E embedding, t decoder layer, m MTP layer, L loss; E first, L last,
 *     once each; as many t as layers, m as MTP layers, every m after every
 *     t, in one virtual stage, the last chunk of its rank.
 * Decoder layers take ids 0.. in string order, MTP layers num_layers.. */
#include "import/import_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_LAYOUT_MAX_CHARS (1u << 20) /* the expanded string */
#define PP_LAYOUT_MAX_STAGES 65536

struct pp_text {
	char *s;
	size_t n, cap;
	bool over;
};

static void pp_put(struct pp_text *t, const char *p, size_t n, uint64_t times)
{
	for (uint64_t k = 0; k < times && !t->over; k++) {
		if (n > PP_LAYOUT_MAX_CHARS - t->n) {
			t->over = true;
			return;
		}
		memcpy(t->s + t->n, p, n);
		t->n += n;
	}
}

/* The repeat count after "*" at p (digits, as Python's int()): saturates
 * above the expansion bound; *end past the digits. */
static uint64_t pp_count(const char *p, const char **end)
{
	uint64_t v = 0;
	while (isdigit((unsigned char)*p)) {
		if (v <= PP_LAYOUT_MAX_CHARS)
			v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	*end = p;
	return v;
}

/* re.sub(r'\(([^)]+)\)\*(\d+)', group1 * n) */
static void pp_unroll_groups(const char *in, struct pp_text *t)
{
	const char *p = in;
	while (*p && !t->over) {
		const char *close = *p == '(' ? strchr(p + 1, ')') : NULL;
		if (close && close > p + 1 && close[1] == '*' &&
		    isdigit((unsigned char)close[2])) {
			const char *end;
			uint64_t n = pp_count(close + 2, &end);
			pp_put(t, p + 1, (size_t)(close - p - 1), n);
			p = end;
			continue;
		}
		pp_put(t, p, 1, 1);
		p++;
	}
}

/* re.sub(r'(.)\*(\d+)', group1 * n); '.' is any character but a newline */
static void pp_unroll_chars(const char *in, struct pp_text *t)
{
	const char *p = in;
	while (*p && !t->over) {
		if (*p != '\n' && p[1] == '*' && isdigit((unsigned char)p[2])) {
			const char *end;
			uint64_t n = pp_count(p + 2, &end);
			pp_put(t, p, 1, n);
			p = end;
			continue;
		}
		pp_put(t, p, 1, 1);
		p++;
	}
}

/* The layout with its repetitions written out, NUL-terminated, or NULL
 * (*over set when it grows past the bound). Caller frees. */
static char *pp_expand(const char *layout, bool *over)
{
	size_t len = strlen(layout);
	char *plain = malloc(len + 1), *once = malloc(PP_LAYOUT_MAX_CHARS + 1),
	     *twice = malloc(PP_LAYOUT_MAX_CHARS + 1);
	*over = false;
	if (!plain || !once || !twice) {
		free(plain), free(once), free(twice);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < len; i++)
		if (layout[i] != ',')
			plain[k++] = layout[i];
	plain[k] = '\0';
	struct pp_text a = {.s = once}, b = {.s = twice};
	pp_unroll_groups(plain, &a);
	a.s[a.n] = '\0';
	if (!a.over)
		pp_unroll_chars(once, &b);
	b.s[b.n] = '\0';
	free(plain);
	free(once);
	if (a.over || b.over) {
		*over = true;
		free(twice);
		return NULL;
	}
	return twice;
}

struct pp_counts {
	size_t stages;
	int64_t e, l, t, m;
	size_t e_stage, l_stage, m_stage;
	bool t_after_m, m_split;
};

/* Counts each character class and where E, L and the MTP layers are; the
 * first character Megatron does not know, or 0. */
static char pp_count_layers(const char *s, struct pp_counts *c)
{
	size_t stage = 0;
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case '|': stage++; break;
		case 'E': c->e++, c->e_stage = stage; break;
		case 'L': c->l++, c->l_stage = stage; break;
		case 't': c->t++, c->t_after_m |= c->m > 0; break;
		case 'm':
			c->m_split |= c->m > 0 && c->m_stage != stage;
			c->m++, c->m_stage = stage;
			break;
		default: return *p;
		}
	}
	c->stages = stage + 1;
	return 0;
}

struct pp_check {
	char why[160];
};

/* Megatron's validate_layer_layout and the PP divisibility: false with
 * the reason in ck->why. */
static bool pp_validate(const char *s, const struct pp_counts *c, int64_t pp, int64_t layers,
			int64_t mtp, struct pp_check *ck)
{
	const char *first = s, *last = s + strlen(s);
	while (*first == '|')
		first++;
	while (last > s && last[-1] == '|')
		last--;
	size_t V = pp > 0 ? c->stages / (size_t)pp : 0;
#define PP_FAIL(...) return snprintf(ck->why, sizeof ck->why, __VA_ARGS__), false
	if (pp <= 0 || c->stages % (size_t)pp != 0)
		PP_FAIL("%zu stages, not a multiple of pipeline_parallel %lld", c->stages,
			(long long)pp);
	if (c->stages > PP_LAYOUT_MAX_STAGES)
		PP_FAIL("%zu stages, more than %u", c->stages, PP_LAYOUT_MAX_STAGES);
	if (c->e != 1 || c->l != 1)
		PP_FAIL("the embedding (E) and the loss (L) must each appear once");
	if (*first != 'E' || last == s || last[-1] != 'L')
		PP_FAIL("the first layer must be the embedding (E) and the last the loss (L)");
	if (c->t != layers)
		PP_FAIL("%lld decoder layers (t), but num_layers is %lld", (long long)c->t,
			(long long)layers);
	if (c->m != mtp)
		PP_FAIL("%lld MTP layers (m), but mtp_num_layers is %lld", (long long)c->m,
			(long long)mtp);
	if (c->t_after_m)
		PP_FAIL("decoder layers (t) must come before the MTP layers (m)");
	if (c->m > 0 && (c->m_split || c->m_stage / (size_t)pp != V - 1))
		PP_FAIL("the MTP layers (m) must all be in one stage, the last virtual stage "
			"of its pipeline rank");
#undef PP_FAIL
	return true;
}

/* One stage's ranges: its decoder ids, then its MTP ids. */
static bool pp_stage_ranges(mo_arena *a, const char *p, const char *end, int64_t *next_t,
			    int64_t *next_m, mo_layers *st)
{
	int64_t t0 = *next_t, m0 = *next_m;
	for (const char *q = p; q < end; q++) {
		*next_t += *q == 't';
		*next_m += *q == 'm';
	}
	memset(st, 0, sizeof *st);
	st->ok = true;
	st->r = arena_alloc(a, 2 * sizeof(mo_range));
	if (!st->r)
		return false;
	if (*next_t > t0)
		st->r[st->n++] = (mo_range){(uint64_t)t0, (uint64_t)(*next_t - 1), NULL};
	if (*next_m > m0)
		st->r[st->n++] = (mo_range){(uint64_t)m0, (uint64_t)(*next_m - 1), NULL};
	return true;
}

static bool pp_lists(mo_model *m, const char *s, size_t stages)
{
	mo_layers *st = arena_alloc(m->arena, stages * sizeof(*st));
	if (!st)
		return false;
	int64_t next_t = 0, next_m = m->num_layers;
	const char *p = s;
	for (size_t k = 0; k < stages; k++) {
		const char *end = strchr(p, '|');
		if (!end)
			end = p + strlen(p);
		if (!pp_stage_ranges(m->arena, p, end, &next_t, &next_m, &st[k]))
			return false;
		p = *end ? end + 1 : end;
	}
	m->stage_layers = st;
	m->n_stage_layers = stages;
	return true;
}

static void pp_layout_err(struct mo_rd *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void pp_layout_err(struct mo_rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char msg[400];
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diags_add(r->diags, MO_SEV_ERROR, "parallel", r->file, r->pp_layout_line,
		  r->pp_layout_column, r->pp_layout_path, "%s: %s (Megatron refuses it)",
		  r->pp_layout_path, msg);
}

/* The estimate counts the embedding on the first pipeline rank and the
 * loss on the last one's last chunk: said when the layout puts them
 * elsewhere (only possible with empty stages around them). */
static void pp_layout_ends(struct mo_rd *r, const struct pp_counts *c)
{
	if (c->e_stage == 0 && c->l_stage + 1 == c->stages)
		return;
	diags_add(r->diags, MO_SEV_WARNING, "unmodelled", r->file, r->pp_layout_line,
		  r->pp_layout_column, r->pp_layout_path,
		  "%s: the embedding is in virtual stage %zu and the loss in %zu; the "
		  "estimate counts them in the first and the last",
		  r->pp_layout_path, c->e_stage, c->l_stage);
}

void pp_layout_apply(struct mo_rd *r)
{
	mo_model *m = r->m;
	if (!r->pp_layout)
		return;
	bool over = false;
	char *s = pp_expand(r->pp_layout, &over);
	if (!s) {
		if (over)
			pp_layout_err(r, "it expands to more than %u characters",
				      PP_LAYOUT_MAX_CHARS);
		else
			r->failed = true;
		return;
	}
	struct pp_counts c = {0};
	struct pp_check ck = {{0}};
	char bad = pp_count_layers(s, &c);
	if (bad)
		pp_layout_err(r, "'%c' is not a layer (E embedding, t decoder, m MTP, L loss, "
				 "| between stages)", bad);
	else if (!pp_validate(s, &c, m->pipeline_parallel, m->num_layers, m->mtp_num_layers,
			      &ck))
		pp_layout_err(r, "%s", ck.why);
	else if (m->ext->set[MF_VPP] &&
		 m->virtual_pipeline != (int64_t)c.stages / m->pipeline_parallel)
		pp_layout_err(r, "%zu stages over pipeline_parallel %lld make %lld virtual "
				 "stages, but virtual_pipeline is %lld",
			      c.stages, (long long)m->pipeline_parallel,
			      (long long)c.stages / m->pipeline_parallel,
			      (long long)m->virtual_pipeline);
	else if (!pp_lists(m, s, c.stages))
		r->failed = true;
	else {
		m->virtual_pipeline = (int64_t)c.stages / m->pipeline_parallel;
		pp_layout_ends(r, &c);
	}
	free(s);
}
