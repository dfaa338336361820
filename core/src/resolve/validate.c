/* Every rule of docs/rules.md that config.c cannot check alone: the needs-rules,
 * layer ranges against the model, overlaps between mechanisms (on layer
 * ranges, no per-layer loops), swap limits and the model's own settings.
 * Path-level rules run with the fill (fill.c, findings.c, no_match.c). */
#include "resolve/resolve.h"

#include <stdio.h>
#include <string.h>

typedef struct mo_validation {
	const mo_config *c;
	const mo_model *m;
	mo_diags *diags;
	const char *file;
	size_t errors_before;
} mo_validation;

/* Layers in both lists, as text; the first item of b that meets a. */
static bool intersect(const mo_layers *a, const mo_layers *b, char *buf, size_t size,
			 const mo_range **first_b)
{
	size_t i = 0, j = 0;
	buf[0] = '\0';
	*first_b = NULL;
	while (i < a->n && j < b->n) {
		uint64_t lo = a->r[i].lo > b->r[j].lo ? a->r[i].lo : b->r[j].lo;
		uint64_t hi = a->r[i].hi < b->r[j].hi ? a->r[i].hi : b->r[j].hi;
		if (lo <= hi) {
			ranges_append(buf, size, lo, hi);
			if (!*first_b)
				*first_b = &b->r[j];
		}
		if (a->r[i].hi < b->r[j].hi)
			i++;
		else
			j++;
	}
	return *first_b != NULL;
}

static bool layers_present(const mo_layers *l)
{
	return l->at && l->at->kind == MO_NODE_SEQ && l->at->n > 0;
}

static bool validation_needs_model(const mo_config *c)
{
	const mo_pattern_list *lists[] = {&c->select, &c->exclude, &c->comm};
	if (layers_present(&c->full) || c->n_layer_swap || c->n_op_swap)
		return true;
	for (size_t l = 0; l < 3; l++)
		if (lists[l]->n)
			return true;
	return false;
}

static const mo_node *validation_first_list(const mo_config *c, const char **path)
{
	const mo_node *cands[] = {c->full.at, c->select.at, c->exclude.at, c->comm.at,
				  c->layer_swap_at, c->op_swap_at};
	static const char *const paths[] = {"recompute.full_recompute_layer",
					    "recompute.select_module", "recompute.exclude_op",
					    "recompute_comm.select_module", "swap.layer_swap",
					    "swap.op_swap"};
	const mo_node *best = NULL;
	*path = "recompute";
	for (size_t i = 0; i < 6; i++)
		if (cands[i] && (!best || cands[i]->start < best->start)) {
			best = cands[i];
			*path = c->from_recompute_config && i < 4 ? "recompute_config" : paths[i];
		}
	return best;
}

/* no-effect: a list the section's switch leaves unused. The file reads
 * as if it recomputed or swapped those layers, and an edit of the list
 * changes nothing; the hint names the switch that would use it. */
static void validation_unused(mo_validation *v, const mo_node *at, const char *path,
				 const char *why, const char *fix)
{
	mo_diag *d = diags_add_at(v->diags, MO_SEV_WARNING, "no-effect", v->file, at, path,
				     "%s does nothing: %s", path, why);
	diag_set_hint(v->diags, d, "%s", fix);
}

/* Why the recompute section's mode is None, when the file left it None: it
 * says so, or gives no mode (None is the default). NULL when the mode is null
 * or misspelt: those have their own finding (mode-invalid, or unknown-key for
 * a misspelt `mode:` key, so an absent mode beside errors in the sections is
 * left to them), and the lists then show what the writer meant. */
static const char *validation_none_because(const mo_config *c)
{
	const mo_node *m = c->mode_at;
	if (c->mode != MO_MODE_NONE)
		return NULL;
	if (!m)
		return c->structural_errors
			       ? NULL
			       : "no mode is given and None is the default, nothing is recomputed";
	if (m->kind == MO_NODE_SCALAR && m->value && strcmp(m->value, "None") == 0)
		return "mode is None, nothing is recomputed";
	return NULL;
}

