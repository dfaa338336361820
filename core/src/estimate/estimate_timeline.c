/* Pipeline stages and the timeline of one step per stage: every
 * micro-batch's forward and backward of every layer in 1F1B order
 * (interleaved with virtual pipeline), then the optimizer step. Each event
 * records its high-water mark by bucket: during the backward of a recomputed
 * layer its tensors exist again, prefetched swap buffers are resident, and
 * FSDP's all-gathered weights (resident under PP, where reshard_after_forward
 * resolves to never) are held. */
#include "estimate/estimate_internal.h"
#include "estimate/estimate_timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MO_EST_MAX_EVENTS (1u << 18)    /* stored events over all stages */

/* ---- stages ------------------------------------------------------------------ */

static int est_chunk_add(mo_estimate *e, mo_est_chunk *c, size_t cap, int64_t id)
{
	if (!c->ids) {
		c->ids = arena_alloc(e->a, (cap ? cap : 1) * sizeof(int64_t));
		if (!c->ids)
			return -1;
	}
	c->ids[c->n++] = id;
	return 0;
}

/* Virtual stage k (chunk k / P of stage k % P) -> chunks[stage * V + chunk]. */
static mo_est_chunk *est_vstage(mo_estimate *e, size_t k)
{
	size_t P = (size_t)e->cfg.pp;
	return &e->chunks[(k % P) * (size_t)e->cfg.vpp + k / P];
}

static int est_stages_auto(mo_estimate *e, size_t nv, bool *named)
{
	int64_t L = e->cfg.num_layers, total = L + e->cfg.mtp;
	int64_t id = 0;
	for (size_t k = 0; k < nv; k++) {
		int64_t n = L / (int64_t)nv + ((int64_t)k < L % (int64_t)nv);
		mo_est_chunk *c = est_vstage(e, k);
		size_t cap = (size_t)n + (k + 1 == nv ? (size_t)e->cfg.mtp : 0);
		for (int64_t i = 0; i < n; i++, id++)
			if (est_chunk_add(e, c, cap, id) != 0)
				return -1;
	}
	for (; id < total; id++) /* MTP layers: the last virtual stage */
		if (!named[id] && est_chunk_add(e, est_vstage(e, nv - 1),
						   (size_t)e->cfg.mtp, id) != 0)
			return -1;
	return 0;
}

static int64_t est_list_count(const mo_layers *l, int64_t total)
{
	int64_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		for (uint64_t id = l->r[i].lo; id <= l->r[i].hi && id < (uint64_t)total; id++)
			n++;
	return n;
}

/* Explicit per-stage lists (pipeline_parallel_layers_per_stage), which the
 * `parallel` rule has checked; MTP layers they do not name go last. */
static int est_stages_lists(mo_estimate *e, const mo_model *m, size_t nv, bool *named)
{
	int64_t total = e->cfg.num_layers + e->cfg.mtp;
	for (size_t k = 0; k < nv; k++) {
		const mo_layers *l = &m->stage_layers[k];
		mo_est_chunk *c = est_vstage(e, k);
		size_t cap = (size_t)est_list_count(l, total) +
			     (k + 1 == nv ? (size_t)e->cfg.mtp : 0);
		for (size_t i = 0; i < l->n; i++)
			for (uint64_t id = l->r[i].lo; id <= l->r[i].hi && id < (uint64_t)total; id++) {
				if (named[id])
					continue;
				named[id] = true;
				if (est_chunk_add(e, c, cap, (int64_t)id) != 0)
					return -1;
			}
	}
	mo_est_chunk *last = est_vstage(e, nv - 1);
	for (int64_t id = e->cfg.num_layers; id < total; id++)
		if (!named[id] && est_chunk_add(e, last, (size_t)e->cfg.mtp, id) != 0)
			return -1;
	return 0;
}

static void est_stage_fill(mo_estimate *e)
{
	size_t V = (size_t)e->cfg.vpp;
	for (size_t s = 0; s < e->n_stages; s++) {
		mo_estimate_stage *st = &e->stages[s];
		st->stage = (int64_t)s;
		st->first_layer = -1;
		for (size_t c = 0; c < V; c++) {
			const mo_est_chunk *ch = &e->chunks[s * V + c];
			for (size_t i = 0; i < ch->n; i++) {
				if (st->first_layer < 0 || ch->ids[i] < st->first_layer)
					st->first_layer = ch->ids[i];
				st->num_layers++;
				e->layers[ch->ids[i]].stage = (int64_t)s;
			}
		}
	}
}

int est_stages(mo_estimate *e, const mo_model *m, mo_error *err)
{
	size_t P = (size_t)e->cfg.pp, V = (size_t)e->cfg.vpp, nv = P * V;
	int64_t total = e->cfg.num_layers + e->cfg.mtp;
	e->n_stages = P;
	e->stages = arena_alloc(e->a, P * sizeof(*e->stages));
	e->chunks = arena_alloc(e->a, nv * sizeof(*e->chunks));
	bool *named = calloc((size_t)total + 1, sizeof(bool));
	int rc = -1;
	if (!e->stages || !e->chunks || !named)
		goto out;
	if (m->n_stage_layers == nv)
		rc = est_stages_lists(e, m, nv, named);
	else
		rc = est_stages_auto(e, nv, named);
	if (rc == 0)
		est_stage_fill(e);
out:
	free(named);
	if (rc != 0)
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	return rc;
}

/* ---- the timeline of one stage ------------------------------------------------ */


static void timeline_track(mo_timeline *t, int64_t mb, int layers, unsigned set, unsigned clear)
{
	if (!t->replay)
		return;
	t->now.layers[t->slot] += layers;
	t->now.ends[mb] = (unsigned char)((t->now.ends[mb] | set) & ~clear);
}

/* In a replay: the first event equal to the one wanted freezes the state. */
static void timeline_watch(mo_timeline *t, mo_estimate_event_kind kind, int64_t mb,
			int64_t layer)
{
	if (t->got || kind != t->want.kind || mb != t->want.micro_batch ||
	    layer != t->want.layer)
		return;
	t->got = true;
	memcpy(t->snap->layers, t->now.layers,
	       (size_t)t->now.mbn * (size_t)t->e->cfg.vpp * sizeof(int64_t));
	memcpy(t->snap->ends, t->now.ends, (size_t)t->now.mbn);
	t->snap->recv = t->now.recv;
}

