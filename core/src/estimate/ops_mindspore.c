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
 *    inputs and output (KEEPS_INPUTS_AND_OUTPUTS), calibrated by the `std` runs' per-layer
 *    law (728 MiB).
 * Change rows here, not the estimator (tests/calibration/ascend-910b.md,
 * tests/unit/test_calibration.c). Split / reshape / transpose are views
 * (MindSpore 2.3+ view ops). The residual add of a layer does not keep its
 * output: that tensor is the next layer's input and is counted there once. */
#include "estimate/ops_names.h"

#define C_HC MO_C_HC
#define C_HCF MO_C_HCF
#define C_R4 MO_C_R4
#define C_R128 MO_C_R128
#define C_HCH MO_C_HCH
#define C_DSAU MO_C_DSAU
#define C_RMSNC MO_C_RMSNC
#define C_DSA MO_C_DSA
/* `unless` of the rows for bf16 (or fp32-compute) parameters: the first-cut
 * rules, where every op keeps its inputs and output. The fp32-parameter rows
 * (`when` C_P32) are written from the measured DSv3-mini allocation ledgers
 * (notes/ledger-decode-dsv3-mini.md): an op keeps what its backward reads. */
#define B16 C_P32

/* FusedRMSNorm (pynative/layers/layer_norm.py FusedRMSNorm.construct) casts
 * its input to fp32 and its output back up to !8377 (4e36d6c8, merged to
 * master 2026-06-11 as 228c1fd7): `x = self.cast(x, compute_type)`, the
 * fp32 norm, `self.cast(output, original_type)`. From then on it is
 * `self.norm(x, self.weight, self.eps)[0]` on the input's dtype, whose
 * backward reads x and rstd (layer_norm.py:143-147 at 26354ff6, the build
 * of the measured DeepSeek-V4-style runs). The bf16 rows with the casts
 * are what the std runs measured (MindSpore 2.9); a run that uses the
 * hybrid attention has the cast-free norm, since that attention reached
 * master after it (!8359 2026-06-12, !8386 2026-06-16; the feature
 * commits themselves still had the casts): C_RMSNC. FusedLayerNorm still
 * casts. */
#define RMSNORM_NOCAST(P, IN, OUT, RS)                                                    \
	{.when = C_RMSNC, .unless = C_LN | B16, .path = P, .op = "rms_norm", .in = IN,       \
	 .out = OUT ":c:tsp*h " RS ":f32:tsp", .save = IN " " RS}

/* fp32 parameters with bf16 compute: each Linear casts its (all-gathered)
 * fp32 weight to the compute dtype and the matmul keeps that copy for its
 * backward (mindformers/pynative/layers/linear.py: `weight =
 * self.cast(weight, self.compute_dtype)`): 2 B per full parameter per
 * micro-batch, recomputed with the Linear's module. Measured: the DSv3-mini
 * no-recompute run keeps 393 MiB more than this table had (206.05M params
 * of its 4 layers; notes/calibration.md term 5). With bf16 parameters the
 * cast is a no-op. */
#define WCOPY(path_, name, dims)                                                     \
	{.when = C_P32, .path = path_, .op = "cast", .in = "", .out = name ":c:" dims,        \
	 .save = KEEPS_INPUTS_AND_OUTPUTS}

/* mHC (manifold-constrained hyper-connections; MindSpore Transformers
 * pynative/transformers/hyper_connection.py and transformer_layer.py
 * HyperConnectionTransformerLayer.construct:315-346, at mindspore-ai/
 * mindformers 167a50de). The layer's input is the packed residual streams
 * [s, b, n x h] in the compute dtype (transformer_block.py:26 tiles the
 * embedding n times; the output cells cast back to the compute dtype), so a
 * fully recomputed layer keeps n x h per token. attn_hc mixes the streams
 * into the attention's input and its output cell writes the streams back
 * with the attention's output; ffn_hc does the same around the MLP.
 * Fused (use_fused_mhc, FusedHyperConnectionModule): two custom kernels
 * whose DFunctions keep exactly what they pass to save_for_backward
 * (hyper_parallel custom_ops, mindspore platform custom_op_impl.py
 * NpuMhcPreSinkhornDFunction: x, phi, alpha, bias, h_pre, hc_before_norm,
 * inv_rms, sum_out, norm_out; NpuMhcPostDFunction: x, h_res, h_out,
 * h_post). Unfused: each op keeps its inputs and output (the bf16-parameter
 * rule; not measured on an mHC run). */
