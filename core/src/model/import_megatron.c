/* What a Megatron-LM user has is not a model file but the arguments of a
 * run: a launch line (`torchrun ... pretrain_gpt.py --num-layers 32 ...`),
 * an arguments file (one flag per line, or shell continuation lines), a
 * training script as Megatron-LM ships them (flags in bash arrays, launched
 * as `torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]}`:
 * a small, bounded expansion of assignments and `$NAME` forms, not a
 * shell; see "training scripts" below), or a functional-test
 * model_config.yaml (its MODEL_ARGS mapping of `--flag: value`). This file
 * reads them with the semantics of Megatron's megatron/training/arguments.py
 * (NVIDIA/Megatron-LM d98e8a64: the defaults where a flag is absent, the
 * derived values, the flags it forces) and writes the memopt model file they
 * describe, each key with the flag it comes from in a comment. Every flag is
 * accounted for: read, known not to change device memory, known to change it in
 * a way the estimate does not model (`unmodelled`), or reported as `unread-key`
 * with its position. mo_model_load reads such a text through here, so `--model
 * FILE` and POST /api/v1/models/import take it as they take any model file.
 * Sources and the flag table: docs/megatron-import.md. */
#include "model/model_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MO_MG_MAX_ARGS 20000 /* flags and values in one text */
#define MO_MG_MAX_TOKEN 4096 /* bytes in one argument */

/* One flag as given: its first value (NULL when none), how many values
 * followed it, and where the flag and its values are. */
struct mo_megatron_arg {
	const char *flag;
	const char *value;
	size_t n_values;
	int line, column;   /* the flag */
	int vline, vcolumn; /* its first value (the flag's when none) */
	int xline, xcolumn; /* its second value */
	bool used;
};

/* One shell word with its 1-based position. */
struct mo_megatron_word {
	const char *text;
	int line, column;
};

/* A growing list of words. */
struct mo_megatron_words {
	struct mo_megatron_word *v;
	size_t n, cap;
};

/* A training script's variable: a text (`NAME=value`) or an array
 * (`NAME=( words )`, each word where it was written). */
struct mo_megatron_var {
	const char *name;
	const char *value;
	struct mo_megatron_words items;
	bool array;
};

/* The reader's state for one text. */
struct mo_megatron_import {
	mo_arena *arena;
	mo_diags *diags;
	const char *file;
	mo_error *err;
	struct mo_megatron_arg *args;
	size_t n_args;
	struct mo_megatron_word *words;
	size_t n_words;
	int64_t launcher_procs, launcher_nodes; /* torchrun's, 0 = not given */
	int procs_line, procs_column;
	bool launcher_unknown; /* a launcher count is a shell variable */
	bool quiet_world;      /* no warning for an unknown device count (the
				* loader's model follows --devices) */
	bool failed;	       /* out of memory or a limit (err set) */
	struct mo_megatron_var *vars; /* a training script's */
	size_t n_vars;
	size_t expanded; /* bytes and words expansions made, all told */
};

/* A value the import writes, with the flag it comes from (NULL: a default
 * or a derived value, said in `why`) and the model field it sets. */
struct mo_megatron_item {
	struct mo_item item; /* section, key and value, as model.c writes them */
	int field; /* enum mo_mf, -1 for the keys the model reader skips */
	const struct mo_megatron_arg *src;
	const char *why;
};

struct mo_megatron_out {
	struct mo_megatron_item v[64];
	size_t n;
};

/* ---- diagnostics ----------------------------------------------------------
 */

static mo_diag *mo_megatron_diag(struct mo_megatron_import *g, mo_severity sev,
				 const char *code, int line, int column,
				 const char *path, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static mo_diag *mo_megatron_diag(struct mo_megatron_import *g, mo_severity sev,
				 const char *code, int line, int column,
				 const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mo_diag *d = mo_diags_vadd(g->diags, sev, code, g->file, line, column,
				   path, fmt, ap);
	va_end(ap);
	return d;
}

static void mo_megatron_fail(struct mo_megatron_import *g, mo_error_code code,
			     int line, int column, const char *msg)
{
	if (!g->failed)
		mo_error_set(g->err, code, line, column, "%s:%d:%d: %s",
			     g->file, line, column, msg);
	g->failed = true;
}

/* ---- shell words (launch lines and arguments files) ------------------------
 */

struct mo_megatron_lexer {
	const char *p, *end;
	int line, column;
	mo_buf word;
	bool script;   /* a training script: `$` expands, a line ends a
			* statement */
	bool in_array; /* inside `NAME=( ... )`: lines go on, `)` ends */
	int depth;     /* nested `${NAME:-...}` defaults */
	const struct mo_megatron_var *splice; /* a `${NAME[@]}` word */
	bool splice_quoted;		      /* "${NAME[@]}" */
};

static bool mo_megatron_dollar(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x);
static int mo_megatron_splice(struct mo_megatron_import *g,
			      struct mo_megatron_lexer *x);

static void mo_megatron_advance(struct mo_megatron_lexer *x)
{
	if (*x->p == '\n') {
		x->line++;
		x->column = 1;
	} else {
		x->column++;
	}
	x->p++;
}

/* A backslash before a line break: the two go (a continuation line). */
static bool mo_megatron_continuation(struct mo_megatron_lexer *x)
{
	const char *q = x->p + 1;
	if (q < x->end && *q == '\r')
		q++;
	if (q >= x->end || *q != '\n')
		return false;
	while (x->p <= q)
		mo_megatron_advance(x);
	return true;
}

/* Blanks, continuations and `#` comments before a word. */
static void mo_megatron_skip_blanks(struct mo_megatron_lexer *x)
{
	while (x->p < x->end) {
		char c = *x->p;
		if (c == '\n' && x->script && !x->in_array)
			break; /* the end of a statement */
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			mo_megatron_advance(x);
		else if (c == '\\' && mo_megatron_continuation(x))
			continue;
		else if (c == '#')
			while (x->p < x->end && *x->p != '\n')
				mo_megatron_advance(x);
		else
			break;
	}
}

/* The inside of a quoted string; the lexer is on the opening quote. */
static bool mo_megatron_quoted(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x)
{
	char q = *x->p;
	int line = x->line, column = x->column;
	mo_megatron_advance(x);
	while (x->p < x->end && *x->p != q) {
		if (q == '"' && *x->p == '\\' && x->p + 1 < x->end &&
		    strchr("\"\\$`\n", x->p[1])) {
			if (x->p[1] == '\n') {
				mo_megatron_advance(x);
				mo_megatron_advance(x);
				continue;
			}
			mo_megatron_advance(x);
		} else if (q == '"' && *x->p == '$' && x->script) {
			if (!mo_megatron_dollar(g, x))
				return false;
			continue;
		}
		mo_buf_append(&x->word, x->p, 1);
		mo_megatron_advance(x);
	}
	if (x->p >= x->end) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-syntax", line,
				 column, NULL, "unterminated %s quote",
				 q == '"' ? "double" : "single");
		return false;
	}
	mo_megatron_advance(x);
	return true;
}

/* An unquoted `|`, `;`, `&`, `<` or `>` ends the command (a `| tee log`,
 * a `2>&1`): what follows is not an argument. */
static bool mo_megatron_operator(char c)
{
	return c == '|' || c == ';' || c == '&' || c == '<' || c == '>';
}

/* One word into x->word. Returns 1 a word, 0 the end (or an operator), -1
 * an error (diagnostic or g->failed). */
static int mo_megatron_word(struct mo_megatron_import *g,
			    struct mo_megatron_lexer *x, int *line, int *column)
{
	mo_megatron_skip_blanks(x);
	if (x->p >= x->end || mo_megatron_operator(*x->p) ||
	    (x->script && (*x->p == '\n' || *x->p == ')')))
		return 0;
	*line = x->line;
	*column = x->column;
	x->word.len = 0;
	if (x->script) {
		int rc = mo_megatron_splice(g, x);
		if (rc != 0)
			return rc;
	}
	while (x->p < x->end) {
		char c = *x->p;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
		    mo_megatron_operator(c) || (x->script && c == ')'))
			break;
		if (c == '\'' || c == '"') {
			if (!mo_megatron_quoted(g, x))
				return -1;
			continue;
		}
		if (c == '$' && x->script) {
			if (!mo_megatron_dollar(g, x))
				return -1;
			if (x->word.len > MO_MG_MAX_TOKEN)
				break;
			continue;
		}
		if (c == '(' && x->script) {
			mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script",
					 x->line, x->column, NULL,
					 "'(' here is shell syntax this reader "
					 "does not model (it is not a shell)");
			return -1;
		}
		if (c == '\\' && mo_megatron_continuation(x))
			continue;
		if (c == '\\' && x->p + 1 < x->end)
			mo_megatron_advance(x);
		mo_buf_append(&x->word, x->p, 1);
		mo_megatron_advance(x);
		if (x->word.len > MO_MG_MAX_TOKEN)
			break;
	}
	if (x->word.len > MO_MG_MAX_TOKEN) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "megatron-syntax", *line, *column, NULL,
		    "an argument longer than %d bytes", MO_MG_MAX_TOKEN);
		return -1;
	}
	if (x->word.failed &&
	    x->word.len + 1 >= MO_MG_MAX_TOKEN) { /* a long quoted part */
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "megatron-syntax", *line, *column, NULL,
		    "an argument longer than %d bytes", MO_MG_MAX_TOKEN);
		return -1;
	}
	if (x->word.failed) {
		mo_megatron_fail(g, MO_ERR_NOMEM, *line, *column,
				 "out of memory");
		return -1;
	}
	/* `2>&1`, `1> log`: a file descriptor, the start of a redirection */
	if (x->p < x->end && (*x->p == '<' || *x->p == '>') &&
	    x->word.len > 0 &&
	    strspn(x->word.data, "0123456789") == x->word.len)
		return 0;
	return 1;
}

static bool mo_megatron_push_word(struct mo_megatron_import *g, const mo_buf *w,
				  int line, int column, size_t *cap)
{
	if (g->n_words == MO_MG_MAX_ARGS) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-syntax", line,
				 column, NULL, "more than %d arguments",
				 MO_MG_MAX_ARGS);
		return false;
	}
	if (g->n_words == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct mo_megatron_word *words =
		    mo_arena_alloc(g->arena, n * sizeof(*words));
		if (!words) {
			mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
					 "out of memory");
			return false;
		}
		if (g->n_words)
			memcpy(words, g->words, g->n_words * sizeof(*words));
		g->words = words;
		*cap = n;
	}
	char *text = mo_arena_strndup(g->arena, w->data ? w->data : "", w->len);
	if (!text) {
		mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return false;
	}
	g->words[g->n_words++] = (struct mo_megatron_word){text, line, column};
	return true;
}

/* The text as shell words, up to the first command separator. False on an
 * error (a diagnostic, or g->failed). */
static bool mo_megatron_split_words(struct mo_megatron_import *g,
				    const char *text, size_t len)
{
	struct mo_megatron_lexer x = {
	    .p = text, .end = text + len, .line = 1, .column = 1};
	size_t cap = 0;
	int line = 0, column = 0, rc;
	bool ok = true;
	mo_buf_init(&x.word, MO_MG_MAX_TOKEN + 8);
	while ((rc = mo_megatron_word(g, &x, &line, &column)) == 1)
		if (!mo_megatron_push_word(g, &x.word, line, column, &cap)) {
			ok = false;
			break;
		}
	mo_buf_free(&x.word);
	return ok && rc == 0;
}

/* ---- arguments
 * ---------------------------------------------------------------- */

static bool mo_megatron_is_flag(const char *w)
{
	return w[0] == '-' &&
	       ((w[1] == '-' && w[2] != '\0') || (w[1] >= 'a' && w[1] <= 'z') ||
		(w[1] >= 'A' && w[1] <= 'Z'));
}

static struct mo_megatron_arg *mo_megatron_new_arg(struct mo_megatron_import *g,
						   size_t *cap,
						   const char *flag, int line,
						   int column)
{
	if (g->n_args == *cap) {
		size_t n = *cap ? *cap * 2 : 128;
		struct mo_megatron_arg *args =
		    mo_arena_alloc(g->arena, n * sizeof(*args));
		if (!args) {
			mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
					 "out of memory");
			return NULL;
		}
		if (g->n_args)
			memcpy(args, g->args, g->n_args * sizeof(*args));
		g->args = args;
		*cap = n;
	}
	struct mo_megatron_arg *a = &g->args[g->n_args++];
	*a = (struct mo_megatron_arg){.flag = flag,
				      .line = line,
				      .column = column,
				      .vline = line,
				      .vcolumn = column};
	return a;
}

static void mo_megatron_add_value(struct mo_megatron_arg *a, const char *value,
				  int line, int column)
{
	if (a->n_values == 0) {
		a->value = value;
		a->vline = line;
		a->vcolumn = column;
	} else if (a->n_values == 1) {
		a->xline = line;
		a->xcolumn = column;
	}
	a->n_values++;
}

