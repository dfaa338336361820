/* libFuzzer target for the training-log reader (mo_steplog_read): any
 * bytes either fail with a code and a text, or give time lines whose
 * summary agrees with them (the warm-up first, every time in (0, 1e7) s,
 * the median between the smallest and largest used). Replayed over
 * tests/fuzz/corpus/steplog by `make test` / `make check` (replay.c). */
#include <memopt/memopt.h>

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(const mo_steplog *l)
{
	const mo_steplog_summary *s = mo_steplog_get_summary(l);
	if (s->times != mo_steplog_count(l) || s->warmup + s->used != s->times || s->used == 0 ||
	    !(s->min_seconds <= s->median_seconds && s->median_seconds <= s->max_seconds))
		abort();
	int64_t last_line = 0;
	for (size_t i = 0; i < s->times; i++) {
		const mo_steplog_time *t = mo_steplog_get(l, i);
		if (t->line <= last_line || t->warmup != (i < s->warmup) ||
		    !(t->seconds > 0 && t->seconds < MO_STEPLOG_MAX_MS / 1e3))
			abort();
		last_line = t->line;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mo_steplog_options opt = {.max_bytes = 1 << 20, .max_times = 10000};
	mo_steplog *l = NULL;
	mo_error err = {0};
	if (mo_steplog_read(&l, (const char *)data, size, &opt, &err) != 0) {
		if (err.code == MO_OK || !err.text[0] || l)
			abort(); /* a failure must say what failed */
		return 0;
	}
	fuzz_check(l);
	mo_steplog_free(l);
	return 0;
}
