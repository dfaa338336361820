/* The planner's entry points: the search over prefetch windows (planner_search.c
 * per window), the smallest reachable peak when nothing fits, the config
 * made real (built, validated, exported, estimated), and the accessors.
 * The staged escalation and --maximize live in planner_staged.c. */
#include "planner/planner.h"
#include "planner/planner_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mo_planner_parse_allow(unsigned *out, const char *text)
{
	static const char *const names[] = {"select", "full",	    "exclude",
					    "comm",   "layer_swap", "op_swap"};
	*out = 0;
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, ",");
		bool hit = n == 3 && strncmp(p, "all", 3) == 0;
		if (hit)
			*out |= MO_PLAN_ALLOW_ALL;
		for (size_t i = 0; !hit && i < sizeof names / sizeof *names; i++)
			if (strlen(names[i]) == n && strncmp(p, names[i], n) == 0) {
				*out |= 1u << i;
				hit = true;
			}
		if (!hit)
			return -1;
		p += n;
		if (*p == ',')
			p++;
	}
	return *out ? 0 : -1;
}

/* ---- prefetch windows --------------------------------------------------------- */

/* The window beyond which swap hides entirely (larger ones only cost
 * memory and forbid swapping more of the last layers): max over swapping
 * choices of ceil(transfer / forward time). */
static int64_t planner_prefetch_saturation(const mo_planner_problem *pl)
{
	double need = 1;
	for (size_t t = 0; t < pl->m->n_types; t++) {
		const mo_planner_layer_type *pt = &pl->types[t];
		double fwd = pl->base->type_fwd_s[t];
		for (size_t k = 0; k < pt->all.n; k++) {
			if (!pt->all.c[k].swapped || pl->host_rate <= 0)
				continue;
			double x = (double)pt->all.c[k].swapped / pl->host_rate;
			double r = fwd > 0 ? ceil(x / fwd) : 1e18;
			need = r > need ? r : need;
		}
	}
	return need > 1e9 ? 1000000000 : (int64_t)need;
}

static bool planner_any_swap(const mo_planner_problem *pl)
{
	for (size_t t = 0; t < pl->m->n_types; t++)
		for (size_t k = 0; k < pl->types[t].all.n; k++)
			if (pl->types[t].all.c[k].what & (MO_CHOICE_LAYER_SWAP | MO_CHOICE_OP_SWAP))
				return true;
	return pl->start_est && pl->fixed_prefetch;
}

/* Prefetch windows to try: [*lo, *hi]; *capped when saturation lies beyond. */
static void planner_prefetch_range(const mo_planner_problem *pl, int64_t *lo, int64_t *hi,
				      bool *capped)
{
	*capped = false;
	*lo = *hi = pl->fixed_prefetch ? pl->fixed_prefetch : 1;
	if (pl->fixed_prefetch || !planner_any_swap(pl))
		return;
	int64_t sat = planner_prefetch_saturation(pl);
	int64_t cap = pl->max_prefetch ? pl->max_prefetch : MO_PLANNER_MAX_PREFETCH;
	if (cap > pl->m->num_layers - 1)
		cap = pl->m->num_layers - 1 > 0 ? pl->m->num_layers - 1 : 1;
	*capped = sat > cap && !pl->max_prefetch;
	*hi = sat < cap ? sat : cap;
}

static bool planner_better(const mo_planner_solution *a, const mo_planner_solution *b)
{
	if (!b->feasible)
		return a->feasible;
	return a->feasible && (a->cost < b->cost || (a->cost == b->cost && a->peak < b->peak));
}

static int planner_solution_alloc(mo_planner_solution *s, const mo_planner_problem *pl)
{
	memset(s, 0, sizeof(*s));
	s->what = calloc(pl->n_layers + 1, sizeof(*s->what));
	s->stage_peak = calloc(pl->base->n_stages + 1, sizeof(*s->stage_peak));
	return s->what && s->stage_peak ? 0 : -1;
}

static void planner_solution_free(mo_planner_solution *s)
{
	free(s->what);
	free(s->stage_peak);
}

static void planner_solution_copy(mo_planner_solution *dst, const mo_planner_solution *src,
				     const mo_planner_problem *pl)
{
	unsigned *w = dst->what;
	uint64_t *sp = dst->stage_peak;
	*dst = *src;
	dst->what = w;
	dst->stage_peak = sp;
	memcpy(w, src->what, pl->n_layers * sizeof(*w));
	memcpy(sp, src->stage_peak, pl->base->n_stages * sizeof(*sp));
}