/* `--flag value...` and `--flag=value` from words[from..]. A word before
 * any flag is a stray value (unread-key). */
static bool mo_megatron_words_to_args(struct mo_megatron_import *g, size_t from)
{
	size_t cap = 0;
	struct mo_megatron_arg *cur = NULL;
	for (size_t i = from; i < g->n_words; i++) {
		const struct mo_megatron_word *w = &g->words[i];
		if (!mo_megatron_is_flag(w->text)) {
			if (cur)
				mo_megatron_add_value(cur, w->text, w->line,
						      w->column);
			else
				mo_megatron_diag(
				    g, MO_SEV_WARNING, "unread-key", w->line,
				    w->column, NULL,
				    "'%.80s' is not a flag's value: not read",
				    w->text);
			continue;
		}
		const char *eq = strchr(w->text, '=');
		const char *flag = eq ? mo_arena_strndup(g->arena, w->text,
							 (size_t)(eq - w->text))
				      : w->text;
		if (!flag || !(cur = mo_megatron_new_arg(g, &cap, flag, w->line,
							 w->column))) {
			mo_megatron_fail(g, MO_ERR_NOMEM, w->line, w->column,
					 "out of memory");
			return false;
		}
		if (eq)
			mo_megatron_add_value(cur, eq + 1, w->line,
					      w->column +
						  (int)(eq + 1 - w->text));
	}
	return true;
}

static bool mo_megatron_ends_with_n(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	return n >= t && memcmp(s + n - t, tail, t) == 0;
}

static bool mo_megatron_ends_with(const char *s, const char *tail)
{
	return mo_megatron_ends_with_n(s, strlen(s), tail);
}

/* A launcher count: a positive integer, or a shell variable (unknown). */
static int64_t mo_megatron_launcher_count(struct mo_megatron_import *g,
					  const struct mo_megatron_word *w,
					  const char *value)
{
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (strchr(value, '$') || !strcmp(value, "auto") ||
	    !strcmp(value, "gpu") || !strcmp(value, "cpu") ||
	    !strcmp(value, "xpu")) {
		g->launcher_unknown =
		    true; /* a shell variable, or torchrun's own count */
		return 0;
	}
	if (errno || end == value || (*end && *end != ':') || v < 1 ||
	    v > MO_MODEL_MAX_DEGREE) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", w->line, w->column, w->text,
		    "%s: '%.40s' is not a process or node count in [1, %d]",
		    w->text, value, MO_MODEL_MAX_DEGREE);
		return 0;
	}
	return v;
}

/* torchrun's (python -m torch.distributed.run's) --nproc-per-node and
 * --nnodes, before the script. */
static void mo_megatron_read_launcher(struct mo_megatron_import *g,
				      size_t script)
{
	for (size_t i = 0; i < script; i++) {
		const struct mo_megatron_word *w = &g->words[i];
		const char *eq = strchr(w->text, '=');
		size_t n = eq ? (size_t)(eq - w->text) : strlen(w->text);
		const char *value =
		    eq ? eq + 1 : (i + 1 < script ? g->words[i + 1].text : "");
		bool procs =
		    (n == 16 && (strncmp(w->text, "--nproc_per_node", n) == 0 ||
				 strncmp(w->text, "--nproc-per-node", n) == 0));
		bool nodes = n == 8 && strncmp(w->text, "--nnodes", n) == 0;
		if (procs) {
			g->launcher_procs =
			    mo_megatron_launcher_count(g, w, value);
			g->procs_line = w->line;
			g->procs_column = w->column;
		} else if (nodes) {
			g->launcher_nodes =
			    mo_megatron_launcher_count(g, w, value);
		}
	}
}

/* A launch line: the words after the first `*.py` are Megatron's; an
 * arguments file (its first word a flag): every word is, a `*.py` value
 * included. */
static bool mo_megatron_classify_words(struct mo_megatron_import *g)
{
	size_t script = g->n_words;
	bool arguments_file =
	    g->n_words > 0 && mo_megatron_is_flag(g->words[0].text);
	for (size_t i = 0; i < g->n_words && !arguments_file; i++)
		if (mo_megatron_ends_with(g->words[i].text, ".py")) {
			script = i;
			break;
		}
	if (script == g->n_words)
		return mo_megatron_words_to_args(g, 0);
	mo_megatron_read_launcher(g, script);
	return mo_megatron_words_to_args(g, script + 1);
}

static bool mo_megatron_read_words(struct mo_megatron_import *g,
				   const char *text, size_t len)
{
	return mo_megatron_split_words(g, text, len) &&
	       mo_megatron_classify_words(g);
}

/* ---- training scripts ------------------------------------------------------
 * Megatron-LM's example scripts (examples/gpt3/train_gpt3_175b_distributed.sh)
 * put the flags in bash arrays and launch `torchrun ${ARGS[@]} pretrain_gpt.py
 * ${MODEL_ARGS[@]} ...`. This is not a shell: it expands the little those
 * scripts use, once, in order, and refuses the rest at its line and column.
 * Statements: `NAME=value`, `export NAME=value`, `NAME=( words )` and
 * `NAME+=( words )` (over lines), `if ... fi` (skipped, with a warning), and
 * one launch command. Expansions: `$NAME`, `${NAME}`, `${NAME:-default}`,
 * `${NAME[@]}` and `"${NAME[@]}"` as whole words; `$1`, `$(...)`,
 * `$((...))` and variables the script does not assign stay as written (an
 * opaque value: a path is fine, a number memopt needs is an error where it
 * is read). Everything an expansion adds counts against one budget, so a
 * self-referencing or doubling array is refused, not followed. */

#define MO_MG_MAX_VARS 128	      /* variables in one script */
#define MO_MG_MAX_EXPANDED (1u << 20) /* bytes expansions add, all told */
#define MO_MG_MAX_DEPTH 8	      /* nested ${NAME:-default} */

static bool mo_megatron_name_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static size_t mo_megatron_name_len(const char *p, const char *end)
{
	size_t n = 0;
	if (p >= end || !mo_megatron_name_start(*p))
		return 0;
	while (p + n < end &&
	       (mo_megatron_name_start(p[n]) || (p[n] >= '0' && p[n] <= '9')))
		n++;
	return n;
}

static struct mo_megatron_var *
mo_megatron_var_find(struct mo_megatron_import *g, const char *name, size_t n)
{
	for (size_t i = 0; i < g->n_vars; i++)
		if (strlen(g->vars[i].name) == n &&
		    memcmp(g->vars[i].name, name, n) == 0)
			return &g->vars[i];
	return NULL;
}

/* n more bytes (or words) from an expansion: false past the budget. */
static bool mo_megatron_budget(struct mo_megatron_import *g, size_t n, int line,
			       int column)
{
	g->expanded += n + 1;
	if (g->expanded <= MO_MG_MAX_EXPANDED)
		return true;
	mo_megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
			 "the script's expansions add more than %u bytes: "
			 "refused (a self-referencing or doubling variable?)",
			 MO_MG_MAX_EXPANDED);
	return false;
}

static bool mo_megatron_append(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x, const char *s,
			       size_t n, int line, int column)
{
	if (!mo_megatron_budget(g, n, line, column))
		return false;
	mo_buf_append(&x->word, s, n);
	return true;
}

/* The n bytes at x->p as written (an opaque value), the lexer past them. */
static bool mo_megatron_copy(struct mo_megatron_import *g,
			     struct mo_megatron_lexer *x, size_t n, int line,
			     int column)
{
	if (!mo_megatron_append(g, x, x->p, n, line, column))
		return false;
	for (size_t i = 0; i < n; i++)
		mo_megatron_advance(x);
	return true;
}

/* `$(command)` or `$((arithmetic))`: kept as written. */
static bool mo_megatron_substitution(struct mo_megatron_import *g,
				     struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column, depth = 0;
	size_t n = 1;
	for (; x->p + n < x->end; n++) {
		char c = x->p[n];
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			break;
		if (n > MO_MG_MAX_TOKEN)
			break;
	}
	if (x->p + n >= x->end || n > MO_MG_MAX_TOKEN) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL,
				 "a '$(' without its ')' (within %d bytes)",
				 MO_MG_MAX_TOKEN);
		return false;
	}
	return mo_megatron_copy(g, x, n + 1, line, column);
}

/* The default of `${NAME:-default}`, the lexer after `:-`. */
static bool mo_megatron_default(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x, int line,
				int column)
{
	if (++x->depth > MO_MG_MAX_DEPTH) {
		mo_megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "defaults nested more than %d deep",
				 MO_MG_MAX_DEPTH);
		return false;
	}
	bool ok = true;
	while (ok && x->p < x->end && *x->p != '}') {
		char c = *x->p;
		if (c == '"' || c == '\'')
			ok = mo_megatron_quoted(g, x);
		else if (c == '$')
			ok = mo_megatron_dollar(g, x);
		else {
			if (c == '\\' && x->p + 1 < x->end)
				mo_megatron_advance(x);
			ok = mo_megatron_copy(g, x, 1, line, column);
		}
	}
	x->depth--;
	if (ok && x->p >= x->end) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL, "a '${' without its '}'");
		return false;
	}
	if (ok)
		mo_megatron_advance(x);
	return ok;
}

static bool mo_megatron_unsupported(struct mo_megatron_import *g, int line,
				    int column)
{
	mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			 "an expansion this reader does not model: it reads "
			 "$NAME, ${NAME}, ${NAME:-default} and ${NAME[@]} as "
			 "a whole word (it is not a shell)");
	return false;
}

/* `${...}`, the lexer on the `$`. */
static bool mo_megatron_braced(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column;
	const char *name = x->p + 2;
	size_t n = mo_megatron_name_len(name, x->end);
	if (n == 0)
		while (name + n < x->end && name[n] >= '0' && name[n] <= '9')
			n++; /* a positional parameter */
	const char *q = name + n;
	if (n == 0 || q >= x->end)
		return mo_megatron_unsupported(g, line, column);
	const struct mo_megatron_var *v = mo_megatron_var_find(g, name, n);
	if (v && v->array && *q != '[')
		goto array;
	if (*q == '}') {
		if (!v) /* not assigned here: as written */
			return mo_megatron_copy(g, x, n + 3, line, column);
		for (size_t i = 0; i < n + 3; i++)
			mo_megatron_advance(x);
		return mo_megatron_append(g, x, v->value, strlen(v->value),
					  line, column);
	}
	if (*q == '[')
		goto array;
	if (*q != ':' || q + 1 >= x->end || q[1] != '-')
		return mo_megatron_unsupported(g, line, column);
	for (size_t i = 0; i < n + 4; i++)
		mo_megatron_advance(x);
	size_t mark = x->word.len;
	if (!mo_megatron_default(g, x, line, column))
		return false;
	if (v && v->value[0]) { /* set, not empty: its value */
		x->word.len = mark;
		return mo_megatron_append(g, x, v->value, strlen(v->value),
					  line, column);
	}
	return true;
array:
	mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			 "an array here: this reader expands ${NAME[@]} as a "
			 "whole word only (it is not a shell)");
	return false;
}

/* One expansion, the lexer on its `$`. */
static bool mo_megatron_dollar(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column;
	const char *p = x->p + 1;
	if (p >= x->end)
		return mo_megatron_copy(g, x, 1, line, column);
	if (*p == '(')
		return mo_megatron_substitution(g, x);
	if (*p == '{')
		return mo_megatron_braced(g, x);
	size_t n = mo_megatron_name_len(p, x->end);
	if (n == 0) /* $1, $@, $$: kept as written; a lone `$` is itself */
		return mo_megatron_copy(g, x,
					strchr("0123456789@*#?!$-", *p) ? 2 : 1,
					line, column);
	const struct mo_megatron_var *v = mo_megatron_var_find(g, p, n);
	if (!v) /* not assigned here (the environment): as written */
		return mo_megatron_copy(g, x, n + 1, line, column);
	if (v->array)
		return mo_megatron_unsupported(g, line, column);
	for (size_t i = 0; i < n + 1; i++)
		mo_megatron_advance(x);
	return mo_megatron_append(g, x, v->value, strlen(v->value), line,
				  column);
}

/* Is the text at x->p a whole word `${NAME[@]}` or `"${NAME[@]}"`? Then
 * x->splice is the array (NULL: not one the script assigns, a warning),
 * the lexer past it, and 2. 0: not such a word; -1: an error. */