#define HC_PRE_UNFUSED(P, IN, OUT, T)                                                      \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "cast", .in = IN,                 \
	 .out = T "c32:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS},                      \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "rms_norm", .in = T "c32",         \
	 .out = T "n32:f32:tsp*hs " T "rs:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},      \
	{.when = C_HC, .unless = C_HCF, .path = P ".mapping_proj", .op = "matmul",          \
	 .in = T "n32", .out = T "m:f32:tsp*hcd", .save = KEEPS_INPUTS_AND_OUTPUTS,          \
	 .flops = "2*tsp*hs*hcd"},                                                          \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "mul", .in = T "m",                 \
	 .out = T "ma:f32:tsp*hcd", .save = KEEPS_INPUTS_AND_OUTPUTS},                      \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "add", .in = T "ma",                \
	 .out = T "mb:f32:tsp*hcd", .save = KEEPS_INPUTS_AND_OUTPUTS},                      \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "sigmoid", .in = T "mb",            \
	 .out = T "pre:f32:tsp*hcn " T "pre1:f32:tsp*hcn " T "post:f32:tsp*hcn "            \
		T "post1:f32:tsp*hcn",                                                     \
	 .save = KEEPS_INPUTS_AND_OUTPUTS},                                                 \
	{.when = C_HC, .unless = C_HCF, .path = P "._sinkhorn_op", .op = "sinkhorn",         \
	 .in = T "mb", .out = T "res:f32:tsp*skq", .save = KEEPS_INPUTS_AND_OUTPUTS},       \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "cast", .in = IN,                   \
	 .out = T "x32:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS},                      \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "matmul", .in = T "pre1 " T "x32",  \
	 .out = T "g32:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},                       \
	{.when = C_HC, .unless = C_HCF, .path = P, .op = "cast", .in = T "g32",              \
	 .out = OUT ":c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS}

#define HC_PRE_FUSED(P, IN, OUT, T)                                                        \
	{.when = C_HC | C_HCF, .path = P, .op = "mhc_pre_sinkhorn", .in = IN,               \
	 .out = OUT ":c:tsp*h " T "post:f32:tsp*hcn " T "res:f32:tsp*hcnn "                  \
		T "pre:f32:tsp*hcn " T "bn:f32:tsp*hcd " T "ir:f32:tsp " T "sum:f32:tsp*skn " \
		T "nrm:f32:tsp*sknn",                                                      \
	 .save = IN " " T "pre " T "bn " T "ir " T "sum " T "nrm",                          \
	 .flops = "2*tsp*hs*hcd"}

/* The output cell: h_res^T @ streams + h_post * sublayer output, back in
 * the compute dtype (HyperConnectionOutputCell.construct:104-125). KEEP is
 * what the op that writes the new streams keeps: the layer's last output
 * cell does not keep its output, the next layer's input. */
#define HC_POST_UNFUSED(P, IN, SUB, OUT, T, KEEP)                                         \
	{.when = C_HC, .unless = C_HCF, .path = P ".output_cell", .op = "cast", .in = IN,     \
	 .out = T "o32:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS},                      \
	{.when = C_HC, .unless = C_HCF, .path = P ".output_cell", .op = "matmul",             \
	 .in = T "res " T "o32", .out = T "or:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS}, \
	{.when = C_HC, .unless = C_HCF, .path = P ".output_cell", .op = "cast", .in = SUB,    \
	 .out = T "s32:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},                       \
	{.when = C_HC, .unless = C_HCF, .path = P ".output_cell", .op = "mul",                \
	 .in = T "post1 " T "s32", .out = T "op:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS}, \
	{.when = C_HC, .unless = C_HCF, .path = P ".output_cell", .op = "add",                \
	 .in = T "or " T "op", .out = T "oa:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS},   \
	{.when = C_HC, .unless = C_HCF, .path = P ".output_cell", .op = "cast",               \
	 .in = T "oa", .out = OUT ":c:tsp*hs", .save = KEEP}

#define HC_POST_FUSED(P, IN, SUB, OUT, T)                                                  \
	{.when = C_HC | C_HCF, .path = P ".output_cell", .op = "mhc_post",                   \
	 .in = IN " " T "res " SUB " " T "post", .out = OUT ":c:tsp*hs",                     \
	 .save = IN " " T "res " SUB " " T "post"}

static const mo_op_row ms_norm_attn[] = {
	{.when = C_HC, .path = "", .op = "input", .in = "", .out = "hs:c:tsp*hs",
	 .save = KEEPS_NOTHING},
	HC_PRE_UNFUSED("attn_hc", "hs", "x", "ah"),
	HC_PRE_FUSED("attn_hc", "hs", "x", "ah"),
	{.unless = B16, .path = "", .op = "input", .in = "", .out = "x:c:tsp*h",
	 .save = KEEPS_NOTHING},
	{.when = C_LN, .unless = B16, .path = "input_layernorm", .op = "cast", .in = "x",
	 .out = "x32:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_LN | C_RMSNC | B16, .path = "input_layernorm", .op = "cast", .in = "x",
	 .out = "x32:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_LN, .unless = B16, .path = "input_layernorm", .op = "layer_norm", .in = "x32",
	 .out = "n1:f32:tsp*h mu1:f32:tsp rs1:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_LN | C_RMSNC | B16, .path = "input_layernorm", .op = "rms_norm", .in = "x32",
	 .out = "n1:f32:tsp*h rs1:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_LN, .unless = B16, .path = "input_layernorm", .op = "cast", .in = "n1",
	 .out = "ln1:c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_LN | C_RMSNC | B16, .path = "input_layernorm", .op = "cast", .in = "n1",
	 .out = "ln1:c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	RMSNORM_NOCAST("input_layernorm", "x", "ln1", "rs1"),
	/* fp32 parameters: the residual stream is fp32 (the embedding gathers
	 * the fp32 table; each residual add of an fp32 stream and a bf16 branch
	 * is fp32) and the norm keeps its input and statistics; its fp32 output
	 * goes to the next Linear, which casts it (P32 rows of the blocks
	 * below). */
	{.when = C_P32, .path = "", .op = "input", .in = "", .out = "x:f32:tsp*h",
	 .save = KEEPS_NOTHING},
	{.when = C_P32 | C_LN, .path = "input_layernorm", .op = "layer_norm", .in = "x",
	 .out = "n1:f32:tsp*h mu1:f32:tsp rs1:f32:tsp", .save = "x mu1 rs1"},
	{.when = C_P32, .unless = C_LN, .path = "input_layernorm", .op = "rms_norm", .in = "x",
	 .out = "n1:f32:tsp*h rs1:f32:tsp", .save = "x rs1"},
};

static const mo_op_row ms_attn[] = {
	{.when = C_SP, .unless = B16, .path = "self_attention.linear_qkv.input.allgather",
	 .op = "allgather", .in = "ln1", .out = "ln1g:c:tok*h", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = AG},
	{.unless = C_SP | B16, .path = "self_attention.linear_qkv", .op = "view", .in = "ln1",
	 .out = "ln1g@ln1", .save = KEEPS_NOTHING},
	{.unless = B16, .path = "self_attention.linear_qkv", .op = "matmul", .in = "ln1g",
	 .out = "qkv:c:tok*qkv", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tok*h*qkv"},
	{.unless = B16, .path = "self_attention.split_qkv", .op = "split", .in = "qkv",
	 .out = "q@qkv k@qkv v@qkv", .save = KEEPS_NOTHING},
	{.unless = B16, .path = "self_attention.apply_rotary_pos_emb", .op = "cast", .in = "q k",
	 .out = "q32:f32:tok*q k32:f32:tok*kv", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_pos_emb",
	 .op = "rotary_position_embedding", .in = "q32 k32",
	 .out = "qr32:f32:tok*q kr32:f32:tok*kv", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_pos_emb", .op = "cast",
	 .in = "qr32 kr32", .out = "qr:c:tok*q kr:c:tok*kv", .save = KEEPS_INPUTS_AND_OUTPUTS},
	/* value is a strided slice of the per-group [.., (n_rep + 2) * d]
	 * projection (split_qkv): core attention makes it contiguous
	 * (flash_attention.py `value.contiguous()`), a copy it keeps. Measured:
	 * MHA - GQA = 144 MiB per layer = 48 persistent + 96 kept, and 96 MiB
	 * = 3/4 of the 8 kv-sized bf16 tensors (qkv's k and v, k32, kr32, kr,
	 * this copy) of the MHA layer. */
	{.unless = B16, .path = "self_attention.core_attention", .op = "contiguous", .in = "v",
	 .out = "vc:c:tok*kv", .save = KEEPS_INPUTS_AND_OUTPUTS},

	/* fp32 parameters: not measured on an MHA / GQA model; the same op
	 * rules as the measured MLA rows (ms_attn_mla): the Linear keeps its bf16
	 * input and weight and returns fp32; each rotary call keeps its
	 * contiguous fp32 input, the rotated half and four fp32 [tokens, d]
	 * cos / sin planes; flash attention keeps bf16 q, k, v; the output
	 * projection keeps a contiguous copy of the attention output. */
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "cast", .in = "n1",
	 .out = "ln1:c:tsp*h", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SP, .path = "self_attention.linear_qkv.input.allgather",
	 .op = "allgather", .in = "ln1", .out = "ln1g:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.when = C_P32, .unless = C_SP, .path = "self_attention.linear_qkv", .op = "view",
	 .in = "ln1", .out = "ln1g@ln1", .save = KEEPS_NOTHING},
	WCOPY("self_attention.linear_qkv", "wqkv", "h*qkv"),
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "matmul", .in = "ln1g",
	 .out = "qkvb:c:tok*qkv", .save = "ln1g", .flops = "2*tok*h*qkv"},
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "cast", .in = "qkvb",
	 .out = "qkv:f32:tok*qkv", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.split_qkv", .op = "split", .in = "qkv",
	 .out = "q@qkv k@qkv v@qkv", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.apply_rotary_pos_emb", .op = "contiguous",
	 .in = "q k", .out = "qc:f32:tok*q kc:f32:tok*kv", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.apply_rotary_pos_emb",
	 .op = "rotary_position_embedding", .in = "qc kc",
	 .out = "qr32:f32:tok*q qrh:f32:tok*q qcs:f32:4*tok*d kr32:f32:tok*kv krh:f32:tok*kv kcs:f32:4*tok*d",
	 .save = "qc qrh qcs kc krh kcs"},
	{.when = C_P32, .path = "self_attention.apply_rotary_pos_emb", .op = "cast",
	 .in = "qr32 kr32", .out = "qr:c:tok*q kr:c:tok*kv", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.core_attention", .op = "contiguous", .in = "v",
	 .out = "vc:c:tok*kv", .save = KEEPS_NOTHING},

	{.when = C_CP, .unless = B16, .path = "self_attention.core_attention.input.allgather",
	 .op = "allgather", .in = "kr vc", .out = "kf:c:b*s*kv vf:c:b*s*kv",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .comm = AG},
	{.when = C_CP | C_P32, .path = "self_attention.core_attention.input.allgather",
	 .op = "allgather", .in = "kr vc", .out = "kf:c:b*s*kv vf:c:b*s*kv", .save = KEEPS_NOTHING,
	 .comm = AG},
	{.unless = C_CP, .path = "self_attention.core_attention", .op = "view", .in = "kr vc",
	 .out = "kf@kr vf@vc", .save = KEEPS_NOTHING},
	{.when = C_FLASH, .path = "self_attention.core_attention", .op = "flash_attention_score",
	 .in = "qr kf vf", .out = "ctx:c:tok*q smax:f32:b*hd*sq*8 ssum:f32:b*hd*sq*8",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "4*b*hd*sq*s*d"},
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "bmm", .in = "qr kf",
	 .out = "sc:c:b*hd*sq*s", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*b*hd*sq*s*d"},
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "cast", .in = "sc",
	 .out = "sc32:f32:b*hd*sq*s", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "softmax", .in = "sc32",
	 .out = "pr32:f32:b*hd*sq*s", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "cast", .in = "pr32",
	 .out = "pr:c:b*hd*sq*s", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_ADROP, .unless = C_FLASH, .path = "self_attention.core_attention",
	 .op = "dropout", .in = "pr", .out = "prd:c:b*hd*sq*s am:u8:b*hd*sq*s",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_FLASH | C_ADROP, .path = "self_attention.core_attention", .op = "view",
	 .in = "pr", .out = "prd@pr", .save = KEEPS_NOTHING},
	{.unless = C_FLASH, .path = "self_attention.core_attention", .op = "bmm", .in = "prd vf",
	 .out = "ctx:c:tok*q", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*b*hd*sq*s*d"},
};

/* MLA with bf16 parameters: the first-cut rows (every op keeps its inputs
 * and output); not measured. */
static const mo_op_row ms_attn_mla[] = {
	{.unless = B16, .path = "self_attention.linear_qkv", .op = "matmul", .in = "ln1",
	 .out = "qkvd:c:tsp*qdown", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tsp*h*qdown"},
	{.unless = B16, .path = "self_attention.split", .op = "split", .in = "qkvd",
	 .out = "qlv@qkvd kvlv@qkvd kpe@qkvd", .save = KEEPS_NOTHING},
	{.when = C_QLORA, .unless = B16, .path = "self_attention.q_layernorm", .op = "cast",
	 .in = "qlv", .out = "ql32:f32:tsp*ql", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_QLORA, .unless = B16, .path = "self_attention.q_layernorm", .op = "rms_norm",
	 .in = "ql32", .out = "qn32:f32:tsp*ql rsq:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_QLORA, .unless = B16, .path = "self_attention.q_layernorm", .op = "cast",
	 .in = "qn32", .out = "qn:c:tsp*ql", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_QLORA | C_SP, .unless = B16, .path = "self_attention.linear_qb.input.allgather",
	 .op = "allgather", .in = "qn", .out = "qng:c:tok*ql", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = AG},
	{.when = C_QLORA, .unless = C_SP | B16, .path = "self_attention.linear_qb", .op = "view",
	 .in = "qn", .out = "qng@qn", .save = KEEPS_NOTHING},
	{.when = C_QLORA, .unless = B16, .path = "self_attention.linear_qb", .op = "matmul",
	 .in = "qng", .out = "qf:c:tok*qhd", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .flops = "2*tok*ql*qhd"},
	{.unless = C_QLORA | B16, .path = "self_attention.linear_qkv", .op = "matmul_q",
	 .in = "ln1", .out = "qf:c:tok*qhd", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .flops = "2*tok*h*qhd"},
	{.unless = B16, .path = "self_attention.k_layernorm", .op = "cast", .in = "kvlv",
	 .out = "kl32:f32:tsp*kvl", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.k_layernorm", .op = "rms_norm", .in = "kl32",
	 .out = "kn32:f32:tsp*kvl rsk:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.k_layernorm", .op = "cast", .in = "kn32",
	 .out = "kvn:c:tsp*kvl", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_SP, .unless = B16, .path = "self_attention.linear_kvb.input.allgather",
	 .op = "allgather", .in = "kvn", .out = "kvng:c:tok*kvl", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = AG},
	{.unless = C_SP | B16, .path = "self_attention.linear_kvb", .op = "view", .in = "kvn",
	 .out = "kvng@kvn", .save = KEEPS_NOTHING},
	{.unless = B16, .path = "self_attention.linear_kvb", .op = "matmul", .in = "kvng",
	 .out = "kvf:c:tok*kvbd", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tok*kvl*kvbd"},
	{.when = C_SP, .unless = B16, .path = "self_attention.apply_rotary_emb_k.input.allgather",
	 .op = "allgather", .in = "kpe", .out = "kpeg:c:tok*rope", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = AG},
	{.unless = C_SP | B16, .path = "self_attention.apply_rotary_emb_k", .op = "view",
	 .in = "kpe", .out = "kpeg@kpe", .save = KEEPS_NOTHING},
	{.unless = B16, .path = "self_attention.apply_rotary_emb_q", .op = "cast", .in = "qf",
	 .out = "qp32:f32:tok*kpeh", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_emb_q",
	 .op = "rotary_position_embedding", .in = "qp32", .out = "qr32:f32:tok*kpeh",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_emb_q", .op = "cast", .in = "qr32",
	 .out = "qr:c:tok*kpeh", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_emb_k", .op = "cast", .in = "kpeg",
	 .out = "kp32:f32:tok*rope", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_emb_k",
	 .op = "rotary_position_embedding", .in = "kp32", .out = "kr32:f32:tok*rope",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.apply_rotary_emb_k", .op = "cast", .in = "kr32",
	 .out = "kr:c:tok*rope", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.cat", .op = "cat", .in = "qf qr",
	 .out = "qa:c:tok*qhd", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.tile_kv", .op = "tile", .in = "kr",
	 .out = "krt:c:tok*kpeh", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.cat", .op = "cat", .in = "kvf krt",
	 .out = "ka:c:tok*qhd", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "self_attention.split", .op = "split", .in = "kvf", .out = "va@kvf",
	 .save = KEEPS_NOTHING},

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
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "cast", .in = "n1",
	 .out = "xn:c:tsp*h", .save = KEEPS_NOTHING},
	WCOPY("self_attention.linear_qkv", "wqkvd", "h*qdown"),
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "matmul", .in = "xn",
	 .out = "qkvb:c:tsp*qdown", .save = "xn", .flops = "2*tsp*h*qdown"},
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "cast", .in = "qkvb",
	 .out = "qkvd:f32:tsp*qdown", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.split", .op = "split", .in = "qkvd",
	 .out = "qlv@qkvd kvlv@qkvd kpe@qkvd", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_QLORA, .path = "self_attention.q_layernorm", .op = "rms_norm",
	 .in = "qlv", .out = "qn32:f32:tsp*ql rsq:f32:tsp", .save = "qlv rsq"},
	{.when = C_P32 | C_QLORA, .path = "self_attention.linear_qb", .op = "cast", .in = "qn32",
	 .out = "qn:c:tsp*ql", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_QLORA | C_SP, .path = "self_attention.linear_qb.input.allgather",
	 .op = "allgather", .in = "qn", .out = "qng:c:tok*ql", .save = KEEPS_NOTHING, .comm = AG},
	{.when = C_P32 | C_QLORA, .unless = C_SP, .path = "self_attention.linear_qb", .op = "view",
	 .in = "qn", .out = "qng@qn", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_QLORA, .path = "self_attention.linear_qb", .op = "cast", .in = "",
	 .out = "wqb:c:ql*qhd", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_P32 | C_QLORA, .path = "self_attention.linear_qb", .op = "matmul", .in = "qng",
	 .out = "qfb:c:tok*qhd", .save = "qng", .flops = "2*tok*ql*qhd"},
	{.when = C_P32, .unless = C_QLORA, .path = "self_attention.linear_qkv", .op = "cast",
	 .in = "", .out = "wq:c:h*qhd", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_P32, .unless = C_QLORA, .path = "self_attention.linear_qkv", .op = "matmul_q",
	 .in = "xn", .out = "qfb:c:tok*qhd", .save = "xn", .flops = "2*tok*h*qhd"},
	{.when = C_P32, .path = "self_attention.linear_qb", .op = "cast", .in = "qfb",
	 .out = "qf:f32:tok*qhd", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.k_layernorm", .op = "rms_norm", .in = "kvlv",
	 .out = "kn32:f32:tsp*kvl rsk:f32:tsp", .save = "kvlv rsk"},
	{.when = C_P32, .path = "self_attention.linear_kvb", .op = "cast", .in = "kn32",
	 .out = "kvn:c:tsp*kvl", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SP, .path = "self_attention.linear_kvb.input.allgather",
	 .op = "allgather", .in = "kvn", .out = "kvng:c:tok*kvl", .save = KEEPS_NOTHING, .comm = AG},
	{.when = C_P32, .unless = C_SP, .path = "self_attention.linear_kvb", .op = "view",
	 .in = "kvn", .out = "kvng@kvn", .save = KEEPS_NOTHING},
	WCOPY("self_attention.linear_kvb", "wkvb", "kvl*kvbd"),
	{.when = C_P32, .path = "self_attention.linear_kvb", .op = "matmul", .in = "kvng",
	 .out = "kvfb:c:tok*kvbd", .save = "kvng", .flops = "2*tok*kvl*kvbd"},
	{.when = C_P32, .path = "self_attention.linear_kvb", .op = "cast", .in = "kvfb",
	 .out = "kvf:f32:tok*kvbd", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.apply_rotary_emb_q", .op = "contiguous", .in = "qf",
	 .out = "qpe:f32:tok*kpeh", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.apply_rotary_emb_q",
	 .op = "rotary_position_embedding", .in = "qpe",
	 .out = "qr32:f32:tok*kpeh qrh:f32:tok*kpeh qcs:f32:4*tok*rope", .save = "qpe qrh qcs"},
	{.when = C_SP | C_P32, .path = "self_attention.apply_rotary_emb_k.input.allgather",
	 .op = "allgather", .in = "kpe", .out = "kpeg:f32:tok*rope", .save = KEEPS_NOTHING,
	 .comm = AG},
	{.when = C_P32, .unless = C_SP, .path = "self_attention.apply_rotary_emb_k", .op = "view",
	 .in = "kpe", .out = "kpeg@kpe", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.apply_rotary_emb_k", .op = "contiguous",
	 .in = "kpeg", .out = "kpc:f32:tok*rope", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.apply_rotary_emb_k",
	 .op = "rotary_position_embedding", .in = "kpc",
	 .out = "kr32:f32:tok*rope krh:f32:tok*rope kcs:f32:4*tok*rope", .save = "kpc krh kcs"},
	{.when = C_P32, .path = "self_attention.cat", .op = "cat", .in = "qf qr32",
	 .out = "qa32:f32:tok*qhd", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.cat", .op = "cast", .in = "qa32",
	 .out = "qa:c:tok*qhd", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.tile_kv", .op = "tile", .in = "kr32",
	 .out = "krt:f32:tok*kpeh", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.cat", .op = "cat", .in = "kvf krt",
	 .out = "ka32:f32:tok*qhd", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.cat", .op = "cast", .in = "ka32",
	 .out = "ka:c:tok*qhd", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "self_attention.split", .op = "cast", .in = "kvf",
	 .out = "va:c:tok*vh", .save = KEEPS_NOTHING},

	{.when = C_CP, .unless = B16, .path = "self_attention.core_attention.input.allgather",
	 .op = "allgather", .in = "ka va", .out = "kaf:c:b*s*qhd vaf:c:b*s*vh",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .comm = AG},
	/* fp32 parameters: a collective keeps nothing (its backward is the
	 * opposite collective); flash attention keeps the gathered k, v */
	{.when = C_CP | C_P32, .path = "self_attention.core_attention.input.allgather",
	 .op = "allgather", .in = "ka va", .out = "kaf:c:b*s*qhd vaf:c:b*s*vh",
	 .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_CP, .path = "self_attention.core_attention", .op = "view", .in = "ka va",
	 .out = "kaf@ka vaf@va", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention", .op = "flash_attention_score", .in = "qa kaf vaf",
	 .out = "ctx:c:tok*vh smax:f32:b*hd*sq*8 ssum:f32:b*hd*sq*8",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*b*hd*sq*s*dqkv"},
};

/* The attention output projection and its collective, for either attention: ctx is the
 * heads' context (ctxw wide on a rank: heads x kv_channels, or heads x v_head_dim under
 * multi-latent attention). */
static const mo_op_row ms_attn_proj[] = {
	{.unless = B16, .path = "self_attention.linear_proj", .op = "matmul", .in = "ctx",
	 .out = "po0:c:tok*h", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tok*ctxw*h"},
	{.when = C_P32, .path = "self_attention.linear_proj", .op = "contiguous", .in = "ctx",
	 .out = "ctxc:c:tok*ctxw", .save = KEEPS_NOTHING},
	WCOPY("self_attention.linear_proj", "wproj", "ctxw*h"),
	{.when = C_P32, .path = "self_attention.linear_proj", .op = "matmul", .in = "ctxc",
	 .out = "po0:c:tok*h", .save = "ctxc", .flops = "2*tok*ctxw*h"},
	{.when = C_SP, .unless = B16, .path = "self_attention.linear_proj.output.reducescatter",
	 .op = "reducescatter", .in = "po0", .out = "attn:c:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .comm = RS},
	{.when = C_TP, .unless = C_SP | B16, .path = "self_attention.linear_proj.output.allreduce",
	 .op = "allreduce", .in = "po0", .out = "attn:c:tok*h", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = AR},
	{.when = C_SP | C_P32, .path = "self_attention.linear_proj.output.reducescatter",
	 .op = "reducescatter", .in = "po0", .out = "attn:c:tsp*h", .save = KEEPS_NOTHING,
	 .comm = RS},
	{.when = C_TP | C_P32, .unless = C_SP,
	 .path = "self_attention.linear_proj.output.allreduce", .op = "allreduce", .in = "po0",
	 .out = "attn:c:tok*h", .save = KEEPS_NOTHING, .comm = AR},
	{.unless = C_TP, .path = "self_attention.linear_proj", .op = "view", .in = "po0",
	 .out = "attn@po0", .save = KEEPS_NOTHING},
};

/* DeepSeek-V4's hybrid attention (experimental_attention_variant
 * dsv4_hybrid; mindformers/pynative/transformers/experimental_attention_variant/
 * at mindspore-ai/mindformers 167a50de). Each op keeps what its backward
 * reads, as the measured fp32-parameter rows do (and as the measurers'
 * census of this attention found: the q-norm and the grouped projection's
 * input are bf16 buffers, the inverse rotary's concatenation keeps nothing;
 * notes/dsv4.md). DSv4HybridSelfAttention.construct
 * (deepseek_v4_hybrid_attention.py:228-300): q down-projection, RMSNorm,
 * up-projection to heads x v_head_dim, a per-head RMS in the compute dtype
 * (q * rsqrt(mean(q * q))); one shared kv head, normed; the rotary lanes of
 * q, kv and (inverted) the core output each through ApplyRotaryPosEmb in
 * fp32, whose two products keep t and rotate_half(t) (rope_utils.py:169-186,
 * unfused: apply_rope_fusion is off by default and never used for the
 * inverse); the core output regrouped into o_groups (a contiguous copy the
 * bmm keeps) and projected by linear_o_group_proj, then linear_proj. */
static const mo_op_row ms_attn_hybrid[] = {
	{.when = C_P32, .path = "self_attention.linear_q_down_proj", .op = "cast", .in = "n1",
	 .out = "ln1:c:tsp*h", .save = KEEPS_NOTHING},
	{.path = "self_attention.linear_q_down_proj", .op = "matmul", .in = "ln1",
	 .out = "qc:c:tok*ql", .save = "ln1", .flops = "2*tok*h*ql"},
	{.path = "self_attention.q_layernorm", .op = "rms_norm", .in = "qc",
	 .out = "qn:c:tok*ql qrs:f32:tok", .save = "qc qrs"},
	{.path = "self_attention.linear_q_up_proj", .op = "matmul", .in = "qn", .out = "q:c:tok*qh",
	 .save = "qn", .flops = "2*tok*ql*qh"},
	{.path = "self_attention", .op = "mul", .in = "q", .out = "qq:c:tok*qh", .save = "q"},
	{.path = "self_attention", .op = "rsqrt", .in = "qq", .out = "qr:c:tok*hd", .save = "qr"},
	{.path = "self_attention", .op = "mul", .in = "q qr", .out = "qh:c:tok*qh", .save = "q qr"},
	{.path = "self_attention.linear_kv_proj", .op = "matmul", .in = "ln1", .out = "kv:c:tok*dv",
	 .save = "ln1", .flops = "2*tok*h*dv"},
	{.path = "self_attention.kv_layernorm", .op = "rms_norm", .in = "kv",
	 .out = "kvn:c:tok*dv kvrs:f32:tok", .save = "kv kvrs"},
	{.path = "self_attention.apply_rotary_emb", .op = "rotary_position_embedding", .in = "qh",
	 .out = "qt32:f32:tok*qpe qtr32:f32:tok*qpe qpe:c:tok*qpe", .save = "qt32 qtr32"},
	{.path = "self_attention", .op = "cat", .in = "qh qpe", .out = "qrope:c:tok*qh",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention.apply_rotary_emb", .op = "rotary_position_embedding", .in = "kvn",
	 .out = "kt32:f32:tok*rope ktr32:f32:tok*rope kpe:c:tok*rope", .save = "kt32 ktr32"},
	{.path = "self_attention", .op = "cat", .in = "kvn kpe", .out = "key:c:tok*dv",
	 .save = KEEPS_NOTHING},
	/* Compressor (compressor.py:175-225): kv and gate projections of the
	 * layer input, the gate in fp32 with the positional bias, windows of
	 * 2 x ratio tokens at ratio 4 (overlapping, coff 2) or ratio tokens at
	 * 128; the softmax keeps its output, the weighted sum its fp32 operands;
	 * the pooled rows normed and rotated (small). */
	{.when = C_R4, .path = "self_attention.core_attention.compressor", .op = "matmul",
	 .in = "ln1", .out = "ckv:c:tok*dv2 csc:c:tok*dv2", .save = "ln1",
	 .flops = "4*tok*h*dv2"},
	{.when = C_R4, .path = "self_attention.core_attention.compressor", .op = "softmax",
	 .in = "csc", .out = "cw:f32:tok2*dv", .save = "cw"},
	{.when = C_R4, .path = "self_attention.core_attention.compressor", .op = "mul",
	 .in = "ckv cw", .out = "ck32:f32:tok2*dv cp:f32:tok2*dv", .save = "ck32 cw"},
	{.when = C_R4, .path = "self_attention.core_attention.compressor", .op = "rms_norm",
	 .in = "cp", .out = "cpool:c:c4*dv cmpkv:c:c4*dv", .save = "cpool"},
	{.when = C_R128, .path = "self_attention.core_attention.compressor", .op = "matmul",
	 .in = "ln1", .out = "ckv:c:tok*dv csc:c:tok*dv", .save = "ln1", .flops = "4*tok*h*dv"},
	{.when = C_R128, .path = "self_attention.core_attention.compressor", .op = "softmax",
	 .in = "csc", .out = "cw:f32:tok*dv", .save = "cw"},
	{.when = C_R128, .path = "self_attention.core_attention.compressor", .op = "mul",
	 .in = "ckv cw", .out = "ck32:f32:tok*dv cp:f32:tok*dv", .save = "ck32 cw"},
	{.when = C_R128, .path = "self_attention.core_attention.compressor", .op = "rms_norm",
	 .in = "cp", .out = "cpool:c:c128*dv cmpkv:c:c128*dv", .save = "cpool"},
	/* Indexer of the ratio-4 layers (indexer.py forward_before_topk:158-207,
	 * on detached inputs; its weights learn from the KL loss): the query
	 * projection of the q down-projection, its rotary lanes, its own
	 * compressor over index_head_dim, the head weights; the lightning
	 * indexer's top-k indices (no gradient). */
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "matmul", .in = "qc",
	 .out = "iq:c:tok*ih", .save = "qc", .flops = "2*tok*ql*ih"},
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "rotary_position_embedding",
	 .in = "iq", .out = "it32:f32:tok*ipe itr32:f32:tok*ipe ipe:c:tok*ipe", .save = "it32 itr32"},
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "cat", .in = "iq ipe",
	 .out = "qidx:c:tok*ih", .save = KEEPS_NOTHING},
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "matmul", .in = "ln1",
	 .out = "ikv:c:tok*id2 isc:c:tok*id2 iw:c:tok*ihn", .save = "ln1",
	 .flops = "4*tok*h*id2"},
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "softmax", .in = "isc",
	 .out = "iwt:f32:tok2*id", .save = "iwt"},
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "mul", .in = "ikv iwt",
	 .out = "ik32:f32:tok2*id ip:f32:tok2*id", .save = "ik32 iwt"},
	{.when = C_R4, .path = "self_attention.core_attention.indexer", .op = "rms_norm", .in = "ip",
	 .out = "ipool:c:c4*id kidx:c:c4*id iwf:f32:tok*ihn", .save = "ipool"},
	{.when = C_R4, .unless = C_DSAU, .path = "self_attention.core_attention.indexer",
	 .op = "lightning_indexer", .in = "qidx kidx iwf", .out = "topk:i32:tok*itk",
	 .save = KEEPS_NOTHING},
	/* The small-op indexer (apply_dsa_kernel_fusion false; indexer.py
	 * construct :233-264): fp32 query and key, the per-head scores over
	 * every compressed position [tok, heads, sq / 4] in fp32 (bmm, relu,
	 * head weights), summed over heads, top-k; the KL loss
	 * (UnfusedCSAIndexerLoss :321-409) scores the main attention from
	 * stop-gradient inputs (kept by nothing) and the selected indexer
	 * scores through an fp32 softmax. */
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer", .op = "cast",
	 .in = "qidx kidx", .out = "iq32:f32:tok*ih ik32:f32:c4*id", .save = KEEPS_NOTHING},
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer", .op = "bmm",
	 .in = "iq32 ik32", .out = "isc:f32:tok*ihn*c4", .save = "iq32 ik32",
	 .flops = "2*tok*ih*c4"},
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer", .op = "relu",
	 .in = "isc", .out = "isr:f32:tok*ihn*c4", .save = "isr"},
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer", .op = "mul",
	 .in = "isr iwf", .out = "isw:f32:tok*ihn*c4", .save = "isr iwf",
	 .bwd = "f32:tok*ihn*c4 f32:tok*ihn*c4"},
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer", .op = "sum",
	 .in = "isw", .out = "iss:f32:tok*c4", .save = KEEPS_NOTHING},
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer", .op = "topk",
	 .in = "iss", .out = "tks:f32:tok*itk topk:i32:tok*itk", .save = "topk"},
	{.when = C_R4 | C_DSAU, .path = "self_attention.core_attention.indexer_loss",
	 .op = "softmax", .in = "tks", .out = "kpr:f32:tok*itk", .save = "kpr"},
	/* FusedSparseFlashMla (csa.py:73-130) keeps what it saves: query, the
	 * kv head, the compressed kv, the sparse indices (ratio 4), the output
	 * and its fp32 log-sum-exp; with the indexer loss
	 * (FusedSparseFlashMlaWithIndexerLoss :178-247) also the indexer's
	 * query, key and weights. */
	/* Their backward (FusedSparseFlashMla.backward, csa.py:132-165 at
	 * 26354ff6) holds the output's gradient and returns the query's, the kv
	 * head's and the compressed kv's (npu_sparse_flash_mla_grad); its
	 * workspace at these ratios was not measured apart (at most the ratio-4
	 * kernel's 730 MiB, the largest of the stage's backward measured beside
	 * it), not counted. */
	{.unless = C_R4 | C_R128 | C_DSAU, .path = "self_attention.core_attention",
	 .op = "sparse_flash_mla", .in = "qrope key", .out = "co:c:tok*qh lse:f32:hd*tok",
	 .save = "qrope key co lse", .flops = "4*tok*s*qh", .bwd = "c:tok*qh c:tok*qh c:tok*dv"},
	{.when = C_R128, .unless = C_DSAU, .path = "self_attention.core_attention",
	 .op = "sparse_flash_mla", .in = "qrope key cmpkv", .out = "co:c:tok*qh lse:f32:hd*tok",
	 .save = "qrope key cmpkv co lse", .flops = "4*tok*s*qh",
	 .bwd = "c:tok*qh c:tok*qh c:tok*dv c:c128*dv"},
	/* Its backward at ratio 4, as MindSpore's memory tracker measured it
	 * (GitHub suhaibo666/autoparallel docs/kernel_workspace_2026-07-29.md
	 * sections 4 and 6.3, MindSpore 2.10 / CANN 9.1): the output's gradient
	 * in, the gradients of query, kv head, compressed kv, indexer query,
	 * indexer key and weights out (256 / 4 / 1 / 64 / 0.25 / 1 MiB at seq
	 * 4096, allocated just before), then a one-tick workspace of
	 * 209715200 B + 135680 B per token (730 MiB at 4096, 465 at 2048, 332.5
	 * at 1024: three points on one line), the allocation that set the peaks
	 * of stages 0 and 1 of the no-recompute run. Two 8 MiB outputs of the
	 * same window are not identified and not counted. Ratio 128 and 0 were
	 * not measured apart (their backward ran beside a ratio-4 layer's). */
	{.when = C_R4, .unless = C_DSAU, .path = "self_attention.core_attention",
	 .op = "sparse_flash_mla", .in = "qrope key cmpkv topk qidx kidx iwf",
	 .out = "co:c:tok*qh lse:f32:hd*tok",
	 .save = "qrope key cmpkv topk qidx kidx iwf co lse", .flops = "4*tok*s*qh",
	 .bwd = "c:tok*qh c:tok*qh c:tok*dv c:c4*dv c:tok*ih c:c4*id f32:tok*ihn "
		"u8:209715200 u8:tok*135680"},
	/* The small-op sparse attention (unfused_compressed_sparse_attn,
	 * csa.py:464-527) over kt kv rows per query (the window, plus the
	 * compressed top-k at ratio 4 or every compressed row at ratio 128):
	 * the gathered rows [tok, kt, dv] cast to fp32 (kv_g :498) feed both
	 * batched GEMMs, the scores' bmm through a permuted contiguous copy
	 * (:502) that it keeps, the weighted sum as a view that it keeps; the
	 * fp32 query copy, the softmax's exp and quotient and the weights' copy.
	 * In the backward kv_g's gradient is the sum of the two GEMMs' fp32
	 * gradients in different layouts: three [tok, kt, dv] fp32 buffers
	 * with the query's gradient at the scores' bmm. */
	{.when = C_DSAU, .unless = C_R4 | C_R128, .path = "self_attention.core_attention",
	 .op = "view", .in = "key", .out = "kvfull@key", .save = KEEPS_NOTHING},
	{.when = C_DSAU | C_R4, .path = "self_attention.core_attention", .op = "cat",
	 .in = "key cmpkv", .out = "kvfull:c:tok*dv", .save = KEEPS_NOTHING},
	{.when = C_DSAU | C_R128, .path = "self_attention.core_attention", .op = "cat",
	 .in = "key cmpkv", .out = "kvfull:c:tok*dv", .save = KEEPS_NOTHING},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "index", .in = "kvfull",
	 .out = "kvg:c:tok*kt*dv gidx:i64:tok*kt", .save = "gidx"},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "cast", .in = "qrope kvg",
	 .out = "q32:f32:tok*qh kv32:f32:tok*kt*dv", .save = KEEPS_NOTHING},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "contiguous",
	 .in = "q32 kv32", .out = "qbm:f32:tok*qh kvbm:f32:tok*kt*dv", .save = KEEPS_NOTHING},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "bmm", .in = "qbm kvbm",
	 .out = "sc:f32:tok*hd*kt", .save = "qbm kvbm", .flops = "2*tok*qh*kt",
	 .bwd = "f32:tok*kt*dv f32:tok*kt*dv f32:tok*kt*dv f32:tok*qh"},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "add", .in = "sc",
	 .out = "sc2:f32:tok*hd*kt", .save = KEEPS_NOTHING},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "exp", .in = "sc2",
	 .out = "ex:f32:tok*hd*kt", .save = "ex"},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "div", .in = "ex",
	 .out = "aw:f32:tok*hd*kt", .save = "aw"},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "contiguous", .in = "aw",
	 .out = "awbm:f32:tok*hd*kt", .save = KEEPS_NOTHING},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "bmm", .in = "awbm kv32",
	 .out = "o32:f32:tok*qh", .save = "awbm kv32", .flops = "2*tok*qh*kt",
	 .bwd = "f32:tok*qh f32:tok*hd*kt f32:tok*kt*dv"},
	{.when = C_DSAU, .path = "self_attention.core_attention", .op = "cast", .in = "o32",
	 .out = "co:c:tok*qh", .save = KEEPS_NOTHING},
	{.path = "self_attention.apply_rotary_emb", .op = "rotary_position_embedding", .in = "co",
	 .out = "ot32:f32:tok*qpe otr32:f32:tok*qpe ope:c:tok*qpe", .save = "ot32 otr32"},
	{.path = "self_attention", .op = "cat", .in = "co ope", .out = "cor:c:tok*qh",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention", .op = "permute", .in = "cor", .out = "cg:c:tok*qh",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention", .op = "bmm", .in = "cg", .out = "oi:c:tok*olr", .save = "cg",
	 .flops = "2*tok*qh*og1"},
	{.path = "self_attention", .op = "permute", .in = "oi", .out = "oin:c:tok*olr",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention.linear_proj", .op = "matmul", .in = "oin", .out = "attn:c:tsp*h",
	 .save = "oin", .flops = "2*tok*olr*h"},
};

