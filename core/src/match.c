/* PCRE2 full-match (Python re.fullmatch): ANCHORED|ENDANCHORED at compile
 * time so JIT stays usable, UTF+UCP for Python str semantics, and match,
 * depth and heap limits for hostile patterns. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "internal.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

/* Most patterns are literals with `.`, `\.` and `.*` ('.*mlp',
 * 'self_attention.linear_proj', '.*\.allgather'). Those are matched by a
 * wildcard matcher with the same full-match answer as PCRE2 on ASCII
 * subjects without newlines (all layout paths), which saves PCRE2's
 * compile and JIT (~40k instructions a pattern, measured with callgrind)
 * for the common case; tests/unit/test_match.c checks both agree. Every
 * other pattern, and any other subject, goes to PCRE2. */
typedef enum mo_tok { MO_TOK_LIT, MO_TOK_ANY, MO_TOK_STAR } mo_tok;

struct mo_regex {
	pcre2_code *code;          /* NULL for a simple pattern */
	pcre2_match_context *mctx;
	char *pattern;             /* for the PCRE2 fallback of a simple one */
	size_t len;
	unsigned char *tok;        /* simple form: kinds */
	char *lit;                 /* literal byte per MO_TOK_LIT */
	size_t n_tok;
	/* shapes with a direct test: all literals, or '.*' + literals */
	enum { MO_SHAPE_GENERAL, MO_SHAPE_EXACT, MO_SHAPE_SUFFIX } shape;
	uint32_t match_limit, depth_limit;
};

struct mo_matcher {
	pcre2_match_data *md;
};

static bool mo_simple_escapable(char ch)
{
	/* punctuation escaped to stand for itself (Python re.escape's set) */
	switch (ch) {
	case '.': case '-': case '_': case '/': case ':': case '[': case ']': case '(':
	case ')': case '{': case '}': case '*': case '+': case '?': case '|': case '^':
	case '$': case '\\': case '#': case '&': case '~': case ' ':
		return true;
	default:
		return false;
	}
}

/* A regex metacharacter the simple form does not take literally. */
static bool mo_simple_meta(char ch)
{
	switch (ch) {
	case '\\': case '[': case ']': case '(': case ')': case '{': case '}': case '*':
	case '+': case '?': case '|': case '^': case '$':
		return true;
	default:
		return false;
	}
}

/* A quantifier after a token (NUL too, as strchr would find it). */
static bool mo_simple_quantifier(char ch)
{
	return ch == '*' || ch == '+' || ch == '?' || ch == '{' || ch == '\0';
}

/* Parses literal | . | .* | \<punct> sequences; false otherwise. */
static bool mo_simple_parse(mo_regex *re, const char *p, size_t len)
{
	/* tok, lit and pattern live in the block allocated with re */
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch >= 0x80 || ch < 0x20)
			return false;
		if (ch == '.' && i + 1 < len && p[i + 1] == '*') {
			re->tok[re->n_tok++] = MO_TOK_STAR;
			i++;
		} else if (ch == '.') {
			re->tok[re->n_tok++] = MO_TOK_ANY;
		} else if (ch == '\\' && i + 1 < len && mo_simple_escapable(p[i + 1])) {
			re->lit[re->n_tok] = p[++i];
			re->tok[re->n_tok++] = MO_TOK_LIT;
		} else if (mo_simple_meta((char)ch)) {
			return false;
		} else {
			re->lit[re->n_tok] = (char)ch;
			re->tok[re->n_tok++] = MO_TOK_LIT;
		}
		/* a quantifier after a token ('a*', '.+', lazy '.*?', possessive
		 * '.*+') is not simple */
		if (i + 1 < len && mo_simple_quantifier(p[i + 1]))
			return false;
	}
	return true;
}

/* EXACT: every token a literal; SUFFIX: one leading '.*', then literals.
 * lit then holds the literal bytes from its first literal on. */
static void mo_simple_shape(mo_regex *re)
{
	size_t lits = 0;
	for (size_t i = 0; i < re->n_tok; i++)
		lits += re->tok[i] == MO_TOK_LIT;
	if (lits == re->n_tok)
		re->shape = MO_SHAPE_EXACT;
	else if (re->n_tok && re->tok[0] == MO_TOK_STAR && lits == re->n_tok - 1)
		re->shape = MO_SHAPE_SUFFIX;
}

static bool mo_shape_match(const mo_regex *re, const char *s, size_t n)
{
	if (re->shape == MO_SHAPE_EXACT)
		return n == re->n_tok && memcmp(s, re->lit, n) == 0;
	size_t m = re->n_tok - 1; /* SUFFIX */
	return n >= m && memcmp(s + n - m, re->lit + 1, m) == 0;
}

/* Wildcard full match: the latest star absorbs one more byte on a
 * mismatch; linear-time in practice, O(n*m) at worst. */
static bool mo_simple_match(const mo_regex *re, const char *s, size_t n)
{
	if (re->shape != MO_SHAPE_GENERAL)
		return mo_shape_match(re, s, n);
	size_t t = 0, i = 0, star_t = SIZE_MAX, star_i = 0;
	while (i < n) {
		if (t < re->n_tok && re->tok[t] == MO_TOK_STAR) {
			star_t = t++;
			star_i = i;
		} else if (t < re->n_tok &&
			   (re->tok[t] == MO_TOK_ANY || re->lit[t] == s[i])) {
			t++;
			i++;
		} else if (star_t != SIZE_MAX) {
			t = star_t + 1;
			i = ++star_i;
		} else {
			return false;
		}
	}
	while (t < re->n_tok && re->tok[t] == MO_TOK_STAR)
		t++;
	return t == re->n_tok;
}