/* The event's buckets (the state plus `extra`, NULL: none) into `bytes`,
 * their total returned; both saturate at UINT64_MAX as u64_add does. When
 * every term is below 2^59 no sum of 2 x MO_EST_BUCKETS of them can wrap, so
 * they are added unchecked (this runs for every event of every unit the
 * closed form probes); otherwise checked. */
static uint64_t timeline_bytes(const mo_timeline *t, const uint64_t *extra,
			       uint64_t *restrict bytes)
{
	static const uint64_t none[MO_EST_BUCKETS];
	const uint64_t *restrict st = t->state, *restrict x = extra ? extra : none;
	uint64_t high = 0, total = 0;
	for (int b = 0; b < MO_EST_BUCKETS; b++)
		high |= st[b] | x[b];
	if (high >> 59 == 0) {
		for (int b = 0; b < MO_EST_BUCKETS; b++) {
			bytes[b] = st[b] + x[b];
			total += bytes[b];
		}
		return total;
	}
	for (int b = 0; b < MO_EST_BUCKETS; b++) {
		bytes[b] = u64_add(st[b], x[b]);
		total = u64_add(total, bytes[b]);
	}
	return total;
}

/* A recording probe's event: its buckets less the unit's start, the
 * least and most of them (wrapping differences: the closed form checks
 * their range before it reuses them). */
static void timeline_record(mo_unit_figure *f, const uint64_t *bytes, bool first)
{
	for (int b = 0; b < MO_EST_BUCKETS; b++) {
		int64_t d = u64_diff(bytes[b], f->start[b]);
		if (first || d < f->lo[b])
			f->lo[b] = d;
		if (first || d > f->hi[b])
			f->hi[b] = d;
	}
}

static void timeline_emit(mo_timeline *t, mo_estimate_event_kind kind, int64_t mb, int64_t layer,
		       const uint64_t *extra)
{
	if (t->replay) {
		timeline_watch(t, kind, mb, layer);
		return;
	}
	if (t->full)
		return;
	if (t->probe) { /* the unit's first highest event, kept only when it is one */
		uint64_t bytes[MO_EST_BUCKETS];
		uint64_t total = timeline_bytes(t, extra, bytes);
		if (t->record)
			timeline_record(t->record, bytes, t->probe_events == 0);
		if (!t->probe_events++ || total > t->peak) {
			t->peak = total;
			mo_estimate_event *ev = &t->peak_ev;
			ev->kind = kind;
			ev->micro_batch = mb;
			ev->layer = layer;
			memcpy(ev->bytes, bytes, sizeof bytes);
			ev->total = total;
			ev->start_seconds = ev->seconds = 0;
		}
		return;
	}
	/* written in place: this runs for every layer of every micro-batch */
	size_t *n = &t->out->n_events[t->s];
	if (*n >= t->stored_cap) { /* the rest of the step is not listed */
		t->full = true;
		return;
	}
	mo_estimate_event *ev = &t->out->events[t->s][*n];
	ev->kind = kind;
	ev->micro_batch = mb;
	ev->layer = layer;
	uint64_t total = timeline_bytes(t, extra, ev->bytes);
	ev->total = total;
	(*n)++;
	if (total > t->peak || (t->peak == 0 && t->peak_ev.total == 0)) {
		t->peak = total;
		t->peak_ev = *ev;
	}
}

static size_t timeline_type(const mo_estimate *e, int64_t id)
{
	return e->res[e->layer_res[id]].type;
}

uint64_t timeline_input_pair(const mo_estimate *e)
{
	return u64_mul(2, e->cfg.pp_input);
}

/* A chunk that sends its output holds the buffer for that output's
 * gradient from the send to the end of its backward (cfg.pp_grad_recv).
 * Held here from the unit's start: at the send the output and the buffer
 * are both alive, above every earlier event of the forward, and the
 * planner prices it as it prices the embedding. */
static void timeline_grad_recv(mo_timeline *t, bool alloc)
{
	uint64_t b = t->e->cfg.pp_grad_recv;
	if (!b)
		return;
	if (alloc)
		t->state[MO_EST_ACTIVATIONS] = u64_add(t->state[MO_EST_ACTIVATIONS], b);
	else
		t->state[MO_EST_ACTIVATIONS] -= b;
	t->now.recv += alloc ? 1 : -1;
}

/* A forward unit: what it does before its layers (the chunk's first
 * forward drops the input kept from the previous step, a chunk that sends
 * allocates its output's gradient buffer, the embedding), each layer, and
 * what follows them (the loss region). */
static void timeline_forward_begin(mo_timeline *t, int64_t mb, bool first, bool last)
{
	const mo_estimate *e = t->e;
	/* the chunk's first forward of the step replaces the input (and its
	 * gradient) it kept from the previous step (a replay keeps no figures) */
	if (!first && mb == 0 && !t->replay) {
		uint64_t pair = timeline_input_pair(e), *held = &t->state[MO_EST_PIPELINE_INPUTS];
		*held = *held > pair ? *held - pair : 0;
	}
	if (!last)
		timeline_grad_recv(t, true);
	if (first) {
		t->state[MO_EST_ACTIVATIONS] += e->embed_k.kept;
		timeline_track(t, mb, 0, 1, 0);
		timeline_emit(t, MO_EV_EMBED_FORWARD, mb, -1, NULL);
	}
}

static void timeline_forward_layer(mo_timeline *t, int64_t mb, const mo_est_chunk *c, size_t i)
{
	const mo_estimate *e = t->e;
	uint64_t extra[MO_EST_BUCKETS] = {0};
	const mo_estimate_layer *l = &e->layers[c->ids[i]];
	extra[MO_EST_SWAP_BUFFERS] = l->swap_bytes; /* until offloaded */
	extra[MO_EST_GRADIENTS] = t->grads;
	if (!t->pp_resident)
		extra[MO_EST_GATHERED] = u64_of(t->gathered[timeline_type(e, c->ids[i])]);
	t->state[MO_EST_ACTIVATIONS] = u64_add(t->state[MO_EST_ACTIVATIONS], l->activation_bytes);
	/* the first GEMM allocates the workspaces; they stay */
	t->state[MO_EST_WORKSPACES] = u64_add(e->cfg.workspace, t->caches);
	timeline_track(t, mb, 1, 0, 0);
	timeline_emit(t, MO_EV_FORWARD, mb, c->ids[i], extra);
}

