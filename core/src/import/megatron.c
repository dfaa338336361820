/* Megatron-LM arguments: which texts are Megatron arguments, the whole
 * text read and interpreted, and the two results: the model file
 * (mo_megatron_import) and the model (model_load_megatron). */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the whole text
 * --------------------------------------------------------------- */

static bool megatron_is_model_config(const char *text, size_t len)
{
	static const char key[] = "MODEL_ARGS:";
	for (size_t i = 0; i + sizeof key - 1 <= len; i++) {
		if ((i == 0 || text[i - 1] == '\n') &&
		    memcmp(text + i, key, sizeof key - 1) == 0)
			return true;
		const char *nl = memchr(text + i, '\n', len - i);
		if (!nl)
			break;
		i = (size_t)(nl - text);
	}
	return false;
}

static bool megatron_contains(const char *text, size_t len, const char *s)
{
	return memmem(text, len, s, strlen(s)) != NULL;
}

/* Does a line start with `source ` or `. ` (blanks before allowed)? */
static bool megatron_sources_a_file(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		size_t rest = len - i;
		if ((rest > 7 && memcmp(text + i, "source ", 7) == 0) ||
		    (rest > 2 && text[i] == '.' && text[i + 1] == ' '))
			return true;
		const char *nl = memchr(text + i, '\n', rest);
		if (!nl)
			break;
		i = (size_t)(nl - text) + 1;
	}
	return false;
}

/* Does the text start with a shell's `#!` line (#!/bin/bash, #!/bin/sh, #!/usr/bin/env
 * bash)? The kernel runs such a file with that shell (execve(2), interpreter scripts):
 * it is a shell script, never YAML, whatever else it holds. */
