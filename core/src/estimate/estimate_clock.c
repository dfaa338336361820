/* The timeline's clock: when each listed event starts and how long it
 * runs, so the estimated memory curve has a time axis like a measured
 * trace. The step-time model (estimate_time.c) gives each layer's seconds
 * of one micro-batch (its backward with what recompute and the exposed
 * swap add), the embedding's and the output layer's, one activation's
 * transfer between stages and what follows a stage's last backward; this
 * walks them through the schedule the timeline follows (1F1B, interleaved
 * with virtual stages), every stage starting a unit when it is free and
 * its input has arrived: a forward waits for the previous virtual stage's
 * forward of the same micro-batch, a backward for the next one's backward,
 * each plus the transfer when the two are on different stages. The
 * pipeline's bubbles are the waits; nothing is fitted.
 *
 * The walk is driven by demand: each stage runs the units its listed
 * events need, and a unit waiting for a neighbour's unit asks that stage
 * to run as far. Its finish times are kept per (virtual stage,
 * micro-batch) up to a bound; events past it keep start_seconds NAN. */
#include "estimate/estimate_internal.h"
#include "estimate/estimate_timeline.h"

#include <math.h>
#include <stdlib.h>

#define CLOCK_MAX_SLOTS (1u << 21) /* (virtual stage, micro-batch) finish times */

typedef struct mo_clock {
	mo_estimate *e;
	int64_t P, V, N, mb_lim;
	mo_vpp_order o;
	double *lf, *lb;        /* per layer: forward, backward seconds */
	double *uf, *ub;        /* per (stage, chunk): a unit's seconds */
	double *done_f, *done_b; /* per (virtual stage, mb): finish, -1 not yet */
	int64_t *pos, *target;  /* per stage: next unit, units wanted */
	size_t *next;           /* per stage: next event to time */
	double *free_at;        /* per stage: when it is free */
	bool *stuck;
} mo_clock;

static int64_t clock_warmup(const mo_clock *c, int64_t s)
{
	return order_warmup(&c->o, c->P, (size_t)s);
}

/* The unit at position p of stage s's order (as timeline_run walks it). */
static void clock_unit_at(const mo_clock *c, int64_t s, int64_t p, bool *fwd, int64_t *k)
{
	int64_t W = clock_warmup(c, s), steady = W + 2 * (c->N - W);
	if (p < W || (p < steady && (p - W) % 2 == 0)) {
		*fwd = true;
		*k = p < W ? p : W + (p - W) / 2;
	} else {
		*fwd = false;
		*k = p < steady ? (p - W) / 2 : p - c->N;
	}
}

static int64_t clock_position(const mo_clock *c, int64_t s, bool fwd, int64_t k)
{
	int64_t W = clock_warmup(c, s);
	if (fwd)
		return k < W ? k : W + 2 * (k - W);
	return k < c->N - W ? W + 2 * k + 1 : c->N + k;
}

static size_t clock_type(const mo_estimate *e, int64_t id)
{
	return e->res[e->layer_res[id]].type;
}

/* Seconds of an event (the optimizer step: what follows the last backward). */
static double clock_event_seconds(const mo_clock *c, size_t s, const mo_estimate_event *ev)
{
	const mo_estimate *e = c->e;
	double heads = (double)(1 + e->cfg.mtp);
	switch (ev->kind) {
	case MO_EV_FORWARD: return c->lf[ev->layer];
	case MO_EV_BACKWARD: return c->lb[ev->layer];
	case MO_EV_EMBED_FORWARD: return e->embed_fwd_s;
	case MO_EV_EMBED_BACKWARD: return e->embed_bwd_s;
	case MO_EV_LOSS_FORWARD: return heads * e->head_fwd_s;
	case MO_EV_LOSS_BACKWARD: return heads * e->head_bwd_s;
	default: return e->tail_s[s];
	}
}

static void clock_layer_seconds(mo_clock *c)
{
	const mo_estimate *e = c->e;
	for (size_t i = 0; i < e->n_layers; i++) {
		const mo_estimate_layer *l = &e->layers[i];
		size_t t = clock_type(e, (int64_t)i);
		c->lf[i] = e->type_fwd_s[t];
		c->lb[i] = e->type_bwd_s[t] +
			   est_time_layer_recompute(e, i) +
			   est_time_swap(e, t, l->swap_bytes, e->cfg.prefetch);
	}
	for (int64_t s = 0; s < c->P; s++)
		for (int64_t ch = 0; ch < c->V; ch++) {
			const mo_est_chunk *k = &e->chunks[s * c->V + ch];
			size_t u = (size_t)(s * c->V + ch);
			c->uf[u] = c->ub[u] = 0;
			for (size_t i = 0; i < k->n; i++) {
				c->uf[u] += c->lf[k->ids[i]];
				c->ub[u] += c->lb[k->ids[i]];
			}
			double heads = (double)(1 + e->cfg.mtp);
			if (s == 0 && ch == 0) {
				c->uf[u] += e->embed_fwd_s;
				c->ub[u] += e->embed_bwd_s;
			}
			if (s + 1 == c->P && ch + 1 == c->V) {
				c->uf[u] += heads * e->head_fwd_s;
				c->ub[u] += heads * e->head_bwd_s;
			}
			/* the stage's own per-micro-batch backward work, once a
			 * micro-batch: with its first chunk's backward (the last) */
			if (ch == 0)
				c->ub[u] += e->bwd_extra_s[s];
		}
}

