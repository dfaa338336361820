/* The timeline of one pipeline stage, shared by the walk that lists its
 * events (estimate_timeline.c) and the closed form of its peak
 * (estimate_schedule.c), which runs single units of the same walk. */
#ifndef MO_ESTIMATE_TIMELINE_H
#define MO_ESTIMATE_TIMELINE_H

#include "estimate/estimate_internal.h"

typedef struct mo_timeline {
	const mo_estimate *e; /* read by every pass */
	mo_estimate *out;     /* the estimate being built; NULL in a replay */
	size_t s;
	uint64_t state[MO_EST_BUCKETS];
	uint64_t peak;
	mo_estimate_event peak_ev;
	size_t stored_cap;
	double *gathered;  /* per layer type */
	bool pp_resident;  /* FSDP weights stay gathered (PP > 1) */
	uint64_t grads;    /* gradients made in backward (cfg.late_grads) */
	uint64_t opt_scratch; /* the optimizer update's temporaries, at its step */
	uint64_t unsharded_grads; /* PP with FSDP: reduce-scattered after the step */
	uint64_t caches;   /* kept caches (workspaces bucket), from the step's start */
	int64_t last_mb;   /* the step's last micro-batch */
	int64_t mbn;       /* the step's micro-batches */
	mo_vpp_order order; /* their order (timeline_order_of) */
	bool failed;
	/* the walk stops when its event store is full (the rest of the step is
	 * not listed; the peak then comes from the closed form) */
	bool full;
	/* probe (closed form): run one unit, keep its first highest event */
	bool probe;
	size_t probe_events;
	/* a probe recording its unit's figure (estimate_schedule.c): each
	 * event's buckets less the unit's start state, their least and most */
	struct mo_unit_figure *record;
	/* the closed form's figures across the stages of one estimate (NULL: per stage) */
	struct mo_sched_memo *memo;
	/* replay (explain): track what is alive, stop at `want`, store nothing */
	bool replay, got;
	mo_estimate_event want;
	size_t slot;       /* mb * vpp + chunk of the unit being run */
	mo_est_alive now, *snap;
} mo_timeline;


/* What one unit adds to its start state, bucket by bucket (the closed
 * form reuses it for the unit's chunk and direction): the start it was
 * run from, the least and most of every event's buckets less that start,
 * and its first highest event less that start. */
typedef struct mo_unit_figure {
	bool have, any;
	uint64_t start[MO_EST_BUCKETS];
	int64_t lo[MO_EST_BUCKETS], hi[MO_EST_BUCKETS];
	int64_t peak[MO_EST_BUCKETS];
	mo_estimate_event_kind kind;
	int64_t pos; /* the highest event's layer: its position in the chunk, -1: none */
} mo_unit_figure;

/* Unit figures carried from a stage to the next one of the same shape
 * (estimate_schedule.c sched_memo_take): the figures of stage `s`. */
typedef struct mo_sched_memo {
	mo_unit_figure *fig; /* 2 per chunk */
	size_t cap;          /* entries allocated */
	bool have;
	size_t s;
	uint64_t grads;
} mo_sched_memo;
void sched_memo_free(mo_sched_memo *m);

/* Runs forward (fwd) or backward unit k of the stage's schedule of
 * t->mbn micro-batches (in t->order), from the state t holds. */
void timeline_do(mo_timeline *t, int64_t k, bool fwd);
/* Forward unit kf and backward unit kb as Megatron's combined 1F1B runs
 * them (order.combined): the forward's embedding, the backward's loss
 * region, then forward layer i beside backward layer n - 1 - i, the rest
 * of the longer one, the forward's loss region, the backward's embedding. */
void timeline_pair(mo_timeline *t, int64_t kf, int64_t kb);
/* The optimizer step's event, after the last unit. */
void timeline_optimizer(mo_timeline *t);
/* Pipeline inputs stage s keeps between steps. */
uint64_t timeline_inputs_kept(const mo_estimate *e, size_t s);

/* estimate_schedule.c: the closed form of the schedule. t holds the
 * stage's static state (weights, gradients, optimizer, gathered weights,
 * caches; timeline_static). Finds the stage's first highest event as the
 * walk of every unit would (one unit run per stretch of the schedule whose
 * figures rise or fall evenly), its in-flight units, and the state after
 * the last unit (`end`: what is held at the optimizer step). -1 when out of
 * memory. */
typedef struct mo_sched_peak {
	mo_estimate_event ev;
	int64_t in_flight;
	uint64_t end[MO_EST_BUCKETS];
} mo_sched_peak;
int sched_stage_peak(const mo_timeline *tmpl, mo_sched_peak *out);
/* The closed form for stage s of a finished estimate (tests compare it
 * with the walk). */
int est_stage_closed_form(const mo_estimate *e, size_t s, mo_sched_peak *out);
/* Every stage's closed form in order, the unit figures carried from a
 * stage to the next of the same shape as the estimate does (out: n_stages). */
int est_closed_forms(const mo_estimate *e, mo_sched_peak *out);

#endif
