/* calibrate: the time model's named device constants fitted to measured
 * step times (mo_calibrate). RUNS lists one run a line:
 *   MODEL CONFIG SECONDS   a model file, its config (- for none) and the
 *                          measured step time in seconds;
 *   MODEL CONFIG LOG       the same with a training log (Megatron-LM or
 *                          MindSpore Transformers): its step time as
 *                          mo_steplog_read reads it, the median of the
 *                          per-iteration times after the warm-up.
 * Paths are relative to RUNS' folder; '#' starts a comment. Prints each
 * constant before and after, each run's error before and after, and writes
 * the fitted `device:` map (-o FILE, else stdout). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MO_CAL_LINE_MAX 4096

typedef struct mo_cal_opts {
	unsigned which;
} mo_cal_opts;

typedef struct mo_cal_set {
	mo_calibrate_run runs[MO_CALIB_MAX_RUNS];
	mo_model *models[MO_CALIB_MAX_RUNS];
	mo_config *configs[MO_CALIB_MAX_RUNS];
	char *names[MO_CALIB_MAX_RUNS];
	size_t n;
	mo_diags *diags;
} mo_cal_set;

void mo_cli_calibrate_usage(FILE *f)
{
	fputs("usage: memopt calibrate RUNS [--constants LIST] [-o FILE] [--json]\n"
	      "  RUNS  one measured run a line: MODEL CONFIG SECONDS, or MODEL CONFIG LOG\n"
	      "        (a Megatron-LM or MindSpore Transformers training log: the median\n"
	      "        per-iteration time after the first two); CONFIG - for none; paths\n"
	      "        relative to RUNS;\n"
	      "        '#' starts a comment. Every run on the same device.\n"
	      "  --constants  which constants move: gemm_efficiency, attention_efficiency,\n"
	      "        launch_us, intra_node_gbs, inter_node_gbs (comma separated; all)\n"
	      "  -o FILE  write the fitted device: map there (default: stdout)\n"
	      "Exit: 0 fitted, 1 a run's files have errors, 2 usage or unreadable file.\n",
	      f);
}

static int mo_cal_constants(mo_cli *c, void *own, const char *arg)
{
	(void)c;
	return mo_calibrate_constant_parse(&((mo_cal_opts *)own)->which, arg);
}

static const mo_cli_option mo_cal_options[] = {
	MO_CLI_OPT_JSON,
	MO_CLI_OPT_OUTPUT,
	{"constants", 0, MO_ARG_CALL, true, 0, 0, 0,
	 "a list of gemm_efficiency, attention_efficiency, launch_us, intra_node_gbs, "
	 "inter_node_gbs (or all)",
	 mo_cal_constants},
	MO_CLI_OPT_HELP,
	MO_CLI_OPT_END};

static char *mo_cal_path(const char *dir, const char *rel)
{
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s", rel[0] == '/' ? "" : dir, rel);
	return p;
}

/* The step time of a training log (mo_steplog_read): the median of its
 * per-iteration times after the warm-up; -1 with the reason printed. */
static double mo_cal_log_seconds(const char *tok, const char *text, size_t len)
{
	mo_steplog *log = NULL;
	mo_error err = {0};
	if (mo_steplog_read(&log, text, len, NULL, &err) != 0) {
		if (err.line > 0)
			fprintf(stderr, "memopt calibrate: %s:%d:%d: %s\n", tok, err.line,
				err.column, err.text);
		else
			fprintf(stderr, "memopt calibrate: %s: %s\n", tok, err.text);
		return -1;
	}
	double s = mo_steplog_get_summary(log)->median_seconds;
	mo_steplog_free(log);
	return s;
}

/* The measured seconds: a number, or a training log's step time. */
static double mo_cal_seconds(const char *dir, const char *tok)
{
	char *end;
	errno = 0;
	double s = strtod(tok, &end);
	if (*end == '\0' && errno == 0)
		return s;
	char *path = mo_cal_path(dir, tok);
	size_t len;
	char *text = path ? mo_cli_read(path, &len, MO_STEPLOG_MAX_BYTES) : NULL;
	free(path);
	if (!text)
		return -1;
	s = mo_cal_log_seconds(tok, text, len);
	free(text);
	return s;
}

