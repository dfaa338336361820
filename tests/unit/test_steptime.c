/* The step time against measured iteration times: every Megatron-LM CI run
 * kept in tests/data/megatron/steptime (measured.tsv: the median
 * `iteration-time` of the logged steps after warm-up, read from the run's
 * golden_values_dev_dgx_<device>.json; source path and commit in each row)
 * estimated from its model file (memopt import of the run's
 * model_config.yaml plus the device of the golden values) and its config
 * (<case>.config.yaml, else none.config.yaml). Each run must stay within
 * MAX_ERROR and the median within MEDIAN_ERROR (notes/step-time.md has the
 * table and what is still missing; the target is 15% / 7%). Also: the
 * breakdown adds up to the step; the Megatron-LM README's H100 MFU table
 * (mfu_table.tsv): every row within MFU_ERROR, their median within
 * MFU_MEDIAN_ERROR, the pipelined rows (PP >= 4) within 10%; MindFormers' published tokens/s/p on Ascend
 * (tests/data/mindformers-steptime) within ASCEND_ERROR; and calibrate
 * finds a launch cost it is given back from the estimates it made. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memopt/memopt.h"

#define DIR "tests/data/megatron/steptime/"
#define MAX_RUNS 64
#define MAX_ERROR 0.45
#define MEDIAN_ERROR 0.19
#define MFU_ERROR 0.30
#define MFU_MEDIAN_ERROR 0.10
#define ASCEND_ERROR 0.30

/* The estimate of the model file at model_path under the config text ct
 * (named config_path in messages). */
static mo_estimate *estimate_config_text(const char *model_path, const char *ct,
					 const char *config_path)
{
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_config *c = NULL;
	mo_estimate *e = NULL;
	mo_error err = {0};
	char *mt = test_read_file(model_path, NULL);
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, mt, strlen(mt), model_path, NULL, &err), 0);
	assert_int_equal(mo_config_parse(&c, d, ct, strlen(ct), config_path, NULL, &err), 0);
	if (mo_diags_errors(d) > 0)
		fail_msg("%s / %s: %s", model_path, config_path, mo_diags_get(d, 0)->message);
	assert_int_equal(mo_estimate_run(&e, c, m, &err), 0);
	mo_config_free(c);
	mo_model_free(m);
	mo_diags_free(d);
	free(mt);
	return e;
}

