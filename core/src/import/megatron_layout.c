/* Megatron-LM arguments: the parallel layout (tensor, pipeline, virtual
 * pipeline, context, expert parallel, the device count). */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool megatron_given(const struct mo_megatron_import *g, const char *flag);

/* --account-for-embedding- / --account-for-loss-in-pipeline-split: Megatron counts the
 * embedding (the loss) as one more layer of the first (last) virtual stage and splits the
 * layers evenly over PP x VPP chunks, building one layer less there
 * (transformer_block.py:147-205 at d98e8a64). The layout string that says the same ("E|t|...
 * |tL"), so that the estimate's stages take it; NULL when the flags are absent or another
 * uneven-split flag, MTP layers or an uneven count leave it to the other readers. */
static const char *megatron_accounted_layout(struct mo_megatron_import *g,
					     const struct mo_megatron_shape *s, int64_t vpp)
{
	static const char *const others[] = {"--decoder-first-pipeline-num-layers",
					     "--decoder-last-pipeline-num-layers", "--mtp-num-layers",
					     "--num-layers-per-virtual-pipeline-stage", NULL};
	int64_t e = megatron_given(g, "--account-for-embedding-in-pipeline-split");
	int64_t l = megatron_given(g, "--account-for-loss-in-pipeline-split");
	if ((!e && !l) || s->pp <= 1 || vpp < 1)
		return NULL;
	for (size_t i = 0; others[i]; i++)
		if (megatron_given(g, others[i]))
			return NULL;
	int64_t chunks = s->pp * vpp, n = s->layers + e + l;
	if (chunks > MO_MODEL_MAX_LAYERS || n % chunks != 0 || n / chunks < 1)
		return NULL;
	int64_t per = n / chunks;
	char *out = arena_alloc_raw(g->arena, (size_t)(n + chunks + 1));
	if (!out)
		return NULL;
	size_t k = 0;
	for (int64_t c = 0; c < chunks; c++) {
		bool first = c == 0 && e, last = c == chunks - 1 && l;
		if (c)
			out[k++] = '|';
		if (first)
			out[k++] = 'E';
		for (int64_t t = per - first - last; t > 0; t--)
			out[k++] = 't';
		if (last)
			out[k++] = 'L';
	}
	out[k] = '\0';
	megatron_find(g, "--account-for-embedding-in-pipeline-split");
	megatron_find(g, "--account-for-loss-in-pipeline-split");
	return out;
}

/* --num-layers-per-virtual-pipeline-stage N: layers / PP / N chunks per
 * rank; --num-virtual-stages-per-pipeline-rank: that count. */
static void megatron_read_virtual(struct mo_megatron_import *g,
				     struct mo_megatron_out *o,
				     struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t v;
	struct mo_megatron_arg *layout =
	    megatron_find(g, "--pipeline-model-parallel-layout");
	const char *text = megatron_value(g, layout);
	if (text) { /* the model reader expands it (pp_layout.c) and takes
		     * VPP from it, as Megatron does (arguments.py, "Uneven
		     * virtual pipeline parallelism") */
		megatron_put_str(o, MO_SEC_PAR, "pipeline_model_parallel_layout",
				 text, MF_STAGES, layout, NULL);
		return;
	}
	int64_t given_vpp = 1;
	struct mo_megatron_arg *va = megatron_find(g, "--num-virtual-stages-per-pipeline-rank");
	if (va && megatron_value(g, va))
		given_vpp = strtoll(megatron_value(g, va), NULL, 10);
	const char *accounted = megatron_accounted_layout(g, s, given_vpp);
	if (accounted) {
		megatron_put_str(o, MO_SEC_PAR, "pipeline_model_parallel_layout", accounted,
				 MF_STAGES, NULL,
				 "--account-for-embedding/loss-in-pipeline-split: the embedding and the "
				 "loss count as layers of the first and last virtual stage");
		return;
	}
	if (megatron_int(g, "--num-virtual-stages-per-pipeline-rank", 1,
			    MO_MODEL_MAX_DEGREE, &v, &a)) {
		s->vpp = v;
		if (v > 1)
			megatron_put_int(o, MO_SEC_PAR,
					    "virtual_pipeline", v, MF_VPP, a,
					    NULL);
		megatron_find(g, "--num-layers-per-virtual-pipeline-stage");
		return;
	}
	if (!megatron_int(g, "--num-layers-per-virtual-pipeline-stage", 1,
			     MO_MODEL_MAX_LAYERS, &v, &a))
		return;
	int64_t per_stage = s->pp > 0 ? s->layers / s->pp : 0;
	if (s->layers % s->pp != 0 || per_stage % v != 0) {
		megatron_diag(
		    g, MO_SEV_ERROR, "parallel", a->vline, a->vcolumn, a->flag,
		    "%s %lld: the %lld layers per pipeline stage (%lld "
		    "/ PP %lld) are not "
		    "a multiple of it (Megatron refuses)",
		    a->flag, (long long)v, (long long)per_stage,
		    (long long)s->layers, (long long)s->pp);
		return;
	}
	s->vpp = per_stage / v;
	if (per_stage / v > 1)
		megatron_put_int(o, MO_SEC_PAR, "virtual_pipeline",
				    per_stage / v, MF_VPP, a,
				    "layers / PP / layers per virtual stage");
}

