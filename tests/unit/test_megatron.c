/* Megatron-LM's published memory figures against the `pytorch` rules
 * (the only public measurements of its memory). Its CI test gpt3_7b_tp4_pp1_memory_speed logs, after
 * every step, the bytes allocated between steps (mem-allocated-bytes: the
 * bf16 parameters, the fp32 main_grad buffers and the distributed
 * optimizer's shards) and the step's peak (mem-max-allocated-bytes).
 * tests/data/megatron/gpt3_7b_tp4_pp1_memory_speed.yaml is that run as a
 * model file, with the source of every figure. Both figures within 3%;
 * the Megatron keys (position table, biases, transformer_impl, the fp32
 * gradient alias) each checked against hand-counted sizes
 * (notes/megatron-memory.md). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"

#define FIXTURE "tests/data/megatron/gpt3_7b_tp4_pp1_memory_speed.yaml"
/* golden_values_dev_dgx_h100.json, steps 2-25 */
#define MEM_ALLOCATED 20663519232.0
#define MEM_MAX_ALLOCATED 57143791616.0

static mo_estimate *estimate_text(const char *text)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, text, strlen(text), "megatron.yaml", NULL, &err), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	mo_model_free(m);
	mo_diags_free(d);
	return e;
}

static double parameter_state_of(const mo_estimate_stage *s)
{
	return (double)(s->weights_bytes + s->gradients_bytes + s->optimizer_bytes);
}

static double parameter_state(const mo_estimate *e)
{
	return parameter_state_of(mo_estimate_stage_get(e, 0));
}

/* Between steps the rank holds 2 (bf16 parameter) + 4 (fp32 main_grad) +
 * 12 / DP (fp32 master copy and both Adam moments, sharded over DP 2) B
 * per local parameter: with grads_dtype float32 the estimate is within 3%
 * of the measured 20,663,519,232 B (it lacks the learned position
 * embeddings and the linear biases, about 0.4 GB); with gradients in the
 * parameters' dtype it was 19% short. */
static void test_parameter_state(void **state)
{
	(void)state;
	char *text = test_read_file(FIXTURE, NULL);
	mo_estimate *e = estimate_text(text);
	const mo_estimate_stage *s = mo_estimate_stage_get(e, 0);
	/* the local parameters, counted from the run's arguments: embedding
	 * and output layer 131584 x 4096 / 4 each, learned positions 8192 x
	 * 4096 (not split), final LayerNorm 2 x 4096, 32 layers of QKV 4096 x
	 * 6144 / 4 + 1536 bias, projection 4096^2 / 4 + 4096, FC1 and FC2
	 * 4096 x 16384 / 4 + 4096 each, two LayerNorms 4 x 4096 */
	const double layer = 6291456.0 + 1536 + 4194304 + 4096 + 2 * (16777216.0 + 4096) + 16384;
	const double local = 2 * 134742016.0 + 33554432 + 8192 + 32 * layer;
	assert_true(local == 1713299456.0);
	/* fp32 master copy and both Adam moments, sharded over DP 2: 6 B */
	assert_true((double)s->optimizer_bytes == 6 * local);
	/* bf16 parameters and fp32 main_grad, both padded alike: each bucket
	 * of max(4e7, 1e6 x DP) elements ends on a multiple of lcm(2, 128) */
	assert_int_equal(s->gradients_bytes, 2 * s->weights_bytes);
	double padding = (double)s->weights_bytes / 2 - local;
	assert_true(padding >= 0 && padding < 128 * 43);
	double err = parameter_state(e) / MEM_ALLOCATED - 1.0;
	printf("gpt3_7b_tp4_pp1: parameter state %.0f B against %.0f B measured: %+.2f%%\n",
	       parameter_state(e), MEM_ALLOCATED, 100.0 * err);
	assert_true(err > -0.03 && err < 0.03);
	mo_estimate_free(e);

	/* the same run with gradients in bf16 (no grads_dtype) */
	char *at = strstr(text, "  grads_dtype: float32");
	assert_non_null(at);
	memset(at, ' ', strcspn(at, "\n"));
	e = estimate_text(text);
	s = mo_estimate_stage_get(e, 0);
	assert_int_equal(s->gradients_bytes, s->weights_bytes);
	assert_true(parameter_state(e) / MEM_ALLOCATED - 1.0 < -0.15);
	mo_estimate_free(e);
	free(text);
}

/* The step's peak: the parameter state, 32 layers of one micro-batch's
 * kept tensors (PP 1: one micro-batch in flight), the embedding's and the
 * loss region's, and the loss backward's cast of the logits' gradient. */
static void test_peak(void **state)
{
	(void)state;
	char *text = test_read_file(FIXTURE, NULL);
	mo_estimate *e = estimate_text(text);
	const mo_estimate_stage *s = mo_estimate_stage_get(e, 0);
	double err = (double)s->peak_bytes / MEM_MAX_ALLOCATED - 1.0;
	printf("gpt3_7b_tp4_pp1: peak %llu B against %.0f B measured: %+.2f%%\n",
	       (unsigned long long)s->peak_bytes, MEM_MAX_ALLOCATED, 100.0 * err);
	assert_true(err > -0.03 && err < 0.03);
	mo_estimate_free(e);
	free(text);
}

/* The key reads under Megatron's name too, is written back by
 * mo_model_to_yaml, and takes only dtype names. */
static void test_grads_dtype_key(void **state)
{
	(void)state;
	static const char *const model =
		"model:\n  num_layers: 2\n  hidden_size: 256\n  num_attention_heads: 4\n"
		"  vocab_size: 1000\n  seq_length: 128\n"
		"training:\n  params_dtype: bfloat16\n  main_grads_dtype: %s\n"
		"  framework: pytorch\nparallel:\n  world_size: 1\n";
	char text[512];
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_error err = {0};
	snprintf(text, sizeof text, model, "float32");
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	char *yaml = mo_model_to_yaml(m);
	assert_non_null(strstr(yaml, "grads_dtype: float32"));
	free(yaml);
	mo_model_free(m);
	mo_diags_free(d);
	snprintf(text, sizeof text, model, "fp33");
	m = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err);
	assert_true(mo_diags_errors(d) > 0);
	mo_model_free(m);
	mo_diags_free(d);
}

/* Replaces the value of `key` (a whole "  key: value" line) in text. */
static char *with_value(const char *text, const char *key, const char *value)
{
	const char *at = strstr(text, key);
	assert_non_null(at);
	const char *end = strchr(at, '\n');
	assert_non_null(end);
	size_t n = strlen(text) + strlen(value) + strlen(key) + 8;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%.*s%s %s%s", (int)(at - text), text, key, value, end);
	return out;
}

/* The GEMM workspaces (model/presets.c: Transformer Engine's 32 MiB + 1 KiB
 * on sm90, 4 MiB on sm80, and PyTorch's two 32 MiB cuBLAS workspaces under
 * CUBLAS_WORKSPACE_CONFIG=:4096:8): a bucket of their own, absent before
 * the first layer's forward (its first GEMM), then in every event up to
 * the optimizer step; none for framework mindspore (inside its rules). */
