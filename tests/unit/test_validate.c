/* Rules that need the model, precedence and the expanded plan
 * (docs/rules.md, docs/config-language.md), through the public API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>

#include <memopt/memopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fx {
	mo_config *cfg;
	mo_model *model;
	mo_diags *diags;
	mo_plan *plan;
} fx;

static const char *TP2_MODEL = "model:\n"
			       "  num_layers: 8\n"
			       "  hidden_size: 1024\n"
			       "  ffn_hidden_size: 4096\n"
			       "  num_attention_heads: 16\n"
			       "  vocab_size: 32000\n"
			       "  seq_length: 2048\n"
			       "parallel:\n"
			       "  world_size: 8\n"
			       "  data_parallel: 4\n"
			       "  tensor_parallel: 2\n"
			       "  sequence_parallel: true\n";

static void fx_free(fx *f)
{
	mo_plan_free(f->plan);
	mo_config_free(f->cfg);
	mo_model_free(f->model);
	mo_diags_free(f->diags);
	memset(f, 0, sizeof(*f));
}

/* preset: a preset name, or NULL with model text in `model`. */
static void run(fx *f, const char *config, const char *preset, const char *model)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(mo_diags_new(&f->diags), 0);
	mo_input in = {.config = config, .config_len = strlen(config), .config_name = "c.yaml",
		       .preset = preset, .model = model, .model_len = model ? strlen(model) : 0,
		       .model_name = "m.yaml"};
	mo_error err = {0};
	assert_int_equal(mo_check(&f->cfg, &f->model, f->diags, &in, &err), 0);
	if (f->model && mo_diags_errors(f->diags) == 0)
		assert_int_equal(mo_expand(&f->plan, f->cfg, f->model, &err), 0);
}

static size_t count(const fx *f, const char *code)
{
	size_t n = 0;
	for (size_t i = 0; i < mo_diags_count(f->diags); i++)
		n += strcmp(mo_diags_get(f->diags, i)->code, code) == 0;
	return n;
}

static const mo_diag *first(const fx *f, const char *code)
{
	for (size_t i = 0; i < mo_diags_count(f->diags); i++)
		if (strcmp(mo_diags_get(f->diags, i)->code, code) == 0)
			return mo_diags_get(f->diags, i);
	return NULL;
}

static size_t path_index(const fx *f, int64_t layer, const char *path)
{
	size_t t = mo_model_layer_type_of(f->model, layer);
	for (size_t i = 0; i < mo_model_path_count(f->model, t); i++)
		if (strcmp(mo_model_path(f->model, t, i), path) == 0)
			return i;
	fail_msg("no path %s", path);
	return 0;
}

static const mo_action *root(const fx *f, int64_t layer, const char *path)
{
	for (size_t i = 0; i < mo_plan_action_count(f->plan, layer); i++) {
		const mo_action *a = mo_plan_action(f->plan, layer, i);
		if (strcmp(a->path, path) == 0)
			return a;
	}
	return NULL;
}

