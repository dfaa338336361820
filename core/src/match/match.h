/* match: the regexes of select_module, exclude_op, recompute_comm and op_swap,
 * compiled and matched by PCRE2 (full match against paths relative to a
 * layer). */
#ifndef MEMOPT_MATCH_H
#define MEMOPT_MATCH_H

#include "util/util.h"

typedef struct mo_regex mo_regex;

/* ---- matching (PCRE2) ----------------------------------------------------- */

/* Compiles with ANCHORED|ENDANCHORED|UTF (+ JIT). On failure returns NULL
 * and sets *errmsg (arena) and *erroffset. */
/* The regex's block comes from `a`: call regex_free before freeing a. */
mo_regex *regex_compile(const char *pattern, size_t len,
			   const mo_limits *lim, mo_arena *a,
			   const char **errmsg, size_t *erroffset);
void regex_free(mo_regex *re);
/* One more holder of re: regex_free then frees it on its last holder's
 * call. Not synchronised: share and free while re is private to one thread
 * (e.g. while parsing the config that holds it). */
mo_regex *regex_share(mo_regex *re);
/* 1 match, 0 no match, -1 limit hit or error. Allocates match data per
 * call; for many subjects use a matcher. */
int regex_match(const mo_regex *re, const char *subject, size_t len);

/* Match data reusable across patterns: mo_matcher_new / _free are public
 * (memopt.h). */
int matcher_match(mo_matcher *mt, const mo_regex *re, const char *subject,
		     size_t len);
/* The byte a full match needs first / last (a simple pattern's literal
 * first / last token), -1 when any may do: a filter before matching. */
void regex_ends(const mo_regex *re, int *first, int *last);
/* Printable ASCII: the subjects the fast paths below accept. */
bool subject_is_plain(const char *subject, size_t len);
/* matcher_match for a subject known to be plain (checked once by the
 * caller for a whole path set). */
int matcher_match_plain(mo_matcher *mt, const mo_regex *re, const char *subject,
			   size_t len);

/* A shape that backtracks exponentially ('(.*)*x', '(a+)+$'): the reason,
 * with *offset at the repeat that makes it so; NULL when none is found. */
const char *regex_shape_check(const char *pattern, size_t len, size_t *offset);

#endif
