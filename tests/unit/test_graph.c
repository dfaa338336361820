/* Graph-mode files, one behaviour per test: the recompute_config forms as
 * MindSpore Transformers' LayerSetting places them (expected layers worked
 * out by hand from its _alloc_recompute_layer / _check_layer_rule), the
 * legacy-key wording per mode, model-type defaults and the assumed list,
 * unread-key and unmodelled warnings, the early-schema hint. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

struct run {
	mo_diags *d;
	mo_config *c;
	mo_model *m;
};

static void run(struct run *r, const char *text)
{
	mo_error err = {0};
	memset(r, 0, sizeof(*r));
	assert_int_equal(mo_diags_new(&r->d), 0);
	mo_input in = {.config = text, .config_len = strlen(text), .config_name = "t.yaml"};
	assert_int_equal(mo_check(&r->c, &r->m, r->d, &in, &err), 0);
}

static void done(struct run *r)
{
	mo_model_free(r->m);
	mo_config_free(r->c);
	mo_diags_free(r->d);
}

static const mo_diag *find(const struct run *r, const char *code)
{
	for (size_t i = 0; i < mo_diags_count(r->d); i++)
		if (strcmp(mo_diags_get(r->d, i)->code, code) == 0)
			return mo_diags_get(r->d, i);
	return NULL;
}

/* "lo-hi,..." of a layer list */
static const char *text_of(const mo_layers *l)
{
	static char buf[256];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < l->n && o < sizeof buf - 32; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%llu-%llu", i ? "," : "",
				      (unsigned long long)l->r[i].lo, (unsigned long long)l->r[i].hi);
	return buf;
}

/* 8 layers, pipeline_stage 2, pp_interleave_num 2 with interleave on:
 * chunks of 2 layers: (chunk 0: stage 0 = 0-1, stage 1 = 2-3; chunk 1:
 * stage 0 = 4-5, stage 1 = 6-7). */
#define HEAD                                                                                       \
	"context:\n  mode: 0\n"                                                                    \
	"parallel:\n  pipeline_config:\n    pipeline_interleave: True\n"                           \
	"parallel_config:\n  data_parallel: 1\n  model_parallel: 1\n  pipeline_stage: 2\n"         \
	"  micro_batch_num: 4\n"                                                                   \
	"model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 8\n"                      \
	"    hidden_size: 512\n    num_heads: 8\n    pp_interleave_num: 2\n"

static void test_nested_per_chunk(void **state)
{
	(void)state;
	struct run r;
	/* chunk 0: stage 0 one layer (0), stage 1 none; chunk 1: stage 0 two
	 * (4-5), stage 1 one (6) */
	run(&r, HEAD "recompute_config:\n  recompute: [[1, 0], [2, 1]]\n");
	assert_int_equal(mo_diags_errors(r.d), 0);
	assert_int_equal(r.m->virtual_pipeline, 2);
	assert_int_equal(r.c->mode, MO_MODE_FULL);
	assert_string_equal(text_of(&r.c->full), "0-0,4-6");
	done(&r);
}

static void test_per_stage_round_robin(void **state)
{
	(void)state;
	struct run r;
	/* stage 0 gets 3 over its chunks in turn: chunk 0, chunk 1, chunk 0 ->
	 * 0-1 and 4; stage 1 gets 1: chunk 0 -> 2 */
	run(&r, HEAD "recompute_config:\n  recompute: [3, 1]\n");
	assert_int_equal(mo_diags_errors(r.d), 0);
	assert_string_equal(text_of(&r.c->full), "0-2,4-4");
	done(&r);
}

