/* `framework: pytorch`: what PyTorch autograd keeps for backward in a
 * Megatron-style layer ([s, b, h] layout, fused norms that save fp32
 * statistics, fused SwiGLU, torch.native_dropout's 1-byte masks). Each row's
 * `save` is the op's minimal saved set (what PyTorch autograd keeps):
 *   Linear: its input (the weight is a parameter);
 *   LayerNorm: input + fp32 mean and rstd; RMSNorm: input + fp32 rstd;
 *   GeLU / SiLU / fused SwiGLU: their input; dropout: the bool mask;
 *   eager attention: Q and K (baddbmm), the softmax output, the dropout mask,
 *   the dropped probabilities and V (bmm); with GQA, K and V expanded by
 *   repeat_interleave (which also keeps an int64 index per head), and Q
 *   copied when the split query is reshaped to heads;
 *   flash attention: Q, K, V, its output and the fp32 log-sum-exp.
 * `training.transformer_impl` picks the modules: `local` is Megatron's own
 * (plain autograd, what `make accuracy` measures); `transformer_engine`
 * (Megatron's default) differs where Transformer Engine keeps other
 * tensors than autograd would (MO_C_TEKV below); its LayerNormLinear keeps
 * the norm's input, ln_out, mu and rsigma like the rows here
 * (TransformerEngine layernorm_linear.py, prepare_for_saving(inputmat, ...,
 * ln_out_to_save, mu, rsigma), commit d0067d0d). Sources: NVIDIA/Megatron-LM
 * at 09eb91e5 (the commit of the CI golden values), NVIDIA/TransformerEngine
 * at d0067d0d; notes/megatron-memory.md.
 * Split q/k/v are views of the fused QKV output: one storage. Under
 * sequence parallelism a column-parallel Linear keeps its local input shard
 * and all-gathers it again in backward (Megatron's
 * LinearWithGradAccumulationAndAsyncCommunication).
 * Shapes: tsp = local tokens of a sequence-parallel tensor, tok = local
 * tokens (b * s / CP), q/kv/qkv = local projection widths (TP), f/f1 =
 * local FFN widths (f1 doubled for gated units), rt = routed tokens. */
#include "estimate/ops_names.h"

/* A norm over the hidden states: LayerNorm keeps its input, mean and rstd (fp32), RMSNorm its
 * input and rstd (Transformer Engine's fused norms); the two rows hold under exclusive
 * conditions. */
#define PT_NORM(path_, x, y, mu, rs)                                                             \
	{.when = C_LN, .path = path_, .op = "layer_norm", .in = x,                               \
	 .out = y ":c:tsp*h " mu ":f32:tsp " rs ":f32:tsp", .save = x " " mu " " rs},            \
	{.unless = C_LN, .path = path_, .op = "rms_norm", .in = x,                               \
	 .out = y ":c:tsp*h " rs ":f32:tsp", .save = x " " rs}

/* Megatron's unfused core attention over q, k, v (head dims dqk and dv; the context `width`
 * wide on a rank): baddbmm keeps q and k, the softmax only its output (the probabilities, kept
 * by bmm with v), the dropout its mask; the context permuted back to [s, b, heads]. */
#define PT_EAGER_CORE(q, k, v, dqk, dv, width)                                                   \
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "baddbmm",           \
	 .in = q " " k, .out = "sc:c:b*hd*sq*s", .save = q " " k,                               \
	 .flops = "2*b*hd*sq*s*" dqk},                                                          \
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "softmax", .in = "sc", \
	 .out = "pr:c:b*hd*sq*s", .save = "pr"},                                                 \
	{.when = C_ADROP, .unless = C_FLASH, .path = "self_attention.core_attention",            \
	 .op = "dropout", .in = "pr", .out = "prd:c:b*hd*sq*s am:u8:b*hd*sq*s", .save = "am"},    \
	{.unless = C_FLASH | C_ADROP, .path = "self_attention.core_attention", .op = "view",     \
	 .in = "pr", .out = "prd@pr", .save = KEEPS_NOTHING},                                    \
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "bmm",               \
	 .in = "prd " v, .out = "ctx0:c:tok*" width, .save = "prd " v,                          \
	 .flops = "2*b*hd*sq*s*" dv},                                                           \
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "permute",           \
	 .in = "ctx0", .out = "ctx:c:tok*" width, .save = KEEPS_NOTHING}

