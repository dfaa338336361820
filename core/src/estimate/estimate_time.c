/* The step time: every op of the op tables the memory estimate walks,
 * priced on the device (struct mo_device, presets.c gives each constant's
 * source), then the pipeline schedule, the data-parallel collectives, the
 * optimizer step and the per-step fixed cost. docs/estimator.md states the
 * model; notes/step-time.md holds it against measured iteration times.
 *
 * Per op of a layer's graph, one micro-batch:
 *  - a GEMM (an op with FLOPs and one input): m, n, k from its tensors
 *    (in = m x k, out = m x n, FLOPs = 2mnk); its time is the larger of
 *    FLOPs at peak x gemm_efficiency x wave efficiency (output tiles of
 *    gemm_tile x 2 gemm_tile over compute_units: a partial last wave idles
 *    units) and its bytes (inputs, weight, output) at HBM bandwidth;
 *    grouped expert GEMMs split m over the local experts. Backward: two
 *    GEMMs of the same shape (data and weight gradients). The unfused
 *    attention core's baddbmm / bmm (two activations in) are batched GEMMs
 *    over the whole score matrix, bounded by their bytes at HBM too;
 *  - fused attention (the flash / cuDNN kernel op): causal, so half the
 *    table's FLOPs forward and 2.5 times that backward (FlashAttention-2's
 *    backward does 5 matmuls to the forward's 2) at peak x
 *    attention_efficiency;
 *  - an op without FLOPs that writes a tensor (norms, activations,
 *    dropout, softmax, adds, casts, permutes, rotary): the bytes it reads
 *    and writes at HBM bandwidth; backward twice the bytes;
 *  - a collective: ring alpha-beta over its group (TP, CP for attention's
 *    exchange, EP for the dispatcher's all-to-all), at the intra-node bus
 *    bandwidth when the group's ranks fit in one node (Megatron's rank
 *    order tp-cp-ep-dp-pp), else over the NICs of its ranks on each node
 *    (t_bus); backward runs the dual collective of the same bytes. TP
 *    collectives are on the compute stream (exposed) unless
 *    --tp-comm-overlap runs them beside their GEMMs (t_tp_overlapped);
 *    the CP exchange overlaps its attention (only what exceeds the
 *    attention's time shows); EP dispatch is exposed;
 *  - every kernel costs at least launch_us of host time: an op whose
 *    device time is shorter is launch-bound, the difference is "fixed".
 * Recompute re-runs the forward of the ops it recomputes, each priced as
 * above (est_time_op_work sums their work; GEMMs at the layer's own GEMM
 * rate), host-bound when their launches take longer. Swap: bytes over the host link each way, the
 * offload hidden behind the next default_prefetch layers' forward, the
 * prefetch behind their backward.
 * Pipeline: per stage and micro-batch T_s = forward + backward + the
 * activation send/receive; a step of m micro-batches is m x max T_s plus
 * the fill and drain (sum T_s - max T_s) / v (1F1B; interleaved with v
 * virtual chunks per stage).
 * After the last backward: the data-parallel gradient reduce-scatter
 * (distributed optimizer) or all-reduce over DP x CP, and the parameter
 * all-gather; with overlap_grad_reduce the buckets overlap the last
 * micro-batch's backward (and the gather the next forward): only what
 * exceeds it, and at least one bucket, is exposed. The optimizer step
 * reads and writes its local state at HBM bandwidth. */
#include "estimate/estimate_internal.h"

#include <math.h>
#include <string.h>

typedef struct mo_tdev {
	double peak, gemm_eff, attn_eff, hbm, intra, inter, lat, launch, fixed;
	double per_node, units, tile;
} mo_tdev;

/* Seconds of one micro-batch, by kind (forward + backward of a layer). */
typedef struct mo_tparts {
	double gemm, attn, mem;
	double gemm_flops;              /* the forward GEMMs' FLOPs */
	double tp, cp, ep;              /* collectives (cp: before overlap) */
	double dev_fwd;                 /* the forward's device seconds */
	double host, host_fwd;          /* launch cost: all kernels, the forward's */
	double launch;                  /* host time beyond the device time */
	double fwd;                     /* the forward, host-bound or not */
	double kernels;
} mo_tparts;

static void tdev_init(mo_tdev *t, const mo_device *d)
{
	double peak = d->peak_tflops > 0 ? d->peak_tflops : d->tflops / 0.7;
	/* no compute rate at all: compute is not priced (t_div) */
	t->peak = peak * 1e12;
	t->gemm_eff = d->gemm_efficiency > 0 ? d->gemm_efficiency : 0.7;
	t->attn_eff = d->attention_efficiency > 0 ? d->attention_efficiency : 0.5;
	t->hbm = (d->hbm_gbs > 0 ? d->hbm_gbs : 1000.0) * 1e9;
	t->intra = (d->intra_node_gbs > 0 ? d->intra_node_gbs : d->collective_bandwidth_gbs) * 1e9;
	t->inter = (d->inter_node_gbs > 0 ? d->inter_node_gbs : 20.0) * 1e9;
	t->lat = d->link_latency_us * 1e-6;
	t->launch = d->launch_us * 1e-6;
	t->fixed = d->step_overhead_ms * 1e-3;
	t->per_node = d->devices_per_node > 0 ? d->devices_per_node : 8;
	t->units = d->compute_units > 0 ? d->compute_units : 0;
	t->tile = d->gemm_tile > 0 ? d->gemm_tile : 128;
	if (t->intra <= 0)
		t->intra = 100e9;
}

static double t_max(double a, double b)
{
	return a > b ? a : b;
}

/* amount / rate; 0 when the device has no such rate (a device map may set
 * any constant to 0: that part is then not priced, as the cost pass does) */
