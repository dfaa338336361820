/* The closed form of a stage's schedule (estimate_schedule.c) finds the
 * same first highest event, with the same figures per bucket, the same
 * micro-batches in flight and the same state at the optimizer step as the
 * walk of every unit (estimate_timeline.c), on random models: 1F1B and
 * interleaved (micro-batch counts that fill whole rounds of P and others),
 * uneven stage lists, empty chunks, MTP, both frameworks, FSDP, recompute,
 * swap. And it does so for a step of 2^31-1 micro-batches on 100,000
 * stages, which the walk could not: its figures are those of a short step
 * with the same warm-up, since the steady state repeats. The estimates
 * without the event listing (or without peaks) that the layout search
 * runs give the same figures. The timeline's clock (estimate_clock.c)
 * orders every stage's events in time as the schedule runs them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/estimate_timeline.h"

/* An LCG: modulo 2^32 by design */
static MO_WRAPS unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static mo_model *load_model(const char *text)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	int rc = mo_model_load(&m, d, text, strlen(text), "sched", NULL, NULL);
	if (rc == 0)
		mo_model_check(m, d);
	bool bad = rc != 0 || mo_diags_errors(d) > 0;
	mo_diags_free(d);
	if (bad) {
		mo_model_free(m);
		return NULL;
	}
	return m;
}

static mo_config *load_config(const char *text)
{
	mo_diags *d = NULL;
	mo_config *c = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	int rc = mo_config_parse(&c, d, text, strlen(text), "sched", NULL, NULL);
	mo_diags_free(d);
	return rc == 0 ? c : NULL;
}

/* "[[0-2], [3], ...]": nv virtual stages over L layers, uneven, some
 * possibly empty when `empty`. */
static void stage_lists(char *buf, size_t n, unsigned *seed, int L, int nv, bool empty)
{
	int cut[64], at = 0;
	for (int k = 0; k < nv - 1; k++) {
		int left = L - at, need = empty ? 0 : nv - 1 - k;
		int most = left - need - (empty ? 0 : 1);
		int take = most > 0 ? (int)(rnd(seed) % (unsigned)(most + 1)) : 0;
		if (!empty && take < 1)
			take = 1;
		cut[k] = take;
		at += take;
	}
	cut[nv - 1] = L - at;
	size_t o = (size_t)snprintf(buf, n, "  pipeline_parallel_layers_per_stage: [");
	at = 0;
	for (int k = 0; k < nv; k++) {
		if (cut[k] == 0)
			o += (size_t)snprintf(buf + o, n - o, "%s[]", k ? ", " : "");
		else
			o += (size_t)snprintf(buf + o, n - o, "%s['%d-%d']", k ? ", " : "", at,
					      at + cut[k] - 1);
		at += cut[k];
	}
	snprintf(buf + o, n - o, "]\n");
}

static void expect_same(const mo_estimate *e, size_t s)
{
	mo_sched_peak pk;
	const mo_estimate_stage *st = mo_estimate_stage_get(e, s);
	assert_int_equal(est_stage_closed_form(e, s, &pk), 0);
	char a[96], b[96];
	mo_estimate_event_name(&pk.ev, a, sizeof a);
	if (pk.ev.total != st->peak_bytes || strcmp(a, st->peak_event) != 0)
		fprintf(stderr, "stage %zu: walk %llu at \"%s\", closed form %llu at \"%s\"\n", s,
			(unsigned long long)st->peak_bytes, st->peak_event,
			(unsigned long long)pk.ev.total, a);
	assert_int_equal(pk.ev.total, st->peak_bytes);
	assert_string_equal(a, st->peak_event);
	assert_memory_equal(pk.ev.bytes, st->peak_by_bucket, sizeof pk.ev.bytes);
	assert_int_equal(pk.in_flight, st->in_flight);
	/* the state at the optimizer step, as the walk's last event holds it */
	size_t n = mo_estimate_event_count(e, s);
	const mo_estimate_event *last = mo_estimate_event_get(e, s, n - 1);
	assert_int_equal(last->kind, MO_EV_OPTIMIZER);
	for (int k = 0; k < MO_EST_BUCKETS; k++)
		if (k != MO_EST_GRADIENTS && k != MO_EST_OPTIMIZER) /* + the step's extras */
			assert_int_equal(pk.end[k], last->bytes[k]);
	(void)b;
}

