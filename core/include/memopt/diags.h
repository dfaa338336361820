/*
 * memopt — diagnostics: the findings about a config or model, with code and position.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_DIAGS_H
#define MEMOPT_API_DIAGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef enum mo_severity { MO_SEV_ERROR = 0, MO_SEV_WARNING = 1 } mo_severity;

/* One finding. Every string is borrowed from the mo_diags list that holds
 * it and stays valid until mo_diags_free. */
typedef struct mo_diag {
	mo_severity severity;
	const char *code;    /* stable code, e.g. "layer-order" */
	const char *message; /* one line */
	const char *hint;    /* "did you mean ..." or NULL */
	const char *path;    /* e.g. recompute.select_module['.*mlp'][1]; "" for none */
	const char *file;    /* which input: the config's or the model's name */
	int line;            /* 1-based; 0 when the diagnostic has no position */
	int column;
	const char *layers;  /* the layers it is about, as "8-11, 14" (a
			      * ", ..." tail when cut), or NULL */
} mo_diag;

/* Opaque, owned by the caller: a list the calls below append to. */
typedef struct mo_diags mo_diags;

/* Returns 0 with *out set (free it with mo_diags_free), or -1 when out of
 * memory. */
int mo_diags_new(mo_diags **out);
/* Frees the list and every string its findings hold; NULL is fine. */
void mo_diags_free(mo_diags *d);
/* How many findings the list holds. */
size_t mo_diags_count(const mo_diags *d);
/* How many of them are errors. */
size_t mo_diags_errors(const mo_diags *d);
/* How many of them are warnings. */
size_t mo_diags_warnings(const mo_diags *d);
/* Finding i (NULL when i >= mo_diags_count); borrowed, valid until the
 * list is freed. */
const mo_diag *mo_diags_get(const mo_diags *d, size_t i);
/* Orders the findings by file (in the order files first appeared), line,
 * column; findings without a position last in their file; equal positions
 * keep the order they were added in. */
void mo_diags_sort(mo_diags *d);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
