/* cmocka tests for the config language through the public API: layer specs
 * (every accepted and rejected form, with line and column), the YAML 1.1
 * scalar quirks, duplicate keys, "did you mean" hints, pattern compile
 * errors with offsets, and diagnostics sorting. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <memopt/memopt.h>

#include <stdio.h>
#include <string.h>

typedef struct want {
	const char *code;
	int line, column;
} want;

/* Parses and validates text against a preset (NULL: no model), sorted. */
static mo_diags *check_text(const char *text, const char *preset)
{
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_input in = {.config = text, .config_len = strlen(text), .config_name = "t.yaml",
		       .preset = preset};
	mo_config *cfg = NULL;
	mo_model *model = NULL;
	mo_error err = {0};
	assert_int_equal(mo_check(&cfg, &model, d, &in, &err), 0);
	mo_config_free(cfg);
	mo_model_free(model);
	mo_diags_sort(d);
	return d;
}

static void print_diags(const mo_diags *d)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		print_message("  got %s %d %d: %s\n", g->code, g->line, g->column, g->message);
	}
}

/* Exactly these diagnostics (any order), codes with positions. */
static void expect_diags(const char *text, const char *preset, const want *w, size_t n)
{
	mo_diags *d = check_text(text, preset);
	if (mo_diags_count(d) != n) {
		print_message("for:\n%s\n", text);
		print_diags(d);
	}
	assert_int_equal(mo_diags_count(d), n);
	int used[16] = {0};
	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < n; j++) {
			const mo_diag *g = mo_diags_get(d, j);
			if (!used[j] && strcmp(g->code, w[i].code) == 0 && g->line == w[i].line &&
			    g->column == w[i].column)
				break;
		}
		if (j == n) {
			print_message("for:\n%s\nmissing %s %d %d\n", text, w[i].code, w[i].line,
				      w[i].column);
			print_diags(d);
		}
		assert_true(j < n);
		used[j] = 1;
	}
	mo_diags_free(d);
}

static void expect_one(const char *text, const char *code, int line, int column)
{
	want w = {code, line, column};
	expect_diags(text, "llama2-7b", &w, 1);
}

static void expect_clean(const char *text, const char *preset)
{
	expect_diags(text, preset, NULL, 0);
}

/* "recompute:\n  mode: full\n  full_recompute_layer: " is 24 columns wide on
 * line 3: a flow list's first item is at column 26. */
#define FULL "recompute:\n  mode: full\n  full_recompute_layer: "

/* ---- layer specs: accepted forms ---------------------------------------- */