static void test_seed_combo(void **state)
{
	(void)state;
	fx f;
	run(&f,
	    "recompute:\n  mode: full\n  full_recompute_layer: [0-15]\n"
	    "recompute_comm:\n  enable: False\n"
	    "swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n    - layers: [16-30]\n",
	    "llama2-7b", NULL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(mo_plan_layer_count(f.plan), 32);
	const mo_action *a = root(&f, 0, "");
	assert_non_null(a);
	assert_int_equal(a->action, MO_ACT_RECOMPUTE);
	assert_string_equal(a->rule.key, "full_recompute_layer");
	assert_int_equal(a->rule.line, 3);
	a = root(&f, 30, "");
	assert_non_null(a);
	assert_int_equal(a->action, MO_ACT_SWAP);
	assert_int_equal(a->rule.line, 10);
	assert_int_equal(mo_plan_action_count(f.plan, 31), 0);
	assert_int_equal(mo_plan_path_action(f.plan, 5, path_index(&f, 5, "mlp.linear_fc1")),
			 MO_ACT_RECOMPUTE);
	fx_free(&f);
}

static void test_select_exclude_child(void **state)
{
	(void)state;
	fx f;
	run(&f,
	    "recompute:\n  mode: select\n  select_module:\n"
	    "    'mlp': [0-3]\n    'mlp.linear_fc1': [0-3]\n"
	    "  exclude_op:\n    'mlp.linear_fc2': [0-1]\n",
	    "llama2-7b", NULL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	/* the child selection is dropped under its selected parent */
	assert_non_null(root(&f, 0, "mlp"));
	assert_null(root(&f, 0, "mlp.linear_fc1"));
	const mo_action *ex = root(&f, 0, "mlp.linear_fc2");
	assert_non_null(ex);
	assert_int_equal(ex->action, MO_ACT_KEEP);
	assert_string_equal(ex->rule.key, "exclude_op['mlp.linear_fc2']");
	assert_int_equal(mo_plan_path_action(f.plan, 0, path_index(&f, 0, "mlp.linear_fc2")),
			 MO_ACT_KEEP);
	assert_int_equal(mo_plan_path_action(f.plan, 2, path_index(&f, 2, "mlp.linear_fc2")),
			 MO_ACT_RECOMPUTE);
	assert_int_equal(mo_plan_path_action(f.plan, 4, path_index(&f, 4, "mlp")), MO_ACT_KEEP);
	fx_free(&f);
}

static void test_full_wins_redundant(void **state)
{
	(void)state;
	fx f;
	run(&f,
	    "recompute:\n  mode: select\n  full_recompute_layer: [0-1]\n"
	    "  select_module:\n    '.*mlp': [0-3]\n",
	    "llama2-7b", NULL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "redundant"), 1);
	assert_int_equal(first(&f, "redundant")->line, 5);
	assert_int_equal(first(&f, "redundant")->column, 15);
	assert_int_equal(mo_plan_action_count(f.plan, 0), 1);
	assert_non_null(root(&f, 0, ""));
	assert_non_null(root(&f, 2, "mlp"));
	fx_free(&f);
}

static void test_comm_recompute_tp(void **state)
{
	(void)state;
	fx f;
	run(&f, "recompute_comm:\n  enable: True\n  select_module:\n    '.*allgather': [0-1]\n",
	    NULL, TP2_MODEL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "no-match"), 0);
	const mo_action *a = root(&f, 0, "self_attention.linear_qkv.input.allgather");
	assert_non_null(a);
	assert_int_equal(a->action, MO_ACT_RECOMPUTE_COMM);
	assert_null(root(&f, 2, "self_attention.linear_qkv.input.allgather"));
	fx_free(&f);
	/* without TP the same pattern matches nothing, and the hint says why */
	run(&f, "recompute_comm:\n  enable: True\n  select_module:\n    '.*allgather': [0-1]\n",
	    "llama2-7b", NULL);
	assert_int_equal(count(&f, "no-match"), 1);
	assert_non_null(strstr(first(&f, "no-match")->hint, "communication"));
	fx_free(&f);
}

static void test_op_recompute_swap(void **state)
{
	(void)state;
	fx f;
	run(&f,
	    "recompute:\n  mode: select\n  select_module:\n    'mlp': [0-1]\n"
	    "swap:\n  enable: True\n  op_swap:\n    - op_name: '.*linear_fc1'\n      layers: [1-2]\n",
	    "llama2-7b", NULL);
	assert_int_equal(count(&f, "op-recompute-swap"), 1);
	const mo_diag *d = first(&f, "op-recompute-swap");
	assert_int_equal(d->line, 9);
	assert_non_null(strstr(d->message, "layers 1"));
	fx_free(&f);
}

