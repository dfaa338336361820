/* The planner's answer, one writer shared by `memopt plan --json` and
 * POST /api/v1/plan. */
#include "json.h"

static json_t *mo_plan_staged_json(const mo_planner_result *r)
{
	json_t *steps = json_array();
	long ans = mo_planner_staged_answer(r);
	for (size_t i = 0; steps && i < mo_planner_staged_count(r); i++) {
		const mo_planner_step *st = mo_planner_staged_get(r, i);
		json_array_append_new(steps, json_pack("{s:s, s:s, s:I, s:f, s:b}", "label",
						       st->label, "config", st->yaml, "peak_bytes",
						       (json_int_t)st->peak_bytes, "overhead_percent",
						       st->overhead_percent, "fits", st->fits));
	}
	json_t *ov = ans >= 0 ? json_real(mo_planner_staged_get(r, (size_t)ans)->overhead_percent)
			      : json_null();
	long adopted = mo_planner_from_staged(r);
	return json_pack("{s:o, s:o, s:o, s:o}", "steps", steps ? steps : json_array(), "answer",
			 ans >= 0 ? json_integer(ans) : json_null(), "overhead_percent", ov,
			 "adopted", adopted >= 0 ? json_integer(adopted) : json_null());
}

json_t *mo_json_planner(const mo_planner_result *r)
{
	const mo_estimate *e = mo_planner_estimate(r);
	return json_pack("{s:s, s:b, s:b, s:I, s:I, s:f, s:o, s:o}", "config", mo_planner_yaml(r),
			 "fits", mo_planner_fits(r), "exact", mo_planner_exact(r), "budget_bytes",
			 (json_int_t)mo_planner_budget(r), "predicted_peak_bytes",
			 (json_int_t)mo_planner_predicted_peak(r), "overhead_percent",
			 mo_estimate_overhead_percent(e), "estimate", mo_json_estimate(e, 0),
			 "staged", mo_plan_staged_json(r));
}

