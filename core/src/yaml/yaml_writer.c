/* The one way memopt writes YAML: libyaml's emitter behind a few calls
 * (scalars, sequences, mappings) with the styles every output shares, so
 * that the config export, the model's canonical form and anything else
 * written as YAML quote and lay out text the same way and never print it by
 * hand.
 *
 * Styles: unlimited line width (every scalar on one line), indent 2, UTF-8
 * written as is; quoted strings single-quoted, double-quoted when they hold
 * a line break (libyaml escapes it there). libyaml writes a block sequence
 * inside a mapping at its key's column; the text handed back has such
 * sequences indented under their key, as the seed and memopt have always
 * written them (PyYAML reads both forms the same). */
#include "yaml/yaml.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct mo_yaml_writer {
	yaml_emitter_t emitter;
	mo_buf raw;         /* what the emitter wrote */
	mo_yaml_break line_break;
	const char *what;   /* message prefix, e.g. "export" */
	mo_error *err;
	bool failed;        /* err already filled */
};

static int yaml_tree_writer_output(void *data, unsigned char *buffer, size_t size)
{
	mo_buf *b = data;
	return buf_append(b, (const char *)buffer, size) ? 1 : 0;
}

static void yaml_tree_writer_fail(mo_yaml_writer *w, mo_error_code code, const char *msg)
{
	if (w->failed)
		return;
	w->failed = true;
	error_set(w->err, code, 0, 0, "%s: %s", w->what, msg);
}

/* Emits an initialised event; the emitter owns it from here, even when
 * yaml_emitter_emit fails. */
static bool yaml_tree_writer_emit(mo_yaml_writer *w, yaml_event_t *event)
{
	if (w->failed) {
		yaml_event_delete(event);
		return false;
	}
	if (yaml_emitter_emit(&w->emitter, event))
		return true;
	switch (w->emitter.error) {
	case YAML_MEMORY_ERROR:
		yaml_tree_writer_fail(w, MO_ERR_NOMEM, "out of memory");
		break;
	case YAML_WRITER_ERROR:
		if (w->raw.max && w->raw.len >= w->raw.max / 2)
			yaml_tree_writer_fail(w, MO_ERR_LIMIT, "output too large");
		else
			yaml_tree_writer_fail(w, MO_ERR_NOMEM, "out of memory");
		break;
	default: {
		char msg[200];
		snprintf(msg, sizeof msg, "libyaml emitter: %s",
			 w->emitter.problem ? w->emitter.problem : "unknown error");
		yaml_tree_writer_fail(w, MO_ERR_INTERNAL, msg);
		break;
	}
	}
	return false;
}

/* An event libyaml could not initialise (it only fails for memory). */
static bool yaml_tree_writer_no_event(mo_yaml_writer *w)
{
	yaml_tree_writer_fail(w, MO_ERR_NOMEM, "out of memory");
	return false;
}

static bool yaml_tree_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		size_t width;
		uint32_t code_point;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			width = 2;
			code_point = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			width = 3;
			code_point = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			width = 4;
			code_point = c & 0x07;
		} else {
			return false;
		}
		if (n - i < width)
			return false;
		for (size_t k = 1; k < width; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return false;
			code_point = (code_point << 6) | (s[i + k] & 0x3F);
		}
		if ((width == 2 && code_point < 0x80) || (width == 3 && code_point < 0x800) ||
		    (width == 4 && code_point < 0x10000) || code_point > 0x10FFFF ||
		    (code_point >= 0xD800 && code_point <= 0xDFFF))
			return false;
		i += width;
	}
	return true;
}

/* Line breaks (LF, CR, NEL, LS, PS): such a string is double-quoted, where
 * libyaml escapes them, so that every scalar stays on one line. */
static bool yaml_tree_has_break(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || c == '\r')
			return true;
		if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85)
			return true;
		if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
		    ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9))
			return true;
	}
	return false;
}

