/* The tensor graph of one layer type, built from a framework's op tables:
 * named dimensions of the model (per device: TP, SP, CP, GQA, MoE top-k and
 * MLA change them), shape expressions, and one op record per table row whose
 * conditions hold. Views share their base's storage, so a tensor saved by
 * several ops, or through several views, counts once. */
#include "estimate/estimate_internal.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dimensions ------------------------------------------------------------ */

static void est_dim(mo_est_dims *d, const char *name, int64_t v)
{
	if (d->n < sizeof(d->vals) / sizeof(*d->vals)) {
		d->names[d->n] = name;
		d->vals[d->n++] = v;
	}
}

static int64_t est_div(int64_t a, int64_t b)
{
	return b > 0 ? a / b : a;
}

/* A gated GeLU (geglu) keeps the tensors a SwiGLU keeps (fc1's 2 x ffn
 * output for the activation's and the product's backward, the ffn-wide
 * product for fc2): it is priced as one. */
static bool est_gated(const mo_model *m)
{
	return strcmp(m->hidden_act, "swiglu") == 0 ||
	       strcmp(m->hidden_act, "fusedswiglu") == 0 ||
	       strcmp(m->hidden_act, "geglu") == 0;
}

static unsigned est_conditions(const mo_model *m)
{
	unsigned c = 0;
	bool tp = m->tensor_parallel > 1;
	c |= est_gated(m) ? MO_C_GATED : 0;
	c |= strcmp(m->hidden_act, "fusedswiglu") == 0 ? MO_C_FUSEDACT : 0;
	c |= strcmp(m->hidden_act, "gelu") == 0 ? MO_C_GELU : 0;
	c |= strcmp(m->normalization, "LayerNorm") == 0 ? MO_C_LN : 0;
	c |= strcmp(m->attention, "flash") == 0 ? MO_C_FLASH : 0;
	c |= m->hidden_dropout > 0 ? MO_C_HDROP : 0;
	c |= m->attention_dropout > 0 ? MO_C_ADROP : 0;
	c |= !m->multi_latent_attention &&
		     m->num_query_groups < m->num_attention_heads
	     ? MO_C_GQA
	     : 0;
	c |= tp && m->sequence_parallel ? MO_C_SP : 0;
	c |= tp ? MO_C_TP : 0;
	c |= m->context_parallel > 1 ? MO_C_CP : 0;
	/* Megatron's local q/k norms are not modelled (ops_pytorch.c) */
	c |= m->qk_layernorm && strcmp(m->transformer_impl, "transformer_engine") == 0 ? MO_C_QKLN
										      : 0;
	c |= m->q_lora_rank > 0 ? MO_C_QLORA : 0;
	c |= m->moe_shared_expert_intermediate_size > 0 ? MO_C_SHARED : 0;
	c |= m->expert_parallel > 1 || tp ? MO_C_EPCOMM : 0;
	c |= strcmp(m->transformer_impl, "transformer_engine") == 0 && (c & MO_C_FLASH) &&
		     (c & MO_C_GQA) && !(c & MO_C_CP)
	     ? MO_C_TEKV
	     : 0;
	c |= strcmp(m->position_embedding_type, "learned_absolute") == 0 ? MO_C_LPOS : 0;
	c |= m->hyper_connections ? MO_C_HC : 0;
	c |= m->hyper_connections && m->hc_fused ? MO_C_HCF : 0;
	c |= model_hc_head(m) ? MO_C_HCH : 0;
	c |= m->dsv4_hybrid && !m->dsa_fused ? MO_C_DSAU : 0;
	c |= strcmp(m->params_dtype, "float32") == 0 &&
		     strcmp(m->compute_dtype, "float32") != 0
	     ? MO_C_P32
	     : 0;
	/* the hybrid attention reached MindSpore Transformers' master after
	 * FusedRMSNorm lost its casts (ops_mindspore.c, C_RMSNC), and so did
	 * DSA's PyNative layer (dsa.py, 403ee5f5, 2026-07-17); with fp32
	 * parameters the norms keep the ledgers' rows */
	c |= (m->dsv4_hybrid || model_dsa_table(m)) && !(c & MO_C_P32) ? MO_C_RMSNC : 0;
	c |= model_dsa_table(m) ? MO_C_DSA : 0;
	return c;
}

/* Padded vocabulary (Megatron): a multiple of make_vocab_size_divisible_by
 * x TP. */
static int64_t est_vocab(const mo_model *m)
{
	int64_t mult = m->make_vocab_size_divisible_by * m->tensor_parallel;
	if (mult < 1)
		mult = 1;
	return (m->vocab_size + mult - 1) / mult * mult;
}