static void timeline_forward_end(mo_timeline *t, int64_t mb, bool last)
{
	const mo_estimate *e = t->e;
	if (last) {
		t->state[MO_EST_ACTIVATIONS] += e->head_k.kept * (uint64_t)(1 + e->cfg.mtp);
		timeline_track(t, mb, 0, 2, 0);
		timeline_emit(t, MO_EV_LOSS_FORWARD, mb, -1, NULL);
	}
}

static void timeline_forward(mo_timeline *t, int64_t mb, const mo_est_chunk *c, bool first,
			bool last)
{
	timeline_forward_begin(t, mb, first, last);
	for (size_t i = 0; i < c->n; i++)
		timeline_forward_layer(t, mb, c, i);
	timeline_forward_end(t, mb, last);
}

/* Prefetch window: the layer being processed and the next `prefetch`
 * swapped layers of its chunk (backward order). */
static uint64_t timeline_window(const mo_timeline *t, const mo_est_chunk *c, size_t j)
{
	uint64_t w = 0;
	int64_t pf = t->e->cfg.prefetch;
	for (size_t back = 0; back <= j && (int64_t)back <= pf; back++)
		w += t->e->layers[c->ids[j - back]].swap_bytes;
	return w;
}

/* What the loss backward adds to the kept loss region. First cut: the
 * gradient planes of the unfused cross-entropy (fp32 + compute dtype).
 * MindSpore with fp32 parameters (notes/calibration.md, DSv3-mini terms 2
 * and 3, measured at seq 2048 and 4096): the loss region is the kept bf16
 * logits + three fp32 vocab planes, no further plane; at that point the
 * output layer's weight gradient exists full and in fp32 (produced
 * unsharded before FSDP reduce-scatters it) and its weight is all-gathered
 * (the FSDP root unit, not resharded). */
static uint64_t timeline_loss(const mo_estimate *e)
{
	const mo_est_cfg *c = &e->cfg;
	if (!c->late_grads)
		return u64_of(c->tok * c->vocab * c->loss_bytes);
	double head = c->head_params * c->pbytes;
	return u64_of(head + head * (1.0 - 1.0 / c->fsdp_div));
}

/* A backward unit: the loss region's backward, each layer from the last,
 * and what follows them (the embedding's backward, or the chunk's last
 * input kept, and the gradient buffer freed). */
static void timeline_backward_begin(mo_timeline *t, int64_t mb, bool last)
{
	const mo_estimate *e = t->e;
	uint64_t extra[MO_EST_BUCKETS] = {0};
	if (last) {
		extra[MO_EST_LOSS] = timeline_loss(e);
		timeline_emit(t, MO_EV_LOSS_BACKWARD, mb, -1, extra);
		t->state[MO_EST_ACTIVATIONS] -= e->head_k.kept * (uint64_t)(1 + e->cfg.mtp);
		timeline_track(t, mb, 0, 0, 2);
	}
}

static void timeline_backward_layer(mo_timeline *t, int64_t mb, const mo_est_chunk *c, size_t j)
{
	const mo_estimate *e = t->e;
	uint64_t extra[MO_EST_BUCKETS] = {0};
	const mo_estimate_layer *l = &e->layers[c->ids[j]];
	extra[MO_EST_RECOMPUTED] = l->recomputed_bytes;
	/* the gradient buffers the layer's backward holds at once beside
	 * its saved tensors (op rows' `bwd`) */
	extra[MO_EST_WORKSPACES] = e->types[timeline_type(e, c->ids[j])].g.bwd_grads;
	extra[MO_EST_GRADIENTS] = t->grads;
	extra[MO_EST_SWAP_BUFFERS] = timeline_window(t, c, j);
	if (!t->pp_resident)
		extra[MO_EST_GATHERED] = u64_of(2 * t->gathered[timeline_type(e, c->ids[j])]);
	timeline_emit(t, MO_EV_BACKWARD, mb, c->ids[j], extra);
	t->state[MO_EST_ACTIVATIONS] -= l->activation_bytes;
	timeline_track(t, mb, -1, 0, 0);
}

static void timeline_backward_end(mo_timeline *t, int64_t mb, bool first, bool last)
{
	const mo_estimate *e = t->e;
	if (first) {
		uint64_t extra[MO_EST_BUCKETS] = {0};
		extra[MO_EST_GRADIENTS] = t->grads;
		timeline_emit(t, MO_EV_EMBED_BACKWARD, mb, -1, extra);
		t->state[MO_EST_ACTIVATIONS] -= e->embed_k.kept;
		timeline_track(t, mb, 0, 0, 1);
	} else if (mb == t->last_mb && !t->replay) {
		/* the chunk keeps its last input and that input's gradient */
		t->state[MO_EST_PIPELINE_INPUTS] =
			u64_add(t->state[MO_EST_PIPELINE_INPUTS], timeline_input_pair(e));
	}
	if (!last)
		timeline_grad_recv(t, false);
}

static void timeline_backward(mo_timeline *t, int64_t mb, const mo_est_chunk *c, bool first,
			bool last)
{
	timeline_backward_begin(t, mb, last);
	for (size_t left = c->n; left > 0; left--)
		timeline_backward_layer(t, mb, c, left - 1);
	timeline_backward_end(t, mb, first, last);
}

/* Megatron's micro-batch group (microbatch_group_size_per_vp_stage,
 * model_parallel_config.py:567-568 at d98e8a64: PP by default). Its
 * schedule refuses a last group of fewer than PP micro-batches
 * (schedules.py:1172-1182) and a group larger than the step (1160-1167):
 * a step that is no multiple of PP runs only with a larger group, set by
 * --microbatch-group-size-per-virtual-pipeline-stage, which the model
 * does not hold. Assumed: the smallest group it accepts (the least
 * warm-up); one group of the whole step when it has fewer than PP
 * micro-batches. The smallest is at most 2 PP: from mbn / 2 up, every
 * group leaves mbn minus itself. */
