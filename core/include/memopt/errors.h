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

/* What went wrong, for a caller to switch on (the text is for people and
 * may change). Values are stable; new ones are appended. */
typedef enum mo_error_code {
	MO_OK = 0,
	MO_ERR_NOMEM,   /* allocation failed */
	MO_ERR_LIMIT,   /* a size/depth/count limit was hit */
	MO_ERR_IO,      /* file unreadable */
	MO_ERR_USAGE,   /* bad argument (unknown preset, NULL where not allowed) */
	MO_ERR_INVALID, /* the input has errors: see the diagnostics */
	MO_ERR_INTERNAL,
	MO_ERR_BUDGET,  /* the work budget's deadline passed (mo_budget.max_ms);
			 * text "work-limit: ..." */
	MO_ERR_CANCELLED, /* the work budget's callback asked to stop
			   * (mo_budget.cancelled); text "cancelled: ..." */
	MO_ERR_MODEL_NEEDED /* the answer needs what the model leaves open: the
			     * device count (data_parallel_shard -1 and no
			     * parallel.world_size). The text says what is
			     * missing; how to give it is the caller's to say. */
} mo_error_code;

/* Caller-owned (no pointers inside, nothing to free), like jansson's
 * json_error_t; filled only by a function that fails with -1. */
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
