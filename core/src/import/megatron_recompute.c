/* Megatron-LM arguments: the recompute flags, which are a memopt config,
 * not the model: reported with the config that does the same. */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- recompute: a memopt config, not the model
 * ---------------------------------- */

/* The layers --recompute-method block N recomputes: the first N of every
 * pipeline chunk (PP x VPP chunks of equal size). */
static void megatron_block_layers(mo_buf *b,
				     const struct mo_megatron_shape *s,
				     int64_t chunks, int64_t n)
{
	int64_t per = chunks > 0 ? s->layers / chunks : s->layers;
	int64_t shown = chunks < 16 ? chunks : 16;
	for (int64_t c = 0; c < shown && per > 0; c++) {
		int64_t lo = c * per, hi = lo + (n < per ? n : per) - 1;
		if (lo == hi)
			buf_printf(b, "%s%lld", c ? ", " : "",
				      (long long)lo);
		else
			buf_printf(b, "%s%lld-%lld", c ? ", " : "",
				      (long long)lo, (long long)hi);
	}
	if (shown < chunks)
		buf_puts(b, ", ...");
}

/* Which layers Megatron builds a recomputed module on. */
enum mo_megatron_layer_kind {
	MO_KIND_ALL,   /* every layer */
	MO_KIND_DENSE, /* the layers whose MLP is not a MoELayer */
	MO_KIND_MOE,   /* the MoE layers */
	/* norms: a real one on every layer under the local spec; under Transformer Engine
	 * (gpt_layer_specs.py:244-340 at d98e8a64) the input norm is fused into linear_qkv
	 * (an IdentityOp) except before MLA without --mla-down-proj-fusion, and the pre-MLP
	 * norm is fused into linear_fc1 except before a MoE layer */
	MO_KIND_INPUT_NORM,
	MO_KIND_PRE_MLP_NORM,
};

/* --recompute-modules' names (transformer_config.py recompute_modules at d98e8a64) as
 * memopt patterns over the layers that have the module: `discard` where Megatron wraps
 * it in CheckpointWithoutOutput (its output freed once the next module has run), select
 * where it checkpoints it whole. `mlp` is set on the dense layers only
 * (transformer_layer.py:537-539: `if not self.is_moe_layer`), `moe` is the MoELayer's
 * own (moe/moe_layer.py:247-251), `moe_act` the experts' (moe/experts.py:268-272),
 * `shared_experts` the MoE layer's (moe_layer.py:252-255); `layernorm` every norm that is
 * not an IdentityOp (transformer_layer.py:474-531), `core_attn` and `mla_up_proj` every
 * layer's attention. */
static const struct {
	const char *name, *pattern;
	bool discard;
	enum mo_megatron_layer_kind kind;
} mo_megatron_recompute_modules[] = {
	{"core_attn", ".*self_attention\\.core_attention", false, MO_KIND_ALL},
	{"mlp", ".*mlp", false, MO_KIND_DENSE},
	{"moe", ".*mlp", false, MO_KIND_MOE},
	{"shared_experts", ".*mlp\\.shared_experts", false, MO_KIND_MOE},
	{"layernorm", ".*input_layernorm", true, MO_KIND_INPUT_NORM},
	{"layernorm", ".*pre_mlp_layernorm", true, MO_KIND_PRE_MLP_NORM},
	{"mla_up_proj",
	 ".*self_attention\\.(q_layernorm|linear_qb|k_layernorm|linear_kvb|"
	 "apply_rotary_emb_[qk]|[qkv]_handoff)",
	 true, MO_KIND_ALL},
	{"moe_act", ".*mlp\\.experts\\.activation_func", true, MO_KIND_MOE},
};

#define MO_MEGATRON_N_MODULES                                                        \
	(sizeof mo_megatron_recompute_modules / sizeof *mo_megatron_recompute_modules)

/* What the recompute hint needs of the model: its layers (the MTP layers after the
 * decoder's, which Megatron builds from the last decoder layer's spec), the dense ones
 * first, and which norms are real. */
struct mo_megatron_recompute_shape {
	int64_t layers, first_moe; /* first_moe == layers: no MoE layer */
	bool input_norm, dense_pre_mlp_norm;
};

/* Whether a list such as "[layernorm mla_up_proj]" or "layernorm,moe_act" names a module. */
static bool megatron_word_in(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
		bool starts = p == list || strchr(" ,[]'\"", p[-1]);
		bool ends = p[n] == '\0' || strchr(" ,[]'\"", p[n]);
		if (starts && ends)
			return true;
	}
	return false;
}

/* The layers [*lo, *hi] a kind covers; false when none. Dense layers come first, the MoE
 * ones from first_moe on. */
static bool megatron_kind_range(const struct mo_megatron_recompute_shape *r,
				enum mo_megatron_layer_kind kind, int64_t *lo, int64_t *hi)
{
	*lo = 0;
	*hi = r->layers - 1;
	switch (kind) {
	case MO_KIND_ALL:
		break;
	case MO_KIND_INPUT_NORM:
		if (!r->input_norm)
			return false;
		break;
	case MO_KIND_DENSE:
		*hi = r->first_moe - 1;
		break;
	case MO_KIND_MOE:
		*lo = r->first_moe;
		break;
	case MO_KIND_PRE_MLP_NORM:
		if (!r->dense_pre_mlp_norm)
			*lo = r->first_moe;
		break;
	}
	return *lo <= *hi;
}