static bool yaml_tree_write_scalar(mo_yaml_writer *w, const char *s, size_t n,
				 yaml_scalar_style_t style)
{
	yaml_event_t event;
	bool plain = style == YAML_PLAIN_SCALAR_STYLE;
	if (w->failed)
		return false;
	if (!yaml_tree_utf8_valid((const unsigned char *)s, n)) {
		yaml_tree_writer_fail(w, MO_ERR_INVALID, "a string is not valid UTF-8");
		return false;
	}
	if (n > INT_MAX) {
		yaml_tree_writer_fail(w, MO_ERR_LIMIT, "a string is too long");
		return false;
	}
	if (!yaml_scalar_event_initialize(&event, NULL, NULL, (yaml_char_t *)(uintptr_t)s,
					  (int)n, plain ? 1 : 0, plain ? 0 : 1, style))
		return yaml_tree_writer_no_event(w);
	return yaml_tree_writer_emit(w, &event);
}

bool yaml_tree_write_plain(mo_yaml_writer *w, const char *s)
{
	return yaml_tree_write_scalar(w, s, strlen(s), YAML_PLAIN_SCALAR_STYLE);
}

bool yaml_tree_write_string(mo_yaml_writer *w, const char *s, size_t n)
{
	if (!w->failed && yaml_tree_has_break(s, n))
		return yaml_tree_write_scalar(w, s, n, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	return yaml_tree_write_scalar(w, s, n, YAML_SINGLE_QUOTED_SCALAR_STYLE);
}

bool yaml_tree_write_double_quoted(mo_yaml_writer *w, const char *s)
{
	return yaml_tree_write_scalar(w, s, strlen(s), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

bool yaml_tree_write_mapping_start(mo_yaml_writer *w, const char *anchor, bool flow)
{
	yaml_event_t event;
	if (w->failed)
		return false;
	if (!yaml_mapping_start_event_initialize(
		    &event, (yaml_char_t *)(uintptr_t)anchor, NULL, 1,
		    flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE))
		return yaml_tree_writer_no_event(w);
	return yaml_tree_writer_emit(w, &event);
}

bool yaml_tree_write_mapping_end(mo_yaml_writer *w)
{
	yaml_event_t event;
	if (w->failed)
		return false;
	if (!yaml_mapping_end_event_initialize(&event))
		return yaml_tree_writer_no_event(w);
	return yaml_tree_writer_emit(w, &event);
}

bool yaml_tree_write_sequence_start(mo_yaml_writer *w, bool flow)
{
	yaml_event_t event;
	if (w->failed)
		return false;
	if (!yaml_sequence_start_event_initialize(
		    &event, NULL, NULL, 1,
		    flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE))
		return yaml_tree_writer_no_event(w);
	return yaml_tree_writer_emit(w, &event);
}

bool yaml_tree_write_sequence_end(mo_yaml_writer *w)
{
	yaml_event_t event;
	if (w->failed)
		return false;
	if (!yaml_sequence_end_event_initialize(&event))
		return yaml_tree_writer_no_event(w);
	return yaml_tree_writer_emit(w, &event);
}

bool yaml_tree_writer_failed(const mo_yaml_writer *w)
{
	return w->failed;
}

void yaml_tree_writer_fail_nomem(mo_yaml_writer *w)
{
	yaml_tree_writer_fail(w, MO_ERR_NOMEM, "out of memory");
}

static yaml_break_t yaml_tree_libyaml_break(mo_yaml_break b)
{
	switch (b) {
	case MO_YAML_BREAK_CR:
		return YAML_CR_BREAK;
	case MO_YAML_BREAK_CRLF:
		return YAML_CRLN_BREAK;
	default:
		return YAML_LN_BREAK;
	}
}

/* Stream and document start: the emitter writes no `---` for an implicit
 * document. */
static bool yaml_tree_writer_begin(mo_yaml_writer *w)
{
	yaml_event_t event;
	if (!yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING))
		return yaml_tree_writer_no_event(w);
	if (!yaml_tree_writer_emit(w, &event))
		return false;
	if (!yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1))
		return yaml_tree_writer_no_event(w);
	return yaml_tree_writer_emit(w, &event);
}

int yaml_tree_writer_new(mo_yaml_writer **out, mo_yaml_break line_break, const char *what,
		       mo_error *err)
{
	*out = NULL;
	mo_yaml_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "%s: out of memory", what);
		return -1;
	}
	w->what = what;
	w->err = err;
	w->line_break = line_break;
	buf_init(&w->raw, 0);
	if (!yaml_emitter_initialize(&w->emitter)) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "%s: out of memory", what);
		free(w);
		return -1;
	}
	yaml_emitter_set_output(&w->emitter, yaml_tree_writer_output, &w->raw);
	yaml_emitter_set_encoding(&w->emitter, YAML_UTF8_ENCODING);
	yaml_emitter_set_unicode(&w->emitter, 1);
	yaml_emitter_set_width(&w->emitter, -1);
	yaml_emitter_set_indent(&w->emitter, 2);
	yaml_emitter_set_break(&w->emitter, yaml_tree_libyaml_break(line_break));
	if (!yaml_tree_writer_begin(w)) {
		yaml_tree_writer_free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void yaml_tree_writer_free(mo_yaml_writer *w)
{
	if (!w)
		return;
	yaml_emitter_delete(&w->emitter);
	buf_free(&w->raw);
	free(w);
}

/* ---- the text handed back ------------------------------------------------ */

/* Leading spaces of a line. */
static size_t yaml_tree_line_indent(const char *line, size_t n)
{
	size_t i = 0;
	while (i < n && line[i] == ' ')
		i++;
	return i;
}

/* Column where a line's key or value starts: past its indentation and the
 * `- ` of the sequence items it opens. */
static size_t yaml_tree_line_key_column(const char *line, size_t n)
{
	size_t i = yaml_tree_line_indent(line, n);
	while (i + 1 < n && line[i] == '-' && line[i + 1] == ' ')
		i += 2;
	return i;
}

static bool yaml_tree_line_is_item(const char *line, size_t n, size_t column)
{
	return column + 1 < n && line[column] == '-' && line[column + 1] == ' ';
}

#define MO_YAML_MAX_NESTING 64

/* Copies emitter output to dst with every block sequence that is a mapping
 * value indented under its key, and every line after a break indented by
 * `indent`. A key whose value is a block collection is the only line that
 * ends with ':' (a plain scalar cannot, and every scalar is on one line), so
 * lines are structure. */
static void yaml_tree_layout(mo_buf *dst, const char *text, size_t n, size_t indent,
			   char line_end)
{
	size_t open[MO_YAML_MAX_NESTING]; /* columns of the sequences being indented */
	size_t depth = 0, previous_key = SIZE_MAX;
	for (size_t i = 0; i < n;) {
		size_t end = i;
		while (end < n && text[end] != line_end)
			end++;
		size_t next = end < n ? end + 1 : n, body = end;
		while (body > i && (text[body - 1] == '\r' || text[body - 1] == '\n'))
			body--;
		const char *line = text + i;
		size_t length = body - i, column = yaml_tree_line_indent(line, length);
		while (depth > 0 && !(column > open[depth - 1] ||
				      (column == open[depth - 1] &&
				       yaml_tree_line_is_item(line, length, column))))
			depth--;
		if (previous_key == column && yaml_tree_line_is_item(line, length, column) &&
		    depth < MO_YAML_MAX_NESTING)
			open[depth++] = column;
		if (i > 0)
			for (size_t k = 0; k < indent; k++)
				buf_append(dst, " ", 1);
		for (size_t k = 0; k < depth; k++)
			buf_append(dst, "  ", 2);
		buf_append(dst, line, next - i);
		previous_key = length > 0 && line[length - 1] == ':'
				       ? yaml_tree_line_key_column(line, length)
				       : SIZE_MAX;
		i = next;
	}
}

static bool yaml_tree_writer_end(mo_yaml_writer *w)
{
	yaml_event_t event;
	if (w->failed)
		return false;
	if (!yaml_document_end_event_initialize(&event, 1))
		return yaml_tree_writer_no_event(w);
	if (!yaml_tree_writer_emit(w, &event))
		return false;
	if (!yaml_stream_end_event_initialize(&event))
		return yaml_tree_writer_no_event(w);
	if (!yaml_tree_writer_emit(w, &event))
		return false;
	if (!yaml_emitter_flush(&w->emitter))
		return yaml_tree_writer_no_event(w);
	if (w->raw.failed)
		return yaml_tree_writer_no_event(w);
	return true;
}

int yaml_tree_writer_finish(mo_yaml_writer *w, mo_buf *dst, size_t indent)
{
	if (!yaml_tree_writer_end(w))
		return -1;
	char line_end = w->line_break == MO_YAML_BREAK_CR ? '\r' : '\n';
	yaml_tree_layout(dst, w->raw.data ? w->raw.data : "", w->raw.len, indent, line_end);
	if (dst->failed) {
		yaml_tree_writer_fail(w, MO_ERR_NOMEM, "out of memory");
		return -1;
	}
	return 0;
}
