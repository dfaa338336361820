/* Megatron-LM arguments: shell words of launch lines and arguments files,
 * and the bounded expansion of training scripts (see "training scripts"). */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	bool in_dquote; /* inside "...": an expansion stays one word */
	bool split;	/* the word has an unquoted expansion of a text the
			 * script assigns: the shell splits it at blanks */
	bool pinned;	/* a sourced file: every position is its `source`
			 * statement's, in the script the user has */
	bool join_arrays; /* an assignment's value or a here-document: the
			   * shell joins `${NAME[@]}`'s words with blanks */
};

static bool megatron_dollar(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x);
static bool megatron_backquoted(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x);
static int megatron_splice(struct mo_megatron_import *g,
			      struct mo_megatron_lexer *x);
static bool megatron_source(struct mo_megatron_import *g, int line, int column, const char *name,
			    struct mo_megatron_words *launch);
static bool megatron_statement(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
			       struct mo_megatron_words *launch);
static void megatron_skip_segment(struct mo_megatron_lexer *x);
static void megatron_next_line(struct mo_megatron_lexer *x);

static void megatron_advance(struct mo_megatron_lexer *x)
{
	if (x->pinned) {
		x->p++;
		return;
	}
	if (*x->p == '\n') {
		x->line++;
		x->column = 1;
	} else {
		x->column++;
	}
	x->p++;
}

/* A backslash before a line break: the two go (a continuation line). */
static bool megatron_continuation(struct mo_megatron_lexer *x)
{
	const char *q = x->p + 1;
	if (q < x->end && *q == '\r')
		q++;
	if (q >= x->end || *q != '\n')
		return false;
	while (x->p <= q)
		megatron_advance(x);
	return true;
}

/* Blanks, continuations and `#` comments before a word. */
static void megatron_skip_blanks(struct mo_megatron_lexer *x)
{
	while (x->p < x->end) {
		char c = *x->p;
		if (c == '\n' && x->script && !x->in_array)
			break; /* the end of a statement */
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			megatron_advance(x);
		else if (c == '\\' && megatron_continuation(x))
			continue;
		else if (c == '#')
			while (x->p < x->end && *x->p != '\n')
				megatron_advance(x);
		else
			break;
	}
}

/* The inside of a quoted string; the lexer is on the opening quote. */
static bool megatron_quoted(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x)
{
	char q = *x->p;
	int line = x->line, column = x->column;
	megatron_advance(x);
	x->in_dquote = q == '"';
	while (x->p < x->end && *x->p != q) {
		if (q == '"' && *x->p == '\\' && x->p + 1 < x->end &&
		    strchr("\"\\$`\n", x->p[1])) {
			if (x->p[1] == '\n') {
				megatron_advance(x);
				megatron_advance(x);
				continue;
			}
			megatron_advance(x);
		} else if (q == '"' && *x->p == '$' && x->script) {
			if (!megatron_dollar(g, x))
				return false;
			x->in_dquote = true; /* a nested default may have left it */
			continue;
		}
		buf_append(&x->word, x->p, 1);
		megatron_advance(x);
	}
	x->in_dquote = false;
	if (x->p >= x->end) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-syntax", line,
				 column, NULL, "unterminated %s quote",
				 q == '"' ? "double" : "single");
		return false;
	}
	megatron_advance(x);
	return true;
}

/* An unquoted `|`, `;`, `&`, `<` or `>` ends the command (a `| tee log`,
 * a `2>&1`): what follows is not an argument. */
static bool megatron_operator(char c)
{
	return c == '|' || c == ';' || c == '&' || c == '<' || c == '>';
}

/* The length of a `<WORDS>` placeholder at x->p (the examples' "fill in here": `--vocab-file
 * <PATH TO gpt-vocab.json>`), 0 when it is not one. A shell would read a redirection; the
 * author means a value the user writes in, so it is read as one word, the value unknown. A
 * placeholder starts with a letter and holds letters, digits, blanks and `_./:-` up to its
 * `>` on the same line. */
static size_t megatron_placeholder_len(const struct mo_megatron_lexer *x)
{
	const char *p = x->p;
	if (p + 2 >= x->end || *p != '<' ||
	    !((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')))
		return 0;
	for (const char *q = p + 1; q < x->end && q - p < 256; q++) {
		if (*q == '>')
			return (size_t)(q - p) + 1;
		if (!strchr(" _./:-", *q) && !(*q >= '0' && *q <= '9') &&
		    !(*q >= 'A' && *q <= 'Z') && !(*q >= 'a' && *q <= 'z'))
			return 0;
	}
	return 0;
}

/* One word into x->word. Returns 1 a word, 0 the end (or an operator), -1
 * an error (diagnostic or g->failed). */
int megatron_word(struct mo_megatron_import *g,
			    struct mo_megatron_lexer *x, int *line, int *column)
{
	megatron_skip_blanks(x);
	if (x->p >= x->end || (megatron_operator(*x->p) && !megatron_placeholder_len(x)) ||
	    (x->script && (*x->p == '\n' || *x->p == ')')))
		return 0;
	*line = x->line;
	*column = x->column;
	x->word.len = 0;
	x->split = false;
	if (x->script) {
		int rc = megatron_splice(g, x);
		if (rc != 0)
			return rc;
	}
	while (x->p < x->end) {
		char c = *x->p;
		size_t hole = megatron_placeholder_len(x);
		if (hole) {
			buf_append(&x->word, x->p, hole);
			for (size_t i = 0; i < hole; i++)
				megatron_advance(x);
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
		    megatron_operator(c) || (x->script && c == ')'))
			break;
		if (c == '\'' || c == '"') {
			if (!megatron_quoted(g, x))
				return -1;
			continue;
		}
		if (c == '`' && x->script) {
			if (!megatron_backquoted(g, x))
				return -1;
			if (x->word.len > MO_MG_MAX_TOKEN)
				break;
			continue;
		}
		if (c == '$' && x->script) {
			if (!megatron_dollar(g, x))
				return -1;
			if (x->word.len > MO_MG_MAX_TOKEN)
				break;
			continue;
		}
		if (c == '(' && x->script) {
			megatron_diag(g, MO_SEV_ERROR, "megatron-script",
					 x->line, x->column, NULL,
					 "'(' here is shell syntax this reader "
					 "does not model (it is not a shell)");
			return -1;
		}
		if (c == '\\' && megatron_continuation(x))
			continue;
		if (c == '\\' && x->p + 1 < x->end)
			megatron_advance(x);
		buf_append(&x->word, x->p, 1);
		megatron_advance(x);
		if (x->word.len > MO_MG_MAX_TOKEN)
			break;
	}
	if (x->word.len > MO_MG_MAX_TOKEN) {
		megatron_diag(
		    g, MO_SEV_ERROR, "megatron-syntax", *line, *column, NULL,
		    "an argument longer than %d bytes", MO_MG_MAX_TOKEN);
		return -1;
	}
	if (x->word.failed &&
	    x->word.len + 1 >= MO_MG_MAX_TOKEN) { /* a long quoted part */
		megatron_diag(
		    g, MO_SEV_ERROR, "megatron-syntax", *line, *column, NULL,
		    "an argument longer than %d bytes", MO_MG_MAX_TOKEN);
		return -1;
	}
	if (x->word.failed) {
		megatron_fail(g, MO_ERR_NOMEM, *line, *column,
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

static bool megatron_push_word(struct mo_megatron_import *g, const mo_buf *w,
				  int line, int column, size_t *cap)
{
	if (g->n_words == MO_MG_MAX_ARGS) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-syntax", line,
				 column, NULL, "more than %d arguments",
				 MO_MG_MAX_ARGS);
		return false;
	}
	if (g->n_words == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct megatron_word *words =
		    arena_alloc(g->arena, n * sizeof(*words));
		if (!words) {
			megatron_fail(g, MO_ERR_NOMEM, line, column,
					 "out of memory");
			return false;
		}
		if (g->n_words)
			memcpy(words, g->words, g->n_words * sizeof(*words));
		g->words = words;
		*cap = n;
	}
	char *text = arena_strndup(g->arena, w->data ? w->data : "", w->len);
	if (!text) {
		megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return false;
	}
	g->words[g->n_words++] = (struct megatron_word){text, line, column};
	return true;
}

/* The text as shell words, up to the first command separator. False on an
 * error (a diagnostic, or g->failed). */
bool megatron_split_words(struct mo_megatron_import *g,
				    const char *text, size_t len)
{
	struct mo_megatron_lexer x = {
	    .p = text, .end = text + len, .line = 1, .column = 1};
	size_t cap = 0;
	int line = 0, column = 0, rc;
	bool ok = true;
	buf_init(&x.word, MO_MG_MAX_TOKEN + 8);
	while ((rc = megatron_word(g, &x, &line, &column)) == 1)
		if (!megatron_push_word(g, &x.word, line, column, &cap)) {
			ok = false;
			break;
		}
	buf_free(&x.word);
	return ok && rc == 0;
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

static bool megatron_name_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static size_t megatron_name_len(const char *p, const char *end)
{
	size_t n = 0;
	if (p >= end || !megatron_name_start(*p))
		return 0;
	while (p + n < end &&
	       (megatron_name_start(p[n]) || (p[n] >= '0' && p[n] <= '9')))
		n++;
	return n;
}

static struct mo_megatron_var *
megatron_var_find(struct mo_megatron_import *g, const char *name, size_t n)
{
	for (size_t i = 0; i < g->n_vars; i++)
		if (strlen(g->vars[i].name) == n &&
		    memcmp(g->vars[i].name, name, n) == 0)
			return &g->vars[i];
	return NULL;
}

/* `unset NAME`: the script's variable is no longer assigned (the last
 * one takes its slot: lookups are by name). */
static void megatron_unset(struct mo_megatron_import *g, const char *name)
{
	struct mo_megatron_var *v = megatron_var_find(g, name, strlen(name));
	if (v)
		*v = g->vars[--g->n_vars];
}

/* n more bytes (or words) from an expansion: false past the budget. */
static bool megatron_budget(struct mo_megatron_import *g, size_t n, int line,
			       int column)
{
	g->expanded += n + 1;
	if (g->expanded <= MO_MG_MAX_EXPANDED)
		return true;
	megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
			 "the script's expansions add more than %u bytes: "
			 "refused (a self-referencing or doubling variable?)",
			 MO_MG_MAX_EXPANDED);
	return false;
}

static bool megatron_append(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x, const char *s,
			       size_t n, int line, int column)
{
	if (!megatron_budget(g, n, line, column))
		return false;
	buf_append(&x->word, s, n);
	return true;
}

/* The n bytes at x->p as written (an opaque value), the lexer past them. */
static bool megatron_copy(struct mo_megatron_import *g,
			     struct mo_megatron_lexer *x, size_t n, int line,
			     int column)
{
	if (!megatron_append(g, x, x->p, n, line, column))
		return false;
	for (size_t i = 0; i < n; i++)
		megatron_advance(x);
	return true;
}

/* A text variable's value where `$NAME` stands; outside double quotes the
 * shell splits it at blanks (`GPT_ARGS="--num-layers 2 ..."` then
 * `torchrun ... $GPT_ARGS`): the word is marked to be split. */
static bool megatron_append_value(struct mo_megatron_import *g,
				     struct mo_megatron_lexer *x,
				     const struct mo_megatron_var *v, int line,
				     int column)
{
	if (!x->in_dquote)
		x->split = true;
	/* an array named without a subscript (`$ARGS`, `${ARGS}`) is its
	 * element 0, the rest of it not passed (bash(1), Arrays) */
	const char *t = v->value;
	if (v->array)
		t = v->items.n ? v->items.v[0].text : "";
	return megatron_append(g, x, t, strlen(t), line, column);
}

/* `$(command)` or `$((arithmetic))`: kept as written. */
/* One operand of an arithmetic expansion: a decimal integer, or a variable the script
 * assigns a decimal integer (`$N`, `${N}` or `N`, as bash's arithmetic reads names). */
static bool megatron_arith_operand(struct mo_megatron_import *g, const char *p, const char *end,
				   int64_t *v)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (p < end && *p == '$')
		p++;
	if (p < end && *p == '{' && end[-1] == '}') {
		p++;
		end--;
	}
	const char *text = p;
	size_t n = (size_t)(end - p);
	if (n && megatron_name_start(*p)) {
		if (megatron_name_len(p, end) != n)
			return false;
		const struct mo_megatron_var *var = megatron_var_find(g, p, n);
		if (!var || var->array || !var->value)
			return false;
		text = var->value;
		n = strlen(text);
	}
	if (n == 0 || n > 12 || strspn(text, "0123456789") < n)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v = *v * 10 + (text[i] - '0');
	return true;
}

/* `$((A*B+C))` over integers the script knows (the launch scripts' `WORLD_SIZE=$((
 * $NPUS_PER_NODE*$NNODES))`): a sum of products, each term and the result at most
 * 2^40; false (kept as written) for anything else. */
static bool megatron_arith(struct mo_megatron_import *g, const char *p, const char *end,
			   int64_t *out)
{
	const int64_t cap = (int64_t)1 << 40;
	int64_t sum = 0, product = 1;
	const char *start = p;
	for (const char *q = p;; q++) {
		if (q < end && *q != '*' && *q != '+')
			continue;
		int64_t v;
		if (!megatron_arith_operand(g, start, q, &v) || (v && product > cap / v))
			return false;
		product *= v;
		if (q == end || *q == '+') {
			sum += product;
			if (sum > cap)
				return false;
			product = 1;
		}
		if (q == end)
			break;
		start = q + 1;
	}
	*out = sum;
	return true;
}

static bool megatron_substitution(struct mo_megatron_import *g,
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
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL,
				 "a '$(' without its ')' (within %d bytes)",
				 MO_MG_MAX_TOKEN);
		return false;
	}
	int64_t v;
	if (n >= 4 && x->p[2] == '(' && x->p[n - 1] == ')' &&
	    megatron_arith(g, x->p + 3, x->p + n - 1, &v)) {
		char num[24];
		int len = snprintf(num, sizeof num, "%lld", (long long)v);
		if (!megatron_append(g, x, num, (size_t)len, line, column))
			return false;
		for (size_t i = 0; i < n + 1; i++)
			megatron_advance(x);
		return true;
	}
	return megatron_copy(g, x, n + 1, line, column);
}

/* `command` (backquotes, the older spelling of `$(command)`): kept as
 * `$(command)`, so a flag that needs its value says it is the shell's,
 * and the blanks and quotes inside stay in the one word. */
static bool megatron_backquoted(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column;
	size_t n = 1;
	while (x->p + n < x->end && x->p[n] != '`' && n <= MO_MG_MAX_TOKEN)
		n += x->p[n] == '\\' && x->p + n + 1 < x->end ? 2 : 1;
	if (x->p + n >= x->end || n > MO_MG_MAX_TOKEN) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			      "a '`' without its closing '`' (within %d bytes)",
			      MO_MG_MAX_TOKEN);
		return false;
	}
	if (!megatron_append(g, x, "$(", 2, line, column))
		return false;
	megatron_advance(x);
	if (!megatron_copy(g, x, n - 1, line, column))
		return false;
	megatron_advance(x);
	return megatron_append(g, x, ")", 1, line, column);
}

