/* A one-pass YAML reader for the shape nearly every config has: block
 * mappings and sequences, one-line keys and values (plain, single- or
 * double-quoted scalars without escapes, one-line flow sequences of such
 * scalars), comments. It builds the tree libyaml's events build
 * (yaml_tree.c) at a tenth of the cost, and gives up (returns 0) at
 * anything else: tabs, CR, control bytes, non-ASCII outside comments,
 * document markers, directives, anchors, aliases, tags, block scalars,
 * multi-line scalars, empty values, flow mappings, nested flow
 * collections, escapes, complex keys, a limit reached, any doubt. The
 * caller then asks libyaml, which also reports every syntax error: this
 * reader never reports anything.
 *
 * libyaml's marks, reproduced here (see yaml_tree.c's mo_node_new):
 *  - a scalar starts at its first character (a quote for quoted ones) and
 *    ends after its last non-blank one (after the closing quote);
 *  - a block mapping starts at its first key, a block sequence at its
 *    first '-' (an "indentless" sequence, at its parent key's column,
 *    too); both end where the next token starts: the first character of
 *    the next line that is neither blank nor a comment, or the end of the
 *    text (libyaml's BLOCK-END and KEY tokens carry that mark);
 *  - a flow sequence runs from '[' to after ']'.
 * Columns and lines count from 1; with ASCII outside comments, a column
 * is a byte count. */
#include "yaml_fast.h"

#include <string.h>

#define MO_YF_ITEMS 512   /* items of the open collections, at most */
#define MO_YF_DEPTH 64    /* nesting this reader follows, at most */
#define MO_YF_KEY_MAX 1000 /* libyaml's simple keys stop at 1024 chars */

typedef struct mo_yf {
	const char *s;
	size_t n;
	mo_arena *a;
	const mo_limits *lim;
	size_t line, line_start; /* 0-based line of `cur`, offset of its start */
	size_t cur;              /* the current token: first byte of content */
	long col;                /* its column (0-based), -1 at the end */
	size_t pos;              /* where the current line's scan stopped */
	size_t nodes, depth, n_items;
	int fail;
	mo_node *items[MO_YF_ITEMS];
} mo_yf;

/* The end of a comment that starts at i: the offset of its '\n' (or the
 * end). Other bytes are only ever read by the scanners below, which take
 * printable ASCII alone; a comment may also hold tabs and well-formed
 * UTF-8 of characters libyaml's reader accepts that are not line breaks
 * (NEL, LS, PS) or a byte order mark. Anything else: y->fail. */
static size_t mo_yf_comment_end(mo_yf *y, size_t i)
{
	const unsigned char *s = (const unsigned char *)y->s;
	size_t n = y->n;
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		if (c == '\n')
			return i;
		if (c == '\t') {
			i++;
			continue;
		}
		size_t k;
		unsigned v, min;
		if ((c & 0xE0) == 0xC0)
			k = 1, v = c & 0x1F, min = 0x80;
		else if ((c & 0xF0) == 0xE0)
			k = 2, v = c & 0x0F, min = 0x800;
		else if ((c & 0xF8) == 0xF0)
			k = 3, v = c & 0x07, min = 0x10000;
		else
			break; /* a control byte, DEL, CR or a stray continuation */
		if (n - i <= k)
			break;
		size_t j = 1;
		for (; j <= k && (s[i + j] & 0xC0) == 0x80; j++)
			v = v << 6 | (s[i + j] & 0x3F);
		if (j <= k || v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
			break;
		if (!((v >= 0xA0 && v <= 0xD7FF && v != 0x2028 && v != 0x2029) ||
		      (v >= 0xE000 && v <= 0xFFFD && v != 0xFEFF) || v >= 0x10000))
			break;
		i += k + 1;
	}
	if (i < n)
		y->fail = 1;
	return n;
}

/* Moves to the first content of the line starting at i, or of a later
 * one: blank lines and comment lines are skipped. */