/* Every stage against the walk (expect_same), and the closed forms of all
 * stages in order, with the unit figures carried from a stage to the next
 * of the same shape as the estimate carries them, against each stage's own. */
static void expect_stages(const mo_estimate *e)
{
	size_t n = mo_estimate_stage_count(e);
	mo_sched_peak *all = calloc(n, sizeof *all);
	assert_non_null(all);
	assert_int_equal(est_closed_forms(e, all), 0);
	for (size_t s = 0; s < n; s++) {
		mo_sched_peak pk;
		expect_same(e, s);
		assert_int_equal(est_stage_closed_form(e, s, &pk), 0);
		assert_int_equal(all[s].ev.kind, pk.ev.kind);
		assert_int_equal(all[s].ev.micro_batch, pk.ev.micro_batch);
		assert_int_equal(all[s].ev.layer, pk.ev.layer);
		assert_int_equal(all[s].ev.total, pk.ev.total);
		assert_memory_equal(all[s].ev.bytes, pk.ev.bytes, sizeof pk.ev.bytes);
		assert_int_equal(all[s].in_flight, pk.in_flight);
		assert_memory_equal(all[s].end, pk.end, sizeof pk.end);
	}
	free(all);
}

/* The timeline's clock (estimate_clock.c): on every stage the listed
 * events follow each other without overlap; a stage's first unit starts
 * when the stage before it has finished its own first forward and the
 * activation has crossed (the stage is idle until then); with one stage
 * nothing ever waits, so the optimizer starts at the sum of every event's
 * seconds, and ends, with the per-step fixed cost, at the step time of the
 * closed form (estimate_time.c: micro-batches x per-micro-batch seconds +
 * what follows the last backward + the fixed cost). Every event has a
 * time, interleaved steps whose micro-batches are no whole rounds of the
 * stages too (their order is the framework's: test_interleaved_order). */
static void expect_clock(const mo_estimate *e)
{
	size_t P = mo_estimate_stage_count(e);
	for (size_t s = 0; s < P; s++) {
		size_t n = mo_estimate_event_count(e, s);
		double sum = 0;
		for (size_t i = 0; i < n; i++) {
			const mo_estimate_event *ev = mo_estimate_event_get(e, s, i);
			assert_true(isfinite(ev->start_seconds) && ev->seconds >= 0);
			if (i > 0) {
				const mo_estimate_event *pv = mo_estimate_event_get(e, s, i - 1);
				assert_true(ev->start_seconds >= (pv->start_seconds + pv->seconds) * (1 - 1e-12));
			}
			if (ev->kind != MO_EV_OPTIMIZER)
				sum += ev->seconds;
		}
		const mo_estimate_event *opt = mo_estimate_event_get(e, s, n - 1);
		if (P == 1 && e->cfg.vpp == 1) {
			assert_true(fabs(opt->start_seconds - sum) <= 1e-9 * sum);
			double end = opt->start_seconds + opt->seconds + e->cfg.dev.step_overhead_ms * 1e-3;
			double step = mo_estimate_get_time(e)->step_seconds;
			if (fabs(end - step) > 1e-9 * step)
				fprintf(stderr, "one stage: walk ends at %.9g s, closed form %.9g s\n", end, step);
			assert_true(fabs(end - step) <= 1e-9 * step);
		}
	}
	/* the fill: stage s's first event (forward mb 0 of chunk 0) starts when
	 * stage s-1's first unit ends plus the transfer */
	for (size_t s = 1; s < P && e->cfg.vpp == 1; s++) {
		const mo_estimate_event *first = mo_estimate_event_get(e, s, 0);
		double end = 0;
		for (size_t i = 0; i < mo_estimate_event_count(e, s - 1); i++) {
			const mo_estimate_event *ev = mo_estimate_event_get(e, s - 1, i);
			if (ev->micro_batch != 0 || (ev->kind != MO_EV_FORWARD && ev->kind != MO_EV_EMBED_FORWARD))
				break;
			end = ev->start_seconds + ev->seconds;
		}
		if (mo_estimate_event_count(e, s - 1) && mo_estimate_event_get(e, s - 1, 0)->micro_batch == 0 &&
		    first->kind == MO_EV_FORWARD)
			assert_true(fabs(first->start_seconds - (end + e->p2p_s)) <= 1e-12 + 1e-9 * end);
	}
}

