/* The compute pool: estimates and plans (seconds of work at worst, up to
 * --work-limit) run on threads of their own, not on libmicrohttpd's
 * workers. Each worker serves the connections it was handed; while it
 * computed, every other connection of its share waited, /healthz
 * included, and a burst of long requests as large as the worker pool
 * stopped the server answering anything. Now a request that is still
 * computing after a short slice on the worker (handler.c, mo_srv_offload;
 * most take a few ms and never leave it) is started over here: the worker
 * suspends the connection (MHD_suspend_connection), a pool thread
 * computes, stores the answer in the request and resumes it; MHD calls the
 * access handler again, which queues the answer. */
#include "srv_internal.h"

#include <stdlib.h>

static void *mo_srv_pool_loop(void *arg)
{
	mo_srv *srv = arg;
	mo_srv_pool *p = &srv->pool;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->wake, &p->lock);
		if (!p->head)
			break; /* stopping, nothing left */
		mo_srv_req *rq = p->head;
		p->head = rq->next_job;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		mo_srv_compute_job(srv, rq);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int mo_srv_pool_start(mo_srv *srv, unsigned n)
{
	mo_srv_pool *p = &srv->pool;

	if (n == 0)
		return 0; /* computations stay on MHD's workers */
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&p->wake, NULL) != 0)
		goto destroy_lock;
	p->threads = calloc(n, sizeof *p->threads);
	if (!p->threads)
		goto destroy_cond;
	p->inited = true;
	for (; p->n < n; p->n++)
		if (pthread_create(&p->threads[p->n], NULL, mo_srv_pool_loop, srv) != 0)
			break;
	if (p->n > 0)
		return 0;
	free(p->threads);
	p->threads = NULL;
	p->inited = false;
destroy_cond:
	pthread_cond_destroy(&p->wake);
destroy_lock:
	pthread_mutex_destroy(&p->lock);
	return -1;
}

void mo_srv_pool_push(mo_srv_pool *p, mo_srv_req *rq)
{
	rq->next_job = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->tail)
		p->tail->next_job = rq;
	else
		p->head = rq;
	p->tail = rq;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

void mo_srv_pool_stop(mo_srv_pool *p)
{
	if (!p->inited)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	p->inited = false;
}
