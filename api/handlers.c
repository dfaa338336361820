/* validate, expand, export, migrate, models: JSON in, core, JSON out. */
#include "api_internal.h"
#include "json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One validate run: the request, its diagnostics, config and model. */
typedef struct mo_api_run {
	mo_api_input in;
	mo_diags *diags;
	mo_config *cfg;   /* NULL when the text was not YAML */
	mo_model *model;  /* owned; NULL when none was given or found */
	mo_api_model_ref *ref; /* the cached preset borrowed, or NULL */
	const mo_model *m;/* the model to use: model, or a cached preset */
	/* what validation worked out, handed on to expand and estimate (NULL for the other
	 * routes, whose validation keeps no plan, and for configs with errors) */
	mo_resolved *resolved;
	bool resolve;     /* the route wants the resolution */
	const mo_api_options *opt;
} mo_api_run;

int mo_api_reply_json(mo_api_response *out, json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (!text)
		return mo_api_problem(out, 500, "internal", "could not build the answer");
	out->status = 200;
	out->content_type = "application/json";
	out->body = text;
	out->len = strlen(text);
	return 0;
}

int mo_api_reply_error(mo_api_response *out, const mo_error *err)
{
	int status = 422;
	const char *code = "invalid-request";

	switch (err->code) {
	case MO_ERR_NOMEM:
	case MO_ERR_IO:
	case MO_ERR_INTERNAL:
	case MO_OK:
		status = 500;
		code = "internal";
		break;
	case MO_ERR_LIMIT:
		code = "limit";
		break;
	case MO_ERR_BUDGET:
		code = "work-limit";
		break;
	case MO_ERR_CANCELLED:
		status = 503;
		code = "cancelled";
		break;
	case MO_ERR_MODEL_NEEDED:
		/* the core says what is missing (the device count is its one hard
		 * model-needed error); how to give it in a request is the API's to say, and
		 * the path lets a client name its own control */
		return mo_api_problem_hint(out, status, "model-needed", err->text, err->line,
					   err->column, "give \"devices\" in the request",
					   "parallel.world_size");
	case MO_ERR_USAGE:
	case MO_ERR_INVALID:
		break;
	}
	return mo_api_problem_at(out, status, code, err->text, err->line, err->column);
}

static void mo_api_run_free(mo_api_run *run)
{
	mo_resolved_free(run->resolved);
	mo_model_free(run->model);
	mo_config_free(run->cfg);
	mo_api_model_release(run->ref);
	mo_diags_free(run->diags);
	mo_api_input_free(&run->in);
}

/* A preset from the cache: mo_check with the shared, read-only model. */
static int mo_api_run_cached(mo_api_run *run, mo_api_response *out,
			     const mo_api_options *opt)
{
	mo_error err = {0};
	mo_model *unused = NULL;

	run->m = mo_api_cache_get(opt->models, run->in.preset, run->in.devices,
				  &run->ref, &err);
	if (!run->m)
		return mo_api_reply_error(out, &err), 1;
	mo_input in = {.config = run->in.config, .config_len = run->in.config_len,
		       .config_name = "config", .limits = &opt->limits,
		       .shared_model = run->m};
	if (mo_check_resolved(&run->cfg, &unused, run->resolve ? &run->resolved : NULL, run->diags,
			      &in, &err) != 0)
		return mo_api_reply_error(out, &err), 1;
	return 0;
}

/* Drops what the cached path made (the preset borrowed, the config, its
 * findings), keeping the request. 0, or -1 out of memory. */
static int mo_api_run_uncache(mo_api_run *run)
{
	mo_resolved_free(run->resolved);
	run->resolved = NULL;
	mo_config_free(run->cfg);
	run->cfg = NULL;
	mo_api_model_release(run->ref);
	run->ref = NULL;
	run->m = NULL;
	mo_diags_free(run->diags);
	run->diags = NULL;
	return mo_diags_new(&run->diags);
}

static int mo_api_run_check(mo_api_run *run, mo_api_response *out,
			    const mo_api_options *opt)
{
	mo_error err = {0};
	mo_input in = {0};

	in.config = run->in.config;
	in.config_len = run->in.config_len;
	in.config_name = "config";
	in.preset = run->in.preset;
	in.model = run->in.model_text;
	in.model_len = run->in.model_len;
	in.model_name = "model";
	in.devices = run->in.devices;
	in.limits = &opt->limits;
	if (mo_check_resolved(&run->cfg, &run->model, run->resolve ? &run->resolved : NULL,
			      run->diags, &in, &err) != 0)
		return mo_api_reply_error(out, &err), 1;
	run->m = run->model;
	return 0;
}