/* The default of `${NAME:-default}`, the lexer after `:-`. */
static bool megatron_default(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x, int line,
				int column)
{
	if (++x->depth > MO_MG_MAX_DEPTH) {
		megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "defaults nested more than %d deep",
				 MO_MG_MAX_DEPTH);
		return false;
	}
	bool ok = true;
	while (ok && x->p < x->end && *x->p != '}') {
		char c = *x->p;
		if (c == '"' || c == '\'')
			ok = megatron_quoted(g, x);
		else if (c == '$')
			ok = megatron_dollar(g, x);
		else {
			if (c == '\\' && x->p + 1 < x->end)
				megatron_advance(x);
			ok = megatron_copy(g, x, 1, line, column);
		}
	}
	x->depth--;
	if (ok && x->p >= x->end) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL, "a '${' without its '}'");
		return false;
	}
	if (ok)
		megatron_advance(x);
	return ok;
}

static bool megatron_unsupported(struct mo_megatron_import *g, int line,
				    int column)
{
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			 "an expansion this reader does not model: it reads "
			 "$NAME, ${NAME}, ${NAME:-default} and ${NAME[@]} as "
			 "a whole word (it is not a shell)");
	return false;
}

/* `${#NAME[@]}`: the element count of an array the script assigns (a host
 * list's length as the node count); any other length is not modelled. */
static bool megatron_length(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
			    int line, int column)
{
	const char *name = x->p + 3;
	size_t n = megatron_name_len(name, x->end);
	const struct mo_megatron_var *v = n ? megatron_var_find(g, name, n) : NULL;
	if (!v || !v->array || (size_t)(x->end - (name + n)) < 4 ||
	    memcmp(name + n, "[@]}", 4) != 0)
		return megatron_unsupported(g, line, column);
	char count[24];
	int len = snprintf(count, sizeof count, "%zu", v->items.n);
	for (size_t i = 0; i < n + 7; i++)
		megatron_advance(x);
	return megatron_append(g, x, count, (size_t)len, line, column);
}

/* `${NAME[@]}` (or `[*]`) where the shell makes one text of it: an assignment's value
 * (`CMD="python pretrain_gpt.py ${ARGS[@]}"`, bash(1), Arrays: "${name[@]}" expands each
 * element to a separate word, and an assignment does no word splitting, so the words are
 * joined by a blank) and a here-document's body. An array the script assigns gives its
 * words joined by blanks; a text, the text; a name it does not assign stays as written (the
 * environment's). q is on the `[`. */
static bool megatron_join_array(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
				const struct mo_megatron_var *v, size_t n, int line, int column)
{
	size_t whole = n + 6; /* ${ NAME [@] } */
	if (!v)
		return megatron_copy(g, x, whole, line, column);
	for (size_t i = 0; i < whole; i++)
		megatron_advance(x);
	if (!v->array)
		return megatron_append(g, x, v->value, strlen(v->value), line, column);
	for (size_t i = 0; i < v->items.n; i++) {
		const char *t = v->items.v[i].text;
		if ((i && !megatron_append(g, x, " ", 1, line, column)) ||
		    !megatron_append(g, x, t, strlen(t), line, column))
			return false;
	}
	return true;
}

/* `${...}`, the lexer on the `$`. */
static bool megatron_braced(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column;
	if (x->p + 2 < x->end && x->p[2] == '#')
		return megatron_length(g, x, line, column);
	const char *name = x->p + 2;
	size_t n = megatron_name_len(name, x->end);
	if (n == 0)
		while (name + n < x->end && name[n] >= '0' && name[n] <= '9')
			n++; /* a positional parameter */
	const char *q = name + n;
	if (n == 0 || q >= x->end)
		return megatron_unsupported(g, line, column);
	const struct mo_megatron_var *v = megatron_var_find(g, name, n);
	if (v && v->array && *q != '[' && *q != '}')
		goto array;
	if (*q == '}') {
		if (!v) /* not assigned here: as written */
			return megatron_copy(g, x, n + 3, line, column);
		for (size_t i = 0; i < n + 3; i++)
			megatron_advance(x);
		return megatron_append_value(g, x, v, line, column);
	}
	if (*q == '[') {
		/* `${NAME[0]}`, one element (a host list's first address):
		 * kept as written, a value a flag that needs it names as the
		 * shell's */
		const char *r = q + 1;
		while (r < x->end && *r >= '0' && *r <= '9')
			r++;
		if (r > q + 1 && r + 1 < x->end && r[0] == ']' && r[1] == '}')
			return megatron_copy(g, x, (size_t)(r + 2 - x->p), line, column);
		if (x->join_arrays && x->end - q >= 4 && (q[1] == '@' || q[1] == '*') &&
		    q[2] == ']' && q[3] == '}')
			return megatron_join_array(g, x, v, n, line, column);
		goto array;
	}
	if (*q != ':' || q + 1 >= x->end || q[1] != '-')
		return megatron_unsupported(g, line, column);
	for (size_t i = 0; i < n + 4; i++)
		megatron_advance(x);
	size_t mark = x->word.len;
	if (!megatron_default(g, x, line, column))
		return false;
	if (v && v->value[0]) { /* set, not empty: its value */
		x->word.len = mark;
		return megatron_append_value(g, x, v, line, column);
	}
	return true;
array:
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			 "an array here: this reader expands ${NAME[@]} as a "
			 "whole word only (it is not a shell)");
	return false;
}