static double t_div(double amount, double rate)
{
	return rate > 0 ? amount / rate : 0.0;
}

/* Bus bandwidth of a group of n ranks spread evenly over `span`
 * consecutive ranks. Inside one node: the NVLink / HCCS bus. Across
 * nodes, each device has its own NIC (DGX A100 / H100: 8 ConnectX NICs,
 * one per GPU; Atlas 800T A2: 8 RoCE ports, one per NPU) and NCCL runs
 * one ring channel per NIC, each crossing every node boundary once: the
 * group's k ranks on a node together move k NICs' worth, up to the
 * intra-node bus (nccl-tests' bus bandwidth of a multi-node all-reduce
 * on DGX nodes is the node's NIC total, not one NIC's). */
static double t_bus(const mo_tdev *d, double n, double span)
{
	if (span <= d->per_node)
		return d->intra;
	double stride = span / n;
	double local = stride < d->per_node ? floor(d->per_node / stride) : 1;
	return fmin(d->intra, local * d->inter);
}

/* Ring collective of `bytes` (the full tensor) over n ranks spanning
 * `span` consecutive ranks. */
static double t_coll(const mo_tdev *d, mo_est_comm kind, double bytes, double n, double span)
{
	if (n <= 1 || bytes <= 0)
		return 0.0;
	double bw = t_bus(d, n, span);
	double steps = n - 1, share = (n - 1) / n;
	if (kind == MO_COMM_ALLREDUCE) {
		steps *= 2;
		share *= 2;
	}
	return t_div(share * bytes, bw) + steps * d->lat;
}

/* Wave efficiency: output tiles over the compute units. */
static double t_waves(const mo_tdev *d, double m, double n)
{
	if (d->units <= 0 || m <= 0 || n <= 0)
		return 1.0;
	double tiles = ceil(m / d->tile) * ceil(n / (2 * d->tile));
	double waves = ceil(tiles / d->units);
	return tiles / (waves * d->units);
}

static double t_gemm(const mo_tdev *d, double flops, double a_el, double c_el,
			double groups, double esize)
{
	double m = a_el * c_el / (flops / 2.0); /* in = m k, out = m n, F = 2 m n k */
	if (!(m >= 1.0))
		return t_div(flops, d->peak * d->gemm_eff);
	double k = a_el / m, n = c_el / m;
	double mg = m / (groups > 1 ? groups : 1);
	double eff = d->gemm_eff * t_waves(d, mg, n);
	double bytes = esize * (a_el + c_el + k * n * (groups > 1 ? groups : 1));
	return t_max(t_div(flops, d->peak * eff), t_div(bytes, d->hbm));
}

/* Bytes an op reads from tensor i. The op tables give a view no bytes of
 * its own (it allocates nothing), but reading it reads its storage: all
 * of it for a reshape, an equal share of it for one of the views a
 * split returns. */
static double t_read_bytes(const mo_est_graph *g, int i)
{
	const mo_est_tensor *t = &g->t[i];
	if (t->bytes > 0 || t->storage == i || t->storage < 0)
		return (double)t->bytes;
	double parts = 1;
	if (t->producer >= 0) {
		const mo_est_op *op = &g->ops[t->producer];
		parts = 0;
		for (size_t k = 0; k < op->n_out; k++)
			parts += g->t[op->out[k]].storage == t->storage;
		parts = parts > 0 ? parts : 1;
	}
	return (double)g->t[t->storage].bytes / parts;
}

/* Bytes of tensors v: new_only, those each op allocates (the outputs it
 * writes); else what reading them reads. */
static double t_tensor_bytes(const mo_est_graph *g, const int *v, size_t n, bool new_only)
{
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		const mo_est_tensor *t = &g->t[v[i]];
		if (!new_only)
			s += t_read_bytes(g, v[i]);
		else if (t->storage == v[i])
			s += (double)t->bytes;
	}
	return s;
}

typedef struct mo_tctx {
	const mo_estimate *e;
	mo_tdev d;
	double tp, cp, ep, etp, groups; /* group sizes, local experts */
	double esize;                   /* compute dtype bytes */
	bool tp_overlap;                /* --tp-comm-overlap (with SP) */
	bool fill;                      /* --deterministic-mode's NaN fills */
	bool te;                        /* Transformer Engine's modules */
	bool wgrad_alloc;               /* a weight gradient per GEMM backward */
} mo_tctx;

/* Forward seconds of a GEMM op (its backward: twice, dgrad and wgrad). */
static double t_gemm_fwd(const mo_tctx *x, const mo_est_graph *g, const mo_est_op *op)
{
	double groups = op->name && strstr(op->name, "grouped") ? x->groups : 1;
	double a = op->n_in == 1 ? t_tensor_bytes(g, op->in, 1, false) / x->esize : 0;
	double c = op->n_out >= 1 ? (double)g->t[op->out[0]].bytes / x->esize : 0;
	if (a > 0)
		return t_gemm(&x->d, op->flops, a, c, groups, x->esize);
	/* a batched GEMM of two activations (the unfused attention's scores
	 * and context): its operands and output at HBM bandwidth bound it too */
	double bytes = t_tensor_bytes(g, op->in, op->n_in, false) +
		       t_tensor_bytes(g, op->out, op->n_out, true);
	return t_max(t_div(op->flops, x->d.peak * x->d.gemm_eff), t_div(bytes, x->d.hbm));
}

/* Device seconds of one kernel forward and its backward; the host's
 * launch cost accumulates beside them (mo_t_host_excess). */
static void t_kernel(const mo_tctx *x, mo_tparts *p, double *slot, double fwd, double bwd,
			double kf, double kb)
{
	*slot += fwd + bwd;
	p->dev_fwd += fwd;
	p->host_fwd += kf * x->d.launch;
	p->host += (kf + kb) * x->d.launch;
	p->kernels += kf + kb;
}