static const mo_op_row pt_norm_attn[] = {
	{.path = "", .op = "input", .in = "", .out = "x:c:tsp*h", .save = KEEPS_NOTHING},
	PT_NORM("input_layernorm", "x", "ln1", "mu1", "rs1"),
};

/* Standard attention: fused QKV, eager or flash core, row-parallel proj. */
static const mo_op_row pt_attn[] = {
	{.when = C_SP, .path = "self_attention.linear_qkv.input.allgather", .op = "allgather",
	 .in = "ln1", .out = "ln1g:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_SP, .path = "self_attention.linear_qkv", .op = "view", .in = "ln1",
	 .out = "ln1g@ln1", .save = KEEPS_NOTHING},
	{.path = "self_attention.linear_qkv", .op = "matmul", .in = "ln1g", .out = "qkv:c:tok*qkv",
	 .save = "ln1", .flops = "2*tok*h*qkv"},
	/* GQA: reshaping the query slice of [s, b, g, (a/g + 2) hn] to
	 * [s, b, a, hn] copies it (Megatron's get_query_key_value_tensors) */
	{.unless = C_GQA | C_QKLN, .path = "self_attention", .op = "split_qkv", .in = "qkv",
	 .out = "q@qkv k@qkv v@qkv", .save = KEEPS_NOTHING},
	{.when = C_GQA, .unless = C_QKLN, .path = "self_attention", .op = "split_qkv", .in = "qkv",
	 .out = "q:c:tok*q k@qkv v@qkv", .save = KEEPS_NOTHING},
	/* qk_layernorm (Transformer Engine: Megatron's TENorm is
	 * te.pytorch.LayerNorm / RMSNorm over the head dimension; attention.py
	 * get_query_key_value_tensors applies it to the split query [s, b, np,
	 * hn] and key [s, b, ng, hn], Megatron adc69dba attention.py:1093-1107,
	 * transformer_engine.py:217-235). The norm op makes its input contiguous
	 * and saves that copy with its fp32 statistics per row (tokens x heads):
	 * TE c188b533 ops/basic/layer_norm.py:199,205,221 (x, means, rstdevs),
	 * rmsnorm.py:182,202 (x, rstdevs). The split query and key are strided
	 * views of the fused QKV output, so both are copied (with GQA the query
	 * was copied by its reshape already); the normed query and key are new
	 * tensors the core attention saves, while V still keeps the fused
	 * output. Megatron's local implementation is not modelled. */
	{.when = C_QKLN, .unless = C_GQA, .path = "self_attention", .op = "split_qkv",
	 .in = "qkv", .out = "q0@qkv k0@qkv v@qkv", .save = KEEPS_NOTHING},
	{.when = C_QKLN | C_GQA, .path = "self_attention", .op = "split_qkv", .in = "qkv",
	 .out = "q0:c:tok*q k0@qkv v@qkv", .save = KEEPS_NOTHING},
	{.when = C_QKLN, .unless = C_GQA, .path = "self_attention.q_layernorm", .op = "contiguous",
	 .in = "q0", .out = "qx:c:tok*q", .save = KEEPS_NOTHING},
	{.when = C_QKLN | C_GQA, .path = "self_attention.q_layernorm", .op = "view", .in = "q0",
	 .out = "qx@q0", .save = KEEPS_NOTHING},
	{.when = C_QKLN | C_LN, .path = "self_attention.q_layernorm", .op = "layer_norm",
	 .in = "qx", .out = "q:c:tok*q qmu:f32:tok*hd qrs:f32:tok*hd", .save = "qx qmu qrs"},
	{.when = C_QKLN, .unless = C_LN, .path = "self_attention.q_layernorm", .op = "rms_norm",
	 .in = "qx", .out = "q:c:tok*q qrs:f32:tok*hd", .save = "qx qrs"},
	{.when = C_QKLN, .path = "self_attention.k_layernorm", .op = "contiguous", .in = "k0",
	 .out = "kx0:c:tok*kv", .save = KEEPS_NOTHING},
	{.when = C_QKLN | C_LN, .path = "self_attention.k_layernorm", .op = "layer_norm",
	 .in = "kx0", .out = "k:c:tok*kv kmu:f32:tok*kvh krs:f32:tok*kvh", .save = "kx0 kmu krs"},
	{.when = C_QKLN, .unless = C_LN, .path = "self_attention.k_layernorm", .op = "rms_norm",
	 .in = "kx0", .out = "k:c:tok*kv krs:f32:tok*kvh", .save = "kx0 krs"},
	{.when = C_CP, .path = "self_attention.core_attention.input.allgather", .op = "allgather",
	 .in = "k v", .out = "kf:c:b*s*kv vf:c:b*s*kv", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_CP, .path = "self_attention.core_attention", .op = "view", .in = "k v",
	 .out = "kf@k vf@v", .save = KEEPS_NOTHING},
	/* flash */
	{.when = C_FLASH, .unless = C_TEKV, .path = "self_attention.core_attention",
	 .op = "flash_attention", .in = "q kf vf", .out = "ctx:c:tok*q lse:f32:b*hd*sq",
	 .save = "q kf vf ctx lse", .flops = "4*b*hd*sq*s*d"},
	/* Transformer Engine with GQA: K and V are strided views of the fused
	 * QKV output and Q a copy (Megatron attention.py
	 * get_query_key_value_tensors: SplitAlongDim, then query.reshape), a
	 * layout get_qkv_layout does not support, so it makes all three
	 * contiguous (TransformerEngine attention/dot_product_attention/
	 * utils.py:2612-2616, "force q,k,v to be contiguous"); FusedAttnFunc
	 * saves those copies, its output and the fp32 softmax statistics
	 * (backends.py:1653-1664), and nothing keeps the fused QKV output. */
	{.when = C_TEKV, .unless = C_QKLN, .path = "self_attention.core_attention",
	 .op = "contiguous", .in = "kf vf", .out = "kc:c:tok*kv vc:c:tok*kv",
	 .save = KEEPS_NOTHING},
	/* the normed K is contiguous already: only V is copied */
	{.when = C_TEKV | C_QKLN, .path = "self_attention.core_attention", .op = "contiguous",
	 .in = "kf vf", .out = "kc@kf vc:c:tok*kv", .save = KEEPS_NOTHING},
	{.when = C_TEKV, .path = "self_attention.core_attention", .op = "fused_attention",
	 .in = "q kc vc", .out = "ctx:c:tok*q lse:f32:b*hd*sq", .save = "q kc vc ctx lse",
	 .flops = "4*b*hd*sq*s*d"},
	/* eager (Megatron's DotProductAttention) */
	{.when = C_GQA, .unless = C_FLASH, .path = "self_attention.core_attention",
	 .op = "repeat_interleave", .in = "kf vf",
	 .out = "kx:c:b*s*q vx:c:b*s*q ki:i64:hd vi:i64:hd", .save = "ki vi"},
	{.unless = C_FLASH | C_GQA, .path = "self_attention.core_attention", .op = "view",
	 .in = "kf vf", .out = "kx@kf vx@vf", .save = KEEPS_NOTHING},
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "view", .in = "q",
	 .out = "qc@q", .save = KEEPS_NOTHING},
	PT_EAGER_CORE("qc", "kx", "vx", "d", "d", "q"),
};

