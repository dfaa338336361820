/* The measured peak beside the estimate's own explanation of its peak
 * (the tensors `memopt estimate --explain` lists, estimate_peak.c): the
 * estimate's per-tensor items (the activations each alive layer keeps, the
 * embedding and loss regions, a recomputed layer's tensors) are matched to
 * the alive rows by size, largest first; the parameter state, gradients
 * and scratch are compared as buckets against the rows' lifetime classes.
 * What stays unmatched on either side is listed: that is what one side
 * has and the other does not explain. */
#include "ledger/ledger.h"
#include "estimate/estimate.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0
#define MO_LEDGER_LIST 12

/* A row of `each` bytes is the tensor of `want` bytes when it is at most
 * 1 KiB + 0.1% larger (allocators round up to 512 B blocks). */
static bool comparison_fits(uint64_t each, uint64_t want)
{
	return each >= want && each - want <= 1024 + want / 1000;
}

static int comparison_add(mo_ledger_compare *c, const char *type, const mo_est_graph *g, int t,
		      int bucket, uint64_t count)
{
	size_t cap = c->n_items + 1;
	mo_ledger_item *v = realloc(c->items, cap * sizeof *v);
	char **labels = realloc(c->labels, (c->n_labels + 2) * sizeof *labels);
	if (v)
		c->items = v;
	if (labels)
		c->labels = labels;
	if (!v || !labels)
		return -1;
	const char *op = est_saver(g, t);
	size_t n = strlen(type) + strlen(g->t[t].name) + 2;
	char *label = malloc(n), *op_copy = strdup(op ? op : "");
	if (!label || !op_copy) {
		free(label);
		free(op_copy);
		return -1;
	}
	snprintf(label, n, "%s %s", type, g->t[t].name);
	c->labels[c->n_labels++] = label;
	c->labels[c->n_labels++] = op_copy;
	c->items[c->n_items++] = (mo_ledger_item){.label = label, .op = op_copy, .bucket = bucket,
					      .bytes = g->t[t].bytes, .count = count};
	return 0;
}

/* The storages of g marked `bit` (0: saved, neither kept nor swapped: a
 * recomputed layer's tensors), count times each. */
static int comparison_graph(mo_ledger_compare *c, const char *type, const mo_est_graph *g,
			const unsigned char *marks, unsigned bit, int bucket, uint64_t count)
{
	for (size_t t = 0; t < g->n_t; t++) {
		unsigned m = marks[t];
		if (g->t[t].storage != (int)t || !g->t[t].bytes ||
		    (bit ? !(m & bit) : !(m & MO_K_BASE) || (m & (MO_K_KEPT | MO_K_SWAP))))
			continue;
		if (comparison_add(c, type, g, (int)t, bucket, count) != 0)
			return -1;
	}
	return 0;
}

/* The embedding's or the loss region's kept tensors, n times. */
static int comparison_ends(mo_ledger_compare *c, const mo_est_graph *g, const char *type,
		       uint64_t n)
{
	if (!n)
		return 0;
	mo_est_keep k;
	unsigned char *marks = calloc(g->n_t + 1, 1);
	int rc = -1;
	if (marks && est_keep_eval_marks(&k, g, NULL, NULL, false, false, false, marks) == 0)
		rc = comparison_graph(c, type, g, marks, MO_K_KEPT, MO_EST_ACTIVATIONS, n);
	free(marks);
	return rc;
}

/* Per plan result, the (micro-batch, layer) pairs alive at the peak. */
static void comparison_count(const mo_estimate *e, size_t s, const mo_est_alive *al,
			 uint64_t *count, uint64_t *ends)
{
	size_t V = (size_t)e->cfg.vpp;
	for (int64_t mb = 0; mb < al->mbn; mb++) {
		for (size_t ch = 0; ch < V; ch++) {
			const mo_est_chunk *chunk = &e->chunks[s * V + ch];
			int64_t k = al->layers[(size_t)mb * V + ch];
			for (int64_t i = 0; i < k && (size_t)i < chunk->n; i++)
				count[e->layer_res[chunk->ids[i]]]++;
		}
		ends[0] += (al->ends[mb] & 1) != 0;
		ends[1] += (al->ends[mb] & 2) != 0;
	}
}

