/* mo_export / mo_export_sections: canonical text of every seed example
 * (tests/golden/export/<name>.yaml -> <name>.expected), round trips, merged
 * ranges, quoting, and splicing into whole training YAMLs (comments, flow
 * styles, CRLF, no trailing newline, anchors). Run from the repository
 * root (tests/run.sh does). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define GOLDEN_DIR "tests/golden/export"
#define REAL_DIR "tests/data/real-configs"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	assert_non_null(buf);
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
		if (cap - n - 1 == 0) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void print_diags(const mo_diags *d)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		fprintf(stderr, "  %s:%d:%d: %s[%s]: %s\n", g->file, g->line,
			g->column, g->severity == MO_SEV_ERROR ? "error" : "warning",
			g->code, g->message);
	}
}

/* Parses text; with `clean`, the parse must report no error. */
static mo_config *parse_text(const char *text, size_t len, const char *name,
			     bool clean)
{
	mo_diags *d = NULL;
	mo_config *c = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	int rc = mo_config_parse(&c, d, text, len, name, NULL, &err);
	if (rc != 0)
		fprintf(stderr, "%s: hard error: %s\n", name, err.text);
	assert_int_equal(rc, 0);
	assert_non_null(c);
	if (clean && mo_diags_errors(d) != 0) {
		fprintf(stderr, "%s: unexpected errors:\n", name);
		print_diags(d);
		fail();
	}
	mo_diags_free(d);
	return c;
}

static char *export_text(const mo_config *c, bool whole, size_t *len)
{
	char *out = NULL;
	size_t n = 0;
	mo_error err = {0};
	int rc = whole ? mo_export(&out, &n, c, &err)
		       : mo_export_sections(&out, &n, c, &err);
	if (rc != 0)
		fprintf(stderr, "export failed: %s\n", err.text);
	assert_int_equal(rc, 0);
	assert_non_null(out);
	assert_int_equal(strlen(out), n);
	if (len)
		*len = n;
	return out;
}

/* export -> parse -> export gives the same text, for mo_export and
 * mo_export_sections alike. */
static void assert_round_trip(const mo_config *c, const char *name)
{
	size_t n1;
	char *e1 = export_text(c, true, &n1);
	char *s1 = export_text(c, false, NULL);
	mo_config *c2 = parse_text(e1, n1, name, true);
	char *e2 = export_text(c2, true, NULL);
	char *s2 = export_text(c2, false, NULL);
	assert_string_equal(e1, e2);
	assert_string_equal(s1, s2);
	assert_int_equal(mo_config_is_training_yaml(c2),
			 mo_config_is_training_yaml(c));
	free(e1);
	free(s1);
	free(e2);
	free(s2);
	mo_config_free(c2);
}

/* mo_export of `in` equals `want`; round trip too. */
static void check_export(const char *in, size_t len, const char *want,
			 const char *name)
{
	if (len == SIZE_MAX)
		len = strlen(in);
	mo_config *c = parse_text(in, len, name, true);
	char *got = export_text(c, true, NULL);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "%s: export differs\n--- got\n%s--- want\n%s---\n",
			name, got, want);
	assert_string_equal(got, want);
	assert_round_trip(c, name);
	free(got);
	mo_config_free(c);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

/* ---- golden cases: every YAML example of the seed, and more ----------- */

static void test_golden(void **state)
{
	(void)state;
	DIR *dir = opendir(GOLDEN_DIR);
	assert_non_null(dir);
	struct dirent *de;
	int cases = 0, seeds = 0;
	while ((de = readdir(dir)) != NULL) {
		if (!has_suffix(de->d_name, ".yaml"))
			continue;
		char in_path[512], want_path[512];
		snprintf(in_path, sizeof in_path, "%s/%s", GOLDEN_DIR, de->d_name);
		snprintf(want_path, sizeof want_path, "%s/%.*s.expected", GOLDEN_DIR,
			 (int)(strlen(de->d_name) - 5), de->d_name);
		size_t in_len, want_len;
		char *in = slurp(in_path, &in_len);
		char *want = slurp(want_path, &want_len);
		assert_non_null(in);
		if (!want)
			fprintf(stderr, "missing %s\n", want_path);
		assert_non_null(want);
		check_export(in, in_len, want, in_path);
		cases++;
		if (strncmp(de->d_name, "seed", 4) == 0)
			seeds++;
		free(in);
		free(want);
	}
	closedir(dir);
	assert_true(seeds >= 11);
	assert_true(cases >= seeds);
}

