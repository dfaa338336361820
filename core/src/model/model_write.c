/* The model's canonical forms: the model file as YAML (written with
 * yaml/yaml_writer.c) and as JSON, one typed item a key
 * (model_write_item, which the Megatron import writes with too). */
#include "model/model_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- canonical forms ------------------------------------------------------ */

struct mo_items {
	struct mo_item v[112];
	size_t n;
};

static void item_add(struct mo_items *l, int sect, const char *key, int type,
		  int64_t i, double d, const char *s)
{
	if (l->n < sizeof(l->v) / sizeof(*l->v))
		l->v[l->n++] = (struct mo_item){sect, type, key, i, d, s};
}

#define IT_I(l, s, k, v) item_add(l, s, k, MO_IT_INT, v, 0, NULL)
#define IT_B(l, s, k, v) item_add(l, s, k, MO_IT_BOOL, v, 0, NULL)
#define IT_D(l, s, k, v) item_add(l, s, k, MO_IT_DBL, 0, v, NULL)
#define IT_S(l, s, k, v) item_add(l, s, k, MO_IT_STR, 0, 0, v)

/* DeepSeek-V3.2's sparse attention and DeepSeek-V4's hybrid one: the
 * variant and the sizes its op table reads (compress_ratios, a list, is
 * written beside the items: model_yaml_ratios / model_json_ratios). */
static void model_items_attention_variant(const mo_model *m, struct mo_items *l)
{
	int s = MO_SEC_MODEL;
	if (!m->dsa && !m->dsv4_hybrid)
		return;
	IT_S(l, s, "experimental_attention_variant", m->dsa ? "dsa" : "dsv4_hybrid");
	IT_I(l, s, "index_n_heads", m->index_n_heads);
	IT_I(l, s, "index_head_dim", m->index_head_dim);
	IT_I(l, s, "index_topk", m->index_topk);
	IT_B(l, s, "dsa_indexer_use_sparse_loss", m->dsa_sparse);
	if (!m->dsv4_hybrid)
		return;
	IT_I(l, s, "o_groups", m->o_groups);
	IT_I(l, s, "o_lora_rank", m->o_lora_rank);
	if (m->csa_window > 0)
		IT_I(l, s, "sliding_window", m->csa_window);
	IT_B(l, s, "apply_dsa_kernel_fusion", m->dsa_fused);
}

static void model_items_model(const mo_model *m, struct mo_items *l)
{
	int s = MO_SEC_MODEL;
	IT_I(l, s, "num_layers", m->num_layers);
	IT_I(l, s, "mtp_num_layers", m->mtp_num_layers);
	IT_I(l, s, "hidden_size", m->hidden_size);
	IT_I(l, s, "ffn_hidden_size", m->ffn_hidden_size);
	IT_I(l, s, "num_attention_heads", m->num_attention_heads);
	IT_I(l, s, "num_query_groups", m->num_query_groups);
	if (m->replicate_kv_heads)
		IT_B(l, s, "replicate_kv_heads", true);
	IT_I(l, s, "kv_channels", m->kv_channels);
	IT_I(l, s, "vocab_size", m->vocab_size);
	IT_I(l, s, "make_vocab_size_divisible_by",
	     m->make_vocab_size_divisible_by);
	IT_B(l, s, "untie_embeddings_and_output_weights",
	     m->untie_embeddings_and_output_weights);
	IT_I(l, s, "seq_length", m->seq_length);
	IT_S(l, s, "normalization", m->normalization);
	IT_S(l, s, "hidden_act", m->hidden_act);
	IT_S(l, s, "attention", m->attention);
	IT_D(l, s, "hidden_dropout", m->hidden_dropout);
	IT_D(l, s, "attention_dropout", m->attention_dropout);
	IT_B(l, s, "qk_layernorm", m->qk_layernorm);
	if (m->hyper_connections) {
		IT_B(l, s, "enable_hyper_connections", true);
		IT_I(l, s, "hc_mult", m->hc_mult);
		IT_B(l, s, "use_fused_mhc", m->hc_fused);
		IT_I(l, s, "hc_sinkhorn_iters", m->hc_sinkhorn_iters);
		IT_B(l, s, "enable_hc_head", model_hc_head(m));
	}
	IT_I(l, s, "num_moe_experts", m->num_moe_experts);
	if (m->num_moe_experts > 0) {
		IT_I(l, s, "moe_router_topk", m->moe_router_topk);
		IT_I(l, s, "moe_ffn_hidden_size", m->moe_ffn_hidden_size);
		IT_I(l, s, "moe_shared_expert_intermediate_size",
		     m->moe_shared_expert_intermediate_size);
		IT_I(l, s, "first_k_dense_replace", m->first_k_dense_replace);
	}
	IT_B(l, s, "multi_latent_attention", m->multi_latent_attention);
	if (m->multi_latent_attention) {
		IT_I(l, s, "q_lora_rank", m->q_lora_rank);
		IT_I(l, s, "kv_lora_rank", m->kv_lora_rank);
		IT_I(l, s, "qk_nope_head_dim", m->qk_nope_head_dim);
		IT_I(l, s, "qk_rope_head_dim", m->qk_rope_head_dim);
		IT_I(l, s, "v_head_dim", m->v_head_dim);
	}
	model_items_attention_variant(m, l);
	/* Megatron's keys, written when they change the estimate */
	if (strcmp(m->position_embedding_type, "rope") != 0) {
		IT_S(l, s, "position_embedding_type", m->position_embedding_type);
		IT_I(l, s, "max_position_embeddings", m->max_position_embeddings);
	}
	if (m->add_bias_linear || m->add_qkv_bias) {
		IT_B(l, s, "add_bias_linear", m->add_bias_linear);
		IT_B(l, s, "add_qkv_bias", m->add_qkv_bias);
	}
}

