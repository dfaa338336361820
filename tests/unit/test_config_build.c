/* config/config_build.c, configs built from data: the canonical export of
 * a built config (expected text written by hand from the calls), that it
 * validates, expands and estimates as the parsed text of that export does,
 * regexes with quotes and line breaks kept exactly, an empty builder, and
 * a regex that does not compile reported as the reader reports it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "config/config.h"

static mo_config_builder *builder(void)
{
	mo_config_builder *b = NULL;
	assert_int_equal(config_builder_new(&b, "built", NULL), 0);
	assert_non_null(b);
	return b;
}

static mo_config *finish(mo_config_builder *b)
{
	mo_config *c = NULL;
	mo_error err = {0};
	assert_int_equal(config_builder_finish(&c, b, &err), 0);
	assert_non_null(c);
	return c;
}

static char *export(const mo_config *c)
{
	char *text = NULL;
	assert_int_equal(mo_export_sections(&text, NULL, c, NULL), 0);
	return text;
}

/* Every key the builder has, in the calls' order within each list. */
static mo_config *every_key(void)
{
	const mo_range full[] = {{.lo = 0, .hi = 3}, {.lo = 8, .hi = 8}};
	const mo_range mlp[] = {{.lo = 4, .hi = 7}};
	const mo_range attention[] = {{.lo = 5, .hi = 5}};
	const mo_range comm[] = {{.lo = 9, .hi = 11}};
	const mo_range swapped[] = {{.lo = 12, .hi = 13}};
	const mo_range op[] = {{.lo = 14, .hi = 15}};
	mo_config_builder *b = builder();
	config_build_mode(b, MO_MODE_SELECT);
	config_build_full(b, full, 2);
	config_build_pattern(b, MO_CONFIG_SELECT_MODULE, ".*mlp", mlp, 1);
	config_build_pattern(b, MO_CONFIG_SELECT_MODULE, ".*self_attention", attention, 1);
	config_build_pattern(b, MO_CONFIG_EXCLUDE_OP, ".*allgather", full, 1);
	config_build_comm(b, true);
	config_build_pattern(b, MO_CONFIG_COMM_SELECT_MODULE, ".*reducescatter", comm, 1);
	config_build_swap(b, true);
	config_build_prefetch(b, 2);
	config_build_layer_swap(b, swapped, 1);
	config_build_op_swap(b, ".*mlp", op, 1);
	return finish(b);
}

static const char every_key_text[] = "recompute:\n"
				     "  mode: select\n"
				     "  full_recompute_layer: [0-3, 8]\n"
				     "  select_module:\n"
				     "    '.*mlp': [4-7]\n"
				     "    '.*self_attention': [5]\n"
				     "  exclude_op:\n"
				     "    '.*allgather': [0-3]\n"
				     "recompute_comm:\n"
				     "  enable: True\n"
				     "  select_module:\n"
				     "    '.*reducescatter': [9-11]\n"
				     "swap:\n"
				     "  enable: True\n"
				     "  default_prefetch: 2\n"
				     "  layer_swap:\n"
				     "    - layers: [12-13]\n"
				     "  op_swap:\n"
				     "    - op_name: '.*mlp'\n"
				     "      layers: [14-15]\n";

static void test_export(void **state)
{
	(void)state;
	mo_config *c = every_key();
	char *text = export(c);
	assert_string_equal(text, every_key_text);
	assert_int_equal(c->mode, MO_MODE_SELECT);
	assert_true(c->comm_enable && c->swap_enable);
	assert_int_equal(c->prefetch, 2);
	assert_int_equal(c->select.n, 2);
	assert_int_equal(c->n_op_swap, 1);
	assert_non_null(c->op_swap[0].pat.re);
	free(text);
	mo_config_free(c);
}

/* The built config and its exported text, parsed, mean the same on a
 * 16-layer model: the same findings (without positions: the built one has
 * none), the same actions per layer, the same estimate. */