static void est_dims_attn(mo_est_dims *d, const mo_model *m, int64_t tp)
{
	int64_t hd = est_div(m->num_attention_heads, tp);
	int64_t kvh = m->multi_latent_attention ? hd : model_kv_heads_per_rank(m, tp);
	int64_t dh = m->kv_channels, dqk = m->qk_nope_head_dim + m->qk_rope_head_dim;
	est_dim(d, "hd", hd);
	est_dim(d, "d", dh);
	est_dim(d, "q", hd * dh);
	est_dim(d, "kv", kvh * dh);
	est_dim(d, "kvh", kvh);
	/* the rank's columns of the fused projection; with TP above the
	 * groups Megatron all-gathers them and keeps one group's (the
	 * gathered buffer, alive while its q/k/v views are, is not counted) */
	est_dim(d, "qkv", m->multi_latent_attention
				  ? (hd + 2 * kvh) * dh
				  : est_div((m->num_attention_heads + 2 * m->num_query_groups) * dh, tp));
	est_dim(d, "ql", m->q_lora_rank);
	est_dim(d, "kvl", m->kv_lora_rank);
	est_dim(d, "rope", m->qk_rope_head_dim);
	est_dim(d, "dqk", dqk);
	est_dim(d, "dqkv", dqk + m->v_head_dim);
	est_dim(d, "dv", m->v_head_dim);
	est_dim(d, "qhd", hd * dqk);
	est_dim(d, "kvbd", hd * (m->qk_nope_head_dim + m->v_head_dim));
	est_dim(d, "vh", hd * m->v_head_dim);
	/* the attention context a rank projects back: MLA's value heads, else q */
	est_dim(d, "ctxw", m->multi_latent_attention ? hd * m->v_head_dim : hd * dh);
	est_dim(d, "kpeh", hd * m->qk_rope_head_dim);
	est_dim(d, "qdown", m->q_lora_rank + m->kv_lora_rank +
				       m->qk_rope_head_dim);
}

/* Routed tokens on this device's experts under the model's routing skew
 * (the balanced count when 1). */
static int64_t est_skewed(int64_t routed, const mo_model *m)
{
	if (m->moe_routing_skew <= 1.0)
		return routed;
	double r = ceil((double)routed * m->moe_routing_skew);
	return r < 9e18 ? (int64_t)r : INT64_MAX;
}

static void est_dims_mlp(mo_est_dims *d, const mo_model *m, int64_t tp,
			    int64_t tok)
{
	int64_t g = est_gated(m) ? 2 : 1;
	int64_t f = est_div(m->ffn_hidden_size, tp);
	int64_t fs = est_div(m->moe_shared_expert_intermediate_size, tp);
	est_dim(d, "f", f);
	est_dim(d, "f1", g * f);
	est_dim(d, "E", m->num_moe_experts);
	est_dim(d, "k", m->moe_router_topk);
	est_dim(d, "fs", fs);
	est_dim(d, "fs1", g * fs);
	/* balanced routing: each device's experts see top-k copies of its
	 * share of the tokens, times the model's routing skew (1: balanced) */
	int64_t etp = model_etp(m);
	if (etp > 0) {
		/* Megatron (pytorch): E / EP experts here, each expert's FFN
		 * split over ETP, fed the routed tokens of its whole expert-TP
		 * group (the dispatcher gathers them over ETP,
		 * token_dispatcher.py) */
		est_dim(d, "rt", est_skewed(est_div(tok * m->moe_router_topk * etp, tp), m));
		est_dim(d, "el", est_div(m->num_moe_experts, m->expert_parallel));
		est_dim(d, "fe", est_div(m->moe_ffn_hidden_size, etp));
		est_dim(d, "fe1", g * est_div(m->moe_ffn_hidden_size, etp));
		return;
	}
	est_dim(d, "rt", est_skewed(est_div(tok * m->moe_router_topk, tp), m));
	/* experts on this device: EP, or the TP mesh when EP is off */
	est_dim(d, "el", est_div(m->num_moe_experts,
				       m->expert_parallel > 1 ? m->expert_parallel : tp));
	est_dim(d, "fe", m->moe_ffn_hidden_size);
	est_dim(d, "fe1", g * m->moe_ffn_hidden_size);
}

/* mHC (pynative/transformers/hyper_connection.py): hs the packed streams'
 * width, hcd the mapping projection's n + n + n^2 outputs
 * (HyperConnectionModule.__init__ `dim`); the unfused Sinkhorn
 * (SinkhornKnopp.construct) makes per token 3 + 2 (iters - 1) n x n and
 * 2 + 4 (iters - 1) n-sized fp32 tensors (softmax, add, div; sum, add per
 * normalisation), skq their elements; the fused kernel returns per token one
 * n x n matrix and one n-sum per half-iteration (norm_out, sum_out). */
