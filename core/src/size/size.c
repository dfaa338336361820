/* The search: for each device count, the layouts the framework accepts
 * (size_layouts.c), each estimated once with no recompute or swap on one
 * working copy of the model (consecutive layouts share the layer shapes,
 * so the estimator's graphs and plan memo kept on that copy serve them),
 * then bounded and planned best first:
 *
 *  - memory: the parameter state (weights, gradients, optimizer) of the
 *    busiest stage is a floor no recompute or swap lowers: above the
 *    budget, the layout is rejected before any planning; the layouts after
 *    it that differ only in sequence parallel and micro-batch size share
 *    that state and are rejected with it, unestimated;
 *  - time: a plan only adds to the step (the estimate's overhead is never
 *    negative), so the no-plan step time is a floor. Layouts are planned in
 *    the order of that floor, and the search stops once the top K fitting
 *    layouts are all faster than the next floor: the top K are then exact.
 *
 * The floors come from estimates without peaks (est_run_unpeaked: the
 * parameter state and the step time, a few microseconds); a layout's
 * no-plan peak (est_run_unlisted: the closed form of each stage's
 * schedule, no event listing) only when the ranking reaches it.
 *
 * Ranking reads one figure, size_step_seconds, the estimate's step time;
 * across device counts the time per token per device (step x devices /
 * tokens), the inverse of tokens per second per device. */
#include "size/size.h"
#include "config/config.h"
#include "estimate/estimate.h"
#include "planner/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The step time a layout is ranked by. */
static double size_step_seconds(const mo_estimate *e)
{
	return mo_estimate_get_time(e)->step_seconds;
}

/* A layout that got a plan (or needed none). */
typedef struct mo_size_final {
	mo_size_cand c;
	uint64_t peak;
	double step, score; /* score: step x devices, lower is better */
	double mfu;
	bool fits;
	mo_planner_result *plan; /* kept for the returned ones; NULL until then */
} mo_size_final;

typedef struct mo_size_list {
	mo_size_final *v;
	size_t n, cap;
} mo_size_list;

struct mo_size_result {
	mo_size_layout *v;
	size_t n;
	mo_size_reasons rej;
	mo_size_rejection other_group; /* the reasons past rej's table */
	uint64_t accepted, estimated, planned;
	int complete;
	int64_t smallest;
	mo_arena *a;
};

typedef struct mo_search {
	const mo_size_input *in;
	size_t top;
	mo_size_reasons *rej;
	mo_size_list fit, unfit; /* each at most `top`, best first */
	double *points;          /* (peak, step) of every fitting layout */
	size_t n_points, cap_points;
	mo_size_result *r;
	bool stopped; /* the work budget ran out */
	size_t peaks, peaks_at_stop; /* no-plan peaks computed; when it stopped */
	const char *none_yaml; /* the three sections of no plan, canonical */
	uint64_t budget; /* bytes per device (the last estimate's capacity
			  * less the headroom when the input gives none) */
	bool pytorch;    /* a Megatron-LM model: planned with its own flags first */
	mo_size_splits splits; /* the accounted splits' lists (the working model's) */
} mo_search;

static uint64_t size_budget_for(const mo_size_input *in, const mo_estimate *e)
{
	if (in->budget)
		return in->budget;
	double cap = (double)mo_estimate_capacity_bytes(e);
	return u64_of(cap * (1.0 - in->headroom_percent / 100.0));
}

static uint64_t size_state_bytes(const mo_estimate *e)
{
	uint64_t worst = 0;
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++) {
		const mo_estimate_stage *st = mo_estimate_stage_get(e, s);
		uint64_t b = u64_add(u64_add(st->weights_bytes, st->gradients_bytes),
					st->optimizer_bytes);
		if (b > worst)
			worst = b;
	}
	return worst;
}

/* ---- the kept lists ------------------------------------------------------------ */

static double size_score(const mo_size_cand *c, double step)
{
	return step * (double)c->n;
}

/* Inserts f in order of score, keeping at most `top`; returns false when
 * out of memory (f's plan is then the caller's). The list owns the plans
 * it keeps: what it does not keep, f's own included, is freed. */
static bool size_keep(mo_size_list *l, size_t top, const mo_size_final *f)
{
	if (l->n == top && top > 0 && f->score >= l->v[l->n - 1].score) {
		mo_planner_result_free(f->plan);
		return true;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		mo_size_final *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	size_t at = l->n;
	while (at > 0 && l->v[at - 1].score > f->score)
		at--;
	memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof *l->v);
	l->v[at] = *f;
	l->n++;
	if (l->n > top) {
		mo_planner_result_free(l->v[l->n - 1].plan);
		l->n--;
	}
	return true;
}