static void validation_no_effect(mo_validation *v)
{
	const mo_config *c = v->c;
	const char *none = validation_none_because(c);
	if (none && layers_present(&c->full))
		validation_unused(v, c->full.at, "recompute.full_recompute_layer", none,
				     "set mode: full, or remove full_recompute_layer");
	if (none && c->select.n)
		validation_unused(v, c->select.at ? c->select.at : c->discard_at,
				     c->select.at ? "recompute.select_module" : "recompute.discard_module",
				     none, "set mode: select, or remove select_module and discard_module");
	if (c->has_swap && !c->swap_enable && c->n_layer_swap)
		validation_unused(v, c->layer_swap_at, "swap.layer_swap",
				     "swap.enable is False, nothing is swapped",
				     "set enable: True in swap, or remove layer_swap");
	if (c->has_swap && !c->swap_enable && c->n_op_swap)
		validation_unused(v, c->op_swap_at, "swap.op_swap",
				     "swap.enable is False, nothing is swapped",
				     "set enable: True in swap, or remove op_swap");
	if (!c->comm_enable && c->comm.n)
		validation_unused(v, c->comm.at, "recompute_comm.select_module",
				     "recompute_comm.enable is False, no communication is recomputed",
				     "set enable: True in recompute_comm, or remove select_module");
}

static void validation_needs(mo_validation *v)
{
	const mo_config *c = v->c;
	const mo_node *at = c->mode_at ? c->mode_at : c->recompute_key;
	/* a value of the wrong type was reported as `type` already */
	bool full_bad = c->full.at && c->full.at->kind != MO_NODE_SEQ;
	bool select_bad = c->select.at && c->select.at->kind != MO_NODE_MAP;
	bool comm_bad = c->comm.at && c->comm.at->kind != MO_NODE_MAP;
	if (c->mode == MO_MODE_FULL && !full_bad && !layers_present(&c->full)) {
		mo_diag *d = diags_add_at(v->diags, MO_SEV_ERROR, "full-needs-layers", v->file,
					     c->full.at ? c->full.at : at, "recompute.full_recompute_layer",
					     "mode: full needs a non-empty full_recompute_layer");
		diag_set_hint(v->diags, d, "add full_recompute_layer: [0-15]");
	}
	bool discards = c->discard_at && c->discard_at->n;
	if (c->mode == MO_MODE_SELECT && !select_bad && !discards &&
	    (!c->select.at || !c->select.at->n)) {
		mo_diag *d = diags_add_at(v->diags, MO_SEV_ERROR, "select-needs-modules", v->file,
					     c->select.at ? c->select.at : at, "recompute.select_module",
					     "mode: select needs a non-empty select_module or discard_module");
		diag_set_hint(v->diags, d, "add select_module: {'.*mlp': [0-31]}");
	}
	if (c->comm_enable && !comm_bad && (!c->comm.at || !c->comm.at->n)) {
		mo_diag *d = diags_add_at(v->diags, MO_SEV_ERROR, "comm-needs-modules", v->file,
					     c->comm.at ? c->comm.at : c->comm_enable_at,
					     "recompute_comm.select_module",
					     "recompute_comm.enable: True needs a non-empty select_module");
		diag_set_hint(v->diags, d, "add select_module: {'.*allgather': [0-3]}");
	}
	validation_no_effect(v);
	if (c->mode == MO_MODE_NONE && c->exclude.n) {
		mo_diag *d = diags_add_at(v->diags, MO_SEV_WARNING, "exclude-no-effect", v->file,
					     c->exclude.at, "recompute.exclude_op",
					     "exclude_op has no effect with mode None: nothing is recomputed");
		diag_set_hint(v->diags, d, "set mode: full or select, or remove exclude_op");
	}
}

static void validation_range_list(mo_validation *v, const mo_layers *l, const char *path)
{
	uint64_t N = (uint64_t)(v->m->num_layers + v->m->mtp_num_layers);
	for (size_t i = 0; i < l->n; i++) {
		if (l->r[i].hi < N)
			continue;
		char max[64];
		if (v->m->mtp_num_layers)
			snprintf(max, sizeof max, "0-%lld, MTP %lld-%lld",
				 (long long)v->m->num_layers - 1, (long long)v->m->num_layers,
				 (long long)N - 1);
		else
			snprintf(max, sizeof max, "0-%lld", (long long)N - 1);
		char what[96];
		if (l->r[i].hi == UINT64_MAX)
			snprintf(what, sizeof what, "layer '%.40s' (past 2^64) is", l->r[i].at->value);
		else if (l->r[i].lo == l->r[i].hi || l->r[i].lo >= N)
			snprintf(what, sizeof what, "layer '%.40s' is", l->r[i].at->value);
		else
			snprintf(what, sizeof what, "range '%.40s' is, from layer %llu on,",
				 l->r[i].at->value, (unsigned long long)N);
		mo_diag *d = diags_add_at(v->diags, MO_SEV_ERROR, "layer-range", v->file,
					     l->r[i].at, path, "%s outside the model (layers %s)",
					     what, max);
		diag_set_hint(v->diags, d, "ids run from 0 to %llu", (unsigned long long)N - 1);
	}
}

