/* The fast YAML reader (core/src/yaml_fast.c) against libyaml: for every
 * YAML file of the repository's tests and examples, tricky snippets, and
 * random mutations of them (deleted, inserted and replaced bytes, lines
 * re-indented, duplicated or swapped), mo_yaml_parse must give what the
 * libyaml-only parse gives: the same return, the same tree (kind, value,
 * style, tag, anchor, flow, line, column, byte offsets, weight) and the
 * same diagnostics in the same order. It also checks that the reader
 * takes the bench's config and the seed's examples (else nothing is
 * gained). MO_YAML_FAST_ROUNDS sets the mutations per file (default 40). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "internal.h"
#include "yaml_fast.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static size_t n_inputs, n_fast;

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_tree(const mo_node *a, const mo_node *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->line != b->line || a->column != b->column ||
	    a->start != b->start || a->end != b->end || a->weight != b->weight ||
	    a->flow != b->flow || a->is_alias_target != b->is_alias_target ||
	    !same_str(a->tag, b->tag) || !same_str(a->anchor, b->anchor) || a->n != b->n)
		return 0;
	if (a->kind == MO_NODE_SCALAR)
		return a->style == b->style && a->len == b->len &&
		       memcmp(a->value, b->value, a->len) == 0 && a->value[a->len] == '\0';
	for (size_t i = 0; i < a->n; i++)
		if (!same_tree(a->items[i], b->items[i]))
			return 0;
	return 1;
}

static int same_diags(const mo_diags *a, const mo_diags *b)
{
	if (mo_diags_count(a) != mo_diags_count(b))
		return 0;
	for (size_t i = 0; i < mo_diags_count(a); i++) {
		const mo_diag *x = mo_diags_get(a, i), *y = mo_diags_get(b, i);
		if (x->severity != y->severity || x->line != y->line || x->column != y->column ||
		    !same_str(x->code, y->code) || !same_str(x->message, y->message) ||
		    !same_str(x->hint, y->hint) || !same_str(x->path, y->path) ||
		    !same_str(x->file, y->file) || !same_str(x->layers, y->layers))
			return 0;
	}
	return 1;
}

/* Whether the fast reader alone takes the text. */
static int fast_takes(const char *text, size_t len, const mo_limits *lim)
{
	mo_arena *a = mo_arena_new();
	assert_non_null(a);
	char *src = mo_arena_strndup(a, text, len);
	mo_doc doc = {.arena = a, .src = src, .srclen = len, .name = "t"};
	mo_node *root = NULL;
	int ok = mo_yaml_fast(&doc, lim, &root);
	mo_arena_free(a);
	return ok;
}