static void est_dims_hc(mo_est_dims *d, const mo_model *m)
{
	int64_t n = m->hyper_connections ? m->hc_mult : 1;
	int64_t it = m->hc_sinkhorn_iters > 1 ? m->hc_sinkhorn_iters - 1 : 0;
	int64_t half = 2 * (m->hc_sinkhorn_iters > 0 ? m->hc_sinkhorn_iters : 1);
	est_dim(d, "hs", n * m->hidden_size);
	est_dim(d, "hcn", n);
	est_dim(d, "hcnn", n * n);
	est_dim(d, "hcd", 2 * n + n * n);
	est_dim(d, "skq", (3 + 2 * it) * n * n + (2 + 4 * it) * n);
	est_dim(d, "sknn", half * n * n);
	est_dim(d, "skn", half * n);
}

/* DeepSeek-V4's hybrid attention (deepseek_v4_hybrid_attention.py): qh the
 * up-projected queries (heads x v_head_dim), qpe their rotary lanes, olr the
 * grouped output projection's width (o_groups x o_lora_rank), og1 one
 * group's rank; the compressor's overlapping windows (ratio 4) double the
 * tokens and the projection (coff 2, compressor.py:89-95); the indexer's
 * query (index_n_heads x index_head_dim) and top-k. */
static void est_dims_hybrid(mo_est_dims *d, const mo_model *m, int64_t tp, int64_t tok)
{
	int64_t hd = est_div(m->num_attention_heads, tp);
	est_dim(d, "qh", hd * m->v_head_dim);
	est_dim(d, "qpe", hd * m->qk_rope_head_dim);
	est_dim(d, "olr", m->o_groups * m->o_lora_rank);
	est_dim(d, "og1", m->o_lora_rank);
	est_dim(d, "dv2", 2 * m->v_head_dim);
	est_dim(d, "tok2", 2 * tok);
	est_dim(d, "c4", tok / 4);
	est_dim(d, "c128", tok / 128);
	est_dim(d, "ih", m->index_n_heads * m->index_head_dim);
	est_dim(d, "ipe", m->index_n_heads * m->qk_rope_head_dim);
	est_dim(d, "ihn", m->index_n_heads);
	est_dim(d, "id", m->index_head_dim);
	est_dim(d, "id2", 2 * m->index_head_dim);
	est_dim(d, "itk", m->index_topk);
}

/* DeepSeek-V3.2's sparse attention (multi_latent_attention.py
 * _dsa_sparse_qkv :585-622, dsa.py): the absorbed query [heads, kv_lora_rank +
 * rope] (dqa one head's width, hdqa a rank's), the latent output [heads,
 * kv_lora_rank] (hdkvl); the two absorb GEMMs' inner products (nkvl: q_nope
 * x kv_lora_rank per head, kvldv: kv_lora_rank x v_head_dim per head); the
 * FLOPs per token of the sparse flash attention over the rows it selects
 * (sfa: heads x rows x (dqa + kv_lora_rank)) and of the indexer loss's
 * kernel (ilk: the main attention's scores over those rows again, heads x
 * rows x dqa, and the indexer's scores and their two gradients, 3 x index
 * heads x index_head_dim x rows), where the query at position i has min(i,
 * index_topk) causal rows: their mean over the sequence. Products saturate
 * (model_mul): the shapes are a file's. */
static void est_dims_dsa(mo_est_dims *d, const mo_model *m, int64_t tp)
{
	int64_t hd = est_div(m->num_attention_heads, tp);
	int64_t dqa = m->kv_lora_rank + m->qk_rope_head_dim;
	int64_t ih = model_mul(m->index_n_heads, m->index_head_dim);
	double sq = m->seq_length > 0 ? (double)m->seq_length : 1.0;
	double k = m->index_topk > 0 ? (double)m->index_topk : 1.0;
	int64_t rows = (int64_t)(sq <= k ? (sq + 1) / 2 : (k * (k + 1) / 2 + (sq - k) * k) / sq);
	est_dim(d, "dqa", dqa);
	est_dim(d, "hdqa", model_mul(hd, dqa));
	est_dim(d, "hdkvl", model_mul(hd, m->kv_lora_rank));
	est_dim(d, "nkvl", model_mul(m->qk_nope_head_dim, m->kv_lora_rank));
	est_dim(d, "kvldv", model_mul(m->kv_lora_rank, m->v_head_dim));
	est_dim(d, "sfa", model_mul(model_mul(hd, rows), dqa + m->kv_lora_rank));
	int64_t ilk = model_mul(model_mul(hd, rows), dqa);
	int64_t idx = model_mul(model_mul(3, ih), rows);
	est_dim(d, "ilk", ilk < INT64_MAX - idx ? ilk + idx : INT64_MAX);
}