static int mo_megatron_splice(struct mo_megatron_import *g,
			      struct mo_megatron_lexer *x)
{
	const char *p = x->p;
	bool quoted = p < x->end && *p == '"';
	p += quoted;
	if (x->end - p < 2 || p[0] != '$' || p[1] != '{')
		return 0;
	size_t n = mo_megatron_name_len(p + 2, x->end);
	const char *q = p + 2 + n;
	if (n == 0 || x->end - q < 4 || memcmp(q, "[@]}", 4) != 0)
		return 0;
	q += 4;
	if (quoted && (q >= x->end || *q++ != '"'))
		return 0;
	if (q < x->end && !strchr(" \t\r\n)|;&<>", *q))
		return 0;
	x->splice = mo_megatron_var_find(g, p + 2, n);
	if (x->splice && !x->splice->array) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", x->line,
				 x->column, NULL,
				 "%.*s is a text, not an array", (int)n, p + 2);
		return -1;
	}
	if (!x->splice)
		mo_megatron_diag(
		    g, MO_SEV_WARNING, "megatron-script", x->line, x->column,
		    NULL,
		    "%.*s is not an array this script assigns (outside "
		    "an if): it expands to nothing",
		    (int)n, p + 2);
	size_t len = (size_t)(q - x->p);
	for (size_t i = 0; i < len; i++)
		mo_megatron_advance(x);
	x->splice_quoted = quoted;
	return 2;
}

static bool mo_megatron_words_push(struct mo_megatron_import *g,
				   struct mo_megatron_words *w,
				   const char *text, size_t len, int line,
				   int column)
{
	if (w->n == MO_MG_MAX_ARGS) {
		mo_megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "more than %d words in one array or command",
				 MO_MG_MAX_ARGS);
		return false;
	}
	if (w->n == w->cap) {
		size_t n = w->cap ? w->cap * 2 : 64;
		struct mo_megatron_word *v =
		    mo_arena_alloc(g->arena, n * sizeof(*v));
		if (!v) {
			mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
					 "out of memory");
			return false;
		}
		if (w->n)
			memcpy(v, w->v, w->n * sizeof(*v));
		w->v = v;
		w->cap = n;
	}
	char *copy = mo_arena_strndup(g->arena, text, len);
	if (!copy) {
		mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return false;
	}
	w->v[w->n++] = (struct mo_megatron_word){copy, line, column};
	return true;
}

/* An array's words where a ${NAME[@]} stands: each as written; unquoted,
 * each split at blanks as the shell does ("--fp8-format hybrid" is two). */
static bool mo_megatron_push_splice(struct mo_megatron_import *g,
				    struct mo_megatron_words *w,
				    const struct mo_megatron_lexer *x, int line,
				    int column)
{
	if (!x->splice)
		return true;
	const struct mo_megatron_words *items = &x->splice->items;
	size_t n = items->n; /* `A+=( ${A[@]} )` reads the old words */
	size_t bytes = 0;
	for (size_t i = 0; i < n; i++)
		bytes += strlen(items->v[i].text) + 1;
	if (w->n + n > MO_MG_MAX_ARGS) {
		mo_megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "more than %d words in one array or command",
				 MO_MG_MAX_ARGS);
		return false;
	}
	if (!mo_megatron_budget(g, bytes, line, column))
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct mo_megatron_word *it = &items->v[i];
		const char *t = it->text;
		if (x->splice_quoted) {
			if (!mo_megatron_words_push(g, w, t, strlen(t),
						    it->line, it->column))
				return false;
			continue;
		}
		for (size_t k = 0; t[k];) {
			size_t blank = strspn(t + k, " \t\n");
			k += blank;
			size_t len = strcspn(t + k, " \t\n");
			if (len &&
			    !mo_megatron_words_push(g, w, t + k, len, it->line,
						    it->column + (int)k))
				return false;
			k += len;
		}
	}
	return true;
}

/* Words up to the end of the statement (or an array's `)`) into w. */
static int mo_megatron_script_words(struct mo_megatron_import *g,
				    struct mo_megatron_lexer *x,
				    struct mo_megatron_words *w)
{
	int line = 0, column = 0, rc;
	while ((rc = mo_megatron_word(g, x, &line, &column)) > 0) {
		bool ok = rc == 2
			      ? mo_megatron_push_splice(g, w, x, line, column)
			      : mo_megatron_words_push(
				    g, w, x->word.data ? x->word.data : "",
				    x->word.len, line, column);
		if (!ok)
			return -1;
	}
	return rc;
}

static bool mo_megatron_script_error(struct mo_megatron_import *g,
				     const struct mo_megatron_lexer *x,
				     const char *what)
{
	mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", x->line, x->column,
			 NULL, "%s (this reader is not a shell)", what);
	return false;
}

static bool mo_megatron_at_keyword(const struct mo_megatron_lexer *x,
				   const char *keyword)
{
	size_t n = strlen(keyword);
	return (size_t)(x->end - x->p) >= n && memcmp(x->p, keyword, n) == 0 &&
	       (x->p + n == x->end || strchr(" \t\r\n;", x->p[n]));
}

/* After a statement: blanks, a comment, then the line's end or a `;`. */
static bool mo_megatron_statement_end(struct mo_megatron_import *g,
				      struct mo_megatron_lexer *x)
{
	mo_megatron_skip_blanks(x);
	if (x->p >= x->end || *x->p == '\n' || *x->p == ';')
		return true;
	return mo_megatron_script_error(g, x, "more text after an array");
}

static struct mo_megatron_var *mo_megatron_var_add(struct mo_megatron_import *g,
						   const char *name, size_t n,
						   int line, int column)
{
	struct mo_megatron_var *v = mo_megatron_var_find(g, name, n);
	if (v)
		return v;
	if (g->n_vars == MO_MG_MAX_VARS) {
		mo_megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "more than %d variables", MO_MG_MAX_VARS);
		return NULL;
	}
	v = &g->vars[g->n_vars];
	*v = (struct mo_megatron_var){
	    .name = mo_arena_strndup(g->arena, name, n), .value = ""};
	if (!v->name) {
		mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return NULL;
	}
	g->n_vars++;
	return v;
}

/* `NAME=( words )` or `NAME+=( words )`, the lexer on the `(`. */
static bool mo_megatron_array(struct mo_megatron_import *g,
			      struct mo_megatron_lexer *x, const char *name,
			      size_t n, bool append)
{
	int line = x->line, column = x->column;
	struct mo_megatron_words items = {0};
	if (append)
		items = mo_megatron_var_find(g, name, n)->items;
	mo_megatron_advance(x);
	x->in_array = true;
	int rc = mo_megatron_script_words(g, x, &items);
	x->in_array = false;
	if (rc < 0)
		return false;
	if (x->p >= x->end || *x->p != ')') {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL, "an array without its ')'");
		return false;
	}
	mo_megatron_advance(x);
	struct mo_megatron_var *v =
	    mo_megatron_var_add(g, name, n, line, column);
	if (!v)
		return false;
	v->array = true;
	v->items = items;
	return mo_megatron_statement_end(g, x);
}

/* `NAME=value`, `NAME+=value`, `NAME=( ... )`, `NAME+=( ... )`; the lexer on
 * NAME, n its length. */
static bool mo_megatron_assignment(struct mo_megatron_import *g,
				   struct mo_megatron_lexer *x, size_t n)
{
	int line = x->line, column = x->column;
	const char *name = x->p;
	bool append = x->p[n] == '+';
	const struct mo_megatron_var *old = mo_megatron_var_find(g, name, n);
	for (size_t i = 0; i < n + 1 + append; i++)
		mo_megatron_advance(x);
	if (x->p < x->end && *x->p == '(')
		return mo_megatron_array(g, x, name, n,
					 append && old && old->array);
	if (old && old->array)
		return mo_megatron_script_error(g, x,
						"a text assigned to an array");
	int wl = 0, wc = 0, rc = 0;
	x->word.len = 0;
	if (x->p < x->end && !strchr(" \t\r\n;", *x->p))
		rc = mo_megatron_word(g, x, &wl, &wc);
	if (rc < 0)
		return false;
	if (rc == 2) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", wl, wc,
				 NULL,
				 "an array assigned to a text (this reader is "
				 "not a shell)");
		return false;
	}
	size_t keep = append && old ? strlen(old->value) : 0;
	size_t add = rc == 1 ? x->word.len : 0;
	if (!mo_megatron_budget(g, keep + add, line, column))
		return false;
	char *value = mo_arena_alloc(g->arena, keep + add + 1);
	if (!value) {
		mo_megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return false;
	}
	if (keep)
		memcpy(value, old->value, keep);
	if (add)
		memcpy(value + keep, x->word.data, add);
	value[keep + add] = '\0';
	struct mo_megatron_var *v =
	    mo_megatron_var_add(g, name, n, line, column);
	if (!v)
		return false;
	v->value = value;
	return true; /* what follows on the line is the next statement */
}

/* `if ... fi`: not evaluated; skipped whole, with a warning. */
static bool mo_megatron_skip_conditional(struct mo_megatron_import *g,
					 struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column, depth = 0;
	mo_megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column,
			 NULL,
			 "a conditional (if ... fi) is not evaluated: its "
			 "assignments and commands are left out");
	while (x->p < x->end) {
		while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
			mo_megatron_advance(x);
		if (mo_megatron_at_keyword(x, "if"))
			depth++;
		else if (mo_megatron_at_keyword(x, "fi") && --depth == 0) {
			while (x->p < x->end && *x->p != '\n')
				mo_megatron_advance(x);
			return true;
		}
		while (x->p < x->end && *x->p != '\n')
			mo_megatron_advance(x);
		if (x->p < x->end)
			mo_megatron_advance(x);
	}
	mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			 "an 'if' without its 'fi' at its own line's start");
	return false;
}

static bool mo_megatron_is_launcher(const struct mo_megatron_words *w)
{
	static const char *const launchers[] = {"torchrun", "python", "python3",
						"deepspeed"};
	for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
		if (w->n && !strcmp(w->v[0].text, launchers[i]))
			return true;
	for (size_t i = 0; i < w->n; i++)
		if (mo_megatron_ends_with(w->v[i].text, ".py"))
			return true;
	return false;
}

/* A command: the launch (torchrun ... *.py ...), once; any other is an
 * error. What follows an operator (`| tee log`, `2>&1`) is skipped. */
static bool mo_megatron_command(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x,
				struct mo_megatron_words *launch)
{
	int line = x->line, column = x->column;
	struct mo_megatron_words w = {0};
	int rc = mo_megatron_script_words(g, x, &w);
	if (rc < 0)
		return false;
	if (x->p < x->end && *x->p == ')')
		return mo_megatron_script_error(g, x, "a ')' out of place");
	while (x->p < x->end && *x->p != '\n')
		if (!(*x->p == '\\' && mo_megatron_continuation(x)))
			mo_megatron_advance(x);
	if (w.n == 0)
		return true;
	if (!strcmp(w.v[0].text, "mkdir") || !strcmp(w.v[0].text, "echo") ||
	    !strcmp(w.v[0].text, "set")) {
		mo_megatron_diag(g, MO_SEV_WARNING, "megatron-script", line,
				 column, NULL,
				 "'%s' is not run (this reader runs no "
				 "command; it does not change the arguments)",
				 w.v[0].text);
		return true;
	}
	if (!mo_megatron_is_launcher(&w)) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
		    "'%.40s' is a command this reader does not run: it reads "
		    "assignments and one launch command (torchrun ... "
		    "pretrain_gpt.py ...); it is not a shell",
		    w.v[0].text);
		return false;
	}
	if (launch->v) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL,
				 "a second launch command (the first is at "
				 "%d:%d)",
				 launch->v[0].line, launch->v[0].column);
		return false;
	}
	*launch = w;
	return true;
}

static bool mo_megatron_statement(struct mo_megatron_import *g,
				  struct mo_megatron_lexer *x,
				  struct mo_megatron_words *launch)
{
	if (mo_megatron_at_keyword(x, "export")) {
		for (int i = 0; i < 6; i++)
			mo_megatron_advance(x);
		mo_megatron_skip_blanks(x);
	}
	if (mo_megatron_at_keyword(x, "if"))
		return mo_megatron_skip_conditional(g, x);
	size_t n = mo_megatron_name_len(x->p, x->end);
	if (n && x->p + n < x->end &&
	    (x->p[n] == '=' ||
	     (x->p[n] == '+' && x->p + n + 1 < x->end && x->p[n + 1] == '=')))
		return mo_megatron_assignment(g, x, n);
	return mo_megatron_command(g, x, launch);
}

