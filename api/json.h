/* The JSON shapes of docs/api.md, shared by the CLI's --json and the HTTP API. */
#ifndef MEMOPT_API_JSON_H
#define MEMOPT_API_JSON_H

#include <jansson.h>
#include <memopt/memopt.h>

/* {"valid", "errors": [D...], "warnings": [D...]},
 * D = {"code","message","line","column","path","file"?,"hint"?}. New ref. */
json_t *mo_json_diags(const mo_diags *d);
/* One diagnostic object. New ref. */
json_t *mo_json_diag(const mo_diag *d);
/* {"layers": [{"layer","type","actions":[{"path","action","rule":{...}}]}]}.
 * With all_paths, every path's effective action is listed. New ref. */
json_t *mo_json_plan(const mo_plan *p, const mo_model *m, int all_paths);
/* Runs of consecutive layers with the same type and actions, as
 * {first, last, type, mtp, actions}: an expand answer sized by what it
 * says, not by the layer count (100,000 identical layers are one). */
json_t *mo_json_plan_segments(const mo_plan *p, const mo_model *m);
/* A lower bound on the bytes of mo_json_plan's text, to refuse a listing
 * over the answer cap before building it. */
size_t mo_json_plan_bytes(const mo_plan *p, const mo_model *m, int all_paths);
/* {"presets": [{"name","description"}...]}. New ref. */
json_t *mo_json_presets(void);
/* The estimate: {"peak_bytes", "reserved_peak_bytes",
 * "capacity_bytes", "framework", "stages": [...], "layers": [...],
 * "overhead_percent", "cost", "timeline_truncated"}; with_timeline adds each
 * stage's "timeline": [{"event", "total_bytes", "bytes": {bucket: n}}]. New
 * ref. */
json_t *mo_json_estimate(const mo_estimate *e, int with_timeline);
/* The parts of an estimate answer beyond its summary (peaks, capacity,
 * stages without their timelines, cost). */
#define MO_JSON_EST_LAYERS 1u   /* "layers": per-layer figures */
#define MO_JSON_EST_TIMELINE 2u /* each stage's "timeline" */
#define MO_JSON_EST_ACCURACY 4u /* "accuracy" with each measured run */
#define MO_JSON_EST_ALL (MO_JSON_EST_LAYERS | MO_JSON_EST_TIMELINE | MO_JSON_EST_ACCURACY)
/* The estimate with the summary and the parts asked for; "detail" lists
 * them (["layers", "timeline"], [] for the summary). New ref. */
json_t *mo_json_estimate_parts(const mo_estimate *e, unsigned parts);
/* How well the estimate's rules did on measured runs (api/accuracy.tsv,
 * tools/accuracy_table.py): {"rules", "note", "runs": [{"run", "set",
 * "measured_mib", "estimated_mib", "error_percent", "source"}...],
 * "median_abs_error_percent", "max_abs_error_percent", "worst_run"}; no
 * runs when the table has none for these rules. New ref. */
json_t *mo_json_accuracy(const mo_estimate *e);
/* The same with "run_count" and, when with_runs is 0, without "runs" (a
 * summary answer: the table's figures without its rows). New ref. */
json_t *mo_json_accuracy_parts(const mo_estimate *e, int with_runs);
/* A floor on the bytes of the timelines' JSON (every event at least as
 * long as one with an empty name and zero bytes; SIZE_MAX past size_t):
 * an answer certainly over the cap is refused before its tree is built
 * (a 262,144-event timeline's tree took some 550 MB). */
size_t mo_json_estimate_timeline_floor(const mo_estimate *e);
/* The least the per-layer part of an estimate's JSON takes (layers x the
 * text of a layer of zeros): a floor to refuse it before it is built. */
size_t mo_json_estimate_layers_floor(const mo_estimate *e);
/* The values the model import filled in (mo_model_assumed):
 * [{"path", "value", "source"}...], [] for none. New ref. */
json_t *mo_json_assumed(const mo_model *m);
/* {model, from_config} of a training YAML's run read over the model given;
 * NULL when the model priced is all the model's own. */
json_t *mo_json_run(const mo_model *m);
/* The planner's result: {"config": YAML, "fits", "exact", "budget_bytes",
 * "predicted_peak_bytes", "overhead_percent", "estimate": {as mo_json_estimate,
 * no timeline}, "staged": {"steps": [{"label", "config", "peak_bytes",
 * "overhead_percent", "fits"}], "answer": index|null, "overhead_percent"}}.
 * New ref. */
json_t *mo_json_planner(const mo_planner_result *r);
/* The size answer: {"layouts": [L...], "rejected": {reason: count},
 * "accepted", "estimated", "planned", "complete", "smallest_devices"},
 * L = {"parallel": {the model file's parallel keys}, "training":
 * {"micro_batch_size", "micro_batch_num"}, "peak_bytes", "budget_bytes",
 * "step_seconds", "tokens_per_second_per_device", "fits", "pareto",
 * "plan", "config": the three sections, "model": the model file,
 * "megatron_args"? (framework pytorch)}. New ref. */
json_t *mo_json_size(const mo_size_result *r);
json_t *mo_json_size_layout(const mo_size_layout *l);

#endif