/* Multi-latent attention (flash or unfused core): down projections on the local
 * shard, normed latents gathered under SP for the head-sharded up
 * projections, rotary parts concatenated to the heads. */
static const mo_op_row pt_attn_mla[] = {
	{.path = "self_attention.linear_qkv", .op = "matmul", .in = "ln1",
	 .out = "qkvd:c:tsp*qdown", .save = "ln1", .flops = "2*tsp*h*qdown"},
	{.path = "self_attention", .op = "split", .in = "qkvd",
	 .out = "qlv@qkvd kvlv@qkvd kpe@qkvd", .save = KEEPS_NOTHING},
	{.when = C_QLORA, .path = "self_attention.q_layernorm", .op = "rms_norm", .in = "qlv",
	 .out = "qn:c:tsp*ql rsq:f32:tsp", .save = "qlv rsq"},
	{.when = C_QLORA | C_SP, .path = "self_attention.linear_qb.input.allgather",
	 .op = "allgather", .in = "qn", .out = "qng:c:tok*ql", .save = KEEPS_NOTHING, .comm = AG},
	{.when = C_QLORA, .unless = C_SP, .path = "self_attention.linear_qb", .op = "view",
	 .in = "qn", .out = "qng@qn", .save = KEEPS_NOTHING},
	/* the up projections are column-parallel: under SP they keep their
	 * local input and gather it again in backward (TransformerEngine
	 * layernorm_linear.py:469, ln_out_to_save = ln_out, the gathered copy
	 * cleared at :430-435; Megatron's own Linear the same) */
	{.when = C_QLORA, .path = "self_attention.linear_qb", .op = "matmul", .in = "qng",
	 .out = "qf:c:tok*qhd", .save = "qn", .flops = "2*tok*ql*qhd"},
	{.unless = C_QLORA, .path = "self_attention.linear_qkv", .op = "matmul_q", .in = "ln1",
	 .out = "qf:c:tok*qhd", .save = "ln1", .flops = "2*tok*h*qhd"},
	{.path = "self_attention.k_layernorm", .op = "rms_norm", .in = "kvlv",
	 .out = "kvn:c:tsp*kvl rsk:f32:tsp", .save = "kvlv rsk"},
	{.when = C_SP, .path = "self_attention.linear_kvb.input.allgather", .op = "allgather",
	 .in = "kvn", .out = "kvng:c:tok*kvl", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_SP, .path = "self_attention.linear_kvb", .op = "view", .in = "kvn",
	 .out = "kvng@kvn", .save = KEEPS_NOTHING},
	{.path = "self_attention.linear_kvb", .op = "matmul", .in = "kvng", .out = "kvf:c:tok*kvbd",
	 .save = "kvn", .flops = "2*tok*kvl*kvbd"},
	{.when = C_SP, .path = "self_attention.apply_rotary_emb_k.input.allgather",
	 .op = "allgather", .in = "kpe", .out = "kpeg:c:tok*rope", .save = KEEPS_NOTHING,
	 .comm = AG},
	{.unless = C_SP, .path = "self_attention.apply_rotary_emb_k", .op = "view", .in = "kpe",
	 .out = "kpeg@kpe", .save = KEEPS_NOTHING},
	{.path = "self_attention.apply_rotary_emb_q", .op = "rotary", .in = "qf",
	 .out = "qr:c:tok*kpeh", .save = KEEPS_NOTHING},
	{.path = "self_attention.apply_rotary_emb_k", .op = "rotary", .in = "kpeg",
	 .out = "kr:c:tok*rope", .save = KEEPS_NOTHING},
	/* the query, key and value the up projections hand to the core
	 * attention: the outputs of Megatron's qkv_up_proj_and_rope_apply,
	 * which --recompute-modules mla_up_proj discards
	 * (multi_latent_attention.py:783-787, :315-317 at adc69dba), on the
	 * layout's q/k/v_handoff paths so that a discard_module pattern can
	 * name the whole function */
	{.path = "self_attention.q_handoff", .op = "cat", .in = "qf qr", .out = "qa:c:tok*qhd",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention.k_handoff", .op = "cat", .in = "kvf kr", .out = "ka:c:tok*qhd",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention.v_handoff", .op = "split", .in = "kvf", .out = "va@kvf",
	 .save = KEEPS_NOTHING},
	/* Megatron makes value, a slice of the up-projected kv, contiguous
	 * before the core attention (multi_latent_attention.py:796-798 and
	 * :260-265 at 11debfa7): a copy, and nothing then keeps kv */
	{.path = "self_attention.v_handoff", .op = "contiguous", .in = "va", .out = "vc:c:tok*vh",
	 .save = KEEPS_NOTHING},
	{.when = C_CP, .path = "self_attention.core_attention.input.allgather", .op = "allgather",
	 .in = "ka vc", .out = "kaf:c:b*s*qhd vaf:c:b*s*vh", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_CP, .path = "self_attention.core_attention", .op = "view", .in = "ka vc",
	 .out = "kaf@ka vaf@vc", .save = KEEPS_NOTHING},
	{.when = C_FLASH, .path = "self_attention.core_attention", .op = "flash_attention",
	 .in = "qa kaf vaf", .out = "ctx:c:tok*vh lse:f32:b*hd*sq",
	 .save = "qa kaf vaf ctx lse", .flops = "2*b*hd*sq*s*dqkv"},
	/* unfused (Megatron's --attention-backend unfused: Transformer
	 * Engine's UnfusedDotProductAttention, backends.py at d0067d0d, or
	 * Megatron's DotProductAttention): baddbmm keeps Q and K, the fused
	 * scale-mask-softmax (ScaledUpperTriangMaskedSoftmax, causal) keeps
	 * only its output, the probabilities, which bmm keeps with V; the
	 * scores are freed after the softmax */
	PT_EAGER_CORE("qa", "kaf", "vaf", "dqk", "dv", "vh"),
};