/* The best plan over every window at this budget. */
int planner_search(const mo_planner_problem *pl, uint64_t budget, mo_planner_solution *best)
{
	int64_t lo, hi;
	bool capped;
	mo_planner_solution cur;
	int rc = -1;
	planner_prefetch_range(pl, &lo, &hi, &capped);
	best->feasible = false;
	if (planner_solution_alloc(&cur, pl) != 0)
		goto out;
	/* widest window first: it hides the most swap, and its cost bounds the
	 * narrower windows' searches */
	for (int64_t pf = hi; pf >= lo; pf--) {
		if (planner_solve(pl, budget, pf, best->feasible ? best->cost : INFINITY,
				     &cur) != 0)
			goto out;
		if (planner_better(&cur, best))
			planner_solution_copy(best, &cur, pl);
	}
	/* a wider window could only hide more swap: no matter when the best
	 * plan costs nothing */
	best->exact = best->exact && (!capped || best->cost < MO_PLANNER_FREE_SECONDS);
	rc = 0;
out:
	planner_solution_free(&cur);
	return rc;
}

/* Nothing fits: the smallest peak on every stage (a search whose
 * objective is the peak), then the cheapest plan at that peak. */
static int planner_min_peak(const mo_planner_problem *pl, mo_planner_solution *best)
{
	int64_t lo, hi;
	bool capped;
	uint64_t least = UINT64_MAX;
	planner_prefetch_range(pl, &lo, &hi, &capped);
	for (int64_t pf = lo; pf <= hi; pf++) {
		if (planner_solve(pl, 0, pf, INFINITY, best) != 0)
			return -1;
		if (best->feasible && best->peak < least)
			least = best->peak;
	}
	if (least == UINT64_MAX)
		return -1;
	return planner_search(pl, least, best);
}

/* ---- the config made real --------------------------------------------------------- */

/* A plan for a graph-mode file whose recompute_config switched something on
 * says, above its sections, that they replace that block (the search did
 * not keep it, so its overhead is no part of the baseline). */
static int planner_note_replaced(mo_planner_result *r, const mo_planner_problem *pl,
				    mo_error *err)
{
	if (!pl->start || planner_start_keeps_recompute(pl->start))
		return 0;
	double was = pl->start_est ? mo_estimate_overhead_percent(pl->start_est) : 0;
	char *note = NULL;
	int n = asprintf(&note,
			 "# these sections replace the file's recompute_config (graph mode), "
			 "which this plan does\n"
			 "# not keep: delete that block and put them in its place "
			 "(memopt migrate rewrites the\n"
			 "# file's own plan the same way); the file's plan costs %.2f%% overhead\n"
			 "%s",
			 was, r->yaml);
	if (n < 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	free(r->yaml);
	r->yaml = note;
	return 0;
}

static int planner_realise(mo_planner_result *r, const mo_planner_problem *pl,
			      const mo_planner_solution *best, mo_error *err)
{
	mo_diags *d = NULL;
	mo_resolved *rs = NULL;
	int rc = -1;
	if (planner_build_config(&r->cfg, pl, best->what, best->prefetch, "plan", err) != 0)
		goto out;
	if (mo_diags_new(&d) != 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		goto out;
	}
	if (mo_validate_resolve(d, r->cfg, r->model, &rs) != 0) {
		const mo_diag *g = NULL;
		for (size_t i = 0; i < mo_diags_count(d) && !g; i++)
			if (mo_diags_get(d, i)->severity == MO_SEV_ERROR)
				g = mo_diags_get(d, i);
		error_set(err, MO_ERR_INTERNAL, 0, 0, "planner made an invalid config: %s: %s",
			     g ? g->code : "?", g ? g->message : "?");
		goto out;
	}
	if (mo_export_sections(&r->yaml, NULL, r->cfg, err) != 0 ||
	    mo_estimate_resolved_summary(&r->est, rs, err) != 0 ||
	    planner_note_replaced(r, pl, err) != 0)
		goto out;
	rc = 0;
out:
	mo_resolved_free(rs);
	mo_diags_free(d);
	return rc;
}

static int planner_fits_estimate(const mo_estimate *e, uint64_t budget)
{
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++)
		if (mo_estimate_stage_get(e, s)->peak_bytes > budget)
			return 0;
	return 1;
}

