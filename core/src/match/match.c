/* PCRE2 full-match (Python re.fullmatch): ANCHORED|ENDANCHORED at compile
 * time so JIT stays usable, UTF+UCP for Python str semantics, and match,
 * depth and heap limits for hostile patterns. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "match/match.h"

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
	enum {
		MO_SHAPE_GENERAL,
		MO_SHAPE_EXACT,
		MO_SHAPE_SUFFIX,
		MO_SHAPE_PREFIX,
		MO_SHAPE_INFIX
	} shape;
	uint32_t match_limit, depth_limit;
	bool any;                  /* some token is '.' (MO_TOK_ANY) */
	size_t n_any, n_star;      /* '.' and '.*' tokens (mo_simple_parse) */
	uint32_t shares;           /* holders past the first (mo_regex_share) */
	bool in_arena;             /* the block is the caller's arena's */
	/* an alternation of simple sequences: its expansions (see mo_alt) */
	struct mo_regex **alts;
	size_t n_alts;
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

/* A quantifier after a token (NUL too, as strchr would find it). */
static bool mo_simple_quantifier(char ch)
{
	return ch == '*' || ch == '+' || ch == '?' || ch == '{' || ch == '\0';
}

/* Parses literal | . | .* | \<punct> sequences; false otherwise. */
/* Byte classes of the simple parser: mo_simple_meta and
 * mo_simple_quantifier as one table lookup. */
enum { MO_C_LIT = 0, MO_C_DOT = 1, MO_C_ESC = 2, MO_C_META = 3, MO_C_QUANT = 0x10 };
static const unsigned char mo_cls[256] = {
	[0] = MO_C_QUANT, ['.'] = MO_C_DOT, ['\\'] = MO_C_ESC, ['['] = MO_C_META, [']'] = MO_C_META,
	['('] = MO_C_META, [')'] = MO_C_META, ['{'] = MO_C_META | MO_C_QUANT, ['}'] = MO_C_META,
	['*'] = MO_C_META | MO_C_QUANT, ['+'] = MO_C_META | MO_C_QUANT,
	['?'] = MO_C_META | MO_C_QUANT, ['|'] = MO_C_META, ['^'] = MO_C_META, ['$'] = MO_C_META,
};

static bool mo_simple_parse(mo_regex *re, const char *p, size_t len)
{
	/* tok, lit and pattern live in the block allocated with re */
	for (size_t i = 0; i < len; i++) {
		/* a run of plain literal bytes (printable, no metacharacter) at
		 * once: the byte after it is no plain literal, so it is the
		 * quantifier test's subject and is checked below */
		size_t j = i;
		while (j < len && (unsigned char)(p[j] - 0x20) < 0x60 && !mo_cls[(unsigned char)p[j]])
			j++;
		if (j > i) {
			memcpy(re->lit + re->n_tok, p + i, j - i);
			memset(re->tok + re->n_tok, MO_TOK_LIT, j - i);
			re->n_tok += j - i;
			if (j == len)
				break;
			i = j;
		}
		unsigned char ch = (unsigned char)p[i];
		if (ch >= 0x80 || ch < 0x20)
			return false;
		unsigned c = mo_cls[ch] & 0xf;
		if (c == MO_C_LIT) {
			re->lit[re->n_tok] = (char)ch;
			re->tok[re->n_tok++] = MO_TOK_LIT;
		} else if (c == MO_C_DOT && i + 1 < len && p[i + 1] == '*') {
			re->tok[re->n_tok++] = MO_TOK_STAR;
			re->n_star++;
			i++;
		} else if (c == MO_C_DOT) {
			re->tok[re->n_tok++] = MO_TOK_ANY;
			re->n_any++;
		} else if (c == MO_C_ESC && i + 1 < len && mo_simple_escapable(p[i + 1])) {
			re->lit[re->n_tok] = p[++i];
			re->tok[re->n_tok++] = MO_TOK_LIT;
		} else {
			return false; /* a metacharacter, or '\\' escaping a letter */
		}
		/* a quantifier after a token ('a*', '.+', lazy '.*?', possessive
		 * '.*+') is not simple */
		if (i + 1 < len && (mo_cls[(unsigned char)p[i + 1]] & MO_C_QUANT))
			return false;
	}
	return true;
}

