/* memopt size: every returned layout re-estimates (its model file and its
 * config, loaded again as a user would) to the peak and step time it was
 * returned with; each Megatron-LM CI run kept in tests/data/megatron is
 * among the feasible layouts of its own device count and batch; the
 * rejection counts follow the enumeration's definition; bad questions are
 * refused and a cancelled search returns its best so far. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"
#include "size/size.h"

static mo_model *load_model(const char *text, const char *name)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, text, strlen(text), name, NULL, &err), 0);
	mo_model_check(m, d);
	if (mo_diags_errors(d))
		fail_msg("%s: %s", name, mo_diags_get(d, 0)->message);
	mo_diags_free(d);
	return m;
}

static mo_size_result *size(const mo_model *m, int64_t devices, int64_t batch, size_t top)
{
	mo_size_input in = {.model = m, .devices = devices, .global_batch = batch, .top = top};
	mo_size_result *r = NULL;
	mo_error err = {0};
	if (mo_size_run(&r, &in, &err) != 0)
		fail_msg("size: %s", err.text);
	assert_true(mo_size_complete(r));
	return r;
}

/* The layout's model file and config, read back and estimated. */
static void check_reestimate(const mo_size_layout *l)
{
	mo_model *m = load_model(l->model_yaml, "layout.yaml");
	mo_diags *d = NULL;
	mo_config *c = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_config_parse(&c, d, l->config_yaml, strlen(l->config_yaml), "plan.yaml",
					 NULL, &err),
			 0);
	assert_int_equal(mo_validate(d, c, m), 0);
	mo_estimate *e = NULL;
	assert_int_equal(mo_estimate_run(&e, c, m, &err), 0);
	assert_int_equal(mo_estimate_peak_bytes(e), l->peak_bytes);
	assert_true(mo_estimate_get_cost(e)->step_seconds == l->step_seconds);
	assert_int_equal(l->fits, l->peak_bytes <= l->budget_bytes);
	mo_estimate_free(e);
	mo_config_free(c);
	mo_diags_free(d);
	mo_model_free(m);
}

static void check_all(const mo_size_result *r)
{
	assert_true(mo_size_count(r) > 0);
	for (size_t i = 0; i < mo_size_count(r); i++) {
		const mo_size_layout *l = mo_size_get(r, i);
		check_reestimate(l);
		if (i == 0)
			continue;
		/* fitting first, each group by step time */
		const mo_size_layout *p = mo_size_get(r, i - 1);
		assert_true(p->fits >= l->fits);
		if (p->fits == l->fits)
			assert_true(p->step_seconds <= l->step_seconds);
	}
}

/* The search estimates every layout on one working model, whose estimator
 * cache rescales the previous layout's graphs under the new dimensions
 * when only their values changed (estimate_cache.c): each layout of a
 * search, estimated that way, gives the report a fresh model (graphs built
 * from the op tables) gives, byte for byte. */
static void test_graph_rescale(void **state)
{
	(void)state;
	static const struct {
		const char *preset;
		int64_t devices, batch;
	} qs[] = {{"dsv3-mini", 16, 32}, {"std-gqa", 16, 32}, {"mixtral-8x7b", 32, 64},
		  {"deepseek-v3", 64, 128}};
	for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
		mo_model *base = NULL;
		assert_int_equal(mo_model_preset(&base, qs[q].preset, NULL), 0);
		mo_size_question sq = {base, qs[q].devices, qs[q].batch, 8};
		mo_size_cands cands = {0};
		mo_size_reasons rej = {0};
		mo_error err = {0};
		assert_int_equal(size_enumerate(&cands, &rej, &sq, &err), 0);
		assert_true(cands.n > 10);
		mo_model *wm = model_copy(base);
		assert_non_null(wm);
		size_t step = cands.n / 150 + 1, compared = 0;
		for (size_t i = 0; i < cands.n; i += step) {
			assert_true(size_apply(wm, &cands.v[i], qs[q].batch, NULL));
			mo_model *fresh = model_copy(wm);
			assert_non_null(fresh);
			mo_estimate *a = NULL, *b = NULL;
			int ra = mo_estimate_run(&a, NULL, wm, &err);
			int rb = mo_estimate_run(&b, NULL, fresh, &err);
			assert_int_equal(ra, rb);
			if (ra == 0) {
				char *ta = mo_estimate_report(a, 1), *tb = mo_estimate_report(b, 1);
				assert_non_null(ta);
				assert_non_null(tb);
				assert_string_equal(ta, tb);
				assert_true(mo_estimate_get_time(a)->step_seconds ==
					    mo_estimate_get_time(b)->step_seconds);
				free(ta);
				free(tb);
				compared++;
			}
			mo_estimate_free(a);
			mo_estimate_free(b);
			mo_model_free(fresh);
		}
		assert_true(compared > 10);
		mo_model_free(wm);
		free(cands.v);
		size_reasons_free(&rej);
		mo_model_free(base);
	}
}

