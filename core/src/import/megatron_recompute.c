/* Megatron-LM arguments: the recompute flags, which are a memopt config,
 * not the model: reported with the config that does the same. */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
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

/* --recompute-modules' names (transformer_config.py recompute_modules at adc69dba) as
 * memopt patterns: `discard` where Megatron wraps the module in CheckpointWithoutOutput
 * (its output freed once the next module has run, transformer_layer.py:489-516, 570-623;
 * multi_latent_attention.py:783-787, 315-317; moe/experts.py:254-301), select where it
 * checkpoints the module whole (transformer_layer.py:587-600, attention.py core_attn,
 * moe_layer.py:280, shared_experts). NULL pattern: not modelled. */
static const struct {
	const char *name, *pattern;
	bool discard;
} mo_megatron_recompute_modules[] = {
	{"core_attn", ".*self_attention\\.core_attention", false},
	{"mlp", ".*mlp", false}, /* Megatron: the dense layers' MLP only */
	{"moe", ".*mlp", false}, /* the MoE layers' */
	{"shared_experts", ".*mlp\\.shared_experts", false},
	/* Megatron skips a norm fused into the next Linear (IdentityOp): the MLA input norm
	 * and the MoE layers' pre-MLP norm are real ones */
	{"layernorm", ".*(input|pre_mlp)_layernorm", true},
	{"mla_up_proj",
	 ".*self_attention\\.(q_layernorm|linear_qb|k_layernorm|linear_kvb|"
	 "apply_rotary_emb_[qk]|[qkv]_handoff)",
	 true},
	{"moe_act", ".*mlp\\.experts\\.activation_func", true},
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

/* One key of the section (select_module or discard_module) with the modules of the list
 * that take it, over every layer; nothing when none does. */
static void megatron_module_patterns(mo_buf *b, const char *modules, int64_t layers,
				     bool discard)
{
	bool any = false;
	for (size_t i = 0; i < sizeof mo_megatron_recompute_modules / sizeof *mo_megatron_recompute_modules; i++) {
		if (mo_megatron_recompute_modules[i].discard != discard ||
		    !megatron_word_in(modules, mo_megatron_recompute_modules[i].name))
			continue;
		buf_printf(b, "%s'%s': [0-%lld]",
			   any ? ", " : discard ? ", discard_module: {" : ", select_module: {",
			   mo_megatron_recompute_modules[i].pattern, (long long)layers - 1);
		any = true;
	}
	if (any)
		buf_puts(b, "}");
}

/* The recompute section that does what --recompute-modules does. */
static void megatron_selective_config(mo_buf *b, const char *modules, int64_t layers)
{
	buf_puts(b, "recompute: {mode: select");
	megatron_module_patterns(b, modules, layers, false);
	megatron_module_patterns(b, modules, layers, true);
	buf_puts(b, "}");
}

static const char *const mo_megatron_granularities[] = {"full", "selective",
							NULL};
static const char *const mo_megatron_methods[] = {"uniform", "block", NULL};

/* Megatron's recompute flags, as the recompute section that does the same
 * (a warning: the model file does not carry it). */
void megatron_read_recompute(struct mo_megatron_import *g,
				       const struct mo_megatron_shape *s,
				       int64_t vpp)
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
		megatron_selective_config(&b, names ? names : "core_attn",
					  s->layers - s->n_noop);
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
