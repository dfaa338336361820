/* The compute pool: every request that computes (validate, expand,
 * layout, export, migrate, import, ledger, estimate, plan) runs on threads
 * of its own, not on libmicrohttpd's workers. Each worker serves the
 * connections it was handed; while it computed, every other connection of
 * its share waited, /healthz included: eight 380-byte ledger requests
 * held /healthz for 9.97 s, a 63 KB validate of backtracking patterns
 * 13.5 s. The worker answers from the response cache when it can, else
 * suspends the connection (MHD_suspend_connection); a pool thread
 * computes, stores the answer in the request and resumes it; MHD calls the
 * access handler again, which queues the answer. Estimates and plans,
 * which poll their work budget, first get a short slice on the worker
 * (handler.c, mo_srv_offload): most take a few ms and never pay the
 * handoff. The queue is bounded and shared fairly between clients
 * (mo_srv_pool_take). */
#include "srv_internal.h"

#include <stdlib.h>

/* Jobs waiting per pool thread, at most: past that a request is answered
 * 503 at once rather than queued to wait out its work limit. */
#define MO_SRV_POOL_QUEUE 64u

/* A thread takes the job of the client with the fewest jobs running, the
 * oldest of those: a client with a hundred jobs queued does not make
 * another's single job wait behind them. Called with the lock held and a
 * job queued; marks the job's client as running one more. */
static mo_srv_req *mo_srv_pool_take(mo_srv *srv, mo_srv_pool *p)
{
	mo_srv_req *best = NULL, *best_prev = NULL, *prev = NULL;
	unsigned fewest = ~0u;

	for (mo_srv_req *rq = p->head; rq; prev = rq, rq = rq->next_job) {
		unsigned running = mo_srv_client_running(&srv->clients, rq->client);

		if (running < fewest) {
			best = rq;
			best_prev = prev;
			fewest = running;
			if (running == 0)
				break;
		}
	}
	if (best_prev)
		best_prev->next_job = best->next_job;
	else
		p->head = best->next_job;
	if (p->tail == best)
		p->tail = best_prev;
	p->queued--;
	mo_srv_client_run(&srv->clients, best->client, +1);
	return best;
}

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
		mo_srv_req *rq = mo_srv_pool_take(srv, p);
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

bool mo_srv_pool_push(mo_srv_pool *p, mo_srv_req *rq, struct MHD_Connection *c)
{
	rq->next_job = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->queued >= p->n * MO_SRV_POOL_QUEUE) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	/* suspended before a thread can take it: its resume must come after */
	MHD_suspend_connection(c);
	if (p->tail)
		p->tail->next_job = rq;
	else
		p->head = rq;
	p->tail = rq;
	p->queued++;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return true;
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
