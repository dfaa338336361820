/* Pattern matching for select_module, exclude_op, recompute_comm and op_swap:
 * Python's re.fullmatch, done by PCRE2 with ANCHORED|ENDANCHORED at compile
 * time, UTF+UCP for Python str semantics, and match, depth and heap limits
 * for hostile patterns.
 *
 * Two shapes skip PCRE2, because configs are mostly written in them and a
 * comparison answers them exactly: EXACT, a path written out
 * ('self_attention.linear_proj', 'mlp\.linear_fc1'), and SUFFIX, '.*' then
 * such a path ('.*mlp', '.*\.allgather'). An unescaped '.' stands for any
 * one byte; the comparison runs only on printable-ASCII subjects (every
 * layout path), where it gives PCRE2's answer (test_match.c checks every
 * pattern of its list against every subject both ways). Any other pattern,
 * and any other subject, goes to PCRE2's interpreter. Measured by
 * bench_config (100 patterns, 1000 layers, validate+expand): 115 us with the
 * wildcard engine this replaced; 122-139 us with these two shapes in front
 * of PCRE2 (147 us with JIT); 161 us with PCRE2 alone (347 us with JIT). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "match/match.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

typedef enum mo_regex_shape { MO_SHAPE_PCRE2, MO_SHAPE_EXACT, MO_SHAPE_SUFFIX } mo_regex_shape;

/* The byte standing for an unescaped '.' in a shape's text (a pattern byte
 * below 0x20 makes the pattern PCRE2's, so it cannot be a literal). */
#define MO_ANY_BYTE '\0'

struct mo_regex {
	pcre2_code *code; /* MO_SHAPE_PCRE2 only */
	pcre2_match_context *mctx;
	mo_regex_shape shape;
	char *text;       /* EXACT / SUFFIX: the bytes to compare, MO_ANY_BYTE for '.' */
	size_t n;
	bool has_any;     /* text holds MO_ANY_BYTE */
	char *pattern;    /* the pattern, for PCRE2 on a subject outside ASCII */
	size_t len;
	uint32_t match_limit, depth_limit;
	uint32_t shares;  /* holders past the first (regex_share) */
	bool in_arena;    /* the block is the caller's arena's */
};

struct mo_matcher {
	pcre2_match_data *md;
};

/* Punctuation a backslash makes stand for itself (Python re.escape's set). */
static bool escapable(char ch)
{
	return ch != '\0' && strchr(".-_/:[](){}*+?|^$\\#&~ ", ch) != NULL;
}

/* Bytes with a meaning in a regex (a quantifier or structure). */
static bool match_meta(char ch)
{
	return ch != '\0' && strchr("[](){}*+?|^$\\", ch) != NULL;
}

/* Reads pattern p as EXACT or SUFFIX into re->text; false when it is
 * neither (PCRE2 decides then). */
static bool shape_parse(mo_regex *re, const char *p, size_t len)
{
	size_t i = 0;

	re->shape = MO_SHAPE_EXACT;
	if (len >= 2 && p[0] == '.' && p[1] == '*') {
		re->shape = MO_SHAPE_SUFFIX;
		i = 2;
	}
	for (; i < len; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch < 0x20 || ch >= 0x7f)
			return false;
		if (ch == '\\') {
			if (i + 1 >= len || !escapable(p[i + 1]))
				return false; /* '\w', '\d', ...: a class */
			re->text[re->n++] = p[++i];
		} else if (ch == '.') {
			re->text[re->n++] = MO_ANY_BYTE;
			re->has_any = true;
		} else if (match_meta((char)ch)) {
			return false;
		} else {
			re->text[re->n++] = (char)ch;
		}
		/* a quantifier after the byte ('a*', '.+', '.*' past the start) */
		if (i + 1 < len && strchr("*+?{", p[i + 1]))
			return false;
	}
	return true;
}

/* The shape's text against s[0..n), which has exactly re->n bytes. */
static bool text_equals(const mo_regex *re, const char *s)
{
	if (!re->has_any)
		return memcmp(s, re->text, re->n) == 0;
	for (size_t i = 0; i < re->n; i++)
		if (re->text[i] != MO_ANY_BYTE && re->text[i] != s[i])
			return false;
	return true;
}

