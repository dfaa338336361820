/* The closed form of a stage's schedule: its first highest event without
 * walking every micro-batch, so that its cost does not grow with the
 * micro-batch count.
 *
 * The walk (estimate_timeline.c) runs forward units F_k and backward units
 * B_j (a micro-batch's pass through one model chunk) in 1F1B order: W
 * warm-up forwards, then pairs (F_{W+i}, B_i), then the remaining
 * backwards. Every event of a unit is the state at the unit's start plus a
 * figure of the unit's own (its chunk, direction and layers), so a unit's
 * highest event is its start state plus a constant of its kind. The start
 * state is a sum of counts: activations (each chunk's bytes per micro-batch
 * times its forwards done minus its backwards done), pipeline inputs
 * (dropped at a chunk's first forward, kept again after its last backward)
 * and the workspaces (allocated by the stage's first layer). So along any
 * stretch of units of one kind whose counts move evenly the figures rise or
 * fall evenly, and the stretch's first highest event is at its last unit
 * (rising) or its first (level or falling): one unit run per stretch.
 *
 * The units run in groups of micro-batches (mo_vpp_order: each group runs
 * chunk 0 over its micro-batches, then chunk 1, ...), so a run of one
 * chunk over a group's micro-batches moves the counts evenly. The warm-up
 * (W < (V - 1) * first group + 2 P forwards) and the cool-down are a few
 * runs. In the steady state a pair's counts depend on where its forward
 * and its backward stand in their groups: when both are in middle groups
 * (of one size, after every chunk's first forward and before any last
 * backward), the pairs repeat with the period of a group, V * size units,
 * so the first period stands for every later one up to the pairs whose
 * forward reaches the last group. The units where pipeline inputs or
 * workspaces change run alone. */
#include "estimate/estimate_timeline.h"

#include <stdlib.h>
#include <string.h>

typedef struct mo_sched {
	const mo_timeline *tmpl;
	const mo_estimate *e;
	size_t s;
	int64_t V, mbn, N, W, S; /* S: steady pairs */
	mo_vpp_order o;
	uint64_t *A;             /* per chunk: bytes one micro-batch keeps */
	uint64_t *below;         /* below[c]: A[0] + ... + A[c - 1] (V + 1) */
	int64_t k_ws;            /* forward unit allocating the workspaces, -1: none */
	mo_unit_figure *fig;     /* per chunk: its forward's figure, then its backward's */
	bool own_fig;            /* fig allocated here (no memo) */
	bool first_stage;        /* chunk 0 starts at the embedding (no input) */
	bool have, failed;
	int64_t best_pos;
	mo_estimate_event best;
} mo_sched;

/* ---- counts ---------------------------------------------------------------- */

static int64_t sched_clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Where the first n units end: micro-batches of the whole groups before
 * (*B), the size of the group in progress (*gs) and its units done (*r). */
static void sched_locate(const mo_sched *q, int64_t n, int64_t *B, int64_t *gs, int64_t *r)
{
	if (n >= q->N || q->V == 1) { /* one chunk: every unit a whole micro-batch */
		*B = n < q->N ? n : q->mbn, *gs = 1, *r = 0;
		return;
	}
	int64_t u0;
	order_group(&q->o, n, &u0, B, gs);
	*r = n - u0;
}

/* Bytes r units of a group of gs micro-batches made: its first whole
 * chunks and part of the next, or (reversed: the backward's order) its
 * last ones. */
static uint64_t sched_part(const mo_sched *q, int64_t gs, int64_t r, bool reversed)
{
	int64_t whole = r / gs, part = r % gs;
	uint64_t done = reversed ? q->below[q->V] - q->below[q->V - whole] : q->below[whole];
	uint64_t sum = u64_mul((uint64_t)gs, done);
	if (part) {
		int64_t c = reversed ? q->V - 1 - whole : whole;
		sum = u64_add(sum, u64_mul((uint64_t)part, q->A[c]));
	}
	return sum;
}

/* Pipeline inputs held after nf forwards and nb backwards: one per chunk
 * that receives one, dropped at the chunk's first forward (unit c * first
 * of chunk c) and kept again after its last backward (micro-batch mbn - 1,
 * in the last group: backward unit base + (V - 1 - c) * last + last - 1). */
