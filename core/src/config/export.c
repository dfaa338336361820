/* YAML export: the canonical text of the three
 * sections, written with libyaml's emitter (yaml/yaml_writer.c), and the
 * splice of that text into a whole training YAML where every byte outside
 * the sections stays as it was.
 *
 * Canonical form: the seed's key order (recompute: mode,
 * full_recompute_layer, select_module, exclude_op; recompute_comm: enable,
 * select_module; swap: enable, default_prefetch, layer_swap, op_swap),
 * layer lists as flow sequences of merged ranges (`[0-7]`, `[0-3, 8]`),
 * regex keys and op names single-quoted, `mode: None|full|select`,
 * booleans `True`/`False`, `layer_swap` and `op_swap` items indented under
 * their key (the writer's layout). */
#include "config/config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef enum mo_export_sec {
	MO_EXPORT_RECOMPUTE,
	MO_EXPORT_COMM,
	MO_EXPORT_SWAP
} mo_export_sec;

static const char *const mo_export_section_names[] = {
	"recompute", "recompute_comm", "swap"};

/* ---- values ------------------------------------------------------------ */

static int export_range_cmp(const void *pa, const void *pb)
{
	const mo_range *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return 0;
}

static bool export_layer_item(mo_yaml_writer *w, uint64_t lo,
				 uint64_t hi)
{
	char item[64];
	if (lo == hi)
		snprintf(item, sizeof item, "%" PRIu64, lo);
	else
		snprintf(item, sizeof item, "%" PRIu64 "-%" PRIu64, lo, hi);
	return yaml_tree_write_plain(w, item);
}

/* A layer list as a flow sequence of merged ranges: overlapping, adjacent
 * and touching ranges become one (`[0-3, 4-7]` -> `[0-7]`), a single id is
 * an int. */
static bool export_layers(mo_yaml_writer *w, const mo_layers *l)
{
	mo_range *r = NULL;
	bool ok = false;

	if (l->n) {
		r = malloc(l->n * sizeof *r);
		if (!r) {
			yaml_tree_writer_fail_nomem(w);
			return false;
		}
		memcpy(r, l->r, l->n * sizeof *r);
		qsort(r, l->n, sizeof *r, export_range_cmp);
	}
	if (!yaml_tree_write_sequence_start(w, true))
		goto out_free_ranges;
	for (size_t i = 0; i < l->n;) {
		uint64_t lo = r[i].lo, hi = r[i].hi;
		size_t j = i + 1;
		while (j < l->n &&
		       (r[j].lo <= hi || (hi != UINT64_MAX && r[j].lo == hi + 1))) {
			if (r[j].hi > hi)
				hi = r[j].hi;
			j++;
		}
		if (!export_layer_item(w, lo, hi))
			goto out_free_ranges;
		i = j;
	}
	ok = yaml_tree_write_sequence_end(w);
out_free_ranges:
	free(r);
	return ok;
}

/* A layer list the file has (a sequence); absent or null ones are left out. */
/* A key is written when the file wrote it (even empty), or, for a plan read
 * from a graph-mode recompute_config (graph.c, for migrate), when it holds
 * something: there `at` is the recompute_config node that chose it. */
static bool export_layers_present(const mo_config *c, const mo_layers *l)
{
	if (c->from_recompute_config)
		return l->n > 0;
	return l->at && l->at->kind == MO_NODE_SEQ;
}

static bool export_patterns_present(const mo_config *c, const mo_pattern_list *pl)
{
	if (c->from_recompute_config)
		return pl->n > 0;
	return pl->at && pl->at->kind == MO_NODE_MAP;
}

static bool export_regex(mo_yaml_writer *w, const mo_pattern *p)
{
	/* The key node's text keeps a NUL a double-quoted key may hold. */
	if (p->key && p->key->kind == MO_NODE_SCALAR && p->key->value &&
	    strcmp(p->key->value, p->regex) == 0)
		return yaml_tree_write_string(w, p->key->value, p->key->len);
	return yaml_tree_write_string(w, p->regex, strlen(p->regex));
}

