/* The layouts a framework accepts for N devices and a global batch, and the
 * rejected ones counted by reason.
 *
 * A layout: tensor parallel TP, context parallel CP, pipeline parallel PP
 * with VPP model chunks per stage, expert parallel EP and (framework
 * pytorch) expert tensor parallel ETP, data parallel DP = N / (TP x CP x
 * PP), sequence parallel, distributed optimizer, micro-batch size B and
 * count M = global batch / (DP x B). The loops run from the dimensions
 * that fix the parameter state (TP, CP, PP, VPP, EP, ETP, the optimizer)
 * to the ones that only change activations (SP, B), so that consecutive
 * candidates share a state and size.c bounds them together.
 *
 * A rule that fails cuts the whole subtree below it; the reason counts
 * every layout of that subtree (the same loops, counting only), so the
 * counts add up to every layout of the question. */
#include "size/size.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* no count up to 2^24 has more than 448 divisors */
#define MO_SIZE_MAX_DIVISORS 512

typedef struct mo_divs {
	int64_t v[MO_SIZE_MAX_DIVISORS];
	size_t n;
} mo_divs;

/* Divisors of x (x <= 2^20 or so: at most a few hundred) in order. */
static void size_divisors(mo_divs *d, int64_t x)
{
	d->n = 0;
	for (int64_t i = 1; i * i <= x && d->n + 2 <= MO_SIZE_MAX_DIVISORS; i++) {
		if (x % i != 0)
			continue;
		d->v[d->n++] = i;
	}
	size_t low = d->n;
	for (size_t k = low; k > 0; k--) {
		int64_t o = x / d->v[k - 1];
		if (o != d->v[k - 1] && d->n < MO_SIZE_MAX_DIVISORS)
			d->v[d->n++] = o;
	}
}

/* Each rule's stable name, its words (printf over its parameters, as long
 * long) and the names of its parameters. */