/* One expansion, the lexer on its `$`. */
static bool megatron_dollar(struct mo_megatron_import *g,
			       struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column;
	const char *p = x->p + 1;
	if (p >= x->end)
		return megatron_copy(g, x, 1, line, column);
	if (*p == '(')
		return megatron_substitution(g, x);
	if (*p == '{')
		return megatron_braced(g, x);
	size_t n = megatron_name_len(p, x->end);
	if (n == 0) /* $1, $@, $$: kept as written; a lone `$` is itself */
		return megatron_copy(g, x,
					strchr("0123456789@*#?!$-", *p) ? 2 : 1,
					line, column);
	const struct mo_megatron_var *v = megatron_var_find(g, p, n);
	if (!v) /* not assigned here (the environment): as written */
		return megatron_copy(g, x, n + 1, line, column);
	for (size_t i = 0; i < n + 1; i++)
		megatron_advance(x);
	return megatron_append_value(g, x, v, line, column);
}

/* Does a word end at q (the text ends, a blank or an operator)? A `\` before a newline is
 * a line continuation, removed before the words are split (bash(1), QUOTING: "a non-quoted
 * backslash-newline pair ... is removed from the input stream"): the word ends there when
 * what follows the newline does (MindSpeed-LLM's tests/st/shell_scripts/
 * qwen3_30b_tp4_cp2_ep2.sh:139 at c77308a1, `  ${OPTIMIZE_ARGS[@]}\` and the next line
 * indented). */
static bool megatron_word_ends(const char *q, const char *end)
{
	while (end - q >= 2 && q[0] == '\\' && q[1] == '\n')
		q += 2;
	return q >= end || strchr(" \t\r\n)|;&<>", *q);
}

/* Is the text at x->p a whole word `${NAME[@]}` or `"${NAME[@]}"`? Then
 * x->splice is the array (NULL: not one the script assigns, a warning),
 * the lexer past it, and 2. 0: not such a word; -1: an error. */
static int megatron_splice(struct mo_megatron_import *g,
			      struct mo_megatron_lexer *x)
{
	if (x->join_arrays)
		return 0; /* one text: megatron_join_array */
	const char *p = x->p;
	bool quoted = p < x->end && *p == '"';
	p += quoted;
	if (x->end - p < 2 || p[0] != '$' || p[1] != '{')
		return 0;
	size_t n = megatron_name_len(p + 2, x->end);
	const char *q = p + 2 + n;
	if (n == 0 || x->end - q < 4 || memcmp(q, "[@]}", 4) != 0)
		return 0;
	q += 4;
	if (quoted && (q >= x->end || *q++ != '"'))
		return 0;
	if (!megatron_word_ends(q, x->end))
		return 0;
	x->splice = megatron_var_find(g, p + 2, n);
	if (x->splice && !x->splice->array) {
		/* the shell gives a text's ${NAME[@]} as the text itself */
		const struct mo_megatron_var *v = x->splice;
		size_t len = (size_t)(q - x->p);
		x->splice = NULL;
		for (size_t i = 0; i < len; i++)
			megatron_advance(x);
		x->split = !quoted;
		return megatron_append(g, x, v->value, strlen(v->value),
					  x->line, x->column)
			   ? 1
			   : -1;
	}
	if (!x->splice)
		megatron_diag(
		    g, MO_SEV_WARNING, "megatron-script", x->line, x->column,
		    NULL,
		    "%.*s is not an array this script assigns (outside "
		    "an if): it expands to nothing",
		    (int)n, p + 2);
	size_t len = (size_t)(q - x->p);
	for (size_t i = 0; i < len; i++)
		megatron_advance(x);
	x->splice_quoted = quoted;
	return 2;
}

static bool megatron_words_push(struct mo_megatron_import *g,
				   struct mo_megatron_words *w,
				   const char *text, size_t len, int line,
				   int column)
{
	if (w->n == MO_MG_MAX_ARGS) {
		megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "more than %d words in one array or command",
				 MO_MG_MAX_ARGS);
		return false;
	}
	if (w->n == w->cap) {
		size_t n = w->cap ? w->cap * 2 : 64;
		struct megatron_word *v =
		    arena_alloc(g->arena, n * sizeof(*v));
		if (!v) {
			megatron_fail(g, MO_ERR_NOMEM, line, column,
					 "out of memory");
			return false;
		}
		if (w->n)
			memcpy(v, w->v, w->n * sizeof(*v));
		w->v = v;
		w->cap = n;
	}
	char *copy = arena_strndup(g->arena, text, len);
	if (!copy) {
		megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return false;
	}
	w->v[w->n++] = (struct megatron_word){copy, line, column};
	return true;
}

/* A word the shell splits at blanks (an unquoted expansion): its fields,
 * each at the word's place. */
static bool megatron_push_fields(struct mo_megatron_import *g,
				    struct mo_megatron_words *w, const char *t,
				    size_t n, int line, int column)
{
	for (size_t k = 0; k < n;) {
		while (k < n && strchr(" \t\n", t[k]))
			k++;
		size_t len = 0;
		while (k + len < n && !strchr(" \t\n", t[k + len]))
			len++;
		if (len && !megatron_words_push(g, w, t + k, len, line, column))
			return false;
		k += len;
	}
	return true;
}

/* An array's words where a ${NAME[@]} stands: each as written; unquoted,
 * each split at blanks as the shell does ("--fp8-format hybrid" is two). */
static bool megatron_push_splice(struct mo_megatron_import *g,
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
		megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "more than %d words in one array or command",
				 MO_MG_MAX_ARGS);
		return false;
	}
	if (!megatron_budget(g, bytes, line, column))
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct megatron_word *it = &items->v[i];
		const char *t = it->text;
		if (x->splice_quoted) {
			if (!megatron_words_push(g, w, t, strlen(t),
						    it->line, it->column))
				return false;
			continue;
		}
		for (size_t k = 0; t[k];) {
			size_t blank = strspn(t + k, " \t\n");
			k += blank;
			size_t len = strcspn(t + k, " \t\n");
			if (len &&
			    !megatron_words_push(g, w, t + k, len, it->line,
						    it->column + (int)k))
				return false;
			k += len;
		}
	}
	return true;
}

/* Words up to the end of the statement (or an array's `)`) into w. */
static int megatron_script_words(struct mo_megatron_import *g,
				    struct mo_megatron_lexer *x,
				    struct mo_megatron_words *w)
{
	int line = 0, column = 0, rc;
	while ((rc = megatron_word(g, x, &line, &column)) > 0) {
		const char *t = x->word.data ? x->word.data : "";
		bool ok = rc == 2    ? megatron_push_splice(g, w, x, line, column)
			  : x->split ? megatron_push_fields(g, w, t, x->word.len,
							       line, column)
				     : megatron_words_push(g, w, t, x->word.len,
							      line, column);
		if (!ok)
			return -1;
	}
	return rc;
}

static bool megatron_script_error(struct mo_megatron_import *g,
				     const struct mo_megatron_lexer *x,
				     const char *what)
{
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", x->line, x->column,
			 NULL, "%s (this reader is not a shell)", what);
	return false;
}

static bool megatron_at_keyword(const struct mo_megatron_lexer *x,
				   const char *keyword)
{
	size_t n = strlen(keyword);
	return (size_t)(x->end - x->p) >= n && memcmp(x->p, keyword, n) == 0 &&
	       (x->p + n == x->end || strchr(" \t\r\n;", x->p[n]));
}

/* After a statement: blanks, a comment, then the line's end or a `;`. */
static bool megatron_statement_end(struct mo_megatron_import *g,
				      struct mo_megatron_lexer *x)
{
	megatron_skip_blanks(x);
	if (x->p >= x->end || *x->p == '\n' || *x->p == ';')
		return true;
	return megatron_script_error(g, x, "more text after an array");
}

static struct mo_megatron_var *megatron_var_add(struct mo_megatron_import *g,
						   const char *name, size_t n,
						   int line, int column)
{
	struct mo_megatron_var *v = megatron_var_find(g, name, n);
	if (v)
		return v;
	if (g->n_vars == MO_MG_MAX_VARS) {
		megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
				 "more than %d variables", MO_MG_MAX_VARS);
		return NULL;
	}
	v = &g->vars[g->n_vars];
	*v = (struct mo_megatron_var){
	    .name = arena_strndup(g->arena, name, n), .value = ""};
	if (!v->name) {
		megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return NULL;
	}
	g->n_vars++;
	return v;
}

/* `NAME=( words )` or `NAME+=( words )`, the lexer on the `(`. */
static bool megatron_array(struct mo_megatron_import *g,
			      struct mo_megatron_lexer *x, const char *name,
			      size_t n, bool append)
{
	int line = x->line, column = x->column;
	struct mo_megatron_words items = {0};
	if (append)
		items = megatron_var_find(g, name, n)->items;
	megatron_advance(x);
	x->in_array = true;
	int rc = megatron_script_words(g, x, &items);
	x->in_array = false;
	if (rc < 0)
		return false;
	if (x->p >= x->end || *x->p != ')') {
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL, "an array without its ')'");
		return false;
	}
	megatron_advance(x);
	struct mo_megatron_var *v =
	    megatron_var_add(g, name, n, line, column);
	if (!v)
		return false;
	v->array = true;
	v->items = items;
	return megatron_statement_end(g, x);
}

/* `NAME=value`, `NAME+=value`, `NAME=( ... )`, `NAME+=( ... )`; the lexer on
 * NAME, n its length. */
static bool megatron_assignment(struct mo_megatron_import *g,
				   struct mo_megatron_lexer *x, size_t n)
{
	int line = x->line, column = x->column;
	const char *name = x->p;
	bool append = x->p[n] == '+';
	const struct mo_megatron_var *old = megatron_var_find(g, name, n);
	for (size_t i = 0; i < n + 1 + append; i++)
		megatron_advance(x);
	if (x->p < x->end && *x->p == '(')
		return megatron_array(g, x, name, n,
					 append && old && old->array);
	if (old && old->array)
		return megatron_script_error(g, x,
						"a text assigned to an array");
	int wl = 0, wc = 0, rc = 0;
	x->word.len = 0;
	x->join_arrays = true;
	if (x->p < x->end && !strchr(" \t\r\n;", *x->p))
		rc = megatron_word(g, x, &wl, &wc);
	x->join_arrays = false;
	if (rc < 0)
		return false;
	if (rc == 2) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", wl, wc,
				 NULL,
				 "an array assigned to a text (this reader is "
				 "not a shell)");
		return false;
	}
	size_t keep = append && old ? strlen(old->value) : 0;
	size_t add = rc == 1 ? x->word.len : 0;
	if (!megatron_budget(g, keep + add, line, column))
		return false;
	char *value = arena_alloc(g->arena, keep + add + 1);
	if (!value) {
		megatron_fail(g, MO_ERR_NOMEM, line, column,
				 "out of memory");
		return false;
	}
	if (keep)
		memcpy(value, old->value, keep);
	if (add)
		memcpy(value + keep, x->word.data, add);
	value[keep + add] = '\0';
	struct mo_megatron_var *v =
	    megatron_var_add(g, name, n, line, column);
	if (!v)
		return false;
	v->value = value;
	return true; /* what follows on the line is the next statement */
}

