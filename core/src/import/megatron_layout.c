/* Megatron-LM arguments: the parallel layout (tensor, pipeline, virtual
 * pipeline, context, expert parallel, the device count). */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
					     "--num-nextn-predict-layers",
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

/* --decoder-first- / --decoder-last-pipeline-num-layers: the first (last)
 * stage takes that many layers, the other stages the rest evenly, each
 * stage's layers split evenly over its VPP chunks, chunks in virtual order
 * (transformer_block.py:104-137 and transformer_layer.py:80-160 at
 * d98e8a64). The layout string that says the same ("Ett|t...|ttL"); NULL when
 * neither flag is given, another split flag or MTP layers leave it to the
 * other readers, or Megatron-LM refuses the counts (the middle stages'
 * layers not dividing evenly, a count not a multiple of VPP:
 * transformer_config.py:2295-2345), which the even-split check then
 * reports. */
static const char *megatron_uneven_layout(struct mo_megatron_import *g,
					  const struct mo_megatron_shape *s, int64_t vpp)
{
	static const char *const others[] = {"--account-for-embedding-in-pipeline-split",
					     "--account-for-loss-in-pipeline-split",
					     "--mtp-num-layers", "--num-nextn-predict-layers",
					     "--num-layers-per-virtual-pipeline-stage", NULL};
	const char *fv = NULL, *lv = NULL;
	bool bad = false;
	for (size_t i = 0; i < g->n_args; i++) {
		const struct mo_megatron_arg *a = &g->args[i];
		bool is_f = strcmp(a->flag, "--decoder-first-pipeline-num-layers") == 0;
		if (!is_f && strcmp(a->flag, "--decoder-last-pipeline-num-layers") != 0)
			continue;
		bad = bad || a->n_values != 1;
		*(is_f ? &fv : &lv) = a->n_values == 1 ? a->value : NULL;
	}
	if (bad || (!fv && !lv) || s->pp <= 1 || vpp < 1)
		return NULL;
	for (size_t i = 0; others[i]; i++)
		if (megatron_given(g, others[i]))
			return NULL;
	char *fe = NULL, *le = NULL;
	errno = 0;
	int64_t f = fv ? strtoll(fv, &fe, 10) : 0, l = lv ? strtoll(lv, &le, 10) : 0;
	if (errno || (fe && *fe) || (le && *le) || f > MO_MODEL_MAX_LAYERS || l > MO_MODEL_MAX_LAYERS)
		return NULL;
	int64_t given = (fv != NULL) + (lv != NULL), rest = s->layers - f - l, left = s->pp - given;
	int64_t chunks = s->pp * vpp;
	if ((fv && (f < 1 || f % vpp)) || (lv && (l < 1 || l % vpp)) || rest < 0 ||
	    (left > 0 && (rest % left || (rest / left) % vpp || rest / left < 1)) ||
	    (left == 0 && rest != 0) || chunks > MO_MODEL_MAX_LAYERS ||
	    s->layers > MO_MODEL_MAX_LAYERS)
		return NULL;
	int64_t mid = left > 0 ? rest / left : 0;
	char *out = arena_alloc_raw(g->arena, (size_t)(s->layers + chunks + 3));
	if (!out)
		return NULL;
	size_t k = 0;
	out[k++] = 'E'; /* the embedding on the first chunk, the loss on the last */
	for (int64_t c = 0; c < chunks; c++) {
		int64_t r = c % s->pp;
		int64_t n = (r == 0 && fv ? f : r == s->pp - 1 && lv ? l : mid) / vpp;
		if (c)
			out[k++] = '|';
		for (; n > 0; n--)
			out[k++] = 't';
	}
	out[k++] = 'L';
	out[k] = '\0';
	megatron_find(g, "--decoder-first-pipeline-num-layers");
	megatron_find(g, "--decoder-last-pipeline-num-layers");
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
	if (!accounted)
		accounted = megatron_uneven_layout(g, s, given_vpp);
	if (accounted && !megatron_given(g, "--account-for-embedding-in-pipeline-split") &&
	    !megatron_given(g, "--account-for-loss-in-pipeline-split")) {
		megatron_put_str(o, MO_SEC_PAR, "pipeline_model_parallel_layout", accounted,
				 MF_STAGES, NULL,
				 "--decoder-first/last-pipeline-num-layers: the first and last "
				 "stage's layers, the others the rest evenly");
		return;
	}
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
static int64_t megatron_world(struct mo_megatron_import *g, int64_t devices, int64_t mp,
				 const char **why)
{
	*why = "the caller's device count";
	if (devices > 0)
		return devices;
	*why = "msrun --worker_num";
	if (g->launcher_world > 0) {
		g->procs_line = g->world_line;
		g->procs_column = g->world_column;
		return g->launcher_world;
	}
	*why = "torchrun --nproc-per-node x --nnodes";
	if (g->launcher_procs > 0 && !g->launcher_unknown)
		return model_mul(g->launcher_procs, g->launcher_nodes > 0
							   ? g->launcher_nodes
							   : 1);
	*why = "SLURM's tasks (srun / #SBATCH --ntasks, or --nodes x --ntasks-per-node)";
	int line = 0, column = 0;
	int64_t tasks = g->launcher_procs > 0 ? 0 : megatron_slurm_world(g, &line, &column);
	if (tasks > 0) {
		g->procs_line = line;
		g->procs_column = column;
		return tasks;
	}
	bool said = false;
	int64_t recipe = megatron_recipe_world(g, mp, why, &said);
	if (recipe > 0)
		return recipe;
	if (!g->quiet_world && !said && g->model_config)
		megatron_diag(
		    g, MO_SEV_WARNING, "model-needed", g->procs_line, g->procs_column,
		    "parallel.world_size",
		    "a functional-test config does not give the device count: its CI recipe "
		    "does (nodes x gpus), read when the config is "
		    "tests/functional_tests/test_cases/MODEL/CASE/model_config.yaml of a "
		    "Megatron-LM tree with tests/test_utils/recipes/ beside it; give it with "
		    "--devices; until then data parallel is 1");
	else if (!g->quiet_world && !said)
		megatron_diag(
		    g, MO_SEV_WARNING, "model-needed", g->procs_line,
		    g->procs_column, "parallel.world_size",
		    "the arguments do not give the device count "
		    "(torchrun --nproc-per-node x "
		    "--nnodes): give it; until then data "
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
	int64_t mp = model_mul(model_mul(deg[0], deg[1]), deg[2]);
	int64_t world = megatron_world(g, devices, mp, &why);
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
