/* --explain, per stage: the peak event and every tensor alive at it, with
 * its shape, dtype, size and the op keeping it, so that a figure can be
 * checked against a framework's memory profile. What is alive comes from a
 * replay of the stage's schedule up to the peak event (est_peak_alive);
 * the activation tensors are those the plan keeps (per layer type and plan
 * segment); the listed bytes add up to the stage's peak. */
#include "estimate/estimate_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* "[4096, 2048]" from the op table's "tok*h". */
static void peak_shape(const mo_estimate *e, const mo_est_tensor *t, char *buf, size_t n)
{
	size_t o = (size_t)snprintf(buf, n, "[");
	const char *p = t->dims, *end = t->dims ? t->dims + t->dims_len : NULL;
	while (p && p < end && o < n) {
		size_t k = 0;
		while (p + k < end && p[k] != '*')
			k++;
		char tok[64];
		snprintf(tok, sizeof tok, "%.*s", (int)k, p);
		o += (size_t)snprintf(buf + o, n - o, "%s%.0f", p == t->dims ? "" : ", ",
				      est_expr(tok, &e->dims));
		p += k + (p + k < end);
	}
	if (o < n)
		snprintf(buf + o, n - o, "]");
}

/* Lists the storages of g whose marks have `bit` (kept or swapped) or, with
 * bit 0, those that exist again in the backward (saved, neither kept nor
 * swapped). Returns their bytes. */
static uint64_t peak_list(mo_buf *b, const mo_estimate *e, const mo_est_graph *g,
			   const unsigned char *marks, unsigned bit)
{
	uint64_t sum = 0;
	for (size_t t = 0; t < g->n_t; t++) {
		unsigned m = marks[t];
		if (g->t[t].storage != (int)t ||
		    (bit ? !(m & bit) : !(m & MO_K_BASE) || (m & (MO_K_KEPT | MO_K_SWAP))))
			continue;
		char shape[96];
		peak_shape(e, &g->t[t], shape, sizeof shape);
		const char *op = est_saver(g, (int)t);
		buf_printf(b, "        %-8s %-9s %-22s %12.3f MiB  %s\n", g->t[t].name,
			      g->t[t].dtype, shape, (double)g->t[t].bytes / MIB,
			      op ? op : "(a kept input of a recomputed region)");
		sum += g->t[t].bytes;
	}
	return sum;
}

/* Folds the set ids (sorted) into "4-7, 9". */
static void peak_ranges(mo_buf *b, const int64_t *ids, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		buf_printf(b, "%s%lld", i ? ", " : "", (long long)ids[i]);
		if (j > i)
			buf_printf(b, "-%lld", (long long)ids[j]);
		i = j + 1;
	}
}

typedef struct mo_peak_state {
	const mo_estimate *e;
	size_t s;
	mo_est_alive alive;
	size_t *count;   /* per res: (micro-batch, layer) pairs alive */
	int64_t *ids;    /* scratch: layer ids of one res */
} mo_peak_state;

static size_t peak_layers_of(const mo_peak_state *p, size_t res, int64_t *ids)
{
	const mo_estimate *e = p->e;
	size_t V = (size_t)e->cfg.vpp, n = 0;
	for (size_t c = 0; c < V; c++) {
		const mo_est_chunk *ch = &e->chunks[p->s * V + c];
		for (size_t i = 0; i < ch->n; i++)
			if (e->layer_res[ch->ids[i]] == res)
				ids[n++] = ch->ids[i];
	}
	return n;
}

/* Counts, per plan result, the layers alive over all micro-batches. */
static void peak_count(mo_peak_state *p)
{
	const mo_estimate *e = p->e;
	size_t V = (size_t)e->cfg.vpp;
	for (int64_t mb = 0; mb < p->alive.mbn; mb++)
		for (size_t c = 0; c < V; c++) {
			const mo_est_chunk *ch = &e->chunks[p->s * V + c];
			int64_t k = p->alive.layers[(size_t)mb * V + c];
			for (int64_t i = 0; i < k && (size_t)i < ch->n; i++)
				p->count[e->layer_res[ch->ids[i]]]++;
		}
}

static void peak_mbs(mo_buf *b, const mo_peak_state *p)
{
	size_t V = (size_t)p->e->cfg.vpp;
	for (int64_t mb = 0; mb < p->alive.mbn; mb++) {
		int64_t k = 0;
		for (size_t c = 0; c < V; c++)
			k += p->alive.layers[(size_t)mb * V + c];
		unsigned ends = p->alive.ends[mb];
		if (k || ends)
			buf_printf(b, "      micro-batch %lld: %lld layers%s%s\n", (long long)mb,
				      (long long)k, ends & 1 ? ", embedding" : "",
				      ends & 2 ? ", loss region" : "");
	}
}

static uint64_t peak_ends(mo_buf *b, const mo_peak_state *p, const mo_est_graph *g,
			   const char *label, unsigned bit, uint64_t per)
{
	uint64_t n = 0;
	for (int64_t mb = 0; mb < p->alive.mbn; mb++)
		n += (p->alive.ends[mb] & bit) != 0;
	if (!n)
		return 0;
	mo_est_keep k;
	unsigned char *marks = calloc(g->n_t + 1, 1);
	if (!marks || est_keep_eval_marks(&k, g, NULL, NULL, false, false, false, marks) != 0) {
		free(marks);
		b->failed = true;
		return 0;
	}
	buf_printf(b, "      %llu x %s:\n", (unsigned long long)(n * per), label);
	uint64_t one = peak_list(b, p->e, g, marks, MO_K_KEPT);
	free(marks);
	return one * n * per;
}