/* Whether a flag is given, without marking it read (its own reader, or the
 * unmodelled list, still reports it). */
static bool megatron_given(const struct mo_megatron_import *g, const char *flag)
{
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, flag) == 0)
			return true;
	return false;
}

/* The pipeline-split flags that place layers another way: with any of them
 * --noop-layers is left to the `unmodelled` report. */
static const char *const mo_noop_other_splits[] = {
    "--pipeline-model-parallel-layout", "--num-layer-list",
    "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
    "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
    NULL};

/* --schedules-method dualpipev without a virtual pipeline: MindSpeed's
 * V-shaped split (dualpipev_chunks.py:43-53 at 028de58c: 2 x PP chunks of
 * num_layers / PP / 2, rank r holding chunk r and chunk 2PP - 1 - r). Read
 * without marking the flag: the schedule itself stays `unmodelled`. 1:
 * dualpipev, 0: no schedule flag, -1: another (not read). */
static int megatron_noop_dualpipev(const struct mo_megatron_import *g)
{
	const struct mo_megatron_arg *a = NULL;
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, "--schedules-method") == 0)
			a = &g->args[i];
	if (!a)
		return 0;
	if (a->n_values != 1 || strcmp(a->value, "dualpipev") != 0 ||
	    megatron_given(g, "--num-layers-per-virtual-pipeline-stage") ||
	    megatron_given(g, "--num-virtual-stages-per-pipeline-rank"))
		return -1;
	return 1;
}

/* One element of --noop-layers (Python's int(x) of a comma-separated
 * item, as MindSpeed's arguments.py reads it): digits with optional
 * spaces; -1 when it is not one. */
static int64_t megatron_noop_item(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	while (end > p && end[-1] == ' ')
		end--;
	if (p == end || end - p > 9)
		return -1;
	int64_t v = 0;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* MindSpeed-LLM's --noop-layers "i,j,...": the 0-based positions among
 * --num-layers that are identity layers (MindSpeed arguments.py:794-801 at
 * 028de58c: each in [0, num_layers), a set; mindspeed_llm/core/transformer/
 * transformer_block.py:188 at c77308a1 builds a NoopTransformerLayer there,
 * with no parameters, in Megatron's even split of all --num-layers). Read
 * when the split is Megatron's even one (with or without a virtual
 * pipeline); else reported `unmodelled` by megatron_account. */
void megatron_read_noop(struct mo_megatron_import *g, struct mo_megatron_shape *s)
{
	if (!megatron_given(g, "--noop-layers"))
		return;
	for (size_t i = 0; mo_noop_other_splits[i]; i++)
		if (megatron_given(g, mo_noop_other_splits[i]))
			return;
	int dualpipev = megatron_noop_dualpipev(g);
	if (dualpipev < 0)
		return;
	s->dualpipev = dualpipev > 0;
	struct mo_megatron_arg *a = megatron_find(g, "--noop-layers");
	const char *text = megatron_value(g, a);
	if (!text || s->layers < 1)
		return;
	unsigned char *noop = arena_alloc(g->arena, (size_t)s->layers);
	if (!noop) {
		megatron_fail(g, MO_ERR_NOMEM, a->vline, a->vcolumn, "out of memory");
		return;
	}
	memset(noop, 0, (size_t)s->layers);
	int64_t n = 0;
	for (const char *p = text;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		int64_t v = megatron_noop_item(p, end);
		if (v < 0 || v >= s->layers) {
			megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, a->flag,
				      "%s: each element must be a layer in [0, %lld) (MindSpeed "
				      "refuses '%.*s')",
				      a->flag, (long long)s->layers, (int)(end - p > 40 ? 40 : end - p),
				      p);
			return;
		}
		n += !noop[v];
		noop[v] = 1;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (n >= s->layers) {
		megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, a->flag,
			      "%s leaves no real layer of the %lld", a->flag,
			      (long long)s->layers);
		return;
	}
	s->noop = noop;
	s->n_noop = n;
}