/* Reads the request and runs every rule (mo_check, or its sequence with a
 * cached preset). Returns 0 (run->diags holds the findings), or 1 with
 * *out filled. */
static int mo_api_run_validate(mo_api_run *run, mo_api_response *out,
			       const mo_api_request *rq,
			       const mo_api_options *opt, bool resolve)
{
	memset(run, 0, sizeof *run);
	run->opt = opt;
	run->resolve = resolve;
	if (mo_api_input_read(&run->in, out, rq, opt))
		return 1;
	if (mo_diags_new(&run->diags) != 0)
		return mo_api_problem(out, 500, "internal", "out of memory"), 1;
	if (opt->models && run->in.preset) {
		if (mo_api_run_cached(run, out, opt) != 0)
			return 1;
		if (!mo_config_is_training_yaml(run->cfg))
			return 0;
		/* a training YAML may bring its run (parallel_config, ...) to
		 * read over the preset (docs/rules.md, model-replaced): the
		 * shared preset cannot take it, so the request is checked as
		 * the CLI checks it, with a preset of its own */
		if (mo_api_run_uncache(run) != 0)
			return mo_api_problem(out, 500, "internal", "out of memory"), 1;
	}
	return mo_api_run_check(run, out, opt);
}

static int mo_api_run_valid(const mo_api_run *run)
{
	return run->cfg && mo_diags_errors(run->diags) == 0;
}

int mo_api_validate(mo_api_response *out, const mo_api_request *rq,
		    const mo_api_options *opt)
{
	mo_api_run run;
	int rc = 0;

	if (mo_api_run_validate(&run, out, rq, opt, false) == 0)
		rc = mo_api_reply_json(out, mo_json_diags(run.diags));
	mo_api_run_free(&run);
	return rc;
}

/* What an operation adds to the diagnostics of a valid config: its keys
 * (a new reference), or NULL with *out filled. */
typedef json_t *(*mo_api_result_fn)(mo_api_run *run, mo_api_response *out);

typedef struct mo_api_op {
	const char *needs_model; /* names the operation in the 422 a model-less
				    request gets; NULL: no model needed */
	mo_api_result_fn result;
	bool resolves; /* result expands or prices the config: validation hands it on */
	bool shows_run; /* the answer says which run it priced (mo_json_run), valid or not */
} mo_api_op;

static int mo_api_model_needed(mo_api_response *out, const char *op)
{
	char detail[160];

	snprintf(detail, sizeof detail,
		 "%s needs a model: give 'model', or a training YAML that has one", op);
	return mo_api_problem(out, 422, "model-needed", detail);
}

/* Every config operation: validate, answer the diagnostics; for a valid
 * config, merge in what the operation makes. */
static int mo_api_config_op(mo_api_response *out, const mo_api_request *rq,
			    const mo_api_options *opt, const mo_api_op *op)
{
	mo_api_run run;
	int rc = 0;
	json_t *o = NULL, *r = NULL;

	if (mo_api_run_validate(&run, out, rq, opt, op->resolves) != 0)
		goto free_run;
	bool valid = mo_api_run_valid(&run);
	if (valid && op->needs_model && !run.m) {
		mo_api_model_needed(out, op->needs_model);
		goto free_run;
	}
	o = mo_json_diags(run.diags);
	if (!o)
		goto no_memory;
	json_t *priced = op->shows_run && run.m ? mo_json_run(run.m) : NULL;
	if (priced && json_object_set_new(o, "run", priced) != 0)
		goto no_memory;
	if (valid) {
		r = op->result(&run, out);
		if (!r) {
			if (out->body)
				goto free_json;
			goto no_memory;
		}
		if (json_object_update(o, r) != 0)
			goto no_memory;
	}
	rc = mo_api_reply_json(out, o);
	o = NULL;
	goto free_json;
no_memory:
	rc = mo_api_problem(out, 500, "internal", "out of memory");
free_json:
	json_decref(r);
	json_decref(o);
free_run:
	mo_api_run_free(&run);
	return rc;
}

