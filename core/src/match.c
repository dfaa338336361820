/* PCRE2 full-match (Python re.fullmatch): ANCHORED|ENDANCHORED at compile
 * time so JIT stays usable, UTF+UCP for Python str semantics, and match,
 * depth and heap limits for hostile patterns. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "internal.h"

#include <pcre2.h>
#include <stdlib.h>

struct mo_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
};

struct mo_matcher {
	pcre2_match_data *md;
};

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
	mo_regex *re = calloc(1, sizeof(*re));
	if (!re) {
		*errmsg = "out of memory";
		return NULL;
	}
	re->code = pcre2_compile((PCRE2_SPTR)pattern, len,
				 PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_UTF | PCRE2_UCP,
				 &ec, &eoff, NULL);
	if (!re->code) {
		PCRE2_UCHAR buf[160];
		pcre2_get_error_message(ec, buf, sizeof buf);
		*errmsg = mo_arena_strdup(a, (const char *)buf);
		*erroffset = eoff;
		free(re);
		return NULL;
	}
	/* JIT failure is not fatal: the interpreter takes over. */
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	re->mctx = pcre2_match_context_create(NULL);
	if (!re->mctx) {
		pcre2_code_free(re->code);
		free(re);
		*errmsg = "out of memory";
		return NULL;
	}
	pcre2_set_match_limit(re->mctx, lim->match_limit);
	pcre2_set_depth_limit(re->mctx, lim->depth_limit);
	pcre2_set_heap_limit(re->mctx, 1024); /* KiB */
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

int mo_matcher_match(mo_matcher *mt, const mo_regex *re, const char *subject, size_t len)
{
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, mt->md, re->mctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return -1;
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