static void mo_yf_scan_from(mo_yf *y, size_t i)
{
	const char *s = y->s;
	for (;;) {
		y->line_start = i;
		size_t j = i;
		while (j < y->n && s[j] == ' ')
			j++;
		if (j < y->n && s[j] != '\n' && s[j] != '#') {
			y->cur = j;
			y->col = (long)(j - i);
			y->pos = j;
			/* a document marker or directive: libyaml's business */
			if (j == i && (s[j] == '%' ||
				       (y->n - j >= 3 && (memcmp(s + j, "---", 3) == 0 ||
							  memcmp(s + j, "...", 3) == 0))))
				y->fail = 1;
			return;
		}
		if (j < y->n && s[j] == '#')
			j = mo_yf_comment_end(y, j);
		if (j >= y->n) {
			y->cur = y->n;
			y->col = -1;
			y->pos = y->n;
			return;
		}
		i = j + 1;
		y->line++;
	}
}

/* The next content after the current line (whose rest was checked to be
 * blanks and a comment). */
static void mo_yf_next(mo_yf *y)
{
	size_t i = y->pos;
	while (i < y->n && y->s[i] == ' ')
		i++;
	if (i < y->n && y->s[i] != '\n') {
		if (y->s[i] != '#')
			y->fail = 1; /* (the scanners stop the line at a comment) */
		i = mo_yf_comment_end(y, i);
	}
	if (i >= y->n) {
		y->cur = y->n;
		y->col = -1;
		y->pos = y->n;
		return;
	}
	y->line++;
	mo_yf_scan_from(y, i + 1);
}

static int mo_yf_blankz(const mo_yf *y, size_t i)
{
	return i >= y->n || y->s[i] == ' ' || y->s[i] == '\n';
}

static mo_node *mo_yf_node(mo_yf *y, mo_node_kind kind, size_t start, size_t extra)
{
	mo_node *nd = mo_arena_alloc_raw(y->a, sizeof(*nd) + extra);
	if (!nd) {
		y->fail = 1;
		return NULL;
	}
	*nd = (mo_node){.kind = kind,
			.line = (int)y->line + 1,
			.column = (int)(start - y->line_start) + 1,
			.start = start,
			.end = start,
			.weight = 1};
	y->nodes++;
	return nd;
}

static mo_node *mo_yf_scalar(mo_yf *y, size_t start, size_t end, const char *v,
			     size_t len, mo_scalar_style style)
{
	if (len > y->lim->max_scalar_bytes) {
		y->fail = 1;
		return NULL;
	}
	mo_node *nd = mo_yf_node(y, MO_NODE_SCALAR, start, len + 1);
	if (!nd)
		return NULL;
	char *value = (char *)(nd + 1);
	memcpy(value, v, len);
	value[len] = '\0';
	nd->value = value;
	nd->len = len;
	nd->end = end;
	nd->style = style;
	return nd;
}

/* Byte classes of plain scalars: 1 ends a run of ordinary characters in
 * block context, 2 in flow context (controls, space, DEL and above, '#',
 * ':'; in flow also ",[]{}?"); 4 cannot start one (libyaml's indicators;
 * '-' is decided apart). */
static const unsigned char mo_yf_cls[256] = {
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 4, 4, 7, 0, 4, 4, 4, 0, 0, 4, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 4, 6,
	4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 6, 0, 0,
	4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 4, 6, 0, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
};

/* A plain scalar may start at i (libyaml's indicators excluded; '-'
 * followed by a non-blank is allowed). */
static int mo_yf_plain_start(const mo_yf *y, size_t i, int flow)
{
	unsigned char c = (unsigned char)y->s[i];
	if (c == '-') {
		if (mo_yf_blankz(y, i + 1))
			return 0;
		return !flow || !(mo_yf_cls[(unsigned char)y->s[i + 1]] & 2);
	}
	return !(mo_yf_cls[c] & 4);
}

/* Scans a one-line plain scalar from i: *end after its last non-blank,
 * *colon the offset of a ':' + blank that makes it a key (block context
 * only), else 0. 0 when the scalar is not one this reader takes. The text
 * ends with a NUL (a stop byte). */