/* {regex: layers} in the file's order: the patterns of one key (select_module's and
 * discard_module's share a list, told apart by `discard`). */
static bool export_patterns_of(mo_yaml_writer *w, const char *key, const mo_pattern_list *pl,
			       bool discard)
{
	if (!yaml_tree_write_plain(w, key) || !yaml_tree_write_mapping_start(w, NULL, false))
		return false;
	for (size_t i = 0; i < pl->n; i++) {
		const mo_pattern *p = &pl->p[i];
		if (!p->regex || p->discard != discard)
			continue;
		if (!export_regex(w, p) || !export_layers(w, &p->layers))
			return false;
	}
	return yaml_tree_write_mapping_end(w);
}

static bool export_patterns(mo_yaml_writer *w, const char *key, const mo_pattern_list *pl)
{
	return export_patterns_of(w, key, pl, false);
}

static const char *export_bool(bool b)
{
	return b ? "True" : "False";
}

static bool export_recompute(mo_yaml_writer *w, const mo_config *c)
{
	static const char *const modes[] = {"None", "full", "select"};
	const char *mode = (unsigned)c->mode < 3 ? modes[c->mode] : "None";

	if (!yaml_tree_write_plain(w, "mode") || !yaml_tree_write_plain(w, mode))
		return false;
	if (export_layers_present(c, &c->full) &&
	    (!yaml_tree_write_plain(w, "full_recompute_layer") ||
	     !export_layers(w, &c->full)))
		return false;
	if (export_patterns_present(c, &c->select) &&
	    !export_patterns(w, "select_module", &c->select))
		return false;
	if (export_patterns_present(c, &c->exclude) &&
	    !export_patterns(w, "exclude_op", &c->exclude))
		return false;
	if (c->discard_at && c->discard_at->kind == MO_NODE_MAP &&
	    !export_patterns_of(w, "discard_module", &c->select, true))
		return false;
	return true;
}

static bool export_comm(mo_yaml_writer *w, const mo_config *c)
{
	if (!yaml_tree_write_plain(w, "enable") ||
	    !yaml_tree_write_plain(w, export_bool(c->comm_enable)))
		return false;
	if (export_patterns_present(c, &c->comm) &&
	    !export_patterns(w, "select_module", &c->comm))
		return false;
	return true;
}

/* One swap list entry: its op_name (op_swap) when given, then its layers when given. */
static bool export_swap_entry(mo_yaml_writer *w, const mo_config *c, const mo_pattern *op,
			      const mo_layers *layers)
{
	return yaml_tree_write_mapping_start(w, NULL, false) &&
	       (!op || !op->regex ||
		(yaml_tree_write_plain(w, "op_name") && export_regex(w, op))) &&
	       (!export_layers_present(c, layers) ||
		(yaml_tree_write_plain(w, "layers") && export_layers(w, layers))) &&
	       yaml_tree_write_mapping_end(w);
}

/* layer_swap or op_swap (ops) and its n entries, in block style. */
static bool export_swap_list(mo_yaml_writer *w, const mo_config *c, const char *key, size_t n,
			     bool ops)
{
	if (!yaml_tree_write_plain(w, key) || !yaml_tree_write_sequence_start(w, false))
		return false;
	for (size_t i = 0; i < n; i++) {
		const mo_pattern *op = ops ? &c->op_swap[i].pat : NULL;
		if (!export_swap_entry(w, c, op, ops ? &op->layers : &c->layer_swap[i].layers))
			return false;
	}
	return yaml_tree_write_sequence_end(w);
}

static bool export_swap(mo_yaml_writer *w, const mo_config *c)
{
	bool has_layer_swap = c->layer_swap_at && c->layer_swap_at->kind == MO_NODE_SEQ;
	bool has_op_swap = c->op_swap_at && c->op_swap_at->kind == MO_NODE_SEQ;

	if (!yaml_tree_write_plain(w, "enable") ||
	    !yaml_tree_write_plain(w, export_bool(c->swap_enable)))
		return false;
	/* As the seed: written when set, or when swap does anything. */
	if (c->prefetch_at || c->swap_enable || has_layer_swap || has_op_swap) {
		char num[32];
		snprintf(num, sizeof num, "%" PRId64, c->prefetch);
		if (!yaml_tree_write_plain(w, "default_prefetch") ||
		    !yaml_tree_write_plain(w, num))
			return false;
	}
	if (has_layer_swap && !export_swap_list(w, c, "layer_swap", c->n_layer_swap, false))
		return false;
	if (has_op_swap && !export_swap_list(w, c, "op_swap", c->n_op_swap, true))
		return false;
	return true;
}