static void test_reestimate_dense(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "llama3-70b", NULL), 0);
	mo_size_result *r = size(m, 64, 64, 10);
	check_all(r);
	assert_true(mo_size_get(r, 0)->fits);
	assert_true(mo_size_get(r, 0)->pareto); /* the fastest is on the front */
	mo_size_result_free(r);
	mo_model_free(m);
}

/* Megatron-LM's accounted splits (--account-for-embedding- / --account-for-
 * loss-in-pipeline-split) and uneven splits (--decoder-first- / --decoder-
 * last-pipeline-num-layers, where PP does not divide the layers) are
 * searched: the CI run that counts both, 6
 * layers over PP 4 x VPP 2 (its recipe, tests/data/megatron/..._account_for_
 * embedding_loss_in_pipeline_split.model_config.yaml), is among them, and
 * every layout, accounted or not, re-estimates from its model file (its
 * per-chunk lists) and config to its peak; under a budget that needs plans,
 * accounted and uneven layouts carry Megatron-LM's block or uniform
 * recompute. */
static void test_reestimate_accounted(void **state)
{
	(void)state;
	char *text = test_read_file(
		"tests/data/megatron/"
		"gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split.yaml",
		NULL);
	mo_model *m = load_model(text, "account_for");
	for (int pass = 0; pass < 2; pass++) {
		mo_size_input in = {.model = m, .devices = 8, .global_batch = 32, .top = SIZE_MAX,
				    .budget = pass ? (uint64_t)3 << 30 : 0};
		mo_size_result *r = NULL;
		mo_error err = {0};
		assert_int_equal(mo_size_run(&r, &in, &err), 0);
		check_all(r);
		size_t own = 0, flagged = 0, uflagged = 0;
		/* the uneven splits of 6 layers over PP 4 (m = 1 or 2 a middle
		 * stage): [3 1 1 1], [1 1 1 3], [2 1 1 2], [1 2 2 1], Megatron-LM
		 * giving the middle stages (6 - first - last) / (4 - given) each
		 * (transformer_block.py:104-137 at d98e8a64); at VPP 2 none (a
		 * stage of 1 or 3 layers) */
		static const char *const uneven[] = {
			"--decoder-first-pipeline-num-layers 3",
			"--decoder-last-pipeline-num-layers 3",
			"--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 2",
			"--decoder-first-pipeline-num-layers 1 --decoder-last-pipeline-num-layers 1"};
		size_t seen[4] = {0};
		for (size_t i = 0; i < mo_size_count(r); i++) {
			const mo_size_layout *l = mo_size_get(r, i);
			const char *a = l->megatron_args;
			bool u = strstr(a, "--decoder-") != NULL;
			if (u) {
				assert_int_equal(l->pipeline_parallel, 4);
				assert_int_equal(l->virtual_pipeline, 1);
				assert_null(strstr(a, "--account-for-"));
				uflagged += strstr(a, "--recompute-method") != NULL;
			}
			for (size_t k = 0; k < 4; k++)
				seen[k] += u && strstr(a, uneven[k]) &&
					   !(k < 2 && strstr(a, k ? "--decoder-first" : "--decoder-last"));
			bool acct = strstr(a, "--account-for-embedding-in-pipeline-split") &&
				    strstr(a, "--account-for-loss-in-pipeline-split");
			own += acct && l->tensor_parallel == 1 && l->pipeline_parallel == 4 &&
			       l->virtual_pipeline == 2 &&
			       strstr(a, "--num-virtual-stages-per-pipeline-rank 2");
			flagged += strstr(a, "--account-for-") && strstr(a, "--recompute-method");
		}
		assert_true(own > 0);
		for (size_t k = 0; k < 4; k++)
			assert_true(seen[k] > 0);
		if (pass) {
			assert_true(flagged > 0);
			assert_true(uflagged > 0);
		}
		mo_size_result_free(r);
	}
	mo_model_free(m);
	free(text);
}

static void test_reestimate_moe(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "mixtral-8x7b", NULL), 0);
	mo_size_result *r = size(m, 16, 32, 10);
	check_all(r);
	mo_size_result_free(r);
	mo_model_free(m);
}

/* ---- the Megatron-LM CI runs --------------------------------------------------- */

static const char *const megatron_runs[] = {
	"gpt3_7b_tp1_pp4_memory_speed",
	"gpt3_7b_tp4_pp1_memory_speed",
	"gpt3_mcore_te_tp1_pp1_uniform_full_recompute",
	"gpt3_mcore_te_tp2_pp1_te_8experts2parallel_dist_optimizer",
	"gpt3_mcore_te_tp2_pp2_cp2",
	"gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed",
};

