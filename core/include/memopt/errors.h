/*
 * memopt — hard errors: the caller-owned mo_error every failing call fills.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_ERRORS_H
#define MEMOPT_API_ERRORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef enum mo_error_code {
	MO_OK = 0,
	MO_ERR_NOMEM,   /* allocation failed */
	MO_ERR_LIMIT,   /* a size/depth/count limit was hit */
	MO_ERR_IO,      /* file unreadable */
	MO_ERR_USAGE,   /* bad argument (unknown preset, NULL where not allowed) */
	MO_ERR_INVALID, /* the input has errors: see the diagnostics */
	MO_ERR_INTERNAL,
	MO_ERR_BUDGET   /* the work budget (mo_budget) ran out or was cancelled */
} mo_error_code;

/* Caller-owned (no pointers inside, nothing to free); filled only by a
 * function that fails with -1. */
typedef struct mo_error {
	mo_error_code code;
	int line;   /* 1-based, 0 when unknown */
	int column; /* 1-based, 0 when unknown */
	char text[256];
} mo_error;

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
