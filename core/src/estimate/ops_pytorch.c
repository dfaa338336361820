/* `framework: pytorch`: what PyTorch autograd keeps for backward in a
 * Megatron-style layer ([s, b, h] layout, fused norms that save fp32
 * statistics, fused SwiGLU, torch.native_dropout's 1-byte masks). Each row's
 * `save` is the op's minimal saved set (SPEC 3):
 *   Linear: its input (the weight is a parameter);
 *   LayerNorm: input + fp32 mean and rstd; RMSNorm: input + fp32 rstd;
 *   GeLU / SiLU / fused SwiGLU: their input; dropout: the bool mask;
 *   eager attention: Q and K (baddbmm), the softmax output, the dropout mask,
 *   the dropped probabilities and V (bmm); with GQA, K and V expanded by
 *   repeat_interleave (which also keeps an int64 index per head), and Q
 *   copied when the split query is reshaped to heads;
 *   flash attention: Q, K, V, its output and the fp32 log-sum-exp.
 * Split q/k/v are views of the fused QKV output: one storage. Under
 * sequence parallelism a column-parallel Linear keeps its local input shard
 * and all-gathers it again in backward (Megatron's
 * LinearWithGradAccumulationAndAsyncCommunication).
 * Shapes: tsp = local tokens of a sequence-parallel tensor, tok = local
 * tokens (b * s / CP), q/kv/qkv = local projection widths (TP), f/f1 =
 * local FFN widths (f1 doubled for gated units), rt = routed tokens. */
#include "estimate/estimate.h"

#define N(x) (sizeof(x) / sizeof(*(x)))
#define AG MO_COMM_ALLGATHER
#define RS MO_COMM_REDUCESCATTER
#define AR MO_COMM_ALLREDUCE
#define A2A MO_COMM_ALLTOALL

#define C_GATED MO_C_GATED
#define C_LN MO_C_LN
#define C_FLASH MO_C_FLASH
#define C_HDROP MO_C_HDROP
#define C_ADROP MO_C_ADROP
#define C_GQA MO_C_GQA
#define C_SP MO_C_SP
#define C_TP MO_C_TP
#define C_CP MO_C_CP
#define C_QLORA MO_C_QLORA
#define C_SHARED MO_C_SHARED
#define C_EP MO_C_EPCOMM
#define C_GELU MO_C_GELU

static const mo_op_row pt_norm_attn[] = {
	{0, 0, "", "input", "", "x:c:tsp*h", "", NULL, 0},
	{C_LN, 0, "input_layernorm", "layer_norm", "x",
	 "ln1:c:tsp*h mu1:f32:tsp rs1:f32:tsp", "x mu1 rs1", NULL, 0},
	{0, C_LN, "input_layernorm", "rms_norm", "x", "ln1:c:tsp*h rs1:f32:tsp",
	 "x rs1", NULL, 0},
};