static void test_workspaces(void **state)
{
	(void)state;
	static const struct {
		const char *device;
		uint64_t bytes;
	} devices[] = {
		{"h100", 3 * 33554432ull + 1024},
		{"h200", 3 * 33554432ull + 1024},
		{"a100", 2 * 33554432ull + 4194304},
		{"ascend-910b", 0},
	};
	char *text = test_read_file(FIXTURE, NULL);
	for (size_t i = 0; i < sizeof devices / sizeof *devices; i++) {
		char *on = with_value(text, "device:", devices[i].device);
		mo_estimate *e = estimate_text(on);
		const mo_estimate_stage *s = mo_estimate_stage_get(e, 0);
		assert_int_equal(s->peak_by_bucket[MO_EST_WORKSPACES], devices[i].bytes);
		const mo_estimate_event *first = mo_estimate_event_get(e, 0, 0);
		assert_int_equal(first->kind, MO_EV_EMBED_FORWARD);
		assert_int_equal(first->bytes[MO_EST_WORKSPACES], 0);
		size_t n = mo_estimate_event_count(e, 0);
		for (size_t k = 1; k < n; k++)
			assert_int_equal(mo_estimate_event_get(e, 0, k)->bytes[MO_EST_WORKSPACES],
					 devices[i].bytes);
		mo_estimate_free(e);
		free(on);
	}
	/* the same run under the mindspore rules on an H100: none */
	char *ms = with_value(text, "framework:", "mindspore");
	char *h100 = with_value(ms, "device:", "h100");
	mo_estimate *e = estimate_text(h100);
	assert_int_equal(mo_estimate_stage_get(e, 0)->peak_by_bucket[MO_EST_WORKSPACES], 0);
	mo_estimate_free(e);
	free(h100);
	free(ms);
	free(text);
	assert_string_equal(mo_estimate_bucket_name(MO_EST_WORKSPACES), "workspaces");
}

#define EXPERTS "tests/data/megatron/gpt3_mcore_te_tp2_pp1_te_8experts2parallel_dist_optimizer.yaml"

/* Megatron's --expert-tensor-parallel-size (default TP, arguments.py): the
 * 8-expert run (TP 2, EP 2, DP 4, 12 MoE layers, h 512, expert FFN 2048,
 * GeLU) holds 8 / EP 2 = 4 experts per layer, each 2 x 512 x 2048 =
 * 2,097,152 parameters split over ETP. ETP 2 against ETP 1: half the expert
 * parameters, 12 x 4 x 2,097,152 / 2 = 50,331,648 fewer, 2 B (bf16) each
 * in weights and 4 B (fp32 main_grad) in gradients; the optimizer's expert
 * shards are over the expert data-parallel group, 8 / (EP x ETP) = 2 ranks
 * under ETP 2, 4 under ETP 1, so 12 B x 50,331,648 / 2 = 12 B x
 * 100,663,296 / 4: the same bytes. */
static void test_expert_tensor_parallel(void **state)
{
	(void)state;
	char *text = test_read_file(EXPERTS, NULL);
	char *one = with_value(text, "expert_parallel:", "2\n  expert_tensor_parallel: 1");
	char *two = with_value(text, "expert_parallel:", "2\n  expert_tensor_parallel: 2");
	mo_estimate *by_default = estimate_text(text), *e1 = estimate_text(one),
		    *e2 = estimate_text(two);
	const mo_estimate_stage *d = mo_estimate_stage_get(by_default, 0);
	const mo_estimate_stage *s1 = mo_estimate_stage_get(e1, 0);
	const mo_estimate_stage *s2 = mo_estimate_stage_get(e2, 0);
	/* the default is TP's degree */
	assert_int_equal(d->weights_bytes, s2->weights_bytes);
	assert_int_equal(d->peak_bytes, s2->peak_bytes);
	const double fewer = 12.0 * 4 * 2097152 / 2;
	/* the buffers are padded to 128 elements (lcm(DP 4, 128), one bucket) */
	assert_true(fabs((double)(s1->weights_bytes - s2->weights_bytes) - 2 * fewer) < 2 * 128);
	assert_true(fabs((double)(s1->gradients_bytes - s2->gradients_bytes) - 4 * fewer) <
		    4 * 128);
	assert_int_equal(s1->optimizer_bytes, s2->optimizer_bytes);
	mo_estimate_free(by_default);
	mo_estimate_free(e1);
	mo_estimate_free(e2);

	/* the mindspore rules do not read it: the same answer, and a warning */
	char *ms = with_value(two, "framework:", "mindspore");
	char *ms_plain = with_value(text, "framework:", "mindspore");
	mo_estimate *a = estimate_text(ms_plain);
	mo_diags *diags = NULL;
	mo_model *m = NULL;
	mo_estimate *b = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&diags), 0);
	assert_int_equal(mo_model_load(&m, diags, ms, strlen(ms), "ms.yaml", NULL, &err), 0);
	mo_model_check(m, diags);
	assert_int_equal(mo_diags_errors(diags), 0);
	assert_int_equal(mo_diags_count(diags), 1); /* the warning */
	assert_int_equal(mo_estimate_run(&b, NULL, m, &err), 0);
	assert_int_equal(mo_estimate_stage_get(a, 0)->peak_bytes,
			 mo_estimate_stage_get(b, 0)->peak_bytes);
	assert_int_equal(mo_estimate_stage_get(a, 0)->weights_bytes,
			 mo_estimate_stage_get(b, 0)->weights_bytes);
	mo_estimate_free(a);
	mo_estimate_free(b);
	mo_model_free(m);
	mo_diags_free(diags);
	free(ms_plain);
	free(ms);

	/* an ETP that does not divide the expert FFN (2048) is refused */
	char *bad = with_value(text, "expert_parallel:", "2\n  expert_tensor_parallel: 3");
	assert_int_equal(mo_diags_new(&diags), 0);
	m = NULL;
	assert_int_equal(mo_model_load(&m, diags, bad, strlen(bad), "bad.yaml", NULL, &err), 0);
	mo_model_check(m, diags);
	assert_true(mo_diags_errors(diags) > 0);
	mo_model_free(m);
	mo_diags_free(diags);
	free(bad);
	free(two);
	free(one);
	free(text);
}

#define PP4 "tests/data/megatron/gpt3_7b_tp1_pp4_memory_speed.yaml"

/* One bucket's bytes at every event of stage s, in order. */
static uint64_t event_bytes(const mo_estimate *e, size_t s, size_t k, int bucket)
{
	return mo_estimate_event_get(e, s, k)->bytes[bucket];
}

/* Megatron's pipeline schedules give each model chunk its received input
 * through set_input_tensor (transformer_block.py: self.input_tensor) and
 * retain its gradient (schedules.py backward_step: x.retain_grad()): every
 * chunk that receives one keeps its last input and that input's gradient
 * until its next forward. The PP 4 run (TP 1, no SP, micro-batch 1, seq
 * 8192, h 4096, bf16; 8 chunks of one layer per stage): one input is
 * [8192, 1, 4096] x 2 B = 67,108,864 B; the last stage keeps 8 x 2 of them,
 * the first stage 7 x 2 (its first chunk starts from the embedding). They
 * exist from each chunk's last backward to its next forward: at the
 * optimizer step all of them, at a chunk's first forward not its own. */