static int64_t key_int(json_t *root, const char *sect, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(json_object_get(root, sect), key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static bool key_bool(json_t *root, const char *sect, const char *key)
{
	return json_is_true(json_object_get(json_object_get(root, sect), key));
}

static bool same_layout(const mo_size_layout *l, json_t *run)
{
	int64_t tp = key_int(run, "parallel", "tensor_parallel", 1);
	int64_t ep = key_int(run, "parallel", "expert_parallel", 1);
	/* Megatron's expert tensor parallel defaults to TP (arguments.py);
	 * a dense run has none */
	int64_t etp = ep > 1 || key_int(run, "model", "num_moe_experts", 0) > 0
			      ? key_int(run, "parallel", "expert_tensor_parallel", tp)
			      : l->expert_tensor_parallel;
	return l->tensor_parallel == tp &&
	       l->pipeline_parallel == key_int(run, "parallel", "pipeline_parallel", 1) &&
	       l->virtual_pipeline == key_int(run, "parallel", "virtual_pipeline", 1) &&
	       l->context_parallel == key_int(run, "parallel", "context_parallel", 1) &&
	       l->expert_parallel == ep && l->expert_tensor_parallel == etp &&
	       l->data_parallel == key_int(run, "parallel", "data_parallel", 1) &&
	       l->sequence_parallel == key_bool(run, "parallel", "sequence_parallel") &&
	       l->distributed_optimizer == key_bool(run, "parallel", "distributed_optimizer") &&
	       l->micro_batch_size == key_int(run, "training", "micro_batch_size", 1);
}

/* The value model_config.yaml gives a flag ("  --flag: value"), or NULL. */
static const char *mc_value(const char *mc, const char *flag, char *buf, size_t n)
{
	char key[96];
	snprintf(key, sizeof key, "  %s: ", flag);
	const char *at = strstr(mc, key);
	if (!at)
		return NULL;
	at += strlen(key);
	size_t len = strcspn(at, " \n#");
	snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), at);
	return buf;
}

/* Every flag of the layout's Megatron-LM arguments that the run's own
 * model_config.yaml sets has the run's value, and the run's switches
 * (sequence parallel, distributed optimizer) are in the arguments. */
static void check_megatron_args(const char *args, const char *mc)
{
	static const char *const valued[] = {
		"--tensor-model-parallel-size", "--pipeline-model-parallel-size",
		"--context-parallel-size", "--micro-batch-size", "--global-batch-size",
		"--num-layers-per-virtual-pipeline-stage", "--expert-model-parallel-size",
		"--expert-tensor-parallel-size"};
	static const char *const switches[] = {"--sequence-parallel", "--use-distributed-optimizer"};
	assert_non_null(args);
	for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++) {
		char want[64], got[64], key[96];
		snprintf(key, sizeof key, "%s ", valued[i]);
		const char *at = strstr(args, key);
		if (!mc_value(mc, valued[i], want, sizeof want) || !at)
			continue;
		snprintf(got, sizeof got, "%.*s", (int)strcspn(at + strlen(key), " "), at + strlen(key));
		if (strcmp(got, want) != 0)
			fail_msg("%s: %s, the run has %s", valued[i], got, want);
	}
	for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++) {
		char v[16];
		bool run_on = mc_value(mc, switches[i], v, sizeof v) && strcmp(v, "true") == 0;
		if (run_on != (strstr(args, switches[i]) != NULL))
			fail_msg("%s: the run has it %s", switches[i], run_on ? "on" : "off");
	}
}

static void check_megatron_run(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "tests/data/megatron/%s.yaml", name);
	char *text = test_read_file(path, NULL);
	mo_model *m = load_model(text, path);
	char *js = mo_model_to_json(m);
	json_t *run = json_loads(js, 0, NULL);
	assert_non_null(run);
	int64_t devices = key_int(run, "parallel", "world_size", 0);
	int64_t batch = key_int(run, "training", "global_batch_size", 0);
	assert_true(devices > 0 && batch > 0);
	mo_size_result *r = size(m, devices, batch, SIZE_MAX);
	const mo_size_layout *own = NULL;
	for (size_t i = 0; i < mo_size_count(r) && !own; i++)
		if (same_layout(mo_size_get(r, i), run))
			own = mo_size_get(r, i);
	if (!own || !own->fits)
		fail_msg("%s: its own layout is %s", name, own ? "returned but does not fit" : "not returned");
	check_reestimate(own);
	snprintf(path, sizeof path, "tests/data/megatron/%s.model_config.yaml", name);
	char *mc = test_read_file(path, NULL);
	check_megatron_args(own->megatron_args, mc);
	free(mc);
	mo_size_result_free(r);
	json_decref(run);
	free(js);
	mo_model_free(m);
	free(text);
}

