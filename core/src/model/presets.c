/* Built-in model presets (model files in docs/model-file.md's spelling, parsed by the same
 * reader as user files) and device presets. */
#include "model/model_internal.h"

#include <string.h>
#include <strings.h>

/* ---- devices ---------------------------------------------------------------
 * memory_gib: device memory as the runtime reports it.
 *   Ascend 910B (910B2/910B3): 64 GB HBM2e = 65536 MiB (Huawei Atlas 800T A2
 *   datasheet; npu-smi "HBM-Usage(MB) .../65536").
 *   A100 80GB SXM: 81920 MiB (nvidia-smi; NVIDIA A100 datasheet "80GB HBM2e").
 *   H100 SXM5 80GB: 81559 MiB = 79.6 GiB (nvidia-smi; H100 datasheet).
 *   H200 SXM 141GB: 143771 MiB = 140.4 GiB (nvidia-smi; H200 datasheet).
 * tflops: SUSTAINED dense bf16 matmul rate, taken as ~70% of the datasheet
 *   dense peak (an assumption: large-GEMM efficiency; calibrate per site).
 *   Peaks: 910B ~313 TFLOPS fp16/bf16 (Atlas 800T A2: 8 x 910B = 2.5
 *   PFLOPS fp16); A100 312; H100 SXM 989; H200 SXM 989 (NVIDIA datasheets,
 *   dense, without sparsity).
 * host_bandwidth_gbs: effective host<->device copy rate over the host link
 *   for pinned memory (assumption from the link generation): 910B PCIe 5.0
 *   x16 (64 GB/s raw; Atlas 800T A2 datasheet) -> 48; A100 PCIe 4.0 x16
 *   (32 GB/s raw) -> 25; H100 / H200 PCIe 5.0 x16 -> 50.
 * collective_bandwidth_gbs: per-direction device interconnect bandwidth
 *   within a node: 910B HCCS 392 GB/s total (7 links x 56 GB/s, both
 *   directions) -> 196; A100 NVLink3 600 GB/s bidirectional -> 300;
 *   H100 / H200 NVLink4 900 GB/s bidirectional -> 450 (NVIDIA datasheets).
 * reserved_gib: memory the runtime keeps from the framework's pool:
 *   910B: MindSpore Transformers configs set max_device_memory 58GB of 64
 *   (context, HCCL and system) -> 6; CUDA devices: context + NCCL buffers
 *   ~1 GiB (assumption; measured values vary by driver).
 * comm_buffer_mib: memory each collective group (TP, CP, DP, PP, EP) holds:
 *   HCCL_BUFFSIZE default 200 MB on Ascend; NCCL ~32 MiB per communicator
 *   (NCCL_BUFFSIZE 4 MiB x channels; assumption).
 * fragmentation: share of the allocated peak the pool reserves on top
 *   (block rounding, freed blocks that cannot be reused): 5% (assumption;
 *   PyTorch's reserved/allocated ratio on steady training is typically
 *   1.02-1.10).
 * workspace_mib: GEMM workspaces a PyTorch run allocates at its first GEMM
 *   and keeps (through the caching allocator, so in memory_allocated); the
 *   estimate adds them for framework pytorch only (MindSpore's workspace is
 *   inside its calibrated rules: ascend-910b 0). Transformer Engine's one
 *   GEMM workspace (NVIDIA/TransformerEngine d0067d0d,
 *   transformer_engine/pytorch/cpp_extensions/gemm.py
 *   get_cublas_workspace_size_bytes: 32 MiB + 1024 B on compute capability
 *   >= 9, 4 MiB below) and PyTorch's cuBLAS workspace per (handle, stream)
 *   (aten/src/ATen/cuda/CublasHandlePool.cpp, parseChosenWorkspaceSize:
 *   CUBLAS_WORKSPACE_CONFIG=:4096:8, which Megatron-LM's CI sets and which
 *   is Hopper's default, is 8 x 4096 KiB = 32 MiB), one for the forward's
 *   thread and one for autograd's device thread:
 *   A100 (sm80) 2 x 32 + 4 = 68; H100 / H200 (sm90) 2 x 32 + 32 MiB + 1 KiB.
 *   (Without that variable an A100 takes :4096:2:16:8 = 8.125 MiB per
 *   handle: set workspace_mib 20.25 in a device map.)
 * gemm_workspace_mib: that one Transformer Engine workspace; a run whose
 *   experts are a grouped GEMM (Megatron's --moe-grouped-gemm, TE's
 *   GroupedLinear) keeps 4 more of it (gemm.py get_cublas_workspace with
 *   grouped_gemm: one per tex.get_num_cublas_streams(), which is
 *   nvte_get_num_compute_streams, 4: common/util/multi_stream.cpp:53). */