/* Whether a TP collective belongs to one of the Linears Transformer
 * Engine's userbuffers overlap (qkv, proj, fc1, fc2: base.py:349-360);
 * the MoE dispatch, MLA's latent gathers and the output layer are not. */
static bool t_ub_linear(const mo_est_op *op)
{
	static const char *const names[] = {"linear_qkv.", "linear_proj.", "linear_fc1.",
					    "linear_fc2."};
	for (size_t k = 0; op->name && k < sizeof names / sizeof *names; k++)
		if (strstr(op->name, names[k]))
			return true;
	return false;
}

/* The GEMM a TP collective feeds (an all-gather: the next GEMM) or
 * drains (a reduce-scatter: the one before): its forward seconds; -1 when
 * it is not one the userbuffers overlap. */
static double t_paired_gemm(const mo_tctx *x, const mo_est_graph *g, size_t i)
{
	const mo_est_op *op = &g->ops[i];
	if (!t_ub_linear(op))
		return -1;
	if (op->comm == MO_COMM_ALLGATHER) {
		for (size_t j = i + 1; j < g->n_ops; j++)
			if (g->ops[j].flops > 0 && g->ops[j].comm == MO_COMM_NONE)
				return t_gemm_fwd(x, g, &g->ops[j]);
	} else if (op->comm == MO_COMM_REDUCESCATTER) {
		for (size_t j = i; j-- > 0;)
			if (g->ops[j].flops > 0 && g->ops[j].comm == MO_COMM_NONE)
				return t_gemm_fwd(x, g, &g->ops[j]);
	}
	return -1;
}

/* SMs Transformer Engine's userbuffers take from the GEMMs they overlap
 * in the "pipeline" and "bulk" methods (num_sm 16 with set_sm_margin:
 * TransformerEngine d0067d0d, pytorch/module/base.py:375-390): those
 * GEMMs run on the remaining units. */
#define TP_OVERLAP_SMS 16.0

static double t_sm_margin(const mo_tctx *x, double gemm)
{
	double u = x->d.units;
	return u > TP_OVERLAP_SMS ? gemm * TP_OVERLAP_SMS / (u - TP_OVERLAP_SMS) : 0;
}

/* --tp-comm-overlap with Transformer Engine's default methods
 * (base.py:349-360, 375-390): forward, the all-gather before qkv / fc1 is
 * a ring exchange in TP chunks beside the GEMM's chunks (only what
 * exceeds the GEMM shows) and the reduce-scatter after proj / fc2 a
 * 4-split pipeline beside the GEMM (the last split's transfer shows, and
 * the GEMM loses the comm SMs); backward, the duals: the gradient's
 * all-gather before proj / fc2 dgrad is a ring exchange, the dgrad's
 * reduce-scatter after qkv / fc1 a bulk overlap with their wgrad GEMM
 * (which loses the comm SMs). Seconds exposed, forward and backward. */
static void t_tp_overlapped(const mo_tctx *x, double c, double gemm, mo_est_comm kind,
			       double *fwd, double *bwd)
{
	if (kind == MO_COMM_ALLGATHER) {
		*fwd = t_max(0, c - gemm);
		*bwd = t_max(0, c - gemm) + t_sm_margin(x, gemm);
		return;
	}
	double slow = gemm + t_sm_margin(x, gemm), split = 4.0;
	double pipeline = slow / split + (split - 1) * t_max(slow, c) / split + c / split;
	*fwd = pipeline - gemm;
	*bwd = t_max(0, c - gemm);
}

/* A collective and its backward dual: group by what it exchanges. Its
 * host cost shows where it exceeds the transfer (launch-bound). */
static void t_comm(const mo_tctx *x, const mo_est_graph *g, size_t i, mo_tparts *p)
{
	const mo_est_op *op = &g->ops[i];
	double b = (double)op->comm_bytes, t, *slot;
	if (op->comm == MO_COMM_ALLTOALL) {
		t = t_coll(&x->d, op->comm, b, x->ep, x->ep * x->etp);
		slot = &p->ep;
	} else if (op->name && strstr(op->name, "core_attention")) {
		t = t_coll(&x->d, op->comm, b, x->cp, x->cp * x->tp);
		slot = &p->cp;
	} else {
		t = t_coll(&x->d, op->comm, b, x->tp, x->tp);
		slot = &p->tp;
		double gemm = x->tp_overlap ? t_paired_gemm(x, g, i) : -1;
		if (gemm >= 0) {
			double f, bw;
			t_tp_overlapped(x, t, gemm, op->comm, &f, &bw);
			t_kernel(x, p, slot, f, bw, 1, 1);
			return;
		}
	}
	t_kernel(x, p, slot, t, t, 1, 1);
}

/* A fused attention kernel (flash / cuDNN / MindSpore's
 * FlashAttentionScore), by its op: the projections around it are GEMMs
 * and the unfused core's baddbmm / bmm are batched GEMMs over the whole
 * score matrix (the causal mask is applied after them, so nothing is
 * skipped), at the GEMM rate. */
static bool t_fused_attention(const mo_est_op *op)
{
	return op->name && (strstr(op->name, ":flash_attention") || strstr(op->name, ":fused_attention"));
}

/* Bytes a memory-bound op reads and writes; 0 for a view (no kernel). */
static double t_mem_bytes(const mo_est_graph *g, const mo_est_op *op)
{
	double w = t_tensor_bytes(g, op->out, op->n_out, true);
	return w > 0 ? t_tensor_bytes(g, op->in, op->n_in, false) + w : 0;
}