static int64_t order_megatron_group(int64_t P, int64_t mbn)
{
	if (mbn % P == 0 || mbn < P)
		return mbn < P ? mbn : P;
	int64_t top = mbn < 2 * P ? mbn : 2 * P;
	for (int64_t g = P + 1; g <= top; g++)
		if (mbn % g == 0 || mbn % g >= P)
			return g;
	return mbn;
}

/* Megatron: groups of G micro-batches, the last one what remains
 * (get_schedule_table, schedules.py:989-1016 at d98e8a64). MindSpore: the
 * first group takes the remainder, PP + mbn % PP micro-batches, every
 * later one PP (SortFuncBetweenMicro's loops of pipeline_scheduler.cc at
 * mindspore d2606558: loop 0 holds the micro-batches below
 * stage_num + offset, offset = micro_size % stage_num). */
void timeline_order_of(const mo_estimate *e, int64_t mbn, mo_vpp_order *o)
{
	int64_t P = e->cfg.pp, V = e->cfg.vpp;
	o->V = V;
	o->mbn = mbn;
	o->combined = e->cfg.ep_overlap;
	int64_t first, size;
	if (V == 1 || mbn <= P) {
		first = size = mbn;
	} else if (e->fw == &mo_ops_pytorch) {
		first = size = order_megatron_group(P, mbn);
	} else {
		first = P + mbn % P;
		size = P;
	}
	o->first = first;
	o->size = size;
	if (mbn <= first) {
		o->first = o->size = o->last = mbn;
		o->count = 1;
		return;
	}
	int64_t rest = mbn - first;
	o->count = 1 + (rest + size - 1) / size;
	o->last = rest - (o->count - 2) * size;
}

/* The group holding micro-batch-count position `mb` of the table: its
 * first unit, first micro-batch and size. */
static void order_group_of_mb(const mo_vpp_order *o, int64_t mb, int64_t *unit0, int64_t *mb0,
			      int64_t *gs)
{
	int64_t V = o->V, mid = (o->count - 2) * o->size;
	if (mb < o->first || o->count == 1) {
		*unit0 = 0, *mb0 = 0, *gs = o->first;
	} else if (mb < o->first + mid) {
		int64_t j = (mb - o->first) / o->size;
		*mb0 = o->first + j * o->size;
		*unit0 = *mb0 * V;
		*gs = o->size;
	} else {
		*mb0 = o->first + mid;
		*unit0 = *mb0 * V;
		*gs = o->last;
	}
}

void order_group(const mo_vpp_order *o, int64_t k, int64_t *unit0, int64_t *mb0,
				int64_t *gs)
{
	/* every group runs each of its micro-batches V times */
	order_group_of_mb(o, k / o->V, unit0, mb0, gs);
}

void order_unit(const mo_vpp_order *o, int64_t k, bool fwd, int64_t *mb, int64_t *chunk)
{
	int64_t u0, m0, gs;
	order_group(o, k, &u0, &m0, &gs);
	int64_t r = k - u0;
	*chunk = r / gs;
	*mb = m0 + r % gs;
	if (!fwd)
		*chunk = o->V - 1 - *chunk;
}

int64_t order_index(const mo_vpp_order *o, bool fwd, int64_t mb, int64_t chunk)
{
	int64_t u0, m0, gs, c = fwd ? chunk : o->V - 1 - chunk;
	order_group_of_mb(o, mb, &u0, &m0, &gs);
	return u0 + c * gs + (mb - m0);
}

int64_t order_run_end(const mo_vpp_order *o, int64_t k)
{
	int64_t u0, m0, gs;
	order_group(o, k, &u0, &m0, &gs);
	return u0 + ((k - u0) / gs + 1) * gs;
}

/* Megatron: (PP - rank - 1) * 2 + (V - 1) * group (get_pp_rank_microbatches,
 * schedules.py:959-965); MindSpore: (stage_num + offset) * (chunk_num - 1)
 * + (stage_num - stage - 1) * 2 (InterleavedScheduler::Reorder's bias_):
 * both (V - 1) times the first group. Megatron's combined 1F1B runs one
 * more (966-969; without pipelining the first forward runs alone,
 * combined_1f1b.py combined_1f1b_schedule_for_no_pipelining). */
int64_t order_warmup(const mo_vpp_order *o, int64_t P, size_t s)
{
	int64_t r = (int64_t)s, units = o->mbn * o->V;
	int64_t w = o->V == 1 ? P - r - 1 : (P - r - 1) * 2 + (o->V - 1) * o->first;
	w += o->combined ? 1 : 0;
	return w < units ? w : units;
}

void order_shorten(mo_vpp_order *o, int64_t keep)
{
	if (o->count - 2 <= keep)
		return;
	o->count = keep + 2;
	o->mbn = o->first + keep * o->size + o->last;
}

/* Unit k's chunk on stage t->s, whether it holds the embedding (first) or
 * the loss region (last); sets t->slot to it. */
static const mo_est_chunk *timeline_locate(mo_timeline *t, int64_t k, bool fwd, int64_t *mb,
					   bool *first, bool *last)
{
	const mo_estimate *e = t->e;
	int64_t ch;
	order_unit(&t->order, k, fwd, mb, &ch);
	t->slot = (size_t)*mb * (size_t)e->cfg.vpp + (size_t)ch;
	*first = t->s == 0 && ch == 0;
	*last = t->s + 1 == e->n_stages && ch == e->cfg.vpp - 1;
	return &e->chunks[t->s * (size_t)e->cfg.vpp + (size_t)ch];
}

static bool timeline_budget_out(mo_timeline *t)
{
	if (!t->probe && (t->failed || budget_spent())) {
		t->failed = true; /* the work budget ran out: est_timeline says so */
		return true;
	}
	return false;
}

void timeline_do(mo_timeline *t, int64_t k, bool fwd)
{
	int64_t mb;
	bool first, last;
	if (timeline_budget_out(t))
		return;
	const mo_est_chunk *c = timeline_locate(t, k, fwd, &mb, &first, &last);
	if (fwd)
		timeline_forward(t, mb, c, first, last);
	else
		timeline_backward(t, mb, c, first, last);
}