/* A training script: its launch command's words into g->words. */
static bool mo_megatron_read_script(struct mo_megatron_import *g,
				    const char *text, size_t len)
{
	struct mo_megatron_lexer x = {.p = text,
				      .end = text + len,
				      .line = 1,
				      .column = 1,
				      .script = true};
	struct mo_megatron_words launch = {0};
	bool ok = true;
	g->vars = mo_arena_alloc(g->arena, MO_MG_MAX_VARS * sizeof(*g->vars));
	if (!g->vars) {
		mo_megatron_fail(g, MO_ERR_NOMEM, 1, 1, "out of memory");
		return false;
	}
	mo_buf_init(&x.word, MO_MG_MAX_TOKEN + 8);
	while (ok) {
		mo_megatron_skip_blanks(&x);
		if (x.p >= x.end)
			break;
		if (*x.p == '\n' || *x.p == ';')
			mo_megatron_advance(&x);
		else
			ok = mo_megatron_statement(g, &x, &launch);
	}
	mo_buf_free(&x.word);
	if (!ok || g->failed)
		return false;
	if (!launch.v) {
		mo_megatron_diag(g, MO_SEV_ERROR, "megatron-script", 1, 1, NULL,
				 "no launch command (torchrun ... "
				 "pretrain_gpt.py ...) in the script");
		return false;
	}
	g->words = launch.v;
	g->n_words = launch.n;
	return mo_megatron_classify_words(g);
}

/* A script: it has a `${NAME[@]}`. */
static bool mo_megatron_is_script(const char *text, size_t len)
{
	return memmem(text, len, "[@]}", 4) != NULL;
}

/* A MODEL_ARGS value as the functional-test runner passes it: true is the
 * flag alone, false leaves the flag out, a list is its items, anything
 * else is its text. */
static bool mo_megatron_yaml_arg(struct mo_megatron_import *g,
				 const mo_node *key, const mo_node *v,
				 size_t *cap)
{
	bool b;
	if (v->kind == MO_NODE_SCALAR && mo_scalar_bool(v, &b) && !b)
		return true;
	/* the document goes when MODEL_ARGS is read: the texts are copied */
	const char *flag = mo_arena_strdup(g->arena, key->value);
	struct mo_megatron_arg *a =
	    flag ? mo_megatron_new_arg(g, cap, flag, key->line, key->column)
		 : NULL;
	if (!a) {
		mo_megatron_fail(g, MO_ERR_NOMEM, key->line, key->column,
				 "out of memory");
		return false;
	}
	size_t n = v->kind == MO_NODE_SEQ ? v->n : 1;
	for (size_t i = 0; i < n; i++) {
		const mo_node *x = v->kind == MO_NODE_SEQ ? v->items[i] : v;
		if (x->kind != MO_NODE_SCALAR || x->len == 0 ||
		    mo_scalar_resolve(x) == MO_SCALAR_NULL ||
		    (x == v && mo_scalar_bool(x, &b) && b))
			continue;
		const char *value = mo_arena_strdup(g->arena, x->value);
		if (!value) {
			mo_megatron_fail(g, MO_ERR_NOMEM, x->line, x->column,
					 "out of memory");
			return false;
		}
		mo_megatron_add_value(a, value, x->line, x->column);
	}
	if (v->kind == MO_NODE_MAP)
		mo_megatron_diag(g, MO_SEV_ERROR, "type", v->line, v->column,
				 flag, "%s: a mapping is not a flag's value",
				 flag);
	return true;
}

/* Megatron-LM's functional-test model_config.yaml: MODEL_ARGS. */
static bool mo_megatron_read_model_config(struct mo_megatron_import *g,
					  const mo_doc *doc)
{
	const mo_node *key = NULL;
	const mo_node *ma = mo_map_get_kv(doc->root, "MODEL_ARGS", &key);
	size_t cap = 0;
	if (!ma || ma->kind != MO_NODE_MAP) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", key ? key->line : 1,
		    key ? key->column : 1, "MODEL_ARGS",
		    "MODEL_ARGS must be a mapping of --flag: value");
		return true;
	}
	for (size_t i = 0; i + 1 < ma->n && !g->failed; i += 2) {
		const mo_node *k = ma->items[i], *v = ma->items[i + 1];
		if (k->kind != MO_NODE_SCALAR || strlen(k->value) != k->len)
			continue;
		if (!mo_megatron_is_flag(k->value)) {
			mo_megatron_diag(
			    g, MO_SEV_WARNING, "unread-key", k->line, k->column,
			    k->value,
			    "MODEL_ARGS.%.80s is not a Megatron flag: not read",
			    k->value);
			continue;
		}
		if (g->n_args >= MO_MG_MAX_ARGS) {
			mo_megatron_diag(g, MO_SEV_ERROR, "megatron-syntax",
					 k->line, k->column, NULL,
					 "more than %d arguments",
					 MO_MG_MAX_ARGS);
			return false;
		}
		if (!mo_megatron_yaml_arg(g, k, v, &cap))
			return false;
	}
	return !g->failed;
}

/* ---- reading one flag
 * ----------------------------------------------------------- */

/* The last occurrence of a flag (argparse: the last one wins); every
 * occurrence is marked read. */
static struct mo_megatron_arg *mo_megatron_find(struct mo_megatron_import *g,
						const char *flag)
{
	struct mo_megatron_arg *last = NULL;
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, flag) == 0) {
			g->args[i].used = true;
			last = &g->args[i];
		}
	return last;
}

static bool mo_megatron_flag(struct mo_megatron_import *g, const char *flag)
{
	struct mo_megatron_arg *a = mo_megatron_find(g, flag);
	if (a && a->n_values > 0)
		mo_megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn,
				 flag, "%s takes no value, got '%.40s'", flag,
				 a->value);
	return a != NULL;
}

/* The flag's one value, or NULL (absent, or an error reported). */
static const char *mo_megatron_value(struct mo_megatron_import *g,
				     struct mo_megatron_arg *a)
{
	if (!a)
		return NULL;
	if (a->n_values == 0) {
		mo_megatron_diag(g, MO_SEV_ERROR, "type", a->line, a->column,
				 a->flag, "%s needs a value", a->flag);
		return NULL;
	}
	if (a->n_values > 1) {
		mo_megatron_diag(g, MO_SEV_ERROR, "type", a->xline, a->xcolumn,
				 a->flag, "%s takes one value, got %zu",
				 a->flag, a->n_values);
		return NULL;
	}
	if (strchr(a->value, '$')) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, a->flag,
		    "%s: '%.80s' is a shell variable; memopt needs its value",
		    a->flag, a->value);
		return NULL;
	}
	return a->value;
}

/* An integer flag in [lo, hi]; *src is the argument when it was read. */
static bool mo_megatron_int(struct mo_megatron_import *g, const char *flag,
			    int64_t lo, int64_t hi, int64_t *out,
			    const struct mo_megatron_arg **src)
{
	struct mo_megatron_arg *a = mo_megatron_find(g, flag);
	const char *s = mo_megatron_value(g, a);
	char *end;
	if (!s)
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end) {
		mo_megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn,
				 flag, "%s must be an integer, got '%.40s'",
				 flag, s);
		return false;
	}
	if (errno == ERANGE || v < lo || v > hi) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, flag,
		    "%s must be an integer in [%lld, %lld], got %.40s", flag,
		    (long long)lo, (long long)hi, s);
		return false;
	}
	*out = v;
	if (src)
		*src = a;
	return true;
}

static bool mo_megatron_double(struct mo_megatron_import *g, const char *flag,
			       double *out, const struct mo_megatron_arg **src)
{
	struct mo_megatron_arg *a = mo_megatron_find(g, flag);
	const char *s = mo_megatron_value(g, a);
	char *end;
	if (!s)
		return false;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= 0.0 && v <= 1.0)) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, flag,
		    "%s must be a number in [0, 1], got '%.40s'", flag, s);
		return false;
	}
	*out = v;
	*src = a;
	return true;
}

/* A string flag whose value is one of `choices` (NULL-terminated). */
static const char *mo_megatron_choice(struct mo_megatron_import *g,
				      const char *flag,
				      const char *const *choices,
				      const struct mo_megatron_arg **src)
{
	struct mo_megatron_arg *a = mo_megatron_find(g, flag);
	const char *s = mo_megatron_value(g, a);
	if (!s)
		return NULL;
	for (size_t i = 0; choices[i]; i++)
		if (strcmp(s, choices[i]) == 0) {
			*src = a;
			return choices[i];
		}
	mo_diag *d = mo_megatron_diag(
	    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, flag,
	    "%s: '%.40s' is not one of Megatron's choices", flag, s);
	size_t n = 0;
	while (choices[n])
		n++;
	const char *best = mo_did_you_mean(s, choices, n);
	if (d && best)
		mo_diag_set_hint(g->diags, d, "did you mean '%s'?", best);
	return NULL;
}

static void mo_megatron_unmodelled(struct mo_megatron_import *g,
				   const struct mo_megatron_arg *a,
				   const char *what)
{
	mo_megatron_diag(g, MO_SEV_WARNING, "unmodelled", a->line, a->column,
			 a->flag, "%s: not in the estimate: %s", a->flag, what);
}

/* ---- what the import writes
 * ---------------------------------------------------- */

static struct mo_megatron_item *
mo_megatron_put(struct mo_megatron_out *o, int section, const char *key,
		int type, int field, const struct mo_megatron_arg *src,
		const char *why)
{
	if (o->n >= sizeof o->v / sizeof *o->v)
		return NULL;
	struct mo_megatron_item *it = &o->v[o->n++];
	*it = (struct mo_megatron_item){.item = {.sect = section, .type = type, .key = key},
					.field = field,
					.src = src,
					.why = why};
	return it;
}

static void mo_megatron_put_int(struct mo_megatron_out *o, int section,
				const char *key, int64_t v, int field,
				const struct mo_megatron_arg *src,
				const char *why)
{
	struct mo_megatron_item *it =
	    mo_megatron_put(o, section, key, MO_IT_INT, field, src, why);
	if (it)
		it->item.i = v;
}

static void mo_megatron_put_bool(struct mo_megatron_out *o, int section,
				 const char *key, bool v, int field,
				 const struct mo_megatron_arg *src,
				 const char *why)
{
	struct mo_megatron_item *it =
	    mo_megatron_put(o, section, key, MO_IT_BOOL, field, src, why);
	if (it)
		it->item.i = v;
}

static void mo_megatron_put_double(struct mo_megatron_out *o, int section,
				   const char *key, double v, int field,
				   const struct mo_megatron_arg *src,
				   const char *why)
{
	struct mo_megatron_item *it =
	    mo_megatron_put(o, section, key, MO_IT_DBL, field, src, why);
	if (it)
		it->item.d = v;
}

static void mo_megatron_put_str(struct mo_megatron_out *o, int section,
				const char *key, const char *v, int field,
				const struct mo_megatron_arg *src,
				const char *why)
{
	struct mo_megatron_item *it =
	    mo_megatron_put(o, section, key, MO_IT_STR, field, src, why);
	if (it)
		it->item.s = v;
}

/* ---- the model (arguments.py's defaults and derived values)
 * -------------------- */

/* What later parts need from earlier ones. */
struct mo_megatron_shape {
	int64_t layers, hidden, heads, ffn, tp, pp, vpp;
	bool swiglu;
};

static int64_t mo_megatron_required(struct mo_megatron_import *g,
				    const char *flag, int64_t lo, int64_t hi,
				    int64_t fallback,
				    const struct mo_megatron_arg **src)
{
	int64_t v;
	*src = NULL;
	if (mo_megatron_int(g, flag, lo, hi, &v, src))
		return v;
	if (!mo_megatron_find(g, flag))
		mo_megatron_diag(g, MO_SEV_ERROR, "missing-key", 0, 0, flag,
				 "%s is missing: Megatron requires it", flag);
	return fallback;
}

static void mo_megatron_read_shape(struct mo_megatron_import *g,
				   struct mo_megatron_out *o,
				   struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t v;
	s->layers = mo_megatron_required(g, "--num-layers", 1,
					 MO_MODEL_MAX_LAYERS, 1, &a);
	mo_megatron_put_int(o, MO_SEC_MODEL, "num_layers", s->layers,
			    MF_NUM_LAYERS, a, NULL);
	if (mo_megatron_int(g, "--mtp-num-layers", 0, MO_MODEL_MAX_MTP, &v,
			    &a) &&
	    v > 0)
		mo_megatron_put_int(o, MO_SEC_MODEL, "mtp_num_layers", v,
				    MF_MTP, a, NULL);
	s->hidden =
	    mo_megatron_required(g, "--hidden-size", 1, 1 << 24, 4096, &a);
	mo_megatron_put_int(o, MO_SEC_MODEL, "hidden_size", s->hidden,
			    MF_HIDDEN, a, NULL);
	s->swiglu = mo_megatron_flag(g, "--swiglu");
	a = NULL;
	if (mo_megatron_int(g, "--ffn-hidden-size", 1, 1 << 26, &v, &a))
		s->ffn = v;
	else
		s->ffn = s->swiglu ? (4 * s->hidden * 2 / 3) / 64 * 64
				   : 4 * s->hidden;
	mo_megatron_put_int(
	    o, MO_SEC_MODEL, "ffn_hidden_size", s->ffn, MF_FFN, a,
	    s->swiglu ? "default int(4 x hidden x 2/3 / 64) x 64 (--swiglu)"
		      : "default 4 x hidden");
	s->heads = mo_megatron_required(g, "--num-attention-heads", 1, 1 << 20,
					32, &a);
	mo_megatron_put_int(o, MO_SEC_MODEL, "num_attention_heads", s->heads,
			    MF_HEADS, a, NULL);
	bool gqa = mo_megatron_flag(g, "--group-query-attention");
	int64_t groups = 1;
	a = NULL;
	if (mo_megatron_int(g, "--num-query-groups", 1, 1 << 20, &v, &a))
		groups = v;
	if (gqa)
		mo_megatron_put_int(
		    o, MO_SEC_MODEL, "num_query_groups", groups, MF_GROUPS, a,
		    a ? NULL : "--group-query-attention, default 1 group");
	else
		mo_megatron_put_int(
		    o, MO_SEC_MODEL, "num_query_groups", s->heads, MF_GROUPS,
		    NULL, "no --group-query-attention: one group per head");
	if (mo_megatron_int(g, "--kv-channels", 1, 1 << 20, &v, &a))
		mo_megatron_put_int(o, MO_SEC_MODEL, "kv_channels", v,
				    MF_KV_CHANNELS, a, NULL);
}