/* Forward seconds of fused attention of `flops` (causal: half of them). */
static double t_attn_fwd(const mo_tdev *d, double flops)
{
	return t_div(0.5 * flops, d->peak * d->attn_eff);
}

/* Whether the op is a Transformer Engine module's, whose C++ allocates its
 * outputs and gradients with at::empty: the Linears Megatron's TE spec
 * builds (qkv, proj, fc1, fc2, the grouped experts), its norms and the
 * fused attention. The router and the output layer are Megatron's own
 * torch Linears (structured kernels allocate without the fill). */
static bool t_te_op(const mo_est_op *op)
{
	static const char *const names[] = {"linear_qkv:", "linear_proj:", "linear_fc1:",
					    "linear_fc2:", "experts:grouped", ":layer_norm",
					    ":rms_norm"};
	for (size_t k = 0; op->name && k < sizeof names / sizeof *names; k++)
		if (strstr(op->name, names[k]))
			return true;
	return t_fused_attention(op);
}

/* Bytes --deterministic-mode fills with NaN for one op, forward and
 * backward. Megatron's --deterministic-mode calls
 * torch.use_deterministic_algorithms(True) (megatron/training/
 * determinism.py:158 at d98e8a64) and leaves
 * torch.utils.deterministic.fill_uninitialized_memory at its default,
 * true: PyTorch's empty_cuda / empty_strided_cuda then write NaN over
 * every tensor they return (aten/src/ATen/native/cuda/
 * TensorFactories.cu, fill_empty_deterministic_). Transformer Engine's
 * modules allocate their outputs and their backward's gradients that way
 * (the input's gradient; the weight's too when it is not accumulated
 * into main_grad), and so do the sequence-parallel all-gather and
 * reduce-scatter buffers (torch.empty in tensor_parallel/mappings.py); a
 * torch op's own output (structured kernels, TensorIterator) is not
 * filled. One write each, at HBM bandwidth. */
static void t_fill_bytes(const mo_tctx *x, const mo_est_graph *g, const mo_est_op *op,
			 double *fwd, double *bwd)
{
	*fwd = *bwd = 0;
	if (!x->fill)
		return;
	if (op->comm == MO_COMM_ALLGATHER || op->comm == MO_COMM_REDUCESCATTER) {
		/* the gathered tensor one way, the scattered shard the other */
		double n = op->name && strstr(op->name, "core_attention") ? x->cp : x->tp;
		double b = (double)op->comm_bytes, shard = b / (n > 1 ? n : 1);
		*fwd = op->comm == MO_COMM_ALLGATHER ? b : shard;
		*bwd = op->comm == MO_COMM_ALLGATHER ? shard : b;
		return;
	}
	if (op->comm != MO_COMM_NONE || !x->te || !t_te_op(op))
		return;
	double out = t_tensor_bytes(g, op->out, op->n_out, true);
	if (out <= 0)
		return; /* a view: no kernel, no allocation */
	double in = t_tensor_bytes(g, op->in, op->n_in, false);
	double weight = 0;
	if (op->flops > 0 && op->n_in == 1 && !t_fused_attention(op) && x->wgrad_alloc) {
		double a = in / x->esize, c = out / x->esize;
		double m = a * c / (op->flops / 2.0); /* in = m k, out = m n */
		double groups = op->name && strstr(op->name, "grouped") ? x->groups : 1;
		weight = m >= 1.0 ? x->esize * (a / m) * (c / m) * groups : 0;
	}
	*fwd = out;
	*bwd = in + weight;
}

/* One op's device time and launches by its kind. */
static void t_op_work(const mo_tctx *x, const mo_est_graph *g, size_t i, mo_tparts *p)
{
	const mo_tdev *d = &x->d;
	const mo_est_op *op = &g->ops[i];
	if (op->comm != MO_COMM_NONE) {
		t_comm(x, g, i, p);
		return;
	}
	if (op->flops > 0 && t_fused_attention(op)) {
		double f = t_attn_fwd(d, op->flops);
		t_kernel(x, p, &p->attn, f, 2.5 * f, 1, 1);
		return;
	}
	if (op->flops > 0) {
		double f = t_gemm_fwd(x, g, op);
		p->gemm_flops += op->flops;
		t_kernel(x, p, &p->gemm, f, 2 * f, 1, 2);
		return;
	}
	double b = t_mem_bytes(g, op);
	if (b <= 0)
		return;
	double t = t_div(b, d->hbm);
	t_kernel(x, p, &p->mem, t, 2 * t, 1, 1);
}

/* An op with the NaN fills of what it allocates (their forward part in
 * the forward). */
static void t_op(const mo_tctx *x, const mo_est_graph *g, size_t i, mo_tparts *p)
{
	double ff, fb;
	t_fill_bytes(x, g, &g->ops[i], &ff, &fb);
	p->mem += t_div(ff + fb, x->d.hbm);
	p->dev_fwd += t_div(ff, x->d.hbm);
	t_op_work(x, g, i, p);
}

/* A collective's bytes on the group t_comm prices it over. */
static void t_comm_work(const mo_est_op *op, mo_est_work *w)
{
	double b = (double)op->comm_bytes;
	w->comm_bytes += b;
	w->kernels += 1;
	if (op->comm == MO_COMM_ALLGATHER)
		w->gathered_bytes += b;
	else if (op->comm == MO_COMM_REDUCESCATTER)
		w->scattered_bytes += b;
	if (op->comm == MO_COMM_ALLTOALL)
		w->ep_bytes += b;
	else if (op->name && strstr(op->name, "core_attention"))
		w->cp_bytes += b;
	else
		w->tp_bytes += op->comm == MO_COMM_ALLREDUCE ? 2 * b : b;
}

