/* The `mindspore` rules against the measured Ascend 910B peaks of
 * tests/calibration/ascend-910b.md (MindSpore Transformers PyNative,
 * max_memory_allocated on the busiest device): each figure is a test with
 * its 3% tolerance (held-out runs: 5%). The model files and configs are the YAML files of tests/calibration/
 * (run from the repository root, as tests/run.sh does); a preset name is
 * used where one models the run exactly. Rows marked open are figures the
 * rules do not reach yet (notes/calibration.md says why): they are skipped,
 * with the current error printed, so they turn into checks when fixed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"

#define CAL "tests/calibration/"
#define TOL 0.03

typedef struct cal_row {
	const char *what;
	const char *model;  /* preset name, or a file under tests/calibration/ */
	const char *config; /* a file under tests/calibration/ */
	size_t stage;
	double measured_mib;
	int open;           /* not reached yet: skipped (notes/calibration.md) */
	double tol;         /* TOL (3%); held-out rows HELDOUT (5%, the target) */
} cal_row;

#define HELDOUT 0.05

/* One row per pipeline stage of a DeepSeek-V4-style run whose YAML is both
 * model and config; o0..o3 mark open stages. */
#define DSV4(what, file, m0, m1, m2, m3, o0, o1, o2, o3)                                   \
	{"C " what " stage 0", "dsv4/" file, "dsv4/" file, 0, m0, o0, HELDOUT},            \
	{"C " what " stage 1", "dsv4/" file, "dsv4/" file, 1, m1, o1, HELDOUT},            \
	{"C " what " stage 2", "dsv4/" file, "dsv4/" file, 2, m2, o2, HELDOUT},            \
	{"C " what " stage 3", "dsv4/" file, "dsv4/" file, 3, m3, o3, HELDOUT}