static void validation_ranges_all(mo_validation *v)
{
	const mo_config *c = v->c;
	const mo_pattern_list *lists[] = {&c->select, &c->exclude, &c->comm};
	validation_range_list(v, &c->full, "recompute.full_recompute_layer");
	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			validation_range_list(v, &lists[l]->p[i].layers, lists[l]->p[i].dpath);
	for (size_t i = 0; i < c->n_layer_swap; i++) {
		char path[64]; /* the entry's index: the web UI marks that entry */
		snprintf(path, sizeof path, "swap.layer_swap[%zu].layers", i);
		validation_range_list(v, &c->layer_swap[i].layers, path);
	}
	for (size_t i = 0; i < c->n_op_swap; i++)
		validation_range_list(v, &c->op_swap[i].pat.layers, c->op_swap[i].pat.dpath);
}

static void validation_swap_against(mo_validation *v, const mo_layers *rec,
				       const char *what, int line)
{
	const mo_config *c = v->c;
	char buf[160], path[64];
	const mo_range *hit;
	for (size_t i = 0; i < c->n_layer_swap; i++) {
		if (!intersect(rec, &c->layer_swap[i].layers, buf, sizeof buf, &hit))
			continue;
		snprintf(path, sizeof path, "swap.layer_swap[%zu].layers", i);
		mo_diag *d = diags_add_at(
			v->diags, MO_SEV_ERROR, "recompute-swap-layer", v->file, hit->at, path,
			"layers %s are both recomputed (%.200s, line %d) and swapped (layer_swap[%zu])",
			buf, what, line, i);
		diag_set_hint(v->diags, d, "a layer is either recomputed or swapped, not both");
		diag_set_layers(v->diags, d, buf);
	}
}

/* Overlaps decided on layer ranges alone. */
static void validation_overlaps(mo_validation *v)
{
	const mo_config *c = v->c;
	bool rec = c->mode != MO_MODE_NONE;
	char buf[160];
	const mo_range *hit;
	if (c->swap_enable) {
		if (rec)
			validation_swap_against(v, &c->full, "recompute.full_recompute_layer",
				       c->full.at ? c->full.at->line : 0);
		for (size_t i = 0; rec && i < c->select.n; i++)
			validation_swap_against(v, &c->select.p[i].layers, c->select.p[i].dpath,
				       c->select.p[i].key->line);
		for (size_t i = 0; c->comm_enable && i < c->comm.n; i++)
			validation_swap_against(v, &c->comm.p[i].layers, c->comm.p[i].dpath,
				       c->comm.p[i].key->line);
		for (size_t i = 0; rec && i < c->n_op_swap; i++) {
			if (!intersect(&c->full, &c->op_swap[i].pat.layers, buf, sizeof buf, &hit))
				continue;
			mo_diag *d = diags_add_at(
				v->diags, MO_SEV_ERROR, "full-op-swap", v->file, hit->at,
				c->op_swap[i].pat.dpath,
				"layers %s are fully recomputed (line %d) and also named by op_swap[%zu]",
				buf, c->full.at ? c->full.at->line : 0, i);
			diag_set_hint(v->diags, d, "drop these layers from op_swap or from full_recompute_layer");
			diag_set_layers(v->diags, d, buf);
		}
	}
	const mo_pattern_list *lists[] = {&c->select, &c->comm};
	bool active[] = {rec, c->comm_enable};
	for (size_t l = 0; rec && l < 2; l++)
		for (size_t i = 0; active[l] && i < lists[l]->n; i++) {
			const mo_pattern *p = &lists[l]->p[i];
			if (!p->re || !intersect(&c->full, &p->layers, buf, sizeof buf, &hit))
				continue;
			mo_diag *d = diags_add_at(
				v->diags, MO_SEV_WARNING, "redundant", v->file, hit->at, p->dpath,
				"'%.60s' on layers %s changes nothing: full_recompute_layer already recomputes them",
				p->regex, buf);
			diag_set_hint(v->diags, d, "drop these layers from the entry");
			diag_set_layers(v->diags, d, buf);
		}
}

static void validation_prefetch_list(mo_validation *v, const mo_layers *l, const char *path)
{
	int64_t nl = v->m->num_layers;
	for (size_t i = 0; i < l->n; i++) {
		if (l->r[i].hi >= (uint64_t)(nl + v->m->mtp_num_layers))
			continue; /* layer-range already */
		if (l->r[i].hi + (uint64_t)v->c->prefetch < (uint64_t)nl)
			continue;
		mo_diag *d = diags_add_at(
			v->diags, MO_SEV_ERROR, "prefetch-range", v->file, l->r[i].at, path,
			"swapped layer %llu + prefetch %lld reaches past the last layer (%lld): no later layer triggers its prefetch",
			(unsigned long long)l->r[i].hi, (long long)v->c->prefetch, (long long)nl - 1);
		diag_set_hint(v->diags, d, "swap layers up to %lld at most",
				 (long long)(nl - 1 - v->c->prefetch));
	}
}

