/* Prometheus counters: requests by route and status, latency histogram,
 * in-flight gauge. Lock-free: relaxed atomics, owned by the server. */
#include "srv_internal.h"

#include <stdio.h>
#include <stdlib.h>

static const int mo_srv_statuses[MO_SRV_NSTATUS - 1] = {
	200, 204, 304, 400, 404, 405, 408, 413, 414, 415, 421, 422, 429, 431, 499, 500, 501, 503,
};

/* Upper bounds in microseconds; the last bucket is +Inf. */
static const uint64_t mo_srv_bounds_us[MO_SRV_NBUCKETS - 1] = {
	250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 500000, 1000000,
};

static size_t mo_srv_status_index(int status)
{
	for (size_t i = 0; i < MO_SRV_NSTATUS - 1; i++)
		if (mo_srv_statuses[i] == status)
			return i;
	return MO_SRV_NSTATUS - 1;
}

void mo_srv_metrics_observe(mo_srv_metrics *m, mo_api_route_id route,
			    int status, uint64_t usec)
{
	size_t b = 0;

	if ((unsigned)route >= MO_ROUTE_COUNT)
		route = MO_ROUTE_UNKNOWN;
	while (b < MO_SRV_NBUCKETS - 1 && usec > mo_srv_bounds_us[b])
		b++;
	atomic_fetch_add_explicit(&m->requests[route][mo_srv_status_index(status)], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&m->buckets[route][b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->sum_us[route], usec, memory_order_relaxed);
}

static uint64_t mo_srv_load(atomic_uint_fast64_t *v)
{
	return (uint64_t)atomic_load_explicit(v, memory_order_relaxed);
}

static void mo_srv_render_requests(FILE *f, mo_srv_metrics *m)
{
	fputs("# HELP memopt_http_requests_total HTTP requests by route and status.\n"
	      "# TYPE memopt_http_requests_total counter\n", f);
	for (int r = 0; r < MO_ROUTE_COUNT; r++)
		for (size_t s = 0; s < MO_SRV_NSTATUS; s++) {
			uint64_t n = mo_srv_load(&m->requests[r][s]);

			if (!n)
				continue;
			if (s < MO_SRV_NSTATUS - 1)
				fprintf(f, "memopt_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
					mo_api_route_name((mo_api_route_id)r),
					mo_srv_statuses[s], (unsigned long long)n);
			else
				fprintf(f, "memopt_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
					mo_api_route_name((mo_api_route_id)r),
					(unsigned long long)n);
		}
}

static void mo_srv_render_route_histogram(FILE *f, mo_srv_metrics *m, int r)
{
	const char *name = mo_api_route_name((mo_api_route_id)r);
	uint64_t cum = 0;

	for (size_t b = 0; b < MO_SRV_NBUCKETS; b++) {
		cum += mo_srv_load(&m->buckets[r][b]);
		if (b < MO_SRV_NBUCKETS - 1)
			fprintf(f, "memopt_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
				name, (double)mo_srv_bounds_us[b] / 1e6,
				(unsigned long long)cum);
		else
			fprintf(f, "memopt_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
				name, (unsigned long long)cum);
	}
	fprintf(f, "memopt_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n",
		name, (double)mo_srv_load(&m->sum_us[r]) / 1e6);
	fprintf(f, "memopt_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
		name, (unsigned long long)cum);
}

static void mo_srv_render_histogram(FILE *f, mo_srv_metrics *m)
{
	fputs("# HELP memopt_http_request_duration_seconds Time from request headers to the end of the answer.\n"
	      "# TYPE memopt_http_request_duration_seconds histogram\n", f);
	for (int r = 0; r < MO_ROUTE_COUNT; r++) {
		uint64_t any = 0;

		for (size_t b = 0; b < MO_SRV_NBUCKETS; b++)
			any += mo_srv_load(&m->buckets[r][b]);
		if (any)
			mo_srv_render_route_histogram(f, m, r);
	}
}

/* The response cache's counters (api/rcache.c), when it is on. */
static void mo_srv_render_cache(FILE *f, mo_api_rcache *c)
{
	mo_api_rcache_stats s;

	if (!c)
		return;
	mo_api_rcache_counters(c, &s);
	fprintf(f, "# HELP memopt_response_cache_hits_total POST answers replayed from the response cache.\n"
		   "# TYPE memopt_response_cache_hits_total counter\n"
		   "memopt_response_cache_hits_total %llu\n"
		   "# HELP memopt_response_cache_misses_total POST requests computed (not in the cache).\n"
		   "# TYPE memopt_response_cache_misses_total counter\n"
		   "memopt_response_cache_misses_total %llu\n"
		   "# HELP memopt_response_cache_evictions_total Answers dropped, least recently used first.\n"
		   "# TYPE memopt_response_cache_evictions_total counter\n"
		   "memopt_response_cache_evictions_total %llu\n"
		   "# HELP memopt_response_cache_entries Answers held (at most --cache-entries).\n"
		   "# TYPE memopt_response_cache_entries gauge\n"
		   "memopt_response_cache_entries %zu\n"
		   "# HELP memopt_response_cache_bytes Bytes held, keys included (at most --cache-bytes).\n"
		   "# TYPE memopt_response_cache_bytes gauge\n"
		   "memopt_response_cache_bytes %zu\n",
		s.hits, s.misses, s.evictions, s.entries, s.bytes);
}

char *mo_srv_metrics_render(mo_srv_metrics *m, mo_srv_conns *conns, mo_api_rcache *cache,
			    size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	mo_srv_render_requests(f, m);
	mo_srv_render_histogram(f, m);
	fprintf(f, "# HELP memopt_http_requests_in_flight Requests being handled.\n"
		   "# TYPE memopt_http_requests_in_flight gauge\n"
		   "memopt_http_requests_in_flight %lld\n",
		(long long)atomic_load_explicit(&m->in_flight, memory_order_relaxed));
	fprintf(f, "# HELP memopt_http_rejected_total Requests refused with 503 (in-flight cap).\n"
		   "# TYPE memopt_http_rejected_total counter\n"
		   "memopt_http_rejected_total %llu\n",
		(unsigned long long)mo_srv_load(&m->rejected));
	fprintf(f, "# HELP memopt_http_client_rejected_total Requests refused with 429 (one address's share of the in-flight cap).\n"
		   "# TYPE memopt_http_client_rejected_total counter\n"
		   "memopt_http_client_rejected_total %llu\n",
		(unsigned long long)mo_srv_load(&m->client_rejected));
	fprintf(f, "# HELP memopt_log_lines_dropped_total Log lines dropped: stderr took nothing.\n"
		   "# TYPE memopt_log_lines_dropped_total counter\n"
		   "memopt_log_lines_dropped_total %llu\n",
		(unsigned long long)mo_srv_load(&m->log_dropped));
	fprintf(f, "# HELP memopt_http_connections_open Connections open.\n"
		   "# TYPE memopt_http_connections_open gauge\n"
		   "memopt_http_connections_open %u\n"
		   "# HELP memopt_http_deadline_cuts_total Connections closed for missing a deadline.\n"
		   "# TYPE memopt_http_deadline_cuts_total counter\n"
		   "memopt_http_deadline_cuts_total %llu\n",
		atomic_load_explicit(&conns->open, memory_order_relaxed),
		(unsigned long long)atomic_load_explicit(&conns->timed_out, memory_order_relaxed));
	mo_srv_render_cache(f, cache);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
