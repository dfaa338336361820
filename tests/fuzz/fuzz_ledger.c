/* libFuzzer target for the trace reader (memopt ledger): CSV and JSON-lines
 * traces with step / layer markers picked by the first byte, then the
 * report, the JSON and the comparison with a small estimate. Replayed over
 * tests/fuzz/corpus/ledger by `make test` / `make check` (replay.c). */
#include <memopt/memopt.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_model[] =
	"model:\n  num_layers: 2\n  hidden_size: 256\n  ffn_hidden_size: 1024\n"
	"  num_attention_heads: 4\n  vocab_size: 1000\n  seq_length: 128\n"
	"training:\n  micro_batch_size: 1\n  micro_batch_num: 1\n  framework: pytorch\n"
	"parallel:\n  world_size: 1\n  data_parallel: 1\n";

static mo_estimate *fuzz_estimate(void)
{
	static mo_estimate *e;
	static int tried;
	if (tried)
		return e;
	tried = 1;
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_error err = {0};
	if (mo_diags_new(&d) == 0 &&
	    mo_model_load(&m, d, fuzz_model, sizeof fuzz_model - 1, "m", NULL, &err) == 0)
		mo_estimate_run(&e, NULL, m, &err);
	mo_model_free(m);
	mo_diags_free(d);
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const markers[] = {NULL, "A", "A:1", "Empty:7.5", "B:0.5"};
	mo_ledger_options opt = {.max_rows = 100000, .max_alive = 10000, .max_line = 4096};
	if (size) {
		opt.step_start = markers[data[0] % 5];
		opt.layer_start = markers[(data[0] / 5) % 5];
	}
	mo_ledger *l = NULL;
	mo_error err = {0};
	if (mo_ledger_read_buffer(&l, (const char *)data, size, &opt, &err) != 0) {
		if (err.code == MO_OK || !err.text[0])
			abort(); /* a failure must say what failed */
		return 0;
	}
	const mo_ledger_peak *p = mo_ledger_get_peak(l);
	if (p->rows_bytes != p->earlier_bytes + p->step_bytes + p->transient_bytes)
		abort();
	mo_ledger_compare *c = NULL;
	mo_estimate *e = fuzz_estimate();
	if (e)
		mo_ledger_compare_run(&c, l, e, -1, &err);
	free(mo_ledger_report(l, c, "fuzz"));
	free(mo_ledger_json(l, c, "fuzz"));
	mo_ledger_compare_free(c);
	mo_ledger_free(l);
	return 0;
}
