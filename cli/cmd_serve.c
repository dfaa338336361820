/* memopt serve: the HTTP API and the web UI. */
#include "cli.h"
#include "server.h"

#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char mo_serve_usage[] =
	"usage: memopt serve [options]\n"
	"  --host ADDR            address to bind (default 127.0.0.1)\n"
	"  --port N               port (default 8080; 0 picks a free one)\n"
	"  --threads N            worker threads (default: 4 per online CPU, at most 64)\n"
	"  --compute-threads N    threads for every request that computes (validate,\n"
	"                         expand, layout, estimate, plan, ...), so /healthz\n"
	"                         and the rest never wait behind them (default: 1 per\n"
	"                         online CPU; 0: on the worker threads)\n"
	"  --max-body SIZE        request body limit, e.g. 1MiB (default 1MiB)\n"
	"  --max-answer SIZE      answer limit: a bigger answer is a 422\n"
	"                         answer-too-large (default 16MiB)\n"
	"  --web-root DIR         serve the web UI from DIR (default: the installed\n"
	"                         PREFIX/share/memopt/web next to bin/memopt, else\n"
	"                         the built-in pages)\n"
	"  --cors-origin ORIGIN   allow cross-origin calls from ORIGIN\n"
	"  --allowed-host NAME    a host name the Host header may carry (repeatable;\n"
	"                         '*': any); IP addresses and localhost always\n"
	"                         work, other names get 421 (DNS rebinding)\n"
	"  --max-connections N    concurrent connections (default 4096)\n"
	"  --max-per-client N     concurrent connections from one address\n"
	"                         (default: an eighth of --max-connections)\n"
	"  --max-inflight N       requests handled at once; 503 above, /healthz\n"
	"                         excepted (default 1024)\n"
	"  --max-inflight-per-client N\n"
	"                         requests from one address handled at once; 429\n"
	"                         above (default: an eighth of --max-inflight)\n"
	"  --timeout SECONDS      idle connection timeout (default 10)\n"
	"  --header-timeout SECONDS\n"
	"                         a request's headers must arrive within this, else\n"
	"                         408 and the connection is closed (default 10)\n"
	"  --deadline SECONDS     a request's body, then its answer, must go through\n"
	"                         within this (default 30)\n"
	"  --grace SECONDS        on SIGTERM, SIGINT or SIGHUP: how long requests in\n"
	"                         flight may finish (default 10)\n"
	"  --work-limit MS        a request's computation, on any route, stops after\n"
	"                         this many milliseconds with a 422 work-limit\n"
	"                         (default 10000; 0: none); it also stops when the\n"
	"                         client hangs up\n"
	"  --cache-entries N      response cache: answers kept for identical POST\n"
	"                         requests (same route, Content-Type and body);\n"
	"                         0 disables it (default 1024)\n"
	"  --cache-bytes SIZE     response cache memory bound (default 64MiB)\n"
	"  --quiet                no access log\n"
	"  --help                 this text\n"
	"Prints `listening on http://HOST:PORT` on stderr. SIGTERM, SIGINT or SIGHUP\n"
	"closes the port, lets the requests in flight finish for the grace period,\n"
	"answers 503 to the rest, and exits 0 (1 if a computation had to be\n"
	"abandoned).\n";

void mo_cli_serve_usage(FILE *f)
{
	fputs(mo_serve_usage, f);
}

/* --allowed-host NAME, kept in a fixed table (argv's strings). */
#define MO_SERVE_MAX_HOSTS 64
static const char *mo_serve_hosts[MO_SERVE_MAX_HOSTS];

static int mo_serve_host(mo_cli *c, void *own, const char *name)
{
	mo_srv_config *cfg = own;
	(void)c;
	if (cfg->allowed_host_count == MO_SERVE_MAX_HOSTS || !name[0] || strlen(name) > 255 ||
	    strpbrk(name, ":/[] \t"))
		return -1;
	mo_serve_hosts[cfg->allowed_host_count++] = name;
	cfg->allowed_hosts = mo_serve_hosts;
	return 0;
}

