/* The public read-only view of a parsed config (memopt.h): its sections as
 * written, with the lines they span, and its regex patterns with matching
 * against a path. What an editor (the web UI through POST /api/v1/layout)
 * builds its controls from, without seeing the config struct. */
#include "config/config.h"

#include <string.h>

/* 1-based line of a byte offset. */
static int config_line_of(const mo_doc *d, size_t offset)
{
	int line = 1;

	for (size_t i = 0; i < offset && i < d->srclen; i++)
		if (d->src[i] == '\n')
			line++;
	return line;
}

/* Lines [first, end) of a top-level block section: from its key's line to
 * the line where its value ends (exclusive). Only for a key in column 1 of
 * a block mapping; false otherwise. */
static bool config_span(const mo_doc *d, const mo_node *key, const mo_node *val, int *first,
			   int *end)
{
	int e;

	if (!d || !d->src || !d->root || d->root->flow || !key || !val || key->column != 1)
		return false;
	e = config_line_of(d, val->end);
	if (val->end > 0 && val->end <= d->srclen && d->src[val->end - 1] != '\n')
		e++;
	if (e <= key->line)
		e = key->line + 1;
	*first = key->line;
	*end = e;
	return true;
}

const mo_node *mo_config_section(const mo_config *c, const char *name, int *first_line,
				 int *end_line)
{
	const mo_node *key = NULL, *val = NULL;
	int first = 0, end = 0;

	if (c && name && strcmp(name, "recompute") == 0) {
		key = c->recompute_key;
		val = c->recompute_val;
	} else if (c && name && strcmp(name, "recompute_comm") == 0) {
		key = c->comm_key;
		val = c->comm_val;
	} else if (c && name && strcmp(name, "swap") == 0) {
		key = c->swap_key;
		val = c->swap_val;
	}
	if (key && !config_span(c->doc, key, val, &first, &end))
		first = end = 0;
	if (first_line)
		*first_line = first;
	if (end_line)
		*end_line = end;
	return key ? val : NULL;
}

/* ---- patterns --------------------------------------------------------------- */

/* Pattern i in the public order, with where it was written. */
static const mo_pattern *config_pattern_at(const mo_config *c, size_t i, const char **section,
					      const char **key, int *comm_only)
{
	const mo_pattern_list *lists[] = {&c->select, &c->exclude, &c->comm};
	static const char *const sections[] = {"recompute", "recompute", "recompute_comm"};
	static const char *const keys[] = {"select_module", "exclude_op", "select_module"};

	for (size_t l = 0; l < 3; l++) {
		if (i < lists[l]->n) {
			*section = sections[l];
			*key = lists[l]->p[i].discard ? "discard_module" : keys[l];
			*comm_only = l == 2;
			return &lists[l]->p[i];
		}
		i -= lists[l]->n;
	}
	if (i < c->n_op_swap) {
		*section = "swap";
		*key = "op_swap";
		*comm_only = 0;
		return &c->op_swap[i].pat;
	}
	return NULL;
}

size_t mo_config_pattern_count(const mo_config *c)
{
	if (!c)
		return 0;
	return c->select.n + c->exclude.n + c->comm.n + c->n_op_swap;
}

int mo_config_pattern_get(mo_config_pattern *out, const mo_config *c, size_t i)
{
	const char *section, *key;
	int comm_only;
	const mo_pattern *p = c ? config_pattern_at(c, i, &section, &key, &comm_only) : NULL;

	if (!p)
		return -1;
	out->section = section;
	out->key = key;
	out->regex = p->regex ? p->regex : "";
	out->compiled = p->re != NULL;
	out->comm_only = comm_only;
	return 0;
}

int mo_config_pattern_match(mo_matcher *mt, const mo_config *c, size_t i, const char *path,
			    size_t len)
{
	const char *section, *key;
	int comm_only;
	const mo_pattern *p = c ? config_pattern_at(c, i, &section, &key, &comm_only) : NULL;

	if (!p || !p->re || !mt || !path)
		return 0;
	return matcher_match(mt, p->re, path, len);
}