/* DeepSeek-V3.2's sparse attention, the sparse training stage
 * (experimental_attention_variant dsa, dsa_indexer_use_sparse_loss true;
 * MultiLatentAttention.dsa_forward, pynative/transformers/
 * multi_latent_attention.py:460-553 at mindspore-ai/mindformers 167a50de,
 * experimental_attention_variant/dsa.py, dsa_indexer.py,
 * dsa_indexer_loss.py). Each op keeps what its backward reads, as the
 * hybrid attention's rows of the same build do. The MLA down-projection
 * and its two norms; the indexer (get_qk_index, dsa_indexer.py:217-285) on
 * detached inputs but on its own loss's gradient path (d_query_index,
 * d_key_index, d_weights flow back through it to linear_wq_b, linear_wk,
 * linear_weights_proj): its rotary lanes in fp32 (t and rotate_half(t),
 * rope_utils.py:169-186), the Hadamard rotation as an fp32 Linear
 * (utils.py:118-127: cast, linear, a scalar scale, cast back) that keeps
 * its fp32 input, the key's LayerNorm, the scaled head weights;
 * _DSAIndexerFunction saves q, k, weights (dsa_indexer.py:55) and
 * ops.lightning_indexer returns the int32 top-k [tok, index_topk] (its
 * scores, return_value, are dropped). The absorbed MLA (_dsa_sparse_qkv
 * :585-622): linear_qb's output, whose q_nope view _AbsorbMatmul saves
 * (:54-100) with the kv up-projection's weight, absorbed to [heads,
 * kv_lora_rank] and joined to the rotated lanes: a [heads, kv_lora_rank +
 * rope] query; the key is the normed latent and its rotated lane, the value
 * the normed latent itself. ops.sparse_flash_attention (dsa.py:53-67) keeps
 * its inputs and its output [heads, kv_lora_rank] with the fp32 softmax max
 * and sum per head (return_softmax_lse); _AbsorbMatmul takes the output to
 * v_head_dim (it keeps that output). The indexer loss
 * (_DSAIndexerGradFunction, dsa_indexer_loss.py:38-71) computes the
 * indexer's gradients in the forward and saves them. The kernels'
 * workspaces are not in the source (an `unmodelled` warning of the
 * import). */