static void test_specs_accepted(void **state)
{
	(void)state;
	static const char *const ok[] = {
		FULL "[0-15]\n",                 /* YAML reads it as the string "0-15" */
		FULL "[0-3, 8]\n",               /* ["0-3", 8] */
		FULL "[0-3, 4-7]\n",             /* adjacent, not overlapping */
		FULL "[0, 1, 2, 31]\n",
		FULL "[\"0-3\", '5']\n",         /* quoted forms */
		FULL "[\" 0-3 \", ' 9 ']\n",     /* items are trimmed */
		FULL "[31-31]\n",                /* a one-layer range */
		FULL "[0-31]\n",                 /* every layer */
		FULL "\n    - 0-3\n    - 5\n",   /* block style */
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		expect_clean(ok[i], "llama2-7b");
}

/* MTP layer i has global id num_layers + i (deepseek-v3: 61 + 1). */
static void test_specs_mtp(void **state)
{
	(void)state;
	expect_clean(FULL "[0-2, 61]\n", "deepseek-v3");
	expect_one(FULL "[62]\n", "layer-range", 3, 26);
	/* llama has no MTP: 32 is past the end */
	expect_one(FULL "[32]\n", "layer-range", 3, 26);
}

/* ---- layer specs: rejected forms --------------------------------------- */

static void test_specs_grammar(void **state)
{
	(void)state;
	expect_one(FULL "[3-1]\n", "layer-spec", 3, 26);     /* a > b */
	expect_one(FULL "[0-3-5]\n", "layer-spec", 3, 26);
	expect_one(FULL "[a-b]\n", "layer-spec", 3, 26);
	expect_one(FULL "[-1]\n", "layer-spec", 3, 26);
	expect_one(FULL "[1.5]\n", "layer-spec", 3, 26);
	expect_one(FULL "[\"0 - 3\"]\n", "layer-spec", 3, 26);
	expect_one(FULL "[\"\"]\n", "layer-spec", 3, 26);
	expect_one(FULL "[~]\n", "layer-spec", 3, 26);
	expect_one(FULL "[[0, 1]]\n", "layer-spec", 3, 26);
	expect_one(FULL "[{a: 1}]\n", "layer-spec", 3, 26);
	expect_one(FULL "[0, 2-x]\n", "layer-spec", 3, 29);
}

static void test_specs_range(void **state)
{
	(void)state;
	expect_one(FULL "[0, 32]\n", "layer-range", 3, 29);
	expect_one(FULL "[30-32]\n", "layer-range", 3, 26);
	expect_one(FULL "[18446744073709551616]\n", "layer-range", 3, 26);        /* 2^64 */
	expect_one(FULL "[18446744073709551615]\n", "layer-range", 3, 26);        /* 2^64-1 */
	expect_one(FULL "[0-99999999999999999999999999]\n", "layer-range", 3, 26);
	expect_one(FULL "[9223372036854775808]\n", "layer-range", 3, 26);         /* 2^63 */
}

static void test_specs_order(void **state)
{
	(void)state;
	expect_one(FULL "[0-3, 2]\n", "layer-order", 3, 31);
	expect_one(FULL "[5, 0-3]\n", "layer-order", 3, 29);
	expect_one(FULL "[1, 1]\n", "layer-order", 3, 29);
	expect_one(FULL "[0-3, 3-5]\n", "layer-order", 3, 31);
	want two[] = {{"layer-order", 3, 29}, {"layer-order", 3, 32}};
	expect_diags(FULL "[9, 3, 1]\n", "llama2-7b", two, 2);
}

/* A scalar or a mapping where a list is expected: `type`; a scalar gets a
 * hint showing the list form (a scalar must never read as something else). */
static void test_specs_scalar_for_list(void **state)
{
	(void)state;
	static const char *const bad[] = {"4", "True", "\"0-3\"", "{0: 3}", "0-3"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[128];
		snprintf(text, sizeof text, FULL "%s\n", bad[i]);
		mo_diags *d = check_text(text, "llama2-7b");
		assert_int_equal(mo_diags_count(d), 1);
		const mo_diag *g = mo_diags_get(d, 0);
		assert_string_equal(g->code, "type");
		assert_int_equal(g->line, 3);
		assert_int_equal(g->column, 25);
		if (bad[i][0] != '{') {
			assert_non_null(g->hint);
			assert_true(strlen(g->hint) > 0);
		}
		mo_diags_free(d);
	}
}

/* ---- YAML 1.1 scalar quirks (PyYAML reads them otherwise) --------------- */

static void test_quirks(void **state)
{
	(void)state;
	expect_one(FULL "[010]\n", "layer-spec", 3, 26);   /* octal 8 in YAML 1.1 */
	expect_one(FULL "[0x1F]\n", "layer-spec", 3, 26);  /* hex 31 */
	expect_one(FULL "[1:30]\n", "layer-spec", 3, 26);  /* sexagesimal 90 */
	expect_one(FULL "[0, True]\n", "layer-spec", 3, 29);
	expect_one(FULL "[0, yes]\n", "layer-spec", 3, 29); /* a YAML 1.1 boolean */
	expect_one(FULL "[0, off]\n", "layer-spec", 3, 29);
	expect_one(FULL "[1_0]\n", "layer-spec", 3, 26);    /* 10 with an underscore */
	/* enable must be a boolean: "True" quoted is a string, 1 an int */
	expect_one("swap:\n  enable: \"True\"\n", "type", 2, 11);
	expect_one("swap:\n  enable: 1\n", "type", 2, 11);
	/* yes/on are booleans in YAML 1.1 (PyYAML): accepted for enable */
	expect_clean("swap:\n  enable: yes\nrecompute_comm:\n  enable: off\n", "llama2-7b");
	/* null mode is None, with a warning */
	mo_diags *d = check_text("recompute:\n  mode: ~\n", "llama2-7b");
	assert_int_equal(mo_diags_count(d), 1);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_string_equal(mo_diags_get(d, 0)->code, "mode-invalid");
	assert_int_equal(mo_diags_get(d, 0)->severity, MO_SEV_WARNING);
	mo_diags_free(d);
	/* "None" and None are the same mode; 'none' is not */
	expect_clean("recompute:\n  mode: \"None\"\n", "llama2-7b");
	expect_one("recompute:\n  mode: none\n", "mode-invalid", 2, 9);
	/* default_prefetch is an int: not "2", 1.5 or True */
	expect_one("swap:\n  enable: True\n  default_prefetch: \"2\"\n", "type", 3, 21);
	expect_one("swap:\n  enable: True\n  default_prefetch: 1.5\n", "type", 3, 21);
	expect_one("swap:\n  enable: True\n  default_prefetch: True\n", "type", 3, 21);
}

/* ---- structure ------------------------------------------------------------ */

static void test_duplicate_keys(void **state)
{
	(void)state;
	expect_one(FULL "[0-3]\n  mode: select\n", "duplicate-key", 4, 3);
	expect_one("recompute:\n  mode: None\nrecompute:\n  mode: None\n", "duplicate-key", 3, 1);
	want w[] = {{"duplicate-key", 5, 5}};
	expect_diags("recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0]\n"
		     "    \".*mlp\": [1]\n",
		     "llama2-7b", w, 1);
	/* keys of other top-level sections of a training YAML are checked too */
	expect_one("seed: 1\nseed: 2\nrecompute:\n  mode: None\n", "duplicate-key", 2, 1);
}

static void test_missing_and_unknown(void **state)
{
	(void)state;
	expect_one("swap:\n  enable: True\n  layer_swap:\n    - {}\n", "missing-key", 4, 7);
	want w[] = {{"unknown-key", 4, 7}, {"missing-key", 4, 7}};
	expect_diags("swap:\n  enable: True\n  layer_swap:\n    - layer: [0]\n", "llama2-7b", w, 2);
	/* other top-level keys are a training YAML's, not unknown */
	expect_clean("model:\n  x: 1\ntrainer:\n  y: 2\nrecompute:\n  mode: None\n", "llama2-7b");
	expect_one("recompute: [full]\n", "type", 1, 12);
	expect_one("42\n", "type", 1, 1);
}

static void test_did_you_mean(void **state)
{
	(void)state;
	static const struct {
		const char *text, *code, *suggestion;
	} cases[] = {
		{"recompute:\n  mode: None\n  full_recompute_layers: [0]\n", "unknown-key",
		 "full_recompute_layer"},
		{"recompute:\n  mode: None\n  exclude_ops: {}\n", "unknown-key", "exclude_op"},
		{"swap:\n  enable: False\n  default_prefech: 1\n", "unknown-key", "default_prefetch"},
		{"swap:\n  enable: False\n  layers_swap: []\n", "unknown-key", "layer_swap"},
		{"recompute_comm:\n  enable: True\n  select_module:\n    '.*\\.all_gather': [0-3]\n",
		 "no-match", ".*allgather"},
		/* one edit from both '.*mlp' and '.*mul': some suggestion */
		{"recompute:\n  mode: select\n  select_module:\n    '.*mpl': [0-3]\n", "no-match",
		 "did you mean '.*m"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mo_diags *d = check_text(cases[i].text, "mixtral-8x7b");
		const mo_diag *hit = NULL;
		for (size_t j = 0; j < mo_diags_count(d); j++)
			if (strcmp(mo_diags_get(d, j)->code, cases[i].code) == 0)
				hit = mo_diags_get(d, j);
		if (!hit || !hit->hint || !strstr(hit->hint, cases[i].suggestion)) {
			print_message("for:\n%s\nwant a %s hint naming %s\n", cases[i].text,
				      cases[i].code, cases[i].suggestion);
			print_diags(d);
		}
		assert_non_null(hit);
		assert_non_null(hit->hint);
		assert_non_null(strstr(hit->hint, cases[i].suggestion));
		mo_diags_free(d);
	}
}

/* ---- patterns --------------------------------------------------------------- */

/* The caret goes to PCRE2's error offset inside the pattern: key column, +1
 * for the quote, + offset; the message names the offset. */
static void test_regex_offsets(void **state)
{
	(void)state;
	static const struct {
		const char *pattern;
		int offset;
	} cases[] = {
		{"(.*mlp", 6}, {"*mlp", 0}, {"mlp[", 4}, {"a{2,1}", 5}, {"(?<", 3},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[256];
		snprintf(text, sizeof text,
			 "recompute:\n  mode: select\n  select_module:\n    '%s': [0-3]\n",
			 cases[i].pattern);
		mo_diags *d = check_text(text, "llama2-7b");
		if (mo_diags_count(d) != 1)
			print_diags(d);
		assert_int_equal(mo_diags_count(d), 1);
		const mo_diag *g = mo_diags_get(d, 0);
		assert_string_equal(g->code, "regex");
		assert_int_equal(g->severity, MO_SEV_ERROR);
		assert_int_equal(g->line, 4);
		char off[32];
		snprintf(off, sizeof off, "offset %d", cases[i].offset);
		if (!strstr(g->message, off) || g->column != 6 + cases[i].offset)
			print_diags(d);
		assert_non_null(strstr(g->message, off));
		assert_int_equal(g->column, 6 + cases[i].offset);
		mo_diags_free(d);
	}
}

/* Full-match semantics: a pattern matches the whole path (Python's re.fullmatch). */
static void test_fullmatch(void **state)
{
	(void)state;
	/* `.*mlp` and `mlp.*` match; a bare leaf or a prefix does not */
	expect_clean("recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0]\n"
		     "    'mlp.*': [1]\n    'mlp.linear_fc1': [2]\n",
		     "llama2-7b");
	expect_one("recompute:\n  mode: select\n  select_module:\n    'linear_fc1': [0]\n", "no-match",
		   4, 5);
	expect_one("recompute:\n  mode: select\n  select_module:\n    'decoder.layers.0.mlp': [0]\n",
		   "no-match", 4, 5);
	expect_one("recompute:\n  mode: select\n  select_module:\n    'ml': [0]\n", "no-match", 4, 5);
}

/* ---- diagnostics: one pass, sorted by line and column -------------------- */

static void test_sorting(void **state)
{
	(void)state;
	const char *text = "swap:\n"
			   "  enable: True\n"
			   "  default_prefetch: 0\n"
			   "  layer_swap:\n"
			   "    - layers: [40]\n"
			   "recompute:\n"
			   "  mode: Full\n"
			   "  full_recompute_layer: [5, 0-3]\n"
			   "  bogus: 1\n";
	mo_diags *d = check_text(text, "llama2-7b");
	assert_true(mo_diags_errors(d) >= 5);
	for (size_t i = 1; i < mo_diags_count(d); i++) {
		const mo_diag *a = mo_diags_get(d, i - 1), *b = mo_diags_get(d, i);
		int cf = strcmp(a->file, b->file);
		assert_true(cf < 0 || (cf == 0 && (a->line < b->line ||
						   (a->line == b->line && a->column <= b->column))));
	}
	/* every diagnostic has a path and a one-line message */
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		assert_non_null(g->path);
		assert_non_null(g->message);
		assert_null(strchr(g->message, '\n'));
		assert_string_equal(g->file, "t.yaml");
	}
	mo_diags_free(d);
	/* counts agree */
	d = check_text("recompute_config: {}\nrecompute:\n  mode: Full\n", "llama2-7b");
	assert_int_equal(mo_diags_count(d), mo_diags_errors(d) + mo_diags_warnings(d));
	assert_int_equal(mo_diags_errors(d), 1);
	assert_int_equal(mo_diags_warnings(d), 1);
	mo_diags_free(d);
}

/* Without a model: structure is checked, layer rules need the model. */
static void test_no_model(void **state)
{
	(void)state;
	mo_diags *d = check_text(FULL "[0-3]\n", NULL);
	assert_int_equal(mo_diags_errors(d), 1);
	assert_string_equal(mo_diags_get(d, 0)->code, "model-needed");
	mo_diags_free(d);
	/* a grammar error needs no model */
	d = check_text(FULL "[0-3, 2]\n", NULL);
	int order = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++)
		order += strcmp(mo_diags_get(d, i)->code, "layer-order") == 0;
	assert_int_equal(order, 1);
	mo_diags_free(d);
}

