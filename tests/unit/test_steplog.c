/* memopt steplog: training-log excerpts of Megatron-LM and MindSpore
 * Transformers built with each framework's format string
 * (tests/data/steplog/SOURCES.md, with the expected figures worked out by
 * hand there), and hostile logs: no time line, too few, malformed and
 * huge numbers (each error's code, line and column), a log over the byte
 * limit, more time lines than kept. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "memopt/memopt.h"

#define DATA "tests/data/steplog/"

/* cmocka 1.1 has assert_float_equal only for float */
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static mo_steplog *read_file(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, DATA "%s", name);
	size_t len;
	char *text = test_read_file(path, &len);
	mo_steplog *l = NULL;
	mo_error err = {0};
	int rc = mo_steplog_read(&l, text, len, NULL, &err);
	if (rc != 0)
		fprintf(stderr, "%s:%d:%d: %s\n", name, err.line, err.column, err.text);
	assert_int_equal(rc, 0);
	free(text);
	return l;
}

static mo_error read_error(const char *text, size_t len, const mo_steplog_options *opt)
{
	mo_steplog *l = (mo_steplog *)1;
	mo_error err = {0};
	assert_int_equal(mo_steplog_read(&l, text, len, opt, &err), -1);
	assert_null(l);
	return err;
}

static mo_error text_error(const char *text)
{
	return read_error(text, strlen(text), NULL);
}

/* ---- the frameworks' lines ----------------------------------------------------- */

static void test_megatron(void **state)
{
	(void)state;
	mo_steplog *l = read_file("megatron.log");
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	assert_string_equal(s->format, "megatron-lm");
	assert_int_equal(s->times, 10);
	assert_int_equal(mo_steplog_count(l), 10);
	assert_int_equal(s->warmup, 2);
	assert_int_equal(s->used, 8);
	assert_double_equal(s->median_seconds, 1.1809, 1e-9);
	assert_double_equal(s->min_seconds, 1.1789, 1e-9);
	assert_double_equal(s->max_seconds, 1.1835, 1e-9);
	assert_int_equal(s->skipped, 1);
	assert_int_equal(s->nan, 0);
	/* the warm-up: iterations 1 and 2, at lines 3 and 5 (a memory report
	 * line between them) */
	const mo_steplog_time *t = mo_steplog_get(l, 0);
	assert_int_equal(t->line, 3);
	assert_int_equal(t->iteration, 1);
	assert_double_equal(t->seconds, 12.8734, 1e-9);
	assert_true(t->warmup);
	t = mo_steplog_get(l, 1);
	assert_int_equal(t->line, 5);
	assert_int_equal(t->iteration, 2);
	assert_true(t->warmup);
	t = mo_steplog_get(l, 5);
	assert_int_equal(t->line, 9);
	assert_int_equal(t->iteration, 6);
	assert_int_equal(t->skipped, 1);
	assert_int_equal(t->nan, 0);
	assert_int_equal(t->format, MO_STEPLOG_MEGATRON);
	assert_false(t->warmup);
	assert_null(mo_steplog_get(l, 10));
	mo_steplog_free(l);
}

static void test_megatron_log_interval(void **state)
{
	(void)state;
	mo_steplog *l = read_file("megatron-interval10.log");
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	assert_int_equal(s->times, 5);
	assert_double_equal(s->median_seconds, 0.6014, 1e-9);
	assert_int_equal(mo_steplog_get(l, 1)->iteration, 10);
	assert_true(mo_steplog_get(l, 1)->warmup);
	assert_int_equal(mo_steplog_get(l, 2)->iteration, 20);
	assert_false(mo_steplog_get(l, 2)->warmup);
	mo_steplog_free(l);
}