static void model_items(const mo_model *m, struct mo_items *l)
{
	model_items_model(m, l);
	int s = MO_SEC_TRAIN;
	IT_I(l, s, "micro_batch_size", m->micro_batch_size);
	IT_I(l, s, "micro_batch_num", m->micro_batch_num);
	if (m->ext->global_batch_size > 0)
		IT_I(l, s, "global_batch_size", m->ext->global_batch_size);
	IT_S(l, s, "compute_dtype", m->compute_dtype);
	IT_S(l, s, "params_dtype", m->params_dtype);
	if (m->grads_dtype)
		IT_S(l, s, "grads_dtype", m->grads_dtype);
	IT_S(l, s, "optimizer", m->optimizer);
	IT_S(l, s, "framework", m->framework);
	if (m->moe_routing_skew != 1.0)
		IT_D(l, s, "moe_routing_skew", m->moe_routing_skew);
	if (strcmp(m->framework, "pytorch") == 0) {
		IT_S(l, s, "transformer_impl", m->transformer_impl);
		IT_B(l, s, "overlap_grad_reduce", m->overlap_grad_reduce);
		if (m->moe_grouped_gemm)
			IT_B(l, s, "moe_grouped_gemm", true);
		if (m->tp_comm_overlap)
			IT_B(l, s, "tp_comm_overlap", true);
		if (m->deterministic_mode)
			IT_B(l, s, "deterministic_mode", true);
		if (m->gradient_accumulation_fusion)
			IT_B(l, s, "gradient_accumulation_fusion", true);
		if (m->cublas_workspace_kib > 0)
			IT_I(l, s, "cublas_workspace_kib", m->cublas_workspace_kib);
		if (!m->apply_rope_fusion)
			IT_B(l, s, "apply_rope_fusion", false);
		if (strcmp(m->moe_token_dispatcher_type, "allgather") != 0)
			IT_S(l, s, "moe_token_dispatcher_type", m->moe_token_dispatcher_type);
		if (m->moe_router_dtype)
			IT_S(l, s, "moe_router_dtype", m->moe_router_dtype);
		if (m->moe_permute_fusion)
			IT_B(l, s, "moe_permute_fusion", true);
		if (m->overlap_moe_ep_comm)
			IT_B(l, s, "overlap_moe_expert_parallel_comm", true);
	}
	s = MO_SEC_PAR;
	if (m->world_size > 0)
		IT_I(l, s, "world_size", m->world_size);
	if (m->data_parallel > 0)
		IT_I(l, s, "data_parallel", m->data_parallel);
	IT_I(l, s, "data_parallel_shard", m->data_parallel_shard);
	IT_I(l, s, "tensor_parallel", m->tensor_parallel);
	IT_I(l, s, "pipeline_parallel", m->pipeline_parallel);
	IT_I(l, s, "virtual_pipeline", m->virtual_pipeline);
	IT_I(l, s, "expert_parallel", m->expert_parallel);
	if (m->expert_tensor_parallel > 0)
		IT_I(l, s, "expert_tensor_parallel", m->expert_tensor_parallel);
	IT_I(l, s, "context_parallel", m->context_parallel);
	IT_B(l, s, "sequence_parallel", m->sequence_parallel);
	IT_B(l, s, "distributed_optimizer", m->distributed_optimizer);
}