static void test_pipeline_inputs(void **state)
{
	(void)state;
	const uint64_t input = 8192ull * 1 * 4096 * 2;
	char *text = test_read_file(PP4, NULL);
	mo_estimate *e = estimate_text(text);
	assert_int_equal(mo_estimate_stage_count(e), 4);
	for (size_t s = 0; s < 4; s++) {
		const mo_estimate_stage *st = mo_estimate_stage_get(e, s);
		uint64_t kept = (s == 0 ? 7 : 8) * 2 * input;
		size_t n = mo_estimate_event_count(e, s);
		const mo_estimate_event *opt = mo_estimate_event_get(e, s, n - 1);
		assert_int_equal(opt->kind, MO_EV_OPTIMIZER);
		assert_int_equal(opt->bytes[MO_EST_PIPELINE_INPUTS], kept);
		/* between steps: the parameter state, the workspaces, the inputs */
		assert_int_equal(st->between_steps_bytes,
				 st->weights_bytes + st->gradients_bytes + st->optimizer_bytes +
					 (3 * 33554432ull + 1024) + kept);
		/* the step starts with the previous step's inputs; the first
		 * forward of a receiving chunk has dropped its own */
		const mo_estimate_event *first = mo_estimate_event_get(e, s, 0);
		uint64_t at_first = first->bytes[MO_EST_PIPELINE_INPUTS];
		assert_int_equal(at_first, kept - (s == 0 ? 0 : 2 * input));
		/* never more than at the step's start */
		for (size_t k = 0; k < n; k++)
			assert_true(event_bytes(e, s, k, MO_EST_PIPELINE_INPUTS) <= kept);
	}
	/* the last stage's peak (loss backward of micro-batch 0: every chunk
	 * has run its first forward of the step) holds none */
	const mo_estimate_stage *last = mo_estimate_stage_get(e, 3);
	assert_string_equal(last->peak_event, "loss backward mb 0");
	assert_int_equal(last->peak_by_bucket[MO_EST_PIPELINE_INPUTS], 0);
	mo_estimate_free(e);

	/* under sequence parallel the input is split over TP: TP 2 + SP, the
	 * same run on 16 devices: [8192 / 2, 1, 4096] */
	char *tp = with_value(text, "tensor_parallel:", "2");
	char *sp = with_value(tp, "sequence_parallel:", "true");
	char *world = with_value(sp, "world_size:", "16");
	e = estimate_text(world);
	assert_int_equal(mo_estimate_stage_get(e, 3)->peak_by_bucket[MO_EST_PIPELINE_INPUTS], 0);
	size_t n = mo_estimate_event_count(e, 3);
	assert_int_equal(event_bytes(e, 3, n - 1, MO_EST_PIPELINE_INPUTS), 8 * 2 * input / 2);
	mo_estimate_free(e);
	/* the mindspore rules keep none; nor does a single stage */
	char *ms = with_value(text, "framework:", "mindspore");
	e = estimate_text(ms);
	n = mo_estimate_event_count(e, 3);
	assert_int_equal(event_bytes(e, 3, n - 1, MO_EST_PIPELINE_INPUTS), 0);
	mo_estimate_free(e);
	char *single = test_read_file(FIXTURE, NULL);
	e = estimate_text(single);
	n = mo_estimate_event_count(e, 0);
	assert_int_equal(event_bytes(e, 0, n - 1, MO_EST_PIPELINE_INPUTS), 0);
	mo_estimate_free(e);
	free(single);
	free(ms);
	free(world);
	free(sp);
	free(tp);
	free(text);
	assert_string_equal(mo_estimate_bucket_name(MO_EST_PIPELINE_INPUTS), "pipeline_inputs");
}

#define MOE_MLA "tests/data/megatron/gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed.yaml"
/* golden_values_dev_dgx_h100.json@11debfa7, mem-max-allocated-bytes at step
 * 2: the first step with every optimizer state, before the routing drifts
 * (the running peak, never reset, reaches 60,111,630,336 at step 39) */
#define MOE_MLA_STEP2_PEAK 57803964416.0
/* Transformer Engine's dummy weight gradients on its last stage (the sum in
 * test_dummy_wgrads) */
#define MOE_MLA_LAST_DUMMY_WGRADS 84541440ULL
/* Megatron's global buffer of the output layer's gathered input under SP
 * (test_head_gather): [4096, 4, 1024] bf16 */
#define MOE_MLA_LAST_GATHER 33554432ULL
/* MLA's YaRN tables (test_mla_rope): 9 attention modules x 2 MiB */
#define MOE_MLA_LAST_ROPE 18874368ULL
/* the alltoall dispatcher's last routing (test_dispatcher_state): 9 MoE
 * layers x 3,440,640 */
#define MOE_MLA_DISPATCH_LAYER 3440640ULL
#define MOE_MLA_LAST_DISPATCH (9 * MOE_MLA_DISPATCH_LAYER)
#define MOE_MLA_LAST_KEPT_CACHES                                                       \
	(MOE_MLA_LAST_DUMMY_WGRADS + MOE_MLA_LAST_GATHER + MOE_MLA_LAST_ROPE +        \
	 MOE_MLA_LAST_DISPATCH)

/* The MoE + MLA + MTP memory test (TP 2, SP, PP 2 x 4 virtual, EP 4, ETP 1,
 * micro-batch 4 x seq 4096, 32 heads, `--attention-backend unfused`), each
 * term counted by hand from its model_config.yaml (notes/megatron-memory.md):
 * - Transformer Engine's unfused attention keeps the bf16 probabilities
 *   [b 4, heads 32 / TP 2, 4096, 4096] = 2,147,483,648 B per layer, where the
 *   flash row keeps the fp32 log-sum-exp [4, 16, 4096] = 1,048,576 B instead
 *   (Q, K, V and the output are kept by both);
 * - the last stage holds the MTP layer's copy of the embedding: vocab 50257
 *   padded to 51712 (a multiple of 3232 x TP) x 1024 / TP = 26,476,544;
 * - --moe-grouped-gemm adds TE GroupedLinear's 4 workspaces of 32 MiB + 1 KiB
 *   on H100 to the 96 MiB + 1 KiB of the dense GEMMs;
 * - the last stage's peak within 3% of the step-2 figure. */
static void test_moe_mla_unfused(void **state)
{
	(void)state;
	char *text = test_read_file(MOE_MLA, NULL);
	char *flash = with_value(text, "  attention:", "flash");
	char *plain = with_value(text, "moe_grouped_gemm:", "false");
	mo_estimate *e = estimate_text(text), *f = estimate_text(flash),
		    *p = estimate_text(plain);
	const mo_estimate_layer *eager_layer = mo_estimate_layer_get(e, 2);
	const mo_estimate_layer *flash_layer = mo_estimate_layer_get(f, 2);
	assert_non_null(eager_layer);
	assert_non_null(flash_layer);
	assert_int_equal(eager_layer->activation_bytes - flash_layer->activation_bytes,
			 2147483648ULL - 1048576ULL);
	const mo_estimate_stage *last = mo_estimate_stage_get(e, mo_estimate_stage_count(e) - 1);
	const mo_estimate_stage *last_plain =
		mo_estimate_stage_get(p, mo_estimate_stage_count(p) - 1);
	/* with Transformer Engine's dummy weight gradients (test_dummy_wgrads) */
	assert_int_equal(last->peak_by_bucket[MO_EST_WORKSPACES],
			 234881024ULL + 5 * 1024 + MOE_MLA_LAST_KEPT_CACHES);
	assert_int_equal(last_plain->peak_by_bucket[MO_EST_WORKSPACES],
			 100663296ULL + 1024 + MOE_MLA_LAST_KEPT_CACHES);
	char *report = mo_estimate_report(e, 1);
	assert_non_null(strstr(report, "the MTP layers' embedding 26476544 params"));
	free(report);
	double err = (double)last->peak_bytes / MOE_MLA_STEP2_PEAK - 1.0;
	printf("gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed peak %llu B against step 2's "
	       "%.0f B: %+.2f%%\n",
	       (unsigned long long)last->peak_bytes, MOE_MLA_STEP2_PEAK, 100.0 * err);
	assert_true(err > -0.03 && err < 0.03);
	mo_estimate_free(e);
	mo_estimate_free(f);
	mo_estimate_free(p);
	free(plain);
	free(flash);
	free(text);
}

