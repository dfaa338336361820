/* Megatron-LM arguments: mixture of experts (experts, router, shared
 * experts, dense layers first, the token dispatcher). */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --moe-layer-freq: 1 (every layer), or ([0]*K+[1]*N) (K dense layers
 * first), with or without the parentheses: Megatron evaluates the text as a
 * Python list expression (arguments.py:327-347 moe_freq_type at d98e8a64,
 * `[0]*3+[1]*58` in examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh).
 * Other patterns are not a first_k_dense_replace. */
static void megatron_read_layer_freq(struct mo_megatron_import *g,
					struct mo_megatron_out *o,
					struct mo_megatron_shape *sh)
{
	int64_t layers = sh->layers;
	struct mo_megatron_arg *a = megatron_find(g, "--moe-layer-freq");
	const char *s = megatron_value(g, a);
	long long dense = 0, moe = 0;
	int n = 0;
	if (!s || strcmp(s, "1") == 0)
		return;
	bool bare = s[0] == '[';
	if (sscanf(s, bare ? "[0]*%lld+[1]*%lld%n" : "([0]*%lld+[1]*%lld)%n", &dense, &moe,
		   &n) == 2 &&
	    s[n] == '\0' && dense >= 0 && moe >= 0 &&
	    dense <= MO_MODEL_MAX_LAYERS && moe <= MO_MODEL_MAX_LAYERS &&
	    dense + moe == layers) {
		/* the pattern runs over every position, identity layers too */
		sh->first_dense = dense - megatron_noop_below(sh, dense);
		megatron_put_int(o, MO_SEC_MODEL, "first_k_dense_replace",
				    sh->first_dense, MF_FIRST_DENSE, a, NULL);
		return;
	}
	megatron_unmodelled(
	    g, a, "a MoE layer pattern other than K dense layers first");
}

void megatron_read_moe(struct mo_megatron_import *g,
				 struct mo_megatron_out *o,
				 struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t experts = 0, v;
	if (!megatron_int(g, "--num-experts", 0, 1 << 20, &experts, &a) ||
	    experts == 0) {
		megatron_find(g, "--moe-router-topk");
		megatron_find(g, "--moe-ffn-hidden-size");
		return;
	}
	s->experts = experts;
	megatron_put_int(o, MO_SEC_MODEL, "num_moe_experts", experts,
			    MF_EXPERTS, a, NULL);
	a = NULL;
	if (!megatron_int(g, "--moe-router-topk", 1, 1 << 20, &v, &a))
		v = 2;
	megatron_put_int(o, MO_SEC_MODEL, "moe_router_topk", v, MF_TOPK, a,
			    "default 2");
	a = NULL;
	/* MindSpeed-LLM names the expert FFN --moe-intermediate-size */
	if (!megatron_int(g, "--moe-ffn-hidden-size", 1, 1 << 26, &v, &a) &&
	    !megatron_int(g, "--moe-intermediate-size", 1, 1 << 26, &v, &a))
		v = s->ffn;
	megatron_put_int(o, MO_SEC_MODEL, "moe_ffn_hidden_size", v,
			    MF_MOE_FFN, a, "default ffn_hidden_size");
	int64_t expert_ffn = v, shared;
	if (megatron_int(g, "--moe-shared-expert-intermediate-size", 0,
			    1 << 26, &v, &a))
		megatron_put_int(o, MO_SEC_MODEL,
				    "moe_shared_expert_intermediate_size", v,
				    MF_SHARED_FFN, a, NULL);
	else if (megatron_int(g, "--n-shared-experts", 0, 1024, &shared, &a))
		/* MindSpeed-LLM: that many shared experts of the expert FFN */
		megatron_put_int(o, MO_SEC_MODEL,
				    "moe_shared_expert_intermediate_size",
				    shared * expert_ffn, MF_SHARED_FFN, a, NULL);
	a = NULL;
	/* MindSpeed-LLM's; -1 (its scripts' way of saying none) is 0 */
	if (megatron_int(g, "--first-k-dense-replace", -1,
			    MO_MODEL_MAX_LAYERS, &v, &a) && v >= 0) {
		s->first_dense = v - megatron_noop_below(s, v);
		megatron_put_int(o, MO_SEC_MODEL, "first_k_dense_replace",
				    s->first_dense, MF_FIRST_DENSE, a, NULL);
		/* MindSpeed-LLM 1.0.0 takes both: layer i is MoE when i >= K and i % freq
		 * == 0 (mindspeed_llm/core/transformer/transformer_block.py:71-78 at v1.0.0
		 * 062fb4fc), so a freq of 1 is every layer after the first K */
		struct mo_megatron_arg *f = megatron_find(g, "--moe-layer-freq");
		const char *fv = f ? megatron_value(g, f) : NULL;
		if (fv && strcmp(fv, "1") != 0)
			megatron_unmodelled(g, f,
					    "MoE layers only every Nth after --first-k-dense-replace");
	}
	else
		megatron_read_layer_freq(g, o, s);
}

/* The MoE token dispatcher, router dtype and fused permutation
 * (arguments.py at 11debfa7: --moe-token-dispatcher-type choices
 * allgather, alltoall, flex, default allgather; --moe-router-dtype fp32 or
 * fp64, default None: the input's dtype; --moe-permute-fusion store_true):
 * what the alltoall dispatcher keeps of its last micro-batch. */
void megatron_read_dispatch(struct mo_megatron_import *g,
				      struct mo_megatron_out *o)
{
	/* alltoall_seq: a choice of Megatron-LM core_r0.9 to core_r0.12
	 * (MindSpeed-LLM keeps it), the alltoall dispatcher's sequence-parallel
	 * variant: its last routing is not modelled */
	static const char *const dispatchers[] = {"allgather", "alltoall",
						  "flex", "alltoall_seq", NULL};
	static const char *const router_dtypes[] = {"fp32", "fp64", NULL};
	const struct mo_megatron_arg *a = NULL;
	const char *d = megatron_choice(g, "--moe-token-dispatcher-type",
					   dispatchers, &a);
	if (d && strcmp(d, "alltoall_seq") == 0)
		megatron_unmodelled(g, a,
				       "the alltoall_seq dispatcher's kept "
				       "routing (priced as allgather's)");
	else if (d && strcmp(d, "allgather") != 0)
		megatron_put_str(o, MO_SEC_TRAIN,
				    "moe_token_dispatcher_type", d,
				    MF_DISPATCHER, a, NULL);
	a = NULL;
	const char *r =
	    megatron_choice(g, "--moe-router-dtype", router_dtypes, &a);
	if (r && strcmp(r, "fp32") == 0)
		megatron_put_str(o, MO_SEC_TRAIN, "moe_router_dtype",
				    "float32", MF_ROUTER_DTYPE, a, NULL);
	else if (r)
		megatron_unmodelled(g, a,
				       "the fp64 router's probabilities the "
				       "alltoall dispatcher keeps (counted in "
				       "the compute dtype)");
	if (megatron_flag(g, "--moe-permute-fusion"))
		megatron_put_bool(o, MO_SEC_TRAIN, "moe_permute_fusion",
				     true, MF_PERMUTE_FUSION,
				     megatron_find(g, "--moe-permute-fusion"),
				     NULL);
	if (megatron_flag(g, "--overlap-moe-expert-parallel-comm"))
		megatron_put_bool(o, MO_SEC_TRAIN, "overlap_moe_expert_parallel_comm", true,
				     MF_EP_OVERLAP,
				     megatron_find(g, "--overlap-moe-expert-parallel-comm"), NULL);
}