static const char *const mo_megatron_tokenizers[] = {
    "BertWordPieceLowerCase",
    "BertWordPieceCase",
    "GPT2BPETokenizer",
    "SentencePieceTokenizer",
    "GPTSentencePieceTokenizer",
    "HuggingFaceTokenizer",
    "Llama2Tokenizer",
    "TikTokenizer",
    "MultimodalTokenizer",
    "NullTokenizer",
    "NullMultimodalTokenizer",
    "SFTTokenizer",
    NULL};

/* The GPT-2 BPE vocabulary (vocab.json) every GPT2BPETokenizer run loads. */
#define MO_MG_GPT2_VOCAB 50257

static void mo_megatron_read_vocab(struct mo_megatron_import *g,
				   struct mo_megatron_out *o)
{
	const struct mo_megatron_arg *a = NULL, *t = NULL;
	int64_t v;
	const char *tok = mo_megatron_choice(g, "--tokenizer-type",
					     mo_megatron_tokenizers, &t);
	struct mo_megatron_arg *file = mo_megatron_find(g, "--vocab-file");
	if (mo_megatron_int(g, "--vocab-size", 1, 2147483647LL, &v, &a)) {
		mo_megatron_put_int(o, MO_SEC_MODEL, "vocab_size", v,
				    MF_VOCAB, a, NULL);
	} else if ((tok && strcmp(tok, "GPT2BPETokenizer") == 0) ||
		   (!tok && file)) {
		const struct mo_megatron_arg *at = t ? t : file;
		mo_megatron_diag(
		    g, MO_SEV_WARNING, "assumed", at->line, at->column,
		    at->flag,
		    "the vocabulary is in the tokenizer's vocab.json: "
		    "the GPT-2 BPE "
		    "vocabulary's %d entries assumed",
		    MO_MG_GPT2_VOCAB);
		mo_megatron_put_int(
		    o, MO_SEC_MODEL, "vocab_size", MO_MG_GPT2_VOCAB, MF_VOCAB,
		    NULL,
		    "GPT2BPETokenizer: the GPT-2 BPE vocab.json (assumed)");
	} else {
		mo_megatron_diag(
		    g, MO_SEV_WARNING, "assumed", t ? t->line : 0,
		    t ? t->column : 0, "--vocab-size",
		    "the vocabulary size is not in the arguments (it is the "
		    "tokenizer's): "
		    "set model.vocab_size; memopt's default 32000 is used");
	}
	a = NULL;
	if (!mo_megatron_int(g, "--make-vocab-size-divisible-by", 1, 1 << 20,
			     &v, &a))
		v = 128;
	mo_megatron_put_int(o, MO_SEC_MODEL, "make_vocab_size_divisible_by",
			    v, MF_VOCAB_DIV, a, "default 128");
}

/* A store_true flag as a model key: the flag when given, else the default. */
static void mo_megatron_put_flag(struct mo_megatron_import *g,
				 struct mo_megatron_out *o, int section,
				 const char *key, const char *flag, int field,
				 const char *why)
{
	bool on = mo_megatron_flag(g, flag);
	mo_megatron_put_bool(o, section, key, on, field,
			     on ? mo_megatron_find(g, flag) : NULL, why);
}

static const char *const mo_megatron_position_types[] = {
    "learned_absolute", "rope", "mrope", "relative", "none", "yarn", NULL};

static void mo_megatron_read_positions(struct mo_megatron_import *g,
				       struct mo_megatron_out *o)
{
	const struct mo_megatron_arg *a = NULL, *mp = NULL;
	int64_t seq = 0, max_pos = 0;
	bool has_max = mo_megatron_int(g, "--max-position-embeddings", 1,
				       2147483647LL, &max_pos, &mp);
	if (!mo_megatron_int(g, "--seq-length", 1, 2147483647LL, &seq, &a)) {
		if (!mo_megatron_find(g, "--seq-length"))
			mo_megatron_diag(g, MO_SEV_ERROR, "missing-key", 0, 0,
					 "--seq-length",
					 "--seq-length is missing: the run's "
					 "sequence length is needed");
		seq = has_max ? max_pos : 4096;
	}
	mo_megatron_put_int(o, MO_SEC_MODEL, "seq_length", seq, MF_SEQ, a,
			    NULL);
	if (!has_max && !mo_megatron_find(g, "--max-position-embeddings"))
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "missing-key", 0, 0,
		    "--max-position-embeddings",
		    "--max-position-embeddings is missing: Megatron "
		    "requires it");
	mo_megatron_put_int(o, MO_SEC_MODEL, "max_position_embeddings",
			    has_max ? max_pos : seq, MF_MAX_POS, mp,
			    "the sequence length");
	const struct mo_megatron_arg *t = NULL;
	const char *type = mo_megatron_choice(g, "--position-embedding-type",
					      mo_megatron_position_types, &t);
	if (mo_megatron_flag(g, "--use-rotary-position-embeddings")) {
		type = "rope";
		t = mo_megatron_find(g, "--use-rotary-position-embeddings");
	}
	if (!type)
		type = "learned_absolute";
	if (strcmp(type, "mrope") == 0 || strcmp(type, "yarn") == 0) {
		type = "rope"; /* rotary variants: no parameters, the same
				  tensors */
	} else if (strcmp(type, "relative") == 0) {
		mo_megatron_unmodelled(g, t, "the relative position bias");
		type = "none";
	}
	if (mo_megatron_flag(g, "--no-position-embedding") &&
	    strcmp(type, "rope") != 0) {
		const struct mo_megatron_arg *n =
		    mo_megatron_find(g, "--no-position-embedding");
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", n->line, n->column, n->flag,
		    "--no-position-embedding is deprecated in Megatron "
		    "(it raises): use "
		    "--position-embedding-type none");
	}
	mo_megatron_put_str(o, MO_SEC_MODEL, "position_embedding_type", type,
			    MF_POS_TYPE, t, "default learned_absolute");
}

static const char *const mo_megatron_norms[] = {"LayerNorm", "RMSNorm", NULL};
static const char *const mo_megatron_impls[] = {"transformer_engine", "local",
						"inference_optimized", NULL};
static const char *const mo_megatron_backends[] = {"auto",    "flash", "fused",
						   "unfused", "local", NULL};

static void mo_megatron_read_layer(struct mo_megatron_import *g,
				   struct mo_megatron_out *o,
				   const struct mo_megatron_shape *s,
				   const char **impl_out,
				   const struct mo_megatron_arg **impl_src)
{
	const struct mo_megatron_arg *a = NULL;
	mo_megatron_put_flag(
	    g, o, MO_SEC_MODEL, "untie_embeddings_and_output_weights",
	    "--untie-embeddings-and-output-weights", MF_UNTIE, "default: tied");
	const char *norm =
	    mo_megatron_choice(g, "--normalization", mo_megatron_norms, &a);
	mo_megatron_put_str(o, MO_SEC_MODEL, "normalization",
			    norm ? norm : "LayerNorm", MF_NORM, norm ? a : NULL,
			    "default LayerNorm");
	const struct mo_megatron_arg *sw = mo_megatron_find(g, "--swiglu");
	if (mo_megatron_flag(g, "--squared-relu"))
		mo_megatron_unmodelled(g, mo_megatron_find(g, "--squared-relu"),
				       "squared ReLU (counted as GeLU)");
	mo_megatron_put_str(
	    o, MO_SEC_MODEL, "hidden_act", s->swiglu ? "swiglu" : "gelu",
	    MF_ACT, s->swiglu ? sw : NULL, "default gelu (no --swiglu)");
	bool nobias = mo_megatron_flag(g, "--disable-bias-linear");
	mo_megatron_put_bool(
	    o, MO_SEC_MODEL, "add_bias_linear", !nobias, MF_BIAS,
	    nobias ? mo_megatron_find(g, "--disable-bias-linear") : NULL,
	    "default (no --disable-bias-linear)");
	bool qkv = mo_megatron_flag(g, "--add-qkv-bias");
	mo_megatron_put_bool(o, MO_SEC_MODEL, "add_qkv_bias", qkv || !nobias,
			     MF_QKV_BIAS,
			     qkv ? mo_megatron_find(g, "--add-qkv-bias") : NULL,
			     nobias ? "default" : "follows add_bias_linear");
	a = NULL;
	const char *impl =
	    mo_megatron_choice(g, "--transformer-impl", mo_megatron_impls, &a);
	*impl_src = impl ? a : NULL;
	if (impl && strcmp(impl, "inference_optimized") == 0)
		mo_megatron_unmodelled(
		    g, a, "the inference-optimized implementation");
	*impl_out =
	    impl && strcmp(impl, "local") == 0 ? "local" : "transformer_engine";
	const struct mo_megatron_arg *b = NULL;
	const char *backend = mo_megatron_choice(g, "--attention-backend",
						 mo_megatron_backends, &b);
	bool flash_attn = mo_megatron_flag(g, "--use-flash-attn");
	bool eager = backend ? (strcmp(backend, "unfused") == 0 ||
				strcmp(backend, "local") == 0)
			     : (strcmp(*impl_out, "local") == 0 && !flash_attn);
	mo_megatron_put_str(
	    o, MO_SEC_MODEL, "attention", eager ? "eager" : "flash", MF_ATTN,
	    backend ? b
		    : (flash_attn ? mo_megatron_find(g, "--use-flash-attn")
				  : *impl_src),
	    eager ? "the local implementation's unfused attention"
		  : "Transformer Engine's fused attention (--attention-backend "
		    "auto)");
	double d = 0.1;
	a = NULL;
	if (!mo_megatron_double(g, "--hidden-dropout", &d, &a))
		d = 0.1;
	mo_megatron_put_double(o, MO_SEC_MODEL, "hidden_dropout", d, MF_HDROP,
			       a, "default 0.1");
	a = NULL;
	if (!mo_megatron_double(g, "--attention-dropout", &d, &a))
		d = 0.1;
	mo_megatron_put_double(o, MO_SEC_MODEL, "attention_dropout", d,
			       MF_ADROP, a, "default 0.1");
	if (mo_megatron_flag(g, "--qk-layernorm"))
		mo_megatron_put_bool(
		    o, MO_SEC_MODEL, "qk_layernorm", true, MF_QK_LN,
		    mo_megatron_find(g, "--qk-layernorm"), NULL);
}

/* --moe-layer-freq: 1 (every layer), or ([0]*K+[1]*N) (K dense layers
 * first). Other patterns are not a first_k_dense_replace. */
static void mo_megatron_read_layer_freq(struct mo_megatron_import *g,
					struct mo_megatron_out *o,
					int64_t layers)
{
	struct mo_megatron_arg *a = mo_megatron_find(g, "--moe-layer-freq");
	const char *s = mo_megatron_value(g, a);
	long long dense = 0, moe = 0;
	int n = 0;
	if (!s || strcmp(s, "1") == 0)
		return;
	if (sscanf(s, "([0]*%lld+[1]*%lld)%n", &dense, &moe, &n) == 2 &&
	    s[n] == '\0' && dense >= 0 && moe >= 0 &&
	    dense <= MO_MODEL_MAX_LAYERS && moe <= MO_MODEL_MAX_LAYERS &&
	    dense + moe == layers) {
		mo_megatron_put_int(o, MO_SEC_MODEL, "first_k_dense_replace",
				    dense, MF_FIRST_DENSE, a, NULL);
		return;
	}
	mo_megatron_unmodelled(
	    g, a, "a MoE layer pattern other than K dense layers first");
}

