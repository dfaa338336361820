/* estimate: the face the other core folders use (the planner prices its
 * choices and the ledger explains a measured peak with these): an estimate's
 * state (struct mo_estimate, its per-type tensor graphs, stages and
 * chunks), what one layer keeps under a segment's actions
 * (est_keep_eval), the plan-independent parts of a stage and what is
 * alive at its peak. How the estimator builds them (op tables per
 * framework, named dimensions, the graph builder, the per-model cache, the
 * weights, timeline, cost and report code) is in estimate_internal.h,
 * private to this folder. */
#ifndef MEMOPT_ESTIMATE_H
#define MEMOPT_ESTIMATE_H

#include "resolve/resolve.h"

/* Collective an op performs (its bytes: the larger of input and output). */
typedef enum mo_est_comm {
	MO_COMM_NONE = 0,
	MO_COMM_ALLGATHER,
	MO_COMM_REDUCESCATTER,
	MO_COMM_ALLREDUCE,
	MO_COMM_ALLTOALL
} mo_est_comm;

/* ---- the tensor graph of one layer type ------------------------------------ */

typedef struct mo_est_tensor {
	const char *name;
	const char *dtype;
	uint64_t bytes;    /* rounded by the framework's allocator */
	int storage;       /* index of the tensor owning the storage */
	int producer;      /* op index, -1 for a block input */
	const char *dims;  /* its shape as the op table writes it ("tok*h"), */
	size_t dims_len;   /* not NUL-terminated; NULL for a view */
} mo_est_tensor;

struct mo_op_row;

typedef struct mo_est_op {
	const struct mo_op_row *row; /* the op table's row it was built from */
	const char *name;  /* "path:op" for the report */
	int path;          /* layout path index, -1 = the layer itself */
	int *in, *out, *save;
	size_t n_in, n_out, n_save;
	double flops;
	mo_est_comm comm;
	uint64_t comm_bytes;
} mo_est_op;

typedef struct mo_est_graph {
	mo_est_tensor *t;
	size_t n_t, cap_t;
	mo_est_op *ops;
	size_t n_ops, cap_ops;
	double flops;      /* forward FLOPs of the layer (per micro-batch) */
	uint64_t bwd_grads; /* the largest gradient working set one op's backward
			     * holds beside the saved tensors (bytes; rows' `bwd`) */
	unsigned char *base_marks; /* per storage: MO_K_BASE when some op saves it */
} mo_est_graph;

/* Named dimensions and conditions of one model (per device). */
typedef struct mo_est_dims {
	const char *names[96];
	int64_t vals[96];
	size_t n;
	unsigned cond;
	const char *cdtype, *pdtype;
} mo_est_dims;

/* The forward work of a set of ops, by how the step time prices it
 * (estimate_time.c): GEMM FLOPs, fused-attention FLOPs, the bytes
 * memory-bound ops read and write, their kernels, and their collectives'
 * bytes by group as ring all-gathers (an all-reduce moves twice its
 * bytes; comm_bytes: the same collectives as mo_est_keep.comm_bytes
 * counts them). Device-independent, so a model's memo can keep it. */
typedef struct mo_est_work {
	double gemm_flops, attn_flops, mem_bytes, kernels;
	double comm_bytes, tp_bytes, cp_bytes, ep_bytes;
	/* what --deterministic-mode fills again (estimate_time.c): Transformer
	 * Engine modules' outputs, all-gathered tensors, reduce-scatter inputs */
	double te_out_bytes, gathered_bytes, scattered_bytes;
} mo_est_work;

/* What one layer keeps under one segment's actions (per micro-batch). */
typedef struct mo_est_keep {
	uint64_t kept;        /* on device between forward and backward */
	uint64_t baseline;    /* the same with no optimisation */
	uint64_t swapped;     /* moved to host */
	uint64_t transient;   /* exists again during the layer's backward */
	double recompute_flops;
	mo_est_work recompute; /* the forward work of the ops it re-runs */
	uint64_t comm_bytes;  /* extra collective bytes (comm recompute) */
	size_t comm_ops;      /* extra collectives */
} mo_est_keep;