/* ---- sections ------------------------------------------------------------ */

static void test_merge_ranges(void **state)
{
	(void)state;
	static const char in[] =
		"recompute:\n"
		"  mode: select\n"
		"  full_recompute_layer: [0-3, 4-7, 9, 10-12, 14, 15, 16-16]\n"
		"  select_module:\n"
		"    '.*mlp': [0, 1, 2-5, 7]\n"
		"    '.*attention': [\" 0-3 \", 8]\n"
		"    'x': [5-5]\n"
		"    'y':\n"
		"      - 100\n"
		"      - 101-200\n"
		"      - 300\n";
	static const char want[] =
		"recompute:\n"
		"  mode: select\n"
		"  full_recompute_layer: [0-7, 9-12, 14-16]\n"
		"  select_module:\n"
		"    '.*mlp': [0-5, 7]\n"
		"    '.*attention': [0-3, 8]\n"
		"    'x': [5]\n"
		"    'y': [100-200, 300]\n";
	check_export(in, sizeof in - 1, want, "merge");
}

static void test_long_layer_list(void **state)
{
	(void)state;
	mo_buf b;
	buf_init(&b, 0);
	buf_puts(&b, "recompute:\n  mode: full\n  full_recompute_layer: [");
	for (int i = 0; i < 200000; i++)
		if (i != 5000)
			buf_printf(&b, "%s%d", i ? ", " : "", i);
	buf_puts(&b, "]\n");
	assert_false(b.failed);
	mo_config *c = parse_text(b.data, b.len, "long", true);
	char *got = export_text(c, false, NULL);
	assert_string_equal(got, "recompute:\n  mode: full\n"
				 "  full_recompute_layer: [0-4999, 5001-199999]\n");
	free(got);
	mo_config_free(c);
	buf_free(&b);
}

static void test_quoting(void **state)
{
	(void)state;
	static const char in[] =
		"recompute:\n"
		"  mode: select\n"
		"  select_module:\n"
		"    \"it's\": [0]\n"
		"    'say \"hi\"': [1]\n"
		"    'a: b': [2]\n"
		"    'x #y': [3]\n"
		"    '*star': [4]\n"
		"    'ünï.*cödé': [5]\n"
		"    '123': [6]\n"
		"    'true': [7]\n"
		"    'null': [8]\n"
		"    '- dash': [9]\n"
		"    \"tab\\there\": [10]\n"
		"    \"new\\nline\": [11]\n"
		"    '[a-z]+{2}': [12]\n"
		"    ' lead space': [13]\n"
		"    '~': [14]\n"
		"    \"back\\\\slash\": [15]\n"
		"    plain.*: [16]\n"
		"    '0-3': [17]\n"
		"swap:\n"
		"  op_swap:\n"
		"    - op_name: \"Yes\"\n"
		"      layers: [1]\n";
	static const char want[] =
		"recompute:\n"
		"  mode: select\n"
		"  select_module:\n"
		"    'it''s': [0]\n"
		"    'say \"hi\"': [1]\n"
		"    'a: b': [2]\n"
		"    'x #y': [3]\n"
		"    '*star': [4]\n"
		"    'ünï.*cödé': [5]\n"
		"    '123': [6]\n"
		"    'true': [7]\n"
		"    'null': [8]\n"
		"    '- dash': [9]\n"
		"    \"tab\\there\": [10]\n"
		"    ? \"new\\nline\"\n"
		"    : [11]\n"
		"    '[a-z]+{2}': [12]\n"
		"    ' lead space': [13]\n"
		"    '~': [14]\n"
		"    'back\\slash': [15]\n"
		"    'plain.*': [16]\n"
		"    '0-3': [17]\n"
		"swap:\n"
		"  enable: False\n"
		"  default_prefetch: 1\n"
		"  op_swap:\n"
		"    - op_name: 'Yes'\n"
		"      layers: [1]\n";
	/* '*star' does not compile: a regex error, but it exports */
	mo_config *c = parse_text(in, sizeof in - 1, "quoting", false);
	char *got = export_text(c, true, NULL);
	assert_string_equal(got, want);
	mo_config *c2 = parse_text(got, strlen(got), "quoting2", false);
	assert_int_equal(c2->select.n, c->select.n);
	for (size_t i = 0; i < c->select.n; i++) {
		assert_int_equal(c2->select.p[i].key->len, c->select.p[i].key->len);
		assert_memory_equal(c2->select.p[i].regex, c->select.p[i].regex,
				    c->select.p[i].key->len);
	}
	assert_int_equal(c2->n_op_swap, 1);
	assert_string_equal(c2->op_swap[0].pat.regex, "Yes");
	char *got2 = export_text(c2, true, NULL);
	assert_string_equal(got, got2);
	free(got);
	free(got2);
	mo_config_free(c2);
	mo_config_free(c);
}