/* A line that opens a block closed by `close` (`fi`; `done` for the
 * loops). */
static bool megatron_at_opener(const struct mo_megatron_lexer *x, const char *close)
{
	if (strcmp(close, "fi") == 0)
		return megatron_at_keyword(x, "if");
	return megatron_at_keyword(x, "for") || megatron_at_keyword(x, "while") ||
	       megatron_at_keyword(x, "until");
}

/* `if ... fi`, `for / while / until ... done`: not evaluated; skipped
 * whole, with a warning. */
static bool megatron_skip_block(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
				const char *close)
{
	int line = x->line, column = x->column, depth = 0;
	bool loop = strcmp(close, "done") == 0;
	megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column,
			 NULL,
			 "a %s is not evaluated: its "
			 "assignments and commands are left out",
			 loop ? "loop (for / while ... done)"
			      : "conditional (if ... fi) whose condition this reader cannot decide");
	while (x->p < x->end) {
		while (x->p < x->end && strchr(" \t\r\n;", *x->p))
			megatron_advance(x);
		if (x->p < x->end && *x->p == '#') {
			megatron_next_line(x);
			continue;
		}
		if (megatron_at_opener(x, close))
			depth++;
		else if (megatron_at_keyword(x, close) && --depth == 0) {
			while (x->p < x->end && *x->p != '\n')
				megatron_advance(x);
			return true;
		}
		megatron_skip_segment(x);
	}
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
			 "%s without its '%s' at its own line's start",
			 loop ? "a loop" : "an 'if'", close);
	return false;
}

/* ---- conditionals ------------------------------------------------------
 * `if TEST [|| && TEST]...; then ... [elif ...; then ...] [else ...] fi`:
 * when every TEST that decides is `[[ A == B ]]`, `[ A = B ]`, `!=`,
 * `-z A`, `-n A` or `[ A ]` over texts the script knows (no `$` or
 * backquote left after expansion, no pattern on the right of `[[ == ]]`),
 * the branch bash would run is read as more of the script and the others
 * are left out; any other condition leaves the whole block out with a
 * warning (megatron_skip_block). Three-valued: 1 true, 0 false, -1 not
 * known; -2 an error (reported). */

static bool megatron_known_text(const char *s)
{
	return !strchr(s, '$') && !strchr(s, '`');
}

/* The unary string tests of bash's `test` a script's condition may use. */
/* The string operators of bash's `[ ]` / `[[ ]]` tests (bash(1) CONDITIONAL
 * EXPRESSIONS): unary -z / -n, binary = / == / !=; any other word is an
 * operand. */
enum megatron_test_op {
	MEGATRON_TEST_WORD,
	MEGATRON_TEST_EMPTY,
	MEGATRON_TEST_NONEMPTY,
	MEGATRON_TEST_EQUAL,
	MEGATRON_TEST_NOT_EQUAL
};

static enum megatron_test_op megatron_test_op_of(const char *word)
{
	static const struct {
		const char *word;
		enum megatron_test_op op;
	} ops[] = {{"-z", MEGATRON_TEST_EMPTY},
		   {"-n", MEGATRON_TEST_NONEMPTY},
		   {"=", MEGATRON_TEST_EQUAL},
		   {"==", MEGATRON_TEST_EQUAL},
		   {"!=", MEGATRON_TEST_NOT_EQUAL}};
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
		if (!strcmp(word, ops[i].word))
			return ops[i].op;
	return MEGATRON_TEST_WORD;
}

/* One `[[ ... ]]` / `[ ... ]` test. */
static int megatron_test(struct mo_megatron_import *g, struct mo_megatron_lexer *x)
{
	struct mo_megatron_words w = {0};
	if (megatron_script_words(g, x, &w) < 0)
		return -2;
	if (w.n < 2)
		return -1;
	const char *open = w.v[0].text, *close = w.v[w.n - 1].text;
	bool dbl = !strcmp(open, "[[") && !strcmp(close, "]]");
	if (!dbl && !(!strcmp(open, "[") && !strcmp(close, "]")))
		return -1;
	const struct megatron_word *a = w.v + 1;
	size_t k = w.n - 2;
	for (size_t i = 0; i < k; i++)
		if (!megatron_known_text(a[i].text))
			return -1;
	enum megatron_test_op op = megatron_test_op_of(a[0].text);
	if (k == 1 && (op == MEGATRON_TEST_EMPTY || op == MEGATRON_TEST_NONEMPTY))
		return op == MEGATRON_TEST_EMPTY; /* `-z ""`: the empty word went */
	if (k == 1)
		return a[0].text[0] != '\0';
	if (k == 2) {
		switch (op) {
		case MEGATRON_TEST_EMPTY:
			return a[1].text[0] == '\0';
		case MEGATRON_TEST_NONEMPTY:
			return a[1].text[0] != '\0';
		default:
			break;
		}
	}
	if (k != 3)
		return -1;
	enum megatron_test_op binary = megatron_test_op_of(a[1].text);
	if (binary != MEGATRON_TEST_EQUAL && binary != MEGATRON_TEST_NOT_EQUAL)
		return -1;
	if (dbl && strpbrk(a[2].text, "*?["))
		return -1; /* a pattern */
	/* the test's own meaning: its two operands, the script's texts, equal */
	bool same = strcmp(a[0].text, a[2].text) == 0;
	return same == (binary == MEGATRON_TEST_EQUAL);
}

static bool megatron_at_op(const struct mo_megatron_lexer *x, char c)
{
	return x->end - x->p >= 2 && x->p[0] == c && x->p[1] == c;
}

/* TEST { `||` | `&&` TEST }, left to right as bash runs them. */
static int megatron_condition(struct mo_megatron_import *g, struct mo_megatron_lexer *x)
{
	int value = megatron_test(g, x);
	while (value != -2) {
		megatron_skip_blanks(x);
		bool or = megatron_at_op(x, '|');
		if (!or && !megatron_at_op(x, '&'))
			break;
		megatron_advance(x);
		megatron_advance(x);
		int t = megatron_test(g, x);
		if (t == -2)
			return -2;
		if (or)
			value = value == 1 || t == 1 ? 1 : value == 0 ? t : -1;
		else
			value = value == 0 || t == 0 ? 0 : value == 1 ? t : -1;
	}
	return value;
}

/* Past `; then` / a line break then `then`. */
static bool megatron_then(struct mo_megatron_lexer *x)
{
	megatron_skip_blanks(x);
	if (x->p < x->end && *x->p == ';')
		megatron_advance(x);
	while (x->p < x->end && strchr(" \t\r\n", *x->p))
		megatron_advance(x);
	if (!megatron_at_keyword(x, "then"))
		return false;
	for (int i = 0; i < 4; i++)
		megatron_advance(x);
	return true;
}

/* To the next line. */
static void megatron_next_line(struct mo_megatron_lexer *x)
{
	while (x->p < x->end && *x->p != '\n')
		if (!(*x->p == '\\' && megatron_continuation(x)))
			megatron_advance(x);
	if (x->p < x->end)
		megatron_advance(x);
}

/* Past one command of a branch not run: to the next `;` or line break
 * outside quotes (`if ...; then X=1; fi` on one line has three). */
static void megatron_skip_segment(struct mo_megatron_lexer *x)
{
	while (x->p < x->end && *x->p != '\n' && *x->p != ';') {
		char q = *x->p;
		if (q == '\\' && megatron_continuation(x))
			continue;
		megatron_advance(x);
		if (q == '\\' && x->p < x->end) {
			megatron_advance(x);
		} else if (q == '\'' || q == '"') {
			while (x->p < x->end && *x->p != q) {
				if (q == '"' && *x->p == '\\' && x->p + 1 < x->end)
					megatron_advance(x);
				megatron_advance(x);
			}
			if (x->p < x->end)
				megatron_advance(x);
		}
	}
}

/* The statements of one branch, read (run) or passed over, up to its
 * `elif`, `else` or `fi` at a line's start; false on an error or the
 * text's end (reported at the `if`). */
static bool megatron_branch(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
			    struct mo_megatron_words *launch, bool run, int line, int column)
{
	int depth = 0;
	for (;;) {
		while (x->p < x->end && strchr(" \t\r\n;", *x->p))
			megatron_advance(x);
		if (x->p < x->end && *x->p == '#') {
			megatron_next_line(x);
			continue;
		}
		if (x->p >= x->end) {
			megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
				      "an 'if' without its 'fi' at its own line's start");
			return false;
		}
		if (depth == 0 && (megatron_at_keyword(x, "elif") || megatron_at_keyword(x, "else") ||
				   megatron_at_keyword(x, "fi")))
			return true;
		if (run) {
			if (!megatron_statement(g, x, launch))
				return false;
			if (g->exited)
				return true;
			continue;
		}
		depth += megatron_at_keyword(x, "if");
		depth -= depth > 0 && megatron_at_keyword(x, "fi");
		megatron_skip_segment(x);
	}
}

/* An `if` block: the branch its conditions choose, or the whole block
 * left out when they cannot be decided. */
static bool megatron_if(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
			struct mo_megatron_words *launch)
{
	struct mo_megatron_lexer at = *x;
	int line = x->line, column = x->column;
	if (g->if_depth >= MO_MG_MAX_IF_DEPTH)
		return megatron_skip_block(g, x, "fi");
	bool taken = false;
	size_t skip = 2; /* "if", then "elif" */
	for (;;) {
		for (size_t i = 0; i < skip; i++)
			megatron_advance(x);
		int c = taken ? 0 : megatron_condition(g, x);
		if (c == -2)
			return false;
		if ((c < 0 || !megatron_then(x)) && !taken) {
			x->p = at.p, x->line = at.line, x->column = at.column;
			return megatron_skip_block(g, x, "fi");
		}
		if (taken) /* a later condition is not run: past its `then` */
			while (x->p < x->end &&
			       !(strchr(" \t\n;", x->p[-1]) && megatron_at_keyword(x, "then")))
				megatron_advance(x);
		if (taken && x->p < x->end)
			for (int i = 0; i < 4; i++)
				megatron_advance(x);
		g->if_depth++;
		bool ok = megatron_branch(g, x, launch, c == 1, line, column);
		g->if_depth--;
		if (!ok || g->exited)
			return ok;
		taken |= c == 1;
		skip = 4;
		if (megatron_at_keyword(x, "elif"))
			continue;
		if (megatron_at_keyword(x, "else")) {
			for (int i = 0; i < 4; i++)
				megatron_advance(x);
			g->if_depth++;
			ok = megatron_branch(g, x, launch, !taken, line, column);
			g->if_depth--;
			if (!ok || g->exited)
				return ok;
		}
		if (!megatron_at_keyword(x, "fi")) {
			megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
				      "an 'if' with a second 'else'");
			return false;
		}
		megatron_next_line(x);
		return true;
	}
}