/* EXACT: every token a literal; SUFFIX: one leading '.*', then literals;
 * PREFIX: literals, then one '.*'; INFIX: '.*', literals, '.*'. lit[t] holds
 * the byte of literal token t, so the literals are one run of lit. */
static void mo_simple_shape(mo_regex *re)
{
	size_t anys = re->n_any, lits = re->n_tok - re->n_any - re->n_star;
	/* '.' (any byte of a plain subject) fits the fixed-length parts:
	 * 'self_attention.linear_qkv' is EXACT with one wildcard */
	re->any = anys > 0;
	size_t fixed = lits + anys;
	bool star0 = re->n_tok && re->tok[0] == MO_TOK_STAR;
	bool star1 = re->n_tok && re->tok[re->n_tok - 1] == MO_TOK_STAR;
	if (fixed == re->n_tok)
		re->shape = MO_SHAPE_EXACT;
	else if (star0 && fixed == re->n_tok - 1)
		re->shape = MO_SHAPE_SUFFIX;
	else if (star1 && fixed == re->n_tok - 1)
		re->shape = MO_SHAPE_PREFIX; /* 'mlp\.experts\..*' */
	else if (star0 && star1 && re->n_tok >= 2 && lits == re->n_tok - 2)
		re->shape = MO_SHAPE_INFIX; /* '.*input.*' */
}

/* Tokens t.. (literals and '.') against s[0..m). */
static bool mo_fixed_eq(const mo_regex *re, size_t t, const char *s, size_t m)
{
	if (!re->any)
		return memcmp(s, re->lit + t, m) == 0;
	for (size_t i = 0; i < m; i++)
		if (re->tok[t + i] != MO_TOK_ANY && re->lit[t + i] != s[i])
			return false;
	return true;
}

static bool mo_shape_match(const mo_regex *re, const char *s, size_t n)
{
	if (re->shape == MO_SHAPE_EXACT)
		return n == re->n_tok && mo_fixed_eq(re, 0, s, n);
	if (re->shape == MO_SHAPE_PREFIX)
		return n >= re->n_tok - 1 && mo_fixed_eq(re, 0, s, re->n_tok - 1);
	if (re->shape == MO_SHAPE_INFIX)
		return memmem(s, n, re->lit + 1, re->n_tok - 2) != NULL;
	size_t m = re->n_tok - 1; /* SUFFIX */
	return n >= m && mo_fixed_eq(re, 1, s + n - m, m);
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
	/* eight bytes a step: no high bit, then no byte below 0x20 (exact
	 * once no byte has its high bit) */
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		if ((w & highs) || ((w - 0x20 * ones) & ~w & highs))
			return false;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || (unsigned char)s[i] < 0x20)
			return false;
	return true;
}

/* ---- alternations of simple sequences ------------------------------------
 * '(?:self_attention|mlp)\..*allgather', '.*(allgather|reducescatter)',
 * 'a|b': groups (capturing or not, not nested, without a quantifier) and
 * top-level '|' whose every expansion is a simple pattern. A full match
 * reports no groups, so the pattern matches exactly the subjects one of its
 * expansions matches ('self_attention\..*allgather', 'mlp\..*allgather');
 * anything else (or more than MO_ALT_MAX expansions) goes to PCRE2. */
#define MO_ALT_MAX 8

typedef struct mo_alt_set {
	char *s[MO_ALT_MAX]; /* expansions so far (malloc'd, NUL-terminated) */
	size_t n;
} mo_alt_set;

static void mo_alt_set_free(mo_alt_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->s[i]);
	set->n = 0;
}

static bool mo_piece_simple(const char *p, size_t n);

