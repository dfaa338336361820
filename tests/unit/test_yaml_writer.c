/* yaml/yaml_writer.c, the one writer of YAML: the layout (block sequences
 * indented under their key, nested ones too, continuation indent), quoting
 * (single, double for line breaks), line breaks, and errors (invalid UTF-8,
 * calls after a failure). Expected texts are written out by hand from the
 * styles the writer documents; PyYAML reading them is checked by
 * tests/suites/export_pyyaml.sh on the exports that use it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "yaml/yaml.h"

static mo_yaml_writer *writer(mo_yaml_break line_break, mo_error *err)
{
	mo_yaml_writer *w = NULL;
	memset(err, 0, sizeof(*err));
	assert_int_equal(yaml_tree_writer_new(&w, line_break, "test", err), 0);
	assert_non_null(w);
	return w;
}

/* Finishes w into a NUL-terminated string (caller frees). */
static char *finish(mo_yaml_writer *w, size_t indent)
{
	mo_buf b;
	buf_init(&b, 0);
	assert_int_equal(yaml_tree_writer_finish(w, &b, indent), 0);
	yaml_tree_writer_free(w);
	buf_append(&b, "", 0);
	char *text = buf_take(&b, NULL);
	assert_non_null(text);
	return text;
}

static void key_flow_list(mo_yaml_writer *w, const char *key, const char *a, const char *b)
{
	assert_true(yaml_tree_write_plain(w, key));
	assert_true(yaml_tree_write_sequence_start(w, true));
	assert_true(yaml_tree_write_plain(w, a));
	assert_true(yaml_tree_write_plain(w, b));
	assert_true(yaml_tree_write_sequence_end(w));
}

/* A sequence of mappings under a key, a sequence of sequences under a key
 * inside an item, and a key after them back at its own column. */
static void test_layout_nested(void **state)
{
	(void)state;
	mo_error err;
	mo_yaml_writer *w = writer(MO_YAML_BREAK_LF, &err);
	assert_true(yaml_tree_write_mapping_start(w, NULL, false));
	assert_true(yaml_tree_write_plain(w, "swap"));
	assert_true(yaml_tree_write_mapping_start(w, NULL, false));
	assert_true(yaml_tree_write_plain(w, "op_swap"));
	assert_true(yaml_tree_write_sequence_start(w, false));
	assert_true(yaml_tree_write_mapping_start(w, NULL, false));
	assert_true(yaml_tree_write_plain(w, "op_name"));
	assert_true(yaml_tree_write_string(w, ".*mlp", 5));
	key_flow_list(w, "layers", "0-3", "7");
	assert_true(yaml_tree_write_plain(w, "stages"));
	assert_true(yaml_tree_write_sequence_start(w, false));
	assert_true(yaml_tree_write_sequence_start(w, true));
	assert_true(yaml_tree_write_double_quoted(w, "0-1"));
	assert_true(yaml_tree_write_sequence_end(w));
	assert_true(yaml_tree_write_sequence_end(w));
	assert_true(yaml_tree_write_mapping_end(w));
	assert_true(yaml_tree_write_sequence_end(w));
	assert_true(yaml_tree_write_plain(w, "enable"));
	assert_true(yaml_tree_write_plain(w, "True"));
	assert_true(yaml_tree_write_mapping_end(w));
	assert_true(yaml_tree_write_mapping_end(w));
	char *text = finish(w, 0);
	assert_string_equal(text, "swap:\n"
				  "  op_swap:\n"
				  "    - op_name: '.*mlp'\n"
				  "      layers: [0-3, 7]\n"
				  "      stages:\n"
				  "        - [\"0-1\"]\n"
				  "  enable: True\n");
	free(text);
}

/* A section spliced at column 4 with CR line breaks: every line after the
 * first indented by 4, the sequence by 2 more under its key. */
static void test_layout_indent_cr(void **state)
{
	(void)state;
	mo_error err;
	mo_yaml_writer *w = writer(MO_YAML_BREAK_CR, &err);
	assert_true(yaml_tree_write_mapping_start(w, NULL, false));
	assert_true(yaml_tree_write_plain(w, "swap"));
	assert_true(yaml_tree_write_mapping_start(w, "a", false));
	assert_true(yaml_tree_write_plain(w, "layer_swap"));
	assert_true(yaml_tree_write_sequence_start(w, false));
	assert_true(yaml_tree_write_mapping_start(w, NULL, false));
	key_flow_list(w, "layers", "1", "2");
	assert_true(yaml_tree_write_mapping_end(w));
	assert_true(yaml_tree_write_sequence_end(w));
	assert_true(yaml_tree_write_mapping_end(w));
	assert_true(yaml_tree_write_mapping_end(w));
	char *text = finish(w, 4);
	assert_string_equal(text, "swap: &a\r"
				  "      layer_swap:\r"
				  "        - layers: [1, 2]\r");
	free(text);
}

/* Quoted strings: single quotes doubled, line breaks double-quoted and
 * escaped (the scalar stays on one line); a plain scalar that cannot be
 * plain is quoted by libyaml with the non-specific tag `!` (a string). */
static void test_quoting(void **state)
{
	(void)state;
	mo_error err;
	mo_yaml_writer *w = writer(MO_YAML_BREAK_LF, &err);
	assert_true(yaml_tree_write_mapping_start(w, NULL, true));
	assert_true(yaml_tree_write_string(w, "it's", 4));
	assert_true(yaml_tree_write_string(w, "a\nb", 3));
	assert_true(yaml_tree_write_plain(w, "k"));
	assert_true(yaml_tree_write_plain(w, "- x"));
	assert_true(yaml_tree_write_mapping_end(w));
	char *text = finish(w, 0);
	assert_string_equal(text, "{'it''s': \"a\\nb\", k: ! '- x'}\n");
	free(text);
}

/* A string that is not UTF-8 fails with the writer's prefix, and every
 * call after it does nothing. */
static void test_invalid_utf8(void **state)
{
	(void)state;
	mo_error err;
	mo_yaml_writer *w = writer(MO_YAML_BREAK_LF, &err);
	assert_true(yaml_tree_write_mapping_start(w, NULL, false));
	assert_false(yaml_tree_write_string(w, "\xff\xfe", 2));
	assert_int_equal(err.code, MO_ERR_INVALID);
	assert_string_equal(err.text, "test: a string is not valid UTF-8");
	assert_true(yaml_tree_writer_failed(w));
	assert_false(yaml_tree_write_plain(w, "x"));
	assert_false(yaml_tree_write_mapping_end(w));
	mo_buf b;
	buf_init(&b, 0);
	assert_int_equal(yaml_tree_writer_finish(w, &b, 0), -1);
	assert_int_equal(b.len, 0);
	buf_free(&b);
	yaml_tree_writer_free(w);
}

/* Events out of order are libyaml's error, reported, not a crash. */
static void test_emitter_error(void **state)
{
	(void)state;
	mo_error err;
	mo_yaml_writer *w = writer(MO_YAML_BREAK_LF, &err);
	assert_false(yaml_tree_write_mapping_end(w));
	assert_int_equal(err.code, MO_ERR_INTERNAL);
	assert_non_null(strstr(err.text, "test: libyaml emitter: "));
	yaml_tree_writer_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_nested),
		cmocka_unit_test(test_layout_indent_cr),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_emitter_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
