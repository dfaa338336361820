/* The two passes over a trace. The first finds the peak: allocations are
 * replayed in order with a min-heap of release times, so what is alive at
 * any row is known with memory bounded by the allocations alive at once.
 * The second replays again and records, at the peak's row, the alive set
 * (grouped by op and by size, split by lifetime class), the steps and their
 * peaks, and per layer what is still alive at the start of the layer after
 * next (kept for the backward). The peak is the allocator's own running
 * total when the trace has one (MindSpore's ledger), else the sum of the
 * alive rows. */
#include "ledger/ledger.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct mo_ledger_alive {
	int64_t release_ns;
	int64_t alloc_ns;
	uint64_t bytes;
	uint32_t name;
	int32_t step;  /* index into l->steps, -1: none */
	int32_t layer; /* index into l->layers, -1: none */
} mo_ledger_alive;

typedef struct mo_ledger_state {
	mo_ledger *l;
	mo_ledger_alive *heap;
	size_t n, cap;
	uint64_t alive_bytes;
	uint32_t *slots; /* name hash table: index + 1 */
	size_t n_slots;
	mo_ledger_marker step_m, layer_m;
	uint64_t max_rows, max_alive, max_steps, max_layers, max_names;
	int64_t transient_ns;
	/* replay */
	uint64_t ordinal, peak_ordinal;
	int64_t prev_alloc;
	uint32_t prev_name;
	bool step_hit, layer_hit;
	int32_t step, layer;     /* current step / layer entries, -1 */
	int32_t step_layers;     /* layer starts seen in the current step */
	int64_t base;            /* held before the first row, -1 unknown */
} mo_ledger_state;

/* ---- markers -------------------------------------------------------------- */

int ledger_marker_parse(mo_ledger_marker *m, const char *text, const char *what, mo_error *err)
{
	memset(m, 0, sizeof *m);
	if (!text || !*text)
		return 0;
	const char *colon = strrchr(text, ':');
	size_t n = colon ? (size_t)(colon - text) : strlen(text);
	m->any_size = !colon;
	if (n == 0 || n > MO_LEDGER_NAME_MAX ||
	    (colon && ledger_decimal(&m->bytes, colon + 1, strlen(colon + 1), 1024) != 0)) {
		error_set(err, MO_ERR_USAGE, 0, 0,
			     "%s: '%s' is not OP or OP:KB (an op name, a size in KB)", what, text);
		return -1;
	}
	memcpy(m->op, text, n);
	m->op[n] = '\0';
	m->set = true;
	return 0;
}

/* Whether this row is a marker occurrence: the first row of the marker's
 * size within a run of consecutive rows of the marker's op. */
static bool ledger_marker_hit(const mo_ledger_marker *m, bool *hit, const mo_ledger_row *row,
			     bool same_op_as_previous)
{
	if (!m->set || row->name_len != strlen(m->op) || memcmp(row->name, m->op, row->name_len)) {
		*hit = false;
		return false;
	}
	if (!same_op_as_previous)
		*hit = false;
	if (*hit || !(m->any_size || row->bytes == m->bytes))
		return false;
	*hit = true;
	return true;
}

/* ---- names ---------------------------------------------------------------- */

static uint64_t ledger_hash(const char *s, size_t n)
{
	return hash_bytes(MO_HASH_SEED, s, n);
}

