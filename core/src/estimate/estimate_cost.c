/* Cost of the plan from the device constants (struct mo_device):
 *  - recompute: its extra forward FLOPs at the sustained rate `tflops`;
 *  - recompute_comm (and collectives inside recomputed regions): a second
 *    collective of the same bytes at `collective_bandwidth_gbs`;
 *  - swap: device-to-host in forward and host-to-device in backward at
 *    `host_bandwidth_gbs`; the offload hides behind the forward of the next
 *    `default_prefetch` layers, the prefetch behind their backward (2x the
 *    forward FLOPs); the rest is exposed.
 * Step time: per stage, micro-batches x (forward + backward = 3 x forward
 * FLOPs) of its layers (+ the output layer on the last stage), the slowest
 * stage times (m + p - 1) / m for the pipeline bubble. */
#include "estimate/estimate.h"

#include <string.h>

typedef struct mo_rate {
	double flops, coll, host; /* per second */
} mo_rate;

static double mo_cost_time(double amount, double rate)
{
	return rate > 0 ? amount / rate : 0.0;
}

static double mo_cost_min(double a, double b)
{
	return a < b ? a : b;
}

/* Per micro-batch extra seconds of one layer; adds to the totals. */
static double mo_cost_layer(mo_estimate *e, const mo_rate *r, mo_estimate_layer *l)
{
	mo_estimate_cost *c = &e->cost;
	double m = (double)e->cfg.mbn, pf = (double)e->cfg.prefetch;
	double fwd = mo_cost_time(l->forward_flops, r->flops);
	double rc = mo_cost_time(l->recompute_flops, r->flops);
	double comm = mo_cost_time((double)l->comm_recompute_bytes, r->coll);
	double xfer = mo_cost_time((double)l->swap_bytes, r->host);
	double hidden = mo_cost_min(xfer, pf * fwd) + mo_cost_min(xfer, pf * 2.0 * fwd);
	c->recompute_flops += m * l->recompute_flops;
	c->recompute_seconds += m * rc;
	c->comm_recompute_bytes += m * (double)l->comm_recompute_bytes;
	c->comm_recompute_seconds += m * comm;
	c->swap_bytes += m * 2.0 * (double)l->swap_bytes;
	c->swap_seconds += m * 2.0 * xfer;
	c->swap_hidden_seconds += m * hidden;
	return rc + comm + (2.0 * xfer - hidden);
}

void mo_est_cost(mo_estimate *e)
{
	const mo_device *d = &e->cfg.dev;
	mo_rate r = {d->tflops * 1e12, d->collective_bandwidth_gbs * 1e9,
		     d->host_bandwidth_gbs * 1e9};
	double m = (double)e->cfg.mbn, p = (double)e->cfg.pp;
	double bubble = (m + p - 1.0) / m, base = 0, opt = 0;
	memset(&e->cost, 0, sizeof e->cost);
	for (size_t s = 0; s < e->n_stages; s++) {
		e->stages[s].compute_seconds = 0;
		e->stages[s].overhead_seconds = 0;
	}
	for (size_t i = 0; i < e->n_layers; i++) {
		mo_estimate_layer *l = &e->layers[i];
		mo_estimate_stage *st = &e->stages[l->stage];
		st->compute_seconds += m * 3.0 * mo_cost_time(l->forward_flops, r.flops);
		st->overhead_seconds += m * mo_cost_layer(e, &r, l);
	}
	mo_estimate_stage *last = &e->stages[e->n_stages - 1];
	last->compute_seconds +=
		m * 3.0 * (double)(1 + e->cfg.mtp) * mo_cost_time(e->head.flops, r.flops);
	for (size_t s = 0; s < e->n_stages; s++) {
		const mo_estimate_stage *st = &e->stages[s];
		if (st->compute_seconds > base)
			base = st->compute_seconds;
		if (st->compute_seconds + st->overhead_seconds > opt)
			opt = st->compute_seconds + st->overhead_seconds;
	}
	e->cost.step_seconds_baseline = base * bubble;
	e->cost.step_seconds = opt * bubble;
	e->cost.overhead_percent = base > 0 ? (opt - base) / base * 100.0 : 0.0;
}