static const struct mo_size_reason_def {
	const char *name, *fmt, *params[3];
} size_reason_defs[MO_SIZE_REJ_COUNT] = {
	[MO_SIZE_REJ_OTHER] = {"other", "other reasons", {NULL, NULL}},
	[MO_SIZE_REJ_TP_NODE] = {"tp_node", "tensor_parallel %lld spans more than a node of %lld devices",
				 {"tensor_parallel", "devices_per_node"}},
	[MO_SIZE_REJ_TP_HEADS] = {"tp_heads", "tensor_parallel %lld does not divide the %lld attention heads",
				  {"tensor_parallel", "attention_heads"}},
	/* the words of the two K/V rules are the model's (model_kv_split_rule) */
	[MO_SIZE_REJ_TP_KV_GROUPS] = {"tp_kv_groups", NULL, {"tensor_parallel", "query_groups"}},
	[MO_SIZE_REJ_TP_KV_REPLICATE] = {"tp_kv_replicate", NULL, {"tensor_parallel", "query_groups"}},
	[MO_SIZE_REJ_CP_SEQUENCE] = {"cp_sequence",
				     "context_parallel %lld does not divide the sequence length %lld",
				     {"context_parallel", "seq_length"}},
	[MO_SIZE_REJ_CP_CHUNKS] = {"cp_chunks",
				   "context_parallel %1$lld: Megatron-LM splits the sequence (%2$lld) "
				   "into 2 x %1$lld chunks",
				   {"context_parallel", "seq_length"}},
	[MO_SIZE_REJ_PP_LAYERS] = {"pp_layers", "pipeline_parallel %lld is larger than the %lld layers",
				   {"pipeline_parallel", "layers"}},
	[MO_SIZE_REJ_PP_EVEN] = {"pp_even",
				 "pipeline_parallel %lld does not divide the %lld layers, nor them with "
				 "the embedding or the loss counted (Megatron-LM's even split)",
				 {"pipeline_parallel", "layers"}},
	[MO_SIZE_REJ_DP_BATCH] = {"dp_batch", "global batch %lld is not a multiple of data_parallel %lld",
				  {"global_batch", "data_parallel"}},
	[MO_SIZE_REJ_VPP_LIMIT] = {"vpp_limit", "virtual_pipeline above %lld: not searched",
				   {"limit", NULL}},
	[MO_SIZE_REJ_VPP_EVEN] = {"vpp_even",
				  "virtual_pipeline %lld does not divide the %lld layers of a stage, nor "
				  "them with the embedding or the loss counted (Megatron-LM's even split)",
				  {"virtual_pipeline", "stage_layers"}},
	[MO_SIZE_REJ_EP_DEVICES] = {"ep_devices", "expert_parallel %lld is more than the %lld devices",
				    {"expert_parallel", "devices"}},
	[MO_SIZE_REJ_DOPT_SAME] = {"dopt_same",
				   "distributed_optimizer off: the same layout as on (the parameters are "
				   "sharded over data parallel already)",
				   {NULL, NULL}},
	[MO_SIZE_REJ_SP_MOE] = {"sp_moe",
				"Megatron-LM needs sequence_parallel with expert_parallel and "
				"tensor_parallel both above 1",
				{NULL, NULL}},
	[MO_SIZE_REJ_MBS_LIMIT] = {"mbs_limit", "micro_batch_size above %lld: not searched",
				   {"limit", NULL}},
	[MO_SIZE_REJ_PARALLEL_RULE] = {"parallel_rule", NULL, {NULL, NULL}},
	[MO_SIZE_REJ_STATE_BUDGET] = {"state_budget",
				      "weights, gradients and optimizer state alone exceed the budget",
				      {NULL, NULL}},
	[MO_SIZE_REJ_NO_PLAN] = {"no_plan", "no recompute or swap plan fits the budget", {NULL, NULL}},
	[MO_SIZE_REJ_SLOWER] = {"slower",
				"slower than the layouts returned even with no plan (not planned)",
				{NULL, NULL}},
	[MO_SIZE_REJ_NOT_ESTIMATED] = {"not_estimated", "not estimated: the work limit ran out",
				       {NULL, NULL}},
	[MO_SIZE_REJ_NOT_PLANNED] = {"not_planned", "not planned: the work limit ran out",
				     {NULL, NULL}},
	[MO_SIZE_REJ_ETP_NODE] = {"etp_node",
				  "expert_tensor_parallel %lld spans more than a node of %lld devices",
				  {"expert_tensor_parallel", "devices_per_node"}},
	/* the model's `parallel` rule: its finding's words (model_check.c) */
	[MO_SIZE_REJ_TOPK_EXPERTS] = {"topk_experts", NULL, {"moe_router_topk", "experts"}},
	[MO_SIZE_REJ_EP_NO_EXPERTS] = {"ep_no_experts", NULL, {"expert_parallel"}},
	[MO_SIZE_REJ_EP_EXPERTS] = {"ep_experts", NULL, {"expert_parallel", "experts"}},
	[MO_SIZE_REJ_EP_GROUPS] = {"ep_groups", NULL, {"expert_parallel", "dp_cp_tp"}},
	[MO_SIZE_REJ_EP_ETP_GROUPS] = {"ep_etp_groups", NULL,
				       {"expert_parallel", "expert_tensor_parallel", "dp_cp_tp"}},
	[MO_SIZE_REJ_ETP_FFN] = {"etp_ffn", NULL, {"expert_tensor_parallel", "moe_ffn_hidden_size"}},
	[MO_SIZE_REJ_VPP_NO_PP] = {"vpp_no_pp", NULL, {"virtual_pipeline"}},
	[MO_SIZE_REJ_STAGE_LISTS] = {"stage_lists", NULL, {"lists", "stages"}},
	[MO_SIZE_REJ_STAGE_OUTSIDE] = {"stage_outside", NULL, {"layer", "layers"}},
	[MO_SIZE_REJ_STAGE_TWICE] = {"stage_twice", NULL, {"layer"}},
	[MO_SIZE_REJ_STAGE_MISSING] = {"stage_missing", NULL, {"layer"}},
	[MO_SIZE_REJ_WORLD_SIZE] = {"world_size", NULL, {"product", "world_size"}},
};

