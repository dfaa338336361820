/* What `memopt ledger` prints: a table for a bug report and the same
 * figures as JSON (jansson) for tools and the HTTP API. Sizes in MiB with
 * three decimals (a KiB is visible), times in seconds since the trace's
 * first row. */
#include "ledger/ledger.h"
#include "util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0
#define MO_LEDGER_LIST 12

static const char *const mo_ledger_class_names[] = {"earlier steps", "this step", "transient",
						"any"};
static const char *const mo_ledger_class_keys[] = {"earlier", "step", "transient", "any"};

static double ledger_since(const mo_ledger *l, double us)
{
	return (us - ledger_us(l->first_ns)) / 1e6;
}

static void ledger_report_peak(mo_buf *b, const mo_ledger *l)
{
	const mo_ledger_peak *p = &l->peak;
	buf_printf(b, "peak: %.3f MiB at %.6f s (line %lld: %s %.3f MiB; step %lld)\n",
		      (double)p->bytes / MIB, p->since_start_s, (long long)p->line, p->op,
		      (double)p->op_bytes / MIB, (long long)p->step);
	if (l->has_total)
		buf_printf(b, "  held outside the rows (allocated before the trace): %12.3f MiB\n",
			      (double)p->outside_bytes / MIB);
	buf_printf(b, "  alive rows:                                         %12.3f MiB\n",
		      (double)p->rows_bytes / MIB);
	buf_printf(b, "    allocated in earlier steps                        %12.3f MiB\n",
		      (double)p->earlier_bytes / MIB);
	buf_printf(b, "    this step, living >= %g ms (or never freed)      %12.3f MiB\n",
		      l->transient_ms, (double)p->step_bytes / MIB);
	buf_printf(b, "    transient (< %g ms)                               %12.3f MiB\n",
		      l->transient_ms, (double)p->transient_bytes / MIB);
}

static void ledger_report_groups(mo_buf *b, const mo_ledger *l)
{
	const mo_ledger_group_list *g = &l->groups[MO_LEDGER_BY_OP];
	buf_puts(b, "\nalive at the peak, by op:\n  op                                count"
		       "          MiB\n");
	for (size_t i = 0; i < g->n && i < MO_LEDGER_LIST; i++)
		buf_printf(b, "  %-32.32s %6llu %12.3f\n", g->v[i].op,
			      (unsigned long long)g->v[i].count, (double)g->v[i].total / MIB);
	if (g->n > MO_LEDGER_LIST)
		buf_printf(b, "  (%zu more ops)\n", g->n - MO_LEDGER_LIST);
	g = &l->groups[MO_LEDGER_BY_SIZE];
	buf_puts(b, "by size:\n  size MiB        count    total MiB\n");
	for (size_t i = 0; i < g->n && i < MO_LEDGER_LIST; i++)
		buf_printf(b, "  %12.3f %8llu %12.3f\n", (double)g->v[i].bytes / MIB,
			      (unsigned long long)g->v[i].count, (double)g->v[i].total / MIB);
	if (g->n > MO_LEDGER_LIST)
		buf_printf(b, "  (%zu more sizes)\n", g->n - MO_LEDGER_LIST);
}

static void ledger_report_steps(mo_buf *b, const mo_ledger *l)
{
	buf_printf(b, "\nsteps (%s):\n  step    start s      end s     rows    peak MiB"
			 "     at s   at start MiB\n",
		      l->step_marker[0] ? l->step_marker : "no --step-start: the whole trace");
	for (size_t i = 0; i < l->n_steps; i++) {
		const mo_ledger_step *s = &l->steps[i];
		buf_printf(b, "  %4lld %10.6f %10.6f %8llu %11.3f %10.6f %14.3f\n",
			      (long long)s->index, ledger_since(l, s->start_us),
			      ledger_since(l, s->end_us), (unsigned long long)s->rows,
			      (double)s->peak_bytes / MIB, ledger_since(l, s->peak_us),
			      (double)s->start_bytes / MIB);
	}
}

