/* The Host-header check against DNS rebinding: a page on evil.example whose
 * name is rebound to this server's address sends `Host: evil.example`, so a
 * request naming a host the server does not know is refused (421) before
 * any route sees it. IP literals and localhost names cannot be rebound and
 * are always accepted; other names only when --allowed-host lists them
 * ("*": any). This holds on loopback too, where rebinding attacks aim. */
#include "srv_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#define MO_SRV_HOST_MAX 255 /* a DNS name's length */

/* Copies the name of a Host value (without its port or brackets) into
 * name. 0, or -1 when it has no valid shape. */
static int mo_srv_host_name(char name[MO_SRV_HOST_MAX + 1], const char *value)
{
	const char *end;
	size_t n;

	if (value[0] == '[') { /* [IPv6]:port */
		end = strchr(value, ']');
		if (!end || (end[1] != '\0' && end[1] != ':'))
			return -1;
		value++;
	} else {
		end = strchr(value, ':');
		if (!end)
			end = value + strlen(value);
		else if (strchr(end + 1, ':'))
			return -1; /* an IPv6 literal must be bracketed */
	}
	n = (size_t)(end - value);
	if (n == 0 || n > MO_SRV_HOST_MAX)
		return -1;
	memcpy(name, value, n);
	name[n] = '\0';
	if (n > 1 && name[n - 1] == '.')
		name[n - 1] = '\0'; /* the absolute form of a name */
	return 0;
}

static int mo_srv_host_literal(const char *name)
{
	struct in6_addr a6;
	struct in_addr a4;

	return inet_pton(AF_INET, name, &a4) == 1 ||
	       inet_pton(AF_INET6, name, &a6) == 1;
}

static int mo_srv_host_local(const char *name)
{
	size_t n = strlen(name);

	return strcasecmp(name, "localhost") == 0 ||
	       (n > 10 && strcasecmp(name + n - 10, ".localhost") == 0);
}

int mo_srv_host_allowed(const mo_srv_config *cfg, const char *value)
{
	char name[MO_SRV_HOST_MAX + 1];

	if (!value) /* HTTP/1.0 without Host (MHD refuses it in HTTP/1.1) */
		return 1;
	if (mo_srv_host_name(name, value) != 0)
		return 0;
	if (mo_srv_host_literal(name) || mo_srv_host_local(name))
		return 1;
	for (size_t i = 0; i < cfg->allowed_host_count; i++)
		if (strcmp(cfg->allowed_hosts[i], "*") == 0 ||
		    strcasecmp(cfg->allowed_hosts[i], name) == 0)
			return 1;
	return 0;
}