/* Events a unit of chunk ch on stage s lists (timeline_forward / _backward). */
static size_t clock_unit_events(const mo_clock *c, int64_t s, int64_t ch)
{
	return c->e->chunks[s * c->V + ch].n + (s == 0 && ch == 0) +
	       (s + 1 == c->P && ch + 1 == c->V);
}

/* How many units stage s runs to reach its last listed event, and the
 * largest micro-batch among them. */
static int64_t clock_target(const mo_clock *c, int64_t s, int64_t *max_mb)
{
	const mo_estimate *e = c->e;
	size_t n = e->n_events[s], listed = 0;
	if (n && e->events[s][n - 1].kind == MO_EV_OPTIMIZER)
		n--; /* the whole step is listed */
	int64_t p = 0;
	for (; p < 2 * c->N && listed < n; p++) {
		bool fwd;
		int64_t k, mb, ch;
		clock_unit_at(c, s, p, &fwd, &k);
		order_unit(&c->o, k, fwd, &mb, &ch);
		listed += clock_unit_events(c, s, ch);
		*max_mb = mb > *max_mb ? mb : *max_mb;
	}
	return n < e->n_events[s] ? 2 * c->N : p;
}

/* Times the next listed events of stage s: those of n units (chunks ch,
 * directions fwd: one unit, or a pair of the combined 1F1B, whose events
 * interleave), one after the other from `start`. */
static void clock_time_events(mo_clock *c, int64_t s, const int64_t *ch, const bool *fwd,
			      int64_t n, double start)
{
	mo_estimate *e = c->e;
	size_t want = 0, *i = &c->next[s];
	bool extra = false;
	for (int64_t j = 0; j < n; j++) {
		want += clock_unit_events(c, s, ch[j]);
		extra |= !fwd[j] && ch[j] == 0;
	}
	for (size_t j = 0; j < want && *i < e->n_events[s]; j++, (*i)++) {
		mo_estimate_event *ev = &e->events[s][*i];
		if (ev->kind == MO_EV_OPTIMIZER)
			break;
		ev->start_seconds = start;
		ev->seconds = clock_event_seconds(c, (size_t)s, ev);
		if (extra && j + 1 == want)
			ev->seconds += e->bwd_extra_s[s]; /* as clock_layer_seconds counts it */
		start += ev->seconds;
	}
}

/* When the input of stage s's unit at position p has arrived (*ready), or
 * false when it has not yet been made: then the stage that makes it is
 * asked to run as far (*asked when that is news). */
static bool clock_ready(mo_clock *c, int64_t s, int64_t p, double *ready, bool *asked)
{
	bool fwd;
	int64_t k, mb, ch;
	clock_unit_at(c, s, p, &fwd, &k);
	order_unit(&c->o, k, fwd, &mb, &ch);
	int64_t v = ch * c->P + s, dep = fwd ? v - 1 : v + 1;
	*ready = 0;
	if (dep < 0 || dep >= c->P * c->V)
		return true;
	int64_t ds = dep % c->P;
	double d = (fwd ? c->done_f : c->done_b)[dep * c->mb_lim + mb];
	if (d < 0) { /* ask the neighbour to run as far */
		int64_t q = clock_position(c, ds, fwd, order_index(&c->o, fwd, mb, dep / c->P));
		if (c->target[ds] <= q) {
			c->target[ds] = q + 1;
			*asked = true;
		}
		return false;
	}
	*ready = d + (ds != s ? c->e->p2p_s : 0);
	return true;
}

/* Whether position p of stage s starts a pair of the combined 1F1B (its
 * forward; the backward is at p + 1). */
static bool clock_paired(const mo_clock *c, int64_t s, int64_t p)
{
	int64_t W = clock_warmup(c, s);
	return c->o.combined && p >= W && p < W + 2 * (c->N - W) && (p - W) % 2 == 0;
}

/* The unit at position p: its micro-batch, chunk, direction, slot. */
static void clock_unit_of(const mo_clock *c, int64_t s, int64_t p, bool *fwd, int64_t *mb,
			  int64_t *ch)
{
	int64_t k;
	clock_unit_at(c, s, p, fwd, &k);
	order_unit(&c->o, k, *fwd, mb, ch);
}

/* Runs stage s's units up to its target; true when it ran one or asked a
 * neighbour to run further. A pair of the combined 1F1B runs as one unit
 * of both units' events and seconds, once both inputs are there. */
