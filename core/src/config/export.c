/* YAML export (SPEC 5, issue 2 item 7): the canonical text of the three
 * sections, emitted with libyaml's emitter, and the splice of that text into
 * a whole training YAML where every byte outside the sections stays as it
 * was.
 *
 * Canonical form: the seed's key order (recompute: mode,
 * full_recompute_layer, select_module, exclude_op; recompute_comm: enable,
 * select_module; swap: enable, default_prefetch, layer_swap, op_swap),
 * layer lists as flow sequences of merged ranges (`[0-7]`, `[0-3, 8]`),
 * regex keys and op names single-quoted, `mode: None|full|select`,
 * booleans `True`/`False`. libyaml writes a block sequence inside a mapping
 * without extra indentation (`layer_swap:` then `- layers: [...]` at the
 * same column), which PyYAML reads the same as the seed's indented form. */
#include "config/config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- emitter plumbing ------------------------------------------------- */

typedef struct mo_export_emitter {
	yaml_emitter_t em;
	mo_buf *out;
	mo_error *err;
	bool failed; /* err already filled */
} mo_export_emitter;

typedef enum mo_export_sec {
	MO_EXPORT_RECOMPUTE,
	MO_EXPORT_COMM,
	MO_EXPORT_SWAP
} mo_export_sec;

static const char *const mo_export_section_names[] = {
	"recompute", "recompute_comm", "swap"};

static int mo_export_write(void *data, unsigned char *buffer, size_t size)
{
	mo_buf *b = data;
	return mo_buf_append(b, (const char *)buffer, size) ? 1 : 0;
}

static void mo_export_fail(mo_export_emitter *x, mo_error_code code,
			   const char *msg)
{
	if (x->failed)
		return;
	x->failed = true;
	mo_error_set(x->err, code, 0, 0, "export: %s", msg);
}

/* Emits an initialised event; the emitter owns it from here, even when
 * yaml_emitter_emit fails. */
static bool mo_export_emit(mo_export_emitter *x, yaml_event_t *ev)
{
	if (x->failed) {
		yaml_event_delete(ev);
		return false;
	}
	if (yaml_emitter_emit(&x->em, ev))
		return true;
	switch (x->em.error) {
	case YAML_MEMORY_ERROR:
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		break;
	case YAML_WRITER_ERROR:
		if (x->out->max && x->out->len >= x->out->max / 2)
			mo_export_fail(x, MO_ERR_LIMIT, "output too large");
		else
			mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		break;
	default: {
		char msg[200];
		snprintf(msg, sizeof msg, "libyaml emitter: %s",
			 x->em.problem ? x->em.problem : "unknown error");
		mo_export_fail(x, MO_ERR_INTERNAL, msg);
		break;
	}
	}
	return false;
}

static bool mo_export_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		size_t w;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			w = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			w = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			w = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < w)
			return false;
		for (size_t k = 1; k < w; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if ((w == 2 && cp < 0x80) || (w == 3 && cp < 0x800) ||
		    (w == 4 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += w;
	}
	return true;
}

/* Line breaks (LF, CR, NEL, LS, PS): such a string is double-quoted, where
 * libyaml escapes them, so that every scalar stays on one line. */
static bool mo_export_has_break(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || c == '\r')
			return true;
		if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85)
			return true;
		if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
		    ((unsigned char)s[i + 2] == 0xA8 ||
		     (unsigned char)s[i + 2] == 0xA9))
			return true;
	}
	return false;
}

/* A scalar: `quoted` ones are strings for any reader (single-quoted, or
 * double-quoted when libyaml needs escapes); plain ones are typed by the
 * reader (ints, `True`, `0-15`, key names). */
static bool mo_export_scalar(mo_export_emitter *x, const char *s, size_t n,
			     bool quoted)
{
	yaml_event_t ev;
	if (x->failed)
		return false;
	if (!mo_export_utf8_valid((const unsigned char *)s, n)) {
		mo_export_fail(x, MO_ERR_INVALID, "a string is not valid UTF-8");
		return false;
	}
	if (n > INT_MAX) {
		mo_export_fail(x, MO_ERR_LIMIT, "a string is too long");
		return false;
	}
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
	if (quoted)
		style = mo_export_has_break(s, n) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						  : YAML_SINGLE_QUOTED_SCALAR_STYLE;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL,
					  (yaml_char_t *)(uintptr_t)s, (int)n,
					  quoted ? 0 : 1, quoted ? 1 : 0, style)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return mo_export_emit(x, &ev);
}