/* The kv positions each query of a DeepSeek-V4 layer attends to in the
 * small-op sparse attention (csa.py _construct_naive :731-831): the sliding
 * window, plus at ratio 4 the indexer's top-k of the sq / 4 compressed
 * positions (indexer.py :218, min(index_topk, compressed)), at ratio 128
 * every compressed position (get_compress_topk_idxs :430-446). */
static int64_t est_hybrid_kv_width(const mo_model *m, int64_t sq, int ratio)
{
	int64_t w = m->csa_window;
	if (ratio == 4)
		return w + (m->index_topk < sq / 4 ? m->index_topk : sq / 4);
	return ratio > 1 ? w + sq / ratio : w;
}

void est_dims_init(mo_est_dims *d, const mo_model *m)
{
	int64_t tp = m->tensor_parallel > 0 ? m->tensor_parallel : 1;
	int64_t cp = m->context_parallel > 0 ? m->context_parallel : 1;
	int64_t sq = est_div(m->seq_length, cp);
	int64_t tok = m->micro_batch_size * sq;
	memset(d, 0, sizeof(*d));
	d->cond = est_conditions(m);
	d->cdtype = m->compute_dtype;
	d->pdtype = m->params_dtype;
	est_dim(d, "b", m->micro_batch_size);
	est_dim(d, "s", m->seq_length);
	est_dim(d, "sq", sq);
	est_dim(d, "tok", tok);
	est_dim(d, "tsp", (d->cond & MO_C_SP) ? est_div(tok, tp) : tok);
	est_dim(d, "h", m->hidden_size);
	est_dim(d, "h2", 2 * m->hidden_size);
	est_dim(d, "htp", est_div(m->hidden_size, tp));
	est_dim(d, "tp", tp);
	est_dim(d, "vocab", est_div(est_vocab(m), tp));
	est_dims_attn(d, m, tp);
	est_dims_mlp(d, m, tp, tok);
	est_dims_hc(d, m);
	est_dims_hybrid(d, m, tp, tok);
	est_dims_dsa(d, m, tp);
}

int64_t est_dtype_bytes(const char *dtype, const mo_est_dims *d)
{
	if (strcmp(dtype, "c") == 0)
		dtype = d->cdtype;
	else if (strcmp(dtype, "p") == 0)
		dtype = d->pdtype;
	if (strcmp(dtype, "float32") == 0 || strcmp(dtype, "f32") == 0 ||
	    strcmp(dtype, "i32") == 0)
		return 4;
	if (strcmp(dtype, "i64") == 0)
		return 8;
	if (strcmp(dtype, "u8") == 0)
		return 1;
	return 2; /* bfloat16, float16 */
}

static bool est_lookup(const mo_est_dims *d, const char *s, size_t n,
			  double *out)
{
	/* a dimension's name first (no name reads as a number: none is "inf"
	 * or "nan"), then a number: graphs are built on every new shape */
	for (size_t i = 0; i < d->n && n > 0; i++) {
		const char *name = d->names[i];
		if (name[0] == s[0] && strncmp(name, s, n) == 0 && name[n] == '\0') {
			*out = (double)d->vals[i];
			return true;
		}
	}
	char *end;
	double v = strtod(s, &end);
	if (end == s + n && n > 0) {
		*out = v;
		return true;
	}
	return false;
}

/* The product over the first n bytes of expr. */
static double est_expr_n(const char *expr, size_t n, const mo_est_dims *d)
{
	double r = 1.0;
	const char *p = expr, *end = expr + n;
	while (p < end) {
		const char *star = memchr(p, '*', (size_t)(end - p));
		size_t k = star ? (size_t)(star - p) : (size_t)(end - p);
		double v;
		if (!est_lookup(d, p, k, &v))
			return -1.0;
		r *= v;
		p += k + (star != NULL);
	}
	return r;
}

double est_expr(const char *expr, const mo_est_dims *d)
{
	return est_expr_n(expr, strlen(expr), d);
}

/* ---- building ---------------------------------------------------------------- */

typedef struct mo_graph_builder {
	mo_est_graph *g;
	mo_arena *a;
	const mo_est_dims *d;
	const mo_layer_type *lt; /* NULL for the head / embedding */
	uint64_t align;
	const char *tprefix;     /* tensor name prefix of an inner block */
	const char *pprefix;     /* path prefix of an inner block */
	mo_error *err;
	bool failed;
} mo_graph_builder;

static void graph_builder_fail(mo_graph_builder *b, const char *what, const char *name)
{
	if (!b->failed)
		error_set(b->err, MO_ERR_INTERNAL, 0, 0,
			     "estimator op table: %s '%s'", what, name);
	b->failed = true;
}

static int graph_builder_find(const mo_graph_builder *b, const char *name)
{
	for (size_t i = b->g->n_t; i > 0; i--)
		if (strcmp(b->g->t[i - 1].name, name) == 0)
			return (int)(i - 1);
	return -1;
}