/* One section: its key, then its value as a mapping (flow style inside a
 * flow root, else block) carrying `anchor` when the file anchored it. */
static bool export_section(mo_yaml_writer *w, const mo_config *c,
			      mo_export_sec s, bool flow,
			      const char *anchor)
{
	if (!yaml_tree_write_plain(w, mo_export_section_names[s]) ||
	    !yaml_tree_write_mapping_start(w, anchor, flow))
		return false;
	switch (s) {
	case MO_EXPORT_RECOMPUTE:
		if (!export_recompute(w, c))
			return false;
		break;
	case MO_EXPORT_COMM:
		if (!export_comm(w, c))
			return false;
		break;
	case MO_EXPORT_SWAP:
		if (!export_swap(w, c))
			return false;
		break;
	}
	return yaml_tree_write_mapping_end(w);
}

static bool export_has(const mo_config *c, mo_export_sec s)
{
	switch (s) {
	case MO_EXPORT_RECOMPUTE:
		return c->has_recompute;
	case MO_EXPORT_COMM:
		return c->has_comm;
	case MO_EXPORT_SWAP:
		return c->has_swap;
	}
	return false;
}

/* Writes a document whose root mapping holds the sections `mask` selects
 * (bit 1 << mo_export_sec), in the seed's order, to out (lines after the
 * first indented by `indent`). */
static int export_document(mo_buf *out, const mo_config *c, unsigned mask,
			      bool flow, mo_yaml_break brk, const char *anchor,
			      size_t indent, mo_error *err)
{
	mo_yaml_writer *w = NULL;
	int rc = -1;

	if (yaml_tree_writer_new(&w, brk, "export", err) != 0)
		return -1;
	if (!yaml_tree_write_mapping_start(w, NULL, flow))
		goto out_free_writer;
	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++) {
		if (!(mask & (1u << s)))
			continue;
		if (!export_section(w, c, (mo_export_sec)s, flow, anchor))
			goto out_free_writer;
	}
	if (!yaml_tree_write_mapping_end(w) || yaml_tree_writer_finish(w, out, indent) != 0)
		goto out_free_writer;
	rc = 0;
out_free_writer:
	yaml_tree_writer_free(w);
	return rc;
}

static int export_take(char **out, size_t *out_len, mo_buf *b,
			  mo_error *err)
{
	size_t len = 0;
	/* NUL-terminates an empty buffer too */
	buf_append(b, "", 0);
	char *s = buf_take(b, &len);
	if (!s) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		return -1;
	}
	*out = s;
	if (out_len)
		*out_len = len;
	return 0;
}

int mo_export_sections(char **out, size_t *out_len, const mo_config *c,
		       mo_error *err)
{
	mo_buf b;
	unsigned mask = 0;

	if (!out || !c) {
		error_set(err, MO_ERR_USAGE, 0, 0, "export: NULL argument");
		return -1;
	}
	*out = NULL;
	if (out_len)
		*out_len = 0;
	buf_init(&b, 0);
	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++)
		if (export_has(c, (mo_export_sec)s))
			mask |= 1u << s;
	if (mask && export_document(&b, c, mask, false, MO_YAML_BREAK_LF,
				       NULL, 0, err) != 0)
		goto out_free_buf;
	return export_take(out, out_len, &b, err);
out_free_buf:
	buf_free(&b);
	return -1;
}

/* ---- splicing into a whole training YAML ------------------------------- */

static bool export_is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static bool export_anchor_char(char ch)
{
	/* libyaml's anchor names: [0-9A-Za-z_-] */
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '-';
}

