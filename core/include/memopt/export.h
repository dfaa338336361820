/*
 * memopt — export: the canonical YAML of a config, and the graph-mode migration.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_EXPORT_H
#define MEMOPT_API_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/diags.h>
#include <memopt/config.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Canonical YAML of the three sections (seed key order, flow-style merged
 * layer lists). For a whole training YAML, the original text with the
 * three sections replaced and every other byte kept. *out is malloc'd and
 * NUL-terminated (*out_len excludes the NUL; out_len may be NULL); the
 * caller frees it with free(). Returns 0, or -1 with *out NULL and err
 * filled. Does not validate: call mo_validate first. */
int mo_export(char **out, size_t *out_len, const mo_config *c, mo_error *err);
/* Canonical YAML of the three sections only (ownership as mo_export). */
int mo_export_sections(char **out, size_t *out_len, const mo_config *c,
		       mo_error *err);

/* A graph-mode training YAML with its top-level recompute_config replaced
 * by the recompute / recompute_comm sections that mean the same plan (the
 * plan mo_config_parse read from it), written in canonical form in the
 * block's place; every byte outside the block is kept. Keys of the block
 * that ask for something the sections cannot say (recompute_slice_activation,
 * the *_exclude lists, mp_comm_recompute, ...) are dropped with a
 * `no-equivalent` warning in diags; swap_config is left as it is, with the
 * same warning. Fails (MO_ERR_INVALID) when the file has no recompute_config,
 * already has a recompute / recompute_comm section, or the block is not
 * applied (PyNative file, nothing switched on, layers not placeable).
 * Ownership of *out as mo_export. Does not validate: call mo_validate first. */
int mo_migrate(char **out, size_t *out_len, mo_diags *diags, const mo_config *c,
	       mo_error *err);


#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
