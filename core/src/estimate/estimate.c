/* The estimate (docs/estimator.md): layer types simulated once per distinct plan
 * segment (never per layer), per-layer figures filled from the segments,
 * pipeline stages, the timeline of one step, the cost; accessors. */
#include "estimate/estimate_internal.h"

#include <stdlib.h>
#include <string.h>

static const mo_framework *est_framework(const mo_model *m)
{
	return strcmp(m->framework, "pytorch") == 0 ? &mo_ops_pytorch : &mo_ops_mindspore;
}

/* The device count must be known: FSDP shards and DP divide by it. And the
 * answer lists every pipeline stage (its figures, its peak event, its
 * timeline), so the stage count is bounded here, where it enters the
 * estimate: every other cost of the estimate is bounded by the model's
 * layers (at most 100,000) and does not grow with the micro-batch count
 * (estimate_schedule.c). */
static int est_check(const mo_model *m, mo_error *err)
{
	if (m->pipeline_parallel > MO_EST_MAX_STAGES) {
		error_set(err, MO_ERR_LIMIT, 0, 0,
			     "pipeline_parallel is %lld, over the bound of %d pipeline stages an "
			     "estimate answers for",
			     (long long)m->pipeline_parallel, MO_EST_MAX_STAGES);
		return -1;
	}
	if (m->world_size > 0 && m->data_parallel > 0 && m->data_parallel_shard > 0)
		return 0;
	error_set(err, MO_ERR_MODEL_NEEDED, 0, 0,
		     "the device count is unknown (data_parallel_shard: -1 and no "
		     "parallel.world_size), so FSDP and data-parallel shards cannot be sized");
	return -1;
}

