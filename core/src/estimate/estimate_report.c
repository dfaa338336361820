/* The human report of an estimate and its --explain text: per stage a bar
 * of the buckets against capacity and the peak event, per layer before and
 * after, the cost, the assumptions; with explain, the formula and the
 * tensors behind each figure. */
#include "estimate/estimate_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0
#define GIB 1073741824.0

/* ---- explain: the tensors each layer type keeps ------------------------------- */

const char *est_saver(const mo_est_graph *g, int storage)
{
	for (size_t o = 0; o < g->n_ops; o++)
		for (size_t i = 0; i < g->ops[o].n_save; i++)
			if (g->t[g->ops[o].save[i]].storage == storage)
				return g->ops[o].name;
	return NULL;
}

static void estimate_text_graph(mo_buf *b, const char *label, const mo_est_graph *g)
{
	buf_printf(b, "  %s: forward %.3g GFLOP per micro-batch; kept for backward "
			 "(no optimisation):\n", label, g->flops / 1e9);
	for (size_t t = 0; t < g->n_t; t++) {
		if (g->t[t].storage != (int)t)
			continue;
		const char *op = est_saver(g, (int)t);
		if (op)
			buf_printf(b, "    %-10s %-9s %12.3f MiB  saved by %s\n", g->t[t].name,
				      g->t[t].dtype, (double)g->t[t].bytes / MIB, op);
	}
}

void est_explain_types(const mo_estimate *e, mo_buf *b)
{
	buf_printf(b, "activations (%s rules%s): per layer type, per micro-batch, per "
			 "device; tensors shared by several ops count once\n",
		      e->fw->name, e->fw->align > 1 ? ", every tensor rounded up to 512 B" : "");
	for (size_t t = 0; t < e->n_types; t++)
		estimate_text_graph(b, e->types[t].name, &e->types[t].g);
	estimate_text_graph(b, "loss region (last stage)", &e->head);
	estimate_text_graph(b, "embedding (first stage)", &e->embed);
	for (size_t i = 0; i < e->n_res; i++) {
		const mo_est_keep *k = &e->res[i].k;
		buf_printf(b, "  plan on %s: kept %.3f MiB of %.3f MiB; swapped %.3f MiB; "
				 "re-materialised in backward %.3f MiB; recompute %.3g GFLOP\n",
			      e->types[e->res[i].type].name, (double)k->kept / MIB,
			      (double)k->baseline / MIB, (double)k->swapped / MIB,
			      (double)k->transient / MIB, k->recompute_flops / 1e9);
	}
	const mo_est_cfg *c = &e->cfg;
	if (c->late_grads) {
		double head = c->head_params * c->pbytes;
		buf_printf(b, "  loss backward scratch: the output layer's full weight gradient "
				 "(%.0f params x %.0f B = %.3f MiB) + its all-gathered weight beyond "
				 "the local shard (x (1 - 1/%.0f) = %.3f MiB)\n",
			      c->head_params, c->pbytes, head / MIB, c->fsdp_div,
			      head * (1.0 - 1.0 / c->fsdp_div) / MIB);
	} else {
		buf_printf(b, "  loss backward scratch: tokens %.0f x vocab %.0f x %.0f B%s "
				 "= %.3f MiB\n",
			      c->tok, c->vocab, c->loss_bytes,
			      c->loss_bytes < 4.0 ? " (the gradient's cast; its fp32 plane is the "
						    "kept softmax, written in place)"
						  : " (fp32 gradient + its cast)",
			      c->tok * c->vocab * c->loss_bytes / MIB);
	}
	if (e->cfg.no_recompute)
		buf_puts(b, "  one device: MindSpore Transformers PyNative skips recompute "
			       "(world_size > 1 gate), so recompute changes nothing here\n");
}

/* The step's breakdown (the slowest stage's; the terms add up to the
 * step), throughput and MFU. */
