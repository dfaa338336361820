/* bench_size: sizing a job (memopt size) for DeepSeek-V3 671B over 1,024
 * devices and a 70B dense model (Llama-3-70B) over 256 devices, each with
 * the default top 10 under a work limit of 5 s (the target: at most 5 s
 * each on a 2-core machine). Prints the search's wall and CPU time, its
 * ratio to one estimate of the model's own layout in the same run, the
 * layouts accepted / estimated / planned, whether the search ran to its
 * end (else the answer is the best found in the 5 s), and the best
 * layout: a faster search must give the same answer.
 *
 *   build/bench/bench_size [CASE]   (deepseek-v3 or llama3-70b; default both)
 *   BENCH_SIZE_LIMIT_MS=120000 build/bench/bench_size   (a longer work limit)
 */
#include <memopt/memopt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"

/* this process's CPU seconds (user + system): the machine is shared, and
 * the wall clock moves with the other jobs' load */
static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct bench_case {
	const char *preset;
	int64_t devices, global_batch;
	const char *why; /* where the batch comes from */
} bench_case;

static const bench_case cases[] = {
	/* DeepSeek-V3 technical report (arXiv 2412.19437) section 4.2: the
	 * batch ramps to 15360 sequences of 4K tokens */
	{"deepseek-v3", 1024, 15360, "DeepSeek-V3 report: 15360 x 4K"},
	/* Llama 3 (arXiv 2407.21783) section 3.4.1: 4M-token batches of 8K
	 * sequences early in pre-training: 512 sequences */
	{"llama3-70b", 256, 512, "Llama 3: 4M tokens, 8K sequences"},
};

static double one_estimate_ms(const mo_model *m)
{
	double t0 = now_us();
	mo_estimate *e = NULL;
	mo_error err;
	if (mo_estimate_run(&e, NULL, m, &err) != 0) {
		fprintf(stderr, "bench_size: estimate: %s\n", err.text);
		exit(2);
	}
	mo_estimate_free(e);
	return (now_us() - t0) / 1e3;
}

static void run_case(const bench_case *bc)
{
	mo_model *m = NULL;
	mo_error err;
	if (mo_model_preset(&m, bc->preset, &err) != 0) {
		fprintf(stderr, "bench_size: %s\n", err.text);
		exit(2);
	}
	/* the first estimate of a model builds its graphs: time a warm one,
	 * as the search's estimates after the first of each shape are */
	one_estimate_ms(m);
	double samples[5];
	for (size_t i = 0; i < 5; i++)
		samples[i] = one_estimate_ms(m);
	double est_ms = median(samples, 5);
	mo_size_input in = {.model = m, .devices = bc->devices, .global_batch = bc->global_batch};
	double t0 = now_us(), c0 = cpu_seconds();
	mo_size_result *r = NULL;
	/* BENCH_SIZE_LIMIT_MS: a longer limit, to time a search to its end on
	 * a machine whose load stretches the wall clock */
	const char *lim = getenv("BENCH_SIZE_LIMIT_MS");
	mo_budget limit = {.max_ms = lim && atoll(lim) > 0 ? (uint64_t)atoll(lim) : 5000};
	mo_budget_begin(&limit);
	int rc = mo_size_run(&r, &in, &err);
	mo_budget_end();
	if (rc != 0) {
		fprintf(stderr, "bench_size: size: %s\n", err.text);
		exit(2);
	}
	double ms = (now_us() - t0) / 1e3, cpu_ms = (cpu_seconds() - c0) * 1e3;
	printf("size: %s over %lld devices, global batch %lld (%s): %.0f ms wall, %.0f ms CPU "
	       "(target 5000), ratio to one estimate %.0f (estimate %.3f ms)\n",
	       bc->preset, (long long)bc->devices, (long long)bc->global_batch, bc->why, ms,
	       cpu_ms, est_ms > 0 ? ms / est_ms : 0, est_ms);
	printf("  layouts accepted %llu, estimated %llu, planned %llu, %s\n",
	       (unsigned long long)mo_size_accepted(r), (unsigned long long)mo_size_estimated(r),
	       (unsigned long long)mo_size_planned(r),
	       mo_size_complete(r) ? "complete: the top 10 are exact"
				   : "stopped by the 5 s work limit: the best found so far");
	const mo_size_layout *b = mo_size_get(r, 0);
	if (b)
		printf("  best: TP %lld PP %lld VPP %lld CP %lld EP %lld DP %lld SP %d B %lld M %lld: "
		       "%s, peak %.2f GiB, step %.3f s, %.0f tokens/s/device, plan %s\n",
		       (long long)b->tensor_parallel, (long long)b->pipeline_parallel,
		       (long long)b->virtual_pipeline, (long long)b->context_parallel,
		       (long long)b->expert_parallel, (long long)b->data_parallel,
		       b->sequence_parallel, (long long)b->micro_batch_size,
		       (long long)b->micro_batch_num, b->fits ? "fits" : "does not fit",
		       (double)b->peak_bytes / 1073741824.0, b->step_seconds,
		       b->tokens_per_second_per_device, b->plan);
	mo_size_result_free(r);
	mo_model_free(m);
}

int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (argc < 2 || strcmp(argv[1], cases[i].preset) == 0)
			run_case(&cases[i]);
	return 0;
}