/* A key over 128 characters (or with a line break) is an explicit `? key`
 * for libyaml, in block and in flow style; both read back the same. */
static void test_long_key(void **state)
{
	(void)state;
	char key[201];
	memset(key, 'k', 200);
	key[200] = '\0';
	char in[1024], want[1024];
	snprintf(in, sizeof in,
		 "recompute:\n  mode: select\n  select_module: {'%s': [0, 1]}\n", key);
	snprintf(want, sizeof want,
		 "recompute:\n  mode: select\n  select_module:\n    ? '%s'\n    : [0-1]\n",
		 key);
	check_export(in, SIZE_MAX, want, "long-key");
	snprintf(in, sizeof in,
		 "{a: 1, recompute: {mode: select, select_module: {'%s': [0, 1], \"x\\ny\": [2]}}}\n",
		 key);
	snprintf(want, sizeof want,
		 "{a: 1, recompute: {mode: select, select_module: {? '%s' : [0-1], ? \"x\\ny\" : [2]}}}\n",
		 key);
	check_export(in, SIZE_MAX, want, "long-key-flow");
}

static void test_defaults(void **state)
{
	(void)state;
	/* absent keys take their defaults; null values count as absent */
	check_export("recompute:\n"
		     "recompute_comm: {}\n"
		     "swap:\n"
		     "  default_prefetch: ~\n"
		     "  layer_swap:\n"
		     "  - layers: [3]\n",
		     SIZE_MAX,
		     "recompute:\n"
		     "  mode: None\n"
		     "recompute_comm:\n"
		     "  enable: False\n"
		     "swap:\n"
		     "  enable: False\n"
		     "  default_prefetch: 1\n"
		     "  layer_swap:\n"
		     "    - layers: [3]\n",
		     "defaults");
	/* empty lists and mappings stay */
	check_export("recompute:\n"
		     "  mode: None\n"
		     "  full_recompute_layer: []\n"
		     "  exclude_op: {}\n"
		     "swap:\n"
		     "  enable: False\n"
		     "  op_swap: []\n",
		     SIZE_MAX,
		     "recompute:\n"
		     "  mode: None\n"
		     "  full_recompute_layer: []\n"
		     "  exclude_op: {}\n"
		     "swap:\n"
		     "  enable: False\n"
		     "  default_prefetch: 1\n"
		     "  op_swap: []\n",
		     "empty");
}

