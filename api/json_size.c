/* The size answer (memopt size --json, POST /api/v1/size). */
#include "json.h"

static json_t *mo_json_size_parallel(const mo_size_layout *l)
{
	json_t *p = json_object();
	json_object_set_new(p, "world_size", json_integer(l->devices));
	json_object_set_new(p, "data_parallel", json_integer(l->data_parallel));
	json_object_set_new(p, "data_parallel_shard", json_integer(l->data_parallel_shard));
	json_object_set_new(p, "tensor_parallel", json_integer(l->tensor_parallel));
	json_object_set_new(p, "pipeline_parallel", json_integer(l->pipeline_parallel));
	json_object_set_new(p, "virtual_pipeline", json_integer(l->virtual_pipeline));
	json_object_set_new(p, "expert_parallel", json_integer(l->expert_parallel));
	if (l->expert_tensor_parallel > 0)
		json_object_set_new(p, "expert_tensor_parallel",
				    json_integer(l->expert_tensor_parallel));
	json_object_set_new(p, "context_parallel", json_integer(l->context_parallel));
	json_object_set_new(p, "sequence_parallel", json_boolean(l->sequence_parallel));
	json_object_set_new(p, "distributed_optimizer", json_boolean(l->distributed_optimizer));
	return p;
}

json_t *mo_json_size_layout(const mo_size_layout *l)
{
	json_t *o = json_object();
	json_object_set_new(o, "parallel", mo_json_size_parallel(l));
	json_t *t = json_object();
	json_object_set_new(t, "micro_batch_size", json_integer(l->micro_batch_size));
	json_object_set_new(t, "micro_batch_num", json_integer(l->micro_batch_num));
	json_object_set_new(o, "training", t);
	json_object_set_new(o, "peak_bytes", json_integer((json_int_t)l->peak_bytes));
	json_object_set_new(o, "budget_bytes", json_integer((json_int_t)l->budget_bytes));
	json_object_set_new(o, "step_seconds", json_real(l->step_seconds));
	json_object_set_new(o, "tokens_per_second_per_device",
			    json_real(l->tokens_per_second_per_device));
	json_object_set_new(o, "mfu", json_real(l->mfu));
	json_object_set_new(o, "fits", json_boolean(l->fits));
	json_object_set_new(o, "pareto", json_boolean(l->pareto));
	json_object_set_new(o, "plan", json_string(l->plan));
	json_object_set_new(o, "config", json_string(l->config_yaml));
	json_object_set_new(o, "model", json_string(l->model_yaml));
	if (l->megatron_args)
		json_object_set_new(o, "megatron_args", json_string(l->megatron_args));
	if (l->megatron_plan_note)
		json_object_set_new(o, "megatron_plan_note", json_string(l->megatron_plan_note));
	return o;
}

/* One group of rejected layouts: the rule's code, its words, its
 * parameters by name, how many. */
static json_t *mo_json_size_rejection(const mo_size_rejection *g)
{
	json_t *o = json_object(), *params = json_object();
	json_object_set_new(o, "code", json_string(g->code_name));
	json_object_set_new(o, "reason", json_string(g->text));
	for (size_t k = 0; k < g->n_params && k < 3; k++)
		json_object_set_new(params, g->param_names[k], json_integer(g->params[k]));
	json_object_set_new(o, "params", params);
	if (g->field)
		json_object_set_new(o, "field", json_string(g->field));
	json_object_set_new(o, "count", json_integer((json_int_t)g->count));
	return o;
}

json_t *mo_json_size(const mo_size_result *r)
{
	json_t *root = json_object(), *list = json_array(), *rej = json_object();
	json_t *groups = json_array();
	for (size_t i = 0; i < mo_size_count(r); i++)
		json_array_append_new(list, mo_json_size_layout(mo_size_get(r, i)));
	for (size_t i = 0; i < mo_size_rejected_count(r); i++) {
		const mo_size_rejection *g = mo_size_rejected_at(r, i);
		if (!g)
			continue;
		/* `rejected` (reason -> count) as before the codes: each group's
		 * words are its own, so no two groups share a key */
		json_object_set_new(rej, g->text, json_integer((json_int_t)g->count));
		json_array_append_new(groups, mo_json_size_rejection(g));
	}
	json_object_set_new(root, "layouts", list);
	json_object_set_new(root, "rejected", rej);
	json_object_set_new(root, "rejections", groups);
	json_object_set_new(root, "accepted", json_integer((json_int_t)mo_size_accepted(r)));
	json_object_set_new(root, "estimated", json_integer((json_int_t)mo_size_estimated(r)));
	json_object_set_new(root, "planned", json_integer((json_int_t)mo_size_planned(r)));
	json_object_set_new(root, "complete", json_boolean(mo_size_complete(r)));
	int64_t smallest = mo_size_smallest_devices(r);
	json_object_set_new(root, "smallest_devices",
			    smallest > 0 ? json_integer(smallest) : json_null());
	return root;
}