/* Transformer Engine's dummy weight gradients (gradient_accumulation_fusion,
 * Megatron's default, on in the MoE/MLA/MTP run): each TE Linear, and
 * Megatron's output layer, hands autograd a torch.empty of its weight's
 * shape cached per (rows, cols, dtype) and never freed (TE module/base.py
 * get_dummy_wgrad). Counted by hand from its model_config.yaml (hidden
 * 1024, 32 heads, TP 2, ETP 1, q_lora 1536, kv_lora 512, qk 128 + rope 64,
 * v 128, SwiGLU, shared expert 1024, expert FFN 1024, dense FFN 4096,
 * vocab 51712 padded; bf16), local [out, in]:
 *   output layer 25856 x 1024                 52,953,088
 *   linear_q_down_proj 1536 x 1024 (whole)     3,145,728
 *   linear_q_up_proj 32 x 192 / 2 x 1536       9,437,184
 *   linear_kv_down_proj 576 x 1024 (whole)     1,179,648
 *   linear_kv_up_proj 32 x 256 / 2 x 512       4,194,304
 *   linear_proj 1024 x 32 x 128 / 2            4,194,304
 *   shared fc1 2 x 1024 / 2 x 1024 = expert fc2 1024 x 1024: one  2,097,152
 *   shared fc2 1024 x 512                      1,048,576
 *   expert fc1 2 x 1024 x 1024 (all 8 local experts: one)  4,194,304
 *   MTP eh_proj 1024 / 2 x 2048                2,097,152
 * The last stage (8 MoE layers and the MTP layer): 84,541,440. Stage 0
 * (the dense layer 0 and 7 MoE layers): the layers' shapes without the
 * output layer and eh_proj, plus the dense fc1 2 x 4096 / 2 x 1024
 * (8,388,608; its fc2 1024 x 2048 is linear_proj's shape): 37,879,808.
 * Kept from the first step on: in every event, the first stage's
 * embedding forward too (before the GEMM workspaces); the peak and the
 * between-steps bytes grow by the same. None without the
 * fusion, with transformer_impl local, or under the mindspore rules. */
static void test_dummy_wgrads(void **state)
{
	(void)state;
	char *text = test_read_file(MOE_MLA, NULL);
	char *off = with_value(text, "gradient_accumulation_fusion:", "false");
	char *local = with_value(text, "transformer_impl:", "local");
	mo_estimate *e = estimate_text(text), *o = estimate_text(off), *l = estimate_text(local);
	const uint64_t stage0 = 37879808ULL, ws = 234881024ULL + 5 * 1024;
	assert_int_equal(mo_estimate_stage_count(e), 2);
	const uint64_t want[2] = {stage0, MOE_MLA_LAST_DUMMY_WGRADS};
	/* the workspaces bucket also holds the YaRN tables (8 attention
	 * modules on stage 0, test_mla_rope) and the last stage's
	 * gathered-input buffer (test_head_gather) */
	const uint64_t other[2] = {8 * 2097152ULL + 7 * MOE_MLA_DISPATCH_LAYER,
				   MOE_MLA_LAST_KEPT_CACHES - MOE_MLA_LAST_DUMMY_WGRADS};
	for (size_t s = 0; s < 2; s++) {
		const mo_estimate_stage *on = mo_estimate_stage_get(e, s),
					*no = mo_estimate_stage_get(o, s);
		assert_int_equal(on->between_steps_bytes - no->between_steps_bytes, want[s]);
		assert_int_equal(on->peak_bytes - no->peak_bytes, want[s]);
		size_t n = mo_estimate_event_count(e, s);
		for (size_t k = 0; k < n; k++) {
			const mo_estimate_event *ev = mo_estimate_event_get(e, s, k);
			uint64_t expect = want[s] + other[s] + (s == 0 && k == 0 ? 0 : ws);
			assert_int_equal(ev->bytes[MO_EST_WORKSPACES], expect);
		}
		/* local: the dense GEMMs' workspaces only (no GroupedLinear) */
		assert_int_equal(mo_estimate_stage_get(l, s)->peak_by_bucket[MO_EST_WORKSPACES],
				 100663296ULL + 1024 + other[s]);
	}
	assert_int_equal(mo_estimate_event_get(e, 0, 0)->kind, MO_EV_EMBED_FORWARD);
	mo_estimate_free(l);
	mo_estimate_free(o);
	mo_estimate_free(e);
	char *ms = with_value(text, "framework:", "mindspore");
	e = estimate_text(ms);
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++)
		assert_int_equal(mo_estimate_stage_get(e, s)->peak_by_bucket[MO_EST_WORKSPACES], 0);
	mo_estimate_free(e);
	free(ms);
	free(local);
	free(off);
	free(text);
}

#define CP2 "tests/data/megatron/gpt3_mcore_te_tp2_pp2_cp2.yaml"

/* Under sequence parallelism Megatron's output layer gathers its input
 * [s / CP / TP, b, h] into its global "mpu" buffer, one per dtype, never
 * freed (tensor_parallel/layers.py LinearWithGradAccumulationAndAsync-
 * Communication, utils.py GlobalMemoryBuffer), and saves only its local
 * input. The last stage keeps [s / CP, b, h] bf16 from the first step on:
 *   MoE/MLA/MTP run: 4096 x 4 x 1024 x 2 = 33,554,432 (TP 2, SP)
 *   CP 2 run:        1024 / 2 x 4 x 512 x 2 = 2,097,152 (TP 2, SP)
 *   8-expert run:    1024 x 4 x 512 x 2 = 4,194,304 (TP 2, SP, PP 1), but its
 *                    all-gather dispatcher gathers each MoE layer's local
 *                    [1024 x 4 / TP 2, 512] over TP 2 x EP 2 into the same
 *                    buffer (token_dispatcher.py token_dispatch,
 *                    use_global_buffer=True): 8192 x 512 x 2 = 8,388,608
 *   7B PP 4 run:     none (TP 1)
 * At the optimizer step the workspaces bucket holds it beside the device's
 * GEMM workspaces (h100: 3 x 32 MiB + 1 KiB, with --moe-grouped-gemm
 * 4 x (32 MiB + 1 KiB) more; a100: 2 x 32 + 4 MiB) and the dummy weight
 * gradients (the MoE run only). Each loss region of the MoE run keeps the
 * final norm's input y [4096 / 2, 4, 1024] (16 MiB) and its fp32 rstd
 * (32 KiB), the output layer's local input (16 MiB, not the gathered
 * 32 MiB) and the fp32 softmax [16384, 25856] (1,694,498,816 B); the MTP
 * layer's region is the same: 2 x 1,728,086,016 at its loss forward. */
