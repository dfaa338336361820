/* The seed's manual escalation ("staged"), for the side-by-side: select the
 * MLP on every layer; then full recompute of the first k layers for growing k
 * (the least k that fits, found by bisection), up to every layer; then, without
 * pipeline parallelism, full recompute of the first k layers and swap of the
 * rest (the most k that fits). Each step is a real config, estimated. Layers
 * the starting config names keep its settings (they may become full).
 *
 * And --maximize: the largest micro-batch size or sequence length some plan
 * fits, by doubling then bisection over the planner's feasibility. */
#include "planner/planner_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mo_staged {
	mo_planner_result *r;
	const mo_planner_problem *pl;
	unsigned *what;
	/* the caller's: the best step (the first that fits, else the least
	 * peak), its choices per layer and its index */
	unsigned *best_what;
	long *best;
	int64_t pf;
	mo_error *err;
} mo_staged;

typedef struct mo_staged_result {
	int fits;
	uint64_t peak;
	double overhead;
	char *yaml;
} mo_staged_result;

/* Estimates the assignment in s->what. 0 or -1. */
static int staged_run(mo_staged *s, mo_staged_result *out)
{
	mo_config *c = NULL;
	mo_estimate *e = NULL;
	mo_diags *d = NULL;
	mo_resolved *rs = NULL;
	int rc = -1;
	memset(out, 0, sizeof(*out));
	if (planner_build_config(&c, s->pl, s->what, s->pf, "staged", s->err) != 0)
		goto out;
	if (mo_diags_new(&d) != 0) {
		error_set(s->err, MO_ERR_NOMEM, 0, 0, "out of memory");
		goto out;
	}
	if (mo_validate_resolve(d, c, s->pl->m, &rs) != 0) {
		error_set(s->err, MO_ERR_INTERNAL, 0, 0, "staged step is not a valid config");
		goto out;
	}
	if (mo_export_sections(&out->yaml, NULL, c, s->err) != 0 ||
	    mo_estimate_resolved_summary(&e, rs, s->err) != 0)
		goto out;
	out->peak = mo_estimate_peak_bytes(e);
	out->overhead = mo_estimate_overhead_percent(e);
	out->fits = out->peak <= s->r->budget;
	rc = 0;
out:
	if (rc != 0) {
		free(out->yaml);
		out->yaml = NULL;
	}
	mo_estimate_free(e);
	mo_resolved_free(rs);
	mo_config_free(c);
	mo_diags_free(d);
	return rc;
}