enum megatron_command megatron_command_of(const char *w, size_t n)
{
	static const struct {
		const char *word;
		enum megatron_command kind;
	} commands[] = {{"torchrun", MEGATRON_CMD_LAUNCHER}, {"python", MEGATRON_CMD_LAUNCHER},
			{"python3", MEGATRON_CMD_LAUNCHER},  {"deepspeed", MEGATRON_CMD_LAUNCHER},
			{"srun", MEGATRON_CMD_SRUN},	     {"exec", MEGATRON_CMD_EXEC},
			{"exit", MEGATRON_CMD_EXIT},	     {"unset", MEGATRON_CMD_UNSET},
			{"source", MEGATRON_CMD_SOURCE},     {".", MEGATRON_CMD_SOURCE},
			{"sh", MEGATRON_CMD_SHELL},	     {"bash", MEGATRON_CMD_SHELL},
			{"/bin/sh", MEGATRON_CMD_SHELL},     {"/bin/bash", MEGATRON_CMD_SHELL},
			{"sbatch", MEGATRON_CMD_SBATCH}};
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (strlen(commands[i].word) == n && memcmp(w, commands[i].word, n) == 0)
			return commands[i].kind;
	return MEGATRON_CMD_OTHER;
}

static enum megatron_command megatron_command_word(const char *word)
{
	return megatron_command_of(word, strlen(word));
}

static bool megatron_is_launcher(const struct mo_megatron_words *w)
{
	if (w->n && megatron_command_word(w->v[0].text) == MEGATRON_CMD_LAUNCHER)
		return true;
	for (size_t i = 0; i < w->n; i++)
		if (megatron_ends_with(w->v[i].text, ".py"))
			return true;
	return false;
}

static bool megatron_command(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x,
				struct mo_megatron_words *launch);
static bool megatron_statements(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
				struct mo_megatron_words *launch);

/* The index of the text `sh -c TEXT` / `bash -x -c TEXT` runs among the words after srun's
 * options, or 0 when the command srun runs is not a shell. */
static size_t megatron_shell_text(const struct mo_megatron_words *w)
{
	for (size_t i = 1; i < w->n; i++) {
		if (megatron_command_word(w->v[i].text) != MEGATRON_CMD_SHELL)
			continue;
		/* the shell's own options up to -c (or a cluster ending in c: -xc) */
		for (size_t j = i + 1; j + 1 < w->n && w->v[j].text[0] == '-'; j++) {
			const char *o = w->v[j].text;
			if (o[1] != '-' && o[strlen(o) - 1] == 'c')
				return j + 1;
		}
		return 0;
	}
	return 0;
}

static bool megatron_read_text(struct mo_megatron_import *g, const char *t, size_t len, int line,
			       int column, struct mo_megatron_words *launch);

/* `srun [options] COMMAND`: SLURM runs COMMAND once per task. The counts among its options
 * give the device count (megatron_slurm.c); COMMAND is the launch (`python pretrain_gpt.py
 * ...`), or a shell running a text (`sh -c "${run_cmd}"`, Megatron-LM's GPT-3 175B example),
 * which is read as more of the script at the srun statement's position. */
static bool megatron_srun(struct mo_megatron_import *g, struct mo_megatron_words *w,
			  struct mo_megatron_words *launch)
{
	size_t text = megatron_shell_text(w);
	size_t end = w->n;
	for (size_t i = 1; i < w->n; i++)
		if (megatron_ends_with(w->v[i].text, ".py")) {
			end = i;
			break;
		}
	megatron_read_srun(g, w->v, text ? text : end);
	g->srun_launch = true;
	if (!text) {
		if (end == w->n) {
			megatron_diag(g, MO_SEV_ERROR, "megatron-script", w->v[0].line,
				      w->v[0].column, NULL,
				      "srun runs no Python script or shell text here: this reader "
				      "reads `srun ... python pretrain_gpt.py ...` and `srun ... sh -c "
				      "TEXT`");
			return false;
		}
		if (launch->v) {
			megatron_diag(g, MO_SEV_ERROR, "megatron-script", w->v[0].line,
				      w->v[0].column, NULL, "a second launch command (the first is at %d:%d)",
				      launch->v[0].line, launch->v[0].column);
			return false;
		}
		*launch = *w; /* srun's words stay before the script: not Megatron's */
		return true;
	}
	const struct megatron_word *t = &w->v[text];
	return megatron_read_text(g, t->text, strlen(t->text), t->line, t->column, launch);
}

/* ---- what follows a command's words ------------------------------------
 * `cmd || { ...; }`, `cmd || other`: the alternative runs only when cmd fails; this reader
 * takes the commands it does not run to succeed (they do not change the arguments), so the
 * alternative is left out, read past to its end. `cmd && next`: next is read as the next
 * statement. `cmd <<EOF ... EOF`: a here-document, its body the lines after the command's
 * up to the delimiter's line (bash(1), Here Documents). `| tee log`, `2>&1`, `> file`: not
 * arguments, read past to the end of the command. */

#define MO_MG_MAX_DELIMITER 64 /* bytes in a here-document's delimiter */

/* A here-document: its body as written, whether it expands (an unquoted delimiter) and
 * where its `<<` is. */
struct megatron_heredoc {
	const char *body;
	size_t len;
	bool expand;
	int line, column;
};

/* Past a quoted string, the lexer on its quote (the shell's quoting, not read). */
static void megatron_pass_quoted(struct mo_megatron_lexer *x)
{
	char q = *x->p;
	megatron_advance(x);
	while (x->p < x->end && *x->p != q) {
		if (q == '"' && *x->p == '\\' && x->p + 1 < x->end)
			megatron_advance(x);
		megatron_advance(x);
	}
	if (x->p < x->end)
		megatron_advance(x);
}

/* `{ ...; }` left out, the lexer on the `{`: to its matching `}` outside quotes (a `${X}`
 * inside holds one of each). */
static bool megatron_pass_group(struct mo_megatron_import *g, struct mo_megatron_lexer *x)
{
	int line = x->line, column = x->column;
	size_t depth = 0;
	while (x->p < x->end) {
		char c = *x->p;
		if (c == '\'' || c == '"') {
			megatron_pass_quoted(x);
			continue;
		}
		if (c == '\\' && x->p + 1 < x->end)
			megatron_advance(x);
		else if (c == '#' && (x->p[-1] == ' ' || x->p[-1] == '\t' || x->p[-1] == '\n')) {
			while (x->p < x->end && *x->p != '\n')
				megatron_advance(x);
			continue;
		}
		depth += c == '{';
		depth -= c == '}';
		megatron_advance(x);
		if (depth == 0)
			return true;
	}
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
		      "a '{' group without its '}'");
	return false;
}

/* The delimiter word after `<<` / `<<-`: its text unquoted into d (NUL-terminated), and
 * whether any of it was quoted (then the body does not expand). */
static bool megatron_delimiter(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
			       char d[MO_MG_MAX_DELIMITER + 1], bool *quoted)
{
	int line = x->line, column = x->column;
	size_t n = 0;
	*quoted = false;
	while (x->p < x->end && !strchr(" \t\r\n;|&<>()", *x->p)) {
		char c = *x->p;
		if (c == '\'' || c == '"') {
			*quoted = true;
			megatron_advance(x);
			while (x->p < x->end && *x->p != c && *x->p != '\n' &&
			       n < MO_MG_MAX_DELIMITER) {
				d[n++] = *x->p;
				megatron_advance(x);
			}
			if (x->p >= x->end || *x->p != c)
				break;
			megatron_advance(x);
			continue;
		}
		if (c == '\\') {
			*quoted = true;
			megatron_advance(x);
			continue;
		}
		if (n == MO_MG_MAX_DELIMITER || c == '$' || c == '`')
			break;
		d[n++] = c;
		megatron_advance(x);
	}
	d[n] = '\0';
	if (n && (x->p >= x->end || strchr(" \t\r\n;|&<>()", *x->p)))
		return true;
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
		      "a here-document delimiter this reader does not read (a word of at most %d "
		      "bytes, without expansions)",
		      MO_MG_MAX_DELIMITER);
	return false;
}

/* `<<WORD` / `<<-WORD`, the lexer on the `<<`: the rest of the line is left out, the body
 * is the lines after it up to the one that is WORD (with `<<-`, leading tabs stripped),
 * and the lexer goes past that line. */
static bool megatron_heredoc(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
			     struct megatron_heredoc *doc)
{
	char d[MO_MG_MAX_DELIMITER + 1];
	bool quoted;
	doc->line = x->line;
	doc->column = x->column;
	megatron_advance(x);
	megatron_advance(x);
	bool tabs = x->p < x->end && *x->p == '-';
	if (tabs)
		megatron_advance(x);
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
		megatron_advance(x);
	if (!megatron_delimiter(g, x, d, &quoted))
		return false;
	doc->expand = !quoted;
	/* the rest of the line is not read; a second here-document on it would take the
	 * lines after the first's */
	while (x->p < x->end && *x->p != '\n') {
		if (*x->p == '\'' || *x->p == '"') {
			megatron_pass_quoted(x);
			continue;
		}
		if (x->end - x->p >= 2 && x->p[0] == '<' && x->p[1] == '<')
			return megatron_script_error(g, x, "a second here-document on one line");
		megatron_advance(x);
	}
	megatron_next_line(x);
	size_t dl = strlen(d);
	doc->body = x->p;
	while (x->p < x->end) {
		const char *s = x->p;
		while (tabs && s < x->end && *s == '\t')
			s++;
		const char *eol = memchr(s, '\n', (size_t)(x->end - s));
		const char *e = eol ? eol : x->end;
		size_t n = (size_t)(e - s) - (e > s && e[-1] == '\r');
		if (n == dl && memcmp(s, d, dl) == 0) {
			doc->len = (size_t)(x->p - doc->body);
			while (x->p < e)
				megatron_advance(x);
			return true;
		}
		while (x->p < e)
			megatron_advance(x);
		if (x->p < x->end)
			megatron_advance(x);
	}
	megatron_diag(g, MO_SEV_ERROR, "megatron-script", doc->line, doc->column, NULL,
		      "a here-document without its '%s' line", d);
	return false;
}