/* Layers listed one by one when per_layer is not given. The web UI's
 * layer strip reads the listing; a model this deep is one it can draw. */
#define MO_API_LAYERS_LISTED 1024
/* At most this many layers listed even when asked: past it the listing
 * is tens of MB saying what the segments say in a few lines. */
#define MO_API_LAYERS_LISTED_MAX 16384

/* The expand answer: segments always; the per-layer listing when asked
 * (per_layer true) or by default up to MO_API_LAYERS_LISTED layers, and
 * refused before it is built when it would pass the answer cap. */
static json_t *mo_api_expand_json(mo_api_run *run, const mo_plan *plan, mo_api_response *out)
{
	size_t layers = mo_plan_layer_count(plan);
	bool listed = run->in.per_layer > 0 ||
		      (run->in.per_layer < 0 && layers <= MO_API_LAYERS_LISTED);
	json_t *o;

	if (listed && layers > MO_API_LAYERS_LISTED_MAX) {
		char detail[160];

		snprintf(detail, sizeof detail,
			 "a per-layer listing of %zu layers is refused (at most %d); the answer "
			 "without per_layer gives the same plan as segments",
			 layers, MO_API_LAYERS_LISTED_MAX);
		mo_api_problem(out, 422, "answer-too-large", detail);
		return NULL;
	}
	if (listed && run->opt->max_answer) {
		size_t bytes = mo_json_plan_bytes(plan, run->m, run->in.all_paths);

		if (bytes > run->opt->max_answer) {
			mo_api_answer_too_large_how(out, bytes, run->opt->max_answer, true,
						    "without per_layer the answer gives the same "
						    "plan as segments");
			return NULL;
		}
	}
	o = listed ? mo_json_plan(plan, run->m, run->in.all_paths)
		   : json_pack("{s:I}", "default_prefetch", (json_int_t)mo_plan_prefetch(plan));
	if (o)
		json_object_set_new(o, "segments", mo_json_plan_segments(plan, run->m));
	return o;
}

static json_t *mo_api_expand_result(mo_api_run *run, mo_api_response *out)
{
	mo_error err = {0};
	mo_plan *plan = NULL;
	if (mo_expand_resolved(&plan, run->resolved, &err) != 0) {
		mo_api_reply_error(out, &err);
		return NULL;
	}
	json_t *p = mo_api_expand_json(run, plan, out);
	mo_plan_free(plan);
	return p;
}

int mo_api_expand(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt)
{
	static const mo_api_op op = {.needs_model = "expand", .result = mo_api_expand_result,
				       .resolves = true};

	return mo_api_config_op(out, rq, opt, &op);
}

/* The checked text itself: a caller that keeps the writer's comments
 * inside the sections (the web UI) downloads what was validated. A whole
 * training YAML priced with a model given apart gets that model's layout
 * in its own keys (mo_export_run): the file downloaded is the run priced. */
static json_t *mo_api_export_as_written(const mo_api_run *run, mo_api_response *out)
{
	mo_error err = {0};
	char *yaml = NULL;
	size_t len = 0;
	int rc = run->m ? mo_export_run(&yaml, &len, run->cfg, run->m, &err) : 1;
	if (rc < 0) {
		mo_api_reply_error(out, &err);
		return NULL;
	}
	json_t *y = rc == 0 ? json_stringn(yaml, len) : json_stringn(run->in.config, run->in.config_len);
	free(yaml);

	if (!y) {
		mo_api_problem(out, 500, "internal", "the config is not UTF-8 text");
		return NULL;
	}
	return json_pack("{s:o}", "yaml", y);
}

static json_t *mo_api_export_result(mo_api_run *run, mo_api_response *out)
{
	mo_error err = {0};
	char *yaml = NULL;
	size_t len = 0;
	if (run->in.as_written)
		return mo_api_export_as_written(run, out);
	if (mo_export(&yaml, &len, run->cfg, &err) != 0) {
		mo_api_reply_error(out, &err);
		return NULL;
	}
	json_t *y = json_stringn(yaml, len);
	free(yaml);
	if (!y) {
		mo_api_problem(out, 500, "internal", "the export is not UTF-8 text");
		return NULL;
	}
	return json_pack("{s:o}", "yaml", y);
}