static void estimate_text_time(mo_buf *b, const mo_estimate_time *t)
{
	buf_printf(b, "  stage %zu: compute %.3f s (GEMM %.3f, attention %.3f, memory-bound "
			 "%.3f)",
		      t->slowest_stage, t->compute_seconds, t->gemm_seconds, t->attention_seconds,
		      t->memory_bound_seconds);
	const char *names[] = {"TP", "CP", "EP", "PP", "DP"};
	double comm[] = {t->comm_tp_seconds, t->comm_cp_seconds, t->comm_ep_seconds,
			 t->comm_pp_seconds, t->comm_dp_seconds};
	for (size_t i = 0; i < 5; i++)
		if (comm[i] > 0)
			buf_printf(b, ", %s comm %.3f s", names[i], comm[i]);
	buf_printf(b, ", bubble %.3f s, optimizer %.3f s, recompute %.3f s, swap %.3f s, "
			 "fixed %.3f s\n",
		      t->bubble_seconds, t->optimizer_seconds, t->recompute_seconds,
		      t->swap_seconds, t->fixed_seconds);
	buf_printf(b, "  %.0f tokens/s per device, MFU %.1f%% (largest term: %s)\n",
		      t->tokens_per_second_per_device, t->mfu * 100.0,
		      t->largest_term ? t->largest_term : "-");
}

/* ---- the report ------------------------------------------------------------------ */

static void estimate_text_bar(mo_buf *b, const mo_estimate *e, const mo_estimate_stage *st)
{
	static const char sym[MO_EST_BUCKETS] = {'W', 'G', 'O', 'A', 'R', 'S', 'F', 'L', 'K', 'I'};
	const int width = 60;
	double cap = e->capacity ? (double)e->capacity : 1.0;
	int used = 0;
	buf_puts(b, "  [");
	for (int k = 0; k < MO_EST_BUCKETS; k++) {
		int n = (int)((double)st->peak_by_bucket[k] / cap * width + 0.5);
		for (int i = 0; i < n && used < width + 20; i++, used++)
			buf_append(b, &sym[k], 1);
	}
	for (; used < width; used++)
		buf_puts(b, ".");
	buf_printf(b, "] %.1f%% of %.1f GiB\n", (double)st->peak_bytes / cap * 100.0,
		      cap / GIB);
}

static void estimate_text_stage(mo_buf *b, const mo_estimate *e, const mo_estimate_stage *st)
{
	buf_printf(b, "stage %lld: %lld layers from %lld, %lld %s in flight\n",
		      (long long)st->stage, (long long)st->num_layers,
		      (long long)st->first_layer, (long long)st->in_flight,
		      e->cfg.vpp > 1 ? "model chunks" : "micro-batches");
	estimate_text_bar(b, e, st);
	buf_printf(b, "  peak %.2f GiB allocated, %.2f GiB reserved, at \"%s\"\n",
		      (double)st->peak_bytes / GIB, (double)st->reserved_peak_bytes / GIB,
		      st->peak_event);
	buf_puts(b, "   ");
	for (int k = 0; k < MO_EST_BUCKETS; k++)
		if (st->peak_by_bucket[k])
			buf_printf(b, " %s %.2f GiB", mo_estimate_bucket_name(k),
				      (double)st->peak_by_bucket[k] / GIB);
	buf_printf(b, "\n  between steps %.2f GiB allocated\n",
		      (double)st->between_steps_bytes / GIB);
}

static bool estimate_text_same(const mo_estimate_layer *a, const mo_estimate_layer *b)
{
	return a->type == b->type && a->stage == b->stage &&
	       a->activation_bytes == b->activation_bytes &&
	       a->baseline_activation_bytes == b->baseline_activation_bytes &&
	       a->swap_bytes == b->swap_bytes && a->recompute_flops == b->recompute_flops;
}

static void estimate_text_layers(mo_buf *b, const mo_estimate *e)
{
	buf_printf(b, "\n%-11s %-14s %5s %14s %14s %14s %12s\n", "layers", "type", "stage",
		      "kept MiB/mb", "before MiB/mb", "swapped MiB/mb", "recompute GF");
	for (size_t lo = 0; lo < e->n_layers;) {
		size_t hi = lo;
		while (hi + 1 < e->n_layers && estimate_text_same(&e->layers[lo], &e->layers[hi + 1]))
			hi++;
		const mo_estimate_layer *l = &e->layers[lo];
		char r[48];
		if (lo == hi)
			snprintf(r, sizeof r, "%zu", lo);
		else
			snprintf(r, sizeof r, "%zu-%zu", lo, hi);
		buf_printf(b, "%-11s %-14s %5lld %14.2f %14.2f %14.2f %12.2f\n", r, l->type,
			      (long long)l->stage, (double)l->activation_bytes / MIB,
			      (double)l->baseline_activation_bytes / MIB,
			      (double)l->swap_bytes / MIB, l->recompute_flops / 1e9);
		lo = hi + 1;
	}
}