/* The layout search's estimates: without the event listing every stage's
 * peak, event and in-flight count are the walk's; without peaks the
 * parameter state and the step time are. */
static void expect_lean_same(const mo_estimate *e, const mo_config *c, const mo_model *m)
{
	mo_estimate *u = NULL, *n = NULL;
	assert_int_equal(est_run_unlisted(&u, c, m, NULL), 0);
	assert_int_equal(est_run_unpeaked(&n, c, m, NULL), 0);
	assert_int_equal(mo_estimate_event_count(u, 0), 0);
	assert_int_equal(mo_estimate_peak_bytes(u), mo_estimate_peak_bytes(e));
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++) {
		const mo_estimate_stage *a = mo_estimate_stage_get(e, s);
		const mo_estimate_stage *b = mo_estimate_stage_get(u, s);
		const mo_estimate_stage *z = mo_estimate_stage_get(n, s);
		assert_int_equal(b->peak_bytes, a->peak_bytes);
		assert_string_equal(b->peak_event, a->peak_event);
		assert_int_equal(b->in_flight, a->in_flight);
		assert_int_equal(b->between_steps_bytes, a->between_steps_bytes);
		assert_int_equal(z->weights_bytes, a->weights_bytes);
		assert_int_equal(z->gradients_bytes, a->gradients_bytes);
		assert_int_equal(z->optimizer_bytes, a->optimizer_bytes);
	}
	assert_true(mo_estimate_get_cost(u)->step_seconds == mo_estimate_get_cost(e)->step_seconds);
	assert_true(mo_estimate_get_cost(n)->step_seconds == mo_estimate_get_cost(e)->step_seconds);
	mo_estimate_free(u);
	mo_estimate_free(n);
}

static const char *const model_fmt =
	"model:\n  num_layers: %d\n  hidden_size: 256\n  ffn_hidden_size: 512\n"
	"  num_attention_heads: 4\n  vocab_size: 2000\n  seq_length: 256\n"
	"  hidden_act: swiglu\n  attention: flash\n%s"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: %d\n  framework: %s\n"
	"  params_dtype: %s\n%s"
	"parallel:\n  world_size: %d\n  data_parallel: %d\n  pipeline_parallel: %d\n"
	"  virtual_pipeline: %d\n%s";

