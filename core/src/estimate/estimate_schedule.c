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
 * The chunk of unit k is (k / blk) % V with blk = P when V > 1 and the
 * micro-batches fill whole rounds of P (Megatron's interleaved order), else
 * 1: runs of blk units share a chunk, and the pattern repeats every
 * T = blk * V units. The warm-up (W < (V + 1) * P forwards) and the
 * cool-down are stretches of whole runs (blk = P) or, per residue modulo V,
 * strided stretches (blk = 1). In the steady state the counts of T
 * consecutive pairs cover every chunk alike, so its pairs repeat with
 * period T: from pair T on every chunk has had its first forward, and
 * until the last T pairs none its last backward, so pairs T..2T-1 stand
 * for every later period but the last. The units where pipeline inputs or
 * workspaces change run alone. */
#include "estimate/estimate_timeline.h"

#include <stdlib.h>
#include <string.h>

typedef struct mo_sched {
	const mo_timeline *tmpl;
	const mo_estimate *e;
	size_t s;
	int64_t V, mbn, N, W, S; /* S: steady pairs */
	int64_t blk, T;
	uint64_t *A;             /* per chunk: bytes one micro-batch keeps */
	uint64_t *below;         /* below[c]: A[0] + ... + A[c - 1] (V + 1) */
	int64_t k_ws;            /* forward unit allocating the workspaces, -1: none */
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

/* Bytes the first n forward units made, of them `rounds` whole rounds of
 * every chunk (blk units each) and then the first chunks of the round in
 * progress. With `reversed` the chunks run from the last (the backward's
 * order). */
static uint64_t sched_made(const mo_sched *q, int64_t rounds, int64_t n, bool reversed)
{
	int64_t r = n % q->T, whole = r / q->blk, part = r % q->blk;
	uint64_t sum = u64_mul((uint64_t)(rounds * q->blk), q->below[q->V]);
	/* whole chunks of the round: the first `whole`, or the last ones */
	uint64_t done = reversed ? q->below[q->V] - q->below[q->V - whole] : q->below[whole];
	sum = u64_add(sum, u64_mul((uint64_t)q->blk, done));
	if (part) {
		int64_t c = reversed ? q->V - 1 - whole : whole;
		sum = u64_add(sum, u64_mul((uint64_t)part, q->A[c]));
	}
	return sum;
}

/* Pipeline inputs held after nf forwards and nb backwards: one per chunk
 * that receives one, dropped at the chunk's first forward (unit c * blk of
 * chunk c) and kept again after its last backward (micro-batch mbn - 1:
 * backward unit base + (V - 1 - c) * blk + blk - 1). */
static int64_t sched_inputs(const mo_sched *q, int64_t nf, int64_t nb)
{
	int64_t V = q->V, blk = q->blk;
	int64_t dropped = sched_clamp((nf + blk - 1) / blk, 0, V);
	int64_t past = nb - (q->mbn / blk - 1) * q->T;
	int64_t kept = past > 0 ? sched_clamp(past / blk, 0, V) : 0;
	if (q->first_stage) { /* chunk 0 starts at the embedding */
		dropped -= nf > 0;
		kept -= past >= V * blk;
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
	int64_t nf, nb;
	sched_done(q, p, &nf, &nb);
	/* the rounds both passes completed cancel (they would overflow
	 * 64 bits on long steps) */
	int64_t rounds = nf / q->T - nb / q->T;
	uint64_t made = sched_made(q, rounds, nf, false), freed = sched_made(q, 0, nb, true);
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

/* Runs the unit at position p from its start state. */
static void sched_probe(mo_sched *q, int64_t p)
{
	mo_timeline t = *q->tmpl;
	t.probe = true;
	t.probe_events = 0;
	t.peak = 0;
	sched_state(q, p, t.state);
	if (p < q->W) {
		timeline_do(&t, p, true);
	} else if (p < q->W + 2 * q->S) {
		int64_t i = (p - q->W) / 2;
		if ((p - q->W) % 2 == 0)
			timeline_do(&t, q->W + i, true);
		else
			timeline_do(&t, i, false);
	} else {
		timeline_do(&t, p - q->W - q->S, false);
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

/* A run of n units of one chunk: its first and last alone (they may
 * start or end a chunk's micro-batches), the rest as one stretch. */
static void sched_run(mo_sched *q, int64_t p0, int64_t step, int64_t n)
{
	if (n <= 0)
		return;
	sched_probe(q, p0);
	if (n > 1)
		sched_probe(q, p0 + (n - 1) * step);
	sched_stretch(q, p0 + step, step, n - 2);
}

/* ---- the phases ------------------------------------------------------------------ */

static void sched_warmup(mo_sched *q)
{
	int64_t W = q->W, V = q->V;
	if (q->blk > 1) {
		for (int64_t lo = 0; lo < W; lo += q->blk) {
			int64_t hi = lo + q->blk < W ? lo + q->blk : W;
			sched_run(q, lo, 1, hi - lo);
		}
		return;
	}
	/* one unit per chunk in turn: the first round alone (each chunk's
	 * first forward), then per chunk its units V apart */
	for (int64_t k = 0; k < V && k < W; k++)
		sched_probe(q, k);
	for (int64_t r = 0; r < V && V + r < W; r++)
		sched_stretch(q, V + r, V, (W - 1 - (V + r)) / V + 1);
}

static void sched_cooldown(mo_sched *q)
{
	int64_t S = q->S, N = q->N, V = q->V;
	if (q->blk > 1) {
		for (int64_t lo = S; lo < N;) {
			int64_t end = (lo / q->blk + 1) * q->blk, hi = end < N ? end : N;
			sched_run(q, sched_bpos(q, lo), 1, hi - lo);
			lo = hi;
		}
		return;
	}
	/* the first and the last round alone (the last holds each chunk's
	 * last backward), per chunk the units between V apart */
	int64_t mid_lo = S + V < N ? S + V : N, mid_hi = N - V > mid_lo ? N - V : mid_lo;
	for (int64_t j = S; j < mid_lo; j++)
		sched_probe(q, sched_bpos(q, j));
	for (int64_t r = 0; r < V && mid_lo + r < mid_hi; r++)
		sched_stretch(q, sched_bpos(q, mid_lo + r), V,
				 (mid_hi - 1 - (mid_lo + r)) / V + 1);
	for (int64_t j = mid_hi; j < N; j++)
		sched_probe(q, sched_bpos(q, j));
}

/* Steady pairs [lo, hi): runs where both the forward's and the backward's
 * chunk stay the same. */
static void sched_pairs(mo_sched *q, int64_t lo, int64_t hi)
{
	int64_t blk = q->blk;
	for (int64_t i = lo; i < hi;) {
		int64_t next_b = (i / blk + 1) * blk;
		int64_t next_f = ((q->W + i) / blk + 1) * blk - q->W;
		int64_t end = next_b < next_f ? next_b : next_f;
		end = end < hi ? end : hi;
		sched_run(q, sched_fpos(q, q->W + i), 2, end - i);
		sched_run(q, sched_bpos(q, i), 2, end - i);
		i = end;
	}
}

static void sched_steady(mo_sched *q)
{
	int64_t S = q->S, T = q->T;
	int64_t first_hi = 2 * T < S ? 2 * T : S;
	sched_pairs(q, 0, first_hi);
	int64_t last_lo = S - T > first_hi ? S - T : first_hi;
	sched_pairs(q, last_lo, S);
}

/* ---- the stage ---------------------------------------------------------------------- */

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
	q->W = timeline_warmup(e, q->s, q->N);
	q->S = q->N - q->W;
	q->blk = q->V > 1 && q->mbn % e->cfg.pp == 0 ? e->cfg.pp : 1;
	q->T = q->blk * q->V;
	q->first_stage = q->s == 0;
	q->k_ws = -1;
	q->A = calloc((size_t)q->V + 1, sizeof(uint64_t));
	q->below = calloc((size_t)q->V + 2, sizeof(uint64_t));
	if (!q->A || !q->below) {
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
			q->k_ws = c * q->blk;
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
	return 0;
}