/* Both parses of text agree; prints the text when they do not. */
static void compare(const char *text, size_t len, const mo_limits *lim, const char *what)
{
	mo_diags *da = NULL, *db = NULL;
	mo_doc *a = NULL, *b = NULL;
	mo_error ea = {0}, eb = {0};
	assert_int_equal(mo_diags_new(&da), 0);
	assert_int_equal(mo_diags_new(&db), 0);
	int ra = mo_yaml_parse(&a, da, text, len, "t.yaml", lim, &ea);
	int rb = mo_yaml_parse_libyaml(&b, db, text, len, "t.yaml", lim, &eb);
	int ok = ra == rb && same_diags(da, db) &&
		 (ra != 0 || same_tree(a->root, b->root));
	n_inputs++;
	n_fast += (size_t)fast_takes(text, len, lim);
	if (!ok) {
		print_message("fast reader differs from libyaml (%s; rc %d vs %d, %zu vs %zu diags):\n"
			      "<<<%.*s>>>\n", what, ra, rb, mo_diags_count(da), mo_diags_count(db),
			      (int)len, text);
		for (size_t i = 0; i < mo_diags_count(db); i++)
			print_message("  libyaml: %s %d:%d %s\n", mo_diags_get(db, i)->code,
				      mo_diags_get(db, i)->line, mo_diags_get(db, i)->column,
				      mo_diags_get(db, i)->message);
	}
	mo_doc_free(a);
	mo_doc_free(b);
	mo_diags_free(da);
	mo_diags_free(db);
	assert_true(ok);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One random change of text (len bytes) into out (room for len + 256). */
static size_t mutate(char *out, const char *text, size_t len)
{
	static const char bytes[] = " \n:-#'\"[],a0{}&*?!|>\t\r%.@\\";
	size_t at = len ? next_rand() % len : 0, n = 0;
	switch (next_rand() % 7) {
	case 0: /* delete a byte */
		memcpy(out, text, len);
		if (len) {
			memmove(out + at, out + at + 1, len - at - 1);
			return len - 1;
		}
		return 0;
	case 1: /* insert one */
		memcpy(out, text, at);
		out[at] = bytes[next_rand() % (sizeof bytes - 1)];
		memcpy(out + at + 1, text + at, len - at);
		return len + 1;
	case 2: /* replace one */
		memcpy(out, text, len);
		if (len)
			out[at] = bytes[next_rand() % (sizeof bytes - 1)];
		return len;
	case 3: /* a line's indentation: one or two spaces more, or fewer */
	case 4: {
		while (at > 0 && text[at - 1] != '\n')
			at--;
		memcpy(out, text, at);
		n = at;
		if (next_rand() % 2) {
			size_t k = 1 + next_rand() % 2;
			memset(out + n, ' ', k);
			n += k;
		} else if (at < len && text[at] == ' ') {
			at++;
		}
		memcpy(out + n, text + at, len - at);
		return n + len - at;
	}
	case 5: { /* a line duplicated */
		size_t s = at, e = at;
		while (s > 0 && text[s - 1] != '\n')
			s--;
		while (e < len && text[e] != '\n')
			e++;
		if (e < len)
			e++;
		if (e - s > 200)
			e = s + 200;
		memcpy(out, text, e);
		memcpy(out + e, text + s, e - s);
		memcpy(out + e + (e - s), text + e, len - e);
		return len + (e - s);
	}
	default: { /* cut at a byte (an unfinished text) */
		memcpy(out, text, at);
		return at;
	}
	}
}

static void check_text_and_mutations(const char *text, size_t len, const char *what,
				     size_t rounds)
{
	mo_limits lim;
	mo_limits_default(&lim);
	compare(text, len, &lim, what);
	char *a = malloc(len + 4096), *b = malloc(len + 4096);
	assert_non_null(a);
	assert_non_null(b);
	for (size_t r = 0; r < rounds; r++) {
		/* one to three changes on top of each other */
		size_t n = len;
		memcpy(a, text, len);
		for (size_t k = 1 + next_rand() % 3; k > 0 && n + 300 < len + 4096; k--) {
			n = mutate(b, a, n);
			memcpy(a, b, n);
		}
		compare(a, n, &lim, what);
	}
	free(a);
	free(b);
}

static size_t rounds_per_file(void)
{
	const char *e = getenv("MO_YAML_FAST_ROUNDS");
	return e ? (size_t)strtoul(e, NULL, 10) : 40;
}

static void walk(const char *dir, size_t rounds)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[1024];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(path, rounds);
			continue;
		}
		size_t nl = strlen(e->d_name);
		if (nl < 5 || (strcmp(e->d_name + nl - 5, ".yaml") != 0 &&
			       strcmp(e->d_name + nl - 4, ".yml") != 0) ||
		    st.st_size > 256 * 1024)
			continue;
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		char *text = malloc((size_t)st.st_size + 1);
		assert_non_null(text);
		size_t len = fread(text, 1, (size_t)st.st_size, f);
		fclose(f);
		check_text_and_mutations(text, len, path, rounds);
		free(text);
	}
	closedir(d);
}

static void test_files(void **state)
{
	(void)state;
	static const char *const dirs[] = {"tests/golden", "tests/data", "tests/api",
					   "tests/fuzz/corpus", "examples", "tests/calibration",
					   "../shared/real-configs"};
	size_t rounds = rounds_per_file();
	n_inputs = n_fast = 0;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		walk(dirs[i], rounds);
	print_message("  %zu texts, %zu taken by the fast reader\n", n_inputs, n_fast);
	assert_true(n_inputs > 1000);
}

