/* MindSpeed-LLM's DeepSeek-V4 flags (Ascend/MindSpeed-LLM c77308a1,
 * examples/mcore/deepseek4_flash/):
 *
 * - mHC (features_manager/transformer/mhc_feature.py:11-20): --enable-mhc,
 *   --hc-mult (default 4), --hc-sinkhorn-iters (20), --use-fused-mhc (the
 *   fused NPU pre / post kernels) are the model keys of the same modules
 *   (docs/model-file.md); the model's hc head follows mHC
 *   (core/models/deepseek4/deepseek4_model.py:156-158). --use-triton-mhc
 *   (Triton kernels for the head) is `unmodelled` (megatron_args.c).
 * - the compressed sparse attention (tasks/models/transformer/deepseek4/
 *   csa.py:160-300, compressor.py, the DSA indexer): --kv-compress makes
 *   every layer DeepSeek4SelfAttention, one head of --qk-head-dim
 *   (csa.py:173) with --compress-ratios per layer (csa.py:274-281),
 *   --o-groups x --o-lora-rank, --sliding-window-size (csa_feature.py:18-34)
 *   and the indexer's --index-n-heads / --index-head-dim / --index-topk
 *   (dsa_indexer_feature.py:20-22). memopt's estimate of that attention
 *   (the model key experimental_attention_variant: dsv4_hybrid) has its op
 *   table in the MindSpore rules only; a Megatron run is priced by the
 *   PyTorch rules, so the attention is priced as the MLA its flags also
 *   give, and --kv-compress is `unmodelled` at its line and column, naming
 *   the flags it stands for (each of them read).
 * - --position-embedding-type deepseek4 (csa_feature.py:13): the rotary
 *   embedding applied inside the attention, no parameters: rope
 *   (megatron_model.c). */
#include "import/megatron_internal.h"

#include <string.h>

/* The compressed sparse attention's own flags, read with --kv-compress. */
static const char *const dsv4_attention_flags[] = {
    "--compress-ratios",	     "--o-groups",
    "--o-lora-rank",		     "--sliding-window-size",
    "--enable-dsa-indexer",	     "--index-n-heads",
    "--index-head-dim",		     "--index-topk",
    "--use-sparse-flash-attn",	     "--use-fused-lightning-indexer",
    "--use-fused-lightning-indexer-loss", NULL};

void megatron_read_dsv4(struct mo_megatron_import *g, struct mo_megatron_out *o,
			const struct mo_megatron_shape *s)
{
	(void)s;
	/* MindSpeed's context-parallel algorithm is nothing without context parallelism */
	int64_t cp = 1;
	const struct mo_megatron_arg *c = NULL;
	if (megatron_given(g, "--context-parallel-algo") &&
	    (!megatron_int(g, "--context-parallel-size", 1, MO_MODEL_MAX_DEGREE, &cp, &c) ||
	     cp <= 1))
		megatron_find(g, "--context-parallel-algo");
	if (megatron_flag(g, "--enable-mhc")) {
		const struct mo_megatron_arg *a = NULL;
		int64_t v;
		megatron_put_bool(o, MO_SEC_MODEL, "enable_hyper_connections", true, MF_HC,
				  megatron_find(g, "--enable-mhc"), NULL);
		if (!megatron_int(g, "--hc-mult", 1, 64, &v, &a))
			v = 4;
		megatron_put_int(o, MO_SEC_MODEL, "hc_mult", v, MF_HC_MULT, a,
				 "MindSpeed-LLM's default (mhc_feature.py:12)");
		a = NULL;
		if (!megatron_int(g, "--hc-sinkhorn-iters", 0, 1000, &v, &a))
			v = 20;
		megatron_put_int(o, MO_SEC_MODEL, "hc_sinkhorn_iters", v, MF_HC_SINKHORN, a,
				 "MindSpeed-LLM's default (mhc_feature.py:13)");
		megatron_put_flag(g, o, MO_SEC_MODEL, "use_fused_mhc", "--use-fused-mhc", MF_HC_FUSED,
				  "default: the small-op mHC");
	}
	struct mo_megatron_arg *kv = megatron_find(g, "--kv-compress");
	if (!kv)
		return;
	mo_buf given;
	buf_init(&given, 0);
	for (size_t i = 0; dsv4_attention_flags[i]; i++)
		if (megatron_find(g, dsv4_attention_flags[i]))
			buf_printf(&given, "%s%s", given.len ? ", " : "", dsv4_attention_flags[i]);
	megatron_unmodelled_with(g, kv,
				 "DeepSeek-V4's compressed sparse attention (csa.py): the PyTorch "
				 "estimate has no op table for it and prices its layers as the MLA "
				 "the flags give",
				 &given);
	buf_free(&given);
}

