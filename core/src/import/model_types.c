/* Published defaults of the model types MindSpore Transformers' configs/
 * and research/ name: what a field a file leaves out becomes. A
 * `use_legacy: False` file names its type in `model_type` and omits every
 * field equal to the configuration class's default; a legacy file names
 * its config class in `type`. Each row cites the class it comes from
 * (MindSpore Transformers master f52743c unless said otherwise). */
#include "import/import_internal.h"

#include <strings.h>

#define MF_MASTER "mindformers master f52743c "

static const struct mo_type_defaults mo_types[] = {
	/* legacy config classes (r1.x `type:`) */
	{.name = "GPT2Config",
	 .source = "GPT2Config (mindformers/models/gpt2/gpt2_config.py, r1.0.0: "
		   "expand_ratio 4, LayerNorm, GeLU, tied head, learned positions, "
		   "dropout 0.1)",
	 .layers = 12, .hidden = 768, .heads = 12, .vocab = 50257, .seq = 1024,
	 .expand_ratio = 4, .tied = true, .gpt = true,
	 .positions = "learned_absolute", .hidden_dropout = 0.1, .attention_dropout = 0.1},
	{.name = "BloomConfig",
	 .source = "BloomConfig (mindformers/models/bloom/bloom_config.py, r1.0.0: "
		   "FFN 4h, LayerNorm, GeLU, tied head, ALiBi, dropout 0.1)",
	 .layers = 30, .hidden = 4096, .heads = 32, .vocab = 250880, .seq = 2048,
	 .expand_ratio = 4, .tied = true, .gpt = true, .positions = "none",
	 .hidden_dropout = 0.1, .attention_dropout = 0.1},
	{.name = "GLMConfig",
	 .source = "GLMConfig (mindformers/models/glm/glm_config.py, r1.0.0: "
		   "ChatGLM-6B, FFN 4h, LayerNorm, GeLU; GLMHead keeps its own "
		   "weight: glm.py lm_head(output_states))",
	 .layers = 28, .hidden = 4096, .heads = 32, .vocab = 130528, .seq = 512,
	 .expand_ratio = 4, .gpt = true},
	{.name = "WizardCoderConfig",
	 .source = "WizardCoderConfig (research/wizardcoder/wizardcoder_config.py, "
		   "r1.0.0: StarCoder, multi-query attention, FFN 4h, LayerNorm, GeLU, "
		   "tied head, learned positions, dropout 0.1)",
	 .layers = 40, .hidden = 6144, .heads = 48, .kv = 1, .vocab = 49153,
	 .seq = 8192, .expand_ratio = 4, .tied = true, .gpt = true,
	 .positions = "learned_absolute", .kv_tiled = true, .hidden_dropout = 0.1,
	 .attention_dropout = 0.1},
	{.name = "IFlytekSparkConfig",
	 .source = "IFlytekSparkConfig (research/iflytekspark/iflytekspark_config.py, "
		   "v1.0.2 45d1fa53; iflytekspark_layers.py IFlytekSparkMLP: fc0 and fc1 "
		   "ffn_hidden_size // 2 wide, gate_gelu, fc2 back; _LayerNorm; "
		   "IFlytekSparkLinear biases; rotary positions; iflytekspark_model.py: "
		   "lm_head(output_states, word_table), the tied head)",
	 .layers = 40, .hidden = 5120, .ffn = 28672, .heads = 40, .vocab = 60000,
	 .seq = 32768, .tied = true, .gpt = true, .ffn_halves = true},
	{.name = "LlamaConfig",
	 .source = "LlamaConfig (mindformers/models/llama/llama_config.py; "
		   "llama_transformer.py: head_dim = dim // n_heads)",
	 .layers = 32, .hidden = 4096, .heads = 32, .vocab = 32000,
	 .seq = 2048, .legacy_ffn = true, .no_head_dim = true},
	{.name = "TelechatConfig",
	 .source = "TelechatConfig (research/telechat2/telechat_config.py)",
	 .layers = 32, .hidden = 4096, .heads = 32, .vocab = 32000,
	 .seq = 2048, .legacy_ffn = true, .no_head_dim = true},
	{.name = "InternLM2Config",
	 .source = "InternLM2Config (research/internlm2/internlm2_config.py)",
	 .layers = 32, .hidden = 4096, .ffn = 14336, .heads = 32, .kv = 8,
	 .vocab = 92544, .seq = 2048, .legacy_ffn = true, .no_head_dim = true},
	{.name = "ChatGLM2Config",
	 .source = "ChatGLM2Config (mindformers/models/glm2/glm2_config.py; "
		   "glm2_transformer.py: query_key_value sharded (mp) by columns, "
		   "K/V tiled per head, so TP may exceed multi_query_group_num)",
	 .layers = 28, .hidden = 4096, .ffn = 13696, .heads = 32, .kv = 2,
	 .head_dim = 128, .vocab = 65024, .seq = 2048, .kv_tiled = true},
	{.name = "DeepseekV2Config",
	 .source = "DeepseekV2Config (research/deepseek2/deepseek2_config.py, "
		   "r1.3.0)",
	 .layers = 30, .hidden = 4096, .ffn = 12288, .heads = 32, .kv = 32,
	 .vocab = 102400, .seq = 2048, .q_lora = 1536, .kv_lora = 512,
	 .qk_nope = 128, .qk_rope = 64, .v_head = 128, .legacy_ffn = true,
	 .legacy_moe_ffn = true},
	{.name = "DeepseekV3Config",
	 .source = "DeepseekV3Config (research/deepseek3/deepseek3_config.py, "
		   "r1.5.0)",
	 .layers = 32, .hidden = 4096, .ffn = 18432, .heads = 32,
	 .vocab = 129280, .seq = 2048, .q_lora = 1536, .kv_lora = 512,
	 .qk_nope = 128, .qk_rope = 64, .v_head = 128, .legacy_ffn = true,
	 .legacy_moe_ffn = true},
	/* use_legacy: False (`model_type:`) */
	{.name = "deepseek_v3",
	 .source = "DeepseekV3Config (mindformers 167a50de "
		   "mindformers/models/deepseek3/configuration_deepseek_v3.py:161-187; "
		   "the same defaults in v1.6.0 to v1.8.0, the releases with the class)",
	 .layers = 61, .hidden = 7168, .ffn = 18432, .heads = 128, .kv = 128,
	 .vocab = 129280, .seq = 4096, .experts = 256, .topk = 8,
	 .moe_ffn = 2048, .n_shared = 1, .first_dense = 3, .mtp = 1,
	 .q_lora = 1536, .kv_lora = 512, .qk_nope = 128, .qk_rope = 64,
	 .v_head = 128},
	{.name = "qwen3",
	 .source = "Qwen3Config (" MF_MASTER
		   "mindformers/models/qwen3/configuration_qwen3.py)",
	 .layers = 32, .hidden = 4096, .ffn = 22016, .heads = 32, .kv = 32,
	 .head_dim = 128, .vocab = 151936, .qk_layernorm = true},
	{.name = "qwen3_moe",
	 .source = "Qwen3MoeConfig (" MF_MASTER
		   "mindformers/models/qwen3_moe/configuration_qwen3_moe.py)",
	 .layers = 24, .hidden = 2048, .ffn = 6144, .heads = 32, .kv = 4,
	 .vocab = 151936, .experts = 128, .topk = 8, .moe_ffn = 768,
	 .qk_layernorm = true},
	{.name = "qwen2",
	 .source = "Qwen2Config (" MF_MASTER
		   "mindformers/models/qwen2/configuration_qwen2.py)",
	 .layers = 32, .hidden = 4096, .ffn = 22016, .heads = 32, .kv = 32,
	 .vocab = 151936},
	{.name = "glm4",
	 .source = "Glm4Config (" MF_MASTER
		   "mindformers/models/glm4/configuration_glm4.py)",
	 .layers = 40, .hidden = 4096, .ffn = 13696, .heads = 32, .kv = 2,
	 .head_dim = 128, .vocab = 151552},
	{.name = "glm4_moe",
	 .source = "Glm4MoeConfig (" MF_MASTER
		   "mindformers/models/glm4_moe/configuration_glm4_moe.py)",
	 .layers = 46, .hidden = 4096, .ffn = 10944, .heads = 96, .kv = 8,
	 .vocab = 151552, .experts = 128, .topk = 8, .moe_ffn = 1408,
	 .n_shared = 1, .first_dense = 1},
	{.name = "telechat3",
	 .source = "TeleChat3Config (" MF_MASTER
		   "mindformers/models/telechat3/configuration_telechat3.py)",
	 .layers = 4, .hidden = 2560, .ffn = 7680, .heads = 32, .kv = 32,
	 .vocab = 131072, .seq = 4096, .experts = 192, .topk = 8,
	 .moe_ffn = 1536, .n_shared = 1, .first_dense = 3, .mtp = 1,
	 .q_lora = 1536, .kv_lora = 512, .qk_nope = 128, .qk_rope = 64,
	 .v_head = 128},
};

const struct mo_type_defaults *model_type_find(const char *name)
{
	for (size_t i = 0; i < sizeof(mo_types) / sizeof(*mo_types); i++)
		if (strcasecmp(mo_types[i].name, name) == 0)
			return &mo_types[i];
	return NULL;
}