static void test_bool_and_select(void **state)
{
	(void)state;
	struct run r;
	/* select_recompute True: the legacy defaults (feed_forward.mul, the
	 * silu inside w1) on every layer not fully recomputed */
	run(&r, HEAD "recompute_config:\n  recompute: [1, 1]\n  select_recompute: True\n");
	assert_int_equal(mo_diags_errors(r.d), 0);
	assert_int_equal(r.c->select.n, 2);
	assert_string_equal(r.c->select.p[0].regex, "mlp\\.mul");
	assert_string_equal(r.c->select.p[1].regex, "mlp\\.activation_func\\.silu");
	/* full: 0 and 2 (first layer of stage 0 and 1, both in chunk 0) */
	assert_string_equal(text_of(&r.c->full), "0-0,2-2");
	assert_string_equal(text_of(&r.c->select.p[0].layers), "1-1,3-7");
	assert_null(find(&r, "redundant"));
	assert_null(find(&r, "no-match"));
	done(&r);
}

static void test_comm(void **state)
{
	(void)state;
	struct run r;
	/* select_comm_recompute with counts: the default .*\.norm pattern,
	 * i.e. the all-gathers at the module inputs under sequence parallel */
	run(&r, "context:\n  mode: 0\n"
		"parallel_config:\n  model_parallel: 2\n  pipeline_stage: 1\n"
		"  use_seq_parallel: True\n"
		"model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 4\n"
		"    hidden_size: 512\n    num_heads: 8\n"
		"recompute_config:\n  recompute: False\n  select_comm_recompute: [2]\n");
	assert_int_equal(mo_diags_errors(r.d), 0);
	assert_true(r.c->comm_enable);
	assert_int_equal(r.c->comm.n, 1);
	assert_string_equal(r.c->comm.p[0].regex, ".*\\.input\\.allgather");
	assert_string_equal(text_of(&r.c->comm.p[0].layers), "0-1");
	assert_null(find(&r, "no-match"));
	done(&r);
}

static void test_bad_form(void **state)
{
	(void)state;
	struct run r;
	run(&r, HEAD "recompute_config:\n  recompute: [1, 2, 3]\n");
	const mo_diag *g = find(&r, "type");
	assert_non_null(g);
	assert_int_equal(g->severity, MO_SEV_ERROR);
	assert_int_equal(g->line, 19);
	done(&r);
}

static void test_pynative_ignored(void **state)
{
	(void)state;
	struct run r;
	run(&r, "context:\n  mode: 1\nrecompute_config:\n  recompute: True\n");
	const mo_diag *g = find(&r, "legacy-key");
	assert_non_null(g);
	assert_non_null(strstr(g->message, "ignored by PyNative"));
	assert_string_equal(g->path, "recompute_config");
	assert_int_equal(r.c->mode, MO_MODE_NONE);
	done(&r);
}

static void test_graph_wording(void **state)
{
	(void)state;
	struct run r;
	run(&r, HEAD "recompute_config:\n  recompute: True\n");
	const mo_diag *g = find(&r, "legacy-key");
	assert_non_null(g);
	assert_non_null(strstr(g->message, "graph-mode runs"));
	assert_string_equal(text_of(&r.c->full), "0-7");
	done(&r);
}

/* use_legacy: False with a model_type: the fields left out are the
 * configuration class's; mcore MTP layers take the last layer's plan
 * (when the file gives the MTP count: recompute_config is read before the
 * model, without the type's defaults) */