/* --spec / --mtp-spec naming MindSpeed-LLM's DeepSeek-V4 layers: what the
 * flags above describe (read); another spec is not. */
void megatron_dsv4_spec(struct mo_megatron_import *g)
{
	static const char module[] = "mindspeed_llm.tasks.models.spec.deepseek4_spec";
	for (size_t i = 0; i < g->n_args; i++) {
		struct mo_megatron_arg *a = &g->args[i];
		if ((strcmp(a->flag, "--spec") == 0 || strcmp(a->flag, "--mtp-spec") == 0) &&
		    a->value && strcmp(a->value, module) == 0)
			a->used = true;
	}
}

/* DeepSeek-V3.2's sparse attention. Megatron-LM (d98e8a64):
 * --experimental-attention-variant dsa (TransformerConfig
 * experimental_attention_variant, transformer_config.py:301; the layer is
 * megatron/core/transformer/experimental_attention_variant/dsa.py) with the
 * dsa_* fields (:317-357) as flags (arguments.py:2373, the config's
 * ArgumentGroupFactory). MindSpeed-LLM (c77308a1,
 * examples/mcore/deepseek32/pretrain_deepseek32_671b_4k_A3_ptd.sh:94-102):
 * --enable-dsa-indexer with the fused lightning indexer, its loss, the
 * sparse flash attention and the absorbed MLA. The PyTorch estimate has no
 * op table for it: the layers are priced as the MLA the flags give, and the
 * variant's flag is `unmodelled` at its line and column, naming the flags
 * read with it. */
static const char *const megatron_dsa_flags[] = {
    "--dsa-indexer-n-heads",	      "--dsa-indexer-head-dim",
    "--dsa-indexer-topk",	      "--dsa-indexer-topk-freq",
    "--dsa-indexer-skip-topk-offset", "--dsa-indexer-loss-coeff",
    "--dsa-indexer-use-sparse-loss",  "--dsa-kernel-backend",
    "--dsa-indexer-rope-interleaved", "--dsa-indexer-rotate-activation",
    "--no-dsa-indexer-rotate-activation", "--dsa-indexer-scoring-relu",
    "--no-dsa-indexer-scoring-relu",  "--dsa-indexer-k-norm-epsilon",
    "--dsa-indexer-k-norm-fp32",      NULL};

static const char *const mindspeed_dsa_flags[] = {
    "--use-fused-lightning-indexer", "--use-fused-lightning-indexer-loss",
    "--use-sparse-flash-attn",	     "--enable-mla-absorb",
    "--index-n-heads",		     "--index-head-dim",
    "--index-topk",
    /* the indexer's other flags (features_manager/transformer/multi_latent_attention/
     * dsa_indexer_feature.py:50, 65, 72, 79, 85 at c77308a1) */
    "--index-topk-freq", "--index-skip-topk-offset", "--index-share-for-mtp-iteration",
    "--apply-rope-no-in-complex", "--no-use-sparse-c8-indexer", NULL};

static void megatron_dsa_diag(struct mo_megatron_import *g, const struct mo_megatron_arg *at,
			      const char *const *flags)
{
	mo_buf given;
	buf_init(&given, 0);
	for (size_t i = 0; flags[i]; i++)
		if (megatron_find(g, flags[i]))
			buf_printf(&given, "%s%s", given.len ? ", " : "", flags[i]);
	megatron_unmodelled_with(g, at,
				 "DeepSeek-V3.2's sparse attention (the lightning indexer, its KL "
				 "loss, the top-k sparse attention): the PyTorch estimate has no op "
				 "table for it and prices its layers as the MLA the flags give",
				 &given);
	buf_free(&given);
}

void megatron_read_dsa(struct mo_megatron_import *g)
{
	const struct mo_megatron_arg *v = NULL;
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, "--experimental-attention-variant") == 0)
			v = &g->args[i];
	if (v && v->value && strcmp(v->value, "dsa") == 0) {
		megatron_find(g, "--experimental-attention-variant");
		megatron_dsa_diag(g, v, megatron_dsa_flags);
	}
	if (megatron_given(g, "--kv-compress") || !megatron_given(g, "--enable-dsa-indexer"))
		return;
	megatron_dsa_diag(g, megatron_find(g, "--enable-dsa-indexer"), mindspeed_dsa_flags);
}
