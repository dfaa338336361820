/*
 * memopt — expansion: what each layer and path does under a config.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_EXPAND_H
#define MEMOPT_API_EXPAND_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/model.h>
#include <memopt/config.h>
#include <memopt/check.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* What happens to a layer or a path. */
typedef enum mo_action_kind {
	MO_ACT_KEEP = 0,
	MO_ACT_RECOMPUTE,
	MO_ACT_RECOMPUTE_COMM,
	MO_ACT_SWAP,
	/* recomputed, and its output freed once the next module has used it
	 * (Megatron's CheckpointWithoutOutput): the ops that saved that output
	 * hold nothing until backward makes it again */
	MO_ACT_DISCARD_OUTPUT
} mo_action_kind;

/* "keep", "recompute", "recompute_comm", "swap", "discard_output": static strings. */
const char *mo_action_name(mo_action_kind a);

/* The config entry an action comes from. */
typedef struct mo_rule {
	const char *section; /* "recompute", "recompute_comm", "swap" */
	const char *key;     /* e.g. "full_recompute_layer", "select_module['.*mlp']",
			      * "discard_module['.*input_layernorm']" */
	int line;            /* YAML line of the entry */
} mo_rule;

/* Borrowed from the plan: the strings (and the mo_rule inside) stay valid
 * until mo_plan_free. */
typedef struct mo_action {
	const char *path;    /* "" = the whole layer */
	mo_action_kind action;
	mo_rule rule;
} mo_action;

/* Opaque, owned by the caller, freed with mo_plan_free. */
typedef struct mo_plan mo_plan;

/* Expands a config that validated without errors. Returns 0 with *out set,
 * or -1 with *out NULL and err filled. The plan borrows c and m: free it
 * before them. */
int mo_expand(mo_plan **out, const mo_config *c, const mo_model *m,
	      mo_error *err);
/* The plan of a resolution validation built (mo_validate_resolve, mo_check_resolved): the
 * same plan as mo_expand, without resolving again. The plan holds its own reference. */
int mo_expand_resolved(mo_plan **out, const mo_resolved *r, mo_error *err);
/* Frees the plan; NULL is fine. */
void mo_plan_free(mo_plan *p);
/* Layers the plan covers (decoder and MTP layers). */
size_t mo_plan_layer_count(const mo_plan *p);
/* How many root actions a layer has: one per decision (a whole-layer
 * recompute or swap, each selected module, each excluded op kept inside
 * it, ...); 0 out of range. */
size_t mo_plan_action_count(const mo_plan *p, int64_t layer);
/* Root action i of a layer; borrowed from p, NULL out of range. */
const mo_action *mo_plan_action(const mo_plan *p, int64_t layer, size_t i);
/* Effective action of path path_index of the layer's type (index as
 * mo_model_path); MO_ACT_KEEP out of range. */
mo_action_kind mo_plan_path_action(const mo_plan *p, int64_t layer,
				   size_t path_index);
/* Default prefetch window of the swap section (1 when absent). */
int64_t mo_plan_prefetch(const mo_plan *p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