/* What follows a command's words, up to the end of the command (the lexer then on its `;`,
 * its line's end, or the start of the command after `&&`). */
static bool megatron_command_tail(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
				  struct megatron_heredoc *doc)
{
	while (x->p < x->end && *x->p != '\n' && *x->p != ';') {
		char c = *x->p;
		bool twice = x->p + 1 < x->end && x->p[1] == c;
		if (c == '\\' && megatron_continuation(x))
			continue;
		if (c == '&' && twice) {
			megatron_advance(x);
			megatron_advance(x);
			megatron_skip_blanks(x);
			if (x->p < x->end && *x->p == '{')
				return megatron_script_error(
				    g, x, "a '{' group after '&&' is not read");
			return true;
		}
		if (c == '|' && twice) {
			megatron_advance(x);
			megatron_advance(x);
			megatron_skip_blanks(x);
			if (x->p < x->end && *x->p == '{') {
				if (!megatron_pass_group(g, x))
					return false;
			} else {
				megatron_skip_segment(x);
			}
			continue;
		}
		if (c == '<' && twice && !(x->p + 2 < x->end && x->p[2] == '<'))
			return megatron_heredoc(g, x, doc);
		if (c == '\'' || c == '"') {
			megatron_pass_quoted(x);
			continue;
		}
		if (c == '\\' && x->p + 1 < x->end)
			megatron_advance(x);
		megatron_advance(x);
	}
	return true;
}

/* ---- commands ------------------------------------------------------------ */

/* A command that runs its here-document as a script: `sbatch <<EOF` (the batch script),
 * `bash <<EOF`, `sh <<EOF`, with options only (no script file). */
static bool megatron_runs_heredoc(const struct mo_megatron_words *w)
{
	enum megatron_command kind = megatron_command_word(w->v[0].text);
	if (kind == MEGATRON_CMD_SBATCH)
		return true;
	if (kind != MEGATRON_CMD_SHELL)
		return false;
	for (size_t i = 1; i < w->n; i++)
		if (w->v[i].text[0] != '-')
			return false;
	return true;
}

/* A text the script's shell hands to another shell (`bash -c TEXT`, a batch script): read as
 * more of the script, every position the one at (line, column); its `exit` ends it only. */
static bool megatron_read_text(struct mo_megatron_import *g, const char *t, size_t len, int line,
			       int column, struct mo_megatron_words *launch)
{
	if (g->sh_depth >= MO_MG_MAX_SOURCE_DEPTH) {
		megatron_diag(g, MO_SEV_ERROR, "limit", line, column, NULL,
			      "shell texts run by shell texts more than %d deep",
			      MO_MG_MAX_SOURCE_DEPTH);
		return false;
	}
	struct mo_megatron_lexer x = {.p = t, .end = t + len, .line = line, .column = column,
				      .script = true, .pinned = true};
	g->sh_depth++;
	buf_init(&x.word, MO_MG_MAX_TOKEN + 8);
	bool ok = megatron_statements(g, &x, launch);
	buf_free(&x.word);
	g->sh_depth--;
	g->exited = false;
	return ok;
}

/* A here-document's body as the shell gives it to the command: with an unquoted delimiter
 * `$` expansions and backquotes expand (arrays joined by blanks), `\` keeps `$`, `` ` ``
 * and `\` and joins lines, quotes are plain characters (bash(1), Here Documents). The
 * result in out (at most the body plus the expansion budget). */
static bool megatron_heredoc_text(struct mo_megatron_import *g, const struct megatron_heredoc *doc,
				  mo_buf *out)
{
	struct mo_megatron_lexer x = {.p = doc->body, .end = doc->body + doc->len,
				      .line = doc->line, .column = doc->column, .script = true,
				      .pinned = true, .join_arrays = true};
	bool ok = true;
	buf_init(&x.word, doc->len + MO_MG_MAX_EXPANDED + 8);
	while (ok && x.p < x.end) {
		char c = *x.p;
		if (c == '\\' && x.p + 1 < x.end && strchr("$`\\\n", x.p[1])) {
			megatron_advance(&x);
			if (*x.p != '\n')
				buf_append(&x.word, x.p, 1);
			megatron_advance(&x);
		} else if (c == '$') {
			ok = megatron_dollar(g, &x);
		} else if (c == '`') {
			ok = megatron_backquoted(g, &x);
		} else {
			buf_append(&x.word, x.p, 1);
			megatron_advance(&x);
		}
	}
	if (ok && x.word.failed) {
		megatron_fail(g, MO_ERR_NOMEM, doc->line, doc->column, "out of memory");
		ok = false;
	}
	*out = x.word;
	return ok;
}

/* `sbatch [options] <<EOF` (or `bash <<EOF`): the body is the script SLURM (the shell) runs,
 * read as more of this one at the `<<`; sbatch's options count as its directives. */
static bool megatron_batch(struct mo_megatron_import *g, const struct mo_megatron_words *w,
			   const struct megatron_heredoc *doc, struct mo_megatron_words *launch)
{
	if (megatron_command_of(w->v[0].text, strlen(w->v[0].text)) == MEGATRON_CMD_SBATCH)
		megatron_read_sbatch_options(g, w->v + 1, w->n - 1);
	if (!doc->expand)
		return megatron_read_text(g, doc->body, doc->len, doc->line, doc->column, launch);
	mo_buf text;
	bool ok = megatron_heredoc_text(g, doc, &text);
	if (ok)
		ok = megatron_read_text(g, text.data ? text.data : "", text.len, doc->line,
					doc->column, launch);
	buf_free(&text);
	return ok;
}

/* Commands the reader reads past: they do not change the arguments. Besides the shell's
 * own `echo` / `set` / `cd`, programs that change files or packages (`mkdir`, `rm -rf
 * /root/.cache`, `cp $training_file $training_file.back`, `mv`, `sed -i ... training.py`,
 * `pip install transformers==5.8.1`: MindSpeed-LLM's CI scripts at c77308a1, e.g.
 * tests/pipeline/st/qwen3-next/qwen3_next_80b_4K_A3_ptd.sh:7,
 * tests/pipeline/st/high_availability/high_availability_error_dump_ptd.sh:24-39): each runs
 * in a child process, which cannot set this shell's variables (bash(1), COMMAND EXECUTION
 * ENVIRONMENT), so the launch's words are the same whether it ran or not. `trap TEXT EXIT`
 * only keeps TEXT, run when the shell exits or is signalled (bash(1), SHELL BUILTIN
 * COMMANDS, trap), after the launch (tests/pipeline/st/deepseek4-flash/
 * pretrain_deepseek4_flash_1k_fsdp2.sh:29-33: `pip install` back the transformers it changed). */
static bool megatron_not_run(const char *word)
{
	static const char *const passed[] = {"mkdir", "echo", "set", "cd",    "git",  "rm",
					     "cp",    "mv",   "sed", "touch", "pip",  "pip3",
					     "sleep", "wait", "kill", "chmod", "ln",   "trap"};
	for (size_t i = 0; i < sizeof passed / sizeof *passed; i++)
		if (!strcmp(word, passed[i]))
			return true;
	return false;
}

/* `python -c "import mindspeed; ...GMMOpBuilder().load()" &` (tests/pipeline/st/deepseek3/
 * deepseek_v3_mcore_tp2_pp2_ep2_dualpipev_fb.sh:10-14 at c77308a1: kernels built before the
 * launch): Python runs the text given with -c (python(1), -c command), not a script file. */
static bool megatron_python_text(const struct mo_megatron_words *w)
{
	return w->n > 1 && (!strcmp(w->v[0].text, "python") || !strcmp(w->v[0].text, "python3")) &&
	       !strcmp(w->v[1].text, "-c");
}

/* MindSpeed-LLM's checkpoint conversion and data preprocessing programs (convert_ckpt.py,
 * convert_ckpt_v2.py, mindspeed_llm/tasks/checkpoint/convert_ckpt_*.py,
 * mindspeed_llm/tasks/posttrain/ldt_sft/convert_ckpt_pp_vpp.py, preprocess_data.py at
 * c77308a1): a CI script runs them before its training (tests/pipeline/st/qwen3-30b/
 * tune_qwen3_30b_a3b_4K_full_ptd_tp4_pp2_ep1.sh:150,162); they write files and are not the
 * launch, whose arguments they do not change (a child process, as above). The program's
 * word, or NULL. */
static const char *megatron_tool(const struct mo_megatron_words *w)
{
	for (size_t i = 0; i < w->n; i++) {
		if (!megatron_ends_with(w->v[i].text, ".py"))
			continue;
		const char *base = strrchr(w->v[i].text, '/');
		base = base ? base + 1 : w->v[i].text;
		bool tool = !strncmp(base, "convert_ckpt", 12) || !strcmp(base, "preprocess_data.py");
		return tool ? w->v[i].text : NULL;
	}
	return NULL;
}

/* Python run on a text or on a conversion program: not the launch, a warning at it. */
static bool megatron_python_not_launch(struct mo_megatron_import *g,
				       const struct mo_megatron_words *w, int line, int column)
{
	if (megatron_python_text(w)) {
		megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column, NULL,
			      "'%s -c ...' is not run: Python runs the text after -c, no training "
			      "script; it does not change the arguments",
			      w->v[0].text);
		return true;
	}
	const char *tool = megatron_tool(w);
	if (!tool || !megatron_is_launcher(w))
		return false;
	megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column, NULL,
		      "'%.80s' is not run: a checkpoint conversion or data preprocessing "
		      "program, not the training launch; it does not change the arguments",
		      tool);
	return true;
}

/* The index of the file `bash [options] FILE [args]` runs, or 0: not a shell, no file, or a
 * text given with -c (read by megatron_shell_text where srun runs it). */
static size_t megatron_script_file_word(const struct mo_megatron_words *w)
{
	if (w->n < 2 || megatron_command_word(w->v[0].text) != MEGATRON_CMD_SHELL)
		return 0;
	for (size_t i = 1; i < w->n; i++) {
		const char *o = w->v[i].text;
		if (o[0] != '-')
			return i;
		if (o[1] != '-' && strchr(o, 'c'))
			return 0; /* -c, -xc: the command is a text */
	}
	return 0;
}

static bool megatron_runs_script_file(const struct mo_megatron_words *w)
{
	size_t i = megatron_script_file_word(w);
	return i && !megatron_ends_with(w->v[i].text, ".py");
}