static int mo_yf_plain(const mo_yf *y, size_t i, int flow, size_t *end, size_t *colon)
{
	const unsigned char *s = (const unsigned char *)y->s;
	unsigned stop = flow ? 2 : 1;
	size_t last;
	*colon = 0;
	if (!mo_yf_plain_start(y, i, flow))
		return 0;
	for (;;) {
		while (!(mo_yf_cls[s[i]] & stop))
			i++;
		last = i;
		while (s[i] == ' ')
			i++;
		unsigned char c = s[i];
		if (c == '\n' || i >= y->n)
			break;
		if (c == '#') {
			if (s[i - 1] == ' ')
				break; /* a comment */
			i++;     /* part of the scalar */
			continue;
		}
		if (c == ':') {
			if (flow || !mo_yf_blankz(y, i + 1) || last != i)
				return 0;
			*colon = i;
			break;
		}
		if (flow && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}'))
			break;
		if (!(mo_yf_cls[c] & stop))
			continue; /* more of the scalar after blanks */
		return 0;       /* a control byte, DEL, non-ASCII, '?' in flow */
	}
	*end = last;
	return 1;
}

/* A one-line quoted scalar at i (quote at i): *end after the closing
 * quote. 0 for escapes ('' or backslashes), line breaks, non-ASCII. */
static int mo_yf_quoted(const mo_yf *y, size_t i, size_t *end)
{
	const char *s = y->s;
	char q = s[i];
	for (i++; i < y->n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || (q == '"' && c == '\\'))
			return 0;
		if (c == (unsigned char)q) {
			if (q == '\'' && i + 1 < y->n && s[i + 1] == '\'')
				return 0;
			*end = i + 1;
			return 1;
		}
	}
	return 0;
}

static mo_node *mo_yf_quoted_node(mo_yf *y, size_t i, size_t end)
{
	return mo_yf_scalar(y, i, end, y->s + i + 1, end - i - 2,
			    y->s[i] == '\'' ? MO_STYLE_SINGLE : MO_STYLE_DOUBLE);
}

/* The rest of the line from i is blanks and maybe a comment after a
 * blank; the line's scan stops there. */
static int mo_yf_eol(mo_yf *y, size_t i)
{
	size_t j = i;
	while (j < y->n && y->s[j] == ' ')
		j++;
	if (j < y->n && y->s[j] != '\n' && !(y->s[j] == '#' && j > i)) {
		y->fail = 1;
		return 0;
	}
	y->pos = j;
	return 1;
}

static int mo_yf_push(mo_yf *y, mo_node *nd)
{
	if (!nd || y->n_items == MO_YF_ITEMS) {
		y->fail = 1;
		return 0;
	}
	y->items[y->n_items++] = nd;
	return 1;
}

/* A collection starts: libyaml's nesting limit (the builder's check). */
static mo_node *mo_yf_open(mo_yf *y, mo_node_kind kind, size_t start)
{
	if (y->depth >= y->lim->max_depth || y->depth >= MO_YF_DEPTH) {
		y->fail = 1;
		return NULL;
	}
	mo_node *nd = mo_yf_node(y, kind, start, 0);
	if (nd)
		y->depth++;
	return nd;
}

/* The collection's items are items[base..]: copied to the arena. */
static int mo_yf_close(mo_yf *y, mo_node *nd, size_t base, size_t end)
{
	size_t count = y->n_items - base;
	y->depth--;
	nd->end = end;
	nd->n = count;
	if (count) {
		nd->items = mo_arena_alloc_raw(y->a, count * sizeof(*nd->items));
		if (!nd->items) {
			y->fail = 1;
			return 0;
		}
		memcpy(nd->items, y->items + base, count * sizeof(*nd->items));
		for (size_t k = 0; k < count; k++)
			nd->weight += nd->items[k]->weight;
	}
	y->n_items = base;
	return 1;
}

