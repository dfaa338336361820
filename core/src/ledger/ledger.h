/* Private to core/src/ledger: the streaming row reader (CSV and JSON
 * lines), the scan that turns rows into a mo_ledger, and the comparison
 * with an estimate. */
#ifndef MEMOPT_LEDGER_PRIVATE_H
#define MEMOPT_LEDGER_PRIVATE_H

#include <memopt/memopt.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MO_LEDGER_NEVER INT64_MAX
#define MO_LEDGER_NAME_MAX 255

typedef enum mo_ledger_trace_format { MO_LEDGER_CSV = 0, MO_LEDGER_JSONL } mo_ledger_trace_format;

/* One allocation as the trace gives it. name is borrowed from the reader
 * until the next call. */
typedef struct mo_ledger_row {
	const char *name;
	size_t name_len;
	uint64_t bytes;
	int64_t alloc_ns;
	int64_t release_ns;  /* MO_LEDGER_NEVER: never released */
	int64_t total_bytes; /* the allocator's total after it; -1: absent */
	int64_t line;
} mo_ledger_row;

/* Lines from memory or from a file, a bounded buffer at a time. */
typedef struct mo_ledger_reader {
	const char *data; /* memory source, or NULL */
	size_t len, pos;
	FILE *f;          /* file source, or NULL */
	char *buf;        /* file: the block being read */
	size_t buf_len, buf_pos, buf_cap;
	bool eof;
	size_t max_line;
	int64_t line_no;
	mo_ledger_trace_format format;
	int columns;      /* CSV: fields in the header */
	int col_name, col_size, col_alloc, col_release, col_total;
	char name[MO_LEDGER_NAME_MAX + 1];
} mo_ledger_reader;

int ledger_reader_memory(mo_ledger_reader *r, const char *data, size_t len, size_t max_line,
			mo_error *err);
int ledger_reader_file(mo_ledger_reader *r, const char *path, size_t max_line, mo_error *err);
/* Reads the header (CSV columns or the JSON-lines header). 0 or -1. */
int ledger_reader_start(mo_ledger_reader *r, mo_error *err);
/* 1 with *row filled, 0 at the end, -1 with err. */
int ledger_reader_next(mo_ledger_reader *r, mo_ledger_row *row, mo_error *err);
/* Back to the first row (after the header). 0 or -1. */
int ledger_reader_rewind(mo_ledger_reader *r, mo_error *err);
void ledger_reader_close(mo_ledger_reader *r);

/* round(decimal text * unit): digits with an optional fraction, no sign.
 * 0, or -1 when it is not such a number or overflows. */
int ledger_decimal(uint64_t *out, const char *s, size_t n, uint64_t unit);

/* "OP:KB" / "OP" as the options give a marker. */
typedef struct mo_ledger_marker {
	bool set, any_size;
	char op[MO_LEDGER_NAME_MAX + 1];
	uint64_t bytes;
} mo_ledger_marker;
int ledger_marker_parse(mo_ledger_marker *m, const char *text, const char *what, mo_error *err);

/* The measured curve, downsampled: the trace's time span in
 * MO_LEDGER_CURVE_BINS equal bins, each keeping its lowest and highest row
 * (the highest is the first to reach it, so the peak's row is kept
 * exactly). At most 2 * MO_LEDGER_CURVE_BINS points, whatever the trace. */
#define MO_LEDGER_CURVE_BINS 512

typedef struct mo_ledger_bin {
	bool set;
	int64_t min_ns, max_ns;
	uint64_t min_bytes, max_bytes;
} mo_ledger_bin;

typedef struct mo_ledger_group_list {
	mo_ledger_group *v;
	size_t n;
} mo_ledger_group_list;

struct mo_ledger {
	mo_ledger_trace_format format;
	uint64_t rows;
	int64_t first_ns, last_ns;
	bool has_total;
	char **names; /* interned op names */
	size_t n_names;
	mo_ledger_peak peak;
	mo_ledger_group_list groups[3];
	mo_ledger_step *steps;
	size_t n_steps;
	mo_ledger_layer *layers;
	size_t n_layers;
	char layer_marker[MO_LEDGER_NAME_MAX + 32];
	char step_marker[MO_LEDGER_NAME_MAX + 32];
	double transient_ms;
	int64_t first_layer;
	mo_ledger_bin curve[MO_LEDGER_CURVE_BINS];
};

/* ledger_scan.c: both passes over r (started). 0 or -1. */
int ledger_scan(mo_ledger *l, mo_ledger_reader *r, const mo_ledger_options *opt, mo_error *err);

/* ns -> us as printed by the trace. */
static inline double ledger_us(int64_t ns)
{
	return (double)(ns / 1000) + (double)(ns % 1000) / 1000.0;
}

/* ledger_compare.c */
typedef struct mo_ledger_item {
	const char *label;  /* tensor name or bucket */
	const char *op;     /* the op keeping it, or "" */
	int bucket;         /* MO_EST_* */
	uint64_t bytes;     /* one */
	uint64_t count;
	uint64_t matched;   /* how many found a row */
} mo_ledger_item;

struct mo_ledger_compare {
	int64_t stage;
	char event[96];
	uint64_t est_peak;
	uint64_t est_bucket[MO_EST_BUCKETS];
	mo_ledger_item *items; /* per-tensor estimate items (activations ...) */
	size_t n_items;
	char **labels;     /* owned strings of items */
	size_t n_labels;
	/* the measured side: the by-op-size groups with their matched count */
	uint64_t *group_matched;
	size_t n_groups;
	uint64_t matched_bytes;   /* measured bytes of matched rows */
	uint64_t matched_est;     /* estimated bytes of matched tensors */
	/* the estimate's kept activations per model layer (one micro-batch) */
	uint64_t *est_layer;
	size_t n_est_layers;
	/* measured figures per row of the comparison table */
	uint64_t m_persistent, m_step_other, m_activations, m_transient;
	/* between steps: the estimate's, and the measured allocation when
	 * step between_step starts (-1: the trace has no step after a whole
	 * one) */
	uint64_t est_between, m_between;
	int64_t between_step;
};

/* ledger_report.c: "earlier steps", "this step", "transient". */
const char *ledger_class_name(mo_ledger_class k);
/* ledger_compare.c: the comparison's part of the report and the JSON. */
struct mo_buf;
struct json_t;
void ledger_report_compare(struct mo_buf *b, const mo_ledger *l, const mo_ledger_compare *c);
struct json_t *ledger_json_compare(const mo_ledger *l, const mo_ledger_compare *c);

#endif
