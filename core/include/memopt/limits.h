/*
 * memopt — limits on hostile input: sizes, depth, counts, regex work.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_LIMITS_H
#define MEMOPT_API_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct mo_limits {
	size_t max_bytes;        /* input size (default 16 MiB) */
	size_t max_depth;        /* nesting depth (default 64) */
	size_t max_nodes;        /* nodes, aliases expanded (default 2,000,000) */
	size_t max_scalar_bytes; /* one scalar (default 1 MiB) */
	size_t max_patterns;     /* regex keys over all sections (default 10,000) */
	size_t max_pattern_bytes;/* one regex (default 4096) */
	uint32_t match_limit;    /* PCRE2 match limit per subject (default 100,000) */
	uint32_t depth_limit;    /* PCRE2 depth limit (default 1,000) */
} mo_limits;

/* Fills *lim with the defaults above. */
void mo_limits_default(mo_limits *lim);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