static void test_no_sections(void **state)
{
	(void)state;
	static const char in[] = "# only a model\nmodel:\n  num_layers: 2\n";
	mo_config *c = parse_text(in, sizeof in - 1, "nosec", true);
	char *s = export_text(c, false, NULL);
	assert_string_equal(s, "");
	char *w = export_text(c, true, NULL);
	assert_string_equal(w, in);
	free(s);
	free(w);
	mo_config_free(c);
}

static void test_null_args(void **state)
{
	(void)state;
	char *out = (char *)"x";
	mo_error err = {0};
	assert_int_equal(mo_export(&out, NULL, NULL, &err), -1);
	assert_int_equal(err.code, MO_ERR_USAGE);
	assert_int_equal(mo_export_sections(NULL, NULL, NULL, NULL), -1);
}

/* ---- whole training YAMLs ---------------------------------------------- */

/* Inline training files: input, expected output. */
static const struct {
	const char *name, *in, *want;
} splice_cases[] = {
	{"comments",
	 "# training config\n"
	 "seed: 0\n"
	 "output_dir: './output'   # where to write\n"
	 "\n"
	 "# --- memory ---\n"
	 "recompute:   # replaced with the section\n"
	 "  mode: full\n"
	 "  # inside: replaced\n"
	 "  full_recompute_layer: [0-3, 4-7]   # trailing comment kept\n"
	 "\n"
	 "  # indented comment after the section\n"
	 "# after recompute\n"
	 "swap:\n"
	 "  enable: True\n"
	 "  layer_swap:\n"
	 "  - layers: [8]\n"
	 "model:\n"
	 "  num_layers: 16\n"
	 "recompute_comm: {enable: False}  # flow value\n"
	 "trainer:\n"
	 "  type: x   # last\n",
	 "# training config\n"
	 "seed: 0\n"
	 "output_dir: './output'   # where to write\n"
	 "\n"
	 "# --- memory ---\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-7]   # trailing comment kept\n"
	 "\n"
	 "  # indented comment after the section\n"
	 "# after recompute\n"
	 "swap:\n"
	 "  enable: True\n"
	 "  default_prefetch: 1\n"
	 "  layer_swap:\n"
	 "    - layers: [8]\n"
	 "model:\n"
	 "  num_layers: 16\n"
	 "recompute_comm:\n"
	 "  enable: False  # flow value\n"
	 "trainer:\n"
	 "  type: x   # last\n"},
	{"flow-value",
	 "model: {num_layers: 8}\n"
	 "recompute: {mode: full,\n"
	 "  full_recompute_layer: [0-1, 2-3],\n"
	 "  exclude_op: {'.*add': [1]}}  # c\n"
	 "other: 1\n",
	 "model: {num_layers: 8}\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-3]\n"
	 "  exclude_op:\n"
	 "    '.*add': [1]  # c\n"
	 "other: 1\n"},
	{"flow-root",
	 "{model: {num_layers: 8}, recompute: {mode: full, full_recompute_layer: [0-1, 2-3]}, # c\n"
	 " swap: {enable: True, op_swap: [{op_name: mlp, layers: [1]}]},\n"
	 " other: 1}\n",
	 "{model: {num_layers: 8}, recompute: {mode: full, full_recompute_layer: [0-3]}, # c\n"
	 " swap: {enable: True, default_prefetch: 1, op_swap: [{op_name: 'mlp', layers: [1]}]},\n"
	 " other: 1}\n"},
	{"json-root",
	 "{\"model\": {\"num_layers\": 8},\n"
	 " \"recompute\": {\"mode\": \"full\", \"full_recompute_layer\": [\"0-3\", 4]}}",
	 "{\"model\": {\"num_layers\": 8},\n"
	 " recompute: {mode: full, full_recompute_layer: [0-4]}}"},
	{"no-trailing-newline",
	 "model: {num_layers: 4}\n"
	 "swap:\n"
	 "  enable: True\n"
	 "  layer_swap: [{layers: [1]}]",
	 "model: {num_layers: 4}\n"
	 "swap:\n"
	 "  enable: True\n"
	 "  default_prefetch: 1\n"
	 "  layer_swap:\n"
	 "    - layers: [1]"},
	{"no-trailing-newline-block",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer:\n"
	 "  - 0\n"
	 "  - 1",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-1]"},
	{"trailing-blank-lines",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0, 1]\n"
	 "\n"
	 "\n"
	 "# end\n"
	 "\n",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-1]\n"
	 "\n"
	 "\n"
	 "# end\n"
	 "\n"},
	{"indented-root",
	 "  a: 1\n"
	 "  recompute:\n"
	 "    mode: full\n"
	 "    full_recompute_layer: [1, 2]\n"
	 "  swap:\n"
	 "    enable: True\n"
	 "    layer_swap:\n"
	 "    - {layers: [5]}\n"
	 "  b: 2\n",
	 "  a: 1\n"
	 "  recompute:\n"
	 "    mode: full\n"
	 "    full_recompute_layer: [1-2]\n"
	 "  swap:\n"
	 "    enable: True\n"
	 "    default_prefetch: 1\n"
	 "    layer_swap:\n"
	 "      - layers: [5]\n"
	 "  b: 2\n"},
	{"document-markers",
	 "%YAML 1.1\n"
	 "---\n"
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: select\n"
	 "  select_module: {\"mlp\": [0]}\n"
	 "...\n",
	 "%YAML 1.1\n"
	 "---\n"
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: select\n"
	 "  select_module:\n"
	 "    'mlp': [0]\n"
	 "...\n"},
	{"explicit-key",
	 "a: 1\n"
	 "? recompute\n"
	 ":\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0]\n"
	 "b: 2\n",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0]\n"
	 "b: 2\n"},
	{"quoted-key-and-tag",
	 "a: 1\n"
	 "\"recompute\": !!map\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0]\n"
	 "'swap': !!map {enable: False}\n"
	 "b: 2\n",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0]\n"
	 "swap:\n"
	 "  enable: False\n"
	 "b: 2\n"},
	{"null-section",
	 "a: 1\n"
	 "recompute:   # nothing yet\n"
	 "\n"
	 "# comment\n"
	 "swap: ~\n"
	 "b: 2\n",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: None   # nothing yet\n"
	 "\n"
	 "# comment\n"
	 "swap:\n"
	 "  enable: False\n"
	 "b: 2\n"},
	{"block-scalar-regex",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: select\n"
	 "  select_module:\n"
	 "    ? |-\n"
	 "      .*mlp\n"
	 "    : [0]\n"
	 "\n"
	 "b: 2\n",
	 "a: 1\n"
	 "recompute:\n"
	 "  mode: select\n"
	 "  select_module:\n"
	 "    '.*mlp': [0]\n"
	 "\n"
	 "b: 2\n"},
	{"alias-value",
	 "base: &b\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-3]\n"
	 "recompute: *b   # shared\n"
	 "b: 2\n",
	 "base: &b\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-3]\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-3]   # shared\n"
	 "b: 2\n"},
	{"alias-inside",
	 "layers: &l [0-1, 2]\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: *l\n"
	 "b: 2\n",
	 "layers: &l [0-1, 2]\n"
	 "recompute:\n"
	 "  mode: full\n"
	 "  full_recompute_layer: [0-2]\n"
	 "b: 2\n"},
	{"anchored-section",
	 "swap: &s\n"
	 "  enable: False\n"
	 "swap_copy: *s\n",
	 "swap: &s\n"
	 "  enable: False\n"
	 "swap_copy: *s\n"},
	{"unicode-around",
	 "名前: 'モデル'   # 注释\n"
	 "recompute:\n"
	 "  mode: select\n"
	 "  select_module: {'.*mlp': [0, 1]}\n"
	 "说明: 完\n",
	 "名前: 'モデル'   # 注释\n"
	 "recompute:\n"
	 "  mode: select\n"
	 "  select_module:\n"
	 "    '.*mlp': [0-1]\n"
	 "说明: 完\n"},
};

