/* memopt serve: the HTTP API and the web UI. */
#include "memopt/memopt.h"
#include "server.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char mo_serve_usage[] =
	"usage: memopt serve [options]\n"
	"  --host ADDR            address to bind (default 127.0.0.1)\n"
	"  --port N               port (default 8080; 0 picks a free one)\n"
	"  --threads N            worker threads (default: 4 per online CPU, at most 64)\n"
	"  --compute-threads N    threads for long estimates and plans and bodies of\n"
	"                         64 KiB or more, so /healthz and the rest never wait\n"
	"                         behind them (default: 1 per online CPU; 0: on the\n"
	"                         worker threads)\n"
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
	"                         (default 1024)\n"
	"  --max-inflight N       requests handled at once; 503 above, /healthz\n"
	"                         excepted (default 1024)\n"
	"  --timeout SECONDS      idle connection timeout (default 10)\n"
	"  --header-timeout SECONDS\n"
	"                         a request's headers must arrive within this, else\n"
	"                         408 and the connection is closed (default 10)\n"
	"  --deadline SECONDS     a request's body, then its answer, must go through\n"
	"                         within this (default 30)\n"
	"  --grace SECONDS        on SIGTERM, SIGINT or SIGHUP: how long requests in\n"
	"                         flight may finish (default 10)\n"
	"  --work-limit MS        a request's computation stops after this many\n"
	"                         milliseconds with a 422 work-limit (default 10000;\n"
	"                         0: none); it also stops when the client hangs up\n"
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

static int mo_serve_uint(unsigned *out, const char *text, unsigned lo,
			 unsigned hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (!text || *text < '0' || *text > '9')
		return -1;
	v = strtoul(text, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int mo_serve_count(size_t *out, const char *text, unsigned hi)
{
	unsigned v;

	if (mo_serve_uint(&v, text, 0, hi) != 0)
		return -1;
	*out = v;
	return 0;
}

/* A size as mo_parse_size reads it (1048576, 512KiB, 1MiB), 1 KiB..1 GiB. */
static int mo_serve_size(size_t *out, const char *text)
{
	uint64_t v;

	if (!text || mo_parse_size(&v, text) != 0 || v < 1024 || v > ((uint64_t)1 << 30))
		return -1;
	*out = (size_t)v;
	return 0;
}

/* --name VALUE or --name=VALUE: the value, advancing *i; NULL if none. */
static const char *mo_serve_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0' || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int mo_serve_bad(const char *opt)
{
	fprintf(stderr, "memopt serve: bad or missing value for %s\n%s", opt, mo_serve_usage);
	return 2;
}

/* --allowed-host NAME, kept in a fixed table (argv's strings). */
#define MO_SERVE_MAX_HOSTS 64
static const char *mo_serve_hosts[MO_SERVE_MAX_HOSTS];

static int mo_serve_host(mo_srv_config *cfg, const char *name)
{
	if (cfg->allowed_host_count == MO_SERVE_MAX_HOSTS || !name[0] || strlen(name) > 255 ||
	    strpbrk(name, ":/[] \t"))
		return -1;
	mo_serve_hosts[cfg->allowed_host_count++] = name;
	cfg->allowed_hosts = mo_serve_hosts;
	return 0;
}

static int mo_serve_option(mo_srv_config *cfg, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	int bad = 0;

	if ((v = mo_serve_value(argc, argv, i, "--host")))
		cfg->host = v;
	else if ((v = mo_serve_value(argc, argv, i, "--port")))
		bad = mo_serve_uint(&cfg->port, v, 0, 65535);
	else if ((v = mo_serve_value(argc, argv, i, "--threads")))
		bad = mo_serve_uint(&cfg->threads, v, 1, 256);
	else if ((v = mo_serve_value(argc, argv, i, "--compute-threads")))
		bad = mo_serve_uint(&cfg->compute_threads, v, 0, 256);
	else if ((v = mo_serve_value(argc, argv, i, "--max-body")))
		bad = mo_serve_size(&cfg->max_body, v);
	else if ((v = mo_serve_value(argc, argv, i, "--max-answer")))
		bad = mo_serve_size(&cfg->max_answer, v);
	else if ((v = mo_serve_value(argc, argv, i, "--web-root")))
		cfg->web_root = v;
	else if ((v = mo_serve_value(argc, argv, i, "--cors-origin")))
		cfg->cors_origin = v;
	else if ((v = mo_serve_value(argc, argv, i, "--allowed-host")))
		bad = mo_serve_host(cfg, v);
	else if ((v = mo_serve_value(argc, argv, i, "--max-connections")))
		bad = mo_serve_uint(&cfg->max_connections, v, 1, 1000000);
	else if ((v = mo_serve_value(argc, argv, i, "--max-per-client")))
		bad = mo_serve_uint(&cfg->max_per_client, v, 1, 1000000);
	else if ((v = mo_serve_value(argc, argv, i, "--header-timeout")))
		bad = mo_serve_uint(&cfg->header_timeout_s, v, 1, 3600);
	else if ((v = mo_serve_value(argc, argv, i, "--deadline")))
		bad = mo_serve_uint(&cfg->deadline_s, v, 1, 3600);
	else if ((v = mo_serve_value(argc, argv, i, "--grace")))
		bad = mo_serve_uint(&cfg->grace_s, v, 0, 3600);
	else if ((v = mo_serve_value(argc, argv, i, "--work-limit")))
		bad = mo_serve_uint(&cfg->work_ms, v, 0, 3600000);
	else if ((v = mo_serve_value(argc, argv, i, "--max-inflight")))
		bad = mo_serve_uint(&cfg->max_inflight, v, 1, 1000000);
	else if ((v = mo_serve_value(argc, argv, i, "--timeout")))
		bad = mo_serve_uint(&cfg->timeout_s, v, 1, 3600);
	else if ((v = mo_serve_value(argc, argv, i, "--cache-entries")))
		bad = mo_serve_count(&cfg->cache_entries, v, 1000000);
	else if ((v = mo_serve_value(argc, argv, i, "--cache-bytes")))
		bad = mo_serve_size(&cfg->cache_bytes, v);
	else if (strcmp(a, "--quiet") == 0)
		cfg->access_log = 0;
	else
		bad = -1;
	return bad ? mo_serve_bad(a) : 0;
}

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

int mo_cli_serve(int argc, char **argv)
{
	mo_srv_config cfg;

	mo_srv_config_default(&cfg);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(mo_serve_usage, stdout);
			return 0;
		}
		if (mo_serve_option(&cfg, argc, argv, &i) != 0)
			return 2;
	}
	if (!cfg.web_root)
		cfg.web_root = mo_serve_installed_root();
	return mo_srv_run(&cfg);
}