static int mo_cal_load_config(mo_cal_set *s, const char *dir, const char *tok)
{
	if (strcmp(tok, "-") == 0)
		return 0;
	char *path = mo_cal_path(dir, tok);
	size_t len;
	char *text = path ? mo_cli_read(path, &len, 16u << 20) : NULL;
	mo_error err = {0};
	int rc = text ? mo_config_parse(&s->configs[s->n], s->diags, text, len, path, NULL, &err)
		      : -1;
	if (text && rc != 0)
		fprintf(stderr, "memopt calibrate: %s: %s\n", tok, err.text);
	free(text);
	free(path);
	return rc != 0 ? -1 : 0;
}

static int mo_cal_load_model(mo_cal_set *s, const char *dir, const char *tok)
{
	char *path = mo_cal_path(dir, tok);
	size_t len;
	char *text = path ? mo_cli_read(path, &len, 16u << 20) : NULL;
	mo_error err = {0};
	int rc = text ? mo_model_load(&s->models[s->n], s->diags, text, len, path, NULL, &err) : -1;
	if (text && rc != 0)
		fprintf(stderr, "memopt calibrate: %s: %s\n", tok,
			rc == 1 ? "holds no model" : err.text);
	if (rc == 0)
		s->names[s->n] = strdup(tok);
	free(text);
	free(path);
	return rc != 0 ? -1 : 0;
}

/* One line of RUNS; 0 also for a blank or comment line. */
static int mo_cal_line(mo_cal_set *s, const char *dir, char *line, size_t no)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	char *tok[4], *save = NULL;
	size_t n = 0;
	for (char *t = strtok_r(line, " \t\r", &save); t && n < 4; t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	if (n == 0)
		return 0;
	if (n != 3) {
		fprintf(stderr, "memopt calibrate: line %zu: expected MODEL CONFIG SECONDS|LOG\n", no);
		return -1;
	}
	if (s->n == MO_CALIB_MAX_RUNS) {
		fprintf(stderr, "memopt calibrate: more than %d runs\n", MO_CALIB_MAX_RUNS);
		return -1;
	}
	double sec = mo_cal_seconds(dir, tok[2]);
	if (!(sec > 0 && sec < 1e7)) {
		fprintf(stderr, "memopt calibrate: line %zu: the step time must be in (0, 1e7) s\n",
			no);
		return -1;
	}
	if (mo_cal_load_model(s, dir, tok[0]) != 0)
		return -1;
	if (mo_cal_load_config(s, dir, tok[1]) != 0) {
		s->n++; /* freed with the others */
		return -1;
	}
	s->runs[s->n] = (mo_calibrate_run){s->models[s->n], s->configs[s->n], sec};
	s->n++;
	return 0;
}

static int mo_cal_read(mo_cal_set *s, const char *runs_path)
{
	size_t len;
	char *text = mo_cli_read(runs_path, &len, 1u << 20);
	if (!text)
		return -1;
	const char *slash = strrchr(runs_path, '/');
	size_t dl = slash ? (size_t)(slash - runs_path) + 1 : 0;
	char dir[1024];
	snprintf(dir, sizeof dir, "%.*s", (int)(dl < sizeof dir ? dl : 0), runs_path);
	int rc = 0;
	size_t no = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line && rc == 0;
	     line = strtok_r(NULL, "\n", &save))
		rc = strlen(line) < MO_CAL_LINE_MAX ? mo_cal_line(s, dir, line, ++no) : -1;
	free(text);
	return rc;
}

static void mo_cal_free(mo_cal_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		mo_model_free(s->models[i]);
		mo_config_free(s->configs[i]);
		free(s->names[i]);
	}
	mo_diags_free(s->diags);
}