/* Per storage, what the evaluation decided: kept on device, swapped to the
 * host, saved by some op with no optimisation (BASE && !KEPT && !SWAP: it
 * exists again in the layer's backward). */
/* MO_K_GONE: an output discarded after its next module's forward (discard_output), or a
 * gathered copy of one: whoever saved it holds nothing until backward re-creates it. */
enum { MO_K_KEPT = 1, MO_K_SWAP = 2, MO_K_BASE = 4, MO_K_GONE = 8 };

/* What one layer of graph g keeps under a segment's actions into *k. act:
 * per layout path (NULL = keep everything); full / swapped: the whole
 * layer. no_recompute: recompute actions are ignored (one device).
 * Returns 0, or -1 when out of memory. */
int est_keep_eval(mo_est_keep *k, const mo_est_graph *g,
		     const mo_layer_type *lt, const mo_action_kind *act,
		     bool full, bool swapped, bool no_recompute);
/* As est_keep_eval, also copying the per-storage marks to `marks`
 * (g->n_t bytes) when it is not NULL. */
int est_keep_eval_marks(mo_est_keep *k, const mo_est_graph *g, const mo_layer_type *lt,
			   const mo_action_kind *act, bool full, bool swapped,
			   bool no_recompute, unsigned char *marks);

/* ---- the estimate ----------------------------------------------------------- */

/* One distinct (layer type, plan segment) result. */
typedef struct mo_est_res {
	size_t type;
	const mo_action_kind *act; /* the segment's actions (borrowed) */
	bool full, swapped;
	mo_est_keep k;
	unsigned char *marks;      /* per storage of the type's graph (MO_K_*) */
	uint64_t hash;             /* of (type, flags, actions) */
} mo_est_res;

/* The weights of a layer type whose gradient Transformer Engine replaces
 * by a cached dummy under gradient accumulation fusion (estimate_weights.c
 * est_type_params): their local shapes, one per Linear (a grouped
 * Linear's per-expert weight once). */
#define MO_EST_MAX_WGRADS 12
/* YarnRotaryEmbedding.forward's @lru_cache(maxsize=32), one cache for the
 * process (Megatron yarn_rotary_pos_embedding.py:105) */
#define MO_EST_ROPE_LRU 32
typedef struct mo_est_wgrad {
	int64_t rows, cols;
} mo_est_wgrad;

typedef struct mo_est_type {
	const char *name;
	bool moe;             /* the model's layer type has routed experts */
	mo_est_graph g;
	double dense_params;  /* per device after TP, before FSDP */
	double expert_params; /* per device after EP, before FSDP */
	double max_dense, max_expert; /* its largest parameter tensors (same units) */
	/* Muon's step (MindSpore): b x m^2 of the expert weights' Newton-Schulz
	 * pieces, local experts x min(ffn, hidden)^2 before expert FSDP */
	double expert_ns_sq;
	mo_est_wgrad wgrads[MO_EST_MAX_WGRADS];
	size_t n_wgrads;      /* 0 without dummy wgrads (cfg.dummy_wgrads) */
} mo_est_type;

/* A pipeline stage: v chunks of layer ids. */
typedef struct mo_est_chunk {
	int64_t *ids;
	size_t n;
} mo_est_chunk;