static uint64_t peak_activations(mo_buf *b, mo_peak_state *p)
{
	const mo_estimate *e = p->e;
	uint64_t sum = 0;
	peak_mbs(b, p);
	for (size_t r = 0; r < e->n_res; r++) {
		if (!p->count[r])
			continue;
		const mo_est_res *res = &e->res[r];
		size_t n = peak_layers_of(p, r, p->ids);
		buf_printf(b, "      %zu x %s (layers ", p->count[r], e->types[res->type].name);
		peak_ranges(b, p->ids, n);
		buf_printf(b, "; %.3f MiB kept per layer and micro-batch):\n",
			      (double)res->k.kept / MIB);
		sum += peak_list(b, e, &e->types[res->type].g, res->marks, MO_K_KEPT) *
		       p->count[r];
	}
	if (p->alive.recv > 0) {
		uint64_t r = u64_mul((uint64_t)p->alive.recv, e->cfg.pp_grad_recv);
		buf_printf(b, "      %lld x the buffer a sent output's gradient is received into "
				 "(%.3f MiB each), %.3f MiB\n",
			      (long long)p->alive.recv, (double)e->cfg.pp_grad_recv / MIB,
			      (double)r / MIB);
		sum += r;
	}
	sum += peak_ends(b, p, &e->embed, "embedding", 1, 1);
	sum += peak_ends(b, p, &e->head, "loss region", 2, (uint64_t)(1 + e->cfg.mtp));
	return sum;
}

/* The layer an event's recomputed / swapped tensors belong to. */
static uint64_t peak_event_layer(mo_buf *b, const mo_peak_state *p, const mo_estimate_event *ev)
{
	const mo_estimate *e = p->e;
	if (ev->layer < 0 || (size_t)ev->layer >= e->n_layers)
		return 0;
	const mo_est_res *r = &e->res[e->layer_res[ev->layer]];
	const mo_est_graph *g = &e->types[r->type].g;
	uint64_t sum = 0;
	if (ev->bytes[MO_EST_RECOMPUTED]) {
		buf_printf(b, "    recomputed %.3f MiB: layer %lld's tensors exist again in "
				 "its backward:\n",
			      (double)ev->bytes[MO_EST_RECOMPUTED] / MIB, (long long)ev->layer);
		sum += peak_list(b, e, g, r->marks, 0);
	}
	if (ev->bytes[MO_EST_SWAP_BUFFERS]) {
		buf_printf(b, "    swap buffers %.3f MiB: the host copies of the layers in the "
				 "prefetch window (prefetch %lld); layer %lld's:\n",
			      (double)ev->bytes[MO_EST_SWAP_BUFFERS] / MIB,
			      (long long)e->cfg.prefetch, (long long)ev->layer);
		peak_list(b, e, g, r->marks, MO_K_SWAP);
		sum += ev->bytes[MO_EST_SWAP_BUFFERS];
	}
	return sum;
}

static uint64_t peak_static(mo_buf *b, const mo_estimate_event *ev,
			     const mo_estimate_stage *st)
{
	static const int buckets[] = {MO_EST_WEIGHTS, MO_EST_GRADIENTS, MO_EST_OPTIMIZER,
				      MO_EST_GATHERED, MO_EST_LOSS, MO_EST_WORKSPACES};
	uint64_t sum = 0;
	buf_puts(b, "    ");
	for (size_t i = 0; i < sizeof buckets / sizeof *buckets; i++) {
		uint64_t v = ev->bytes[buckets[i]];
		buf_printf(b, "%s%s %.1f MiB", i ? ", " : "",
			      mo_estimate_bucket_name(buckets[i]), (double)v / MIB);
		sum += v;
	}
	buf_puts(b, " (parameter state as under \"weights\" above; loss scratch as under "
		       "\"loss backward scratch\")\n");
	if (ev->kind == MO_EV_OPTIMIZER && ev->bytes[MO_EST_OPTIMIZER] > st->optimizer_bytes)
		buf_printf(b, "    the optimizer's %.1f MiB include the update's scratch, %.1f MiB "
				 "(\"optimizer step\" above)\n",
			      (double)ev->bytes[MO_EST_OPTIMIZER] / MIB,
			      (double)(ev->bytes[MO_EST_OPTIMIZER] - st->optimizer_bytes) / MIB);
	return sum;
}

uint64_t est_explain_peak(const mo_estimate *e, size_t s, mo_buf *b)
{
	const mo_estimate_stage *st = &e->stages[s];
	mo_peak_state p = {.e = e, .s = s};
	uint64_t sum = 0;
	p.count = calloc(e->n_res + 1, sizeof(*p.count));
	p.ids = calloc(e->n_layers + 1, sizeof(*p.ids));
	if (!p.count || !p.ids || est_peak_alive(e, s, &p.alive) != 0) {
		buf_printf(b, "  stage %zu: the peak's tensors are not listed (out of memory, or "
				 "over a million micro-batch slots to replay)\n",
			      s);
		goto out;
	}
	const mo_estimate_event *ev = est_peak_event(e, s);
	buf_printf(b, "  stage %zu at its peak \"%s\": %.3f MiB allocated\n", s,
		      st->peak_event, (double)st->peak_bytes / MIB);
	sum += peak_static(b, ev, st);
	peak_count(&p);
	buf_printf(b, "    activations %.3f MiB, alive:\n",
		      (double)ev->bytes[MO_EST_ACTIVATIONS] / MIB);
	sum += peak_activations(b, &p);
	sum += peak_event_layer(b, &p, ev);
	buf_printf(b, "    listed: %.3f MiB%s\n", (double)sum / MIB,
		      sum == st->peak_bytes ? " (= the peak)" : " (differs from the peak)");
out:
	est_alive_free(&p.alive);
	free(p.count);
	free(p.ids);
	return sum;
}