/* Megatron at d98e8a64: TransformerModelChunkSchedulePlan.run
 * (models/common/model_chunk_schedule_plan.py:500-630) runs the forward's
 * pre-process, the backward's post-process (the loss), then pairs forward
 * layer i with backward layer n - 1 - i, the backward's leftover layers,
 * the forward's, then the forward's post-process and the backward's
 * pre-process. Inside a pair (TransformerLayerSchedulePlan.run, 236-303)
 * the forward layer's attention, dispatch, MLP and combine run before the
 * backward layer's attention backward, the last part of its backward:
 * the backward layer's event holds the forward layer's tensors. */
void timeline_pair(mo_timeline *t, int64_t kf, int64_t kb)
{
	int64_t mf, mb;
	bool ff, lf, fb, lb;
	if (timeline_budget_out(t))
		return;
	const mo_est_chunk *cb = timeline_locate(t, kb, false, &mb, &fb, &lb);
	size_t sb = t->slot;
	const mo_est_chunk *cf = timeline_locate(t, kf, true, &mf, &ff, &lf);
	size_t sf = t->slot;
	timeline_forward_begin(t, mf, ff, lf);
	t->slot = sb;
	timeline_backward_begin(t, mb, lb);
	size_t both = cf->n < cb->n ? cf->n : cb->n;
	for (size_t i = 0; i < both; i++) {
		t->slot = sf;
		timeline_forward_layer(t, mf, cf, i);
		t->slot = sb;
		timeline_backward_layer(t, mb, cb, cb->n - 1 - i);
	}
	for (size_t i = both; i < cb->n; i++)
		timeline_backward_layer(t, mb, cb, cb->n - 1 - i);
	t->slot = sf;
	for (size_t i = both; i < cf->n; i++)
		timeline_forward_layer(t, mf, cf, i);
	timeline_forward_end(t, mf, lf);
	t->slot = sb;
	timeline_backward_end(t, mb, fb, lb);
}

/* Pipeline inputs stage s keeps between steps: an input and its gradient
 * per chunk that receives one (all but the first stage's first chunk). */
uint64_t timeline_inputs_kept(const mo_estimate *e, size_t s)
{
	uint64_t chunks = (uint64_t)e->cfg.vpp - (s == 0 ? 1 : 0);
	return u64_mul(chunks, timeline_input_pair(e));
}

/* The layers of each type on stage s: count[type] (n_types entries). */
static void timeline_type_counts(const mo_estimate *e, size_t s, size_t *count)
{
	size_t V = (size_t)e->cfg.vpp;
	memset(count, 0, e->n_types * sizeof(size_t));
	for (size_t c = 0; c < V; c++) {
		const mo_est_chunk *ch = &e->chunks[s * V + c];
		for (size_t i = 0; i < ch->n; i++)
			count[timeline_type(e, ch->ids[i])]++;
	}
}

/* Caches stage s keeps from the first step on (the `workspaces` bucket
 * besides the GEMM workspaces; framework pytorch): Transformer Engine's
 * dummy weight gradients (estimate_weights.c est_dummy_wgrads), MLA's
 * YaRN rotary tables (cfg.mla_rope_*), the alltoall dispatcher's last
 * routing per MoE layer (cfg.dispatcher_state) and, on the last stage, Megatron's
 * global buffer of the output layer's gathered input (cfg.head_gather). Allocated in the first step and never freed,
 * so in every event of a later step (the figures they are compared with
 * are steps >= 2). 0 when out of memory. */
uint64_t est_stage_caches(const mo_estimate *e, size_t s)
{
	size_t T = e->n_types, small[16], *count = T <= 16 ? small : calloc(T, sizeof(size_t));
	if (!count)
		return 0;
	timeline_type_counts(e, s, count);
	bool last = s + 1 == e->n_stages;
	uint64_t sum = est_dummy_wgrads(e, count, last), layers = 0, moe = 0;
	for (size_t t = 0; t < T; t++) {
		layers += count[t];
		moe += e->types[t].moe ? count[t] : 0;
	}
	if (count != small)
		free(count);
	/* MLA's YaRN tables: every attention module's cos/sin, the embedding
	 * of the last 32 called (cfg.mla_rope_*) */
	uint64_t cached = layers < MO_EST_ROPE_LRU ? layers : MO_EST_ROPE_LRU;
	sum = u64_add(sum, u64_mul(layers, e->cfg.mla_rope_module));
	sum = u64_add(sum, u64_mul(cached, e->cfg.mla_rope_lru));
	/* the alltoall dispatcher's last micro-batch, per MoE layer */
	sum = u64_add(sum, u64_mul(moe, e->cfg.dispatcher_state));
	/* one "mpu" buffer, grown to its largest request: the output layer's
	 * gather (last stage) or the all-gather dispatcher's (MoE layers) */
	uint64_t head = last ? e->cfg.head_gather : 0,
		 disp = moe > 0 ? e->cfg.dispatcher_gather : 0;
	return u64_add(sum, head > disp ? head : disp);
}

/* Weights, gradients, optimizer states, resident gathered weights and
 * (PP with FSDP) unsharded gradients of stage s, as the timeline starts it:
 * out[0..4]; out[5]: the optimizer update's scratch, for the stage's largest
 * local parameter tensor (the embedding / output layer where the stage has
 * them, else its layers' largest weight). */