static void test_splice_inline(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof splice_cases / sizeof splice_cases[0]; i++) {
		const char *in = splice_cases[i].in;
		check_export(in, strlen(in), splice_cases[i].want,
			     splice_cases[i].name);
	}
}

static void test_splice_crlf(void **state)
{
	(void)state;
	static const char in[] =
		"a: 1\r\n"
		"recompute:\r\n"
		"  mode: full\r\n"
		"  full_recompute_layer: [0-1, 2]  # kept\r\n"
		"\r\n"
		"# c\r\n"
		"swap:\r\n"
		"  enable: True\r\n"
		"  op_swap:\r\n"
		"  - op_name: \"mlp\"\r\n"
		"    layers: [4]\r\n"
		"b: 2\r\n";
	static const char want[] =
		"a: 1\r\n"
		"recompute:\r\n"
		"  mode: full\r\n"
		"  full_recompute_layer: [0-2]  # kept\r\n"
		"\r\n"
		"# c\r\n"
		"swap:\r\n"
		"  enable: True\r\n"
		"  default_prefetch: 1\r\n"
		"  op_swap:\r\n"
		"    - op_name: 'mlp'\r\n"
		"      layers: [4]\r\n"
		"b: 2\r\n";
	check_export(in, sizeof in - 1, want, "crlf");
	/* CRLF and no trailing newline */
	check_export("a: 1\r\nrecompute: {mode: full, full_recompute_layer: [3, 4]}",
		     SIZE_MAX, "a: 1\r\nrecompute:\r\n  mode: full\r\n"
			       "  full_recompute_layer: [3-4]",
		     "crlf-end");
}