static bool megatron_shell_shebang(const char *text, size_t len)
{
	if (len < 3 || text[0] != '#' || text[1] != '!')
		return false;
	const char *nl = memchr(text, '\n', len);
	size_t n = nl ? (size_t)(nl - text) : len;
	while (n && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\r'))
		n--;
	static const char *const shells[] = {"/sh", "/bash", " sh", " bash"};
	for (size_t i = 0; i < sizeof shells / sizeof *shells; i++)
		if (megatron_ends_with_n(text, n, shells[i]))
			return true;
	return false;
}

/* The first word of the text, past blank and comment lines. */
static size_t megatron_first_word(const char *text, size_t len,
				     const char **word)
{
	size_t i = 0;
	for (;;) {
		while (i < len && (text[i] == ' ' || text[i] == '\t' ||
				   text[i] == '\r' || text[i] == '\n'))
			i++;
		if (i < len && text[i] == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	size_t n = 0;
	while (i + n < len && text[i + n] != ' ' && text[i + n] != '\t' &&
	       text[i + n] != '\n' && text[i + n] != '\r' &&
	       text[i + n] != '\\')
		n++;
	*word = text + i;
	return n;
}

int mo_megatron_detect(const char *text, size_t len)
{
	if (!text)
		return false;
	/* a script that launches Python and sources its arguments from
	 * another file may hold no model flag itself */
	if (megatron_is_script(text, len) && megatron_contains(text, len, ".py") &&
	    megatron_sources_a_file(text, len))
		return true;
	/* a functional-test config, even one whose MODEL_ARGS is empty (its model is elsewhere:
	 * read, and said) */
	if (megatron_is_model_config(text, len))
		return true;
	/* a shell script that runs Python, with no model flag of its own: a CI driver that runs
	 * conversion programs and other launch scripts (MindSpeed-LLM's tests/pipeline/st/
	 * layerwise_disaggregated_training/ at c77308a1), read as a script to say what it runs */
	if (megatron_shell_shebang(text, len) && megatron_contains(text, len, ".py"))
		return true;
	/* MindSpeed-LLM's FSDP2 launch: no Megatron flag, read to say where its model is */
	if (megatron_contains(text, len, "train_fsdp2.py"))
		return true;
	if (!megatron_contains(text, len, "--num-layers") &&
	    !megatron_contains(text, len, "--hidden-size"))
		return false;
	if (megatron_is_model_config(text, len) ||
	    megatron_is_script(text, len))
		return true;
	const char *w;
	size_t n = megatron_first_word(text, len, &w);
	if (n > 2 && w[0] == '-' && w[1] == '-' &&
	    ((w[2] >= 'a' && w[2] <= 'z') || (w[2] >= 'A' && w[2] <= 'Z')))
		return true; /* an arguments file */
	const char *eq = n ? memchr(w, '=', n) : NULL;
	enum megatron_command kind = megatron_command_of(w, n);
	return kind == MEGATRON_CMD_LAUNCHER || kind == MEGATRON_CMD_SRUN ||
	       kind == MEGATRON_CMD_EXEC || (n > 3 && megatron_ends_with_n(w, n, ".py")) ||
	       (eq && eq > w);
}

/* The YAML reader's findings on a functional-test config, into g's: a key
 * twice in one mapping is read as Megatron-LM's test runner passes it
 * (tests/functional_tests/shell_test_utils/_run_training.sh:97,131 at
 * d98e8a64: yq's `to_entries` turns every MODEL_ARGS entry into a flag,
 * and argparse keeps the last of a flag given twice): a warning, not the
 * error it is in a memopt config. */
static void megatron_relay_parse(struct mo_megatron_import *g, const mo_diags *parsed)
{
	for (size_t i = 0; i < mo_diags_count(parsed); i++) {
		const mo_diag *p = mo_diags_get(parsed, i);
		bool dup = strcmp(p->code, "duplicate-key") == 0 && p->severity == MO_SEV_ERROR;
		mo_diag *d = diags_add(g->diags, dup ? MO_SEV_WARNING : p->severity, p->code, p->file,
				       p->line, p->column, p->path, "%s%s", p->message,
				       dup ? ": Megatron-LM's test runner passes both as flags and "
					     "argparse keeps the last, as this reader does"
					   : "");
		if (d && p->hint && !dup)
			diag_set_hint(g->diags, d, "%s", p->hint);
		if (d && p->layers)
			diag_set_layers(g->diags, d, p->layers);
	}
}

/* Reads the arguments into g (words or MODEL_ARGS). 0, 1 (the text does
 * not parse: diagnostics), -1 (err). */
int megatron_read_input(struct mo_megatron_import *g, const char *text, size_t len,
		       const mo_limits *lim)
{
	if (!megatron_is_model_config(text, len)) {
		bool ok = megatron_is_script(text, len)
			      ? megatron_read_script(g, text, len)
			      : megatron_read_words(g, text, len);
		return g->failed ? -1 : ok ? 0 : 1;
	}
	g->model_config = true;
	mo_doc *doc = NULL;
	mo_diags *parsed = NULL;
	if (mo_diags_new(&parsed) != 0) {
		error_set(g->err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	int rc = yaml_tree_parse(&doc, parsed, text, len, g->file, lim, g->err);
	megatron_relay_parse(g, parsed);
	mo_diags_free(parsed);
	if (rc < 0)
		return -1;
	if (rc > 0 || !doc || !doc->root || doc->root->kind != MO_NODE_MAP) {
		doc_free(doc);
		return 1;
	}
	bool ok = megatron_read_model_config(g, doc);
	doc_free(doc);
	return g->failed ? -1 : ok ? 0 : 1;
}

/* Every part of the model from the arguments read. */
static void megatron_interpret(struct mo_megatron_import *g,
				  struct mo_megatron_out *o, int64_t devices)
{
	struct mo_megatron_shape s = {.vpp = 1};
	const char *impl = NULL;
	const struct mo_megatron_arg *impl_src = NULL;
	megatron_check_hybrid(g);
	megatron_read_shape(g, o, &s);
	megatron_read_vocab(g, o, &s);
	megatron_read_positions(g, o);
	megatron_read_layer(g, o, &s, &impl, &impl_src);
	megatron_read_moe(g, o, &s);
	megatron_read_mla(g, o);
	megatron_read_dsv4(g, o, &s);
	megatron_dsv4_spec(g);
	megatron_read_dsa(g);
	megatron_read_tune(g);
	megatron_read_training(g, o, impl, impl_src);
	megatron_read_parallel(g, o, &s, devices);
	megatron_read_vocab_rows(g, o, &s);
	megatron_read_recompute(g, &s, s.vpp, impl);
	megatron_account(g);
}

/* The whole import into g and o. 0, 1 (the text does not parse), -1. */
static int megatron_run(struct mo_megatron_import *g,
			   struct mo_megatron_out *o, const char *text,
			   size_t len, int64_t devices, const mo_limits *lim)
{
	mo_limits dl;
	if (!lim) {
		mo_limits_default(&dl);
		lim = &dl;
	}
	if (len > lim->max_bytes) {
		error_set(g->err, MO_ERR_LIMIT, 0, 0,
			     "%s: %zu bytes of Megatron arguments, more than "
			     "the %zu allowed",
			     g->file, len, lim->max_bytes);
		return -1;
	}
	g->max_bytes = lim->max_bytes;
	g->source_bytes = len;
	int rc = megatron_read_input(g, text, len, lim);
	if (rc != 0)
		return rc;
	megatron_interpret(g, o, devices);
	return g->failed ? -1 : 0;
}

int mo_megatron_import(char **out, mo_diags *diags, const char *text,
		       size_t len, const char *name, int64_t devices,
		       const mo_limits *lim, mo_error *err)
{
	return mo_megatron_import_dir(out, diags, text, len, name, NULL, devices, lim, err);
}

int mo_megatron_import_dir(char **out, mo_diags *diags, const char *text, size_t len,
			   const char *name, const char *dir, int64_t devices,
			   const mo_limits *lim, mo_error *err)
{
	mo_megatron_dirs dirs = {.script = dir};
	return mo_megatron_import_at(out, diags, text, len, name, &dirs, devices, lim, err);
}

int mo_megatron_import_at(char **out, mo_diags *diags, const char *text, size_t len,
			  const char *name, const mo_megatron_dirs *dirs, int64_t devices,
			  const mo_limits *lim, mo_error *err)
{
	struct mo_megatron_out o = {.n = 0};
	mo_buf body, dst;
	int rc = -1;
	if (out)
		*out = NULL;
	if (!out || !diags || !text) {
		error_set(err, MO_ERR_USAGE, 0, 0,
			     "mo_megatron_import: no text");
		return -1;
	}
	struct mo_megatron_import g = {.arena = arena_new(),
				       .diags = diags,
				       .file = name ? name : "<megatron>",
				       .err = err,
				       .dir = dirs ? dirs->script : NULL,
				       .launch_dir = dirs ? dirs->launch : NULL};
	if (!g.arena) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	buf_init(&body, 0);
	buf_init(&dst, 0);
	rc = megatron_run(&g, &o, text, len, devices, lim);
	if (rc != 0)
		goto out_free_buffers;
	rc = -1;
	if (megatron_write_yaml(&o, &body, err) != 0)
		goto out_free_buffers;
	if (!megatron_annotate(&o, &body, g.file, &dst)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		goto out_free_buffers;
	}
	*out = buf_take(&dst, NULL);
	rc = *out ? 0 : -1;
out_free_buffers:
	buf_free(&body);
	if (rc != 0)
		buf_free(&dst);
	arena_free(g.arena);
	return rc;
}

/* The model's positions are the flags' (the `parallel` rule points at
 * --tensor-model-parallel-size in the user's file, not at the YAML the
 * import wrote); a field from a default has none. */
static bool megatron_positions(mo_model *m, const struct mo_megatron_out *o)
{
	struct mo_model_ext *x = m->ext;
	bool world = false;
	for (int f = 0; f < MF_COUNT; f++)
		x->pos[f] = (struct mo_model_pos){0, 0, NULL, NULL};
	for (size_t i = 0; i < o->n; i++) {
		const struct mo_megatron_item *it = &o->v[i];
		world |= it->field == MF_WORLD;
		if (it->field < 0 || !it->src)
			continue;
		char *path = arena_strdup(m->arena, it->src->flag);
		if (!path)
			return false;
		x->pos[it->field] =
		    (struct mo_model_pos){it->src->line, it->src->column, path, NULL};
	}
	x->dp_follows_devices = !world;
	return true;
}

/* The model the items describe, each value at the flag it comes from. */
static int megatron_fill(mo_model **out, const struct mo_megatron_import *g,
			    const struct mo_megatron_out *o)
{
	const struct mo_megatron_item *order[MO_MG_MAX_ITEMS];
	struct mo_import_item v[MO_MG_MAX_ITEMS];
	size_t n = megatron_order(o, order);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct mo_import_item){&order[i]->item, order[i]->src ? order[i]->src->line : 0,
					       order[i]->src ? order[i]->src->column : 0};
	return model_from_items(out, g->diags, v, n, g->file, g->err);
}

int model_load_megatron(mo_model **out, mo_diags *diags, const char *text,
			   size_t len, const char *name, const mo_megatron_dirs *dirs,
			   const mo_limits *lim, mo_error *err)
{
	struct mo_megatron_out o = {.n = 0};
	*out = NULL;
	struct mo_megatron_import g = {.arena = arena_new(),
				       .diags = diags,
				       .file = name ? name : "<megatron>",
				       .err = err,
				       .quiet_world = true,
				       .dir = dirs ? dirs->script : NULL,
				       .launch_dir = dirs ? dirs->launch : NULL,
				       .fsdp2_caller = true};
	if (!g.arena) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	int rc = megatron_run(&g, &o, text, len, 0, lim);
	if (rc == 1 && g.fsdp2 && !g.failed) {
		/* an FSDP2 launch given as the model: its run over
		 * model_name_or_path's config.json from the launch folder */
		rc = megatron_fsdp2_build(out, &g, NULL, 0);
		if (rc == 1)
			error_set(err, MO_ERR_MODEL_NEEDED, 0, 0,
				  "%s: an FSDP2 launch whose model_name_or_path's config.json is "
				  "not read",
				  g.file);
		arena_free(g.arena);
		return rc == 0 ? 0 : -1;
	}
	if (rc == 1)
		error_set(err, MO_ERR_INVALID, 0, 0,
			     "%s: the Megatron arguments do not parse", g.file);
	if (rc == 0)
		rc = megatron_fill(out, &g, &o);
	if (rc == 0 && !megatron_positions(*out, &o)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		mo_model_free(*out);
		*out = NULL;
		rc = -1;
	}
	arena_free(g.arena);
	return rc == 0 ? 0 : -1;
}

/* MindSpeed-LLM's FSDP2 launch: its words read as any script's, its run and model
 * (megatron_fsdp2.c). */
int mo_fsdp2_import(mo_model **out, mo_diags *diags, const char *text, size_t len,
		    const char *name, const mo_megatron_dirs *dirs, const mo_model *arch,
		    int64_t devices, const mo_limits *lim, mo_error *err)
{
	*out = NULL;
	if (!diags || !text) {
		error_set(err, MO_ERR_USAGE, 0, 0, "mo_fsdp2_import: no text");
		return -1;
	}
	struct mo_megatron_import g = {.arena = arena_new(),
				       .diags = diags,
				       .file = name ? name : "<launch>",
				       .err = err,
				       .dir = dirs ? dirs->script : NULL,
				       .launch_dir = dirs ? dirs->launch : NULL,
				       .fsdp2_caller = true};
	mo_limits dl;
	if (!lim) {
		mo_limits_default(&dl);
		lim = &dl;
	}
	if (!g.arena) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	g.max_bytes = lim->max_bytes;
	g.source_bytes = len;
	int rc = len > lim->max_bytes ? -1 : megatron_read_input(&g, text, len, lim);
	if (len > lim->max_bytes)
		error_set(err, MO_ERR_LIMIT, 0, 0, "%s: %zu bytes, more than the %zu allowed", g.file,
			  len, lim->max_bytes);
	if (rc >= 0 && !g.failed && g.fsdp2)
		rc = megatron_fsdp2_build(out, &g, arch, devices);
	else if (rc >= 0 && !g.failed)
		rc = 1;
	if (g.failed && rc >= 0) {
		mo_model_free(*out);
		*out = NULL;
		rc = -1;
	}
	arena_free(g.arena);
	return rc;
}
