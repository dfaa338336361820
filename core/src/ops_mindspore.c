/* `framework: mindspore` (the default): MindSpore Transformers PyNative's
 * layer as an op list (mindformers/pynative/transformers/: norms computed in
 * fp32 (layernorm_compute_dtype), rotary embedding in fp32 (rotary_dtype),
 * FlashAttentionScore with its fp32 softmax max / sum [b, n, s, 8], softmax
 * in fp32 on the eager path (softmax_compute_dtype), the unfused
 * cross-entropy's fp32 planes). MindSpore PyNative's autograd keeps every
 * op's inputs and output for backward (`save` NULL), and its memory pool
 * rounds every tensor up to 512 bytes.
 *
 * This table is the first cut that issue 8 calibrates against measured
 * Ascend runs (../shared/calibration/ascend-910b.md): change rows here, not
 * the estimator. Split / reshape / transpose are views (MindSpore 2.3+ view
 * ops). The residual add of a layer does not keep its output: that tensor is
 * the next layer's input and is counted there once. */
#include "estimate_internal.h"

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
#define C_SP MO_C_SP
#define C_TP MO_C_TP
#define C_CP MO_C_CP
#define C_QLORA MO_C_QLORA
#define C_SHARED MO_C_SHARED
#define C_EP MO_C_EPCOMM
#define C_FUSED MO_C_FUSEDACT
#define C_GELU MO_C_GELU
#define C_P32 MO_C_P32
#define ALL NULL

/* fp32 parameters with bf16 compute: each Linear casts its (all-gathered)
 * fp32 weight to the compute dtype and the matmul keeps that copy for its
 * backward (mindformers/pynative/layers/linear.py: `weight =
 * self.cast(weight, self.compute_dtype)`): 2 B per full parameter per
 * micro-batch, recomputed with the Linear's module. Measured: the DSv3-mini
 * no-recompute run keeps 393 MiB more than this table had (206.05M params
 * of its 4 layers; notes/calibration.md term 5). With bf16 parameters the
 * cast is a no-op. */
#define WCOPY(path, name, dims) {C_P32, 0, path, "cast", "", name ":c:" dims, ALL, NULL, 0}

static const mo_op_row ms_norm_attn[] = {
	{0, 0, "", "input", "", "x:c:tsp*h", "", NULL, 0},
	{0, 0, "input_layernorm", "cast", "x", "x32:f32:tsp*h", ALL, NULL, 0},
	{C_LN, 0, "input_layernorm", "layer_norm", "x32",
	 "n1:f32:tsp*h mu1:f32:tsp rs1:f32:tsp", ALL, NULL, 0},
	{0, C_LN, "input_layernorm", "rms_norm", "x32", "n1:f32:tsp*h rs1:f32:tsp",
	 ALL, NULL, 0},
	{0, 0, "input_layernorm", "cast", "n1", "ln1:c:tsp*h", ALL, NULL, 0},
};

