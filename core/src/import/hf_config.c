/* A Hugging Face config.json beyond the shared key table: what its
 * model_type and its own keys say that the flat keys do not. The class
 * (transformers' configuration_<type>.py / modeling_<type>.py) decides a
 * field's meaning and default; where the file names an architecture memopt
 * does not price (hybrid linear-attention or Mamba layers, a vision or audio
 * encoder, an encoder-decoder), it is refused as `unsupported` at the key
 * that says so, never priced as the plain decoder its flat keys look like.
 * Sources: huggingface/transformers at 008e5743 (src/transformers/models/). */
#include "import/import_internal.h"

#include <string.h>

/* Model types whose layers are not all attention + FFN decoder layers, or
 * which are not decoders, with what they are: hybrid linear attention
 * (qwen3_next's Gated DeltaNet: configuration_qwen3_next.py:131-136, three
 * of every four layers `linear_attention` by default; Qwen3.5 likewise;
 * MiniMax-Text-01's lightning attention), state-space and recurrent layers,
 * encoders and encoder-decoders. */
static const struct {
	const char *type, *what;
} hf_unsupported_types[] = {
	{"qwen3_next", "a hybrid linear-attention model (Gated DeltaNet layers)"},
	{"qwen3_5", "a multimodal, hybrid linear-attention model (Gated DeltaNet layers)"},
	{"qwen3_5_moe", "a multimodal, hybrid linear-attention model (Gated DeltaNet layers)"},
	{"minimax", "a hybrid linear-attention model (lightning attention layers)"},
	{"mamba", "a state-space model (Mamba layers)"},
	{"mamba2", "a state-space model (Mamba2 layers)"},
	{"falcon_mamba", "a state-space model (Mamba layers)"},
	{"jamba", "a hybrid Mamba model"},
	{"zamba", "a hybrid Mamba model"},
	{"zamba2", "a hybrid Mamba model"},
	{"bamba", "a hybrid Mamba model"},
	{"falcon_h1", "a hybrid Mamba model"},
	{"granitemoehybrid", "a hybrid Mamba model"},
	{"nemotron_h", "a hybrid Mamba model"},
	{"rwkv", "a recurrent model (RWKV)"},
	{"recurrent_gemma", "a recurrent model (Griffin)"},
	{"lfm2", "a hybrid convolution model"},
	{"bert", "an encoder"},
	{"roberta", "an encoder"},
	{"xlm-roberta", "an encoder"},
	{"albert", "an encoder"},
	{"electra", "an encoder"},
	{"deberta", "an encoder"},
	{"deberta-v2", "an encoder"},
	{"distilbert", "an encoder"},
	{"vit", "an image encoder"},
	{"vit_mae", "an image encoder"},
	{"swin", "an image encoder"},
	{"clip", "a multimodal encoder"},
	{"t5", "an encoder-decoder"},
	{"mt5", "an encoder-decoder"},
	{"umt5", "an encoder-decoder"},
	{"bart", "an encoder-decoder"},
	{"mbart", "an encoder-decoder"},
	{"whisper", "an encoder-decoder (speech)"},
	{NULL, NULL}};

/* Keys that by their presence make the model multimodal (the language
 * model is one part: Llama4Config, Qwen3VLConfig hold it under
 * text_config beside vision_config) or hybrid (Nemotron-H's
 * hybrid_override_pattern, configuration_nemotron_h.py: `M` Mamba2,
 * `*` attention, `-` MLP layers; Qwen3-Next's full_attention_interval and
 * linear_* head counts; Jamba's attn_layer_period). */
static const struct {
	const char *key, *what;
} hf_unsupported_keys[] = {
	{"vision_config", "a multimodal model (a vision encoder beside the language model)"},
	{"audio_config", "a multimodal model (an audio encoder beside the language model)"},
	{"text_config", "a multimodal model (its language model under text_config)"},
	{"hybrid_override_pattern", "a hybrid Mamba model (Mamba2 layers among the attention layers)"},
	{"full_attention_interval", "a hybrid linear-attention model (linear-attention layers between full ones)"},
	{"linear_num_value_heads", "a hybrid linear-attention model (linear-attention layers)"},
	{"attn_layer_period", "a hybrid Mamba model (attention every attn_layer_period layers)"},
	{NULL, NULL}};

static const char *hf_type_refused(const char *type)
{
	for (size_t i = 0; type && hf_unsupported_types[i].type; i++)
		if (strcmp(hf_unsupported_types[i].type, type) == 0)
			return hf_unsupported_types[i].what;
	return NULL;
}

/* layer_types (transformers' per-layer attention kinds): full and sliding
 * attention are priced (the estimate's flash attention keeps no s x s
 * scores either way); any other kind (linear_attention, mamba, ...) is a
 * layer memopt has no op table for. Returns the first such entry. */