/* One key of the section (select_module or discard_module) with the modules of the list
 * that take it, each pattern once over the union of its modules' layers (`mlp` and `moe`
 * share one: the dense and the MoE layers' MLP); nothing when none applies. */
static void megatron_module_patterns(mo_buf *b, const char *modules,
				     const struct mo_megatron_recompute_shape *r, bool discard)
{
	bool any = false;
	for (size_t i = 0; i < MO_MEGATRON_N_MODULES; i++) {
		const char *pattern = mo_megatron_recompute_modules[i].pattern;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(mo_megatron_recompute_modules[j].pattern, pattern) == 0;
		if (seen || mo_megatron_recompute_modules[i].discard != discard)
			continue;
		/* dense then MoE: the union of adjacent ranges is one range */
		int64_t lo = INT64_MAX, hi = -1;
		for (size_t j = i; j < MO_MEGATRON_N_MODULES; j++) {
			int64_t l, h;
			if (strcmp(mo_megatron_recompute_modules[j].pattern, pattern) != 0 ||
			    !megatron_word_in(modules, mo_megatron_recompute_modules[j].name) ||
			    !megatron_kind_range(r, mo_megatron_recompute_modules[j].kind, &l, &h))
				continue;
			lo = l < lo ? l : lo;
			hi = h > hi ? h : hi;
		}
		if (hi < lo)
			continue;
		buf_printf(b, "%s'%s': ",
			   any ? ", " : discard ? ", discard_module: {" : ", select_module: {",
			   pattern);
		if (lo == hi)
			buf_printf(b, "[%lld]", (long long)lo);
		else
			buf_printf(b, "[%lld-%lld]", (long long)lo, (long long)hi);
		any = true;
	}
	if (any)
		buf_puts(b, "}");
}

/* The recompute section that does what --recompute-modules does. */
static void megatron_selective_config(mo_buf *b, const char *modules,
				      const struct mo_megatron_recompute_shape *r)
{
	buf_puts(b, "recompute: {mode: select");
	megatron_module_patterns(b, modules, r, false);
	megatron_module_patterns(b, modules, r, true);
	buf_puts(b, "}");
}

/* The layers and norms the hint is written over, from the model read. */
static struct mo_megatron_recompute_shape
megatron_recompute_shape(struct mo_megatron_import *g, const struct mo_megatron_shape *s,
			 const char *impl)
{
	struct mo_megatron_recompute_shape r;
	int64_t real = s->layers - s->n_noop;
	r.layers = real + (s->mtp > 0 ? s->mtp : 0); /* both bounded by MO_MODEL_MAX_LAYERS */
	r.first_moe = s->experts > 0 ? (s->first_dense < r.layers ? s->first_dense : r.layers)
				     : r.layers;
	bool local = impl && strcmp(impl, "local") == 0;
	r.input_norm = local || (megatron_given(g, "--multi-latent-attention") &&
				 !megatron_given(g, "--mla-down-proj-fusion"));
	r.dense_pre_mlp_norm = local;
	return r;
}

static const char *const mo_megatron_granularities[] = {"full", "selective",
							NULL};
static const char *const mo_megatron_methods[] = {"uniform", "block", NULL};

/* Megatron's recompute flags, as the recompute section that does the same
 * (a warning: the model file does not carry it). */
void megatron_read_recompute(struct mo_megatron_import *g,
				       const struct mo_megatron_shape *s,
				       int64_t vpp, const char *impl)
{
	const struct mo_megatron_arg *a = NULL, *m = NULL, *n = NULL;
	const char *gran = megatron_choice(g, "--recompute-granularity",
					      mo_megatron_granularities, &a);
	const char *method = megatron_choice(g, "--recompute-method",
						mo_megatron_methods, &m);
	int64_t count = 1;
	megatron_int(g, "--recompute-num-layers", 1, MO_MODEL_MAX_LAYERS,
			&count, &n);
	if (megatron_flag(g, "--recompute-activations")) {
		gran = "selective";
		a = megatron_find(g, "--recompute-activations");
	}
	megatron_find(g, "--recompute-modules");
	megatron_find(g, "--distribute-saved-activations");
	if (!gran)
		return;
	mo_buf b;
	buf_init(&b, 4096);
	if (strcmp(gran, "selective") == 0) {
		const struct mo_megatron_arg *mods = megatron_find(g, "--recompute-modules");
		const char *names = megatron_values_joined(g, mods);
		struct mo_megatron_recompute_shape r = megatron_recompute_shape(g, s, impl);
		megatron_selective_config(&b, names ? names : "core_attn", &r);
	} else if (method && strcmp(method, "block") == 0) {
		buf_puts(&b,
			    "recompute: {mode: full, full_recompute_layer: [");
		megatron_block_layers(&b, s, model_mul(s->pp, vpp),
					 count);
		buf_puts(&b, "]}");
	} else {
		buf_printf(
		    &b,
		    "recompute: {mode: full, full_recompute_layer: [0-%lld]}",
		    (long long)(s->layers - s->n_noop) - 1);
	}
	mo_diag *d = megatron_diag(
	    g, MO_SEV_WARNING, "megatron-recompute", a->line, a->column,
	    a->flag,
	    "%s %s: recompute belongs in the memopt config, not the model "
	    "file; the estimate of this file alone recomputes nothing",
	    a->flag, gran);
	if (d && !b.failed)
		diag_set_hint(g->diags, d,
				 "the config that does the same: %s", b.data);
	buf_free(&b);
}