static void test_head_gather(void **state)
{
	(void)state;
	const uint64_t h100 = 3 * 33554432ull + 1024, grouped = 4 * (33554432ull + 1024);
	static const struct {
		const char *file;
		uint64_t gather;
	} runs[] = {
		{MOE_MLA, 4096ull * 4 * 1024 * 2},
		{CP2, 512ull * 4 * 512 * 2},
		{EXPERTS, 8192ull * 512 * 2},
		{PP4, 0},
	};
	const uint64_t ws[] = {h100 + grouped + MOE_MLA_LAST_DUMMY_WGRADS + MOE_MLA_LAST_ROPE +
				       MOE_MLA_LAST_DISPATCH,
			       h100,
			       2 * 33554432ull + 4194304, h100};
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
		char *text = test_read_file(runs[i].file, NULL);
		mo_estimate *e = estimate_text(text);
		size_t last = mo_estimate_stage_count(e) - 1;
		size_t n = mo_estimate_event_count(e, last);
		const mo_estimate_event *opt = mo_estimate_event_get(e, last, n - 1);
		assert_int_equal(opt->kind, MO_EV_OPTIMIZER);
		assert_int_equal(opt->bytes[MO_EST_WORKSPACES], ws[i] + runs[i].gather);
		/* not on the other stages (no output layer) */
		if (last > 0) {
			size_t n0 = mo_estimate_event_count(e, 0);
			uint64_t first_ws = mo_estimate_event_get(e, 0, n0 - 1)->bytes[MO_EST_WORKSPACES];
			char *off = with_value(text, "sequence_parallel:", "false");
			mo_estimate *o = estimate_text(off);
			size_t m0 = mo_estimate_event_count(o, 0);
			/* without SP the MoE run's dispatcher routes twice the
			 * tokens a rank (test_dispatcher_state): 7 MoE layers */
			uint64_t routing = i == 0 ? 7 * MOE_MLA_DISPATCH_LAYER : 0;
			if (runs[i].gather)
				assert_int_equal(first_ws + routing,
						 mo_estimate_event_get(o, 0, m0 - 1)
							 ->bytes[MO_EST_WORKSPACES]);
			mo_estimate_free(o);
			free(off);
		}
		if (i == 0) { /* the MoE/MLA/MTP run */
			size_t k = 1;
			while (mo_estimate_event_get(e, last, k)->kind != MO_EV_LOSS_FORWARD)
				k++;
			uint64_t at = mo_estimate_event_get(e, last, k)->bytes[MO_EST_ACTIVATIONS],
				 before = mo_estimate_event_get(e, last, k - 1)->bytes[MO_EST_ACTIVATIONS];
			assert_int_equal(at - before, 2 * 1728086016ull);
		}
		/* the mindspore rules keep none */
		char *ms = with_value(text, "framework:", "mindspore");
		mo_estimate *m = estimate_text(ms);
		for (size_t s = 0; s < mo_estimate_stage_count(m); s++)
			assert_int_equal(mo_estimate_stage_get(m, s)->peak_by_bucket[MO_EST_WORKSPACES], 0);
		mo_estimate_free(m);
		free(ms);
		mo_estimate_free(e);
		free(text);
	}
}

/* Multi-latent attention's YaRN rotary tables (Megatron: rope_type yarn,
 * MLA's default): each attention module registers cos/sin buffers of
 * original_max_position_embeddings 4096 positions x qk_pos_emb_head_dim 64,
 * cast to bf16 with the model (2 x 4096 x 64 x 2 = 1 MiB), and its
 * lru_cache'd forward (maxsize 32, one cache per process) keeps the fp32
 * embedding [s / CP, 1, 1, 64] (4096 x 64 x 4 = 1 MiB) of the last 32
 * modules called. The MoE/MLA/MTP run (--no-rope-fusion, seq 4096): 9
 * modules on the last stage (8 layers + MTP) = 18,874,368, 8 on stage 0.
 * With rope fusion (Megatron's default) the first call remakes cos/sin in
 * the compute dtype at the run's length: the same at seq 4096; at seq 2048
 * 2 x 2048 x 64 x 2 + 2048 x 64 x 4 = 1 MiB a module, without fusion
 * 1 MiB + 512 KiB. 64 layers (33 modules on the last stage): 33 x 1 MiB of
 * tables + 32 x 1 MiB of cached embeddings. */
static void test_mla_rope(void **state)
{
	(void)state;
	const uint64_t others = 234881024ULL + 5 * 1024 + MOE_MLA_LAST_DUMMY_WGRADS +
				MOE_MLA_LAST_GATHER + MOE_MLA_LAST_DISPATCH;
	char *text = test_read_file(MOE_MLA, NULL);
	mo_estimate *e = estimate_text(text);
	assert_int_equal(mo_estimate_stage_get(e, 1)->peak_by_bucket[MO_EST_WORKSPACES],
			 others + MOE_MLA_LAST_ROPE);
	mo_estimate_free(e);

	char *fused = with_value(text, "apply_rope_fusion:", "true");
	e = estimate_text(fused);
	assert_int_equal(mo_estimate_stage_get(e, 1)->peak_by_bucket[MO_EST_WORKSPACES],
			 others + MOE_MLA_LAST_ROPE);
	mo_estimate_free(e);

	/* seq 2048: the run's length decides the fused tables; the buffer of
	 * the gathered input and the dispatcher's routing halve too */
	const uint64_t half = others - MOE_MLA_LAST_GATHER / 2 - MOE_MLA_LAST_DISPATCH / 2;
	char *s2048 = with_value(text, "  seq_length:", "2048");
	char *s2048f = with_value(s2048, "apply_rope_fusion:", "true");
	e = estimate_text(s2048);
	assert_int_equal(mo_estimate_stage_get(e, 1)->peak_by_bucket[MO_EST_WORKSPACES],
			 half + 9 * (1048576ULL + 524288ULL));
	mo_estimate_free(e);
	e = estimate_text(s2048f);
	assert_int_equal(mo_estimate_stage_get(e, 1)->peak_by_bucket[MO_EST_WORKSPACES],
			 half + 9 * 1048576ULL);
	mo_estimate_free(e);

	/* 64 layers: 8 a chunk, the last stage 32 + the MTP layer */
	char *deep = with_value(text, "  num_layers:", "64");
	e = estimate_text(deep);
	const mo_estimate_stage *last = mo_estimate_stage_get(e, 1);
	assert_int_equal(last->num_layers, 33);
	assert_int_equal(last->peak_by_bucket[MO_EST_WORKSPACES],
			 others - MOE_MLA_LAST_DISPATCH + 33 * MOE_MLA_DISPATCH_LAYER +
				 33 * 1048576ULL + 32 * 1048576ULL);
	mo_estimate_free(e);
	free(deep);
	free(s2048f);
	free(s2048);
	free(fused);
	free(text);
}

/* Megatron's alltoall dispatcher keeps its last micro-batch's routing on
 * each MoE layer (token_dispatcher.py dispatch_preprocess: self.probs,
 * self.routing_map, self.reversed_local_input_permutation_mapping). The
 * MoE/MLA/MTP run (8192 local tokens under SP, 32 experts, top-4,
 * --moe-router-dtype fp32, --moe-permute-fusion), per MoE layer:
 *   probs fp32 [8192, 32]                  1,048,576
 *   routing map bool [8192, 32]              262,144
 *   TE row_id_map int32 [8192, 2 x 32 + 1] 2,129,920
 * = 3,440,640; 9 MoE layers on the last stage (8 + MTP), 7 on stage 0.
 * Unfused permutation: int64 sorted indices [8192 x 4] (262,144) instead
 * of the row_id_map: 1,572,864. The router in the compute dtype: bf16
 * probs (524,288): 2,916,352. The all-gather dispatcher keeps none of it,
 * but gathers each MoE layer's 8192 local tokens over TP 2 x EP 4 into the
 * "mpu" buffer: [65536, 1024] bf16 = 134,217,728 on stage 0; on the last
 * stage that buffer replaces the output layer's 33,554,432 (one buffer,
 * the larger request): 100,663,296 more. */
