/*
 * memopt — checking: every rule against a model, and mo_check, the one call the faces make.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_CHECK_H
#define MEMOPT_API_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/diags.h>
#include <memopt/limits.h>
#include <memopt/model.h>
#include <memopt/config.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Every rule of the configuration language against the model (NULL: checks that need one
 * report `model-needed`). Appends to diags. Returns the number of errors
 * appended. */
size_t mo_validate(mo_diags *diags, const mo_config *c, const mo_model *m);

/* The config applied to a model: the action of every path of every layer, worked out once by
 * validation and handed on to expansion (mo_expand_resolved) and the estimate
 * (mo_estimate_resolved), so neither works it out again. Opaque and read-only; it points into
 * the config and the model it was built from, which must outlive it. Free with
 * mo_resolved_free (each holder its own reference: a plan keeps one). */
typedef struct mo_resolved mo_resolved;

/* mo_validate, and when m is given and the config has no error, *out = its resolution (NULL
 * otherwise: no model, errors, or out of memory, said in diags). Returns the errors appended. */
size_t mo_validate_resolve(mo_diags *diags, const mo_config *c, const mo_model *m,
			   mo_resolved **out);
/* Drops the caller's reference; NULL is fine. */
void mo_resolved_free(mo_resolved *r);

/* One call for the faces: config + model + every rule. */

/* Caller-owned, usually on the stack; only read during the call. Initialise
 * it with designated initialisers or = {0}: later versions may append
 * fields, and a zero field always means its default. (Bindings that mirror
 * the struct, like bindings/python, must follow it field for field.) */
typedef struct mo_input {
	const char *config;      /* config text (required) */
	size_t config_len;
	const char *config_name; /* label for diagnostics */
	const char *preset;      /* a preset name, or NULL */
	const char *model;       /* model file text, or NULL */
	size_t model_len;
	const char *model_name;
	int64_t devices;         /* 0 = as the model says */
	const mo_limits *limits; /* NULL = defaults */
	/* A loaded model to check against instead (borrowed, read-only, its
	 * devices already applied: e.g. a server's cached preset). *model
	 * stays NULL then. */
	const mo_model *shared_model;
	/* The folder the model file was read from, when the caller read it
	 * from disk: a Megatron launch script's `source FILE` is read from
	 * there (mo_megatron_import_dir). NULL: sourced files are reported,
	 * not read (a server, or a text from elsewhere). */
	const char *model_dir;
	/* The folder the paths a training YAML names are opened from, as the
	 * framework opens them at launch (the CLI gives its working directory):
	 * a YAML whose model is pretrained_model_dir's config.json, given with
	 * no model, has that config.json read. NULL: it is reported
	 * (model-needed), not read (a server). */
	const char *config_dir;
} mo_input;

/* Parses the config, takes the model from the preset, the model text or
 * else the config file itself (a training YAML), applies devices, and runs
 * every rule (the model's `parallel` checks included). *cfg and *model are
 * set when available (model may stay NULL: then `model-needed` applies).
 * Returns 0 (diags tell whether it is valid), or -1 on a hard error: an
 * unknown preset (MO_ERR_USAGE), limits, memory.
 * Ownership: the caller owns diags (appended to), and on return 0 owns *cfg
 * and *model whenever they are non-NULL, valid or not: free them with
 * mo_config_free / mo_model_free. On -1 both are NULL. Every text in *in is
 * copied; *in may go away after the call. */
int mo_check(mo_config **cfg, mo_model **model, mo_diags *diags, const mo_input *in,
	     mo_error *err);
/* mo_check, and *resolved = the resolution validation built (mo_validate_resolve: NULL unless
 * there is a model and no error), for mo_expand_resolved / mo_estimate_resolved. The caller
 * owns it; free it before *cfg and *model. */
int mo_check_resolved(mo_config **cfg, mo_model **model, mo_resolved **resolved,
		      mo_diags *diags, const mo_input *in, mo_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
