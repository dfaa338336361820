/* `framework: mindspore` (the default): MindSpore Transformers PyNative's
 * layer as an op list (mindformers/pynative/transformers/: norms computed in
 * fp32 (layernorm_compute_dtype), rotary embedding in fp32 (rotary_dtype),
 * FlashAttentionScore with its fp32 softmax max / sum [b, n, s, 8], softmax
 * in fp32 on the eager path (softmax_compute_dtype), the unfused
 * cross-entropy's fp32 planes); its memory pool rounds every tensor up to
 * 512 bytes. Two regimes, chosen by the parameters' dtype:
 *  - fp32 parameters with bf16 compute (MO_C_P32, most real configs): rows
 *    written tensor by tensor from the measurers' allocation ledgers of the
 *    DSv3-mini (notes/ledger-decode-dsv3-mini.md): an fp32 residual stream,
 *    Linears that cast their output back to their input's dtype, and each op
 *    keeping what its backward reads (`save` lists);
 *  - bf16 parameters (`unless` B16): the first cut, where every op keeps its
 *    inputs and output (`save` NULL), calibrated by the `std` runs' per-layer
 *    law (728 MiB).
 * Change rows here, not the estimator (../shared/calibration/ascend-910b.md,
 * tests/unit/test_calibration.c). Split / reshape / transpose are views
 * (MindSpore 2.3+ view ops). The residual add of a layer does not keep its
 * output: that tensor is the next layer's input and is counted there once. */
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
/* `unless` of the rows for bf16 (or fp32-compute) parameters: the first-cut
 * rules, where every op keeps its inputs and output. The fp32-parameter rows
 * (`when` C_P32) are written from the measured DSv3-mini allocation ledgers
 * (notes/ledger-decode-dsv3-mini.md): an op keeps what its backward reads. */
#define B16 C_P32

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
	{0, B16, "", "input", "", "x:c:tsp*h", "", NULL, 0},
	{0, B16, "input_layernorm", "cast", "x", "x32:f32:tsp*h", ALL, NULL, 0},
	{C_LN, B16, "input_layernorm", "layer_norm", "x32",
	 "n1:f32:tsp*h mu1:f32:tsp rs1:f32:tsp", ALL, NULL, 0},
	{0, C_LN | B16, "input_layernorm", "rms_norm", "x32",
	 "n1:f32:tsp*h rs1:f32:tsp", ALL, NULL, 0},
	{0, B16, "input_layernorm", "cast", "n1", "ln1:c:tsp*h", ALL, NULL, 0},
	/* fp32 parameters: the residual stream is fp32 (the embedding gathers
	 * the fp32 table; each residual add of an fp32 stream and a bf16 branch
	 * is fp32) and the norm keeps its input and statistics; its fp32 output
	 * goes to the next Linear, which casts it (P32 rows of the blocks
	 * below). */
	{C_P32, 0, "", "input", "", "x:f32:tsp*h", "", NULL, 0},
	{C_P32 | C_LN, 0, "input_layernorm", "layer_norm", "x",
	 "n1:f32:tsp*h mu1:f32:tsp rs1:f32:tsp", "x mu1 rs1", NULL, 0},
	{C_P32, C_LN, "input_layernorm", "rms_norm", "x", "n1:f32:tsp*h rs1:f32:tsp",
	 "x rs1", NULL, 0},
};