#define MO_SERVE_TEXT(name, field)                                                          \
	{name, 0, MO_ARG_TEXT, true, offsetof(mo_srv_config, field), 0, 0, NULL, NULL}
#define MO_SERVE_UINT(name, field, lo, hi, takes)                                           \
	{name, 0, MO_ARG_UINT, true, offsetof(mo_srv_config, field), lo, hi, takes, NULL}
#define MO_SERVE_BYTES(name, field)                                                         \
	{name, 0, MO_ARG_BYTES_Z, true, offsetof(mo_srv_config, field), 1024, 1073741824.0,   \
	 "a size from 1KiB to 1GiB, such as 1MiB", NULL}

static const mo_cli_option mo_serve_options[] = {
	MO_SERVE_TEXT("host", host),
	MO_SERVE_UINT("port", port, 0, 65535, NULL),
	MO_SERVE_UINT("threads", threads, 1, 256, NULL),
	MO_SERVE_UINT("compute-threads", compute_threads, 0, 256, NULL),
	MO_SERVE_BYTES("max-body", max_body),
	MO_SERVE_BYTES("max-answer", max_answer),
	MO_SERVE_TEXT("web-root", web_root),
	MO_SERVE_TEXT("cors-origin", cors_origin),
	{"allowed-host", 0, MO_ARG_CALL, true, 0, 0, 0,
	 "a host name (at most 64 of them; no ':', '/', '[', ']' or blanks)", mo_serve_host},
	MO_SERVE_UINT("max-connections", max_connections, 1, 1000000, NULL),
	MO_SERVE_UINT("max-per-client", max_per_client, 1, 1000000, NULL),
	MO_SERVE_UINT("header-timeout", header_timeout_s, 1, 3600, "seconds from 1 to 3600"),
	MO_SERVE_UINT("deadline", deadline_s, 1, 3600, "seconds from 1 to 3600"),
	MO_SERVE_UINT("grace", grace_s, 0, 3600, "seconds from 0 to 3600"),
	MO_SERVE_UINT("work-limit", work_ms, 0, 3600000,
		      "milliseconds from 0 (none) to 3600000"),
	MO_SERVE_UINT("max-inflight", max_inflight, 1, 1000000, NULL),
	MO_SERVE_UINT("max-inflight-per-client", max_inflight_per_client, 1, 1000000, NULL),
	MO_SERVE_UINT("timeout", timeout_s, 1, 3600, "seconds from 1 to 3600"),
	{"cache-entries", 0, MO_ARG_COUNT, true, offsetof(mo_srv_config, cache_entries), 0,
	 1000000, NULL, NULL},
	MO_SERVE_BYTES("cache-bytes", cache_bytes),
	{"quiet", 0, MO_ARG_OFF, true, offsetof(mo_srv_config, access_log), 0, 0, NULL, NULL},
	MO_CLI_OPT_HELP,
	MO_CLI_OPT_END};

/* An installed memopt (PREFIX/bin/memopt) serves PREFIX/share/memopt/web,
 * found from the executable's own path so DESTDIR and relocated trees
 * work; NULL (the embedded pages) when there is none. */
static const char *mo_serve_installed_root(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	slash = strrchr(path, '/');
	if (!slash || strcmp(slash, "/bin") != 0)
		return NULL;
	static const char rel[] = "/share/memopt/web";
	if ((size_t)(slash - path) + sizeof rel + sizeof "/index.html" > sizeof path)
		return NULL;
	memcpy(slash, rel, sizeof rel);
	size_t len = strlen(path);
	memcpy(path + len, "/index.html", sizeof "/index.html");
	int ok = access(path, R_OK) == 0;
	path[len] = '\0';
	return ok ? path : NULL;
}

int mo_cli_serve(mo_cli *c, int argc, char **argv)
{
	mo_srv_config cfg;

	mo_srv_config_default(&cfg);
	int rc = mo_cli_parse(c, mo_serve_options, &cfg, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "memopt serve: takes no operand, not '%s'\n%s", argv[optind],
			mo_serve_usage);
		return MO_EXIT_USAGE;
	}
	if (!cfg.web_root)
		cfg.web_root = mo_serve_installed_root();
	return mo_srv_run(&cfg);
}
