/* model_copy (model/model.c), the planner's copy of a model: every
 * field and what the model modules keep beside them survive the original
 * being freed (the copy owns its strings, stage lists and layouts), the
 * copy estimates as the original does, and it derives as the original
 * when the device count changes (the set-by-file flags came along). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

/* A MindSpore Transformers r1.7.0 graph-mode training YAML (see
 * tests/data/mindformers for its source): a model_type whose published
 * defaults fill fields the file leaves out (mo_model_assumed). */
#define GRAPH_MODE_FILE "tests/data/mindformers/r1.7.0/pretrain_mixtral-8x7b.yaml"

/* Stage lists, a custom device, a global batch (micro_batch_num derived),
 * MLA and MoE: the fields that live in the model's arena or its ext. */
static const char model_text[] =
	"model:\n  num_layers: 8\n  hidden_size: 1024\n  num_attention_heads: 8\n"
	"  multi_latent_attention: true\n  num_moe_experts: 4\n  moe_router_topk: 2\n"
	"  first_k_dense_replace: 1\n  normalization: LayerNorm\n  hidden_act: gelu\n"
	"training:\n  micro_batch_size: 2\n  global_batch_size: 64\n  optimizer: muon\n"
	"parallel:\n  data_parallel_shard: -1\n  pipeline_parallel: 2\n"
	"  pipeline_parallel_layers_per_stage: [[0-2, 3], [4-7]]\n"
	"device: {memory_gib: 32, tflops: 100.5, host_bandwidth_gbs: 20, reserved_gib: 1.5,\n"
	"  collective_bandwidth_gbs: 50, comm_buffer_mib: 7, fragmentation: 0.05}\n";

static mo_model *load(void)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, model_text, strlen(model_text), "copy-me", NULL, NULL),
			 0);
	mo_diags_free(d);
	return m;
}

static void test_copy_outlives_original(void **state)
{
	(void)state;
	mo_model *m = load();
	mo_model_set_devices(m, 4);
	char *yaml = mo_model_to_yaml(m), *json = mo_model_to_json(m);
	mo_estimate *e = NULL;
	assert_int_equal(mo_estimate_run(&e, NULL, m, NULL), 0);
	mo_model *c = model_copy(m);
	assert_non_null(c);
	assert_ptr_not_equal(c->arena, m->arena);
	assert_ptr_not_equal(c->stage_layers, m->stage_layers);
	assert_ptr_not_equal(c->types, m->types);
	assert_int_equal(c->layout_hash, m->layout_hash);
	assert_null(model_resolve_slot(c)->data);
	assert_null(model_estimator_slot(c)->data);
	mo_model_free(m); /* ASan: the copy must read nothing of it */
	assert_string_equal(c->name, "copy-me");
	assert_string_equal(c->normalization, "LayerNorm");
	assert_int_equal(c->micro_batch_num, 16);
	assert_int_equal(c->n_stage_layers, 2);
	assert_int_equal(c->stage_layers[0].r[1].lo, 3);
	char *yaml2 = mo_model_to_yaml(c), *json2 = mo_model_to_json(c);
	assert_string_equal(yaml, yaml2);
	assert_string_equal(json, json2);
	mo_estimate *e2 = NULL;
	assert_int_equal(mo_estimate_run(&e2, NULL, c, NULL), 0);
	assert_int_equal(mo_estimate_peak_bytes(e), mo_estimate_peak_bytes(e2));
	assert_true(mo_estimate_overhead_percent(e) == mo_estimate_overhead_percent(e2));
	mo_estimate_free(e);
	mo_estimate_free(e2);
	free(yaml);
	free(yaml2);
	free(json);
	free(json2);
	mo_model_free(c);
}

/* Data parallel came from the device count (dp_shard -1) and
 * micro_batch_num from the global batch: a new device count re-derives
 * both on the copy exactly as on the original. */
static void test_copy_derives_alike(void **state)
{
	(void)state;
	mo_model *m = load();
	mo_model_set_devices(m, 4);
	mo_model *c = model_copy(m);
	assert_non_null(c);
	mo_model_set_devices(m, 8);
	mo_model_set_devices(c, 8);
	assert_int_equal(c->data_parallel, m->data_parallel);
	assert_int_equal(c->data_parallel, 4);
	assert_int_equal(c->micro_batch_num, m->micro_batch_num);
	assert_int_equal(c->micro_batch_num, 8);
	mo_model_free(m);
	mo_model_free(c);
}

/* What the import noted beside the fields (the type, graph mode, every
 * value it assumed and where from) comes along, owned by the copy. */
static void test_copy_graph_mode(void **state)
{
	(void)state;
	FILE *f = fopen(GRAPH_MODE_FILE, "rb");
	assert_non_null(f);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	mo_diags *d = NULL;
	mo_model *m = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, text, n, GRAPH_MODE_FILE, NULL, NULL), 0);
	assert_true(m->ext->graph_mode);
	assert_true(mo_model_assumed_count(m) > 0);
	mo_model *c = model_copy(m);
	assert_non_null(c);
	assert_true(c->ext->graph_mode);
	assert_string_equal(c->ext->model_type, m->ext->model_type);
	assert_int_equal(mo_model_assumed_count(c), mo_model_assumed_count(m));
	for (size_t i = 0; i < mo_model_assumed_count(m); i++) {
		const char *p1, *v1, *s1, *p2, *v2, *s2;
		assert_int_equal(mo_model_assumed(m, i, &p1, &v1, &s1), 0);
		assert_int_equal(mo_model_assumed(c, i, &p2, &v2, &s2), 0);
		assert_string_equal(p1, p2);
		assert_string_equal(v1, v2);
		assert_string_equal(s1, s2);
		assert_ptr_not_equal(v1, v2);
	}
	char *json = mo_model_to_json(m);
	mo_model_free(m); /* ASan: the copy must read nothing of it */
	char *json2 = mo_model_to_json(c);
	assert_string_equal(json, json2);
	free(json);
	free(json2);
	mo_model_free(c);
	mo_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_outlives_original),
		cmocka_unit_test(test_copy_derives_alike),
		cmocka_unit_test(test_copy_graph_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
