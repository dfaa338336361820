/* memopt: validate, expand, export, presets, serve (estimate, plan and
 * launch arrive with their issues). Exit status: 0 valid, 1 the config has
 * errors, 2 usage error or unreadable file. */
#include "cli.h"
#include "json.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mo_cli {
	const char *cmd;
	const char *config_path;
	const char *model_arg;
	const char *out_path;
	int64_t devices;
	bool json, all_paths;
	char *config_text, *model_text;
	size_t config_len, model_len;
	mo_config *cfg;
	mo_model *model;
	mo_diags *diags;
} mo_cli;

static void mo_cli_usage(FILE *f)
{
	fputs("usage: memopt <command> [options] [CONFIG]\n"
	      "\n"
	      "commands:\n"
	      "  validate CONFIG   check every rule; diagnostics as FILE:LINE:COL\n"
	      "  expand CONFIG     per layer, what each path does and which rule says so\n"
	      "  export CONFIG     canonical YAML (a whole training YAML keeps every other byte)\n"
	      "  presets [NAME]    list the built-in models, or print one as a model file\n"
	      "  serve             HTTP API and web UI (memopt serve --help)\n"
	      "  estimate, plan, launch   not built yet (see the issues)\n"
	      "\n"
	      "options:\n"
	      "  -m, --model M     a preset name or a model file (YAML/JSON, HF config.json,\n"
	      "                    training YAML); default: the model in CONFIG itself\n"
	      "  -d, --devices N   device count for files that lack it\n"
	      "  -j, --json        machine-readable output (SPEC 5 shapes)\n"
	      "  -o, --output FILE write the export there instead of stdout\n"
	      "      --paths       expand: list every path's action\n"
	      "  -V, --version     print the version\n"
	      "CONFIG may be - for stdin. Exit: 0 valid, 1 errors in the config, 2 usage.\n",
	      f);
}

/* Reads a whole file (or stdin for "-") with a size cap. */
static char *mo_cli_read(const char *path, size_t *len, size_t max)
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

static bool mo_cli_is_preset(const char *name)
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

static void mo_cli_print_diags(const mo_cli *c)
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
	}
	size_t ne = mo_diags_errors(c->diags), nw = mo_diags_warnings(c->diags);
	if (ne || nw)
		fprintf(stderr, "%s: %zu error%s, %zu warning%s\n", c->config_path, ne,
			ne == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
}

static int mo_cli_print_json(json_t *j)
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

static int mo_cli_load(mo_cli *c)
{
	mo_limits lim;
	mo_limits_default(&lim);
	c->config_text = mo_cli_read(c->config_path, &c->config_len, lim.max_bytes);
	if (!c->config_text)
		return MO_EXIT_USAGE;
	mo_input in = {.config = c->config_text, .config_len = c->config_len,
		       .config_name = c->config_path, .devices = c->devices, .limits = &lim};
	if (c->model_arg && access(c->model_arg, R_OK) == 0 && !mo_cli_is_preset(c->model_arg)) {
		c->model_text = mo_cli_read(c->model_arg, &c->model_len, lim.max_bytes);
		if (!c->model_text)
			return MO_EXIT_USAGE;
		in.model = c->model_text;
		in.model_len = c->model_len;
		in.model_name = c->model_arg;
	} else if (c->model_arg) {
		in.preset = c->model_arg;
	}
	if (mo_diags_new(&c->diags) != 0)
		return MO_EXIT_USAGE;
	mo_error err = {0};
	if (mo_check(&c->cfg, &c->model, c->diags, &in, &err) != 0) {
		fprintf(stderr, "memopt: %s\n", err.text);
		if (err.code == MO_ERR_USAGE && in.preset)
			fputs("memopt: --model takes a preset (memopt presets) or a readable file\n",
			      stderr);
		return MO_EXIT_USAGE;
	}
	return MO_EXIT_OK;
}

static int mo_cli_validate(mo_cli *c)
{
	bool valid = mo_diags_errors(c->diags) == 0;
	if (c->json)
		mo_cli_print_json(mo_json_diags(c->diags));
	else {
		mo_cli_print_diags(c);
		if (valid)
			printf("%s: valid%s\n", c->config_path,
			       c->model ? "" : " (no model: only the structure was checked)");
	}
	return valid ? MO_EXIT_OK : MO_EXIT_INVALID;
}