/* Standard attention: fused QKV, eager or flash core, row-parallel proj. */
static const mo_op_row pt_attn[] = {
	{C_SP, 0, "self_attention.linear_qkv.input.allgather", "allgather", "ln1",
	 "ln1g:c:tok*h", "", NULL, AG},
	{0, C_SP, "self_attention.linear_qkv", "view", "ln1", "ln1g@ln1", "", NULL, 0},
	{0, 0, "self_attention.linear_qkv", "matmul", "ln1g", "qkv:c:tok*qkv",
	 "ln1", "2*tok*h*qkv", 0},
	/* GQA: reshaping the query slice of [s, b, g, (a/g + 2) hn] to
	 * [s, b, a, hn] copies it (Megatron's get_query_key_value_tensors) */
	{0, C_GQA, "self_attention", "split_qkv", "qkv", "q@qkv k@qkv v@qkv", "", NULL, 0},
	{C_GQA, 0, "self_attention", "split_qkv", "qkv", "q:c:tok*q k@qkv v@qkv", "",
	 NULL, 0},
	{C_CP, 0, "self_attention.core_attention.input.allgather", "allgather",
	 "k v", "kf:c:b*s*kv vf:c:b*s*kv", "", NULL, AG},
	{0, C_CP, "self_attention.core_attention", "view", "k v", "kf@k vf@v", "",
	 NULL, 0},
	/* flash */
	{C_FLASH, 0, "self_attention.core_attention", "flash_attention",
	 "q kf vf", "ctx:c:tok*q lse:f32:b*hd*sq", "q kf vf ctx lse",
	 "4*b*hd*sq*s*d", 0},
	/* eager (Megatron's DotProductAttention) */
	{C_GQA, C_FLASH, "self_attention.core_attention", "repeat_interleave",
	 "kf vf", "kx:c:b*s*q vx:c:b*s*q ki:i64:hd vi:i64:hd", "ki vi", NULL, 0},
	{0, C_FLASH | C_GQA, "self_attention.core_attention", "view", "kf vf",
	 "kx@kf vx@vf", "", NULL, 0},
	{0, C_FLASH, "self_attention.core_attention", "view", "q", "qc@q", "", NULL, 0},
	{0, C_FLASH, "self_attention.core_attention", "baddbmm", "qc kx",
	 "sc:c:b*hd*sq*s", "qc kx", "2*b*hd*sq*s*d", 0},
	{0, C_FLASH, "self_attention.core_attention", "softmax", "sc",
	 "pr:c:b*hd*sq*s", "pr", NULL, 0},
	{C_ADROP, C_FLASH, "self_attention.core_attention", "dropout", "pr",
	 "prd:c:b*hd*sq*s am:u8:b*hd*sq*s", "am", NULL, 0},
	{0, C_FLASH | C_ADROP, "self_attention.core_attention", "view", "pr",
	 "prd@pr", "", NULL, 0},
	{0, C_FLASH, "self_attention.core_attention", "bmm", "prd vx",
	 "ctx0:c:tok*q", "prd vx", "2*b*hd*sq*s*d", 0},
	{0, C_FLASH, "self_attention.core_attention", "permute", "ctx0",
	 "ctx:c:tok*q", "", NULL, 0},
	{0, 0, "self_attention.linear_proj", "matmul", "ctx", "po0:c:tok*h", "ctx",
	 "2*tok*q*h", 0},
	{C_SP, 0, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", "", NULL, RS},
	{C_TP, C_SP, "self_attention.linear_proj.output.allreduce", "allreduce",
	 "po0", "attn:c:tok*h", "", NULL, AR},
	{0, C_TP, "self_attention.linear_proj", "view", "po0", "attn@po0", "",
	 NULL, 0},
};

/* Multi-latent attention (flash core): down projections on the local
 * shard, normed latents gathered under SP for the head-sharded up
 * projections, rotary parts concatenated to the heads. */
static const mo_op_row pt_attn_mla[] = {
	{0, 0, "self_attention.linear_qkv", "matmul", "ln1", "qkvd:c:tsp*qdown",
	 "ln1", "2*tsp*h*qdown", 0},
	{0, 0, "self_attention", "split", "qkvd", "qlv@qkvd kvlv@qkvd kpe@qkvd", "",
	 NULL, 0},
	{C_QLORA, 0, "self_attention.q_layernorm", "rms_norm", "qlv",
	 "qn:c:tsp*ql rsq:f32:tsp", "qlv rsq", NULL, 0},
	{C_QLORA | C_SP, 0, "self_attention.linear_qb.input.allgather",
	 "allgather", "qn", "qng:c:tok*ql", "", NULL, AG},
	{C_QLORA, C_SP, "self_attention.linear_qb", "view", "qn", "qng@qn", "",
	 NULL, 0},
	{C_QLORA, 0, "self_attention.linear_qb", "matmul", "qng", "qf:c:tok*qhd",
	 "qng", "2*tok*ql*qhd", 0},
	{0, C_QLORA, "self_attention.linear_qkv", "matmul_q", "ln1",
	 "qf:c:tok*qhd", "ln1", "2*tok*h*qhd", 0},
	{0, 0, "self_attention.k_layernorm", "rms_norm", "kvlv",
	 "kvn:c:tsp*kvl rsk:f32:tsp", "kvlv rsk", NULL, 0},
	{C_SP, 0, "self_attention.linear_kvb.input.allgather", "allgather", "kvn",
	 "kvng:c:tok*kvl", "", NULL, AG},
	{0, C_SP, "self_attention.linear_kvb", "view", "kvn", "kvng@kvn", "", NULL, 0},
	{0, 0, "self_attention.linear_kvb", "matmul", "kvng", "kvf:c:tok*kvbd",
	 "kvng", "2*tok*kvl*kvbd", 0},
	{C_SP, 0, "self_attention.apply_rotary_emb_k.input.allgather",
	 "allgather", "kpe", "kpeg:c:tok*rope", "", NULL, AG},
	{0, C_SP, "self_attention.apply_rotary_emb_k", "view", "kpe", "kpeg@kpe",
	 "", NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_q", "rotary", "qf",
	 "qr:c:tok*kpeh", "", NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_k", "rotary", "kpeg",
	 "kr:c:tok*rope", "", NULL, 0},
	{0, 0, "self_attention", "cat", "qf qr kvf kr", "qa:c:tok*qhd ka:c:tok*qhd",
	 "", NULL, 0},
	{0, 0, "self_attention", "split", "kvf", "va@kvf", "", NULL, 0},
	{C_CP, 0, "self_attention.core_attention.input.allgather", "allgather",
	 "ka va", "kaf:c:b*s*qhd vaf:c:b*s*vh", "", NULL, AG},
	{0, C_CP, "self_attention.core_attention", "view", "ka va", "kaf@ka vaf@va",
	 "", NULL, 0},
	{0, 0, "self_attention.core_attention", "flash_attention", "qa kaf vaf",
	 "ctx:c:tok*vh lse:f32:b*hd*sq", "qa kaf vaf ctx lse",
	 "2*b*hd*sq*s*dqkv", 0},
	{0, 0, "self_attention.linear_proj", "matmul", "ctx", "po0:c:tok*h", "ctx",
	 "2*tok*vh*h", 0},
	{C_SP, 0, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", "", NULL, RS},
	{C_TP, C_SP, "self_attention.linear_proj.output.allreduce", "allreduce",
	 "po0", "attn:c:tok*h", "", NULL, AR},
	{0, C_TP, "self_attention.linear_proj", "view", "po0", "attn@po0", "",
	 NULL, 0},
};

static const mo_op_row pt_resid_attn[] = {
	{C_HDROP, 0, "hidden_states_dropout", "dropout", "attn",
	 "ad:c:tsp*h m1:u8:tsp*h", "m1", NULL, 0},
	{0, C_HDROP, "hidden_states_dropout", "view", "attn", "ad@attn", "", NULL, 0},
	{0, 0, "add", "add", "x ad", "x2:c:tsp*h", "", NULL, 0},
	{C_LN, 0, "pre_mlp_layernorm", "layer_norm", "x2",
	 "ln2:c:tsp*h mu2:f32:tsp rs2:f32:tsp", "x2 mu2 rs2", NULL, 0},
	{0, C_LN, "pre_mlp_layernorm", "rms_norm", "x2", "ln2:c:tsp*h rs2:f32:tsp",
	 "x2 rs2", NULL, 0},
};

static const mo_op_row pt_mlp[] = {
	{C_SP, 0, "mlp.linear_fc1.input.allgather", "allgather", "ln2",
	 "ln2g:c:tok*h", "", NULL, AG},
	{0, C_SP, "mlp.linear_fc1", "view", "ln2", "ln2g@ln2", "", NULL, 0},
	{0, 0, "mlp.linear_fc1", "matmul", "ln2g", "fc1:c:tok*f1", "ln2",
	 "2*tok*h*f1", 0},
	{C_GATED, 0, "mlp.activation_func", "swiglu", "fc1", "act:c:tok*f", "fc1",
	 NULL, 0},
	{C_GELU, C_GATED, "mlp.activation_func", "gelu", "fc1", "act:c:tok*f",
	 "fc1", NULL, 0},
	{0, C_GATED | C_GELU, "mlp.activation_func", "silu", "fc1", "act:c:tok*f",
	 "fc1", NULL, 0},
	{0, 0, "mlp.linear_fc2", "matmul", "act", "f2o:c:tok*h", "act",
	 "2*tok*f*h", 0},
	{C_SP, 0, "mlp.linear_fc2.output.reducescatter", "reducescatter", "f2o",
	 "mlp:c:tsp*h", "", NULL, RS},
	{C_TP, C_SP, "mlp.linear_fc2.output.allreduce", "allreduce", "f2o",
	 "mlp:c:tok*h", "", NULL, AR},
	{0, C_TP, "mlp.linear_fc2", "view", "f2o", "mlp@f2o", "", NULL, 0},
};

/* MoE: router, top-k, permutation, dispatch, grouped expert MLP, combine
 * weighted by the routing probabilities, shared experts. */
static const mo_op_row pt_moe[] = {
	{C_SP, 0, "mlp.input.allgather", "allgather", "ln2", "ln2g:c:tok*h", "",
	 NULL, AG},
	{0, C_SP, "mlp", "view", "ln2", "ln2g@ln2", "", NULL, 0},
	{0, 0, "mlp.router", "linear", "ln2g", "rl:c:tok*E", "ln2g", "2*tok*h*E", 0},
	{0, 0, "mlp.router", "softmax", "rl", "rp:c:tok*E", "rp", NULL, 0},
	{0, 0, "mlp.router", "topk", "rp", "tkp:c:tok*k tki:i64:tok*k", "tki",
	 NULL, 0},
	{0, 0, "mlp.experts", "permute", "ln2g tki", "perm:c:rt*h", "", NULL, 0},
	{C_EP, 0, "mlp.experts.input.alltoallsingle", "alltoall", "perm",
	 "disp:c:rt*h", "", NULL, A2A},
	{0, C_EP, "mlp.experts", "view", "perm", "disp@perm", "", NULL, 0},
	{0, 0, "mlp.experts", "grouped_matmul_fc1", "disp", "e1:c:rt*fe1", "disp",
	 "2*rt*h*fe1", 0},
	{C_GATED, 0, "mlp.experts.activation_func", "swiglu", "e1", "ea:c:rt*fe",
	 "e1", NULL, 0},
	{0, C_GATED, "mlp.experts.activation_func", "act", "e1", "ea:c:rt*fe",
	 "e1", NULL, 0},
	{0, 0, "mlp.experts", "grouped_matmul_fc2", "ea", "e2:c:rt*h", "ea",
	 "2*rt*fe*h", 0},
	{C_EP, 0, "mlp.experts.output.alltoallsingle", "alltoall", "e2",
	 "comb:c:rt*h", "", NULL, A2A},
	{0, C_EP, "mlp.experts", "view", "e2", "comb@e2", "", NULL, 0},
	{0, 0, "mlp.experts", "unpermute", "comb tkp", "mo0:c:tok*h", "comb tkp",
	 NULL, 0},
	{C_SHARED, 0, "mlp.shared_experts.linear_fc1", "matmul", "ln2g",
	 "sf1:c:tok*fs1", "ln2g", "2*tok*h*fs1", 0},
	{C_SHARED, 0, "mlp.shared_experts.activation_func", "act", "sf1",
	 "sa:c:tok*fs", "sf1", NULL, 0},
	{C_SHARED, 0, "mlp.shared_experts.linear_fc2", "matmul", "sa",
	 "so:c:tok*h", "sa", "2*tok*fs*h", 0},
	{C_SHARED, 0, "mlp", "add", "mo0 so", "mo1:c:tok*h", "", NULL, 0},
	{0, C_SHARED, "mlp", "view", "mo0", "mo1@mo0", "", NULL, 0},
	{C_SP, 0, "mlp", "split", "mo1", "mlp:c:tsp*h", "", NULL, 0},
	{0, C_SP, "mlp", "view", "mo1", "mlp@mo1", "", NULL, 0},
};

static const mo_op_row pt_resid_mlp[] = {
	{C_HDROP, 0, "hidden_states_dropout", "dropout", "mlp",
	 "md:c:tsp*h m2:u8:tsp*h", "m2", NULL, 0},
	{0, C_HDROP, "hidden_states_dropout", "view", "mlp", "md@mlp", "", NULL, 0},
	{0, 0, "add", "add", "x2 md", "y:c:tsp*h", "", NULL, 0},
};

/* MTP: normed embedding of the shifted tokens and normed hidden state,
 * concatenated and projected (eh_proj), then a transformer layer. */
static const mo_op_row pt_mtp_in[] = {
	{0, 0, "", "input", "", "x:c:tsp*h emb:c:tsp*h", "", NULL, 0},
	{0, C_LN, "enorm", "rms_norm", "emb", "en:c:tsp*h rse:f32:tsp", "emb rse",
	 NULL, 0},
	{C_LN, 0, "enorm", "layer_norm", "emb",
	 "en:c:tsp*h mue:f32:tsp rse:f32:tsp", "emb mue rse", NULL, 0},
	{0, C_LN, "hnorm", "rms_norm", "x", "hn:c:tsp*h rsh:f32:tsp", "x rsh",
	 NULL, 0},
	{C_LN, 0, "hnorm", "layer_norm", "x", "hn:c:tsp*h muh:f32:tsp rsh:f32:tsp",
	 "x muh rsh", NULL, 0},
	{0, 0, "cat", "cat", "en hn", "ch:c:tsp*h2", "", NULL, 0},
	{0, 0, "eh_proj", "matmul", "ch", "mx:c:tsp*h", "ch", "2*tsp*h2*htp", 0},
};

static const mo_op_row pt_mtp_out[] = {
	{0, C_LN, "final_layernorm", "rms_norm", "L.y", "y:c:tsp*h rsf:f32:tsp",
	 "L.y rsf", NULL, 0},
	{C_LN, 0, "final_layernorm", "layer_norm", "L.y",
	 "y:c:tsp*h muf:f32:tsp rsf:f32:tsp", "L.y muf rsf", NULL, 0},
};

/* Final norm, output layer (vocab-parallel), unfused cross-entropy in fp32:
 * log_softmax keeps its fp32 output plane. */
static const mo_op_row pt_head[] = {
	{0, 0, "", "input", "", "y:c:tsp*h", "", NULL, 0},
	{0, C_LN, "final_layernorm", "rms_norm", "y", "yn:c:tsp*h rsf:f32:tsp",
	 "y rsf", NULL, 0},
	{C_LN, 0, "final_layernorm", "layer_norm", "y",
	 "yn:c:tsp*h muf:f32:tsp rsf:f32:tsp", "y muf rsf", NULL, 0},
	{C_SP, 0, "output_layer.input.allgather", "allgather", "yn", "yng:c:tok*h",
	 "", NULL, AG},
	{0, C_SP, "output_layer", "view", "yn", "yng@yn", "", NULL, 0},
	{0, 0, "output_layer", "matmul", "yng", "logits:c:tok*vocab", "yng",
	 "2*tok*h*vocab", 0},
	{0, 0, "loss", "cast", "logits", "l32:f32:tok*vocab", "", NULL, 0},
	{0, 0, "loss", "log_softmax", "l32", "lsm:f32:tok*vocab", "lsm", NULL, 0},
	{0, 0, "loss", "nll_loss", "lsm", "loss:f32:1", "", NULL, 0},
};

static const mo_op_row pt_embed[] = {
	{0, 0, "", "input", "", "ids:i64:tok", "", NULL, 0},
	{0, 0, "embedding", "embedding", "ids", "x:c:tsp*h", "ids", NULL, 0},
};

#define BLK(name, rows) \
	static const mo_op_block name##_blk = {#name, rows, N(rows)}
BLK(pt_norm_attn, pt_norm_attn);
BLK(pt_attn, pt_attn);
BLK(pt_attn_mla, pt_attn_mla);
BLK(pt_resid_attn, pt_resid_attn);
BLK(pt_mlp, pt_mlp);
BLK(pt_moe, pt_moe);
BLK(pt_resid_mlp, pt_resid_mlp);
BLK(pt_mtp_in, pt_mtp_in);
BLK(pt_mtp_out, pt_mtp_out);
BLK(pt_head, pt_head);
BLK(pt_embed, pt_embed);

const mo_framework mo_ops_pytorch = {
	.name = "pytorch",
	.align = 1,
	.recompute_needs_world = false,
	.blocks = {
		[MO_BLK_NORM_ATTN] = &pt_norm_attn_blk,
		[MO_BLK_ATTN] = &pt_attn_blk,
		[MO_BLK_ATTN_MLA] = &pt_attn_mla_blk,
		[MO_BLK_RESID_ATTN] = &pt_resid_attn_blk,
		[MO_BLK_MLP] = &pt_mlp_blk,
		[MO_BLK_MOE] = &pt_moe_blk,
		[MO_BLK_RESID_MLP] = &pt_resid_mlp_blk,
		[MO_BLK_MTP_IN] = &pt_mtp_in_blk,
		[MO_BLK_MTP_OUT] = &pt_mtp_out_blk,
		[MO_BLK_HEAD] = &pt_head_blk,
		[MO_BLK_EMBED] = &pt_embed_blk,
	},
	.note = "PyTorch autograd's minimal save sets (Megatron-style layer, "
		"fused norms with fp32 statistics, bool dropout masks)",
};