/* mo_config_parse on its own: a hard error only for limits, not for bad YAML. */
static void test_parse_api(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_config *c = NULL;
	mo_error err = {0};
	const char *bad = "recompute: [\n";
	assert_int_equal(mo_config_parse(&c, d, bad, strlen(bad), "b.yaml", NULL, &err), 0);
	assert_true(mo_diags_errors(d) >= 1);
	assert_string_equal(mo_diags_get(d, 0)->code, "yaml-syntax");
	mo_config_free(c);
	mo_diags_free(d);

	assert_int_equal(mo_diags_new(&d), 0);
	const char *train = "seed: 1\nrecompute:\n  mode: None\n";
	assert_int_equal(mo_config_parse(&c, d, train, strlen(train), "t.yaml", NULL, &err), 0);
	assert_non_null(c);
	assert_int_equal(mo_config_is_training_yaml(c), 1);
	mo_config_free(c);
	const char *alone = "recompute:\n  mode: None\n";
	assert_int_equal(mo_config_parse(&c, d, alone, strlen(alone), "t.yaml", NULL, &err), 0);
	assert_int_equal(mo_config_is_training_yaml(c), 0);
	mo_config_free(c);
	mo_diags_free(d);

	/* a limit is a hard error or a diagnostic, never a crash */
	mo_limits lim;
	mo_limits_default(&lim);
	lim.max_bytes = 8;
	assert_int_equal(mo_diags_new(&d), 0);
	c = NULL;
	int rc = mo_config_parse(&c, d, alone, strlen(alone), "t.yaml", &lim, &err);
	assert_true(rc == -1 ? err.code == MO_ERR_LIMIT && c == NULL : mo_diags_errors(d) > 0);
	mo_config_free(c);
	mo_diags_free(d);
}