/* ---- expand: a folded per-layer table ------------------------------------ */

static void mo_cli_actions_text(const mo_plan *p, int64_t layer, char *buf, size_t size)
{
	buf[0] = '\0';
	size_t n = mo_plan_action_count(p, layer);
	for (size_t i = 0; i < n; i++) {
		const mo_action *a = mo_plan_action(p, layer, i);
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s %s [%s.%s, line %d]", i ? "; " : "",
			 mo_action_name(a->action), a->path[0] ? a->path : "(whole layer)",
			 a->rule.section, a->rule.key, a->rule.line);
	}
	if (!n)
		snprintf(buf, size, "keep");
}

static int mo_cli_expand_table(const mo_cli *c, const mo_plan *p)
{
	int64_t n = (int64_t)mo_plan_layer_count(p), nl = mo_model_num_layers(c->model);
	static char cur[8192], next[8192];
	printf("%-10s %-12s %s\n", "layers", "type", "actions");
	for (int64_t lo = 0; lo < n;) {
		size_t t = mo_model_layer_type_of(c->model, lo);
		mo_cli_actions_text(p, lo, cur, sizeof cur);
		int64_t hi = lo;
		while (hi + 1 < n && mo_model_layer_type_of(c->model, hi + 1) == t &&
		       (hi + 1 < nl) == (lo < nl)) {
			mo_cli_actions_text(p, hi + 1, next, sizeof next);
			if (strcmp(cur, next) != 0)
				break;
			hi++;
		}
		char range[48];
		if (lo == hi)
			snprintf(range, sizeof range, "%lld", (long long)lo);
		else
			snprintf(range, sizeof range, "%lld-%lld", (long long)lo, (long long)hi);
		printf("%-10s %-12s %s\n", range, mo_model_layer_type_name(c->model, t), cur);
		lo = hi + 1;
	}
	return MO_EXIT_OK;
}

static int mo_cli_expand(mo_cli *c)
{
	if (mo_diags_errors(c->diags) || !c->model) {
		if (c->json)
			mo_cli_print_json(mo_json_diags(c->diags));
		else
			mo_cli_print_diags(c);
		if (!c->model && !mo_diags_errors(c->diags))
			fputs("memopt: expand needs a model: pass --model\n", stderr);
		return c->model ? MO_EXIT_INVALID : MO_EXIT_USAGE;
	}
	mo_plan *p = NULL;
	mo_error err = {0};
	if (mo_expand(&p, c->cfg, c->model, &err) != 0) {
		fprintf(stderr, "memopt: %s\n", err.text);
		return MO_EXIT_USAGE;
	}
	int rc;
	if (c->json) {
		json_t *j = mo_json_plan(p, c->model, c->all_paths);
		json_t *d = mo_json_diags(c->diags);
		if (j && d)
			json_object_set(j, "warnings", json_object_get(d, "warnings"));
		json_decref(d);
		rc = mo_cli_print_json(j);
	} else {
		mo_cli_print_diags(c);
		rc = mo_cli_expand_table(c, p);
	}
	mo_plan_free(p);
	return rc;
}

static int mo_cli_write(const char *path, const char *text, size_t len)
{
	FILE *f = path ? fopen(path, "wb") : stdout;
	if (!f) {
		fprintf(stderr, "memopt: cannot write %s: %s\n", path, strerror(errno));
		return MO_EXIT_USAGE;
	}
	bool ok = fwrite(text, 1, len, f) == len;
	if (path)
		ok = fclose(f) == 0 && ok;
	if (!ok) {
		fprintf(stderr, "memopt: cannot write %s\n", path ? path : "stdout");
		return MO_EXIT_USAGE;
	}
	return MO_EXIT_OK;
}

static int mo_cli_export(mo_cli *c)
{
	if (mo_diags_errors(c->diags)) {
		if (c->json)
			mo_cli_print_json(mo_json_diags(c->diags));
		else
			mo_cli_print_diags(c);
		return MO_EXIT_INVALID;
	}
	char *yaml = NULL;
	size_t len = 0;
	mo_error err = {0};
	if (mo_export(&yaml, &len, c->cfg, &err) != 0) {
		fprintf(stderr, "memopt: %s\n", err.text);
		return MO_EXIT_USAGE;
	}
	int rc;
	if (c->json) {
		json_t *j = mo_json_diags(c->diags);
		json_object_set_new(j, "yaml", json_stringn(yaml, len));
		rc = mo_cli_print_json(j);
	} else {
		mo_cli_print_diags(c);
		rc = mo_cli_write(c->out_path, yaml, len);
	}
	free(yaml);
	return rc;
}