static void test_mindformers_graph(void **state)
{
	(void)state;
	mo_steplog *l = read_file("mindformers-graph.log");
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	assert_string_equal(s->format, "mindformers");
	assert_int_equal(s->times, 7);
	assert_int_equal(s->used, 5);
	assert_double_equal(s->median_seconds, 2.870, 1e-9);
	assert_int_equal(s->skipped, 1); /* step 4: overflow cond: True */
	assert_int_equal(s->nan, -1);
	const mo_steplog_time *t = mo_steplog_get(l, 0);
	assert_int_equal(t->line, 2);
	assert_int_equal(t->iteration, 1);
	assert_double_equal(t->seconds, 214.325, 1e-9);
	assert_int_equal(t->skipped, 0);
	assert_int_equal(t->format, MO_STEPLOG_MINDFORMERS);
	assert_int_equal(mo_steplog_get(l, 3)->skipped, 1);
	mo_steplog_free(l);
}

static void test_mindformers_pynative(void **state)
{
	(void)state;
	mo_steplog *l = read_file("mindformers-pynative.log");
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	assert_int_equal(s->times, 5);
	assert_double_equal(s->median_seconds, 1.501, 1e-9);
	assert_int_equal(s->skipped, -1);
	assert_int_equal(mo_steplog_get(l, 4)->iteration, 5);
	assert_double_equal(mo_steplog_get(l, 0)->seconds, 95.012, 1e-9);
	mo_steplog_free(l);
}

/* Lines as Megatron-LM prints them without the optional fields; CRLF line
 * ends; both frameworks in one text is "mixed". */
static void test_minimal_lines(void **state)
{
	(void)state;
	const char *text = " iteration 1/ 9 | elapsed time per iteration (ms): 50.0 |\r\n"
			   " iteration 2/ 9 | elapsed time per iteration (ms): 40.0 |\r\n"
			   " iteration 3/ 9 | elapsed time per iteration (ms): 30.0 |\r\n"
			   "step:[4/9], per_step_time: 10ms\r\n";
	mo_steplog *l = NULL;
	mo_error err = {0};
	assert_int_equal(mo_steplog_read(&l, text, strlen(text), NULL, &err), 0);
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	assert_string_equal(s->format, "mixed");
	assert_double_equal(s->median_seconds, 0.020, 1e-12);
	assert_int_equal(s->skipped, -1);
	assert_int_equal(mo_steplog_get(l, 0)->skipped, -1);
	assert_int_equal(mo_steplog_get(l, 3)->iteration, 4);
	mo_steplog_free(l);
	/* the last line without a newline; "elapsed ... (ms): 7" (no fraction) */
	const char *plain = "elapsed time per iteration (ms): 9\nelapsed time per iteration (ms): 9\n"
			    "elapsed time per iteration (ms): 7";
	assert_int_equal(mo_steplog_read(&l, plain, strlen(plain), NULL, &err), 0);
	assert_double_equal(mo_steplog_get_summary(l)->median_seconds, 0.007, 1e-12);
	assert_int_equal(mo_steplog_get(l, 2)->iteration, -1);
	mo_steplog_free(l);
}

/* ---- hostile logs --------------------------------------------------------------- */

