/* resolve: the config applied to a model: segments of identical layers, the
 * per-path actions, the model-dependent findings, the expanded plan and the
 * check sequence every face runs. */
#ifndef MEMOPT_RESOLVE_H
#define MEMOPT_RESOLVE_H

#include "model/model.h"

/* ---- resolution: the config applied to the model ---------------------------
 * Layers are cut into segments where no layer list and no layer type
 * changes, so every layer of a segment gets the same actions: the work is
 * per segment, never per layer (1,000 layers, 20,000 patterns). */

typedef struct mo_seg {
	uint64_t lo, hi;     /* layer ids, inclusive */
	size_t type;
	bool full;           /* whole layer recomputed */
	bool swapped;        /* whole layer swapped */
	mo_action_kind *act; /* per path of the type */
	mo_rule *rule;       /* per path, while the segment is filled only */
	mo_action *roots;    /* root decisions */
	size_t n_roots, cap_roots;
} mo_seg;

/* The public mo_resolved: handed from validation to expansion and the estimate by the caller
 * (mo_validate_resolve), never kept behind the caller's back. */
struct mo_resolved {
	mo_arena *arena;
	const mo_config *c;
	const mo_model *m;
	uint64_t n_layers;     /* num_layers + mtp */
	mo_seg *segs;
	size_t n_segs;
	int refs;              /* holders: the caller and the plans made from it */
};

/* Applies c to m. When diags is non-NULL, the model-dependent findings
 * (layer-range, no-match, conflicts, ...) are reported. With out NULL it
 * only checks (no per-segment plan is kept). Returns 0 or -1 (out of
 * memory: err). */
int resolve(mo_resolved **out, const mo_config *c, const mo_model *m,
	       mo_diags *diags, mo_error *err);
/* Drops one reference (a plan shares its resolution with the caller). */
void resolved_free(mo_resolved *r);
/* One more holder of r. */
void resolved_hold(const mo_resolved *r);
/* Segment holding a layer (binary search), or NULL past the model. */
const mo_seg *resolved_seg(const mo_resolved *r, uint64_t layer);

#endif
