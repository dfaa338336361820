/* The MindSpore Transformers corpus (tests/data/mindformers): every shipped
 * training YAML against the outcome written in expect.txt from reading the
 * file and the MindSpore Transformers source (README.md there): the model
 * the import gives, its parameter count against the published one, the
 * layers the file's recompute_config recomputes, and the diagnostics. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h" /* the model's fields, the config's lists */

#define CORPUS "tests/data/mindformers/"

struct block {
	char file[256];
	char model[512], moe[256], parallel[256], recompute[512];
	char errors[256], warnings[256];
	double params;
	int exit_code;
	bool model_none;
};

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *s = NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1))) {
			*len = fread(s, 1, (size_t)n, f);
			s[*len] = '\0';
		}
	}
	fclose(f);
	return s;
}

/* Copies the rest of a line after its keyword, without the comment. */
static void rest(char *dst, size_t size, const char *line, size_t kw)
{
	const char *s = line + kw;
	while (*s == ' ')
		s++;
	size_t n = strcspn(s, "#\n");
	while (n && s[n - 1] == ' ')
		n--;
	snprintf(dst, size, "%.*s", (int)n, s);
}

static size_t parse_expect(struct block *b, size_t cap)
{
	size_t len = 0, n = 0;
	char *text = read_all(CORPUS "expect.txt", &len);
	assert_non_null(text);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ')
			line++;
		struct block *c = n ? &b[n - 1] : NULL;
		if (strncmp(line, "file ", 5) == 0) {
			assert_true(n < cap);
			c = &b[n++];
			memset(c, 0, sizeof(*c));
			c->params = -1;
			rest(c->file, sizeof c->file, line, 5);
		} else if (!c || *line == '#') {
			continue;
		} else if (strncmp(line, "model none", 10) == 0) {
			c->model_none = true;
		} else if (strncmp(line, "model ", 6) == 0) {
			rest(c->model, sizeof c->model, line, 6);
		} else if (strncmp(line, "moe ", 4) == 0) {
			rest(c->moe, sizeof c->moe, line, 4);
		} else if (strncmp(line, "parallel ", 9) == 0) {
			rest(c->parallel, sizeof c->parallel, line, 9);
		} else if (strncmp(line, "recompute ", 10) == 0) {
			rest(c->recompute, sizeof c->recompute, line, 10);
		} else if (strncmp(line, "params ", 7) == 0) {
			c->params = strtod(line + 7, NULL);
		} else if (strncmp(line, "exit ", 5) == 0) {
			c->exit_code = atoi(line + 5);
		} else if (strncmp(line, "errors ", 7) == 0) {
			rest(c->errors, sizeof c->errors, line, 7);
		} else if (strncmp(line, "warnings ", 9) == 0) {
			rest(c->warnings, sizeof c->warnings, line, 9);
		}
	}
	free(text);
	return n;
}

/* The value of `key=` in a "k=v k=v" list, as text ("" when absent). */
static const char *field(const char *list, const char *key, char *buf, size_t size)
{
	char pat[64];
	snprintf(pat, sizeof pat, "%s=", key);
	for (const char *s = list; (s = strstr(s, pat)); s++) {
		if (s != list && s[-1] != ' ')
			continue;
		s += strlen(pat);
		snprintf(buf, size, "%.*s", (int)strcspn(s, " "), s);
		return buf;
	}
	buf[0] = '\0';
	return buf;
}

static void expect_int(const char *file, const char *list, const char *key, int64_t got, int *bad)
{
	char buf[64];
	if (!*field(list, key, buf, sizeof buf))
		return;
	long long want = atoll(buf);
	if (want != (long long)got) {
		fprintf(stderr, "%s: %s: want %lld, got %lld\n", file, key, want, (long long)got);
		(*bad)++;
	}
}