static mo_estimate *estimate_files(const char *model_path, const char *config_path)
{
	char *ct = test_read_file(config_path, NULL);
	mo_estimate *e = estimate_config_text(model_path, ct, config_path);
	free(ct);
	return e;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void config_of(char *out, size_t n, const char *run)
{
	snprintf(out, n, DIR "%s.config.yaml", run);
	FILE *f = fopen(out, "rb");
	if (f)
		fclose(f);
	else
		snprintf(out, n, DIR "none.config.yaml");
}

static void check_breakdown(const mo_estimate_time *t, const char *run)
{
	double sum = t->compute_seconds + t->comm_tp_seconds + t->comm_cp_seconds +
		     t->comm_ep_seconds + t->comm_pp_seconds + t->comm_dp_seconds +
		     t->bubble_seconds + t->optimizer_seconds + t->recompute_seconds +
		     t->swap_seconds + t->fixed_seconds;
	if (fabs(sum - t->step_seconds) > 1e-9 * t->step_seconds + 1e-12)
		fail_msg("%s: breakdown %.6f s != step %.6f s", run, sum, t->step_seconds);
	assert_true(t->mfu > 0 && t->mfu < 1);
	assert_true(t->tokens_per_second_per_device > 0);
}

/* One row of measured.tsv: case, device, steps, n, median seconds. */
static double run_error(const char *line, char *name, size_t name_n)
{
	char run[160], dev[16], model[320], config[320];
	double measured;
	if (sscanf(line, "%159s %15s %*s %*s %lf", run, dev, &measured) != 3)
		fail_msg("bad measured.tsv line: %s", line);
	snprintf(model, sizeof model, DIR "%s.%s.yaml", run, dev);
	config_of(config, sizeof config, run);
	mo_estimate *e = estimate_files(model, config);
	const mo_estimate_time *t = mo_estimate_get_time(e);
	assert_non_null(t);
	assert_true(t->step_seconds == mo_estimate_get_cost(e)->step_seconds);
	check_breakdown(t, run);
	double err = (t->step_seconds - measured) / measured;
	snprintf(name, name_n, "%s (%s)", run, dev);
	printf("  %-72s measured %.4f s estimated %.4f s %+.1f%% (%s)\n", name, measured,
	       t->step_seconds, err * 100, t->largest_term);
	mo_estimate_free(e);
	return err;
}

static void test_ci_runs(void **state)
{
	(void)state;
	char *text = test_read_file(DIR "measured.tsv", NULL);
	double errs[MAX_RUNS];
	size_t n = 0;
	char *save = NULL;
	char *line = strtok_r(text, "\n", &save); /* header */
	while ((line = strtok_r(NULL, "\n", &save)) && n < MAX_RUNS) {
		char name[200];
		double err = run_error(line, name, sizeof name);
		if (fabs(err) > MAX_ERROR)
			fail_msg("%s: %+.1f%%, beyond %.0f%%", name, err * 100, MAX_ERROR * 100);
		errs[n++] = fabs(err);
	}
	free(text);
	assert_true(n >= 12);
	qsort(errs, n, sizeof *errs, cmp_double);
	double median = n % 2 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2;
	printf("  %zu runs, median |error| %.1f%%\n", n, median * 100);
	assert_true(median <= MEDIAN_ERROR);
}

static mo_estimate *estimate_training_yaml(const char *path)
{
	return estimate_files(path, path);
}

/* One row of mfu_table.tsv: model heads hidden layers tp pp dp gpus batch
 * tflops mfu. */
static double mfu_row(const char *line)
{
	char name[32], file[128];
	int pp;
	double mfu;
	if (sscanf(line, "%31s %*s %*s %*s %*s %d %*s %*s %*s %*s %lf", name, &pp, &mfu) != 3)
		fail_msg("bad mfu_table.tsv line: %s", line);
	char lower[32];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof lower; i++)
		lower[i] = name[i] == '.' ? '_' : (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	lower[i] = '\0';
	snprintf(file, sizeof file, DIR "mfu_%s.yaml", lower);
	mo_estimate *e = estimate_files(file, DIR "none.config.yaml");
	const mo_estimate_time *t = mo_estimate_get_time(e);
	double err = (t->mfu - mfu) / mfu;
	printf("  %-6s PP %2d published MFU %.2f estimated %.3f %+.1f%%\n", name, pp, mfu, t->mfu,
	       err * 100);
	if (fabs(err) > (pp >= 4 ? 0.10 : MFU_ERROR))
		fail_msg("%s: MFU %+.1f%% off the published %.2f", name, err * 100, mfu);
	mo_estimate_free(e);
	return fabs(err);
}

static void test_mfu_table(void **state)
{
	(void)state;
	char *text = test_read_file(DIR "mfu_table.tsv", NULL);
	char *save = NULL;
	size_t n = 0;
	double errs[16];
	char *line = strtok_r(text, "\n", &save); /* header */
	while ((line = strtok_r(NULL, "\n", &save)) && n < 16)
		errs[n++] = mfu_row(line);
	free(text);
	assert_int_equal(n, 9);
	qsort(errs, n, sizeof *errs, cmp_double);
	printf("  MFU median |error| %.1f%%\n", errs[n / 2] * 100);
	assert_true(errs[n / 2] <= MFU_MEDIAN_ERROR);
}

static void test_ascend_published(void **state)
{
	(void)state;
	char *text = test_read_file("tests/data/mindformers-steptime/published.tsv", NULL);
	char *save = NULL;
	size_t n = 0;
	char *line = strtok_r(text, "\n", &save); /* header */
	while ((line = strtok_r(NULL, "\n", &save))) {
		char cfg[64], path[160];
		double tps;
		if (sscanf(line, "%63s %lf", cfg, &tps) != 2)
			fail_msg("bad published.tsv line: %s", line);
		snprintf(path, sizeof path, "tests/data/mindformers/r1.3.0/%s.yaml", cfg);
		mo_estimate *e = estimate_training_yaml(path);
		double est = mo_estimate_get_time(e)->tokens_per_second_per_device;
		double err = (est - tps) / tps;
		printf("  %-22s published %.0f tokens/s/p estimated %.0f %+.1f%%\n", cfg, tps, est,
		       err * 100);
		if (fabs(err) > ASCEND_ERROR)
			fail_msg("%s: %+.1f%% off the published %.0f tokens/s/p", cfg, err * 100, tps);
		mo_estimate_free(e);
		n++;
	}
	free(text);
	assert_true(n >= 3);
}

/* The model file with its `device: h100 ...` line replaced by a map that
 * sets launch_us. */
static char *with_launch(const char *text, double launch_us)
{
	const char *d = strstr(text, "\ndevice: h100");
	assert_non_null(d);
	size_t head = (size_t)(d - text) + 1, n = head + 128;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%.*sdevice:\n  preset: h100\n  launch_us: %g\n", (int)head, text,
		 launch_us);
	return out;
}