static const mo_estimate_event *comparison_event(const mo_estimate *e, size_t s)
{
	return est_peak_event(e, s);
}

/* The estimate's items at stage s's peak. 0 or -1 (out of memory). */
static int comparison_items(mo_ledger_compare *c, const mo_estimate *e, size_t s,
			const mo_estimate_event *ev)
{
	mo_est_alive al;
	uint64_t *count = calloc(e->n_res + 1, sizeof *count), ends[2] = {0, 0};
	int rc = -1;
	if (!count || est_peak_alive(e, s, &al) != 0) {
		free(count);
		return -1;
	}
	comparison_count(e, s, &al, count, ends);
	for (size_t r = 0; r < e->n_res; r++) {
		const mo_est_res *res = &e->res[r];
		if (count[r] && comparison_graph(c, e->types[res->type].name, &e->types[res->type].g,
					     res->marks, MO_K_KEPT, MO_EST_ACTIVATIONS,
					     count[r]) != 0)
			goto out_free;
	}
	if (comparison_ends(c, &e->embed, "embedding", ends[0]) != 0 ||
	    comparison_ends(c, &e->head, "loss-region", ends[1] * (uint64_t)(1 + e->cfg.mtp)) != 0)
		goto out_free;
	if (ev->bytes[MO_EST_RECOMPUTED] && ev->layer >= 0 && (size_t)ev->layer < e->n_layers) {
		const mo_est_res *res = &e->res[e->layer_res[ev->layer]];
		if (comparison_graph(c, e->types[res->type].name, &e->types[res->type].g, res->marks, 0,
				 MO_EST_RECOMPUTED, 1) != 0)
			goto out_free;
	}
	rc = 0;
out_free:
	est_alive_free(&al);
	free(count);
	return rc;
}

static int comparison_cmp_item(const void *pa, const void *pb)
{
	const mo_ledger_item *a = pa, *b = pb;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return strcmp(a->label, b->label);
}

/* Greedy, largest tensors first: each takes rows of a fitting size,
 * preferring rows of this step's long-lived class, then transients, then
 * earlier steps. */
static void comparison_match(mo_ledger_compare *c, const mo_ledger *l)
{
	static const mo_ledger_class order[] = {MO_LEDGER_STEP, MO_LEDGER_TRANSIENT,
						MO_LEDGER_EARLIER};
	const mo_ledger_group_list *g = &l->groups[MO_LEDGER_BY_OP_SIZE];
	uint64_t by_class[3] = {0, 0, 0};
	if (c->n_items) /* qsort(NULL, 0, ...) is undefined */
		qsort(c->items, c->n_items, sizeof *c->items, comparison_cmp_item);
	for (size_t i = 0; i < c->n_items; i++) {
		mo_ledger_item *it = &c->items[i];
		for (size_t o = 0; o < 3 && it->matched < it->count; o++)
			for (size_t k = 0; k < g->n && it->matched < it->count; k++) {
				const mo_ledger_group *gr = &g->v[k];
				if (gr->lifetime != order[o] || !comparison_fits(gr->bytes, it->bytes))
					continue;
				uint64_t take = gr->count - c->group_matched[k];
				if (take > it->count - it->matched)
					take = it->count - it->matched;
				c->group_matched[k] += take;
				it->matched += take;
				c->matched_bytes += take * gr->bytes;
				c->matched_est += take * it->bytes;
				by_class[order[o]] += take * gr->bytes;
			}
	}
	const mo_ledger_peak *p = &l->peak;
	c->m_activations = c->matched_bytes;
	c->m_persistent = p->outside_bytes + p->earlier_bytes - by_class[MO_LEDGER_EARLIER];
	c->m_step_other = p->step_bytes - by_class[MO_LEDGER_STEP];
	c->m_transient = p->transient_bytes - by_class[MO_LEDGER_TRANSIENT];
}