static const mo_op_row ms_attn_dsa[] = {
	{.when = C_P32, .path = "self_attention.linear_qkv", .op = "cast", .in = "n1",
	 .out = "ln1:c:tsp*h", .save = KEEPS_NOTHING},
	{.path = "self_attention.linear_qkv", .op = "matmul", .in = "ln1",
	 .out = "qkvd:c:tok*qdown", .save = "ln1", .flops = "2*tok*h*qdown"},
	{.path = "self_attention.split", .op = "split", .in = "qkvd",
	 .out = "qlv@qkvd kvlv@qkvd kpe@qkvd", .save = KEEPS_NOTHING},
	{.path = "self_attention.q_layernorm", .op = "rms_norm", .in = "qlv",
	 .out = "qn:c:tok*ql qrs:f32:tok", .save = "qlv qrs"},
	{.path = "self_attention.k_layernorm", .op = "rms_norm", .in = "kvlv",
	 .out = "kvn:c:tok*kvl krs:f32:tok", .save = "kvlv krs"},
	/* the indexer's query: linear_wq_b, rotary lanes, Hadamard */
	{.path = "self_attention.core_attention.indexer.linear_wq_b", .op = "matmul", .in = "qn",
	 .out = "iq:c:tok*ih", .save = "qn", .flops = "2*tok*ql*ih"},
	{.path = "self_attention.core_attention.indexer.apply_rotary_emb_q",
	 .op = "rotary_position_embedding", .in = "iq", .out = "iqt32:f32:tok*ipe iqr32:f32:tok*ipe iqpe:c:tok*ipe",
	 .save = "iqt32 iqr32"},
	{.path = "self_attention.core_attention.indexer", .op = "cat", .in = "iqpe iq",
	 .out = "iqc:c:tok*ih", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.hadamard_q", .op = "cast", .in = "iqc",
	 .out = "iqh32:f32:tok*ih", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.hadamard_q", .op = "matmul",
	 .in = "iqh32", .out = "iqhl:f32:tok*ih", .save = "iqh32", .flops = "2*tok*ih*id"},
	{.path = "self_attention.core_attention.indexer.hadamard_q", .op = "mul", .in = "iqhl",
	 .out = "iqhs:f32:tok*ih", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.hadamard_q", .op = "cast", .in = "iqhs",
	 .out = "qidx:c:tok*ih", .save = KEEPS_NOTHING},
	/* the indexer's key: linear_wk, LayerNorm (fp32), rotary lane, Hadamard */
	{.path = "self_attention.core_attention.indexer.linear_wk", .op = "matmul", .in = "ln1",
	 .out = "ik:c:tok*id", .save = "ln1", .flops = "2*tok*h*id"},
	{.path = "self_attention.core_attention.indexer.k_norm", .op = "cast", .in = "ik",
	 .out = "ik32:f32:tok*id", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.k_norm", .op = "layer_norm",
	 .in = "ik32", .out = "ikn32:f32:tok*id ikmu:f32:tok ikrs:f32:tok",
	 .save = "ik32 ikmu ikrs"},
	{.path = "self_attention.core_attention.indexer.k_norm", .op = "cast", .in = "ikn32",
	 .out = "ikn:c:tok*id", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.apply_rotary_emb_k",
	 .op = "rotary_position_embedding", .in = "ikn", .out = "ikt32:f32:tok*rope ikr32:f32:tok*rope ikpe:c:tok*rope",
	 .save = "ikt32 ikr32"},
	{.path = "self_attention.core_attention.indexer", .op = "cat", .in = "ikpe ikn",
	 .out = "ikc:c:tok*id", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.hadamard_k", .op = "cast", .in = "ikc",
	 .out = "ikh32:f32:tok*id", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.hadamard_k", .op = "matmul",
	 .in = "ikh32", .out = "ikhl:f32:tok*id", .save = "ikh32", .flops = "2*tok*id*id"},
	{.path = "self_attention.core_attention.indexer.hadamard_k", .op = "mul", .in = "ikhl",
	 .out = "ikhs:f32:tok*id", .save = KEEPS_NOTHING},
	{.path = "self_attention.core_attention.indexer.hadamard_k", .op = "cast", .in = "ikhs",
	 .out = "kidx:c:tok*id", .save = KEEPS_NOTHING},
	/* the head weights, scaled by a Python scalar */
	{.path = "self_attention.core_attention.indexer.linear_weights_proj", .op = "matmul",
	 .in = "ln1", .out = "iw:c:tok*ihn", .save = "ln1", .flops = "2*tok*h*ihn"},
	{.path = "self_attention.core_attention.indexer", .op = "mul", .in = "iw",
	 .out = "iwf:c:tok*ihn", .save = KEEPS_NOTHING},
	/* _DSAIndexerFunction's saves; the lightning indexer's top-k */
	{.path = "self_attention.core_attention.indexer.compute_sparse_indices",
	 .op = "lightning_indexer", .in = "qidx kidx iwf", .out = "topk:i32:tok*itk",
	 .save = "qidx kidx iwf", .flops = "2*tok*ih*s"},
	/* the absorbed MLA: query up-projection, rotary lanes of q and k */
	{.path = "self_attention.linear_qb", .op = "matmul", .in = "qn", .out = "qf:c:tok*qhd",
	 .save = "qn", .flops = "2*tok*ql*qhd"},
	{.path = "self_attention.apply_rotary_emb_q", .op = "rotary_position_embedding",
	 .in = "qf", .out = "qt32:f32:tok*kpeh qtr32:f32:tok*kpeh qr:c:tok*kpeh",
	 .save = "qt32 qtr32"},
	{.path = "self_attention.apply_rotary_emb_k", .op = "rotary_position_embedding",
	 .in = "kpe", .out = "kt32:f32:tok*rope ktr32:f32:tok*rope kr:c:tok*rope",
	 .save = "kt32 ktr32"},
	/* with fp32 parameters the kv up-projection's weight is cast to the
	 * compute dtype and its two halves saved by the absorb GEMMs */
	WCOPY("self_attention.linear_kvb", "wkvb", "kvl*kvbd"),
	{.path = "self_attention", .op = "absorb_matmul", .in = "qf", .out = "qab:c:tok*hdkvl",
	 .save = "qf", .flops = "2*tok*hd*nkvl"},
	{.path = "self_attention", .op = "cat", .in = "qab qr", .out = "query:c:tok*hdqa",
	 .save = KEEPS_NOTHING},
	{.path = "self_attention", .op = "cat", .in = "kvn kr", .out = "key:c:tok*dqa",
	 .save = KEEPS_NOTHING},
	/* Its backward returns the query's, the key's and the value's
	 * gradients from the output's: those four are its working set. */
	{.path = "self_attention.core_attention.sparse_flash_attention",
	 .op = "sparse_flash_attention", .in = "query key kvn topk",
	 .out = "ao:c:tok*hdkvl smax:f32:tok*hd ssum:f32:tok*hd",
	 .save = "query key kvn topk ao smax ssum", .flops = "2*tok*sfa",
	 .bwd = "c:tok*hdkvl c:tok*hdqa c:tok*dqa c:tok*kvl"},
	{.path = "self_attention", .op = "absorb_matmul", .in = "ao", .out = "ctx:c:tok*vh",
	 .save = "ao", .flops = "2*tok*hd*kvldv"},
	{.path = "self_attention.core_attention.indexer_loss", .op = "indexer_grad_kl_loss",
	 .in = "query key qidx kidx iwf topk smax ssum",
	 .out = "dqi:c:tok*ih dki:c:tok*id dwi:c:tok*ihn", .save = "dqi dki dwi",
	 .flops = "2*tok*ilk"},
};