/* The tensor named tprefix + the token s (length n), without building the
 * name: graph building resolves every op's inputs this way. */
static int graph_builder_find_token(const mo_graph_builder *b, const char *s, size_t n)
{
	size_t pl = strlen(b->tprefix);
	for (size_t i = b->g->n_t; i > 0; i--) {
		const char *t = b->g->t[i - 1].name;
		if (strncmp(t, b->tprefix, pl) == 0 && strncmp(t + pl, s, n) == 0 &&
		    t[pl + n] == '\0')
			return (int)(i - 1);
	}
	return -1;
}

/* a + b (length bn) + c, in the arena (no printf: graphs are built on every
 * estimate). */
static const char *graph_builder_cat(mo_graph_builder *b, const char *x, const char *y,
			size_t yn, const char *z)
{
	size_t xn = strlen(x), zn = strlen(z);
	char *r = arena_alloc(b->a, xn + yn + zn + 1);
	if (!r) {
		b->failed = true;
		return NULL;
	}
	memcpy(r, x, xn);
	memcpy(r + xn, y, yn);
	memcpy(r + xn + yn, z, zn);
	r[xn + yn + zn] = '\0';
	return r;
}

static bool graph_builder_grow(mo_graph_builder *b, void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return true;
	size_t nc = *cap ? *cap * 2 : 64;
	void *p = arena_alloc(b->a, nc * sz);
	if (!p) {
		error_set(b->err, MO_ERR_NOMEM, 0, 0, "out of memory");
		b->failed = true;
		return false;
	}
	if (*v)
		memcpy(p, *v, n * sz);
	*v = p;
	*cap = nc;
	return true;
}

/* The prefixed name of a table token (length n). */
static const char *graph_builder_name(mo_graph_builder *b, const char *s, size_t n)
{
	return graph_builder_cat(b, b->tprefix, s, n, "");
}

static uint64_t graph_round(uint64_t align, double bytes)
{
	uint64_t v = u64_of(bytes + 0.5);
	if (v > MO_MAX_BYTES) /* out of range: the estimate refuses it */
		return UINT64_MAX / 4096;
	if (align > 1 && v)
		v = (v + align - 1) / align * align;
	return v;
}

static uint64_t graph_builder_round(const mo_graph_builder *b, double bytes)
{
	return graph_round(b->align, bytes);
}

/* "name:dtype:expr" or "name@base". Returns the tensor index or -1. */
static int graph_builder_tensor(mo_graph_builder *b, const char *spec, size_t n, int producer)
{
	mo_est_graph *g = b->g;
	const char *at = memchr(spec, '@', n), *colon = memchr(spec, ':', n);
	size_t nl = at ? (size_t)(at - spec) : colon ? (size_t)(colon - spec) : n;
	const char *name = graph_builder_name(b, spec, nl);
	if (!name || !graph_builder_grow(b, (void **)&g->t, &g->cap_t, g->n_t, sizeof(*g->t)))
		return -1;
	mo_est_tensor t = {.name = name, .producer = producer, .dtype = "view"};
	if (at) {
		int bi = graph_builder_find_token(b, at + 1, n - nl - 1);
		if (bi < 0) {
			const char *base = graph_builder_name(b, at + 1, n - nl - 1);
			graph_builder_fail(b, "unknown view base", base ? base : "?");
			return -1;
		}
		t.storage = g->t[bi].storage;
	} else {
		const char *c2 = colon ? memchr(colon + 1, ':', n - nl - 1) : NULL;
		if (!c2) {
			graph_builder_fail(b, "bad tensor", name);
			return -1;
		}
		size_t dn = (size_t)(c2 - colon - 1), en = (size_t)(spec + n - c2 - 1);
		double el = est_expr_n(c2 + 1, en, b->d);
		if (el < 0 || dn >= 16) {
			graph_builder_fail(b, "bad shape", name);
			return -1;
		}
		char dt[16];
		memcpy(dt, colon + 1, dn);
		dt[dn] = '\0';
		t.dtype = strcmp(dt, "c") == 0 ? b->d->cdtype : arena_strdup(b->a, dt);
		t.bytes = graph_builder_round(b, el * (double)est_dtype_bytes(dt, b->d));
		t.storage = (int)g->n_t;
		t.dims = c2 + 1;
		t.dims_len = (size_t)(spec + n - c2 - 1);
	}
	g->t[g->n_t] = t;
	return (int)g->n_t++;
}

/* The next space-separated word from *p: its start, its length in *len (0 past the last
 * word); *p moves past it. The op rows name tensors this way. */
static const char *graph_word(const char **p, size_t *len)
{
	const char *w = *p;
	while (*w == ' ')
		w++;
	const char *e = w;
	while (*e && *e != ' ')
		e++;
	*len = (size_t)(e - w);
	*p = e;
	return w;
}

