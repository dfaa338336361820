/* bench_ledger: `memopt ledger` on a 100 MB MindSpore memory-tracker ledger
 * (target: a 100 MB trace, a long real run, reads in seconds with bounded
 * memory, since traces grow with the run and the machine is the user's). The
 * ledger is written here in the tracker's 15-column format: steps of 60
 * layers, each allocating 40 kept activations (freed in the backward, in
 * reverse order) and 160 temporaries, with the allocator's running total.
 * Times mo_ledger_read_file (both passes, step and layer markers on) against
 * the floor of reading the same file twice line by line (fread + memchr),
 * median of 3, and the process's peak RSS growth across the read.
 *
 *   build/bench/bench_ledger [MB]      (default 100)
 */
#include <memopt/memopt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_time.h"

#define LAYERS 60
#define KEPT 40
#define TEMPS 160

static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* One row in the tracker's columns; total in MiB after the allocation. */
static void row(FILE *f, const char *name, double kb, double at, double rel, double total)
{
	char release[40];
	if (rel < 0)
		snprintf(release, sizeof release, "N/A");
	else
		snprintf(release, sizeof release, "%.1f", rel);
	fprintf(f, "%s,%.1f,%.1f,%s,N/A,%.2f,N/A,%.10g,%.1f,%.10g,%.10g,%.1f,%.10g,"
		   "187651526933696,NPU:0\n",
		name, kb, at, release, rel < 0 ? 0.0 : rel - at, total, total + 1024, total, total,
		total + 1024, total);
}

/* A ledger of about mb megabytes; returns the rows written. */
static long write_ledger(const char *path, long mb)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),"
	      "Duration(us),Active Duration(us),Allocation Total Allocated(MB),"
	      "Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total "
	      "Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream "
	      "Ptr,Device Type\n",
	      f);
	double t = 1783389620000000.0, base = 1669.78;
	long rows = 0;
	for (int step = 0; ftell(f) < mb * 1000000L; step++) {
		double kept = 0, end = t + LAYERS * 2000.0 + LAYERS * 2000.0 + 10;
		row(f, "ContiguousAllocMem", 32.5, t, end, base), rows++;
		for (int l = 0; l < LAYERS; l++) {
			double lt = t + 10 + l * 2000.0;
			double back = end - 10 - (l + 1) * 2000.0 + 1000.0;
			row(f, "Empty", 7.5, lt, lt + 3000.0, base + kept), rows++;
			for (int k = 0; k < KEPT; k++) {
				kept += 28672.5 / 1024;
				row(f, "Cast", 28672.5, lt + 1 + k * 10, back + k, base + kept), rows++;
				for (int j = 0; j < TEMPS / KEPT; j++)
					row(f, "MatMulExt", 16384.5, lt + 2 + k * 10 + j, lt + 3 + k * 10 + j,
					    base + kept + 16), rows++;
			}
		}
		t = end + 100;
	}
	fclose(f);
	return rows;
}

/* The I/O floor: the file read twice, lines counted. */
static long scan_twice(const char *path)
{
	static char buf[1 << 18];
	long lines = 0;
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = fopen(path, "rb");
		size_t n;
		if (!f)
			return -1;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
				lines++;
		fclose(f);
	}
	return lines;
}

int main(int argc, char **argv)
{
	long mb = argc > 1 ? atol(argv[1]) : 100;
	char path[] = "/tmp/memopt-bench-ledger-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || mb < 1)
		return 1;
	close(fd);
	long rows = write_ledger(path, mb);
	double t_read[3], t_scan[3];
	long rss0 = max_rss_kb(), rss1 = rss0;
	uint64_t peak = 0;
	size_t layers = 0, steps = 0;
	for (int i = 0; i < 3; i++) {
		double t0 = now_us();
		if (scan_twice(path) < 0)
			return 1;
		t_scan[i] = now_us() - t0;
		mo_ledger_options opt = {.step_start = "ContiguousAllocMem:32.5",
					 .layer_start = "Empty:7.5"};
		mo_ledger *l = NULL;
		mo_error err = {0};
		t0 = now_us();
		if (mo_ledger_read_file(&l, path, &opt, &err) != 0) {
			fprintf(stderr, "bench_ledger: %d:%d: %s\n", err.line, err.column, err.text);
			unlink(path);
			return 1;
		}
		t_read[i] = now_us() - t0;
		peak = mo_ledger_get_peak(l)->bytes;
		layers = mo_ledger_layer_count(l);
		steps = mo_ledger_step_count(l);
		mo_ledger_free(l);
		rss1 = max_rss_kb();
	}
	unlink(path);
	double r = median(t_read, 3), s = median(t_scan, 3);
	printf("ledger: %ld MB, %ld rows, %zu steps, %zu layers, peak %.1f MiB\n", mb, rows, steps,
	       layers, (double)peak / 1048576.0);
	printf("  mo_ledger_read_file %.3f s (%.0f MB/s), read twice line by line %.3f s: ratio "
	       "%.1f\n",
	       r / 1e6, (double)mb / (r / 1e6), s / 1e6, r / s);
	printf("  peak RSS growth across the reads: %ld KiB\n", rss1 - rss0);
	return 0;
}
