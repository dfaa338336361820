/* Shared by the subcommands: reading inputs, loading config and model
 * through mo_check, printing diagnostics and JSON. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a whole file (or stdin for "-") with a size cap. */
char *mo_cli_read(const char *path, size_t *len, size_t max)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "memopt: cannot read %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap) {
			if (ferror(f)) {
				fprintf(stderr, "memopt: cannot read %s: %s\n", path, strerror(errno));
				free(buf);
				buf = NULL;
			}
			break;
		}
		if (cap >= max) {
			fprintf(stderr, "memopt: %s is larger than %zu bytes\n", path, max);
			free(buf);
			buf = NULL;
			break;
		}
		cap = cap * 2 > max ? max : cap * 2;
		char *p = realloc(buf, cap + 1);
		if (!p)
			free(buf);
		buf = p;
	}
	if (f != stdin)
		fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

bool mo_cli_is_preset(const char *name)
{
	for (size_t i = 0; i < mo_presets_count(); i++)
		if (strcmp(mo_preset_name(i), name) == 0)
			return true;
	return false;
}

/* ---- human diagnostics: FILE:LINE:COL: error[CODE]: message + caret ----- */

static void mo_cli_source_line(const char *text, size_t len, int line, int column)
{
	if (!text || line < 1)
		return;
	const char *p = text, *end = text + len;
	for (int l = 1; l < line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return;
		p = nl + 1;
	}
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
	if (n && p[n - 1] == '\r')
		n--;
	if (n > 200)
		n = 200;
	fprintf(stderr, "%5d | ", line);
	for (size_t i = 0; i < n; i++)
		fputc((unsigned char)p[i] < 0x20 && p[i] != '\t' ? '?' : p[i], stderr);
	fputs("\n      | ", stderr);
	/* the caret: count characters, not bytes, keeping tabs */
	int col = 1;
	for (size_t i = 0; i < n && col < column; i++) {
		if (((unsigned char)p[i] & 0xC0) == 0x80)
			continue;
		fputc(p[i] == '\t' ? '\t' : ' ', stderr);
		col++;
	}
	fputs("^\n", stderr);
}

/* How the command line gives what a `model-needed` finding asks for: the core
 * says what is missing, the flag is this face's word (chosen by code and path). */
static const char *mo_cli_how_to_give(const mo_diag *d)
{
	if (strcmp(d->code, "model-needed") != 0)
		return NULL;
	if (d->path && strcmp(d->path, "parallel.world_size") == 0)
		return "pass --devices N";
	return "pass --model: a preset (memopt presets) or a model file";
}

void mo_cli_print_diags(const mo_cli *c)
{
	for (size_t i = 0; i < mo_diags_count(c->diags); i++) {
		const mo_diag *d = mo_diags_get(c->diags, i);
		const char *sev = d->severity == MO_SEV_ERROR ? "error" : "warning";
		if (d->line > 0)
			fprintf(stderr, "%s:%d:%d: %s[%s]: %s\n", d->file, d->line, d->column, sev,
				d->code, d->message);
		else
			fprintf(stderr, "%s: %s[%s]: %s\n", d->file, sev, d->code, d->message);
		bool in_model = c->model_arg && c->model_text && strcmp(d->file, c->model_arg) == 0;
		if (in_model)
			mo_cli_source_line(c->model_text, c->model_len, d->line, d->column);
		else if (strcmp(d->file, c->config_path) == 0)
			mo_cli_source_line(c->config_text, c->config_len, d->line, d->column);
		if (d->hint)
			fprintf(stderr, "      = help: %s\n", d->hint);
		const char *how = mo_cli_how_to_give(d);
		if (how)
			fprintf(stderr, "      = help: %s\n", how);
	}
	size_t ne = mo_diags_errors(c->diags), nw = mo_diags_warnings(c->diags);
	if (ne || nw)
		fprintf(stderr, "%s: %zu error%s, %zu warning%s\n", c->config_path, ne,
			ne == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
}

int mo_cli_print_json(json_t *j)
{
	if (!j) {
		fputs("memopt: out of memory\n", stderr);
		return MO_EXIT_USAGE;
	}
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!s)
		return MO_EXIT_USAGE;
	puts(s);
	free(s);
	return MO_EXIT_OK;
}