static int planner_check_input(const mo_planner_input *in, mo_error *err)
{
	if (!in || !in->model) {
		error_set(err, MO_ERR_USAGE, 0, 0, "the planner needs a model");
		return -1;
	}
	if (in->start && !in->start->doc) {
		error_set(err, MO_ERR_USAGE, 0, 0, "the starting config is not parsed");
		return -1;
	}
	return 0;
}

/* The plan that changes nothing (the starting config as it is) when it
 * fits: no plan has less overhead, and none changes less. */
static int planner_unchanged(const mo_planner_problem *pl, uint64_t budget,
				mo_planner_solution *sol)
{
	sol->prefetch = pl->fixed_prefetch ? pl->fixed_prefetch : 1;
	for (uint64_t id = 0; id < pl->n_layers; id++)
		sol->what[id] = pl->fixed[id] ? MO_CHOICE_FIXED : 0;
	if (planner_predict(pl, sol->what, sol->prefetch, sol->stage_peak) != 0)
		return -1;
	sol->peak = 0;
	for (size_t s = 0; s < pl->base->n_stages; s++)
		sol->peak = sol->stage_peak[s] > sol->peak ? sol->stage_peak[s] : sol->peak;
	sol->feasible = sol->peak <= budget;
	sol->exact = true;
	sol->cost = 0;
	for (uint64_t id = 0; id < pl->n_layers; id++) {
		mo_planner_choice c;
		if (planner_choice_of(pl, id, sol->prefetch, sol->what[id], &c) == 0)
			sol->cost += c.cost;
	}
	return 0;
}

/* Whether every layer's choice in what is one the problem offers (the
 * mechanisms allowed, the starting config's layers kept). */
static bool planner_offered(const mo_planner_problem *pl, const unsigned *what, int64_t pf)
{
	mo_planner_choice c;
	for (uint64_t id = 0; id < pl->n_layers; id++)
		if ((what[id] == MO_CHOICE_FIXED && !pl->fixed[id]) ||
		    planner_choice_of(pl, id, pf, what[id], &c) != 0)
			return false;
	return true;
}

/* Whether the staged step st is a better answer than the searched plan:
 * it fits and the plan does not, or it costs less; or neither fits and its
 * peak is lower. */
static bool planner_staged_better(const mo_planner_result *r, const mo_planner_step *st)
{
	if (r->fits && r->exact)
		return false;
	if (st->fits)
		return !r->fits || st->overhead_percent < mo_estimate_overhead_percent(r->est);
	return !r->fits && st->peak_bytes < mo_estimate_peak_bytes(r->est);
}

/* The best staged step (sol: its choices) in place of the searched plan
 * when it is better (planner_staged_better). Both are estimated; the
 * search's peak is a safe bound, not a tight one, wherever it is not exact
 * (an interleaved pipeline prices every chunk in flight at the most any
 * keeps): a plan the estimate fits by a little it may not see. The answer is
 * the cheapest plan that fits, or the least peak, among the mechanisms
 * allowed. */
static int planner_adopt_staged(mo_planner_result *r, const mo_planner_problem *pl, long step,
				mo_planner_solution *sol, mo_error *err)
{
	if (step < 0 || !planner_staged_better(r, &r->pub_steps[step]) ||
	    !planner_offered(pl, sol->what, sol->prefetch))
		return 0;
	mo_config_free(r->cfg);
	mo_estimate_free(r->est);
	free(r->yaml);
	r->cfg = NULL;
	r->est = NULL;
	r->yaml = NULL;
	if (planner_predict(pl, sol->what, sol->prefetch, sol->stage_peak) != 0) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	r->predicted_peak = 0;
	for (size_t s = 0; s < pl->base->n_stages; s++)
		r->predicted_peak =
		    sol->stage_peak[s] > r->predicted_peak ? sol->stage_peak[s] : r->predicted_peak;
	r->exact = 0;
	r->from_staged = step;
	if (planner_realise(r, pl, sol, err) != 0)
		return -1;
	r->fits = planner_fits_estimate(r->est, r->budget);
	return 0;
}