static void test_layer_swap_skips_op_swap(void **state)
{
	(void)state;
	fx f;
	run(&f,
	    "swap:\n  enable: True\n  layer_swap:\n    - layers: [2]\n"
	    "  op_swap:\n    - op_name: '.*mlp'\n      layers: [2-3]\n",
	    "llama2-7b", NULL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_non_null(root(&f, 2, ""));
	assert_null(root(&f, 2, "mlp"));
	assert_non_null(root(&f, 3, "mlp"));
	assert_int_equal(root(&f, 3, "mlp")->action, MO_ACT_SWAP);
	fx_free(&f);
}

static void test_conflicts_on_ranges(void **state)
{
	(void)state;
	fx f;
	run(&f,
	    "recompute:\n  mode: full\n  full_recompute_layer: [0-15]\n"
	    "swap:\n  enable: True\n  layer_swap:\n    - layers: [10-20]\n"
	    "  op_swap:\n    - op_name: '.*mlp'\n      layers: [12, 25]\n",
	    "llama2-7b", NULL);
	assert_int_equal(count(&f, "recompute-swap-layer"), 1);
	assert_int_equal(first(&f, "recompute-swap-layer")->line, 7);
	assert_int_equal(first(&f, "recompute-swap-layer")->column, 16);
	assert_non_null(strstr(first(&f, "recompute-swap-layer")->message, "10-15"));
	assert_int_equal(count(&f, "full-op-swap"), 1);
	assert_int_equal(first(&f, "full-op-swap")->line, 10);
	assert_int_equal(first(&f, "full-op-swap")->column, 16);
	assert_null(f.plan);
	fx_free(&f);
}

static void test_model_rules(void **state)
{
	(void)state;
	fx f;
	/* no model: one model-needed, at the first layer list */
	run(&f, "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n", NULL, NULL);
	assert_int_equal(count(&f, "model-needed"), 1);
	assert_int_equal(first(&f, "model-needed")->line, 3);
	fx_free(&f);
	/* MTP ids: deepseek-v3 has 61 layers + 1 MTP: 61 is fine, 62 is not */
	run(&f, "recompute:\n  mode: full\n  full_recompute_layer: [0-3, 61, 62]\n", "deepseek-v3",
	    NULL);
	assert_int_equal(count(&f, "layer-range"), 1);
	assert_int_equal(first(&f, "layer-range")->column, 35);
	fx_free(&f);
	/* swap under PP */
	run(&f, "swap:\n  enable: True\n  layer_swap:\n    - layers: [1]\n", "llama3-70b", NULL);
	assert_int_equal(count(&f, "swap-pipeline"), 1);
	assert_int_equal(first(&f, "swap-pipeline")->line, 2);
	fx_free(&f);
	/* the last layer has no later layer to trigger its prefetch */
	run(&f, "swap:\n  enable: True\n  default_prefetch: 2\n  layer_swap:\n    - layers: [28-30]\n",
	    "llama2-7b", NULL);
	assert_int_equal(count(&f, "prefetch-range"), 1);
	assert_int_equal(first(&f, "prefetch-range")->line, 5);
	fx_free(&f);
}

static void test_single_device(void **state)
{
	(void)state;
	fx f;
	char model[512];
	snprintf(model, sizeof model, "%s", TP2_MODEL);
	/* one device: TP must become 1 for the model to be consistent */
	const char *one = "model:\n  num_layers: 4\n  hidden_size: 512\n  ffn_hidden_size: 1024\n"
			  "  num_attention_heads: 8\n  vocab_size: 1000\n  seq_length: 128\n"
			  "parallel:\n  world_size: 1\n  data_parallel: 1\n";
	run(&f, "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n", NULL, one);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "single-device"), 1);
	assert_int_equal(first(&f, "single-device")->line, 2);
	fx_free(&f);
	(void)model;
}

static void test_no_match_suggestion(void **state)
{
	(void)state;
	fx f;
	run(&f, "recompute:\n  mode: select\n  select_module:\n    'layers.*.mlp.*': [0-9]\n",
	    "llama2-7b", NULL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "no-match"), 1);
	assert_non_null(strstr(first(&f, "no-match")->hint, "'mlp.*'"));
	fx_free(&f);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The two real PyNative training YAMLs carry their own model. */