static int random_case(unsigned *seed)
{
	int P = 1 + (int)(rnd(seed) % 5), V = 1 + (int)(rnd(seed) % 3);
	if (P == 1)
		V = 1;
	int mtp = rnd(seed) % 4 == 0 ? 1 : 0;
	int L = P * V + (int)(rnd(seed) % 7);
	int mbn = 1 + (int)(rnd(seed) % 13);
	if (rnd(seed) % 2)
		mbn = P * (1 + (int)(rnd(seed) % 4)); /* whole rounds of the stages */
	else if (rnd(seed) % 2) /* several middle groups and a remainder */
		mbn = P * (4 + (int)(rnd(seed) % 5)) + (int)(rnd(seed) % (unsigned)P);
	bool pytorch = rnd(seed) % 2, lists = rnd(seed) % 2, empty = rnd(seed) % 3 == 0;
	int dp = 1 + (int)(rnd(seed) % 2);
	char extra[64] = "", stages[1024] = "";
	if (mtp)
		snprintf(extra, sizeof extra, "  mtp_num_layers: 1\n");
	if (lists)
		stage_lists(stages, sizeof stages, seed, L, P * V, empty);
	char text[4096];
	/* Megatron's combined 1F1B (without pipelining or with virtual stages) */
	bool overlap = pytorch && (P == 1 || V > 1) && rnd(seed) % 3 == 0;
	snprintf(text, sizeof text, model_fmt, L, extra, mbn, pytorch ? "pytorch" : "mindspore",
		 rnd(seed) % 2 ? "float32" : "bfloat16",
		 overlap ? "  overlap_moe_expert_parallel_comm: true\n" : "", P * dp, dp, P, V, stages);
	mo_model *m = load_model(text);
	if (!m)
		return 0;
	char cfg[512];
	int lo = (int)(rnd(seed) % (unsigned)L), hi = lo + (int)(rnd(seed) % 3);
	hi = hi < L ? hi : L - 1;
	switch (rnd(seed) % 4) {
	case 0: snprintf(cfg, sizeof cfg, "recompute:\n  mode: None\n"); break;
	case 1:
		snprintf(cfg, sizeof cfg, "recompute:\n  mode: full\n  full_recompute_layer: [%d-%d]\n",
			 lo, hi);
		break;
	case 2:
		snprintf(cfg, sizeof cfg, "recompute:\n  mode: None\nswap:\n  enable: True\n"
					  "  default_prefetch: %d\n  layer_swap:\n    - layers: [%d-%d]\n",
			 1 + (int)(rnd(seed) % 2), lo, hi);
		break;
	default:
		snprintf(cfg, sizeof cfg, "recompute:\n  mode: selective\n  select_module:\n"
					  "    '.*mlp': [%d-%d]\n", lo, hi);
	}
	mo_config *c = load_config(cfg);
	mo_estimate *e = NULL;
	int ran = 0;
	if (mo_estimate_run(&e, c, m, NULL) == 0 && !mo_estimate_timeline_truncated(e)) {
		expect_stages(e);
		expect_clock(e);
		expect_lean_same(e, c, m);
		ran = 1;
	}
	mo_estimate_free(e);
	mo_config_free(c);
	mo_model_free(m);
	return ran;
}

static void test_random_models(void **state)
{
	(void)state;
	unsigned seed = 20261202;
	int ran = 0;
	for (int i = 0; i < 600; i++)
		ran += random_case(&seed);
	fprintf(stderr, "closed form = walk on %d random estimates\n", ran);
	assert_true(ran > 300);
}

static void test_presets(void **state)
{
	(void)state;
	for (size_t i = 0; i < mo_presets_count(); i++) {
		mo_model *m = NULL;
		mo_estimate *e = NULL;
		assert_int_equal(mo_model_preset(&m, mo_preset_name(i), NULL), 0);
		assert_int_equal(mo_estimate_run(&e, NULL, m, NULL), 0);
		if (!mo_estimate_timeline_truncated(e))
			expect_stages(e);
		mo_estimate_free(e);
		mo_model_free(m);
	}
}

/* 2^31-1 micro-batches: the stage's figures are those of the same schedule
 * with a few rounds of micro-batches (the warm-up fills, then the steady
 * state repeats; interleaved, MindSpore's first group takes the remainder
 * modulo PP, 3 for both 2^31-1 and 15). A micro-batch keeps over 2^34 bytes per stage here, so
 * the bytes the step's micro-batches make, counted whole, would pass 2^64. */
