/* Keys of a graph-mode model_config that one legacy config class names its
 * own way: the same name means another thing, or nothing, in another
 * class, so each is looked up with the class the file names (`type`).
 * Sources: MindSpore Transformers (github.com/mindspore-ai/mindformers) at
 * the release tags of the files that carry the keys, cited per row. */
#include "import/import_internal.h"

#include <string.h>

enum class_rule {
	CR_AS,            /* the class's name for the model-file key `as` */
	CR_NOT_MEMORY,    /* the class reads it, or only stores it: what a
			   * training step keeps is the same */
	CR_MOE_SWITCH,    /* PanguAlphaConfig's use_moe */
	CR_MOE_EXPERTS,   /* ... its expert_num, read when use_moe is on */
	CR_MOE_TOPK,      /* ... its per_token_num_experts_chosen */
	CR_SANDWICH,      /* GLM's layernorm_order */
	CR_FINAL_NORM,    /* GLM's use_final_layernorm */
	CR_CLASSIFIER,    /* GPT-2's num_labels */
	CR_SELECT_RECOMPUTE,
	CR_OUT_BIAS,      /* TeleChat's wo_has_bias */
};

struct class_key {
	const char *cls, *key;
	enum class_rule rule;
	const char *as; /* CR_AS: the model-file key it is read as */
};

static const struct class_key mo_class_keys[] = {
	/* GLMConfig (ChatGLM-6B; mindformers/models/glm at v1.0.0, the same
	 * at v1.2.0): the FFN width (layers.py:35-57 MLPWithGEGLU: dense_h_to_4h
	 * hidden -> inner_hidden_size, twice that for GEGLU, dense_4h_to_h
	 * back); the head width (attention.py:176-181: query_key_value hidden
	 * -> 3 x heads x hidden_size_per_attention_head, dense back; None:
	 * hidden / heads); activation_func GELU or GEGLU (layers.py:51-57) */
	{"GLMConfig", "inner_hidden_size", CR_AS, "ffn_hidden_size"},
	{"GLMConfig", "hidden_size_per_attention_head", CR_AS, "kv_channels"},
	{"GLMConfig", "activation_func", CR_AS, "hidden_act"},
	{"GLMConfig", "layernorm_order", CR_SANDWICH, NULL},
	{"GLMConfig", "use_final_layernorm", CR_FINAL_NORM, NULL},
	/* stored by glm_config.py:195, read by no module */
	{"GLMConfig", "is_enhanced_encoder", CR_NOT_MEMORY, NULL},
	/* IFlytekSparkConfig (research/iflytekspark at v1.0.2 45d1fa53):
	 * dropout_rate is the attention probabilities' dropout
	 * (iflytekspark_layers.py:461, :477, :484) and the hidden one
	 * (:1216 hidden_dropout_p); compute_type the linears' and attention's
	 * compute dtype (:428, :848); seq_parallel shards the norms, dropouts
	 * and residual adds over model_parallel (:942-960, :1271-1290);
	 * sparse_local_size bounds the flash attention's pre_tokens (:474,
	 * :482, the same saved tensors) and the inference cache (:507), the
	 * training mask stays [b, s, s] (iflytekspark_model.py:62-66, built
	 * without it); is_reward_model is only stored (iflytekspark_model.py:56) */
	{"IFlytekSparkConfig", "dropout_rate", CR_AS, "hidden_dropout"},
	{"IFlytekSparkConfig", "dropout_rate", CR_AS, "attention_dropout"},
	{"IFlytekSparkConfig", "compute_type", CR_AS, "compute_dtype"},
	{"IFlytekSparkConfig", "seq_parallel", CR_AS, "sequence_parallel"},
	{"IFlytekSparkConfig", "sparse_local_size", CR_NOT_MEMORY, NULL},
	{"IFlytekSparkConfig", "is_reward_model", CR_NOT_MEMORY, NULL},
	/* WizardCoderConfig (research/wizardcoder/wizardcoder.py:187-190 at
	 * v1.0.0, :224-227 at v1.1.0): the learned position table has
	 * n_position rows; dropout_prob is the embedding's dropout (:197,
	 * :233), as emb_dropout_prob elsewhere */
	{"WizardCoderConfig", "n_position", CR_AS, "max_position_embeddings"},
	{"WizardCoderConfig", "dropout_prob", CR_NOT_MEMORY, NULL},
	{"WizardCoderConfig", "use_select_recompute", CR_SELECT_RECOMPUTE, NULL},
	{"BloomConfig", "use_select_recompute", CR_SELECT_RECOMPUTE, NULL},
	/* PanguAlphaConfig (mindformers/models/pangualpha at v1.0.0):
	 * pangualpha.py:257-261 builds MoEConfig(expert_num,
	 * num_experts_chosen=per_token_num_experts_chosen) when use_moe, else
	 * MoEConfig(expert_num=1); dropout_rate is no parameter of the class
	 * (pangualpha_config.py:37-66), kept by **kwargs and read by no module */
	{"PanguAlphaConfig", "use_moe", CR_MOE_SWITCH, NULL},
	{"PanguAlphaConfig", "expert_num", CR_MOE_EXPERTS, NULL},
	{"PanguAlphaConfig", "per_token_num_experts_chosen", CR_MOE_TOPK, NULL},
	{"PanguAlphaConfig", "dropout_rate", CR_NOT_MEMORY, NULL},
	{"GPT2Config", "num_labels", CR_CLASSIFIER, NULL},
	{"TelechatConfig", "wo_has_bias", CR_OUT_BIAS, NULL},
	/* YiZhaoConfig (research/yizhao at v1.5.0): alpha and beta weigh the
	 * DPO and SFT losses (yizhao.py:356-357, :396); use_llama_rope picks
	 * the rotary layout (yizhao_transformer.py:238, :260); lm_head_dp is
	 * read by no module of the release */
	{"YiZhaoConfig", "alpha", CR_NOT_MEMORY, NULL},
	{"YiZhaoConfig", "beta", CR_NOT_MEMORY, NULL},
	{"YiZhaoConfig", "use_llama_rope", CR_NOT_MEMORY, NULL},
	{"YiZhaoConfig", "lm_head_dp", CR_NOT_MEMORY, NULL},
	{NULL, NULL, CR_NOT_MEMORY, NULL}};

