/* memopt launch CONFIG [--model M] [--devices N] [--max-memory SIZE] -- CMD ARGS...
 *
 * Validates CONFIG (diagnostics, exit 1 on errors), prints the estimate,
 * refuses (exit 1) on a peak above --max-memory, otherwise writes the
 * expanded plan as JSON and the validated YAML into a private directory
 * (mkdtemp, 0700) and execs CMD with MEMOPT_PLAN and MEMOPT_CONFIG naming
 * them. The directory outlives memopt: it belongs to CMD from then on.
 * Everything memopt itself says goes to stderr, so CMD owns stdout.
 * Exit: 1 refused, 2 usage, unreadable input or CMD could not be run. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char mo_launch_usage[] =
	"usage: memopt launch CONFIG [options] -- CMD [ARGS...]\n"
	"  -m, --model M          a preset name or a model file (default: the model\n"
	"                         in CONFIG itself)\n"
	"  -d, --devices N        device count for files that lack it\n"
	"      --max-memory SIZE  refuse when the estimated peak is above SIZE\n"
	"                         (e.g. 58GiB, 64GB, bytes)\n"
	"      --work-limit MS    stop the estimate after MS milliseconds and refuse\n"
	"                         (exit 2; default 10000, 0: no limit)\n"
	"  -h, --help             this text\n"
	"Validates CONFIG, prints the estimate (the allocated peak of the busiest stage), then runs CMD with MEMOPT_PLAN (the\n"
	"expanded plan, JSON) and MEMOPT_CONFIG (the validated YAML) in its\n"
	"environment. Exit: 1 refused (errors, or a peak above --max-memory),\n"
	"2 usage, unreadable input or CMD not runnable; else CMD's own status.\n";

typedef struct mo_launch {
	const char *max_memory_arg;
	uint64_t max_memory;
	char dir[4096];
	char plan_path[4096 + 16];
	char config_path[4096 + 16];
} mo_launch;

void mo_cli_launch_usage(FILE *f)
{
	fputs(mo_launch_usage, f);
}

static int mo_launch_max_memory(mo_cli *c, void *own, const char *arg)
{
	mo_launch *l = own;
	(void)c;
	l->max_memory_arg = arg;
	return mo_parse_size(&l->max_memory, arg) != 0 || l->max_memory == 0 ? -1 : 0;
}

static const mo_cli_option mo_launch_options[] = {
	MO_CLI_OPT_MODEL,
	MO_CLI_OPT_DEVICES,
	{"max-memory", 0, MO_ARG_CALL, true, 0, 0, 0, "a size such as 58GiB, 64GB, 1024 bytes",
	 mo_launch_max_memory},
	MO_CLI_OPT_WORK_LIMIT,
	MO_CLI_OPT_HELP,
	MO_CLI_OPT_END};

static int mo_launch_args(mo_cli *c, mo_launch *l, int argc, char **argv)
{
	int rc = mo_cli_parse(c, mo_launch_options, l, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind + 1 != argc) {
		fputs("memopt launch: give exactly one CONFIG (or - for stdin) before `--`\n",
		      stderr);
		fputs(mo_launch_usage, stderr);
		return MO_EXIT_USAGE;
	}
	c->config_path = argv[optind];
	return -1;
}

/* Creates path (O_EXCL, 0600) holding text. Returns 0 or -1 with a message. */
static int mo_launch_write(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "memopt launch: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "memopt launch: cannot write %s: %s\n", path,
				strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (close(fd) != 0) {
		fprintf(stderr, "memopt launch: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void mo_launch_cleanup(const mo_launch *l)
{
	if (l->plan_path[0])
		unlink(l->plan_path);
	if (l->config_path[0])
		unlink(l->config_path);
	if (l->dir[0])
		rmdir(l->dir);
}

/* The plan document: {"memopt", "config", "model", "prefetch", "devices"?,
 * "layers" (as memopt expand --json), "warnings", "estimate"? (as memopt
 * estimate --json, without the timelines)}. */
static json_t *mo_launch_plan_json(const mo_cli *c, const mo_plan *p, const mo_estimate *e)
{
	json_t *j = mo_json_plan(p, c->model, 0);
	json_t *d = mo_json_diags(c->diags);
	if (!j || !d) {
		json_decref(j);
		json_decref(d);
		return NULL;
	}
	json_t *head = json_pack("{s:s, s:s, s:s, s:I}", "memopt", MO_VERSION_STRING, "config",
				 c->config_path, "model",
				 c->model_arg ? c->model_arg : c->config_path, "prefetch",
				 (json_int_t)mo_plan_prefetch(p));
	if (head && c->devices > 0)
		json_object_set_new(head, "devices", json_integer((json_int_t)c->devices));
	if (!head) {
		json_decref(j);
		json_decref(d);
		return NULL;
	}
	json_object_update(head, j);
	json_object_set(head, "warnings", json_object_get(d, "warnings"));
	if (e)
		json_object_set_new(head, "estimate", mo_json_estimate(e, 0));
	json_decref(j);
	json_decref(d);
	return head;
}

/* Writes plan.json and config.yaml in a fresh private directory. */
static int mo_launch_files(mo_launch *l, const mo_cli *c, const mo_plan *p,
			   const mo_estimate *e)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(l->dir, sizeof l->dir, "%s/memopt-launch-XXXXXX", tmp) >=
	    sizeof l->dir) {
		l->dir[0] = '\0';
		fputs("memopt launch: TMPDIR is too long\n", stderr);
		return -1;
	}
	if (!mkdtemp(l->dir)) { /* mkdtemp makes it 0700 */
		fprintf(stderr, "memopt launch: cannot create a directory in %s: %s\n", tmp,
			strerror(errno));
		l->dir[0] = '\0';
		return -1;
	}
	snprintf(l->plan_path, sizeof l->plan_path, "%s/plan.json", l->dir);
	snprintf(l->config_path, sizeof l->config_path, "%s/config.yaml", l->dir);

	json_t *j = mo_launch_plan_json(c, p, e);
	char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	if (!text) {
		fputs("memopt launch: out of memory\n", stderr);
		l->plan_path[0] = l->config_path[0] = '\0';
		return -1;
	}
	int rc = mo_launch_write(l->plan_path, text, strlen(text));
	free(text);
	if (rc != 0) {
		l->config_path[0] = '\0';
		return -1;
	}

	char *yaml = NULL;
	size_t ylen = 0;
	mo_error err = {0};
	if (mo_export(&yaml, &ylen, c->cfg, &err) != 0) {
		fprintf(stderr, "memopt launch: %s\n", err.text);
		l->config_path[0] = '\0';
		return -1;
	}
	rc = mo_launch_write(l->config_path, yaml, ylen);
	free(yaml);
	return rc;
}

static void mo_launch_size(char *buf, size_t size, uint64_t bytes)
{
	if (bytes >= ((uint64_t)1 << 30))
		snprintf(buf, size, "%.2f GiB", (double)bytes / (double)((uint64_t)1 << 30));
	else if (bytes >= ((uint64_t)1 << 20))
		snprintf(buf, size, "%.2f MiB", (double)bytes / (double)((uint64_t)1 << 20));
	else
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
}

/* The busiest stage (the one whose allocated peak is the estimate's). */
static const mo_estimate_stage *mo_launch_busiest(const mo_estimate *e)
{
	const mo_estimate_stage *best = NULL;
	for (size_t i = 0; i < mo_estimate_stage_count(e); i++) {
		const mo_estimate_stage *s = mo_estimate_stage_get(e, i);
		if (s && (!best || s->peak_bytes > best->peak_bytes))
			best = s;
	}
	return best;
}

/* Runs the estimate, prints its summary and applies --max-memory. Returns
 * -1 to go on (*out may stay NULL when no estimate could be made and no
 * limit asked for one), else an exit status. */
static int mo_launch_estimate(mo_estimate **out, const mo_cli *c, const mo_launch *l,
			      const char *cmd)
{
	mo_error err = {0};
	mo_cli_budget_begin(c);
	int failed = mo_cli_estimate_run(c, out, &err) != 0;
	mo_budget_end();
	if (failed) {
		if (l->max_memory_arg) {
			fprintf(stderr,
				"memopt launch: refusing to run %s: --max-memory needs an estimate, "
				"and there is none: %s\n",
				cmd, err.text);
			return mo_cli_exit_of(&err);
		}
		if (mo_cli_exit_of(&err) != MO_EXIT_INVALID) {
			fprintf(stderr, "memopt launch: estimate: %s\n", err.text);
			return MO_EXIT_USAGE;
		}
		fprintf(stderr, "memopt launch: %s: valid; no estimate: %s\n", c->config_path,
			err.text);
		return -1;
	}
	const mo_estimate *e = *out;
	const mo_estimate_stage *s = mo_launch_busiest(e);
	uint64_t peak = mo_estimate_peak_bytes(e);
	char p[32], r[32], cap[32], lim[32];
	mo_launch_size(p, sizeof p, peak);
	mo_launch_size(r, sizeof r, mo_estimate_reserved_peak_bytes(e));
	mo_launch_size(cap, sizeof cap, mo_estimate_capacity_bytes(e));
	fprintf(stderr,
		"memopt launch: %s: valid; estimated peak %s per device (stage %lld, %s), "
		"reserved %s, capacity %s, overhead %.1f%%\n",
		c->config_path, p, s ? (long long)s->stage : 0LL,
		s && s->peak_event ? s->peak_event : "?", r, cap,
		mo_estimate_overhead_percent(e));
	if (l->max_memory_arg && peak > l->max_memory) {
		mo_launch_size(lim, sizeof lim, l->max_memory);
		fprintf(stderr,
			"memopt launch: refusing to run %s: the estimated peak %s (%llu bytes) is "
			"above --max-memory %s (%llu bytes)\n",
			cmd, p, (unsigned long long)peak, l->max_memory_arg,
			(unsigned long long)l->max_memory);
		return MO_EXIT_INVALID;
	}
	return -1;
}

int mo_cli_launch(mo_cli *c, int argc, char **argv)
{
	/* split at the first "--": options and CONFIG before, CMD after */
	int dash = -1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dash = i;
			break;
		}
	for (int i = 1; i < (dash < 0 ? argc : dash); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(mo_launch_usage, stdout);
			return MO_EXIT_OK;
		}
	if (dash < 0 || dash + 1 >= argc) {
		fputs(dash < 0 ? "memopt launch: missing `--` before the command to run\n"
			       : "memopt launch: no command after `--`\n",
		      stderr);
		fputs(mo_launch_usage, stderr);
		return MO_EXIT_USAGE;
	}

	mo_launch l = {0};
	int rc = mo_launch_args(c, &l, dash, argv);
	if (rc >= 0)
		return rc;
	rc = mo_cli_load(c);
	if (rc != MO_EXIT_OK)
		return rc;
	mo_cli_print_diags(c);
	if (mo_diags_errors(c->diags)) {
		fprintf(stderr, "memopt launch: refusing to run %s: %s has errors\n", argv[dash + 1],
			c->config_path);
		rc = MO_EXIT_INVALID;
		return rc;
	}
	if (!c->model) {
		fputs("memopt launch: needs a model: pass --model (a preset or a model file)\n",
		      stderr);
		rc = MO_EXIT_USAGE;
		return rc;
	}
	mo_plan *p = NULL;
	mo_error err = {0};
	if (mo_cli_expand_run(c, &p, &err) != 0) {
		fprintf(stderr, "memopt launch: %s\n", err.text);
		rc = MO_EXIT_USAGE;
		return rc;
	}
	mo_estimate *est = NULL;
	rc = mo_launch_estimate(&est, c, &l, argv[dash + 1]);
	if (rc >= 0) {
		mo_estimate_free(est);
		mo_plan_free(p);
		return rc;
	}
	rc = mo_launch_files(&l, c, p, est);
	mo_estimate_free(est);
	if (rc != 0) {
		mo_plan_free(p);
		mo_launch_cleanup(&l);
		rc = MO_EXIT_USAGE;
		return rc;
	}
	mo_plan_free(p);
	if (setenv("MEMOPT_PLAN", l.plan_path, 1) != 0 ||
	    setenv("MEMOPT_CONFIG", l.config_path, 1) != 0) {
		fputs("memopt launch: cannot set the environment\n", stderr);
		mo_launch_cleanup(&l);
		rc = MO_EXIT_USAGE;
		return rc;
	}
	fprintf(stderr, "memopt launch: MEMOPT_PLAN=%s MEMOPT_CONFIG=%s; running %s\n",
		l.plan_path, l.config_path, argv[dash + 1]);
	mo_cli_free(c); /* CMD replaces this process: nothing of memopt's stays */
	fflush(stdout);
	fflush(stderr);
	execvp(argv[dash + 1], argv + dash + 1);
	int e = errno;
	fprintf(stderr, "memopt launch: cannot run %s: %s\n", argv[dash + 1], strerror(e));
	mo_launch_cleanup(&l);
	return MO_EXIT_USAGE;
}