static void check_model(const struct block *b, const mo_model *m, int *bad)
{
	expect_int(b->file, b->model, "layers", m->num_layers, bad);
	expect_int(b->file, b->model, "mtp", m->mtp_num_layers, bad);
	expect_int(b->file, b->model, "hidden", m->hidden_size, bad);
	expect_int(b->file, b->model, "ffn", m->ffn_hidden_size, bad);
	expect_int(b->file, b->model, "heads", m->num_attention_heads, bad);
	if (!m->multi_latent_attention)
		expect_int(b->file, b->model, "kv", m->num_query_groups, bad);
	expect_int(b->file, b->model, "vocab", m->vocab_size, bad);
	expect_int(b->file, b->model, "seq", m->seq_length, bad);
	bool moe = m->num_moe_experts > 0;
	expect_int(b->file, b->moe, "experts", m->num_moe_experts, bad);
	expect_int(b->file, b->moe, "topk", moe ? m->moe_router_topk : 0, bad);
	expect_int(b->file, b->moe, "moe_ffn", moe ? m->moe_ffn_hidden_size : 0, bad);
	expect_int(b->file, b->moe, "shared_ffn", moe ? m->moe_shared_expert_intermediate_size : 0,
		   bad);
	expect_int(b->file, b->moe, "first_dense", moe ? m->first_k_dense_replace : 0, bad);
	expect_int(b->file, b->parallel, "dp", m->data_parallel, bad);
	expect_int(b->file, b->parallel, "tp", m->tensor_parallel, bad);
	expect_int(b->file, b->parallel, "pp", m->pipeline_parallel, bad);
	expect_int(b->file, b->parallel, "vpp", m->virtual_pipeline, bad);
	expect_int(b->file, b->parallel, "ep", m->expert_parallel, bad);
	expect_int(b->file, b->parallel, "cp", m->context_parallel, bad);
	expect_int(b->file, b->parallel, "sp", m->sequence_parallel, bad);
	expect_int(b->file, b->parallel, "distopt", m->distributed_optimizer, bad);
	expect_int(b->file, b->parallel, "mbn", m->micro_batch_num, bad);
	expect_int(b->file, b->parallel, "mbs", m->micro_batch_size, bad);
	if (b->params > 0) {
		double got = (double)mo_model_parameters(m);
		double err = fabs(got - b->params) / b->params;
		fprintf(stderr, "  %-48s %8.2fB published %8.2fB (%+.2f%%)\n", b->file, got / 1e9,
			b->params / 1e9, 100.0 * (got - b->params) / b->params);
		if (err > 0.01) {
			fprintf(stderr, "%s: parameters %.0f, published %.0f\n", b->file, got, b->params);
			(*bad)++;
		}
	}
}

/* Layer ranges as "0-3,8" ("-" when none). */
static void ranges_text(char *buf, size_t size, const unsigned char *on, int64_t n)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int64_t i = 0; i < n; i++) {
		if (!on[i] || (i && on[i - 1]))
			continue;
		int64_t j = i;
		while (j + 1 < n && on[j + 1])
			j++;
		o += (size_t)snprintf(buf + o, size - o, o ? ",%lld" : "%lld", (long long)i);
		if (j > i)
			o += (size_t)snprintf(buf + o, size - o, "-%lld", (long long)j);
		if (o >= size)
			break;
	}
	if (!o)
		snprintf(buf, size, "-");
}

static void mark(unsigned char *on, int64_t n, const mo_layers *l)
{
	for (size_t i = 0; i < l->n; i++)
		for (uint64_t id = l->r[i].lo; id <= l->r[i].hi && id < (uint64_t)n; id++)
			on[id] = 1;
}

static void check_one_list(const struct block *b, const char *key, const unsigned char *on,
			   int64_t n, int *bad)
{
	char want[256], got[512];
	if (!*field(b->recompute, key, want, sizeof want))
		return;
	ranges_text(got, sizeof got, on, n);
	if (strcmp(want, got) != 0) {
		fprintf(stderr, "%s: recompute %s: want %s, got %s\n", b->file, key, want, got);
		(*bad)++;
	}
}