static bool clock_advance(mo_clock *c, int64_t s)
{
	bool moved = false;
	while (c->pos[s] < c->target[s] && !c->stuck[s]) {
		int64_t p = c->pos[s], n = clock_paired(c, s, p) ? 2 : 1;
		bool fwd[2];
		int64_t mb[2], ch[2];
		double ready = 0;
		for (int64_t j = 0; j < n; j++) {
			clock_unit_of(c, s, p + j, &fwd[j], &mb[j], &ch[j]);
			if (mb[j] >= c->mb_lim)
				c->stuck[s] = true;
		}
		if (c->stuck[s])
			break;
		bool all = true;
		for (int64_t j = 0; j < n && all; j++) {
			double r;
			all = clock_ready(c, s, p + j, &r, &moved);
			ready = r > ready ? r : ready;
		}
		if (!all)
			break;
		double start = c->free_at[s] > ready ? c->free_at[s] : ready, busy = 0;
		for (int64_t j = 0; j < n; j++) {
			size_t u = (size_t)(s * c->V + ch[j]);
			busy += fwd[j] ? c->uf[u] : c->ub[u];
		}
		clock_time_events(c, s, ch, fwd, n, start);
		c->free_at[s] = start + busy;
		for (int64_t j = 0; j < n; j++) {
			int64_t v = ch[j] * c->P + s;
			(fwd[j] ? c->done_f : c->done_b)[v * c->mb_lim + mb[j]] = c->free_at[s];
		}
		c->pos[s] += n;
		moved = true;
	}
	return moved;
}

static void clock_walk(mo_clock *c)
{
	bool moved = true, up = true;
	while (moved) { /* forwards flow up the stages, backwards down */
		moved = false;
		for (int64_t i = 0; i < c->P; i++)
			moved |= clock_advance(c, up ? i : c->P - 1 - i);
		up = !up;
	}
	for (int64_t s = 0; s < c->P; s++) {
		mo_estimate *e = c->e;
		size_t n = e->n_events[s];
		if (c->pos[s] == 2 * c->N && n && c->next[s] == n - 1 &&
		    e->events[s][n - 1].kind == MO_EV_OPTIMIZER) {
			e->events[s][n - 1].start_seconds = c->free_at[s];
			e->events[s][n - 1].seconds = e->tail_s[s];
		}
	}
}

static void clock_free(mo_clock *c)
{
	free(c->lf);
	free(c->lb);
	free(c->uf);
	free(c->ub);
	free(c->done_f);
	free(c->done_b);
	free(c->pos);
	free(c->target);
	free(c->next);
	free(c->free_at);
	free(c->stuck);
}

static int clock_alloc(mo_clock *c)
{
	size_t P = (size_t)c->P, PV = (size_t)(c->P * c->V), slots = PV * (size_t)c->mb_lim;
	c->lf = malloc((c->e->n_layers + 1) * sizeof(double));
	c->lb = malloc((c->e->n_layers + 1) * sizeof(double));
	c->uf = malloc(PV * sizeof(double));
	c->ub = malloc(PV * sizeof(double));
	c->done_f = malloc(slots * sizeof(double));
	c->done_b = malloc(slots * sizeof(double));
	c->pos = calloc(P, sizeof(int64_t));
	c->target = calloc(P, sizeof(int64_t));
	c->next = calloc(P, sizeof(size_t));
	c->free_at = calloc(P, sizeof(double));
	c->stuck = calloc(P, sizeof(bool));
	if (!c->lf || !c->lb || !c->uf || !c->ub || !c->done_f || !c->done_b || !c->pos ||
	    !c->target || !c->next || !c->free_at || !c->stuck)
		return -1;
	for (size_t i = 0; i < slots; i++)
		c->done_f[i] = c->done_b[i] = -1;
	return 0;
}

int est_clock(mo_estimate *e)
{
	if (e->no_events || !e->events || !e->n_stages)
		return 0;
	for (size_t s = 0; s < e->n_stages; s++)
		for (size_t i = 0; i < e->n_events[s]; i++) {
			e->events[s][i].start_seconds = NAN;
			e->events[s][i].seconds = 0;
		}
	mo_clock c = {.e = e, .P = e->cfg.pp, .V = e->cfg.vpp};
	c.N = e->cfg.mbn * c.V;
	timeline_order_of(e, e->cfg.mbn, &c.o);
	int64_t max_mb = 0;
	for (int64_t s = 0; s < c.P; s++)
		clock_target(&c, s, &max_mb);
	/* a unit waits only for the same micro-batch elsewhere; what a stage
	 * runs before it reaches a little further (a warm-up of P units, or,
	 * interleaved, of the first group's chunks and 2 P more, and the
	 * group in progress) */
	int64_t reach = c.V == 1 ? c.P : c.o.first + c.o.size + c.P;
	int64_t lim = max_mb + 1 + 2 * reach;
	c.mb_lim = lim < e->cfg.mbn ? lim : e->cfg.mbn;
	if (c.mb_lim < 1 || (double)c.P * (double)c.V * (double)c.mb_lim > (double)CLOCK_MAX_SLOTS)
		return 0; /* too long a step to walk: the events keep no time */
	int rc = clock_alloc(&c);
	if (rc == 0) {
		clock_layer_seconds(&c);
		for (int64_t s = 0; s < c.P; s++)
			c.target[s] = clock_target(&c, s, &max_mb);
		clock_walk(&c);
	}
	clock_free(&c);
	return rc;
}