static void test_real_configs(void **state)
{
	(void)state;
	fx f;
	run(&f, read_text("tests/data/real-configs/pynative_ds3.yaml"), NULL, NULL);
	assert_non_null(f.model);
	assert_int_equal(mo_diags_count(f.diags), 0); /* clean: no warning either */
	fx_free(&f);
	run(&f, read_text("tests/data/real-configs/pynative_deepseek4.yaml"), NULL, NULL);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "no-match"), 2);
	/* hyper-connections, hc_mult, Muon: all read and modelled but the
	 * fused AdamW of Muon's embedding update (one warning at
	 * optimizer.use_fused_adamw) */
	assert_int_equal(count(&f, "unmodelled"), 1);
	assert_int_equal(count(&f, "unread-key"), 0);
	/* in line order: optimizer.use_fused_adamw (38), then the two patterns */
	assert_int_equal(mo_diags_get(f.diags, 0)->line, 38);
	assert_string_equal(mo_diags_get(f.diags, 0)->path, "optimizer.use_fused_adamw");
	const mo_diag *a = mo_diags_get(f.diags, 1), *b = mo_diags_get(f.diags, 2);
	assert_int_equal(a->line, 61);
	assert_non_null(strstr(a->hint, "'self_attention.*'"));
	assert_int_equal(b->line, 62);
	assert_non_null(strstr(b->hint, "'mlp.*'"));
	fx_free(&f);
}

/* Two plans give the same actions on every layer (paths compared as text). */
static void assert_same_plan(const mo_plan *a, const mo_plan *b, const mo_model *m)
{
	assert_int_equal(mo_plan_layer_count(a), mo_plan_layer_count(b));
	for (int64_t l = 0; l < (int64_t)mo_plan_layer_count(a); l++) {
		assert_int_equal(mo_plan_action_count(a, l), mo_plan_action_count(b, l));
		for (size_t i = 0; i < mo_plan_action_count(a, l); i++) {
			const mo_action *x = mo_plan_action(a, l, i), *y = mo_plan_action(b, l, i);
			assert_string_equal(x->path, y->path);
			assert_int_equal(x->action, y->action);
			assert_string_equal(x->rule.key, y->rule.key);
			assert_int_equal(x->rule.line, y->rule.line);
		}
		size_t t = mo_model_layer_type_of(m, l);
		for (size_t p = 0; p < mo_model_path_count(m, t); p++)
			assert_int_equal(mo_plan_path_action(a, l, p), mo_plan_path_action(b, l, p));
	}
}

/* `config` parsed (and, when `codes` is given, validated against m, its
 * diagnostics written there as "CODE LINE" lines), then expanded against m. */
static mo_plan *parsed_plan(const char *config, const mo_model *m, mo_config **cfg,
			    char *codes, size_t size)
{
	mo_error err = {0};
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_config_parse(cfg, d, config, strlen(config), "c.yaml", NULL, &err), 0);
	if (codes) {
		mo_validate(d, *cfg, m);
		codes[0] = '\0';
		for (size_t i = 0; i < mo_diags_count(d); i++)
			snprintf(codes + strlen(codes), size - strlen(codes), "%s %d\n",
				 mo_diags_get(d, i)->code, mo_diags_get(d, i)->line);
	}
	assert_int_equal(mo_diags_errors(d), 0);
	mo_diags_free(d);
	mo_plan *p = NULL;
	assert_int_equal(mo_expand(&p, *cfg, m, &err), 0);
	return p;
}

/* A fresh parse of `config` expanded against m (no memo involved). */
static mo_plan *fresh_plan(const char *config, const mo_model *m, mo_config **cfg)
{
	return parsed_plan(config, m, cfg, NULL, 0);
}

static mo_model *load_model(const char *text)
{
	mo_error err = {0};
	mo_diags *d = NULL;
	mo_model *m = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err), 0);
	assert_non_null(m);
	mo_diags_free(d);
	return m;
}

/* Validation hands its resolution to expand and estimate: the same plan and peak as a fresh
 * expand / estimate of the same config, for each model it was resolved against; a plan keeps
 * its resolution alive after the caller's reference is gone; a config with errors gets none. */