void est_time_op_work(const mo_est_graph *g, size_t i, mo_est_work *w)
{
	const mo_est_op *op = &g->ops[i];
	if (op->comm != MO_COMM_NONE) {
		t_comm_work(op, w);
		return;
	}
	if (t_te_op(op))
		w->te_out_bytes += t_tensor_bytes(g, op->out, op->n_out, true);
	if (op->flops > 0 && t_fused_attention(op)) {
		w->attn_flops += op->flops;
		w->kernels += 1;
	} else if (op->flops > 0) {
		w->gemm_flops += op->flops;
		w->kernels += 1;
	} else {
		double b = t_mem_bytes(g, op);
		w->mem_bytes += b;
		w->kernels += b > 0;
	}
}

/* Megatron's MoE token dispatchers copy the tokens per expert to the host
 * after the router (allgather: token_dispatcher.py:320 `.cpu()`; alltoall:
 * _maybe_dtoh_and_synchronize waits on the copy's event at its
 * cuda_sync_point, :925-958 at d98e8a64): the host stops issuing until the
 * device has run everything queued before the copy. The router's ops are the
 * last before it. */
static bool t_sync_op(const mo_est_op *op)
{
	return op->name && strstr(op->name, "mlp.router");
}

/* The host issues kernels ahead of the device (asynchronous launches):
 * a layer is host-bound when its launch cost exceeds its device time;
 * the difference is the launch-bound excess. A forward that synchronises
 * is two segments the host cannot run ahead across: up to the sync, the
 * later of the host's launches and the device's work; after it, the same
 * again (the device idles until the host issues; the host, once it has
 * waited, issues the rest). Each segment costs max(host, device), not
 * their sum. The backward has no sync. */
static void t_graph(const mo_tctx *x, const mo_est_graph *g, mo_tparts *p)
{
	memset(p, 0, sizeof(*p));
	double dev_pre = -1, host_pre = 0;
	for (size_t i = 0; i < g->n_ops; i++) {
		t_op(x, g, i, p);
		if (t_sync_op(&g->ops[i])) {
			dev_pre = p->dev_fwd;
			host_pre = p->host_fwd;
		}
	}
	double dev = p->gemm + p->attn + p->mem + p->tp + p->cp + p->ep;
	if (dev_pre >= 0) {
		double bwd = t_max(dev - p->dev_fwd, p->host - p->host_fwd);
		p->fwd = t_max(dev_pre, host_pre) +
			 t_max(p->dev_fwd - dev_pre, p->host_fwd - host_pre);
		p->launch = p->fwd + bwd - dev;
		return;
	}
	p->launch = t_max(0, p->host - dev);
	p->fwd = t_max(p->dev_fwd, p->host_fwd);
}

static double t_compute(const mo_tparts *p)
{
	return p->gemm + p->attn + p->mem;
}

/* The CP exchange overlaps the attention kernels: what exceeds them. */
static double t_cp_exposed(const mo_tparts *p)
{
	return t_max(0, p->cp - p->attn);
}

static double t_total(const mo_tparts *p)
{
	return t_compute(p) + p->launch + p->tp + t_cp_exposed(p) + p->ep;
}

static void t_add(mo_tparts *a, const mo_tparts *b, double k)
{
	a->gemm += k * b->gemm;
	a->gemm_flops += k * b->gemm_flops;
	a->attn += k * b->attn;
	a->mem += k * b->mem;
	a->launch += k * b->launch;
	a->dev_fwd += k * b->dev_fwd;
	a->host += k * b->host;
	a->host_fwd += k * b->host_fwd;
	a->tp += k * b->tp;
	a->cp += k * b->cp;
	a->ep += k * b->ep;
	a->fwd += k * b->fwd;
	a->kernels += k * b->kernels;
}

/* One stage's per-micro-batch figures. */
typedef struct mo_tstage {
	mo_tparts p;
	double recompute, swap, p2p, fwd, bwd_last;
	double bwd_extra;    /* what the stage's backward adds beyond its layers' */
	double per_mb;       /* T_s */
	double per_mb_base;  /* T_s without recompute and swap */
	double dp, opt;      /* after the last backward */
} mo_tstage;

static void t_ctx_init(mo_tctx *x, const mo_estimate *e, const mo_model *m)
{
	memset(x, 0, sizeof(*x));
	x->e = e;
	tdev_init(&x->d, &e->cfg.dev);
	x->tp = (double)e->cfg.tp;
	x->cp = (double)e->cfg.cp;
	x->ep = (double)e->cfg.ep;
	x->etp = (double)model_etp(m);
	if (x->etp < 1)
		x->etp = 1;
	x->groups = est_expr("el", &e->dims);
	if (!(x->groups >= 1))
		x->groups = 1;
	x->esize = e->cfg.cbytes > 0 ? e->cfg.cbytes : 2;
	x->tp_overlap = m->tp_comm_overlap && m->sequence_parallel && x->tp > 1;
	bool torch = strcmp(m->framework, "pytorch") == 0;
	x->fill = torch && m->deterministic_mode;
	x->te = torch && m->transformer_impl && strcmp(m->transformer_impl, "transformer_engine") == 0;
	x->wgrad_alloc = !m->gradient_accumulation_fusion;
}

/* Seconds of swap the prefetch window leaves exposed (one micro-batch). */
static double t_swap(const mo_device *dev, double swap_bytes, double pf, double fwd, double bwd)
{
	double host = dev->host_bandwidth_gbs * 1e9;
	if (swap_bytes <= 0 || host <= 0)
		return 0;
	double xfer = swap_bytes / host;
	double hidden = fmin(xfer, pf * fwd) + fmin(xfer, pf * bwd);
	return t_max(0, 2 * xfer - hidden);
}