static int64_t sched_inputs(const mo_sched *q, int64_t nf, int64_t nb)
{
	int64_t V = q->V, first = q->o.first, last = q->o.last;
	int64_t dropped = sched_clamp((nf + first - 1) / first, 0, V);
	int64_t past = nb - (q->N - V * last);
	int64_t kept = past > 0 ? sched_clamp(past / last, 0, V) : 0;
	if (q->first_stage) { /* chunk 0 starts at the embedding */
		dropped -= nf > 0;
		kept -= past >= V * last;
	}
	return V - (q->first_stage ? 1 : 0) - dropped + kept;
}

/* Units done before position p: forwards *nf, backwards *nb. */
static void sched_done(const mo_sched *q, int64_t p, int64_t *nf, int64_t *nb)
{
	if (p <= q->W) {
		*nf = p;
		*nb = 0;
	} else if (p <= q->W + 2 * q->S) {
		*nf = q->W + (p - q->W + 1) / 2;
		*nb = (p - q->W) / 2;
	} else {
		*nf = q->N;
		*nb = q->S + (p - q->W - 2 * q->S);
	}
}

static int64_t sched_fpos(const mo_sched *q, int64_t k)
{
	return k < q->W ? k : q->W + 2 * (k - q->W);
}

static int64_t sched_bpos(const mo_sched *q, int64_t j)
{
	return j < q->S ? q->W + 2 * j + 1 : q->W + q->S + j;
}

/* The state (every bucket) at the start of position p; p = 2N: at the
 * optimizer step. */
static void sched_state(const mo_sched *q, int64_t p, uint64_t *state)
{
	const mo_estimate *e = q->e;
	int64_t nf, nb, Bf, Bb, gf, gb, rf, rb;
	sched_done(q, p, &nf, &nb);
	sched_locate(q, nf, &Bf, &gf, &rf);
	sched_locate(q, nb, &Bb, &gb, &rb);
	/* the groups both passes completed cancel (they would overflow 64
	 * bits on long steps) */
	uint64_t made = u64_add(u64_mul((uint64_t)(Bf - Bb), q->below[q->V]),
				sched_part(q, gf, rf, false));
	uint64_t freed = sched_part(q, gb, rb, true);
	memcpy(state, q->tmpl->state, sizeof(uint64_t) * MO_EST_BUCKETS);
	state[MO_EST_ACTIVATIONS] = made > freed ? made - freed : 0;
	state[MO_EST_PIPELINE_INPUTS] =
		u64_mul(timeline_input_pair(e), (uint64_t)sched_inputs(q, nf, nb));
	if (q->k_ws >= 0 && q->k_ws < nf)
		state[MO_EST_WORKSPACES] = u64_add(e->cfg.workspace, q->tmpl->caches);
}

static uint64_t sched_total(const mo_sched *q, int64_t p)
{
	uint64_t state[MO_EST_BUCKETS], sum = 0;
	sched_state(q, p, state);
	for (int b = 0; b < MO_EST_BUCKETS; b++)
		sum = u64_add(sum, state[b]);
	return sum;
}

/* ---- probing units ------------------------------------------------------------ */

static void sched_offer(mo_sched *q, int64_t p, const mo_estimate_event *ev)
{
	if (!q->have || ev->total > q->best.total ||
	    (ev->total == q->best.total && p < q->best_pos)) {
		q->have = true;
		q->best = *ev;
		q->best_pos = p;
	}
}

/* A unit's figure (mo_unit_figure) stands for the unit run from another
 * start state when each unit's operations only add to or take from the
 * state: every unit but a chunk's first forward of the step (micro-batch
 * 0: it drops the kept input to at most zero) and a forward whose start
 * does not hold the workspaces yet (its first layer sets them), and a
 * combined pair (not reused). Its events are then that start plus the
 * figure's differences, bucket by bucket, the same first highest among
 * them, as long as no sum saturates or goes below zero: every start and
 * every event below 2^58 (and so every total below 2^62). */