/* The attention output projection and its collective, for either attention: ctx is the
 * heads' context (ctxw wide on a rank: heads x kv_channels, or heads x v_head_dim under
 * multi-latent attention). */
static const mo_op_row pt_attn_proj[] = {
	{.path = "self_attention.linear_proj", .op = "matmul", .in = "ctx", .out = "po0:c:tok*h",
	 .save = "ctx", .flops = "2*tok*ctxw*h"},
	{.when = C_SP, .path = "self_attention.linear_proj.output.reducescatter",
	 .op = "reducescatter", .in = "po0", .out = "attn:c:tsp*h", .save = KEEPS_NOTHING,
	 .comm = RS},
	{.when = C_TP, .unless = C_SP, .path = "self_attention.linear_proj.output.allreduce",
	 .op = "allreduce", .in = "po0", .out = "attn:c:tok*h", .save = KEEPS_NOTHING, .comm = AR},
	{.unless = C_TP, .path = "self_attention.linear_proj", .op = "view", .in = "po0",
	 .out = "attn@po0", .save = KEEPS_NOTHING},
};

static const mo_op_row pt_resid_attn[] = {
	{.when = C_HDROP, .path = "hidden_states_dropout", .op = "dropout", .in = "attn",
	 .out = "ad:c:tsp*h m1:u8:tsp*h", .save = "m1"},
	{.unless = C_HDROP, .path = "hidden_states_dropout", .op = "view", .in = "attn",
	 .out = "ad@attn", .save = KEEPS_NOTHING},
	{.path = "add", .op = "add", .in = "x ad", .out = "x2:c:tsp*h", .save = KEEPS_NOTHING},
	PT_NORM("pre_mlp_layernorm", "x2", "ln2", "mu2", "rs2"),
};