/* The re-run ops' device time (GEMMs at the type's own forward GEMM rate,
 * which holds its shapes' wave and HBM bounds; collectives exposed, on
 * their groups) and their launches join the layer's: what they add to
 * max(device, host) is their cost (a device-bound layer hides the
 * launches, a host-bound one the device time); then the all-gathers comm
 * recompute re-runs (comm_bytes beyond the recomputed ops' own). */
double est_time_recompute(const mo_estimate *e, size_t type, const mo_est_work *rc,
			     uint64_t comm_bytes)
{
	mo_tdev d;
	tdev_init(&d, &e->cfg.dev);
	double tp = (double)e->cfg.tp, cp = (double)e->cfg.cp, ep = (double)e->cfg.ep;
	double gemm = rc->gemm_flops > 0 ? rc->gemm_flops * e->type_gemm_s_per_flop[type] : 0;
	double comm = t_coll(&d, MO_COMM_ALLGATHER, rc->tp_bytes, tp, tp) +
		      t_coll(&d, MO_COMM_ALLGATHER, rc->cp_bytes, cp, cp * tp) +
		      t_coll(&d, MO_COMM_ALLGATHER, rc->ep_bytes, ep, ep * e->time_etp);
	/* the re-run forward allocates its outputs again: filled again */
	double fill = e->time_fill ? rc->gathered_bytes + rc->scattered_bytes / (tp > 1 ? tp : 1) +
					   (e->time_fill_te ? rc->te_out_bytes : 0)
				   : 0;
	double dev = gemm + t_attn_fwd(&d, rc->attn_flops) + t_div(rc->mem_bytes + fill, d.hbm) + comm;
	double dt = e->type_dev_s[type], ht = e->type_host_s[type];
	double t = t_max(dt + dev, ht + rc->kernels * d.launch) - t_max(dt, ht);
	return t + t_coll(&d, MO_COMM_ALLGATHER, t_max(0, (double)comm_bytes - rc->comm_bytes), tp,
			     tp);
}

double est_time_layer_recompute(const mo_estimate *e, size_t id)
{
	return e->res_recompute_s[e->layer_res[id]];
}

double est_time_swap(const mo_estimate *e, size_t type, uint64_t swap_bytes, int64_t prefetch)
{
	return t_swap(&e->cfg.dev, (double)swap_bytes, (double)prefetch, e->type_fwd_s[type],
			 e->type_bwd_s[type]);
}

/* rc: per result of the estimate (layers with the same type and actions
 * share one), its recompute seconds once priced, else negative. */
static void t_layers(const mo_tctx *x, const mo_tparts *types, mo_tstage *st, double *rc)
{
	const mo_estimate *e = x->e;
	for (size_t i = 0; i < e->n_res; i++)
		rc[i] = -1;
	for (size_t i = 0; i < e->n_layers; i++) {
		const mo_estimate_layer *l = &e->layers[i];
		size_t r = e->layer_res[i], t = e->res[r].type;
		mo_tstage *s = &st[l->stage];
		t_add(&s->p, &types[t], 1.0);
		if (rc[r] < 0)
			rc[r] = est_time_recompute(e, t, &e->res[r].k.recompute, e->res[r].k.comm_bytes);
		s->recompute += rc[r];
		s->swap += est_time_swap(e, t, l->swap_bytes, e->cfg.prefetch);
	}
}

/* The stage's gradients as the reduce-scatter delivers them: sharded like its
 * weights. MindSpore's pipeline with FSDP keeps each stage's gradients whole
 * through the step (est_layer_pp_resident: the fp32 accumulator and each
 * backward's fresh gradient), so its gradients_bytes is no shard; the deferred
 * reduce-scatter reads the fp32 accumulator, so the shard is the weights'
 * share at 4 B a parameter. */
static double t_shard_grads(const mo_estimate *e, const mo_estimate_stage *es)
{
	if (!e->cfg.pp_unsharded || e->cfg.pbytes <= 0)
		return (double)es->gradients_bytes;
	return (double)es->weights_bytes / e->cfg.pbytes * 4.0;
}

/* Gradient reduce and parameter gather over DP x CP after the backward. */
static double t_dp(const mo_tctx *x, const mo_model *m, const mo_estimate_stage *es,
		      const mo_tstage *s)
{
	const mo_estimate *e = x->e;
	/* the whole data-parallel group: FSDP shards over data_parallel_shard
	 * of its ranks, but the reduce and the gather still cross all of them */
	double n = (double)(e->cfg.dp * e->cfg.cp), span = n * x->tp;
	if (n <= 1)
		return 0;
	/* FSDP's reduce-scatter takes the whole gradient: the shard x data_parallel_shard */
	double grads = t_shard_grads(e, es), params = (double)es->weights_bytes;
	bool dist = m->distributed_optimizer || e->cfg.dps > 1;
	double red = t_coll(&x->d, dist ? MO_COMM_REDUCESCATTER : MO_COMM_ALLREDUCE,
			       dist && e->cfg.dps <= 1 ? grads : grads * (double)e->cfg.dps, n, span);
	double gat = dist ? t_coll(&x->d, MO_COMM_ALLGATHER,
				      e->cfg.dps > 1 ? params * (double)e->cfg.dps : params, n, span)
			  : 0;
	if (!m->overlap_grad_reduce)
		return red + gat;
	double local = grads / (e->cfg.gbytes > 0 ? e->cfg.gbytes : 4);
	double buckets = e->cfg.bucket_params > 0 ? ceil(local / e->cfg.bucket_params) : 1;
	if (buckets < 1)
		buckets = 1;
	return t_max(red - s->bwd_last, red / buckets) + t_max(gat - s->fwd, gat / buckets);
}

