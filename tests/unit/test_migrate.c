/* mo_migrate, one behaviour per test, on small graph-mode files whose
 * expected output is written by hand: the block replaced by the canonical
 * sections in its place and every other byte kept (interleaved pipeline,
 * CRLF, comments around the block, the last line without a break), the
 * no-equivalent warnings with their positions, and each refusal. The real
 * MindSpore Transformers files are in tests/suites/migrate.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <memopt/memopt.h>

struct run {
	mo_diags *d;
	mo_config *c;
	mo_model *m;
	char *out;
	size_t len;
	mo_error err;
	int rc;
};

static void run(struct run *r, const char *text)
{
	mo_error err = {0};
	memset(r, 0, sizeof(*r));
	assert_int_equal(mo_diags_new(&r->d), 0);
	mo_input in = {.config = text, .config_len = strlen(text), .config_name = "t.yaml"};
	assert_int_equal(mo_check(&r->c, &r->m, r->d, &in, &err), 0);
	assert_int_equal(mo_diags_errors(r->d), 0);
	r->rc = mo_migrate(&r->out, &r->len, r->d, r->c, &r->err);
}

static void done(struct run *r)
{
	free(r->out);
	mo_model_free(r->m);
	mo_config_free(r->c);
	mo_diags_free(r->d);
}

static size_t count(const struct run *r, const char *code)
{
	size_t n = 0;
	for (size_t i = 0; i < mo_diags_count(r->d); i++)
		n += strcmp(mo_diags_get(r->d, i)->code, code) == 0;
	return n;
}

/* 8 layers, pipeline_stage 2, pp_interleave_num 2 with interleave on:
 * chunk 0: stage 0 = 0-1, stage 1 = 2-3; chunk 1: stage 0 = 4-5,
 * stage 1 = 6-7. */
#define HEAD                                                                                       \
	"context:\n  mode: 0\n"                                                                    \
	"parallel:\n  pipeline_config:\n    pipeline_interleave: True\n"                           \
	"parallel_config:\n  data_parallel: 1\n  model_parallel: 1\n  pipeline_stage: 2\n"         \
	"  micro_batch_num: 4\n"                                                                   \
	"model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 8\n"                      \
	"    hidden_size: 512\n    num_heads: 8\n    pp_interleave_num: 2\n"

static void test_interleaved_in_place(void **state)
{
	(void)state;
	struct run r;
	/* per chunk: chunk 0 stage 0 one layer (0); chunk 1 stage 0 two (4-5),
	 * stage 1 one (6). The comment inside the block goes with it; the one
	 * after it and the next key stay. */
	run(&r, "# top\n" HEAD "recompute_config:\n  # inside\n  recompute: [[1, 0], [2, 1]]\n"
		"  mp_comm_recompute: False\n# after\nnext: 1 # kept\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "# top\n" HEAD "recompute:\n  mode: full\n"
				   "  full_recompute_layer: [0, 4-6]\n# after\nnext: 1 # kept\n");
	assert_int_equal(r.len, strlen(r.out));
	assert_int_equal(count(&r, "no-equivalent"), 0);
	done(&r);
}

static void test_select_and_comm(void **state)
{
	(void)state;
	struct run r;
	/* recompute [1, 0]: stage 0's first layer (0). select True: every
	 * layer not fully recomputed. select_comm [1, 1]: each stage's first
	 * layer (0 and 2), less the fully recomputed 0; the comm default
	 * `.*\.norm` is the all-gather after it */
	run(&r, HEAD "recompute_config:\n  recompute: [1, 0]\n  select_recompute: True\n"
		"  select_comm_recompute: [1, 1]\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, HEAD "recompute:\n  mode: full\n  full_recompute_layer: [0]\n"
					"  select_module:\n"
					"    'mlp\\.mul': [1-7]\n"
					"    'mlp\\.activation_func\\.silu': [1-7]\n"
					"recompute_comm:\n  enable: True\n  select_module:\n"
					"    '.*\\.input\\.allgather': [2]\n");
	done(&r);
}

static void test_crlf_and_last_line(void **state)
{
	(void)state;
	struct run r;
	run(&r, "context:\r\n  mode: 0\r\nmodel:\r\n  model_config:\r\n    num_layers: 4\r\n"
		"    hidden_size: 512\r\n    num_heads: 8\r\nrecompute_config:\r\n  recompute: True");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "context:\r\n  mode: 0\r\nmodel:\r\n  model_config:\r\n"
				   "    num_layers: 4\r\n    hidden_size: 512\r\n    num_heads: 8\r\n"
				   "recompute:\r\n  mode: full\r\n  full_recompute_layer: [0-3]");
	done(&r);
}

static void test_nothing_on_is_mode_none(void **state)
{
	(void)state;
	struct run r;
	run(&r, HEAD "recompute_config:\n  recompute: False\n  select_recompute: False\n");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, HEAD "recompute:\n  mode: None\n");
	done(&r);
}

static void test_no_equivalent_warnings(void **state)
{
	(void)state;
	struct run r;
	run(&r, HEAD "recompute_config:\n  recompute: True\n  recompute_slice_activation: True\n"
		"  select_recompute_exclude: ['feed_forward\\.mul']\n  mp_comm_recompute: True\n"
		"swap_config:\n  swap: True\n");
	assert_int_equal(r.rc, 0);
	assert_int_equal(count(&r, "no-equivalent"), 4);
	const mo_diag *first = NULL;
	for (size_t i = 0; i < mo_diags_count(r.d) && !first; i++)
		if (strcmp(mo_diags_get(r.d, i)->code, "no-equivalent") == 0)
			first = mo_diags_get(r.d, i);
	/* HEAD is 17 lines: recompute_config at 18, the key at 20:3 */
	assert_non_null(first);
	assert_int_equal(first->line, 20);
	assert_int_equal(first->column, 3);
	assert_string_equal(first->path, "recompute_config.recompute_slice_activation");
	/* swap_config stays */
	assert_non_null(strstr(r.out, "\nswap_config:\n  swap: True\n"));
	done(&r);
}

static void test_refusals(void **state)
{
	(void)state;
	struct run r;
	/* PyNative: the block is not applied */
	run(&r, "context:\n  mode: 1\nmodel:\n  model_config:\n    num_layers: 4\n"
		"    hidden_size: 512\n    num_heads: 8\nrecompute_config:\n  recompute: True\n");
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, MO_ERR_INVALID);
	assert_null(r.out);
	done(&r);
	/* an alias of the block elsewhere would dangle */
	run(&r, HEAD "recompute_config: &rc\n  recompute: True\nother: *rc\n");
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, MO_ERR_INVALID);
	done(&r);
	/* a flow root */
	run(&r, "{context: {mode: 0}, model: {model_config: {num_layers: 4, hidden_size: 512, "
		"num_heads: 8}}, recompute_config: {recompute: True}}\n");
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, MO_ERR_INVALID);
	done(&r);
	/* no block */
	run(&r, HEAD "recompute:\n  mode: None\n");
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.err.code, MO_ERR_INVALID);
	done(&r);
}

static void test_null_arguments(void **state)
{
	(void)state;
	mo_error err = {0};
	char *out = NULL;
	assert_int_equal(mo_migrate(&out, NULL, NULL, NULL, &err), -1);
	assert_int_equal(err.code, MO_ERR_USAGE);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_in_place),
		cmocka_unit_test(test_select_and_comm),
		cmocka_unit_test(test_crlf_and_last_line),
		cmocka_unit_test(test_nothing_on_is_mode_none),
		cmocka_unit_test(test_no_equivalent_warnings),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_null_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
