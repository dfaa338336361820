/* The plan's effect on one layer's graph:
 *  - a kept op keeps what its framework's rule saves;
 *  - a recomputed region (a recomputed module and everything under it, or
 *    the whole layer) keeps only its inputs: tensors its ops read that come
 *    from outside the region, or from an excluded op inside it (excluded ops
 *    are kept, so their outputs are);
 *  - a communication op under recompute_comm keeps the local shard (its
 *    input) instead of the gathered tensor it produced;
 *  - a swapped op's saved tensors go to host memory;
 *  - a discard_output region is recomputed like one and, as Megatron's
 *    CheckpointWithoutOutput (tensor_parallel/random.py:521-615 at adc69dba:
 *    the region runs under no_grad, saves its inputs, and its outputs'
 *    storage is resized to 0 once the next module has run), its outputs are
 *    kept by nobody, nor the gathered copies made of them alone (a
 *    sequence-parallel Linear gathers its input again in backward).
 * Storages are counted once, whichever op or view keeps them. */
#include "estimate/estimate_internal.h"

#include <stdlib.h>
#include <string.h>

static bool sim_recomputes(mo_action_kind a)
{
	return a == MO_ACT_RECOMPUTE || a == MO_ACT_DISCARD_OUTPUT;
}

typedef struct mo_kept_set {
	const mo_est_graph *g;
	const mo_layer_type *lt;
	const mo_action_kind *pact;
	mo_action_kind *act; /* per op */
	int *region;         /* per op: root path of its recomputed region */
	unsigned char *mark; /* per storage */
} mo_kept_set;

static mo_action_kind kept_set_action(const mo_kept_set *s, const mo_est_op *op, bool full,
				   bool swapped, bool no_rc)
{
	mo_action_kind a = MO_ACT_KEEP;
	if (op->path >= 0 && s->pact)
		a = s->pact[op->path];
	else if (full)
		a = MO_ACT_RECOMPUTE;
	else if (swapped)
		a = MO_ACT_SWAP;
	if (no_rc && (sim_recomputes(a) || a == MO_ACT_RECOMPUTE_COMM))
		a = MO_ACT_KEEP;
	return a;
}

/* The topmost recomputed ancestor of a path (-2: the whole layer). */
static int kept_set_region(const mo_kept_set *s, const mo_est_op *op, bool full)
{
	if (full || op->path < 0)
		return -2;
	int p = op->path;
	while (s->lt->paths[p].parent >= 0 &&
	       sim_recomputes(s->pact[s->lt->paths[p].parent]))
		p = s->lt->paths[p].parent;
	return p;
}

/* Marks a kept tensor; a gathered tensor whose collective is recomputed
 * (recompute_comm) is replaced by the collective's smaller input. */
static void kept_set_mark(mo_kept_set *s, int t, unsigned bit)
{
	const mo_est_graph *g = s->g;
	int p = g->t[t].producer;
	if (s->mark[g->t[t].storage] & MO_K_GONE)
		return;
	if (p >= 0 && s->act[p] == MO_ACT_RECOMPUTE_COMM && g->ops[p].comm) {
		const mo_est_op *op = &g->ops[p];
		uint64_t in = 0;
		for (size_t i = 0; i < op->n_in; i++)
			in += g->t[g->t[op->in[i]].storage].bytes;
		if (in < g->t[g->t[t].storage].bytes) {
			for (size_t i = 0; i < op->n_in; i++)
				s->mark[g->t[op->in[i]].storage] |= (unsigned char)bit;
			return;
		}
	}
	s->mark[g->t[t].storage] |= (unsigned char)bit;
}

/* Inputs of a recomputed op that come from outside its region. */
static void kept_set_region_inputs(mo_kept_set *s, size_t o)
{
	const mo_est_op *op = &s->g->ops[o];
	for (size_t i = 0; i < op->n_in; i++) {
		int t = op->in[i], p = s->g->t[t].producer;
		if (p < 0 || !sim_recomputes(s->act[p]) || s->region[p] != s->region[o])
			kept_set_mark(s, t, MO_K_KEPT);
	}
}

/* Whether every input of op o is a discarded storage (an op without inputs is not). */
static bool kept_set_inputs_gone(const mo_kept_set *s, const mo_est_op *op)
{
	for (size_t i = 0; i < op->n_in; i++)
		if (!(s->mark[s->g->t[op->in[i]].storage] & MO_K_GONE))
			return false;
	return op->n_in > 0;
}

/* Marks the storages a discard_output region makes (ops come in forward order): its ops'
 * outputs that leave the region, and what a collective gathers from them alone. */
static void kept_set_discards(mo_kept_set *s)
{
	const mo_est_graph *g = s->g;
	for (size_t t = 0; t < g->n_t; t++) {
		int p = g->t[t].producer;
		if (p < 0 || g->t[t].storage != (int)t)
			continue;
		const mo_est_op *op = &g->ops[p];
		if (s->act[p] == MO_ACT_DISCARD_OUTPUT ||
		    (op->comm && s->act[p] == MO_ACT_KEEP && kept_set_inputs_gone(s, op)))
			s->mark[t] |= MO_K_GONE;
	}
}