static const cal_row k_rows[] = {
	{"A MHA pp1", "std", "none.yaml", 0, 24191.1, 0, TOL},
	{"A GQA pp1", "std-gqa", "none.yaml", 0, 23039.1, 0, TOL},
	{"A MHA pp2 stage 0", "std-mha-pp2.yaml", "none.yaml", 0, 15946.1, 1, TOL},
	{"A MHA pp2 stage 1", "std-mha-pp2.yaml", "none.yaml", 1, 19227.3, 0, TOL},
	{"A GQA pp2 stage 0", "std-gqa-pp2.yaml", "none.yaml", 0, 15116.0, 1, TOL},
	{"A GQA pp2 stage 1", "std-gqa-pp2.yaml", "none.yaml", 1, 18459.3, 0, TOL},
	{"B 2 layers full", "dsv3-2l.yaml", "full-0-1.yaml", 0, 11733.0, 0, TOL},
	{"B 6 layers full", "dsv3-6l.yaml", "full-0-5.yaml", 0, 13213.2, 0, TOL},
	{"B 4 layers full seq 2048", "dsv3-4l-s2048.yaml", "full-0-3.yaml", 0, 8810.5, 0, TOL},
	{"B 4 layers none", "dsv3-4l.yaml", "none.yaml", 0, 15285.4, 0, TOL},
	{"B 4 layers select self_attention", "dsv3-4l.yaml", "select-attn-0-3.yaml", 0,
	 14716.4, 0, TOL},
	/* held out until their allocation ledgers were read to write the
	 * fp32-parameter rules (notes/ledger-decode-dsv3-mini.md) */
	{"B 8 layers select self_attention", "dsv3-8l.yaml", "select-attn-0-7.yaml", 0, 18828.2,
	 0, TOL},
	{"B 8 layers select mlp", "dsv3-8l.yaml", "select-mlp-0-7.yaml", 0, 15764.7, 0, TOL},
	{"B 8 layers select feed_forward (no cell matched)", "dsv3-8l.yaml", "select-ffn-0-7.yaml",
	 0, 19967.3, 0, TOL},
	/* Held out: the same family measured by the same authors, not used to fit
	 * any rule (notes/calibration.md "Held-out check"; table.sh --heldout). */
	{"held-out B 8 layers full", "dsv3-8l.yaml", "full-0-7.yaml", 0, 13953.3, 0, HELDOUT},
	{"held-out B 4 layers EP 2 full", "dsv3-4l-ep2.yaml", "full-0-3.yaml", 0, 12474.1, 0,
	 HELDOUT},
	{"held-out B 4 layers CP 2 colossal full", "dsv3-4l-cp2.yaml", "full-0-3.yaml", 0, 12433.0,
	 0, HELDOUT},
	{"held-out B 4 layers CP 2 ulysses full", "dsv3-4l-cp2.yaml", "full-0-3.yaml", 0, 12441.0,
	 0, HELDOUT},
	{"held-out B 8 layers CP 2 none", "dsv3-8l-cp2.yaml", "none.yaml", 0, 20119.4, 0, HELDOUT},
	/* C: DeepSeek-V4-style runs (mHC x4, Muon, DSA / CSA with compress
	 * ratios), pp 4 / FSDP 2 / EP 2, 8 layers, seq 4096, 4 micro-batches:
	 * the launcher YAMLs under tests/calibration/dsv4/ (origin in each
	 * header); 5% per stage. Open rows (notes/dsv4.md): under full
	 * recompute the first three stages keep more than the checkpointed
	 * streams (not explained yet); without recompute the layers' kept
	 * tensors are ~560 MiB per layer and micro-batch above the measured
	 * residency; the unfused runs carry the fused runs' gap (their
	 * difference to the fused runs is within 0.6% on stages 1 and 2). */
	DSV4("fused full recompute", "fused-pp4-full.yaml", 24153.3, 14641.7, 14097.7, 23508.0,
	     1, 1, 1, 0),
	DSV4("fused no recompute", "fused-pp4-none.yaml", 30395.0, 21019.4, 17799.9, 27822.0, 1,
	     1, 1, 0),
	DSV4("unfused full recompute", "unfused-pp4-full.yaml", 50187.9, 43940.0, 43407.1,
	     47888.1, 1, 1, 1, 1),
	{"C fused full recompute MTP 1 stage 3", "dsv4/fused-pp4-full-mtp1.yaml",
	 "dsv4/fused-pp4-full-mtp1.yaml", 3, 39898.0, 0, HELDOUT},
};

static mo_model *load(const char *name, mo_diags *d)
{
	mo_model *m = NULL;
	mo_error err = {0};
	if (!strstr(name, ".yaml")) {
		assert_int_equal(mo_model_preset(&m, name, &err), 0);
		return m;
	}
	char path[256];
	size_t n;
	snprintf(path, sizeof path, CAL "%s", name);
	char *text = test_read_file(path, &n);
	int rc = mo_model_load(&m, d, text, n, path, NULL, &err);
	if (rc != 0)
		fprintf(stderr, "%s: %s\n", path, err.text);
	free(text);
	assert_int_equal(rc, 0);
	return m;
}

/* One estimate with what it was made from (freed by est_free). */
typedef struct est_run {
	mo_diags *d;
	mo_config *c;
	mo_model *m;
	mo_estimate *e;
} est_run;

static void est_open(est_run *r, const char *model, const char *config)
{
	mo_error err = {0};
	char path[256];
	size_t n;
	memset(r, 0, sizeof *r);
	assert_int_equal(mo_diags_new(&r->d), 0);
	r->m = load(model, r->d);
	snprintf(path, sizeof path, CAL "%s", config);
	char *text = test_read_file(path, &n);
	assert_int_equal(mo_config_parse(&r->c, r->d, text, n, path, NULL, &err), 0);
	free(text);
	assert_int_equal(mo_validate(r->d, r->c, r->m), 0);
	assert_int_equal(mo_estimate_run(&r->e, r->c, r->m, &err), 0);
}

static void est_free(est_run *r)
{
	mo_estimate_free(r->e);
	mo_config_free(r->c);
	mo_model_free(r->m);
	mo_diags_free(r->d);
}