static const mo_node *hf_other_layer_type(const mo_node *types)
{
	if (!types || types->kind != MO_NODE_SEQ)
		return NULL;
	for (size_t i = 0; i < types->n; i++) {
		const char *s = model_str(types->items[i]);
		if (s && strcmp(s, "full_attention") != 0 && strcmp(s, "sliding_attention") != 0)
			return types->items[i];
	}
	return NULL;
}

static void hf_refuse(mo_diags *diags, const char *file, const mo_node *at, const char *path,
		      const char *what)
{
	diags_add_at(diags, MO_SEV_ERROR, "unsupported", file, at, path,
		     "%s: %s; memopt prices decoder language models of attention and FFN "
		     "layers, not this architecture",
		     path, what);
}

bool hf_config_refused(mo_diags *diags, const char *file, const mo_node *root)
{
	if (!root || root->kind != MO_NODE_MAP)
		return false;
	const mo_node *key = NULL;
	const mo_node *type = map_get_kv(root, "model_type", &key);
	const char *what = hf_type_refused(type ? model_str(type) : NULL);
	if (what) {
		hf_refuse(diags, file, type, "model_type", what);
		return true;
	}
	for (size_t i = 0; hf_unsupported_keys[i].key; i++) {
		const mo_node *v = map_get_kv(root, hf_unsupported_keys[i].key, &key);
		if (v && !model_is_null(v)) {
			hf_refuse(diags, file, key, hf_unsupported_keys[i].key, hf_unsupported_keys[i].what);
			return true;
		}
	}
	const mo_node *other = hf_other_layer_type(map_get(root, "layer_types"));
	if (other) {
		hf_refuse(diags, file, other, "layer_types",
			  "a hybrid model (layers other than full or sliding attention)");
		return true;
	}
	bool encdec = false;
	const mo_node *ed = map_get_kv(root, "is_encoder_decoder", &key);
	if (ed && scalar_bool(ed, &encdec) && encdec) {
		hf_refuse(diags, file, key, "is_encoder_decoder", "an encoder-decoder model");
		return true;
	}
	return false;
}

/* A field the class fixes and the file does not give, at the model_type
 * key (the class decides it). */
static void hf_fix_bool(struct mo_rd *r, enum mo_mf f, bool *field, const mo_node *at)
{
	if (r->m->ext->set[f])
		return;
	*field = true;
	model_mark(r, f, at, "model_type");
}

/* DeepSeek-V4 (DeepseekV4Config, mindspore-ai/mindformers 167a50de
 * mindformers/models/deepseek4/configuration_deepseek_v4.py:149-214): the
 * class fixes the hybrid attention (experimental_attention_variant
 * dsv4_hybrid, on an MLA config: transformer_config.py:2897-2900) and mHC
 * (enable_hyper_connections); its head_dim is the one head width of the
 * queries, the shared key / value head and the output
 * (deepseek_v4_hybrid_attention.py:65-66: q_head_dim = v_head_dim), and
 * qk_nope_head_dim = head_dim - qk_rope_head_dim (configuration_deepseek_v4.py:238). */
static void hf_deepseek_v4(struct mo_rd *r, const mo_node *root, const mo_node *type)
{
	mo_model *m = r->m;
	struct mo_model_ext *x = m->ext;
	if (!x->set[MF_ATTN_VARIANT]) {
		m->dsv4_hybrid = true;
		model_mark(r, MF_ATTN_VARIANT, type, "model_type");
	}
	hf_fix_bool(r, MF_MLA, &m->multi_latent_attention, type);
	hf_fix_bool(r, MF_HC, &m->hyper_connections, type);
	const mo_node *head = map_get(root, "head_dim");
	if (!x->set[MF_V_HEAD] && head && x->set[MF_KV_CHANNELS]) {
		m->v_head_dim = m->kv_channels;
		model_mark(r, MF_V_HEAD, head, "head_dim");
	}
	if (!x->set[MF_QK_NOPE] && head && m->v_head_dim > m->qk_rope_head_dim) {
		m->qk_nope_head_dim = m->v_head_dim - m->qk_rope_head_dim;
		model_mark(r, MF_QK_NOPE, head, "head_dim");
	}
}

/* The class's fixed parts its config.json has no key for:
 * - Qwen2 / Qwen2-MoE (Qwen1.5, Qwen2, Qwen2.5): biases on Q, K and V
 *   (modeling_qwen2.py Qwen2Attention: q_proj, k_proj, v_proj bias=True,
 *   o_proj bias=False; modeling_qwen2_moe.py likewise);
 * - Qwen3 / Qwen3-MoE: RMSNorms on queries and keys per head
 *   (modeling_qwen3.py, modeling_qwen3_moe.py Qwen3Attention q_norm, k_norm);
 * - gpt-oss: biases on every linear layer, the experts' included
 *   (modeling_gpt_oss.py: GptOssAttention's projections bias=attention_bias,
 *   true in its files; GptOssExperts gate_up_proj_bias, down_proj_bias;
 *   GptOssTopKRouter bias);
 * - `use_qk_norm` (MiniMax-M2's key): the same norms on queries and keys. */