/* ---- loading ------------------------------------------------------------- */

/* The folder of a file read from disk, for the files a launch script
 * sources beside it; NULL for stdin (or out of memory: then they are
 * reported, not read). */
char *mo_cli_dir_of(const char *path)
{
	if (strcmp(path, "-") == 0)
		return NULL;
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* --model into in: a preset by name (a preset's name wins over a file of that name), else the
 * readable file's text (at most max bytes). Returns an exit status. */
static int mo_cli_model_input(mo_cli *c, mo_input *in, size_t max)
{
	if (!c->model_arg)
		return MO_EXIT_OK;
	if (mo_cli_is_preset(c->model_arg) || access(c->model_arg, R_OK) != 0) {
		in->preset = c->model_arg;
		return MO_EXIT_OK;
	}
	c->model_text = mo_cli_read(c->model_arg, &c->model_len, max);
	if (!c->model_text)
		return MO_EXIT_USAGE;
	in->model = c->model_text;
	in->model_len = c->model_len;
	in->model_name = c->model_arg;
	c->model_dir = mo_cli_dir_of(c->model_arg);
	in->model_dir = c->model_dir;
	return MO_EXIT_OK;
}

/* mo_check_resolved of in into c. Returns an exit status. */
static int mo_cli_check(mo_cli *c, const mo_input *in)
{
	mo_error err = {0};
	if (!c->diags && mo_diags_new(&c->diags) != 0)
		return MO_EXIT_USAGE;
	if (mo_check_resolved(&c->cfg, &c->model, &c->resolved, c->diags, in, &err) != 0) {
		fprintf(stderr, "memopt: %s\n", err.text);
		if (err.code == MO_ERR_USAGE && in->preset)
			fputs("memopt: --model takes a preset (memopt presets) or a readable file\n",
			      stderr);
		return MO_EXIT_USAGE;
	}
	return MO_EXIT_OK;
}

int mo_cli_load(mo_cli *c)
{
	mo_limits lim;
	mo_limits_default(&lim);
	c->config_text = mo_cli_read(c->config_path, &c->config_len, lim.max_bytes);
	if (!c->config_text)
		return MO_EXIT_USAGE;
	/* a training YAML's pretrained_model_dir opens from where it is
	 * launched, as here: the working directory (stdin's text too) */
	mo_input in = {.config = c->config_text, .config_len = c->config_len,
		       .config_name = c->config_path, .devices = c->devices, .limits = &lim,
		       .config_dir = "."};
	int rc = mo_cli_model_input(c, &in, lim.max_bytes);
	return rc != MO_EXIT_OK ? rc : mo_cli_check(c, &in);
}

void mo_cli_free(mo_cli *c)
{
	mo_resolved_free(c->resolved);
	c->resolved = NULL;
	mo_config_free(c->cfg);
	mo_model_free(c->model);
	mo_diags_free(c->diags);
	free(c->config_text);
	free(c->model_text);
	free(c->model_dir);
	c->model_dir = NULL;
	c->cfg = NULL;
	c->model = NULL;
	c->diags = NULL;
	c->config_text = c->model_text = NULL;
}

void mo_cli_budget_begin(const mo_cli *c)
{
	uint64_t ms = c->work_set ? c->work_ms : MO_CLI_WORK_MS;
	mo_budget b = {.max_ms = ms};

	mo_budget_begin(ms ? &b : NULL);
}

int mo_cli_estimate_run(const mo_cli *c, mo_estimate **out, mo_error *err)
{
	return c->resolved ? mo_estimate_resolved(out, c->resolved, err)
			   : mo_estimate_run(out, c->cfg, c->model, err);
}

int mo_cli_estimate_summary(const mo_cli *c, mo_estimate **out, mo_error *err)
{
	return c->resolved ? mo_estimate_resolved_summary(out, c->resolved, err)
			   : mo_estimate_run(out, c->cfg, c->model, err);
}

int mo_cli_expand_run(const mo_cli *c, mo_plan **out, mo_error *err)
{
	return c->resolved ? mo_expand_resolved(out, c->resolved, err)
			   : mo_expand(out, c->cfg, c->model, err);
}

int mo_cli_unpriceable(const mo_cli *c)
{
	if (!c->model && !mo_diags_errors(c->diags))
		return mo_cli_no_model(c);
	if (!mo_diags_errors(c->diags))
		return -1;
	if (c->json)
		mo_cli_print_json(mo_json_diags(c->diags));
	else
		mo_cli_print_diags(c);
	return c->model ? MO_EXIT_INVALID : MO_EXIT_USAGE;
}

/* estimate / expand without a model: a `model-needed` error in both
 * forms, at the model section when the core found one without an
 * architecture (line 0 otherwise). Exit 2, as a usage error. */
int mo_cli_no_model(const mo_cli *c)
{
	int line = 0, column = 0;
	const char *path = "model";
	for (size_t i = 0; i < mo_diags_count(c->diags); i++) {
		const mo_diag *d = mo_diags_get(c->diags, i);
		if (strcmp(d->code, "model-needed") == 0 && d->line > 0) {
			line = d->line;
			column = d->column;
			path = d->path;
		}
	}
	const char *msg = "this needs a model: pass --model (a preset or a model file)";
	if (c->json) {
		json_t *j = mo_json_diags(c->diags);
		json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:s, s:s, s:s}", "code",
				      "model-needed", "message", msg, "line", line, "column",
				      column, "path", path, "file", c->config_path, "severity",
				      "error");
		if (j && e) {
			json_object_set_new(j, "valid", json_false());
			json_array_append(json_object_get(j, "errors"), e);
		}
		json_decref(e);
		mo_cli_print_json(j);
	} else {
		mo_cli_print_diags(c);
		if (line > 0)
			fprintf(stderr, "%s:%d:%d: error[model-needed]: %s\n", c->config_path, line,
				column, msg);
		else
			fprintf(stderr, "%s: error[model-needed]: %s\n", c->config_path, msg);
	}
	return MO_EXIT_USAGE;
}