/* How many identity layers are among the positions before `layer`. */
int64_t megatron_noop_below(const struct mo_megatron_shape *s, int64_t layer)
{
	int64_t n = 0;
	for (int64_t i = 0; s->noop && i < layer && i < s->layers; i++)
		n += s->noop[i];
	return n;
}

/* The real layers among positions [chunk x per, (chunk + 1) x per). */
static int64_t megatron_noop_real(const struct mo_megatron_shape *s, int64_t chunk, int64_t per)
{
	return per - (megatron_noop_below(s, (chunk + 1) * per) - megatron_noop_below(s, chunk * per));
}

/* With --noop-layers, the per-stage layers as a pipeline layout: Megatron's
 * even split gives virtual stage k (chunk k / PP of rank k % PP) the
 * positions [k x per, (k + 1) x per), per = num_layers / (PP x VPP); a
 * stage's real layers are those positions less its identity layers, the
 * MTP layers on the last (Megatron's post-process stage). Under dualpipev
 * rank r holds the real layers of its two V chunks; the loss and MTP,
 * which dualpipev runs on rank 0, stay on the last stage here. */
static void megatron_noop_layout(struct mo_megatron_import *g, struct mo_megatron_out *o,
				 const struct mo_megatron_shape *s)
{
	int64_t stages = model_mul(s->pp, s->vpp > 1 ? s->vpp : 1);
	int64_t chunks = s->dualpipev ? model_mul(s->pp, 2) : stages;
	if (!s->noop || chunks < 1 || s->layers % chunks != 0)
		return; /* an uneven split is reported by its own rule */
	int64_t per = s->layers / chunks;
	mo_buf b;
	buf_init(&b, 0);
	buf_puts(&b, "E");
	for (int64_t k = 0; k < stages; k++) {
		if (k > 0)
			buf_puts(&b, "|");
		int64_t real = megatron_noop_real(s, k, per);
		if (s->dualpipev)
			real += megatron_noop_real(s, chunks - 1 - k, per);
		if (real > 0)
			buf_printf(&b, "t*%lld", (long long)real);
	}
	if (s->mtp > 0)
		buf_printf(&b, "m*%lld", (long long)s->mtp);
	buf_puts(&b, "L");
	const char *text = b.failed ? NULL : arena_strdup(g->arena, b.data);
	buf_free(&b);
	if (!text) {
		megatron_fail(g, MO_ERR_NOMEM, 0, 0, "out of memory");
		return;
	}
	megatron_put_str(o, MO_SEC_PAR, "pipeline_model_parallel_layout", text, MF_STAGES,
			 megatron_find(g, "--noop-layers"),
			 "Megatron's even split with the --noop-layers left out");
}

/* Megatron's even split: without a layout, a virtual pipeline or an uneven
 * first / last stage, the layers (one more for each of
 * --account-for-embedding- / --account-for-loss-in-pipeline-split) must be
 * a multiple of PP (megatron/training/arguments.py at d98e8a64, lines
 * 988-998: "Number of layers should be divisible by the
 * pipeline-model-parallel size"). The virtual-pipeline branch is
 * megatron_read_virtual's. */
static void megatron_check_even_split(struct mo_megatron_import *g,
				      const struct mo_megatron_shape *s)
{
	static const char *const uneven[] = {
	    "--pipeline-model-parallel-layout", "--num-layers-per-virtual-pipeline-stage",
	    "--num-virtual-stages-per-pipeline-rank", "--decoder-first-pipeline-num-layers",
	    "--decoder-last-pipeline-num-layers",
	    "--num-layer-list", /* MindSpeed-LLM's layers per stage */
	    NULL};
	if (s->pp <= 1)
		return;
	for (size_t i = 0; uneven[i]; i++)
		if (megatron_given(g, uneven[i]))
			return;
	int64_t layers = s->layers +
			 megatron_given(g, "--account-for-embedding-in-pipeline-split") +
			 megatron_given(g, "--account-for-loss-in-pipeline-split");
	if (layers % s->pp == 0)
		return;
	const struct mo_megatron_arg *a = NULL;
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, "--pipeline-model-parallel-size") == 0)
			a = &g->args[i];
	megatron_diag(g, MO_SEV_ERROR, "parallel", a ? a->vline : 0, a ? a->vcolumn : 0,
		      "--pipeline-model-parallel-size",
		      "%lld layers are not a multiple of --pipeline-model-parallel-size %lld: "
		      "Megatron refuses an uneven split unless a layout "
		      "(--pipeline-model-parallel-layout) or "
		      "--decoder-first/last-pipeline-num-layers says how",
		      (long long)layers, (long long)s->pp);
}