/* End of an alias token (`*name`) written after `pos`: a shared node's
 * offsets point at its anchor, not at the alias. Skips the indicators,
 * blanks and comments in between. Returns pos when none is found. */
static size_t export_alias_end(const char *src, size_t len, size_t pos)
{
	size_t i = pos;
	while (i < len) {
		char ch = src[i];
		if (export_is_space(ch) || ch == ':' || ch == '-' || ch == '?' ||
		    ch == ',') {
			i++;
		} else if (ch == '#') {
			while (i < len && src[i] != '\n' && src[i] != '\r')
				i++;
		} else {
			break;
		}
	}
	if (i >= len || src[i] != '*')
		return pos;
	i++;
	while (i < len && export_anchor_char(src[i]))
		i++;
	return i;
}

/* Byte offset just past the last character of n's own text, `floor` being
 * the end of what precedes it. libyaml ends a block collection where the
 * next token starts (after the blank lines and comments that follow), so a
 * block collection ends with its last item; scalars lose trailing breaks
 * (block scalars include them). */
static size_t export_node_end(const char *src, size_t len, const mo_node *n,
				 size_t floor)
{
	if (n->start < floor || n->start > n->end || n->end > len)
		return export_alias_end(src, len, floor); /* shared (alias) */
	if (n->kind != MO_NODE_SCALAR && !n->flow && n->n > 0) {
		size_t end = n->start;
		for (size_t i = 0; i < n->n; i++)
			end = export_node_end(src, len, n->items[i], end);
		return end;
	}
	size_t end = n->end;
	while (end > n->start && export_is_space(src[end - 1]))
		end--;
	return end;
}

typedef struct mo_export_span {
	unsigned mask;     /* the sections written in place of the span */
	size_t start, end; /* replaced bytes */
	size_t indent;     /* column of the key, for continuation lines */
	char anchor[128];  /* the section value's anchor, "" for none */
} mo_export_span;

static void export_read_anchor(mo_export_span *sp, const char *src,
				  size_t len, const mo_node *val)
{
	size_t i = val->start;
	sp->anchor[0] = '\0';
	/* properties: `&name` and `!tag` in either order */
	while (i < val->end && i < len && (src[i] == '&' || src[i] == '!')) {
		if (src[i] == '&') {
			size_t b = ++i;
			while (i < len && export_anchor_char(src[i]))
				i++;
			if (i - b > 0 && i - b < sizeof sp->anchor) {
				memcpy(sp->anchor, src + b, i - b);
				sp->anchor[i - b] = '\0';
			}
		} else {
			while (i < len && !export_is_space(src[i]))
				i++;
		}
		while (i < len && (src[i] == ' ' || src[i] == '\t'))
			i++;
	}
}

static int export_span_make(mo_export_span *sp, const mo_config *c,
			       const char *name, unsigned mask, const mo_node *key,
			       const mo_node *val, mo_error *err)
{
	const char *src = c->doc->src;
	size_t len = c->doc->srclen;

	if (!key || !val || key->kind != MO_NODE_SCALAR || key->start > key->end ||
	    key->end > len) {
		error_set(err, MO_ERR_INTERNAL, 0, 0,
			     "export: no source position for section %s", name);
		return -1;
	}
	/* The positions must address this very text. */
	size_t nl = strlen(name);
	if (key->style == MO_STYLE_PLAIN &&
	    (key->end - key->start < nl ||
	     memcmp(src + key->end - nl, name, nl) != 0)) {
		error_set(err, MO_ERR_INTERNAL, key->line, key->column,
			     "export: source offsets of section %s do not match the text",
			     name);
		return -1;
	}
	sp->mask = mask;
	sp->start = key->start;
	/* `? recompute` (explicit key): replace from the indicator. */
	size_t i = sp->start;
	while (i > 0 && (src[i - 1] == ' ' || src[i - 1] == '\t'))
		i--;
	if (i > 0 && src[i - 1] == '?' && i < sp->start)
		sp->start = i - 1;
	size_t ls = sp->start;
	while (ls > 0 && src[ls - 1] != '\n' && src[ls - 1] != '\r')
		ls--;
	sp->indent = sp->start - ls;
	sp->end = export_node_end(src, len, val, key->end);
	if (sp->end < key->end)
		sp->end = key->end;
	sp->anchor[0] = '\0';
	if (val->start >= key->end && val->start <= val->end && val->end <= len)
		export_read_anchor(sp, src, len, val);
	return 0;
}