static void check_recompute(const struct block *b, const mo_config *c, int *bad)
{
	int64_t n = 200000;
	unsigned char *on = calloc((size_t)n, 1);
	assert_non_null(on);
	if (c->mode != MO_MODE_NONE)
		mark(on, n, &c->full);
	check_one_list(b, "full", on, n, bad);
	memset(on, 0, (size_t)n);
	for (size_t i = 0; c->mode != MO_MODE_NONE && i < c->select.n; i++)
		mark(on, n, &c->select.p[i].layers);
	check_one_list(b, "select", on, n, bad);
	memset(on, 0, (size_t)n);
	for (size_t i = 0; c->comm_enable && i < c->comm.n; i++)
		mark(on, n, &c->comm.p[i].layers);
	check_one_list(b, "comm", on, n, bad);
	free(on);
}

static bool has_code(const mo_diags *d, mo_severity sev, const char *code)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *x = mo_diags_get(d, i);
		if (x->severity == sev && strcmp(x->code, code) == 0)
			return true;
	}
	return false;
}

static void check_diags(const struct block *b, const mo_diags *d, int *bad)
{
	char list[256];
	/* errors: exactly the listed codes */
	snprintf(list, sizeof list, "%s", b->errors);
	for (char *c = strtok(list, " "); c; c = strtok(NULL, " ")) {
		if (strcmp(c, "-") != 0 && !has_code(d, MO_SEV_ERROR, c)) {
			fprintf(stderr, "%s: error %s not reported\n", b->file, c);
			(*bad)++;
		}
	}
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *x = mo_diags_get(d, i);
		if (x->severity != MO_SEV_ERROR)
			continue;
		char pat[80];
		snprintf(pat, sizeof pat, " %s ", x->code);
		char pad[300];
		snprintf(pad, sizeof pad, " %s ", b->errors);
		if (!strstr(pad, pat)) {
			fprintf(stderr, "%s: unexpected error %s: %s\n", b->file, x->code, x->message);
			(*bad)++;
		}
	}
	snprintf(list, sizeof list, "%s", b->warnings);
	for (char *c = strtok(list, " "); c; c = strtok(NULL, " ")) {
		if (strcmp(c, "-") != 0 && !has_code(d, MO_SEV_WARNING, c)) {
			fprintf(stderr, "%s: warning %s not reported\n", b->file, c);
			(*bad)++;
		}
	}
	int want_exit = mo_diags_errors(d) ? 1 : 0;
	if (want_exit != b->exit_code) {
		fprintf(stderr, "%s: exit %d, want %d\n", b->file, want_exit, b->exit_code);
		(*bad)++;
	}
}

static void test_corpus(void **state)
{
	(void)state;
	static struct block blocks[128];
	size_t n = parse_expect(blocks, 128);
	assert_true(n >= 45);
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		const struct block *b = &blocks[i];
		char path[512];
		size_t len = 0;
		snprintf(path, sizeof path, CORPUS "%.255s", b->file);
		char *text = read_all(path, &len);
		assert_non_null(text);
		mo_diags *d = NULL;
		mo_config *c = NULL;
		mo_model *m = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		mo_input in = {.config = text, .config_len = len, .config_name = b->file};
		assert_int_equal(mo_check(&c, &m, d, &in, &err), 0);
		if (b->model_none && m) {
			fprintf(stderr, "%s: a model where the file has none\n", b->file);
			bad++;
		}
		if (!b->model_none && !m) {
			fprintf(stderr, "%s: no model\n", b->file);
			bad++;
		}
		if (m)
			check_model(b, m, &bad);
		check_recompute(b, c, &bad);
		check_diags(b, d, &bad);
		mo_model_free(m);
		mo_config_free(c);
		mo_diags_free(d);
		free(text);
	}
	fprintf(stderr, "  %zu files, %d mismatches\n", n, bad);
	assert_int_equal(bad, 0);
}