static void mo_megatron_read_moe(struct mo_megatron_import *g,
				 struct mo_megatron_out *o,
				 const struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t experts = 0, v;
	if (!mo_megatron_int(g, "--num-experts", 0, 1 << 20, &experts, &a) ||
	    experts == 0) {
		mo_megatron_find(g, "--moe-router-topk");
		mo_megatron_find(g, "--moe-ffn-hidden-size");
		return;
	}
	mo_megatron_put_int(o, MO_SEC_MODEL, "num_moe_experts", experts,
			    MF_EXPERTS, a, NULL);
	a = NULL;
	if (!mo_megatron_int(g, "--moe-router-topk", 1, 1 << 20, &v, &a))
		v = 2;
	mo_megatron_put_int(o, MO_SEC_MODEL, "moe_router_topk", v, MF_TOPK, a,
			    "default 2");
	a = NULL;
	if (!mo_megatron_int(g, "--moe-ffn-hidden-size", 1, 1 << 26, &v, &a))
		v = s->ffn;
	mo_megatron_put_int(o, MO_SEC_MODEL, "moe_ffn_hidden_size", v,
			    MF_MOE_FFN, a, "default ffn_hidden_size");
	if (mo_megatron_int(g, "--moe-shared-expert-intermediate-size", 0,
			    1 << 26, &v, &a))
		mo_megatron_put_int(o, MO_SEC_MODEL,
				    "moe_shared_expert_intermediate_size", v,
				    MF_SHARED_FFN, a, NULL);
	mo_megatron_read_layer_freq(g, o, s->layers);
}

static void mo_megatron_read_mla(struct mo_megatron_import *g,
				 struct mo_megatron_out *o)
{
	static const struct {
		const char *flag, *key;
		int field;
		int64_t def;
	} dims[] = {
	    {"--q-lora-rank", "q_lora_rank", MF_Q_LORA, 0},
	    {"--kv-lora-rank", "kv_lora_rank", MF_KV_LORA, 32},
	    {"--qk-head-dim", "qk_nope_head_dim", MF_QK_NOPE, 128},
	    {"--qk-pos-emb-head-dim", "qk_rope_head_dim", MF_QK_ROPE, 64},
	    {"--v-head-dim", "v_head_dim", MF_V_HEAD, 128}};
	bool mla = mo_megatron_flag(g, "--multi-latent-attention");
	if (mla)
		mo_megatron_put_bool(
		    o, MO_SEC_MODEL, "multi_latent_attention", true, MF_MLA,
		    mo_megatron_find(g, "--multi-latent-attention"), NULL);
	for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
		const struct mo_megatron_arg *a = NULL;
		int64_t v;
		if (!mo_megatron_int(g, dims[i].flag, 0, 1 << 24, &v, &a))
			v = dims[i].def;
		if (mla)
			mo_megatron_put_int(o, MO_SEC_MODEL, dims[i].key, v,
					    dims[i].field, a,
					    "Megatron's default");
	}
}

static const char *const mo_megatron_optimizers[] = {
    "adam", "sgd", "muon", "dist_muon", "lion", "soap", "adaptive_muon", NULL};
static const char *const mo_megatron_grad_dtypes[] = {"fp32", "bf16", NULL};

/* --bf16 / --fp16, and the main_grad buffers: fp32 with --bf16 (arguments.py
 * turns accumulate_allreduce_grads_in_fp32 on unless --grad-reduce-in-bf16
 * or --main-grads-dtype bf16), or with --accumulate-allreduce-grads-in-fp32;
 * otherwise the parameters' dtype. */
static void mo_megatron_read_precision(struct mo_megatron_import *g,
				       struct mo_megatron_out *o)
{
	bool bf16 = mo_megatron_flag(g, "--bf16"),
	     fp16 = mo_megatron_flag(g, "--fp16");
	const struct mo_megatron_arg *p = bf16	 ? mo_megatron_find(g, "--bf16")
					  : fp16 ? mo_megatron_find(g, "--fp16")
						 : NULL;
	if (bf16 && fp16) {
		const struct mo_megatron_arg *f = mo_megatron_find(g, "--fp16");
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "type", f->line, f->column, f->flag,
		    "--fp16 and --bf16 together: Megatron refuses the pair");
	}
	const char *dtype = bf16 ? "bfloat16" : fp16 ? "float16" : "float32";
	const char *why =
	    bf16 || fp16 ? NULL : "default fp32 (no --bf16 / --fp16)";
	mo_megatron_put_str(o, MO_SEC_TRAIN, "compute_dtype", dtype,
			    MF_CDTYPE, p, why);
	mo_megatron_put_str(o, MO_SEC_TRAIN, "params_dtype", dtype,
			    MF_PDTYPE, p, why);
	const struct mo_megatron_arg *m = NULL;
	const char *main = mo_megatron_choice(g, "--main-grads-dtype",
					      mo_megatron_grad_dtypes, &m);
	bool in_bf16 = mo_megatron_flag(g, "--grad-reduce-in-bf16");
	bool acc = mo_megatron_flag(g, "--accumulate-allreduce-grads-in-fp32");
	const struct mo_megatron_arg *src = NULL;
	const char *grads = dtype;
	if (acc) {
		grads = "float32";
		src =
		    mo_megatron_find(g, "--accumulate-allreduce-grads-in-fp32");
	} else if (bf16 && in_bf16) {
		src = mo_megatron_find(g, "--grad-reduce-in-bf16");
	} else if (bf16 && main && strcmp(main, "bf16") == 0) {
		src = m;
	} else if (bf16) {
		grads = "float32";
	}
	mo_megatron_put_str(o, MO_SEC_TRAIN, "grads_dtype", grads,
			    MF_GDTYPE, src,
			    bf16 ? "--bf16: fp32 main_grad buffers "
				   "(accumulate_allreduce_grads_in_fp32)"
				 : "main_grad in the parameters' dtype");
	const struct mo_megatron_arg *a = NULL;
	const char *opt =
	    mo_megatron_choice(g, "--optimizer", mo_megatron_optimizers, &a);
	if (opt && strstr(opt, "muon")) {
		mo_megatron_put_str(o, MO_SEC_TRAIN, "optimizer", "muon",
				    MF_OPT, a, NULL);
		return;
	}
	if (opt && strcmp(opt, "adam") != 0)
		mo_megatron_unmodelled(
		    g, a, "this optimizer's state (counted as Adam's)");
	mo_megatron_put_str(o, MO_SEC_TRAIN, "optimizer", "adamw", MF_OPT,
			    a, "default adam (decoupled weight decay)");
}

/* The MoE token dispatcher, router dtype and fused permutation
 * (arguments.py at 11debfa7: --moe-token-dispatcher-type choices
 * allgather, alltoall, flex, default allgather; --moe-router-dtype fp32 or
 * fp64, default None: the input's dtype; --moe-permute-fusion store_true):
 * what the alltoall dispatcher keeps of its last micro-batch. */
static void mo_megatron_read_dispatch(struct mo_megatron_import *g,
				      struct mo_megatron_out *o)
{
	static const char *const dispatchers[] = {"allgather", "alltoall",
						  "flex", NULL};
	static const char *const router_dtypes[] = {"fp32", "fp64", NULL};
	const struct mo_megatron_arg *a = NULL;
	const char *d = mo_megatron_choice(g, "--moe-token-dispatcher-type",
					   dispatchers, &a);
	if (d && strcmp(d, "allgather") != 0)
		mo_megatron_put_str(o, MO_SEC_TRAIN,
				    "moe_token_dispatcher_type", d,
				    MF_DISPATCHER, a, NULL);
	a = NULL;
	const char *r =
	    mo_megatron_choice(g, "--moe-router-dtype", router_dtypes, &a);
	if (r && strcmp(r, "fp32") == 0)
		mo_megatron_put_str(o, MO_SEC_TRAIN, "moe_router_dtype",
				    "float32", MF_ROUTER_DTYPE, a, NULL);
	else if (r)
		mo_megatron_unmodelled(g, a,
				       "the fp64 router's probabilities the "
				       "alltoall dispatcher keeps (counted in "
				       "the compute dtype)");
	if (mo_megatron_flag(g, "--moe-permute-fusion"))
		mo_megatron_put_bool(o, MO_SEC_TRAIN, "moe_permute_fusion",
				     true, MF_PERMUTE_FUSION,
				     mo_megatron_find(g, "--moe-permute-fusion"),
				     NULL);
}

static void mo_megatron_read_training(struct mo_megatron_import *g,
				      struct mo_megatron_out *o,
				      const char *impl,
				      const struct mo_megatron_arg *impl_src)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t v;
	v = mo_megatron_required(g, "--micro-batch-size", 1, 1 << 20, 1, &a);
	mo_megatron_put_int(o, MO_SEC_TRAIN, "micro_batch_size", v, MF_MBS,
			    a, NULL);
	if (mo_megatron_int(g, "--global-batch-size", 1, 1LL << 40, &v, &a))
		mo_megatron_put_int(o, MO_SEC_TRAIN, "global_batch_size",
				    v, MF_GBS, a, NULL);
	mo_megatron_read_precision(g, o);
	mo_megatron_put_str(o, MO_SEC_TRAIN, "framework", "pytorch",
			    MF_FRAMEWORK, NULL, "Megatron-LM runs on PyTorch");
	mo_megatron_put_str(o, MO_SEC_TRAIN, "transformer_impl", impl,
			    MF_TE_IMPL, impl_src, "default transformer_engine");
	mo_megatron_put_flag(g, o, MO_SEC_TRAIN, "overlap_grad_reduce",
			     "--overlap-grad-reduce", MF_OVERLAP, "default");
	if (mo_megatron_flag(g, "--moe-grouped-gemm"))
		mo_megatron_put_bool(
		    o, MO_SEC_TRAIN, "moe_grouped_gemm", true, MF_GROUPED,
		    mo_megatron_find(g, "--moe-grouped-gemm"), NULL);
	/* Megatron's default is on (arguments.py
	 * --no-gradient-accumulation-fusion, store_false into
	 * gradient_accumulation_fusion); the flag still leaves out the weight
	 * gradient each Linear then makes before DDP adds it to main_grad (a
	 * transient the estimate does not count) */
	bool no_fusion =
	    mo_megatron_flag(g, "--no-gradient-accumulation-fusion");
	const struct mo_megatron_arg *nf =
	    no_fusion ? mo_megatron_find(g, "--no-gradient-accumulation-fusion")
		      : NULL;
	mo_megatron_put_bool(o, MO_SEC_TRAIN,
			     "gradient_accumulation_fusion", !no_fusion,
			     MF_GRAD_FUSION, nf,
			     "default (no --no-gradient-accumulation-fusion)");
	if (nf)
		mo_megatron_unmodelled(
		    g, nf,
		    "the weight gradient computed into a temporary before "
		    "main_grad");
	mo_megatron_read_dispatch(g, o);
	/* rope fusion (default on; --no-rope-fusion, arguments.py, store_false
	 * into apply_rope_fusion) decides which YaRN tables multi-latent
	 * attention keeps: written for MLA runs */
	if (mo_megatron_find(g, "--multi-latent-attention")) {
		bool no_rope = mo_megatron_flag(g, "--no-rope-fusion");
		mo_megatron_put_bool(
		    o, MO_SEC_TRAIN, "apply_rope_fusion", !no_rope,
		    MF_ROPE_FUSION,
		    no_rope ? mo_megatron_find(g, "--no-rope-fusion") : NULL,
		    "default (no --no-rope-fusion)");
	}
}

/* --num-layers-per-virtual-pipeline-stage N: layers / PP / N chunks per
 * rank; --num-virtual-stages-per-pipeline-rank: that count. */
static void mo_megatron_read_virtual(struct mo_megatron_import *g,
				     struct mo_megatron_out *o,
				     struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t v;
	if (mo_megatron_int(g, "--num-virtual-stages-per-pipeline-rank", 1,
			    MO_MODEL_MAX_DEGREE, &v, &a)) {
		s->vpp = v;
		if (v > 1)
			mo_megatron_put_int(o, MO_SEC_PAR,
					    "virtual_pipeline", v, MF_VPP, a,
					    NULL);
		mo_megatron_find(g, "--num-layers-per-virtual-pipeline-stage");
		return;
	}
	if (!mo_megatron_int(g, "--num-layers-per-virtual-pipeline-stage", 1,
			     MO_MODEL_MAX_LAYERS, &v, &a))
		return;
	int64_t per_stage = s->pp > 0 ? s->layers / s->pp : 0;
	if (s->layers % s->pp != 0 || per_stage % v != 0) {
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "parallel", a->vline, a->vcolumn, a->flag,
		    "%s %lld: the %lld layers per pipeline stage (%lld "
		    "/ PP %lld) are not "
		    "a multiple of it (Megatron refuses)",
		    a->flag, (long long)v, (long long)per_stage,
		    (long long)s->layers, (long long)s->pp);
		return;
	}
	s->vpp = per_stage / v;
	if (per_stage / v > 1)
		mo_megatron_put_int(o, MO_SEC_PAR, "virtual_pipeline",
				    per_stage / v, MF_VPP, a,
				    "layers / PP / layers per virtual stage");
}