static void class_unmodelled(struct mo_rd *r, const mo_node *key, const char *path,
			     const char *what)
{
	diags_add_at(r->diags, MO_SEV_WARNING, "unmodelled", r->file, key, path, "%s: %s", path,
		     what);
}

static bool class_flag(struct mo_rd *r, const mo_node *v, const char *path, bool *out)
{
	return !model_is_null(v) && model_read_bool(r, v, path, out);
}

/* GLM's layernorm_order: 'sandwich' adds third_layernorm and
 * fourth_layernorm on the attention's and the MLP's outputs
 * (layers.py:202-204 and their forward, v1.0.0); 'pre' and 'post' only move
 * the two norms (the same tensors). */
static void class_sandwich(struct mo_rd *r, const mo_node *key, const mo_node *v,
			   const char *path)
{
	const char *s = model_str(v);
	if (s && strcmp(s, "sandwich") == 0)
		class_unmodelled(r, key, path,
				 "the estimate does not model the sandwich order's two extra "
				 "LayerNorms per layer: their weights and saved inputs "
				 "(2 x [s, b, h]) are left out");
}

/* GLM's use_final_layernorm False drops the final LayerNorm (glm.py:172,
 * v1.0.0; :185 at v1.2.0): the estimate keeps one. */
static void class_final_norm(struct mo_rd *r, const mo_node *key, const mo_node *v,
			     const char *path)
{
	bool on = true;
	if (class_flag(r, v, path, &on) && !on)
		class_unmodelled(r, key, path,
				 "the estimate does not model a model without its final "
				 "LayerNorm: it counts that norm's weights and saved input "
				 "([s, b, h]) although the run has none");
}

/* GPT2ForSequenceClassification (mindformers/models/gpt2/gpt2.py:213-228
 * at v1.0.0 and v1.2.0) puts score, a [hidden, num_labels] Linear, where
 * GPT2LMHeadModel has the vocabulary-wide head; num_labels is read by that
 * model only. */
static void class_classifier(struct mo_rd *r, const mo_node *key, const char *path)
{
	if (r->arch_type && strcmp(r->arch_type, "GPT2ForSequenceClassification") == 0)
		class_unmodelled(r, key, path,
				 "the estimate does not model a sequence-classification head "
				 "(GPT2ForSequenceClassification, num_labels outputs): it prices "
				 "the language-model head, whose vocabulary-wide logits and loss "
				 "the run does not have, so its figures are high");
}