static void estimate_text_cost(mo_buf *b, const mo_estimate *e)
{
	const mo_estimate_cost *c = &e->cost;
	buf_printf(b, "\ncost per step: recompute %.3g TFLOP (%.3f s)", c->recompute_flops / 1e12,
		      c->recompute_seconds);
	if (c->comm_recompute_ops)
		buf_printf(b, ", %llu extra collectives %.3f GiB (%.3f s)",
			      (unsigned long long)c->comm_recompute_ops,
			      c->comm_recompute_bytes / GIB, c->comm_recompute_seconds);
	if (c->swap_bytes > 0)
		buf_printf(b, ", swap %.3f GiB over the host link (%.3f s, %.3f s hidden by "
				 "prefetch %lld)",
			      c->swap_bytes / GIB, c->swap_seconds, c->swap_hidden_seconds,
			      (long long)e->cfg.prefetch);
	buf_printf(b, "\nstep time %.3f s -> %.3f s: overhead %.2f%%\n",
		      c->step_seconds_baseline, c->step_seconds, c->overhead_percent);
	estimate_text_time(b, &e->time);
}

/* Whether any cache kept from the first step on applies (pytorch). */
static bool estimate_has_caches(const mo_estimate *e)
{
	return e->cfg.dummy_wgrads || e->cfg.head_gather || e->cfg.dispatcher_gather ||
	       e->cfg.mla_rope_module ||
	       e->cfg.dispatcher_state;
}

/* The caches Megatron-LM and Transformer Engine keep from the first step
 * on (framework pytorch; estimate_weights.c has their sources). */
static void estimate_text_kept(mo_buf *b, const mo_estimate *e)
{
	if (e->cfg.dummy_wgrads)
		buf_puts(b, "  gradient_accumulation_fusion: Transformer Engine hands autograd a "
			       "dummy weight gradient cached per (shape, dtype) and never freed "
			       "(get_dummy_wgrad): one per distinct weight shape of a stage's "
			       "Linears and the output layer's\n");
	if (e->cfg.head_gather)
		buf_printf(b, "  sequence parallel: the output layer gathers its input into "
				 "Megatron's global \"mpu\" buffer, never freed (%.3f MiB, last "
				 "stage); each micro-batch keeps its local input\n",
			      (double)e->cfg.head_gather / MIB);
	if (e->cfg.dispatcher_gather)
		buf_printf(b, "  all-gather MoE dispatcher: each MoE layer gathers its tokens over "
				 "TP x EP into the same \"mpu\" buffer (%.3f MiB, stages with MoE "
				 "layers; the larger of the two is kept)\n",
			      (double)e->cfg.dispatcher_gather / MIB);
	if (e->cfg.mla_rope_module)
		buf_printf(b, "  multi-latent attention: each attention module keeps its YaRN "
				 "cos/sin tables (%.3f MiB, %s) and, for the last %d called, the "
				 "lru-cached fp32 embedding (%.3f MiB)\n",
			      (double)e->cfg.mla_rope_module / MIB,
			      e->cfg.rope_fusion ? "rope fusion: the run's length"
						     : "4096 positions",
			      MO_EST_ROPE_LRU, (double)e->cfg.mla_rope_lru / MIB);
	if (e->cfg.dispatcher_state)
		buf_printf(b, "  alltoall dispatcher: each MoE layer keeps its last micro-batch's "
				 "router probabilities, routing map and permutation map (%.3f MiB)\n",
			      (double)e->cfg.dispatcher_state / MIB);
	if (estimate_has_caches(e)) {
		buf_puts(b, "  kept caches from the first step on (workspaces bucket):");
		size_t shown = e->n_stages <= 16 ? e->n_stages : 16;
		for (size_t s = 0; s < shown; s++)
			buf_printf(b, " stage %zu %.3f MiB%s", s,
				      (double)est_stage_caches(e, s) / MIB,
				      s + 1 < shown ? "," : "");
		buf_puts(b, shown < e->n_stages ? ", ...\n" : "\n");
	}
}