static int staged_keep(mo_staged *s, const char *label, mo_staged_result *ev)
{
	mo_planner_result *r = s->r;
	size_t n = r->n_steps + 1;
	mo_planner_step_owned *o = realloc(r->steps, n * sizeof(*o));
	if (o)
		r->steps = o;
	mo_planner_step *p = o ? realloc(r->pub_steps, n * sizeof(*p)) : NULL;
	if (p)
		r->pub_steps = p;
	char *l = p ? strdup(label) : NULL;
	if (!l) {
		free(ev->yaml);
		error_set(s->err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	r->steps[r->n_steps] = (mo_planner_step_owned){l, ev->yaml};
	r->pub_steps[r->n_steps] = (mo_planner_step){l, ev->yaml, ev->peak, ev->overhead, ev->fits};
	bool better = r->answer < 0 &&
		      (ev->fits || *s->best < 0 || ev->peak < r->pub_steps[*s->best].peak_bytes);
	if (r->answer < 0 && ev->fits)
		r->answer = (long)r->n_steps;
	if (better) {
		*s->best = (long)r->n_steps;
		memcpy(s->best_what, s->what, s->pl->n_layers * sizeof(*s->what));
	}
	r->n_steps++;
	ev->yaml = NULL;
	return 0;
}

/* ---- assignments ------------------------------------------------------------------ */

static unsigned staged_base(const mo_planner_problem *pl, uint64_t id)
{
	return pl->fixed[id] ? MO_CHOICE_FIXED : 0;
}

static unsigned staged_full(const mo_planner_problem *pl, uint64_t id)
{
	return pl->fixed[id] == 2 ? MO_CHOICE_FIXED : MO_CHOICE_FULL;
}

/* Full on layers below k; with swap_end, swap of [k, swap_end) and full
 * after it; with sel, that select on the other free layers. */
static void staged_fill(mo_staged *s, unsigned sel, uint64_t k, uint64_t swap_end)
{
	const mo_planner_problem *pl = s->pl;
	for (uint64_t id = 0; id < pl->n_layers; id++) {
		unsigned w = staged_base(pl, id);
		if (sel && !pl->fixed[id])
			w = sel;
		if (id < k)
			w = staged_full(pl, id);
		else if (swap_end)
			w = id < swap_end && !pl->fixed[id] ? MO_CHOICE_LAYER_SWAP
							    : staged_full(pl, id);
		s->what[id] = w;
	}
}

static int staged_at(mo_staged *s, uint64_t k, uint64_t swap_end, mo_staged_result *ev)
{
	staged_fill(s, 0, k, swap_end);
	return staged_run(s, ev);
}

static void staged_label(char *buf, size_t size, uint64_t k, uint64_t swap_end)
{
	if (!swap_end) {
		snprintf(buf, size, "full 0-%llu", (unsigned long long)(k - 1));
		return;
	}
	uint64_t swap_hi = swap_end - 1;
	if (k)
		snprintf(buf, size, "full 0-%llu + swap %llu-%llu (rest full)",
			 (unsigned long long)(k - 1), (unsigned long long)k,
			 (unsigned long long)swap_hi);
	else
		snprintf(buf, size, "swap 0-%llu (rest full)", (unsigned long long)swap_hi);
}

/* The boundary in [0, hi] where the staged plan at k (recompute 0..k-1, swap k..swap_end-1
 * when swap_end) starts or stops fitting, found by bisection: with fits_above, the least k
 * that fits (hi when none); without, the most k that fits (0 when none). */
static int staged_bisect(mo_staged *s, uint64_t hi, uint64_t swap_end, int fits_above,
			 uint64_t *k_out)
{
	uint64_t lo = 0;
	mo_staged_result ev;
	while (lo + 1 < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (staged_at(s, mid, swap_end, &ev) != 0)
			return -1;
		free(ev.yaml);
		if (!ev.fits == !fits_above)
			hi = mid;
		else
			lo = mid;
	}
	*k_out = fits_above ? hi : lo;
	return 0;
}

/* Least k in [1, N] whose "full 0..k-1" fits (N when none). */
static int staged_full_k(mo_staged *s, uint64_t *k_out)
{
	return staged_bisect(s, s->pl->n_layers, 0, 1, k_out);
}

/* Most k in [0, swap_end) whose "full 0..k-1 + swap k..swap_end-1" fits
 * (0 when none). */
static int staged_swap_k(mo_staged *s, uint64_t swap_end, uint64_t *k_out)
{
	return staged_bisect(s, swap_end, swap_end, 0, k_out);
}

static int staged_step(mo_staged *s, unsigned sel, uint64_t k, uint64_t swap_end,
			  const char *label, int *fits)
{
	mo_staged_result ev;
	char buf[96];
	staged_fill(s, sel, k, swap_end);
	if (staged_run(s, &ev) != 0)
		return -1;
	*fits = ev.fits;
	if (!label) {
		staged_label(buf, sizeof buf, k, swap_end);
		label = buf;
	}
	return staged_keep(s, label, &ev);
}

static int staged_swap_stage(mo_staged *s)
{
	int64_t L = s->pl->m->num_layers;
	if (s->pl->m->pipeline_parallel > 1 || L - s->pf < 1)
		return 0;
	uint64_t swap_end = (uint64_t)(L - s->pf), k;
	int fits;
	if (staged_swap_k(s, swap_end, &k) != 0)
		return -1;
	return staged_step(s, 0, k, swap_end, NULL, &fits);
}

int planner_run_staged(mo_planner_result *r, const mo_planner_problem *pl, unsigned *best,
		       int64_t *best_pf, long *best_step, mo_error *err)
{
	mo_staged s = {.r = r,
		       .pl = pl,
		       .err = err,
		       .best_what = best,
		       .best = best_step,
		       .pf = pl->fixed_prefetch ? pl->fixed_prefetch : 1};
	*best_pf = s.pf;
	*best_step = -1;
	int rc = -1, fits;
	uint64_t k;
	s.what = calloc(pl->n_layers + 1, sizeof(*s.what));
	if (!s.what)
		goto out;
	if (staged_step(&s, 0, 0, 0, "none", &fits) != 0)
		goto out;
	if (fits) { /* nothing to escalate */
		rc = 0;
		goto out;
	}
	if (staged_step(&s, MO_CHOICE_SELECT_MLP, 0, 0, "select '.*mlp' on every layer",
			   &fits) != 0)
		goto out;
	if (fits) {
		rc = 0;
		goto out;
	}
	if (staged_full_k(&s, &k) != 0 || staged_step(&s, 0, k, 0, NULL, &fits) != 0)
		goto out;
	rc = fits ? 0 : staged_swap_stage(&s);
out:
	free(s.what);
	return rc;
}

/* ---- maximize ------------------------------------------------------------------------- */

/* A copy of the model with the value set (NULL on failure). */
static mo_model *maximize_model(const mo_model *m, mo_planner_dim dim, int64_t v, mo_error *err)
{
	mo_model *c = model_copy(m);
	if (!c) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return NULL;
	}
	if (dim == MO_PLAN_MICRO_BATCH_SIZE)
		c->micro_batch_size = v;
	else
		c->seq_length = v;
	return c;
}

/* 1 when some plan fits at v, 0 when none, -1 on error. */
static int maximize_fits(const mo_planner_input *in, mo_planner_dim dim, int64_t v,
			    mo_error *err)
{
	mo_model *m = maximize_model(in->model, dim, v, err);
	mo_planner_problem pl;
	mo_planner_solution sol = {0};
	int rc = -1;
	if (!m)
		return -1;
	if (planner_problem_init(&pl, m, in->start, in->allow, err) != 0)
		goto out;
	pl.max_prefetch = in->max_prefetch > 0 ? in->max_prefetch : 0;
	sol.what = calloc(pl.n_layers + 1, sizeof(*sol.what));
	sol.stage_peak = calloc(pl.base->n_stages + 1, sizeof(*sol.stage_peak));
	uint64_t budget = in->budget ? in->budget : mo_estimate_capacity_bytes(pl.base);
	if (sol.what && sol.stage_peak && planner_search(&pl, budget, &sol) == 0)
		rc = sol.feasible ? 1 : 0;
	free(sol.what);
	free(sol.stage_peak);
out:
	planner_problem_fini(&pl);
	mo_model_free(m);
	return rc;
}

int mo_planner_maximize(int64_t *best, mo_planner_result **plan, const mo_planner_input *in,
			mo_planner_dim dim, int64_t limit, mo_error *err)
{
	mo_error dummy;
	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (plan)
		*plan = NULL;
	if (!best || !in || !in->model) {
		error_set(err, MO_ERR_USAGE, 0, 0, "maximize needs a model");
		return -1;
	}
	int64_t unit = dim == MO_PLAN_SEQ_LENGTH && in->model->context_parallel > 1
			   ? in->model->context_parallel
			   : 1;
	int64_t lo = 0, hi = unit; /* fits at lo (0: nothing), not known at hi */
	int rc = 0;
	*best = 0;
	while (hi <= limit && (rc = maximize_fits(in, dim, hi, err)) == 1) {
		lo = hi;
		hi *= 2;
	}
	if (hi <= limit && rc < 0)
		return -1;
	if (hi > limit)
		hi = limit / unit * unit + unit;
	while (hi - lo > unit) { /* lo fits (or is 0), hi does not (or is past limit) */
		int64_t mid = (lo + (hi - lo) / 2) / unit * unit;
		if (mid <= lo)
			mid = lo + unit;
		rc = maximize_fits(in, dim, mid, err);
		if (rc < 0)
			return -1;
		if (rc)
			lo = mid;
		else
			hi = mid;
	}
	*best = lo;
	if (!plan || lo == 0)
		return 0;
	mo_model *m = maximize_model(in->model, dim, lo, err);
	mo_planner_input pi = *in;
	pi.model = m;
	return m ? planner_run_model(plan, &pi, m, NULL, err) : -1;
}