/* [a, 'b', "c"] on one line, from '[' at i. */
static mo_node *mo_yf_flow_seq(mo_yf *y, size_t i)
{
	const char *s = y->s;
	mo_node *seq = mo_yf_open(y, MO_NODE_SEQ, i);
	size_t base = y->n_items, end, colon;
	int need = 0; /* an item must follow (after a comma) */
	if (!seq)
		return NULL;
	seq->flow = true;
	for (i++;;) {
		while (i < y->n && s[i] == ' ')
			i++;
		if (i >= y->n || s[i] == '\n')
			goto fail;
		if (s[i] == ']' && !need)
			break;
		if (s[i] == '\'' || s[i] == '"') {
			if (!mo_yf_quoted(y, i, &end) || !mo_yf_push(y, mo_yf_quoted_node(y, i, end)))
				goto fail;
		} else {
			if (!mo_yf_plain(y, i, 1, &end, &colon) ||
			    !mo_yf_push(y, mo_yf_scalar(y, i, end, s + i, end - i, MO_STYLE_PLAIN)))
				goto fail;
		}
		for (i = end; i < y->n && s[i] == ' ';)
			i++;
		if (i < y->n && s[i] == ',') {
			i++;
			need = 1;
		} else if (i < y->n && s[i] == ']') {
			break;
		} else {
			goto fail;
		}
	}
	if (!mo_yf_close(y, seq, base, i + 1) || !mo_yf_eol(y, i + 1))
		return NULL;
	return seq;
fail:
	y->fail = 1;
	return NULL;
}

/* A value on the line of its key or '-': scalar or flow sequence, then
 * the end of the line. */
static mo_node *mo_yf_inline(mo_yf *y, size_t i)
{
	size_t end, colon;
	mo_node *nd;
	char c = y->s[i];
	if (c == '[')
		return mo_yf_flow_seq(y, i);
	if (c == '\'' || c == '"') {
		if (!mo_yf_quoted(y, i, &end)) {
			y->fail = 1;
			return NULL;
		}
		nd = mo_yf_quoted_node(y, i, end);
	} else {
		if (!mo_yf_plain(y, i, 0, &end, &colon) || colon) {
			y->fail = 1;
			return NULL;
		}
		nd = mo_yf_scalar(y, i, end, y->s + i, end - i, MO_STYLE_PLAIN);
	}
	if (!nd || !mo_yf_eol(y, end))
		return NULL;
	return nd;
}

/* A key at i: its node, with *after the offset past its ':' (followed by
 * a blank). NULL when the text at i is not a one-line key. */
static mo_node *mo_yf_key(mo_yf *y, size_t i, size_t *after, int make)
{
	const char *s = y->s;
	size_t end, colon;
	if (s[i] == '\'' || s[i] == '"') {
		if (!mo_yf_quoted(y, i, &end) || end >= y->n || s[end] != ':' ||
		    !mo_yf_blankz(y, end + 1))
			return NULL;
		colon = end;
	} else if (!mo_yf_plain(y, i, 0, &end, &colon) || !colon) {
		return NULL;
	}
	if (colon - i > MO_YF_KEY_MAX)
		return NULL;
	*after = colon + 1;
	if (!make)
		return (mo_node *)1; /* a key is there */
	if (s[i] == '\'' || s[i] == '"')
		return mo_yf_quoted_node(y, i, end);
	return mo_yf_scalar(y, i, end, s + i, end - i, MO_STYLE_PLAIN);
}

static int mo_yf_entry_at(const mo_yf *y, size_t i)
{
	return y->s[i] == '-' && mo_yf_blankz(y, i + 1);
}

static mo_node *mo_yf_block(mo_yf *y);
static mo_node *mo_yf_seq(mo_yf *y, int indentless);

/* A block mapping whose first key is at the current token. Leaves the
 * current token after it. */