static void test_resolution_passed(void **state)
{
	(void)state;
	const char *config = "recompute:\n  mode: select\n  full_recompute_layer: [0-1]\n"
			     "  select_module:\n    '.*mlp': [2-5]\n    'self_attention': [4-7]\n"
			     "  exclude_op:\n    '.*add': [0-3]\n"
			     "swap:\n  enable: True\n  op_swap:\n    - op_name: 'input_layernorm'\n"
			     "      layers: [5, 6]\n";
	mo_error err = {0};
	mo_model *tp2 = load_model(TP2_MODEL), *other = NULL;
	assert_int_equal(mo_model_preset(&other, "llama2-7b", &err), 0);
	const mo_model *models[] = {tp2, other};
	for (size_t i = 0; i < 2; i++) {
		mo_config *cfg = NULL, *fresh_cfg = NULL;
		mo_diags *d = NULL;
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_config_parse(&cfg, d, config, strlen(config), "c.yaml", NULL, &err), 0);
		mo_resolved *r = NULL;
		assert_int_equal(mo_validate_resolve(d, cfg, models[i], &r), 0);
		assert_non_null(r);
		mo_plan *p = NULL, *want = fresh_plan(config, models[i], &fresh_cfg);
		assert_int_equal(mo_expand_resolved(&p, r, &err), 0);
		mo_estimate *e = NULL, *e_fresh = NULL;
		assert_int_equal(mo_estimate_resolved(&e, r, &err), 0);
		assert_int_equal(mo_estimate_run(&e_fresh, cfg, models[i], &err), 0);
		assert_int_equal(mo_estimate_peak_bytes(e), mo_estimate_peak_bytes(e_fresh));
		assert_true(mo_estimate_peak_bytes(e) > 0);
		mo_resolved_free(r); /* the plan holds its own reference */
		assert_same_plan(p, want, models[i]);
		mo_estimate_free(e);
		mo_estimate_free(e_fresh);
		mo_plan_free(p);
		mo_plan_free(want);
		mo_config_free(fresh_cfg);
		mo_config_free(cfg);
		mo_diags_free(d);
	}
	/* layer 40 is past the 8-layer model: an error, and no resolution */
	const char *bad = "recompute:\n  mode: full\n  full_recompute_layer: [40]\n";
	mo_config *cfg = NULL;
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_config_parse(&cfg, d, bad, strlen(bad), "c.yaml", NULL, &err), 0);
	mo_resolved *r = (mo_resolved *)1;
	assert_true(mo_validate_resolve(d, cfg, tp2, &r) > 0);
	assert_null(r);
	mo_plan *p = (mo_plan *)1;
	assert_int_equal(mo_expand_resolved(&p, NULL, &err), -1);
	assert_int_equal(err.code, MO_ERR_USAGE);
	assert_null(p);
	mo_config_free(cfg);
	mo_diags_free(d);
	mo_model_free(tp2);
	mo_model_free(other);
}

/* b validated and expanded against m: its diagnostic codes, one a line. */
static mo_plan *checked_plan(const char *b, const mo_model *m, mo_config **cfg, char *codes,
			     size_t size)
{
	return parsed_plan(b, m, cfg, codes, size);
}


/* `first` then `second` on one model, `second` on a fresh one: the same
 * plan and findings for `second` either way. */
static void memo_order(const char *first, const char *second)
{
	mo_model *seen = load_model(TP2_MODEL), *fresh = load_model(TP2_MODEL);
	char c1[1024], c2[1024], c3[1024];
	mo_config *c_first = NULL, *c_second = NULL, *c_fresh = NULL;
	mo_plan *p_first = checked_plan(first, seen, &c_first, c1, sizeof c1);
	mo_plan *p_second = checked_plan(second, seen, &c_second, c2, sizeof c2);
	mo_plan *p_fresh = checked_plan(second, fresh, &c_fresh, c3, sizeof c3);
	assert_same_plan(p_second, p_fresh, fresh);
	assert_string_equal(c2, c3);
	mo_plan_free(p_first);
	mo_plan_free(p_second);
	mo_plan_free(p_fresh);
	mo_config_free(c_first);
	mo_config_free(c_second);
	mo_config_free(c_fresh);
	mo_model_free(seen);
	mo_model_free(fresh);
}