/* use_select_recompute (BloomConfig, mindformers/models/bloom/bloom.py:
 * 101-106 and layers.py:119-128 at v1.0.0; WizardCoderConfig,
 * research/wizardcoder/wizardcoder.py:237-246 and wizardcoder_modules.py:
 * 195-207 at v1.0.0): the layer's full recompute off, the attention's
 * scores, softmax and dropout recomputed instead. */
static void class_select_recompute(struct mo_rd *r, const mo_node *key, const mo_node *v,
				   const char *path)
{
	bool on = false;
	if (class_flag(r, v, path, &on) && on)
		class_unmodelled(r, key, path,
				 "the estimate does not model the class's own select recompute: "
				 "it turns the layers' full recompute (recompute_config) off and "
				 "recomputes the attention scores, softmax and dropout only, so "
				 "with recompute on the run keeps more than the figures say");
}

/* TeleChat's wo_has_bias (research/telechat/telechat_transformer.py:189-200
 * at v1.5.0; True by default, telechat_config.py:129): a bias on the
 * attention's output projection alone, which add_bias_linear cannot say. */
static void class_out_bias(struct mo_rd *r, const mo_node *key, const mo_node *v,
			   const char *path)
{
	bool on = false;
	if (class_flag(r, v, path, &on) && on)
		class_unmodelled(r, key, path,
				 "the estimate does not model a bias on the output projection "
				 "alone: its hidden_size values per layer (and their gradients "
				 "and optimizer states) are left out");
}

static void class_apply(struct mo_rd *r, const struct class_key *c, const mo_node *key,
			const mo_node *v, const char *path)
{
	switch (c->rule) {
	case CR_AS:
		model_read_as(r, c->as, v, path);
		break;
	case CR_NOT_MEMORY:
		break;
	case CR_MOE_SWITCH:
		if (class_flag(r, v, path, &r->class_moe))
			r->class_moe_set = true;
		break;
	case CR_MOE_EXPERTS:
		r->class_experts = v;
		r->class_experts_path = path;
		break;
	case CR_MOE_TOPK:
		r->class_topk = v;
		r->class_topk_path = path;
		break;
	case CR_SANDWICH:
		class_sandwich(r, key, v, path);
		break;
	case CR_FINAL_NORM:
		class_final_norm(r, key, v, path);
		break;
	case CR_CLASSIFIER:
		class_classifier(r, key, path);
		break;
	case CR_SELECT_RECOMPUTE:
		class_select_recompute(r, key, v, path);
		break;
	case CR_OUT_BIAS:
		class_out_bias(r, key, v, path);
		break;
	}
}

bool model_graph_class_key(struct mo_rd *r, const mo_node *key, const mo_node *v,
			      const char *path)
{
	const char *cls = r->m->ext->model_type;
	bool found = false;
	if (!cls)
		return false;
	for (size_t i = 0; mo_class_keys[i].cls; i++) {
		const struct class_key *c = &mo_class_keys[i];
		if (strcmp(c->cls, cls) != 0 || strcmp(c->key, key->value) != 0)
			continue;
		class_apply(r, c, key, v, path);
		found = true;
	}
	return found;
}

/* PanguAlphaConfig's MoE, once the mapping is read (use_moe may follow
 * expert_num): with use_moe, expert_num experts (one: dense) and
 * per_token_num_experts_chosen of them per token; without, the dense
 * MoEConfig(expert_num=1) whatever moe_config says (pangualpha.py:257-261,
 * v1.0.0). */
void model_graph_class_finish(struct mo_rd *r)
{
	mo_model *m = r->m;
	int64_t n;
	if (!r->class_moe_set)
		return;
	if (!r->class_moe) {
		m->num_moe_experts = 0;
		return;
	}
	if (r->class_experts &&
	    model_read_int(r, r->class_experts, r->class_experts_path, 1, 1 << 20, &n)) {
		m->num_moe_experts = n > 1 ? n : 0;
		model_mark(r, MF_EXPERTS, r->class_experts, r->class_experts_path);
	}
	if (r->class_topk &&
	    model_read_int(r, r->class_topk, r->class_topk_path, 1, 1 << 20, &n)) {
		m->moe_router_topk = n;
		model_mark(r, MF_TOPK, r->class_topk, r->class_topk_path);
	}
}