const char *const mo_sec_names[MO_NSEC] = {"model", "training", "parallel"};

/* The shortest text that reads back the same value: %.15g, else %.17g. */
static bool model_yaml_double(mo_yaml_writer *w, double d)
{
	char text[40];
	snprintf(text, sizeof text, "%.15g", d);
	if (strtod(text, NULL) != d)
		snprintf(text, sizeof text, "%.17g", d);
	return yaml_tree_write_plain(w, text);
}

bool model_write_item(mo_yaml_writer *w, const struct mo_item *it)
{
	char text[32];
	if (!yaml_tree_write_plain(w, it->key))
		return false;
	switch (it->type) {
	case MO_IT_INT:
		snprintf(text, sizeof text, "%lld", (long long)it->i);
		return yaml_tree_write_plain(w, text);
	case MO_IT_BOOL:
		return yaml_tree_write_plain(w, it->i ? "true" : "false");
	case MO_IT_DBL:
		return model_yaml_double(w, it->d);
	default: /* canonical enumeration values are plain-safe; a layout
		  * string (`Et*3|(tt|)*6tL`) is quoted */
		if (strspn(it->s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "0123456789_.-") != strlen(it->s))
			return yaml_tree_write_double_quoted(w, it->s);
		return yaml_tree_write_plain(w, it->s);
	}
}

/* compress_ratios: one per layer, as a flow list. */
static bool model_yaml_ratios(const mo_model *m, mo_yaml_writer *w)
{
	if (m->n_compress_ratios == 0)
		return true;
	if (!yaml_tree_write_plain(w, "compress_ratios") ||
	    !yaml_tree_write_sequence_start(w, true))
		return false;
	for (size_t i = 0; i < m->n_compress_ratios; i++) {
		char text[24];
		snprintf(text, sizeof text, "%lld", (long long)m->compress_ratios[i]);
		if (!yaml_tree_write_plain(w, text))
			return false;
	}
	return yaml_tree_write_sequence_end(w);
}

/* pipeline_parallel_layers_per_stage: a list of flow lists of "lo-hi". */
static bool model_yaml_stages(const mo_model *m, mo_yaml_writer *w)
{
	if (m->n_stage_layers == 0)
		return true;
	if (!yaml_tree_write_plain(w, "pipeline_parallel_layers_per_stage") ||
	    !yaml_tree_write_sequence_start(w, false))
		return false;
	for (size_t s = 0; s < m->n_stage_layers; s++) {
		const mo_layers *l = &m->stage_layers[s];
		if (!yaml_tree_write_sequence_start(w, true))
			return false;
		for (size_t i = 0; i < l->n; i++) {
			char range[64];
			snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)l->r[i].lo,
				 (unsigned long long)l->r[i].hi);
			if (!yaml_tree_write_double_quoted(w, range))
				return false;
		}
		if (!yaml_tree_write_sequence_end(w))
			return false;
	}
	return yaml_tree_write_sequence_end(w);
}

static bool model_device_times_equal(mo_device *a, const mo_device *b)
{
	double *x[] = {MO_DEVICE_TIME_FIELDS(a)};
	mo_device bc = *b;
	double *y[] = {MO_DEVICE_TIME_FIELDS(&bc)};
	for (size_t i = 0; i < MO_DEVICE_TIME_COUNT; i++)
		if (*x[i] != *y[i])
			return false;
	return true;
}