/* The file's line break: the first one decides. */
static mo_yaml_break export_break_of(const char *src, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '\n')
			return MO_YAML_BREAK_LF;
		if (src[i] == '\r')
			return i + 1 < len && src[i + 1] == '\n' ? MO_YAML_BREAK_CRLF
								  : MO_YAML_BREAK_CR;
	}
	return MO_YAML_BREAK_LF;
}

/* Appends the replacement text of one section: the written document
 * without its final line break; in block style every further line indented
 * by the key's column, in flow style without the root braces. */
static int export_replacement(mo_buf *dst, const mo_config *c,
				 const mo_export_span *sp, bool flow,
				 mo_yaml_break brk, mo_error *err)
{
	mo_buf tmp;
	int rc = -1;

	buf_init(&tmp, 0);
	if (export_document(&tmp, c, sp->mask, flow, brk,
			       sp->anchor[0] ? sp->anchor : NULL,
			       flow ? 0 : sp->indent, err) != 0)
		goto out_free_tmp;
	const char *t = tmp.data ? tmp.data : "";
	size_t a = 0, b = tmp.len;
	while (b > a && (t[b - 1] == '\n' || t[b - 1] == '\r'))
		b--;
	if (flow) {
		while (a < b && t[a] != '{')
			a++;
		while (b > a && t[b - 1] != '}')
			b--;
		if (b - a < 2) {
			error_set(err, MO_ERR_INTERNAL, 0, 0,
				     "export: unexpected flow output");
			goto out_free_tmp;
		}
		a++;
		b--;
		while (a < b && t[a] == ' ')
			a++;
		while (b > a && t[b - 1] == ' ')
			b--;
	}
	buf_append(dst, t + a, b - a);
	if (dst->failed) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		goto out_free_tmp;
	}
	rc = 0;
out_free_tmp:
	buf_free(&tmp);
	return rc;
}

/* libyaml must load the result (catches an alias whose anchor sat inside a
 * replaced section). */
static int export_check(const char *text, size_t len, mo_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = -1;

	if (!yaml_parser_initialize(&parser)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (parser.error == YAML_MEMORY_ERROR)
			error_set(err, MO_ERR_NOMEM, 0, 0,
				     "export: out of memory");
		else
			error_set(err, MO_ERR_INVALID,
				     (int)parser.problem_mark.line + 1,
				     (int)parser.problem_mark.column + 1,
				     "export: the spliced file is not valid YAML (%s); "
				     "an anchor inside a section used elsewhere?",
				     parser.problem ? parser.problem : "?");
		goto out_delete_parser;
	}
	yaml_document_delete(&doc);
	rc = 0;
out_delete_parser:
	yaml_parser_delete(&parser);
	return rc;
}

/* The spliced text b, checked (it must parse back, export_check) and handed to the caller;
 * `what` names the operation in errors. b is released either way. */
static int export_finish(char **out, size_t *out_len, mo_buf *b, const char *what,
			 mo_error *err)
{
	if (b->failed)
		error_set(err, MO_ERR_NOMEM, 0, 0, "%s: out of memory", what);
	else if (export_check(b->data ? b->data : "", b->len, err) == 0)
		return export_take(out, out_len, b, err);
	buf_free(b);
	return -1;
}

/* One replaced stretch of the source: a section written from `plan`
 * (text NULL) or the given text. */
typedef struct mo_export_piece {
	size_t start, end;
	const mo_export_span *span;
	const mo_text_edit *edit;
	size_t order; /* insertions at one place keep the caller's order */
} mo_export_piece;

static int export_piece_cmp(const void *pa, const void *pb)
{
	const mo_export_piece *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->order < b->order ? -1 : (a->order > b->order);
}

/* The base's text with the pieces replaced (sections written from plan),
 * then the sections of `append` (a mask) added at the end; checked to
 * load. */