static void test_dispatcher_state(void **state)
{
	(void)state;
	char *text = test_read_file(MOE_MLA, NULL);
	char *gather = with_value(text, "moe_token_dispatcher_type:", "allgather");
	char *unfused = with_value(text, "moe_permute_fusion:", "false");
	char *bf16 = with_value(text, "moe_router_dtype:", "bfloat16");
	static const uint64_t per_layer[] = {3440640ULL, 1572864ULL, 2916352ULL};
	const char *variants[] = {text, unfused, bf16};
	mo_estimate *g = estimate_text(gather);
	for (size_t v = 0; v < 3; v++) {
		mo_estimate *e = estimate_text(variants[v]);
		const uint64_t layers[2] = {7, 9}, gathered[2] = {134217728ULL, 100663296ULL};
		for (size_t s = 0; s < 2; s++) {
			const mo_estimate_stage *on = mo_estimate_stage_get(e, s),
						*off = mo_estimate_stage_get(g, s);
			assert_int_equal(on->peak_by_bucket[MO_EST_WORKSPACES] + gathered[s] -
						 off->peak_by_bucket[MO_EST_WORKSPACES],
					 layers[s] * per_layer[v]);
			assert_int_equal(on->between_steps_bytes + gathered[s] -
						 off->between_steps_bytes,
					 layers[s] * per_layer[v]);
		}
		mo_estimate_free(e);
	}
	mo_estimate_free(g);
	free(bf16);
	free(unfused);
	free(gather);
	free(text);
}

/* transformer_impl: Transformer Engine copies K and V ([16384, 256] bf16,
 * 8 MiB each) and keeps no fused QKV output ([16384, 1536], 48 MiB), which
 * autograd (`local`) keeps through the K/V views: 32 MiB less per layer. */
static void test_transformer_impl(void **state)
{
	(void)state;
	char *text = test_read_file(FIXTURE, NULL);
	char *local = with_value(text, "transformer_impl:", "local");
	mo_estimate *te = estimate_text(text), *plain = estimate_text(local);
	const mo_estimate_layer *a = mo_estimate_layer_get(te, 0);
	const mo_estimate_layer *b = mo_estimate_layer_get(plain, 0);
	assert_int_equal(b->activation_bytes - a->activation_bytes, 32ull << 20);
	assert_int_equal(a->activation_bytes, 976ull * 1048576 + 786432); /* 976.75 MiB */
	mo_estimate_free(te);
	mo_estimate_free(plain);
	free(local);
	free(text);
}

/* learned_absolute: the [8192, 4096] table, not split by TP, at 12 B per
 * parameter (bf16 + fp32 main_grad + 12 / DP 2); rope has none. */
static void test_position_table(void **state)
{
	(void)state;
	char *text = test_read_file(FIXTURE, NULL);
	char *rope = with_value(text, "position_embedding_type:", "rope");
	mo_estimate *with = estimate_text(text), *without = estimate_text(rope);
	double diff = parameter_state(with) - parameter_state(without);
	/* the bucket padding may move by less than one 128-element multiple
	 * per bucket (43 buckets of 4e7 elements at most) */
	assert_true(fabs(diff - 8192.0 * 4096 * 12) < 128.0 * 43 * 6);
	mo_estimate_free(with);
	mo_estimate_free(without);
	free(rope);
	free(text);
}

/* Megatron's DDP under CP: parameters and gradients stay whole on every
 * rank (no FSDP over CP), the distributed optimizer shards over DP x CP
 * (distributed_data_parallel.py, intra_dp_cp_group): CP 2 on 16 devices
 * gives 12 B / (DP 2 x CP 2) = 3 B per local parameter. */
static void test_context_parallel(void **state)
{
	(void)state;
	char *text = test_read_file(FIXTURE, NULL);
	char *world = with_value(text, "world_size:", "16");
	char *cp = with_value(world, "sequence_parallel:", "false\n  context_parallel: 2");
	mo_estimate *e = estimate_text(cp);
	const mo_estimate_stage *s = mo_estimate_stage_get(e, 0);
	assert_true((double)s->optimizer_bytes == 3 * 1713299456.0);
	assert_int_equal(s->gradients_bytes, 2 * s->weights_bytes);
	assert_true((double)s->weights_bytes >= 2 * 1713299456.0);
	assert_true((double)s->weights_bytes < 2 * (1713299456.0 + 256 * 43));
	mo_estimate_free(e);
	free(cp);
	free(world);
	free(text);
}

/* ---- every figure of tests/data/megatron/figures.tsv -------------------------
 * Each row (the last rank's figures): case; the first logged step after
 * step 1 (the first with every optimizer state) and its
 * mem-max-allocated-bytes and mem-allocated-bytes; the last logged step and
 * its mem-max-allocated-bytes; source; note. The first step's two figures
 * are within 3%, every run. mem-max-allocated-bytes is torch's running
 * peak, never reset: where the last step's differs from the first step's
 * (data-dependent shapes: MoE routing), it is within 3% too unless the
 * table below says why not; a row the table does not know fails (no
 * figure is skipped silently). The reasons are decoded in
 * notes/megatron-memory.md. */
struct mo_figure_gap {
	const char *name;
	const char *last_peak_gap; /* NULL: within 3% */
	const char *peak_gap;	   /* the first step's peak; NULL: within 3% */
	const char *state_gap;	   /* its bytes between steps; NULL: within 3% */
};

static const struct mo_figure_gap mo_figure_gaps[] = {
	{"gpt3_7b_tp4_pp1_memory_speed", NULL, NULL, NULL},
	{"gpt3_7b_tp1_pp4_memory_speed", NULL, NULL, NULL},
	{"gpt3_mcore_te_tp1_pp1_uniform_full_recompute", NULL, NULL, NULL},
	{"gpt3_mcore_te_tp2_pp2_cp2", NULL, NULL, NULL},
	{"gpt3_mcore_te_tp2_pp1_te_8experts2parallel_dist_optimizer", NULL, NULL, NULL},
	{"gpt3_mcore_te_tp4_pp1_qk_layernorm_test_mode", NULL, NULL, NULL},
	{"gpt3_mcore_te_tp2_pp2_ep4_etp1_selective_recompute_experimental",
	 "under at step 50 as at step 5 (the running peak grows 35 MB)",
	 "under by 2.3 GiB: the run's --overlap-moe-expert-parallel-comm (combined 1F1B: one "
	 "more warm-up micro-batch, each steady forward beside its backward layer by layer) is "
	 "modelled, but on this rank the peak stays at the main loss's backward, which the "
	 "combined step runs before any of its layers (model_chunk_schedule_plan.py:544-552 at "
	 "d98e8a64), with the 7 chunks the sequential schedule held; the forward layer beside "
	 "the backward one tops out 1.2 GiB under it. What holds the rest is not found; a "
	 "lead: the run's loss is the fused one (--cross-entropy-loss-fusion, native: "
	 "torch.compile'd, its backward in place only where Inductor reinplaces it), as is the "
	 "other run under at its loss backward, and one fp32 plane there is 1.69 GB "
	 "(notes/megatron-memory.md)",
	 NULL},
	{"gpt3_moe_mcore_te_ep8_resume_torch_dist_dist_optimizer",
	 "the running peak grows 27 MB more by step 10 (routing)",
	 "under by 100 MB: the peak grows 170 MB from step 1 to step 5, 140 MB of it the Adam "
	 "moments, the rest with the bytes between steps unchanged: the routed tokens of this "
	 "rank's one expert (each of the 8 receives the tokens of all 8 ranks under the "
	 "all-gather dispatcher), data-dependent; the peaks of steps 1, 5 and 10-100 are "
	 "moe_routing_skew 1.09, 1.12 and 1.16 on it (806 MB a unit of skew at the peak), which "
	 "no figure of the golden file says (it logs only the global num-zeros)",
	 NULL},
	{"gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split", NULL, NULL,
	 NULL},
	{"gpt3_mcore_te_tp2_pp2_cp2_etp4_dp_last", NULL, NULL, NULL},
	{"gpt3_mcore_cp2_pp2_ep2_te_4experts2parallel_nondeterministic", NULL, NULL, NULL},
	{"gpt3_mcore_tp2_cp2_pp2_ep2_te_4experts2parallel", NULL, NULL, NULL},
	{"gpt3_moe_mcore_te_tp4_ep2_etp2_pp2_scoped_cudagraph", NULL, NULL,
	 "under: the run trains in FP8 (--fp8-format, --fp8-recipe; Transformer Engine keeps FP8 "
	 "copies and transposes of the weights) under CUDA graphs (--cuda-graph-impl: static "
	 "buffers), neither modelled (the import warns); its bytes between steps also vary by "
	 "24 MB over the steps"},
	{"gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed",
	 "the running peak grows 2.3 GB after step 29 while the bytes kept between steps stay "
	 "the same: activations of a data-dependent size, the routed tokens of this rank's "
	 "experts; the estimate assumes balanced routing, and the run's num-zeros (all-zero "
	 "gradients: experts that received no token) rises from 38.5M at step 2 to 0.6-1.0G "
	 "from step 7 on",
	 NULL, NULL},
};