static void estimate_text_assumptions(mo_buf *b, const mo_estimate *e)
{
	const mo_device *d = &e->cfg.dev;
	buf_printf(b, "\nassumptions: %s.\n", e->fw->note);
	buf_printf(b, "  device %s: %.1f GiB, %.1f GiB kept by the runtime, %.0f TFLOP/s "
			 "sustained, host link %.0f GB/s, collectives %.0f GB/s, %.0f MiB "
			 "buffer per collective group, %.0f%% pool fragmentation\n",
		      d->name ? d->name : "custom", d->memory_gib, d->reserved_gib, d->tflops,
		      d->host_bandwidth_gbs, d->collective_bandwidth_gbs, d->comm_buffer_mib,
		      d->fragmentation * 100.0);
	if (e->cfg.routing_skew > 1.0)
		buf_printf(b, "  MoE routing skew %g: this rank's experts receive %g x their "
				 "balanced tokens (moe_routing_skew)", e->cfg.routing_skew,
			      e->cfg.routing_skew);
	else
		buf_puts(b, "  balanced MoE routing");
	buf_printf(b, "; gradients in %s; each "
			 "recomputed layer's tensors all exist again during its backward\n",
		      e->cfg.gbytes != e->cfg.pbytes ? "grads_dtype" : "the parameters' dtype");
	if (e->cfg.workspace)
		buf_printf(b, "  GEMM workspaces %.3f MiB from the first layer's forward on "
				 "(Transformer Engine's and PyTorch's two cuBLAS workspaces: the "
				 "device's workspace_mib%s)\n",
			      (double)e->cfg.workspace / MIB,
			      e->cfg.grouped_workspaces ? "; with moe_grouped_gemm 4 x its "
							   "gemm_workspace_mib"
							 : "");
	estimate_text_kept(b, e);
	if (e->cfg.pp_input)
		buf_printf(b, "  pipeline: each model chunk that receives its input from the "
				 "previous stage keeps the last one and its gradient (2 x %.3f MiB) "
				 "until its next forward (Megatron's set_input_tensor)\n",
			      (double)e->cfg.pp_input / MIB);
	if (e->dims.cond & MO_C_TEKV)
		buf_puts(b, "  transformer_impl transformer_engine: its fused attention keeps "
			       "contiguous copies of Q, K and V (grouped K/V), not the fused QKV "
			       "output\n");
	if (e->truncated)
		buf_puts(b, "  the timeline lists the step's first events only; the peaks come "
			       "from the schedule's closed form (its steady state repeats)\n");
}

char *mo_estimate_report(const mo_estimate *e, int explain)
{
	if (!e)
		return NULL;
	mo_buf b;
	buf_init(&b, 0);
	const mo_estimate_stage *pk = &e->stages[e->peak_stage];
	buf_printf(&b, "estimate (%s rules): peak %.2f GiB allocated, %.2f GiB reserved, "
			  "on stage %lld at \"%s\"; capacity %.2f GiB\n\n",
		      e->fw->name, (double)pk->peak_bytes / GIB,
		      (double)pk->reserved_peak_bytes / GIB, (long long)pk->stage,
		      pk->peak_event, (double)e->capacity / GIB);
	for (size_t s = 0; s < e->n_stages; s++)
		estimate_text_stage(&b, e, &e->stages[s]);
	buf_puts(&b, "  (W weights, G gradients, O optimizer, A activations, R recomputed, "
			"S swap buffers, F gathered weights, L loss scratch");
	buf_puts(&b, e->cfg.workspace || estimate_has_caches(e) ? ", K workspaces and kept caches"
								       : "");
	buf_puts(&b, e->cfg.pp_input ? ", I pipeline inputs)\n" : ")\n");
	estimate_text_layers(&b, e);
	estimate_text_cost(&b, e);
	estimate_text_assumptions(&b, e);
	if (explain) {
		buf_puts(&b, "\nexplain:\n");
		est_explain_weights(e, &b);
		est_explain_types(e, &b);
		for (size_t s = 0; s < e->n_stages; s++)
			buf_printf(&b, "  stage %zu: in flight = %s = %lld; activations at the peak "
					  "= %.3f MiB\n",
				      s, e->cfg.vpp > 1 ? "(p - r - 1) x 2 + (v - 1) x p + 1 chunks"
							: "min(p - r, micro_batch_num)",
				      (long long)e->stages[s].in_flight,
				      (double)e->stages[s].activations_bytes / MIB);
		buf_puts(&b, "tensors alive at each stage's peak (shape, dtype, size, the op "
				"keeping it; N x = layers x micro-batches holding it):\n");
		for (size_t s = 0; s < e->n_stages; s++)
			est_explain_peak(e, s, &b);
	}
	if (b.failed) {
		buf_free(&b);
		return NULL;
	}
	return buf_take(&b, NULL);
}