struct mo_device_row {
	const char *name;
	double mem, host, tflops, reserved, coll, buf, frag, ws, gemm_ws;
};

static const struct mo_device_row mo_devices[] = {
	{"ascend-910b", 64.0, 48.0, 220.0, 6.0, 196.0, 200.0, 0.05, 0.0, 0.0},
	{"a100", 80.0, 25.0, 220.0, 1.0, 300.0, 32.0, 0.05, 68.0, 4.0},
	{"h100", 79.6, 50.0, 690.0, 1.0, 450.0, 32.0, 0.05, 96.0 + 1.0 / 1024, 32.0 + 1.0 / 1024},
	{"h200", 140.4, 50.0, 690.0, 1.0, 450.0, 32.0, 0.05, 96.0 + 1.0 / 1024, 32.0 + 1.0 / 1024},
};

#define MO_NDEV (sizeof(mo_devices) / sizeof(*mo_devices))

/* ---- the time model's constants (estimate_time.c) ---------------------------
 * peak_tflops: dense 16-bit tensor peak (datasheets, without sparsity):
 *   H100 SXM5 989.4, A100 SXM 312, H200 SXM 989.4; Ascend 910B 313
 *   (Atlas 800T A2: 8 x 910B = 2.5 PFLOPS fp16).
 * gemm_efficiency: share of the peak a large bf16 GEMM reaches; the
 *   FlashAttention-2 paper (Dao 2023, section 1) puts optimized GEMMs at
 *   80-90% of the A100's peak (0.80 here). The measured ceiling, bf16
 *   matmul at its best shape (Maximum Achievable Matmul FLOPS table,
 *   stas00/ml-engineering compute/accelerator/README.md), is 85.9% on A100
 *   SXM and 80.1% on H100 SXM (792.1 of 989, CUDA 12.1). H100: 0.75, below
 *   that ceiling. It is an assumption: the README's compute-bound MFU rows
 *   and the 7B CI runs are slower than 0.80 prices them
 *   (notes/step-time.md, "Named causes" 2), and `memopt calibrate` refits
 *   it from measured steps. Small GEMMs lose more by wave
 *   quantisation over compute_units and by the HBM roofline (below).
 * attention_efficiency: fused (flash / cuDNN) attention forward +
 *   backward: FlashAttention-2 on A100 reaches 50-73% of peak with causal
 *   masks at head dim 64-128 (Dao 2023, figures 4-5: 0.60); FlashAttention-3
 *   (Shah et al. 2024, figures 5-7) shows cuDNN / FA3 forward at 60-75%
 *   and backward at 45-55% of the H100 peak with causal masks (0.50).
 *   Measured at a training shape (Dao-AILab/flash-attention#1893, H100,
 *   head dim 128, causal, sequence 8192, 16 heads): cuDNN forward 565.7
 *   TFLOPS, its deterministic backward 469.8: 57% and 47% of the peak,
 *   50% over the backward's 2.5 x the forward's FLOPs.
 * hbm_gbs: achieved by streaming kernels: 90% of the datasheet bandwidth
 *   (STREAM-like copies reach 88-92%): H100 SXM5 3350 -> 3015, A100 80GB
 *   2039 -> 1835, H200 4800 -> 4320; 910B 1600 (HBM2e; assumption: public
 *   figures vary) -> 1440.
 * intra_node_gbs: the collective bus bandwidth inside a node, as
 *   nccl-tests report it for ring all-reduce on 8 GPUs: DGX A100 about
 *   230 GB/s (NVLink3, 300 GB/s a direction), DGX H100 about 360 GB/s
 *   (NVLink4, 450 GB/s a direction, without NVLS); 910B: HCCS 196 GB/s a
 *   direction x 0.75 -> 147 (assumption, the NVLink ratio).
 * inter_node_gbs: one NIC per device at 90%: DGX H100 ConnectX-7
 *   400 Gb/s -> 45 GB/s; DGX A100 HDR 200 Gb/s -> 22.5; Atlas 800T A2
 *   RoCE 200 Gb/s -> 22.5.
 * link_latency_us: one ring step of a collective (NCCL's per-hop latency
 *   on NVLink is a few microseconds; 5 here, an assumption).
 * launch_us: host time of one op of the op tables under PyTorch eager
 *   (Python module call, autograd, the kernels' launches): where an op's
 *   device time is shorter the step is host-bound. A named measurement,
 *   not a datasheet figure: the median over the Megatron-LM CI runs in
 *   tests/data/megatron/steptime of (measured step - modelled device
 *   time) / ops, rounded: 150 us on the DGX H100 CI hosts, 230 us on the
 *   DGX A100 ones (notes/step-time.md; H200 assumed as H100), taken when
 *   the time model was first held against those runs. Fitted on the runs
 *   it is judged by, so not a source: with today's kernel count (the
 *   unfused attention's batched GEMMs and the attention projections
 *   launch 3 kernels each) the same median is 133 / 193 us and the runs
 *   spread 94-291 / 112-258 us a kernel, which one constant a cluster
 *   cannot describe; it is left as it was rather than refitted. MindSpore
 *   Transformers runs graph mode (whole graphs issued at once): 0.
 * step_overhead_ms: per-step host work of the framework outside the
 *   kernels the op tables name (data loading, loss averaging, gradient
 *   norm and clipping, logging): 0 unless a calibration names it.
 * devices_per_node: 8 (DGX A100 / H100 / H200, Atlas 800T A2).
 * compute_units: SMs (A100 108, H100 SXM5 132, H200 132) or AI cores
 *   (910B: 24 cube units, assumption: 910B2); gemm_tile: the output tile
 *   of one unit, 128 x 256 (cuBLAS / CUTLASS bf16 kernels' largest
 *   common tile). */