/* Subjects the simple matcher answers like PCRE2: printable ASCII. */
static bool mo_simple_subject(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || (unsigned char)s[i] < 0x20)
			return false;
	return true;
}

static pcre2_code *mo_pcre2_compile(const char *pattern, size_t len, int *ec, PCRE2_SIZE *eoff)
{
	return pcre2_compile((PCRE2_SPTR)pattern, len,
			     PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | PCRE2_UCP, ec, eoff,
			     NULL);
}

static pcre2_match_context *mo_match_context(const mo_regex *re)
{
	pcre2_match_context *mctx = pcre2_match_context_create(NULL);
	if (!mctx)
		return NULL;
	pcre2_set_match_limit(mctx, re->match_limit);
	pcre2_set_depth_limit(mctx, re->depth_limit);
	pcre2_set_heap_limit(mctx, 1024); /* KiB */
	return mctx;
}

mo_regex *mo_regex_compile(const char *pattern, size_t len, const mo_limits *lim,
			   mo_arena *a, const char **errmsg, size_t *erroffset)
{
	int ec = 0;
	PCRE2_SIZE eoff = 0;
	*errmsg = NULL;
	*erroffset = 0;
	if (len > lim->max_pattern_bytes) {
		*errmsg = mo_arena_printf(a, "pattern of %zu bytes exceeds the limit of %zu",
					  len, lim->max_pattern_bytes);
		return NULL;
	}
	/* one block: the regex, then its token kinds, literal bytes and a copy
	 * of the pattern (for a simple pattern's PCRE2 fallback) */
	mo_regex *re = calloc(1, sizeof(*re) + 3 * (len + 1));
	if (!re) {
		*errmsg = "out of memory";
		return NULL;
	}
	re->match_limit = lim->match_limit;
	re->depth_limit = lim->depth_limit;
	re->tok = (unsigned char *)(re + 1);
	re->lit = (char *)re->tok + len + 1;
	re->pattern = re->lit + len + 1;
	if (mo_simple_parse(re, pattern, len)) {
		mo_simple_shape(re);
		memcpy(re->pattern, pattern, len);
		re->pattern[len] = '\0';
		re->len = len;
		return re;
	}
	re->n_tok = 0;
	re->code = mo_pcre2_compile(pattern, len, &ec, &eoff);
	if (!re->code) {
		PCRE2_UCHAR buf[160];
		pcre2_get_error_message(ec, buf, sizeof buf);
		*errmsg = mo_arena_strdup(a, (const char *)buf);
		*erroffset = eoff;
		mo_regex_free(re);
		return NULL;
	}
	/* JIT failure is not fatal: the interpreter takes over. */
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	re->mctx = mo_match_context(re);
	if (!re->mctx) {
		mo_regex_free(re);
		*errmsg = "out of memory";
		return NULL;
	}
	return re;
}

void mo_regex_free(mo_regex *re)
{
	if (!re)
		return;
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
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

static int mo_pcre2_result(int rc)
{
	if (rc >= 0)
		return 1;
	return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* A simple pattern against a subject outside the simple matcher's domain:
 * PCRE2 decides, with code compiled for this call (rare: layout paths are
 * ASCII). */
static int mo_simple_fallback(mo_matcher *mt, const mo_regex *re, const char *subject,
			      size_t len)
{
	int ec;
	PCRE2_SIZE eoff;
	pcre2_code *code = mo_pcre2_compile(re->pattern, re->len, &ec, &eoff);
	pcre2_match_context *mctx = code ? mo_match_context(re) : NULL;
	int rc = mctx ? mo_pcre2_result(pcre2_match(code, (PCRE2_SPTR)subject, len, 0, 0,
						    mt->md, mctx))
		      : -1;
	pcre2_match_context_free(mctx);
	pcre2_code_free(code);
	return rc;
}

int mo_matcher_match_plain(mo_matcher *mt, const mo_regex *re, const char *subject,
			   size_t len)
{
	if (!re->code)
		return mo_simple_match(re, subject, len);
	return mo_pcre2_result(pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0,
					   PCRE2_NO_UTF_CHECK, mt->md, re->mctx));
}

void mo_regex_ends(const mo_regex *re, int *first, int *last)
{
	*first = *last = -1;
	if (re->code || !re->n_tok)
		return;
	if (re->tok[0] == MO_TOK_LIT)
		*first = (unsigned char)re->lit[0];
	if (re->tok[re->n_tok - 1] == MO_TOK_LIT)
		*last = (unsigned char)re->lit[re->n_tok - 1];
}

bool mo_subject_is_plain(const char *subject, size_t len)
{
	return mo_simple_subject(subject, len);
}

int mo_matcher_match(mo_matcher *mt, const mo_regex *re, const char *subject, size_t len)
{
	bool plain = mo_simple_subject(subject, len);
	if (!re->code)
		return plain ? mo_simple_match(re, subject, len)
			     : mo_simple_fallback(mt, re, subject, len);
	/* printable ASCII is valid UTF-8: skip PCRE2's per-call UTF check */
	return mo_pcre2_result(pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0,
					   plain ? PCRE2_NO_UTF_CHECK : 0, mt->md, re->mctx));
}

int mo_regex_match(const mo_regex *re, const char *subject, size_t len)
{
	mo_matcher *mt = mo_matcher_new();
	if (!mt)
		return -1;
	int rc = mo_matcher_match(mt, re, subject, len);
	mo_matcher_free(mt);
	return rc;
}