/* The size code of each of the model's `parallel` rules (mo_par_rule). */
mo_size_reason size_parallel_reason(const mo_model *m, mo_par_rule rule)
{
	switch (rule) {
	case MO_PAR_TP_HEADS: return MO_SIZE_REJ_TP_HEADS;
	case MO_PAR_TP_KV:
		return m->replicate_kv_heads ? MO_SIZE_REJ_TP_KV_REPLICATE : MO_SIZE_REJ_TP_KV_GROUPS;
	case MO_PAR_CP_SEQUENCE: return MO_SIZE_REJ_CP_SEQUENCE;
	case MO_PAR_TOPK_EXPERTS: return MO_SIZE_REJ_TOPK_EXPERTS;
	case MO_PAR_EP_NO_EXPERTS: return MO_SIZE_REJ_EP_NO_EXPERTS;
	case MO_PAR_EP_EXPERTS: return MO_SIZE_REJ_EP_EXPERTS;
	case MO_PAR_EP_GROUPS: return MO_SIZE_REJ_EP_GROUPS;
	case MO_PAR_EP_ETP_GROUPS: return MO_SIZE_REJ_EP_ETP_GROUPS;
	case MO_PAR_ETP_FFN: return MO_SIZE_REJ_ETP_FFN;
	case MO_PAR_PP_LAYERS: return MO_SIZE_REJ_PP_LAYERS;
	case MO_PAR_VPP_NO_PP: return MO_SIZE_REJ_VPP_NO_PP;
	case MO_PAR_STAGE_LISTS: return MO_SIZE_REJ_STAGE_LISTS;
	case MO_PAR_STAGE_OUTSIDE: return MO_SIZE_REJ_STAGE_OUTSIDE;
	case MO_PAR_STAGE_TWICE: return MO_SIZE_REJ_STAGE_TWICE;
	case MO_PAR_STAGE_MISSING: return MO_SIZE_REJ_STAGE_MISSING;
	case MO_PAR_WORLD: return MO_SIZE_REJ_WORLD_SIZE;
	case MO_PAR_NONE: break;
	}
	return MO_SIZE_REJ_PARALLEL_RULE;
}

const char *mo_size_reason_name(mo_size_reason code)
{
	return (unsigned)code < MO_SIZE_REJ_COUNT ? size_reason_defs[code].name : "other";
}

/* One group: the same rule with the same numbers (never the words: a rule's
 * words follow from its code and numbers). */
static bool size_same_group(const mo_size_rejection *g, mo_size_reason code, const int64_t p[3])
{
	return g->code == code && g->params[0] == p[0] && g->params[1] == p[1] &&
	       g->params[2] == p[2];
}

/* A new group at r->v[r->n]: false out of memory. */
static bool size_new_group(mo_size_rejection *g, mo_size_reason code, const int64_t p[3],
			   const char *text, const char *field)
{
	const struct mo_size_reason_def *def = &size_reason_defs[code];
	char own[256];
	if (!text) {
		snprintf(own, sizeof own, def->fmt, (long long)p[0], (long long)p[1],
			 (long long)p[2]);
		text = own;
	}
	*g = (mo_size_rejection){.code = code, .code_name = def->name};
	for (size_t k = 0; k < 3 && def->params[k]; k++) {
		g->param_names[k] = def->params[k];
		g->params[k] = p[k];
		g->n_params = k + 1;
	}
	g->text = strdup(text);
	g->field = field ? strdup(field) : NULL;
	if (g->text && (g->field || !field))
		return true;
	free((char *)g->text);
	free((char *)g->field);
	return false;
}

void size_reject3(mo_size_reasons *r, uint64_t count, mo_size_reason code, const int64_t q[3],
		  const char *text, const char *field)
{
	if ((unsigned)code >= MO_SIZE_REJ_COUNT)
		code = MO_SIZE_REJ_OTHER;
	const struct mo_size_reason_def *def = &size_reason_defs[code];
	/* parameters the rule does not have are not part of its group */
	int64_t p[3];
	for (size_t k = 0; k < 3; k++)
		p[k] = def->params[k] ? q[k] : 0;
	if (!text && !def->fmt)
		text = def->name; /* a caller's slip: the name rather than no words */
	for (size_t i = 0; i < r->n; i++)
		if (size_same_group(&r->v[i], code, p)) {
			r->v[i].count = u64_add(r->v[i].count, count);
			return;
		}
	if (r->n == MO_SIZE_MAX_REASONS || !size_new_group(&r->v[r->n], code, p, text, field)) {
		r->other = u64_add(r->other, count);
		return;
	}
	r->v[r->n++].count = count;
}

void size_reject(mo_size_reasons *r, uint64_t count, mo_size_reason code, int64_t p0,
		 int64_t p1, const char *text, const char *field)
{
	const int64_t p[3] = {p0, p1, 0};
	size_reject3(r, count, code, p, text, field);
}

void size_reasons_free(mo_size_reasons *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free((char *)r->v[i].text);
		free((char *)r->v[i].field);
	}
	r->n = 0;
}