static mo_model *load_model_text(const char *text, mo_diags *d)
{
	mo_model *m = NULL;
	mo_error err = {0};
	assert_int_equal(mo_model_load(&m, d, text, strlen(text), "m.yaml", NULL, &err), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	return m;
}

/* Runs "measured" with launch_us 120 (the estimate's own step times):
 * calibrating launch_us alone from the preset's 150 finds 120 again. */
static void test_calibrate_recovers(void **state)
{
	(void)state;
	static const char *const runs[] = {"gpt3_mcore_te_tp2_pp2_cp2",
					   "gpt3_mcore_te_tp1_pp4_vp1",
					   "gpt3_mcore_tp2_pp2_ep2_etp2_te_4experts2parallel"};
	mo_calibrate_run in[3];
	mo_model *models[3];
	mo_diags *d = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	for (size_t i = 0; i < 3; i++) {
		char path[256];
		snprintf(path, sizeof path, DIR "%s.h100.yaml", runs[i]);
		char *text = test_read_file(path, NULL), *shifted = with_launch(text, 120.0);
		mo_model *truth = load_model_text(shifted, d);
		mo_estimate *e = NULL;
		assert_int_equal(mo_estimate_run(&e, NULL, truth, &err), 0);
		models[i] = load_model_text(text, d);
		in[i] = (mo_calibrate_run){models[i], NULL, mo_estimate_get_time(e)->step_seconds};
		mo_estimate_free(e);
		mo_model_free(truth);
		free(shifted);
		free(text);
	}
	unsigned which = 0;
	assert_int_equal(mo_calibrate_constant_parse(&which, "launch_us"), 0);
	mo_calibrate_result r;
	assert_int_equal(mo_calibrate(&r, in, 3, which, &err), 0);
	printf("  launch_us %.1f -> %.1f; median |error| %.2f%% -> %.2f%%\n", r.before[MO_CALIB_LAUNCH],
	       r.after[MO_CALIB_LAUNCH], r.median_error_before * 100, r.median_error_after * 100);
	assert_true(fabs(r.after[MO_CALIB_LAUNCH] - 120.0) < 3.0);
	assert_true(r.median_error_after < 0.01 && r.median_error_before > 0.05);
	assert_true(r.after[MO_CALIB_GEMM] == r.before[MO_CALIB_GEMM]);
	char *yaml = mo_calibrate_device_yaml(&r);
	assert_non_null(strstr(yaml, "preset: h100"));
	free(yaml);
	mo_calibrate_result_free(&r);
	/* runs on two devices are refused */
	mo_model *a100 = NULL;
	assert_int_equal(mo_model_preset(&a100, "llama2-7b", &err), 0);
	in[1].model = a100;
	assert_int_equal(mo_calibrate(&r, in, 2, which, &err), -1);
	assert_int_equal(err.code, MO_ERR_USAGE);
	mo_model_free(a100);
	for (size_t i = 0; i < 3; i++)
		mo_model_free(models[i]);
	mo_diags_free(d);
}

/* `text` with its first `from` replaced by `to` (caller frees). */
static char *text_replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	assert_non_null(at);
	size_t head = (size_t)(at - text), n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%.*s%s%s", (int)head, text, to, at + strlen(from));
	return out;
}

static mo_estimate_time time_of_text(const char *text)
{
	mo_diags *d = NULL;
	mo_error err = {0};
	mo_estimate *e = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model *m = load_model_text(text, d);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	mo_estimate_time t = *mo_estimate_get_time(e);
	mo_estimate_free(e);
	mo_model_free(m);
	mo_diags_free(d);
	return t;
}

/* Without gradient-accumulation fusion Megatron's DDP hook adds each
 * parameter's gradient into main_grad once a micro-batch: the 7B TP 4 run
 * (2 micro-batches, fp32 main_grad, bf16 gradients) pays 2 x 10 B per
 * local parameter at the H100's streaming bandwidth (3015 GB/s). */