/* The time model's constants a custom device sets (0: the model's
 * fallback), after the memory keys. */
static bool model_yaml_device_times(const mo_device *d, mo_yaml_writer *w)
{
	static const char *const keys[] = {MO_DEVICE_TIME_KEYS};
	mo_device c = *d;
	double *v[] = {MO_DEVICE_TIME_FIELDS(&c)};
	for (size_t i = 0; i < MO_DEVICE_TIME_COUNT; i++) {
		if (*v[i] == 0)
			continue;
		if (!yaml_tree_write_plain(w, keys[i]) || !model_yaml_double(w, *v[i]))
			return false;
	}
	return true;
}

static bool model_device_is_preset(const mo_device *d)
{
	mo_device p;
	return d->name && device_preset(&p, d->name) == 0 &&
	       p.memory_gib == d->memory_gib &&
	       p.host_bandwidth_gbs == d->host_bandwidth_gbs &&
	       p.tflops == d->tflops && p.reserved_gib == d->reserved_gib &&
	       p.collective_bandwidth_gbs == d->collective_bandwidth_gbs &&
	       p.comm_buffer_mib == d->comm_buffer_mib &&
	       p.fragmentation == d->fragmentation &&
	       p.workspace_mib == d->workspace_mib &&
	       p.gemm_workspace_mib == d->gemm_workspace_mib && model_device_times_equal(&p, d);
}

static bool model_yaml_device(const mo_model *m, mo_yaml_writer *w)
{
	const mo_device *d = &m->device;
	if (!yaml_tree_write_plain(w, "device"))
		return false;
	if (model_device_is_preset(d))
		return yaml_tree_write_plain(w, d->name);
	const char *const keys[] = {"memory_gib",      "host_bandwidth_gbs",
				    "tflops",          "reserved_gib",
				    "collective_bandwidth_gbs", "comm_buffer_mib",
				    "fragmentation", "workspace_mib", "gemm_workspace_mib"};
	const double values[] = {d->memory_gib,  d->host_bandwidth_gbs,
				 d->tflops,      d->reserved_gib,
				 d->collective_bandwidth_gbs, d->comm_buffer_mib,
				 d->fragmentation, d->workspace_mib, d->gemm_workspace_mib};
	if (!yaml_tree_write_mapping_start(w, NULL, false))
		return false;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		if (values[i] == 0 && strstr(keys[i], "workspace_mib"))
			continue; /* none: a mindspore device map reads as before */
		if (!yaml_tree_write_plain(w, keys[i]) || !model_yaml_double(w, values[i]))
			return false;
	}
	return model_yaml_device_times(d, w) && yaml_tree_write_mapping_end(w);
}

static bool model_yaml_sections(const mo_model *m, const struct mo_items *l,
				   mo_yaml_writer *w)
{
	if (!yaml_tree_write_mapping_start(w, NULL, false))
		return false;
	for (int s = 0; s < MO_NSEC; s++) {
		if (!yaml_tree_write_plain(w, mo_sec_names[s]) ||
		    !yaml_tree_write_mapping_start(w, NULL, false))
			return false;
		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].sect == s && !model_write_item(w, &l->v[i]))
				return false;
		if (s == MO_SEC_MODEL && !model_yaml_ratios(m, w))
			return false;
		if (s == MO_SEC_PAR && !model_yaml_stages(m, w))
			return false;
		if (!yaml_tree_write_mapping_end(w))
			return false;
	}
	return model_yaml_device(m, w) && yaml_tree_write_mapping_end(w);
}

char *mo_model_to_yaml(const mo_model *m)
{
	struct mo_items l = {.n = 0};
	mo_yaml_writer *w = NULL;
	mo_buf b;
	char *text = NULL;
	if (!m)
		return NULL;
	model_items(m, &l);
	buf_init(&b, 0);
	if (yaml_tree_writer_new(&w, MO_YAML_BREAK_LF, "model", NULL) != 0)
		goto out_free_buffer;
	if (model_yaml_sections(m, &l, w) && yaml_tree_writer_finish(w, &b, 0) == 0)
		text = buf_take(&b, NULL);
	yaml_tree_writer_free(w);
out_free_buffer:
	if (!text)
		buf_free(&b);
	return text;
}

