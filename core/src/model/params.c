/* The model's parameter count, unsharded: embedding, every decoder layer
 * (attention or MLA, dense or MoE MLP, norms, the linear biases the
 * estimate counts), the MTP layers (a decoder
 * layer plus their projection and norms; they share the embedding and the
 * output head) and the output head when untied. The importer's check
 * against published sizes (tests/data/mindformers/expect.txt); the
 * estimator's per-device figures are its own (estimate_weights.c). */
#include "model/model_internal.h"

#include <string.h>

/* DeepSeek-V3.2's lightning indexer beside its MLA (DSAIndexer,
 * pynative/transformers/experimental_attention_variant/dsa_indexer.py at
 * mindspore-ai/mindformers 167a50de, after inference/model.py of
 * deepseek-ai/DeepSeek-V3.2-Exp): linear_wq_b from the query's low rank to
 * index_n_heads x index_head_dim, linear_wk from the hidden state to one
 * key of index_head_dim, its LayerNorm (weight and bias), and
 * linear_weights_proj from the hidden state to a weight per index head. */
double model_dsa_indexer_params(const mo_model *m)
{
	if (!m->dsa || !m->multi_latent_attention || m->q_lora_rank <= 0)
		return 0.0;
	double h = (double)m->hidden_size, id = (double)m->index_head_dim;
	double heads = (double)m->index_n_heads;
	return (double)m->q_lora_rank * heads * id + h * id + 2.0 * id + h * heads;
}

/* DeepSeek-V4's hybrid attention (mindspore-ai/mindformers 167a50de,
 * mindformers/pynative/transformers/experimental_attention_variant/
 * deepseek_v4_hybrid_attention.py:52-160): the query's down projection
 * (hidden -> q_lora_rank), its norm and up projection (-> heads x
 * v_head_dim), one key / value head (hidden -> v_head_dim) and its norm, the
 * grouped output projection (o_groups x o_lora_rank by heads x v_head_dim /
 * o_groups) and linear_proj (o_groups x o_lora_rank -> hidden), one fp32
 * attention sink per head (csa.py:588); the Compressor of ratios 4 and 128
 * (compressor.py:95-130: kv and gate projections of coff x v_head_dim, coff
 * 2 at ratio 4, the positional bias, the norm) and the Indexer of ratio 4
 * (indexer.py:116-140: the query projection, its own compressor over
 * index_head_dim, the head weights). */
double model_hybrid_attention_params(const mo_model *m, int64_t ratio, double heads)
{
	double h = (double)m->hidden_size, vd = (double)m->v_head_dim;
	double ql = (double)m->q_lora_rank, olr = (double)(m->o_groups * m->o_lora_rank);
	double groups = m->o_groups > 0 ? (double)m->o_groups : 1.0;
	double p = h * ql + ql + ql * heads * vd + h * vd + vd + olr * heads * vd / groups +
		   olr * h + heads;
	if (ratio > 0) {
		double coff = ratio == 4 ? 2.0 : 1.0;
		p += 2 * h * coff * vd + (double)ratio * coff * vd + vd;
	}
	if (ratio == 4) {
		double ih = (double)(m->index_n_heads * m->index_head_dim), id = (double)m->index_head_dim;
		p += ql * ih + 2 * h * 2 * id + 4 * 2 * id + id + h * (double)m->index_n_heads;
	}
	return p;
}

/* One HyperConnectionModule (hyper_connection.py:212-230 at the same
 * commit): the mapping projection [n x h -> n + n + n^2], its bias and
 * three gates; its fixed rms_weight has no gradient and is left out. */
double model_hc_params(const mo_model *m)
{
	if (!m->hyper_connections)
		return 0;
	double n = (double)m->hc_mult, dim = 2 * n + n * n;
	return n * (double)m->hidden_size * dim + dim + 3;
}