static json_t *mo_cal_json(const mo_cal_set *s, const mo_calibrate_result *r, const char *yaml)
{
	json_t *o = json_object(), *k = json_array(), *runs = json_array();
	for (int i = 0; i < MO_CALIB_N; i++)
		json_array_append_new(k, json_pack("{s:s, s:f, s:f}", "name", r->names[i], "before",
						   r->before[i], "after", r->after[i]));
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(runs, json_pack("{s:s, s:f, s:f, s:f}", "run", s->names[i],
						      "measured_seconds",
						      s->runs[i].measured_seconds,
						      "estimated_before", r->est_before[i],
						      "estimated_after", r->est_after[i]));
	json_object_set_new(o, "preset", json_string(r->preset));
	json_object_set_new(o, "constants", k);
	json_object_set_new(o, "runs", runs);
	json_object_set_new(o, "median_error_before", json_real(r->median_error_before));
	json_object_set_new(o, "median_error_after", json_real(r->median_error_after));
	json_object_set_new(o, "device_yaml", json_string(yaml));
	return o;
}

static void mo_cal_print(const mo_cal_set *s, const mo_calibrate_result *r)
{
	fprintf(stderr, "%-22s %12s %12s %8s\n", "constant", "before", "after", "moved");
	for (int i = 0; i < MO_CALIB_N; i++)
		fprintf(stderr, "%-22s %12.6g %12.6g %+7.1f%%\n", r->names[i], r->before[i],
			r->after[i],
			r->before[i] > 0 ? (r->after[i] - r->before[i]) / r->before[i] * 100 : 0.0);
	fprintf(stderr, "\n%-50s %10s %10s %8s %10s %8s\n", "run", "measured", "before", "error",
		"after", "error");
	for (size_t i = 0; i < r->n; i++) {
		double m = s->runs[i].measured_seconds;
		fprintf(stderr, "%-50.50s %10.4f %10.4f %+7.1f%% %10.4f %+7.1f%%\n", s->names[i], m,
			r->est_before[i], (r->est_before[i] - m) / m * 100, r->est_after[i],
			(r->est_after[i] - m) / m * 100);
	}
	fprintf(stderr, "median |error| %.1f%% -> %.1f%%\n", r->median_error_before * 100,
		r->median_error_after * 100);
}

static int mo_cal_answer(mo_cli *c, const mo_cal_set *s, const mo_calibrate_result *r)
{
	char *yaml = mo_calibrate_device_yaml(r);
	int rc;
	if (!yaml) {
		fputs("memopt: out of memory\n", stderr);
		return MO_EXIT_USAGE;
	}
	if (c->json) {
		rc = mo_cli_print_json(mo_cal_json(s, r, yaml));
	} else {
		mo_cal_print(s, r);
		rc = mo_cli_write(c->out_path, yaml, strlen(yaml));
	}
	free(yaml);
	return rc;
}

int mo_cli_calibrate(mo_cli *c, int argc, char **argv)
{
	mo_cal_opts o = {0};
	int rc = mo_cli_parse(c, mo_cal_options, &o, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1) {
		mo_cli_calibrate_usage(stderr);
		return MO_EXIT_USAGE;
	}
	mo_cal_set *s = calloc(1, sizeof *s);
	if (!s || mo_diags_new(&s->diags) != 0) {
		free(s);
		fputs("memopt: out of memory\n", stderr);
		return MO_EXIT_USAGE;
	}
	rc = MO_EXIT_USAGE;
	if (mo_cal_read(s, argv[optind]) == 0) {
		mo_calibrate_result r;
		mo_error err = {0};
		if (mo_diags_errors(s->diags) > 0) {
			c->diags = s->diags;
			mo_cli_print_diags(c);
			c->diags = NULL;
			rc = MO_EXIT_INVALID;
		} else if (mo_calibrate(&r, s->runs, s->n, o.which, &err) != 0) {
			fprintf(stderr, "memopt calibrate: %s\n", err.text);
		} else {
			rc = mo_cal_answer(c, s, &r);
			mo_calibrate_result_free(&r);
		}
	}
	mo_cal_free(s);
	free(s);
	return rc;
}