static bool sched_figure_fits(const mo_unit_figure *f, const uint64_t *start)
{
	const int64_t lim = (int64_t)1 << 58;
	for (int b = 0; b < MO_EST_BUCKETS; b++) {
		if (start[b] >= (uint64_t)lim || f->lo[b] <= -lim || f->hi[b] >= lim)
			return false;
		int64_t v = (int64_t)start[b];
		if (v + f->lo[b] < 0 || v + f->hi[b] >= lim)
			return false;
	}
	return true;
}

static void sched_figure_use(const mo_unit_figure *f, mo_timeline *t, int64_t mb,
			     const mo_est_chunk *ch)
{
	t->probe_events = f->any;
	if (!f->any)
		return;
	mo_estimate_event *ev = &t->peak_ev;
	uint64_t total = 0;
	for (int b = 0; b < MO_EST_BUCKETS; b++) {
		ev->bytes[b] = (uint64_t)((int64_t)t->state[b] + f->peak[b]);
		total += ev->bytes[b];
	}
	ev->kind = f->kind;
	ev->micro_batch = mb;
	ev->layer = f->pos >= 0 ? ch->ids[f->pos] : -1;
	ev->total = total;
	ev->start_seconds = ev->seconds = 0;
	t->peak = total;
}

/* Runs unit k (fwd: a forward) from t's state, or reuses its chunk's
 * figure; the first run of a chunk and direction records it. */
static void sched_unit(mo_sched *q, mo_timeline *t, int64_t k, bool fwd)
{
	int64_t mb, c;
	order_unit(&q->o, k, fwd, &mb, &c);
	mo_unit_figure *f = &q->fig[2 * c + (fwd ? 0 : 1)];
	if ((fwd && mb == 0) || (f->have && (f->start[MO_EST_WORKSPACES] !=
					     t->state[MO_EST_WORKSPACES] ||
					     !sched_figure_fits(f, t->state)))) {
		timeline_do(t, k, fwd);
		return;
	}
	const mo_est_chunk *ch = &q->e->chunks[q->s * (size_t)q->V + (size_t)c];
	if (f->have) {
		sched_figure_use(f, t, mb, ch);
		return;
	}
	memcpy(f->start, t->state, sizeof f->start);
	t->record = f;
	timeline_do(t, k, fwd);
	t->record = NULL;
	f->any = t->probe_events > 0;
	if (f->any) {
		for (int b = 0; b < MO_EST_BUCKETS; b++)
			f->peak[b] = u64_diff(t->peak_ev.bytes[b], f->start[b]);
		f->kind = t->peak_ev.kind;
		f->pos = -1;
		for (size_t i = 0; i < ch->n && t->peak_ev.layer >= 0; i++)
			if (ch->ids[i] == t->peak_ev.layer)
				f->pos = (int64_t)i;
	}
	/* reused only when this run's own sums were exact (and its highest
	 * event, if a layer's, is one of this chunk's) */
	f->have = sched_figure_fits(f, f->start) && !(f->any && t->peak_ev.layer >= 0 && f->pos < 0);
}

/* Runs the unit at position p from its start state. */
static void sched_probe(mo_sched *q, int64_t p)
{
	mo_timeline t = *q->tmpl;
	t.probe = true;
	t.probe_events = 0;
	t.peak = 0;
	sched_state(q, p, t.state);
	if (p < q->W) {
		sched_unit(q, &t, p, true);
	} else if (p < q->W + 2 * q->S) {
		int64_t i = (p - q->W) / 2;
		if (q->o.combined) /* the pair runs as one unit, from its forward's position */
			timeline_pair(&t, q->W + i, i);
		else if ((p - q->W) % 2 == 0)
			sched_unit(q, &t, q->W + i, true);
		else
			sched_unit(q, &t, i, false);
	} else {
		sched_unit(q, &t, p - q->W - q->S, false);
	}
	if (t.probe_events)
		sched_offer(q, p, &t.peak_ev);
}

/* n units of one kind at p0, p0 + step, ... whose start states move
 * evenly: the first highest is the last when they rise, else the first. */
static void sched_stretch(mo_sched *q, int64_t p0, int64_t step, int64_t n)
{
	if (n <= 0)
		return;
	if (n == 1) {
		sched_probe(q, p0);
		return;
	}
	bool rising = sched_total(q, p0 + step) > sched_total(q, p0);
	sched_probe(q, rising ? p0 + (n - 1) * step : p0);
}

