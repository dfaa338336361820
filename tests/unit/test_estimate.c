/* The estimator: Korthikanti et al. 2022 (Table 2) closed forms with the
 * pytorch rules, FSDP / optimizer arithmetic, 1F1B in-flight counts, the
 * timeline's peak event, the plan's effects, the model-needed error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"

#include <pthread.h>

/* Korthikanti's layer: s 512, b 2, h 1024, a 16, GeLU, LayerNorm, eager
 * attention, dropout everywhere, 16-bit activations. */
static const char *const k_model =
	"model:\n  num_layers: 4\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
	"  num_attention_heads: 16\n  vocab_size: 32000\n  seq_length: 512\n"
	"  normalization: LayerNorm\n  hidden_act: gelu\n  attention: eager\n"
	"  hidden_dropout: 0.1\n  attention_dropout: 0.1\n"
	"training:\n  micro_batch_size: 2\n  micro_batch_num: %d\n"
	"  compute_dtype: bfloat16\n  framework: pytorch\n"
	"parallel:\n  world_size: %d\n  data_parallel: 1\n  tensor_parallel: %d\n"
	"  pipeline_parallel: %d\n  sequence_parallel: %s\n";

#define S 512.0
#define B 2.0
#define H 1024.0
#define A 16.0

typedef struct run {
	mo_model *m;
	mo_config *c;
	mo_estimate *e;
	mo_diags *d;
} run;

static mo_model *load_model(const char *text, mo_diags *d)
{
	mo_model *m = NULL;
	mo_error err = {0};
	int rc = mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err);
	if (rc != 0)
		fprintf(stderr, "model: %s\n", err.text);
	assert_int_equal(rc, 0);
	return m;
}

static void run_text(run *r, const char *model, const char *config)
{
	mo_error err = {0};
	memset(r, 0, sizeof(*r));
	assert_int_equal(mo_diags_new(&r->d), 0);
	r->m = load_model(model, r->d);
	if (config) {
		assert_int_equal(mo_config_parse(&r->c, r->d, config, strlen(config), "c.yaml",
						 NULL, &err), 0);
		assert_int_equal(mo_validate(r->d, r->c, r->m), 0);
	}
	int rc = mo_estimate_run(&r->e, r->c, r->m, &err);
	if (rc != 0)
		fprintf(stderr, "estimate: %s\n", err.text);
	assert_int_equal(rc, 0);
}

static void run_k(run *r, int tp, int pp, int mbn, const char *sp, const char *config)
{
	char model[2048];
	snprintf(model, sizeof model, k_model, mbn, tp * pp, tp, pp, sp);
	run_text(r, model, config);
}

static void run_free(run *r)
{
	mo_estimate_free(r->e);
	mo_config_free(r->c);
	mo_model_free(r->m);
	mo_diags_free(r->d);
}

static double layer0(const run *r)
{
	return (double)mo_estimate_layer_get(r->e, 0)->activation_bytes;
}

/* LayerNorm's fp32 mean and rstd: 2 norms x 8 bytes per token (Korthikanti
 * leaves them out). */
static double ln_stats(double tokens)
{
	return 2 * 8 * tokens;
}

static const char *sel_core = "recompute:\n  mode: select\n  select_module:\n"
			      "    'self_attention.core_attention': [0-3]\n";
static const char *full_all = "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n";

static void test_korthikanti_no_parallel(void **state)
{
	(void)state;
	run r;
	run_k(&r, 1, 1, 1, "false", NULL);
	assert_true(layer0(&r) == S * B * H * (34 + 5 * A * S / H) + ln_stats(S * B));
	assert_true((double)mo_estimate_layer_get(r.e, 0)->baseline_activation_bytes ==
		    layer0(&r));
	run_free(&r);
}

static void test_korthikanti_selective_full(void **state)
{
	(void)state;
	run r;
	run_k(&r, 1, 1, 1, "false", sel_core);
	assert_true(layer0(&r) == S * B * H * 34 + ln_stats(S * B));
	/* recompute FLOPs: QK^T and PV, 2 x 2 b a s^2 (h/a) */
	assert_true(mo_estimate_layer_get(r.e, 0)->recompute_flops == 4 * B * S * S * H);
	run_free(&r);
	run_k(&r, 1, 1, 1, "false", full_all);
	assert_true(layer0(&r) == S * B * H * 2);
	run_free(&r);
}