static const mo_op_row pt_mlp[] = {
	{.when = C_SP, .path = "mlp.linear_fc1.input.allgather", .op = "allgather", .in = "ln2",
	 .out = "ln2g:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_SP, .path = "mlp.linear_fc1", .op = "view", .in = "ln2", .out = "ln2g@ln2",
	 .save = KEEPS_NOTHING},
	{.path = "mlp.linear_fc1", .op = "matmul", .in = "ln2g", .out = "fc1:c:tok*f1",
	 .save = "ln2", .flops = "2*tok*h*f1"},
	{.when = C_GATED, .path = "mlp.activation_func", .op = "swiglu", .in = "fc1",
	 .out = "act:c:tok*f", .save = "fc1"},
	{.when = C_GELU, .unless = C_GATED, .path = "mlp.activation_func", .op = "gelu",
	 .in = "fc1", .out = "act:c:tok*f", .save = "fc1"},
	{.unless = C_GATED | C_GELU, .path = "mlp.activation_func", .op = "silu", .in = "fc1",
	 .out = "act:c:tok*f", .save = "fc1"},
	{.path = "mlp.linear_fc2", .op = "matmul", .in = "act", .out = "f2o:c:tok*h", .save = "act",
	 .flops = "2*tok*f*h"},
	{.when = C_SP, .path = "mlp.linear_fc2.output.reducescatter", .op = "reducescatter",
	 .in = "f2o", .out = "mlp:c:tsp*h", .save = KEEPS_NOTHING, .comm = RS},
	{.when = C_TP, .unless = C_SP, .path = "mlp.linear_fc2.output.allreduce", .op = "allreduce",
	 .in = "f2o", .out = "mlp:c:tok*h", .save = KEEPS_NOTHING, .comm = AR},
	{.unless = C_TP, .path = "mlp.linear_fc2", .op = "view", .in = "f2o", .out = "mlp@f2o",
	 .save = KEEPS_NOTHING},
};