static const struct mo_figure_gap *figure_gap(const char *name)
{
	for (size_t i = 0; i < sizeof mo_figure_gaps / sizeof *mo_figure_gaps; i++)
		if (strcmp(mo_figure_gaps[i].name, name) == 0)
			return &mo_figure_gaps[i];
	return NULL;
}

/* A model text and a config text (NULL: none), loaded without a diagnostic error. */
static void load_pair(const char *model, const char *config, const char *name, mo_model **m,
		      mo_config **c)
{
	mo_diags *d = NULL;
	mo_error err = {0};
	*m = NULL;
	*c = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(m, d, model, strlen(model), name, NULL, &err), 0);
	if (config)
		assert_int_equal(mo_config_parse(c, d, config, strlen(config), name, NULL, &err), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	mo_diags_free(d);
}

static mo_estimate *estimate_case(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
	char *model = test_read_file(path, NULL);
	snprintf(path, sizeof path, "%s/%s.config.yaml", dir, name);
	FILE *f = fopen(path, "rb");
	char *config = NULL;
	if (f) {
		fclose(f);
		config = test_read_file(path, NULL);
	}
	mo_model *m = NULL;
	mo_config *c = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	load_pair(model, config, name, &m, &c);
	assert_int_equal(mo_estimate_run(&e, c, m, &err), 0);
	mo_config_free(c);
	mo_model_free(m);
	free(config);
	free(model);
	return e;
}

/* Within 3%, or outside it with the reason given (a reason for a figure
 * within 3% is stale and fails too). */
static void check_figure(const char *name, const char *what, double estimated, double measured,
			 const char *gap)
{
	double err = estimated / measured - 1.0;
	bool within = err > -0.03 && err < 0.03;
	printf("%-58s %-13s %15.0f B, measured %15.0f: %+7.2f%%%s%s%s\n", name, what, estimated,
	       measured, 100.0 * err, gap ? " (outside 3%: " : "", gap ? gap : "", gap ? ")" : "");
	assert_true(within == (gap == NULL));
}

static void test_figures(void **state)
{
	(void)state;
	const char *dir = getenv("MEMOPT_MEGATRON_DIR");
	if (!dir)
		dir = "tests/data/megatron";
	char path[512];
	snprintf(path, sizeof path, "%s/figures.tsv", dir);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char line[4096];
	size_t rows = 0;
	assert_non_null(fgets(line, sizeof line, f)); /* header */
	while (fgets(line, sizeof line, f)) {
		char name[256], what[32];
		int step, last_step;
		double peak, between, last_peak;
		if (sscanf(line, "%255[^\t]\t%d\t%lf\t%lf\t%d\t%lf", name, &step, &peak, &between,
			   &last_step, &last_peak) != 6)
			continue;
		const struct mo_figure_gap *gap = figure_gap(name);
		if (!gap)
			printf("%s: a figure this test does not know\n", name);
		assert_non_null(gap);
		mo_estimate *e = estimate_case(dir, name);
		/* the last rank logs the figures: the last pipeline stage */
		const mo_estimate_stage *s =
			mo_estimate_stage_get(e, mo_estimate_stage_count(e) - 1);
		snprintf(what, sizeof what, "peak step %d", step);
		check_figure(name, what, (double)s->peak_bytes, peak, gap->peak_gap);
		/* between steps: the parameter state, the workspaces and the
		 * pipeline inputs */
		snprintf(what, sizeof what, "state step %d", step);
		check_figure(name, what, (double)s->between_steps_bytes, between, gap->state_gap);
		assert_true(last_step > step && last_peak >= peak);
		if (last_peak != peak) {
			snprintf(what, sizeof what, "peak step %d", last_step);
			check_figure(name, what, (double)s->peak_bytes, last_peak,
				     gap->last_peak_gap);
		} else {
			assert_null(gap->last_peak_gap);
		}
		mo_estimate_free(e);
		rows++;
	}
	fclose(f);
	assert_true(rows >= 1);
}

static mo_model *load_model(const char *text, size_t *errors)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err);
	*errors = mo_diags_errors(d);
	mo_diags_free(d);
	return m;
}

/* The Megatron keys: read, written back, refused when malformed;
 * accumulate_allreduce_grads_in_fp32 is grads_dtype float32. */
