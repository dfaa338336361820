/*
 * memopt — sizes written as text (58GiB, 64GB, 1024).
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_SIZES_H
#define MEMOPT_API_SIZES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Parses a size such as 58GiB, 64GB, 1024 (bytes) into *out. Returns 0,
 * or -1 when the text is not a size or the value does not fit 64 bits. */
int mo_parse_size(uint64_t *out, const char *text);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