/* A command: the launch (torchrun ... *.py ...), once; any other is an
 * error. What follows an operator (`| tee log`, `2>&1`) is skipped. */
static bool megatron_command(struct mo_megatron_import *g,
				struct mo_megatron_lexer *x,
				struct mo_megatron_words *launch)
{
	int line = x->line, column = x->column;
	struct mo_megatron_words w = {0};
	struct megatron_heredoc doc = {0};
	int rc = megatron_script_words(g, x, &w);
	if (rc < 0)
		return false;
	if (x->p < x->end && *x->p == ')')
		return megatron_script_error(g, x, "a ')' out of place");
	if (!megatron_command_tail(g, x, &doc))
		return false;
	if (w.n == 0)
		return true;
	if (doc.body && megatron_runs_heredoc(&w))
		return megatron_batch(g, &w, &doc, launch);
	if (w.v[0].text[0] == '-') {
		/* a flag where a command stands: a line whose `\` is missing (MindSpeed-LLM
		 * v1.0.0's pretrain_llama31_200b_8k_ptd.sh: `--load X` then `--save Y`); bash
		 * finds no such command and goes on, the launch before it already run */
		megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column, NULL,
			      "'%.40s' is not a command (a continuation line whose '\\' is missing?): "
			      "the shell does not find it and goes on; its words are not arguments",
			      w.v[0].text);
		return true;
	}
	enum megatron_command kind = megatron_command_word(w.v[0].text);
	if (kind == MEGATRON_CMD_EXIT) { /* the shell stops here */
		g->exited = true;
		return true;
	}
	if (megatron_not_run(w.v[0].text)) {
		megatron_diag(g, MO_SEV_WARNING, "megatron-script", line,
				 column, NULL,
				 "'%s' is not run (this reader runs no "
				 "command; it does not change the arguments)",
				 w.v[0].text);
		return true;
	}
	if (megatron_runs_script_file(&w)) {
		/* `bash tests/tools/fsdp2/..._convert.sh` before the launch (MindSpeed-LLM
		 * v26.1.0 fsdp2/longcat_flash_lite): a child process, which cannot set this
		 * shell's variables (bash(1), Command Execution Environment) */
		megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column, NULL,
			      "'%s %.120s' is not run: it runs that file in a child shell, which "
			      "does not change this script's variables or arguments",
			      w.v[0].text, w.v[megatron_script_file_word(&w)].text);
		return true;
	}
	if (kind == MEGATRON_CMD_UNSET) { /* the variables go, as in the shell */
		for (size_t i = 1; i < w.n; i++)
			megatron_unset(g, w.v[i].text);
		return true;
	}
	if (kind == MEGATRON_CMD_SOURCE)
		return megatron_source(g, line, column, w.n > 1 ? w.v[1].text : "", launch);
	if (kind == MEGATRON_CMD_SRUN)
		return megatron_srun(g, &w, launch);
	if (megatron_python_not_launch(g, &w, line, column))
		return true;
	if (!megatron_is_launcher(&w)) {
		megatron_diag(
		    g, MO_SEV_ERROR, "megatron-script", line, column, NULL,
		    "'%.40s' is a command this reader does not run: it reads "
		    "assignments and one launch command (torchrun ... "
		    "pretrain_gpt.py ...); it is not a shell",
		    w.v[0].text);
		return false;
	}
	if (launch->v) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", line,
				 column, NULL,
				 "a second launch command (the first is at "
				 "%d:%d)",
				 launch->v[0].line, launch->v[0].column);
		return false;
	}
	*launch = w;
	return true;
}

static bool megatron_statement(struct mo_megatron_import *g,
				  struct mo_megatron_lexer *x,
				  struct mo_megatron_words *launch);

/* Statements until the text ends or one fails. */
static bool megatron_statements(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
				struct mo_megatron_words *launch)
{
	bool ok = true;
	while (ok && !g->exited) {
		megatron_skip_blanks(x);
		if (x->p >= x->end)
			break;
		if (*x->p == '\n' || *x->p == ';')
			megatron_advance(x);
		else
			ok = megatron_statement(g, x, launch);
	}
	return ok;
}

/* `source NAME` / `. NAME`: the file beside the script, read as more of
 * the script (megatron_source.c says which files and why not), its words
 * at the statement's position. The variables it assigns stay set, as the
 * shell's `source` leaves them; a launch command in it is the launch. */
static bool megatron_source(struct mo_megatron_import *g, int line, int column, const char *name,
			    struct mo_megatron_words *launch)
{
	size_t len = 0;
	const char *shown = NULL;
	char *text = NULL;
	const char *why = megatron_source_open(g, name, &text, &len, &shown);
	if (why == megatron_source_nomem) {
		megatron_fail(g, MO_ERR_NOMEM, line, column, "out of memory");
		return false;
	}
	if (why) {
		megatron_diag(g, MO_SEV_WARNING, "megatron-script", line, column, NULL,
			      "'source %.200s' is not read (%s): the variables and arguments it sets "
			      "are left out",
			      name, why);
		return true;
	}
	struct mo_megatron_lexer x = {.p = text, .end = text + len, .line = line,
				      .column = column, .script = true, .pinned = true};
	const char *outer = g->sourced;
	g->sourced = shown;
	buf_init(&x.word, MO_MG_MAX_TOKEN + 8);
	bool ok = megatron_statements(g, &x, launch);
	buf_free(&x.word);
	g->sourced = outer;
	megatron_source_close(g);
	return ok;
}

static bool megatron_statement(struct mo_megatron_import *g,
				  struct mo_megatron_lexer *x,
				  struct mo_megatron_words *launch)
{
	if (megatron_at_keyword(x, "export")) {
		for (int i = 0; i < 6; i++)
			megatron_advance(x);
		megatron_skip_blanks(x);
	}
	if (megatron_at_keyword(x, "if"))
		return megatron_if(g, x, launch);
	if (megatron_at_opener(x, "done"))
		return megatron_skip_block(g, x, "done");
	size_t n = megatron_name_len(x->p, x->end);
	if (n && x->p + n < x->end &&
	    (x->p[n] == '=' ||
	     (x->p[n] == '+' && x->p + n + 1 < x->end && x->p[n + 1] == '=')))
		return megatron_assignment(g, x, n);
	return megatron_command(g, x, launch);
}

/* A training script: its launch command's words into g->words. */
bool megatron_read_script(struct mo_megatron_import *g,
				    const char *text, size_t len)
{
	struct mo_megatron_lexer x = {.p = text,
				      .end = text + len,
				      .line = 1,
				      .column = 1,
				      .script = true};
	struct mo_megatron_words launch = {0};
	bool ok = true;
	g->vars = arena_alloc(g->arena, MO_MG_MAX_VARS * sizeof(*g->vars));
	if (!g->vars) {
		megatron_fail(g, MO_ERR_NOMEM, 1, 1, "out of memory");
		return false;
	}
	int oom_line = 1;
	if (megatron_read_sbatch(g, text, len, &oom_line) != 0) {
		megatron_fail(g, MO_ERR_NOMEM, oom_line, 1, "out of memory");
		return false;
	}
	buf_init(&x.word, MO_MG_MAX_TOKEN + 8);
	ok = megatron_statements(g, &x, &launch);
	buf_free(&x.word);
	if (!ok || g->failed)
		return false;
	if (!launch.v) {
		megatron_diag(g, MO_SEV_ERROR, "megatron-script", 1, 1, NULL,
				 "no launch command (torchrun ... "
				 "pretrain_gpt.py ...) in the script");
		return false;
	}
	g->words = launch.v;
	g->n_words = launch.n;
	return megatron_classify_words(g);
}

/* Does a line start with `NAME="` or `NAME='` (a text assignment)? */
static bool megatron_has_text_assignment(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = megatron_name_len(text + i, text + len);
		if (n && i + n + 1 < len && text[i + n] == '=' &&
		    (text[i + n + 1] == '"' || text[i + n + 1] == '\''))
			return true;
		const char *nl = memchr(text + i, '\n', len - i);
		if (!nl)
			break;
		i = (size_t)(nl - text) + 1;
	}
	return false;
}

/* A script: it has a `${NAME[@]}`, a `#!` line, or a line assigning a
 * quoted text (`GPT_ARGS="..."`, expanded later as `$GPT_ARGS`). */
bool megatron_is_script(const char *text, size_t len)
{
	return memmem(text, len, "[@]}", 4) != NULL ||
	       (len > 2 && text[0] == '#' && text[1] == '!') ||
	       (len > 8 && memcmp(text, "#SBATCH ", 8) == 0) ||
	       memmem(text, len, "\n#SBATCH ", 9) != NULL ||
	       megatron_has_text_assignment(text, len);
}

/* A MODEL_ARGS value as the functional-test runner passes it: true is the
 * flag alone, false leaves the flag out, a list is its items, anything
 * else is its text. */
static bool megatron_yaml_arg(struct mo_megatron_import *g,
				 const mo_node *key, const mo_node *v,
				 size_t *cap)
{
	bool b;
	if (v->kind == MO_NODE_SCALAR && scalar_bool(v, &b) && !b)
		return true;
	/* the document goes when MODEL_ARGS is read: the texts are copied */
	const char *flag = arena_strdup(g->arena, key->value);
	struct mo_megatron_arg *a =
	    flag ? megatron_new_arg(g, cap, flag, key->line, key->column)
		 : NULL;
	if (!a) {
		megatron_fail(g, MO_ERR_NOMEM, key->line, key->column,
				 "out of memory");
		return false;
	}
	size_t n = v->kind == MO_NODE_SEQ ? v->n : 1;
	for (size_t i = 0; i < n; i++) {
		const mo_node *x = v->kind == MO_NODE_SEQ ? v->items[i] : v;
		if (x->kind != MO_NODE_SCALAR || x->len == 0 ||
		    scalar_resolve(x) == MO_SCALAR_NULL ||
		    (x == v && scalar_bool(x, &b) && b))
			continue;
		const char *value = arena_strdup(g->arena, x->value);
		if (!value) {
			megatron_fail(g, MO_ERR_NOMEM, x->line, x->column,
					 "out of memory");
			return false;
		}
		if (!megatron_add_value(g, a, value, x->line, x->column))
			return false;
	}
	if (v->kind == MO_NODE_MAP)
		megatron_diag(g, MO_SEV_ERROR, "type", v->line, v->column,
				 flag, "%s: a mapping is not a flag's value",
				 flag);
	return true;
}