static int mo_cli_presets(const mo_cli *c, const char *name)
{
	if (!name) {
		if (c->json)
			return mo_cli_print_json(mo_json_presets());
		for (size_t i = 0; i < mo_presets_count(); i++)
			printf("%-16s %s\n", mo_preset_name(i), mo_preset_description(i));
		return MO_EXIT_OK;
	}
	for (size_t i = 0; i < mo_presets_count(); i++)
		if (strcmp(mo_preset_name(i), name) == 0) {
			fputs(mo_preset_yaml(i), stdout);
			return MO_EXIT_OK;
		}
	fprintf(stderr, "memopt: unknown preset '%s' (memopt presets lists them)\n", name);
	return MO_EXIT_USAGE;
}

static void mo_cli_free(mo_cli *c)
{
	mo_config_free(c->cfg);
	mo_model_free(c->model);
	mo_diags_free(c->diags);
	free(c->config_text);
	free(c->model_text);
}

static int mo_cli_parse_args(mo_cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, NULL, 'm'}, {"devices", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},        {"output", required_argument, NULL, 'o'},
		{"paths", no_argument, NULL, 'P'},       {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "m:d:jo:h", opts, NULL)) != -1) {
		char *end;
		switch (ch) {
		case 'm': c->model_arg = optarg; break;
		case 'd':
			errno = 0;
			c->devices = strtoll(optarg, &end, 10);
			if (errno || *end || c->devices < 1 || c->devices > 1000000) {
				fprintf(stderr, "memopt: --devices takes a count from 1 to 1000000\n");
				return MO_EXIT_USAGE;
			}
			break;
		case 'j': c->json = true; break;
		case 'o': c->out_path = optarg; break;
		case 'P': c->all_paths = true; break;
		case 'h': mo_cli_usage(stdout); exit(MO_EXIT_OK);
		default: mo_cli_usage(stderr); return MO_EXIT_USAGE;
		}
	}
	return -1;
}

static int mo_cli_run(mo_cli *c, int argc, char **argv)
{
	int rc = mo_cli_parse_args(c, argc, argv);
	if (rc >= 0)
		return rc;
	if (strcmp(c->cmd, "presets") == 0)
		return mo_cli_presets(c, optind < argc ? argv[optind] : NULL);
	if (optind + 1 != argc) {
		fprintf(stderr, "memopt %s: give exactly one CONFIG (or - for stdin)\n", c->cmd);
		return MO_EXIT_USAGE;
	}
	c->config_path = argv[optind];
	rc = mo_cli_load(c);
	if (rc != MO_EXIT_OK)
		return rc;
	if (strcmp(c->cmd, "validate") == 0)
		return mo_cli_validate(c);
	if (strcmp(c->cmd, "expand") == 0)
		return mo_cli_expand(c);
	return mo_cli_export(c);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		mo_cli_usage(stderr);
		return MO_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
		printf("memopt %s\n", MO_VERSION_STRING);
		return MO_EXIT_OK;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		mo_cli_usage(stdout);
		return MO_EXIT_OK;
	}
	if (!strcmp(cmd, "serve"))
		return mo_cli_serve(argc - 1, argv + 1);
	if (!strcmp(cmd, "estimate") || !strcmp(cmd, "plan") || !strcmp(cmd, "launch")) {
		fprintf(stderr, "memopt %s: not built yet; it arrives with its issue\n", cmd);
		return MO_EXIT_USAGE;
	}
	if (strcmp(cmd, "validate") && strcmp(cmd, "expand") && strcmp(cmd, "export") &&
	    strcmp(cmd, "presets")) {
		fprintf(stderr, "memopt: unknown command '%s'\n", cmd);
		mo_cli_usage(stderr);
		return MO_EXIT_USAGE;
	}
	mo_cli c = {.cmd = cmd};
	int rc = mo_cli_run(&c, argc - 1, argv + 1);
	mo_cli_free(&c);
	return rc;
}
