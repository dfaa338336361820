/* Requests in flight per client address, so that one address can never
 * take more than a fraction of the server. The global in-flight cap alone
 * let 1,024 slow uploads from one address fill every slot: other clients'
 * requests were refused 503 on 134 of 141 tries over 70 s. A client over
 * its share is answered 429 (its own requests wait, not everyone's); the
 * compute pool also reads how many of a client's jobs are running, to take
 * the next job from the client with the fewest (work.c).
 *
 * A small chained hash table under one mutex: an entry lives while the
 * client has a request in flight (its count is the reference). */
#include "srv_internal.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

struct mo_srv_client {
	struct mo_srv_client *next;
	unsigned char addr[16];
	unsigned char len;
	unsigned in_flight; /* requests from headers to completion */
	unsigned running;   /* of those, jobs a pool thread is computing */
};

int mo_srv_clients_init(mo_srv_clients *t, unsigned max_in_flight)
{
	memset(t, 0, sizeof *t);
	t->max_in_flight = max_in_flight;
	return pthread_mutex_init(&t->lock, NULL) == 0 ? 0 : -1;
}

void mo_srv_clients_destroy(mo_srv_clients *t)
{
	for (size_t i = 0; i < MO_SRV_CLIENT_BUCKETS; i++) {
		while (t->buckets[i]) {
			mo_srv_client *next = t->buckets[i]->next;

			free(t->buckets[i]);
			t->buckets[i] = next;
		}
	}
	pthread_mutex_destroy(&t->lock);
}

/* The address bytes of sa (IPv4 or IPv6); 0 for another family. */
static unsigned char mo_srv_addr_bytes(const struct sockaddr *sa, const unsigned char **bytes)
{
	if (sa && sa->sa_family == AF_INET) {
		*bytes = (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		return 4;
	}
	if (sa && sa->sa_family == AF_INET6) {
		*bytes = (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		return 16;
	}
	return 0;
}

static size_t mo_srv_addr_bucket(const unsigned char *b, unsigned char len)
{
	return (size_t)(mo_srv_hash(b, len) % MO_SRV_CLIENT_BUCKETS);
}

mo_srv_client *mo_srv_client_enter(mo_srv_clients *t, const struct sockaddr *sa, bool *over)
{
	const unsigned char *b = NULL;
	unsigned char len = mo_srv_addr_bytes(sa, &b);
	mo_srv_client *e;
	size_t k;

	*over = false;
	if (!len)
		return NULL;
	k = mo_srv_addr_bucket(b, len);
	pthread_mutex_lock(&t->lock);
	for (e = t->buckets[k]; e; e = e->next)
		if (e->len == len && memcmp(e->addr, b, len) == 0)
			break;
	if (!e && (e = calloc(1, sizeof *e)) != NULL) {
		memcpy(e->addr, b, len);
		e->len = len;
		e->next = t->buckets[k];
		t->buckets[k] = e;
	}
	if (e) {
		e->in_flight++;
		*over = t->max_in_flight && e->in_flight > t->max_in_flight;
	}
	pthread_mutex_unlock(&t->lock);
	return e;
}

void mo_srv_client_leave(mo_srv_clients *t, mo_srv_client *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&t->lock);
	if (--e->in_flight == 0) {
		mo_srv_client **p = &t->buckets[mo_srv_addr_bucket(e->addr, e->len)];

		while (*p != e)
			p = &(*p)->next;
		*p = e->next;
		free(e);
	}
	pthread_mutex_unlock(&t->lock);
}

unsigned mo_srv_client_running(mo_srv_clients *t, const mo_srv_client *e)
{
	unsigned n;

	if (!e)
		return 0;
	pthread_mutex_lock(&t->lock);
	n = e->running;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void mo_srv_client_run(mo_srv_clients *t, mo_srv_client *e, int delta)
{
	if (!e)
		return;
	pthread_mutex_lock(&t->lock);
	e->running = delta > 0 ? e->running + 1 : e->running - 1;
	pthread_mutex_unlock(&t->lock);
}