static void ledger_report_layers(mo_buf *b, const mo_ledger *l)
{
	if (!l->layer_marker[0])
		return;
	buf_printf(b, "\nkept from forward to backward, per layer (starts at %s):\n"
			 "  step layer model-layer    start s     kept MiB   rows\n",
		      l->layer_marker);
	for (size_t i = 0; i < l->n_layers; i++) {
		const mo_ledger_layer *y = &l->layers[i];
		if (y->complete)
			buf_printf(b, "  %4lld %5lld %11lld %10.6f %12.3f %6llu\n",
				      (long long)y->step, (long long)y->layer,
				      (long long)y->model_layer, ledger_since(l, y->start_us),
				      (double)y->kept_bytes / MIB,
				      (unsigned long long)y->kept_rows);
		else
			buf_printf(b, "  %4lld %5lld %11lld %10.6f            - (no layer after "
					 "next in its step)\n",
				      (long long)y->step, (long long)y->layer,
				      (long long)y->model_layer, ledger_since(l, y->start_us));
	}
}

char *mo_ledger_report(const mo_ledger *l, const mo_ledger_compare *c, const char *name)
{
	mo_buf b;
	if (!l)
		return NULL;
	buf_init(&b, 0);
	buf_printf(&b, "trace: %s (%s, %llu rows, %.6f s)\n", name ? name : "-",
		      mo_ledger_format(l), (unsigned long long)l->rows,
		      (double)(l->last_ns - l->first_ns) / 1e9);
	ledger_report_peak(&b, l);
	ledger_report_groups(&b, l);
	ledger_report_steps(&b, l);
	ledger_report_layers(&b, l);
	if (c)
		ledger_report_compare(&b, l, c);
	if (b.failed) {
		buf_free(&b);
		return NULL;
	}
	return buf_take(&b, NULL);
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *ledger_json_groups(const mo_ledger *l, mo_ledger_grouping k)
{
	json_t *a = json_array();
	const mo_ledger_group_list *g = &l->groups[k];
	for (size_t i = 0; a && i < g->n; i++) {
		json_t *o = json_pack("{s:I, s:I}", "count", (json_int_t)g->v[i].count, "bytes",
				      (json_int_t)g->v[i].total);
		if (o && g->v[i].op)
			json_object_set_new(o, "op", json_string(g->v[i].op));
		if (o && k != MO_LEDGER_BY_OP)
			json_object_set_new(o, "size", json_integer((json_int_t)g->v[i].bytes));
		if (o && k == MO_LEDGER_BY_OP_SIZE)
			json_object_set_new(o, "class",
					    json_string(mo_ledger_class_keys[g->v[i].lifetime]));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *ledger_json_peak(const mo_ledger *l)
{
	const mo_ledger_peak *p = &l->peak;
	json_t *o = json_pack("{s:I, s:f, s:f, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "bytes", (json_int_t)p->bytes, "time_us", p->time_us, "since_start_s",
			      p->since_start_s, "line", (json_int_t)p->line, "op", p->op,
			      "op_bytes", (json_int_t)p->op_bytes, "step", (json_int_t)p->step,
			      "rows_bytes", (json_int_t)p->rows_bytes, "outside_bytes",
			      (json_int_t)p->outside_bytes, "earlier_bytes",
			      (json_int_t)p->earlier_bytes, "step_bytes", (json_int_t)p->step_bytes,
			      "transient_bytes", (json_int_t)p->transient_bytes);
	if (o) {
		json_object_set_new(o, "by_op", ledger_json_groups(l, MO_LEDGER_BY_OP));
		json_object_set_new(o, "by_size", ledger_json_groups(l, MO_LEDGER_BY_SIZE));
		json_object_set_new(o, "by_op_size", ledger_json_groups(l, MO_LEDGER_BY_OP_SIZE));
	}
	return o;
}

static json_t *ledger_json_steps(const mo_ledger *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n_steps; i++) {
		const mo_ledger_step *s = &l->steps[i];
		json_array_append_new(a, json_pack("{s:I, s:f, s:f, s:I, s:I, s:f, s:I}", "index",
						   (json_int_t)s->index, "start_us", s->start_us,
						   "end_us", s->end_us, "rows", (json_int_t)s->rows,
						   "peak_bytes", (json_int_t)s->peak_bytes,
						   "peak_us", s->peak_us, "start_bytes",
						   (json_int_t)s->start_bytes));
	}
	return a;
}

static json_t *ledger_json_layers(const mo_ledger *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n_layers; i++) {
		const mo_ledger_layer *y = &l->layers[i];
		json_t *o = json_pack("{s:I, s:I, s:I, s:f, s:b}", "step", (json_int_t)y->step,
				      "layer", (json_int_t)y->layer, "model_layer",
				      (json_int_t)y->model_layer, "start_us", y->start_us, "complete",
				      y->complete);
		if (o && y->complete) {
			json_object_set_new(o, "kept_bytes", json_integer((json_int_t)y->kept_bytes));
			json_object_set_new(o, "kept_rows", json_integer((json_int_t)y->kept_rows));
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *ledger_json_point(int64_t ns, uint64_t bytes)
{
	return json_pack("{s:f, s:I}", "time_us", ledger_us(ns), "bytes", (json_int_t)bytes);
}

/* The downsampled curve in time order: per bin its lowest and highest row,
 * whichever came first first (one point when they are the same row). */
static json_t *ledger_json_curve(const mo_ledger *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < MO_LEDGER_CURVE_BINS; i++) {
		const mo_ledger_bin *b = &l->curve[i];
		if (!b->set)
			continue;
		bool low_first = b->min_ns < b->max_ns;
		bool one = b->min_ns == b->max_ns && b->min_bytes == b->max_bytes;
		json_array_append_new(a, low_first ? ledger_json_point(b->min_ns, b->min_bytes)
						   : ledger_json_point(b->max_ns, b->max_bytes));
		if (!one)
			json_array_append_new(a, low_first
							 ? ledger_json_point(b->max_ns, b->max_bytes)
							 : ledger_json_point(b->min_ns, b->min_bytes));
	}
	return a;
}

static json_t *ledger_json_tree(const mo_ledger *l, const mo_ledger_compare *c, const char *name)
{
	json_t *o = json_pack("{s:s, s:s, s:I, s:f, s:f, s:b, s:f}", "trace", name ? name : "-",
			      "format", mo_ledger_format(l), "rows", (json_int_t)l->rows,
			      "first_us", ledger_us(l->first_ns), "last_us", ledger_us(l->last_ns),
			      "allocator_total", l->has_total, "transient_ms", l->transient_ms);
	if (!o)
		return NULL;
	json_object_set_new(o, "step_start",
			    l->step_marker[0] ? json_string(l->step_marker) : json_null());
	json_object_set_new(o, "layer_start",
			    l->layer_marker[0] ? json_string(l->layer_marker) : json_null());
	json_object_set_new(o, "peak", ledger_json_peak(l));
	json_object_set_new(o, "steps", ledger_json_steps(l));
	json_object_set_new(o, "layers", ledger_json_layers(l));
	json_object_set_new(o, "curve", ledger_json_curve(l));
	if (c)
		json_object_set_new(o, "compare", ledger_json_compare(l, c));
	return o;
}

char *mo_ledger_json(const mo_ledger *l, const mo_ledger_compare *c, const char *name)
{
	if (!l)
		return NULL;
	json_t *o = ledger_json_tree(l, c, name);
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(o);
	return text;
}

const char *ledger_class_name(mo_ledger_class k)
{
	return (unsigned)k < 4 ? mo_ledger_class_names[k] : "";
}