static bool mo_export_plain(mo_export_emitter *x, const char *s)
{
	return mo_export_scalar(x, s, strlen(s), false);
}

static bool mo_export_map_start(mo_export_emitter *x, const char *anchor,
				bool flow)
{
	yaml_event_t ev;
	if (x->failed)
		return false;
	if (!yaml_mapping_start_event_initialize(
		    &ev, (yaml_char_t *)(uintptr_t)anchor, NULL, 1,
		    flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return mo_export_emit(x, &ev);
}

static bool mo_export_map_end(mo_export_emitter *x)
{
	yaml_event_t ev;
	if (x->failed)
		return false;
	if (!yaml_mapping_end_event_initialize(&ev)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return mo_export_emit(x, &ev);
}

static bool mo_export_seq_start(mo_export_emitter *x, bool flow)
{
	yaml_event_t ev;
	if (x->failed)
		return false;
	if (!yaml_sequence_start_event_initialize(
		    &ev, NULL, NULL, 1,
		    flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return mo_export_emit(x, &ev);
}

static bool mo_export_seq_end(mo_export_emitter *x)
{
	yaml_event_t ev;
	if (x->failed)
		return false;
	if (!yaml_sequence_end_event_initialize(&ev)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return mo_export_emit(x, &ev);
}

/* Stream and document start: the emitter writes no `---` for an implicit
 * document. */
static bool mo_export_begin(mo_export_emitter *x)
{
	yaml_event_t ev;
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	if (!mo_export_emit(x, &ev))
		return false;
	if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return mo_export_emit(x, &ev);
}

static bool mo_export_end(mo_export_emitter *x)
{
	yaml_event_t ev;
	if (x->failed)
		return false;
	if (!yaml_document_end_event_initialize(&ev, 1)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	if (!mo_export_emit(x, &ev))
		return false;
	if (!yaml_stream_end_event_initialize(&ev)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	if (!mo_export_emit(x, &ev))
		return false;
	if (!yaml_emitter_flush(&x->em)) {
		mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
		return false;
	}
	return true;
}

/* ---- values ------------------------------------------------------------ */

static int mo_export_range_cmp(const void *pa, const void *pb)
{
	const mo_range *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return 0;
}

static bool mo_export_layer_item(mo_export_emitter *x, uint64_t lo,
				 uint64_t hi)
{
	char item[64];
	if (lo == hi)
		snprintf(item, sizeof item, "%" PRIu64, lo);
	else
		snprintf(item, sizeof item, "%" PRIu64 "-%" PRIu64, lo, hi);
	return mo_export_plain(x, item);
}

/* A layer list as a flow sequence of merged ranges: overlapping, adjacent
 * and touching ranges become one (`[0-3, 4-7]` -> `[0-7]`), a single id is
 * an int. */
static bool mo_export_layers(mo_export_emitter *x, const mo_layers *l)
{
	mo_range *r = NULL;
	bool ok = false;

	if (l->n) {
		r = malloc(l->n * sizeof *r);
		if (!r) {
			mo_export_fail(x, MO_ERR_NOMEM, "out of memory");
			return false;
		}
		memcpy(r, l->r, l->n * sizeof *r);
		qsort(r, l->n, sizeof *r, mo_export_range_cmp);
	}
	if (!mo_export_seq_start(x, true))
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
		if (!mo_export_layer_item(x, lo, hi))
			goto out_free_ranges;
		i = j;
	}
	ok = mo_export_seq_end(x);
out_free_ranges:
	free(r);
	return ok;
}

/* A layer list the file has (a sequence); absent or null ones are left out. */
static bool mo_export_layers_present(const mo_layers *l)
{
	return l->at && l->at->kind == MO_NODE_SEQ;
}

static bool mo_export_patterns_present(const mo_pattern_list *pl)
{
	return pl->at && pl->at->kind == MO_NODE_MAP;
}

static bool mo_export_regex(mo_export_emitter *x, const mo_pattern *p)
{
	/* The key node's text keeps a NUL a double-quoted key may hold. */
	if (p->key && p->key->kind == MO_NODE_SCALAR && p->key->value &&
	    strcmp(p->key->value, p->regex) == 0)
		return mo_export_scalar(x, p->key->value, p->key->len, true);
	return mo_export_scalar(x, p->regex, strlen(p->regex), true);
}

/* {regex: layers} in the file's order. */
static bool mo_export_patterns(mo_export_emitter *x, const char *key,
			       const mo_pattern_list *pl)
{
	if (!mo_export_plain(x, key) || !mo_export_map_start(x, NULL, false))
		return false;
	for (size_t i = 0; i < pl->n; i++) {
		const mo_pattern *p = &pl->p[i];
		if (!p->regex)
			continue;
		if (!mo_export_regex(x, p) || !mo_export_layers(x, &p->layers))
			return false;
	}
	return mo_export_map_end(x);
}

static const char *mo_export_bool(bool b)
{
	return b ? "True" : "False";
}

static bool mo_export_recompute(mo_export_emitter *x, const mo_config *c)
{
	static const char *const modes[] = {"None", "full", "select"};
	const char *mode = (unsigned)c->mode < 3 ? modes[c->mode] : "None";

	if (!mo_export_plain(x, "mode") || !mo_export_plain(x, mode))
		return false;
	if (mo_export_layers_present(&c->full) &&
	    (!mo_export_plain(x, "full_recompute_layer") ||
	     !mo_export_layers(x, &c->full)))
		return false;
	if (mo_export_patterns_present(&c->select) &&
	    !mo_export_patterns(x, "select_module", &c->select))
		return false;
	if (mo_export_patterns_present(&c->exclude) &&
	    !mo_export_patterns(x, "exclude_op", &c->exclude))
		return false;
	return true;
}

static bool mo_export_comm(mo_export_emitter *x, const mo_config *c)
{
	if (!mo_export_plain(x, "enable") ||
	    !mo_export_plain(x, mo_export_bool(c->comm_enable)))
		return false;
	if (mo_export_patterns_present(&c->comm) &&
	    !mo_export_patterns(x, "select_module", &c->comm))
		return false;
	return true;
}

static bool mo_export_swap(mo_export_emitter *x, const mo_config *c)
{
	bool has_layer_swap = c->layer_swap_at && c->layer_swap_at->kind == MO_NODE_SEQ;
	bool has_op_swap = c->op_swap_at && c->op_swap_at->kind == MO_NODE_SEQ;

	if (!mo_export_plain(x, "enable") ||
	    !mo_export_plain(x, mo_export_bool(c->swap_enable)))
		return false;
	/* As the seed: written when set, or when swap does anything. */
	if (c->prefetch_at || c->swap_enable || has_layer_swap || has_op_swap) {
		char num[32];
		snprintf(num, sizeof num, "%" PRId64, c->prefetch);
		if (!mo_export_plain(x, "default_prefetch") ||
		    !mo_export_plain(x, num))
			return false;
	}
	if (has_layer_swap) {
		if (!mo_export_plain(x, "layer_swap") ||
		    !mo_export_seq_start(x, false))
			return false;
		for (size_t i = 0; i < c->n_layer_swap; i++) {
			const mo_swap_layer *e = &c->layer_swap[i];
			if (!mo_export_map_start(x, NULL, false))
				return false;
			if (mo_export_layers_present(&e->layers) &&
			    (!mo_export_plain(x, "layers") ||
			     !mo_export_layers(x, &e->layers)))
				return false;
			if (!mo_export_map_end(x))
				return false;
		}
		if (!mo_export_seq_end(x))
			return false;
	}
	if (has_op_swap) {
		if (!mo_export_plain(x, "op_swap") ||
		    !mo_export_seq_start(x, false))
			return false;
		for (size_t i = 0; i < c->n_op_swap; i++) {
			const mo_op_swap *e = &c->op_swap[i];
			if (!mo_export_map_start(x, NULL, false))
				return false;
			if (e->pat.regex && (!mo_export_plain(x, "op_name") ||
					     !mo_export_regex(x, &e->pat)))
				return false;
			if (mo_export_layers_present(&e->pat.layers) &&
			    (!mo_export_plain(x, "layers") ||
			     !mo_export_layers(x, &e->pat.layers)))
				return false;
			if (!mo_export_map_end(x))
				return false;
		}
		if (!mo_export_seq_end(x))
			return false;
	}
	return true;
}

/* One section: its key, then its value as a mapping (flow style inside a
 * flow root, else block) carrying `anchor` when the file anchored it. */
static bool mo_export_section(mo_export_emitter *x, const mo_config *c,
			      mo_export_sec s, bool flow,
			      const char *anchor)
{
	if (!mo_export_plain(x, mo_export_section_names[s]) ||
	    !mo_export_map_start(x, anchor, flow))
		return false;
	switch (s) {
	case MO_EXPORT_RECOMPUTE:
		if (!mo_export_recompute(x, c))
			return false;
		break;
	case MO_EXPORT_COMM:
		if (!mo_export_comm(x, c))
			return false;
		break;
	case MO_EXPORT_SWAP:
		if (!mo_export_swap(x, c))
			return false;
		break;
	}
	return mo_export_map_end(x);
}

static bool mo_export_has(const mo_config *c, mo_export_sec s)
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

/* Emits a document whose root mapping holds the sections `mask` selects
 * (bit 1 << mo_export_sec), in the seed's order. */
static int mo_export_document(mo_buf *out, const mo_config *c, unsigned mask,
			      bool flow, yaml_break_t brk, const char *anchor,
			      mo_error *err)
{
	mo_export_emitter x = {.out = out, .err = err};
	int rc = -1;

	if (!yaml_emitter_initialize(&x.em)) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		return -1;
	}
	yaml_emitter_set_output(&x.em, mo_export_write, out);
	yaml_emitter_set_encoding(&x.em, YAML_UTF8_ENCODING);
	yaml_emitter_set_unicode(&x.em, 1);
	yaml_emitter_set_width(&x.em, -1);
	yaml_emitter_set_indent(&x.em, 2);
	yaml_emitter_set_break(&x.em, brk);

	if (!mo_export_begin(&x) || !mo_export_map_start(&x, NULL, flow))
		goto out_delete_emitter;
	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++) {
		if (!(mask & (1u << s)))
			continue;
		if (!mo_export_section(&x, c, (mo_export_sec)s, flow, anchor))
			goto out_delete_emitter;
	}
	if (!mo_export_map_end(&x) || !mo_export_end(&x))
		goto out_delete_emitter;
	rc = 0;
out_delete_emitter:
	yaml_emitter_delete(&x.em);
	if (rc == 0 && out->failed) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		rc = -1;
	}
	return rc;
}

/* Copies block-style emitter output to dst: the items of `layer_swap` and
 * `op_swap` indented under their key as the seed writes them (libyaml puts
 * a sequence in a mapping at the key's column), and every line after a
 * break indented by `indent` (the section key's column in a spliced file).
 * Every scalar is on one line (see mo_export_has_break), so lines are
 * structure. */
static void mo_export_layout(mo_buf *dst, const char *t, size_t n,
			     size_t indent, char brk_last)
{
	bool in_seq = false;
	size_t i = 0;

	while (i < n) {
		size_t e = i;
		while (e < n && t[e] != brk_last)
			e++;
		size_t next = e < n ? e + 1 : n;
		size_t body = e;
		while (body > i && (t[body - 1] == '\r' || t[body - 1] == '\n'))
			body--;
		const char *line = t + i;
		size_t ll = body - i;
		if (in_seq && !(ll >= 4 && (memcmp(line, "  - ", 4) == 0 ||
					    memcmp(line, "    ", 4) == 0)))
			in_seq = false;
		if (i > 0)
			for (size_t k = 0; k < indent; k++)
				mo_buf_append(dst, " ", 1);
		if (in_seq)
			mo_buf_append(dst, "  ", 2);
		mo_buf_append(dst, line, next - i);
		if ((ll == 13 && memcmp(line, "  layer_swap:", 13) == 0) ||
		    (ll == 10 && memcmp(line, "  op_swap:", 10) == 0))
			in_seq = true;
		i = next;
	}
}

static int mo_export_take(char **out, size_t *out_len, mo_buf *b,
			  mo_error *err)
{
	size_t len = 0;
	/* NUL-terminates an empty buffer too */
	mo_buf_append(b, "", 0);
	char *s = mo_buf_take(b, &len);
	if (!s) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
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
	mo_buf b, raw;
	unsigned mask = 0;

	if (!out || !c) {
		mo_error_set(err, MO_ERR_USAGE, 0, 0, "export: NULL argument");
		return -1;
	}
	*out = NULL;
	if (out_len)
		*out_len = 0;
	mo_buf_init(&b, 0);
	mo_buf_init(&raw, 0);
	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++)
		if (mo_export_has(c, (mo_export_sec)s))
			mask |= 1u << s;
	if (mask && mo_export_document(&raw, c, mask, false, YAML_LN_BREAK,
				       NULL, err) != 0)
		goto out_free_bufs;
	mo_export_layout(&b, raw.data ? raw.data : "", raw.len, 0, '\n');
	mo_buf_free(&raw);
	return mo_export_take(out, out_len, &b, err);
out_free_bufs:
	mo_buf_free(&raw);
	mo_buf_free(&b);
	return -1;
}

/* ---- splicing into a whole training YAML ------------------------------- */

static bool mo_export_is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static bool mo_export_anchor_char(char ch)
{
	/* libyaml's anchor names: [0-9A-Za-z_-] */
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '-';
}

/* End of an alias token (`*name`) written after `pos`: a shared node's
 * offsets point at its anchor, not at the alias. Skips the indicators,
 * blanks and comments in between. Returns pos when none is found. */
static size_t mo_export_alias_end(const char *src, size_t len, size_t pos)
{
	size_t i = pos;
	while (i < len) {
		char ch = src[i];
		if (mo_export_is_space(ch) || ch == ':' || ch == '-' || ch == '?' ||
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
	while (i < len && mo_export_anchor_char(src[i]))
		i++;
	return i;
}

/* Byte offset just past the last character of n's own text, `floor` being
 * the end of what precedes it. libyaml ends a block collection where the
 * next token starts (after the blank lines and comments that follow), so a
 * block collection ends with its last item; scalars lose trailing breaks
 * (block scalars include them). */
static size_t mo_export_node_end(const char *src, size_t len, const mo_node *n,
				 size_t floor)
{
	if (n->start < floor || n->start > n->end || n->end > len)
		return mo_export_alias_end(src, len, floor); /* shared (alias) */
	if (n->kind != MO_NODE_SCALAR && !n->flow && n->n > 0) {
		size_t end = n->start;
		for (size_t i = 0; i < n->n; i++)
			end = mo_export_node_end(src, len, n->items[i], end);
		return end;
	}
	size_t end = n->end;
	while (end > n->start && mo_export_is_space(src[end - 1]))
		end--;
	return end;
}

typedef struct mo_export_span {
	mo_export_sec s;
	size_t start, end; /* replaced bytes */
	size_t indent;     /* column of the key, for continuation lines */
	char anchor[128];  /* the section value's anchor, "" for none */
} mo_export_span;

static void mo_export_read_anchor(mo_export_span *sp, const char *src,
				  size_t len, const mo_node *val)
{
	size_t i = val->start;
	sp->anchor[0] = '\0';
	/* properties: `&name` and `!tag` in either order */
	while (i < val->end && i < len && (src[i] == '&' || src[i] == '!')) {
		if (src[i] == '&') {
			size_t b = ++i;
			while (i < len && mo_export_anchor_char(src[i]))
				i++;
			if (i - b > 0 && i - b < sizeof sp->anchor) {
				memcpy(sp->anchor, src + b, i - b);
				sp->anchor[i - b] = '\0';
			}
		} else {
			while (i < len && !mo_export_is_space(src[i]))
				i++;
		}
		while (i < len && (src[i] == ' ' || src[i] == '\t'))
			i++;
	}
}

static int mo_export_span_make(mo_export_span *sp, const mo_config *c,
			       mo_export_sec s, const mo_node *key,
			       const mo_node *val, mo_error *err)
{
	const char *src = c->doc->src;
	size_t len = c->doc->srclen;
	const char *name = mo_export_section_names[s];

	if (!key || !val || key->kind != MO_NODE_SCALAR || key->start > key->end ||
	    key->end > len) {
		mo_error_set(err, MO_ERR_INTERNAL, 0, 0,
			     "export: no source position for section %s", name);
		return -1;
	}
	/* The positions must address this very text. */
	size_t nl = strlen(name);
	if (key->style == MO_STYLE_PLAIN &&
	    (key->end - key->start < nl ||
	     memcmp(src + key->end - nl, name, nl) != 0)) {
		mo_error_set(err, MO_ERR_INTERNAL, key->line, key->column,
			     "export: source offsets of section %s do not match the text",
			     name);
		return -1;
	}
	sp->s = s;
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
	sp->end = mo_export_node_end(src, len, val, key->end);
	if (sp->end < key->end)
		sp->end = key->end;
	sp->anchor[0] = '\0';
	if (val->start >= key->end && val->start <= val->end && val->end <= len)
		mo_export_read_anchor(sp, src, len, val);
	return 0;
}

static int mo_export_span_cmp(const void *pa, const void *pb)
{
	const mo_export_span *a = pa, *b = pb;
	return a->start < b->start ? -1 : (a->start > b->start);
}

/* The file's line break: the first one decides. */
static yaml_break_t mo_export_break_of(const char *src, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '\n')
			return YAML_LN_BREAK;
		if (src[i] == '\r')
			return i + 1 < len && src[i + 1] == '\n' ? YAML_CRLN_BREAK
								  : YAML_CR_BREAK;
	}
	return YAML_LN_BREAK;
}

/* Appends the replacement text of one section: the emitted document
 * without its final line break; in block style every further line indented
 * by the key's column, in flow style without the root braces. */
static int mo_export_replacement(mo_buf *dst, const mo_config *c,
				 const mo_export_span *sp, bool flow,
				 yaml_break_t brk, mo_error *err)
{
	mo_buf tmp;
	int rc = -1;
	char last = brk == YAML_CR_BREAK ? '\r' : '\n';

	mo_buf_init(&tmp, 0);
	if (mo_export_document(&tmp, c, 1u << sp->s, flow, brk,
			       sp->anchor[0] ? sp->anchor : NULL, err) != 0)
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
			mo_error_set(err, MO_ERR_INTERNAL, 0, 0,
				     "export: unexpected flow output");
			goto out_free_tmp;
		}
		a++;
		b--;
		while (a < b && t[a] == ' ')
			a++;
		while (b > a && t[b - 1] == ' ')
			b--;
		mo_buf_append(dst, t + a, b - a);
	} else {
		mo_export_layout(dst, t + a, b - a, sp->indent, last);
	}
	if (dst->failed) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		goto out_free_tmp;
	}
	rc = 0;
out_free_tmp:
	mo_buf_free(&tmp);
	return rc;
}