/* The device count: the caller's, or torchrun's processes x nodes. */
static int64_t mo_megatron_world(struct mo_megatron_import *g, int64_t devices,
				 const char **why)
{
	*why = "the caller's device count";
	if (devices > 0)
		return devices;
	*why = "torchrun --nproc-per-node x --nnodes";
	if (g->launcher_procs > 0 && !g->launcher_unknown)
		return mo_model_mul(g->launcher_procs, g->launcher_nodes > 0
							   ? g->launcher_nodes
							   : 1);
	if (!g->quiet_world)
		mo_megatron_diag(
		    g, MO_SEV_WARNING, "model-needed", g->procs_line,
		    g->procs_column, NULL,
		    "the arguments do not give the device count "
		    "(torchrun --nproc-per-node x "
		    "--nnodes): give it (--devices N); until then data "
		    "parallel is 1");
	return 0;
}

static void mo_megatron_read_parallel(struct mo_megatron_import *g,
				      struct mo_megatron_out *o,
				      struct mo_megatron_shape *s,
				      int64_t devices)
{
	static const struct {
		const char *flag, *key;
		int field;
	} degrees[] = {
	    {"--tensor-model-parallel-size", "tensor_parallel", MF_TP},
	    {"--pipeline-model-parallel-size", "pipeline_parallel", MF_PP},
	    {"--context-parallel-size", "context_parallel", MF_CP},
	    {"--expert-model-parallel-size", "expert_parallel", MF_EP}};
	int64_t deg[4];
	for (size_t i = 0; i < 4; i++) {
		const struct mo_megatron_arg *a = NULL;
		if (!mo_megatron_int(g, degrees[i].flag, 1, MO_MODEL_MAX_DEGREE,
				     &deg[i], &a))
			deg[i] = 1;
		mo_megatron_put_int(o, MO_SEC_PAR, degrees[i].key,
				    deg[i], degrees[i].field, a, "default 1");
	}
	s->tp = deg[0];
	s->pp = deg[1];
	mo_megatron_read_virtual(g, o, s);
	const struct mo_megatron_arg *a = NULL;
	int64_t etp;
	/* without the flag Megatron takes TP's degree (arguments.py), as the
	 * model key's default does */
	if (mo_megatron_int(g, "--expert-tensor-parallel-size", 1,
			    MO_MODEL_MAX_DEGREE, &etp, &a))
		mo_megatron_put_int(o, MO_SEC_PAR,
				    "expert_tensor_parallel", etp, MF_ETP, a,
				    "default: tensor_parallel");
	const char *why;
	int64_t world = mo_megatron_world(g, devices, &why);
	int64_t mp = mo_model_mul(mo_model_mul(deg[0], deg[1]), deg[2]);
	if (world > 0 && world % mp != 0)
		mo_megatron_diag(
		    g, MO_SEV_ERROR, "parallel", g->procs_line, g->procs_column,
		    NULL,
		    "%lld devices are not a multiple of TP x PP x CP = %lld",
		    (long long)world, (long long)mp);
	if (world > 0 && world % mp == 0) {
		mo_megatron_put_int(o, MO_SEC_PAR, "world_size", world,
				    MF_WORLD, NULL, why);
		mo_megatron_put_int(o, MO_SEC_PAR, "data_parallel",
				    world / mp, MF_DP, NULL,
				    "devices / (TP x PP x CP)");
	}
	mo_megatron_put_int(o, MO_SEC_PAR, "data_parallel_shard", 1,
			    MF_DP_SHARD, NULL,
			    "DDP: parameters are not sharded");
	bool sp = mo_megatron_flag(g, "--sequence-parallel");
	mo_megatron_put_bool(
	    o, MO_SEC_PAR, "sequence_parallel", sp && s->tp > 1, MF_SP,
	    sp && s->tp > 1 ? mo_megatron_find(g, "--sequence-parallel") : NULL,
	    sp ? "--sequence-parallel is off at TP 1 (arguments.py)"
	       : "default");
	mo_megatron_put_flag(g, o, MO_SEC_PAR, "distributed_optimizer",
			     "--use-distributed-optimizer", MF_DISTOPT,
			     "default (no --use-distributed-optimizer)");
}

/* ---- recompute: a memopt config, not the model
 * ---------------------------------- */

/* The layers --recompute-method block N recomputes: the first N of every
 * pipeline chunk (PP x VPP chunks of equal size). */
static void mo_megatron_block_layers(mo_buf *b,
				     const struct mo_megatron_shape *s,
				     int64_t chunks, int64_t n)
{
	int64_t per = chunks > 0 ? s->layers / chunks : s->layers;
	int64_t shown = chunks < 16 ? chunks : 16;
	for (int64_t c = 0; c < shown && per > 0; c++) {
		int64_t lo = c * per, hi = lo + (n < per ? n : per) - 1;
		if (lo == hi)
			mo_buf_printf(b, "%s%lld", c ? ", " : "",
				      (long long)lo);
		else
			mo_buf_printf(b, "%s%lld-%lld", c ? ", " : "",
				      (long long)lo, (long long)hi);
	}
	if (shown < chunks)
		mo_buf_puts(b, ", ...");
}

static const char *const mo_megatron_granularities[] = {"full", "selective",
							NULL};
static const char *const mo_megatron_methods[] = {"uniform", "block", NULL};

/* Megatron's recompute flags, as the recompute section that does the same
 * (a warning: the model file does not carry it). */
static void mo_megatron_read_recompute(struct mo_megatron_import *g,
				       const struct mo_megatron_shape *s,
				       int64_t vpp)
{
	const struct mo_megatron_arg *a = NULL, *m = NULL, *n = NULL;
	const char *gran = mo_megatron_choice(g, "--recompute-granularity",
					      mo_megatron_granularities, &a);
	const char *method = mo_megatron_choice(g, "--recompute-method",
						mo_megatron_methods, &m);
	int64_t count = 1;
	mo_megatron_int(g, "--recompute-num-layers", 1, MO_MODEL_MAX_LAYERS,
			&count, &n);
	if (mo_megatron_flag(g, "--recompute-activations")) {
		gran = "selective";
		a = mo_megatron_find(g, "--recompute-activations");
	}
	mo_megatron_find(g, "--recompute-modules");
	mo_megatron_find(g, "--distribute-saved-activations");
	if (!gran)
		return;
	mo_buf b;
	mo_buf_init(&b, 4096);
	if (strcmp(gran, "selective") == 0) {
		mo_buf_printf(
		    &b,
		    "recompute: {mode: select, select_module: {<the modules of "
		    "--recompute-modules, default core_attn>: [0-%lld]}}",
		    (long long)s->layers - 1);
	} else if (method && strcmp(method, "block") == 0) {
		mo_buf_puts(&b,
			    "recompute: {mode: full, full_recompute_layer: [");
		mo_megatron_block_layers(&b, s, mo_model_mul(s->pp, vpp),
					 count);
		mo_buf_puts(&b, "]}");
	} else {
		mo_buf_printf(
		    &b,
		    "recompute: {mode: full, full_recompute_layer: [0-%lld]}",
		    (long long)s->layers - 1);
	}
	mo_diag *d = mo_megatron_diag(
	    g, MO_SEV_WARNING, "megatron-recompute", a->line, a->column,
	    a->flag,
	    "%s %s: recompute belongs in the memopt config, not the model "
	    "file; the estimate of this file alone recomputes nothing",
	    a->flag, gran);
	if (d && !b.failed)
		mo_diag_set_hint(g->diags, d,
				 "the config that does the same: %s", b.data);
	mo_buf_free(&b);
}

/* ---- every other flag accounted for
 * --------------------------------------------- */

/* Flags that do not change what a training step keeps in device memory:
 * logging, schedules, data, checkpoints, initialisation, numerics, fused
 * kernels that keep the same tensors, router balancing. */
static const char *const mo_megatron_irrelevant[] = {
    "--use-mcore-models",
    "--use-legacy-models",
    "--distributed-backend",
    "--distributed-timeout-minutes",
    "--train-iters",
    "--train-samples",
    "--split",
    "--mock-data",
    "--tokenizer-model",
    "--merge-file",
    "--seed",
    "--init-method-std",
    "--weight-decay",
    "--clip-grad",
    "--norm-epsilon",
    "--rotary-base",
    "--rotary-percent",
    "--rotary-scaling-factor",
    "--rotary-seq-len-interpolation-factor",
    "--mscale",
    "--mscale-all-dim",
    "--attention-softmax-in-fp32",
    "--apply-query-key-layer-scaling",
    "--deterministic-mode",
    "--manual-gc",
    "--manual-gc-interval",
    "--no-check-for-nan-in-loss-and-grad",
    "--check-for-nan-in-loss-and-grad",
    "--use-persistent-ckpt-worker",
    "--async-save",
    "--exit-interval",
    "--exit-duration-in-mins",
    "--exit-signal-handler",
    "--mtp-loss-scaling-factor",
    "--moe-aux-loss-coeff",
    "--moe-z-loss-coeff",
    "--moe-router-load-balancing-type",
    "--moe-router-score-function",
    "--moe-router-pre-softmax",
    "--moe-router-topk-scaling-factor",
    "--moe-router-enable-expert-bias",
    "--moe-router-bias-update-rate",
    "--moe-router-group-topk",
    "--moe-router-num-groups",
    "--moe-input-jitter-eps",
    "--use-cpu-initialization",
    "--dataloader-type",
    "--num-workers",
    "--no-create-attention-mask-in-dataloader",
    "--reset-position-ids",
    "--reset-attention-mask",
    "--eod-mask-loss",
    "--calculate-per-token-loss",
    "--ddp-average-in-collective",
    "--decoupled-lr",
    "--decoupled-min-lr",
    "--num-dataset-builder-threads",
    "--te-rng-tracker",
    "--cross-entropy-loss-fusion",
    "--cross-entropy-fusion-impl",
    "--logging-level",
    "--vocab-file",
    "--init-model-with-meta-device",
    "--use-flash-attn",
    "--no-persist-layer-norm",
    "--micro-batch-size",
    NULL};

static const char *const mo_megatron_irrelevant_prefixes[] = {
    "--log",
    "--lr",
    "--min-lr",
    "--save",
    "--load",
    "--eval-",
    "--tensorboard",
    "--wandb",
    "--data-",
    "--ckpt-",
    "--dist-ckpt",
    "--timing-",
    "--adam-",
    "--sgd-",
    "--no-load",
    "--no-save",
    "--profile",
    "--rerun-",
    "--straggler",
    "--use-dist-ckpt",
    "--pretrained-checkpoint",
    "--finetune",
    "--override-opt",
    "--ft-",
    "--one-logger",
    "--null-tokenizer-",
    "--tokenizer-",
    NULL};

/* Flags that change device memory in a way the estimate does not model. */
static const struct {
	const char *flag, *what;
} mo_megatron_unmodelled_flags[] = {
    {"--overlap-param-gather",
     "the all-gather buffers of overlapped parameter gathering"},
    {"--fp8-format", "FP8 weights and activations"},
    {"--fp8-recipe", "FP8 weights and activations"},
    {"--fp8-param-gather", "FP8 parameters"},
    {"--optimizer-cpu-offload", "optimizer states in host memory"},
    {"--use-torch-fsdp2", "FSDP instead of DDP"},
    {"--use-megatron-fsdp", "FSDP instead of DDP"},
    {"--data-parallel-sharding-strategy", "FSDP instead of DDP"},
    {"--cpu-offloading", "activation offloading"},
    {"--fine-grained-activation-offloading", "activation offloading"},
    {"--tp-comm-overlap", "the user buffers of TP communication overlap"},
    {"--moe-expert-capacity-factor", "expert capacity padding"},
    {"--moe-pad-expert-input-to-capacity", "expert capacity padding"},
    {"--account-for-embedding-in-pipeline-split", "an uneven pipeline split"},
    {"--account-for-loss-in-pipeline-split", "an uneven pipeline split"},
    {"--decoder-first-pipeline-num-layers", "an uneven pipeline split"},
    {"--decoder-last-pipeline-num-layers", "an uneven pipeline split"},
    {"--pipeline-model-parallel-layout", "a custom pipeline layout"},
    {"--cuda-graph-impl", "CUDA graphs' static buffers"},
    {"--enable-cuda-graph", "CUDA graphs' static buffers"},
    {"--external-cuda-graph", "CUDA graphs' static buffers"},
    {"--num-distributed-optimizer-instances",
     "several distributed optimizer instances"},
    {"--overlap-param-gather-with-optimizer-step",
     "overlapped parameter gathering"},
    {"--use-precision-aware-optimizer",
     "optimizer states in a lower precision"},
    {"--main-params-dtype", "master parameters in another dtype"},
    {"--exp-avg-dtype", "optimizer states in a lower precision"},
    {"--exp-avg-sq-dtype", "optimizer states in a lower precision"},
    {"--hybrid-override-pattern", "hybrid (Mamba) layers"},
    {"--hybrid-layer-pattern", "hybrid (Mamba) layers"},
    {"--moe-layer-recompute", "MoE layer recompute"},
    {NULL, NULL}};