/* A run of n units of one chunk: its first alone (a chunk's first forward
 * drops its kept input and the stage's first allocates the workspaces
 * before their events), the rest as one stretch (what a chunk's last
 * backward keeps comes after its events, at the next run's start). */
static void sched_run(mo_sched *q, int64_t p0, int64_t step, int64_t n)
{
	if (n <= 0)
		return;
	sched_probe(q, p0);
	sched_stretch(q, p0 + step, step, n - 1);
}

/* ---- the phases ------------------------------------------------------------------ */

/* Forward (fwd) or backward units [lo, hi) at positions pos(k): run by
 * run of one chunk over a group's micro-batches. */
static void sched_units(mo_sched *q, int64_t lo, int64_t hi, bool fwd)
{
	while (lo < hi) {
		int64_t end = order_run_end(&q->o, lo);
		end = end < hi ? end : hi;
		sched_run(q, fwd ? sched_fpos(q, lo) : sched_bpos(q, lo), 1, end - lo);
		lo = end;
	}
}

static void sched_warmup(mo_sched *q)
{
	sched_units(q, 0, q->W, true);
}

static void sched_cooldown(mo_sched *q)
{
	sched_units(q, q->S, q->N, false);
}

/* Steady pairs [lo, hi): runs where both the forward's and the backward's
 * chunk stay the same. */
static void sched_pairs(mo_sched *q, int64_t lo, int64_t hi)
{
	for (int64_t i = lo; i < hi;) {
		int64_t next_b = order_run_end(&q->o, i);
		int64_t next_f = order_run_end(&q->o, q->W + i) - q->W;
		int64_t end = next_b < next_f ? next_b : next_f;
		end = end < hi ? end : hi;
		sched_run(q, sched_fpos(q, q->W + i), 2, end - i);
		if (!q->o.combined)
			sched_run(q, sched_bpos(q, i), 2, end - i);
		i = end;
	}
}

/* Pair i (forward W + i, backward i) with both units in middle groups
 * (i >= u0, W + i < u1) has the counts of pair i + T: the first period of
 * them stands for the rest. */
static void sched_steady(mo_sched *q)
{
	int64_t S = q->S, V = q->V;
	int64_t u0 = q->o.first * V, u1 = q->N - q->o.last * V, T = q->o.size * V;
	int64_t first_hi = u0 + T < S ? u0 + T : S;
	sched_pairs(q, 0, first_hi);
	int64_t last_lo = u1 - q->W > first_hi ? u1 - q->W : first_hi;
	sched_pairs(q, last_lo, S);
}

/* ---- the stage ---------------------------------------------------------------------- */

/* Whether stages a and b of an estimate run units of the same figures: both
 * or neither first and last, the same gradients held at their layer events,
 * and chunk by chunk the same layers' figures position by position (kept,
 * swapped, recomputed bytes, the backward's gradient buffers). Under PP the
 * gathered weights stay resident (no per-layer term). */
static bool sched_same_shape(const mo_estimate *e, size_t a, size_t b, uint64_t grads_a,
			     uint64_t grads_b)
{
	size_t V = (size_t)e->cfg.vpp, last = e->n_stages - 1;
	if (e->cfg.pp <= 1 || (a == 0) != (b == 0) || (a == last) != (b == last) ||
	    grads_a != grads_b)
		return false;
	for (size_t c = 0; c < V; c++) {
		const mo_est_chunk *x = &e->chunks[a * V + c], *y = &e->chunks[b * V + c];
		if (x->n != y->n)
			return false;
		for (size_t i = 0; i < x->n; i++) {
			const mo_estimate_layer *l = &e->layers[x->ids[i]], *m = &e->layers[y->ids[i]];
			size_t tl = e->res[e->layer_res[x->ids[i]]].type;
			size_t tm = e->res[e->layer_res[y->ids[i]]].type;
			if (l->activation_bytes != m->activation_bytes ||
			    l->swap_bytes != m->swap_bytes ||
			    l->recomputed_bytes != m->recomputed_bytes ||
			    e->types[tl].g.bwd_grads != e->types[tm].g.bwd_grads)
				return false;
		}
	}
	return true;
}