static void timeline_static_sums(const mo_estimate *e, size_t s, uint64_t out[6])
{
	double w = 0, g = 0, o = 0, ga = 0, ug = 0, big = 0;
	size_t T = e->n_types;
	size_t small[16], *count = T <= 16 ? small : calloc(T, sizeof(size_t));
	if (!count)
		return; /* out[] keeps the zeros the caller gave it */
	timeline_type_counts(e, s, count);
	for (size_t k = 0; k < T; k++) { /* per type once, times its layers */
		if (!count[k])
			continue;
		double lw, lg, lo, lga, lug, n = (double)count[k];
		est_layer_static(e, &e->types[k], &lw, &lg, &lo, &lga);
		est_layer_pp_resident(e, &e->types[k], &lga, &lug);
		w += n * lw, g += n * lg, o += n * lo, ga += n * lga, ug += n * lug;
		double mx = est_type_max_local(e, &e->types[k]);
		big = mx > big ? mx : big;
	}
	if (count != small)
		free(count);
	const mo_est_cfg *cf = &e->cfg;
	double extra = (s == 0 ? cf->embed_params + cf->pos_params : 0) +
		       (s + 1 == e->n_stages ? cf->head_params + cf->mtp_embed_params : 0);
	w += extra / cf->fsdp_div * cf->pbytes;
	g += extra / cf->fsdp_div * cf->gbytes;
	/* the distributed optimizer's buffer padding: parameters and
	 * gradients only (the optimizer's shards cover real elements) */
	double pad = est_buffer_padding(cf, w / cf->pbytes);
	w += pad * cf->pbytes;
	g += pad * cf->gbytes;
	o += extra / cf->opt_div * cf->table_obytes;
	out[0] = u64_of(w);
	out[1] = u64_of(g);
	out[2] = u64_of(o);
	out[3] = e->cfg.pp > 1 ? u64_of(ga) : 0;
	out[4] = e->cfg.pp > 1 ? u64_of(ug) : 0;
	/* the output layer's weight has the embedding's shape */
	bool table = s == 0 || (s + 1 == e->n_stages && cf->head_params > cf->embed_params);
	double tbl = table ? cf->embed_params / cf->fsdp_div : 0;
	out[5] = u64_of((tbl > big ? tbl : big) * cf->opt_scratch);
}

/* The stage's static state in t: weights, gradients, optimizer states,
 * resident gathered weights, the pipeline inputs kept from the previous
 * step and the caches the first step allocated (the workspaces join them
 * at the first GEMM). v: timeline_static_sums. */
static void timeline_static_state(mo_timeline *t, const uint64_t v[6])
{
	const mo_estimate *e = t->e;
	memset(t->state, 0, sizeof t->state);
	t->state[MO_EST_WEIGHTS] = v[0];
	t->state[MO_EST_GRADIENTS] = (e->cfg.late_grads ? 0 : v[1]) + v[4];
	t->grads = e->cfg.late_grads ? v[1] : 0;
	t->state[MO_EST_OPTIMIZER] = v[2];
	t->state[MO_EST_GATHERED] = t->pp_resident ? v[3] : 0;
	t->opt_scratch = v[5];
	t->unsharded_grads = v[4];
	t->state[MO_EST_PIPELINE_INPUTS] = timeline_inputs_kept(e, t->s);
	t->caches = est_stage_caches(e, t->s);
	t->state[MO_EST_WORKSPACES] = t->caches;
}

static void timeline_static(mo_timeline *t)
{
	mo_estimate *e = t->out;
	mo_estimate_stage *st = &e->stages[t->s];
	uint64_t v[6] = {0};
	timeline_static_sums(e, t->s, v);
	st->weights_bytes = v[0];
	st->gradients_bytes = v[1] + v[4];
	st->optimizer_bytes = v[2];
	timeline_static_state(t, v);
}

static int stage_closed_form(const mo_estimate *e, size_t s, mo_sched_memo *memo,
			     mo_sched_peak *out)
{
	uint64_t v[6] = {0};
	if (s >= e->n_stages)
		return -1;
	timeline_static_sums(e, s, v);
	double *gathered = calloc(e->n_types + 1, sizeof(double));
	if (!gathered)
		return -1;
	for (size_t i = 0; i < e->n_types; i++) {
		double w, g, o;
		est_layer_static(e, &e->types[i], &w, &g, &o, &gathered[i]);
	}
	mo_timeline t = {.e = e, .out = (mo_estimate *)e, .s = s, .mbn = e->cfg.mbn,
			 .gathered = gathered, .pp_resident = e->cfg.pp > 1};
	timeline_order_of(e, t.mbn, &t.order);
	t.memo = memo;
	timeline_static_state(&t, v);
	int rc = sched_stage_peak(&t, out);
	free(gathered);
	return rc;
}

int est_stage_closed_form(const mo_estimate *e, size_t s, mo_sched_peak *out)
{
	return stage_closed_form(e, s, NULL, out);
}

int est_closed_forms(const mo_estimate *e, mo_sched_peak *out)
{
	mo_sched_memo memo = {0};
	int rc = 0;
	for (size_t s = 0; s < e->n_stages && rc == 0; s++)
		rc = stage_closed_form(e, s, &memo, &out[s]);
	sched_memo_free(&memo);
	return rc;
}

static const char *timeline_name(mo_estimate *e, const mo_estimate_event *ev)
{
	char buf[96];
	mo_estimate_event_name(ev, buf, sizeof buf);
	return arena_strdup(e->a, buf);
}

void timeline_optimizer(mo_timeline *t)
{
	uint64_t extra[MO_EST_BUCKETS] = {0};
	extra[MO_EST_GRADIENTS] = t->grads;
	extra[MO_EST_OPTIMIZER] = t->opt_scratch;
	timeline_emit(t, MO_EV_OPTIMIZER, -1, -1, extra);
}

/* The walk stops when its store is full (and, since a unit without
 * layers stores nothing, after twice as many units), in a replay at the
 * event it looks for, and when the work budget is spent. */
static bool timeline_stopped(mo_timeline *t, int64_t units)
{
	if (!t->replay && (uint64_t)units > 2 * (uint64_t)t->stored_cap + 16)
		t->full = true;
	return t->full || t->failed || (t->replay && t->got);
}

/* Walks the schedule of t->mbn micro-batches, unit by unit. */
static void timeline_run(mo_timeline *t)
{
	const mo_estimate *e = t->e;
	int64_t N = t->mbn * e->cfg.vpp, units = 0;
	t->last_mb = t->mbn - 1;
	int64_t W = order_warmup(&t->order, e->cfg.pp, t->s);
	for (int64_t k = 0; k < W && !timeline_stopped(t, units); k++, units++)
		timeline_do(t, k, true);
	for (int64_t i = 0; i < N - W && !timeline_stopped(t, units); i++, units += 2) {
		if (t->order.combined) {
			timeline_pair(t, W + i, i);
			continue;
		}
		timeline_do(t, W + i, true);
		timeline_do(t, i, false);
	}
	for (int64_t k = N - W > 0 ? N - W : 0; k < N && !timeline_stopped(t, units); k++, units++)
		timeline_do(t, k, false);
	if (!timeline_stopped(t, units))
		timeline_optimizer(t);
}

/* Micro-batches in flight: the warm-up's forwards and the steady state's
 * own one (1F1B), or every unit when the warm-up covers the step. */