/* ---- the walk --------------------------------------------------------------- */

enum { LV_TP, LV_CP, LV_PP, LV_VPP, LV_EP, LV_ETP, LV_DOPT, LV_SP, LV_MBS, LV_LEAF };

typedef struct mo_walk {
	const mo_size_question *q;
	const mo_model *m;
	bool pytorch, moe, ddp;
	int64_t layers; /* decoder layers (MTP layers go with the last stage) */
	mo_size_cand c; /* the partial layout */
	mo_size_cands *out;
	mo_size_reasons *rej;
	mo_divs experts;
	bool counting;  /* counting a rejected subtree */
	uint64_t counted;
	int failed;     /* -1 memory, -2 too many */
} mo_walk;

static void walk_level(mo_walk *w, int level);

/* How many layouts lie below the partial layout at this level. */
static uint64_t walk_count(mo_walk *w, int level)
{
	mo_walk sub = *w;
	sub.counting = true;
	sub.counted = 0;
	walk_level(&sub, level);
	return sub.counted;
}

/* Rejects the subtree at level under rule code with its parameters
 * (text: the rule's own words when they are not the code's). */
static void walk_cut_text(mo_walk *w, int level, mo_size_reason code, int64_t p0, int64_t p1,
			  const char *text)
{
	if (w->counting) {
		walk_level(w, level);
		return;
	}
	size_reject(w->rej, walk_count(w, level), code, p0, p1, text, NULL);
}

static void walk_cut(mo_walk *w, int level, mo_size_reason code, int64_t p0, int64_t p1)
{
	walk_cut_text(w, level, code, p0, p1, NULL);
}

/* TP that splits the K/V groups unevenly: the model's rule in its words. */
static void walk_cut_kv(mo_walk *w, int64_t tp)
{
	const mo_model *m = w->m;
	char text[256];
	if (!w->counting)
		snprintf(text, sizeof text, model_kv_split_rule(m), (long long)tp,
			 (long long)m->num_query_groups);
	walk_cut_text(w, LV_CP,
		      m->replicate_kv_heads ? MO_SIZE_REJ_TP_KV_REPLICATE : MO_SIZE_REJ_TP_KV_GROUPS,
		      tp, m->num_query_groups, w->counting ? NULL : text);
}

static void walk_tp(mo_walk *w)
{
	const mo_model *m = w->m;
	mo_divs d;
	size_divisors(&d, w->q->devices);
	for (size_t i = 0; i < d.n && !w->failed; i++) {
		int64_t tp = d.v[i];
		w->c.tp = tp;
		if (tp > w->q->per_node)
			walk_cut(w, LV_CP, MO_SIZE_REJ_TP_NODE, tp, w->q->per_node);
		else if (m->num_attention_heads % tp != 0)
			walk_cut(w, LV_CP, MO_SIZE_REJ_TP_HEADS, tp, m->num_attention_heads);
		else if (!m->multi_latent_attention && model_kv_heads_per_rank(m, tp) == 0)
			walk_cut_kv(w, tp);
		else
			walk_level(w, LV_CP);
	}
}

static void walk_cp(mo_walk *w)
{
	int64_t seq = w->m->seq_length;
	mo_divs d;
	size_divisors(&d, w->q->devices / w->c.tp);
	for (size_t i = 0; i < d.n && !w->failed; i++) {
		int64_t cp = d.v[i];
		w->c.cp = cp;
		if (seq % cp != 0)
			walk_cut(w, LV_PP, MO_SIZE_REJ_CP_SEQUENCE, cp, seq);
		/* Megatron splits the sequence into 2 x CP chunks for causal
		 * load balance (get_batch_on_this_cp_rank) */
		else if (w->pytorch && cp > 1 && seq % (2 * cp) != 0)
			walk_cut(w, LV_PP, MO_SIZE_REJ_CP_CHUNKS, cp, seq);
		else
			walk_level(w, LV_PP);
	}
}

/* Megatron-LM's split of the layers over PP x VPP chunks with the
 * embedding (acct & 1) and the loss (acct & 2) counted as layers: the
 * count divides evenly and every chunk has at least one (transformer_block.py
 * get_num_layers_to_build; the import's reading, megatron_layout.c, which
 * leaves MTP models to a layout string). */