/* The estimated allocated peak (MiB) of one row's stage. */
static double estimate_mib(const cal_row *r)
{
	est_run run;
	est_open(&run, r->model, r->config);
	const mo_estimate_stage *st = mo_estimate_stage_get(run.e, r->stage);
	assert_non_null(st);
	double mib = (double)st->peak_bytes / 1048576.0;
	est_free(&run);
	return mib;
}

static void test_row(void **state)
{
	const cal_row *r = *state;
	double est = estimate_mib(r);
	double err = (est - r->measured_mib) / r->measured_mib;
	printf("  %-42s measured %9.1f MiB  estimated %9.1f MiB  %+6.2f%%%s\n", r->what,
	       r->measured_mib, est, err * 100.0, r->open ? "  (open)" : "");
	if (r->open)
		skip();
	assert_true(err <= r->tol && err >= -r->tol);
}

/* The per-layer law of ascend-910b.md A (runs at 1, 2, 4, 8 layers): each
 * dense layer adds 1240.1 MiB = 512.0 persistent + 728.0 kept (MHA); GQA
 * adds 144.0 MiB less, of which 48.0 are its smaller k/v projections'
 * persistent bytes (6,291,456 params x 16 B / FSDP 2), so it keeps 632.0. */
static double layer_kept_mib(const char *preset)
{
	mo_model *m = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	assert_int_equal(mo_model_preset(&m, preset, &err), 0);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	double v = (double)mo_estimate_layer_get(e, 0)->activation_bytes / 1048576.0;
	mo_estimate_free(e);
	mo_model_free(m);
	return v;
}

static void test_layer_law(void **state)
{
	(void)state;
	double mha = layer_kept_mib("std"), gqa = layer_kept_mib("std-gqa");
	printf("  dense layer kept: MHA %.2f MiB (law 728.0), GQA %.2f MiB (law 632.0)\n", mha,
	       gqa);
	assert_true(mha > 728.0 * (1 - TOL) && mha < 728.0 * (1 + TOL));
	assert_true(gqa > 632.0 * (1 - TOL) && gqa < 632.0 * (1 + TOL));
}

/* mHC (hyper_connection.py, transformer_layer.py
 * HyperConnectionTransformerLayer): a fully recomputed layer keeps only its
 * input, the packed residual streams [s, b, hc_mult x h] in the compute
 * dtype: 4096 x 4 x 4096 x 2 B = 128 MiB for the pp 4 runs, 4 times the
 * [s, b, h] input of the same layer without hyper-connections. */
static void test_mhc_checkpoint_input(void **state)
{
	(void)state;
	est_run run;
	est_open(&run, "dsv4/fused-pp4-full.yaml", "dsv4/fused-pp4-full.yaml");
	for (size_t l = 0; l < 8; l++)
		assert_int_equal(mo_estimate_layer_get(run.e, l)->activation_bytes,
				 4096ull * 4 * 4096 * 2);
	est_free(&run);
}

/* The small-op sparse attention (csa.py:464-527): the unfused run differs
 * from the fused one only in apply_dsa_kernel_fusion, and on stages 1 and 2
 * both peak in a recomputed layer's backward, so the measured difference
 * (29298.3 / 29309.4 MiB) is the unfused layer's saves and backward
 * gradients less the fused kernel's saves and its measured backward
 * (gradients and workspace, 1312 MiB): within 6%. The unfused side lacks
 * ~1470 MiB: its backward's buffers beyond kv_g's three gradients, which
 * the source does not decide (notes/dsv4.md). */