static int64_t timeline_in_flight(const mo_estimate *e, size_t s, int64_t mbn)
{
	mo_vpp_order o;
	timeline_order_of(e, mbn, &o);
	int64_t N = mbn * e->cfg.vpp, W = order_warmup(&o, e->cfg.pp, s);
	return W >= N ? N : W + 1;
}

/* What stays allocated after the optimizer step: the parameter state (not
 * the gradients MindSpore makes during backward and drops after the step,
 * nor FSDP's gathered weights and unsharded gradients, resharded after
 * the last backward), the workspaces and the pipeline inputs. */
static uint64_t timeline_between_steps(const mo_timeline *t)
{
	const mo_estimate_stage *st = &t->out->stages[t->s];
	uint64_t sum = u64_add(st->weights_bytes, st->optimizer_bytes);
	uint64_t grads = t->state[MO_EST_GRADIENTS];
	sum = u64_add(sum, grads > t->unsharded_grads ? grads - t->unsharded_grads : 0);
	sum = u64_add(sum, t->state[MO_EST_WORKSPACES]);
	return u64_add(sum, t->state[MO_EST_PIPELINE_INPUTS]);
}

/* The stage's peak: the walk's own when it covered the whole step, else
 * the closed form's (which the walk's agrees with: test_schedule). */
static int timeline_peak(mo_timeline *t, const mo_timeline *tmpl)
{
	if (!t->full)
		return 0;
	mo_sched_peak pk;
	if (sched_stage_peak(tmpl, &pk) != 0)
		return -1;
	t->peak = pk.ev.total;
	t->peak_ev = pk.ev;
	memcpy(t->state, pk.end, sizeof t->state);
	t->out->truncated = true;
	return 0;
}

static void timeline_stage(mo_timeline *t)
{
	mo_estimate *e = t->out;
	mo_estimate_stage *st = &e->stages[t->s];
	timeline_static(t);
	if (e->no_peaks) {
		st->peak_event = "";
		return;
	}
	mo_timeline tmpl = *t;
	if (e->no_events)
		t->full = true; /* nothing to list: the closed form alone */
	else
		timeline_run(t);
	if (t->failed || timeline_peak(t, &tmpl) != 0) {
		t->failed = true;
		return;
	}
	st->in_flight = timeline_in_flight(e, t->s, t->mbn);
	e->peak_events[t->s] = t->peak_ev;
	st->peak_bytes = t->peak;
	memcpy(st->peak_by_bucket, t->peak_ev.bytes, sizeof st->peak_by_bucket);
	st->activations_bytes = t->peak_ev.bytes[MO_EST_ACTIVATIONS];
	st->swap_buffer_bytes = t->peak_ev.bytes[MO_EST_SWAP_BUFFERS];
	st->peak_event = timeline_name(e, &t->peak_ev);
	if (!st->peak_event)
		t->failed = true;
	st->between_steps_bytes = timeline_between_steps(t);
}

/* The replay keeps a counter per (micro-batch, chunk): a model file asking
 * for millions of micro-batches gets no listing rather than hundreds of MB. */
#define MO_EST_MAX_ALIVE_SLOTS (1 << 20)

static bool timeline_alive_new(mo_est_alive *a, int64_t mbn, int64_t vpp)
{
	if (mbn * vpp > MO_EST_MAX_ALIVE_SLOTS)
		return false;
	a->mbn = mbn;
	a->recv = 0;
	a->layers = calloc((size_t)(mbn * vpp) + 1, sizeof(int64_t));
	a->ends = calloc((size_t)mbn + 1, 1);
	return a->layers && a->ends;
}

void est_alive_free(mo_est_alive *a)
{
	free(a->layers);
	free(a->ends);
	memset(a, 0, sizeof(*a));
}

/* Replays stage s's schedule (no memory figures, nothing stored in e) up to
 * the first event equal to its peak event. The timeline is deterministic,
 * so that is the moment the peak was measured at. */
int est_peak_alive(const mo_estimate *e, size_t s, mo_est_alive *out)
{
	memset(out, 0, sizeof(*out));
	if (s >= e->n_stages || !e->peak_events || e->no_peaks)
		return -1;
	int64_t mbn = e->cfg.mbn, V = e->cfg.vpp;
	/* the replay writes only into its own arrays (no .out); it reads no
	 * per-type gathered figures (pp_resident) */
	mo_timeline t = {.e = e, .s = s, .replay = true, .pp_resident = true, .mbn = mbn};
	timeline_order_of(e, mbn, &t.order);
	t.want = e->peak_events[s];
	t.snap = out;
	int rc = -1;
	if (!timeline_alive_new(&t.now, mbn, V) || !timeline_alive_new(out, mbn, V))
		goto out;
	timeline_run(&t);
	rc = t.got ? 0 : -1;
out:
	est_alive_free(&t.now);
	if (rc != 0)
		est_alive_free(out);
	return rc;
}

static int timeline_alloc(mo_estimate *e, double **gathered)
{
	e->events = arena_alloc(e->a, e->n_stages * sizeof(*e->events));
	e->n_events = arena_alloc(e->a, e->n_stages * sizeof(*e->n_events));
	e->peak_events = arena_alloc(e->a, e->n_stages * sizeof(*e->peak_events));
	*gathered = arena_alloc(e->a, (e->n_types + 1) * sizeof(double));
	if (!e->events || !e->n_events || !e->peak_events || !*gathered)
		return -1;
	for (size_t i = 0; i < e->n_types; i++) {
		double w, g, o;
		est_layer_static(e, &e->types[i], &w, &g, &o, &(*gathered)[i]);
	}
	return 0;
}

/* Whether the walk of stage s would fill its store of cap events (or stop on its unit
 * bound) before the step's end, so that its figures come from the closed form anyway
 * (timeline_peak): one event per layer of each forward and backward unit, the embedding's
 * and the loss region's pairs on the first and last stage, the optimizer step
 * (timeline_forward / timeline_backward); timeline_stopped's unit bound. */
static bool timeline_overflows(const mo_estimate *e, size_t s, size_t cap)
{
	double mbn = (double)e->cfg.mbn, units = 2.0 * mbn * (double)e->cfg.vpp;
	double events = 2.0 * (double)e->stages[s].num_layers * mbn + 1.0;
	events += s == 0 ? 2.0 * mbn : 0.0;
	events += s + 1 == e->n_stages ? 2.0 * mbn : 0.0;
	return events > (double)cap || units > 2.0 * (double)cap + 16.0;
}

