/* The device count of a Megatron-LM functional test: its model_config.yaml
 * does not hold it; the CI recipe that runs the test does. A recipe
 * (tests/test_utils/recipes/<platform>/<name>.yaml at NVIDIA/Megatron-LM
 * d98e8a64, tests/test_utils/recipes/<name>.yaml at the release tags
 * core_v0.12.0 and core_v0.15.0) has a `spec` with `model` (the test_cases
 * folder: gpt, moe, ...),
 * `nodes` and `gpus`, and `products`, each naming one test case
 * (`test_case: [NAME]`, the first item: recipe_parser.py's
 * flatten_products, line 128) whose keys, and those of its inner
 * `products`, replace the spec's (flatten_workload, lines 183-186). The run
 * has nodes x gpus devices.
 *
 * Read when the config sits where Megatron-LM keeps it,
 * .../tests/functional_tests/test_cases/MODEL/CASE/model_config.yaml, and the
 * recipes at .../tests/test_utils/recipes/ beside it (a checkout, or a copy
 * that keeps the paths, as tests/corpus does); the caller gave the config's
 * folder (g->dir). Bounded: 512 recipe files, each within the input size
 * limit; a recipe that does not parse is passed over. */
#include "import/megatron_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RECIPE_MAX_FILES 512

struct recipe_list {
	char **v;
	size_t n, cap;
	bool full;
};

/* Appends a/b (b alone when a is NULL) to l; past RECIPE_MAX_FILES, marks
 * l full. false: out of memory. */