/* An anchor inside a replaced section used elsewhere cannot survive:
 * an error, not invalid YAML. */
static void test_splice_lost_anchor(void **state)
{
	(void)state;
	static const char in[] = "recompute:\n"
				 "  mode: full\n"
				 "  full_recompute_layer: &l [0-3]\n"
				 "other: *l\n";
	mo_config *c = parse_text(in, sizeof in - 1, "anchor", true);
	char *out = (char *)"x";
	mo_error err = {0};
	assert_int_equal(mo_export(&out, NULL, c, &err), -1);
	assert_null(out);
	assert_int_equal(err.code, MO_ERR_INVALID);
	assert_non_null(strstr(err.text, "anchor"));
	mo_config_free(c);
}

/* A real PyNative training YAML: only the section's bytes may change, and
 * the result parses back to the same sections. */
static void check_real(const char *file, const char *section_start,
		       const char *section_end)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", REAL_DIR, file);
	size_t len;
	char *in = slurp(path, &len);
	if (!in) {
		fprintf(stderr, "skipped: %s absent\n", path);
		return;
	}
	mo_config *c = parse_text(in, len, path, true);
	assert_true(mo_config_is_training_yaml(c));
	size_t olen;
	char *out = export_text(c, true, &olen);

	const char *s = strstr(in, section_start);
	assert_non_null(s);
	const char *e = strstr(s, section_end);
	assert_non_null(e);
	e += strlen(section_end);
	size_t pre = (size_t)(s - in) + 1, suf = len - (size_t)(e - in);
	assert_true(olen >= pre + suf);
	assert_memory_equal(out, in, pre);
	assert_memory_equal(out + olen - suf, in + len - suf, suf);
	assert_int_equal(strncmp(out + pre, "recompute:\n", 11), 0);

	mo_config *c2 = parse_text(out, olen, path, true);
	char *s1 = export_text(c, false, NULL);
	char *s2 = export_text(c2, false, NULL);
	assert_string_equal(s1, s2);
	assert_round_trip(c, path);
	free(s1);
	free(s2);
	mo_config_free(c2);
	free(out);
	mo_config_free(c);
	free(in);
}