static bool walk_split_ok(const mo_walk *w, int64_t pp, int64_t vpp, int acct)
{
	if (acct && (w->m->mtp_num_layers > 0 || pp < 2))
		return false;
	int64_t n = w->layers + (acct & 1) + ((acct >> 1) & 1), chunks = pp * vpp;
	return n % chunks == 0 && n / chunks >= 1;
}

/* Megatron-LM's uneven splits (--decoder-first- / --decoder-last-pipeline-
 * num-layers), searched only where PP does not divide the layers and the
 * model has no MTP layers: the middle stages take m layers each, m the even
 * split rounded down or up (layers / PP, one more); the first stage, the
 * last, or both (the rest halved, the first the smaller half) take what is
 * left. Megatron-LM's rules: every stage at least one layer, the middle
 * ones (layers - first - last) / (PP - the stages given) each, dividing
 * evenly, and each stage's count a multiple of VPP (transformer_block.py
 * get_num_layers_to_build, transformer_config.py uneven-PP checks). A split
 * written with the fewest flags (a stage equal to the middle ones is not
 * given; at PP 2 the first only), each once: at most six per (PP, VPP).
 * Returns the count, the splits' first / last stage layers in f / l (0: not
 * given). */
#define MO_SIZE_MAX_UNEVEN 6
static int walk_uneven(const mo_walk *w, int64_t pp, int64_t vpp, int64_t f[MO_SIZE_MAX_UNEVEN],
		       int64_t l[MO_SIZE_MAX_UNEVEN])
{
	int64_t layers = w->layers;
	int n = 0;
	if (!w->pytorch || w->m->mtp_num_layers > 0 || pp < 2 || layers % pp == 0 || vpp < 1)
		return 0;
	for (int64_t m = layers / pp; m <= layers / pp + 1; m++) {
		for (int form = 0; form < 3; form++) {
			int64_t first, last;
			if (form == 0) { /* the first stage takes the rest */
				first = layers - (pp - 1) * m;
				last = m;
			} else if (form == 1) { /* the last */
				first = m;
				last = layers - (pp - 1) * m;
			} else { /* both, the rest halved */
				if (pp < 3)
					continue;
				int64_t rest = layers - (pp - 2) * m;
				first = rest / 2;
				last = rest - first;
			}
			if (first < 1 || last < 1 || m < 1 || first % vpp || last % vpp ||
			    (pp > 2 && m % vpp))
				continue;
			int64_t gf = pp == 2 || first != m ? first : 0;
			int64_t gl = pp > 2 && last != m ? last : 0;
			if (!gf && !gl)
				continue;
			bool seen = false;
			for (int i = 0; i < n; i++)
				seen = seen || (f[i] == gf && l[i] == gl);
			if (seen || n >= MO_SIZE_MAX_UNEVEN)
				continue;
			f[n] = gf;
			l[n] = gl;
			n++;
		}
	}
	return n;
}

static bool walk_split_any(const mo_walk *w, int64_t pp, int64_t vpp)
{
	for (int acct = 0; acct < 4; acct++)
		if (walk_split_ok(w, pp, vpp, acct))
			return true;
	int64_t f[MO_SIZE_MAX_UNEVEN], l[MO_SIZE_MAX_UNEVEN];
	return walk_uneven(w, pp, vpp, f, l) > 0;
}

static void walk_pp(mo_walk *w)
{
	int64_t total = w->layers + w->m->mtp_num_layers;
	mo_divs d;
	size_divisors(&d, w->q->devices / (w->c.tp * w->c.cp));
	for (size_t i = 0; i < d.n && !w->failed; i++) {
		int64_t pp = d.v[i];
		w->c.pp = pp;
		w->c.dp = w->q->devices / (w->c.tp * w->c.cp * pp);
		w->c.dps = w->ddp ? 1 : w->c.dp;
		if (pp > total)
			walk_cut(w, LV_VPP, MO_SIZE_REJ_PP_LAYERS, pp, total);
		/* without --decoder-first/last-pipeline-num-layers Megatron
		 * asserts that PP divides num_layers, plus one for the embedding
		 * and one for the loss when they are accounted for
		 * (transformer_block.py get_num_layers_to_build) */
		else if (w->pytorch && !walk_split_any(w, pp, 1))
			walk_cut(w, LV_VPP, MO_SIZE_REJ_PP_EVEN, pp, w->layers);
		else if (w->q->global_batch % w->c.dp != 0)
			walk_cut(w, LV_VPP, MO_SIZE_REJ_DP_BATCH, w->q->global_batch, w->c.dp);
		else
			walk_level(w, LV_VPP);
	}
}