static int est_types(mo_estimate *e, const mo_model *m, const mo_est_dims *d,
			mo_error *err)
{
	e->n_types = m->n_types;
	e->types = arena_alloc(e->a, (m->n_types + 1) * sizeof(*e->types));
	if (!e->types) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	/* the graphs are the model's: built once, borrowed by every estimate */
	e->cache = est_cache_get(m, e->fw, d, err);
	if (!e->cache)
		return -1;
	for (size_t t = 0; t < m->n_types; t++) {
		e->types[t].name = arena_strdup(e->a, m->types[t].name);
		est_type_params(&e->types[t], m, t);
		if (!e->types[t].name) {
			error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
			return -1;
		}
		e->types[t].g = *est_cache_graph(e->cache, t);
	}
	e->head = *est_cache_head(e->cache);
	e->embed = *est_cache_embed(e->cache);
	if (est_keep_eval(&e->head_k, &e->head, NULL, NULL, false, false, false) != 0 ||
	    est_keep_eval(&e->embed_k, &e->embed, NULL, NULL, false, false, false) != 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	return 0;
}

/* FNV-1a over (type, flags, actions): the key of a plan result. */
static uint64_t est_res_hash(size_t type, const mo_action_kind *act, size_t np, bool full,
				bool swapped)
{
	uint64_t h = hash_u64(MO_HASH_SEED, (uint64_t)type);
	h = hash_u64(h, (uint64_t)(full | swapped << 1));
	for (size_t i = 0; act && i < np; i++)
		h = hash_u64(h, (uint64_t)act[i]);
	return h;
}

static bool est_res_same(const mo_est_res *r, size_t type, const mo_action_kind *act,
			    size_t np, bool full, bool swapped)
{
	return r->type == type && r->full == full && r->swapped == swapped &&
	       (r->act == act ||
		(r->act && act && !memcmp(r->act, act, np * sizeof(*act))));
}

/* Simulates r's layer type under r's actions, or takes the result from the
 * model's memo (an earlier estimate of the same model did it). */
static int est_result_eval(mo_estimate *e, const mo_model *m, mo_est_res *r)
{
	const mo_est_graph *g = &e->types[r->type].g;
	bool no_rc = e->cfg.no_recompute;
	mo_memo_key key = {.hash = r->hash ^ (no_rc ? 0x9e3779b97f4a7c15ull : 0),
			   .type = r->type, .np = m->types[r->type].n_paths,
			   .flags = (unsigned char)(r->full | r->swapped << 1 | no_rc << 2),
			   .act = r->act};
	if (est_memo_find(e->cache, &key, &r->k, r->marks, g->n_t))
		return 0;
	if (est_keep_eval_marks(&r->k, g, &m->types[r->type], r->act, r->full, r->swapped,
				   no_rc, r->marks) != 0)
		return -1;
	est_memo_put(e->cache, &key, &r->k, r->marks, g->n_t);
	return 0;
}

/* The result of (type, actions), computed once: segments with the same
 * actions share it, found through an open-addressing table (e->res_slots). */
static const mo_est_res *est_result(mo_estimate *e, const mo_model *m, size_t type,
				       const mo_action_kind *act, bool full, bool swapped)
{
	size_t np = m->types[type].n_paths, mask = e->n_res_slots - 1;
	/* twin segments share their action array: found by its address first
	 * (a kept resolution gives every other segment an array of its own, in
	 * one arena, so one address is one content for this estimate) */
	size_t *twin = &e->res_by_act[((uintptr_t)act >> 4) % MO_EST_BY_ACT];
	if (*twin) {
		const mo_est_res *r = &e->res[*twin - 1];
		if (r->act == act && r->type == type && r->full == full && r->swapped == swapped)
			return r;
	}
	uint64_t h = est_res_hash(type, act, np, full, swapped);
	size_t i = (size_t)h & mask;
	for (; e->res_slots[i]; i = (i + 1) & mask) {
		const mo_est_res *r = &e->res[e->res_slots[i] - 1];
		if (r->hash == h && est_res_same(r, type, act, np, full, swapped)) {
			if (act)
				*twin = e->res_slots[i];
			return r;
		}
	}
	mo_est_res *r = &e->res[e->n_res];
	const mo_est_graph *g = &e->types[type].g;
	*r = (mo_est_res){.type = type, .act = act, .full = full, .swapped = swapped, .hash = h};
	r->marks = arena_alloc_raw(e->a, g->n_t + 1);
	if (!r->marks || est_result_eval(e, m, r) != 0)
		return NULL;
	e->res_slots[i] = ++e->n_res;
	if (act)
		*twin = e->n_res;
	return r;
}

static void est_fill(mo_estimate *e, uint64_t lo, uint64_t hi, const mo_est_res *r,
			uint64_t *comm_ops)
{
	for (uint64_t id = lo; id <= hi && id < e->n_layers; id++) {
		mo_estimate_layer *l = &e->layers[id];
		e->layer_res[id] = (size_t)(r - e->res);
		l->type = e->types[r->type].name;
		l->activation_bytes = r->k.kept;
		l->baseline_activation_bytes = r->k.baseline;
		l->recomputed_bytes = r->k.transient;
		l->swap_bytes = r->k.swapped;
		l->recompute_flops = r->k.recompute_flops;
		l->forward_flops = e->types[r->type].g.flops;
		l->comm_recompute_bytes = r->k.comm_bytes;
		*comm_ops += r->k.comm_ops;
	}
}

/* Every layer's result: the resolution's segments (rs: the config applied to m), or every
 * layer as it is (rs NULL: no config). */
static int est_layers(mo_estimate *e, const mo_resolved *rs, const mo_model *m, mo_error *err)
{
	uint64_t comm_ops = 0;
	int rc = -1;
	e->n_layers = (size_t)(m->num_layers + m->mtp_num_layers);
	e->layers = arena_alloc(e->a, e->n_layers * sizeof(*e->layers));
	e->layer_res = arena_alloc(e->a, (e->n_layers + 1) * sizeof(*e->layer_res));
	if (!e->layers || !e->layer_res)
		goto out;
	size_t nseg = rs ? rs->n_segs : 0;
	size_t cap = nseg + m->n_types + 1;
	e->res = arena_alloc(e->a, cap * sizeof(*e->res));
	for (e->n_res_slots = 16; e->n_res_slots < 2 * cap;)
		e->n_res_slots *= 2;
	e->res_slots = arena_alloc(e->a, e->n_res_slots * sizeof(*e->res_slots));
	if (!e->res || !e->res_slots)
		goto out;
	for (size_t i = 0; i < e->n_layers; i++)
		e->layers[i].layer = (int64_t)i;
	for (size_t i = 0; rs && i < nseg; i++) {
		const mo_seg *g = &rs->segs[i];
		const mo_est_res *r = est_result(e, m, g->type, g->act, g->full, g->swapped);
		if (!r)
			goto out;
		est_fill(e, g->lo, g->hi, r, &comm_ops);
	}
	for (uint64_t id = 0; !rs && id < e->n_layers; id++) {
		const mo_est_res *r = est_result(e, m, m->type_of[id], NULL, false, false);
		if (!r)
			goto out;
		est_fill(e, id, id, r, &comm_ops);
	}
	e->cost.comm_recompute_ops = comm_ops * (uint64_t)e->cfg.mbn;
	for (size_t i = 0; i < e->n_res; i++)
		e->res[i].act = NULL; /* the resolution is the caller's */
	rc = 0;
out:
	if (rc != 0 && err->code == MO_OK)
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	return rc;
}

/* Collective groups that hold communication buffers. */
static double est_groups(const mo_est_cfg *c)
{
	return (double)((c->tp > 1) + (c->cp > 1) + (c->dp > 1) + (c->pp > 1) + (c->ep > 1));
}

static void est_reserved(mo_estimate *e)
{
	const mo_device *d = &e->cfg.dev;
	double buffers = est_groups(&e->cfg) * d->comm_buffer_mib * 1048576.0;
	double cap = (d->memory_gib - d->reserved_gib) * 1073741824.0;
	e->capacity = u64_of(cap);
	for (size_t s = 0; s < e->n_stages; s++) {
		mo_estimate_stage *st = &e->stages[s];
		st->reserved_peak_bytes =
			u64_of((double)st->peak_bytes * (1.0 + d->fragmentation) + buffers);
		if (st->peak_bytes > e->stages[e->peak_stage].peak_bytes)
			e->peak_stage = s;
	}
}

/* Figures saturate rather than wrap (util.h): one at or over MO_MAX_BYTES
 * means the model's sizes are out of any real range, and no figure of
 * this estimate can be trusted. */
static int est_in_range(const mo_estimate *e, mo_error *err)
{
	for (size_t s = 0; s < e->n_stages; s++) {
		const mo_estimate_stage *st = &e->stages[s];
		uint64_t most = st->reserved_peak_bytes > st->peak_bytes ? st->reserved_peak_bytes
									 : st->peak_bytes;
		most = most > st->weights_bytes ? most : st->weights_bytes;
		most = most > st->optimizer_bytes ? most : st->optimizer_bytes;
		if (most >= MO_MAX_BYTES) {
			error_set(err, MO_ERR_LIMIT, 0, 0,
				     "sizes out of range: stage %zu would need 2^60 bytes (1 EiB) or more "
				     "per device; check the model's sizes (seq_length, hidden_size, "
				     "micro_batch_size, vocab_size, layers)", s);
			return -1;
		}
	}
	return 0;
}

static void est_cfg_apply(mo_estimate *e, const mo_config *c, const mo_model *m)
{
	est_cfg_init(&e->cfg, m);
	e->cfg.prefetch = c && c->swap_enable && c->prefetch > 0 ? c->prefetch : 1;
	e->cfg.no_recompute = e->fw->recompute_needs_world && m->world_size == 1;
	/* Megatron runs the combined 1F1B without pipelining or with virtual
	 * stages only (transformer_config.py:3007-3011 at d98e8a64) */
	e->cfg.ep_overlap = m->overlap_moe_ep_comm && e->fw == &mo_ops_pytorch &&
			    (e->cfg.pp == 1 || e->cfg.vpp > 1);
}

static int est_build(mo_estimate *e, const mo_config *c, const mo_resolved *rs,
		     const mo_model *m, mo_error *err)
{
	est_dims_init(&e->dims, m);
	est_cfg_apply(e, c, m);
	if (est_types(e, m, &e->dims, err) != 0 || est_layers(e, rs, m, err) != 0 ||
	    est_stages(e, m, err) != 0 || est_timeline(e, err) != 0)
		return -1;
	est_cost(e);
	if (est_time(e, m) != 0 || est_clock(e) != 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	est_reserved(e);
	return est_in_range(e, err);
}

/* How much of the timeline an estimate builds. */
typedef enum { EST_LISTED, EST_UNLISTED, EST_UNPEAKED, EST_SUMMARY } est_depth;

/* The estimate of m under c, whose resolution against m is rs (NULL with no config). */
static int estimate_build(mo_estimate **out, const mo_config *c, const mo_resolved *rs,
			  const mo_model *m, est_depth depth, mo_error *err)
{
	mo_arena *a = arena_new();
	mo_estimate *e = a ? arena_alloc(a, sizeof(*e)) : NULL;
	if (!e) {
		arena_free(a);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	e->a = a;
	e->fw = est_framework(m);
	e->no_events = depth == EST_UNLISTED || depth == EST_UNPEAKED;
	e->no_peaks = depth == EST_UNPEAKED;
	e->unlisted = depth == EST_SUMMARY;
	if (est_build(e, c, rs, m, err) != 0) {
		mo_estimate_free(e);
		return -1;
	}
	*out = e;
	return 0;
}

/* The checks every entry point makes before any work; err zeroed first. */
static int estimate_begin(mo_estimate **out, const mo_config *c, const mo_model *m,
			  mo_error *err)
{
	memset(err, 0, sizeof(*err));
	if (!out || !m) {
		error_set(err, MO_ERR_USAGE, 0, 0, "estimate needs a model");
		return -1;
	}
	*out = NULL;
	if (c && !c->doc) {
		error_set(err, MO_ERR_USAGE, 0, 0, "estimate needs a parsed config");
		return -1;
	}
	return est_check(m, err);
}

static int est_run(mo_estimate **out, const mo_config *c, const mo_model *m, est_depth depth,
		   mo_error *err)
{
	mo_error dummy;
	if (!err)
		err = &dummy;
	if (estimate_begin(out, c, m, err) != 0)
		return -1;
	mo_resolved *rs = NULL;
	if (c && resolve(&rs, c, m, NULL, err) != 0)
		return -1;
	int rc = estimate_build(out, c, rs, m, depth, err);
	resolved_free(rs);
	return rc;
}

static int estimate_resolved_as(mo_estimate **out, const mo_resolved *r, est_depth depth,
				mo_error *err)
{
	mo_error dummy;
	if (!err)
		err = &dummy;
	if (!r) {
		memset(err, 0, sizeof(*err));
		error_set(err, MO_ERR_USAGE, 0, 0,
			  "estimate needs a resolution (a valid config and a model)");
		return -1;
	}
	if (estimate_begin(out, r->c, r->m, err) != 0)
		return -1;
	return estimate_build(out, r->c, r, r->m, depth, err);
}

int mo_estimate_resolved(mo_estimate **out, const mo_resolved *r, mo_error *err)
{
	return estimate_resolved_as(out, r, EST_LISTED, err);
}

int mo_estimate_resolved_summary(mo_estimate **out, const mo_resolved *r, mo_error *err)
{
	return estimate_resolved_as(out, r, EST_SUMMARY, err);
}

int mo_estimate_run(mo_estimate **out, const mo_config *c, const mo_model *m, mo_error *err)
{
	return est_run(out, c, m, EST_LISTED, err);
}

int est_run_unlisted(mo_estimate **out, const mo_config *c, const mo_model *m,
		     mo_error *err)
{
	return est_run(out, c, m, EST_UNLISTED, err);
}

int est_run_unpeaked(mo_estimate **out, const mo_config *c, const mo_model *m,
		     mo_error *err)
{
	return est_run(out, c, m, EST_UNPEAKED, err);
}

void mo_estimate_free(mo_estimate *e)
{
	if (!e)
		return;
	for (size_t s = 0; e->events && s < e->n_stages; s++)
		free(e->events[s]);
	est_cache_release(e->cache);
	arena_free(e->a);
}

/* ---- accessors ------------------------------------------------------------- */

uint64_t mo_estimate_peak_bytes(const mo_estimate *e)
{
	return e && e->n_stages ? e->stages[e->peak_stage].peak_bytes : 0;
}

uint64_t mo_estimate_reserved_peak_bytes(const mo_estimate *e)
{
	return e && e->n_stages ? e->stages[e->peak_stage].reserved_peak_bytes : 0;
}

MO_ACCESSOR(uint64_t, mo_estimate_capacity_bytes, mo_estimate, capacity)

double mo_estimate_overhead_percent(const mo_estimate *e)
{
	return e ? e->cost.overhead_percent : 0.0;
}

const char *mo_estimate_framework(const mo_estimate *e)
{
	return e ? e->fw->name : NULL;
}

const char *mo_estimate_rules_note(const mo_estimate *e)
{
	return e ? e->fw->note : NULL;
}

const char *mo_estimate_bucket_name(int bucket)
{
	static const char *const names[MO_EST_BUCKETS] = {
		"weights",      "gradients",    "optimizer",        "activations",
		"recomputed",   "swap_buffers", "gathered_weights", "loss_scratch",
		"workspaces",   "pipeline_inputs"};
	return bucket >= 0 && bucket < MO_EST_BUCKETS ? names[bucket] : NULL;
}

MO_ACCESSOR(size_t, mo_estimate_stage_count, mo_estimate, n_stages)

const mo_estimate_stage *mo_estimate_stage_get(const mo_estimate *e, size_t i)
{
	return e && i < e->n_stages ? &e->stages[i] : NULL;
}

MO_ACCESSOR(size_t, mo_estimate_layer_count, mo_estimate, n_layers)

const mo_estimate_layer *mo_estimate_layer_get(const mo_estimate *e, int64_t layer)
{
	return e && layer >= 0 && (size_t)layer < e->n_layers ? &e->layers[layer] : NULL;
}

size_t mo_estimate_event_count(const mo_estimate *e, size_t stage)
{
	return e && stage < e->n_stages ? e->n_events[stage] : 0;
}

const mo_estimate_event *mo_estimate_event_get(const mo_estimate *e, size_t stage, size_t i)
{
	if (!e || stage >= e->n_stages || i >= e->n_events[stage])
		return NULL;
	return &e->events[stage][i];
}

MO_ACCESSOR(int, mo_estimate_timeline_truncated, mo_estimate, truncated)

const mo_estimate_cost *mo_estimate_get_cost(const mo_estimate *e)
{
	return e ? &e->cost : NULL;
}