static const mo_op_row ms_attn[] = {
	{C_SP, 0, "self_attention.linear_qkv.input.allgather", "allgather", "ln1",
	 "ln1g:c:tok*h", ALL, NULL, AG},
	{0, C_SP, "self_attention.linear_qkv", "view", "ln1", "ln1g@ln1", "", NULL, 0},
	WCOPY("self_attention.linear_qkv", "wqkv", "h*qkv"),
	{0, 0, "self_attention.linear_qkv", "matmul", "ln1g", "qkv:c:tok*qkv", ALL,
	 "2*tok*h*qkv", 0},
	{0, 0, "self_attention.split_qkv", "split", "qkv", "q@qkv k@qkv v@qkv", "",
	 NULL, 0},
	{0, 0, "self_attention.apply_rotary_pos_emb", "cast", "q k",
	 "q32:f32:tok*q k32:f32:tok*kv", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_pos_emb", "rotary_position_embedding",
	 "q32 k32", "qr32:f32:tok*q kr32:f32:tok*kv", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_pos_emb", "cast", "qr32 kr32",
	 "qr:c:tok*q kr:c:tok*kv", ALL, NULL, 0},
	/* value is a strided slice of the per-group [.., (n_rep + 2) * d]
	 * projection (split_qkv): core attention makes it contiguous
	 * (flash_attention.py `value.contiguous()`), a copy it keeps. Measured:
	 * MHA - GQA = 144 MiB per layer = 48 persistent + 96 kept, and 96 MiB
	 * = 3/4 of the 8 kv-sized bf16 tensors (qkv's k and v, k32, kr32, kr,
	 * this copy) of the MHA layer. */
	{0, 0, "self_attention.core_attention", "contiguous", "v", "vc:c:tok*kv",
	 ALL, NULL, 0},
	{C_CP, 0, "self_attention.core_attention.input.allgather", "allgather",
	 "kr vc", "kf:c:b*s*kv vf:c:b*s*kv", ALL, NULL, AG},
	{0, C_CP, "self_attention.core_attention", "view", "kr vc", "kf@kr vf@vc",
	 "", NULL, 0},
	{C_FLASH, 0, "self_attention.core_attention", "flash_attention_score",
	 "qr kf vf", "ctx:c:tok*q smax:f32:b*hd*sq*8 ssum:f32:b*hd*sq*8", ALL,
	 "4*b*hd*sq*s*d", 0},
	{0, C_FLASH, "self_attention.core_attention", "bmm", "qr kf",
	 "sc:c:b*hd*sq*s", ALL, "2*b*hd*sq*s*d", 0},
	{0, C_FLASH, "self_attention.core_attention", "cast", "sc",
	 "sc32:f32:b*hd*sq*s", ALL, NULL, 0},
	{0, C_FLASH, "self_attention.core_attention", "softmax", "sc32",
	 "pr32:f32:b*hd*sq*s", ALL, NULL, 0},
	{0, C_FLASH, "self_attention.core_attention", "cast", "pr32",
	 "pr:c:b*hd*sq*s", ALL, NULL, 0},
	{C_ADROP, C_FLASH, "self_attention.core_attention", "dropout", "pr",
	 "prd:c:b*hd*sq*s am:u8:b*hd*sq*s", ALL, NULL, 0},
	{0, C_FLASH | C_ADROP, "self_attention.core_attention", "view", "pr",
	 "prd@pr", "", NULL, 0},
	{0, C_FLASH, "self_attention.core_attention", "bmm", "prd vf",
	 "ctx:c:tok*q", ALL, "2*b*hd*sq*s*d", 0},
	WCOPY("self_attention.linear_proj", "wproj", "q*h"),
	{0, 0, "self_attention.linear_proj", "matmul", "ctx", "po0:c:tok*h", ALL,
	 "2*tok*q*h", 0},
	{C_SP, 0, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", ALL, NULL, RS},
	{C_TP, C_SP, "self_attention.linear_proj.output.allreduce", "allreduce",
	 "po0", "attn:c:tok*h", ALL, NULL, AR},
	{0, C_TP, "self_attention.linear_proj", "view", "po0", "attn@po0", "",
	 NULL, 0},
};

static const mo_op_row ms_attn_mla[] = {
	WCOPY("self_attention.linear_qkv", "wqkvd", "h*qdown"),
	{0, 0, "self_attention.linear_qkv", "matmul", "ln1", "qkvd:c:tsp*qdown",
	 ALL, "2*tsp*h*qdown", 0},
	{0, 0, "self_attention.split", "split", "qkvd",
	 "qlv@qkvd kvlv@qkvd kpe@qkvd", "", NULL, 0},
	{C_QLORA, 0, "self_attention.q_layernorm", "cast", "qlv", "ql32:f32:tsp*ql",
	 ALL, NULL, 0},
	{C_QLORA, 0, "self_attention.q_layernorm", "rms_norm", "ql32",
	 "qn32:f32:tsp*ql rsq:f32:tsp", ALL, NULL, 0},
	{C_QLORA, 0, "self_attention.q_layernorm", "cast", "qn32", "qn:c:tsp*ql",
	 ALL, NULL, 0},
	{C_QLORA | C_SP, 0, "self_attention.linear_qb.input.allgather",
	 "allgather", "qn", "qng:c:tok*ql", ALL, NULL, AG},
	{C_QLORA, C_SP, "self_attention.linear_qb", "view", "qn", "qng@qn", "",
	 NULL, 0},
	{C_QLORA | C_P32, 0, "self_attention.linear_qb", "cast", "", "wqb:c:ql*qhd", ALL, NULL, 0},
	{C_QLORA, 0, "self_attention.linear_qb", "matmul", "qng", "qf:c:tok*qhd",
	 ALL, "2*tok*ql*qhd", 0},
	{C_P32, C_QLORA, "self_attention.linear_qkv", "cast", "", "wq:c:h*qhd", ALL, NULL, 0},
	{0, C_QLORA, "self_attention.linear_qkv", "matmul_q", "ln1",
	 "qf:c:tok*qhd", ALL, "2*tok*h*qhd", 0},
	{0, 0, "self_attention.k_layernorm", "cast", "kvlv", "kl32:f32:tsp*kvl",
	 ALL, NULL, 0},
	{0, 0, "self_attention.k_layernorm", "rms_norm", "kl32",
	 "kn32:f32:tsp*kvl rsk:f32:tsp", ALL, NULL, 0},
	{0, 0, "self_attention.k_layernorm", "cast", "kn32", "kvn:c:tsp*kvl", ALL,
	 NULL, 0},
	{C_SP, 0, "self_attention.linear_kvb.input.allgather", "allgather", "kvn",
	 "kvng:c:tok*kvl", ALL, NULL, AG},
	{0, C_SP, "self_attention.linear_kvb", "view", "kvn", "kvng@kvn", "", NULL, 0},
	WCOPY("self_attention.linear_kvb", "wkvb", "kvl*kvbd"),
	{0, 0, "self_attention.linear_kvb", "matmul", "kvng", "kvf:c:tok*kvbd",
	 ALL, "2*tok*kvl*kvbd", 0},
	{C_SP, 0, "self_attention.apply_rotary_emb_k.input.allgather",
	 "allgather", "kpe", "kpeg:c:tok*rope", ALL, NULL, AG},
	{0, C_SP, "self_attention.apply_rotary_emb_k", "view", "kpe", "kpeg@kpe",
	 "", NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_q", "cast", "qf",
	 "qp32:f32:tok*kpeh", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_q", "rotary_position_embedding",
	 "qp32", "qr32:f32:tok*kpeh", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_q", "cast", "qr32",
	 "qr:c:tok*kpeh", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_k", "cast", "kpeg",
	 "kp32:f32:tok*rope", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_k", "rotary_position_embedding",
	 "kp32", "kr32:f32:tok*rope", ALL, NULL, 0},
	{0, 0, "self_attention.apply_rotary_emb_k", "cast", "kr32",
	 "kr:c:tok*rope", ALL, NULL, 0},
	{0, 0, "self_attention.cat", "cat", "qf qr", "qa:c:tok*qhd", ALL, NULL, 0},
	{0, 0, "self_attention.tile_kv", "tile", "kr", "krt:c:tok*kpeh", ALL, NULL, 0},
	{0, 0, "self_attention.cat", "cat", "kvf krt", "ka:c:tok*qhd", ALL, NULL, 0},
	{0, 0, "self_attention.split", "split", "kvf", "va@kvf", "", NULL, 0},
	{C_CP, 0, "self_attention.core_attention.input.allgather", "allgather",
	 "ka va", "kaf:c:b*s*qhd vaf:c:b*s*vh", ALL, NULL, AG},
	{0, C_CP, "self_attention.core_attention", "view", "ka va", "kaf@ka vaf@va",
	 "", NULL, 0},
	{0, 0, "self_attention.core_attention", "flash_attention_score",
	 "qa kaf vaf", "ctx:c:tok*vh smax:f32:b*hd*sq*8 ssum:f32:b*hd*sq*8", ALL,
	 "2*b*hd*sq*s*dqkv", 0},
	WCOPY("self_attention.linear_proj", "wproj", "vh*h"),
	{0, 0, "self_attention.linear_proj", "matmul", "ctx", "po0:c:tok*h", ALL,
	 "2*tok*vh*h", 0},
	{C_SP, 0, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", ALL, NULL, RS},
	{C_TP, C_SP, "self_attention.linear_proj.output.allreduce", "allreduce",
	 "po0", "attn:c:tok*h", ALL, NULL, AR},
	{0, C_TP, "self_attention.linear_proj", "view", "po0", "attn@po0", "",
	 NULL, 0},
};

static const mo_op_row ms_resid_attn[] = {
	{C_HDROP, 0, "hidden_states_dropout", "dropout", "attn",
	 "ad:c:tsp*h m1:u8:tsp*h", ALL, NULL, 0},
	{0, C_HDROP, "hidden_states_dropout", "view", "attn", "ad@attn", "", NULL, 0},
	{0, 0, "add", "add", "x ad", "x2:c:tsp*h", ALL, NULL, 0},
	{0, 0, "pre_mlp_layernorm", "cast", "x2", "x232:f32:tsp*h", ALL, NULL, 0},
	{C_LN, 0, "pre_mlp_layernorm", "layer_norm", "x232",
	 "n2:f32:tsp*h mu2:f32:tsp rs2:f32:tsp", ALL, NULL, 0},
	{0, C_LN, "pre_mlp_layernorm", "rms_norm", "x232",
	 "n2:f32:tsp*h rs2:f32:tsp", ALL, NULL, 0},
	{0, 0, "pre_mlp_layernorm", "cast", "n2", "ln2:c:tsp*h", ALL, NULL, 0},
};

static const mo_op_row ms_mlp[] = {
	{C_SP, 0, "mlp.linear_fc1.input.allgather", "allgather", "ln2",
	 "ln2g:c:tok*h", ALL, NULL, AG},
	{0, C_SP, "mlp.linear_fc1", "view", "ln2", "ln2g@ln2", "", NULL, 0},
	WCOPY("mlp.linear_fc1", "wfc1", "h*f1"),
	{0, 0, "mlp.linear_fc1", "matmul", "ln2g", "fc1:c:tok*f1", ALL,
	 "2*tok*h*f1", 0},
	{C_FUSED, 0, "mlp.activation_func", "swiglu", "fc1", "act:c:tok*f", ALL,
	 NULL, 0},
	{C_GATED, C_FUSED, "mlp.split", "split", "fc1", "g@fc1 u@fc1", "", NULL, 0},
	{C_GATED, C_FUSED, "mlp.activation_func", "silu", "g", "sg:c:tok*f", ALL,
	 NULL, 0},
	{C_GATED, C_FUSED, "mlp.mul", "mul", "sg u", "act:c:tok*f", ALL, NULL, 0},
	{C_GELU, C_GATED, "mlp.activation_func", "gelu", "fc1", "act:c:tok*f", ALL,
	 NULL, 0},
	{0, C_GATED | C_GELU, "mlp.activation_func", "silu", "fc1", "act:c:tok*f",
	 ALL, NULL, 0},
	WCOPY("mlp.linear_fc2", "wfc2", "f*h"),
	{0, 0, "mlp.linear_fc2", "matmul", "act", "f2o:c:tok*h", ALL, "2*tok*f*h", 0},
	{C_SP, 0, "mlp.linear_fc2.output.reducescatter", "reducescatter", "f2o",
	 "mlp:c:tsp*h", ALL, NULL, RS},
	{C_TP, C_SP, "mlp.linear_fc2.output.allreduce", "allreduce", "f2o",
	 "mlp:c:tok*h", ALL, NULL, AR},
	{0, C_TP, "mlp.linear_fc2", "view", "f2o", "mlp@f2o", "", NULL, 0},
};

static const mo_op_row ms_moe[] = {
	{C_SP, 0, "mlp.input.allgather", "allgather", "ln2", "ln2g:c:tok*h", ALL,
	 NULL, AG},
	{0, C_SP, "mlp", "view", "ln2", "ln2g@ln2", "", NULL, 0},
	{0, 0, "mlp.router.linear", "linear", "ln2g", "rl:c:tok*E", ALL,
	 "2*tok*h*E", 0},
	{0, 0, "mlp.router.cast", "cast", "rl", "rl32:f32:tok*E", ALL, NULL, 0},
	{0, 0, "mlp.router.softmax", "softmax", "rl32", "rp:f32:tok*E", ALL, NULL, 0},
	{0, 0, "mlp.router.topk", "topk", "rp", "tkp:f32:tok*k tki:i32:tok*k", ALL,
	 NULL, 0},
	{0, 0, "mlp.experts.permute", "permute", "ln2g tki", "perm:c:rt*h", ALL,
	 NULL, 0},
	{C_EP, 0, "mlp.experts.input.alltoallsingle", "alltoall", "perm",
	 "disp:c:rt*h", ALL, NULL, A2A},
	{0, C_EP, "mlp.experts", "view", "perm", "disp@perm", "", NULL, 0},
	WCOPY("mlp.experts", "we1", "el*h*fe1"),
	{0, 0, "mlp.experts", "grouped_matmul", "disp", "e1:c:rt*fe1", ALL,
	 "2*rt*h*fe1", 0},
	{C_FUSED, 0, "mlp.experts.activation_func", "swiglu", "e1", "ea:c:rt*fe",
	 ALL, NULL, 0},
	{C_GATED, C_FUSED, "mlp.experts.chunk", "chunk", "e1", "eg@e1 eu@e1", "",
	 NULL, 0},
	{C_GATED, C_FUSED, "mlp.experts.activation_func", "silu", "eg",
	 "es:c:rt*fe", ALL, NULL, 0},
	{C_GATED, C_FUSED, "mlp.experts.mul", "mul", "es eu", "ea:c:rt*fe", ALL,
	 NULL, 0},
	{0, C_GATED, "mlp.experts.activation_func", "act", "e1", "ea:c:rt*fe", ALL,
	 NULL, 0},
	WCOPY("mlp.experts", "we2", "el*fe*h"),
	{0, 0, "mlp.experts", "grouped_matmul", "ea", "e2:c:rt*h", ALL,
	 "2*rt*fe*h", 0},
	{C_EP, 0, "mlp.experts.output.alltoallsingle", "alltoall", "e2",
	 "comb:c:rt*h", ALL, NULL, A2A},
	{0, C_EP, "mlp.experts", "view", "e2", "comb@e2", "", NULL, 0},
	/* GroupedMLP.unpermute (moe/experts.py): the expert outputs times their
	 * routing probabilities (a mul whose output MindSpore keeps), scattered
	 * back into token order and summed over top-k (DSv3-mini, 4 layers, no
	 * recompute: measured 173 MiB above the table without it, 3 MoE layers x
	 * 56 MiB; notes/calibration.md) */
	{0, 0, "mlp.experts.unpermute", "mul", "comb tkp", "ew:c:rt*h", ALL, NULL, 0},
	{0, 0, "mlp.experts.unpermute", "unpermute", "ew", "mo0:c:tok*h", ALL,
	 NULL, 0},
	{C_SHARED | C_P32, 0, "mlp.shared_experts.linear_fc1", "cast", "", "wsf1:c:h*fs1", ALL, NULL, 0},
	{C_SHARED, 0, "mlp.shared_experts.linear_fc1", "matmul", "ln2g",
	 "sf1:c:tok*fs1", ALL, "2*tok*h*fs1", 0},
	{C_SHARED | C_FUSED, 0, "mlp.shared_experts.activation_func", "swiglu",
	 "sf1", "sa:c:tok*fs", ALL, NULL, 0},
	{C_SHARED, C_FUSED, "mlp.shared_experts.activation_func", "act", "sf1",
	 "sa:c:tok*fs", ALL, NULL, 0},
	{C_SHARED | C_P32, 0, "mlp.shared_experts.linear_fc2", "cast", "", "wsf2:c:fs*h", ALL, NULL, 0},
	{C_SHARED, 0, "mlp.shared_experts.linear_fc2", "matmul", "sa",
	 "so:c:tok*h", ALL, "2*tok*fs*h", 0},
	{C_SHARED, 0, "mlp.add", "add", "mo0 so", "mo1:c:tok*h", ALL, NULL, 0},
	{0, C_SHARED, "mlp", "view", "mo0", "mo1@mo0", "", NULL, 0},
	{C_SP, 0, "mlp.reshape", "split", "mo1", "mlp:c:tsp*h", ALL, NULL, 0},
	{0, C_SP, "mlp", "view", "mo1", "mlp@mo1", "", NULL, 0},
};

static const mo_op_row ms_resid_mlp[] = {
	{C_HDROP, 0, "hidden_states_dropout", "dropout", "mlp",
	 "md:c:tsp*h m2:u8:tsp*h", ALL, NULL, 0},
	{0, C_HDROP, "hidden_states_dropout", "view", "mlp", "md@mlp", "", NULL, 0},
	{0, 0, "add", "add", "x2 md", "y:c:tsp*h", "x2 md", NULL, 0},
};

static const mo_op_row ms_mtp_in[] = {
	{0, 0, "", "input", "", "x:c:tsp*h emb:c:tsp*h", "", NULL, 0},
	{0, 0, "enorm", "cast", "emb", "e32:f32:tsp*h", ALL, NULL, 0},
	{0, 0, "enorm", "rms_norm", "e32", "en32:f32:tsp*h rse:f32:tsp", ALL, NULL, 0},
	{0, 0, "enorm", "cast", "en32", "en:c:tsp*h", ALL, NULL, 0},
	{0, 0, "hnorm", "cast", "x", "h32:f32:tsp*h", ALL, NULL, 0},
	{0, 0, "hnorm", "rms_norm", "h32", "hn32:f32:tsp*h rsh:f32:tsp", ALL, NULL, 0},
	{0, 0, "hnorm", "cast", "hn32", "hn:c:tsp*h", ALL, NULL, 0},
	{0, 0, "cat", "cat", "en hn", "ch:c:tsp*h2", ALL, NULL, 0},
	{0, 0, "eh_proj", "matmul", "ch", "mx:c:tsp*h", ALL, "2*tsp*h2*htp", 0},
};

static const mo_op_row ms_mtp_out[] = {
	{0, 0, "final_layernorm", "cast", "L.y", "y32:f32:tsp*h", ALL, NULL, 0},
	{0, 0, "final_layernorm", "rms_norm", "y32", "yn32:f32:tsp*h rsf:f32:tsp",
	 ALL, NULL, 0},
	{0, 0, "final_layernorm", "cast", "yn32", "y:c:tsp*h", "yn32", NULL, 0},
};

/* The unfused cross-entropy: fp32 logits, max, shifted logits, exp. */
static const mo_op_row ms_head[] = {
	{0, 0, "", "input", "", "y:c:tsp*h", "", NULL, 0},
	{0, 0, "final_layernorm", "cast", "y", "y32:f32:tsp*h", ALL, NULL, 0},
	{0, 0, "final_layernorm", "rms_norm", "y32", "yn32:f32:tsp*h rsf:f32:tsp",
	 ALL, NULL, 0},
	{0, 0, "final_layernorm", "cast", "yn32", "yn:c:tsp*h", ALL, NULL, 0},
	{C_SP, 0, "output_layer.input.allgather", "allgather", "yn", "yng:c:tok*h",
	 ALL, NULL, AG},
	{0, C_SP, "output_layer", "view", "yn", "yng@yn", "", NULL, 0},
	{0, 0, "output_layer", "matmul", "yng", "logits:c:tok*vocab", ALL,
	 "2*tok*h*vocab", 0},
	{0, 0, "loss", "cast", "logits", "l32:f32:tok*vocab", ALL, NULL, 0},
	{0, 0, "loss", "max", "l32", "lmax:f32:tok", ALL, NULL, 0},
	{0, 0, "loss", "sub", "l32 lmax", "lsub:f32:tok*vocab", ALL, NULL, 0},
	{0, 0, "loss", "exp", "lsub", "lexp:f32:tok*vocab", ALL, NULL, 0},
	{0, 0, "loss", "sum", "lexp", "lsum:f32:tok", ALL, NULL, 0},
	{0, 0, "loss", "log", "lsum", "llog:f32:tok", ALL, NULL, 0},
	{0, 0, "loss", "nll", "lsub llog", "loss:f32:1", ALL, NULL, 0},
};

/* VocabEmbedding (base_models/common/embeddings/vocab_embedding.py) tiles the
 * int32 ids to [tokens, h] and gathers the table along dim 0 with that index:
 * the gather keeps the tiled index for its backward (the measurers' ledgers of
 * the h 1792 model show a `Tile` of 28 MiB at micro-batch 1 and 56 MiB at
 * micro-batch 2 alive for the whole step). */
static const mo_op_row ms_embed[] = {
	{0, 0, "", "input", "", "ids:i32:tok", "", NULL, 0},
	{0, 0, "embedding", "tile", "ids", "idx:i32:tok*h", NULL, NULL, 0},
	{0, 0, "embedding", "gather", "idx", "x:c:tsp*h", "idx", NULL, 0},
};

#define BLK(name, rows) \
	static const mo_op_block name##_blk = {#name, rows, N(rows)}
BLK(ms_norm_attn, ms_norm_attn);
BLK(ms_attn, ms_attn);
BLK(ms_attn_mla, ms_attn_mla);
BLK(ms_resid_attn, ms_resid_attn);
BLK(ms_mlp, ms_mlp);
BLK(ms_moe, ms_moe);
BLK(ms_resid_mlp, ms_resid_mlp);
BLK(ms_mtp_in, ms_mtp_in);
BLK(ms_mtp_out, ms_mtp_out);
BLK(ms_head, ms_head);
BLK(ms_embed, ms_embed);

const mo_framework mo_ops_mindspore = {
	.name = "mindspore",
	.align = 512,
	.recompute_needs_world = true,
	.blocks = {
		[MO_BLK_NORM_ATTN] = &ms_norm_attn_blk,
		[MO_BLK_ATTN] = &ms_attn_blk,
		[MO_BLK_ATTN_MLA] = &ms_attn_mla_blk,
		[MO_BLK_RESID_ATTN] = &ms_resid_attn_blk,
		[MO_BLK_MLP] = &ms_mlp_blk,
		[MO_BLK_MOE] = &ms_moe_blk,
		[MO_BLK_RESID_MLP] = &ms_resid_mlp_blk,
		[MO_BLK_MTP_IN] = &ms_mtp_in_blk,
		[MO_BLK_MTP_OUT] = &ms_mtp_out_blk,
		[MO_BLK_HEAD] = &ms_head_blk,
		[MO_BLK_EMBED] = &ms_embed_blk,
	},
	.note = "MindSpore PyNative: every op keeps its inputs and output (fp32 "
		"casts included), 512-byte pool rounding; calibrated on measured "
		"Ascend 910B runs (notes/calibration.md: pp 1, the last PP stage "
		"and MLA/MoE within 2%; on the first PP stage under FSDP this "
		"estimate is 25-29% below the measured peak, not explained yet)",
};