static void test_megatron_own_layouts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof megatron_runs / sizeof megatron_runs[0]; i++)
		check_megatron_run(megatron_runs[i]);
}

/* ---- the plan as Megatron-LM recompute flags -------------------------------------- */

/* The integer after `flag ` in args, or -1. */
static int64_t arg_int(const char *args, const char *flag)
{
	char key[96];
	snprintf(key, sizeof key, "%s ", flag);
	const char *at = strstr(args, key);
	return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

/* The layers Megatron-LM recomputes under the flags in args (full
 * granularity; transformer_block.py _checkpointed_forward: uniform 1 every
 * layer, block n the first n of every model chunk), as the plan's estimate
 * must have them; or, without flags, none. */
static void check_recompute_flags(const mo_size_layout *l, int64_t layers, int *with_flags)
{
	bool full = strstr(l->megatron_args, "--recompute-granularity full") != NULL;
	if (l->megatron_plan_note) {
		assert_false(full);
		assert_string_not_equal(l->plan, "none");
		return;
	}
	int64_t chunks = l->pipeline_parallel * l->virtual_pipeline, per = layers / chunks, n = 0;
	if (full) {
		(*with_flags)++;
		n = strstr(l->megatron_args, "--recompute-method uniform") ? per
			: arg_int(l->megatron_args, "--recompute-num-layers");
		assert_true(n >= 1 && n <= per);
	}
	mo_model *m = load_model(l->model_yaml, "layout.yaml");
	mo_config *c = NULL;
	assert_int_equal(mo_config_parse(&c, NULL, l->config_yaml, strlen(l->config_yaml),
					 "plan.yaml", NULL, NULL),
			 0);
	mo_estimate *e = NULL;
	assert_int_equal(mo_estimate_run(&e, c, m, NULL), 0);
	for (int64_t i = 0; i < (int64_t)mo_estimate_layer_count(e); i++) {
		const mo_estimate_layer *x = mo_estimate_layer_get(e, i);
		bool want = i < layers && i % per < n;
		if ((x->recompute_flops > 0) != want || x->swap_bytes > 0)
			fail_msg("layer %lld: recomputed %d, the flags say %d (%s)", (long long)i,
				 x->recompute_flops > 0, want, l->megatron_args);
	}
	mo_estimate_free(e);
	mo_config_free(c);
	mo_model_free(m);
}

/* A Megatron-LM run sized under a budget that needs plans: the layouts are
 * planned with Megatron-LM's block recompute first, so most carry its
 * flags; one where not even every layer fits that way gets the planner's
 * plan and the note; no flags otherwise. */
static void test_megatron_recompute_flags(void **state)
{
	(void)state;
	const char *path = "tests/data/megatron/gpt3_7b_tp1_pp4_memory_speed.yaml";
	char *text = test_read_file(path, NULL);
	mo_model *m = load_model(text, path);
	mo_size_input in = {.model = m, .devices = 8, .global_batch = 8, .top = SIZE_MAX,
			    .budget = 24ull << 30};
	mo_size_result *r = NULL;
	assert_int_equal(mo_size_run(&r, &in, NULL), 0);
	int with_flags = 0, notes = 0;
	for (size_t i = 0; i < mo_size_count(r); i++) {
		const mo_size_layout *l = mo_size_get(r, i);
		notes += l->megatron_plan_note != NULL;
		check_recompute_flags(l, 32, &with_flags);
	}
	fprintf(stderr, "%zu layouts: %d with recompute flags, %d plans without\n",
		mo_size_count(r), with_flags, notes);
	assert_true(with_flags > notes);
	assert_true(notes > 0);
	mo_size_result_free(r);
	mo_model_free(m);
	free(text);
}

/* The flags of whole-layer plans (the planner keeps a starting config that
 * fits as it is): on PP 4 without virtual chunks (8 layers a chunk), the
 * first 2 of each chunk are block 2, every layer uniform 1; a chunk with
 * fewer, or layers not first in their chunk, have no flags. */
static const char *block_flags(mo_model *m, const mo_size_cand *c, const char *cfg_text,
			       char *flags, size_t n)
{
	mo_config *cfg = NULL;
	assert_int_equal(mo_config_parse(&cfg, NULL, cfg_text, strlen(cfg_text), "start.yaml",
					 NULL, NULL),
			 0);
	mo_planner_input pin = {.model = m, .start = cfg, .budget = UINT64_MAX / 4,
				.allow = MO_PLAN_ALLOW_FULL, .no_staged = 1};
	mo_planner_result *pr = NULL;
	assert_int_equal(mo_planner_run(&pr, &pin, NULL), 0);
	const char *note = size_megatron_recompute(pr, c, m, flags, n);
	mo_planner_result_free(pr);
	mo_config_free(cfg);
	return note;
}

static void test_megatron_block_flags(void **state)
{
	(void)state;
	const char *path = "tests/data/megatron/gpt3_7b_tp1_pp4_memory_speed.yaml";
	char *text = test_read_file(path, NULL);
	mo_model *m = load_model(text, path);
	mo_size_cand c = {.n = 8, .tp = 1, .cp = 1, .pp = 4, .vpp = 1, .ep = 1, .etp = 1,
			  .dp = 2, .dps = 1, .mbs = 1, .mbn = 4};
	assert_true(size_apply(m, &c, 8, NULL));
	char flags[160];
	assert_null(block_flags(m, &c,
				"recompute:\n  mode: full\n  full_recompute_layer: [0-1, 8-9, 16-17, "
				"24-25]\n",
				flags, sizeof flags));
	assert_string_equal(flags, " --recompute-granularity full --recompute-method block "
				   "--recompute-num-layers 2");
	assert_null(block_flags(m, &c, "recompute:\n  mode: full\n  full_recompute_layer: [0-31]\n",
				flags, sizeof flags));
	assert_string_equal(flags, " --recompute-granularity full --recompute-method uniform "
				   "--recompute-num-layers 1");
	assert_non_null(block_flags(m, &c,
				    "recompute:\n  mode: full\n  full_recompute_layer: [0-1, 8-9, "
				    "16-17, 24]\n",
				    flags, sizeof flags));
	assert_non_null(block_flags(m, &c,
				    "recompute:\n  mode: full\n  full_recompute_layer: [1, 9, 17, "
				    "25]\n",
				    flags, sizeof flags));
	mo_model_free(m);
	free(text);
}

/* ---- rejections ------------------------------------------------------------------ */

/* The layouts rule code rejected with parameters p0, p1; the group's text
 * must be want when want is given. */
static uint64_t rejected(const mo_size_result *r, mo_size_reason code, int64_t p0, int64_t p1,
			 const char *want)
{
	for (size_t i = 0; i < mo_size_rejected_count(r); i++) {
		const mo_size_rejection *g = mo_size_rejected_at(r, i);
		assert_non_null(g);
		if (g->code != code || g->params[0] != p0 || g->params[1] != p1)
			continue;
		if (want)
			assert_string_equal(g->text, want);
		return g->count;
	}
	return 0;
}

/* std-gqa: 32 heads, 8 KV groups, 8 layers, framework mindspore. On 16
 * devices with 16 a node, TP 16 leaves CP 1, PP 1 (so VPP 1), DP 1, EP 1,
 * and below it the distributed optimizer (2), sequence parallel (2, TP >
 * 1) and the micro-batch sizes dividing 16 / DP = 16 (1, 2, 4, 8, 16):
 * 20 layouts, each cut by the KV groups. */
static void test_rejected_counts(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "std-gqa", NULL), 0);
	mo_size_input in = {.model = m, .devices = 16, .global_batch = 16, .devices_per_node = 16};
	mo_size_result *r = NULL;
	assert_int_equal(mo_size_run(&r, &in, NULL), 0);
	assert_int_equal(rejected(r, MO_SIZE_REJ_TP_KV_GROUPS, 16, 8,
				  "tensor_parallel 16 does not divide the 8 query groups (KV heads)"),
			 20);
	assert_int_equal(rejected(r, MO_SIZE_REJ_TP_NODE, 16, 16, NULL), 0);
	mo_size_result_free(r);
	/* the same with 8 a node: TP 16 is cut by the node first */
	in.devices_per_node = 8;
	assert_int_equal(mo_size_run(&r, &in, NULL), 0);
	assert_int_equal(rejected(r, MO_SIZE_REJ_TP_NODE, 16, 8,
				  "tensor_parallel 16 spans more than a node of 8 devices"),
			 20);
	assert_int_equal(rejected(r, MO_SIZE_REJ_TP_KV_GROUPS, 16, 8, NULL), 0);
	mo_size_result_free(r);
	mo_model_free(m);
}

