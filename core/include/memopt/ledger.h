/*
 * memopt ledger — reads a measured memory trace of one device and finds
 * what the estimator predicts: the peak and what is alive at it, the
 * training steps and their peaks, what each layer keeps from its forward to
 * its backward; with an estimate, the two side by side.
 *
 * Traces (detected from the first line):
 *  - a MindSpore memory-tracker allocation ledger (MS_ALLOC_CONF=
 *    memory_tracker), CSV with a header naming at least the columns
 *    "Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)"
 *    ("N/A" = never released) and optionally "Allocation Total
 *    Allocated(MB)", the allocator's own running total;
 *  - a memopt trace (JSON lines): a header {"format": "memopt-trace",
 *    "version": 1, ...} then one {"name", "bytes", "alloc_us", "free_us"
 *    (null = never freed)} per allocation. bindings/python/
 *    memopt_torch_snapshot.py writes one from a PyTorch memory snapshot.
 * Rows must come in allocation-time order. The trace is read twice, a line
 * at a time: memory is bounded by the allocations alive at once, never by
 * the trace's length.
 *
 * Included from memopt.h; conventions as there (mo_ prefix, opaque handle
 * with _free, caller-owned mo_error with line and column).
 */
#ifndef MEMOPT_LEDGER_H
#define MEMOPT_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct mo_estimate;

/* Caller-owned; initialise with = {0} (fields may be appended). */
typedef struct mo_ledger_options {
	/* "OP:KB" (or "OP"): a row of that op (and size in KB) starts a new
	 * step; within a run of consecutive rows of that op only the first
	 * of that size counts. NULL: the whole trace is one step. */
	const char *step_start;
	/* The same for layer starts: layer i of a step runs from the i-th
	 * such row to the next. NULL: no per-layer analysis. */
	const char *layer_start;
	/* Rows alive at the peak that live less than this are transients;
	 * 0 = 20 ms. */
	double transient_ms;
	/* The model layer the first layer start of a step opens (0; -1 when
	 * the first marked region is the embedding's, as with FSDP prefetch
	 * groups): layer i of a step is model layer i + first_layer. */
	int64_t first_layer;
	/* Limits (0 = default): rows (200,000,000), allocations alive at
	 * once (10,000,000), steps (100,000), layers over all steps
	 * (1,000,000), distinct op names (65,536), bytes in one line
	 * (65,536). */
	uint64_t max_rows, max_alive, max_steps, max_layers, max_names, max_line;
} mo_ledger_options;

/* Opaque, owned by the caller, freed with mo_ledger_free. */
typedef struct mo_ledger mo_ledger;

/* Reads a trace from a file (read twice; not a pipe). Returns 0 with *out
 * set, or -1 with err: MO_ERR_IO (unreadable), MO_ERR_INVALID (the trace
 * is malformed: line and column of the first bad field), MO_ERR_LIMIT,
 * MO_ERR_USAGE (bad options), MO_ERR_NOMEM. */
int mo_ledger_read_file(mo_ledger **out, const char *path, const mo_ledger_options *opt,
			struct mo_error *err);
/* The same from memory (the data is not kept). */
int mo_ledger_read_buffer(mo_ledger **out, const char *data, size_t len,
			  const mo_ledger_options *opt, struct mo_error *err);
/* Frees the ledger; NULL is fine. */
void mo_ledger_free(mo_ledger *l);

/* "mindspore-csv" or "memopt-trace". Static. */
const char *mo_ledger_format(const mo_ledger *l);
/* Allocation rows read. */
uint64_t mo_ledger_rows(const mo_ledger *l);

/* The measured peak. Times are microseconds as the trace prints them. */
typedef struct mo_ledger_peak {
	uint64_t bytes;         /* allocated at the peak (the allocator's own
				 * total when the trace has it) */
	double time_us;         /* allocation time of the row that made it */
	double since_start_s;   /* seconds since the trace's first row */
	int64_t line;           /* that row's line in the trace */
	const char *op;         /* and its op */
	uint64_t op_bytes;      /* and its size */
	int64_t step;           /* its step (0-based; -1 before the first) */
	uint64_t rows_bytes;    /* alive rows of the trace at the peak */
	uint64_t outside_bytes; /* allocated, but by no row alive at the peak
				 * (held before the trace began): bytes -
				 * rows_bytes; 0 without an allocator total */
	/* rows_bytes by class: allocated before the peak's step; in it and
	 * living at least the transient time (or never freed); in it and
	 * shorter */
	uint64_t earlier_bytes, step_bytes, transient_bytes;
} mo_ledger_peak;
/* The peak; borrowed from l. */
const mo_ledger_peak *mo_ledger_get_peak(const mo_ledger *l);