static void validation_swap(mo_validation *v)
{
	const mo_config *c = v->c;
	if (!c->swap_enable)
		return;
	const mo_node *at = c->swap_enable_at ? c->swap_enable_at : c->swap_key;
	if (v->m && v->m->pipeline_parallel > 1) {
		mo_diag *d = diags_add_at(
			v->diags, MO_SEV_ERROR, "swap-pipeline", v->file, at, "swap.enable",
			"swap is enabled with pipeline parallel size %lld: swap does not support PP",
			(long long)v->m->pipeline_parallel);
		diag_set_hint(v->diags, d, "use recompute under pipeline parallelism");
	}
	int64_t maxp = v->m ? v->m->num_layers - 1 : INT64_MAX;
	if (c->prefetch < 1 || c->prefetch > maxp) {
		mo_diag *d = diags_add_at(v->diags, MO_SEV_ERROR, "prefetch-range", v->file,
					     c->prefetch_at ? c->prefetch_at : at,
					     "swap.default_prefetch",
					     "default_prefetch %lld is outside [1, %lld]",
					     (long long)c->prefetch, (long long)(maxp < 1 ? 1 : maxp));
		diag_set_hint(v->diags, d, "1 prefetches the next layer's activations");
		return;
	}
	if (!v->m)
		return;
	for (size_t i = 0; i < c->n_layer_swap; i++) {
		char path[64];
		snprintf(path, sizeof path, "swap.layer_swap[%zu].layers", i);
		validation_prefetch_list(v, &c->layer_swap[i].layers, path);
	}
	for (size_t i = 0; i < c->n_op_swap; i++)
		validation_prefetch_list(v, &c->op_swap[i].pat.layers, c->op_swap[i].pat.dpath);
}

static void validation_single_device(mo_validation *v)
{
	const mo_config *c = v->c;
	if (v->m->world_size != 1 || (c->mode == MO_MODE_NONE && !c->comm_enable))
		return;
	const mo_node *at = c->mode != MO_MODE_NONE ? (c->mode_at ? c->mode_at : c->recompute_key)
						    : c->comm_enable_at;
	mo_diag *d = diags_add_at(
		v->diags, MO_SEV_WARNING, "single-device", v->file, at, NULL,
		"recompute on a single device changes nothing: MindSpore Transformers PyNative applies it only when the world size is above 1");
	diag_set_hint(v->diags, d, "train on more than one device, or use swap");
}

size_t mo_validate(mo_diags *diags, const mo_config *c, const mo_model *m)
{
	return mo_validate_resolve(diags, c, m, NULL);
}

/* out NULL: resolve only checks (the segments share one scratch set of per-path arrays); else
 * the resolution of a config without errors is the caller's. */
size_t mo_validate_resolve(mo_diags *diags, const mo_config *c, const mo_model *m,
			   mo_resolved **out)
{
	size_t before = mo_diags_errors(diags);
	if (out)
		*out = NULL;
	if (!c || !c->doc)
		return 0; /* a YAML syntax error was reported */
	mo_validation v = {.c = c, .m = m, .diags = diags, .file = c->doc->name};
	validation_needs(&v);
	validation_overlaps(&v);
	validation_swap(&v);
	/* a model whose layer count was refused has its own error; checking
	 * layer ids against the one layer it stands with would add a second
	 * error that only follows from the first */
	if (!m || (m->ext && m->ext->layers_refused)) {
		if (!m && validation_needs_model(c)) {
			const char *path;
			const mo_node *at = validation_first_list(c, &path);
			/* no hint: how to give a model is each face's to say, by this code */
			diags_add_at(diags, MO_SEV_ERROR, "model-needed", v.file, at, path,
				     "layer ids and patterns can only be checked against a model");
		}
		return mo_diags_errors(diags) - before;
	}
	validation_ranges_all(&v);
	validation_single_device(&v);
	mo_error err = {0};
	mo_resolved *r = NULL;
	if (resolve(out ? &r : NULL, c, m, diags, &err) != 0)
		diags_add(diags, MO_SEV_ERROR, "internal", v.file, 0, 0, NULL, "%s", err.text);
	size_t errors = mo_diags_errors(diags) - before;
	if (errors)
		resolved_free(r);
	else if (out)
		*out = r;
	return errors;
}