/* ---- between steps ------------------------------------------------------------
 * What a step leaves allocated for the next: the allocation when a step
 * after a whole one starts (index >= 1), the peak's step if it is one, else
 * the first such step. */
static void comparison_between(mo_ledger_compare *c, const mo_ledger *l)
{
	const mo_ledger_step *pick = NULL;
	for (size_t i = 0; i < l->n_steps; i++) {
		const mo_ledger_step *s = &l->steps[i];
		if (s->index < 1)
			continue;
		if (!pick || s->index == l->peak.step)
			pick = s;
	}
	c->between_step = pick ? pick->index : -1;
	c->m_between = pick ? pick->start_bytes : 0;
}

int mo_ledger_compare_run(mo_ledger_compare **out, const mo_ledger *l, const mo_estimate *e,
			  int64_t stage, mo_error *err)
{
	if (!out || !l || !e) {
		error_set(err, MO_ERR_USAGE, 0, 0, "mo_ledger_compare_run: NULL argument");
		return -1;
	}
	*out = NULL;
	size_t s = stage < 0 ? e->peak_stage : (size_t)stage;
	if (s >= e->n_stages) {
		error_set(err, MO_ERR_USAGE, 0, 0, "stage %lld: the estimate has %zu stages",
			     (long long)stage, e->n_stages);
		return -1;
	}
	const mo_estimate_event *ev = comparison_event(e, s);
	mo_ledger_compare *c = calloc(1, sizeof *c);
	size_t n_groups = l->groups[MO_LEDGER_BY_OP_SIZE].n;
	if (c)
		c->group_matched = calloc(n_groups + 1, sizeof *c->group_matched);
	if (!c || !c->group_matched || !ev || comparison_items(c, e, s, ev) != 0) {
		mo_ledger_compare_free(c);
		error_set(err, MO_ERR_NOMEM, 0, 0,
			     "out of memory (or the estimate's peak could not be replayed)");
		return -1;
	}
	c->est_layer = calloc(e->n_layers + 1, sizeof *c->est_layer);
	if (!c->est_layer) {
		mo_ledger_compare_free(c);
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < e->n_layers; i++)
		c->est_layer[i] = e->layers[i].activation_bytes;
	c->n_est_layers = e->n_layers;
	c->stage = (int64_t)s;
	c->n_groups = n_groups;
	c->est_peak = e->stages[s].peak_bytes;
	memcpy(c->est_bucket, ev->bytes, sizeof c->est_bucket);
	c->est_between = e->stages[s].between_steps_bytes;
	comparison_between(c, l);
	snprintf(c->event, sizeof c->event, "%s", e->stages[s].peak_event);
	comparison_match(c, l);
	*out = c;
	return 0;
}

void mo_ledger_compare_free(mo_ledger_compare *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_labels; i++)
		free(c->labels[i]);
	free(c->labels);
	free(c->items);
	free(c->group_matched);
	free(c->est_layer);
	free(c);
}

/* ---- the table ------------------------------------------------------------ */

typedef struct mo_comparison_row {
	const char *bucket;
	uint64_t measured, estimated;
} mo_comparison_row;

static size_t comparison_rows(const mo_ledger *l, const mo_ledger_compare *c,
			mo_comparison_row *r)
{
	const uint64_t *b = c->est_bucket;
	r[0] = (mo_comparison_row){"weights + optimizer + workspaces (persistent)",
			    c->m_persistent,
			    b[MO_EST_WEIGHTS] + b[MO_EST_OPTIMIZER] + b[MO_EST_WORKSPACES]};
	r[1] = (mo_comparison_row){"gradients, gathered, loss, swap, pipeline inputs",
			    c->m_step_other,
			    b[MO_EST_GRADIENTS] + b[MO_EST_GATHERED] + b[MO_EST_LOSS] +
				    b[MO_EST_SWAP_BUFFERS] + b[MO_EST_PIPELINE_INPUTS]};
	r[2] = (mo_comparison_row){"activations + recomputed (matched by size)", c->m_activations,
			    b[MO_EST_ACTIVATIONS] + b[MO_EST_RECOMPUTED]};
	r[3] = (mo_comparison_row){"transients", c->m_transient, 0};
	r[4] = (mo_comparison_row){"total (the peaks)", l->peak.bytes, c->est_peak};
	return 5;
}