struct mo_device_time_row {
	const char *name;
	double peak, gemm, attn, hbm, intra, inter, lat, launch, fixed, per_node, units, tile;
};

static const struct mo_device_time_row mo_device_times[] = {
	{"ascend-910b", 313.0, 0.75, 0.50, 1440.0, 147.0, 22.5, 5.0, 0.0, 0.0, 8, 24, 128},
	{"a100", 312.0, 0.80, 0.60, 1835.0, 230.0, 22.5, 5.0, 230.0, 0.0, 8, 108, 128},
	{"h100", 989.4, 0.75, 0.50, 3015.0, 360.0, 45.0, 5.0, 150.0, 0.0, 8, 132, 128},
	{"h200", 989.4, 0.75, 0.50, 4320.0, 360.0, 45.0, 5.0, 150.0, 0.0, 8, 132, 128},
};

static void device_time_preset(mo_device *out, const char *name)
{
	for (size_t i = 0; i < sizeof mo_device_times / sizeof *mo_device_times; i++) {
		const struct mo_device_time_row *t = &mo_device_times[i];
		if (strcasecmp(name, t->name) != 0)
			continue;
		out->peak_tflops = t->peak;
		out->gemm_efficiency = t->gemm;
		out->attention_efficiency = t->attn;
		out->hbm_gbs = t->hbm;
		out->intra_node_gbs = t->intra;
		out->inter_node_gbs = t->inter;
		out->link_latency_us = t->lat;
		out->launch_us = t->launch;
		out->step_overhead_ms = t->fixed;
		out->devices_per_node = t->per_node;
		out->compute_units = t->units;
		out->gemm_tile = t->tile;
		return;
	}
}