static void test_type_defaults(void **state)
{
	(void)state;
	struct run r;
	run(&r, "use_legacy: False\ncontext:\n  mode: 0\n"
		"model:\n  model_config:\n    model_type: deepseek_v3\n    num_hidden_layers: 4\n"
		"    first_k_dense_replace: 1\n    num_nextn_predict_layers: 1\n"
		"recompute_config:\n  recompute: True\n");
	assert_non_null(r.m);
	assert_int_equal(r.m->num_layers, 4);
	assert_int_equal(r.m->hidden_size, 7168);
	assert_int_equal(r.m->num_moe_experts, 256);
	assert_int_equal(r.m->moe_router_topk, 8);
	assert_int_equal(r.m->moe_ffn_hidden_size, 2048);
	assert_int_equal(r.m->moe_shared_expert_intermediate_size, 2048);
	assert_int_equal(r.m->mtp_num_layers, 1);
	assert_true(r.m->multi_latent_attention);
	/* the MTP layer (4) is recomputed like layer 3 */
	assert_string_equal(text_of(&r.c->full), "0-4");
	bool hidden = false;
	for (size_t i = 0; i < mo_model_assumed_count(r.m); i++) {
		const char *path, *value, *source;
		assert_int_equal(mo_model_assumed(r.m, i, &path, &value, &source), 0);
		if (strcmp(path, "model.hidden_size") == 0) {
			hidden = true;
			assert_string_equal(value, "7168");
			assert_non_null(strstr(source, "configuration_deepseek_v3.py"));
		}
		assert_string_not_equal(path, "model.num_layers"); /* the file gave it */
	}
	assert_true(hidden);
	done(&r);
}

static void test_legacy_ffn_and_heads(void **state)
{
	(void)state;
	struct run r;
	/* Llama-2-70B: 4h = 32768, x 1.31 = 42926, x 2/3 = 28617, up to 256 */
	run(&r, "model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 80\n"
		"    hidden_size: 8192\n    num_heads: 64\n    n_kv_heads: 8\n"
		"    multiple_of: 256\n    ffn_dim_multiplier: 1.3\n    vocab_size: 32000\n");
	assert_int_equal(r.m->ffn_hidden_size, 28672);
	assert_int_equal(r.m->num_attention_heads, 64);
	assert_int_equal(r.m->num_query_groups, 8);
	assert_int_equal(r.m->kv_channels, 128);
	done(&r);
}

static void test_moe_config(void **state)
{
	(void)state;
	struct run r;
	/* Qwen2-57B-A14B: 64 experts of intermediate_size, top 8, shared
	 * 8.0 x 2560 */
	run(&r, "model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 28\n"
		"    hidden_size: 3584\n    intermediate_size: 2560\n    num_heads: 28\n"
		"moe_config:\n  expert_num: 64\n  num_experts_chosen: 8\n"
		"  shared_expert_num: 8.0\n  capacity_factor: 1.1\n  routing_policy: TopkRouterV2\n"
		"parallel_config:\n  expert_parallel: 2\n  data_parallel: 2\n");
	assert_int_equal(r.m->num_moe_experts, 64);
	assert_int_equal(r.m->moe_router_topk, 8);
	assert_int_equal(r.m->moe_ffn_hidden_size, 2560);
	assert_int_equal(r.m->moe_shared_expert_intermediate_size, 20480);
	assert_null(find(&r, "parallel")); /* no false "needs a MoE model" */
	const mo_diag *g = find(&r, "unmodelled");
	assert_non_null(g);
	(void)g;
	bool capacity = false;
	for (size_t i = 0; i < mo_diags_count(r.d); i++) {
		const mo_diag *x = mo_diags_get(r.d, i);
		if (strcmp(x->code, "unmodelled") == 0 && strstr(x->message, "capacity")) {
			capacity = true;
			assert_int_equal(x->line, 12);
			assert_string_equal(x->path, "moe_config.capacity_factor");
		}
	}
	assert_true(capacity);
	done(&r);
}

static void test_unread_and_unmodelled(void **state)
{
	(void)state;
	struct run r;
	run(&r, "model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 4\n"
		"    rms_norm_eps: 1.e-6\n    frobnicate: 3\n    use_sparse_attention: True\n");
	const mo_diag *u = find(&r, "unread-key");
	assert_non_null(u);
	assert_int_equal(u->line, 6);
	assert_int_equal(u->column, 5);
	assert_string_equal(u->path, "model.model_config.frobnicate");
	assert_int_equal(mo_diags_warnings(r.d) >= 2, 1);
	bool dsa = false;
	for (size_t i = 0; i < mo_diags_count(r.d); i++) {
		const mo_diag *x = mo_diags_get(r.d, i);
		dsa |= strcmp(x->code, "unmodelled") == 0 && strstr(x->message, "sparse attention") &&
		       x->line == 7;
		/* rms_norm_eps is known not to matter */
		assert_false(strcmp(x->code, "unread-key") == 0 && x->line == 5);
	}
	assert_true(dsa);
	done(&r);
}