static bool recipe_push(struct recipe_list *l, const char *a, const char *b)
{
	if (l->n >= RECIPE_MAX_FILES) {
		l->full = true;
		return true;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		char **v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	size_t na = a ? strlen(a) + 1 : 0, nb = strlen(b);
	char *s = malloc(na + nb + 1);
	if (!s)
		return false;
	if (a) {
		memcpy(s, a, na - 1);
		s[na - 1] = '/';
	}
	memcpy(s + na, b, nb + 1);
	l->v[l->n++] = s;
	return true;
}

static void recipe_list_free(struct recipe_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int recipe_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .yaml files of root/name into l: name itself when it is one (relative
 * to root), or those in the folder root/name. false: out of memory. */
static bool recipe_entry(const char *root, const char *name, struct recipe_list *l)
{
	size_t n = strlen(root) + strlen(name) + 2;
	char *sub = malloc(n);
	if (!sub)
		return false;
	snprintf(sub, n, "%s/%s", root, name);
	struct stat st;
	bool ok = true;
	if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
		if (megatron_ends_with(name, ".yaml"))
			ok = recipe_push(l, NULL, name);
	} else {
		DIR *s = opendir(sub);
		struct dirent *f;
		while (ok && s && (f = readdir(s)) != NULL)
			if (f->d_name[0] != '.' && megatron_ends_with(f->d_name, ".yaml"))
				ok = recipe_push(l, name, f->d_name);
		if (s)
			closedir(s);
	}
	free(sub);
	return ok;
}

/* Every <name>.yaml and <platform>/<name>.yaml under root, relative to it,
 * sorted: the files CI loads, every .yaml at any depth at d98e8a64 (a
 * recursive glob, tests/test_utils/python_scripts/recipe_parser.py:384),
 * whose recipes sit in platform folders, and recipes_dir.glob("*.yaml") at
 * core_v0.12.0 (python_scripts/common.py:221) and core_v0.15.0
 * (recipe_parser.py:237), whose recipes sit in the folder itself. */
static bool recipe_files(const char *root, struct recipe_list *l)
{
	DIR *d = opendir(root);
	if (!d)
		return true;
	bool ok = true;
	struct dirent *e;
	while (ok && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			ok = recipe_entry(root, e->d_name, l);
	closedir(d);
	if (ok && l->n > 1)
		qsort(l->v, l->n, sizeof *l->v, recipe_cmp);
	return ok;
}

static bool recipe_scalar_is(const mo_node *n, const char *s)
{
	return n && n->kind == MO_NODE_SCALAR && n->len == strlen(s) &&
	       memcmp(n->value, s, n->len) == 0;
}

/* An integer key of map into *v when it is one. */
static void recipe_int(const mo_node *map, const char *key, int64_t *v)
{
	const mo_node *n = map && map->kind == MO_NODE_MAP ? map_get(map, key) : NULL;
	int64_t x;
	if (n && scalar_int(n, &x, NULL) && x >= 0)
		*v = x;
}

/* One test run a recipe names: its devices and where they come from. */
struct recipe_hit {
	const char *file;
	int64_t nodes, gpus;
};

#define RECIPE_MAX_HITS 8

/* The runs of case in one recipe's tree, appended to hits. */
static void recipe_find(const mo_node *root, const char *file, const char *model,
			const char *test_case, struct recipe_hit *hits, size_t *n_hits)
{
	const mo_node *spec = map_get(root, "spec");
	const mo_node *products = map_get(root, "products");
	if (!spec || spec->kind != MO_NODE_MAP || !recipe_scalar_is(map_get(spec, "model"), model) ||
	    !products || products->kind != MO_NODE_SEQ)
		return;
	int64_t nodes = 0, gpus = 0;
	recipe_int(spec, "nodes", &nodes);
	recipe_int(spec, "gpus", &gpus);
	for (size_t i = 0; i < products->n; i++) {
		const mo_node *p = products->items[i];
		const mo_node *tc = p && p->kind == MO_NODE_MAP ? map_get(p, "test_case") : NULL;
		if (!tc || tc->kind != MO_NODE_SEQ || tc->n == 0 ||
		    !recipe_scalar_is(tc->items[0], test_case))
			continue;
		int64_t pn = nodes, pg = gpus;
		recipe_int(p, "nodes", &pn);
		recipe_int(p, "gpus", &pg);
		const mo_node *inner = map_get(p, "products");
		size_t k = inner && inner->kind == MO_NODE_SEQ ? inner->n : 0;
		for (size_t j = 0; j < (k ? k : 1); j++) {
			int64_t in = pn, ig = pg;
			if (k) {
				recipe_int(inner->items[j], "nodes", &in);
				recipe_int(inner->items[j], "gpus", &ig);
			}
			bool seen = false;
			for (size_t h = 0; h < *n_hits; h++)
				seen |= hits[h].nodes == in && hits[h].gpus == ig &&
					strcmp(hits[h].file, file) == 0;
			if (!seen && *n_hits < RECIPE_MAX_HITS)
				hits[(*n_hits)++] = (struct recipe_hit){file, in, ig};
		}
	}
}

/* Reads one recipe file and appends its runs of case. false: out of
 * memory (g failed). */
static bool recipe_read(struct mo_megatron_import *g, const char *root, const char *rel,
			const char *model, const char *test_case, struct recipe_hit *hits,
			size_t *n_hits)
{
	char *path = arena_printf(g->arena, "%s/%s", root, rel);
	const char *shown = arena_printf(g->arena, "tests/test_utils/recipes/%s", rel);
	if (!path || !shown)
		return false;
	const char *why = NULL;
	enum file_read_status status;
	size_t size = 0;
	char *text = file_read_bounded(path, g->max_bytes, &size, &status, &why);
	if (!text)
		return true;
	mo_diags *quiet = NULL;
	mo_doc *doc = NULL;
	mo_limits lim;
	mo_limits_default(&lim);
	lim.max_bytes = g->max_bytes;
	mo_error e = {0};
	bool ok = mo_diags_new(&quiet) == 0;
	if (ok && yaml_tree_parse(&doc, quiet, text, size, shown, &lim, &e) == 0 && doc &&
	    doc->root && doc->root->kind == MO_NODE_MAP)
		recipe_find(doc->root, shown, model, test_case, hits, n_hits);
	doc_free(doc);
	mo_diags_free(quiet);
	free(text);
	return ok;
}

/* The last n path components of p: their start, or NULL. */
static const char *recipe_tail(const char *p, int n)
{
	const char *s = p + strlen(p);
	while (n-- > 0) {
		while (s > p && s[-1] != '/')
			s--;
		if (s == p)
			return NULL;
		if (n > 0)
			s--;
	}
	return s;
}

int64_t megatron_recipe_world(struct mo_megatron_import *g, int64_t mp, const char **why,
			      bool *said)
{
	*said = false;
	if (!g->model_config || !g->dir || mp <= 0)
		return 0;
	char *dir = realpath(g->dir, NULL);
	if (!dir)
		return 0;
	/* .../tests/functional_tests/test_cases/MODEL/CASE */
	const char *tail = recipe_tail(dir, 4);
	int64_t world = 0;
	if (!tail || strncmp(tail, "functional_tests/test_cases/", 28) != 0 ||
	    !strchr(tail + 28, '/')) {
		free(dir);
		return 0;
	}
	const char *model_start = tail + 28;
	const char *slash = strchr(model_start, '/');
	char *model = arena_strndup(g->arena, model_start, (size_t)(slash - model_start));
	char *test_case = arena_strdup(g->arena, slash + 1);
	char *root = arena_printf(g->arena, "%.*s/test_utils/recipes", (int)(tail - 1 - dir), dir);
	free(dir);
	struct recipe_list files = {0};
	struct recipe_hit hits[RECIPE_MAX_HITS];
	size_t n_hits = 0;
	bool ok = model && test_case && root && recipe_files(root, &files);
	for (size_t i = 0; ok && i < files.n; i++)
		ok = recipe_read(g, root, files.v[i], model, test_case, hits, &n_hits);
	recipe_list_free(&files);
	if (!ok) {
		megatron_fail(g, MO_ERR_NOMEM, 0, 0, "out of memory");
		return 0;
	}
	if (n_hits == 0) {
		if (!g->quiet_world)
			megatron_diag(g, MO_SEV_WARNING, "model-needed", 0, 0, "parallel.world_size",
			      "the device count of a functional test is its CI recipe's nodes x gpus "
			      "(tests/test_utils/recipes/[<platform>/]*.yaml, the product whose "
			      "test_case is %s, model %s): no recipe beside this config names it "
			      "(the test is not run by CI at this commit); give it with --devices; "
			      "until then data parallel is 1",
			      test_case, model);
		*said = true;
		return 0;
	}
	/* the config's own processes per node replace the recipe's gpus */
	if (g->env_gpus_per_node > 0)
		for (size_t i = 0; i < n_hits; i++)
			hits[i].gpus = g->env_gpus_per_node;
	/* the runs that fit the layout; one count among them is the answer */
	int64_t count = 0;
	const struct recipe_hit *first = NULL;
	bool several = false;
	for (size_t i = 0; i < n_hits; i++) {
		int64_t w = model_mul(hits[i].nodes, hits[i].gpus);
		if (w <= 0 || w % mp != 0)
			continue;
		if (count && w != count)
			several = true;
		if (!count) {
			count = w;
			first = &hits[i];
		}
	}
	if (count && !several) {
		*why = g->env_gpus_per_node > 0
			   ? arena_printf(g->arena,
					  "nodes %lld of the CI recipe %s x MODEL_ENV_VARS.MODEL_ARGS."
					  "GPUS_PER_NODE %lld",
					  (long long)first->nodes, first->file,
					  (long long)first->gpus)
			   : arena_printf(g->arena, "nodes %lld x gpus %lld of the CI recipe %s",
					  (long long)first->nodes, (long long)first->gpus,
					  first->file);
		if (g->env_gpus_per_node > 0) {
			g->procs_line = g->env_gpus_line;
			g->procs_column = g->env_gpus_column;
		}
		world = *why ? count : 0;
		if (!*why)
			megatron_fail(g, MO_ERR_NOMEM, 0, 0, "out of memory");
		return world;
	}
	mo_buf list;
	buf_init(&list, 0);
	for (size_t i = 0; i < n_hits; i++)
		buf_printf(&list, "%s%s: nodes %lld x gpus %lld", i ? "; " : "", hits[i].file,
			   (long long)hits[i].nodes, (long long)hits[i].gpus);
	if (!g->quiet_world)
		megatron_diag(g, MO_SEV_WARNING, "model-needed", 0, 0, "parallel.world_size",
		      several ? "the CI recipes run %s on different device counts (%s): give the "
				"one to price with --devices; until then data parallel is 1"
			      : "the CI recipe's device count for %s (%s) is not a multiple of "
				"TP x PP x CP: not the count the test runs on; give it with "
				"--devices; until then data parallel is 1",
		      test_case, list.data ? list.data : "");
	buf_free(&list);
	*said = true;
	return 0;
}
