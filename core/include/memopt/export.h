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
#include <memopt/model.h>

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

/* The whole training YAML c as written, with the parallel layout and batch
 * of model m (a model given apart, as priced) written in the file's own
 * keys where they differ from the layout the file states: graph mode's
 * parallel_config (data_parallel, model_parallel, pipeline_stage,
 * context_parallel, expert_parallel, micro_batch_num, use_seq_parallel),
 * runner_config (batch_size, gradient_accumulation_steps),
 * parallel.enable_parallel_optimizer and model.model_config's offset and
 * pp_interleave_num; PyNative's parallelism (tensor_parallel,
 * context_parallel, pipeline_parallel, expert_parallel,
 * pipeline_parallel_interleave_num, data_parallel_shard) and training
 * (micro_batch_size or local_batch_size, global_batch_size). Each value's
 * bytes are replaced (its comment and line kept); a key the file lacks is
 * added as the last line of its section. Every other byte, the three
 * sections' comments included, is kept. Returns 0 with *out (ownership as
 * mo_export); 1 with *out NULL when there is nothing to write: the file
 * states m's layout, is no block-style training YAML with a
 * parallel_config or parallelism section, or has no model of its own (its
 * run is then read over m: mo_check); -1 with err (MO_ERR_INVALID: a key
 * to add has no block section to go in, or is an alias). */
int mo_export_run(char **out, size_t *out_len, const mo_config *c, const mo_model *m,
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
