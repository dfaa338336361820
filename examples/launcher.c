/* An example launcher built against the installed libmemopt (pkg-config
 * memopt): reads a whole training YAML, validates it with mo_check, prints
 * the expanded plan (one line per run of identical layers) and the memory
 * estimate per pipeline stage.
 *
 *   launcher CONFIG [--model PRESET] [--devices N]
 *
 * Exit: 0 valid (the plan is printed), 1 the config has errors, 2 usage or
 * a hard error. Only <memopt/memopt.h> is used: every handle is opaque and
 * freed with its matching _free; diagnostics and actions are borrowed from
 * the list / plan that owns them. */
#include <memopt/memopt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "launcher: cannot read %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *p = cap < ((size_t)64 << 20) ? realloc(buf, cap * 2) : NULL;
		if (!p)
			free(buf);
		buf = p;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		fprintf(stderr, "launcher: cannot read %s\n", path);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static void print_diags(const mo_diags *d)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i); /* borrowed from d */
		fprintf(stderr, "%s:%d:%d: %s[%s]: %s\n", g->file, g->line, g->column,
			g->severity == MO_SEV_ERROR ? "error" : "warning", g->code, g->message);
		if (g->hint)
			fprintf(stderr, "    help: %s\n", g->hint);
	}
}

/* "recompute (whole layer); swap mlp" for one layer. */
static void layer_text(const mo_plan *p, int64_t layer, char *buf, size_t size)
{
	size_t n = mo_plan_action_count(p, layer), used = 0;
	buf[0] = '\0';
	if (n == 0)
		snprintf(buf, size, "keep");
	for (size_t i = 0; i < n && used < size; i++) {
		const mo_action *a = mo_plan_action(p, layer, i); /* borrowed from p */
		int w = snprintf(buf + used, size - used, "%s%s %s [%s.%s]", i ? "; " : "",
				 mo_action_name(a->action), a->path[0] ? a->path : "(whole layer)",
				 a->rule.section, a->rule.key);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static void print_plan(const mo_plan *p, const mo_model *m)
{
	static char cur[4096], next[4096];
	int64_t n = (int64_t)mo_plan_layer_count(p);
	printf("plan: %lld layers (%lld decoder + %lld MTP), prefetch %lld\n", (long long)n,
	       (long long)mo_model_num_layers(m), (long long)mo_model_mtp_layers(m),
	       (long long)mo_plan_prefetch(p));
	for (int64_t lo = 0; lo < n;) {
		size_t type = mo_model_layer_type_of(m, lo);
		layer_text(p, lo, cur, sizeof cur);
		int64_t hi = lo;
		while (hi + 1 < n && mo_model_layer_type_of(m, hi + 1) == type) {
			layer_text(p, hi + 1, next, sizeof next);
			if (strcmp(cur, next) != 0)
				break;
			hi++;
		}
		printf("  layers %lld-%lld (%s): %s\n", (long long)lo, (long long)hi,
		       mo_model_layer_type_name(m, type), cur);
		lo = hi + 1;
	}
}

int main(int argc, char **argv)
{
	const char *path = NULL, *preset = NULL;
	long long devices = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--model") && i + 1 < argc)
			preset = argv[++i];
		else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
			devices = atoll(argv[++i]);
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			path = NULL, argc = 0;
	}
	if (!path) {
		fputs("usage: launcher CONFIG [--model PRESET] [--devices N]\n", stderr);
		return 2;
	}
	printf("libmemopt %s\n", MO_VERSION_STRING);

	size_t len = 0;
	char *text = read_file(path, &len);
	if (!text)
		return 2;

	mo_diags *diags = NULL;
	mo_config *cfg = NULL;
	mo_model *model = NULL;
	mo_resolved *resolved = NULL; /* what validation worked out, for expand and estimate */
	mo_plan *plan = NULL;
	mo_error err = {0}; /* caller-owned: filled on hard errors only */
	int rc = 2;
	if (mo_diags_new(&diags) != 0)
		goto out;
	mo_input in = {.config = text, .config_len = len, .config_name = path,
		       .preset = preset, .devices = devices};
	if (mo_check_resolved(&cfg, &model, &resolved, diags, &in, &err) != 0) {
		fprintf(stderr, "launcher: %s\n", err.text);
		goto out;
	}
	mo_diags_sort(diags);
	print_diags(diags);
	printf("%s: %s, %zu error(s), %zu warning(s)\n", path,
	       mo_config_is_training_yaml(cfg) ? "training YAML" : "sections only",
	       mo_diags_errors(diags), mo_diags_warnings(diags));
	if (mo_diags_errors(diags)) {
		printf("invalid: not launching\n");
		rc = 1;
		goto out;
	}
	if (!model) {
		fputs("launcher: no model: pass --model\n", stderr);
		goto out;
	}
	if (mo_expand_resolved(&plan, resolved, &err) != 0) {
		fprintf(stderr, "launcher: %s\n", err.text);
		goto out;
	}
	print_plan(plan, model);

	mo_estimate *est = NULL;
	if (mo_estimate_resolved(&est, resolved, &err) != 0) {
		printf("estimate: none (%s)\n", err.text);
	} else {
		const double gib = 1024.0 * 1024.0 * 1024.0;
		printf("estimate: peak %.2f GiB per device (reserved %.2f GiB, capacity %.2f GiB), "
		       "overhead %.1f%%\n",
		       (double)mo_estimate_peak_bytes(est) / gib,
		       (double)mo_estimate_reserved_peak_bytes(est) / gib,
		       (double)mo_estimate_capacity_bytes(est) / gib,
		       mo_estimate_overhead_percent(est));
		for (size_t i = 0; i < mo_estimate_stage_count(est); i++) {
			const mo_estimate_stage *st = mo_estimate_stage_get(est, i); /* borrowed */
			printf("  stage %lld: peak %.2f GiB at %s\n", (long long)st->stage,
			       (double)st->peak_bytes / gib, st->peak_event);
		}
		mo_estimate_free(est);
	}
	printf("valid: ready to launch\n");
	rc = 0;
out:
	/* the plan and the resolution borrow cfg and model: free them first */
	mo_plan_free(plan);
	mo_resolved_free(resolved);
	mo_config_free(cfg);
	mo_model_free(model);
	mo_diags_free(diags);
	free(text);
	return rc;
}