static double params_attention(const mo_model *m, int64_t id)
{
	if (m->dsv4_hybrid)
		return model_hybrid_attention_params(m, model_compress_ratio(m, id),
						     (double)m->num_attention_heads);
	double h = (double)m->hidden_size, n = (double)m->num_attention_heads;
	if (m->multi_latent_attention) {
		double qk = (double)(m->qk_nope_head_dim + m->qk_rope_head_dim);
		double q = m->q_lora_rank > 0
				   ? h * (double)m->q_lora_rank +
					     (double)m->q_lora_rank +
					     (double)m->q_lora_rank * n * qk
				   : h * n * qk;
		double kv = h * (double)(m->kv_lora_rank + m->qk_rope_head_dim) +
			    (double)m->kv_lora_rank +
			    (double)m->kv_lora_rank * n *
				    (double)(m->qk_nope_head_dim + m->v_head_dim);
		return q + kv + n * (double)m->v_head_dim * h + model_dsa_indexer_params(m);
	}
	double d = (double)m->kv_channels, g = (double)m->num_query_groups;
	double qk_norm = m->qk_layernorm ? 2.0 * d : 0.0;
	return h * n * d + 2.0 * h * g * d + n * d * h + qk_norm;
}

static bool params_gated(const mo_model *m)
{
	return strcmp(m->hidden_act, "swiglu") == 0 || strcmp(m->hidden_act, "fusedswiglu") == 0 ||
	       strcmp(m->hidden_act, "geglu") == 0;
}

static double params_mlp(const mo_model *m, int64_t ffn)
{
	return (params_gated(m) ? 3.0 : 2.0) * (double)m->hidden_size * (double)ffn;
}

/* The linear biases, as the estimate counts them (estimate_weights.c
 * est_bias_params, unsharded): QKV's with add_bias_linear or add_qkv_bias,
 * the output projection's and, in a dense layer, the MLP's with
 * add_bias_linear. MLA and expert biases are not counted. */
static double params_bias(const mo_model *m, bool moe)
{
	double h = (double)m->hidden_size, p = 0;
	if (m->multi_latent_attention)
		return 0;
	if (m->add_bias_linear || m->add_qkv_bias)
		p += ((double)m->num_attention_heads + 2.0 * (double)m->num_query_groups) *
		     (double)m->kv_channels;
	if (!m->add_bias_linear)
		return p;
	p += h;
	if (!moe)
		p += (params_gated(m) ? 2.0 : 1.0) * (double)m->ffn_hidden_size + h;
	return p;
}

static double params_layer(const mo_model *m, int64_t id)
{
	double h = (double)m->hidden_size;
	bool moe = m->num_moe_experts > 0 && id >= m->first_k_dense_replace;
	double p = params_attention(m, id) + 2.0 * h + params_bias(m, moe) + 2.0 * model_hc_params(m);
	if (!moe)
		return p + params_mlp(m, m->ffn_hidden_size);
	return p + (double)m->num_moe_experts *
			   params_mlp(m, m->moe_ffn_hidden_size) +
	       h * (double)m->num_moe_experts +
	       params_mlp(m, m->moe_shared_expert_intermediate_size);
}

int64_t mo_model_parameters(const mo_model *m)
{
	if (!m)
		return 0;
	double h = (double)m->hidden_size, v = (double)m->vocab_size;
	double p = v * h + h; /* embedding, final norm */
	if (m->untie_embeddings_and_output_weights)
		p += v * h;
	for (int64_t i = 0; i < m->num_layers; i++)
		p += params_layer(m, i);
	/* MTP: a decoder layer, the 2h x h projection, two norms */
	for (int64_t i = 0; i < m->mtp_num_layers; i++)
		p += params_layer(m, m->num_layers + i) + 2.0 * h * h +
		     2.0 * h;
	return p < 9.0e18 ? (int64_t)p : INT64_MAX;
}

size_t mo_model_assumed_count(const mo_model *m)
{
	return m && m->ext ? m->ext->n_assumed : 0;
}

int mo_model_assumed(const mo_model *m, size_t i, const char **path,
		     const char **value, const char **source)
{
	if (!m || !m->ext || i >= m->ext->n_assumed)
		return -1;
	const struct mo_assumed *a = &m->ext->assumed[i];
	*path = a->path;
	*value = a->value;
	*source = a->source;
	return 0;
}