/* The estimate's kept bytes of a measured layer's model layer, or NULL. */
static const uint64_t *comparison_layer_est(const mo_ledger_compare *c, const mo_ledger_layer *y)
{
	if (!y->complete || y->model_layer < 0 || (uint64_t)y->model_layer >= c->n_est_layers)
		return NULL;
	return &c->est_layer[y->model_layer];
}

static void comparison_report_layers(mo_buf *b, const mo_ledger *l, const mo_ledger_compare *c)
{
	bool head = false;
	for (size_t i = 0; i < l->n_layers; i++) {
		const mo_ledger_layer *y = &l->layers[i];
		const uint64_t *est = comparison_layer_est(c, y);
		if (!est)
			continue;
		if (!head)
			buf_puts(b, "kept per layer, measured vs estimated (one micro-batch), MiB:\n"
				       "  step layer model-layer    measured    estimated   difference\n");
		head = true;
		buf_printf(b, "  %4lld %5lld %11lld %11.3f %12.3f %+12.3f\n", (long long)y->step,
			      (long long)y->layer, (long long)y->model_layer,
			      (double)y->kept_bytes / MIB, (double)*est / MIB,
			      ((double)y->kept_bytes - (double)*est) / MIB);
	}
}

void ledger_report_compare(mo_buf *b, const mo_ledger *l, const mo_ledger_compare *c)
{
	mo_comparison_row r[5];
	size_t n = comparison_rows(l, c, r);
	buf_printf(b, "\nmeasured vs estimated (stage %lld, estimate's peak \"%s\"), MiB:\n",
		      (long long)c->stage, c->event);
	buf_puts(b, "  bucket                                              measured    estimated"
		       "   difference\n");
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "  %-50s %10.3f %12.3f %+12.3f\n", r[i].bucket,
			      (double)r[i].measured / MIB, (double)r[i].estimated / MIB,
			      ((double)r[i].measured - (double)r[i].estimated) / MIB);
	buf_printf(b, "  matched: %.3f MiB of rows to %.3f MiB of estimated tensors\n",
		      (double)c->matched_bytes / MIB, (double)c->matched_est / MIB);
	if (c->between_step >= 0)
		buf_printf(b, "  between steps (allocated when step %lld starts)     %10.3f %12.3f %+12.3f\n",
			      (long long)c->between_step, (double)c->m_between / MIB,
			      (double)c->est_between / MIB,
			      ((double)c->m_between - (double)c->est_between) / MIB);
	else
		buf_printf(b, "  between steps: no step after a whole one in the trace "
				 "(estimated %.3f MiB)\n",
			      (double)c->est_between / MIB);
	comparison_report_layers(b, l, c);
	buf_puts(b, "unexplained measured rows (no estimated tensor of their size):\n");
	const mo_ledger_group_list *g = &l->groups[MO_LEDGER_BY_OP_SIZE];
	size_t shown = 0;
	for (size_t k = 0; k < g->n && shown < MO_LEDGER_LIST; k++) {
		uint64_t left = g->v[k].count - c->group_matched[k];
		if (!left)
			continue;
		buf_printf(b, "  %-32.32s %6llu x %12.3f  (%s)\n", g->v[k].op,
			      (unsigned long long)left, (double)g->v[k].bytes / MIB,
			      ledger_class_name(g->v[k].lifetime));
		shown++;
	}
	buf_puts(b, "unexplained estimated tensors (no alive row of their size):\n");
	shown = 0;
	for (size_t i = 0; i < c->n_items && shown < MO_LEDGER_LIST; i++) {
		const mo_ledger_item *it = &c->items[i];
		if (it->matched == it->count)
			continue;
		buf_printf(b, "  %-32.32s %6llu x %12.3f  %s\n", it->label,
			      (unsigned long long)(it->count - it->matched),
			      (double)it->bytes / MIB, it->op);
		shown++;
	}
}