static void test_unfused_difference(void **state)
{
	(void)state;
	static const double k_measured[] = {29298.3, 29309.4};
	for (size_t s = 1; s <= 2; s++) {
		cal_row fused = {.model = "dsv4/fused-pp4-full.yaml",
				 .config = "dsv4/fused-pp4-full.yaml", .stage = s};
		cal_row unfused = {.model = "dsv4/unfused-pp4-full.yaml",
				   .config = "dsv4/unfused-pp4-full.yaml", .stage = s};
		double d = estimate_mib(&unfused) - estimate_mib(&fused);
		printf("  stage %zu unfused - fused %.1f MiB (measured %.1f)\n", s, d,
		       k_measured[s - 1]);
		assert_true(fabs(d - k_measured[s - 1]) <= 0.06 * k_measured[s - 1]);
	}
}

/* What a layer of the no-recompute run keeps per micro-batch, against the
 * residency the measurers read per layer (alloc at the layer's forward exit
 * minus at its entry, median of 12 windows, MindSpore's memory tracker and
 * the allocator counter agreeing to 0.03%: GitHub suhaibo666/autoparallel
 * docs/kernel_workspace_2026-07-29.md section 5): ratio 0 dense 2235.1, ratio
 * 4 2355.3, ratio 128 2124.2 MiB. The layer's output streams (the next
 * layer's input, counted there) replace its input streams, the same size.
 * Within 10%: what is left is not attributed (notes/dsv4.md). */
static void test_layer_residency(void **state)
{
	(void)state;
	static const double k_measured[] = {2235.1, 2355.3, 2124.2};
	est_run run;
	est_open(&run, "dsv4/fused-pp4-none.yaml", "dsv4/fused-pp4-none.yaml");
	for (size_t l = 0; l < 3; l++) {
		double kept = (double)mo_estimate_layer_get(run.e, (int64_t)l)->activation_bytes /
			      1048576.0;
		printf("  layer %zu kept %.1f MiB (measured residency %.1f) %+.2f%%\n", l, kept,
		       k_measured[l], (kept - k_measured[l]) / k_measured[l] * 100.0);
		assert_true(fabs(kept - k_measured[l]) <= 0.10 * k_measured[l]);
	}
	est_free(&run);
}

/* The fused sparse flash-MLA's backward at ratio 4 (MindSpore memory
 * tracker, GitHub suhaibo666/autoparallel docs/kernel_workspace_2026-07-29.md
 * sections 4 and 6.3): the output's gradient in, the kernel's gradients out
 * (query 256, kv head 4, compressed kv 1, indexer query 64, indexer key
 * 0.25, weights 1 MiB at 4096 tokens) and a one-tick workspace of 730 MiB,
 * at the backward of every ratio-4 layer (layers 1 and 3 of stages 0 and 1).
 * The kernels of ratios 0 and 128 (csa.py:132-165) hold the output's
 * gradient and return the query's, the kv head's and (ratio 128) the 32
 * compressed rows' gradients: no workspace of theirs was measured apart. */
static void test_sparse_mla_backward(void **state)
{
	(void)state;
	const uint64_t mib = 1048576, grads = 256 * mib + 256 * mib + 4 * mib + 1 * mib +
					       64 * mib + mib / 4 + 1 * mib;
	const uint64_t ws = 209715200ull + 4096ull * 135680;
	est_run run;
	est_open(&run, "dsv4/fused-pp4-full.yaml", "dsv4/fused-pp4-full.yaml");
	assert_int_equal(ws, 730 * mib);
	for (size_t s = 0; s < 2; s++) {
		size_t n = mo_estimate_event_count(run.e, s), seen = 0;
		for (size_t i = 0; i < n; i++) {
			const mo_estimate_event *ev = mo_estimate_event_get(run.e, s, i);
			if (ev->kind != MO_EV_BACKWARD)
				continue;
			uint64_t plain = 256 * mib + 256 * mib + 4 * mib +
					 (ev->layer == 0 ? 0 : 32ull * 512 * 2);
			uint64_t want = ev->layer % 2 == 1 ? grads + ws : plain;
			assert_int_equal(ev->bytes[MO_EST_WORKSPACES], want);
			seen++;
		}
		assert_true(seen > 0);
	}
	est_free(&run);
}