static bool shape_match(const mo_regex *re, const char *s, size_t n)
{
	if (re->shape == MO_SHAPE_EXACT)
		return n == re->n && text_equals(re, s);
	return n >= re->n && text_equals(re, s + n - re->n);
}

/* Printable ASCII: the subjects a shape's comparison answers like PCRE2
 * (no newline for '.' to refuse, valid UTF-8, one byte a character). */
bool subject_is_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static pcre2_code *match_pcre2_compile(const char *pattern, size_t len, int *ec, PCRE2_SIZE *eoff)
{
	return pcre2_compile((PCRE2_SPTR)pattern, len,
			     PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | PCRE2_UCP, ec, eoff,
			     NULL);
}

static pcre2_match_context *match_context(const mo_regex *re)
{
	pcre2_match_context *mctx = pcre2_match_context_create(NULL);

	if (!mctx)
		return NULL;
	pcre2_set_match_limit(mctx, re->match_limit);
	pcre2_set_depth_limit(mctx, re->depth_limit);
	pcre2_set_heap_limit(mctx, 1024); /* KiB */
	return mctx;
}

/* Compiles re->pattern with PCRE2; false with *errmsg / *erroffset set. */
static bool regex_compile_pcre2(mo_regex *re, mo_arena *a, const char **errmsg,
				   size_t *erroffset)
{
	int ec = 0;
	PCRE2_SIZE eoff = 0;

	re->shape = MO_SHAPE_PCRE2;
	re->code = match_pcre2_compile(re->pattern, re->len, &ec, &eoff);
	if (!re->code) {
		PCRE2_UCHAR buf[160];

		pcre2_get_error_message(ec, buf, sizeof buf);
		*errmsg = arena_strdup(a, (const char *)buf);
		*erroffset = eoff;
		return false;
	}
	/* No JIT: a pattern is matched against one layer type's paths (tens of
	 * subjects) and the result is memoised, so JIT compiling costs more
	 * than it saves (bench_config: 147 us with JIT, 122 us without). */
	re->mctx = match_context(re);
	if (!re->mctx) {
		*errmsg = "out of memory";
		return false;
	}
	return true;
}

mo_regex *regex_compile(const char *pattern, size_t len, const mo_limits *lim, mo_arena *a,
			   const char **errmsg, size_t *erroffset)
{
	mo_regex *re;

	*errmsg = NULL;
	*erroffset = 0;
	if (len > lim->max_pattern_bytes) {
		*errmsg = arena_printf(a, "pattern of %zu bytes exceeds the limit of %zu", len,
					  lim->max_pattern_bytes);
		return NULL;
	}
	/* one block: the regex, the shape's text, a copy of the pattern */
	re = arena_alloc_raw(a, sizeof(*re) + 2 * (len + 1));
	if (!re) {
		*errmsg = "out of memory";
		return NULL;
	}
	*re = (mo_regex){.in_arena = true};
	re->match_limit = lim->match_limit;
	re->depth_limit = lim->depth_limit;
	re->text = (char *)(re + 1);
	re->pattern = re->text + len + 1;
	memcpy(re->pattern, pattern, len);
	re->pattern[len] = '\0';
	re->len = len;
	if (shape_parse(re, pattern, len))
		return re;
	if (!regex_compile_pcre2(re, a, errmsg, erroffset)) {
		regex_free(re);
		return NULL;
	}
	return re;
}

mo_regex *regex_share(mo_regex *re)
{
	if (re)
		re->shares++;
	return re;
}

void regex_free(mo_regex *re)
{
	if (!re)
		return;
	if (re->shares) {
		re->shares--;
		return;
	}
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	if (!re->in_arena)
		free(re);
}

mo_matcher *mo_matcher_new(void)
{
	mo_matcher *mt = calloc(1, sizeof(*mt));

	if (!mt)
		return NULL;
	/* one pair: full-match needs no captures */
	mt->md = pcre2_match_data_create(1, NULL);
	if (!mt->md) {
		free(mt);
		return NULL;
	}
	return mt;
}