/* r1.x model_config classes read their way (the corpus's GPT-2 files),
 * their dropout names and defaults included, a pet_config said
 * unmodelled:
 * GPT2Config's FFN is expand_ratio x hidden, not gated, with LayerNorm,
 * biases, a tied head and learned positions (gpt2.py r1.0.0): GPT-2 small
 * is 124.4M parameters (Hugging Face: 124,439,808). BertConfig is an
 * encoder: an `unsupported` error at its type. */
static void test_legacy_classes(void **state)
{
	(void)state;
	static const char gpt2[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: GPT2Config\n    seq_length: 1024\n"
	    "    vocab_size: 50257\n    hidden_size: 768\n    num_layers: 12\n"
	    "    num_heads: 12\n    expand_ratio: 4\n    hidden_act: \"gelu\"\n"
	    "  arch:\n    type: GPT2LMHeadModel\n";
	mo_diags *d = NULL;
	mo_model *m = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, gpt2, strlen(gpt2), "gpt2", NULL, NULL), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(m->ffn_hidden_size, 3072);
	assert_string_equal(m->normalization, "LayerNorm");
	assert_false(m->untie_embeddings_and_output_weights);
	double got = (double)mo_model_parameters(m);
	assert_true(fabs(got - 124439808.0) / 124439808.0 < 0.01);
	/* the class's dropout (gpt2_config.py:116-117, v1.0.0: 0.1 each) */
	assert_true(m->hidden_dropout == 0.1 && m->attention_dropout == 0.1);
	mo_model_free(m);
	mo_diags_free(d);
	/* its own names for them, read: no dropout on attention probabilities */
	static const char gpt2_rates[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: GPT2Config\n    num_layers: 2\n"
	    "    hidden_size: 64\n    num_heads: 4\n    hidden_dropout_rate: 0.2\n"
	    "    attention_dropout_rate: 0.0\n    embedding_dropout_prob: 0.1\n"
	    "    pet_config:\n      pet_type: lora\n      lora_rank: 8\n"
	    "  arch:\n    type: GPT2LMHeadModel\n";
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, gpt2_rates, strlen(gpt2_rates), "gpt2", NULL, NULL), 0);
	assert_true(m->hidden_dropout == 0.2 && m->attention_dropout == 0.0);
	/* LoRA: said unmodelled at its key, with how the figures are off */
	size_t pet = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		assert_string_not_equal(g->code, "unread-key");
		if (strcmp(g->code, "unmodelled") == 0 && g->line == 11 &&
		    strstr(g->message, "full fine-tune"))
			pet++;
	}
	assert_int_equal(pet, 1);
	mo_model_free(m);
	mo_diags_free(d);
	static const char bert[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: BertConfig\n    num_layers: 12\n"
	    "    hidden_size: 768\n    num_heads: 12\n    vocab_size: 30522\n"
	    "  arch:\n    type: BertForPreTraining\n";
	assert_int_equal(mo_diags_new(&d), 0);
	int rc = mo_model_load(&m, d, bert, strlen(bert), "bert", NULL, NULL);
	const mo_diag *u = NULL;
	for (size_t i = 0; i < mo_diags_count(d) && !u; i++)
		if (strcmp(mo_diags_get(d, i)->code, "unsupported") == 0)
			u = mo_diags_get(d, i);
	assert_non_null(u);
	assert_int_equal(u->severity, MO_SEV_ERROR);
	assert_int_equal(u->line, 4);
	if (rc == 0)
		mo_model_free(m);
	mo_diags_free(d);
	/* TeleChat r1.1.0: ffn_dim_multiplier is the FFN width itself */
	static const char telechat[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: TelechatConfig\n    num_layers: 30\n"
	    "    hidden_size: 4096\n    num_heads: 32\n    vocab_size: 160256\n"
	    "    ffn_dim_multiplier: 12288\n"
	    "  arch:\n    type: TelechatForCausalLM\n";
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, telechat, strlen(telechat), "telechat", NULL, NULL), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(m->ffn_hidden_size, 12288);
	mo_model_free(m);
	mo_diags_free(d);
	/* iFlytekSpark-13B (v1.0.2 45d1fa53, research/iflytekspark): ffn_hidden_size 28672 is
	 * the two gated halves (IFlytekSparkMLP: fc0 and fc1 5120 -> 14336, gate_gelu, fc2
	 * 14336 -> 5120), the fused q_k_v_proj 5120 -> 15360 and out_proj, LayerNorm, the head
	 * the embedding's word_table: 40 x (4 x 5120^2 + 3 x 5120 x 14336) + 60000 x 5120 =
	 * 13,309,501,440 weights (norms and biases add under 0.1%) */
	static const char spark[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: IFlytekSparkConfig\n    seq_length: 32768\n"
	    "    hidden_size: 5120\n    ffn_hidden_size: 28672\n    num_layers: 40\n"
	    "    num_heads: 40\n    vocab_size: 60000\n    hidden_act: \"fast_gelu\"\n"
	    "  arch:\n    type: IFlytekSparkModelForCasualLM\n";
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, spark, strlen(spark), "spark", NULL, NULL), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(m->ffn_hidden_size, 14336);
	assert_string_equal(m->hidden_act, "geglu");
	assert_string_equal(m->normalization, "LayerNorm");
	assert_false(m->untie_embeddings_and_output_weights);
	got = (double)mo_model_parameters(m);
	assert_true(fabs(got - 13309501440.0) / 13309501440.0 < 0.001);
	mo_model_free(m);
	mo_diags_free(d);
}