/* The model memoises each pattern text's matches: a text seen first as a
 * recompute_comm pattern (communication ops only) and then as a select or
 * exclude pattern, or the other way round, gives the same plan and
 * findings as on a model that never saw it. */
/* A training YAML whose model is another document (pretrained_model_dir's
 * config.json, given as the model): the YAML's run (parallel_config,
 * offsets, dtypes) is read over that model, as MindSpore Transformers reads
 * its YAML over the config.json; the architecture stays the model's, and a
 * finding about a run key points into the YAML. */
static void test_training_yaml_over_model(void **state)
{
	(void)state;
	static const char yaml[] = "use_legacy: False\n"
				   "model:\n"
				   "  model_config:\n"
				   "    params_dtype: float32\n"
				   "    offset: [1, -1]\n"
				   "context:\n"
				   "  mode: 1\n"
				   "parallel_config:\n"
				   "  data_parallel: 2\n"
				   "  model_parallel: 2\n"
				   "  pipeline_stage: 2\n"
				   "  micro_batch_num: 4\n"
				   "recompute:\n"
				   "  mode: full\n"
				   "  full_recompute_layer: [0-1]\n";
	static const char hf[] = "{\"model_type\": \"llama\", \"hidden_size\": 1024,\n"
				 " \"intermediate_size\": 2816, \"num_hidden_layers\": 8,\n"
				 " \"num_attention_heads\": 16, \"num_key_value_heads\": 4,\n"
				 " \"vocab_size\": 32000, \"hidden_act\": \"silu\"}\n";
	fx f;
	run(&f, yaml, NULL, hf);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "model-needed"), 0); /* data_parallel is said */
	assert_int_equal(mo_model_num_layers(f.model), 8);
	char *y = mo_model_to_yaml(f.model);
	assert_non_null(y);
	assert_non_null(strstr(y, "data_parallel: 2"));
	assert_non_null(strstr(y, "tensor_parallel: 2"));
	assert_non_null(strstr(y, "pipeline_parallel: 2"));
	assert_non_null(strstr(y, "micro_batch_num: 4"));
	assert_non_null(strstr(y, "params_dtype: float32"));
	/* offset [1, -1] over 8 layers: 5 and 3 */
	assert_non_null(strstr(y, "0-4"));
	assert_non_null(strstr(y, "5-7"));
	free(y);
	/* which fields the YAML gave, with its key and line (the faces show
	 * the layout priced, not the model's): pipeline_stage is line 11 */
	size_t n = mo_model_run_field_count(f.model);
	struct mo_model_source src = {0};
	bool pp = false;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(mo_model_run_field(f.model, i, &src), 0);
		assert_string_equal(src.file, "c.yaml");
		if (strcmp(src.path, "parallel.pipeline_parallel") == 0) {
			assert_string_equal(src.key, "parallel_config.pipeline_stage");
			assert_int_equal(src.line, 11);
			pp = true;
		}
		assert_true(strncmp(src.path, "model.num_layers", 16) != 0); /* the architecture is the model's */
	}
	assert_true(pp);
	assert_int_equal(mo_model_run_field(f.model, n, &src), -1);
	fx_free(&f);

	/* tensor parallel 3 does not divide 16 heads: the finding is at the
	 * YAML's model_parallel, not in the model text */
	char bad[sizeof yaml];
	memcpy(bad, yaml, sizeof yaml);
	char *mp = strstr(bad, "model_parallel: 2");
	assert_non_null(mp);
	mp[strlen("model_parallel: ")] = '3';
	run(&f, bad, NULL, hf);
	const mo_diag *d = first(&f, "parallel");
	assert_non_null(d);
	assert_string_equal(d->file, "c.yaml");
	assert_int_equal(d->line, 10);
	fx_free(&f);

	/* a YAML that names its own architecture: the model given is priced,
	 * said once at model.model_config */
	static const char own[] = "model:\n"
				  "  model_config:\n"
				  "    num_layers: 64\n"
				  "    hidden_size: 5120\n"
				  "parallel_config:\n"
				  "  data_parallel: 1\n";
	run(&f, own, NULL, hf);
	assert_int_equal(count(&f, "model-replaced"), 1);
	assert_int_equal(mo_model_num_layers(f.model), 8);
	fx_free(&f);

	/* the three sections alone: the model is all the model's own */
	run(&f, "recompute:\n  mode: None\n", NULL, hf);
	assert_int_equal(mo_model_run_field_count(f.model), 0);
	fx_free(&f);
}