static size_t graph_builder_count(const char *s)
{
	size_t n = 0, len;
	for (const char *p = s; graph_word(&p, &len), len;)
		n++;
	return n;
}

/* Resolves the space-separated names of `s` into *out. */
static bool graph_builder_refs(mo_graph_builder *b, const char *s, int **out, size_t *n)
{
	size_t cnt = graph_builder_count(s);
	*n = 0;
	*out = cnt ? arena_alloc(b->a, cnt * sizeof(int)) : NULL;
	if (cnt && !*out)
		return false;
	size_t len;
	for (const char *p = s, *w = graph_word(&p, &len); len; w = graph_word(&p, &len)) {
		int i = graph_builder_find_token(b, w, len);
		if (i < 0) {
			const char *name = graph_builder_name(b, w, len);
			graph_builder_fail(b, "unknown tensor", name ? name : "?");
			return false;
		}
		(*out)[(*n)++] = i;
	}
	return true;
}

static bool graph_builder_outs(mo_graph_builder *b, mo_est_op *op, const char *s, int producer)
{
	size_t cnt = graph_builder_count(s);
	op->out = cnt ? arena_alloc(b->a, cnt * sizeof(int)) : NULL;
	if (cnt && !op->out)
		return false;
	size_t len;
	for (const char *p = s, *w = graph_word(&p, &len); len; w = graph_word(&p, &len)) {
		int t = graph_builder_tensor(b, w, len, producer);
		if (t < 0)
			return false;
		op->out[op->n_out++] = t;
	}
	return true;
}

/* The layout path owning a row: exact, else its nearest listed ancestor;
 * -1 when none (the layer itself). */
static int graph_builder_path(const mo_graph_builder *b, const char *rel)
{
	char full[256];
	if (!b->lt)
		return -1;
	/* pprefix + rel, cut at the buffer as snprintf would */
	size_t pl = strlen(b->pprefix), rl = strlen(rel);
	if (pl > sizeof full - 1)
		pl = sizeof full - 1;
	if (rl > sizeof full - 1 - pl)
		rl = sizeof full - 1 - pl;
	memcpy(full, b->pprefix, pl);
	memcpy(full + pl, rel, rl);
	full[pl + rl] = '\0';
	size_t len = pl + rl;
	if (len && full[len - 1] == '.')
		full[--len] = '\0';
	while (len) {
		for (size_t p = 0; p < b->lt->n_paths; p++) {
			const char *name = b->lt->paths[p].name;
			if (name[0] == full[0] && strcmp(name, full) == 0)
				return (int)p;
		}
		char *dot = strrchr(full, '.');
		if (!dot)
			break;
		*dot = '\0';
		len = (size_t)(dot - full);
	}
	return -1;
}

static uint64_t graph_builder_sum(const mo_est_graph *g, const int *v, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += g->t[g->t[v[i]].storage].bytes;
	return s;
}

/* The bytes of a row's `bwd` list ("dtype:expr ..."); 0 for none. false
 * when an entry does not evaluate. */
static bool graph_bwd_bytes(const char *s, const mo_est_dims *d, uint64_t align, uint64_t *out)
{
	uint64_t sum = 0;
	size_t len;
	*out = 0;
	if (!s)
		return true;
	for (const char *p = s, *w = graph_word(&p, &len); len; w = graph_word(&p, &len)) {
		const char *colon = memchr(w, ':', len);
		size_t dn = colon ? (size_t)(colon - w) : 0;
		double el = colon ? est_expr_n(colon + 1, len - dn - 1, d) : -1.0;
		char dt[16];
		if (el < 0 || dn >= sizeof dt)
			return false;
		memcpy(dt, w, dn);
		dt[dn] = '\0';
		sum = u64_add(sum, graph_round(align, el * (double)est_dtype_bytes(dt, d)));
	}
	*out = sum;
	return true;
}

static uint64_t graph_builder_bwd(mo_graph_builder *b, const char *s)
{
	uint64_t sum;
	if (!graph_bwd_bytes(s, b->d, b->align, &sum)) {
		graph_builder_fail(b, "bad backward buffer", "bwd");
		return 0;
	}
	return sum;
}

/* A declaration row (op "input"): block inputs that do not exist yet. */
static void graph_builder_declare(mo_graph_builder *b, const char *s)
{
	size_t len;
	for (const char *p = s, *w = graph_word(&p, &len); len && !b->failed;
	     w = graph_word(&p, &len)) {
		size_t nl = strcspn(w, ":@");
		if (graph_builder_find_token(b, w, nl < len ? nl : len) < 0)
			graph_builder_tensor(b, w, len, -1);
	}
}