/* LlamaConfig's qkv_has_bias (the Qwen1.5 / Qwen2 / Qwen2.5 YAMLs set it True): biases on
 * wq, wk and wv, none on wo (mindformers/models/llama/llama_transformer.py:233-276 at
 * v1.6.0 68fa8494); left out, the class's default False (llama_config.py:157 there). The
 * model section of research/qwen2_5/finetune_qwen2_5_7b_8k.yaml at v1.6.0; the count with
 * the biases is the published one to the parameter. */
static void test_llama_qkv_bias(void **state)
{
	(void)state;
	static const char with[] =
	    "run_mode: 'finetune'\n"
	    "model:\n  model_config:\n    type: LlamaConfig\n    seq_length: 8192\n"
	    "    hidden_size: 3584\n    num_layers: 28\n    num_heads: 28\n    n_kv_heads: 4\n"
	    "    vocab_size: 152064\n    intermediate_size: 18944\n    qkv_has_bias: True\n"
	    "  arch:\n    type: LlamaForCausalLM\n";
	static const char without[] =
	    "run_mode: 'finetune'\n"
	    "model:\n  model_config:\n    type: LlamaConfig\n    seq_length: 8192\n"
	    "    hidden_size: 3584\n    num_layers: 28\n    num_heads: 28\n    n_kv_heads: 4\n"
	    "    vocab_size: 152064\n    intermediate_size: 18944\n"
	    "  arch:\n    type: LlamaForCausalLM\n";
	const char *texts[] = {with, without};
	int64_t params[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		mo_diags *d = NULL;
		mo_model *m = NULL;
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_model_load(&m, d, texts[i], strlen(texts[i]), "qwen", NULL, NULL),
				 0);
		assert_int_equal(mo_diags_errors(d), 0);
		for (size_t k = 0; k < mo_diags_count(d); k++)
			assert_string_not_equal(mo_diags_get(d, k)->code, "unread-key");
		assert_int_equal(m->add_qkv_bias, i == 0);
		assert_false(m->add_bias_linear);
		params[i] = mo_model_parameters(m);
		mo_model_free(m);
		mo_diags_free(d);
	}
	/* Qwen2.5-7B's Hugging Face safetensors total; the biases are 28 layers x (wq's 3584 +
	 * wk's and wv's 4 x 128 each) */
	assert_int_equal(params[0], 7615616512LL);
	assert_int_equal(params[0] - params[1], 28 * (3584 + 2 * 512));
}