static void test_korthikanti_tp_sp(void **state)
{
	(void)state;
	run r;
	double t = 2;
	run_k(&r, 2, 1, 1, "false", NULL);
	assert_true(layer0(&r) ==
		    S * B * H * (10 + 24 / t + 5 * A * S / (H * t)) + ln_stats(S * B));
	run_free(&r);
	run_k(&r, 2, 1, 1, "true", NULL);
	assert_true(layer0(&r) == S * B * H / t * (34 + 5 * A * S / H) + ln_stats(S * B / t));
	run_free(&r);
	run_k(&r, 2, 1, 1, "true", sel_core);
	assert_true(layer0(&r) == S * B * H / t * 34 + ln_stats(S * B / t));
	run_free(&r);
}

/* 1F1B: stage r of p holds min(p - r, micro_batch_num) micro-batches. */
static void test_in_flight(void **state)
{
	(void)state;
	run r;
	run_k(&r, 1, 4, 8, "false", NULL);
	assert_int_equal(mo_estimate_stage_count(r.e), 4);
	for (size_t s = 0; s < 4; s++) {
		const mo_estimate_stage *st = mo_estimate_stage_get(r.e, s);
		assert_int_equal(st->in_flight, 4 - (int64_t)s);
		assert_int_equal(st->num_layers, 1);
		/* kept activations at the peak: in-flight x one layer (+ the
		 * embedding's ids on stage 0, the loss region on the last) */
		assert_true(st->activations_bytes >=
			    (uint64_t)st->in_flight * (uint64_t)layer0(&r));
	}
	run_free(&r);
}

/* FSDP: weights, gradients and AdamW states of the calibration model
 * (bf16 params, fp32 master + m + v) sharded over data_parallel_shard 2. */
static void test_fsdp_optimizer(void **state)
{
	(void)state;
	mo_model *m = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	assert_int_equal(mo_model_preset(&m, "std", &err), 0);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	double h = 2048, layer = h * 3 * h + h * h + 3 * h * 8192 + 2 * h; /* qkv, proj, swiglu, norms */
	double vocab = 129280 * h, params = 8 * layer + vocab + vocab + h;
	const mo_estimate_stage *st = mo_estimate_stage_get(e, 0);
	assert_true((double)st->weights_bytes == params / 2 * 2);
	assert_true((double)st->gradients_bytes == params / 2 * 2);
	assert_true((double)st->optimizer_bytes == params / 2 * 12);
	/* calibration (ascend-910b.md A): 512 MiB per layer of persistent state */
	assert_true(layer / 2 * 16 / 1048576 > 511.9 && layer / 2 * 16 / 1048576 < 512.1);
	assert_string_equal(mo_estimate_framework(e), "mindspore");
	mo_estimate_free(e);
	mo_model_free(m);
}

/* Muon keeps one fp32 momentum (+ the fp32 master copy for bf16 params);
 * a non-distributed optimizer over DP 4 with FSDP 2 shards states by 2. */
static void test_optimizer_variants(void **state)
{
	(void)state;
	run r;
	char model[2048];
	snprintf(model, sizeof model, k_model, 1, 4, 1, 1, "false");
	char *p = strstr(model, "  framework: pytorch\n");
	char buf[2400];
	snprintf(buf, sizeof buf, "%.*s  optimizer: muon\n  params_dtype: float32\n%s",
		 (int)(p - model), model, p);
	char *dp = strstr(buf, "data_parallel: 1");
	memcpy(dp, "data_parallel: 4", 16);
	run_text(&r, buf, NULL);
	const mo_estimate_stage *st = mo_estimate_stage_get(r.e, 0);
	assert_int_equal(st->optimizer_bytes, st->weights_bytes); /* 4 B momentum = 4 B fp32 param */
	run_free(&r);
}

/* The timeline: with full recompute the peak is the backward of a layer
 * whose tensors exist again; without, the loss backward with its scratch. */