static void test_real_ds3(void **state)
{
	(void)state;
	check_real("pynative_ds3.yaml", "\nrecompute:", "[0-3]");
}

static void test_real_deepseek4(void **state)
{
	(void)state;
	check_real("pynative_deepseek4.yaml", "\nrecompute:", "[0-9]");
}

/* ---- mo_export_run: the layout of a model given apart, in the file's keys ---- */

/* A graph-mode training YAML with its own model (8 layers), written with
 * the given parallel_config values, offset and runner_config batch size.
 * Keys as MindSpore Transformers reads them (parallel_config.model_parallel,
 * pipeline_stage, data_parallel, micro_batch_num; runner_config.batch_size;
 * model_config.offset: docs/model-import.md). */
static char *graph_file(int dp, int tp, int pp, const char *offset, int mbs)
{
	char *t = NULL;
	int n = asprintf(&t,
			 "# graph mode, its own model\n"
			 "runner_config:\n"
			 "  batch_size: %d  # per device\n"
			 "parallel:\n"
			 "  enable_parallel_optimizer: True\n"
			 "parallel_config:\n"
			 "  data_parallel: %d   # the rest of the devices\n"
			 "  model_parallel: %d  # TP\n"
			 "  pipeline_stage: %d  # PP\n"
			 "  use_seq_parallel: False\n"
			 "  micro_batch_num: 4\n"
			 "model:\n"
			 "  model_config:\n"
			 "    type: LlamaConfig\n"
			 "    num_layers: 8\n"
			 "    hidden_size: 1024\n"
			 "    num_heads: 8\n"
			 "    seq_length: 2048\n"
			 "    offset: %s  # stage split\n"
			 "recompute:\n"
			 "  mode: full  # keep this comment\n"
			 "  full_recompute_layer: [0-3]\n",
			 mbs, dp, tp, pp, offset);
	assert_true(n > 0);
	return t;
}

/* The model a training YAML text carries (mo_config_model). */
static mo_model *own_model(const char *text)
{
	mo_config *c = parse_text(text, strlen(text), "own.yaml", true);
	mo_model *m = NULL;
	mo_error err = {0};
	assert_int_equal(mo_config_model(&m, NULL, c, &err), 0);
	mo_config_free(c);
	return m;
}

/* mo_export_run of file `base` with the model `edited` carries: rc, and
 * the text (NULL when rc is not 0). */
static char *export_run(const char *base, const char *edited, int want_rc)
{
	mo_config *c = parse_text(base, strlen(base), "config.yaml", true);
	mo_model *m = own_model(edited);
	char *out = NULL;
	size_t n = 0;
	mo_error err = {0};
	int rc = mo_export_run(&out, &n, c, m, &err);
	if (rc != want_rc)
		fprintf(stderr, "mo_export_run: %d (%s)\n", rc, err.text);
	assert_int_equal(rc, want_rc);
	if (out)
		assert_int_equal(strlen(out), n);
	mo_model_free(m);
	mo_config_free(c);
	return out;
}

/* TP 1 -> 2 and PP 2 -> 4 on 16 devices (DP 8 -> 2): the three values are
 * replaced in place (their comments kept), the offset [0, 0] of two stages
 * becomes 0 (every stage even: a list of two would not fit four), and the
 * export is byte for byte the file written with those values. */
static void test_export_run_graph(void **state)
{
	(void)state;
	char *base = graph_file(8, 1, 2, "[0, 0]", 1);
	char *edited = graph_file(2, 2, 4, "0", 1);
	char *got = export_run(base, edited, 0);
	assert_string_equal(got, edited);
	free(got);
	/* the batch: runner_config.batch_size */
	char *mbs = graph_file(8, 1, 2, "[0, 0]", 2);
	got = export_run(base, mbs, 0);
	assert_string_equal(got, mbs);
	free(got);
	free(mbs);
	free(edited);
	free(base);
}