static void graph_builder_row(mo_graph_builder *b, const mo_op_row *r)
{
	mo_est_graph *g = b->g;
	if ((b->d->cond & r->when) != r->when || (b->d->cond & r->unless))
		return;
	if (strcmp(r->op, "input") == 0) {
		graph_builder_declare(b, r->out);
		return;
	}
	if (!graph_builder_grow(b, (void **)&g->ops, &g->cap_ops, g->n_ops, sizeof(*g->ops)))
		return;
	mo_est_op *op = &g->ops[g->n_ops];
	memset(op, 0, sizeof(*op));
	op->row = r;
	op->path = graph_builder_path(b, r->path);
	const char *pp = graph_builder_cat(b, b->pprefix, r->path, strlen(r->path), ":");
	op->name = pp ? graph_builder_cat(b, pp, r->op, strlen(r->op), "") : NULL;
	op->comm = r->comm;
	if (!graph_builder_refs(b, r->in, &op->in, &op->n_in) ||
	    !graph_builder_outs(b, op, r->out, (int)g->n_ops))
		return;
	if (r->save && !graph_builder_refs(b, r->save, &op->save, &op->n_save))
		return;
	if (!r->save) { /* every input and output */
		op->n_save = op->n_in + op->n_out;
		op->save = arena_alloc(b->a, (op->n_save + 1) * sizeof(int));
		if (!op->save) {
			b->failed = true;
			return;
		}
		/* an op may have no activation input (a weight cast): no memcpy
		 * from NULL */
		if (op->n_in)
			memcpy(op->save, op->in, op->n_in * sizeof(int));
		if (op->n_out)
			memcpy(op->save + op->n_in, op->out, op->n_out * sizeof(int));
	}
	op->flops = r->flops ? est_expr(r->flops, b->d) : 0.0;
	if (op->flops < 0) {
		graph_builder_fail(b, "bad FLOP expression", r->flops);
		return;
	}
	if (op->comm != MO_COMM_NONE) {
		uint64_t i = graph_builder_sum(g, op->in, op->n_in);
		uint64_t o = graph_builder_sum(g, op->out, op->n_out);
		op->comm_bytes = i > o ? i : o;
	}
	uint64_t bwd = graph_builder_bwd(b, r->bwd);
	if (bwd > g->bwd_grads)
		g->bwd_grads = bwd;
	g->flops += op->flops;
	g->n_ops++;
}

static void graph_builder_block(mo_graph_builder *b, const mo_framework *fw, mo_block_id id)
{
	const mo_op_block *blk = fw->blocks[id];
	for (size_t i = 0; blk && i < blk->n && !b->failed; i++)
		graph_builder_row(b, &blk->rows[i]);
}

static void graph_builder_layer(mo_graph_builder *b, const mo_framework *fw, const mo_model *m,
			bool moe)
{
	graph_builder_block(b, fw, MO_BLK_NORM_ATTN);
	if (m->dsv4_hybrid) {
		/* DeepSeek-V4's hybrid attention projects its output itself (grouped) */
		graph_builder_block(b, fw, MO_BLK_ATTN_HYBRID);
	} else if (model_dsa_table(m) && fw->blocks[MO_BLK_ATTN_DSA]) {
		/* DeepSeek-V3.2's sparse attention; a framework without its table
		 * prices the MLA (an `unmodelled` warning of the import) */
		graph_builder_block(b, fw, MO_BLK_ATTN_DSA);
		graph_builder_block(b, fw, MO_BLK_ATTN_PROJ);
	} else {
		graph_builder_block(b, fw,
				    m->multi_latent_attention ? MO_BLK_ATTN_MLA : MO_BLK_ATTN);
		graph_builder_block(b, fw, MO_BLK_ATTN_PROJ);
	}
	graph_builder_block(b, fw, MO_BLK_RESID_ATTN);
	graph_builder_block(b, fw, moe ? MO_BLK_MOE : MO_BLK_MLP);
	graph_builder_block(b, fw, MO_BLK_RESID_MLP);
}

/* An MTP layer: its own input block, the inner transformer_layer (tensor
 * names prefixed "L.", paths "transformer_layer."), its output block. */
static void graph_builder_mtp(mo_graph_builder *b, const mo_framework *fw, const mo_model *m,
			bool moe)
{
	graph_builder_block(b, fw, MO_BLK_MTP_IN);
	if (b->failed)
		return;
	b->tprefix = "";
	int mx = graph_builder_find(b, "mx");
	if (mx < 0) {
		graph_builder_fail(b, "MTP input block lacks", "mx");
		return;
	}
	mo_est_graph *g = b->g;
	if (!graph_builder_grow(b, (void **)&g->t, &g->cap_t, g->n_t, sizeof(*g->t)))
		return;
	g->t[g->n_t++] = (mo_est_tensor){.name = "L.x", .dtype = "view",
					 .storage = g->t[mx].storage, .producer = -1};
	b->tprefix = "L.";
	b->pprefix = "transformer_layer.";
	graph_builder_layer(b, fw, m, moe);
	b->tprefix = "";
	b->pprefix = "";
	graph_builder_block(b, fw, MO_BLK_MTP_OUT);
}

