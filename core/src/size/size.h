/* size: the layout search (memopt/size.h). size_layouts.c enumerates the
 * layouts a framework accepts and counts the rejected ones by reason;
 * size.c estimates, bounds, plans and ranks them. */
#ifndef MEMOPT_SIZE_INTERNAL_H
#define MEMOPT_SIZE_INTERNAL_H

#include "model/model.h"
#include "util/util.h"

#include <memopt/size.h>

/* One candidate layout and what the search learned about it. */
typedef struct mo_size_cand {
	int64_t n, tp, cp, pp, vpp, ep, etp, dp, dps, mbs, mbn;
	bool sp, dopt;
	/* Megatron-LM: the embedding (1) and / or the loss (2) counted as a
	 * layer of the first / last model chunk (--account-for-embedding- /
	 * --account-for-loss-in-pipeline-split): the layers plus those split
	 * evenly over PP x VPP chunks; 0 the even split of the layers (and
	 * every other framework's: the estimator's split) */
	int acct;
	/* Megatron-LM's uneven split: the first / last pipeline stage's layers
	 * (--decoder-first- / --decoder-last-pipeline-num-layers), 0 when not
	 * given; the other stages split the rest evenly */
	int64_t ufirst, ulast;
	/* the estimate with no recompute or swap, in two steps: the floors
	 * first (no peaks: cheap), the peak only for the layouts the ranking
	 * reaches */
	uint64_t state_bytes; /* weights + gradients + optimizer, busiest
			       * stage: no plan lowers it */
	double base_step;     /* step time: no plan is faster */
	double base_mfu;      /* model FLOPs utilisation at that step */
	uint64_t base_peak;   /* allocated peak */
	bool estimated;       /* state_bytes and base_step set */
	bool peaked;          /* base_peak set */
} mo_size_cand;

/* Rejections grouped by rule and parameters (mo_size_rejection: the text
 * and field strings malloc'd). */
#define MO_SIZE_MAX_REASONS 512
typedef struct mo_size_reasons {
	mo_size_rejection v[MO_SIZE_MAX_REASONS];
	size_t n;
	uint64_t other; /* reasons past the table */
} mo_size_reasons;

/* Counts `count` layouts under rule code with parameters p0, p1 (those the
 * code has; mo_size_reason_name's table): one group per code and
 * parameters. text: NULL for the code's own words, else the words of the
 * group's first layout (a rule of the model's: its finding's message,
 * field its path); they never tell groups apart. */
void size_reject(mo_size_reasons *r, uint64_t count, mo_size_reason code, int64_t p0,
		 int64_t p1, const char *text, const char *field);
/* The same with three parameters. */
void size_reject3(mo_size_reasons *r, uint64_t count, mo_size_reason code, const int64_t p[3],
		  const char *text, const char *field);
/* The size code of one of the model's `parallel` rules. */
mo_size_reason size_parallel_reason(const mo_model *m, mo_par_rule rule);
void size_reasons_free(mo_size_reasons *r);

/* The candidates of one device count. */
typedef struct mo_size_cands {
	mo_size_cand *v;
	size_t n, cap;
} mo_size_cands;

/* The question for one device count. */
typedef struct mo_size_question {
	const mo_model *base;
	int64_t devices, global_batch, per_node;
} mo_size_question;

/* Layouts never enumerated: beyond these a question is refused
 * (MO_ERR_LIMIT) rather than searched. */
#define MO_SIZE_MAX_CANDIDATES 2000000u
/* The largest micro-batch searched: activations grow with it, and a
 * larger one only lengthens the pipeline bubble; counted as a reason. */
#define MO_SIZE_MAX_MBS 16
/* The most model chunks per stage searched: each halves the bubble
 * again but holds more micro-batches in flight and adds a pipeline
 * send per chunk (Megatron-LM's CI runs go to 8); counted as a reason. */
#define MO_SIZE_MAX_VPP 8
/* The largest question: devices (a range's top) and global batch. */
#define MO_SIZE_MAX_DEVICES 1048576
#define MO_SIZE_MAX_BATCH 16777216

/* Enumerates the layouts of q->devices devices into out; counts the
 * rejected ones in rej. Returns 0, or -1 with err (memory, limit). */
int size_enumerate(mo_size_cands *out, mo_size_reasons *rej, const mo_size_question *q,
		      mo_error *err);

/* The plan pr (NULL: none) of layout c as Megatron-LM recompute flags
 * (whole layers: the same first n of every model chunk, or every layer):
 * writes them to flags ("" for no recompute) and returns NULL, or returns
 * why Megatron-LM has no flags for the plan. */
const char *size_megatron_recompute(const mo_planner_result *pr, const mo_size_cand *c,
				    const mo_model *base, char *flags, size_t size);

/* size_base.c: a base training YAML the layouts can be written into
 * (MindSpore Transformers, graph mode or PyNative, block style): 0, or -1
 * with err (MO_ERR_USAGE). */
int size_base_check(const mo_config *base, mo_error *err);
/* The base with layout c (of the base's model m) and the plan's three
 * sections (plan_yaml) written in: malloc'd, or NULL with err. */
char *size_base_rewrite(const mo_config *base, const mo_model *m, const mo_size_cand *c,
			int64_t global_batch, const char *plan_yaml, mo_error *err);

/* size_megatron.c: for a framework pytorch layout c on wm (its layout
 * applied) that needs a plan, Megatron-LM's block recompute with the least
 * n that fits the budget, as a planner result in *out (NULL when not even
 * every layer fits). Returns 0, or -1 with err (the work budget too). */
int size_megatron_plan(mo_planner_result **out, const mo_model *wm, const mo_size_cand *c,
		       uint64_t budget, mo_error *err);

/* The decoder layers of model chunk k (0 to PP x VPP - 1, virtual order) of
 * layout c over `layers` layers: the first and how many. */
void size_chunk_span(const mo_size_cand *c, int64_t layers, int64_t k, int64_t *first,
		     int64_t *len);

/* The per-chunk layer lists of the accounted splits a search has put on its
 * working model, kept for the search (each split built once). */
typedef struct mo_size_split {
	int64_t pp, vpp;
	int acct;
	int64_t ufirst, ulast;
	mo_layers *lists;
} mo_size_split;
typedef struct mo_size_splits {
	mo_size_split *v;
	size_t n, cap;
} mo_size_splits;
void size_splits_free(mo_size_splits *s);

/* Puts c's layout on the working model m (a copy of the base); an
 * accounted split's lists from memo (NULL: in m's arena). Returns false
 * out of memory. */
bool size_apply(mo_model *m, const mo_size_cand *c, int64_t global_batch, mo_size_splits *memo);

#endif