/* The device count: the caller's, or torchrun's processes x nodes. */
static int64_t megatron_world(struct mo_megatron_import *g, int64_t devices,
				 const char **why)
{
	*why = "the caller's device count";
	if (devices > 0)
		return devices;
	*why = "torchrun --nproc-per-node x --nnodes";
	if (g->launcher_procs > 0 && !g->launcher_unknown)
		return model_mul(g->launcher_procs, g->launcher_nodes > 0
							   ? g->launcher_nodes
							   : 1);
	if (!g->quiet_world)
		megatron_diag(
		    g, MO_SEV_WARNING, "model-needed", g->procs_line,
		    g->procs_column, NULL,
		    "the arguments do not give the device count "
		    "(torchrun --nproc-per-node x "
		    "--nnodes): give it (--devices N); until then data "
		    "parallel is 1");
	return 0;
}

void megatron_read_parallel(struct mo_megatron_import *g,
				      struct mo_megatron_out *o,
				      struct mo_megatron_shape *s,
				      int64_t devices)
{
	static const struct {
		const char *flag, *key;
		int field;
	} degrees[] = {
	    {"--tensor-model-parallel-size", "tensor_parallel", MF_TP},
	    {"--pipeline-model-parallel-size", "pipeline_parallel", MF_PP},
	    {"--context-parallel-size", "context_parallel", MF_CP},
	    {"--expert-model-parallel-size", "expert_parallel", MF_EP}};
	int64_t deg[4];
	for (size_t i = 0; i < 4; i++) {
		const struct mo_megatron_arg *a = NULL;
		if (!megatron_int(g, degrees[i].flag, 1, MO_MODEL_MAX_DEGREE,
				     &deg[i], &a))
			deg[i] = 1;
		megatron_put_int(o, MO_SEC_PAR, degrees[i].key,
				    deg[i], degrees[i].field, a, "default 1");
	}
	s->tp = deg[0];
	s->pp = deg[1];
	/* TP above the K/V groups: each rank computes one group's K/V
	 * (megatron/core/transformer/attention.py:353-365 at d98e8a64, since
	 * f7dfb997 "Support TP greater than num_kv_heads") */
	if (s->groups > 0 && s->groups < s->tp)
		megatron_put_bool(o, MO_SEC_MODEL, "replicate_kv_heads", true, MF_KV_REPLICA,
				     NULL, "Megatron-LM gives each rank one group's K/V when "
					   "TP exceeds the groups");
	megatron_read_virtual(g, o, s);
	megatron_check_even_split(g, s);
	megatron_noop_layout(g, o, s);
	const struct mo_megatron_arg *a = NULL;
	int64_t etp;
	/* without the flag Megatron takes TP's degree (arguments.py), as the
	 * model key's default does */
	if (megatron_int(g, "--expert-tensor-parallel-size", 1,
			    MO_MODEL_MAX_DEGREE, &etp, &a))
		megatron_put_int(o, MO_SEC_PAR,
				    "expert_tensor_parallel", etp, MF_ETP, a,
				    "default: tensor_parallel");
	const char *why;
	int64_t world = megatron_world(g, devices, &why);
	int64_t mp = model_mul(model_mul(deg[0], deg[1]), deg[2]);
	if (world > 0 && world % mp != 0 && g->quiet_world) {
		/* the loader: the caller's --devices may replace this count;
		 * the model's parallel check judges whichever stands */
		megatron_put_int(o, MO_SEC_PAR, "world_size", world,
				    MF_WORLD, NULL, why);
	} else if (world > 0 && world % mp != 0)
		megatron_diag(
		    g, MO_SEV_ERROR, "parallel", g->procs_line, g->procs_column,
		    NULL,
		    "%lld devices are not a multiple of TP x PP x CP = %lld",
		    (long long)world, (long long)mp);
	if (world > 0 && world % mp == 0) {
		megatron_put_int(o, MO_SEC_PAR, "world_size", world,
				    MF_WORLD, NULL, why);
		megatron_put_int(o, MO_SEC_PAR, "data_parallel",
				    world / mp, MF_DP, NULL,
				    "devices / (TP x PP x CP)");
	}
	megatron_put_int(o, MO_SEC_PAR, "data_parallel_shard", 1,
			    MF_DP_SHARD, NULL,
			    "DDP: parameters are not sharded");
	bool sp = megatron_flag(g, "--sequence-parallel");
	megatron_put_bool(
	    o, MO_SEC_PAR, "sequence_parallel", sp && s->tp > 1, MF_SP,
	    sp && s->tp > 1 ? megatron_find(g, "--sequence-parallel") : NULL,
	    sp ? "--sequence-parallel is off at TP 1 (arguments.py)"
	       : "default");
	megatron_put_flag(g, o, MO_SEC_PAR, "distributed_optimizer",
			     "--use-distributed-optimizer", MF_DISTOPT,
			     "default (no --use-distributed-optimizer)");
}