/* Loads a small training YAML; counts its findings of `code` (at `path`
 * when given), and checks no error. */
static mo_model *load_yaml(const char *text, mo_diags **d)
{
	mo_model *m = NULL;
	assert_int_equal(mo_diags_new(d), 0);
	assert_int_equal(mo_model_load(&m, *d, text, strlen(text), "class", NULL, NULL), 0);
	assert_int_equal(mo_diags_errors(*d), 0);
	return m;
}

static size_t count_diags(const mo_diags *d, const char *code, const char *path)
{
	size_t n = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		if (strcmp(g->code, code) == 0 && (!path || strcmp(g->path, path) == 0))
			n++;
	}
	return n;
}

static void drop(mo_model *m, mo_diags *d)
{
	mo_model_free(m);
	mo_diags_free(d);
}

/* GLMConfig's own names (mindformers/models/glm at v1.0.0): inner_hidden_size is the FFN
 * width (layers.py:35-57), hidden_size_per_attention_head the head width
 * (attention.py:176-181), activation_func GEGLU the gated GeLU (layers.py:51-53); the
 * sandwich order's two extra norms (layers.py:202-204) and a model without its final norm
 * (glm.py:172) are said unmodelled; ids, the 2D rotary and the stored-only
 * is_enhanced_encoder are nothing to memory. */
static void test_glm_class_keys(void **state)
{
	(void)state;
	static const char glm[] =
	    "run_mode: 'finetune'\n"
	    "model:\n  model_config:\n    type: GLMConfig\n    vocab_size: 1000\n"
	    "    hidden_size: 64\n    num_layers: 2\n    num_heads: 4\n"
	    "    inner_hidden_size: 96\n    hidden_size_per_attention_head: 8\n"
	    "    activation_func: 'GEGLU'\n    layernorm_order: 'sandwich'\n"
	    "    use_final_layernorm: False\n    position_encoding_2d: True\n"
	    "    is_enhanced_encoder: True\n    mask_token_id: 130000\n"
	    "    gmask_token_id: 130001\n    is_sample_acceleration: False\n"
	    "  arch:\n    type: GLMForPreTraining\n";
	mo_diags *d = NULL;
	mo_model *m = load_yaml(glm, &d);
	assert_int_equal(m->ffn_hidden_size, 96);
	assert_int_equal(m->kv_channels, 8);
	assert_string_equal(m->hidden_act, "geglu");
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	assert_int_equal(count_diags(d, "unmodelled", "model.model_config.layernorm_order"), 1);
	assert_int_equal(count_diags(d, "unmodelled", "model.model_config.use_final_layernorm"), 1);
	drop(m, d);
	/* the released file's values: 'post', a final norm, GELU, the head width None */
	static const char plain[] =
	    "run_mode: 'finetune'\n"
	    "model:\n  model_config:\n    type: GLMConfig\n    vocab_size: 1000\n"
	    "    hidden_size: 64\n    num_layers: 2\n    num_heads: 4\n"
	    "    inner_hidden_size: 256\n    hidden_size_per_attention_head:\n"
	    "    activation_func: 'GELU'\n    layernorm_order: 'post'\n"
	    "    use_final_layernorm: True\n"
	    "  arch:\n    type: GLMForPreTraining\n";
	m = load_yaml(plain, &d);
	assert_int_equal(m->ffn_hidden_size, 256);
	assert_int_equal(m->kv_channels, 16);
	assert_string_equal(m->hidden_act, "gelu");
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	assert_int_equal(count_diags(d, "unmodelled", "model.model_config.layernorm_order"), 0);
	assert_int_equal(count_diags(d, "unmodelled", "model.model_config.use_final_layernorm"), 0);
	drop(m, d);
}

/* IFlytekSparkConfig (research/iflytekspark at v1.0.2): dropout_rate is the attention's
 * and the hidden dropout (iflytekspark_layers.py:461, :1216), compute_type the compute
 * dtype (:428, :848), seq_parallel the sequence parallelism (:942-960); sparse_local_size
 * only bounds the flash kernel's window, is_reward_model is only stored. */