static int export_apply(char **out, size_t *out_len, const mo_config *base,
			const mo_config *plan, mo_export_piece *pc, size_t n, unsigned append,
			mo_error *err)
{
	const char *src = base->doc->src;
	size_t len = base->doc->srclen;
	bool flow = base->doc->root->flow;
	mo_yaml_break brk = export_break_of(src, len);
	mo_buf b;

	qsort(pc, n, sizeof *pc, export_piece_cmp);
	for (size_t i = 1; i < n; i++) {
		if (pc[i].start < pc[i - 1].end) {
			error_set(err, MO_ERR_INTERNAL, 0, 0, "export: sections overlap");
			return -1;
		}
	}
	buf_init(&b, 0);
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		buf_append(&b, src + pos, pc[i].start - pos);
		if (pc[i].edit)
			buf_append(&b, pc[i].edit->text, pc[i].edit->len);
		else if (export_replacement(&b, plan, pc[i].span, flow, brk, err) != 0)
			goto out_free_buf;
		pos = pc[i].end;
	}
	buf_append(&b, src + pos, len - pos);
	if (append) {
		if (flow) {
			error_set(err, MO_ERR_INVALID, 0, 0,
				  "export: the file's root is a flow mapping ({...}); "
				  "write it in block style first");
			goto out_free_buf;
		}
		static const char *const breaks[] = {[MO_YAML_BREAK_LF] = "\n",
						     [MO_YAML_BREAK_CR] = "\r",
						     [MO_YAML_BREAK_CRLF] = "\r\n"};
		if (b.len && b.data[b.len - 1] != '\n' && b.data[b.len - 1] != '\r')
			buf_append(&b, breaks[brk], strlen(breaks[brk]));
		if (export_document(&b, plan, append, false, brk, NULL, 0, err) != 0)
			goto out_free_buf;
	}
	return export_finish(out, out_len, &b, "export", err);
out_free_buf:
	buf_free(&b);
	return -1;
}

/* The spans of the sections the base writes (a graph-mode recompute_config
 * standing for the recompute sections the base lacks, when `graph`):
 * returns how many, or -1 with err. *missing gets the sections it lacks. */
static int export_spans(mo_export_span *spans, const mo_config *base, bool graph,
			unsigned *missing, mo_error *err)
{
	const mo_node *keys[3] = {base->recompute_key, base->comm_key, base->swap_key};
	const mo_node *vals[3] = {base->recompute_val, base->comm_val, base->swap_val};
	int n = 0;

	*missing = 0;
	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++) {
		if (!export_has(base, (mo_export_sec)s)) {
			*missing |= 1u << s;
			continue;
		}
		if (export_span_make(&spans[n], base, mo_export_section_names[s], 1u << s,
				     keys[s], vals[s], err) != 0)
			return -1;
		n++;
	}
	const mo_node *rk = NULL, *rv = NULL;
	if (graph && base->recompute_config_read && !base->recompute_val && !base->comm_val)
		rv = map_get_kv(base->doc->root, "recompute_config", &rk);
	if (rv && *missing) {
		if (export_span_make(&spans[n], base, "recompute_config", *missing, rk, rv,
				     err) != 0)
			return -1;
		spans[n].anchor[0] = '\0'; /* an alias of it elsewhere fails the check */
		*missing = 0;
		n++;
	}
	return n;
}

static bool export_whole_file(const mo_config *c)
{
	return c->training_yaml && c->doc && c->doc->root && c->doc->src &&
	       c->doc->root->kind == MO_NODE_MAP;
}

int mo_export(char **out, size_t *out_len, const mo_config *c, mo_error *err)
{
	mo_export_span spans[4];
	mo_export_piece pc[4];
	unsigned missing;

	if (!out || !c) {
		error_set(err, MO_ERR_USAGE, 0, 0, "export: NULL argument");
		return -1;
	}
	if (!export_whole_file(c))
		return mo_export_sections(out, out_len, c, err);
	*out = NULL;
	if (out_len)
		*out_len = 0;
	int n = export_spans(spans, c, false, &missing, err);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		pc[i] = (mo_export_piece){spans[i].start, spans[i].end, &spans[i], NULL, (size_t)i};
	return export_apply(out, out_len, c, c, pc, (size_t)n, 0, err);
}