static bool mo_megatron_known_irrelevant(const char *flag)
{
	for (size_t i = 0; mo_megatron_irrelevant[i]; i++)
		if (strcmp(flag, mo_megatron_irrelevant[i]) == 0)
			return true;
	for (size_t i = 0; mo_megatron_irrelevant_prefixes[i]; i++)
		if (strncmp(flag, mo_megatron_irrelevant_prefixes[i],
			    strlen(mo_megatron_irrelevant_prefixes[i])) == 0)
			return true;
	/* --no-X-fusion / --X-fusion: fused kernels keep the same tensors
	 * (--no-gradient-accumulation-fusion is read: a model key) */
	return mo_megatron_ends_with(flag, "-fusion");
}

static void mo_megatron_account(struct mo_megatron_import *g)
{
	for (size_t i = 0; i < g->n_args; i++) {
		struct mo_megatron_arg *a = &g->args[i];
		if (a->used)
			continue;
		size_t k = 0;
		while (mo_megatron_unmodelled_flags[k].flag &&
		       strcmp(mo_megatron_unmodelled_flags[k].flag, a->flag) !=
			   0)
			k++;
		if (mo_megatron_unmodelled_flags[k].flag)
			mo_megatron_unmodelled(
			    g, a, mo_megatron_unmodelled_flags[k].what);
		else if (!mo_megatron_known_irrelevant(a->flag))
			mo_megatron_diag(
			    g, MO_SEV_WARNING, "unread-key", a->line, a->column,
			    a->flag,
			    "%.200s: a Megatron flag memopt does not "
			    "read (not known to "
			    "leave memory unchanged)",
			    a->flag);
		a->used = true;
	}
}

/* ---- the whole text
 * --------------------------------------------------------------- */

static bool mo_megatron_is_model_config(const char *text, size_t len)
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

static bool mo_megatron_contains(const char *text, size_t len, const char *s)
{
	return memmem(text, len, s, strlen(s)) != NULL;
}

/* The first word of the text, past blank and comment lines. */
static size_t mo_megatron_first_word(const char *text, size_t len,
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

static bool mo_megatron_word_is(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(w, s, n) == 0;
}

int mo_megatron_detect(const char *text, size_t len)
{
	if (!text)
		return false;
	if (!mo_megatron_contains(text, len, "--num-layers") &&
	    !mo_megatron_contains(text, len, "--hidden-size"))
		return false;
	if (mo_megatron_is_model_config(text, len) ||
	    mo_megatron_is_script(text, len))
		return true;
	const char *w;
	size_t n = mo_megatron_first_word(text, len, &w);
	if (n > 2 && w[0] == '-' && w[1] == '-' &&
	    ((w[2] >= 'a' && w[2] <= 'z') || (w[2] >= 'A' && w[2] <= 'Z')))
		return true; /* an arguments file */
	const char *eq = n ? memchr(w, '=', n) : NULL;
	return mo_megatron_word_is(w, n, "torchrun") ||
	       mo_megatron_word_is(w, n, "python") ||
	       mo_megatron_word_is(w, n, "python3") ||
	       mo_megatron_word_is(w, n, "deepspeed") ||
	       mo_megatron_word_is(w, n, "srun") ||
	       mo_megatron_word_is(w, n, "exec") ||
	       (n > 3 && mo_megatron_ends_with_n(w, n, ".py")) ||
	       (eq && eq > w);
}

/* Reads the arguments into g (words or MODEL_ARGS). 0, 1 (the text does
 * not parse: diagnostics), -1 (err). */
static int mo_megatron_read_text(struct mo_megatron_import *g, const char *text,
				 size_t len, const mo_limits *lim)
{
	if (!mo_megatron_is_model_config(text, len)) {
		bool ok = mo_megatron_is_script(text, len)
			      ? mo_megatron_read_script(g, text, len)
			      : mo_megatron_read_words(g, text, len);
		return g->failed ? -1 : ok ? 0 : 1;
	}
	mo_doc *doc = NULL;
	int rc = mo_yaml_parse(&doc, g->diags, text, len, g->file, lim, g->err);
	if (rc < 0)
		return -1;
	if (rc > 0 || !doc || !doc->root || doc->root->kind != MO_NODE_MAP) {
		mo_doc_free(doc);
		return 1;
	}
	bool ok = mo_megatron_read_model_config(g, doc);
	mo_doc_free(doc);
	return g->failed ? -1 : ok ? 0 : 1;
}

/* Every part of the model from the arguments read. */
static void mo_megatron_interpret(struct mo_megatron_import *g,
				  struct mo_megatron_out *o, int64_t devices)
{
	struct mo_megatron_shape s = {.vpp = 1};
	const char *impl = NULL;
	const struct mo_megatron_arg *impl_src = NULL;
	mo_megatron_read_shape(g, o, &s);
	mo_megatron_read_vocab(g, o);
	mo_megatron_read_positions(g, o);
	mo_megatron_read_layer(g, o, &s, &impl, &impl_src);
	mo_megatron_read_moe(g, o, &s);
	mo_megatron_read_mla(g, o);
	mo_megatron_read_training(g, o, impl, impl_src);
	mo_megatron_read_parallel(g, o, &s, devices);
	mo_megatron_read_recompute(g, &s, s.vpp);
	mo_megatron_account(g);
}

/* The items in the order they are written (section by section). */
static size_t mo_megatron_order(const struct mo_megatron_out *o,
				const struct mo_megatron_item **order)
{
	size_t n = 0;
	for (int s = 0; s < MO_NSEC; s++)
		for (size_t i = 0; i < o->n; i++)
			if (o->v[i].item.sect == s)
				order[n++] = &o->v[i];
	return n;
}

static int mo_megatron_write_yaml(const struct mo_megatron_out *o, mo_buf *body,
				  mo_error *err)
{
	const struct mo_megatron_item *order[64];
	size_t n = mo_megatron_order(o, order), k = 0;
	mo_yaml_writer *w = NULL;
	if (mo_yaml_writer_new(&w, MO_YAML_BREAK_LF, "megatron import", err) !=
	    0)
		return -1;
	bool ok = mo_yaml_write_mapping_start(w, NULL, false);
	for (int s = 0; s < MO_NSEC && ok; s++) {
		ok = mo_yaml_write_plain(w, mo_sec_names[s]) &&
		     mo_yaml_write_mapping_start(w, NULL, false);
		for (; ok && k < n && order[k]->item.sect == s; k++)
			ok = mo_model_write_item(w, &order[k]->item);
		ok = ok && mo_yaml_write_mapping_end(w);
	}
	ok = ok && mo_yaml_write_mapping_end(w);
	int rc = ok ? mo_yaml_writer_finish(w, body, 0) : -1;
	if (rc != 0 && err && !err->text[0])
		mo_error_set(err, MO_ERR_NOMEM, 0, 0,
			     "megatron import: out of memory");
	mo_yaml_writer_free(w);
	return rc;
}

/* The emitted text with each key's source as a trailing comment: the
 * writer puts one item per line, `  key: value`, in mo_megatron_order's order.
 */
static bool mo_megatron_annotate(const struct mo_megatron_out *o,
				 const mo_buf *body, const char *name,
				 mo_buf *dst)
{
	const struct mo_megatron_item *order[64];
	size_t n = mo_megatron_order(o, order), k = 0;
	mo_buf_printf(
	    dst,
	    "# A memopt model file imported from the Megatron-LM arguments in "
	    "%.200s.\n"
	    "# Each key: the flag it comes from, or Megatron's default "
	    "(megatron/training/arguments.py).\n",
	    name);
	const char *p = body->data, *end = body->data + body->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		mo_buf_append(dst, p, len);
		if (len > 2 && p[0] == ' ' && p[1] == ' ' && k < n) {
			const struct mo_megatron_item *it = order[k++];
			const char *src = it->src ? it->src->flag : it->why;
			if (src)
				mo_buf_printf(dst, "  # %s", src);
		}
		mo_buf_puts(dst, "\n");
		p += len + (nl ? 1 : 0);
	}
	return !dst->failed;
}

/* The whole import into g and o. 0, 1 (the text does not parse), -1. */
static int mo_megatron_run(struct mo_megatron_import *g,
			   struct mo_megatron_out *o, const char *text,
			   size_t len, int64_t devices, const mo_limits *lim)
{
	mo_limits dl;
	if (!lim) {
		mo_limits_default(&dl);
		lim = &dl;
	}
	if (len > lim->max_bytes) {
		mo_error_set(g->err, MO_ERR_LIMIT, 0, 0,
			     "%s: %zu bytes of Megatron arguments, more than "
			     "the %zu allowed",
			     g->file, len, lim->max_bytes);
		return -1;
	}
	int rc = mo_megatron_read_text(g, text, len, lim);
	if (rc != 0)
		return rc;
	mo_megatron_interpret(g, o, devices);
	return g->failed ? -1 : 0;
}

int mo_megatron_import(char **out, mo_diags *diags, const char *text,
		       size_t len, const char *name, int64_t devices,
		       const mo_limits *lim, mo_error *err)
{
	struct mo_megatron_out o = {.n = 0};
	mo_buf body, dst;
	int rc = -1;
	if (out)
		*out = NULL;
	if (!out || !diags || !text) {
		mo_error_set(err, MO_ERR_USAGE, 0, 0,
			     "mo_megatron_import: no text");
		return -1;
	}
	struct mo_megatron_import g = {.arena = mo_arena_new(),
				       .diags = diags,
				       .file = name ? name : "<megatron>",
				       .err = err};
	if (!g.arena) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_buf_init(&body, 0);
	mo_buf_init(&dst, 0);
	rc = mo_megatron_run(&g, &o, text, len, devices, lim);
	if (rc != 0)
		goto out_free_buffers;
	rc = -1;
	if (mo_megatron_write_yaml(&o, &body, err) != 0)
		goto out_free_buffers;
	if (!mo_megatron_annotate(&o, &body, g.file, &dst)) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		goto out_free_buffers;
	}
	*out = mo_buf_take(&dst, NULL);
	rc = *out ? 0 : -1;
out_free_buffers:
	mo_buf_free(&body);
	if (rc != 0)
		mo_buf_free(&dst);
	mo_arena_free(g.arena);
	return rc;
}

/* The model's positions are the flags' (the `parallel` rule points at
 * --tensor-model-parallel-size in the user's file, not at the YAML the
 * import wrote); a field from a default has none. */
static bool mo_megatron_positions(mo_model *m, const struct mo_megatron_out *o)
{
	struct mo_model_ext *x = m->ext;
	bool world = false;
	for (int f = 0; f < MF_COUNT; f++)
		x->pos[f] = (struct mo_model_pos){0, 0, NULL};
	for (size_t i = 0; i < o->n; i++) {
		const struct mo_megatron_item *it = &o->v[i];
		world |= it->field == MF_WORLD;
		if (it->field < 0 || !it->src)
			continue;
		char *path = mo_arena_strdup(m->arena, it->src->flag);
		if (!path)
			return false;
		x->pos[it->field] =
		    (struct mo_model_pos){it->src->line, it->src->column, path};
	}
	x->dp_follows_devices = !world;
	return true;
}

int mo_model_load_megatron(mo_model **out, mo_diags *diags, const char *text,
			   size_t len, const char *name, const mo_limits *lim,
			   mo_error *err)
{
	struct mo_megatron_out o = {.n = 0};
	mo_doc *doc = NULL;
	mo_buf body;
	int rc;
	*out = NULL;
	struct mo_megatron_import g = {.arena = mo_arena_new(),
				       .diags = diags,
				       .file = name ? name : "<megatron>",
				       .err = err,
				       .quiet_world = true};
	if (!g.arena) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	mo_buf_init(&body, 0);
	rc = mo_megatron_run(&g, &o, text, len, 0, lim);
	if (rc == 1)
		mo_error_set(err, MO_ERR_INVALID, 0, 0,
			     "%s: the Megatron arguments do not parse", g.file);
	if (rc != 0 || mo_megatron_write_yaml(&o, &body, err) != 0)
		goto out_fail;
	/* the written file parses: it is memopt's own text */
	if (mo_yaml_parse(&doc, diags, body.data, body.len, g.file, lim, err) !=
		0 ||
	    !doc)
		goto out_fail;
	rc = mo_model_from_doc(out, diags, doc, err);
	if (rc == 0 && !mo_megatron_positions(*out, &o)) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		mo_model_free(*out);
		*out = NULL;
		rc = -1;
	}
	mo_doc_free(doc);
	mo_buf_free(&body);
	mo_arena_free(g.arena);
	return rc == 0 ? 0 : -1;
out_fail:
	mo_doc_free(doc);
	mo_buf_free(&body);
	mo_arena_free(g.arena);
	return -1;
}