static void test_peak_event(void **state)
{
	(void)state;
	run r;
	run_k(&r, 1, 1, 1, "false", full_all);
	const mo_estimate_stage *st = mo_estimate_stage_get(r.e, 0);
	assert_non_null(strstr(st->peak_event, "backward"));
	size_t n = mo_estimate_event_count(r.e, 0);
	/* embedding, 4 layers, loss, loss backward, 4 layers, embedding, optimizer */
	assert_int_equal(n, 13);
	const mo_estimate_event *last = mo_estimate_event_get(r.e, 0, n - 1);
	assert_int_equal(last->kind, MO_EV_OPTIMIZER);
	assert_int_equal(last->bytes[MO_EST_ACTIVATIONS], 0);
	const mo_estimate_event *b3 = mo_estimate_event_get(r.e, 0, 7);
	assert_int_equal(b3->kind, MO_EV_BACKWARD);
	assert_int_equal(b3->layer, 3);
	assert_true(b3->bytes[MO_EST_RECOMPUTED] ==
		    mo_estimate_layer_get(r.e, 3)->baseline_activation_bytes - (uint64_t)(S * B * H * 2));
	assert_true(mo_estimate_peak_bytes(r.e) >= b3->total);
	assert_true(mo_estimate_reserved_peak_bytes(r.e) > mo_estimate_peak_bytes(r.e));
	assert_true(mo_estimate_overhead_percent(r.e) > 0);
	run_free(&r);
}

/* Swap: the layer keeps nothing; its saved tensors go to host and come
 * back within the prefetch window. */
static void test_swap(void **state)
{
	(void)state;
	run r;
	run_k(&r, 1, 1, 1, "false",
	      "swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n    - layers: [1-2]\n");
	const mo_estimate_layer *l = mo_estimate_layer_get(r.e, 1);
	assert_int_equal(l->activation_bytes, 0);
	assert_int_equal(l->swap_bytes, l->baseline_activation_bytes);
	assert_int_equal(mo_estimate_layer_get(r.e, 0)->swap_bytes, 0);
	const mo_estimate_cost *c = mo_estimate_get_cost(r.e);
	assert_true(c->swap_bytes == 2.0 * 2 * (double)l->swap_bytes);
	assert_true(c->swap_hidden_seconds <= c->swap_seconds);
	run_free(&r);
}

/* Comm recompute (mindspore rules, TP 2 + SP): the gathered fc1 input
 * gives way to its local shard. */
static void test_comm_recompute(void **state)
{
	(void)state;
	/* bf16 parameters (every op keeps its inputs: the local shard is kept
	 * anyway, so the whole gathered [s, h] bf16 tensor, 1024 x 1024 x 2,
	 * leaves); fp32 parameters (the allgather and the Linear's input cast
	 * keep nothing: the shard, 512 x 1024 x 2, is kept instead of it) */
	static const struct {
		const char *dtype;
		long long saved;
	} cases[] = {{"bfloat16", 1024 * 1024 * 2},
		     {"float32", 1024 * 1024 * 2 - 512 * 1024 * 2}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char model[512];
		snprintf(model, sizeof model,
			 "model:\n  num_layers: 2\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
			 "  num_attention_heads: 16\n  seq_length: 1024\n"
			 "training:\n  micro_batch_size: 1\n  params_dtype: %s\n"
			 "parallel:\n  world_size: 2\n  data_parallel: 1\n  tensor_parallel: 2\n"
			 "  sequence_parallel: true\n",
			 cases[i].dtype);
		run r;
		run_text(&r, model,
			 "recompute_comm:\n  enable: True\n  select_module:\n"
			 "    'mlp.linear_fc1.input.allgather': [0]\n");
		const mo_estimate_layer *l0 = mo_estimate_layer_get(r.e, 0),
					*l1 = mo_estimate_layer_get(r.e, 1);
		assert_int_equal(l1->activation_bytes, l1->baseline_activation_bytes);
		assert_int_equal(l0->baseline_activation_bytes - l0->activation_bytes,
				 cases[i].saved);
		assert_int_equal(l0->comm_recompute_bytes, 1024 * 1024 * 2);
		run_free(&r);
	}
}

/* The optimizer step holds AdamW's per-parameter fp32 temporaries for the
 * largest local tensor (here the embedding, vocab padded to 100096 x 768 /
 * FSDP 2): 16 B per element with fp32 parameters (measured), 24 with bf16
 * ones (the fp32 casts of the parameter and its gradient too), none under
 * `framework: pytorch`. The event is the one named "optimizer step". */