/* Model chunks per stage: each chunk at least one layer; Megatron splits
 * each stage's layers evenly (layers / PP a multiple of VPP), or the
 * layers with the embedding and / or the loss counted (each a layout of
 * its own); MindSpore Transformers takes offsets where the split is
 * uneven (the estimator's split: the first chunks one layer more). */
static void walk_vpp(mo_walk *w)
{
	int64_t pp = w->c.pp, per = w->layers / pp;
	w->c.acct = 0;
	if (pp == 1) {
		w->c.vpp = 1;
		walk_level(w, LV_EP);
		return;
	}
	/* with both counted a chunk can hold one layer fewer: VPP up to
	 * (layers + 2) / PP */
	int64_t top = w->pytorch ? (w->layers + 2) / pp + 1 : per;
	for (int64_t v = 1; v <= (top > 0 ? top : 1) && !w->failed; v++) {
		w->c.vpp = v;
		if (v > (per > 0 ? per : 1) && !(w->pytorch && walk_split_any(w, pp, v)))
			continue; /* not a layout: a chunk without a layer */
		if (v > MO_SIZE_MAX_VPP) {
			walk_cut(w, LV_EP, MO_SIZE_REJ_VPP_LIMIT, MO_SIZE_MAX_VPP, 0);
		} else if (!w->pytorch) {
			walk_level(w, LV_EP);
		} else if (!walk_split_any(w, pp, v)) {
			walk_cut(w, LV_EP, MO_SIZE_REJ_VPP_EVEN, v, per);
		} else {
			for (int acct = 0; acct < 4 && !w->failed; acct++) {
				if (!walk_split_ok(w, pp, v, acct))
					continue;
				w->c.acct = acct;
				walk_level(w, LV_EP);
			}
			w->c.acct = 0;
			int64_t f[MO_SIZE_MAX_UNEVEN], l[MO_SIZE_MAX_UNEVEN];
			int nu = walk_uneven(w, pp, v, f, l);
			for (int i = 0; i < nu && !w->failed; i++) {
				w->c.ufirst = f[i];
				w->c.ulast = l[i];
				walk_level(w, LV_EP);
			}
			w->c.ufirst = w->c.ulast = 0;
		}
	}
}

static void walk_ep(mo_walk *w)
{
	if (!w->moe) {
		w->c.ep = 1;
		walk_level(w, LV_ETP);
		return;
	}
	for (size_t i = 0; i < w->experts.n && !w->failed; i++) {
		int64_t ep = w->experts.v[i];
		w->c.ep = ep;
		if (ep > w->q->devices)
			walk_cut(w, LV_ETP, MO_SIZE_REJ_EP_DEVICES, ep, w->q->devices);
		else
			walk_level(w, LV_ETP);
	}
}

/* Expert tensor parallel (Megatron-LM): any size whose expert grid ETP x
 * EP x PP divides the devices (parallel_state.py initialize_model_parallel,
 * the expert rank generator; memopt's `parallel` rule says it as EP x ETP
 * dividing DP x CP x TP), so the divisors of N / PP; above a node, like
 * TP, not searched. The other frameworks do not read it. */
static void walk_etp(mo_walk *w)
{
	if (!w->pytorch || !w->moe) {
		w->c.etp = w->m->expert_tensor_parallel;
		walk_level(w, LV_DOPT);
		return;
	}
	mo_divs d;
	size_divisors(&d, w->q->devices / w->c.pp);
	for (size_t i = 0; i < d.n && !w->failed; i++) {
		w->c.etp = d.v[i];
		if (d.v[i] > w->q->per_node)
			walk_cut(w, LV_DOPT, MO_SIZE_REJ_ETP_NODE, d.v[i], w->q->per_node);
		else
			walk_level(w, LV_DOPT);
	}
}

/* Without DDP every framework but Megatron-LM shards the parameters over
 * the whole data-parallel group already (data_parallel_shard = DP): there
 * the distributed optimizer changes no figure of the estimate, and the
 * layout is searched once, with it on (MindSpore's parallel optimizer is
 * that sharding); the other is counted. */