int est_timeline(mo_estimate *e, mo_error *err)
{
	double *gathered = NULL;
	mo_sched_memo memo = {0};
	if (timeline_alloc(e, &gathered) != 0)
		goto nomem;
	size_t cap = MO_EST_MAX_EVENTS / (e->n_stages ? e->n_stages : 1);
	for (size_t s = 0; s < e->n_stages; s++) {
		/* at most (layers + 2) events per unit, two units per micro-batch
		 * and chunk, and the optimizer step */
		double want = 2.0 * ((double)e->stages[s].num_layers + 2.0) * (double)e->cfg.mbn *
				      (double)e->cfg.vpp + 1.0;
		size_t n = e->no_events ? 0 : want < (double)cap ? (size_t)want : cap;
		/* not asked to list: a step the store cannot hold whole takes the closed form
		 * without the walk that would list its start */
		if (e->unlisted && timeline_overflows(e, s, cap))
			n = 0;
		/* malloc, not the (zeroing) arena: every stored event is written
		 * before it is read; mo_estimate_free releases them */
		e->events[s] = e->no_events ? NULL : malloc((n + 1) * sizeof(mo_estimate_event));
		if (!e->no_events && !e->events[s])
			goto nomem;
		mo_timeline t = {.e = e, .out = e, .s = s, .stored_cap = n, .mbn = e->cfg.mbn,
				 .gathered = gathered, .pp_resident = e->cfg.pp > 1, .memo = &memo};
		timeline_order_of(e, t.mbn, &t.order);
		timeline_stage(&t);
		if (t.failed)
			goto fail;
	}
	sched_memo_free(&memo);
	return 0;
nomem:
	sched_memo_free(&memo);
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	return -1;
fail:
	sched_memo_free(&memo);
	if (!budget_error(err))
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	return -1;
}

const mo_estimate_event *est_peak_event(const mo_estimate *e, size_t s)
{
	return e && e->peak_events && s < e->n_stages ? &e->peak_events[s] : NULL;
}

char *mo_estimate_event_name(const mo_estimate_event *ev, char *buf, size_t size)
{
	if (!buf || !size)
		return buf;
	long long mb = (long long)ev->micro_batch, l = (long long)ev->layer;
	switch (ev->kind) {
	case MO_EV_FORWARD: snprintf(buf, size, "forward mb %lld layer %lld", mb, l); break;
	case MO_EV_BACKWARD: snprintf(buf, size, "backward mb %lld layer %lld", mb, l); break;
	case MO_EV_EMBED_FORWARD: snprintf(buf, size, "embedding forward mb %lld", mb); break;
	case MO_EV_EMBED_BACKWARD: snprintf(buf, size, "embedding backward mb %lld", mb); break;
	case MO_EV_LOSS_FORWARD: snprintf(buf, size, "loss forward mb %lld", mb); break;
	case MO_EV_LOSS_BACKWARD: snprintf(buf, size, "loss backward mb %lld", mb); break;
	default: snprintf(buf, size, "optimizer step");
	}
	return buf;
}

/* ---- for the planner ------------------------------------------------------------
 * The plan-independent parts of a stage's timeline. With one chunk per stage
 * (no virtual pipeline), every unit of the 1F1B schedule holds `others`
 * complete micro-batches at most besides its own (forward and backward alike),
 * each holding embed + its layers' kept bytes + head, so the stage's peak is
 *   base + embed + others * (embed + K + head)
 *        + max(grads + M, last stage ? K + head + loss : 0)
 * (grads: gradients made during backward, held at every layer event, the
 * embedding backward and the optimizer step, not at the loss; 0 when they
 * are persistent and counted in base)
 * with K the stage's kept bytes per micro-batch and M the largest, over its
 * layers p, of P_p + max(swap_p + gathered_fwd_p,
 *                        recomputed_p + window_p + gathered_bwd_p)
 * (P_p: kept bytes of the layers up to p; window_p: swap bytes of p and the
 * `prefetch` layers before it). planner_search.c relies on this; test_plan checks
 * it against mo_estimate_run on random configs. */
void est_stage_fixed(const mo_estimate *e, size_t s, mo_est_fixed *out)
{
	uint64_t v[6] = {0};
	memset(out, 0, sizeof(*out));
	timeline_static_sums(e, s, v);
	/* the workspaces and kept caches are in every event but the first
	 * stage's first (the embedding's forward, before the first GEMM),
	 * which a layer's forward always tops */
	out->base = v[0] + v[2] + v[3] + v[4] + (e->cfg.late_grads ? 0 : v[1]) +
		    e->cfg.workspace + est_stage_caches(e, s);
	out->grads = e->cfg.late_grads ? v[1] : 0;
	/* the pipeline inputs are kept from each chunk's last backward to its
	 * next forward: with one chunk, at the optimizer step only */
	out->opt = u64_add(v[5], timeline_inputs_kept(e, s));
	out->embed = s == 0 ? e->embed_k.kept : 0;
	out->recv = e->cfg.pp_grad_recv;
	if (s + 1 == e->n_stages) {
		out->head = e->head_k.kept * (uint64_t)(1 + e->cfg.mtp);
		out->loss = timeline_loss(e);
		out->last = true;
	}
	mo_vpp_order o;
	timeline_order_of(e, e->cfg.mbn, &o);
	int64_t N = e->cfg.mbn * e->cfg.vpp, W = order_warmup(&o, e->cfg.pp, s);
	out->others = W < N ? W : N - 1;
	if (out->others < 0)
		out->others = 0;
	out->chunks = (size_t)e->cfg.vpp;
}

/* FSDP gathered weights a layer event adds (0 under PP, where they stay
 * resident and count in the base). */
uint64_t est_layer_gathered(const mo_estimate *e, int64_t id, bool backward)
{
	if (e->cfg.pp > 1)
		return 0;
	double w, g, o, ga;
	est_layer_static(e, &e->types[timeline_type(e, id)], &w, &g, &o, &ga);
	return u64_of(backward ? 2 * ga : ga);
}