/* The model the file states itself: nothing to write (1, *out NULL). */
static void test_export_run_same(void **state)
{
	(void)state;
	char *base = graph_file(8, 1, 2, "[0, 0]", 1);
	assert_null(export_run(base, base, 1));
	free(base);
}

/* PyNative: parallelism's keys; data_parallel_shard written as the file
 * writes it (2 of DP 2 -> 4 of DP 4 is 4, not -1), and the global batch
 * follows DP (micro-batch 1 x DP x 4 micro-batches: 8 -> 16). */
static char *pynative_file(int shard, int tp, int gbs)
{
	char *t = NULL;
	int n = asprintf(&t,
			 "training:\n"
			 "  local_batch_size: 1\n"
			 "  global_batch_size: %d\n"
			 "parallelism:\n"
			 "  data_parallel_shard: %d  # FSDP\n"
			 "  tensor_parallel: %d\n"
			 "  pipeline_parallel: 1\n"
			 "model:\n"
			 "  model_type: llama\n"
			 "  hidden_size: 1024\n"
			 "  intermediate_size: 2816\n"
			 "  num_hidden_layers: 8\n"
			 "  num_attention_heads: 8\n"
			 "  seq_length: 2048\n",
			 gbs, shard, tp);
	assert_true(n > 0);
	return t;
}

static void test_export_run_pynative(void **state)
{
	(void)state;
	char *base = pynative_file(2, 2, 8);
	char *edited = pynative_file(4, 2, 16);
	char *got = export_run(base, edited, 0);
	assert_string_equal(got, edited);
	free(got);
	free(edited);
	free(base);
}

/* A file whose model is elsewhere (pretrained_model_dir, no layer count):
 * its run is read over the model given, nothing is written; a file of the
 * three sections neither. */
static void test_export_run_none(void **state)
{
	(void)state;
	static const char elsewhere[] = "pretrained_model_dir: /path/to/model\n"
					"parallel_config:\n"
					"  data_parallel: 2\n"
					"  model_parallel: 2\n"
					"recompute:\n"
					"  mode: None\n";
	char *edited = graph_file(2, 2, 4, "0", 1);
	assert_null(export_run(elsewhere, edited, 1));
	assert_null(export_run("recompute:\n  mode: None\n", edited, 1));
	free(edited);
}

/* A key the layout needs and the file lacks goes in its section; with no
 * section to go in, the export says so. */
static void test_export_run_no_section(void **state)
{
	(void)state;
	static const char base[] = "parallel_config:\n"
				   "  data_parallel: 8\n"
				   "  model_parallel: 1\n"
				   "model:\n"
				   "  model_config:\n"
				   "    type: LlamaConfig\n"
				   "    num_layers: 8\n"
				   "    hidden_size: 1024\n"
				   "    num_heads: 8\n";
	char *edited = graph_file(8, 1, 1, "0", 2);
	mo_config *c = parse_text(base, strlen(base), "config.yaml", true);
	mo_model *m = own_model(edited);
	char *out = NULL;
	mo_error err = {0};
	assert_int_equal(mo_export_run(&out, NULL, c, m, &err), -1);
	assert_null(out);
	assert_int_equal(err.code, MO_ERR_INVALID);
	assert_non_null(strstr(err.text, "runner_config"));
	mo_model_free(m);
	mo_config_free(c);
	free(edited);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_merge_ranges),
		cmocka_unit_test(test_long_layer_list),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_long_key),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_no_sections),
		cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_splice_inline),
		cmocka_unit_test(test_splice_crlf),
		cmocka_unit_test(test_splice_lost_anchor),
		cmocka_unit_test(test_real_ds3),
		cmocka_unit_test(test_real_deepseek4),
		cmocka_unit_test(test_export_run_graph),
		cmocka_unit_test(test_export_run_same),
		cmocka_unit_test(test_export_run_pynative),
		cmocka_unit_test(test_export_run_none),
		cmocka_unit_test(test_export_run_no_section),
	};
	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