/* Shapes at the reader's edges, each with its mutations. */
static void test_snippets(void **state)
{
	(void)state;
	static const char *const snippets[] = {
		"a: 1\n",
		"a: 1",
		"a: 1   \n",
		"  a: 1\n  b: 2\n",
		"a:\n  b: 1\n  c: [1, 2 ,3]\nd: x\n",
		"a:\n- 1\n- 2\nb: 3\n",
		"a:\n- x: 1\n  y: 2\n- z: 3\n",
		"a:\n  - x: 1\n    y: [0-3]\n  - [1]\n  -   z: 'q'\nb: \"w\"\n",
		"- a\n- b: 1\n  c: 2\n",
		"a: b # c\n# d\n   # e\n\nf: g#h\n",
		"a: [ ]\nb: []\nc: [a, 'b', \"c\"]\n",
		"a: [a,]\n",
		"a: [a b, c]\n",
		"'a b': 1\n\"c\": 2\n",
		"a: 'it''s'\n",
		"a: \"x\\ty\"\n",
		"a:\n",
		"a:\nb: 1\n",
		"a: 1\n  b: 2\n",
		"a: 1\n b\n",
		"a: b\n  c\n",
		"a: b: c\n",
		"a : b\n",
		"a:b\n",
		"a: -1\nb: - 1\n",
		"a: &x 1\nb: *x\n",
		"a: !!str 1\n",
		"a: |\n  x\n",
		"a: {b: 1}\n",
		"---\na: 1\n",
		"a: 1\n...\n",
		"%YAML 1.1\n---\na: 1\n",
		"a: 1\na: 2\n",
		"a:\n  b: 1\n  b: 2\na: 3\n",
		"a:\n  - b: 1\n    b: 2\n",
		"a:\n    b: 1\n  c: 2\n",
		"a:\n  - 1\n  b: 2\n",
		"a: 1\n- 2\n",
		"a:\t1\n",
		"a: 1\r\nb: 2\r\n",
		"# 注释\na: 1 # 说明\n",
		"a: 值\n",
		"\xEF\xBB\xBF" "a: 1\n",
		"a: [1, [2]]\n",
		"a: [1\n",
		"a: [1, 2] x\n",
		"a: 'x' y\n",
		"a: 'x'#c\n",
		"? a\n: b\n",
		"a: @x\n",
		"a: `x`\n",
		"a: x #\n",
		"a: :x\n",
		"a: x:y\n",
		"a: [x:y]\n",
		"a: [-]\n",
		"a: [-1, -a]\n",
		"a: '#'\n",
		"-\n  a: 1\n",
		"- - 1\n",
		"-1: a\n",
		"- a\n  - b\n",
		"a:\n  -\n    b: 1\n",
		"recompute:\n  mode: select\n  full_recompute_layer: [0-7]\n  select_module:\n"
		"    '.*mlp': [8-23]\n    'self_attention\\.core_attention': [8-15]\n"
		"  exclude_op:\n    '.*linear_fc1': [8-11]\nrecompute_comm:\n  enable: False\n"
		"swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n    - layers: [24-29]\n"
		"  op_swap:\n    - op_name: 'mlp\\.linear_fc2'\n      layers: [30]\n",
		"",
		"\n\n# only comments\n",
		"just a scalar\n",
		"[1, 2]\n",
	};
	size_t rounds = rounds_per_file() * 10;
	for (size_t i = 0; i < sizeof snippets / sizeof snippets[0]; i++)
		check_text_and_mutations(snippets[i], strlen(snippets[i]), "snippet", rounds);
}

/* The reader takes the shapes it is for (else it saves nothing), and the
 * limits send a text to libyaml for its diagnostic. */
static void test_taken(void **state)
{
	(void)state;
	mo_limits lim;
	mo_limits_default(&lim);
	static const char bench[] =
		"recompute:\n  mode: select\n  full_recompute_layer: [0-7]\n  select_module:\n"
		"    '.*mlp': [8-23]\n    'self_attention\\.core_attention': [8-15]\n"
		"  exclude_op:\n    '.*linear_fc1': [8-11]\nrecompute_comm:\n  enable: False\n"
		"swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n    - layers: [24-29]\n"
		"  op_swap:\n    - op_name: 'mlp\\.linear_fc2'\n      layers: [30]\n";
	assert_true(fast_takes(bench, strlen(bench), &lim));
	static const char seed[] = "# 假设模型 num_layers = 32\nrecompute:\n  mode: select\n"
				   "  select_module:\n    '.*mlp': [0-31]   # 对全部层的 mlp 模块做重计算\n"
				   "recompute_comm:\n  enable: False\nswap:\n  enable: False\n";
	assert_true(fast_takes(seed, strlen(seed), &lim));
	static const char deep[] = "a:\n b:\n  c:\n   d: 1\n";
	assert_true(fast_takes(deep, strlen(deep), &lim));
	lim.max_depth = 3;
	assert_false(fast_takes(deep, strlen(deep), &lim));
	compare(deep, strlen(deep), &lim, "depth limit");
	mo_limits_default(&lim);
	lim.max_nodes = 8;
	assert_false(fast_takes(deep, strlen(deep), &lim));
	compare(deep, strlen(deep), &lim, "node limit");
	mo_limits_default(&lim);
	lim.max_scalar_bytes = 1;
	assert_false(fast_takes("a: 22\n", 6, &lim));
	compare("a: 22\n", 6, &lim, "scalar limit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),
		cmocka_unit_test(test_snippets),
		cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