int mo_api_export(mo_api_response *out, const mo_api_request *rq,
		  const mo_api_options *opt)
{
	static const mo_api_op op = {.needs_model = NULL, .result = mo_api_export_result};

	return mo_api_config_op(out, rq, opt, &op);
}

/* migrate: the file with recompute_config rewritten (mo_migrate). Its
 * no-equivalent warnings join the diagnostics; a refusal (no block, a
 * section already there, a PyNative file) is valid: false with the reason
 * as 'error', as `memopt migrate --json` answers. */
static json_t *mo_api_migrate_result(mo_api_run *run, mo_api_response *out)
{
	mo_error err = {0};
	char *yaml = NULL;
	size_t len = 0;
	if (mo_migrate(&yaml, &len, run->diags, run->cfg, &err) != 0) {
		if (err.code != MO_ERR_INVALID) {
			mo_api_reply_error(out, &err);
			return NULL;
		}
		json_t *r = mo_json_diags(run->diags);
		if (r && (json_object_set_new(r, "valid", json_false()) != 0 ||
			  json_object_set_new(r, "error", json_string(err.text)) != 0)) {
			json_decref(r);
			r = NULL;
		}
		return r;
	}
	json_t *y = json_stringn(yaml, len);
	free(yaml);
	if (!y) {
		mo_api_problem(out, 500, "internal", "the migrated file is not UTF-8 text");
		return NULL;
	}
	json_t *r = mo_json_diags(run->diags);
	if (!r || json_object_set_new(r, "yaml", y) != 0) {
		json_decref(r);
		return NULL;
	}
	return r;
}

int mo_api_migrate(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt)
{
	static const mo_api_op op = {.needs_model = NULL, .result = mo_api_migrate_result};

	return mo_api_config_op(out, rq, opt, &op);
}

/* The estimate's keys (the shape every face shares, timeline included) and the model's
 * assumed values. */
static json_t *mo_api_estimate_result(mo_api_run *run, mo_api_response *out)
{
	mo_error err = {0};
	mo_estimate *e = NULL;
	/* the events are listed only when the answer shows them */
	bool listed = (run->in.detail & MO_JSON_EST_TIMELINE) != 0;
	if ((listed ? mo_estimate_resolved : mo_estimate_resolved_summary)(&e, run->resolved,
									   &err) != 0) {
		mo_api_reply_error(out, &err);
		return NULL;
	}
	size_t floor = (run->in.detail & MO_JSON_EST_TIMELINE) ? mo_json_estimate_timeline_floor(e) : 0;
	if (run->opt->max_answer && floor > run->opt->max_answer) {
		mo_estimate_free(e);
		mo_api_answer_too_large(out, floor, run->opt->max_answer, true);
		return NULL;
	}
	/* the per-layer figures of 100,000 layers: 22 MB built (5 s, 220 MB)
	 * only to be refused */
	floor = (run->in.detail & MO_JSON_EST_LAYERS) ? mo_json_estimate_layers_floor(e) : 0;
	if (run->opt->max_answer && floor > run->opt->max_answer) {
		mo_estimate_free(e);
		mo_api_answer_too_large_how(out, floor, run->opt->max_answer, true,
					    "ask for detail 'summary' (the stages) without 'layers'");
		return NULL;
	}
	json_t *j = mo_json_estimate_parts(e, run->in.detail);
	if (j)
		json_object_set_new(j, "accuracy",
				    mo_json_accuracy_parts(e, (run->in.detail & MO_JSON_EST_ACCURACY) != 0));
	mo_estimate_free(e);
	if (j)
		json_object_set_new(j, "assumed", mo_json_assumed(run->m));
	return j;
}

int mo_api_estimate(mo_api_response *out, const mo_api_request *rq,
		    const mo_api_options *opt)
{
	static const mo_api_op op = {.needs_model = "estimate",
				       .result = mo_api_estimate_result,
				       .resolves = true,
				       .shows_run = true};

	return mo_api_config_op(out, rq, opt, &op);
}

#define MO_API_ALLOW_WORDS "select, full, exclude, comm, layer_swap, op_swap (or all)"

/* "allow": one comma-separated string, or a list of names (each a string
 * of such names). Every item is checked: none is cut or dropped. 0, or -1
 * with a 422 naming the bad item. */