/* Scalars of the model the estimate keeps (it does not borrow the model). */
typedef struct mo_est_cfg {
	int64_t pp, vpp, mbn, tp, cp, dp, dps, ep, prefetch;
	int64_t num_layers, mtp, world;
	double pbytes, cbytes, obytes;  /* param, compute, optimizer per param */
	double table_obytes; /* optimizer bytes of the embedding / output layer */
	double gbytes;                  /* gradient buffers per param (grads_dtype) */
	double fsdp_div, expert_div, opt_div, opt_expert_div;
	double embed_params, head_params; /* per device after TP */
	double pos_params;              /* learned position table (first stage, not split) */
	double mtp_embed_params;        /* the MTP layers' copy of the embedding (last stage) */
	double loss_bytes;              /* loss backward scratch per token x local vocab */
	/* Megatron's distributed optimizer: its buffers are padded to
	 * multiples of pad_multiple per bucket of bucket_params elements
	 * (0: no padding) */
	double pad_multiple, bucket_params;
	double tok, vocab;               /* local tokens, local vocab */
	bool no_recompute;               /* mindspore on one device */
	bool late_grads;                 /* mindspore, fp32 params: gradients made in backward */
	bool pp_unsharded;               /* mindspore, PP with FSDP: whole stage unsharded,
					  * gradients reduced after the last micro-batch */
	double opt_scratch;              /* bytes per parameter of the optimizer update's
					  * temporaries (mindspore AdamW, and Muon's AdamW
					  * tables and local-path weights), 0 when none */
	bool muon_step;                  /* mindspore Muon: est_type_max_local weighs each
					  * layer's largest weights by their Newton-Schulz
					  * step (estimate_weights.c est_muon_step) */
	mo_device dev;
	uint64_t workspace;              /* GEMM workspaces (bytes; pytorch only) */
	bool grouped_workspaces;         /* with TE GroupedLinear's 4 (moe_grouped_gemm) */
	uint64_t pp_input;               /* one activation received from the previous
					  * pipeline stage, kept with its gradient by
					  * its model chunk (pytorch, PP > 1; else 0) */
	uint64_t pp_grad_recv;           /* mindspore, PP > 1: the buffer a chunk that sends
					  * its output allocates for that output's gradient
					  * at the send, kept until its backward; else 0 */
	/* Transformer Engine's dummy weight gradients (pytorch, Megatron's DDP,
	 * transformer_engine, gradient_accumulation_fusion): one per distinct
	 * weight shape of a stage's Linears, params dtype, and of the output
	 * layer's weight (head_wgrad, compute dtype) on the last stage */
	bool dummy_wgrads;
	mo_est_wgrad head_wgrad;
	/* Megatron's global "mpu" buffer the output layer gathers its input
	 * into under SP: [s / CP, b, h] in the compute dtype, kept by the last
	 * stage (pytorch; else 0) */
	uint64_t head_gather;
	double routing_skew; /* the model's moe_routing_skew (1: balanced) */
	bool ep_overlap; /* Megatron's combined 1F1B (overlap_moe_expert_parallel_comm; PP 1 or VPP) */
	uint64_t dispatcher_gather; /* the all-gather MoE dispatcher's share of the "mpu" buffer */
	/* multi-latent attention's YaRN rotary tables (pytorch; else 0): per
	 * attention module its cos/sin buffers, and the embedding its
	 * lru_cache'd forward keeps (at most MO_EST_ROPE_LRU modules a rank) */
	uint64_t mla_rope_module, mla_rope_lru;
	bool rope_fusion;            /* apply_rope_fusion (for the report) */
	/* what Megatron's alltoall MoE dispatcher keeps of its last
	 * micro-batch, per MoE layer (pytorch; else 0) */
	uint64_t dispatcher_state;
	const char *optimizer;
} mo_est_cfg;