static void size_list_free(mo_size_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		mo_planner_result_free(l->v[i].plan);
	free(l->v);
}

static bool size_point(mo_search *s, uint64_t peak, double step)
{
	if (s->n_points + 2 > s->cap_points) {
		size_t cap = s->cap_points ? 2 * s->cap_points : 64;
		double *v = realloc(s->points, cap * sizeof *v);
		if (!v)
			return false;
		s->points = v;
		s->cap_points = cap;
	}
	s->points[s->n_points++] = (double)peak;
	s->points[s->n_points++] = step;
	return true;
}

/* ---- one device count ----------------------------------------------------------- */

/* c's floors: its parameter state and no-plan step time, from an
 * estimate without peaks. Returns 0, 1 when the budget stopped it, -1. */
static int size_estimate_one(mo_search *s, mo_model *wm, mo_size_cand *c, mo_error *err)
{
	if (!size_apply(wm, c, s->in->global_batch, &s->splits)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_estimate *e = NULL;
	if (est_run_unpeaked(&e, NULL, wm, err) != 0)
		return err->code == MO_ERR_BUDGET || err->code == MO_ERR_CANCELLED ? 1 : -1;
	s->r->estimated++;
	c->state_bytes = size_state_bytes(e);
	c->base_step = size_step_seconds(e);
	c->base_mfu = mo_estimate_get_time(e)->mfu;
	c->estimated = true;
	s->budget = size_budget_for(s->in, e);
	mo_estimate_free(e);
	return 0;
}

/* c's no-plan peak (the closed form of each stage's schedule, no event
 * listing). Returns 0, 1 when the budget stopped it, -1 with err. */
static int size_peak_one(mo_search *s, mo_model *wm, mo_size_cand *c, mo_error *err)
{
	if (!size_apply(wm, c, s->in->global_batch, &s->splits)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_estimate *e = NULL;
	if (est_run_unlisted(&e, NULL, wm, err) != 0)
		return err->code == MO_ERR_BUDGET || err->code == MO_ERR_CANCELLED ? 1 : -1;
	s->peaks++;
	c->base_peak = mo_estimate_peak_bytes(e);
	c->peaked = true;
	mo_estimate_free(e);
	return 0;
}

#define MO_CMP(a, b)                                                                      \
	do {                                                                              \
		if ((a) != (b))                                                           \
			return (a) < (b) ? -1 : 1;                                        \
	} while (0)

/* What fixes the parameter state: sequence parallel and the micro-batch
 * change activations only. */
static int size_cmp_state(const void *a, const void *b)
{
	const mo_size_cand *x = a, *y = b;
	MO_CMP(x->tp, y->tp);
	MO_CMP(x->cp, y->cp);
	MO_CMP(x->ep, y->ep);
	MO_CMP(x->etp, y->etp);
	MO_CMP(x->pp, y->pp);
	MO_CMP(x->vpp, y->vpp);
	MO_CMP(x->acct, y->acct);
	MO_CMP(x->ufirst, y->ufirst);
	MO_CMP(x->ulast, y->ulast);
	MO_CMP(x->dopt, y->dopt);
	return 0;
}

/* The order the parameter states are visited in: the most sharded
 * weights (TP x EP) first, so that a search the work limit stops has
 * seen the states most likely to fit; each (TP, CP, EP, ETP) block
 * together (the layer shapes of its representatives are the same, and
 * the estimator's graphs on the working model serve the whole block),
 * deeper pipelines and the distributed optimizer first inside it. Then
 * the first of each state with the same activation settings (SP off, the
 * smallest micro-batch). */
static int size_cmp_state_first(const void *a, const void *b)
{
	const mo_size_cand *x = a, *y = b;
	MO_CMP(y->tp * y->ep, x->tp * x->ep);
	MO_CMP(x->tp, y->tp);
	MO_CMP(x->cp, y->cp);
	MO_CMP(x->ep, y->ep);
	MO_CMP(x->etp, y->etp);
	MO_CMP(y->pp, x->pp);
	MO_CMP(x->vpp, y->vpp);
	MO_CMP(x->acct, y->acct);
	MO_CMP(x->ufirst, y->ufirst);
	MO_CMP(x->ulast, y->ulast);
	MO_CMP(y->dopt, x->dopt);
	MO_CMP(x->sp, y->sp);
	MO_CMP(x->mbs, y->mbs);
	return 0;
}

/* What fixes the layer shapes (the estimator's graphs and memo on the
 * working model): consecutive estimates in this order reuse them. */
static int size_cmp_shape(const void *a, const void *b)
{
	const mo_size_cand *x = a, *y = b;
	MO_CMP(x->tp, y->tp);
	MO_CMP(x->cp, y->cp);
	MO_CMP(x->ep, y->ep);
	MO_CMP(x->etp, y->etp);
	MO_CMP(x->sp, y->sp);
	MO_CMP(x->mbs, y->mbs);
	MO_CMP(x->pp, y->pp);
	MO_CMP(x->vpp, y->vpp);
	MO_CMP(x->acct, y->acct);
	MO_CMP(x->ufirst, y->ufirst);
	MO_CMP(x->ulast, y->ulast);
	MO_CMP(x->dopt, y->dopt);
	return 0;
}

/* The memory floor: one estimate per parameter state; a state above the
 * budget rejects every layout that shares it, unestimated. */
static int size_cut_states(mo_search *s, mo_model *wm, mo_size_cands *cands, mo_error *err)
{
	qsort(cands->v, cands->n, sizeof *cands->v, size_cmp_state_first);
	size_t kept = 0;
	for (size_t i = 0; i < cands->n;) {
		size_t j = i + 1;
		while (j < cands->n && size_cmp_state(&cands->v[i], &cands->v[j]) == 0)
			j++;
		/* the `parallel` rule reads none of what differs inside a
		 * state (SP, the micro-batch): one check a state */
		if (!size_apply(wm, &cands->v[i], s->in->global_batch, &s->splits)) {
			error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
			return -1;
		}
		mo_par_finding bad;
		if (model_parallel_error(wm, &bad)) {
			size_reject3(s->rej, j - i, size_parallel_reason(wm, bad.rule), bad.p,
				     bad.message, bad.path);
			s->r->accepted -= j - i;
			i = j;
			continue;
		}
		int rc = budget_spent() ? 1 : size_estimate_one(s, wm, &cands->v[i], err);
		if (rc != 0) {
			/* the groups not reached stay, unestimated */
			memmove(&cands->v[kept], &cands->v[i], (cands->n - i) * sizeof *cands->v);
			cands->n = kept + (cands->n - i);
			return rc;
		}
		if (cands->v[i].state_bytes > s->budget)
			size_reject(s->rej, j - i, MO_SIZE_REJ_STATE_BUDGET, 0, 0, NULL, NULL);
		else
			for (size_t k = i; k < j; k++)
				cands->v[kept++] = cands->v[k];
		i = j;
	}
	cands->n = kept;
	return 0;
}

/* After the work limit: the candidates estimated so far go on to the
 * planning (those that fit with no plan need no more work); the rest are
 * counted. */
static void size_keep_estimated(mo_search *s, mo_size_cands *cands)
{
	size_t kept = 0;
	for (size_t i = 0; i < cands->n; i++)
		if (cands->v[i].estimated && cands->v[i].state_bytes <= s->budget)
			cands->v[kept++] = cands->v[i];
		else if (!cands->v[i].estimated)
			size_reject(s->rej, 1, MO_SIZE_REJ_NOT_ESTIMATED, 0, 0, NULL, NULL);
	cands->n = kept;
}

/* Estimates every candidate with no plan (the floors of the planning
 * order). Returns 0, 1 when the budget stopped it, -1 with err. */
static int size_estimate_all(mo_search *s, mo_model *wm, mo_size_cands *cands, mo_error *err)
{
	int rc = size_cut_states(s, wm, cands, err);
	if (rc == 0) {
		qsort(cands->v, cands->n, sizeof *cands->v, size_cmp_shape);
		for (size_t i = 0; i < cands->n && rc == 0; i++) {
			if (cands->v[i].estimated)
				continue;
			rc = budget_spent() ? 1 : size_estimate_one(s, wm, &cands->v[i], err);
		}
	}
	if (rc == 1)
		size_keep_estimated(s, cands);
	return rc;
}

static int size_cmp_floor(const void *a, const void *b)
{
	const mo_size_cand *x = a, *y = b;
	double sx = size_score(x, x->base_step), sy = size_score(y, y->base_step);
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->base_peak < y->base_peak ? -1 : x->base_peak > y->base_peak;
}

/* After the work limit, the ranking still takes up to this many no-plan
 * peaks of the layouts with the lowest floors (an estimate without the
 * event listing each: DeepSeek-V3's take about 0.1 ms), so that a stopped
 * search answers the fastest of them that fit with no plan. */
#define MO_SIZE_PEAKS_AFTER_STOP 256

/* Plans one candidate; fills f. Returns 0, 1 when the budget stopped it,
 * -1 with err. */
static int size_plan_one(mo_search *s, mo_model *wm, mo_size_cand *c, mo_size_final *f,
			    mo_error *err)
{
	if (!c->peaked) {
		if (s->stopped && s->peaks - s->peaks_at_stop >= MO_SIZE_PEAKS_AFTER_STOP)
			return 1;
		int rc = size_peak_one(s, wm, c, err);
		if (rc != 0)
			return rc;
	}
	if (c->base_peak <= s->budget) {
		/* fits with nothing: no plan has less overhead */
		*f = (mo_size_final){.c = *c, .peak = c->base_peak, .step = c->base_step,
				     .mfu = c->base_mfu, .fits = true};
		f->score = size_score(c, f->step);
		return 0;
	}
	if (s->stopped || budget_spent())
		return 1;
	if (!size_apply(wm, c, s->in->global_batch, &s->splits)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_planner_input pin = {.model = wm, .budget = s->budget};
	/* a layout no plan fits is only counted: no search for its least peak.
	 * The planner's search can miss a plan the seed's manual steps (select,
	 * then full from the first layer) find under virtual pipelines (Llama
	 * 3 405B, PP 16 VPP 2: no plan under 219.90 GiB, `full 0-116` at 75.53
	 * GiB): when its plan does not fit, the planner runs that escalation
	 * and answers with its step that fits (mo_planner_from_staged) */
	mo_planner_options opts = {.no_min_peak = true, .staged_if_unfit = true};
	mo_planner_result *pr = NULL;
	/* Megatron-LM runs the plans its arguments say: its block recompute
	 * first; the planner's own plan (a note says why no flags) only when
	 * not even every layer fits that way */
	if (s->pytorch && size_megatron_plan(&pr, wm, c, s->budget, err) != 0)
		return err->code == MO_ERR_BUDGET || err->code == MO_ERR_CANCELLED ? 1 : -1;
	if (!pr && planner_run_opts(&pr, &pin, &opts, err) != 0)
		return err->code == MO_ERR_BUDGET || err->code == MO_ERR_CANCELLED ? 1 : -1;
	s->r->planned++;
	const mo_estimate *e = mo_planner_estimate(pr);
	*f = (mo_size_final){.c = *c, .peak = mo_estimate_peak_bytes(e),
			     .step = size_step_seconds(e), .mfu = mo_estimate_get_time(e)->mfu,
			     .fits = mo_planner_fits(pr) != 0, .plan = pr};
	f->score = size_score(c, f->step);
	return 0;
}

/* Takes the final figures of f: its point on the front, its place in the
 * kept lists. Returns 0, or -1 out of memory. */
static int size_take(mo_search *s, mo_size_final *f, mo_error *err)
{
	if (f->fits && !size_point(s, f->peak, f->step)) {
		mo_planner_result_free(f->plan);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	if (!f->fits)
		size_reject(s->rej, 1, MO_SIZE_REJ_NO_PLAN, 0, 0, NULL, NULL);
	if (!size_keep(f->fits ? &s->fit : &s->unfit, s->top, f)) {
		mo_planner_result_free(f->plan);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	return 0;
}

/* Plans the live candidates best first until the top are settled. */
static int size_plan_all(mo_search *s, mo_model *wm, mo_size_cand *live, size_t n_live,
			    mo_error *err)
{
	qsort(live, n_live, sizeof *live, size_cmp_floor);
	for (size_t i = 0; i < n_live; i++) {
		mo_size_cand *c = &live[i];
		if (s->fit.n == s->top &&
		    size_score(c, c->base_step) >= s->fit.v[s->fit.n - 1].score) {
			size_reject(s->rej, n_live - i, MO_SIZE_REJ_SLOWER, 0, 0, NULL, NULL);
			return 0;
		}
		mo_size_final f;
		int rc = size_plan_one(s, wm, c, &f, err);
		if (rc == 1) {
			if (!s->stopped)
				s->peaks_at_stop = s->peaks;
			s->stopped = true;
			size_reject(s->rej, 1, MO_SIZE_REJ_NOT_PLANNED, 0, 0, NULL, NULL);
			continue;
		}
		if (rc != 0 || size_take(s, &f, err) != 0)
			return -1;
	}
	return 0;
}

static int size_count_one(mo_search *s, int64_t devices, mo_error *err)
{
	const mo_size_input *in = s->in;
	mo_size_question q = {in->model, devices, in->global_batch,
			      in->devices_per_node > 0 ? in->devices_per_node : 8};
	mo_size_cands cands = {0};
	int rc = size_enumerate(&cands, s->rej, &q, err);
	mo_model *wm = rc == 0 ? model_copy(in->model) : NULL;
	if (rc == 0 && !wm) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		rc = -1;
	}
	if (rc == 0) {
		s->r->accepted += cands.n;
		rc = size_estimate_all(s, wm, &cands, err);
		if (rc == 1) {
			s->stopped = true;
			s->peaks_at_stop = s->peaks;
		}
		if (rc >= 0)
			rc = size_plan_all(s, wm, cands.v, cands.n, err);
	}
	mo_model_free(wm);
	size_splits_free(&s->splits);
	free(cands.v);
	return rc;
}

/* ---- the answer ----------------------------------------------------------------- */

/* "none", or what the plan recomputes and swaps, in layers. */
static const char *size_plan_words(mo_arena *a, const mo_estimate *e)
{
	size_t rc = 0, sw = 0, n = mo_estimate_layer_count(e);
	for (size_t i = 0; i < n; i++) {
		const mo_estimate_layer *l = mo_estimate_layer_get(e, (int64_t)i);
		rc += l->recompute_flops > 0 || l->comm_recompute_bytes > 0;
		sw += l->swap_bytes > 0;
	}
	char text[128];
	if (!rc && !sw)
		snprintf(text, sizeof text, "none");
	else if (!sw)
		snprintf(text, sizeof text, "recompute in %zu of %zu layers", rc, n);
	else if (!rc)
		snprintf(text, sizeof text, "swap in %zu of %zu layers", sw, n);
	else
		snprintf(text, sizeof text, "recompute in %zu, swap in %zu of %zu layers", rc, sw, n);
	return arena_strdup(a, text);
}

/* The layout in Megatron-LM's argument names (megatron/training/
 * arguments.py); virtual chunks as layers per chunk. */
static const char *size_megatron_args(mo_arena *a, const mo_size_cand *c,
					 const mo_model *base, int64_t global_batch,
					 const char *recompute)
{
	char t[640];
	int n = snprintf(t, sizeof t,
			 "--tensor-model-parallel-size %lld --pipeline-model-parallel-size %lld "
			 "--context-parallel-size %lld --micro-batch-size %lld --global-batch-size %lld",
			 (long long)c->tp, (long long)c->pp, (long long)c->cp, (long long)c->mbs,
			 (long long)global_batch);
	/* an accounted or uneven split: its chunks are not all num_layers /
	 * (PP x VPP) layers, and Megatron-LM takes the chunk count instead
	 * (uneven: arguments.py at d98e8a64, lines 954-956) */
	bool uneven = c->ufirst || c->ulast;
	if (c->vpp > 1 && (c->acct || uneven) && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --num-virtual-stages-per-pipeline-rank %lld",
			      (long long)c->vpp);
	else if (c->vpp > 1 && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --num-layers-per-virtual-pipeline-stage %lld",
			      (long long)(base->num_layers / c->pp / c->vpp));
	if (c->ufirst && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --decoder-first-pipeline-num-layers %lld",
			      (long long)c->ufirst);
	if (c->ulast && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --decoder-last-pipeline-num-layers %lld",
			      (long long)c->ulast);
	if ((c->acct & 1) && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --account-for-embedding-in-pipeline-split");
	if ((c->acct & 2) && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --account-for-loss-in-pipeline-split");
	if (base->num_moe_experts > 0 && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n,
			      " --expert-model-parallel-size %lld --expert-tensor-parallel-size %lld",
			      (long long)c->ep, (long long)c->etp);
	if (c->sp && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --sequence-parallel");
	if (c->dopt && n > 0 && (size_t)n < sizeof t)
		n += snprintf(t + n, sizeof t - (size_t)n, " --use-distributed-optimizer");
	if (n > 0 && (size_t)n < sizeof t)
		snprintf(t + n, sizeof t - (size_t)n, "%s", recompute);
	return arena_strdup(a, t);
}

/* True when the plan recomputes whole layers only (mode full, no
 * recompute_comm section) and swaps nothing. A whole layer's recompute
 * re-runs its communication too (under sequence parallel its all-gathers),
 * as Megatron-LM's checkpointed forward does. */
static bool size_plan_whole_layers(const mo_config *cfg, const mo_estimate *e)
{
	if (cfg->has_recompute && cfg->mode == MO_MODE_SELECT)
		return false;
	if (cfg->comm_enable || cfg->comm.n > 0)
		return false;
	for (size_t i = 0; i < mo_estimate_layer_count(e); i++)
		if (mo_estimate_layer_get(e, (int64_t)i)->swap_bytes > 0)
			return false;
	return true;
}

/* The plan's recompute as Megatron-LM flags (megatron/training/
 * arguments.py; transformer_block.py _checkpointed_forward): whole layers
 * only, the same first n of every model chunk (PP x VPP chunks of the
 * even split) as --recompute-method block n, every layer as uniform 1.
 * Writes the flags ("" for no recompute) and returns NULL, or returns why
 * Megatron-LM has no flags for the plan. */
const char *size_megatron_recompute(const mo_planner_result *pr, const mo_size_cand *c,
				    const mo_model *base, char *flags, size_t size)
{
	flags[0] = '\0';
	if (!pr)
		return NULL;
	const mo_estimate *e = mo_planner_estimate(pr);
	const mo_config *cfg = mo_planner_config(pr);
	if (!size_plan_whole_layers(cfg, e))
		return "the plan swaps, or recomputes selected modules: Megatron-LM's flags recompute "
		       "whole layers or its own module list; apply config instead";
	/* each chunk's leading recomputed layers: the block method's n, or the
	 * whole chunk where it has n or fewer (all of every chunk: uniform) */
	int64_t chunks = c->pp * c->vpp, n = -1, longest = 0;
	bool whole_ok = true;
	for (int64_t k = 0; k < chunks; k++) {
		int64_t at, len, first = 0;
		size_chunk_span(c, base->num_layers, k, &at, &len);
		bool gap = false;
		for (int64_t i = 0; i < len; i++) {
			const mo_estimate_layer *l = mo_estimate_layer_get(e, at + i);
			bool on = l && l->recompute_flops > 0;
			if (on && gap)
				return "the plan recomputes layers that are not the first of their model "
				       "chunk: Megatron-LM's block method takes the first n; apply config "
				       "instead";
			first += on && !gap;
			gap = gap || !on;
		}
		if (first < len) {
			if (n >= 0 && first != n)
				return "the plan recomputes a different number of layers per model chunk: "
				       "Megatron-LM's block method takes the same n of each; apply config "
				       "instead";
			n = first;
		} else if (len > longest) {
			longest = len; /* a chunk recomputed whole */
		}
	}
	if (n >= 0 && longest > n)
		whole_ok = false;
	if (!whole_ok)
		return "the plan recomputes a different number of layers per model chunk: "
		       "Megatron-LM's block method takes the same n of each; apply config "
		       "instead";
	for (size_t i = (size_t)base->num_layers; i < mo_estimate_layer_count(e); i++)
		if (mo_estimate_layer_get(e, (int64_t)i)->recompute_flops > 0)
			return "the plan recomputes the MTP layers, which Megatron-LM's flags do not; "
			       "apply config instead";
	if (n < 0)
		snprintf(flags, size,
			 " --recompute-granularity full --recompute-method uniform "
			 "--recompute-num-layers 1");
	else if (n > 0)
		snprintf(flags, size,
			 " --recompute-granularity full --recompute-method block "
			 "--recompute-num-layers %lld",
			 (long long)n);
	return NULL;
}

static bool size_on_front(const mo_search *s, uint64_t peak, double step)
{
	for (size_t i = 0; i + 1 < s->n_points; i += 2) {
		double p = s->points[i], t = s->points[i + 1];
		if (p <= (double)peak && t <= step && (p < (double)peak || t < step))
			return false;
	}
	return true;
}

/* The layout written into the base training YAML. */
static int size_layout_base(mo_search *s, mo_size_layout *o, const mo_size_cand *c,
			    const mo_model *base, mo_error *err)
{
	char *y = size_base_rewrite(s->in->base, base, c, s->in->global_batch, o->config_yaml,
				    err);
	o->config_yaml = y ? arena_strdup(s->r->a, y) : NULL;
	free(y);
	return o->config_yaml ? 0 : -1;
}

/* 0, or -1 with err. */
static int size_layout_fill(mo_search *s, mo_size_layout *o, const mo_size_final *f,
			       const mo_model *base, mo_error *err)
{
	mo_size_result *r = s->r;
	const mo_size_cand *c = &f->c;
	*o = (mo_size_layout){.devices = c->n, .tensor_parallel = c->tp,
			      .pipeline_parallel = c->pp, .virtual_pipeline = c->vpp,
			      .context_parallel = c->cp, .expert_parallel = c->ep,
			      .expert_tensor_parallel = c->etp, .data_parallel = c->dp,
			      .data_parallel_shard = c->dps, .sequence_parallel = c->sp,
			      .distributed_optimizer = c->dopt, .micro_batch_size = c->mbs,
			      .micro_batch_num = c->mbn, .peak_bytes = f->peak,
			      .budget_bytes = s->budget, .step_seconds = f->step,
			      .fits = f->fits};
	double tokens = (double)s->in->global_batch * (double)base->seq_length;
	o->tokens_per_second_per_device = f->step > 0 ? tokens / f->step / (double)c->n : 0;
	o->pareto = f->fits && size_on_front(s, f->peak, f->step);
	o->plan = f->plan ? size_plan_words(r->a, mo_planner_estimate(f->plan))
			  : arena_strdup(r->a, "none");
	o->config_yaml = f->plan ? arena_strdup(r->a, mo_planner_yaml(f->plan)) : s->none_yaml;
	if (s->in->base && o->config_yaml && size_layout_base(s, o, c, base, err) != 0)
		return -1;
	mo_model *wm = model_copy(base);
	char *y = NULL;
	if (wm && size_apply(wm, c, s->in->global_batch, NULL))
		y = mo_model_to_yaml(wm);
	o->model_yaml = y ? arena_strdup(r->a, y) : NULL;
	o->mfu = f->mfu;
	if (strcmp(base->framework, "pytorch") == 0) {
		char flags[160];
		o->megatron_plan_note =
			size_megatron_recompute(f->plan, c, base, flags, sizeof flags);
		o->megatron_args = size_megatron_args(r->a, c, base, s->in->global_batch, flags);
		if (!o->megatron_args)
			o->model_yaml = NULL; /* out of memory: reported below */
	}
	free(y);
	mo_model_free(wm);
	if (o->plan && o->config_yaml && o->model_yaml)
		return 0;
	error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	return -1;
}

static int size_answer(mo_search *s, mo_error *err)
{
	mo_size_result *r = s->r;
	size_t n = s->fit.n + s->unfit.n;
	r->v = calloc(n ? n : 1, sizeof *r->v);
	if (!r->v) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < s->fit.n; i++)
		if (size_layout_fill(s, &r->v[r->n++], &s->fit.v[i], s->in->model, err) != 0)
			return -1;
	for (size_t i = 0; i < s->unfit.n && r->n < s->top; i++)
		if (size_layout_fill(s, &r->v[r->n++], &s->unfit.v[i], s->in->model, err) != 0)
			return -1;
	return 0;
}

static int size_check_input(const mo_size_input *in, mo_error *err)
{
	if (!in || !in->model) {
		error_set(err, MO_ERR_USAGE, 0, 0, "size needs a model");
		return -1;
	}
	int64_t hi = in->devices_max > 0 ? in->devices_max : in->devices;
	if (in->devices < 1 || hi < in->devices || hi > MO_SIZE_MAX_DEVICES) {
		error_set(err, MO_ERR_USAGE, 0, 0, "devices must be 1 to %d (a range low-high)",
			     MO_SIZE_MAX_DEVICES);
		return -1;
	}
	if (in->global_batch < 1 || in->global_batch > MO_SIZE_MAX_BATCH) {
		error_set(err, MO_ERR_USAGE, 0, 0, "global batch must be 1 to %d",
			     MO_SIZE_MAX_BATCH);
		return -1;
	}
	if (in->devices_per_node < 0 || in->devices_per_node > MO_SIZE_MAX_DEVICES ||
	    !(in->headroom_percent >= 0 && in->headroom_percent < 100)) {
		error_set(err, MO_ERR_USAGE, 0, 0,
			     "devices per node must be 1 to %d, headroom 0 to 99 percent",
			     MO_SIZE_MAX_DEVICES);
		return -1;
	}
	return 0;
}

/* The device counts of the question: one, or the range's multiples of a
 * node (every count below one node). */
static int64_t size_next_count(const mo_size_input *in, int64_t n)
{
	int64_t node = in->devices_per_node > 0 ? in->devices_per_node : 8;
	if (n < node)
		return n + 1;
	return (n / node + 1) * node;
}

static int64_t size_first_count(const mo_size_input *in)
{
	int64_t node = in->devices_per_node > 0 ? in->devices_per_node : 8;
	if (in->devices_max <= 0 || in->devices <= node || in->devices % node == 0)
		return in->devices;
	return (in->devices / node + 1) * node;
}

static int size_search(mo_search *s, mo_error *err)
{
	const mo_size_input *in = s->in;
	int64_t hi = in->devices_max > 0 ? in->devices_max : in->devices;
	for (int64_t n = size_first_count(in); n <= hi && !s->stopped;
	     n = size_next_count(in, n)) {
		size_t before = s->fit.n, points = s->n_points;
		if (size_count_one(s, n, err) != 0)
			return -1;
		if (!s->r->smallest && (s->n_points > points || s->fit.n > before))
			s->r->smallest = n;
	}
	s->r->complete = !s->stopped;
	return 0;
}

/* The config of a layout that needs no plan, as the planner writes it. */
static int size_none_yaml(mo_search *s, mo_error *err)
{
	static const char none[] = "recompute:\n  mode: None\n";
	mo_config *c = NULL;
	char *y = NULL;
	int rc = mo_config_parse(&c, NULL, none, sizeof none - 1, "<none>", NULL, err);
	if (rc == 0)
		rc = mo_export_sections(&y, NULL, c, err);
	if (rc == 0 && !(s->none_yaml = arena_strdup(s->r->a, y))) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		rc = -1;
	}
	free(y);
	mo_config_free(c);
	return rc;
}

int mo_size_run(mo_size_result **out, const mo_size_input *in, mo_error *err)
{
	mo_error dummy;
	if (!err)
		err = &dummy;
	memset(err, 0, sizeof *err);
	if (!out) {
		error_set(err, MO_ERR_USAGE, 0, 0, "no result pointer");
		return -1;
	}
	*out = NULL;
	if (size_check_input(in, err) != 0 || (in->base && size_base_check(in->base, err) != 0))
		return -1;
	mo_size_result *r = calloc(1, sizeof *r);
	if (!r || !(r->a = arena_new())) {
		free(r);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_search s = {.in = in, .top = in->top ? in->top : 10, .rej = &r->rej, .r = r,
		       .pytorch = strcmp(in->model->framework, "pytorch") == 0};
	int rc = size_none_yaml(&s, err);
	if (rc == 0)
		rc = size_search(&s, err);
	if (rc == 0)
		rc = size_answer(&s, err);
	size_list_free(&s.fit);
	size_list_free(&s.unfit);
	free(s.points);
	r->other_group = (mo_size_rejection){.code = MO_SIZE_REJ_OTHER,
					     .code_name = mo_size_reason_name(MO_SIZE_REJ_OTHER),
					     .text = "other reasons", .count = r->rej.other};
	if (rc != 0) {
		mo_size_result_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void mo_size_result_free(mo_size_result *r)
{
	if (!r)
		return;
	size_reasons_free(&r->rej);
	free(r->v);
	arena_free(r->a);
	free(r);
}

MO_ACCESSOR(size_t, mo_size_count, mo_size_result, n)

const mo_size_layout *mo_size_get(const mo_size_result *r, size_t i)
{
	return r && i < r->n ? &r->v[i] : NULL;
}

size_t mo_size_rejected_count(const mo_size_result *r)
{
	return r ? r->rej.n + (r->rej.other > 0) : 0;
}

const mo_size_rejection *mo_size_rejected_at(const mo_size_result *r, size_t i)
{
	if (!r || i >= mo_size_rejected_count(r))
		return NULL;
	return i < r->rej.n ? &r->rej.v[i] : &r->other_group;
}

int mo_size_rejected_get(const mo_size_result *r, size_t i, const char **reason,
			 uint64_t *count)
{
	const mo_size_rejection *g = mo_size_rejected_at(r, i);
	if (!g)
		return -1;
	*reason = g->text;
	*count = g->count;
	return 0;
}

MO_ACCESSOR(uint64_t, mo_size_accepted, mo_size_result, accepted)
MO_ACCESSOR(uint64_t, mo_size_estimated, mo_size_result, estimated)
MO_ACCESSOR(uint64_t, mo_size_planned, mo_size_result, planned)
MO_ACCESSOR(int, mo_size_complete, mo_size_result, complete)
MO_ACCESSOR(int64_t, mo_size_smallest_devices, mo_size_result, smallest)
