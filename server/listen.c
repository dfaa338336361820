/* The listening socket and its accept thread. Accepted connections go to
 * MHD with MHD_add_connection, which hands each one to the pool's worker
 * whose index is the socket number modulo the pool size: every worker gets
 * its share. (MHD's own accept let whichever worker woke first take up to
 * ten connections a turn: the bench's 64 connections, opened at once, often
 * all landed on one of the two workers, which then served them on one
 * core while the other idled.) The connection limit is counted here, in
 * the server's own table (conn.c), not by MHD: Debian 12's MHD 0.9.75
 * deadlocks a worker that an added connection finds at its share of MHD's
 * limit. At the limit the thread stops accepting, so new connections wait
 * in the backlog; on shutdown it stops. A connection whose client has
 * already hung up without sending a whole request head is closed here:
 * MHD would not notice the hang-up (conn.c) and would hold a slot for it
 * until the idle timeout. */
#include "srv_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#define MO_SRV_BACKLOG 1024
/* How often a listener at the connection (or file) limit looks again. */
#define MO_SRV_RETRY_MS 10

static void mo_srv_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int mo_srv_bind(int fd, const struct sockaddr *sa, socklen_t len, int v6)
{
	int on = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0)
		return -1;
	if (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0)
		return -1;
	if (bind(fd, sa, len) != 0 || listen(fd, MO_SRV_BACKLOG) != 0)
		return -1;
	return 0;
}

int mo_srv_listen_open(mo_srv_listener *l, const struct sockaddr *sa,
		       socklen_t len, int v6)
{
	memset(l, 0, sizeof *l);
	l->wake[0] = l->wake[1] = -1;
	l->fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0 || mo_srv_bind(l->fd, sa, len, v6) != 0 ||
	    pipe2(l->wake, O_CLOEXEC) != 0) {
		mo_srv_listen_close(l);
		return -1;
	}
	return 0;
}

unsigned mo_srv_listen_port(const mo_srv_listener *l)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (getsockname(l->fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)(void *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)(void *)&ss)->sin_port);
}

/* The client hung up before sending a whole request head (a blank line). */
static bool mo_srv_gone_early(int fd)
{
	struct pollfd pf = {fd, POLLRDHUP, 0};
	char head[8192];
	ssize_t n;

	if (poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return false;
	n = recv(fd, head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
	if (n <= 0)
		return true;
	return !memmem(head, (size_t)n, "\r\n\r\n", 4) && !memmem(head, (size_t)n, "\n\n", 2) &&
	       (size_t)n < sizeof head;
}

static bool mo_srv_at_limit(const mo_srv_listener *l)
{
	return atomic_load(&l->conns->open) >= l->max_connections;
}

/* Accepts what is waiting, up to the connection limit. -1 when out of
 * file descriptors (or memory): the caller waits before trying again. */
static int mo_srv_accept_some(mo_srv_listener *l)
{
	while (!mo_srv_at_limit(l)) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof ss;
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &len,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				return -1;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			continue; /* ECONNABORTED, EINTR, ...: the next one */
		}
		if (mo_srv_gone_early(fd)) {
			close(fd);
			continue;
		}
		/* counted before MHD can report it closed; on failure MHD
		 * closes the socket (and logs why), without a report */
		atomic_fetch_add(&l->conns->open, 1);
		if (MHD_add_connection(l->daemon, fd, (struct sockaddr *)&ss, len) != MHD_YES)
			atomic_fetch_sub(&l->conns->open, 1);
	}
	return -1;
}

static void *mo_srv_accept_loop(void *arg)
{
	mo_srv_listener *l = arg;
	int wait = 0;

	for (;;) {
		struct pollfd pf[2] = {{l->fd, wait ? 0 : POLLIN, 0},
				       {l->wake[0], POLLIN, 0}};

		if (poll(pf, 2, wait ? MO_SRV_RETRY_MS : -1) < 0 && errno != EINTR)
			wait = 1;
		if (pf[1].revents)
			return NULL;
		wait = mo_srv_accept_some(l) != 0;
	}
}

int mo_srv_listen_start(mo_srv_listener *l, struct MHD_Daemon *d,
			mo_srv_conns *conns, unsigned max_connections)
{
	l->daemon = d;
	l->conns = conns;
	l->max_connections = max_connections;
	if (pthread_create(&l->thread, NULL, mo_srv_accept_loop, l) != 0)
		return -1;
	l->started = true;
	return 0;
}

void mo_srv_listen_stop(mo_srv_listener *l)
{
	if (!l->started)
		return;
	while (write(l->wake[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(l->thread, NULL);
	l->started = false;
}

void mo_srv_listen_close(mo_srv_listener *l)
{
	mo_srv_listen_stop(l);
	mo_srv_close_fd(&l->fd);
	mo_srv_close_fd(&l->wake[0]);
	mo_srv_close_fd(&l->wake[1]);
}