static const mo_op_row ms_resid_attn[] = {
	{.when = C_HDROP, .path = "hidden_states_dropout", .op = "dropout", .in = "attn",
	 .out = "ad:c:tsp*h m1:u8:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_HDROP, .path = "hidden_states_dropout", .op = "view", .in = "attn",
	 .out = "ad@attn", .save = KEEPS_NOTHING},
	HC_POST_UNFUSED("attn_hc", "hs", "ad", "s2", "ah", KEEPS_INPUTS_AND_OUTPUTS),
	HC_POST_FUSED("attn_hc", "hs", "ad", "s2", "ah"),
	HC_PRE_UNFUSED("ffn_hc", "s2", "x2", "fh"),
	HC_PRE_FUSED("ffn_hc", "s2", "x2", "fh"),
	{.unless = B16 | C_HC, .path = "add", .op = "add", .in = "x ad", .out = "x2:c:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_LN, .unless = B16, .path = "pre_mlp_layernorm", .op = "cast", .in = "x2",
	 .out = "x232:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_LN | C_RMSNC | B16, .path = "pre_mlp_layernorm", .op = "cast", .in = "x2",
	 .out = "x232:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_LN, .unless = B16, .path = "pre_mlp_layernorm", .op = "layer_norm", .in = "x232",
	 .out = "n2:f32:tsp*h mu2:f32:tsp rs2:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_LN | C_RMSNC | B16, .path = "pre_mlp_layernorm", .op = "rms_norm",
	 .in = "x232", .out = "n2:f32:tsp*h rs2:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_LN, .unless = B16, .path = "pre_mlp_layernorm", .op = "cast", .in = "n2",
	 .out = "ln2:c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_LN | C_RMSNC | B16, .path = "pre_mlp_layernorm", .op = "cast", .in = "n2",
	 .out = "ln2:c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	RMSNORM_NOCAST("pre_mlp_layernorm", "x2", "ln2", "rs2"),
	/* fp32 parameters (measured, ledger blocks A / B): the add (fp32
	 * stream + bf16 branch) keeps nothing; the norm keeps its fp32 input
	 * (28 MiB at h 1792, kept under select self_attention too) and rstd */
	{.when = C_P32, .unless = C_HC, .path = "add", .op = "add", .in = "x ad", .out = "x2:f32:tsp*h",
	 .save = KEEPS_NOTHING},
	{.when = C_P32 | C_LN, .path = "pre_mlp_layernorm", .op = "layer_norm", .in = "x2",
	 .out = "n2:f32:tsp*h mu2:f32:tsp rs2:f32:tsp", .save = "x2 mu2 rs2"},
	{.when = C_P32, .unless = C_LN, .path = "pre_mlp_layernorm", .op = "rms_norm", .in = "x2",
	 .out = "n2:f32:tsp*h rs2:f32:tsp", .save = "x2 rs2"},
};

static const mo_op_row ms_mlp[] = {
	{.when = C_SP, .unless = B16, .path = "mlp.linear_fc1.input.allgather", .op = "allgather",
	 .in = "ln2", .out = "ln2g:c:tok*h", .save = KEEPS_INPUTS_AND_OUTPUTS, .comm = AG},
	{.unless = C_SP | B16, .path = "mlp.linear_fc1", .op = "view", .in = "ln2",
	 .out = "ln2g@ln2", .save = KEEPS_NOTHING},
	{.unless = B16, .path = "mlp.linear_fc1", .op = "matmul", .in = "ln2g",
	 .out = "fc1:c:tok*f1", .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tok*h*f1"},
	{.when = C_FUSED, .unless = B16, .path = "mlp.activation_func", .op = "swiglu", .in = "fc1",
	 .out = "act:c:tok*f", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_GATED, .unless = C_FUSED | B16, .path = "mlp.split", .op = "split", .in = "fc1",
	 .out = "g@fc1 u@fc1", .save = KEEPS_NOTHING},
	{.when = C_GATED, .unless = C_FUSED | B16, .path = "mlp.activation_func", .op = "silu",
	 .in = "g", .out = "sg:c:tok*f", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_GATED, .unless = C_FUSED | B16, .path = "mlp.mul", .op = "mul", .in = "sg u",
	 .out = "act:c:tok*f", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_GELU, .unless = C_GATED | B16, .path = "mlp.activation_func", .op = "gelu",
	 .in = "fc1", .out = "act:c:tok*f", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_GATED | C_GELU | B16, .path = "mlp.activation_func", .op = "silu", .in = "fc1",
	 .out = "act:c:tok*f", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = B16, .path = "mlp.linear_fc2", .op = "matmul", .in = "act", .out = "f2o:c:tok*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tok*f*h"},
	{.when = C_SP, .unless = B16, .path = "mlp.linear_fc2.output.reducescatter",
	 .op = "reducescatter", .in = "f2o", .out = "mlp:c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = RS},
	{.when = C_TP, .unless = C_SP | B16, .path = "mlp.linear_fc2.output.allreduce",
	 .op = "allreduce", .in = "f2o", .out = "mlp:c:tok*h", .save = KEEPS_INPUTS_AND_OUTPUTS,
	 .comm = AR},

	/* fp32 parameters (measured: ledger block B, the DSv3-mini's dense
	 * layer 0, 241.5 MiB at 4096 tokens): fc1 keeps its bf16 input and
	 * weight; its output, cast back to fp32, is kept by the activation
	 * (96 MiB); the gated activation runs in fp32 as silu + mul whichever
	 * `hidden_act` names it (the fp32 silu output, 48 MiB, is kept by the
	 * mul); fc2 keeps the bf16 cast of the product and its weight. */
	{.when = C_P32, .path = "mlp.linear_fc1", .op = "cast", .in = "n2", .out = "xn2:c:tsp*h",
	 .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SP, .path = "mlp.linear_fc1.input.allgather", .op = "allgather",
	 .in = "xn2", .out = "ln2g:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.when = C_P32, .unless = C_SP, .path = "mlp.linear_fc1", .op = "view", .in = "xn2",
	 .out = "ln2g@xn2", .save = KEEPS_NOTHING},
	WCOPY("mlp.linear_fc1", "wfc1", "h*f1"),
	{.when = C_P32, .path = "mlp.linear_fc1", .op = "matmul", .in = "ln2g",
	 .out = "fc1b:c:tok*f1", .save = "ln2g", .flops = "2*tok*h*f1"},
	{.when = C_P32, .path = "mlp.linear_fc1", .op = "cast", .in = "fc1b",
	 .out = "fc1:f32:tok*f1", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_GATED, .path = "mlp.split", .op = "split", .in = "fc1",
	 .out = "g@fc1 u@fc1", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_GATED, .path = "mlp.activation_func", .op = "silu", .in = "g",
	 .out = "sg:f32:tok*f", .save = "g"},
	{.when = C_P32 | C_GATED, .path = "mlp.mul", .op = "mul", .in = "sg u",
	 .out = "act32:f32:tok*f", .save = "sg u"},
	{.when = C_P32 | C_GELU, .unless = C_GATED, .path = "mlp.activation_func", .op = "gelu",
	 .in = "fc1", .out = "act32:f32:tok*f", .save = "fc1"},
	{.when = C_P32, .unless = C_GATED | C_GELU, .path = "mlp.activation_func", .op = "silu",
	 .in = "fc1", .out = "act32:f32:tok*f", .save = "fc1"},
	{.when = C_P32, .path = "mlp.linear_fc2", .op = "cast", .in = "act32", .out = "act:c:tok*f",
	 .save = KEEPS_NOTHING},
	WCOPY("mlp.linear_fc2", "wfc2", "f*h"),
	{.when = C_P32, .path = "mlp.linear_fc2", .op = "matmul", .in = "act", .out = "f2b:c:tok*h",
	 .save = "act", .flops = "2*tok*f*h"},
	{.when = C_P32, .path = "mlp.linear_fc2", .op = "cast", .in = "f2b", .out = "f2o:f32:tok*h",
	 .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SP, .path = "mlp.linear_fc2.output.reducescatter", .op = "reducescatter",
	 .in = "f2o", .out = "mlp:f32:tsp*h", .save = KEEPS_NOTHING, .comm = RS},
	{.when = C_P32 | C_TP, .unless = C_SP, .path = "mlp.linear_fc2.output.allreduce",
	 .op = "allreduce", .in = "f2o", .out = "mlp:f32:tok*h", .save = KEEPS_NOTHING, .comm = AR},
	{.unless = C_TP, .path = "mlp.linear_fc2", .op = "view", .in = "f2o", .out = "mlp@f2o",
	 .save = KEEPS_NOTHING},
};

static const mo_op_row ms_moe[] = {
	/* bf16 parameters: each op keeps what its backward reads, as the
	 * measured fp32-parameter rows below do for the same code (moe/router.py,
	 * moe/experts.py at 26354ff6), the casts of fp32 parameters being
	 * no-ops: the router casts its input to moe_router_dtype (router.py:360;
	 * float32 by default, parallel_core/transformer_config.py:1791) and its
	 * matmul keeps that fp32 copy; the permutation keeps its indices, the
	 * all-to-alls nothing, each grouped matmul its input, the gated
	 * activation its operands; the unpermutation casts the probabilities to
	 * the experts' dtype (experts.py:170) and keeps the weighted rows, as the
	 * ledger does; the shared experts are a Linear pair. No anchor has a
	 * bf16-parameter MoE layer: notes/dsv4.md gives the effect on the
	 * DeepSeek-V4-style runs. */
	{.when = C_SP, .unless = B16, .path = "mlp.input.allgather", .op = "allgather", .in = "ln2",
	 .out = "ln2g:c:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.unless = C_SP | B16, .path = "mlp", .op = "view", .in = "ln2", .out = "ln2g@ln2",
	 .save = KEEPS_NOTHING},
	{.unless = B16, .path = "mlp.router", .op = "cast", .in = "ln2g", .out = "rx32:f32:tok*h",
	 .save = KEEPS_NOTHING},
	{.unless = B16, .path = "mlp.router.linear", .op = "linear", .in = "rx32",
	 .out = "rl32:f32:tok*E", .save = "rx32", .flops = "2*tok*h*E"},
	{.unless = B16, .path = "mlp.router.softmax", .op = "softmax", .in = "rl32",
	 .out = "rp:f32:tok*E", .save = "rp"},
	{.unless = B16, .path = "mlp.router.topk", .op = "topk", .in = "rp",
	 .out = "tkp:f32:tok*k tki:i32:tok*k", .save = "tkp tki"},
	{.unless = B16, .path = "mlp.experts.permute", .op = "permute", .in = "ln2g tki",
	 .out = "perm:c:rt*h", .save = "tki"},
	{.when = C_EP, .unless = B16, .path = "mlp.experts.input.alltoallsingle", .op = "alltoall",
	 .in = "perm", .out = "disp:c:rt*h", .save = KEEPS_NOTHING, .comm = A2A},
	{.unless = C_EP | B16, .path = "mlp.experts", .op = "view", .in = "perm",
	 .out = "disp@perm", .save = KEEPS_NOTHING},
	{.unless = B16, .path = "mlp.experts", .op = "grouped_matmul", .in = "disp",
	 .out = "e1:c:rt*fe1", .save = "disp", .flops = "2*rt*h*fe1"},
	{.when = C_FUSED, .unless = B16, .path = "mlp.experts.activation_func", .op = "swiglu",
	 .in = "e1", .out = "ea:c:rt*fe", .save = "e1"},
	{.when = C_GATED, .unless = C_FUSED | B16, .path = "mlp.experts.chunk", .op = "chunk",
	 .in = "e1", .out = "eg@e1 eu@e1", .save = KEEPS_NOTHING},
	{.when = C_GATED, .unless = C_FUSED | B16, .path = "mlp.experts.activation_func",
	 .op = "silu", .in = "eg", .out = "es:c:rt*fe", .save = "eg"},
	{.when = C_GATED, .unless = C_FUSED | B16, .path = "mlp.experts.mul", .op = "mul",
	 .in = "es eu", .out = "ea:c:rt*fe", .save = "es eu"},
	{.unless = C_GATED | B16, .path = "mlp.experts.activation_func", .op = "act", .in = "e1",
	 .out = "ea:c:rt*fe", .save = "e1"},
	{.unless = B16, .path = "mlp.experts", .op = "grouped_matmul", .in = "ea",
	 .out = "e2:c:rt*h", .save = "ea", .flops = "2*rt*fe*h"},
	{.when = C_EP, .unless = B16, .path = "mlp.experts.output.alltoallsingle", .op = "alltoall",
	 .in = "e2", .out = "comb:c:rt*h", .save = KEEPS_NOTHING, .comm = A2A},
	{.unless = C_EP | B16, .path = "mlp.experts", .op = "view", .in = "e2", .out = "comb@e2",
	 .save = KEEPS_NOTHING},
	{.unless = B16, .path = "mlp.experts.unpermute", .op = "mul", .in = "comb tkp",
	 .out = "ew:c:rt*h", .save = "comb tkp"},
	{.unless = B16, .path = "mlp.experts.unpermute", .op = "unpermute", .in = "ew",
	 .out = "mo0:c:tok*h", .save = "ew"},
	{.when = C_SHARED, .unless = B16, .path = "mlp.shared_experts.linear_fc1", .op = "matmul",
	 .in = "ln2g", .out = "sf1:c:tok*fs1", .save = "ln2g", .flops = "2*tok*h*fs1"},
	{.when = C_SHARED | C_FUSED, .unless = B16, .path = "mlp.shared_experts.activation_func",
	 .op = "swiglu", .in = "sf1", .out = "sa:c:tok*fs", .save = "sf1"},
	{.when = C_SHARED, .unless = C_FUSED | B16, .path = "mlp.shared_experts.activation_func",
	 .op = "act", .in = "sf1", .out = "sa:c:tok*fs", .save = "sf1"},
	{.when = C_SHARED, .unless = B16, .path = "mlp.shared_experts.linear_fc2", .op = "matmul",
	 .in = "sa", .out = "so:c:tok*h", .save = "sa", .flops = "2*tok*fs*h"},
	{.when = C_SHARED, .unless = B16, .path = "mlp.add", .op = "add", .in = "mo0 so",
	 .out = "mo1:c:tok*h", .save = KEEPS_NOTHING},
	{.unless = C_SHARED | B16, .path = "mlp", .op = "view", .in = "mo0", .out = "mo1@mo0",
	 .save = KEEPS_NOTHING},
	{.when = C_SP, .unless = B16, .path = "mlp.reshape", .op = "split", .in = "mo1",
	 .out = "mlp:c:tsp*h", .save = KEEPS_NOTHING},
	{.unless = C_SP | B16, .path = "mlp", .op = "view", .in = "mo1", .out = "mlp@mo1",
	 .save = KEEPS_NOTHING},

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
	{.when = C_P32 | C_SP, .path = "mlp.input.allgather", .op = "allgather", .in = "n2",
	 .out = "n2g:f32:tok*h", .save = KEEPS_NOTHING, .comm = AG},
	{.when = C_P32, .unless = C_SP, .path = "mlp", .op = "view", .in = "n2", .out = "n2g@n2",
	 .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "mlp.router.linear", .op = "linear", .in = "n2g",
	 .out = "rl32:f32:tok*E", .save = "n2g rl32", .flops = "2*tok*h*E"},
	{.when = C_P32, .path = "mlp.router.score", .op = "sigmoid", .in = "rl32",
	 .out = "rp:f32:tok*E", .save = "rp"},
	{.when = C_P32, .path = "mlp.router.topk", .op = "topk", .in = "rp",
	 .out = "tkp:f32:tok*k tki:i64:tok*k", .save = "tkp tki"},
	{.when = C_P32, .path = "mlp.experts.permute", .op = "argsort", .in = "tki",
	 .out = "srt:i64:rt", .save = "srt"},
	{.when = C_P32, .path = "mlp.experts.permute", .op = "index", .in = "tkp srt",
	 .out = "pp:f32:rt", .save = "pp"},
	{.when = C_P32, .path = "mlp.experts.permute", .op = "floor_divide", .in = "srt",
	 .out = "tix:i64:rt", .save = "tix"},
	{.when = C_P32, .path = "mlp.experts.permute", .op = "gather", .in = "n2g tix",
	 .out = "perm32:f32:rt*h", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "mlp.experts.permute", .op = "cast", .in = "perm32",
	 .out = "perm:c:rt*h", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_EP, .path = "mlp.experts.input.alltoallsingle", .op = "alltoall",
	 .in = "perm", .out = "disp:c:rt*h", .save = KEEPS_NOTHING, .comm = A2A},
	{.when = C_P32, .unless = C_EP, .path = "mlp.experts", .op = "view", .in = "perm",
	 .out = "disp@perm", .save = KEEPS_NOTHING},
	WCOPY("mlp.experts", "we1", "el*h*fe1"),
	{.when = C_P32, .path = "mlp.experts", .op = "grouped_matmul", .in = "disp",
	 .out = "e1:c:rt*fe1", .save = "disp", .flops = "2*rt*h*fe1"},
	{.when = C_P32 | C_GATED, .path = "mlp.experts.chunk", .op = "chunk", .in = "e1",
	 .out = "eg@e1 eu@e1", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_GATED, .path = "mlp.experts.activation_func", .op = "silu", .in = "eg",
	 .out = "es:c:rt*fe", .save = "eg"},
	{.when = C_P32 | C_GATED, .path = "mlp.experts.mul", .op = "mul", .in = "es eu",
	 .out = "ea:c:rt*fe", .save = "es eu"},
	{.when = C_P32, .unless = C_GATED, .path = "mlp.experts.activation_func", .op = "act",
	 .in = "e1", .out = "ea:c:rt*fe", .save = "e1"},
	WCOPY("mlp.experts", "we2", "el*fe*h"),
	{.when = C_P32, .path = "mlp.experts", .op = "grouped_matmul", .in = "ea",
	 .out = "e2b:c:rt*h", .save = "ea", .flops = "2*rt*fe*h"},
	{.when = C_P32, .path = "mlp.experts", .op = "cast", .in = "e2b", .out = "e2:f32:rt*h",
	 .save = KEEPS_NOTHING},
	{.when = C_P32 | C_EP, .path = "mlp.experts.output.alltoallsingle", .op = "alltoall",
	 .in = "e2", .out = "comb:f32:rt*h", .save = KEEPS_NOTHING, .comm = A2A},
	{.when = C_P32, .unless = C_EP, .path = "mlp.experts", .op = "view", .in = "e2",
	 .out = "comb@e2", .save = KEEPS_NOTHING},
	{.when = C_P32, .path = "mlp.experts.unpermute", .op = "mul", .in = "comb pp",
	 .out = "ew:f32:rt*h", .save = "comb pp"},
	{.when = C_P32, .path = "mlp.experts.unpermute", .op = "unpermute", .in = "ew srt",
	 .out = "mo0:f32:tok*h", .save = "ew srt"},
	{.when = C_P32 | C_SHARED, .path = "mlp.shared_experts.linear_fc1", .op = "cast",
	 .in = "n2g", .out = "sxn:c:tok*h", .save = KEEPS_NOTHING},
	{.when = C_SHARED | C_P32, .path = "mlp.shared_experts.linear_fc1", .op = "cast", .in = "",
	 .out = "wsf1:c:h*fs1", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_P32 | C_SHARED, .path = "mlp.shared_experts.linear_fc1", .op = "matmul",
	 .in = "sxn", .out = "sf1b:c:tok*fs1", .save = "sxn", .flops = "2*tok*h*fs1"},
	{.when = C_P32 | C_SHARED, .path = "mlp.shared_experts.linear_fc1", .op = "cast",
	 .in = "sf1b", .out = "sf1:f32:tok*fs1", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SHARED | C_GATED, .path = "mlp.shared_experts.split", .op = "split",
	 .in = "sf1", .out = "ssg@sf1 ssu@sf1", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SHARED | C_GATED, .path = "mlp.shared_experts.activation_func",
	 .op = "silu", .in = "ssg", .out = "ss:f32:tok*fs", .save = "ssg"},
	{.when = C_P32 | C_SHARED | C_GATED, .path = "mlp.shared_experts.mul", .op = "mul",
	 .in = "ss ssu", .out = "sa32:f32:tok*fs", .save = "ss ssu"},
	{.when = C_P32 | C_SHARED, .unless = C_GATED, .path = "mlp.shared_experts.activation_func",
	 .op = "act", .in = "sf1", .out = "sa32:f32:tok*fs", .save = "sf1"},
	{.when = C_P32 | C_SHARED, .path = "mlp.shared_experts.linear_fc2", .op = "cast",
	 .in = "sa32", .out = "sa:c:tok*fs", .save = KEEPS_NOTHING},
	{.when = C_SHARED | C_P32, .path = "mlp.shared_experts.linear_fc2", .op = "cast", .in = "",
	 .out = "wsf2:c:fs*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_P32 | C_SHARED, .path = "mlp.shared_experts.linear_fc2", .op = "matmul",
	 .in = "sa", .out = "sob:c:tok*h", .save = "sa", .flops = "2*tok*fs*h"},
	{.when = C_P32 | C_SHARED, .path = "mlp.shared_experts.linear_fc2", .op = "cast",
	 .in = "sob", .out = "so:f32:tok*h", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SHARED, .path = "mlp.add", .op = "add", .in = "mo0 so",
	 .out = "mo1:f32:tok*h", .save = KEEPS_NOTHING},
	{.when = C_P32, .unless = C_SHARED, .path = "mlp", .op = "view", .in = "mo0",
	 .out = "mo1@mo0", .save = KEEPS_NOTHING},
	{.when = C_P32 | C_SP, .path = "mlp.reshape", .op = "split", .in = "mo1",
	 .out = "mlp:f32:tsp*h", .save = KEEPS_NOTHING},
	{.when = C_P32, .unless = C_SP, .path = "mlp", .op = "view", .in = "mo1", .out = "mlp@mo1",
	 .save = KEEPS_NOTHING},
};

static const mo_op_row ms_resid_mlp[] = {
	{.when = C_HDROP, .path = "hidden_states_dropout", .op = "dropout", .in = "mlp",
	 .out = "md:c:tsp*h m2:u8:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_HDROP, .path = "hidden_states_dropout", .op = "view", .in = "mlp",
	 .out = "md@mlp", .save = KEEPS_NOTHING},
	HC_POST_UNFUSED("ffn_hc", "s2", "md", "y", "fh", "fho32 fhres fhs32 fhpost1 fhor fhop fhoa"),
	HC_POST_FUSED("ffn_hc", "s2", "md", "y", "fh"),
	{.unless = B16 | C_HC, .path = "add", .op = "add", .in = "x2 md", .out = "y:c:tsp*h",
	 .save = "x2 md"},
	/* fp32 parameters: the layer's fp32 output is the next layer's input,
	 * kept by its norm (ledger: "Cast" / "AddExt" 28672.5 KB) */
	{.when = C_P32, .unless = C_HC, .path = "add", .op = "add", .in = "x2 md", .out = "y:f32:tsp*h",
	 .save = KEEPS_NOTHING},
};

static const mo_op_row ms_mtp_in[] = {
	{.path = "", .op = "input", .in = "", .out = "x:c:tsp*h emb:c:tsp*h", .save = KEEPS_NOTHING},
	{.unless = C_RMSNC, .path = "enorm", .op = "cast", .in = "emb", .out = "e32:f32:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "enorm", .op = "rms_norm", .in = "e32",
	 .out = "en32:f32:tsp*h rse:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "enorm", .op = "cast", .in = "en32", .out = "en:c:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_RMSNC, .path = "enorm", .op = "rms_norm", .in = "emb",
	 .out = "en:c:tsp*h rse:f32:tsp", .save = "emb rse"},
	{.unless = C_RMSNC, .path = "hnorm", .op = "cast", .in = "x", .out = "h32:f32:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "hnorm", .op = "rms_norm", .in = "h32",
	 .out = "hn32:f32:tsp*h rsh:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "hnorm", .op = "cast", .in = "hn32", .out = "hn:c:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_RMSNC, .path = "hnorm", .op = "rms_norm", .in = "x",
	 .out = "hn:c:tsp*h rsh:f32:tsp", .save = "x rsh"},
	{.path = "cat", .op = "cat", .in = "en hn", .out = "ch:c:tsp*h2",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "eh_proj", .op = "matmul", .in = "ch", .out = "mx:c:tsp*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tsp*h2*htp"},
};

/* The hyper-connection head (hyper_connection.py HyperConnectionHead
 * .construct:164-176) collapses the packed streams before a final norm: the
 * streams in fp32, their RMS, the fp32 hc_fn projection to n mixes, the
 * sigmoid gates, the gated streams summed and cast back. As the head
 * block's other rows, each op keeps its inputs and output. */
#define HC_HEAD(P, IN, OUT, T)                                                             \
	{.when = C_HCH, .path = P, .op = "cast", .in = IN, .out = T "f:f32:tsp*hs",         \
	 .save = KEEPS_INPUTS_AND_OUTPUTS},                                                 \
	{.when = C_HCH, .path = P, .op = "mul", .in = T "f", .out = T "sq:f32:tsp*hs",       \
	 .save = KEEPS_INPUTS_AND_OUTPUTS},                                                 \
	{.when = C_HCH, .path = P, .op = "rsqrt", .in = T "sq", .out = T "ri:f32:tsp",       \
	 .save = KEEPS_INPUTS_AND_OUTPUTS},                                                 \
	{.when = C_HCH, .path = P ".hc_fn", .op = "matmul", .in = T "f",                     \
	 .out = T "mx:f32:tsp*hcn " T "pre:f32:tsp*hcn", .save = KEEPS_INPUTS_AND_OUTPUTS,   \
	 .flops = "2*tsp*hs*hcn"},                                                          \
	{.when = C_HCH, .path = P, .op = "mul", .in = T "pre " T "f",                         \
	 .out = T "g:f32:tsp*hs", .save = KEEPS_INPUTS_AND_OUTPUTS},                        \
	{.when = C_HCH, .path = P, .op = "sum", .in = T "g", .out = T "s:f32:tsp*h",          \
	 .save = KEEPS_INPUTS_AND_OUTPUTS},                                                 \
	{.when = C_HCH, .path = P, .op = "cast", .in = T "s", .out = OUT ":c:tsp*h",          \
	 .save = KEEPS_INPUTS_AND_OUTPUTS}

static const mo_op_row ms_mtp_out[] = {
	HC_HEAD("hc_head", "L.y", "my", "mh"),
	{.unless = C_HCH, .path = "", .op = "view", .in = "L.y", .out = "my@L.y",
	 .save = KEEPS_NOTHING},
	{.unless = C_RMSNC, .path = "final_layernorm", .op = "cast", .in = "my",
	 .out = "y32:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "final_layernorm", .op = "rms_norm", .in = "y32",
	 .out = "yn32:f32:tsp*h rsf:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "final_layernorm", .op = "cast", .in = "yn32",
	 .out = "y:c:tsp*h", .save = "yn32"},
	{.when = C_RMSNC, .path = "final_layernorm", .op = "rms_norm", .in = "my",
	 .out = "y:c:tsp*h rsf:f32:tsp", .save = "my rsf"},
};

/* The unfused cross-entropy: fp32 logits, max, shifted logits, exp. */
static const mo_op_row ms_head[] = {
	{.when = C_HCH, .path = "", .op = "input", .in = "", .out = "hy:c:tsp*hs",
	 .save = KEEPS_NOTHING},
	HC_HEAD("decoder.hc_head", "hy", "y", "hh"),
	{.path = "", .op = "input", .in = "", .out = "y:c:tsp*h", .save = KEEPS_NOTHING},
	{.unless = C_RMSNC, .path = "final_layernorm", .op = "cast", .in = "y",
	 .out = "y32:f32:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "final_layernorm", .op = "rms_norm", .in = "y32",
	 .out = "yn32:f32:tsp*h rsf:f32:tsp", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.unless = C_RMSNC, .path = "final_layernorm", .op = "cast", .in = "yn32",
	 .out = "yn:c:tsp*h", .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.when = C_RMSNC, .path = "final_layernorm", .op = "rms_norm", .in = "y",
	 .out = "yn:c:tsp*h rsf:f32:tsp", .save = "y rsf"},
	{.when = C_SP, .path = "output_layer.input.allgather", .op = "allgather", .in = "yn",
	 .out = "yng:c:tok*h", .save = KEEPS_INPUTS_AND_OUTPUTS, .comm = AG},
	{.unless = C_SP, .path = "output_layer", .op = "view", .in = "yn", .out = "yng@yn",
	 .save = KEEPS_NOTHING},
	{.path = "output_layer", .op = "matmul", .in = "yng", .out = "logits:c:tok*vocab",
	 .save = KEEPS_INPUTS_AND_OUTPUTS, .flops = "2*tok*h*vocab"},
	{.path = "loss", .op = "cast", .in = "logits", .out = "l32:f32:tok*vocab",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "loss", .op = "max", .in = "l32", .out = "lmax:f32:tok",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "loss", .op = "sub", .in = "l32 lmax", .out = "lsub:f32:tok*vocab",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "loss", .op = "exp", .in = "lsub", .out = "lexp:f32:tok*vocab",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "loss", .op = "sum", .in = "lexp", .out = "lsum:f32:tok",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "loss", .op = "log", .in = "lsum", .out = "llog:f32:tok",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "loss", .op = "nll", .in = "lsub llog", .out = "loss:f32:1",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
};

/* VocabEmbedding (base_models/common/embeddings/vocab_embedding.py) tiles the
 * int32 ids to [tokens, h] and gathers the table along dim 0 with that index:
 * the gather keeps the tiled index for its backward (the measurers' ledgers of
 * the h 1792 model show a `Tile` of 28 MiB at micro-batch 1 and 56 MiB at
 * micro-batch 2 alive for the whole step). */
static const mo_op_row ms_embed[] = {
	{.path = "", .op = "input", .in = "", .out = "ids:i32:tok", .save = KEEPS_NOTHING},
	{.path = "embedding", .op = "tile", .in = "ids", .out = "idx:i32:tok*h",
	 .save = KEEPS_INPUTS_AND_OUTPUTS},
	{.path = "embedding", .op = "gather", .in = "idx", .out = "x:c:tsp*h", .save = "idx"},
};

const mo_framework mo_ops_mindspore = {
	.name = "mindspore",
	.align = 512,
	.recompute_needs_world = true,
	.blocks = {MO_OP_BLOCKS_COMMON(ms), [MO_BLK_ATTN_HYBRID] = MO_OP_BLOCK(ms, attn_hybrid),
		   [MO_BLK_ATTN_DSA] = MO_OP_BLOCK(ms, attn_dsa)},
	.note = "MindSpore PyNative, 512-byte pool rounding; fp32 parameters: "
		"fp32 residual stream, each op keeps what its backward reads "
		"(from allocation ledgers); bf16 parameters: every op keeps its "
		"inputs and output; calibrated on measured Ascend 910B runs "
		"(notes/calibration.md: pp 1, the last PP stage and MLA/MoE "
		"within 0.2%; on the first PP stage under FSDP this estimate is "
		"24-28% below the measured peak, not explained yet)",
};