static void check_grad_accumulation(void)
{
	/* without the NaN fills, whose weight gradients the fusion removes too */
	char *run = test_read_file(DIR "gpt3_7b_tp4_pp1_memory_speed.h100.yaml", NULL);
	char *fused_off = text_replace(run, "deterministic_mode: true", "deterministic_mode: false");
	char *fused_on = text_replace(fused_off, "gradient_accumulation_fusion: false",
				      "gradient_accumulation_fusion: true");
	mo_diags *d = NULL;
	mo_error err = {0};
	mo_estimate *e = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model *m = load_model_text(fused_off, d);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	double params = (double)mo_estimate_stage_get(e, 0)->gradients_bytes / 4.0;
	mo_estimate_time off = *mo_estimate_get_time(e), on = time_of_text(fused_on);
	double expect = 2.0 * params * 10.0 / 3015e9;
	printf("  7B TP 4 main_grad adds: %.4f s (expected %.4f s)\n",
	       off.memory_bound_seconds - on.memory_bound_seconds, expect);
	assert_true(fabs(off.memory_bound_seconds - on.memory_bound_seconds - expect) < 1e-3 * expect);
	assert_true(off.gemm_seconds == on.gemm_seconds);
	mo_estimate_free(e);
	mo_model_free(m);
	mo_diags_free(d);
	free(fused_on);
	free(fused_off);
	free(run);
}

/* --deterministic-mode's NaN fill of what PyTorch's empty() returns. On
 * the 7B TP 4 run (no sequence parallelism; 2 micro-batches of t = 16384
 * tokens, hidden 4096, 8 K/V groups of 128, FFN 16384, bf16, no gradient
 * accumulation fusion), per layer and micro-batch Transformer Engine
 * allocates, in columns of t: the input norm's output (4096) and input
 * gradient (4096); qkv's output (1536 = (4096 + 2 x 1024) / 4), input
 * gradient (4096) and weight gradient (4096 x 1536 elements); the fused
 * attention's output (1024) and q / k / v gradients (1536); proj's output
 * (4096), input gradient (1024) and weight gradient (1024 x 4096); the
 * second norm's (4096 + 4096); fc1's output (4096), input gradient (4096)
 * and weight gradient (4096 x 4096); fc2's output (4096), input gradient
 * (4096) and weight gradient (4096 x 4096); the final norm once a
 * micro-batch. One write each at 3015 GB/s (the norms' and attention's
 * statistics, 24 columns of 48,768 a layer, are inside the tolerance). */
static void check_deterministic_fill(void)
{
	char *on = test_read_file(DIR "gpt3_7b_tp4_pp1_memory_speed.h100.yaml", NULL);
	char *off = text_replace(on, "deterministic_mode: true", "deterministic_mode: false");
	mo_estimate_time a = time_of_text(on), b = time_of_text(off);
	double t = 16384, col = 2.0 * t;
	double cols = (4096 + 4096) + (1536 + 4096) + (1024 + 1536) + (4096 + 1024) +
		      (4096 + 4096) + (4096 + 4096) + (4096 + 4096);
	double weights = 2.0 * (4096.0 * 1536 + 1024.0 * 4096 + 2 * 4096.0 * 4096);
	double layer = cols * col + weights, final_norm = 2 * 4096 * col;
	double expect = 2 * (32 * layer + final_norm) / 3015e9;
	printf("  7B TP 4 NaN fills: %.4f s (expected %.4f s)\n",
	       a.memory_bound_seconds - b.memory_bound_seconds, expect);
	assert_true(fabs(a.memory_bound_seconds - b.memory_bound_seconds - expect) < 1e-3 * expect);
	assert_true(a.gemm_seconds == b.gemm_seconds);
	/* the MoE CI runs on H100 do not set the flag: their files say nothing */
	char *moe = test_read_file(DIR "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed.h100.yaml", NULL);
	assert_null(strstr(moe, "deterministic_mode"));
	free(moe);
	free(off);
	free(on);
}

/* An op that reads a view reads its storage: the unfused attention's
 * context bmm reads the probabilities through a view of the softmax's
 * output. With the sequence at 16384 (the 12 x 512 TP 2 PP 2 run on an
 * H100: 4 heads a rank, micro-batch 4), the [16, 16384, 16384] bf16
 * scores and probabilities (8.6 GB) dominate its GEMMs, and the two
 * batched GEMMs pass over them six times a layer and micro-batch (the
 * scores written; the probabilities read; backward the two reads of the
 * scores' gradient, the probabilities' gradient written and the
 * probabilities read again): the GEMM term is at least those passes at
 * 3015 GB/s on each of the slowest stage's layers. */