/* MoE: router, top-k, permutation, dispatch, grouped expert MLP, combine
 * weighted by the routing probabilities, shared experts. */
static const mo_op_row pt_moe[] = {
	{.when = C_SP, .path = "mlp.input.allgather", .op = "allgather", .in = "ln2",
	 .out = "ln2g:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_SP, .path = "mlp", .op = "view", .in = "ln2", .out = "ln2g@ln2",
	 .save = KEEPS_NOTHING},
	{.path = "mlp.router", .op = "linear", .in = "ln2g", .out = "rl:c:tok*E", .save = "ln2g",
	 .flops = "2*tok*h*E"},
	{.path = "mlp.router", .op = "softmax", .in = "rl", .out = "rp:c:tok*E", .save = "rp"},
	{.path = "mlp.router", .op = "topk", .in = "rp", .out = "tkp:c:tok*k tki:i64:tok*k",
	 .save = "tki"},
	{.path = "mlp.experts", .op = "permute", .in = "ln2g tki", .out = "perm:c:rt*h",
	 .save = KEEPS_NOTHING},
	{.when = C_EP, .path = "mlp.experts.input.alltoallsingle", .op = "alltoall", .in = "perm",
	 .out = "disp:c:rt*h", .save = KEEPS_NOTHING, .comm = A2A},
	{.unless = C_EP, .path = "mlp.experts", .op = "view", .in = "perm", .out = "disp@perm",
	 .save = KEEPS_NOTHING},
	{.path = "mlp.experts", .op = "grouped_matmul_fc1", .in = "disp", .out = "e1:c:rt*fe1",
	 .save = "disp", .flops = "2*rt*h*fe1"},
	{.when = C_GATED, .path = "mlp.experts.activation_func", .op = "swiglu", .in = "e1",
	 .out = "ea:c:rt*fe", .save = "e1"},
	/* a plain (not gated) activation is never fused with the routing probabilities: the
	 * experts apply them after it, and the product's multiply keeps the activation's
	 * output (Megatron adc69dba moe/experts.py:936-940, TEGroupedMLP's bias_act_func;
	 * mlp.py:204-212, each expert of SequentialMLP with per_token_scale; Megatron
	 * refuses the fused gelu with probabilities, mlp.py:174-177); the weighted output
	 * (cast back from the probabilities' dtype) is what fc2 keeps. One row for the
	 * activation, the multiply and the cast (the time model prices them as one kernel) */
	{.unless = C_GATED, .path = "mlp.experts.activation_func", .op = "act_mul_probs",
	 .in = "e1", .out = "eg:c:rt*fe ea:c:rt*fe", .save = "e1 eg"},
	{.path = "mlp.experts", .op = "grouped_matmul_fc2", .in = "ea", .out = "e2:c:rt*h",
	 .save = "ea", .flops = "2*rt*fe*h"},
	{.when = C_EP, .path = "mlp.experts.output.alltoallsingle", .op = "alltoall", .in = "e2",
	 .out = "comb:c:rt*h", .save = KEEPS_NOTHING, .comm = A2A},
	{.unless = C_EP, .path = "mlp.experts", .op = "view", .in = "e2", .out = "comb@e2",
	 .save = KEEPS_NOTHING},
	{.path = "mlp.experts", .op = "unpermute", .in = "comb tkp", .out = "mo0:c:tok*h",
	 .save = "comb tkp"},
	{.when = C_SHARED, .path = "mlp.shared_experts.linear_fc1", .op = "matmul", .in = "ln2g",
	 .out = "sf1:c:tok*fs1", .save = "ln2g", .flops = "2*tok*h*fs1"},
	{.when = C_SHARED, .path = "mlp.shared_experts.activation_func", .op = "act", .in = "sf1",
	 .out = "sa:c:tok*fs", .save = "sf1"},
	{.when = C_SHARED, .path = "mlp.shared_experts.linear_fc2", .op = "matmul", .in = "sa",
	 .out = "so:c:tok*h", .save = "sa", .flops = "2*tok*fs*h"},
	{.when = C_SHARED, .path = "mlp", .op = "add", .in = "mo0 so", .out = "mo1:c:tok*h",
	 .save = KEEPS_NOTHING},
	{.unless = C_SHARED, .path = "mlp", .op = "view", .in = "mo0", .out = "mo1@mo0",
	 .save = KEEPS_NOTHING},
	{.when = C_SP, .path = "mlp", .op = "split", .in = "mo1", .out = "mlp:c:tsp*h",
	 .save = KEEPS_NOTHING},
	{.unless = C_SP, .path = "mlp", .op = "view", .in = "mo1", .out = "mlp@mo1",
	 .save = KEEPS_NOTHING},
};