static void test_optimizer_scratch(void **state)
{
	(void)state;
	static const struct {
		const char *dtype, *fw;
		uint64_t per_element;
	} cases[] = {{"float32", "mindspore", 16}, {"bfloat16", "mindspore", 24},
		     {"float32", "pytorch", 0}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char model[512];
		snprintf(model, sizeof model,
			 "model:\n  num_layers: 2\n  hidden_size: 768\n  ffn_hidden_size: 2048\n"
			 "  num_attention_heads: 4\n  vocab_size: 99999\n  seq_length: 128\n"
			 "training:\n  params_dtype: %s\n  framework: %s\n"
			 "parallel:\n  world_size: 2\n  data_parallel: 2\n",
			 cases[i].dtype, cases[i].fw);
		run r;
		run_text(&r, model, NULL);
		const mo_estimate_stage *st = mo_estimate_stage_get(r.e, 0);
		const mo_estimate_event *opt = NULL;
		for (size_t k = 0; k < mo_estimate_event_count(r.e, 0); k++) {
			const mo_estimate_event *ev = mo_estimate_event_get(r.e, 0, k);
			char name[96];
			if (strcmp(mo_estimate_event_name(ev, name, sizeof name), "optimizer step") == 0)
				opt = ev;
		}
		assert_non_null(opt);
		assert_int_equal(opt->bytes[MO_EST_OPTIMIZER] - st->optimizer_bytes,
				 cases[i].per_element * 100096 * 768 / 2);
		run_free(&r);
	}
}

/* Muon's optimizer step (MindSpore Transformers pynative/optimizer/muon.py
 * at 26354ff6, comm_strategy "allgather": one weight at a time), on top of
 * the states: per weight of L local elements whose Newton-Schulz runs on N
 * elements in pieces, the larger of
 *   Newton-Schulz: 2 fp32 locals (8 L, :1011-1017) + the bf16 input (2 N,
 *   :1019-1021) + the finished pieces' outputs + x, b_mat @ x, a * x and
 *   their sum (4 x 2 B per piece element) + a_mat, b_mat (2 x 2 B x b m^2),
 *   :855-879 and :884-903;
 *   its end: 8 L + 2 N + x_ret (2 L) + the fp32 master's two updates
 *   (8 L, :1028-1029) = 18 L + 2 N.
 * Hidden 1024, MHA (fused qkv [1024, 3072], the layer's largest 2-D weight),
 * 4 experts of FFN f (SwiGLU), FSDP 2 (data_parallel_shard 2, no EP: the
 * experts sharded by 2 too), bf16 parameters.
 * f = 512: qkv, L = 1572864, gathered N = 2 L, one piece taken square
 * (b m^2 = N): 8 L + 10 N + 4 N = 36 L = 56623104 B; experts' weight1
 * [4, 1024, 1024] / 2, L = 2097152, two pieces of b m^2 = 4 x 512^2 / 2:
 * max(15 L + 4 x 524288, 20 L) = 20 L = 41943040 B; the embedding's AdamW
 * (vocab 1000 padded to 1024 x 1024 / 2 x 20 B = 10485760): 56623104.
 * f = 2048: weight1 [4, 1024, 4096] / 2, L = 8388608: 20 L = 167772160 B.
 * The event is the one named "optimizer step". */
static void test_muon_step(void **state)
{
	(void)state;
	static const struct {
		int ffn;
		uint64_t scratch;
	} cases[] = {{512, 56623104}, {2048, 167772160}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char model[768];
		snprintf(model, sizeof model,
			 "model:\n  num_layers: 2\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
			 "  num_attention_heads: 8\n  vocab_size: 1000\n  seq_length: 128\n"
			 "  hidden_act: swiglu\n  num_moe_experts: 4\n  moe_ffn_hidden_size: %d\n"
			 "training:\n  params_dtype: bfloat16\n  compute_dtype: bfloat16\n"
			 "  optimizer: muon\n  framework: mindspore\n"
			 "parallel:\n  world_size: 2\n  data_parallel: 2\n  data_parallel_shard: 2\n",
			 cases[i].ffn);
		run r;
		run_text(&r, model, NULL);
		const mo_estimate_stage *st = mo_estimate_stage_get(r.e, 0);
		const mo_estimate_event *opt = NULL;
		for (size_t k = 0; k < mo_estimate_event_count(r.e, 0); k++) {
			const mo_estimate_event *ev = mo_estimate_event_get(r.e, 0, k);
			char name[96];
			if (strcmp(mo_estimate_event_name(ev, name, sizeof name), "optimizer step") == 0)
				opt = ev;
		}
		assert_non_null(opt);
		assert_int_equal(opt->bytes[MO_EST_OPTIMIZER] - st->optimizer_bytes,
				 cases[i].scratch);
		run_free(&r);
	}
}