size_t mo_device_preset_count(void)
{
	return MO_NDEV;
}

const char *mo_device_preset_name(size_t i)
{
	return i < MO_NDEV ? mo_devices[i].name : NULL;
}

double mo_device_preset_memory_gib(size_t i)
{
	return i < MO_NDEV ? mo_devices[i].mem : 0.0;
}

int device_preset(mo_device *out, const char *name)
{
	for (size_t i = 0; i < MO_NDEV; i++) {
		const struct mo_device_row *d = &mo_devices[i];
		if (strcasecmp(name, d->name) != 0)
			continue;
		out->name = d->name;
		out->memory_gib = d->mem;
		out->host_bandwidth_gbs = d->host;
		out->tflops = d->tflops;
		out->reserved_gib = d->reserved;
		out->collective_bandwidth_gbs = d->coll;
		out->comm_buffer_mib = d->buf;
		out->fragmentation = d->frag;
		out->workspace_mib = d->ws;
		out->gemm_workspace_mib = d->gemm_ws;
		device_time_preset(out, d->name);
		return 0;
	}
	return -1;
}

/* ---- models ---------------------------------------------------------------- */

struct mo_preset {
	const char *name, *description, *yaml;
};

/* The calibration dense model of tests/calibration/ascend-910b.md (A), with `groups` KV groups
 * and `training` extra lines: its MHA and GQA presets differ in nothing else. */
#define CALIBRATION_DENSE(groups, training)                                                      \
	"model:\n"                                                                               \
	"  num_layers: 8\n"                                                                      \
	"  hidden_size: 2048\n"                                                                  \
	"  ffn_hidden_size: 8192\n"                                                              \
	"  num_attention_heads: 32\n"                                                            \
	"  num_query_groups: " groups "\n"                                                       \
	"  kv_channels: 64\n"                                                                    \
	"  vocab_size: 129280\n"                                                                 \
	"  untie_embeddings_and_output_weights: true\n"                                          \
	"  seq_length: 4096\n"                                                                   \
	"  normalization: RMSNorm\n"                                                             \
	"  hidden_act: swiglu\n"                                                                 \
	"  attention: flash\n"                                                                   \
	"training:\n"                                                                            \
	"  micro_batch_size: 1\n"                                                                \
	"  global_batch_size: 2\n"                                                               \
	"  compute_dtype: bfloat16\n"                                                            \
	"  params_dtype: bfloat16\n" training                                                    \
	"parallel:\n"                                                                            \
	"  world_size: 2\n"                                                                      \
	"  data_parallel_shard: 2\n"                                                             \
	"device: ascend-910b\n"