static void test_no_time_lines(void **state)
{
	(void)state;
	mo_error e = text_error("training ...\n[after training is done]\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	assert_non_null(strstr(e.text, "no per-iteration time line"));
	e = read_error("", 0, NULL);
	assert_int_equal(e.code, MO_ERR_INVALID);
	e = read_error(NULL, 0, NULL);
	assert_int_equal(e.code, MO_ERR_INVALID);
	e = read_error(NULL, 3, NULL);
	assert_int_equal(e.code, MO_ERR_USAGE);
	/* the warm-up leaves nothing */
	e = text_error("per_step_time: 5ms\nper_step_time: 5ms\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	assert_non_null(strstr(e.text, "2 time lines"));
}

static void test_garbage_numbers(void **state)
{
	(void)state;
	mo_error e = text_error("x\n iteration 1/ 2 | elapsed time per iteration (ms): abc |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	assert_int_equal(e.line, 2);
	assert_int_equal(e.column, 52);
	e = text_error("elapsed time per iteration (ms): nan |\n");
	assert_int_equal(e.column, 34);
	e = text_error("elapsed time per iteration (ms): -5.0 |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	e = text_error("elapsed time per iteration (ms): 1e3 |\n");
	assert_int_equal(e.column, 35);
	e = text_error("elapsed time per iteration (ms): 12.5x |\n");
	assert_int_equal(e.column, 38);
	e = text_error("elapsed time per iteration (ms): 12. |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	e = text_error("elapsed time per iteration (ms): 0.0 |\n");
	assert_non_null(strstr(e.text, "outside"));
	e = text_error("step:[1/2], per_step_time: 12s\n");
	assert_int_equal(e.column, 30);
	e = text_error("step:[1/2], per_step_time: ms\n");
	assert_int_equal(e.column, 28);
	e = text_error("elapsed time per iteration (ms): 1.0 | number of skipped iterations: x |\n");
	assert_int_equal(e.column, 70);
	e = text_error("elapsed time per iteration (ms): 1.0 | number of nan iterations: |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
}

static void test_huge_numbers(void **state)
{
	(void)state;
	/* over 1e10 ms; 19 digits; an iteration of 30 digits */
	mo_error e = text_error("elapsed time per iteration (ms): 99999999999.0 |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	assert_non_null(strstr(e.text, "outside"));
	e = text_error("per_step_time: 1234567890123456789ms\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	assert_int_equal(e.column, 34);
	e = text_error("elapsed time per iteration (ms): 1.0000000000000000000001 |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	e = text_error(" iteration 123456789012345678901234567890/ 3 | "
		       "elapsed time per iteration (ms): 1.0 |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
	assert_int_equal(e.column, 30);
	e = text_error("elapsed time per iteration (ms): 1.0 | number of skipped iterations: "
		       "99999999999999999999 |\n");
	assert_int_equal(e.code, MO_ERR_INVALID);
}

/* A log over the byte limit is refused before it is read; more time lines
 * than kept stop at the first one over; a 64 MiB log of time lines (the
 * default limit) reads in linear time. */
static void test_huge_log(void **state)
{
	(void)state;
	static const char line[] = "per_step_time: 7ms\n";
	size_t n = MO_STEPLOG_MAX_BYTES / (sizeof line - 1), len = n * (sizeof line - 1);
	char *text = malloc(MO_STEPLOG_MAX_BYTES + 1);
	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		memcpy(text + i * (sizeof line - 1), line, sizeof line - 1);
	mo_error e = read_error(text, MO_STEPLOG_MAX_BYTES + 1, NULL);
	assert_int_equal(e.code, MO_ERR_LIMIT);
	mo_steplog_options opt = {.max_bytes = 100};
	e = read_error(text, 101, &opt);
	assert_int_equal(e.code, MO_ERR_LIMIT);
	opt = (mo_steplog_options){.max_times = 1000};
	e = read_error(text, len, &opt);
	assert_int_equal(e.code, MO_ERR_LIMIT);
	assert_int_equal(e.line, 1001);
	/* 3.5 M lines: over the default 1 M kept */
	e = read_error(text, len, NULL);
	assert_int_equal(e.code, MO_ERR_LIMIT);
	assert_int_equal(e.line, (int)MO_STEPLOG_MAX_TIMES + 1);
	/* 64 MiB of other lines: no time line, read through */
	memset(text, 'x', MO_STEPLOG_MAX_BYTES);
	for (size_t i = 4095; i < MO_STEPLOG_MAX_BYTES; i += 4096)
		text[i] = '\n';
	clock_t t0 = clock();
	e = read_error(text, MO_STEPLOG_MAX_BYTES, NULL);
	assert_int_equal(e.code, MO_ERR_INVALID);
	/* one pass: well under a few seconds even under ASan */
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 30);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_megatron),
		cmocka_unit_test(test_megatron_log_interval),
		cmocka_unit_test(test_mindformers_graph),
		cmocka_unit_test(test_mindformers_pynative),
		cmocka_unit_test(test_minimal_lines),
		cmocka_unit_test(test_no_time_lines),
		cmocka_unit_test(test_garbage_numbers),
		cmocka_unit_test(test_huge_numbers),
		cmocka_unit_test(test_huge_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