/* The stage's figures: its own (no memo), or the memo's, kept from the
 * stage before when the two have the same shape, else cleared. */
static int sched_memo_take(mo_sched *q, const mo_timeline *tmpl)
{
	size_t n = 2 * (size_t)q->V;
	mo_sched_memo *m = tmpl->memo;
	if (!m) {
		q->fig = calloc(n, sizeof(mo_unit_figure));
		q->own_fig = true;
		return q->fig ? 0 : -1;
	}
	if (m->cap < n) {
		free(m->fig);
		m->fig = calloc(n, sizeof(mo_unit_figure));
		m->cap = m->fig ? n : 0;
		m->have = false;
		if (!m->fig)
			return -1;
	}
	if (!m->have || !sched_same_shape(q->e, m->s, q->s, m->grads, tmpl->grads))
		memset(m->fig, 0, n * sizeof(mo_unit_figure));
	m->have = true;
	m->s = q->s;
	m->grads = tmpl->grads;
	q->fig = m->fig;
	return 0;
}

void sched_memo_free(mo_sched_memo *m)
{
	free(m->fig);
	memset(m, 0, sizeof(*m));
}

static int sched_init(mo_sched *q, const mo_timeline *tmpl)
{
	const mo_estimate *e = tmpl->e;
	memset(q, 0, sizeof(*q));
	q->tmpl = tmpl;
	q->e = e;
	q->s = tmpl->s;
	q->V = e->cfg.vpp;
	q->mbn = tmpl->mbn;
	q->N = q->mbn * q->V;
	q->o = tmpl->order;
	q->W = order_warmup(&q->o, e->cfg.pp, q->s);
	q->S = q->N - q->W;
	q->first_stage = q->s == 0;
	q->k_ws = -1;
	q->A = calloc((size_t)q->V + 1, sizeof(uint64_t));
	q->below = calloc((size_t)q->V + 2, sizeof(uint64_t));
	if (!q->A || !q->below || sched_memo_take(q, tmpl) != 0) {
		free(q->A);
		free(q->below);
		return -1;
	}
	bool last_stage = q->s + 1 == e->n_stages;
	for (int64_t c = 0; c < q->V; c++) {
		const mo_est_chunk *ch = &e->chunks[q->s * (size_t)q->V + (size_t)c];
		uint64_t a = 0;
		if (q->first_stage && c == 0)
			a += e->embed_k.kept;
		for (size_t i = 0; i < ch->n; i++)
			a = u64_add(a, e->layers[ch->ids[i]].activation_bytes);
		if (last_stage && c == q->V - 1)
			a += e->head_k.kept * (uint64_t)(1 + e->cfg.mtp);
		else /* a chunk that sends holds its output's gradient buffer */
			a = u64_add(a, e->cfg.pp_grad_recv);
		q->A[c] = a;
		q->below[c + 1] = u64_add(q->below[c], a);
		if (ch->n && q->k_ws < 0)
			q->k_ws = c * q->o.first;
	}
	return 0;
}

/* The optimizer step: after every unit; the walk's first highest event is
 * the last one when every event is 0 (it keeps replacing a zero peak). */
static void sched_optimizer(mo_sched *q, mo_sched_peak *out)
{
	mo_timeline t = *q->tmpl;
	t.probe = true;
	t.probe_events = 0;
	t.peak = 0;
	sched_state(q, 2 * q->N, t.state);
	memcpy(out->end, t.state, sizeof out->end);
	timeline_optimizer(&t);
	if (!q->have || t.peak_ev.total > q->best.total || q->best.total == 0) {
		q->have = true;
		q->best = t.peak_ev;
	}
}

int sched_stage_peak(const mo_timeline *tmpl, mo_sched_peak *out)
{
	mo_sched q;
	memset(out, 0, sizeof(*out));
	if (sched_init(&q, tmpl) != 0)
		return -1;
	sched_warmup(&q);
	sched_steady(&q);
	sched_cooldown(&q);
	sched_optimizer(&q, out);
	out->ev = q.best;
	out->in_flight = q.W >= q.N ? q.N : q.W + 1;
	free(q.A);
	free(q.below);
	if (q.own_fig)
		free(q.fig);
	return 0;
}