/* The alive rows at the peak grouped by op (size 0) or by size (op NULL)
 * or by op, size and lifetime class, largest total first. Borrowed. */
typedef enum mo_ledger_class {
	MO_LEDGER_EARLIER = 0, /* allocated before the peak's step */
	MO_LEDGER_STEP,        /* in it, living at least the transient time */
	MO_LEDGER_TRANSIENT,   /* in it, shorter */
	MO_LEDGER_ANY          /* the by-op and by-size lists */
} mo_ledger_class;
typedef struct mo_ledger_group {
	const char *op;     /* NULL in the by-size list */
	uint64_t bytes;     /* each row's size (0 in the by-op list) */
	uint64_t count;
	uint64_t total;     /* bytes of all its rows */
	mo_ledger_class lifetime;
} mo_ledger_group;
typedef enum mo_ledger_grouping {
	MO_LEDGER_BY_OP = 0,
	MO_LEDGER_BY_SIZE,
	MO_LEDGER_BY_OP_SIZE
} mo_ledger_grouping;
/* How many groups the grouping has. */
size_t mo_ledger_group_count(const mo_ledger *l, mo_ledger_grouping g);
/* Group i of the grouping; borrowed from l, NULL out of range. */
const mo_ledger_group *mo_ledger_group_get(const mo_ledger *l, mo_ledger_grouping g, size_t i);

/* One training step of the trace. */
typedef struct mo_ledger_step {
	int64_t index;            /* 0-based; -1: the rows before the first
				   * step start */
	double start_us, end_us;  /* first row's allocation; next step's start
				   * (or the trace's last event) */
	uint64_t rows;
	uint64_t peak_bytes;      /* as mo_ledger_peak.bytes, within the step */
	double peak_us;
	uint64_t start_bytes;     /* allocated just before the step's first row:
				   * what the step before it left (the figure
				   * an estimate calls between steps) */
} mo_ledger_step;
/* How many steps the trace has (the rows before the first step included). */
size_t mo_ledger_step_count(const mo_ledger *l);
/* Step i; borrowed from l, NULL out of range. */
const mo_ledger_step *mo_ledger_step_get(const mo_ledger *l, size_t i);

/* Per step and layer (layer_start given): the rows allocated between the
 * layer's start and the next layer's start that are still alive at the
 * start of the layer after next and are freed later (kept for the
 * backward; a row never freed is not counted). A layer without a layer
 * after next in its step is incomplete (kept unknown). */
typedef struct mo_ledger_layer {
	int64_t step, layer;
	int64_t model_layer;  /* layer + options.first_layer */
	double start_us;
	int complete;
	uint64_t kept_bytes, kept_rows;
} mo_ledger_layer;
/* How many (step, layer) entries there are. */
size_t mo_ledger_layer_count(const mo_ledger *l);
/* Entry i; borrowed from l, NULL out of range. */
const mo_ledger_layer *mo_ledger_layer_get(const mo_ledger *l, size_t i);

/* Measured against an estimate (mo_estimate_run) on one pipeline stage:
 * the estimate's explanation at its peak, bucket by bucket, the tensors
 * matched by size (a row within 1 KiB + 0.1% above the tensor's bytes),
 * what is left on each side, and per complete layer its measured kept
 * bytes beside the estimate's kept activations of that model layer (one
 * micro-batch). */
typedef struct mo_ledger_compare mo_ledger_compare;

/* Compares the trace with estimate e on stage `stage` (-1: the estimate's
 * busiest stage). Returns 0 with *out set, or -1
 * with err (MO_ERR_USAGE: no such stage; MO_ERR_NOMEM). */
int mo_ledger_compare_run(mo_ledger_compare **out, const mo_ledger *l,
			  const struct mo_estimate *e, int64_t stage, struct mo_error *err);
/* Frees the comparison; NULL is fine. */
void mo_ledger_compare_free(mo_ledger_compare *c);

/* Human table (paste into a bug report): the trace, its peak, what is
 * alive there, the steps, the layers; with c, the comparison. Caller
 * frees; NULL when out of memory. */
char *mo_ledger_report(const mo_ledger *l, const mo_ledger_compare *c, const char *name);
/* The same as JSON text (compact). Caller frees; NULL when out of memory. */
char *mo_ledger_json(const mo_ledger *l, const mo_ledger_compare *c, const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