static const mo_op_row pt_resid_mlp[] = {
	{.when = C_HDROP, .path = "hidden_states_dropout", .op = "dropout", .in = "mlp",
	 .out = "md:c:tsp*h m2:u8:tsp*h", .save = "m2"},
	{.unless = C_HDROP, .path = "hidden_states_dropout", .op = "view", .in = "mlp",
	 .out = "md@mlp", .save = KEEPS_NOTHING},
	{.path = "add", .op = "add", .in = "x2 md", .out = "y:c:tsp*h", .save = KEEPS_NOTHING},
};

/* MTP: normed embedding of the shifted tokens and normed hidden state,
 * concatenated and projected (eh_proj), then a transformer layer. */
static const mo_op_row pt_mtp_in[] = {
	{.path = "", .op = "input", .in = "", .out = "x:c:tsp*h emb:c:tsp*h", .save = KEEPS_NOTHING},
	PT_NORM("enorm", "emb", "en", "mue", "rse"),
	PT_NORM("hnorm", "x", "hn", "muh", "rsh"),
	{.path = "cat", .op = "cat", .in = "en hn", .out = "ch:c:tsp*h2", .save = KEEPS_NOTHING},
	{.path = "eh_proj", .op = "matmul", .in = "ch", .out = "mx:c:tsp*h", .save = "ch",
	 .flops = "2*tsp*h2*htp"},
};

static const mo_op_row pt_mtp_out[] = {
	PT_NORM("final_layernorm", "L.y", "y", "muf", "rsf"),
};