static void check_view_reads(void)
{
	char *run = test_read_file(DIR "gpt3_mcore_te_tp2_pp2.a100.yaml", NULL);
	char *h100 = text_replace(run, "\ndevice: a100", "\ndevice: h100");
	char *longer = text_replace(h100, "seq_length: 1024", "seq_length: 16384");
	char *text = text_replace(longer, "max_position_embeddings: 1024",
				  "max_position_embeddings: 16384");
	mo_diags *d = NULL;
	mo_error err = {0};
	mo_estimate *e = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	mo_model *m = load_model_text(text, d);
	assert_int_equal(mo_estimate_run(&e, NULL, m, &err), 0);
	const mo_estimate_time *t = mo_estimate_get_time(e);
	double layers = (double)mo_estimate_stage_get(e, t->slowest_stage)->num_layers;
	double scores = 4.0 * 4 * 16384.0 * 16384 * 2, mb = 32.0 / (4 * 2);
	double passes = mb * layers * 6 * scores / 3015e9;
	printf("  unfused attention at 16384: GEMMs %.4f s, their score passes %.4f s\n",
	       t->gemm_seconds, passes);
	assert_true(t->gemm_seconds >= passes);
	mo_estimate_free(e);
	mo_model_free(m);
	mo_diags_free(d);
	free(text);
	free(longer);
	free(h100);
	free(run);
}

/* The data-parallel reduce moves the whole gradient once. MindSpore's
 * pipeline under optimizer sharding keeps each stage's gradient whole in an
 * fp32 accumulator until its deferred reduce-scatter, so the reduce-scatter
 * is the whole stage gradient at 4 B a parameter, not that x DP; the
 * parameters' all-gather is the sharded weights x DP. Llama 2 70B r1.3.0
 * (PP with DP 2, optimizer sharding over DP, bf16 weights sharded over 2): a
 * ring over 2 ranks on one Atlas 800T A2 node, half of each at 147 GB/s plus a
 * 5 us step each. */
static void check_dp_whole_gradient(void)
{
	mo_estimate *e = estimate_training_yaml("tests/data/mindformers/r1.3.0/pretrain_llama2_70b.yaml");
	double expect = 0;
	for (size_t s = 0; s < mo_estimate_stage_count(e); s++) {
		const mo_estimate_stage *st = mo_estimate_stage_get(e, s);
		/* bf16 weights (2 B) sharded over 2: as many parameters as weight bytes */
		double params = (double)st->weights_bytes;
		double t = 0.5 * (params * 4.0 + params * 2.0) / 147e9 + 2 * 5e-6;
		expect = t > expect ? t : expect;
	}
	double got = mo_estimate_get_time(e)->comm_dp_seconds;
	printf("  70B DP reduce-scatter + all-gather: %.4f s (whole gradient once: %.4f s)\n", got,
	       expect);
	assert_true(fabs(got - expect) < 0.01 * expect);
	mo_estimate_free(e);
}

/* Recompute costs the time of the ops it re-runs. On the 7B TP 4 run
 * (device-bound; 2 micro-batches of 16384 tokens x hidden 4096, bf16):
 * recomputing only the input norms (no FLOPs: the FLOPs-share pricing
 * gave them nothing) costs their input read, output write and the
 * output's NaN fill (--deterministic-mode) at the H100's 3015 GB/s; recomputing every layer whole costs each layer's
 * forward once, its exposed TP collectives included once (under the
 * whole step's forward: GEMM / 3, attention / 3.5, memory-bound / 3, TP
 * communication / 2, the output layer's share aside). */
static void check_recompute_time(void)
{
	const char *model = DIR "gpt3_7b_tp4_pp1_memory_speed.h100.yaml";
	mo_estimate *none = estimate_files(model, DIR "none.config.yaml");
	mo_estimate *norms = estimate_config_text(
		model, "recompute:\n  mode: select\n  select_module:\n    '.*input_layernorm': [0-31]\n",
		"norms.yaml");
	mo_estimate *full = estimate_config_text(
		model, "recompute:\n  mode: full\n  full_recompute_layer: [0-31]\n", "full.yaml");
	const mo_estimate_time *t0 = mo_estimate_get_time(none);
	double norm = mo_estimate_get_time(norms)->recompute_seconds;
	double expect = 2.0 * 32 * (3.0 * 16384 * 4096 * 2) / 3015e9;
	double whole = mo_estimate_get_time(full)->recompute_seconds;
	double fwd = t0->gemm_seconds / 3 + t0->attention_seconds / 3.5 +
		     t0->memory_bound_seconds / 3 + t0->comm_tp_seconds / 2;
	printf("  7B TP 4 recompute: norms %.5f s (their bytes: %.5f s), whole layers %.4f s "
	       "(the step's forward %.4f s)\n", norm, expect, whole, fwd);
	assert_true(fabs(norm - expect) < 0.01 * expect);
	assert_true(whole < fwd && whole > 0.9 * fwd);
	mo_estimate_free(full);
	mo_estimate_free(norms);
	mo_estimate_free(none);
}