/* Groups are one rule with the same parameters, counted apart from the
 * same rule with others, and the counts add up to every layout: on 32
 * devices with 32 a node, std-gqa (8 query groups) is cut at TP 16 and TP
 * 32 by the K/V rule, two groups of one code; each names its numbers. */
static void test_rejected_groups(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "std-gqa", NULL), 0);
	mo_size_input in = {.model = m, .devices = 32, .global_batch = 32, .devices_per_node = 32,
			    .top = SIZE_MAX};
	mo_size_result *r = NULL;
	assert_int_equal(mo_size_run(&r, &in, NULL), 0);
	uint64_t tp16 = rejected(r, MO_SIZE_REJ_TP_KV_GROUPS, 16, 8, NULL);
	uint64_t tp32 = rejected(r, MO_SIZE_REJ_TP_KV_GROUPS, 32, 8, NULL);
	assert_true(tp16 > 0 && tp32 > 0 && tp16 != tp32);
	size_t kv = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < mo_size_rejected_count(r); i++) {
		const mo_size_rejection *g = mo_size_rejected_at(r, i);
		total += g->count;
		if (g->code != MO_SIZE_REJ_TP_KV_GROUPS)
			continue;
		kv++;
		assert_string_equal(g->code_name, "tp_kv_groups");
		assert_int_equal(g->n_params, 2);
		assert_string_equal(g->param_names[0], "tensor_parallel");
		assert_string_equal(g->param_names[1], "query_groups");
		/* the old accessor gives the same group */
		const char *why;
		uint64_t n;
		assert_int_equal(mo_size_rejected_get(r, i, &why, &n), 0);
		assert_ptr_equal(why, g->text);
		assert_int_equal(n, g->count);
	}
	assert_int_equal(kv, 2);
	/* every layout is returned (top all), rejected once, or neither when
	 * the framework accepted it and the search kept it */
	assert_true(total + mo_size_count(r) >= mo_size_accepted(r));
	assert_null(mo_size_rejected_at(r, mo_size_rejected_count(r)));
	assert_string_equal(mo_size_reason_name(MO_SIZE_REJ_STATE_BUDGET), "state_budget");
	assert_string_equal(mo_size_reason_name((mo_size_reason)999), "other");
	mo_size_result_free(r);
	mo_model_free(m);
}