static int ledger_grow_names(mo_ledger_state *st, mo_error *err)
{
	size_t n = st->n_slots ? st->n_slots * 2 : 256;
	uint32_t *slots = calloc(n, sizeof *slots);
	char **names = realloc(st->l->names, (n / 2) * sizeof *names);
	if (!slots || !names) {
		free(slots);
		if (names)
			st->l->names = names;
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	st->l->names = names;
	for (size_t i = 0; i < st->l->n_names; i++) {
		const char *s = names[i];
		size_t k = ledger_hash(s, strlen(s)) & (n - 1);
		while (slots[k])
			k = (k + 1) & (n - 1);
		slots[k] = (uint32_t)i + 1;
	}
	free(st->slots);
	st->slots = slots;
	st->n_slots = n;
	return 0;
}

static int ledger_intern(mo_ledger_state *st, const mo_ledger_row *row, uint32_t *out,
			mo_error *err)
{
	mo_ledger *l = st->l;
	if ((l->n_names + 1) * 2 > st->n_slots && ledger_grow_names(st, err) != 0)
		return -1;
	size_t k = ledger_hash(row->name, row->name_len) & (st->n_slots - 1);
	for (; st->slots[k]; k = (k + 1) & (st->n_slots - 1)) {
		const char *s = l->names[st->slots[k] - 1];
		if (strlen(s) == row->name_len && memcmp(s, row->name, row->name_len) == 0) {
			*out = st->slots[k] - 1;
			return 0;
		}
	}
	if (l->n_names >= st->max_names) {
		error_set(err, MO_ERR_LIMIT, (int)row->line, 1,
			     "more than %llu distinct op names", (unsigned long long)st->max_names);
		return -1;
	}
	char *copy = malloc(row->name_len + 1);
	if (!copy) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	memcpy(copy, row->name, row->name_len);
	copy[row->name_len] = '\0';
	l->names[l->n_names] = copy;
	st->slots[k] = (uint32_t)++l->n_names;
	*out = (uint32_t)(l->n_names - 1);
	return 0;
}

/* ---- the heap of alive allocations -------------------------------------- */

static void ledger_swap(mo_ledger_alive *a, mo_ledger_alive *b)
{
	mo_ledger_alive t = *a;
	*a = *b;
	*b = t;
}

static int ledger_push(mo_ledger_state *st, const mo_ledger_alive *x, int64_t line,
			mo_error *err)
{
	if (st->n >= st->max_alive) {
		error_set(err, MO_ERR_LIMIT, (int)line, 1,
			     "more than %llu allocations alive at once",
			     (unsigned long long)st->max_alive);
		return -1;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 1024;
		mo_ledger_alive *h = realloc(st->heap, cap * sizeof *h);
		if (!h) {
			error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
			return -1;
		}
		st->heap = h;
		st->cap = cap;
	}
	size_t i = st->n++;
	st->heap[i] = *x;
	while (i && st->heap[(i - 1) / 2].release_ns > st->heap[i].release_ns) {
		ledger_swap(&st->heap[(i - 1) / 2], &st->heap[i]);
		i = (i - 1) / 2;
	}
	st->alive_bytes += x->bytes;
	return 0;
}

/* Drops every allocation released at or before t. */
static void ledger_release_until(mo_ledger_state *st, int64_t t)
{
	while (st->n && st->heap[0].release_ns <= t) {
		st->alive_bytes -= st->heap[0].bytes;
		st->heap[0] = st->heap[--st->n];
		size_t i = 0;
		for (;;) {
			size_t c = 2 * i + 1, m = i;
			if (c < st->n && st->heap[c].release_ns < st->heap[m].release_ns)
				m = c;
			if (c + 1 < st->n && st->heap[c + 1].release_ns < st->heap[m].release_ns)
				m = c + 1;
			if (m == i)
				break;
			ledger_swap(&st->heap[i], &st->heap[m]);
			i = m;
		}
	}
}

/* ---- pass 1: the peak ------------------------------------------------------ */

/* The row's figure: the allocator's total, else the base plus the rows. */
static uint64_t ledger_value(const mo_ledger_state *st, const mo_ledger_row *row)
{
	if (row->total_bytes >= 0)
		return (uint64_t)row->total_bytes;
	return (uint64_t)(st->base > 0 ? st->base : 0) + st->alive_bytes;
}

static int ledger_admit(mo_ledger_state *st, const mo_ledger_row *row, mo_error *err)
{
	mo_ledger *l = st->l;
	if (st->ordinal && row->alloc_ns < st->prev_alloc) {
		error_set(err, MO_ERR_INVALID, (int)row->line, 1,
			     "rows must come in allocation-time order: this one is allocated "
			     "before the previous row");
		return -1;
	}
	if (st->ordinal >= st->max_rows) {
		error_set(err, MO_ERR_LIMIT, (int)row->line, 1, "more than %llu rows",
			     (unsigned long long)st->max_rows);
		return -1;
	}
	if (st->ordinal == 0) {
		l->first_ns = row->alloc_ns;
		l->has_total = row->total_bytes >= 0;
		st->base = row->total_bytes >= (int64_t)row->bytes
				   ? row->total_bytes - (int64_t)row->bytes
				   : 0;
	}
	st->prev_alloc = row->alloc_ns;
	if (row->alloc_ns > l->last_ns)
		l->last_ns = row->alloc_ns;
	if (row->release_ns != MO_LEDGER_NEVER && row->release_ns > l->last_ns)
		l->last_ns = row->release_ns;
	ledger_release_until(st, row->alloc_ns);
	return 0;
}

static int ledger_pass_peak(mo_ledger_state *st, mo_ledger_reader *r, mo_error *err)
{
	mo_ledger_row row;
	int got;
	uint64_t best = 0;
	bool any = false;
	while ((got = ledger_reader_next(r, &row, err)) == 1) {
		if (ledger_admit(st, &row, err) != 0)
			return -1;
		mo_ledger_alive a = {.release_ns = row.release_ns, .bytes = row.bytes};
		if (ledger_push(st, &a, row.line, err) != 0)
			return -1;
		uint64_t v = ledger_value(st, &row);
		if (!any || v > best) {
			best = v;
			any = true;
			st->peak_ordinal = st->ordinal;
		}
		st->ordinal++;
	}
	if (got < 0)
		return -1;
	if (!any) {
		error_set(err, MO_ERR_INVALID, (int)r->line_no, 1,
			     "the trace has a header but no allocation rows");
		return -1;
	}
	st->l->rows = st->ordinal;
	return 0;
}

/* ---- pass 2: steps, layers, the alive set at the peak ----------------------- */

/* Allocated just before this row (its own bytes not yet counted). */
static uint64_t ledger_before(const mo_ledger_state *st, const mo_ledger_row *row)
{
	if (row->total_bytes >= 0)
		return (uint64_t)row->total_bytes > row->bytes ? (uint64_t)row->total_bytes - row->bytes
							      : 0;
	return (uint64_t)(st->base > 0 ? st->base : 0) + st->alive_bytes;
}

static int ledger_step_begin(mo_ledger_state *st, const mo_ledger_row *row, int64_t index,
			mo_error *err)
{
	mo_ledger *l = st->l;
	if (l->n_steps >= st->max_steps) {
		error_set(err, MO_ERR_LIMIT, (int)row->line, 1, "more than %llu steps",
			     (unsigned long long)st->max_steps);
		return -1;
	}
	mo_ledger_step *s = realloc(l->steps, (l->n_steps + 1) * sizeof *s);
	if (!s) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	l->steps = s;
	if (l->n_steps)
		s[l->n_steps - 1].end_us = ledger_us(row->alloc_ns);
	s[l->n_steps] = (mo_ledger_step){.index = index, .start_us = ledger_us(row->alloc_ns),
					 .start_bytes = ledger_before(st, row)};
	st->step = (int32_t)l->n_steps++;
	st->layer = -1;
	st->step_layers = 0;
	return 0;
}

/* Layer `layer` of this step ended two layer starts ago: what it still
 * holds (and will free) is kept for the backward. */
static void ledger_layer_close(mo_ledger_state *st, int32_t layer)
{
	mo_ledger_layer *ly = &st->l->layers[layer];
	for (size_t i = 0; i < st->n; i++) {
		const mo_ledger_alive *a = &st->heap[i];
		if (a->layer == layer && a->release_ns != MO_LEDGER_NEVER) {
			ly->kept_bytes += a->bytes;
			ly->kept_rows++;
		}
	}
	ly->complete = 1;
}

static int ledger_layer_begin(mo_ledger_state *st, const mo_ledger_row *row, mo_error *err)
{
	mo_ledger *l = st->l;
	if (l->n_layers >= st->max_layers) {
		error_set(err, MO_ERR_LIMIT, (int)row->line, 1, "more than %llu layers",
			     (unsigned long long)st->max_layers);
		return -1;
	}
	mo_ledger_layer *v = realloc(l->layers, (l->n_layers + 1) * sizeof *v);
	if (!v) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	l->layers = v;
	v[l->n_layers] = (mo_ledger_layer){.step = st->step >= 0 ? l->steps[st->step].index : 0,
					   .layer = st->step_layers,
					   .model_layer = st->step_layers + l->first_layer,
					   .start_us = ledger_us(row->alloc_ns)};
	st->layer = (int32_t)l->n_layers++;
	if (st->step_layers >= 2)
		ledger_layer_close(st, st->layer - 2);
	st->step_layers++;
	return 0;
}

/* Step and layer starts at this row. */
static int ledger_markers(mo_ledger_state *st, const mo_ledger_row *row, uint32_t name,
			mo_error *err)
{
	bool same = st->ordinal > 0 && name == st->prev_name;
	if (!st->step_m.set) {
		if (st->ordinal == 0 && ledger_step_begin(st, row, 0, err) != 0)
			return -1;
	} else if (ledger_marker_hit(&st->step_m, &st->step_hit, row, same)) {
		int64_t index = st->l->n_steps && st->l->steps[0].index < 0
					? (int64_t)st->l->n_steps - 1
					: (int64_t)st->l->n_steps;
		if (ledger_step_begin(st, row, index, err) != 0)
			return -1;
	} else if (st->ordinal == 0 && ledger_step_begin(st, row, -1, err) != 0) {
		return -1;
	}
	if (ledger_marker_hit(&st->layer_m, &st->layer_hit, row, same) &&
	    ledger_layer_begin(st, row, err) != 0)
		return -1;
	st->prev_name = name;
	return 0;
}

static int ledger_cmp_group(const void *pa, const void *pb)
{
	const mo_ledger_group *a = pa, *b = pb;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	int c = a->op && b->op ? strcmp(a->op, b->op) : 0;
	return c ? c : (int)a->lifetime - (int)b->lifetime;
}

/* Sorts by op, size, class (kept in `layer` once the classes are known). */
static int ledger_cmp_alive(const void *pa, const void *pb)
{
	const mo_ledger_alive *a = pa, *b = pb;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	return (a->layer > b->layer) - (a->layer < b->layer);
}

static int ledger_cmp_size(const void *pa, const void *pb)
{
	const mo_ledger_alive *a = pa, *b = pb;
	return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* Adds (op, bytes, class) to list g, merging with its last entry when
 * equal. */
static void ledger_group_add(mo_ledger_group_list *g, const char *op, uint64_t bytes,
			uint64_t each, mo_ledger_class lifetime)
{
	mo_ledger_group *last = g->n ? &g->v[g->n - 1] : NULL;
	if (last && last->op == op && last->bytes == each && last->lifetime == lifetime) {
		last->count++;
		last->total += bytes;
		return;
	}
	g->v[g->n++] = (mo_ledger_group){
		.op = op, .bytes = each, .count = 1, .total = bytes, .lifetime = lifetime};
}

/* Each alive row's class, summed into the peak's figures. */
static void ledger_classify(const mo_ledger_state *st, mo_ledger_alive *v, size_t n,
			mo_ledger_peak *p)
{
	uint64_t *by_class[] = {&p->earlier_bytes, &p->step_bytes, &p->transient_bytes};
	for (size_t i = 0; i < n; i++) {
		mo_ledger_alive *a = &v[i];
		mo_ledger_class k = MO_LEDGER_TRANSIENT;
		if (a->step != st->step)
			k = MO_LEDGER_EARLIER;
		else if (a->release_ns == MO_LEDGER_NEVER ||
			 a->release_ns - a->alloc_ns >= st->transient_ns)
			k = MO_LEDGER_STEP;
		*by_class[k] += a->bytes;
		a->layer = (int32_t)k;
	}
}

/* The alive set at the peak, grouped three ways and split by class. */
static int ledger_snapshot(mo_ledger_state *st, const mo_ledger_row *row, uint32_t name,
			mo_error *err)
{
	mo_ledger *l = st->l;
	mo_ledger_peak *p = &l->peak;
	size_t n = st->n;
	mo_ledger_alive *v = malloc((n + 1) * sizeof *v);
	for (int k = 0; k < 3; k++)
		l->groups[k].v = malloc((n + 1) * sizeof *l->groups[k].v);
	if (!v || !l->groups[0].v || !l->groups[1].v || !l->groups[2].v) {
		free(v);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	memcpy(v, st->heap, n * sizeof *v);
	p->bytes = ledger_value(st, row);
	p->time_us = ledger_us(row->alloc_ns);
	p->since_start_s = (double)(row->alloc_ns - l->first_ns) / 1e9;
	p->line = row->line;
	p->op = l->names[name];
	p->op_bytes = row->bytes;
	p->step = st->step >= 0 ? l->steps[st->step].index : 0;
	p->rows_bytes = st->alive_bytes;
	p->outside_bytes = l->has_total && p->bytes > p->rows_bytes ? p->bytes - p->rows_bytes : 0;
	ledger_classify(st, v, n, p);
	qsort(v, n, sizeof *v, ledger_cmp_alive);
	for (size_t i = 0; i < n; i++) {
		const char *op = l->names[v[i].name];
		ledger_group_add(&l->groups[MO_LEDGER_BY_OP_SIZE], op, v[i].bytes, v[i].bytes,
				(mo_ledger_class)v[i].layer);
		ledger_group_add(&l->groups[MO_LEDGER_BY_OP], op, v[i].bytes, 0, MO_LEDGER_ANY);
	}
	qsort(v, n, sizeof *v, ledger_cmp_size);
	for (size_t i = 0; i < n; i++)
		ledger_group_add(&l->groups[MO_LEDGER_BY_SIZE], NULL, v[i].bytes, v[i].bytes,
				MO_LEDGER_ANY);
	for (int k = 0; k < 3; k++)
		qsort(l->groups[k].v, l->groups[k].n, sizeof *l->groups[k].v, ledger_cmp_group);
	free(v);
	return 0;
}

/* Adds the row's figure v at t to its bin of the curve. */
static void ledger_curve_add(mo_ledger *l, int64_t t, uint64_t v)
{
	uint64_t span = (uint64_t)(l->last_ns - l->first_ns) + 1;
	uint64_t at = (uint64_t)(t - l->first_ns);
	/* at < span <= 2^64, so the quotient is below MO_LEDGER_CURVE_BINS without
	 * multiplying first (which could overflow) */
	size_t i = (size_t)(at / (span / MO_LEDGER_CURVE_BINS + 1));
	mo_ledger_bin *b = &l->curve[i < MO_LEDGER_CURVE_BINS ? i : MO_LEDGER_CURVE_BINS - 1];
	if (!b->set || v > b->max_bytes) {
		b->max_bytes = v;
		b->max_ns = t;
	}
	if (!b->set || v < b->min_bytes) {
		b->min_bytes = v;
		b->min_ns = t;
	}
	b->set = true;
}

static int ledger_pass_detail(mo_ledger_state *st, mo_ledger_reader *r, mo_error *err)
{
	mo_ledger_row row;
	int got;
	mo_ledger *l = st->l;
	st->n = 0;
	st->alive_bytes = 0;
	st->ordinal = 0;
	st->step = st->layer = -1;
	while ((got = ledger_reader_next(r, &row, err)) == 1) {
		uint32_t name;
		if (st->ordinal >= l->rows) /* the file changed between passes */
			break;
		ledger_release_until(st, row.alloc_ns);
		if (ledger_intern(st, &row, &name, err) != 0 || ledger_markers(st, &row, name, err))
			return -1;
		mo_ledger_alive a = {.release_ns = row.release_ns, .alloc_ns = row.alloc_ns,
				 .bytes = row.bytes, .name = name, .step = st->step,
				 .layer = st->layer};
		if (ledger_push(st, &a, row.line, err) != 0)
			return -1;
		mo_ledger_step *s = &l->steps[st->step];
		uint64_t v = ledger_value(st, &row);
		s->rows++;
		if (s->rows == 1 || v > s->peak_bytes) {
			s->peak_bytes = v;
			s->peak_us = ledger_us(row.alloc_ns);
		}
		ledger_curve_add(l, row.alloc_ns, v);
		if (st->ordinal == st->peak_ordinal && ledger_snapshot(st, &row, name, err) != 0)
			return -1;
		st->ordinal++;
	}
	if (got < 0)
		return -1;
	if (st->ordinal != l->rows || !l->peak.op) {
		error_set(err, MO_ERR_IO, 0, 0, "the trace changed while it was read");
		return -1;
	}
	l->steps[l->n_steps - 1].end_us = ledger_us(l->last_ns);
	return 0;
}

static uint64_t ledger_or(uint64_t v, uint64_t dflt)
{
	return v ? v : dflt;
}

int ledger_scan(mo_ledger *l, mo_ledger_reader *r, const mo_ledger_options *opt, mo_error *err)
{
	mo_ledger_state st = {.l = l, .prev_name = UINT32_MAX};
	int rc = -1;
	double transient = opt && opt->transient_ms > 0 ? opt->transient_ms : 20.0;
	if (transient > 1e9) {
		error_set(err, MO_ERR_USAGE, 0, 0, "the transient time must be under 1e9 ms");
		return -1;
	}
	st.transient_ns = (int64_t)(transient * 1e6);
	l->transient_ms = transient;
	l->first_layer = opt ? opt->first_layer : 0;
	if (l->first_layer < -1000000 || l->first_layer > 1000000) {
		error_set(err, MO_ERR_USAGE, 0, 0, "the first layer must be within 1e6 of 0");
		return -1;
	}
	st.max_rows = ledger_or(opt ? opt->max_rows : 0, 200000000ull);
	st.max_alive = ledger_or(opt ? opt->max_alive : 0, 10000000ull);
	st.max_steps = ledger_or(opt ? opt->max_steps : 0, 100000ull);
	st.max_layers = ledger_or(opt ? opt->max_layers : 0, 1000000ull);
	st.max_names = ledger_or(opt ? opt->max_names : 0, 65536ull);
	if (ledger_marker_parse(&st.step_m, opt ? opt->step_start : NULL, "step start", err) ||
	    ledger_marker_parse(&st.layer_m, opt ? opt->layer_start : NULL, "layer start", err))
		return -1;
	snprintf(l->step_marker, sizeof l->step_marker, "%s",
		 opt && opt->step_start ? opt->step_start : "");
	snprintf(l->layer_marker, sizeof l->layer_marker, "%s",
		 opt && opt->layer_start ? opt->layer_start : "");
	if (ledger_pass_peak(&st, r, err) != 0 || ledger_reader_rewind(r, err) != 0)
		goto out_free;
	rc = ledger_pass_detail(&st, r, err);
out_free:
	free(st.heap);
	free(st.slots);
	return rc;
}