static void test_long_step(void **state)
{
	(void)state;
	static const char fmt[] =
		"model:\n  num_layers: 8\n  hidden_size: 4096\n  ffn_hidden_size: 11008\n"
		"  num_attention_heads: 32\n  vocab_size: 32000\n  seq_length: 65536\n"
		"training:\n  micro_batch_size: 1\n  micro_batch_num: %lld\n"
		"parallel:\n  world_size: 4\n  pipeline_parallel: 4\n  virtual_pipeline: %d\n";
	for (int V = 1; V <= 2; V++) {
		char a[1024], b[1024];
		snprintf(a, sizeof a, fmt, 2147483647LL, V);
		snprintf(b, sizeof b, fmt, 15LL, V);
		mo_model *ml = load_model(a), *ms = load_model(b);
		assert_non_null(ml);
		assert_non_null(ms);
		mo_estimate *el = NULL, *es = NULL;
		assert_int_equal(mo_estimate_run(&el, NULL, ml, NULL), 0);
		assert_int_equal(mo_estimate_run(&es, NULL, ms, NULL), 0);
		assert_true(mo_estimate_timeline_truncated(el));
		for (size_t s = 0; s < 4; s++) {
			const mo_estimate_stage *l = mo_estimate_stage_get(el, s),
						*sh = mo_estimate_stage_get(es, s);
			assert_true(sh->peak_by_bucket[MO_EST_ACTIVATIONS] > (1ull << 34));
			assert_int_equal(l->peak_bytes, sh->peak_bytes);
			assert_int_equal(l->in_flight, sh->in_flight);
			assert_int_equal(l->between_steps_bytes, sh->between_steps_bytes);
			/* the first units run at the same times, whatever follows
			 * them */
			for (size_t i = 0; i < 16 && i < mo_estimate_event_count(el, s); i++) {
				double tl = mo_estimate_event_get(el, s, i)->start_seconds,
				       ts = mo_estimate_event_get(es, s, i)->start_seconds;
				if (tl != ts)
					fprintf(stderr, "stage %zu event %zu: %.9g s against %.9g s\n", s, i, tl, ts);
				assert_true(tl == ts);
			}
		}
		mo_estimate_free(el);
		mo_estimate_free(es);
		mo_model_free(ml);
		mo_model_free(ms);
	}
}

/* The frameworks' interleaved orders, rebuilt here from their source:
 * Megatron-LM's get_schedule_table (megatron/core/pipeline_parallel/
 * schedules.py:989-1016 at d98e8a64) over groups of G micro-batches, G the
 * smallest its checks accept (schedules.py:1160-1182: PP <= G <= M, the
 * last group 0 or at least PP); MindSpore's SortFuncBetweenMicro
 * (frontend/parallel/pipeline_transformer/pipeline_scheduler.cc at
 * d2606558): micro-batches sorted by loop, then chunk, then micro, with
 * loop 0 for micro < stage_num + offset and (micro - offset) / stage_num
 * after, offset = micro_size % stage_num. */
typedef struct ref_unit {
	int64_t mb, chunk;
} ref_unit;

static int64_t ref_megatron_group(int64_t P, int64_t M)
{
	for (int64_t G = P; G <= M; G++)
		if (M % G == 0 || M % G >= P)
			return G;
	return M;
}

static size_t ref_megatron_table(int64_t P, int64_t V, int64_t M, ref_unit *out)
{
	int64_t G = M < P ? M : ref_megatron_group(P, M);
	size_t n = 0;
	for (int64_t lo = 0; lo < M; lo += G) {
		int64_t hi = lo + G >= M ? M : lo + G;
		for (int64_t c = 0; c < V; c++)
			for (int64_t mb = lo; mb < hi; mb++)
				out[n++] = (ref_unit){mb, c};
	}
	return n;
}

static int64_t ref_ms_P, ref_ms_offset;

static int64_t ref_ms_loop(int64_t micro)
{
	int64_t loop = (micro - ref_ms_offset) / ref_ms_P;
	return micro / (ref_ms_P + ref_ms_offset) == 0 ? 0 : loop;
}

static int ref_ms_cmp(const void *a, const void *b)
{
	const ref_unit *x = a, *y = b;
	int64_t lx = ref_ms_loop(x->mb), ly = ref_ms_loop(y->mb);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->chunk != y->chunk)
		return x->chunk < y->chunk ? -1 : 1;
	return x->mb < y->mb ? -1 : x->mb > y->mb;
}

static size_t ref_mindspore_table(int64_t P, int64_t V, int64_t M, ref_unit *out)
{
	size_t n = 0;
	for (int64_t c = 0; c < V; c++)
		for (int64_t mb = 0; mb < M; mb++)
			out[n++] = (ref_unit){mb, c};
	ref_ms_P = P;
	ref_ms_offset = M % P;
	qsort(out, n, sizeof *out, ref_ms_cmp);
	return n;
}

static void fake_estimate(mo_estimate *e, bool pytorch, int64_t P, int64_t V)
{
	memset(e, 0, sizeof *e);
	e->fw = pytorch ? &mo_ops_pytorch : &mo_ops_mindspore;
	e->cfg.pp = P;
	e->cfg.vpp = V;
}