/* Appends p[0..n) to every expansion of `set`. */
static bool mo_alt_append(mo_alt_set *set, const char *p, size_t n)
{
	if (!mo_piece_simple(p, n))
		return false;
	for (size_t i = 0; i < set->n; i++) {
		size_t l = strlen(set->s[i]);
		char *s = realloc(set->s[i], l + n + 1);
		if (!s)
			return false;
		memcpy(s + l, p, n);
		s[l + n] = '\0';
		set->s[i] = s;
	}
	return true;
}

/* The end of a group's body at p (its ')'), or NULL when the group nests,
 * is unclosed or carries a quantifier. */
static const char *mo_alt_group_end(const char *p, const char *end)
{
	for (const char *q = p; q < end; q++) {
		if (*q == '\\') {
			q++;
			continue;
		}
		if (*q == '(')
			return NULL;
		if (*q == ')')
			return q + 1 < end && mo_simple_quantifier(q[1]) ? NULL : q;
	}
	return NULL;
}

/* Every expansion of `set` times every '|'-separated choice of the group
 * body [p, end). */
static bool mo_alt_group(mo_alt_set *set, const char *p, const char *end)
{
	mo_alt_set out = {.n = 0};
	for (const char *c = p;;) {
		const char *e = c;
		while (e < end && *e != '|')
			e += *e == '\\' && e + 1 < end ? 2 : 1;
		if (!mo_piece_simple(c, (size_t)(e - c))) {
			mo_alt_set_free(&out);
			return false;
		}
		for (size_t i = 0; i < set->n; i++) {
			size_t l = strlen(set->s[i]);
			char *s = out.n < MO_ALT_MAX ? malloc(l + (size_t)(e - c) + 1) : NULL;
			if (!s) {
				mo_alt_set_free(&out);
				return false;
			}
			memcpy(s, set->s[i], l);
			memcpy(s + l, c, (size_t)(e - c));
			s[l + (size_t)(e - c)] = '\0';
			out.s[out.n++] = s;
		}
		if (e >= end)
			break;
		c = e + 1;
	}
	mo_alt_set_free(set);
	*set = out;
	return true;
}

/* Expands one top-level branch [p, end) into `set` (which holds ""). */
static bool mo_alt_branch(mo_alt_set *set, const char *p, const char *end)
{
	while (p < end) {
		const char *q = p;
		while (q < end && *q != '(' && *q != ')')
			q += *q == '\\' && q + 1 < end ? 2 : 1;
		if (!mo_alt_append(set, p, (size_t)(q - p)))
			return false;
		if (q >= end)
			return true;
		if (*q == ')')
			return false;
		const char *body = q + 1;
		if (body < end && *body == '?') {
			if (body + 1 >= end || body[1] != ':')
				return false;
			body += 2;
		}
		const char *close = mo_alt_group_end(body, end);
		if (!close || !mo_alt_group(set, body, close))
			return false;
		p = close + 1;
	}
	return true;
}

static bool mo_simple_parse(mo_regex *re, const char *p, size_t len);
static void mo_simple_shape(mo_regex *re);
void mo_regex_free(mo_regex *re);

/* A regex with `arrays` byte arrays of len + 1 behind it (token kinds,
 * literal bytes, pattern copy): only the struct is zeroed, the arrays are
 * written before they are read (lit[t] only for literal tokens). */
static mo_regex *mo_regex_block(size_t len, size_t arrays)
{
	mo_regex *re = malloc(sizeof(*re) + arrays * (len + 1));
	if (re)
		*re = (mo_regex){0};
	return re;
}

/* A simple regex for one expansion, or NULL. */
static mo_regex *mo_simple_new(const char *p, size_t len)
{
	mo_regex *re = mo_regex_block(len, 2);
	if (!re)
		return NULL;
	re->tok = (unsigned char *)(re + 1);
	re->lit = (char *)re->tok + len + 1;
	if (!mo_simple_parse(re, p, len)) {
		free(re);
		return NULL;
	}
	mo_simple_shape(re);
	return re;
}