int export_rewrite(char **out, size_t *out_len, const mo_config *base, const mo_config *plan,
		   const mo_text_edit *edits, size_t n_edits, mo_error *err)
{
	mo_export_span spans[4];
	unsigned missing;

	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (!export_whole_file(base)) {
		error_set(err, MO_ERR_INVALID, 0, 0,
			  "export: the base is not a whole training YAML");
		return -1;
	}
	int n = export_spans(spans, base, !config_graph_is_pynative(base->doc->root), &missing,
			     err);
	if (n < 0)
		return -1;
	mo_export_piece *pc = malloc(((size_t)n + n_edits) * sizeof *pc);
	if (!pc) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++)
		pc[i] = (mo_export_piece){spans[i].start, spans[i].end, &spans[i], NULL, (size_t)i};
	for (size_t i = 0; i < n_edits; i++)
		pc[n + i] = (mo_export_piece){edits[i].start, edits[i].end, NULL, &edits[i],
					      (size_t)n + i};
	/* the sections the plan has and the base lacks go at the end */
	unsigned append = 0;
	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++)
		if ((missing & (1u << s)) && export_has(plan, (mo_export_sec)s))
			append |= 1u << s;
	int rc = export_apply(out, out_len, base, plan, pc, (size_t)n + n_edits, append, err);
	free(pc);
	return rc;
}

int export_edit(char **out, size_t *out_len, const mo_config *base, const mo_text_edit *edits,
		size_t n_edits, mo_error *err)
{
	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (!export_whole_file(base)) {
		error_set(err, MO_ERR_INVALID, 0, 0,
			  "export: the base is not a whole training YAML");
		return -1;
	}
	mo_export_piece *pc = malloc((n_edits ? n_edits : 1) * sizeof *pc);
	if (!pc) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		return -1;
	}
	for (size_t i = 0; i < n_edits; i++)
		pc[i] = (mo_export_piece){edits[i].start, edits[i].end, NULL, &edits[i], i};
	int rc = export_apply(out, out_len, base, base, pc, n_edits, 0, err);
	free(pc);
	return rc;
}

size_t export_value_start(const mo_config *c, const mo_node *v)
{
	const char *src = c->doc->src;
	size_t i = v->start, len = c->doc->srclen;
	/* properties: `&name` and `!tag`, each followed by blanks */
	while (i < v->end && i < len && (src[i] == '&' || src[i] == '!')) {
		while (i < len && !export_is_space(src[i]))
			i++;
		while (i < len && (src[i] == ' ' || src[i] == '\t'))
			i++;
	}
	return i;
}

size_t export_value_end(const mo_config *c, const mo_node *v, size_t floor)
{
	return export_node_end(c->doc->src, c->doc->srclen, v, floor);
}

/* ---- migrate: one block replaced by sections --------------------------- */

int export_splice_block(char **out, size_t *out_len, const mo_config *c,
			   const mo_node *key, const mo_node *val, const char *name,
			   unsigned mask, mo_error *err)
{
	mo_export_span sp;
	mo_buf b;

	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (c->doc->root->flow) {
		error_set(err, MO_ERR_INVALID, key->line, key->column,
			     "migrate: the file's root is a flow mapping ({...}); "
			     "write it in block style first");
		return -1;
	}
	if (export_span_make(&sp, c, name, mask, key, val, err) != 0)
		return -1;
	sp.anchor[0] = '\0'; /* an alias of it elsewhere fails the check */
	const char *src = c->doc->src;
	size_t len = c->doc->srclen;
	buf_init(&b, 0);
	buf_append(&b, src, sp.start);
	if (export_replacement(&b, c, &sp, false, export_break_of(src, len),
				  err) != 0)
		goto out_free_buf;
	buf_append(&b, src + sp.end, len - sp.end);
	return export_finish(out, out_len, &b, "migrate", err);
out_free_buf:
	buf_free(&b);
	return -1;
}