/* libyaml must load the result (catches an alias whose anchor sat inside a
 * replaced section). */
static int mo_export_check(const char *text, size_t len, mo_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = -1;

	if (!yaml_parser_initialize(&parser)) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		if (parser.error == YAML_MEMORY_ERROR)
			mo_error_set(err, MO_ERR_NOMEM, 0, 0,
				     "export: out of memory");
		else
			mo_error_set(err, MO_ERR_INVALID,
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

int mo_export(char **out, size_t *out_len, const mo_config *c, mo_error *err)
{
	mo_export_span spans[3];
	size_t n = 0;
	mo_buf b;

	if (!out || !c) {
		mo_error_set(err, MO_ERR_USAGE, 0, 0, "export: NULL argument");
		return -1;
	}
	if (!c->training_yaml || !c->doc || !c->doc->root || !c->doc->src ||
	    c->doc->root->kind != MO_NODE_MAP)
		return mo_export_sections(out, out_len, c, err);
	*out = NULL;
	if (out_len)
		*out_len = 0;

	const char *src = c->doc->src;
	size_t len = c->doc->srclen;
	bool flow = c->doc->root->flow;
	yaml_break_t brk = mo_export_break_of(src, len);
	const mo_node *keys[3] = {c->recompute_key, c->comm_key, c->swap_key};
	const mo_node *vals[3] = {c->recompute_val, c->comm_val, c->swap_val};

	for (int s = MO_EXPORT_RECOMPUTE; s <= MO_EXPORT_SWAP; s++) {
		if (!mo_export_has(c, (mo_export_sec)s))
			continue;
		if (mo_export_span_make(&spans[n], c, (mo_export_sec)s,
					keys[s], vals[s], err) != 0)
			return -1;
		n++;
	}
	qsort(spans, n, sizeof spans[0], mo_export_span_cmp);
	for (size_t i = 1; i < n; i++) {
		if (spans[i].start < spans[i - 1].end) {
			mo_error_set(err, MO_ERR_INTERNAL, 0, 0,
				     "export: sections overlap");
			return -1;
		}
	}

	mo_buf_init(&b, 0);
	size_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		mo_buf_append(&b, src + pos, spans[i].start - pos);
		if (mo_export_replacement(&b, c, &spans[i], flow, brk, err) != 0)
			goto out_free_buf;
		pos = spans[i].end;
	}
	mo_buf_append(&b, src + pos, len - pos);
	if (b.failed) {
		mo_error_set(err, MO_ERR_NOMEM, 0, 0, "export: out of memory");
		goto out_free_buf;
	}
	if (mo_export_check(b.data ? b.data : "", b.len, err) != 0)
		goto out_free_buf;
	return mo_export_take(out, out_len, &b, err);
out_free_buf:
	mo_buf_free(&b);
	return -1;
}