/* DeepSeek-V3.2's sparse attention, sparse stage (MindSpore Transformers
 * 167a50de, multi_latent_attention.py dsa_forward :460-553, dsa.py,
 * dsa_indexer.py, dsa_indexer_loss.py), bf16: h 1024, 8 heads, q_lora 256,
 * kv_lora 512, rope 64, nope 128, v 128, index 64 heads x 128, top-k 256,
 * 1024 tokens. Bytes per token, each op keeping what its backward reads. */
static const char *const k_dsa_model =
	"model:\n  num_layers: 2\n  hidden_size: 1024\n  ffn_hidden_size: 2048\n"
	"  num_attention_heads: 8\n  vocab_size: 4096\n  seq_length: 1024\n"
	"  hidden_act: swiglu\n  multi_latent_attention: true\n  q_lora_rank: 256\n"
	"  kv_lora_rank: 512\n  qk_nope_head_dim: 128\n  qk_rope_head_dim: 64\n"
	"  v_head_dim: 128\n  experimental_attention_variant: dsa\n  index_topk: 256\n"
	"  dsa_indexer_use_sparse_loss: true\n"
	"training:\n  params_dtype: bfloat16\n  compute_dtype: bfloat16\n  framework: mindspore\n"
	"parallel:\n  world_size: 2\n  data_parallel: 2\n";

static void test_dsa_layer(void **state)
{
	(void)state;
	const uint64_t tok = 1024, h = 1024, hd = 8, ql = 256, kvl = 512, rope = 64, nope = 128;
	const uint64_t ih = 64 * 128, ihn = 64, id = 128, topk = 256, f = 2048;
	/* what DSA keeps beyond its attention: _DSAIndexerFunction's q, k,
	 * weights (dsa_indexer.py:55), the top-k indices (int32), the loss's
	 * d_query_index, d_key_index, d_weights (dsa_indexer_loss.py:70), the
	 * sparse attention's fp32 softmax max and sum per head */
	const uint64_t beyond = 2 * ih + 2 * id + 2 * ihn + 4 * topk + 2 * ih + 2 * id +
				2 * ihn + 2 * 4 * hd;
	/* the indexer's own backward saves (its loss's gradients flow back to
	 * linear_wq_b / linear_wk / linear_weights_proj): the rotary lanes of
	 * q and k in fp32 (t, rotate_half(t)), the Hadamard Linears' fp32
	 * inputs, the key LayerNorm's fp32 input, mean and rstd */
	const uint64_t indexer = 2 * 4 * ihn * rope + 4 * ih + 4 * id + 4 + 4 +
				 2 * 4 * rope + 4 * id;
	/* the absorbed MLA: linear_qkv's input and output (a norm keeps its
	 * view), the two rstd, the q norm's output, linear_qb's output (the
	 * absorb's q_nope view), the rotary lanes of q and k in fp32, the
	 * [heads, kv_lora + rope] query, the [kv_lora + rope] key, the normed
	 * latent (value), the [heads, kv_lora] output; the output projection's
	 * [heads, v] input and its output (bf16 first-cut rows) */
	const uint64_t attn = 2 * h + 2 * (ql + kvl + rope) + 4 + 4 + 2 * ql +
			      2 * hd * (nope + rope) + 2 * 4 * hd * rope + 2 * 4 * rope +
			      2 * hd * (kvl + rope) + 2 * (kvl + rope) + 2 * kvl + 2 * hd * kvl +
			      2 * hd * 128 + 2 * h;
	/* the rest of the layer: the input norm's input and rstd, the residual
	 * sum, the MLP norm's rstd, fc1's input and output, silu and the
	 * product, fc2's output */
	const uint64_t rest = 2 * h + 4 + 2 * h + 4 + 2 * h + 2 * 2 * f + 2 * f + 2 * f + 2 * h;
	/* 42752 B at DeepSeek-V3.2's 128 heads and top-k 2048 */
	assert_int_equal(beyond, 42752 - 2 * 4 * (128 - hd) - 4 * (2048 - topk));
	run r;
	run_text(&r, k_dsa_model, "recompute:\n  mode: None\n");
	assert_string_equal(mo_estimate_layer_get(r.e, 0)->type, "dsa-dense");
	assert_int_equal(mo_estimate_layer_get(r.e, 0)->activation_bytes,
			 tok * (beyond + indexer + attn + rest));
	run_free(&r);
	/* full recompute keeps the layer's input only */
	run_text(&r, k_dsa_model, "recompute:\n  mode: full\n  full_recompute_layer: [0-1]\n");
	assert_int_equal(mo_estimate_layer_get(r.e, 0)->activation_bytes, tok * 2 * h);
	run_free(&r);
	/* the sparse attention cell recomputed: its inputs stay, its softmax
	 * statistics go (its output is the absorb's saved input) */
	run_text(&r, k_dsa_model,
		 "recompute:\n  mode: select\n  select_module:\n"
		 "    'self_attention.core_attention.sparse_flash_attention': [0-1]\n");
	assert_int_equal(mo_estimate_layer_get(r.e, 0)->activation_bytes,
			 tok * (beyond + indexer + attn + rest - 2 * 4 * hd));
	run_free(&r);
}