/* The read-only view an editor builds its controls from: sections with the
 * lines they span, values typed as PyYAML types them, patterns in order
 * with their matches. Expectations from reading the text below. */
static void test_config_view(void **state)
{
	(void)state;
	static const char text[] = "seed: 1\n"                          /* 1 */
				   "recompute:\n"                        /* 2 */
				   "  mode: select\n"                    /* 3 */
				   "  select_module:\n"                  /* 4 */
				   "    '.*mlp': [0-3]\n"                /* 5 */
				   "    'self_attention.(': [1]\n"       /* 6 */
				   "  exclude_op:\n"                     /* 7 */
				   "    'mlp.mul': [2]\n"                /* 8 */
				   "swap:\n"                             /* 9 */
				   "  enable: yes\n"                     /* 10 */
				   "  default_prefetch: 0x10\n"          /* 11 */
				   "  ratio: 1.5\n"                      /* 12 */
				   "  big: 99999999999999999999\n"       /* 13 */
				   "  name: ~\n"                         /* 14 */
				   "trailer: 2\n";                       /* 15 */
	mo_diags *d = NULL;
	mo_config *c = NULL;
	mo_error err = {0};
	int first = -1, end = -1;
	mo_config_pattern p;
	mo_matcher *mt = mo_matcher_new();

	assert_non_null(mt);
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_config_parse(&c, d, text, strlen(text), "v.yaml", NULL, &err), 0);

	const mo_node *rc = mo_config_section(c, "recompute", &first, &end);
	assert_non_null(rc);
	assert_int_equal(first, 2);
	assert_int_equal(end, 9);
	assert_int_equal(mo_node_value_type(rc), MO_VALUE_MAP);
	assert_int_equal(mo_node_count(rc), 3);
	size_t len = 0;
	assert_string_equal(mo_node_text(mo_node_key(rc, 0), &len), "mode");
	assert_int_equal(len, 4);
	assert_string_equal(mo_node_text(mo_node_item(rc, 0), NULL), "select");
	assert_null(mo_node_key(rc, 3));
	assert_null(mo_config_section(c, "recompute_comm", &first, &end));
	assert_int_equal(first, 0);

	const mo_node *sw = mo_config_section(c, "swap", &first, &end);
	assert_int_equal(first, 9);
	assert_int_equal(end, 15);
	assert_int_equal(mo_node_value_type(mo_node_item(sw, 0)), MO_VALUE_BOOL);
	assert_int_equal(mo_node_bool(mo_node_item(sw, 0)), 1);
	assert_int_equal(mo_node_value_type(mo_node_item(sw, 1)), MO_VALUE_INT);
	assert_int_equal(mo_node_int(mo_node_item(sw, 1)), 16);
	assert_int_equal(mo_node_value_type(mo_node_item(sw, 2)), MO_VALUE_FLOAT);
	assert_true(mo_node_float(mo_node_item(sw, 2)) == 1.5);
	/* past int64: read as its text */
	assert_int_equal(mo_node_value_type(mo_node_item(sw, 3)), MO_VALUE_STRING);
	assert_int_equal(mo_node_value_type(mo_node_item(sw, 4)), MO_VALUE_NULL);

	assert_int_equal(mo_config_pattern_count(c), 3);
	assert_int_equal(mo_config_pattern_get(&p, c, 0), 0);
	assert_string_equal(p.section, "recompute");
	assert_string_equal(p.key, "select_module");
	assert_string_equal(p.regex, ".*mlp");
	assert_true(p.compiled);
	assert_false(p.comm_only);
	assert_int_equal(mo_config_pattern_match(mt, c, 0, "mlp", 3), 1);
	assert_int_equal(mo_config_pattern_match(mt, c, 0, "mlp.linear_fc1", 14), 0);
	assert_int_equal(mo_config_pattern_get(&p, c, 1), 0);
	assert_false(p.compiled);
	assert_int_equal(mo_config_pattern_match(mt, c, 1, "self_attention", 14), 0);
	assert_int_equal(mo_config_pattern_get(&p, c, 2), 0);
	assert_string_equal(p.key, "exclude_op");
	assert_int_equal(mo_config_pattern_match(mt, c, 2, "mlp.mul", 7), 1);
	assert_int_equal(mo_config_pattern_get(&p, c, 3), -1);

	mo_matcher_free(mt);
	mo_config_free(c);
	mo_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specs_accepted),
		cmocka_unit_test(test_specs_mtp),
		cmocka_unit_test(test_specs_grammar),
		cmocka_unit_test(test_specs_range),
		cmocka_unit_test(test_specs_order),
		cmocka_unit_test(test_specs_scalar_for_list),
		cmocka_unit_test(test_quirks),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_missing_and_unknown),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_regex_offsets),
		cmocka_unit_test(test_fullmatch),
		cmocka_unit_test(test_sorting),
		cmocka_unit_test(test_no_model),
		cmocka_unit_test(test_parse_api),
		cmocka_unit_test(test_config_view),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