static const mo_op_row ms_attn[] = {
	{C_SP, B16, "self_attention.linear_qkv.input.allgather", "allgather", "ln1",
	 "ln1g:c:tok*h", ALL, NULL, AG},
	{0, C_SP | B16, "self_attention.linear_qkv", "view", "ln1", "ln1g@ln1", "",
	 NULL, 0},
	{0, B16, "self_attention.linear_qkv", "matmul", "ln1g", "qkv:c:tok*qkv", ALL,
	 "2*tok*h*qkv", 0},
	{0, B16, "self_attention.split_qkv", "split", "qkv", "q@qkv k@qkv v@qkv", "",
	 NULL, 0},
	{0, B16, "self_attention.apply_rotary_pos_emb", "cast", "q k",
	 "q32:f32:tok*q k32:f32:tok*kv", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_pos_emb", "rotary_position_embedding",
	 "q32 k32", "qr32:f32:tok*q kr32:f32:tok*kv", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_pos_emb", "cast", "qr32 kr32",
	 "qr:c:tok*q kr:c:tok*kv", ALL, NULL, 0},
	/* value is a strided slice of the per-group [.., (n_rep + 2) * d]
	 * projection (split_qkv): core attention makes it contiguous
	 * (flash_attention.py `value.contiguous()`), a copy it keeps. Measured:
	 * MHA - GQA = 144 MiB per layer = 48 persistent + 96 kept, and 96 MiB
	 * = 3/4 of the 8 kv-sized bf16 tensors (qkv's k and v, k32, kr32, kr,
	 * this copy) of the MHA layer. */
	{0, B16, "self_attention.core_attention", "contiguous", "v", "vc:c:tok*kv",
	 ALL, NULL, 0},

	/* fp32 parameters: not measured on an MHA / GQA model; the same op
	 * rules as the measured MLA rows (ms_attn_mla): the Linear keeps its bf16
	 * input and weight and returns fp32; each rotary call keeps its
	 * contiguous fp32 input, the rotated half and four fp32 [tokens, d]
	 * cos / sin planes; flash attention keeps bf16 q, k, v; the output
	 * projection keeps a contiguous copy of the attention output. */
	{C_P32, 0, "self_attention.linear_qkv", "cast", "n1", "ln1:c:tsp*h", "",
	 NULL, 0},
	{C_P32 | C_SP, 0, "self_attention.linear_qkv.input.allgather", "allgather",
	 "ln1", "ln1g:c:tok*h", "", NULL, AG},
	{C_P32, C_SP, "self_attention.linear_qkv", "view", "ln1", "ln1g@ln1", "",
	 NULL, 0},
	WCOPY("self_attention.linear_qkv", "wqkv", "h*qkv"),
	{C_P32, 0, "self_attention.linear_qkv", "matmul", "ln1g", "qkvb:c:tok*qkv",
	 "ln1g", "2*tok*h*qkv", 0},
	{C_P32, 0, "self_attention.linear_qkv", "cast", "qkvb", "qkv:f32:tok*qkv",
	 "", NULL, 0},
	{C_P32, 0, "self_attention.split_qkv", "split", "qkv", "q@qkv k@qkv v@qkv",
	 "", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_pos_emb", "contiguous", "q k",
	 "qc:f32:tok*q kc:f32:tok*kv", "", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_pos_emb", "rotary_position_embedding",
	 "qc kc",
	 "qr32:f32:tok*q qrh:f32:tok*q qcs:f32:4*tok*d kr32:f32:tok*kv krh:f32:tok*kv kcs:f32:4*tok*d",
	 "qc qrh qcs kc krh kcs", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_pos_emb", "cast", "qr32 kr32",
	 "qr:c:tok*q kr:c:tok*kv", "", NULL, 0},
	{C_P32, 0, "self_attention.core_attention", "contiguous", "v", "vc:c:tok*kv",
	 "", NULL, 0},

	{C_CP, B16, "self_attention.core_attention.input.allgather", "allgather",
	 "kr vc", "kf:c:b*s*kv vf:c:b*s*kv", ALL, NULL, AG},
	{C_CP | C_P32, 0, "self_attention.core_attention.input.allgather",
	 "allgather", "kr vc", "kf:c:b*s*kv vf:c:b*s*kv", "", NULL, AG},
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
	{0, B16, "self_attention.linear_proj", "matmul", "ctx", "po0:c:tok*h", ALL,
	 "2*tok*q*h", 0},
	{C_P32, 0, "self_attention.linear_proj", "contiguous", "ctx", "ctxc:c:tok*q",
	 "", NULL, 0},
	WCOPY("self_attention.linear_proj", "wproj", "q*h"),
	{C_P32, 0, "self_attention.linear_proj", "matmul", "ctxc", "po0:c:tok*h",
	 "ctxc", "2*tok*q*h", 0},
	{C_SP, B16, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", ALL, NULL, RS},
	{C_TP, C_SP | B16, "self_attention.linear_proj.output.allreduce",
	 "allreduce", "po0", "attn:c:tok*h", ALL, NULL, AR},
	{C_SP | C_P32, 0, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", "", NULL, RS},
	{C_TP | C_P32, C_SP, "self_attention.linear_proj.output.allreduce",
	 "allreduce", "po0", "attn:c:tok*h", "", NULL, AR},
	{0, C_TP, "self_attention.linear_proj", "view", "po0", "attn@po0", "",
	 NULL, 0},
};

/* MLA with bf16 parameters: the first-cut rows (every op keeps its inputs
 * and output); not measured. */
static const mo_op_row ms_attn_mla[] = {
	{0, B16, "self_attention.linear_qkv", "matmul", "ln1", "qkvd:c:tsp*qdown",
	 ALL, "2*tsp*h*qdown", 0},
	{0, B16, "self_attention.split", "split", "qkvd",
	 "qlv@qkvd kvlv@qkvd kpe@qkvd", "", NULL, 0},
	{C_QLORA, B16, "self_attention.q_layernorm", "cast", "qlv", "ql32:f32:tsp*ql",
	 ALL, NULL, 0},
	{C_QLORA, B16, "self_attention.q_layernorm", "rms_norm", "ql32",
	 "qn32:f32:tsp*ql rsq:f32:tsp", ALL, NULL, 0},
	{C_QLORA, B16, "self_attention.q_layernorm", "cast", "qn32", "qn:c:tsp*ql",
	 ALL, NULL, 0},
	{C_QLORA | C_SP, B16, "self_attention.linear_qb.input.allgather",
	 "allgather", "qn", "qng:c:tok*ql", ALL, NULL, AG},
	{C_QLORA, C_SP | B16, "self_attention.linear_qb", "view", "qn", "qng@qn", "",
	 NULL, 0},
	{C_QLORA, B16, "self_attention.linear_qb", "matmul", "qng", "qf:c:tok*qhd",
	 ALL, "2*tok*ql*qhd", 0},
	{0, C_QLORA | B16, "self_attention.linear_qkv", "matmul_q", "ln1",
	 "qf:c:tok*qhd", ALL, "2*tok*h*qhd", 0},
	{0, B16, "self_attention.k_layernorm", "cast", "kvlv", "kl32:f32:tsp*kvl",
	 ALL, NULL, 0},
	{0, B16, "self_attention.k_layernorm", "rms_norm", "kl32",
	 "kn32:f32:tsp*kvl rsk:f32:tsp", ALL, NULL, 0},
	{0, B16, "self_attention.k_layernorm", "cast", "kn32", "kvn:c:tsp*kvl", ALL,
	 NULL, 0},
	{C_SP, B16, "self_attention.linear_kvb.input.allgather", "allgather", "kvn",
	 "kvng:c:tok*kvl", ALL, NULL, AG},
	{0, C_SP | B16, "self_attention.linear_kvb", "view", "kvn", "kvng@kvn", "",
	 NULL, 0},
	{0, B16, "self_attention.linear_kvb", "matmul", "kvng", "kvf:c:tok*kvbd",
	 ALL, "2*tok*kvl*kvbd", 0},
	{C_SP, B16, "self_attention.apply_rotary_emb_k.input.allgather",
	 "allgather", "kpe", "kpeg:c:tok*rope", ALL, NULL, AG},
	{0, C_SP | B16, "self_attention.apply_rotary_emb_k", "view", "kpe",
	 "kpeg@kpe", "", NULL, 0},
	{0, B16, "self_attention.apply_rotary_emb_q", "cast", "qf",
	 "qp32:f32:tok*kpeh", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_emb_q", "rotary_position_embedding",
	 "qp32", "qr32:f32:tok*kpeh", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_emb_q", "cast", "qr32",
	 "qr:c:tok*kpeh", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_emb_k", "cast", "kpeg",
	 "kp32:f32:tok*rope", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_emb_k", "rotary_position_embedding",
	 "kp32", "kr32:f32:tok*rope", ALL, NULL, 0},
	{0, B16, "self_attention.apply_rotary_emb_k", "cast", "kr32",
	 "kr:c:tok*rope", ALL, NULL, 0},
	{0, B16, "self_attention.cat", "cat", "qf qr", "qa:c:tok*qhd", ALL, NULL, 0},
	{0, B16, "self_attention.tile_kv", "tile", "kr", "krt:c:tok*kpeh", ALL, NULL, 0},
	{0, B16, "self_attention.cat", "cat", "kvf krt", "ka:c:tok*qhd", ALL, NULL, 0},
	{0, B16, "self_attention.split", "split", "kvf", "va@kvf", "", NULL, 0},

	/* fp32 parameters (measured: the DSv3-mini allocation ledgers,
	 * notes/ledger-decode-dsv3-mini.md block A, every kept tensor of the
	 * block by size and lifetime). Each Linear (layers/linear.py) casts its
	 * input and weight to bf16, which the matmul keeps, and casts its bf16
	 * output back to the input's dtype (fp32 here), which only the next op
	 * may keep: the matmul's own output and a cast's input are freed.
	 * q_layernorm / kv_layernorm keep their fp32 input (a view of the down
	 * projection's fp32 output: 33 MiB kept at h 1792) and rstd; the
	 * rotary embedding keeps, per call, its contiguous fp32 input, the
	 * rotated half and four fp32 [tokens, rope] cos / sin planes; flash
	 * attention keeps bf16 q, k, v, its output and statistics; the output
	 * projection keeps a contiguous copy of the attention output. */
	{C_P32, 0, "self_attention.linear_qkv", "cast", "n1", "xn:c:tsp*h", "",
	 NULL, 0},
	WCOPY("self_attention.linear_qkv", "wqkvd", "h*qdown"),
	{C_P32, 0, "self_attention.linear_qkv", "matmul", "xn",
	 "qkvb:c:tsp*qdown", "xn", "2*tsp*h*qdown", 0},
	{C_P32, 0, "self_attention.linear_qkv", "cast", "qkvb",
	 "qkvd:f32:tsp*qdown", "", NULL, 0},
	{C_P32, 0, "self_attention.split", "split", "qkvd",
	 "qlv@qkvd kvlv@qkvd kpe@qkvd", "", NULL, 0},
	{C_P32 | C_QLORA, 0, "self_attention.q_layernorm", "rms_norm", "qlv",
	 "qn32:f32:tsp*ql rsq:f32:tsp", "qlv rsq", NULL, 0},
	{C_P32 | C_QLORA, 0, "self_attention.linear_qb", "cast", "qn32",
	 "qn:c:tsp*ql", "", NULL, 0},
	{C_P32 | C_QLORA | C_SP, 0, "self_attention.linear_qb.input.allgather",
	 "allgather", "qn", "qng:c:tok*ql", "", NULL, AG},
	{C_P32 | C_QLORA, C_SP, "self_attention.linear_qb", "view", "qn", "qng@qn",
	 "", NULL, 0},
	{C_P32 | C_QLORA, 0, "self_attention.linear_qb", "cast", "", "wqb:c:ql*qhd",
	 ALL, NULL, 0},
	{C_P32 | C_QLORA, 0, "self_attention.linear_qb", "matmul", "qng",
	 "qfb:c:tok*qhd", "qng", "2*tok*ql*qhd", 0},
	{C_P32, C_QLORA, "self_attention.linear_qkv", "cast", "", "wq:c:h*qhd", ALL,
	 NULL, 0},
	{C_P32, C_QLORA, "self_attention.linear_qkv", "matmul_q", "xn",
	 "qfb:c:tok*qhd", "xn", "2*tok*h*qhd", 0},
	{C_P32, 0, "self_attention.linear_qb", "cast", "qfb", "qf:f32:tok*qhd", "",
	 NULL, 0},
	{C_P32, 0, "self_attention.k_layernorm", "rms_norm", "kvlv",
	 "kn32:f32:tsp*kvl rsk:f32:tsp", "kvlv rsk", NULL, 0},
	{C_P32, 0, "self_attention.linear_kvb", "cast", "kn32", "kvn:c:tsp*kvl", "",
	 NULL, 0},
	{C_P32 | C_SP, 0, "self_attention.linear_kvb.input.allgather", "allgather",
	 "kvn", "kvng:c:tok*kvl", "", NULL, AG},
	{C_P32, C_SP, "self_attention.linear_kvb", "view", "kvn", "kvng@kvn", "",
	 NULL, 0},
	WCOPY("self_attention.linear_kvb", "wkvb", "kvl*kvbd"),
	{C_P32, 0, "self_attention.linear_kvb", "matmul", "kvng",
	 "kvfb:c:tok*kvbd", "kvng", "2*tok*kvl*kvbd", 0},
	{C_P32, 0, "self_attention.linear_kvb", "cast", "kvfb", "kvf:f32:tok*kvbd",
	 "", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_emb_q", "contiguous", "qf",
	 "qpe:f32:tok*kpeh", "", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_emb_q", "rotary_position_embedding",
	 "qpe", "qr32:f32:tok*kpeh qrh:f32:tok*kpeh qcs:f32:4*tok*rope",
	 "qpe qrh qcs", NULL, 0},
	{C_SP | C_P32, 0, "self_attention.apply_rotary_emb_k.input.allgather",
	 "allgather", "kpe", "kpeg:f32:tok*rope", "", NULL, AG},
	{C_P32, C_SP, "self_attention.apply_rotary_emb_k", "view", "kpe",
	 "kpeg@kpe", "", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_emb_k", "contiguous", "kpeg",
	 "kpc:f32:tok*rope", "", NULL, 0},
	{C_P32, 0, "self_attention.apply_rotary_emb_k", "rotary_position_embedding",
	 "kpc", "kr32:f32:tok*rope krh:f32:tok*rope kcs:f32:4*tok*rope",
	 "kpc krh kcs", NULL, 0},
	{C_P32, 0, "self_attention.cat", "cat", "qf qr32", "qa32:f32:tok*qhd", "",
	 NULL, 0},
	{C_P32, 0, "self_attention.cat", "cast", "qa32", "qa:c:tok*qhd", "", NULL, 0},
	{C_P32, 0, "self_attention.tile_kv", "tile", "kr32", "krt:f32:tok*kpeh", "",
	 NULL, 0},
	{C_P32, 0, "self_attention.cat", "cat", "kvf krt", "ka32:f32:tok*qhd", "",
	 NULL, 0},
	{C_P32, 0, "self_attention.cat", "cast", "ka32", "ka:c:tok*qhd", "", NULL, 0},
	{C_P32, 0, "self_attention.split", "cast", "kvf", "va:c:tok*vh", "", NULL, 0},

	{C_CP, B16, "self_attention.core_attention.input.allgather", "allgather",
	 "ka va", "kaf:c:b*s*qhd vaf:c:b*s*vh", ALL, NULL, AG},
	/* fp32 parameters: a collective keeps nothing (its backward is the
	 * opposite collective); flash attention keeps the gathered k, v */
	{C_CP | C_P32, 0, "self_attention.core_attention.input.allgather",
	 "allgather", "ka va", "kaf:c:b*s*qhd vaf:c:b*s*vh", "", NULL, AG},
	{0, C_CP, "self_attention.core_attention", "view", "ka va", "kaf@ka vaf@va",
	 "", NULL, 0},
	{0, 0, "self_attention.core_attention", "flash_attention_score",
	 "qa kaf vaf", "ctx:c:tok*vh smax:f32:b*hd*sq*8 ssum:f32:b*hd*sq*8", ALL,
	 "2*b*hd*sq*s*dqkv", 0},
	{0, B16, "self_attention.linear_proj", "matmul", "ctx", "po0:c:tok*h", ALL,
	 "2*tok*vh*h", 0},
	{C_P32, 0, "self_attention.linear_proj", "contiguous", "ctx",
	 "ctxc:c:tok*vh", "", NULL, 0},
	WCOPY("self_attention.linear_proj", "wproj", "vh*h"),
	{C_P32, 0, "self_attention.linear_proj", "matmul", "ctxc", "po0:c:tok*h",
	 "ctxc", "2*tok*vh*h", 0},
	{C_SP, B16, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", ALL, NULL, RS},
	{C_TP, C_SP | B16, "self_attention.linear_proj.output.allreduce",
	 "allreduce", "po0", "attn:c:tok*h", ALL, NULL, AR},
	{C_SP | C_P32, 0, "self_attention.linear_proj.output.reducescatter",
	 "reducescatter", "po0", "attn:c:tsp*h", "", NULL, RS},
	{C_TP | C_P32, C_SP, "self_attention.linear_proj.output.allreduce",
	 "allreduce", "po0", "attn:c:tok*h", "", NULL, AR},
	{0, C_TP, "self_attention.linear_proj", "view", "po0", "attn@po0", "",
	 NULL, 0},
};

static const mo_op_row ms_resid_attn[] = {
	{C_HDROP, 0, "hidden_states_dropout", "dropout", "attn",
	 "ad:c:tsp*h m1:u8:tsp*h", ALL, NULL, 0},
	{0, C_HDROP, "hidden_states_dropout", "view", "attn", "ad@attn", "", NULL, 0},
	{0, B16, "add", "add", "x ad", "x2:c:tsp*h", ALL, NULL, 0},
	{0, B16, "pre_mlp_layernorm", "cast", "x2", "x232:f32:tsp*h", ALL, NULL, 0},
	{C_LN, B16, "pre_mlp_layernorm", "layer_norm", "x232",
	 "n2:f32:tsp*h mu2:f32:tsp rs2:f32:tsp", ALL, NULL, 0},
	{0, C_LN | B16, "pre_mlp_layernorm", "rms_norm", "x232",
	 "n2:f32:tsp*h rs2:f32:tsp", ALL, NULL, 0},
	{0, B16, "pre_mlp_layernorm", "cast", "n2", "ln2:c:tsp*h", ALL, NULL, 0},
	/* fp32 parameters (measured, ledger blocks A / B): the add (fp32
	 * stream + bf16 branch) keeps nothing; the norm keeps its fp32 input
	 * (28 MiB at h 1792, kept under select self_attention too) and rstd */
	{C_P32, 0, "add", "add", "x ad", "x2:f32:tsp*h", "", NULL, 0},
	{C_P32 | C_LN, 0, "pre_mlp_layernorm", "layer_norm", "x2",
	 "n2:f32:tsp*h mu2:f32:tsp rs2:f32:tsp", "x2 mu2 rs2", NULL, 0},
	{C_P32, C_LN, "pre_mlp_layernorm", "rms_norm", "x2",
	 "n2:f32:tsp*h rs2:f32:tsp", "x2 rs2", NULL, 0},
};

static const mo_op_row ms_mlp[] = {
	{C_SP, B16, "mlp.linear_fc1.input.allgather", "allgather", "ln2",
	 "ln2g:c:tok*h", ALL, NULL, AG},
	{0, C_SP | B16, "mlp.linear_fc1", "view", "ln2", "ln2g@ln2", "", NULL, 0},
	{0, B16, "mlp.linear_fc1", "matmul", "ln2g", "fc1:c:tok*f1", ALL,
	 "2*tok*h*f1", 0},
	{C_FUSED, B16, "mlp.activation_func", "swiglu", "fc1", "act:c:tok*f", ALL,
	 NULL, 0},
	{C_GATED, C_FUSED | B16, "mlp.split", "split", "fc1", "g@fc1 u@fc1", "", NULL, 0},
	{C_GATED, C_FUSED | B16, "mlp.activation_func", "silu", "g", "sg:c:tok*f", ALL,
	 NULL, 0},
	{C_GATED, C_FUSED | B16, "mlp.mul", "mul", "sg u", "act:c:tok*f", ALL, NULL, 0},
	{C_GELU, C_GATED | B16, "mlp.activation_func", "gelu", "fc1", "act:c:tok*f", ALL,
	 NULL, 0},
	{0, C_GATED | C_GELU | B16, "mlp.activation_func", "silu", "fc1", "act:c:tok*f",
	 ALL, NULL, 0},
	{0, B16, "mlp.linear_fc2", "matmul", "act", "f2o:c:tok*h", ALL, "2*tok*f*h", 0},
	{C_SP, B16, "mlp.linear_fc2.output.reducescatter", "reducescatter", "f2o",
	 "mlp:c:tsp*h", ALL, NULL, RS},
	{C_TP, C_SP | B16, "mlp.linear_fc2.output.allreduce", "allreduce", "f2o",
	 "mlp:c:tok*h", ALL, NULL, AR},

	/* fp32 parameters (measured: ledger block B, the DSv3-mini's dense
	 * layer 0, 241.5 MiB at 4096 tokens): fc1 keeps its bf16 input and
	 * weight; its output, cast back to fp32, is kept by the activation
	 * (96 MiB); the gated activation runs in fp32 as silu + mul whichever
	 * `hidden_act` names it (the fp32 silu output, 48 MiB, is kept by the
	 * mul); fc2 keeps the bf16 cast of the product and its weight. */
	{C_P32, 0, "mlp.linear_fc1", "cast", "n2", "xn2:c:tsp*h", "", NULL, 0},
	{C_P32 | C_SP, 0, "mlp.linear_fc1.input.allgather", "allgather", "xn2",
	 "ln2g:c:tok*h", "", NULL, AG},
	{C_P32, C_SP, "mlp.linear_fc1", "view", "xn2", "ln2g@xn2", "", NULL, 0},
	WCOPY("mlp.linear_fc1", "wfc1", "h*f1"),
	{C_P32, 0, "mlp.linear_fc1", "matmul", "ln2g", "fc1b:c:tok*f1", "ln2g",
	 "2*tok*h*f1", 0},
	{C_P32, 0, "mlp.linear_fc1", "cast", "fc1b", "fc1:f32:tok*f1", "", NULL, 0},
	{C_P32 | C_GATED, 0, "mlp.split", "split", "fc1", "g@fc1 u@fc1", "", NULL, 0},
	{C_P32 | C_GATED, 0, "mlp.activation_func", "silu", "g", "sg:f32:tok*f",
	 "g", NULL, 0},
	{C_P32 | C_GATED, 0, "mlp.mul", "mul", "sg u", "act32:f32:tok*f", "sg u",
	 NULL, 0},
	{C_P32 | C_GELU, C_GATED, "mlp.activation_func", "gelu", "fc1",
	 "act32:f32:tok*f", "fc1", NULL, 0},
	{C_P32, C_GATED | C_GELU, "mlp.activation_func", "silu", "fc1",
	 "act32:f32:tok*f", "fc1", NULL, 0},
	{C_P32, 0, "mlp.linear_fc2", "cast", "act32", "act:c:tok*f", "", NULL, 0},
	WCOPY("mlp.linear_fc2", "wfc2", "f*h"),
	{C_P32, 0, "mlp.linear_fc2", "matmul", "act", "f2b:c:tok*h", "act",
	 "2*tok*f*h", 0},
	{C_P32, 0, "mlp.linear_fc2", "cast", "f2b", "f2o:f32:tok*h", "", NULL, 0},
	{C_P32 | C_SP, 0, "mlp.linear_fc2.output.reducescatter", "reducescatter",
	 "f2o", "mlp:f32:tsp*h", "", NULL, RS},
	{C_P32 | C_TP, C_SP, "mlp.linear_fc2.output.allreduce", "allreduce", "f2o",
	 "mlp:f32:tok*h", "", NULL, AR},
	{0, C_TP, "mlp.linear_fc2", "view", "f2o", "mlp@f2o", "", NULL, 0},
};

static const mo_op_row ms_moe[] = {
	{C_SP, B16, "mlp.input.allgather", "allgather", "ln2", "ln2g:c:tok*h", ALL,
	 NULL, AG},
	{0, C_SP | B16, "mlp", "view", "ln2", "ln2g@ln2", "", NULL, 0},
	{0, B16, "mlp.router.linear", "linear", "ln2g", "rl:c:tok*E", ALL,
	 "2*tok*h*E", 0},
	{0, B16, "mlp.router.cast", "cast", "rl", "rl32:f32:tok*E", ALL, NULL, 0},
	{0, B16, "mlp.router.softmax", "softmax", "rl32", "rp:f32:tok*E", ALL, NULL, 0},
	{0, B16, "mlp.router.topk", "topk", "rp", "tkp:f32:tok*k tki:i32:tok*k", ALL,
	 NULL, 0},
	{0, B16, "mlp.experts.permute", "permute", "ln2g tki", "perm:c:rt*h", ALL,
	 NULL, 0},
	{C_EP, B16, "mlp.experts.input.alltoallsingle", "alltoall", "perm",
	 "disp:c:rt*h", ALL, NULL, A2A},
	{0, C_EP | B16, "mlp.experts", "view", "perm", "disp@perm", "", NULL, 0},
	{0, B16, "mlp.experts", "grouped_matmul", "disp", "e1:c:rt*fe1", ALL,
	 "2*rt*h*fe1", 0},
	{C_FUSED, B16, "mlp.experts.activation_func", "swiglu", "e1", "ea:c:rt*fe",
	 ALL, NULL, 0},
	{C_GATED, C_FUSED | B16, "mlp.experts.chunk", "chunk", "e1", "eg@e1 eu@e1", "",
	 NULL, 0},
	{C_GATED, C_FUSED | B16, "mlp.experts.activation_func", "silu", "eg",
	 "es:c:rt*fe", ALL, NULL, 0},
	{C_GATED, C_FUSED | B16, "mlp.experts.mul", "mul", "es eu", "ea:c:rt*fe", ALL,
	 NULL, 0},
	{0, C_GATED | B16, "mlp.experts.activation_func", "act", "e1", "ea:c:rt*fe", ALL,
	 NULL, 0},
	{0, B16, "mlp.experts", "grouped_matmul", "ea", "e2:c:rt*h", ALL,
	 "2*rt*fe*h", 0},
	{C_EP, B16, "mlp.experts.output.alltoallsingle", "alltoall", "e2",
	 "comb:c:rt*h", ALL, NULL, A2A},
	{0, C_EP | B16, "mlp.experts", "view", "e2", "comb@e2", "", NULL, 0},
	/* GroupedMLP.unpermute (moe/experts.py): the expert outputs times their
	 * routing probabilities, scattered back into token order and summed over
	 * top-k (bf16 parameters: not measured; the fp32 rows below are) */
	{0, B16, "mlp.experts.unpermute", "mul", "comb tkp", "ew:c:rt*h", ALL, NULL, 0},
	{0, B16, "mlp.experts.unpermute", "unpermute", "ew", "mo0:c:tok*h", ALL,
	 NULL, 0},
	{C_SHARED, B16, "mlp.shared_experts.linear_fc1", "matmul", "ln2g",
	 "sf1:c:tok*fs1", ALL, "2*tok*h*fs1", 0},
	{C_SHARED | C_FUSED, B16, "mlp.shared_experts.activation_func", "swiglu",
	 "sf1", "sa:c:tok*fs", ALL, NULL, 0},
	{C_SHARED, C_FUSED | B16, "mlp.shared_experts.activation_func", "act", "sf1",
	 "sa:c:tok*fs", ALL, NULL, 0},
	{C_SHARED, B16, "mlp.shared_experts.linear_fc2", "matmul", "sa",
	 "so:c:tok*h", ALL, "2*tok*fs*h", 0},
	{C_SHARED, B16, "mlp.add", "add", "mo0 so", "mo1:c:tok*h", ALL, NULL, 0},
	{0, C_SHARED | B16, "mlp", "view", "mo0", "mo1@mo0", "", NULL, 0},
	{C_SP, B16, "mlp.reshape", "split", "mo1", "mlp:c:tsp*h", ALL, NULL, 0},
	{0, C_SP | B16, "mlp", "view", "mo1", "mlp@mo1", "", NULL, 0},

	/* fp32 parameters (measured: ledger block C, a DSv3-mini MoE layer,
	 * 629.9 MiB at 4096 tokens, 8 experts, top-4). The norm's fp32 output
	 * is kept by the fp32 router matmul; the permutation gathers the fp32
	 * tokens and casts the copy to bf16 (kept by the first grouped matmul);
	 * the experts' gated activation is chunk + silu + mul in bf16; the
	 * second grouped matmul's output is cast to fp32 for the weighting by
	 * the fp32 probabilities: the mul keeps it and the scatter back into
	 * token order keeps the product (two fp32 [tokens x top-k, h] tensors,
	 * 224 MiB, the largest kept items); the experts' weights are kept as bf16
	 * casts; the shared experts are an fp32-in Linear pair as in the dense
	 * MLP. Not modelled: ~0.55 MiB of the auxiliary loss's [tokens, E]
	 * planes (measured small rows of Histc / AddScalar / Div). */
	{C_P32 | C_SP, 0, "mlp.input.allgather", "allgather", "n2", "n2g:f32:tok*h",
	 "", NULL, AG},
	{C_P32, C_SP, "mlp", "view", "n2", "n2g@n2", "", NULL, 0},
	{C_P32, 0, "mlp.router.linear", "linear", "n2g", "rl32:f32:tok*E",
	 "n2g rl32", "2*tok*h*E", 0},
	{C_P32, 0, "mlp.router.score", "sigmoid", "rl32", "rp:f32:tok*E", "rp",
	 NULL, 0},
	{C_P32, 0, "mlp.router.topk", "topk", "rp",
	 "tkp:f32:tok*k tki:i64:tok*k", "tkp tki", NULL, 0},
	{C_P32, 0, "mlp.experts.permute", "argsort", "tki", "srt:i64:rt", "srt",
	 NULL, 0},
	{C_P32, 0, "mlp.experts.permute", "index", "tkp srt", "pp:f32:rt", "pp",
	 NULL, 0},
	{C_P32, 0, "mlp.experts.permute", "floor_divide", "srt", "tix:i64:rt",
	 "tix", NULL, 0},
	{C_P32, 0, "mlp.experts.permute", "gather", "n2g tix", "perm32:f32:rt*h",
	 "", NULL, 0},
	{C_P32, 0, "mlp.experts.permute", "cast", "perm32", "perm:c:rt*h", "", NULL,
	 0},
	{C_P32 | C_EP, 0, "mlp.experts.input.alltoallsingle", "alltoall", "perm",
	 "disp:c:rt*h", "", NULL, A2A},
	{C_P32, C_EP, "mlp.experts", "view", "perm", "disp@perm", "", NULL, 0},
	WCOPY("mlp.experts", "we1", "el*h*fe1"),
	{C_P32, 0, "mlp.experts", "grouped_matmul", "disp", "e1:c:rt*fe1", "disp",
	 "2*rt*h*fe1", 0},
	{C_P32 | C_GATED, 0, "mlp.experts.chunk", "chunk", "e1", "eg@e1 eu@e1", "",
	 NULL, 0},
	{C_P32 | C_GATED, 0, "mlp.experts.activation_func", "silu", "eg",
	 "es:c:rt*fe", "eg", NULL, 0},
	{C_P32 | C_GATED, 0, "mlp.experts.mul", "mul", "es eu", "ea:c:rt*fe",
	 "es eu", NULL, 0},
	{C_P32, C_GATED, "mlp.experts.activation_func", "act", "e1", "ea:c:rt*fe",
	 "e1", NULL, 0},
	WCOPY("mlp.experts", "we2", "el*fe*h"),
	{C_P32, 0, "mlp.experts", "grouped_matmul", "ea", "e2b:c:rt*h", "ea",
	 "2*rt*fe*h", 0},
	{C_P32, 0, "mlp.experts", "cast", "e2b", "e2:f32:rt*h", "", NULL, 0},
	{C_P32 | C_EP, 0, "mlp.experts.output.alltoallsingle", "alltoall", "e2",
	 "comb:f32:rt*h", "", NULL, A2A},
	{C_P32, C_EP, "mlp.experts", "view", "e2", "comb@e2", "", NULL, 0},
	{C_P32, 0, "mlp.experts.unpermute", "mul", "comb pp", "ew:f32:rt*h",
	 "comb pp", NULL, 0},
	{C_P32, 0, "mlp.experts.unpermute", "unpermute", "ew srt", "mo0:f32:tok*h",
	 "ew srt", NULL, 0},
	{C_P32 | C_SHARED, 0, "mlp.shared_experts.linear_fc1", "cast", "n2g",
	 "sxn:c:tok*h", "", NULL, 0},
	{C_SHARED | C_P32, 0, "mlp.shared_experts.linear_fc1", "cast", "",
	 "wsf1:c:h*fs1", ALL, NULL, 0},
	{C_P32 | C_SHARED, 0, "mlp.shared_experts.linear_fc1", "matmul", "sxn",
	 "sf1b:c:tok*fs1", "sxn", "2*tok*h*fs1", 0},
	{C_P32 | C_SHARED, 0, "mlp.shared_experts.linear_fc1", "cast", "sf1b",
	 "sf1:f32:tok*fs1", "", NULL, 0},
	{C_P32 | C_SHARED | C_GATED, 0, "mlp.shared_experts.split", "split", "sf1",
	 "ssg@sf1 ssu@sf1", "", NULL, 0},
	{C_P32 | C_SHARED | C_GATED, 0, "mlp.shared_experts.activation_func",
	 "silu", "ssg", "ss:f32:tok*fs", "ssg", NULL, 0},
	{C_P32 | C_SHARED | C_GATED, 0, "mlp.shared_experts.mul", "mul",
	 "ss ssu", "sa32:f32:tok*fs", "ss ssu", NULL, 0},
	{C_P32 | C_SHARED, C_GATED, "mlp.shared_experts.activation_func", "act",
	 "sf1", "sa32:f32:tok*fs", "sf1", NULL, 0},
	{C_P32 | C_SHARED, 0, "mlp.shared_experts.linear_fc2", "cast", "sa32",
	 "sa:c:tok*fs", "", NULL, 0},
	{C_SHARED | C_P32, 0, "mlp.shared_experts.linear_fc2", "cast", "",
	 "wsf2:c:fs*h", ALL, NULL, 0},
	{C_P32 | C_SHARED, 0, "mlp.shared_experts.linear_fc2", "matmul", "sa",
	 "sob:c:tok*h", "sa", "2*tok*fs*h", 0},
	{C_P32 | C_SHARED, 0, "mlp.shared_experts.linear_fc2", "cast", "sob",
	 "so:f32:tok*h", "", NULL, 0},
	{C_P32 | C_SHARED, 0, "mlp.add", "add", "mo0 so", "mo1:f32:tok*h", "",
	 NULL, 0},
	{C_P32, C_SHARED, "mlp", "view", "mo0", "mo1@mo0", "", NULL, 0},
	{C_P32 | C_SP, 0, "mlp.reshape", "split", "mo1", "mlp:f32:tsp*h", "", NULL,
	 0},
	{C_P32, C_SP, "mlp", "view", "mo1", "mlp@mo1", "", NULL, 0},
};

static const mo_op_row ms_resid_mlp[] = {
	{C_HDROP, 0, "hidden_states_dropout", "dropout", "mlp",
	 "md:c:tsp*h m2:u8:tsp*h", ALL, NULL, 0},
	{0, C_HDROP, "hidden_states_dropout", "view", "mlp", "md@mlp", "", NULL, 0},
	{0, B16, "add", "add", "x2 md", "y:c:tsp*h", "x2 md", NULL, 0},
	/* fp32 parameters: the layer's fp32 output is the next layer's input,
	 * kept by its norm (ledger: "Cast" / "AddExt" 28672.5 KB) */
	{C_P32, 0, "add", "add", "x2 md", "y:f32:tsp*h", "", NULL, 0},
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
	.note = "MindSpore PyNative, 512-byte pool rounding; fp32 parameters: "
		"fp32 residual stream, each op keeps what its backward reads "
		"(from allocation ledgers); bf16 parameters: every op keeps its "
		"inputs and output; calibrated on measured Ascend 910B runs "
		"(notes/calibration.md: pp 1, the last PP stage and MLA/MoE "
		"within 0.2%; on the first PP stage under FSDP this estimate is "
		"25-29% below the measured peak, not explained yet)",
};