static void test_megatron_keys(void **state)
{
	(void)state;
	static const char *const base =
		"model:\n  num_layers: 2\n  hidden_size: 256\n  num_attention_heads: 4\n"
		"  vocab_size: 1000\n  seq_length: 128\n%s"
		"training:\n  params_dtype: bfloat16\n  framework: pytorch\n%s"
		"parallel:\n  world_size: 1\n";
	char text[1024];
	size_t errors;
	snprintf(text, sizeof text, base,
		 "  position_embedding_type: learned_absolute\n  max_position_embeddings: 512\n"
		 "  add_bias_linear: true\n",
		 "  accumulate_allreduce_grads_in_fp32: true\n  transformer_impl: local\n"
		 "  overlap_grad_reduce: true\n  moe_grouped_gemm: true\n"
		 "  gradient_accumulation_fusion: true\n  apply_rope_fusion: false\n"
		 "  moe_token_dispatcher_type: alltoall\n  moe_router_dtype: fp32\n"
		 "  moe_permute_fusion: true\n");
	mo_model *m = load_model(text, &errors);
	assert_non_null(m);
	assert_int_equal(errors, 0);
	char *yaml = mo_model_to_yaml(m);
	assert_non_null(strstr(yaml, "position_embedding_type: learned_absolute"));
	assert_non_null(strstr(yaml, "max_position_embeddings: 512"));
	assert_non_null(strstr(yaml, "add_bias_linear: true"));
	assert_non_null(strstr(yaml, "add_qkv_bias: true")); /* its default */
	assert_non_null(strstr(yaml, "grads_dtype: float32"));
	assert_null(strstr(yaml, "accumulate_allreduce")); /* one state */
	assert_non_null(strstr(yaml, "transformer_impl: local"));
	assert_non_null(strstr(yaml, "overlap_grad_reduce: true"));
	assert_non_null(strstr(yaml, "moe_grouped_gemm: true"));
	assert_non_null(strstr(yaml, "gradient_accumulation_fusion: true"));
	assert_non_null(strstr(yaml, "apply_rope_fusion: false"));
	assert_non_null(strstr(yaml, "moe_token_dispatcher_type: alltoall"));
	assert_non_null(strstr(yaml, "moe_router_dtype: float32")); /* fp32 */
	assert_non_null(strstr(yaml, "moe_permute_fusion: true"));
	/* the written form reads back to the same */
	mo_model *again = load_model(yaml, &errors);
	assert_int_equal(errors, 0);
	char *yaml2 = mo_model_to_yaml(again);
	assert_string_equal(yaml, yaml2);
	free(yaml2);
	mo_model_free(again);
	free(yaml);
	mo_model_free(m);

	static const char *const bad[][2] = {
		{"  position_embedding_type: alibi\n", ""},
		{"  max_position_embeddings: 0\n", ""},
		{"  add_bias_linear: maybe\n", ""},
		{"", "  transformer_impl: apex\n"},
		{"", "  accumulate_allreduce_grads_in_fp32: 32\n"},
		{"", "  moe_grouped_gemm: 3\n"},
		{"", "  gradient_accumulation_fusion: often\n"},
		{"", "  apply_rope_fusion: 2\n"},
		{"", "  moe_token_dispatcher_type: deepep\n"},
		{"", "  moe_router_dtype: fp64\n"},
		{"", "  moe_permute_fusion: yes please\n"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(text, sizeof text, base, bad[i][0], bad[i][1]);
		m = load_model(text, &errors);
		assert_true(errors > 0);
		mo_model_free(m);
	}
}

#define EP8 "tests/data/megatron/gpt3_moe_mcore_te_ep8_resume_torch_dist_dist_optimizer.yaml"

/* training.moe_routing_skew: this rank's experts receive skew x their
 * balanced tokens. The EP 8 run keeps per MoE layer and micro-batch 64 MiB
 * of routed tensors (the experts' input [8192, 512], FC1 output, activation
 * output and its probability-weighted copy [8192, 1024], the combine's input
 * [8192, 512], bf16); at its peak 12 layers are alive: skew 1.5 adds
 * 12 x 32 MiB = 402,653,184 B, and
 * nothing between steps. Absent on a MoE model it is listed as assumed
 * (balanced), not on a dense one; outside [1, 1024] it is refused. */
static void test_routing_skew(void **state)
{
	(void)state;
	char *text = test_read_file(EP8, NULL);
	char *skewed = with_value(text, "training:", "\n  moe_routing_skew: 1.5");
	mo_estimate *e = estimate_text(text), *k = estimate_text(skewed);
	const mo_estimate_stage *a = mo_estimate_stage_get(e, 0), *b = mo_estimate_stage_get(k, 0);
	assert_int_equal(b->peak_bytes - a->peak_bytes, 12ull * 32 * 1048576);
	assert_int_equal(b->between_steps_bytes, a->between_steps_bytes);
	mo_estimate_free(e);
	mo_estimate_free(k);
	size_t errors = 0;
	mo_model *m = load_model(text, &errors);
	assert_non_null(m);
	bool listed = false;
	for (size_t i = 0; i < mo_model_assumed_count(m); i++) {
		const char *path, *value, *source;
		assert_int_equal(mo_model_assumed(m, i, &path, &value, &source), 0);
		if (strcmp(path, "training.moe_routing_skew") == 0)
			listed = strcmp(value, "1") == 0;
	}
	assert_true(listed);
	mo_model_free(m);
	m = load_model(skewed, &errors);
	for (size_t i = 0; i < mo_model_assumed_count(m); i++) {
		const char *path, *value, *source;
		assert_int_equal(mo_model_assumed(m, i, &path, &value, &source), 0);
		assert_string_not_equal(path, "training.moe_routing_skew");
	}
	mo_model_free(m);
	char *bad = with_value(text, "training:", "\n  moe_routing_skew: 0.5");
	m = load_model(bad, &errors);
	assert_int_equal(errors, 1);
	mo_model_free(m);
	free(bad);
	free(skewed);
	free(text);
}

#define SELECTIVE "tests/data/megatron/gpt3_mcore_te_tp2_pp2_ep4_etp1_selective_recompute_experimental"

/* The last stage's peak and the expanded plan of layer 3 under a config text. */
static uint64_t selective_peak(const char *config, mo_action_kind *norm_action, char *key,
			       size_t key_size)
{
	char *model = test_read_file(SELECTIVE ".yaml", NULL);
	mo_model *m = NULL;
	mo_config *c = NULL;
	mo_estimate *e = NULL;
	mo_plan *plan = NULL;
	mo_error err = {0};
	load_pair(model, config, "selective.yaml", &m, &c);
	assert_int_equal(mo_estimate_run(&e, c, m, &err), 0);
	assert_int_equal(mo_expand(&plan, c, m, &err), 0);
	*norm_action = MO_ACT_KEEP;
	for (size_t i = 0; i < mo_plan_action_count(plan, 3); i++) {
		const mo_action *a = mo_plan_action(plan, 3, i);
		if (strcmp(a->path, "input_layernorm") == 0) {
			*norm_action = a->action;
			snprintf(key, key_size, "%s", a->rule.key);
		}
	}
	uint64_t peak = mo_estimate_stage_get(e, mo_estimate_stage_count(e) - 1)->peak_bytes;
	mo_plan_free(plan);
	mo_estimate_free(e);
	mo_config_free(c);
	mo_model_free(m);
	free(model);
	return peak;
}

/* discard_module (Megatron's --recompute-modules layernorm mla_up_proj moe_act): each MoE
 * layer (and the MTP layer, the same set) no longer keeps, from reading the rows of
 * ops_pytorch.c and CheckpointWithoutOutput: the input norm's output ln1 [8192, 1024] bf16
 * (16 MiB) and rstd (32 KiB); the q / kv up projections' normed latents qn [8192, 1536]
 * (24 MiB) and kvn [8192, 512] (8 MiB) with their rstd (2 x 32 KiB); the q, k, v handed to
 * the core attention, [16384, 16 x 192] x 2 (192 MiB) and [16384, 16 x 128] (64 MiB); the
 * pre-MLP norm's rstd (32 KiB) and its output as the router and shared experts gather it,
 * [16384, 1024] (32 MiB); the experts' activation [32768, 1024] (64 MiB): 400.125 MiB.
 * The region inputs (the layer input, the down projections' output, x2, the fc1 output)
 * stay. The last stage holds 13 MoE layers and the MTP layer at its peak. */
static void test_discard_output(void **state)
{
	(void)state;
	const char *select = "recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-2]\n";
	char *full = test_read_file(SELECTIVE ".config.yaml", NULL);
	mo_action_kind a, b;
	char key_a[128] = "", key_b[128] = "";
	uint64_t before = selective_peak(select, &a, key_a, sizeof key_a);
	uint64_t after = selective_peak(full, &b, key_b, sizeof key_b);
	assert_int_equal(a, MO_ACT_KEEP);
	assert_int_equal(b, MO_ACT_DISCARD_OUTPUT);
	assert_string_equal(mo_action_name(b), "discard_output");
	assert_string_equal(key_b, "discard_module['.*input_layernorm']");
	uint64_t per_layer = (16 + 24 + 8 + 192 + 64 + 32 + 64) * 1048576ull + 4 * 32768ull;
	assert_int_equal(before - after, 14 * per_layer);
	free(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parameter_state),
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_transformer_impl),
		cmocka_unit_test(test_position_table),
		cmocka_unit_test(test_megatron_keys),
		cmocka_unit_test(test_context_parallel),
		cmocka_unit_test(test_figures),
		cmocka_unit_test(test_routing_skew),
		cmocka_unit_test(test_discard_output),
		cmocka_unit_test(test_grads_dtype_key),
		cmocka_unit_test(test_workspaces),
		cmocka_unit_test(test_expert_tensor_parallel),
		cmocka_unit_test(test_moe_mla_unfused),
		cmocka_unit_test(test_pipeline_inputs),
		cmocka_unit_test(test_dummy_wgrads),
		cmocka_unit_test(test_head_gather),
		cmocka_unit_test(test_mla_rope),
		cmocka_unit_test(test_dispatcher_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