/* Searches and realises; the model copy r->model must be set. */
static int planner_build(mo_planner_result *r, const mo_planner_input *in,
			    const mo_planner_options *opts, mo_error *err)
{
	mo_planner_problem pl = {0};
	mo_planner_solution best = {0}, staged = {0};
	int rc = -1;
	if (planner_problem_init(&pl, r->model, in->start, in->allow, err) != 0)
		goto out;
	if (planner_solution_alloc(&best, &pl) != 0 || planner_solution_alloc(&staged, &pl) != 0)
		goto nomem;
	pl.max_prefetch = in->max_prefetch > 0 ? in->max_prefetch : 0;
	pl.sort_fronts = opts && opts->sort_fronts;
	r->budget = in->budget ? in->budget : mo_estimate_capacity_bytes(pl.base);
	if (planner_unchanged(&pl, r->budget, &best) != 0)
		goto nomem;
	if ((!best.feasible || best.cost > MO_PLANNER_FREE_SECONDS) &&
	    planner_search(&pl, r->budget, &best) != 0)
		goto nomem;
	if (!best.feasible && !(opts && opts->no_min_peak) && planner_min_peak(&pl, &best) != 0)
		goto nomem;
	r->exact = best.exact;
	r->predicted_peak = best.peak;
	if (planner_realise(r, &pl, &best, err) != 0)
		goto out;
	r->fits = planner_fits_estimate(r->est, r->budget);
	long step = -1;
	bool unfit_only = opts && opts->staged_if_unfit;
	if (!in->no_staged && !(unfit_only && r->fits)) {
		if (planner_run_staged(r, &pl, staged.what, &staged.prefetch, &step, err) != 0)
			goto out;
		if (unfit_only && step >= 0 && !r->pub_steps[step].fits)
			step = -1; /* a step that does not fit either is not the answer */
		if (planner_adopt_staged(r, &pl, step, &staged, err) != 0)
			goto out;
	}
	rc = 0;
	goto out;
nomem:
	if (err && err->code == MO_OK && !budget_error(err))
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory planning");
out:
	planner_solution_free(&best);
	planner_solution_free(&staged);
	planner_problem_fini(&pl);
	return rc;
}

int planner_run_model(mo_planner_result **out, const mo_planner_input *in, mo_model *owned,
			 const mo_planner_options *opts, mo_error *err)
{
	mo_planner_result *r = calloc(1, sizeof(*r));
	if (!r) {
		mo_model_free(owned);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	r->owned_model = owned;
	r->model = owned ? owned : in->model;
	r->answer = -1;
	r->from_staged = -1;
	if (planner_build(r, in, opts, err) != 0) {
		mo_planner_result_free(r);
		return -1;
	}
	r->model = r->owned_model; /* the result does not borrow the caller's model */
	*out = r;
	return 0;
}

int mo_planner_run(mo_planner_result **out, const mo_planner_input *in, mo_error *err)
{
	return planner_run_opts(out, in, NULL, err);
}

int planner_run_opts(mo_planner_result **out, const mo_planner_input *in,
			const mo_planner_options *opts, mo_error *err)
{
	mo_error dummy;
	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (!out) {
		error_set(err, MO_ERR_USAGE, 0, 0, "no result pointer");
		return -1;
	}
	*out = NULL;
	if (planner_check_input(in, err) != 0)
		return -1;
	return planner_run_model(out, in, NULL, opts, err);
}

void mo_planner_result_free(mo_planner_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_steps; i++) {
		free(r->steps[i].label);
		free(r->steps[i].yaml);
	}
	free(r->steps);
	free(r->pub_steps);
	free(r->yaml);
	mo_estimate_free(r->est);
	mo_config_free(r->cfg);
	mo_model_free(r->owned_model);
	free(r);
}

/* ---- accessors ------------------------------------------------------------------ */

MO_ACCESSOR(int, mo_planner_fits, mo_planner_result, fits)
MO_ACCESSOR(int, mo_planner_exact, mo_planner_result, exact)
MO_ACCESSOR(uint64_t, mo_planner_budget, mo_planner_result, budget)
MO_ACCESSOR(uint64_t, mo_planner_predicted_peak, mo_planner_result, predicted_peak)
MO_ACCESSOR(const char *, mo_planner_yaml, mo_planner_result, yaml)
MO_ACCESSOR(const mo_config *, mo_planner_config, mo_planner_result, cfg)
MO_ACCESSOR(const mo_estimate *, mo_planner_estimate, mo_planner_result, est)
MO_ACCESSOR(size_t, mo_planner_staged_count, mo_planner_result, n_steps)

const mo_planner_step *mo_planner_staged_get(const mo_planner_result *r, size_t i)
{
	return r && i < r->n_steps ? &r->pub_steps[i] : NULL;
}

long mo_planner_from_staged(const mo_planner_result *r)
{
	return r ? r->from_staged : -1;
}

long mo_planner_staged_answer(const mo_planner_result *r)
{
	return r ? r->answer : -1;
}