/* Every piece (text between groups, each choice of a group) must be simple
 * on its own: joined, '.' + '*' would make a '.*' PCRE2 rejects. */
static bool mo_piece_simple(const char *p, size_t n)
{
	mo_regex *re = mo_simple_new(p, n);
	free(re);
	return re != NULL;
}

/* Sets re->alts when the pattern is an alternation of simple sequences. */
static bool mo_alt_parse(mo_regex *re, const char *p, size_t len)
{
	if (memchr(p, '\0', len))
		return false;
	mo_alt_set all = {.n = 0};
	bool ok = true;
	for (const char *b = p, *end = p + len; ok;) {
		const char *e = b;
		int depth = 0;
		while (e < end && (depth || *e != '|')) {
			depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
			e += *e == '\\' && e + 1 < end ? 2 : 1;
		}
		mo_alt_set one = {.n = 1};
		one.s[0] = calloc(1, 1);
		ok = one.s[0] && mo_alt_branch(&one, b, e) && all.n + one.n <= MO_ALT_MAX;
		for (size_t i = 0; ok && i < one.n; i++)
			all.s[all.n++] = one.s[i];
		if (!ok)
			mo_alt_set_free(&one);
		if (e >= end)
			break;
		b = e + 1;
	}
	ok = ok && all.n > 1;
	re->alts = ok ? calloc(all.n, sizeof(*re->alts)) : NULL;
	for (size_t i = 0; re->alts && i < all.n && ok; i++) {
		re->alts[i] = mo_simple_new(all.s[i], strlen(all.s[i]));
		ok = re->alts[i] != NULL;
		re->n_alts = i + 1;
	}
	mo_alt_set_free(&all);
	if (!ok || !re->alts) {
		for (size_t i = 0; re->alts && i < re->n_alts; i++)
			mo_regex_free(re->alts[i]);
		free(re->alts);
		re->alts = NULL;
		re->n_alts = 0;
		return false;
	}
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
	mo_regex *re = mo_arena_alloc_raw(a, sizeof(*re) + 3 * (len + 1));
	if (!re) {
		*errmsg = "out of memory";
		return NULL;
	}
	*re = (mo_regex){.in_arena = true};
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
	re->n_tok = re->n_any = re->n_star = 0;
	if (mo_alt_parse(re, pattern, len)) {
		memcpy(re->pattern, pattern, len);
		re->pattern[len] = '\0';
		re->len = len;
		return re;
	}
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

mo_regex *mo_regex_share(mo_regex *re)
{
	if (re)
		re->shares++;
	return re;
}

void mo_regex_free(mo_regex *re)
{
	if (!re)
		return;
	if (re->shares) {
		re->shares--;
		return;
	}
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	for (size_t i = 0; i < re->n_alts; i++)
		mo_regex_free(re->alts[i]);
	free(re->alts);
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

/* A simple pattern, or an alternation of them, on a plain subject. */
static int mo_simple_any(const mo_regex *re, const char *subject, size_t len)
{
	if (!re->n_alts)
		return mo_simple_match(re, subject, len);
	for (size_t i = 0; i < re->n_alts; i++)
		if (mo_simple_match(re->alts[i], subject, len))
			return 1;
	return 0;
}

int mo_matcher_match_plain(mo_matcher *mt, const mo_regex *re, const char *subject,
			   size_t len)
{
	if (!re->code)
		return mo_simple_any(re, subject, len);
	return mo_pcre2_result(pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0,
					   PCRE2_NO_UTF_CHECK, mt->md, re->mctx));
}

void mo_regex_ends(const mo_regex *re, int *first, int *last)
{
	*first = *last = -1;
	if (re->n_alts) { /* the bytes every expansion needs */
		int f, l;
		mo_regex_ends(re->alts[0], first, last);
		for (size_t i = 1; i < re->n_alts; i++) {
			mo_regex_ends(re->alts[i], &f, &l);
			*first = f == *first ? f : -1;
			*last = l == *last ? l : -1;
		}
		return;
	}
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
		return plain ? mo_simple_any(re, subject, len)
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