static mo_node *mo_yf_map(mo_yf *y)
{
	long m = y->col;
	mo_node *map = mo_yf_open(y, MO_NODE_MAP, y->cur);
	size_t base = y->n_items, after;
	if (!map)
		return NULL;
	for (;;) {
		mo_node *key = mo_yf_key(y, y->cur, &after, 1);
		if (!mo_yf_push(y, key))
			return NULL;
		size_t j = after;
		while (j < y->n && y->s[j] == ' ')
			j++;
		mo_node *value;
		if (j >= y->n || y->s[j] == '\n' || (y->s[j] == '#' && j > after)) {
			/* the value is the block on the next lines */
			y->pos = j;
			mo_yf_next(y);
			if (y->fail)
				return NULL;
			if (y->col > m)
				value = mo_yf_block(y);
			else if (y->col == m && mo_yf_entry_at(y, y->cur))
				value = mo_yf_seq(y, 1);
			else
				value = NULL; /* an empty value: libyaml's */
		} else {
			value = mo_yf_inline(y, j);
			if (value) {
				mo_yf_next(y);
				if (y->col > m) /* a continuation, or an error */
					value = NULL;
			}
		}
		if (!mo_yf_push(y, value) || y->fail)
			return NULL;
		if (y->col < m)
			break;
		if (y->col > m || mo_yf_entry_at(y, y->cur)) {
			y->fail = 1;
			return NULL;
		}
	}
	if (!mo_yf_close(y, map, base, y->col < 0 ? y->n : y->cur))
		return NULL;
	return map;
}

/* A block sequence whose first '-' is the current token; `indentless`
 * when it sits at its parent key's column (it then ends at a line of
 * that column that is not an entry). */
static mo_node *mo_yf_seq(mo_yf *y, int indentless)
{
	long c = y->col;
	mo_node *seq = mo_yf_open(y, MO_NODE_SEQ, y->cur);
	size_t base = y->n_items, after;
	if (!seq)
		return NULL;
	for (;;) {
		size_t j = y->cur + 1;
		while (j < y->n && y->s[j] == ' ')
			j++;
		if (j == y->cur + 1 || j >= y->n || y->s[j] == '\n' || y->s[j] == '#' ||
		    mo_yf_entry_at(y, j)) {
			y->fail = 1; /* the item on the next lines, or nested '- -' */
			return NULL;
		}
		mo_node *item;
		if (y->s[j] != '[' && mo_yf_key(y, j, &after, 0)) {
			y->cur = j;
			y->col = (long)(j - y->line_start);
			item = mo_yf_map(y);
		} else {
			item = mo_yf_inline(y, j);
			if (item) {
				mo_yf_next(y);
				if (y->col > c)
					item = NULL;
			}
		}
		if (!mo_yf_push(y, item) || y->fail)
			return NULL;
		if (y->col < c)
			break;
		if (y->col > c) {
			y->fail = 1;
			return NULL;
		}
		if (!mo_yf_entry_at(y, y->cur)) {
			if (indentless)
				break;
			y->fail = 1;
			return NULL;
		}
	}
	if (!mo_yf_close(y, seq, base, y->col < 0 ? y->n : y->cur))
		return NULL;
	return seq;
}

/* The block collection at the current token. */
static mo_node *mo_yf_block(mo_yf *y)
{
	if (mo_yf_entry_at(y, y->cur))
		return mo_yf_seq(y, 0);
	return mo_yf_map(y);
}

int mo_yaml_fast(mo_doc *doc, const mo_limits *lim, mo_node **root)
{
	mo_yf yf, *y = &yf; /* 4 KiB of item stack: no allocation */
	int ok = 0;
	*root = NULL;
	y->s = doc->src;
	y->n = doc->srclen;
	y->a = doc->arena;
	y->lim = lim;
	y->line = 0;
	y->nodes = y->depth = y->n_items = 0;
	y->fail = 0;
	if (y->n && y->s[y->n] == '\0') { /* the scanners' sentinel */
		mo_yf_scan_from(y, 0);
		if (!y->fail && y->col >= 0) {
			mo_node *r = mo_yf_block(y);
			if (r && !y->fail && y->col < 0 && y->nodes <= lim->max_nodes) {
				*root = r;
				ok = 1;
			}
		}
	}
	return ok;
}