json_t *ledger_json_compare(const mo_ledger *l, const mo_ledger_compare *c)
{
	mo_comparison_row r[5];
	size_t n = comparison_rows(l, c, r);
	json_t *o = json_pack("{s:I, s:s, s:I, s:I, s:I}", "stage", (json_int_t)c->stage,
			      "estimate_peak_event", c->event, "estimate_peak_bytes",
			      (json_int_t)c->est_peak, "matched_bytes", (json_int_t)c->matched_bytes,
			      "matched_estimate_bytes", (json_int_t)c->matched_est);
	json_t *rows = json_array(), *um = json_array(), *ue = json_array(), *ly = json_array();
	for (size_t i = 0; ly && i < l->n_layers; i++) {
		const uint64_t *est = comparison_layer_est(c, &l->layers[i]);
		if (est)
			json_array_append_new(
				ly, json_pack("{s:I, s:I, s:I, s:I, s:I}", "step",
					      (json_int_t)l->layers[i].step, "layer",
					      (json_int_t)l->layers[i].layer, "model_layer",
					      (json_int_t)l->layers[i].model_layer, "measured_bytes",
					      (json_int_t)l->layers[i].kept_bytes, "estimated_bytes",
					      (json_int_t)*est));
	}
	for (size_t i = 0; rows && i < n; i++)
		json_array_append_new(rows, json_pack("{s:s, s:I, s:I}", "bucket", r[i].bucket,
						      "measured_bytes", (json_int_t)r[i].measured,
						      "estimated_bytes",
						      (json_int_t)r[i].estimated));
	const mo_ledger_group_list *g = &l->groups[MO_LEDGER_BY_OP_SIZE];
	for (size_t k = 0; um && k < g->n; k++)
		if (g->v[k].count > c->group_matched[k])
			json_array_append_new(
				um, json_pack("{s:s, s:I, s:I, s:s}", "op", g->v[k].op, "size",
					      (json_int_t)g->v[k].bytes, "count",
					      (json_int_t)(g->v[k].count - c->group_matched[k]),
					      "class", ledger_class_name(g->v[k].lifetime)));
	for (size_t i = 0; ue && i < c->n_items; i++)
		if (c->items[i].matched < c->items[i].count)
			json_array_append_new(
				ue, json_pack("{s:s, s:s, s:s, s:I, s:I}", "tensor",
					      c->items[i].label, "op", c->items[i].op, "bucket",
					      mo_estimate_bucket_name(c->items[i].bucket), "bytes",
					      (json_int_t)c->items[i].bytes, "count",
					      (json_int_t)(c->items[i].count - c->items[i].matched)));
	if (o) {
		json_object_set_new(o, "buckets", rows);
		json_object_set_new(o, "unexplained_measured", um);
		json_object_set_new(o, "unexplained_estimated", ue);
		json_object_set_new(o, "layers", ly);
		json_object_set_new(
			o, "between_steps",
			c->between_step >= 0
				? json_pack("{s:I, s:I, s:I}", "step", (json_int_t)c->between_step,
					    "measured_bytes", (json_int_t)c->m_between,
					    "estimated_bytes", (json_int_t)c->est_between)
				: json_pack("{s:n, s:n, s:I}", "step", "measured_bytes",
					    "estimated_bytes", (json_int_t)c->est_between));
	} else {
		json_decref(ly);
		json_decref(rows);
		json_decref(um);
		json_decref(ue);
	}
	return o;
}