/* The timeline's order is the framework's for every micro-batch count from
 * PP to 5 PP (below PP neither framework runs), and order_index inverts it. */
static void test_order_tables(void **state)
{
	(void)state;
	static ref_unit want[4096];
	for (int fw = 0; fw < 2; fw++)
		for (int64_t P = 1; P <= 6; P++)
			for (int64_t V = 2; V <= 4; V++)
				for (int64_t M = P; M <= 5 * P; M++) {
					mo_estimate e;
					fake_estimate(&e, fw == 0, P, V);
					mo_vpp_order o;
					timeline_order_of(&e, M, &o);
					size_t n = fw == 0 ? ref_megatron_table(P, V, M, want)
							   : ref_mindspore_table(P, V, M, want);
					assert_int_equal(n, (size_t)(M * V));
					for (size_t k = 0; k < n; k++) {
						int64_t mb, c;
						order_unit(&o, (int64_t)k, true, &mb, &c);
						if (mb != want[k].mb || c != want[k].chunk)
							fprintf(stderr, "%s P %lld V %lld M %lld unit %zu: (%lld, %lld), "
								"want (%lld, %lld)\n", fw ? "mindspore" : "megatron",
								(long long)P, (long long)V, (long long)M, k,
								(long long)mb, (long long)c, (long long)want[k].mb,
								(long long)want[k].chunk);
						assert_int_equal(mb, want[k].mb);
						assert_int_equal(c, want[k].chunk);
						order_unit(&o, (int64_t)k, false, &mb, &c);
						assert_int_equal(c, V - 1 - want[k].chunk);
						assert_int_equal(order_index(&o, false, mb, c), (int64_t)k);
					}
				}
}

/* One stage's units as the listing gives them: (forward?, micro-batch,
 * chunk) per run of events of one unit (the layer tells the chunk: 8
 * layers, PP 2, VPP 2, two a virtual stage). */
static size_t listed_units(const mo_estimate *e, size_t s, int64_t P, ref_unit *u, bool *fwd)
{
	size_t n = 0;
	for (size_t i = 0; i < mo_estimate_event_count(e, s); i++) {
		const mo_estimate_event *ev = mo_estimate_event_get(e, s, i);
		assert_true(isfinite(ev->start_seconds));
		if (ev->kind != MO_EV_FORWARD && ev->kind != MO_EV_BACKWARD)
			continue;
		bool f = ev->kind == MO_EV_FORWARD;
		int64_t chunk = ev->layer / 2 / P;
		if (n && fwd[n - 1] == f && u[n - 1].mb == ev->micro_batch && u[n - 1].chunk == chunk)
			continue;
		fwd[n] = f;
		u[n++] = (ref_unit){ev->micro_batch, chunk};
	}
	return n;
}

/* Interleaved steps of micro-batch counts no multiple of PP (Megatron's
 * own example, schedules.py:1222-1229 and model_parallel_config.py:441-447
 * at d98e8a64: PP 2, VPP 2, 5 micro-batches, group 3: rank 0 runs
 * micro-batches 0 1 2 0 1 2 3 4 3 4 of chunks 0 0 0 1 1 1 0 0 1 1; 7 on 2
 * stages, where MindSpore's first group takes the remainder; 6 on 4 stages,
 * which deadlocked the timeline's clock while it listed such steps chunk
 * after chunk per micro-batch): every stage lists its units in the
 * framework's order, the warm-up forwards (schedules.py:963-965: (PP - rank
 * - 1) * 2 + (VPP - 1) x group; MindSpore's bias_, (stage_num + offset) x
 * (chunk_num - 1) + (stage_num - stage - 1) x 2), then one forward one
 * backward, then the rest, and every event has a time. */
