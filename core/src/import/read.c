/* The readers' shared helpers (model_file.c, graph_mode.c, accounting.c):
 * a value read as an integer, boolean or string with the `type` finding at
 * its position when it is not one, and a field marked as given by the
 * file. */
#include "import/import_internal.h"

#include <string.h>

void model_type_err(struct mo_rd *r, const mo_node *v,
			      const char *path, const char *want)
{
	diags_add_at(r->diags, MO_SEV_ERROR, "type", r->file, v, path,
			"%s must be %s, got %s", path, want,
			node_type_name(v));
}

bool model_is_null(const mo_node *v)
{
	return v->kind == MO_NODE_SCALAR &&
	       scalar_resolve(v) == MO_SCALAR_NULL;
}

/* A string scalar (quoted or plain) or NULL. */
const char *model_str(const mo_node *v)
{
	if (v->kind != MO_NODE_SCALAR)
		return NULL;
	mo_scalar_type t = scalar_resolve(v);
	if (t != MO_SCALAR_STR)
		return NULL;
	if (strlen(v->value) != v->len)
		return NULL;
	return v->value;
}

bool model_read_int(struct mo_rd *r, const mo_node *v,
			      const char *path, int64_t lo, int64_t hi,
			      int64_t *out)
{
	bool overflow = false;
	int64_t x;
	if (!scalar_int(v, &x, &overflow) && !overflow) {
		model_type_err(r, v, path, "an integer");
		return false;
	}
	if (overflow || x < lo || x > hi) {
		diags_add_at(r->diags, MO_SEV_ERROR, "type", r->file, v,
				path, "%s must be an integer in [%lld, %lld]",
				path, (long long)lo, (long long)hi);
		return false;
	}
	*out = x;
	return true;
}

bool model_read_bool(struct mo_rd *r, const mo_node *v,
			       const char *path, bool *out)
{
	if (!scalar_bool(v, out)) {
		model_type_err(r, v, path, "a boolean");
		return false;
	}
	return true;
}

void model_mark_at(struct mo_rd *r, enum mo_mf f, int line, int column, const char *path)
{
	struct mo_model_ext *x = r->m->ext;
	x->set[f] = true;
	x->pos[f].line = line;
	x->pos[f].column = column;
	x->pos[f].path = arena_strdup(r->m->arena, path);
	x->pos[f].file = r->file == r->m->name ? NULL : r->file;
	if (!x->pos[f].path)
		r->failed = true;
}

const char *model_pos_file(const struct mo_rd *r, enum mo_mf f)
{
	const char *file = r->m->ext->pos[f].file;
	return file ? file : r->m->name;
}

void model_mark(struct mo_rd *r, enum mo_mf f, const mo_node *v, const char *path)
{
	model_mark_at(r, f, v->line, v->column, path);
}
