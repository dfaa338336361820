/* The work budget (mo_budget) and byte figures out of range: a deep
 * pipeline's estimate stops at the deadline or when the caller cancels,
 * the planner too, a later call without a budget runs whole, sizes
 * whose figures pass 2^60 bytes are an error, never a wrapped number, and
 * a stage count over the estimate's bound is a `limit` error naming it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "memopt/memopt.h"

/* 20,000 stages of one layer and 2^31-1 micro-batches: minutes of work when
 * the pipeline was walked micro-batch by micro-batch; over the bound of
 * stages now. */
static const char k_stages[] =
	"model:\n  num_layers: 20000\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
	"  num_attention_heads: 16\n  vocab_size: 32000\n  seq_length: 512\n"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: 2147483647\n"
	"parallel:\n  world_size: 20000\n  data_parallel: 1\n  pipeline_parallel: 20000\n";

/* At the bounds (4,096 stages, 100,000 layers): tens of milliseconds of
 * work, so a 1 ms deadline stops it. */
static const char k_deep[] =
	"model:\n  num_layers: 100000\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
	"  num_attention_heads: 16\n  vocab_size: 32000\n  seq_length: 512\n"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: 2147483647\n"
	"parallel:\n  world_size: 4096\n  data_parallel: 1\n  pipeline_parallel: 4096\n";

/* Each size within its own bound, the tensors past 2^64 bytes. */
static const char k_huge[] =
	"model:\n  num_layers: 4\n  hidden_size: 16777216\n  ffn_hidden_size: 67108864\n"
	"  num_attention_heads: 16\n  vocab_size: 2147483647\n  seq_length: 2147483647\n"
	"training:\n  micro_batch_size: 1048576\n  micro_batch_num: 1\n"
	"parallel:\n  world_size: 1\n  data_parallel: 1\n";

/* Small, but with enough events (256 micro-batches: 512 units) that the
 * budget is looked at (every 256 polls). */
static const char k_small[] =
	"model:\n  num_layers: 32\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
	"  num_attention_heads: 16\n  vocab_size: 32000\n  seq_length: 512\n"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: 256\n"
	"parallel:\n  world_size: 1\n  data_parallel: 1\n";

static mo_model *load(const char *text)
{
	mo_model *m = NULL;
	mo_diags *d = NULL;
	mo_error err = {0};

	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err), 0);
	mo_diags_free(d);
	return m;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_deadline(void **state)
{
	mo_model *m = load(k_deep);
	mo_estimate *e = NULL;
	mo_error err = {0};
	mo_budget b = {.max_ms = 1};
	double t0 = now_s();

	(void)state;
	mo_budget_begin(&b);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), -1);
	assert_int_equal(mo_budget_end(), MO_ERR_BUDGET); /* the deadline */
	assert_null(e);
	assert_int_equal(err.code, MO_ERR_BUDGET);
	assert_true(strncmp(err.text, "work-limit", 10) == 0);
	assert_true(now_s() - t0 < 5.0); /* not minutes (ASan builds are slow) */
	mo_model_free(m);
}

static int calls;

static int cancel_after_some(void *arg)
{
	(void)arg;
	return ++calls > 3;
}

static void test_cancel(void **state)
{
	mo_model *m = load(k_deep);
	mo_estimate *e = NULL;
	mo_error err = {0};
	mo_budget b = {.cancelled = cancel_after_some};

	(void)state;
	calls = 0;
	mo_budget_begin(&b);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), -1);
	assert_int_equal(mo_budget_end(), MO_ERR_CANCELLED);
	assert_int_equal(err.code, MO_ERR_CANCELLED);
	assert_true(strncmp(err.text, "cancelled", 9) == 0);
	assert_int_equal(calls, 4); /* polled until it said stop, not after */
	mo_model_free(m);
}

static int always(void *arg)
{
	(void)arg;
	return 1;
}

static void test_planner_and_after(void **state)
{
	mo_model *m = load(k_small);
	mo_planner_input in = {.model = m};
	mo_planner_result *r = NULL;
	mo_estimate *e = NULL, *e2 = NULL;
	mo_error err = {0};
	mo_budget b = {.cancelled = always};

	(void)state;
	mo_budget_begin(&b);
	assert_int_equal(mo_planner_run(&r, &in, &err), -1);
	mo_budget_end();
	assert_null(r);
	assert_int_equal(err.code, MO_ERR_CANCELLED);
	/* the budget ended with mo_budget_end: the same calls run whole */
	assert_int_equal(mo_planner_run(&r, &in, &err), 0);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	mo_budget_begin(&(mo_budget){.max_ms = 60000});
	assert_int_equal(mo_estimate_run(&e2, NULL, m, &err), 0);
	assert_int_equal(mo_budget_end(), MO_OK); /* not spent */
	mo_estimate_free(e2);
	mo_estimate_free(e);
	mo_planner_result_free(r);
	mo_model_free(m);
}

static void test_stage_bound(void **state)
{
	mo_model *m = load(k_stages);
	mo_estimate *e = NULL;
	mo_error err = {0};

	(void)state;
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), -1);
	assert_null(e);
	assert_int_equal(err.code, MO_ERR_LIMIT);
	assert_non_null(strstr(err.text, "pipeline_parallel is 20000"));
	assert_non_null(strstr(err.text, "4096"));
	mo_model_free(m);
}

static void test_out_of_range(void **state)
{
	mo_model *m = load(k_huge);
	mo_estimate *e = NULL;
	mo_error err = {0};

	(void)state;
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), -1);
	assert_null(e);
	assert_int_equal(err.code, MO_ERR_LIMIT);
	assert_non_null(strstr(err.text, "sizes out of range"));
	mo_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_planner_and_after),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_stage_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