static void test_spark_class_keys(void **state)
{
	(void)state;
	static const char spark[] =
	    "run_mode: 'train'\n"
	    "parallel_config:\n  data_parallel: 1\n  model_parallel: 2\n  pipeline_stage: 1\n"
	    "model:\n  model_config:\n    type: IFlytekSparkConfig\n    seq_length: 1024\n"
	    "    hidden_size: 64\n    ffn_hidden_size: 256\n    num_layers: 2\n"
	    "    num_heads: 4\n    vocab_size: 1000\n    compute_type: \"float16\"\n"
	    "    dropout_rate: 0.25\n    sparse_local_size: 512\n    seq_parallel: True\n"
	    "    is_reward_model: False\n"
	    "  arch:\n    type: IFlytekSparkModelForCasualLM\n";
	mo_diags *d = NULL;
	mo_model *m = load_yaml(spark, &d);
	assert_true(m->hidden_dropout == 0.25 && m->attention_dropout == 0.25);
	assert_string_equal(m->compute_dtype, "float16");
	assert_true(m->sequence_parallel);
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	drop(m, d);
}

/* WizardCoderConfig (research/wizardcoder/wizardcoder.py:187-197 at v1.0.0): the learned
 * position table has n_position rows, dropout_prob is the embedding's dropout;
 * use_select_recompute turns the layers' full recompute off for the attention's own
 * (:237-246): said unmodelled when on, nothing when off (BloomConfig's too). */