struct mo_estimate {
	mo_arena *a;
	const struct mo_framework *fw;
	struct mo_est_cache *cache; /* the model's graphs (borrowed) and memo: a reference */
	mo_est_cfg cfg;
	mo_est_type *types;
	size_t n_types;
	mo_est_graph head, embed;
	mo_est_keep head_k, embed_k;
	mo_est_dims dims;         /* the model's named dimensions (shapes in explain) */
	mo_est_res *res;
	size_t n_res;
	size_t *res_slots;        /* hash table of res: index + 1, 0 = free */
#define MO_EST_BY_ACT 256
	size_t res_by_act[MO_EST_BY_ACT]; /* by action array address: index + 1 */
	size_t n_res_slots;       /* a power of two, over twice the results */
	size_t *layer_res;        /* per layer: its entry of res */
	mo_estimate_layer *layers;
	size_t n_layers;
	double *layer_swap_exposed; /* per layer: exposed swap seconds per mb */
	mo_estimate_stage *stages;
	mo_est_chunk *chunks;     /* [stage * vpp + chunk] */
	size_t n_stages;
	mo_estimate_event **events;
	size_t *n_events;
	mo_estimate_event *peak_events; /* per stage: its peak event (listed or not) */
	bool truncated;
	bool no_events;           /* est_run_unlisted: peaks from the closed form */
	bool no_peaks;            /* est_run_unpeaked: no stage peaks at all */
	bool unlisted; /* mo_estimate_resolved_summary: no listing of a step too long to list whole */
	mo_estimate_cost cost;
	mo_estimate_time time;
	double *type_fwd_s, *type_bwd_s; /* per layer type: seconds a micro-batch */
	/* more of est_time's seconds, for the timeline's clock (estimate_clock.c):
	 * the embedding's and the output layer's forward and backward of one
	 * micro-batch, one activation's transfer between pipeline stages, and
	 * per stage what follows its last backward (the data-parallel
	 * collectives and the optimizer step) and what a micro-batch's backward
	 * adds beyond its layers' (Megatron's main_grad adds) */
	double embed_fwd_s, embed_bwd_s, head_fwd_s, head_bwd_s, p2p_s;
	double *tail_s, *bwd_extra_s;
	double *type_gemm_s_per_flop;    /* per layer type: its forward GEMMs' rate */
	double *type_dev_s, *type_host_s; /* per layer type: device and host seconds */
	double time_etp;                 /* expert tensor parallel (an EP group spans EP x ETP) */
	bool time_fill, time_fill_te;    /* --deterministic-mode's NaN fills; of TE's outputs */
	double *res_recompute_s;         /* per result: recompute seconds a micro-batch */
	uint64_t capacity;
	size_t peak_stage;
};

/* mo_estimate_run without the event listing: every figure the same (each
 * stage's peak from the closed form of its schedule, which the walk agrees
 * with), no events (mo_estimate_event_count is 0). For callers that read
 * figures only and estimate many layouts (the layout search): the walk's
 * listing writes up to 2^18 events an estimate. */
int est_run_unlisted(mo_estimate **out, const mo_config *c, const mo_model *m,
		     mo_error *err);
/* Less again: no stage peaks (peak_bytes and the peak events 0), for a
 * caller that reads the parameter state (weights, gradients, optimizer of
 * each stage) and the step time, which are the same as mo_estimate_run's
 * (the time model reads no peak). */
int est_run_unpeaked(mo_estimate **out, const mo_config *c, const mo_model *m,
		     mo_error *err);

/* What is alive at a stage's peak event, replayed from its schedule: per
 * (micro-batch, chunk) slot (mb * vpp + chunk) the number of the chunk's
 * first layers holding activations, and per micro-batch whether the
 * embedding (bit 0) and the loss region (bit 1) hold theirs. Arrays are
 * malloc'ed; est_alive_free releases them. */
typedef struct mo_est_alive {
	int64_t mbn;      /* micro-batches simulated */
	int64_t *layers;  /* [mbn * vpp] */
	unsigned char *ends; /* [mbn] */
	int64_t recv;     /* gradient receive buffers (cfg.pp_grad_recv) alive */
} mo_est_alive;
/* Fills *out for stage s: 0, or -1 when out of memory. */
int est_peak_alive(const mo_estimate *e, size_t s, mo_est_alive *out);
/* Frees the arrays of *a (not a itself). */
void est_alive_free(mo_est_alive *a);
/* The name ("path:op") of the first op saving a storage, or NULL. */
const char *est_saver(const mo_est_graph *g, int storage);
/* Stage s's peak event (of a long step it may not be among the listed
 * ones); NULL when s is out of range. */
const mo_estimate_event *est_peak_event(const mo_estimate *e, size_t s);
/* The plan-independent parts of one stage's timeline (for the planner;
 * estimate_timeline.c explains how the peak is made of them). */