static void hf_type_fixed(struct mo_rd *r, const mo_node *root)
{
	mo_model *m = r->m;
	const mo_node *type = map_get(root, "model_type");
	const char *ts = type ? model_str(type) : NULL;
	if (ts && (strcmp(ts, "qwen2") == 0 || strcmp(ts, "qwen2_moe") == 0))
		hf_fix_bool(r, MF_QKV_BIAS, &m->add_qkv_bias, type);
	if (ts && (strcmp(ts, "qwen3") == 0 || strcmp(ts, "qwen3_moe") == 0))
		hf_fix_bool(r, MF_QK_LN, &m->qk_layernorm, type);
	if (ts && strcmp(ts, "gpt_oss") == 0) {
		hf_fix_bool(r, MF_BIAS, &m->add_bias_linear, type);
		hf_fix_bool(r, MF_QKV_BIAS, &m->add_qkv_bias, type);
	}
	/* DeepSeek-V3.2 (DeepseekV32ForCausalLM): every MLA layer builds the
	 * lightning indexer its index_* keys size (MLA.__init__'s
	 * `self.indexer = Indexer(args)`, inference/model.py of
	 * deepseek-ai/DeepSeek-V3.2-Exp): the attention the `dsa` variant prices */
	if (ts && strcmp(ts, "deepseek_v32") == 0 && !m->ext->set[MF_ATTN_VARIANT]) {
		m->dsa = true;
		model_mark(r, MF_ATTN_VARIANT, type, "model_type");
	}
	if (ts && strcmp(ts, "deepseek_v4") == 0)
		hf_deepseek_v4(r, root, type);
	const mo_node *key = NULL;
	const mo_node *qkn = map_get_kv(root, "use_qk_norm", &key);
	bool on = false;
	if (qkn && scalar_bool(qkn, &on) && on && !m->ext->set[MF_QK_LN]) {
		m->qk_layernorm = true;
		model_mark(r, MF_QK_LN, qkn, "use_qk_norm");
	}
}

/* What changes memory that the estimate does not model, said at its key:
 * an indexer (index_n_heads / index_head_dim / index_topk) in a model type
 * other than DeepSeek-V3.2's (read as the `dsa` variant above), and dense
 * FFN layers among the MoE ones other than the first first_k_dense_replace
 * (Qwen2-MoE / Qwen3-MoE mlp_only_layers and decoder_sparse_step,
 * modeling_qwen3_moe.py Qwen3MoeDecoderLayer: a layer is sparse when it is
 * not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0; the
 * estimate makes every layer after the first dense ones MoE). */
static void hf_unmodelled(struct mo_rd *r, const mo_node *root)
{
	const mo_node *key = NULL;
	const mo_node *topk = map_get_kv(root, "index_topk", &key);
	if (topk && !r->m->dsa && !r->m->dsv4_hybrid && !map_get(root, "compress_ratios"))
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", r->file, key, "index_topk",
			     "index_topk: the estimate does not model DeepSeek-V3.2's DSA indexer "
			     "(index_n_heads, index_head_dim, index_topk) and its loss; the MLA op "
			     "table stands for the attention, the indexer's weights are not counted");
	if (r->m->num_moe_experts <= 0)
		return;
	const mo_node *dense = map_get_kv(root, "mlp_only_layers", &key);
	if (dense && dense->kind == MO_NODE_SEQ && dense->n > 0)
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", r->file, key, "mlp_only_layers",
			     "mlp_only_layers: the estimate makes every layer a MoE layer; the "
			     "dense FFN layers listed are priced as MoE layers");
	int64_t step = 1;
	bool ovf = false;
	const mo_node *sparse = map_get_kv(root, "decoder_sparse_step", &key);
	if (sparse && scalar_int(sparse, &step, &ovf) && step > 1)
		diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", r->file, key,
			     "decoder_sparse_step",
			     "decoder_sparse_step: only every %lld-th layer is a MoE layer; the "
			     "estimate prices every layer as one",
			     (long long)step);
}

void hf_config_read(struct mo_rd *r, const mo_node *root)
{
	/* the vocabulary is the embedding's rows as given (modeling_llama.py
	 * LlamaModel: nn.Embedding(config.vocab_size, hidden_size)): no
	 * Megatron padding */
	if (!r->m->ext->set[MF_VOCAB_DIV]) {
		r->m->make_vocab_size_divisible_by = 1;
		r->m->ext->set[MF_VOCAB_DIV] = true;
	}
	hf_type_fixed(r, root);
	hf_unmodelled(r, root);
	hf_config_refused(r->diags, r->file, root);
}