static void test_interleaved_order(void **state)
{
	(void)state;
	static const struct {
		int P, mbn;
	} cases[] = {{2, 5}, {2, 7}, {4, 6}, {2, 4}};
	static const int64_t megatron_5[10][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1},
						  {2, 1}, {3, 0}, {4, 0}, {3, 1}, {4, 1}};
	static ref_unit table[64], got[128];
	static bool fwd[128];
	for (int fw = 0; fw < 2; fw++)
		for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
			int P = cases[i].P, M = cases[i].mbn, V = 2;
			char text[4096];
			snprintf(text, sizeof text, model_fmt, 4 * P, "", M, fw ? "mindspore" : "pytorch",
				 "bfloat16", "", P, 1, P, V, "");
			mo_model *m = load_model(text);
			assert_non_null(m);
			mo_estimate *e = NULL;
			assert_int_equal(mo_estimate_run(&e, NULL, m, NULL), 0);
			size_t n = fw ? ref_mindspore_table(P, V, M, table)
				      : ref_megatron_table(P, V, M, table);
			if (!fw && M == 5)
				for (size_t k = 0; k < 10; k++) {
					assert_int_equal(table[k].mb, megatron_5[k][0]);
					assert_int_equal(table[k].chunk, megatron_5[k][1]);
				}
			int64_t group = fw ? P + M % P : (M % P ? ref_megatron_group(P, M) : P);
			for (int s = 0; s < P; s++) {
				int64_t W = (P - s - 1) * 2 + (V - 1) * group, N = (int64_t)n;
				W = W < N ? W : N;
				size_t listed = listed_units(e, (size_t)s, P, got, fwd);
				assert_int_equal(listed, 2 * n);
				size_t at = 0;
				for (int64_t k = 0; k < N + (N - W); k++) {
					/* the warm-up, then F(W + i), B(i), then the rest */
					bool f = k < W || (k < W + 2 * (N - W) && (k - W) % 2 == 0);
					int64_t u = k < W ? k : k < W + 2 * (N - W) ? (f ? W + (k - W) / 2 : (k - W) / 2)
								      : k - (N - W);
					int64_t chunk = f ? table[u].chunk : V - 1 - table[u].chunk;
					assert_int_equal(fwd[at], f);
					assert_int_equal(got[at].mb, table[u].mb);
					assert_int_equal(got[at].chunk, chunk);
					at++;
				}
				const mo_estimate_event *opt =
				    mo_estimate_event_get(e, (size_t)s, mo_estimate_event_count(e, (size_t)s) - 1);
				assert_int_equal(opt->kind, MO_EV_OPTIMIZER);
				assert_true(isfinite(opt->start_seconds) && opt->seconds >= 0);
			}
			mo_estimate_free(e);
			mo_model_free(m);
		}
}

/* Megatron's combined 1F1B (overlap_moe_expert_parallel_comm), PP 2, VPP
 * 2, 4 micro-batches, 8 layers (two a virtual stage): the last stage runs
 * one more warm-up forward (schedules.py:966-969 at d98e8a64: 2 x 0 + 1 x 2
 * + 1), then each steady forward beside its backward as
 * TransformerModelChunkSchedulePlan.run orders them
 * (model_chunk_schedule_plan.py:500-630): the backward's loss region,
 * forward layer i then backward layer n - 1 - i, the forward's loss
 * region; every event timed. */
static void test_combined_pairs(void **state)
{
	(void)state;
	static const char *const want[] = {
		"forward mb 0 layer 2", "forward mb 0 layer 3", "forward mb 1 layer 2",
		"forward mb 1 layer 3", "forward mb 0 layer 6", "forward mb 0 layer 7",
		"loss forward mb 0",
		/* pair 0: forward (mb 1, chunk 1), backward (mb 0, chunk 1) */
		"loss backward mb 0", "forward mb 1 layer 6", "backward mb 0 layer 7",
		"forward mb 1 layer 7", "backward mb 0 layer 6", "loss forward mb 1",
		/* pair 1: forward (mb 2, chunk 0), backward (mb 1, chunk 1) */
		"loss backward mb 1", "forward mb 2 layer 2", "backward mb 1 layer 7",
		"forward mb 2 layer 3", "backward mb 1 layer 6"};
	char text[4096];
	snprintf(text, sizeof text, model_fmt, 8, "", 4, "pytorch", "bfloat16",
		 "  overlap_moe_expert_parallel_comm: true\n", 2, 1, 2, 2, "");
	mo_model *m = load_model(text);
	assert_non_null(m);
	mo_estimate *e = NULL;
	assert_int_equal(mo_estimate_run(&e, NULL, m, NULL), 0);
	assert_int_equal(mo_estimate_stage_get(e, 1)->in_flight, 4);
	assert_true(mo_estimate_event_count(e, 1) > sizeof want / sizeof *want);
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char name[96];
		mo_estimate_event_name(mo_estimate_event_get(e, 1, i), name, sizeof name);
		assert_string_equal(name, want[i]);
	}
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < mo_estimate_event_count(e, s); i++)
			assert_true(isfinite(mo_estimate_event_get(e, s, i)->start_seconds));
	mo_estimate_free(e);
	mo_model_free(m);
}