static int mo_api_plan_allow(mo_planner_input *in, const json_t *a, mo_api_response *out)
{
	char detail[160];
	unsigned bits = 0;

	if (json_is_string(a)) {
		if (mo_planner_parse_allow(&in->allow, json_string_value(a)) == 0)
			return 0;
		return mo_api_problem(out, 422, "invalid-request",
				      "'allow' names " MO_API_ALLOW_WORDS),
		       -1;
	}
	if (!json_is_array(a) || json_array_size(a) == 0)
		return mo_api_problem(out, 422, "invalid-request",
				      "'allow' is a non-empty list of " MO_API_ALLOW_WORDS
				      ", or one comma-separated string"),
		       -1;
	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *v = json_array_get(a, i);
		unsigned one = 0;

		if (!json_is_string(v) || mo_planner_parse_allow(&one, json_string_value(v)) != 0) {
			snprintf(detail, sizeof detail, "'allow' item %zu is %s; the names are %s", i,
				 json_is_string(v) ? "not a mechanism" : "not a string", MO_API_ALLOW_WORDS);
			return mo_api_problem(out, 422, "invalid-request", detail), -1;
		}
		bits |= one;
	}
	in->allow = bits;
	return 0;
}

/* The plan request's own members: "budget" (bytes, or a size string such
 * as "58GiB"; absent: the device capacity) and "allow" (a list of mechanism
 * names, or one comma-separated string). 0, or -1 with *out filled. */
static int mo_api_plan_options(mo_planner_input *in, const json_t *root, mo_api_response *out)
{
	const json_t *b = root ? json_object_get(root, "budget") : NULL;
	const json_t *a = root ? json_object_get(root, "allow") : NULL;
	if (b && json_is_integer(b) && json_integer_value(b) > 0)
		in->budget = (uint64_t)json_integer_value(b);
	else if (b && json_is_string(b) && mo_parse_size(&in->budget, json_string_value(b)) == 0 &&
		 in->budget > 0)
		;
	else if (b && !json_is_null(b))
		return mo_api_problem(out, 422, "invalid-request",
				      "'budget' must be a positive byte count or a size such as \"58GiB\""),
		       -1;
	if (!a || json_is_null(a))
		return 0;
	return mo_api_plan_allow(in, a, out);
}

/* The planner's answer for the config (its settings kept) and model. */
static json_t *mo_api_plan_result(mo_api_run *run, mo_api_response *out)
{
	mo_error err = {0};
	mo_planner_input in = {.model = run->m, .start = run->cfg};
	mo_planner_result *r = NULL;
	if (mo_api_plan_options(&in, run->in.root, out) != 0)
		return NULL;
	if (mo_planner_run(&r, &in, &err) != 0) {
		mo_api_reply_error(out, &err);
		return NULL;
	}
	/* the plan's estimate lists every layer, and its YAML names them:
	 * refused before it is built when that alone is over the cap */
	size_t floor = mo_json_estimate_layers_floor(mo_planner_estimate(r));
	const char *yaml = mo_planner_yaml(r);
	if (yaml && __builtin_add_overflow(floor, strlen(yaml), &floor))
		floor = SIZE_MAX;
	if (run->opt->max_answer && floor > run->opt->max_answer) {
		mo_planner_result_free(r);
		mo_api_answer_too_large_how(out, floor, run->opt->max_answer, true,
					    "the plan's estimate lists every layer; plan fewer "
					    "layers, or estimate the plan with detail 'summary'");
		return NULL;
	}
	json_t *j = mo_json_planner(r);
	mo_planner_result_free(r);
	return j;
}

int mo_api_plan(mo_api_response *out, const mo_api_request *rq, const mo_api_options *opt)
{
	static const mo_api_op op = {.needs_model = "plan", .result = mo_api_plan_result};

	return mo_api_config_op(out, rq, opt, &op);
}

int mo_api_not_implemented(mo_api_response *out, const mo_api_request *rq,
			   const mo_api_options *opt)
{
	(void)rq;
	(void)opt;
	return mo_api_problem(out, 501, "not-implemented",
			      "the planner is not available in this build yet");
}

int mo_api_healthz(mo_api_response *out, const mo_api_request *rq,
		   const mo_api_options *opt)
{
	(void)rq;
	(void)opt;
	return mo_api_reply_json(out, json_pack("{s:s, s:s}", "status", "ok",
						"version", MO_VERSION_STRING));
}