/* The model's own `parallel` rule rejects by its codes, one a rule, and
 * groups by the numbers it compared: Mixtral's 8 experts on 16 devices
 * (MindSpore Transformers' sharding over the whole data-parallel group)
 * meet the expert-group rule, EP dividing data_parallel_shard x CP x TP,
 * and a Megatron-LM MoE run's expert TP the rule with EP x ETP. Each group's
 * numbers break the rule they are named for, and no group is the old
 * catch-all. */
static void check_parallel_groups(const mo_size_result *r, mo_size_reason code, size_t n_params)
{
	size_t groups = 0;
	for (size_t i = 0; i < mo_size_rejected_count(r); i++) {
		const mo_size_rejection *g = mo_size_rejected_at(r, i);
		assert_int_not_equal(g->code, MO_SIZE_REJ_PARALLEL_RULE);
		if (g->code != code)
			continue;
		groups++;
		assert_int_equal(g->n_params, n_params);
		assert_string_equal(g->param_names[0], "expert_parallel");
		assert_string_equal(g->param_names[n_params - 1], "dp_cp_tp");
		assert_string_equal(g->field, "parallel.expert_parallel");
		int64_t group = n_params == 3 ? g->params[0] * g->params[1] : g->params[0];
		assert_true(g->params[n_params - 1] % group != 0);
		for (size_t k = 0; k < i; k++) {
			const mo_size_rejection *h = mo_size_rejected_at(r, k);
			assert_false(h->code == g->code &&
				     !memcmp(h->params, g->params, sizeof g->params));
		}
	}
	assert_true(groups >= 2);
}

static void test_rejected_parallel_codes(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "mixtral-8x7b", NULL), 0);
	mo_size_result *r = size(m, 64, 256, 3);
	check_parallel_groups(r, MO_SIZE_REJ_EP_GROUPS, 2);
	assert_string_equal(mo_size_reason_name(MO_SIZE_REJ_EP_GROUPS), "ep_groups");
	mo_size_result_free(r);
	mo_model_free(m);
	char *text = test_read_file(
		"tests/data/megatron/gpt3_moe_mcore_te_tp4_ep2_etp2_pp2_scoped_cudagraph.yaml", NULL);
	m = load_model(text, "scoped_cudagraph");
	r = size(m, 8, 32, 3);
	check_parallel_groups(r, MO_SIZE_REJ_EP_ETP_GROUPS, 3);
	assert_string_equal(mo_size_reason_name(MO_SIZE_REJ_EP_ETP_GROUPS), "ep_etp_groups");
	mo_size_result_free(r);
	mo_model_free(m);
	free(text);
}