typedef struct mo_est_fixed {
	uint64_t base;   /* weights + gradients + optimizer (+ resident gathered) */
	uint64_t embed;  /* embedding activations per micro-batch (first stage) */
	uint64_t head;   /* loss-region activations per micro-batch (last stage) */
	uint64_t recv;   /* per micro-batch of a chunk that sends its output: the
			  * buffer of that output's gradient (cfg.pp_grad_recv) */
	uint64_t loss;   /* loss backward scratch (last stage) */
	uint64_t grads;  /* gradients made during backward (not in base): held
			  * at the layer events, not at the loss */
	uint64_t opt;    /* the optimizer update's scratch and the pipeline
			  * inputs kept to the next step: the optimizer step
			  * holds base + grads + opt (no activations) */
	bool last;       /* the last stage */
	int64_t others;  /* complete micro-batches in flight besides the current */
	size_t chunks;   /* virtual pipeline chunks */
} mo_est_fixed;
/* Fills *out with stage s's plan-independent parts. */
void est_stage_fixed(const mo_estimate *e, size_t s, mo_est_fixed *out);
/* FSDP gathered weights a layer event of layer `id` adds (forward, or
 * backward: twice that); 0 under PP, where they stay resident and count in
 * the base. */
uint64_t est_layer_gathered(const mo_estimate *e, int64_t id, bool backward);

/* The interleaved order of a step's mbn x vpp units: micro-batch groups,
 * each running every chunk over its micro-batches in turn (forward: chunk
 * 0 first; backward: the last chunk first). Group 0 has `first`
 * micro-batches, the `count` - 2 middle ones `size`, the last `last`
 * (count 1: one group of mbn). Megatron (get_schedule_table, schedules.py)
 * and MindSpore (SortFuncBetweenMicro, pipeline_scheduler.cc) differ in
 * where a micro-batch count that is no multiple of PP puts the remainder:
 * estimate_timeline.c, timeline_order_of. */
typedef struct mo_vpp_order {
	int64_t V, mbn, first, size, last, count;
	/* Megatron's combined 1F1B (overlap_moe_expert_parallel_comm): one
	 * more warm-up forward, and each steady forward runs layer by layer
	 * with its paired backward (timeline_pair) */
	bool combined;
} mo_vpp_order;

void timeline_order_of(const mo_estimate *e, int64_t mbn, mo_vpp_order *o);
/* Unit k of the order as (micro-batch, chunk); backward units run the
 * chunks in reverse. */
void order_unit(const mo_vpp_order *o, int64_t k, bool fwd, int64_t *mb, int64_t *chunk);
/* The group holding unit k: its first unit, first micro-batch and size. */
void order_group(const mo_vpp_order *o, int64_t k, int64_t *unit0, int64_t *mb0, int64_t *gs);
/* The inverse: the unit index of (mb, chunk). */
int64_t order_index(const mo_vpp_order *o, bool fwd, int64_t mb, int64_t chunk);
/* The first unit after the run of k's (group, chunk): units k..end-1 run
 * one chunk over consecutive micro-batches. */
int64_t order_run_end(const mo_vpp_order *o, int64_t k);
/* Forward units stage s of P runs before its first backward. */
int64_t order_warmup(const mo_vpp_order *o, int64_t P, size_t s);
/* The same order with at most `keep` middle groups (a long step's steady
 * state repeats group after group). */
void order_shorten(mo_vpp_order *o, int64_t keep);
/* One received pipeline input and its gradient (the planner prices the
 * chunks in flight with it). */
uint64_t timeline_input_pair(const mo_estimate *e);

/* Extra seconds per micro-batch of one layer of a type: re-running the
 * forward work `rc` of the ops it recomputes and comm_bytes of its
 * collectives; the swap of swap_bytes the prefetch window leaves exposed.
 * The estimate's step time and the planner price plans with these
 * (estimate_time.c). */
double est_time_recompute(const mo_estimate *e, size_t type, const mo_est_work *rc,
			     uint64_t comm_bytes);
/* The seconds per micro-batch of what layer `id` re-runs under the
 * estimate's plan, as the step time priced them. */
double est_time_layer_recompute(const mo_estimate *e, size_t id);
/* Adds op i's forward work to *w. */
void est_time_op_work(const mo_est_graph *g, size_t i, mo_est_work *w);
double est_time_swap(const mo_estimate *e, size_t type, uint64_t swap_bytes, int64_t prefetch);

#endif