static void walk_dopt(mo_walk *w)
{
	bool same = !w->pytorch && w->c.dps == w->c.dp;
	for (int i = 0; i < 2 && !w->failed; i++) {
		w->c.dopt = i == 1;
		if (same && !w->c.dopt)
			walk_cut(w, LV_SP, MO_SIZE_REJ_DOPT_SAME, 0, 0);
		else
			walk_level(w, LV_SP);
	}
}

/* Sequence parallel only with TP > 1 (Megatron turns it off at TP 1,
 * arguments.py); Megatron asserts it for MoE with TP and EP both > 1. */
static void walk_sp(mo_walk *w)
{
	for (int i = 0; i < (w->c.tp > 1 ? 2 : 1) && !w->failed; i++) {
		w->c.sp = i == 1;
		if (w->pytorch && w->moe && !w->c.sp && w->c.tp > 1 && w->c.ep > 1)
			walk_cut(w, LV_MBS, MO_SIZE_REJ_SP_MOE, 0, 0);
		else
			walk_level(w, LV_MBS);
	}
}

static void walk_mbs(mo_walk *w)
{
	mo_divs d;
	size_divisors(&d, w->q->global_batch / w->c.dp);
	for (size_t i = 0; i < d.n && !w->failed; i++) {
		w->c.mbs = d.v[i];
		w->c.mbn = w->q->global_batch / (w->c.dp * w->c.mbs);
		if (w->c.mbs > MO_SIZE_MAX_MBS)
			walk_cut(w, LV_LEAF, MO_SIZE_REJ_MBS_LIMIT, MO_SIZE_MAX_MBS, 0);
		else
			walk_level(w, LV_LEAF);
	}
}

static void walk_leaf(mo_walk *w)
{
	if (w->counting) {
		w->counted++;
		return;
	}
	mo_size_cands *o = w->out;
	if (o->n == o->cap) {
		if (o->cap >= MO_SIZE_MAX_CANDIDATES) {
			w->failed = -2;
			return;
		}
		size_t cap = o->cap ? 2 * o->cap : 256;
		mo_size_cand *v = realloc(o->v, cap * sizeof *v);
		if (!v) {
			w->failed = -1;
			return;
		}
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = w->c;
}

static void walk_level(mo_walk *w, int level)
{
	switch (level) {
	case LV_TP: walk_tp(w); break;
	case LV_CP: walk_cp(w); break;
	case LV_PP: walk_pp(w); break;
	case LV_VPP: walk_vpp(w); break;
	case LV_EP: walk_ep(w); break;
	case LV_ETP: walk_etp(w); break;
	case LV_DOPT: walk_dopt(w); break;
	case LV_SP: walk_sp(w); break;
	case LV_MBS: walk_mbs(w); break;
	default: walk_leaf(w); break;
	}
}

int size_enumerate(mo_size_cands *out, mo_size_reasons *rej, const mo_size_question *q,
		      mo_error *err)
{
	const mo_model *m = q->base;
	mo_walk w = {.q = q, .m = m, .out = out, .rej = rej};
	w.pytorch = strcmp(m->framework, "pytorch") == 0;
	w.moe = m->num_moe_experts > 0;
	/* the base's DDP (parameters not sharded) stays DDP: every Megatron-LM
	 * run memopt imports is DDP (its FSDP flags are unmodelled), also at
	 * DP 1; every other base shards over the whole data-parallel group */
	w.ddp = m->data_parallel_shard == 1 && (m->data_parallel > 1 || w.pytorch);
	w.layers = m->num_layers;
	w.c.n = q->devices;
	if (w.moe)
		size_divisors(&w.experts, m->num_moe_experts);
	walk_level(&w, LV_TP);
	if (w.failed == -1) {
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
		return -1;
	}
	if (w.failed == -2) {
		error_set(err, MO_ERR_LIMIT, 0, 0,
			     "limit: more than %u layouts for %lld devices",
			     MO_SIZE_MAX_CANDIDATES, (long long)q->devices);
		return -1;
	}
	return 0;
}

void size_chunk_span(const mo_size_cand *c, int64_t layers, int64_t k, int64_t *first,
		     int64_t *len)
{
	if (c->ufirst || c->ulast) {
		/* the uneven split: chunk k is virtual stage k / PP of rank
		 * k % PP, each a stage's layers / VPP, in order
		 * (transformer_layer.py get_transformer_layer_offset) */
		int64_t given = (c->ufirst > 0) + (c->ulast > 0);
		int64_t mid = c->pp > given ? (layers - c->ufirst - c->ulast) / (c->pp - given) : 0;
		int64_t sf = c->ufirst ? c->ufirst : mid, sl = c->ulast ? c->ulast : mid;
		int64_t v = k / c->pp, r = k % c->pp, at = v * (layers / c->vpp);
		if (r > 0)
			at += sf / c->vpp + (r - 1) * (mid / c->vpp);
		*first = at;
		*len = (r == 0 ? sf : r == c->pp - 1 ? sl : mid) / c->vpp;
		return;
	}
	int64_t chunks = c->pp * c->vpp, e = c->acct & 1, l = (c->acct >> 1) & 1;
	int64_t per = chunks > 0 ? (layers + e + l) / chunks : layers;
	*first = k == 0 ? 0 : k * per - e;
	*len = per - (k == 0 ? e : 0) - (k == chunks - 1 ? l : 0);
}

/* The lists of c's accounted split over m's layers: chunk k its decoder
 * layers (an empty list for a chunk of the embedding or the loss alone),
 * as the import writes a layout string's (pp_layout.c). */
static mo_layers *size_split_lists(mo_arena *a, const mo_model *m, const mo_size_cand *c)
{
	int64_t chunks = c->pp * c->vpp;
	mo_layers *st = a ? arena_alloc(a, (size_t)chunks * sizeof(*st)) : calloc((size_t)chunks, sizeof(*st));
	mo_range *r = a ? arena_alloc(a, (size_t)chunks * sizeof(*r)) : calloc((size_t)chunks, sizeof(*r));
	if (!st || !r) {
		if (!a) {
			free(st);
			free(r);
		}
		return NULL;
	}
	for (int64_t k = 0; k < chunks; k++) {
		int64_t first, len;
		size_chunk_span(c, m->num_layers, k, &first, &len);
		st[k] = (mo_layers){.r = &r[k], .ok = true};
		if (len > 0) {
			r[k] = (mo_range){(uint64_t)first, (uint64_t)(first + len - 1), NULL};
			st[k].n = 1;
		}
	}
	return st;
}

void size_splits_free(mo_size_splits *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].lists)
			free(s->v[i].lists[0].r);
		free(s->v[i].lists);
	}
	free(s->v);
	*s = (mo_size_splits){0};
}