static void test_bad_questions(void **state)
{
	(void)state;
	mo_model *m = NULL;
	mo_size_result *r = NULL;
	mo_error err = {0};
	assert_int_equal(mo_model_preset(&m, "llama2-7b", NULL), 0);
	mo_size_input in = {.model = m, .devices = 0, .global_batch = 8};
	assert_int_equal(mo_size_run(&r, &in, &err), -1);
	assert_int_equal(err.code, MO_ERR_USAGE);
	assert_null(r);
	in.devices = 8;
	in.global_batch = 0;
	assert_int_equal(mo_size_run(&r, &in, &err), -1);
	in.global_batch = 8;
	in.devices_max = 4; /* a range that ends below its start */
	assert_int_equal(mo_size_run(&r, &in, &err), -1);
	in.devices_max = 0;
	in.model = NULL;
	assert_int_equal(mo_size_run(&r, &in, &err), -1);
	mo_model_free(m);
}

/* A base written by hand (an anchor, comments, a flow list that aliases
 * the anchor, a recompute_config): for each of the first layouts of
 * llama2-7b on 8 devices, the rewritten file is exactly the base with the
 * layout's values in place, the keys it lacks added under their section
 * and the recompute_config block replaced by the sections. */
static const char base_text[] =
	"# a training file\n"
	"runner_config:\n"
	"  batch_size: 1  # per device\n"
	"parallel_config:\n"
	"  data_parallel: &dp 8  # the alias below follows it\n"
	"  model_parallel: 1\n"
	"  pipeline_stage: 1\n"
	"  micro_batch_num: 1\n"
	"  use_seq_parallel: False\n"
	"  context_parallel: 1\n"
	"dataset_strategy: [[*dp, 1]]\n"
	"parallel:\n"
	"  enable_parallel_optimizer: False\n"
	"  pipeline_config:\n"
	"    pipeline_interleave: False\n"
	"model:\n"
	"  model_config:\n"
	"    num_layers: 32\n"
	"recompute_config:\n"
	"  recompute: False\n"
	"# the end\n";

static void expected_base(char *out, size_t n, const mo_size_layout *l, const char *sections)
{
	char ga[64] = "", off[64] = "", vpp[64] = "";
	if (l->pipeline_parallel == 1 && l->micro_batch_num > 1)
		snprintf(ga, sizeof ga, "\n  gradient_accumulation_steps: %lld",
			 (long long)l->micro_batch_num);
	if (l->virtual_pipeline > 1)
		snprintf(vpp, sizeof vpp, "\n    pp_interleave_num: %lld",
			 (long long)l->virtual_pipeline);
	assert_int_equal(32 % (l->pipeline_parallel * l->virtual_pipeline), 0); /* no offset */
	snprintf(out, n,
		 "# a training file\n"
		 "runner_config:\n"
		 "  batch_size: %lld  # per device%s\n"
		 "parallel_config:\n"
		 "  data_parallel: &dp %lld  # the alias below follows it\n"
		 "  model_parallel: %lld\n"
		 "  pipeline_stage: %lld\n"
		 "  micro_batch_num: %lld\n"
		 "  use_seq_parallel: %s\n"
		 "  context_parallel: %lld\n"
		 "dataset_strategy: [[*dp, 1]]\n"
		 "parallel:\n"
		 "  enable_parallel_optimizer: %s\n"
		 "  pipeline_config:\n"
		 "    pipeline_interleave: %s\n"
		 "model:\n"
		 "  model_config:\n"
		 "    num_layers: 32%s%s\n"
		 "%s"
		 "# the end\n",
		 (long long)l->micro_batch_size, ga, (long long)l->data_parallel,
		 (long long)l->tensor_parallel, (long long)l->pipeline_parallel,
		 (long long)(l->pipeline_parallel > 1 ? l->micro_batch_num : 1),
		 l->sequence_parallel ? "True" : "False",
		 (long long)l->context_parallel, l->distributed_optimizer ? "True" : "False",
		 l->virtual_pipeline > 1 ? "True" : "False", off, vpp, sections);
}

static mo_config *parse_base(const char *text)
{
	mo_config *c = NULL;
	assert_int_equal(mo_config_parse(&c, NULL, text, strlen(text), "base.yaml", NULL, NULL), 0);
	return c;
}

static void test_base_bytes(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "llama2-7b", NULL), 0);
	mo_config *base = parse_base(base_text);
	mo_size_input in = {.model = m, .devices = 8, .global_batch = 16, .top = 12, .base = base};
	mo_size_result *r = NULL;
	mo_error err = {0};
	if (mo_size_run(&r, &in, &err) != 0)
		fail_msg("size: %s", err.text);
	assert_true(mo_size_count(r) > 0);
	for (size_t i = 0; i < mo_size_count(r); i++) {
		const mo_size_layout *l = mo_size_get(r, i);
		/* the sections are the text after the model block, before the end */
		const char *at = strstr(l->config_yaml, "    num_layers: 32");
		assert_non_null(at);
		const char *sec = strstr(at, "\nrecompute:"), *end = strstr(at, "# the end\n");
		assert_true(sec && end && sec < end);
		char sections[1024], want[4096];
		snprintf(sections, sizeof sections, "%.*s", (int)(end - sec - 1), sec + 1);
		expected_base(want, sizeof want, l, sections);
		assert_string_equal(l->config_yaml, want);
		assert_null(strstr(sections, "recompute_config"));
	}
	mo_size_result_free(r);
	mo_config_free(base);
	mo_model_free(m);
}