/* Megatron's MoE dispatcher waits on the host for the tokens per expert
 * after the router (token_dispatcher.py:320, :925-958 at d98e8a64): the
 * host issues the forward in two segments it cannot run ahead across, each
 * taking the later of its launches and its device work. When the host is
 * far slower than the device (the ETP 2 MoE run with launch_us 5000), every
 * segment is host-bound and each stage's micro-batch takes its launches
 * alone: compute + launch excess + exposed communication equals kernels x
 * launch_us, not that plus the forward's device time. */
static void check_sync_host_bound(void)
{
	char *run = test_read_file(DIR "gpt3_mcore_tp2_pp2_ep2_etp2_te_4experts2parallel.h100.yaml",
				   NULL);
	char *slow = text_replace(run, "\ndevice: h100", "\ndevice:\n  preset: h100\n  launch_us: 5000");
	mo_estimate_time t = time_of_text(slow);
	double busy = t.compute_seconds + t.fixed_seconds + t.comm_tp_seconds +
		      t.comm_cp_seconds + t.comm_ep_seconds;
	double host = t.kernels * 5000e-6;
	printf("  ETP 2 MoE, host-bound: %.6f s busy, %.6f s of launches\n", busy, host);
	assert_true(t.kernels > 0 && fabs(busy - host) < 1e-9 * host);
	free(slow);
	free(run);
}

/* The mechanisms one at a time, each against the same file without it. */
static void test_mechanisms(void **state)
{
	(void)state;
	/* Transformer Engine's TP overlap hides part of the TP collectives
	 * (32B: TP 8 with sequence parallelism) and nothing without SP */
	char *big = test_read_file(DIR "mfu_32b.yaml", NULL);
	char *plain = text_replace(big, "tp_comm_overlap: true", "tp_comm_overlap: false");
	mo_estimate_time on = time_of_text(big), off = time_of_text(plain);
	printf("  32B TP communication: %.4f s overlapped, %.4f s not\n", on.comm_tp_seconds,
	       off.comm_tp_seconds);
	assert_true(on.comm_tp_seconds > 0 && on.comm_tp_seconds < 0.5 * off.comm_tp_seconds);
	assert_true(on.gemm_seconds == off.gemm_seconds);
	char *nosp = text_replace(big, "sequence_parallel: true", "sequence_parallel: false");
	char *nosp_off = text_replace(nosp, "tp_comm_overlap: true", "tp_comm_overlap: false");
	assert_true(time_of_text(nosp).comm_tp_seconds == time_of_text(nosp_off).comm_tp_seconds);
	/* a data-parallel group with 8 ranks a node crosses nodes on 8 NICs:
	 * faster than the same group spread one rank a node */
	char *small = test_read_file(DIR "mfu_1_7b.yaml", NULL);
	char *spread = text_replace(small, "\ndevice: h100",
				    "\ndevice:\n  preset: h100\n  devices_per_node: 1");
	mo_estimate_time rail = time_of_text(small), one = time_of_text(spread);
	printf("  1.7B DP over 6 nodes: %.4f s exposed, %.4f s one rank a node\n",
	       rail.comm_dp_seconds, one.comm_dp_seconds);
	assert_true(rail.comm_dp_seconds < one.comm_dp_seconds);
	/* the unfused attention core is batched GEMMs, not a fused kernel */
	char *unfused = test_read_file(DIR "gpt3_mcore_te_tp2_pp2.a100.yaml", NULL);
	mo_estimate_time u = time_of_text(unfused);
	assert_true(u.attention_seconds == 0 && u.gemm_seconds > 0);
	check_grad_accumulation();
	check_deterministic_fill();
	check_view_reads();
	check_dp_whole_gradient();
	check_recompute_time();
	check_sync_host_bound();
	free(unfused);
	free(spread);
	free(small);
	free(nosp_off);
	free(nosp);
	free(plain);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ci_runs),
		cmocka_unit_test(test_mfu_table),
		cmocka_unit_test(test_ascend_published),
		cmocka_unit_test(test_calibrate_recovers),
		cmocka_unit_test(test_mechanisms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