/* ChatGLM2-32k (type ChatGLM32kConfig, MindSpore Transformers v1.0.0):
 * under select_recompute, no_recompute_layers makes every other layer a
 * full recompute and the listed ones none (glm32k_transformer.py 673-677);
 * a ChatGLM2Config file, whose release the file does not say (v1.1.0 does
 * the same, v1.2.0 on ignore the key), is told so and keeps the generic
 * reading. A LlamaConfig file's kv_channels is not the class's: unread. */
static void test_class_specific_keys(void **state)
{
	(void)state;
	struct run r;
	static const char glm[] =
	    "context:\n  mode: 0\n"
	    "parallel_config:\n  data_parallel: 1\n  model_parallel: 1\n  pipeline_stage: 1\n"
	    "model:\n  model_config:\n    type: ChatGLM32kConfig\n    num_layers: 6\n"
	    "    hidden_size: 256\n    num_attention_heads: 4\n"
	    "    no_recompute_layers: [2, 5]\n"
	    "recompute_config:\n  recompute: True\n  select_recompute: True\n";
	run(&r, glm);
	assert_int_equal(mo_diags_errors(r.d), 0);
	assert_string_equal(text_of(&r.c->full), "0-1,3-4");
	assert_int_equal(r.c->select.n, 0);
	assert_null(find(&r, "unread-key"));
	done(&r);

	char v11[sizeof glm + 8];
	const char *t = strstr(glm, "ChatGLM32kConfig");
	snprintf(v11, sizeof v11, "%.*sChatGLM2Config%s", (int)(t - glm), glm,
		 t + strlen("ChatGLM32kConfig"));
	run(&r, v11);
	const mo_diag *u = NULL;
	for (size_t i = 0; i < mo_diags_count(r.d); i++) {
		const mo_diag *x = mo_diags_get(r.d, i);
		if (strcmp(x->code, "unmodelled") == 0 && x->path &&
		    strcmp(x->path, "model.model_config.no_recompute_layers") == 0)
			u = x;
	}
	assert_non_null(u);
	assert_int_equal(u->line, 13); /* the key */
	assert_string_equal(text_of(&r.c->full), "0-5"); /* recompute: True, as before */
	done(&r);

	run(&r, "model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 2\n"
		"    hidden_size: 1024\n    num_heads: 16\n    kv_channels: 16\n");
	u = find(&r, "unread-key");
	assert_non_null(u);
	assert_string_equal(u->path, "model.model_config.kv_channels");
	assert_int_equal(r.m->kv_channels, 64); /* 1024 / 16 */
	done(&r);
}

static void test_early_schema_hint(void **state)
{
	(void)state;
	struct run r;
	run(&r, "recompute:\n  full_recompute: True\n");
	const mo_diag *g = find(&r, "unknown-key");
	assert_non_null(g);
	assert_non_null(g->hint);
	assert_non_null(strstr(g->hint, "mode: full"));
	assert_non_null(strstr(g->hint, "full_recompute_layer"));
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_per_chunk),
		cmocka_unit_test(test_per_stage_round_robin),
		cmocka_unit_test(test_bool_and_select),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_bad_form),
		cmocka_unit_test(test_pynative_ignored),
		cmocka_unit_test(test_graph_wording),
		cmocka_unit_test(test_type_defaults),
		cmocka_unit_test(test_legacy_ffn_and_heads),
		cmocka_unit_test(test_moe_config),
		cmocka_unit_test(test_unread_and_unmodelled),
		cmocka_unit_test(test_early_schema_hint),
		cmocka_unit_test(test_class_specific_keys),
	};
	return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
