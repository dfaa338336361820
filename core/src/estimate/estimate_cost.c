/* Cost of the plan from the device constants (struct mo_device):
 *  - recompute: its extra forward FLOPs at the sustained rate `tflops`;
 *  - recompute_comm (and collectives inside recomputed regions): a second
 *    collective of the same bytes at `collective_bandwidth_gbs`;
 *  - swap: device-to-host in forward and host-to-device in backward at
 *    `host_bandwidth_gbs`; the offload hides behind the forward of the next
 *    `default_prefetch` layers, the prefetch behind their backward (2x the
 *    forward FLOPs); the rest is exposed.
 * These are the plan's amounts at the device's sustained rates (the
 * report's cost lines); the step time, its breakdown and the stages'
 * seconds come from the per-op time model (estimate_time.c), which runs
 * after this. */
#include "estimate/estimate_internal.h"

#include <string.h>

typedef struct mo_rate {
	double flops, coll, host; /* per second */
} mo_rate;

static double cost_time(double amount, double rate)
{
	return rate > 0 ? amount / rate : 0.0;
}

static double cost_min(double a, double b)
{
	return a < b ? a : b;
}

/* Per micro-batch extra seconds of one layer; adds to the totals. */
static double cost_layer(mo_estimate *e, const mo_rate *r, mo_estimate_layer *l)
{
	mo_estimate_cost *c = &e->cost;
	double m = (double)e->cfg.mbn, pf = (double)e->cfg.prefetch;
	double fwd = cost_time(l->forward_flops, r->flops);
	double rc = cost_time(l->recompute_flops, r->flops);
	double comm = cost_time((double)l->comm_recompute_bytes, r->coll);
	double xfer = cost_time((double)l->swap_bytes, r->host);
	double hidden = cost_min(xfer, pf * fwd) + cost_min(xfer, pf * 2.0 * fwd);
	c->recompute_flops += m * l->recompute_flops;
	c->recompute_seconds += m * rc;
	c->comm_recompute_bytes += m * (double)l->comm_recompute_bytes;
	c->comm_recompute_seconds += m * comm;
	c->swap_bytes += m * 2.0 * (double)l->swap_bytes;
	c->swap_seconds += m * 2.0 * xfer;
	c->swap_hidden_seconds += m * hidden;
	return rc + comm + (2.0 * xfer - hidden);
}

void est_cost(mo_estimate *e)
{
	const mo_device *d = &e->cfg.dev;
	mo_rate r = {d->tflops * 1e12, d->collective_bandwidth_gbs * 1e9,
		     d->host_bandwidth_gbs * 1e9};
	memset(&e->cost, 0, sizeof e->cost);
	for (size_t i = 0; i < e->n_layers; i++)
		(void)cost_layer(e, &r, &e->layers[i]);
}