static mo_layers *size_split_get(mo_size_splits *memo, const mo_model *m, const mo_size_cand *c)
{
	for (size_t i = 0; i < memo->n; i++)
		if (memo->v[i].pp == c->pp && memo->v[i].vpp == c->vpp && memo->v[i].acct == c->acct &&
		    memo->v[i].ufirst == c->ufirst && memo->v[i].ulast == c->ulast)
			return memo->v[i].lists;
	if (memo->n == memo->cap) {
		size_t cap = memo->cap ? 2 * memo->cap : 16;
		mo_size_split *v = realloc(memo->v, cap * sizeof *v);
		if (!v)
			return NULL;
		memo->v = v;
		memo->cap = cap;
	}
	mo_layers *lists = size_split_lists(NULL, m, c);
	if (lists)
		memo->v[memo->n++] = (mo_size_split){c->pp, c->vpp, c->acct, c->ufirst, c->ulast, lists};
	return lists;
}

bool size_apply(mo_model *m, const mo_size_cand *c, int64_t global_batch, mo_size_splits *memo)
{
	m->world_size = c->n;
	m->tensor_parallel = c->tp;
	m->context_parallel = c->cp;
	m->pipeline_parallel = c->pp;
	m->virtual_pipeline = c->vpp;
	m->expert_parallel = c->ep;
	m->expert_tensor_parallel = c->etp;
	m->data_parallel = c->dp;
	m->data_parallel_shard = c->dps;
	m->sequence_parallel = c->sp;
	m->distributed_optimizer = c->dopt;
	m->micro_batch_size = c->mbs;
	m->micro_batch_num = c->mbn;
	m->n_stage_layers = 0; /* the estimator's even split */
	m->stage_layers = NULL;
	model_set_batches(m, c->mbn, global_batch);
	if (!c->acct && !c->ufirst && !c->ulast)
		return true;
	mo_layers *lists = memo ? size_split_get(memo, m, c) : size_split_lists(m->arena, m, c);
	if (!lists)
		return false;
	m->stage_layers = lists;
	m->n_stage_layers = (size_t)(c->pp * c->vpp);
	return true;
}