static void test_same_as_parsed(void **state)
{
	(void)state;
	static const char model_text[] = "model:\n  num_layers: 16\n  hidden_size: 1024\n"
					 "  num_attention_heads: 8\n  vocab_size: 32000\n"
					 "  seq_length: 2048\n"
					 "parallel:\n  world_size: 2\n  tensor_parallel: 2\n"
					 "  sequence_parallel: true\n";
	mo_diags *d = NULL, *db = NULL, *dp = NULL;
	mo_model *m = NULL;
	mo_config *built = every_key(), *parsed = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_diags_new(&db), 0);
	assert_int_equal(mo_diags_new(&dp), 0);
	assert_int_equal(mo_model_load(&m, d, model_text, strlen(model_text), "m", NULL, NULL), 0);
	assert_int_equal(mo_config_parse(&parsed, dp, every_key_text, strlen(every_key_text), "p",
					 NULL, NULL),
			 0);
	assert_int_equal(mo_validate(db, built, m), mo_validate(dp, parsed, m));
	assert_int_equal(mo_diags_count(db), mo_diags_count(dp));
	for (size_t i = 0; i < mo_diags_count(db); i++) {
		assert_string_equal(mo_diags_get(db, i)->code, mo_diags_get(dp, i)->code);
		assert_string_equal(mo_diags_get(db, i)->message, mo_diags_get(dp, i)->message);
		assert_int_equal(mo_diags_get(db, i)->line, 0);
	}
	mo_plan *pb = NULL, *pp = NULL;
	assert_int_equal(mo_expand(&pb, built, m, NULL), 0);
	assert_int_equal(mo_expand(&pp, parsed, m, NULL), 0);
	for (int64_t id = 0; id < 16; id++) {
		assert_int_equal(mo_plan_action_count(pb, id), mo_plan_action_count(pp, id));
		for (size_t i = 0; i < mo_plan_action_count(pb, id); i++) {
			assert_int_equal(mo_plan_action(pb, id, i)->action,
					 mo_plan_action(pp, id, i)->action);
			assert_string_equal(mo_plan_action(pb, id, i)->path,
					    mo_plan_action(pp, id, i)->path);
		}
	}
	mo_estimate *eb = NULL, *ep = NULL;
	assert_int_equal(mo_estimate_run(&eb, built, m, NULL), 0);
	assert_int_equal(mo_estimate_run(&ep, parsed, m, NULL), 0);
	assert_int_equal(mo_estimate_peak_bytes(eb), mo_estimate_peak_bytes(ep));
	assert_true(mo_estimate_overhead_percent(eb) == mo_estimate_overhead_percent(ep));
	mo_estimate_free(eb);
	mo_estimate_free(ep);
	mo_plan_free(pb);
	mo_plan_free(pp);
	mo_config_free(built);
	mo_config_free(parsed);
	mo_model_free(m);
	mo_diags_free(d);
	mo_diags_free(db);
	mo_diags_free(dp);
}

/* A regex is kept byte for byte (no YAML text in between to fold a line
 * break or unescape a quote); the export quotes it so that it reads back. */
static void test_regex_kept(void **state)
{
	(void)state;
	const char regex[] = "a'b\nc";
	const mo_range one[] = {{.lo = 1, .hi = 1}};
	mo_config_builder *b = builder();
	config_build_mode(b, MO_MODE_SELECT);
	config_build_pattern(b, MO_CONFIG_SELECT_MODULE, regex, one, 1);
	mo_config *c = finish(b);
	assert_string_equal(c->select.p[0].regex, regex);
	char *text = export(c);
	/* libyaml writes a key with a line break as an explicit key */
	assert_string_equal(text, "recompute:\n  mode: select\n  select_module:\n"
				  "    ? \"a'b\\nc\"\n    : [1]\n");
	mo_config *again = NULL;
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_config_parse(&again, d, text, strlen(text), "t", NULL, NULL), 0);
	assert_string_equal(again->select.p[0].regex, regex);
	mo_config_free(again);
	mo_diags_free(d);
	free(text);
	mo_config_free(c);
}

/* Nothing built: a config with no section, exported as nothing. */
static void test_empty(void **state)
{
	(void)state;
	mo_config *c = finish(builder());
	assert_false(c->has_recompute || c->has_comm || c->has_swap);
	char *text = export(c);
	assert_string_equal(text, "");
	free(text);
	mo_config_free(c);
}

/* A regex PCRE2 rejects: the reader's diagnostic becomes the error, and
 * the builder is freed all the same (no leak under ASan). */
static void test_bad_regex(void **state)
{
	(void)state;
	const mo_range one[] = {{.lo = 0, .hi = 0}};
	mo_config_builder *b = builder();
	config_build_mode(b, MO_MODE_SELECT);
	config_build_pattern(b, MO_CONFIG_SELECT_MODULE, "(", one, 1);
	mo_config *c = (mo_config *)1;
	mo_error err = {0};
	assert_int_equal(config_builder_finish(&c, b, &err), -1);
	assert_null(c);
	assert_int_equal(err.code, MO_ERR_INVALID);
	assert_non_null(strstr(err.text, "built config: regex: pattern '(' does not compile"));
}

/* A pattern list that does not exist is the caller's mistake. */
static void test_no_such_list(void **state)
{
	(void)state;
	const mo_range one[] = {{.lo = 0, .hi = 0}};
	mo_config_builder *b = builder();
	config_build_pattern(b, (mo_config_list)7, ".*mlp", one, 1);
	mo_config *c = NULL;
	mo_error err = {0};
	assert_int_equal(config_builder_finish(&c, b, &err), -1);
	assert_null(c);
	assert_int_equal(err.code, MO_ERR_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_same_as_parsed),
		cmocka_unit_test(test_regex_kept),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_bad_regex),
		cmocka_unit_test(test_no_such_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