/* Bases the layouts cannot be written into are refused, saying why. */
static void test_base_refused(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
	    {"recompute:\n  mode: None\n", "not a MindSpore Transformers training YAML"},
	    {"{parallel_config: {model_parallel: 1}, runner_config: {batch_size: 1}}\n",
	     "not a MindSpore Transformers training YAML"},
	    {"x: &d 8\nparallel_config:\n  data_parallel: *d\n  model_parallel: 1\n"
	     "  pipeline_stage: 1\n  micro_batch_num: 1\nrunner_config:\n  batch_size: 1\n",
	     "parallel_config.data_parallel is an alias"},
	    {"parallel_config:\n  data_parallel: 8\n  model_parallel: 1\n  pipeline_stage: 1\n"
	     "  micro_batch_num: 1\n",
	     "no block section runner_config to add batch_size to"},
	};
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "llama2-7b", NULL), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		mo_config *base = parse_base(bad[i][0]);
		mo_size_input in = {.model = m, .devices = 8, .global_batch = 16, .top = 2,
				    .base = base};
		mo_size_result *r = NULL;
		mo_error err = {0};
		assert_int_equal(mo_size_run(&r, &in, &err), -1);
		assert_null(r);
		if (!strstr(err.text, bad[i][1]))
			fail_msg("base %zu: '%s', not '%s'", i, err.text, bad[i][1]);
		mo_config_free(base);
	}
	mo_model_free(m);
}

static int stop_now(void *arg)
{
	(void)arg;
	return 1;
}

/* A search cancelled from the start returns what it has (nothing), marked
 * incomplete, and no error. */
static void test_cancelled(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "llama2-7b", NULL), 0);
	mo_budget b = {.cancelled = stop_now};
	mo_budget_begin(&b);
	mo_size_input in = {.model = m, .devices = 8, .global_batch = 8};
	mo_size_result *r = NULL;
	assert_int_equal(mo_size_run(&r, &in, NULL), 0);
	assert_int_equal(mo_budget_end(), MO_ERR_CANCELLED);
	assert_false(mo_size_complete(r));
	mo_size_result_free(r);
	mo_model_free(m);
}

/* A device range: the smallest count with a fitting layout, and the
 * layouts ordered by tokens per second per device. */
static void test_device_range(void **state)
{
	(void)state;
	mo_model *m = NULL;
	assert_int_equal(mo_model_preset(&m, "llama2-7b", NULL), 0);
	mo_size_input in = {.model = m, .devices = 1, .devices_max = 16, .global_batch = 16,
			    .top = 5};
	mo_size_result *r = NULL;
	assert_int_equal(mo_size_run(&r, &in, NULL), 0);
	int64_t smallest = mo_size_smallest_devices(r);
	assert_true(smallest >= 1 && smallest <= 16);
	/* no smaller count fits: each alone has no fitting layout */
	for (int64_t n = 1; n < smallest; n++) {
		mo_size_result *one = size(m, n, 16, 1);
		assert_true(mo_size_count(one) == 0 || !mo_size_get(one, 0)->fits);
		mo_size_result_free(one);
	}
	for (size_t i = 1; i < mo_size_count(r); i++)
		if (mo_size_get(r, i)->fits)
			assert_true(mo_size_get(r, i - 1)->tokens_per_second_per_device >=
				    mo_size_get(r, i)->tokens_per_second_per_device * (1 - 1e-12));
	mo_size_result_free(r);
	mo_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reestimate_dense),
		cmocka_unit_test(test_reestimate_moe),
		cmocka_unit_test(test_megatron_own_layouts),
		cmocka_unit_test(test_megatron_recompute_flags),
		cmocka_unit_test(test_megatron_block_flags),
		cmocka_unit_test(test_graph_rescale),
		cmocka_unit_test(test_reestimate_accounted),
		cmocka_unit_test(test_rejected_counts),
		cmocka_unit_test(test_rejected_groups),
		cmocka_unit_test(test_rejected_parallel_codes),
		cmocka_unit_test(test_bad_questions),
		cmocka_unit_test(test_base_bytes),
		cmocka_unit_test(test_base_refused),
		cmocka_unit_test(test_cancelled),
		cmocka_unit_test(test_device_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