static void kept_set_apply(mo_kept_set *s, mo_est_keep *k)
{
	const mo_est_graph *g = s->g;
	for (size_t o = 0; o < g->n_ops; o++) {
		const mo_est_op *op = &g->ops[o];
		if (!g->base_marks)
			for (size_t i = 0; i < op->n_save; i++)
				s->mark[g->t[op->save[i]].storage] |= MO_K_BASE;
		switch (s->act[o]) {
		case MO_ACT_RECOMPUTE:
		case MO_ACT_DISCARD_OUTPUT:
			kept_set_region_inputs(s, o);
			k->recompute_flops += op->flops;
			est_time_op_work(g, o, &k->recompute);
			if (op->comm) {
				k->comm_bytes += op->comm_bytes;
				k->comm_ops++;
			}
			break;
		case MO_ACT_SWAP:
			for (size_t i = 0; i < op->n_save; i++)
				kept_set_mark(s, op->save[i], MO_K_SWAP);
			break;
		case MO_ACT_RECOMPUTE_COMM: /* its outputs give way to its input */
			if (op->comm) {
				k->comm_bytes += op->comm_bytes;
				k->comm_ops++;
			}
			for (size_t i = 0; i < op->n_save; i++)
				kept_set_mark(s, op->save[i], MO_K_KEPT);
			break;
		default:
			for (size_t i = 0; i < op->n_save; i++)
				kept_set_mark(s, op->save[i], MO_K_KEPT);
		}
	}
}

static void kept_set_sum(const mo_kept_set *s, mo_est_keep *k)
{
	const mo_est_graph *g = s->g;
	for (size_t t = 0; t < g->n_t; t++) {
		if (g->t[t].storage != (int)t)
			continue;
		unsigned m = s->mark[t];
		uint64_t b = g->t[t].bytes;
		if (m & MO_K_BASE)
			k->baseline += b;
		if (m & MO_K_KEPT)
			k->kept += b;
		else if (m & MO_K_SWAP)
			k->swapped += b;
		else if (m & MO_K_BASE)
			k->transient += b;
	}
}

int est_keep_eval(mo_est_keep *k, const mo_est_graph *g,
		     const mo_layer_type *lt, const mo_action_kind *act,
		     bool full, bool swapped, bool no_recompute)
{
	return est_keep_eval_marks(k, g, lt, act, full, swapped, no_recompute, NULL);
}

/* Graphs are small (a layer has a few hundred ops): the scratch lives on the
 * stack unless a graph is larger (every segment of a plan is evaluated). */
enum { MO_KS_OPS = 512, MO_KS_TENSORS = 1024 };

int est_keep_eval_marks(mo_est_keep *k, const mo_est_graph *g, const mo_layer_type *lt,
			   const mo_action_kind *act, bool full, bool swapped,
			   bool no_recompute, unsigned char *marks)
{
	mo_action_kind act_buf[MO_KS_OPS];
	int region_buf[MO_KS_OPS];
	unsigned char mark_buf[MO_KS_TENSORS];
	bool small = g->n_ops <= MO_KS_OPS && g->n_t <= MO_KS_TENSORS;
	memset(k, 0, sizeof(*k));
	mo_kept_set s = {.g = g, .lt = lt, .pact = act};
	if (small) {
		s.act = act_buf;
		s.region = region_buf;
		s.mark = mark_buf;
		if (g->base_marks) /* what every op saves: the same for every plan */
			memcpy(mark_buf, g->base_marks, g->n_t);
		else
			memset(mark_buf, 0, g->n_t);
	} else {
		s.act = calloc(g->n_ops + 1, sizeof(*s.act));
		s.region = calloc(g->n_ops + 1, sizeof(*s.region));
		s.mark = calloc(g->n_t + 1, 1);
		if (s.mark && g->base_marks)
			memcpy(s.mark, g->base_marks, g->n_t);
	}
	int rc = -1;
	if (!s.act || !s.region || !s.mark)
		goto out;
	if (no_recompute)
		full = false;
	for (size_t o = 0; o < g->n_ops; o++) {
		s.act[o] = kept_set_action(&s, &g->ops[o], full, swapped, no_recompute);
		s.region[o] = sim_recomputes(s.act[o]) ? kept_set_region(&s, &g->ops[o], full) : -1;
	}
	kept_set_discards(&s);
	kept_set_apply(&s, k);
	kept_set_sum(&s, k);
	if (marks)
		memcpy(marks, s.mark, g->n_t);
	rc = 0;
out:
	if (!small) {
		free(s.act);
		free(s.region);
		free(s.mark);
	}
	return rc;
}