/* Final norm, output layer (vocab-parallel), cross-entropy in fp32: the
 * loss keeps one fp32 plane (Megatron's vocab_parallel_cross_entropy keeps
 * its softmax, exp_logits: cross_entropy.py:187). Its backward writes the
 * gradient into that plane in place (cross_entropy.py:91, grad_input =
 * softmax; :117 mul_), so the loss backward adds only the gradient's cast
 * to the logits' dtype (estimate_weights.c, loss_bytes). Under SP the
 * output layer (Megatron's ColumnParallelLinear) saves its local input
 * and gathers it into Megatron's global "mpu" buffer, one for the run,
 * kept (LinearWithGradAccumulationAndAsyncCommunication.forward,
 * tensor_parallel/layers.py:465 save_for_backward(input, weight), :478-484
 * at 11debfa7): the gathered input is a kept cache of the last stage
 * (estimate_weights.c head_gather), not a per-micro-batch activation. */
static const mo_op_row pt_head[] = {
	{.path = "", .op = "input", .in = "", .out = "y:c:tsp*h", .save = KEEPS_NOTHING},
	PT_NORM("final_layernorm", "y", "yn", "muf", "rsf"),
	{.when = C_SP, .path = "output_layer.input.allgather", .op = "allgather", .in = "yn",
	 .out = "yng:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_SP, .path = "output_layer", .op = "view", .in = "yn", .out = "yng@yn",
	 .save = KEEPS_NOTHING},
	{.path = "output_layer", .op = "matmul", .in = "yng", .out = "logits:c:tok*vocab",
	 .save = "yn", .flops = "2*tok*h*vocab"},
	{.path = "loss", .op = "cast", .in = "logits", .out = "l32:f32:tok*vocab",
	 .save = KEEPS_NOTHING},
	{.path = "loss", .op = "log_softmax", .in = "l32", .out = "lsm:f32:tok*vocab",
	 .save = "lsm"},
	{.path = "loss", .op = "nll_loss", .in = "lsm", .out = "loss:f32:1", .save = KEEPS_NOTHING},
};

/* Megatron's LanguageModelEmbedding (language_model_embedding.py at
 * 09eb91e5): word embeddings, learned absolute position embeddings added
 * (:113-114), then the embedding dropout with hidden_dropout (:86, :150-152)
 * keeping its bool mask on the (sequence-parallel) output. */
static const mo_op_row pt_embed[] = {
	{.path = "", .op = "input", .in = "", .out = "ids:i64:tok", .save = KEEPS_NOTHING},
	{.when = C_LPOS, .path = "", .op = "input", .in = "", .out = "pid:i64:tok",
	 .save = KEEPS_NOTHING},
	{.path = "embedding.word_embeddings", .op = "embedding", .in = "ids", .out = "we:c:tsp*h",
	 .save = "ids"},
	{.when = C_LPOS, .path = "embedding.position_embeddings", .op = "embedding", .in = "pid",
	 .out = "pe:c:tsp*h", .save = "pid"},
	{.when = C_LPOS, .path = "embedding", .op = "add", .in = "we pe", .out = "es:c:tsp*h",
	 .save = KEEPS_NOTHING},
	{.unless = C_LPOS, .path = "embedding", .op = "view", .in = "we", .out = "es@we",
	 .save = KEEPS_NOTHING},
	{.when = C_HDROP, .path = "embedding.embedding_dropout", .op = "dropout", .in = "es",
	 .out = "x:c:tsp*h me:u8:tsp*h", .save = "me"},
	{.unless = C_HDROP, .path = "embedding", .op = "view", .in = "es", .out = "x@es",
	 .save = KEEPS_NOTHING},
};

const mo_framework mo_ops_pytorch = {
	.name = "pytorch",
	.align = 1,
	.recompute_needs_world = false,
	.blocks = MO_OP_BLOCKS(pt),
	.note = "PyTorch autograd's minimal save sets (Megatron-style layer, "
		"fused norms with fp32 statistics, bool dropout masks)",
};