/* Megatron's DDP without gradient-accumulation fusion: the weight
 * gradient comes back as its own bf16 tensor and the backward hook adds
 * it into the fp32 main_grad buffer, one add per parameter and
 * micro-batch (param.main_grad.add_(param.grad.data):
 * megatron/core/distributed/distributed_data_parallel.py:458-461 at
 * adc69dba; with the fusion the wgrad GEMM accumulates into main_grad
 * itself, tensor_parallel/layers.py:553-566). Memory-bound: the gradient
 * read, main_grad read and written, per micro-batch. */
static double t_grad_accumulate(const mo_tctx *x, const mo_model *m, const mo_estimate_stage *es)
{
	const mo_estimate *e = x->e;
	if (m->gradient_accumulation_fusion || strcmp(m->framework, "pytorch") != 0 ||
	    e->cfg.dps > 1 || e->cfg.gbytes <= 0)
		return 0;
	double params = (double)es->gradients_bytes / e->cfg.gbytes;
	return t_div(params * (x->esize + 2.0 * e->cfg.gbytes), x->d.hbm);
}

/* The optimizer step: its state read and written, the gradients read,
 * the compute-dtype parameters written. */
static double t_opt(const mo_tctx *x, const mo_estimate_stage *es)
{
	double bytes = 2.0 * (double)es->optimizer_bytes + t_shard_grads(x->e, es) +
		       (double)es->weights_bytes;
	return t_div(bytes, x->d.hbm);
}

static void t_ends(const mo_tctx *x, const mo_tparts *embed, const mo_tparts *head,
		      mo_tstage *st, size_t n)
{
	const mo_estimate *e = x->e;
	t_add(&st[0].p, embed, 1.0);
	t_add(&st[n - 1].p, head, (double)(1 + e->cfg.mtp));
	if (e->cfg.pp <= 1)
		return;
	double b = est_expr("tsp", &e->dims) * est_expr("h", &e->dims) * x->esize;
	double span = (double)e->cfg.world / (double)e->cfg.pp;
	double t = t_coll(&x->d, MO_COMM_ALLGATHER, 2.0 * b, 2, span * 2);
	for (size_t s = 0; s < n; s++)
		st[s].p2p = (s > 0 ? t : 0) + (s + 1 < n ? t : 0);
}

static const char *t_largest(const mo_estimate_time *t)
{
	const char *names[] = {"compute", "tp communication", "cp communication",
			       "ep communication", "pp communication", "dp communication",
			       "pipeline bubble", "optimizer", "recompute", "swap", "fixed"};
	double v[] = {t->compute_seconds, t->comm_tp_seconds, t->comm_cp_seconds,
		      t->comm_ep_seconds, t->comm_pp_seconds, t->comm_dp_seconds,
		      t->bubble_seconds, t->optimizer_seconds, t->recompute_seconds,
		      t->swap_seconds, t->fixed_seconds};
	size_t best = 0;
	for (size_t i = 1; i < sizeof v / sizeof *v; i++)
		if (v[i] > v[best])
			best = i;
	return names[best];
}

/* The model's FLOPs of one step over the whole job: 3 x forward (the
 * tables count attention unmasked, as Megatron's MFU formula does). */
static double t_model_flops(const mo_estimate *e)
{
	double per_device = 0;
	for (size_t i = 0; i < e->n_layers; i++)
		per_device += e->layers[i].forward_flops;
	per_device += (double)(1 + e->cfg.mtp) * e->head.flops;
	/* each layer lives on world / PP devices, each computing its share */
	double per_stage = (double)e->cfg.world / (double)(e->cfg.pp > 0 ? e->cfg.pp : 1);
	return 3.0 * (double)e->cfg.mbn * per_device * per_stage;
}

static void t_schedule(const mo_tctx *x, const mo_model *m, mo_tstage *st, size_t n,
			  mo_estimate_time *out, double *base)
{
	const mo_estimate *e = x->e;
	double mb = (double)e->cfg.mbn, v = (double)(e->cfg.vpp > 0 ? e->cfg.vpp : 1);
	double sum = 0, sum_base = 0, maxt = 0, maxb = 0, tail = 0;
	size_t slow = 0;
	for (size_t s = 0; s < n; s++) {
		mo_tstage *t = &st[s];
		double acc = t_grad_accumulate(x, m, &e->stages[s]), layers = t_total(&t->p);
		t->p.mem += acc; /* the device runs it under the host's issue time if host-bound */
		t->p.launch = t_max(0, t->p.launch - acc);
		double work = t_total(&t->p);
		t->bwd_extra = work - layers;
		t->fwd = t->p.fwd;
		t->bwd_last = work - t->p.fwd + t->recompute;
		t->per_mb = work + t->recompute + t->swap + t->p2p;
		t->per_mb_base = work + t->p2p;
		t->dp = t_dp(x, m, &e->stages[s], t);
		t->opt = t_opt(x, &e->stages[s]);
		sum += t->per_mb;
		sum_base += t->per_mb_base;
		if (t->per_mb > maxt) {
			maxt = t->per_mb;
			slow = s;
		}
		maxb = t_max(maxb, t->per_mb_base);
		tail = t_max(tail, t->dp + t->opt);
	}
	const mo_tstage *w = &st[slow];
	out->slowest_stage = slow;
	out->gemm_seconds = mb * w->p.gemm;
	out->attention_seconds = mb * w->p.attn;
	out->memory_bound_seconds = mb * w->p.mem;
	out->compute_seconds = mb * t_compute(&w->p);
	out->comm_tp_seconds = mb * w->p.tp;
	out->comm_cp_seconds = mb * t_cp_exposed(&w->p);
	out->comm_ep_seconds = mb * w->p.ep;
	out->comm_pp_seconds = mb * w->p2p;
	out->recompute_seconds = mb * w->recompute;
	out->swap_seconds = mb * w->swap;
	out->bubble_seconds = (sum - maxt) / v;
	out->comm_dp_seconds = 0;
	out->optimizer_seconds = 0;
	for (size_t s = 0; s < n; s++)
		if (st[s].dp + st[s].opt >= tail) {
			out->comm_dp_seconds = st[s].dp;
			out->optimizer_seconds = st[s].opt;
			break;
		}
	out->fixed_seconds = mb * w->p.launch + x->d.fixed;
	out->kernels = mb * w->p.kernels;
	out->step_seconds = mb * maxt + out->bubble_seconds + tail + x->d.fixed;
	*base = mb * maxb + (sum_base - maxb) / v + tail + x->d.fixed;
}