/* mo_estimate_resolved_summary: every figure of mo_estimate_resolved (peak, its event and
 * buckets, in-flight count, bytes between steps, whether the listing is cut); no events
 * listed for a stage whose step does not fit the store (2^18 events over all stages), the
 * same events where it fits (the walk gives the figures there). */
static void test_summary(void **state)
{
	(void)state;
	static const char fmt[] =
		"model:\n  num_layers: %d\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
		"  num_attention_heads: 16\n  vocab_size: 32000\n  seq_length: 2048\n"
		"training:\n  micro_batch_size: 1\n  micro_batch_num: %lld\n"
		"parallel:\n  world_size: %d\n  pipeline_parallel: %d\n  virtual_pipeline: %d\n";
	static const struct {
		int layers, pp, vpp;
		long long mbn;
		bool fits;
	} cases[] = {{8, 4, 1, 8, true},	  {8, 4, 2, 16, true},	   {64, 8, 2, 4096, false},
		     {16, 4, 1, 2147483647LL, false}, {64, 64, 1, 2048, false}, {64, 64, 1, 64, true}};
	mo_config *c = load_config("recompute:\n  mode: None\n");
	assert_non_null(c);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[1024];
		snprintf(text, sizeof text, fmt, cases[i].layers, cases[i].mbn, cases[i].pp,
			 cases[i].pp, cases[i].vpp);
		mo_model *m = load_model(text);
		assert_non_null(m);
		mo_diags *d = NULL;
		mo_resolved *r = NULL;
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_validate_resolve(d, c, m, &r), 0);
		assert_non_null(r);
		mo_estimate *listed = NULL, *summary = NULL;
		assert_int_equal(mo_estimate_resolved(&listed, r, NULL), 0);
		assert_int_equal(mo_estimate_resolved_summary(&summary, r, NULL), 0);
		assert_int_equal(mo_estimate_timeline_truncated(listed),
				 mo_estimate_timeline_truncated(summary));
		assert_int_equal(mo_estimate_timeline_truncated(listed), !cases[i].fits);
		for (size_t s = 0; s < (size_t)cases[i].pp; s++) {
			const mo_estimate_stage *a = mo_estimate_stage_get(listed, s),
						*b = mo_estimate_stage_get(summary, s);
			assert_int_equal(a->peak_bytes, b->peak_bytes);
			assert_memory_equal(a->peak_by_bucket, b->peak_by_bucket,
					    sizeof a->peak_by_bucket);
			assert_string_equal(a->peak_event, b->peak_event);
			assert_int_equal(a->in_flight, b->in_flight);
			assert_int_equal(a->between_steps_bytes, b->between_steps_bytes);
			assert_true(mo_estimate_event_count(listed, s) > 0);
			assert_int_equal(mo_estimate_event_count(summary, s),
					 cases[i].fits ? mo_estimate_event_count(listed, s) : 0);
		}
		mo_estimate_free(listed);
		mo_estimate_free(summary);
		mo_resolved_free(r);
		mo_diags_free(d);
		mo_model_free(m);
	}
	mo_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_models),
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_long_step),
		cmocka_unit_test(test_order_tables),
		cmocka_unit_test(test_interleaved_order),
		cmocka_unit_test(test_combined_pairs),
		cmocka_unit_test(test_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