static const struct mo_preset mo_presets[] = {
	{"llama2-7b", "Llama-2-7B: 32 dense layers, MHA, SwiGLU; 8 devices, DP 8",
	 "model:\n"
	 "  num_layers: 32\n"
	 "  hidden_size: 4096\n"
	 "  ffn_hidden_size: 11008\n"
	 "  num_attention_heads: 32\n"
	 "  num_query_groups: 32\n"
	 "  vocab_size: 32000\n"
	 "  untie_embeddings_and_output_weights: true\n"
	 "  seq_length: 4096\n"
	 "  normalization: RMSNorm\n"
	 "  hidden_act: swiglu\n"
	 "  attention: flash\n"
	 "training:\n"
	 "  micro_batch_size: 1\n"
	 "  micro_batch_num: 1\n"
	 "  compute_dtype: bfloat16\n"
	 "  params_dtype: float32\n"
	 "  optimizer: adamw\n"
	 "parallel:\n"
	 "  world_size: 8\n"
	 "  data_parallel: 8\n"
	 "  tensor_parallel: 1\n"
	 "  pipeline_parallel: 1\n"
	 "device: ascend-910b\n"},
	{"llama3-70b",
	 "Llama-3-70B: 80 dense layers, GQA 64/8, SwiGLU; 64 devices, TP 8 PP 4 "
	 "DP 2",
	 "model:\n"
	 "  num_layers: 80\n"
	 "  hidden_size: 8192\n"
	 "  ffn_hidden_size: 28672\n"
	 "  num_attention_heads: 64\n"
	 "  num_query_groups: 8\n"
	 "  kv_channels: 128\n"
	 "  vocab_size: 128256\n"
	 "  untie_embeddings_and_output_weights: true\n"
	 "  seq_length: 8192\n"
	 "  normalization: RMSNorm\n"
	 "  hidden_act: swiglu\n"
	 "  attention: flash\n"
	 "training:\n"
	 "  micro_batch_size: 1\n"
	 "  micro_batch_num: 16\n"
	 "  compute_dtype: bfloat16\n"
	 "  params_dtype: float32\n"
	 "  optimizer: adamw\n"
	 "parallel:\n"
	 "  world_size: 64\n"
	 "  data_parallel: 2\n"
	 "  tensor_parallel: 8\n"
	 "  pipeline_parallel: 4\n"
	 "  sequence_parallel: true\n"
	 "device: ascend-910b\n"},
	{"mixtral-8x7b",
	 "Mixtral-8x7B: 32 MoE layers, 8 experts top-2, GQA 32/8; 16 devices, "
	 "TP 2 EP 4 DP 8",
	 "model:\n"
	 "  num_layers: 32\n"
	 "  hidden_size: 4096\n"
	 "  ffn_hidden_size: 14336\n"
	 "  num_attention_heads: 32\n"
	 "  num_query_groups: 8\n"
	 "  vocab_size: 32000\n"
	 "  untie_embeddings_and_output_weights: true\n"
	 "  seq_length: 4096\n"
	 "  normalization: RMSNorm\n"
	 "  hidden_act: swiglu\n"
	 "  num_moe_experts: 8\n"
	 "  moe_router_topk: 2\n"
	 "  moe_ffn_hidden_size: 14336\n"
	 "training:\n"
	 "  micro_batch_size: 1\n"
	 "  micro_batch_num: 1\n"
	 "  compute_dtype: bfloat16\n"
	 "  params_dtype: float32\n"
	 "parallel:\n"
	 "  world_size: 16\n"
	 "  data_parallel: 8\n"
	 "  tensor_parallel: 2\n"
	 "  expert_parallel: 4\n"
	 "  sequence_parallel: true\n"
	 "device: ascend-910b\n"},
	{"qwen3-30b-a3b",
	 "Qwen3-30B-A3B: 48 MoE layers, 128 experts top-8, GQA 32/4, QK-norm; "
	 "8 devices, EP 8",
	 "model:\n"
	 "  num_layers: 48\n"
	 "  hidden_size: 2048\n"
	 "  ffn_hidden_size: 6144\n"
	 "  num_attention_heads: 32\n"
	 "  num_query_groups: 4\n"
	 "  kv_channels: 128\n"
	 "  qk_layernorm: true\n"
	 "  vocab_size: 151936\n"
	 "  untie_embeddings_and_output_weights: true\n"
	 "  seq_length: 4096\n"
	 "  hidden_act: swiglu\n"
	 "  num_moe_experts: 128\n"
	 "  moe_router_topk: 8\n"
	 "  moe_ffn_hidden_size: 768\n"
	 "training:\n"
	 "  micro_batch_size: 1\n"
	 "  micro_batch_num: 1\n"
	 "parallel:\n"
	 "  world_size: 8\n"
	 "  data_parallel: 8\n"
	 "  expert_parallel: 8\n"
	 "device: ascend-910b\n"},
	{"deepseek-v3",
	 "DeepSeek-V3-like: 61 layers (3 dense), MLA, 256 experts top-8 + 1 "
	 "shared, MTP 1; 256 devices, PP 8 EP 32 DP 32",
	 "model:\n"
	 "  num_layers: 61\n"
	 "  mtp_num_layers: 1\n"
	 "  hidden_size: 7168\n"
	 "  ffn_hidden_size: 18432\n"
	 "  num_attention_heads: 128\n"
	 "  vocab_size: 129280\n"
	 "  untie_embeddings_and_output_weights: true\n"
	 "  seq_length: 4096\n"
	 "  normalization: RMSNorm\n"
	 "  hidden_act: fusedswiglu\n"
	 "  multi_latent_attention: true\n"
	 "  q_lora_rank: 1536\n"
	 "  kv_lora_rank: 512\n"
	 "  qk_nope_head_dim: 128\n"
	 "  qk_rope_head_dim: 64\n"
	 "  v_head_dim: 128\n"
	 "  num_moe_experts: 256\n"
	 "  moe_router_topk: 8\n"
	 "  moe_ffn_hidden_size: 2048\n"
	 "  moe_shared_expert_intermediate_size: 2048\n"
	 "  first_k_dense_replace: 3\n"
	 "training:\n"
	 "  micro_batch_size: 1\n"
	 "  micro_batch_num: 16\n"
	 "  compute_dtype: bfloat16\n"
	 "  params_dtype: float32\n"
	 "parallel:\n"
	 "  world_size: 256\n"
	 "  data_parallel: 32\n"
	 "  data_parallel_shard: 32\n"
	 "  pipeline_parallel: 8\n"
	 "  expert_parallel: 32\n"
	 "device: ascend-910b\n"},
	{"std",
	 "Calibration dense model (ascend-910b.md A): 8 layers, hidden 2048, "
	 "32 heads MHA, FFN 8192; 2 devices, FSDP 2",
	 CALIBRATION_DENSE("32", "  optimizer: adamw\n"
				 "  framework: mindspore\n")},
	{"std-gqa",
	 "Calibration dense model (ascend-910b.md A), GQA variant: 8 KV groups",
	 CALIBRATION_DENSE("8", "")},
	{"dsv3-mini",
	 "Calibration MLA+MoE model (ascend-910b.md B): 4 layers (first dense), "
	 "8 experts top-4 + 1 shared; 2 devices, FSDP 2",
	 "model:\n"
	 "  num_layers: 4\n"
	 "  hidden_size: 1792\n"
	 "  ffn_hidden_size: 3072\n"
	 "  num_attention_heads: 8\n"
	 "  vocab_size: 129280\n"
	 "  untie_embeddings_and_output_weights: true\n"
	 "  seq_length: 4096\n"
	 "  normalization: RMSNorm\n"
	 "  hidden_act: fusedswiglu\n"
	 "  attention: flash\n"
	 "  multi_latent_attention: true\n"
	 "  q_lora_rank: 1536\n"
	 "  kv_lora_rank: 512\n"
	 "  qk_nope_head_dim: 128\n"
	 "  qk_rope_head_dim: 64\n"
	 "  v_head_dim: 192\n"
	 "  qk_layernorm: true\n"
	 "  num_moe_experts: 8\n"
	 "  moe_router_topk: 4\n"
	 "  moe_ffn_hidden_size: 1024\n"
	 "  moe_shared_expert_intermediate_size: 1024\n"
	 "  first_k_dense_replace: 1\n"
	 "training:\n"
	 "  micro_batch_size: 1\n"
	 "  global_batch_size: 2\n"
	 "  compute_dtype: bfloat16\n"
	 "  params_dtype: float32\n"
	 "  optimizer: adamw\n"
	 "parallel:\n"
	 "  world_size: 2\n"
	 "  data_parallel_shard: 2\n"
	 "device: ascend-910b\n"},
};

#define MO_NPRESETS (sizeof(mo_presets) / sizeof(*mo_presets))

size_t mo_presets_count(void)
{
	return MO_NPRESETS;
}

const char *mo_preset_name(size_t i)
{
	return i < MO_NPRESETS ? mo_presets[i].name : NULL;
}

const char *mo_preset_description(size_t i)
{
	return i < MO_NPRESETS ? mo_presets[i].description : NULL;
}

const char *mo_preset_yaml(size_t i)
{
	return i < MO_NPRESETS ? mo_presets[i].yaml : NULL;
}