static void test_wizardcoder_class_keys(void **state)
{
	(void)state;
	static const char wc[] =
	    "run_mode: 'finetune'\n"
	    "recompute_config:\n  recompute: True\n"
	    "model:\n  model_config:\n    type: WizardCoderConfig\n    seq_length: 2048\n"
	    "    n_position: 8192\n    hidden_size: 64\n    num_layers: 2\n    num_heads: 4\n"
	    "    vocab_size: 1000\n    dropout_prob: 0.1\n    use_select_recompute: True\n"
	    "    eos_token: 0\n    pad_token: 999\n    layernorm_dtype: \"float32\"\n"
	    "    softmax_dtype: \"float16\"\n"
	    "  arch:\n    type: WizardCoderLMHeadModel\n";
	mo_diags *d = NULL;
	mo_model *m = load_yaml(wc, &d);
	assert_int_equal(m->max_position_embeddings, 8192);
	assert_int_equal(m->seq_length, 2048);
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	assert_int_equal(count_diags(d, "unmodelled", "model.model_config.use_select_recompute"), 1);
	drop(m, d);
	static const char bloom[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: BloomConfig\n    seq_length: 2048\n"
	    "    hidden_size: 64\n    num_layers: 2\n    num_heads: 4\n    vocab_size: 1000\n"
	    "    use_select_recompute: False\n"
	    "  arch:\n    type: BloomLMHeadModel\n";
	m = load_yaml(bloom, &d);
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	assert_int_equal(count_diags(d, "unmodelled", "model.model_config.use_select_recompute"), 0);
	drop(m, d);
}

/* PanguAlphaConfig's MoE (mindformers/models/pangualpha/pangualpha.py:257-261 at v1.0.0):
 * with use_moe, expert_num experts and per_token_num_experts_chosen of them per token,
 * whatever order the keys come in; without, dense (MoEConfig(expert_num=1)) whatever
 * moe_config says. dropout_rate is no parameter of the class. */
static void test_pangu_class_keys(void **state)
{
	(void)state;
	static const char moe[] =
	    "run_mode: 'train'\n"
	    "model:\n  model_config:\n    type: PanguAlphaConfig\n    seq_length: 1024\n"
	    "    vocab_size: 1000\n    hidden_size: 64\n    ffn_hidden_size: 256\n"
	    "    num_layers: 2\n    num_heads: 4\n    expert_num: 8\n"
	    "    per_token_num_experts_chosen: 2\n    use_moe: True\n    dropout_rate: 0.1\n"
	    "    eod_token_id: 6\n    post_layernorm_residual: False\n"
	    "  arch:\n    type: PanguAlphaHeadModel\n";
	mo_diags *d = NULL;
	mo_model *m = load_yaml(moe, &d);
	assert_int_equal(m->num_moe_experts, 8);
	assert_int_equal(m->moe_router_topk, 2);
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	drop(m, d);
	static const char dense[] =
	    "run_mode: 'train'\n"
	    "moe_config:\n  expert_num: 4\n"
	    "model:\n  model_config:\n    type: PanguAlphaConfig\n    seq_length: 1024\n"
	    "    vocab_size: 1000\n    hidden_size: 64\n    ffn_hidden_size: 256\n"
	    "    num_layers: 2\n    num_heads: 4\n    use_moe: False\n    expert_num: 8\n"
	    "    per_token_num_experts_chosen: 2\n"
	    "  arch:\n    type: PanguAlphaHeadModel\n";
	m = load_yaml(dense, &d);
	assert_int_equal(m->num_moe_experts, 0);
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	drop(m, d);
}

/* GPT2ForSequenceClassification's score head (gpt2.py:213-228 at v1.0.0) is said
 * unmodelled at num_labels; GPT2LMHeadModel reads no num_labels. auto parallel's
 * mem_coeff (core/parallel_config.py:56) is said unmodelled; the inference kernels'
 * switches and ids of any class are nothing to memory. */
static void test_unmodelled_class_keys(void **state)
{
	(void)state;
	static const char cls[] =
	    "run_mode: 'finetune'\n"
	    "model:\n  model_config:\n    type: GPT2Config\n    num_layers: 2\n"
	    "    hidden_size: 64\n    num_heads: 4\n    num_labels: 2\n"
	    "    use_prompt_flash_attention: False\n"
	    "  arch:\n    type: %s\n";
	const char *archs[] = {"GPT2ForSequenceClassification", "GPT2LMHeadModel"};
	for (int i = 0; i < 2; i++) {
		char text[512];
		snprintf(text, sizeof text, cls, archs[i]);
		mo_diags *d = NULL;
		mo_model *m = load_yaml(text, &d);
		assert_int_equal(count_diags(d, "unread-key", NULL), 0);
		assert_int_equal(count_diags(d, "unmodelled", "model.model_config.num_labels"),
				 i == 0);
		drop(m, d);
	}
	static const char auto_parallel[] =
	    "run_mode: 'train'\n"
	    "parallel:\n  parallel_mode: 2\n  search_mode: \"recursive_programming\"\n"
	    "parallel_config:\n  mem_coeff: 0.1\n  data_parallel: 1\n  model_parallel: 1\n"
	    "model:\n  model_config:\n    type: LlamaConfig\n    seq_length: 1024\n"
	    "    hidden_size: 64\n    num_layers: 2\n    num_heads: 4\n    vocab_size: 1000\n"
	    "    use_prompt_flash_attention: False\n    use_incre_flash_attention: False\n"
	    "    user_token_id: 195\n    assistant_token_id: 196\n    max_new_tokens: 512\n"
	    "    fused_rms_norm: True\n    residual_dtype: \"float32\"\n"
	    "  arch:\n    type: LlamaForCausalLM\n";
	mo_diags *d = NULL;
	mo_model *m = load_yaml(auto_parallel, &d);
	assert_int_equal(count_diags(d, "unread-key", NULL), 0);
	assert_int_equal(count_diags(d, "unmodelled", "parallel_config.mem_coeff"), 1);
	drop(m, d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_legacy_classes),
		cmocka_unit_test(test_llama_qkv_bias),
		cmocka_unit_test(test_glm_class_keys),
		cmocka_unit_test(test_spark_class_keys),
		cmocka_unit_test(test_wizardcoder_class_keys),
		cmocka_unit_test(test_pangu_class_keys),
		cmocka_unit_test(test_unmodelled_class_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