static void t_rates(const mo_estimate *e, const mo_model *m, mo_estimate_time *t)
{
	double world = (double)(e->cfg.world > 0 ? e->cfg.world : 1);
	double dp = t_div(world, (double)e->cfg.tp * (double)e->cfg.cp *
					(double)(e->cfg.pp > 0 ? e->cfg.pp : 1));
	double tokens = (double)e->cfg.mbn * (double)m->micro_batch_size *
			(double)m->seq_length * dp;
	double peak = (e->cfg.dev.peak_tflops > 0 ? e->cfg.dev.peak_tflops
						  : e->cfg.dev.tflops / 0.7) * 1e12;
	t->model_flops = t_model_flops(e);
	if (t->step_seconds > 0) {
		t->tokens_per_second_per_device = t_div(tokens / t->step_seconds, world);
		t->mfu = t_div(t->model_flops, t->step_seconds * world * peak);
	}
	t->largest_term = t_largest(t);
}

/* Writes e->time, the stages' compute / overhead seconds and the cost's
 * step seconds. */
int est_time(mo_estimate *e, const mo_model *m)
{
	mo_tctx x;
	t_ctx_init(&x, e, m);
	size_t n = e->n_stages;
	mo_tparts *types = arena_alloc(e->a, (e->n_types + 2) * sizeof(*types));
	mo_tstage *st = arena_alloc(e->a, n * sizeof(*st));
	double *rc = arena_alloc(e->a, (e->n_res + 1) * sizeof(*rc));
	if (!types || !st || !rc || n == 0)
		return -1;
	e->res_recompute_s = rc;
	memset(st, 0, n * sizeof(*st));
	e->type_fwd_s = arena_alloc(e->a, (e->n_types + 1) * sizeof(double));
	e->type_bwd_s = arena_alloc(e->a, (e->n_types + 1) * sizeof(double));
	e->type_gemm_s_per_flop = arena_alloc(e->a, (e->n_types + 1) * sizeof(double));
	e->type_dev_s = arena_alloc(e->a, (e->n_types + 1) * sizeof(double));
	e->type_host_s = arena_alloc(e->a, (e->n_types + 1) * sizeof(double));
	if (!e->type_fwd_s || !e->type_bwd_s || !e->type_gemm_s_per_flop || !e->type_dev_s ||
	    !e->type_host_s)
		return -1;
	e->time_etp = x.etp;
	e->time_fill = x.fill;
	e->time_fill_te = x.fill && x.te;
	for (size_t t = 0; t < e->n_types; t++) {
		t_graph(&x, &e->types[t].g, &types[t]);
		e->type_fwd_s[t] = types[t].fwd;
		/* p->gemm is forward + backward: 3 x the forward */
		e->type_gemm_s_per_flop[t] = t_div(types[t].gemm / 3.0, types[t].gemm_flops);
		e->type_dev_s[t] = t_total(&types[t]) - types[t].launch;
		e->type_host_s[t] = types[t].host;
		e->type_bwd_s[t] = t_total(&types[t]) - types[t].fwd;
	}
	t_graph(&x, &e->embed, &types[e->n_types]);
	t_graph(&x, &e->head, &types[e->n_types + 1]);
	e->embed_fwd_s = types[e->n_types].fwd;
	e->embed_bwd_s = t_total(&types[e->n_types]) - e->embed_fwd_s;
	e->head_fwd_s = types[e->n_types + 1].fwd;
	e->head_bwd_s = t_total(&types[e->n_types + 1]) - e->head_fwd_s;
	t_layers(&x, types, st, rc);
	t_ends(&x, &types[e->n_types], &types[e->n_types + 1], st, n);
	e->p2p_s = n > 1 ? st[0].p2p : 0; /* the first stage only sends */
	double base = 0;
	memset(&e->time, 0, sizeof(e->time));
	t_schedule(&x, m, st, n, &e->time, &base);
	t_rates(e, m, &e->time);
	e->tail_s = arena_alloc(e->a, n * sizeof(double));
	e->bwd_extra_s = arena_alloc(e->a, n * sizeof(double));
	if (!e->tail_s || !e->bwd_extra_s)
		return -1;
	for (size_t s = 0; s < n; s++) {
		e->tail_s[s] = st[s].dp + st[s].opt;
		e->bwd_extra_s[s] = st[s].bwd_extra;
		e->stages[s].compute_seconds = (double)e->cfg.mbn * st[s].per_mb_base;
		e->stages[s].overhead_seconds = (double)e->cfg.mbn * (st[s].recompute + st[s].swap);
	}
	e->cost.step_seconds = e->time.step_seconds;
	e->cost.step_seconds_baseline = base;
	e->cost.overhead_percent = base > 0 ? (e->time.step_seconds - base) / base * 100.0 : 0;
	return 0;
}

const mo_estimate_time *mo_estimate_get_time(const mo_estimate *e)
{
	return e ? &e->time : NULL;
}