/* Megatron-LM's functional-test model_config.yaml: MODEL_ARGS. */
/* Is key a flag the mapping `over` (the one merging this one in) gives itself? */
static bool megatron_overridden(const mo_node *over, const char *key)
{
	return over && map_get(over, key) != NULL;
}

/* MODEL_ARGS' entries as arguments. A YAML merge key (`<<: *BASE_MODEL_ARGS`, or a list of
 * such) brings in the anchored mapping's entries first, as the CI runner's `yq 'explode(.)
 * | ... to_entries'` (_run_training.sh:131 at d98e8a64) resolves it: a flag the mapping
 * gives itself overrides the merged one. `over` is the mapping this one is merged into. */
static bool megatron_model_args(struct mo_megatron_import *g, const mo_node *ma,
				const mo_node *over, int depth, size_t *cap)
{
	for (size_t i = 0; i + 1 < ma->n && !g->failed; i += 2) {
		const mo_node *k = ma->items[i], *v = ma->items[i + 1];
		if (k->kind != MO_NODE_SCALAR || strcmp(k->value, "<<") != 0)
			continue;
		size_t n = v->kind == MO_NODE_SEQ ? v->n : 1;
		for (size_t j = 0; j < n; j++) {
			const mo_node *m = v->kind == MO_NODE_SEQ ? v->items[j] : v;
			if (m->kind != MO_NODE_MAP || depth >= MO_MG_MAX_SOURCE_DEPTH) {
				megatron_diag(g, MO_SEV_WARNING, "unread-key", k->line, k->column,
					      "<<",
					      "a merge key whose value is not a mapping (or merges "
					      "nested more than %d deep): not read",
					      MO_MG_MAX_SOURCE_DEPTH);
				continue;
			}
			if (!megatron_model_args(g, m, ma, depth + 1, cap))
				return false;
		}
	}
	for (size_t i = 0; i + 1 < ma->n && !g->failed; i += 2) {
		const mo_node *k = ma->items[i], *v = ma->items[i + 1];
		if (k->kind != MO_NODE_SCALAR || strlen(k->value) != k->len ||
		    strcmp(k->value, "<<") == 0 || megatron_overridden(over, k->value))
			continue;
		if (!megatron_is_flag(k->value)) {
			megatron_diag(
			    g, MO_SEV_WARNING, "unread-key", k->line, k->column,
			    k->value,
			    "MODEL_ARGS.%.80s is not a Megatron flag: not read",
			    k->value);
			continue;
		}
		if (g->n_args >= MO_MG_MAX_ARGS) {
			megatron_diag(g, MO_SEV_ERROR, "megatron-syntax",
					 k->line, k->column, NULL,
					 "more than %d arguments",
					 MO_MG_MAX_ARGS);
			return false;
		}
		if (!megatron_yaml_arg(g, k, v, cap))
			return false;
	}
	return !g->failed;
}

/* ---- a functional test's mode
 * What a Megatron-LM functional test runs: its model_config.yaml's MODE,
 * "pretraining" unless given (tests/functional_tests/shell_test_utils/
 * run_ci_test.sh:77-80 at d98e8a64). An `inference` test runs the
 * inference engine on the model (a forward pass, a KV cache or the
 * dynamic-batching buffer --inference-dynamic-batching-buffer-size-gb
 * sizes; no gradients, no optimizer states); an `rl` test alternates such
 * rollouts with training steps. memopt prices a training step of the
 * model the arguments give: the mode is said once, at its key, as
 * `unmodelled`, and the flags that only that mode reads (sampling,
 * prompts, the engine's buffers, GRPO's settings) are covered by that
 * warning rather than each reported unread. */

/* The flags (or flag prefixes, ending in '-') of each mode's own
 * settings: Megatron-LM's inference and RL arguments
 * (megatron/training/arguments.py _add_inference_args, _add_rl_args at
 * d98e8a64) and the inference scripts' own (examples/inference). */
static const char *const mo_megatron_inference_flags[] = {
    "--inference-", "--temperature", "--top_k", "--top_p", "--return-log-probs",
    "--num-tokens-to-generate", "--prompts", "--prompt-file", "--output-path",
    "--incoming-requests-", "--max-tokens-to-oom", "--flash-decode",
    "--enable-chunked-prefill", "--use-flashinfer-fused-rope", "--use-legacy-static-engine",
    "--moe-pad-experts-for-cuda-graph-inference", "--termination-id",
    /* the inference scripts' sampling, output and suspend settings
     * (megatron/inference/utils.py:163, 207, 219, 240, 270, 278), the offline
     * script's engine modes (examples/inference/offline_inference.py:60, 64),
     * decode-only CUDA graphs (arguments.py:2134), the engine's record of
     * MoE routing (core/inference/contexts/dynamic_context.py:739-740) and
     * what suspending the engine does with its KV cache and graphs
     * (arguments.py:455-520, 2760) */
    "--top-n-logprobs", "--stop-words", "--output-every-n-results",
    "--prompt-file-num-truncate", "--suspend-", "--use-coordinator", "--async-mode",
    "--decode-only-cuda-graphs", "--moe-enable-routing-replay",
    "--rl-kv-cache-management-mode", "--no-rl-persist-cuda-graphs", NULL};

/* --refit-method: how RL copies the weights into the inference model
 * (arguments.py:2836, _add_rl_args) */
static const char *const mo_megatron_rl_flags[] = {
    "--grpo-", "--rl-", "--langrl-", "--perform-rl-step", "--refit-method", NULL};

static bool megatron_mode_listed(const char *flag, const char *const *list)
{
	for (size_t i = 0; list[i]; i++) {
		size_t n = strlen(list[i]);
		if (list[i][n - 1] == '-' ? strncmp(flag, list[i], n) == 0
					  : strcmp(flag, list[i]) == 0)
			return true;
	}
	return false;
}

bool megatron_mode_covers(const struct mo_megatron_import *g, const char *flag)
{
	switch (g->mode) {
	case MEGATRON_MODE_INFERENCE:
		return megatron_mode_listed(flag, mo_megatron_inference_flags);
	case MEGATRON_MODE_RL:
		return megatron_mode_listed(flag, mo_megatron_inference_flags) ||
		       megatron_mode_listed(flag, mo_megatron_rl_flags);
	default:
		return false;
	}
}

/* The modes run_ci_test.sh knows, with what memopt says of each. */
static const struct {
	const char *name;
	enum megatron_mode mode;
	const char *said; /* NULL: a training step, nothing to say */
} megatron_modes[] = {
    {"pretraining", MEGATRON_MODE_PRETRAINING, NULL},
    {"inference", MEGATRON_MODE_INFERENCE,
     "MODE: inference: this test runs Megatron's inference engine on the model (a forward "
     "pass with its KV cache or dynamic-batching buffer; no gradients, no optimizer states); "
     "memopt prices a training step of the same model, and the inference settings are not in "
     "the estimate"},
    {"rl", MEGATRON_MODE_RL,
     "MODE: rl: this test alternates rollouts with the inference engine and training steps; "
     "memopt prices the training step, and the rollouts' memory (the KV cache, what "
     "--rl-offload-optimizer-during-inference moves) is not in the estimate"},
};

void megatron_read_mode(struct mo_megatron_import *g, const mo_doc *doc)
{
	const mo_node *v = map_get(doc->root, "MODE");
	const char *mode = v && v->kind == MO_NODE_SCALAR ? v->value : NULL;
	if (!mode)
		return;
	for (size_t i = 0; i < sizeof megatron_modes / sizeof *megatron_modes; i++) {
		if (strcmp(mode, megatron_modes[i].name) != 0)
			continue;
		g->mode = megatron_modes[i].mode;
		if (megatron_modes[i].said)
			megatron_diag(g, MO_SEV_WARNING, "unmodelled", v->line, v->column, "MODE",
				      "%s", megatron_modes[i].said);
		return;
	}
	megatron_diag(g, MO_SEV_WARNING, "unread-key", v->line, v->column, "MODE",
		      "MODE: '%.40s' is not a mode memopt knows (pretraining, inference, rl): "
		      "priced as a training step",
		      mode);
}

bool megatron_read_model_config(struct mo_megatron_import *g,
					  const mo_doc *doc)
{
	const mo_node *key = NULL;
	const mo_node *ma = map_get_kv(doc->root, "MODEL_ARGS", &key);
	size_t cap = 0;
	if (ma && (ma->kind == MO_NODE_MAP ? ma->n == 0
					    : ma->kind == MO_NODE_SCALAR && ma->len == 0)) {
		megatron_diag(g, MO_SEV_ERROR, "model-needed", key->line, key->column, "model",
			      "MODEL_ARGS is empty: this test gives Megatron no arguments here (its "
			      "model comes from the script and checkpoint its recipe names), so the "
			      "file holds no model to price");
		return false;
	}
	if (!ma || ma->kind != MO_NODE_MAP) {
		megatron_diag(
		    g, MO_SEV_ERROR, "type", key ? key->line : 1,
		    key ? key->column : 1, "MODEL_ARGS",
		    "MODEL_ARGS must be a mapping of --flag: value");
		return true;
	}
	megatron_read_mode(g, doc);
	const mo_node *env = map_get(doc->root, "ENV_VARS");
	const mo_node *ws = env && env->kind == MO_NODE_MAP
				    ? map_get(env, "CUBLAS_WORKSPACE_CONFIG")
				    : NULL;
	if (ws && ws->kind == MO_NODE_SCALAR) { /* the GEMM workspace's size */
		g->cublas_config = arena_strdup(g->arena, ws->value);
		g->cublas_line = ws->line;
		g->cublas_column = ws->column;
	}
	/* the processes per node of the MODEL_ARGS run, when the config sets them:
	 * run_ci_test.sh:297-306 at d98e8a64 exports MODEL_ENV_VARS.<KEY>.GPUS_PER_NODE for
	 * a config with several runs (MODEL_ARGS, MODEL_ARGS_2, ...) */
	const mo_node *mev = map_get(doc->root, "MODEL_ENV_VARS");
	const mo_node *run = mev && mev->kind == MO_NODE_MAP ? map_get(mev, "MODEL_ARGS") : NULL;
	const mo_node *gpn = run && run->kind == MO_NODE_MAP ? map_get(run, "GPUS_PER_NODE") : NULL;
	int64_t per_node;
	if (gpn && scalar_int(gpn, &per_node, NULL) && per_node > 0 &&
	    per_node <= MO_MODEL_MAX_DEGREE) {
		g->env_gpus_per_node = per_node;
		g->env_gpus_line = gpn->line;
		g->env_gpus_column = gpn->column;
	}
	return megatron_model_args(g, ma, NULL, 0, &cap);
}