/* The model alone, with an empty config (recompute: mode: None): what plan
 * and ledger estimate when no CONFIG is given. --model is a preset or a file. */
int mo_cli_load_model_alone(mo_cli *c)
{
	static const char none[] = "recompute:\n  mode: None\n";
	c->config_path = "<none>";
	c->config_text = strdup(none);
	c->config_len = sizeof none - 1;
	if (!c->config_text)
		return MO_EXIT_USAGE;
	mo_input in = {.config = none, .config_len = c->config_len, .config_name = "<none>",
		       .devices = c->devices};
	int rc = mo_cli_model_input(c, &in, 16u << 20);
	return rc != MO_EXIT_OK ? rc : mo_cli_check(c, &in);
}

const char *mo_cli_error_word(const mo_error *err)
{
	switch (err->code) {
	case MO_ERR_NOMEM:
		return "out-of-memory";
	case MO_ERR_LIMIT:
		return "limit";
	case MO_ERR_IO:
		return "io";
	case MO_ERR_USAGE:
		return "usage";
	case MO_ERR_INVALID:
		return "invalid";
	case MO_ERR_BUDGET:
		return "work-limit";
	case MO_ERR_CANCELLED:
		return "cancelled";
	case MO_ERR_MODEL_NEEDED:
		return "model-needed";
	case MO_OK:
	case MO_ERR_INTERNAL:
		break;
	}
	return "internal";
}

int mo_cli_exit_of(const mo_error *err)
{
	switch (err->code) {
	case MO_ERR_INVALID:
	case MO_ERR_MODEL_NEEDED:
		return MO_EXIT_INVALID;
	default:
		return MO_EXIT_USAGE;
	}
}
