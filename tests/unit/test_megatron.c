/* Megatron-LM's published memory figures against the `pytorch` rules
 * (issue 17, part 2). Its CI test gpt3_7b_tp4_pp1_memory_speed logs, after
 * every step, the bytes allocated between steps (mem-allocated-bytes: the
 * bf16 parameters, the fp32 main_grad buffers and the distributed
 * optimizer's shards) and the step's peak (mem-max-allocated-bytes).
 * tests/data/megatron/gpt3_7b_tp4_pp1_memory_speed.yaml is that run as a
 * model file, with the source of every figure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"

#define FIXTURE "tests/data/megatron/gpt3_7b_tp4_pp1_memory_speed.yaml"
/* golden_values_dev_dgx_h100.json, steps 2-25 */
#define MEM_ALLOCATED 20663519232.0
#define MEM_MAX_ALLOCATED 57143791616.0

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

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

static double parameter_state(const mo_estimate *e)
{
	const mo_estimate_stage *s = mo_estimate_stage_get(e, 0);
	return (double)(s->weights_bytes + s->gradients_bytes + s->optimizer_bytes);
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
	char *text = slurp(FIXTURE);
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
	char *text = slurp(FIXTURE);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parameter_state),
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_grads_dtype_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