/* The storages some op saves (with no plan): every evaluation of the graph
 * starts from them. */
static void graph_builder_base_marks(mo_graph_builder *b)
{
	mo_est_graph *g = b->g;
	g->base_marks = arena_alloc(b->a, g->n_t + 1);
	if (!g->base_marks) {
		error_set(b->err, MO_ERR_NOMEM, 0, 0, "out of memory");
		b->failed = true;
		return;
	}
	for (size_t o = 0; o < g->n_ops; o++)
		for (size_t i = 0; i < g->ops[o].n_save; i++)
			g->base_marks[g->t[g->ops[o].save[i]].storage] |= MO_K_BASE;
}

/* A layer type's dimensions: DeepSeek-V4's compress ratio selects its rows
 * and the K/V width its attention reads. */
static void graph_typed_dims(mo_est_dims *typed, const mo_est_dims *d, const mo_model *m,
			     const mo_layer_type *lt)
{
	*typed = *d;
	typed->cond |= lt->compress_ratio == 4 ? MO_C_R4 : 0;
	typed->cond |= lt->compress_ratio == 128 ? MO_C_R128 : 0;
	double sq = est_expr("sq", d);
	est_dim(typed, "kt", est_hybrid_kv_width(m, sq > 0 ? (int64_t)sq : 0, lt->compress_ratio));
}

int est_graph_rescale(mo_est_graph *g, mo_arena *a, const mo_framework *fw, const mo_model *m,
		      const mo_est_dims *d, size_t type, const mo_est_graph *from)
{
	mo_est_dims typed;
	const mo_est_dims *use = d;
	if (type < m->n_types) {
		graph_typed_dims(&typed, d, m, &m->types[type]);
		use = &typed;
	}
	*g = *from;
	g->t = arena_alloc(a, (from->n_t + 1) * sizeof(*g->t));
	g->ops = arena_alloc(a, (from->n_ops + 1) * sizeof(*g->ops));
	if (!g->t || !g->ops)
		return -1;
	g->cap_t = from->n_t;
	g->cap_ops = from->n_ops;
	memcpy(g->t, from->t, from->n_t * sizeof(*g->t));
	memcpy(g->ops, from->ops, from->n_ops * sizeof(*g->ops));
	/* the numbers, in the order the builder takes them */
	for (size_t i = 0; i < g->n_t; i++) {
		mo_est_tensor *t = &g->t[i];
		if (!t->dims)
			continue; /* a view: no storage of its own */
		double el = est_expr_n(t->dims, t->dims_len, use);
		if (el < 0)
			return -1;
		t->bytes = graph_round(fw->align, el * (double)est_dtype_bytes(t->dtype, use));
	}
	g->flops = 0.0;
	g->bwd_grads = 0;
	for (size_t o = 0; o < g->n_ops; o++) {
		mo_est_op *op = &g->ops[o];
		const mo_op_row *r = op->row;
		op->flops = r->flops ? est_expr(r->flops, use) : 0.0;
		if (op->flops < 0)
			return -1;
		if (op->comm != MO_COMM_NONE) {
			uint64_t i = graph_builder_sum(g, op->in, op->n_in);
			uint64_t x = graph_builder_sum(g, op->out, op->n_out);
			op->comm_bytes = i > x ? i : x;
		}
		uint64_t bwd;
		if (!graph_bwd_bytes(r->bwd, use, fw->align, &bwd))
			return -1;
		if (bwd > g->bwd_grads)
			g->bwd_grads = bwd;
		g->flops += op->flops;
	}
	return 0;
}

int est_graph_build(mo_est_graph *g, mo_arena *a, const mo_framework *fw,
		       const mo_model *m, const mo_est_dims *d, size_t type,
		       int blk, mo_error *err)
{
	memset(g, 0, sizeof(*g));
	mo_graph_builder b = {.g = g, .a = a, .d = d, .align = fw->align, .tprefix = "",
		   .pprefix = "", .err = err};
	mo_est_dims typed;
	if (type < m->n_types) {
		const mo_layer_type *lt = &m->types[type];
		bool moe = lt->moe;
		b.lt = lt;
		graph_typed_dims(&typed, d, m, lt);
		b.d = &typed;
		if (lt->mtp)
			graph_builder_mtp(&b, fw, m, moe);
		else
			graph_builder_layer(&b, fw, m, moe);
	} else {
		graph_builder_block(&b, fw, (mo_block_id)blk);
	}
	if (!b.failed)
		graph_builder_base_marks(&b);
	return b.failed ? -1 : 0;
}
