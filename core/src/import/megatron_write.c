/* Megatron-LM arguments: what the import writes (typed model-file items,
 * each with the flag it comes from), and the model file written from them
 * with each key's source in a comment. */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- what the import writes
 * ---------------------------------------------------- */

static struct mo_megatron_item *
megatron_put(struct mo_megatron_out *o, int section, const char *key,
		int type, int field, const struct mo_megatron_arg *src,
		const char *why)
{
	if (o->n >= sizeof o->v / sizeof *o->v)
		return NULL;
	struct mo_megatron_item *it = &o->v[o->n++];
	*it = (struct mo_megatron_item){.item = {.sect = section, .type = type, .key = key},
					.field = field,
					.src = src,
					.why = why};
	return it;
}

/* The four typed writers differ only in the item's type tag and the member that holds the
 * value. */
#define MEGATRON_PUT(name, value_type, type_tag, member)                                        \
	void name(struct mo_megatron_out *o, int section, const char *key, value_type v,         \
		  int field, const struct mo_megatron_arg *src, const char *why)                 \
	{                                                                                        \
		struct mo_megatron_item *it =                                                    \
		    megatron_put(o, section, key, type_tag, field, src, why);                    \
		if (it)                                                                          \
			it->item.member = v;                                                     \
	}

MEGATRON_PUT(megatron_put_int, int64_t, MO_IT_INT, i)
MEGATRON_PUT(megatron_put_bool, bool, MO_IT_BOOL, i)
MEGATRON_PUT(megatron_put_double, double, MO_IT_DBL, d)
MEGATRON_PUT(megatron_put_str, const char *, MO_IT_STR, s)

/* The items in the order they are written (section by section). */
size_t megatron_order(const struct mo_megatron_out *o,
				const struct mo_megatron_item **order)
{
	size_t n = 0;
	for (int s = 0; s < MO_NSEC; s++)
		for (size_t i = 0; i < o->n; i++)
			if (o->v[i].item.sect == s)
				order[n++] = &o->v[i];
	return n;
}

int megatron_write_yaml(const struct mo_megatron_out *o, mo_buf *body,
				  mo_error *err)
{
	const struct mo_megatron_item *order[MO_MG_MAX_ITEMS];
	size_t n = megatron_order(o, order), k = 0;
	mo_yaml_writer *w = NULL;
	if (yaml_tree_writer_new(&w, MO_YAML_BREAK_LF, "megatron import", err) !=
	    0)
		return -1;
	bool ok = yaml_tree_write_mapping_start(w, NULL, false);
	for (int s = 0; s < MO_NSEC && ok; s++) {
		ok = yaml_tree_write_plain(w, mo_sec_names[s]) &&
		     yaml_tree_write_mapping_start(w, NULL, false);
		for (; ok && k < n && order[k]->item.sect == s; k++)
			ok = model_write_item(w, &order[k]->item);
		ok = ok && yaml_tree_write_mapping_end(w);
	}
	ok = ok && yaml_tree_write_mapping_end(w);
	int rc = ok ? yaml_tree_writer_finish(w, body, 0) : -1;
	if (rc != 0 && err && !err->text[0])
		error_set(err, MO_ERR_NOMEM, 0, 0,
			     "megatron import: out of memory");
	yaml_tree_writer_free(w);
	return rc;
}

/* The emitted text with each key's source as a trailing comment: the
 * writer puts one item per line, `  key: value`, in megatron_order's order.
 */
bool megatron_annotate(const struct mo_megatron_out *o,
				 const mo_buf *body, const char *name,
				 mo_buf *dst)
{
	const struct mo_megatron_item *order[MO_MG_MAX_ITEMS];
	size_t n = megatron_order(o, order), k = 0;
	buf_printf(
	    dst,
	    "# A memopt model file imported from the Megatron-LM arguments in "
	    "%.200s.\n"
	    "# Each key: the flag it comes from, or Megatron's default "
	    "(megatron/training/arguments.py).\n",
	    name);
	const char *p = body->data, *end = body->data + body->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		buf_append(dst, p, len);
		if (len > 2 && p[0] == ' ' && p[1] == ' ' && k < n) {
			const struct mo_megatron_item *it = order[k++];
			const char *src = it->src ? it->src->flag : it->why;
			if (src)
				buf_printf(dst, "  # %s", src);
		}
		buf_puts(dst, "\n");
		p += len + (nl ? 1 : 0);
	}
	return !dst->failed;
}