/* Under pipeline parallelism HyperParallel's PipelineStage allocates, at a
 * chunk's forward send, the buffer its output's gradient is received into
 * and drops it after that micro-batch's backward: on stages 1 and 2 of the
 * pp 4 run (3 and 2 micro-batches in flight at the first backward) each
 * in-flight micro-batch holds the two layers' checkpointed streams and that
 * buffer, 3 x 128 MiB. */
static void test_pp_grad_recv(void **state)
{
	(void)state;
	est_run run;
	est_open(&run, "dsv4/fused-pp4-full.yaml", "dsv4/fused-pp4-full.yaml");
	for (size_t s = 1; s <= 2; s++) {
		const mo_estimate_stage *st = mo_estimate_stage_get(run.e, s);
		assert_non_null(st);
		assert_int_equal(st->activations_bytes, (4 - s) * 3ull * 4096 * 4 * 4096 * 2);
	}
	est_free(&run);
}

/* Per layer, what the measurers' allocation ledgers show kept for backward
 * (notes/ledger-decode-dsv3-mini.md: every row released during backward,
 * summed and checked against the allocator's running total): the DSv3-mini's
 * dense layer 0 and MoE layer 1, 8 layers, three recompute settings. The
 * estimate leaves out ~0.6 MiB per MoE layer (the auxiliary loss's small
 * [tokens, E] planes), hence 0.2%. */
static void test_ledger_layers(void **state)
{
	(void)state;
	static const struct {
		const char *config;
		double dense_mib, moe_mib;
	} k_ledger[] = {
		{"select-ffn-0-7.yaml", 440.05, 828.42},
		{"select-attn-0-7.yaml", 297.54, 685.91},
		{"select-mlp-0-7.yaml", 254.55, 254.55},
	};
	for (size_t i = 0; i < sizeof k_ledger / sizeof *k_ledger; i++) {
		est_run run;
		est_open(&run, "dsv3-8l.yaml", k_ledger[i].config);
		double dense = (double)mo_estimate_layer_get(run.e, 0)->activation_bytes / 1048576.0;
		double moe = (double)mo_estimate_layer_get(run.e, 1)->activation_bytes / 1048576.0;
		printf("  ledger %-22s layer 0 %.2f MiB (measured %.2f), layer 1 %.2f (%.2f)\n",
		       k_ledger[i].config, dense, k_ledger[i].dense_mib, moe, k_ledger[i].moe_mib);
		assert_true(fabs(dense - k_ledger[i].dense_mib) <= 0.002 * k_ledger[i].dense_mib);
		assert_true(fabs(moe - k_ledger[i].moe_mib) <= 0.002 * k_ledger[i].moe_mib);
		est_free(&run);
	}
}

/* The tests of single rules, after the rows. */
static const struct {
	const char *name;
	CMUnitTestFunction fn;
} k_rules[] = {
	{"A per-layer law", test_layer_law},
	{"B per-layer ledgers", test_ledger_layers},
	{"C mHC checkpoint input", test_mhc_checkpoint_input},
	{"C unfused - fused difference", test_unfused_difference},
	{"C pipeline gradient receive buffers", test_pp_grad_recv},
	{"C per-layer residency", test_layer_residency},
	{"C fused sparse attention backward", test_sparse_mla_backward},
};

int main(void)
{
	enum { N_ROWS = sizeof k_rows / sizeof *k_rows, N_RULES = sizeof k_rules / sizeof *k_rules };
	struct CMUnitTest t[N_ROWS + N_RULES];
	memset(t, 0, sizeof t);
	for (size_t i = 0; i < N_ROWS; i++) {
		t[i].name = k_rows[i].what;
		t[i].test_func = test_row;
		t[i].initial_state = (void *)(uintptr_t)&k_rows[i];
	}
	for (size_t i = 0; i < N_RULES; i++) {
		t[N_ROWS + i].name = k_rules[i].name;
		t[N_ROWS + i].test_func = k_rules[i].fn;
	}
	return cmocka_run_group_tests(t, NULL, NULL);
}