/* data_parallel_shard -1 without a device count: model-needed. */
static void test_model_needed(void **state)
{
	(void)state;
	static const char *model = "model:\n  num_layers: 2\nparallelism:\n  data_parallel_shard: -1\n";
	mo_diags *d = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model *m = load_model(model, d);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), -1);
	assert_int_equal(err.code, MO_ERR_MODEL_NEEDED);
	/* the code says model-needed; the text says what is missing, in no face's words */
	assert_non_null(strstr(err.text, "device count is unknown"));
	assert_null(strstr(err.text, "--devices"));
	assert_null(strstr(err.text, "give the"));
	mo_model_set_devices(m, 4);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	char *text = mo_estimate_report(e, 1);
	assert_non_null(strstr(text, "explain:"));
	free(text);
	mo_estimate_free(e);
	mo_model_free(m);
	mo_diags_free(d);
}

static size_t count_of(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* --explain lists the tensors alive at each stage's peak: they add up to
 * the peak (recompute, swap, PP with several micro-batches in flight). */
static void test_peak_tensors(void **state)
{
	(void)state;
	const struct {
		int pp, mbn;
		const char *config, *expect;
	} cases[] = {
		{1, 1, NULL, "[1024, 32000]"}, /* logits: s x b tokens x vocab */
		{1, 1, full_all, "listed"},
		{1, 1, sel_core, "[1024, 1024]"},
		{2, 4, NULL, "micro-batch 1: 2 layers, embedding"},
		{1, 1, "swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n"
		       "    - layers: [1-2]\n", "embedding"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		run r;
		run_k(&r, 1, cases[i].pp, cases[i].mbn, "false", cases[i].config);
		char *text = mo_estimate_report(r.e, 1);
		assert_non_null(text);
		size_t stages = mo_estimate_stage_count(r.e);
		if (count_of(text, "(= the peak)") != stages)
			fprintf(stderr, "case %zu:\n%s\n", i, text);
		assert_int_equal(count_of(text, "(= the peak)"), stages);
		assert_int_equal(count_of(text, "differs from the peak"), 0);
		assert_non_null(strstr(text, cases[i].expect));
		free(text);
		run_free(&r);
	}
	/* 1.2 million micro-batches (simulated whole): the estimate stands, the listing is refused
	 * (its replay would need a counter per micro-batch) */
	{
		char big[2048];
		snprintf(big, sizeof big, k_model, 1200000, 1, 1, 1, "false");
		run r;
		run_text(&r, big, NULL);
		char *text = mo_estimate_report(r.e, 1);
		assert_non_null(strstr(text, "are not listed"));
		free(text);
		run_free(&r);
	}
	/* a tiny vocabulary: the peak is a recomputed layer's backward */
	char model[2048];
	snprintf(model, sizeof model, k_model, 1, 1, 1, 1, "false");
	char *v = strstr(model, "32000");
	assert_non_null(v);
	memcpy(v, "   64", 5);
	run r;
	run_text(&r, model, full_all);
	char *text = mo_estimate_report(r.e, 1);
	assert_non_null(strstr(mo_estimate_stage_get(r.e, 0)->peak_event, "backward mb 0 layer"));
	assert_non_null(strstr(text, "tensors exist again in its backward"));
	assert_int_equal(count_of(text, "(= the peak)"), 1);
	free(text);
	run_free(&r);
}

/* The model keeps its graphs and a memo of plan results across estimates
 * (estimate_cache.c): threads estimating one shared model concurrently get
 * exactly what a fresh model gives, and changing the model (its device
 * count) is seen. */
static const char *const memo_configs[] = {
	NULL,
	"recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n",
	"recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-1]\n",
	"recompute:\n  mode: select\n  select_module:\n    'self_attention': [2-3]\n"
	"    '.*mlp': [0]\n",
	"swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n    - layers: [1-2]\n",
};
#define N_MEMO (sizeof memo_configs / sizeof *memo_configs)

typedef struct memo_job {
	const mo_model *m;
	uint64_t want[N_MEMO];
	int bad;
} memo_job;

static uint64_t memo_peak(const mo_model *m, const char *config)
{
	mo_diags *d = NULL;
	mo_config *c = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	uint64_t peak = 0;
	if (mo_diags_new(&d) != 0)
		return 0;
	if (config && mo_config_parse(&c, d, config, strlen(config), "c.yaml", NULL, &err) != 0)
		goto out;
	if (mo_estimate_run(&e, c, m, &err) == 0)
		peak = mo_estimate_peak_bytes(e);
out:
	mo_estimate_free(e);
	mo_config_free(c);
	mo_diags_free(d);
	return peak;
}

static void *memo_thread(void *arg)
{
	memo_job *j = arg;
	for (int round = 0; round < 10; round++)
		for (size_t i = 0; i < N_MEMO; i++)
			if (memo_peak(j->m, memo_configs[(i + (size_t)round) % N_MEMO]) !=
			    j->want[(i + (size_t)round) % N_MEMO])
				j->bad++;
	return NULL;
}

static void test_model_memo(void **state)
{
	(void)state;
	char text[2048];
	snprintf(text, sizeof text, k_model, 1, 2, 2, 1, "true");
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model *shared = load_model(text, d);
	memo_job jobs[4];
	for (size_t i = 0; i < N_MEMO; i++) {
		mo_model *fresh = load_model(text, d); /* its own, empty cache */
		jobs[0].want[i] = memo_peak(fresh, memo_configs[i]);
		assert_true(jobs[0].want[i] > 0);
		mo_model_free(fresh);
	}
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		jobs[i] = jobs[0];
		jobs[i].m = shared;
		jobs[i].bad = 0;
		assert_int_equal(pthread_create(&th[i], NULL, memo_thread, &jobs[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(jobs[i].bad, 0);
	}
	/* a changed model is estimated anew: 4 devices shard differently */
	mo_model_set_devices(shared, 4);
	mo_model *four = load_model(text, d);
	mo_model_set_devices(four, 4);
	assert_int_equal(memo_peak(shared, memo_configs[1]), memo_peak(four, memo_configs[1]));
	mo_model_free(four);
	mo_model_free(shared);
	mo_diags_free(d);
}

/* Presets with MoE, MLA and MTP run; layer types are simulated once. */
static void test_presets(void **state)
{
	(void)state;
	for (size_t i = 0; i < mo_presets_count(); i++) {
		mo_model *m = NULL;
		mo_estimate *e = NULL;
		mo_error err = {0};
		assert_int_equal(mo_model_preset(&m, mo_preset_name(i), &err), 0);
		assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
		assert_true(mo_estimate_peak_bytes(e) > 0);
		for (size_t l = 0; l < mo_estimate_layer_count(e); l++)
			assert_true(mo_estimate_layer_get(e, (int64_t)l)->activation_bytes > 0);
		mo_estimate_free(e);
		mo_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_korthikanti_no_parallel),
		cmocka_unit_test(test_korthikanti_selective_full),
		cmocka_unit_test(test_korthikanti_tp_sp),
		cmocka_unit_test(test_in_flight),
		cmocka_unit_test(test_fsdp_optimizer),
		cmocka_unit_test(test_optimizer_variants),
		cmocka_unit_test(test_peak_event),
		cmocka_unit_test(test_swap),
		cmocka_unit_test(test_comm_recompute),
		cmocka_unit_test(test_optimizer_scratch),
		cmocka_unit_test(test_muon_step),
		cmocka_unit_test(test_model_needed),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_peak_tensors),
		cmocka_unit_test(test_model_memo),
		cmocka_unit_test(test_dsa_layer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