static json_t *model_json_item(const struct mo_item *it)
{
	switch (it->type) {
	case MO_IT_INT: return json_integer((json_int_t)it->i);
	case MO_IT_BOOL: return json_boolean(it->i);
	case MO_IT_DBL: return json_real(it->d);
	default: return json_string(it->s);
	}
}

static json_t *model_json_stages(const mo_model *m)
{
	json_t *a = json_array();
	for (size_t s = 0; a && s < m->n_stage_layers; s++) {
		const mo_layers *l = &m->stage_layers[s];
		json_t *st = json_array();
		for (size_t i = 0; st && i < l->n; i++) {
			char r[64];
			snprintf(r, sizeof(r), "%llu-%llu",
				 (unsigned long long)l->r[i].lo,
				 (unsigned long long)l->r[i].hi);
			json_array_append_new(st, json_string(r));
		}
		json_array_append_new(a, st);
	}
	return a;
}

static json_t *model_json_device(const mo_model *m)
{
	const mo_device *d = &m->device;
	if (model_device_is_preset(d))
		return json_string(d->name);
	json_t *o = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "memory_gib",
			      d->memory_gib, "host_bandwidth_gbs",
			      d->host_bandwidth_gbs, "tflops", d->tflops,
			      "reserved_gib", d->reserved_gib,
			      "collective_bandwidth_gbs",
			      d->collective_bandwidth_gbs, "comm_buffer_mib",
			      d->comm_buffer_mib, "fragmentation", d->fragmentation);
	/* workspace_mib only when there are workspaces (a mindspore device
	 * map reads as before) */
	if (o && d->workspace_mib != 0 &&
	    json_object_set_new(o, "workspace_mib", json_real(d->workspace_mib)) != 0) {
		json_decref(o);
		return NULL;
	}
	if (o && d->gemm_workspace_mib != 0 &&
	    json_object_set_new(o, "gemm_workspace_mib", json_real(d->gemm_workspace_mib)) != 0) {
		json_decref(o);
		return NULL;
	}
	static const char *const keys[] = {MO_DEVICE_TIME_KEYS};
	mo_device c = *d;
	double *v[] = {MO_DEVICE_TIME_FIELDS(&c)};
	for (size_t i = 0; o && i < MO_DEVICE_TIME_COUNT; i++)
		if (*v[i] != 0 && json_object_set_new(o, keys[i], json_real(*v[i])) != 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

char *mo_model_to_json(const mo_model *m)
{
	struct mo_items l = {.n = 0};
	if (!m)
		return NULL;
	model_items(m, &l);
	json_t *root = json_object();
	json_t *sec[MO_NSEC];
	for (int s = 0; s < MO_NSEC; s++) {
		sec[s] = json_object();
		json_object_set_new(root, mo_sec_names[s], sec[s]);
	}
	for (size_t i = 0; i < l.n; i++)
		json_object_set_new(sec[l.v[i].sect], l.v[i].key,
				    model_json_item(&l.v[i]));
	if (m->n_compress_ratios > 0) {
		json_t *ratios = json_array();
		for (size_t i = 0; ratios && i < m->n_compress_ratios; i++)
			json_array_append_new(ratios, json_integer((json_int_t)m->compress_ratios[i]));
		json_object_set_new(sec[MO_SEC_MODEL], "compress_ratios", ratios);
	}
	if (m->n_stage_layers > 0)
		json_object_set_new(sec[MO_SEC_PAR],
				    "pipeline_parallel_layers_per_stage",
				    model_json_stages(m));
	json_object_set_new(root, "device", model_json_device(m));
	/* read-only facts (a model file that carries them is read without
	 * them): the parameter count and the values the import assumed */
	json_object_set_new(root, "parameters", json_integer(mo_model_parameters(m)));
	json_t *assumed = json_array();
	for (size_t i = 0; i < mo_model_assumed_count(m); i++) {
		const char *path, *value, *source;
		if (mo_model_assumed(m, i, &path, &value, &source) == 0)
			json_array_append_new(assumed,
					      json_pack("{s:s, s:s, s:s}", "path", path, "value",
							value, "source", source));
	}
	json_object_set_new(root, "assumed", assumed);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