void mo_matcher_free(mo_matcher *mt)
{
	if (!mt)
		return;
	pcre2_match_data_free(mt->md);
	free(mt);
}

static int pcre2_result(int rc)
{
	if (rc >= 0)
		return 1;
	return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* One PCRE2 match under the thread's work budget: none once it is spent
 * (-1, as a limit hit), and a call that runs into its match, depth or heap
 * limit is charged to it. Each call is bounded by its own limits; the
 * budget bounds the calls of a request together, so thousands of
 * backtracking patterns stop at the work limit (or at a client's hang-up)
 * instead of costing seconds each batch. */
static int pcre2_run(const pcre2_code *code, const char *subject, size_t len,
			uint32_t options, pcre2_match_data *md, pcre2_match_context *mctx)
{
	int rc;

	if (budget_spent_now())
		return -1;
	rc = pcre2_match(code, (PCRE2_SPTR)subject, len, 0, options, md, mctx);
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT)
		budget_limit_hit();
	return pcre2_result(rc);
}

/* A shape's pattern against a subject outside ASCII: PCRE2 decides, with
 * code compiled for this call (layout paths are ASCII: this is for the
 * library's other callers). */
static int shape_fallback(mo_matcher *mt, const mo_regex *re, const char *subject,
			     size_t len)
{
	int ec;
	PCRE2_SIZE eoff;
	pcre2_code *code = match_pcre2_compile(re->pattern, re->len, &ec, &eoff);
	pcre2_match_context *mctx = code ? match_context(re) : NULL;
	int rc = mctx ? pcre2_run(code, subject, len, 0, mt->md, mctx) : -1;

	pcre2_match_context_free(mctx);
	pcre2_code_free(code);
	return rc;
}

int matcher_match_plain(mo_matcher *mt, const mo_regex *re, const char *subject, size_t len)
{
	if (re->shape != MO_SHAPE_PCRE2)
		return shape_match(re, subject, len);
	return pcre2_run(re->code, subject, len, PCRE2_NO_UTF_CHECK, mt->md, re->mctx);
}

int matcher_match(mo_matcher *mt, const mo_regex *re, const char *subject, size_t len)
{
	bool plain = subject_is_plain(subject, len);

	if (re->shape != MO_SHAPE_PCRE2)
		return plain ? shape_match(re, subject, len)
			     : shape_fallback(mt, re, subject, len);
	/* printable ASCII is valid UTF-8: skip PCRE2's per-call UTF check */
	return pcre2_run(re->code, subject, len, plain ? PCRE2_NO_UTF_CHECK : 0, mt->md,
			    re->mctx);
}

void regex_ends(const mo_regex *re, int *first, int *last)
{
	*first = *last = -1;
	if (re->shape == MO_SHAPE_PCRE2 || re->n == 0)
		return;
	if (re->shape == MO_SHAPE_EXACT && re->text[0] != MO_ANY_BYTE)
		*first = (unsigned char)re->text[0];
	if (re->text[re->n - 1] != MO_ANY_BYTE)
		*last = (unsigned char)re->text[re->n - 1];
}

int regex_match(const mo_regex *re, const char *subject, size_t len)
{
	mo_matcher *mt = mo_matcher_new();
	int rc;

	if (!mt)
		return -1;
	rc = matcher_match(mt, re, subject, len);
	mo_matcher_free(mt);
	return rc;
}

/* ---- shapes that backtrack exponentially ---------------------------------
 *
 * A group repeated by a quantifier whose body can match the same text in
 * many ways ('(.*)*x', '(a+)+$', '(?:.*.*)*z', '(.*a){20}') makes a
 * backtracking matcher try every way to split a subject that does not
 * match: exponential in its length. PCRE2's per-call limits and the
 * request's work budget bound the cost, but a config is refused where it
 * enters, with the offset of the repeat. The test is on the body of each
 * repeated group (max count 2 or more, not possessive): it holds a
 * variable-length repeat (not possessive), and either that repeat is over
 * an atom matching nearly any byte ('.', '[^...]', '\S', '\W', '\D'), or the
 * body holds two of them, or nothing the body must match besides them
 * separates one iteration from the next (no fixed atom, or alternatives).
 * '(\.\d+)+' and '(\w+\.)+' are accepted: the fixed '\.' can only match
 * one way. Overlapping alternatives ('(a|aa)+') and back-references are
 * left to the limits. */

/* What a group's body holds, as the scan sees it. */
typedef struct shape_body {
	size_t repeats;   /* variable-length repeats, nested ones included */
	bool wide;        /* one of them is over a wide atom */
	bool has_wide;    /* a wide atom anywhere in the body */
	size_t fixed;     /* atoms it must match once, not repeated */
	bool alternation; /* '|' at its top level */
	bool atomic;      /* (?>...): no backtracking into it */
	size_t open;      /* offset of its '(' */
} shape_body;

typedef struct shape_quant {
	uint32_t min, max; /* max UINT32_MAX: no upper bound */
	bool possessive;
	size_t len;        /* bytes of the quantifier, 0: none */
} shape_quant;

#define SHAPE_UNBOUNDED UINT32_MAX
/* Deeper nesting is left to PCRE2 (its own limit is 250). */
#define SHAPE_MAX_DEPTH 256

static bool shape_number(const char *p, size_t len, size_t *i, uint32_t *out)
{
	size_t start = *i;
	uint32_t v = 0;

	while (*i < len && p[*i] >= '0' && p[*i] <= '9') {
		v = v > 100000 ? 100000 : v * 10 + (uint32_t)(p[*i] - '0');
		(*i)++;
	}
	*out = v;
	return *i > start;
}

/* The quantifier at p[i], if any ('{' not followed by a count is a
 * literal in PCRE2). */
static shape_quant shape_quantifier(const char *p, size_t len, size_t i)
{
	shape_quant q = {1, 1, false, 0};
	size_t j = i + 1;

	if (i >= len)
		return q;
	if (p[i] == '*' || p[i] == '+' || p[i] == '?') {
		q.min = p[i] == '+' ? 1 : 0;
		q.max = p[i] == '?' ? 1 : SHAPE_UNBOUNDED;
	} else if (p[i] == '{') {
		if (!shape_number(p, len, &j, &q.min))
			return (shape_quant){1, 1, false, 0};
		q.max = q.min;
		if (j < len && p[j] == ',') {
			j++;
			q.max = SHAPE_UNBOUNDED;
			if (j < len && p[j] >= '0' && p[j] <= '9')
				shape_number(p, len, &j, &q.max);
		}
		if (j >= len || p[j] != '}')
			return (shape_quant){1, 1, false, 0};
		j++;
	} else {
		return q;
	}
	if (j < len && (p[j] == '+' || p[j] == '?')) {
		q.possessive = p[j] == '+';
		j++;
	}
	q.len = j - i;
	return q;
}

/* A repeat that can take a varying number of iterations, each a way to
 * split the subject. */
static bool shape_variable(shape_quant q)
{
	return q.len && !q.possessive && q.max > q.min && q.max >= 2;
}

/* The end of the class opening at p[i] ('['), past its ']'. */
static size_t shape_class_end(const char *p, size_t len, size_t i)
{
	i++;
	if (i < len && p[i] == '^')
		i++;
	if (i < len && p[i] == ']')
		i++; /* a leading ']' is a member */
	while (i < len && p[i] != ']') {
		if (p[i] == '\\')
			i++;
		else if (p[i] == '[' && i + 1 < len && p[i + 1] == ':') {
			const char *end = memchr(p + i + 2, ']', len - i - 2);
			i = end ? (size_t)(end - p) : len;
		}
		i++;
	}
	return i < len ? i + 1 : len;
}

/* The end of the escape at p[i] ('\'), and whether it is a wide class. */
static size_t shape_escape_end(const char *p, size_t len, size_t i, bool *wide)
{
	char c = i + 1 < len ? p[i + 1] : '\0';

	*wide = c && strchr("SWDHVNXC", c) != NULL;
	if (c == 'Q') { /* literal up to \E */
		for (i += 2; i + 1 < len && !(p[i] == '\\' && p[i + 1] == 'E'); i++)
			;
		return i + 1 < len ? i + 2 : len;
	}
	i += 2;
	if (c && strchr("pPxNgko", c) && i < len && (p[i] == '{' || p[i] == '<' || p[i] == '\'')) {
		char close = p[i] == '{' ? '}' : p[i] == '<' ? '>' : '\'';
		const char *end = memchr(p + i, close, len - i);
		i = end ? (size_t)(end - p) + 1 : len;
	}
	return i < len ? i : len;
}

/* Opens a group at p[i] ('('): the index of its body, or of the byte
 * after a comment group. */
static size_t shape_group_open(const char *p, size_t len, size_t i, shape_body *g, bool *comment)
{
	*g = (shape_body){.open = i};
	*comment = false;
	if (i + 2 < len && p[i + 1] == '?' && p[i + 2] == '#') {
		const char *end = memchr(p + i, ')', len - i);
		*comment = true;
		return end ? (size_t)(end - p) + 1 : len;
	}
	g->atomic = i + 2 < len && p[i + 1] == '?' && p[i + 2] == '>';
	return i + 1;
}

/* Counts an atom (a byte, an escape, a class, or a closed group whose
 * body is `inner`, NULL for a plain atom) with quantifier q into g. */
static void shape_add_atom(shape_body *g, bool wide, const shape_body *inner, shape_quant q)
{
	bool var = shape_variable(q);

	if (inner && !inner->atomic) {
		g->repeats += inner->repeats;
		g->wide |= inner->wide;
		wide = inner->has_wide;
	}
	g->has_wide |= wide;
	if (var) {
		g->repeats++;
		g->wide |= wide;
	} else if (q.min >= 1 && (!inner || inner->fixed || inner->atomic)) {
		g->fixed++;
	}
}

/* A repeated group whose body backtracks exponentially. */
static bool shape_catastrophic(const shape_body *body, shape_quant q)
{
	if (!q.len || q.possessive || q.max < 2 || body->atomic || !body->repeats)
		return false;
	return body->wide || body->repeats >= 2 || !body->fixed || body->alternation;
}

const char *regex_shape_check(const char *p, size_t len, size_t *offset)
{
	shape_body stack[SHAPE_MAX_DEPTH];
	size_t depth = 0;

	stack[0] = (shape_body){0};
	for (size_t i = 0; i < len;) {
		shape_body *g = &stack[depth];
		bool wide = false, comment;
		size_t end;

		if (p[i] == '(') {
			if (depth + 1 >= SHAPE_MAX_DEPTH)
				return NULL;
			end = shape_group_open(p, len, i, &stack[depth + 1], &comment);
			if (comment) {
				i = end;
				continue;
			}
			depth++;
			i = end;
			continue;
		}
		if (p[i] == ')' && depth > 0) {
			shape_body inner = stack[depth--];
			shape_quant q = shape_quantifier(p, len, i + 1);

			if (shape_catastrophic(&inner, q)) {
				*offset = i + 1;
				return "a repeated group whose body can split the same text "
				       "in many ways backtracks exponentially";
			}
			shape_add_atom(&stack[depth], false, &inner, q);
			i += 1 + q.len;
			continue;
		}
		if (p[i] == '|') {
			g->alternation = true;
			i++;
			continue;
		}
		if (p[i] == '[') {
			wide = i + 1 < len && p[i + 1] == '^';
			end = shape_class_end(p, len, i);
		} else if (p[i] == '\\') {
			end = shape_escape_end(p, len, i, &wide);
		} else {
			wide = p[i] == '.';
			end = i + 1;
		}
		shape_quant q = shape_quantifier(p, len, end);
		if (p[i] == '^' || p[i] == '$')
			q = (shape_quant){0, 0, false, q.len}; /* an anchor matches no byte */
		shape_add_atom(g, wide, NULL, q);
		i = end + q.len;
	}
	return NULL;
}
