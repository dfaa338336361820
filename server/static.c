/* Static files of the web UI: decoded path checked segment by segment,
 * opened beneath the web root without following symlinks. */
#include "srv_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MO_SRV_MAX_PATH 512
#define MO_SRV_MAX_DEPTH 16

static const struct {
	const char *ext;
	const char *type;
} mo_srv_types[] = {
	{"html", "text/html; charset=utf-8"},
	{"css", "text/css; charset=utf-8"},
	{"js", "text/javascript; charset=utf-8"},
	{"mjs", "text/javascript; charset=utf-8"},
	{"json", "application/json"},
	{"yaml", "application/yaml"},
	{"txt", "text/plain; charset=utf-8"},
	{"svg", "image/svg+xml"},
	{"png", "image/png"},
	{"ico", "image/x-icon"},
	{"webp", "image/webp"},
	{"woff2", "font/woff2"},
};

static const char *mo_srv_type_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot)
		return NULL;
	for (size_t i = 0; i < sizeof mo_srv_types / sizeof mo_srv_types[0]; i++)
		if (strcasecmp(dot + 1, mo_srv_types[i].ext) == 0)
			return mo_srv_types[i].type;
	return NULL;
}

static bool mo_srv_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
}

/* A relative path of plain names: no empty, dot-leading (., .., hidden)
 * segments, no backslash, NUL, % or other bytes outside [A-Za-z0-9._-]. */
static bool mo_srv_path_ok(const char *rel)
{
	size_t seglen = 0, depth = 1, n = 0;

	for (const char *p = rel; *p; p++, n++) {
		if (*p == '/') {
			if (seglen == 0 || ++depth > MO_SRV_MAX_DEPTH)
				return false;
			seglen = 0;
			continue;
		}
		if (!mo_srv_name_char(*p) || (seglen == 0 && *p == '.'))
			return false;
		seglen++;
	}
	return seglen > 0 && n < MO_SRV_MAX_PATH;
}

/* Opens rel beneath root_fd, refusing symlinks at every step. */
static int mo_srv_open_beneath(int root_fd, const char *rel)
{
	char buf[MO_SRV_MAX_PATH];
	char *seg = buf, *slash;
	int dir = root_fd, fd;

	snprintf(buf, sizeof buf, "%s", rel);
	while ((slash = strchr(seg, '/')) != NULL) {
		*slash = '\0';
		fd = openat(dir, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir != root_fd)
			close(dir);
		if (fd < 0)
			return -1;
		dir = fd;
		seg = slash + 1;
	}
	fd = openat(dir, seg, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (dir != root_fd)
		close(dir);
	return fd;
}

bool mo_srv_etag_match(struct MHD_Connection *c, const char *etag)
{
	const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_IF_NONE_MATCH);
	size_t n = strlen(etag);

	if (!inm)
		return false;
	for (const char *p = inm; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (*p == '*' || (strncmp(p, etag, n) == 0 &&
				  (p[n] == '\0' || p[n] == ',' || p[n] == ' ')))
			return true;
		while (*p && *p != ',')
			p++;
	}
	return false;
}

static enum MHD_Result mo_srv_send(const mo_srv *srv, struct MHD_Connection *c,
				   mo_srv_req *rq, struct MHD_Response *r,
				   const char *type, const char *etag, uint64_t size)
{
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "ETag", etag);
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	rq->bytes = size;
	return mo_srv_queue(srv, c, rq, type ? 200 : 304, r);
}

static enum MHD_Result mo_srv_not_modified(const mo_srv *srv,
					   struct MHD_Connection *c,
					   mo_srv_req *rq, const char *etag)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);

	return mo_srv_send(srv, c, rq, r, NULL, etag, 0);
}

/* The web root was removed and made again (a deploy that replaces the
 * folder): the descriptor still names the removed one, where nothing is
 * found. When --web-root now names another directory, it takes the old
 * one's descriptor number (dup3 swaps it at once for every thread; a
 * lookup in flight sees one or the other). True when it did. */
static bool mo_srv_reopen_root(const mo_srv *srv)
{
	struct stat was, now;
	int fd;

	if (fstat(srv->web_fd, &was) != 0 || stat(srv->cfg.web_root, &now) != 0 ||
	    !S_ISDIR(now.st_mode) || (was.st_dev == now.st_dev && was.st_ino == now.st_ino))
		return false;
	fd = open(srv->cfg.web_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (dup3(fd, srv->web_fd, O_CLOEXEC) < 0) {
		close(fd);
		return false;
	}
	close(fd);
	return true;
}

static enum MHD_Result mo_srv_from_disk(const mo_srv *srv,
					struct MHD_Connection *c,
					mo_srv_req *rq, const char *rel,
					const char *type)
{
	struct stat st;
	struct MHD_Response *r;
	char etag[64];
	int fd = mo_srv_open_beneath(srv->web_fd, rel);

	if (fd < 0 && errno == ENOENT && mo_srv_reopen_root(srv))
		fd = mo_srv_open_beneath(srv->web_fd, rel);

	if (fd < 0)
		return mo_srv_problem(srv, c, rq, 404, "not-found", "no such file");
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return mo_srv_problem(srv, c, rq, 404, "not-found", "no such file");
	}
	snprintf(etag, sizeof etag, "\"%" PRIx64 "-%" PRIx64 "-%lx\"",
		 (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
		 (unsigned long)st.st_mtim.tv_nsec);
	if (mo_srv_etag_match(c, etag)) {
		close(fd);
		return mo_srv_not_modified(srv, c, rq, etag);
	}
	r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	/* the response owns fd from here on */
	return mo_srv_send(srv, c, rq, r, type, etag, (uint64_t)st.st_size);
}

static enum MHD_Result mo_srv_from_memory(const mo_srv *srv,
					  struct MHD_Connection *c,
					  mo_srv_req *rq, const char *rel,
					  const char *type)
{
	char name[MO_SRV_MAX_PATH + 8], etag[40];
	size_t size = 0;
	const unsigned char *data;

	snprintf(name, sizeof name, "web/%s", rel);
	data = mo_api_embedded(name, &size);
	if (!data)
		return mo_srv_problem(srv, c, rq, 404, "not-found", "no such file");
	snprintf(etag, sizeof etag, "\"%016" PRIx64 "\"", mo_srv_hash(data, size));
	if (mo_srv_etag_match(c, etag))
		return mo_srv_not_modified(srv, c, rq, etag);
	return mo_srv_send(srv, c, rq,
			   MHD_create_response_from_buffer(size, (void *)data,
							   MHD_RESPMEM_PERSISTENT),
			   type, etag, size);
}

enum MHD_Result mo_srv_static(const mo_srv *srv, struct MHD_Connection *c,
			      mo_srv_req *rq)
{
	const char *rel = strcmp(rq->url, "/") == 0 ? "index.html" : rq->url + 1;
	const char *type;

	if (rq->url[0] != '/' || !mo_srv_path_ok(rel))
		return mo_srv_problem(srv, c, rq, 404, "not-found", "no such file");
	type = mo_srv_type_of(rel);
	if (!type)
		return mo_srv_problem(srv, c, rq, 404, "not-found",
				      "no such file (or a type that is not served)");
	if (srv->web_fd >= 0)
		return mo_srv_from_disk(srv, c, rq, rel, type);
	return mo_srv_from_memory(srv, c, rq, rel, type);
}