/* The run field i whose path is `path`, or false. */
static bool run_field(const mo_model *m, const char *path, struct mo_model_source *out)
{
	for (size_t i = 0; i < mo_model_run_field_count(m); i++)
		if (mo_model_run_field(m, i, out) == 0 && strcmp(out->path, path) == 0)
			return true;
	return false;
}

/* Sequence parallel set by the training YAML's parallel_config
 * (MindSpore Transformers' use_seq_parallel) is a run field with its key
 * and position, as the degrees are: the faces name the line that set it. */
static void test_training_yaml_sp_position(void **state)
{
	(void)state;
	static const char yaml[] = "use_legacy: False\n"
				   "context:\n"
				   "  mode: 1\n"
				   "parallel_config:\n"
				   "  data_parallel: 2\n"
				   "  model_parallel: 2\n"
				   "  use_seq_parallel: True\n"
				   "recompute:\n"
				   "  mode: None\n";
	static const char hf[] = "{\"model_type\": \"llama\", \"hidden_size\": 1024,\n"
				 " \"intermediate_size\": 2816, \"num_hidden_layers\": 8,\n"
				 " \"num_attention_heads\": 16, \"num_key_value_heads\": 4,\n"
				 " \"vocab_size\": 32000, \"hidden_act\": \"silu\"}\n";
	fx f;
	run(&f, yaml, NULL, hf);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	struct mo_model_source src = {0};
	assert_true(run_field(f.model, "parallel.sequence_parallel", &src));
	assert_string_equal(src.file, "c.yaml");
	assert_string_equal(src.key, "parallel_config.use_seq_parallel");
	assert_int_equal(src.line, 7);
	assert_int_equal(src.column, 21); /* "  use_seq_parallel: " is 20 characters */
	char *y = mo_model_to_yaml(f.model);
	assert_non_null(y);
	assert_non_null(strstr(y, "sequence_parallel: true"));
	free(y);
	fx_free(&f);

	/* a YAML that does not set it: no run field for it */
	static const char none[] = "use_legacy: False\n"
				   "parallel_config:\n"
				   "  data_parallel: 2\n";
	run(&f, none, NULL, hf);
	assert_false(run_field(f.model, "parallel.sequence_parallel", &src));
	fx_free(&f);
}

/* mo_check of a config alone, opening its paths from dir (NULL: none). */
static void run_in(fx *f, const char *config, const char *dir)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(mo_diags_new(&f->diags), 0);
	mo_input in = {.config = config, .config_len = strlen(config), .config_name = "c.yaml",
		       .config_dir = dir};
	mo_error err = {0};
	assert_int_equal(mo_check(&f->cfg, &f->model, f->diags, &in, &err), 0);
}

/* A training YAML whose model is pretrained_model_dir's config.json, given
 * alone: the config.json is read from the caller's folder (MindSpore
 * Transformers' merge_model_config joins the folder and "config.json"),
 * the YAML's run over it; a caller that opens no files, or a folder
 * without it, leaves the model-needed warning, its hint saying why. */
static void test_pretrained_model_dir(void **state)
{
	(void)state;
	static const char yaml[] = "pretrained_model_dir: \"hf/llama\"\n"
				   "model:\n"
				   "  model_config:\n"
				   "    params_dtype: float32\n"
				   "context:\n"
				   "  mode: 1\n"
				   "parallel_config:\n"
				   "  data_parallel: 2\n"
				   "  model_parallel: 2\n"
				   "  pipeline_stage: 2\n"
				   "  micro_batch_num: 4\n";
	static const char hf[] = "{\"model_type\": \"llama\", \"hidden_size\": 1024,\n"
				 " \"intermediate_size\": 2816, \"num_hidden_layers\": 6,\n"
				 " \"num_attention_heads\": 16, \"num_key_value_heads\": 4,\n"
				 " \"vocab_size\": 32000, \"hidden_act\": \"silu\"}\n";
	char root[] = "/tmp/memopt-pmdir-XXXXXX", path[256];
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof path, "%s/hf", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/hf/llama", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/hf/llama/config.json", root);
	FILE *out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(fputs(hf, out) >= 0, 1);
	assert_int_equal(fclose(out), 0);

	fx f;
	run_in(&f, yaml, root);
	assert_int_equal(mo_diags_errors(f.diags), 0);
	assert_int_equal(count(&f, "model-needed"), 0);
	assert_non_null(f.model);
	assert_int_equal(mo_model_num_layers(f.model), 6);
	char *y = mo_model_to_yaml(f.model);
	assert_non_null(strstr(y, "pipeline_parallel: 2"));
	assert_non_null(strstr(y, "tensor_parallel: 2"));
	assert_non_null(strstr(y, "params_dtype: float32"));
	free(y);
	fx_free(&f);

	static const struct {
		const char *dir, *why;
	} unread[] = {{NULL, "not read: this caller opens no files"},
		      {"/nonexistent-memopt-dir", "not read: No such file or directory"}};
	for (size_t i = 0; i < sizeof unread / sizeof *unread; i++) {
		run_in(&f, yaml, unread[i].dir);
		assert_null(f.model);
		const mo_diag *d = first(&f, "model-needed");
		assert_non_null(d);
		assert_non_null(d->hint);
		assert_non_null(strstr(d->hint, "pretrained_model_dir (hf/llama)"));
		assert_non_null(strstr(d->hint, unread[i].why));
		fx_free(&f);
	}
	/* a FIFO in its place: refused without waiting for a writer */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	run_in(&f, yaml, root);
	assert_null(f.model);
	const mo_diag *fifo = first(&f, "model-needed");
	assert_non_null(fifo);
	assert_non_null(strstr(fifo->hint, "not read: not a regular file"));
	fx_free(&f);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof path, "%s/hf/llama", root);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof path, "%s/hf", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
}

static void test_model_memo(void **state)
{
	(void)state;
	const char *a = "recompute:\n  mode: select\n  select_module:\n    '.*': [0-3]\n"
			"    'mlp': [4-5]\n  exclude_op:\n    '.*allgather': [0-1]\n"
			"recompute_comm:\n  enable: True\n  select_module:\n    '.*gather': [4-7]\n"
			"    '.*linear.*': [6-7]\n";
	const char *b = "recompute_comm:\n  enable: True\n  select_module:\n    '.*': [0-7]\n"
			"recompute:\n  mode: select\n  select_module:\n    '.*gather': [0-3]\n"
			"    '.*linear.*': [2-3]\n  exclude_op:\n    'mlp': [2-3]\n";
	memo_order(a, b);
	memo_order(b, a); /* the other way round */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_combo),
		cmocka_unit_test(test_select_exclude_child),
		cmocka_unit_test(test_full_wins_redundant),
		cmocka_unit_test(test_comm_recompute_tp),
		cmocka_unit_test(test_op_recompute_swap),
		cmocka_unit_test(test_layer_swap_skips_op_swap),
		cmocka_unit_test(test_conflicts_on_ranges),
		cmocka_unit_test(test_model_rules),
		cmocka_unit_test(test_single_device),
		cmocka_unit_test(test_no_match_suggestion),
		cmocka_unit_test(test_real_configs),
		cmocka_unit_test(test_resolution_passed),
		cmocka_unit_test(test_model_memo),
		cmocka_unit_test(test_training_yaml_over_model),
		cmocka_unit_test(test_training_yaml_sp_position),
		cmocka_unit_test(test_pretrained_model_dir),
	};
	return cmocka_run_group_tests_name("validate", tests, NULL, NULL);
}
