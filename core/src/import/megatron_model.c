/* Megatron-LM arguments: the model's shape, vocabulary, positions, layer,
 * multi-latent attention, precision and training settings, with
 * arguments.py's defaults and derived values. */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the model (arguments.py's defaults and derived values)
 * -------------------- */

static int64_t megatron_required(struct mo_megatron_import *g,
				    const char *flag, int64_t lo, int64_t hi,
				    int64_t fallback,
				    const struct mo_megatron_arg **src)
{
	int64_t v;
	*src = NULL;
	if (megatron_int(g, flag, lo, hi, &v, src))
		return v;
	if (!megatron_find(g, flag))
		megatron_diag(g, MO_SEV_ERROR, "missing-key", 0, 0, flag,
				 "%s is missing: Megatron requires it", flag);
	return fallback;
}

/* --quick-geglu: a gated unit with quick GeLU, gated_linear_unit as with
 * --geglu (training/argument_utils.py:323-326 at d98e8a64; fc1 2 x ffn wide,
 * ffn 4 x hidden unless given, arguments.py:1320-1329) */
static bool megatron_quick_geglu(struct mo_megatron_import *g)
{
	return megatron_flag(g, "--quick-geglu");
}

/* MindSpeed-LLM's --fc-type: `up_down` turns gated_linear_unit off, any other
 * value leaves the MLP as the flags give it (core/transformer/mlp.py:228-229,
 * features_manager/models/module.py:54 at c77308a1). Without a gated flag
 * the MLP is the one priced; with one it is priced gated (2 x ffn wide). */
static void megatron_read_fc_type(struct mo_megatron_import *g,
				  const struct mo_megatron_shape *s)
{
	struct mo_megatron_arg *a = megatron_find(g, "--fc-type");
	if (a && a->n_values == 1 && strcmp(a->value, "up_down") == 0 &&
	    (s->swiglu || s->geglu))
		megatron_unmodelled(g, a, "--fc-type up_down turns the gated MLP off (fc1 ffn "
					  "wide): priced gated, fc1 2 x ffn");
}

void megatron_read_shape(struct mo_megatron_import *g,
				   struct mo_megatron_out *o,
				   struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t v;
	s->layers = megatron_required(g, "--num-layers", 1,
					 MO_MODEL_MAX_LAYERS, 1, &a);
	megatron_read_noop(g, s);
	megatron_put_int(o, MO_SEC_MODEL, "num_layers", s->layers - s->n_noop,
			    MF_NUM_LAYERS, s->n_noop ? NULL : a,
			    "--num-layers without the --noop-layers");
	/* MindSpeed-LLM 2.0.0 names the MTP layers --num-nextn-predict-layers
	 * (mindspeed_llm/training/arguments.py:162 at v2.0.0 3a712f58, default 0); 2.1.0
	 * reads Megatron's --mtp-num-layers */
	if ((megatron_int(g, "--mtp-num-layers", 0, MO_MODEL_MAX_MTP, &v, &a) ||
	     megatron_int(g, "--num-nextn-predict-layers", 0, MO_MODEL_MAX_MTP, &v, &a)) &&
	    v > 0) {
		s->mtp = v;
		megatron_put_int(o, MO_SEC_MODEL, "mtp_num_layers", v,
				    MF_MTP, a, NULL);
	}
	s->hidden =
	    megatron_required(g, "--hidden-size", 1, 1 << 24, 4096, &a);
	megatron_put_int(o, MO_SEC_MODEL, "hidden_size", s->hidden,
			    MF_HIDDEN, a, NULL);
	s->swiglu = megatron_flag(g, "--swiglu");
	/* MindSpeed-LLM's GeLU flags set gated_linear_unit (its
	 * mindspeed_llm/core/transformer/mlp.py core_mlp_init: --geglu and
	 * --gelu-tanh both): fc1 is 2 x ffn wide, as with --swiglu */
	s->geglu = !s->swiglu && (megatron_flag(g, "--geglu") ||
				  megatron_flag(g, "--gelu-tanh") ||
				  megatron_quick_geglu(g));
	a = NULL;
	if (megatron_int(g, "--ffn-hidden-size", 1, 1 << 26, &v, &a))
		s->ffn = v;
	else
		s->ffn = s->swiglu ? (4 * s->hidden * 2 / 3) / 64 * 64
				   : 4 * s->hidden;
	megatron_put_int(
	    o, MO_SEC_MODEL, "ffn_hidden_size", s->ffn, MF_FFN, a,
	    s->swiglu ? "default int(4 x hidden x 2/3 / 64) x 64 (--swiglu)"
		      : "default 4 x hidden");
	s->heads = megatron_required(g, "--num-attention-heads", 1, 1 << 20,
					32, &a);
	megatron_put_int(o, MO_SEC_MODEL, "num_attention_heads", s->heads,
			    MF_HEADS, a, NULL);
	bool gqa = megatron_flag(g, "--group-query-attention");
	int64_t groups = 1;
	a = NULL;
	if (megatron_int(g, "--num-query-groups", 1, 1 << 20, &v, &a))
		groups = v;
	s->groups = gqa ? groups : s->heads;
	if (gqa)
		megatron_put_int(
		    o, MO_SEC_MODEL, "num_query_groups", groups, MF_GROUPS, a,
		    a ? NULL : "--group-query-attention, default 1 group");
	else
		megatron_put_int(
		    o, MO_SEC_MODEL, "num_query_groups", s->heads, MF_GROUPS,
		    NULL, "no --group-query-attention: one group per head");
	if (megatron_int(g, "--kv-channels", 1, 1 << 20, &v, &a))
		megatron_put_int(o, MO_SEC_MODEL, "kv_channels", v,
				    MF_KV_CHANNELS, a, NULL);
}

static const char *const mo_megatron_tokenizers[] = {
    "BertWordPieceLowerCase",
    "BertWordPieceCase",
    "GPT2BPETokenizer",
    "SentencePieceTokenizer",
    "GPTSentencePieceTokenizer",
    "HuggingFaceTokenizer",
    "Llama2Tokenizer",
    "TikTokenizer",
    "MultimodalTokenizer",
    "NullTokenizer",
    "NullMultimodalTokenizer",
    "SFTTokenizer",
    "PretrainedFromHF",	 /* MindSpeed-LLM's Hugging Face tokenizer */
    "MagistralTokenizer", /* MindSpeed-LLM's (Mistral's Tekken) */
    NULL};

/* The GPT-2 BPE vocabulary (vocab.json) every GPT2BPETokenizer run loads. */
#define MO_MG_GPT2_VOCAB 50257

void megatron_read_vocab(struct mo_megatron_import *g, struct mo_megatron_out *o,
			 struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *a = NULL, *t = NULL;
	int64_t v;
	const char *tok = megatron_choice(g, "--tokenizer-type",
					     mo_megatron_tokenizers, &t);
	struct mo_megatron_arg *file = megatron_find(g, "--vocab-file");
	if (megatron_int(g, "--padded-vocab-size", 1, 2147483647LL, &v, &a)) {
		/* MindSpeed-LLM: the embedding's rows as given, padded no
		 * further (make_vocab_size_divisible_by 1 below) */
		megatron_put_int(o, MO_SEC_MODEL, "vocab_size", v,
				    MF_VOCAB, a, NULL);
		megatron_put_int(o, MO_SEC_MODEL,
				    "make_vocab_size_divisible_by", 1,
				    MF_VOCAB_DIV, a, NULL);
		/* the rows are the padded size: the vocabulary and its padding
		 * divisor it replaces are read, not used */
		megatron_find(g, "--vocab-size");
		megatron_find(g, "--make-vocab-size-divisible-by");
		return;
	}
	if (megatron_int(g, "--vocab-size", 1, 2147483647LL, &v, &a)) {
		megatron_put_int(o, MO_SEC_MODEL, "vocab_size", v,
				    MF_VOCAB, a, NULL);
	} else if ((tok && strcmp(tok, "GPT2BPETokenizer") == 0) ||
		   (!tok && file)) {
		const struct mo_megatron_arg *at = t ? t : file;
		megatron_diag(
		    g, MO_SEV_WARNING, "assumed", at->line, at->column,
		    at->flag,
		    "the vocabulary is in the tokenizer's vocab.json: "
		    "the GPT-2 BPE "
		    "vocabulary's %d entries assumed",
		    MO_MG_GPT2_VOCAB);
		megatron_put_int(
		    o, MO_SEC_MODEL, "vocab_size", MO_MG_GPT2_VOCAB, MF_VOCAB,
		    NULL,
		    "GPT2BPETokenizer: the GPT-2 BPE vocab.json (assumed)");
	} else {
		s->vocab_from_tokenizer = true;
		s->tokenizer = t;
	}
	a = NULL;
	if (!megatron_int(g, "--make-vocab-size-divisible-by", 1, 1 << 20,
			     &v, &a))
		v = 128;
	s->vocab_divisor = v;
	megatron_put_int(o, MO_SEC_MODEL, "make_vocab_size_divisible_by",
			    v, MF_VOCAB_DIV, a, "default 128");
}

/* The flag that names the tokenizer's files for its --tokenizer-type, and
 * how they are counted; NULL for a type whose count is not only its files'
 * (SentencePieceTokenizer and GPTSentencePieceTokenizer add special
 * tokens the arguments decide, TikTokenizer --tiktoken-num-special-tokens;
 * megatron/training/tokenizer/tokenizer.py at core_v0.12.0). */
static const char *megatron_tokenizer_flag(const char *type, enum tokenizer_kind *kind)
{
	static const struct {
		const char *type, *flag;
		enum tokenizer_kind kind;
	} paths[] = {
	    {"PretrainedFromHF", "--tokenizer-name-or-path", TOKENIZER_HF},
	    {"HuggingFaceTokenizer", "--tokenizer-model", TOKENIZER_HF},
	    {"Llama2Tokenizer", "--tokenizer-model", TOKENIZER_SENTENCEPIECE},
	};
	for (size_t i = 0; type && i < sizeof paths / sizeof *paths; i++)
		if (strcmp(type, paths[i].type) == 0) {
			*kind = paths[i].kind;
			return paths[i].flag;
		}
	return NULL;
}

/* The vocabulary from the tokenizer the arguments name, when the caller
 * says where the run is launched from and the tokenizer is there
 * (tokenizer.c counts it as the trainer does): true when it gave
 * vocab_size. Not there: false, with *unread saying why (for the
 * assumption that follows; NULL when nothing was opened). */
bool megatron_read_tokenizer(struct mo_megatron_import *g, struct mo_megatron_out *o,
			     const struct mo_megatron_shape *s, const char **unread)
{
	enum tokenizer_kind kind = TOKENIZER_HF;
	*unread = NULL;
	const char *type = s->tokenizer ? s->tokenizer->value : NULL;
	const char *flag = megatron_tokenizer_flag(type, &kind);
	struct mo_megatron_arg *a = flag ? megatron_find(g, flag) : NULL;
	if (!g->launch_dir || !a || !a->value || !a->value[0])
		return false;
	char *path = file_join(g->launch_dir, a->value, NULL);
	if (!path) {
		megatron_fail(g, MO_ERR_NOMEM, a->line, a->column, "out of memory");
		return false;
	}
	struct tokenizer_vocab v;
	const char *why = NULL;
	bool read = tokenizer_read(path, kind, &v, &why);
	free(path);
	if (!read) {
		*unread = arena_printf(g->arena, "; %s %s is not read: %s", a->flag, a->value, why);
		return false;
	}
	const char *file = v.file;
	const char *sep = v.file[0] ? "/" : "";
	const char *note =
	    v.basis == TOKENIZER_ENTRIES
		? arena_printf(g->arena, "the tokenizer's %lld entries (%s%s%s), padded as Megatron pads them",
			       (long long)v.entries, a->value, sep, file)
		: arena_printf(g->arena, "%s%s%s's vocab_size: the model's rows (its folder holds no "
			       "tokenizer.json or tokenizer.model to count)", a->value, sep, file);
	if (!note) {
		megatron_fail(g, MO_ERR_NOMEM, a->line, a->column, "out of memory");
		return false;
	}
	if (v.basis == TOKENIZER_MODEL_ROWS)
		megatron_diag(g, MO_SEV_WARNING, "assumed", a->vline, a->vcolumn, a->flag,
			      "the vocabulary is %s", note);
	megatron_put_int(o, MO_SEC_MODEL, "vocab_size", v.entries, MF_VOCAB, a, note);
	return true;
}

/* A vocabulary that is the tokenizer's (a file the arguments only name):
 * Megatron pads it to a multiple of make_vocab_size_divisible_by x TP
 * (megatron/core/tokenizers/utils/build_tokenizer.py:138 at d98e8a64,
 * which MindSpeed-LLM runs). When that multiple is at least the
 * vocabulary memopt assumes, every tokenizer of up to that many entries
 * gets exactly that many rows: MindSpeed-LLM's Llama 3 scripts give 16032
 * x TP 8 = 128,256, Llama 3's vocabulary. The rows are then the model's
 * vocabulary, and the parameter count is the one the run allocates. */
void megatron_read_vocab_rows(struct mo_megatron_import *g, struct mo_megatron_out *o,
			      const struct mo_megatron_shape *s)
{
	const struct mo_megatron_arg *t = s->tokenizer;
	int line = t ? t->line : 0, column = t ? t->column : 0;
	const char *unread = NULL;
	if (!s->vocab_from_tokenizer || megatron_read_tokenizer(g, o, s, &unread))
		return;
	if (!unread)
		unread = "";
	int64_t rows = model_mul(s->vocab_divisor, s->tp > 0 ? s->tp : 1);
	if (rows < model_default_vocab_size() || rows > 2147483647LL) {
		megatron_diag(g, MO_SEV_WARNING, "assumed", line, column, "--vocab-size",
			      "the vocabulary size is not in the arguments (it is the "
			      "tokenizer's%s): set model.vocab_size; memopt's default %lld is used",
			      unread, (long long)model_default_vocab_size());
		return;
	}
	megatron_diag(g, MO_SEV_WARNING, "assumed", line, column, "--vocab-size",
		      "the vocabulary size is not in the arguments (it is the tokenizer's%s): "
		      "--make-vocab-size-divisible-by %lld x TP %lld pads every tokenizer of up to "
		      "%lld entries to %lld rows, priced so (a larger one gets the next multiple "
		      "of %lld)",
		      unread, (long long)s->vocab_divisor, (long long)s->tp, (long long)rows,
		      (long long)rows, (long long)rows);
	megatron_put_int(o, MO_SEC_MODEL, "vocab_size", rows, MF_VOCAB, NULL,
			 "the padded rows of any tokenizer up to this size: "
			 "--make-vocab-size-divisible-by x --tensor-model-parallel-size");
}

/* A store_true flag as a model key: the flag when given, else the default. */
void megatron_put_flag(struct mo_megatron_import *g,
				 struct mo_megatron_out *o, int section,
				 const char *key, const char *flag, int field,
				 const char *why)
{
	bool on = megatron_flag(g, flag);
	megatron_put_bool(o, section, key, on, field,
			     on ? megatron_find(g, flag) : NULL, why);
}

static const char *const mo_megatron_position_types[] = {
    "learned_absolute", "rope", "mrope", "relative", "none", "yarn", "deepseek4", "alibi", NULL};

void megatron_read_positions(struct mo_megatron_import *g,
				       struct mo_megatron_out *o)
{
	const struct mo_megatron_arg *a = NULL, *mp = NULL;
	int64_t seq = 0, max_pos = 0;
	bool has_max = megatron_int(g, "--max-position-embeddings", 1,
				       2147483647LL, &max_pos, &mp);
	if (!megatron_int(g, "--seq-length", 1, 2147483647LL, &seq, &a)) {
		if (!megatron_find(g, "--seq-length"))
			megatron_diag(g, MO_SEV_ERROR, "missing-key", 0, 0,
					 "--seq-length",
					 "--seq-length is missing: the run's "
					 "sequence length is needed");
		seq = has_max ? max_pos : 4096;
	}
	megatron_put_int(o, MO_SEC_MODEL, "seq_length", seq, MF_SEQ, a,
			    NULL);
	if (!has_max && !megatron_find(g, "--max-position-embeddings"))
		megatron_diag(
		    g, MO_SEV_ERROR, "missing-key", 0, 0,
		    "--max-position-embeddings",
		    "--max-position-embeddings is missing: Megatron "
		    "requires it");
	megatron_put_int(o, MO_SEC_MODEL, "max_position_embeddings",
			    has_max ? max_pos : seq, MF_MAX_POS, mp,
			    "the sequence length");
	const struct mo_megatron_arg *t = NULL;
	const char *type = megatron_choice(g, "--position-embedding-type",
					      mo_megatron_position_types, &t);
	if (megatron_flag(g, "--use-rotary-position-embeddings")) {
		type = "rope";
		t = megatron_find(g, "--use-rotary-position-embeddings");
	}
	if (!type)
		type = "learned_absolute";
	/* deepseek4: MindSpeed-LLM's DeepSeek-V4 rotary embedding, applied inside its
	 * attention (csa_feature.py:13 adds the choice) */
	if (strcmp(type, "mrope") == 0 || strcmp(type, "yarn") == 0 ||
	    strcmp(type, "deepseek4") == 0) {
		type = "rope"; /* rotary variants: no parameters, the same
				  tensors */
	} else if (strcmp(type, "relative") == 0) {
		megatron_unmodelled(g, t, "the relative position bias");
		type = "none";
	} else if (strcmp(type, "alibi") == 0) {
		/* MindSpeed-LLM adds the choice (mindspeed_llm/training/arguments.py:587 at
		 * v1.0.0 062fb4fc; Baichuan-13B, BLOOM): no parameters, but every attention
		 * layer builds its bias tensor of heads x seq x seq in the parameters' dtype
		 * (core/transformer/dot_product_attention.py:99-122, get_alibi) */
		megatron_unmodelled(g, t, "the ALiBi bias each attention layer keeps (heads x seq x seq)");
		type = "none";
	}
	if (megatron_flag(g, "--no-position-embedding") &&
	    strcmp(type, "rope") != 0) {
		const struct mo_megatron_arg *n =
		    megatron_find(g, "--no-position-embedding");
		megatron_diag(
		    g, MO_SEV_ERROR, "type", n->line, n->column, n->flag,
		    "--no-position-embedding is deprecated in Megatron "
		    "(it raises): use "
		    "--position-embedding-type none");
	}
	megatron_put_str(o, MO_SEC_MODEL, "position_embedding_type", type,
			    MF_POS_TYPE, t, "default learned_absolute");
}

static const char *const mo_megatron_norms[] = {"LayerNorm", "RMSNorm", NULL};
static const char *const mo_megatron_impls[] = {"transformer_engine", "local",
						"inference_optimized", NULL};
static const char *const mo_megatron_backends[] = {"auto",    "flash", "fused",
						   "unfused", "local", NULL};

void megatron_read_layer(struct mo_megatron_import *g,
				   struct mo_megatron_out *o,
				   const struct mo_megatron_shape *s,
				   const char **impl_out,
				   const struct mo_megatron_arg **impl_src)
{
	const struct mo_megatron_arg *a = NULL;
	megatron_put_flag(
	    g, o, MO_SEC_MODEL, "untie_embeddings_and_output_weights",
	    "--untie-embeddings-and-output-weights", MF_UNTIE, "default: tied");
	const char *norm =
	    megatron_choice(g, "--normalization", mo_megatron_norms, &a);
	megatron_put_str(o, MO_SEC_MODEL, "normalization",
			    norm ? norm : "LayerNorm", MF_NORM, norm ? a : NULL,
			    "default LayerNorm");
	const struct mo_megatron_arg *sw = megatron_find(g, "--swiglu");
	if (s->geglu) {
		const struct mo_megatron_arg *ge = megatron_find(g, "--geglu");
		if (!ge)
			ge = megatron_find(g, "--gelu-tanh");
		megatron_put_str(o, MO_SEC_MODEL, "hidden_act", "geglu", MF_ACT,
				 ge ? ge : megatron_find(g, "--quick-geglu"), NULL);
	}
	megatron_read_fc_type(g, s);
	if (megatron_flag(g, "--squared-relu"))
		megatron_unmodelled(g, megatron_find(g, "--squared-relu"),
				       "squared ReLU (counted as GeLU)");
	if (!s->geglu)
		megatron_put_str(
		    o, MO_SEC_MODEL, "hidden_act", s->swiglu ? "swiglu" : "gelu",
		    MF_ACT, s->swiglu ? sw : NULL, "default gelu (no --swiglu)");
	bool nobias = megatron_flag(g, "--disable-bias-linear");
	megatron_put_bool(
	    o, MO_SEC_MODEL, "add_bias_linear", !nobias, MF_BIAS,
	    nobias ? megatron_find(g, "--disable-bias-linear") : NULL,
	    "default (no --disable-bias-linear)");
	bool qkv = megatron_flag(g, "--add-qkv-bias");
	megatron_put_bool(o, MO_SEC_MODEL, "add_qkv_bias", qkv || !nobias,
			     MF_QKV_BIAS,
			     qkv ? megatron_find(g, "--add-qkv-bias") : NULL,
			     nobias ? "default" : "follows add_bias_linear");
	a = NULL;
	const char *impl =
	    megatron_choice(g, "--transformer-impl", mo_megatron_impls, &a);
	*impl_src = impl ? a : NULL;
	if (impl && strcmp(impl, "inference_optimized") == 0)
		megatron_unmodelled(
		    g, a, "the inference-optimized implementation");
	*impl_out =
	    impl && strcmp(impl, "local") == 0 ? "local" : "transformer_engine";
	const struct mo_megatron_arg *b = NULL;
	const char *backend = megatron_choice(g, "--attention-backend",
						 mo_megatron_backends, &b);
	bool flash_attn = megatron_flag(g, "--use-flash-attn");
	bool eager = backend ? (strcmp(backend, "unfused") == 0 ||
				strcmp(backend, "local") == 0)
			     : (strcmp(*impl_out, "local") == 0 && !flash_attn);
	megatron_put_str(
	    o, MO_SEC_MODEL, "attention", eager ? "eager" : "flash", MF_ATTN,
	    backend ? b
		    : (flash_attn ? megatron_find(g, "--use-flash-attn")
				  : *impl_src),
	    eager ? "the local implementation's unfused attention"
		  : "Transformer Engine's fused attention (--attention-backend "
		    "auto)");
	double d = 0.1;
	a = NULL;
	if (!megatron_double(g, "--hidden-dropout", &d, &a))
		d = 0.1;
	megatron_put_double(o, MO_SEC_MODEL, "hidden_dropout", d, MF_HDROP,
			       a, "default 0.1");
	a = NULL;
	if (!megatron_double(g, "--attention-dropout", &d, &a))
		d = 0.1;
	megatron_put_double(o, MO_SEC_MODEL, "attention_dropout", d,
			       MF_ADROP, a, "default 0.1");
	if (megatron_flag(g, "--qk-layernorm"))
		megatron_put_bool(
		    o, MO_SEC_MODEL, "qk_layernorm", true, MF_QK_LN,
		    megatron_find(g, "--qk-layernorm"), NULL);
}

/* The MLA switch: Megatron's --multi-latent-attention, or MindSpeed-LLM 1.0.0's own
 * --multi-head-latent-attention (mindspeed_llm/training/arguments.py:70-76 at v1.0.0
 * 062fb4fc, with --qk-nope-head-dim / --qk-rope-head-dim for Megatron's --qk-head-dim /
 * --qk-pos-emb-head-dim); NULL when neither is given. Marks it read. */
const struct mo_megatron_arg *megatron_mla(struct mo_megatron_import *g)
{
	const struct mo_megatron_arg *ms = megatron_flag(g, "--multi-head-latent-attention")
						? megatron_find(g, "--multi-head-latent-attention")
						: NULL;
	if (megatron_flag(g, "--multi-latent-attention"))
		return megatron_find(g, "--multi-latent-attention");
	return ms;
}

void megatron_read_mla(struct mo_megatron_import *g,
				 struct mo_megatron_out *o)
{
	static const struct {
		const char *flag, *mindspeed, *key;
		int field;
		int64_t def;
	} dims[] = {
	    {"--q-lora-rank", NULL, "q_lora_rank", MF_Q_LORA, 0},
	    {"--kv-lora-rank", NULL, "kv_lora_rank", MF_KV_LORA, 32},
	    {"--qk-head-dim", "--qk-nope-head-dim", "qk_nope_head_dim", MF_QK_NOPE, 128},
	    {"--qk-pos-emb-head-dim", "--qk-rope-head-dim", "qk_rope_head_dim", MF_QK_ROPE, 64},
	    {"--v-head-dim", NULL, "v_head_dim", MF_V_HEAD, 128}};
	const struct mo_megatron_arg *mla = megatron_mla(g);
	if (mla)
		megatron_put_bool(o, MO_SEC_MODEL, "multi_latent_attention", true, MF_MLA, mla,
				  NULL);
	/* MindSpeed-LLM's DeepSeek layer spec builds the MLA and MoE layers these flags
	 * describe (mindspeed_llm/tasks/models/spec/deepseek_spec.py:19-40 at v1.0.0
	 * 062fb4fc): read with them; another spec is not */
	for (size_t i = 0; mla && i < g->n_args; i++) {
		struct mo_megatron_arg *a = &g->args[i];
		if (strcmp(a->flag, "--spec") == 0 && a->value &&
		    strcmp(a->value, "mindspeed_llm.tasks.models.spec.deepseek_spec") == 0)
			a->used = true;
	}
	for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
		const struct mo_megatron_arg *a = NULL;
		int64_t v;
		if (!megatron_int(g, dims[i].flag, 0, 1 << 24, &v, &a) &&
		    !(dims[i].mindspeed && megatron_int(g, dims[i].mindspeed, 0, 1 << 24, &v, &a)))
			v = dims[i].def;
		if (mla)
			megatron_put_int(o, MO_SEC_MODEL, dims[i].key, v,
					    dims[i].field, a,
					    "Megatron's default");
	}
}

static const char *const mo_megatron_optimizers[] = {
    "adam", "sgd", "muon", "dist_muon", "lion", "soap", "adaptive_muon", NULL};
static const char *const mo_megatron_grad_dtypes[] = {"fp32", "bf16", NULL};

/* --bf16 / --fp16, and the main_grad buffers: fp32 with --bf16 (arguments.py
 * turns accumulate_allreduce_grads_in_fp32 on unless --grad-reduce-in-bf16
 * or --main-grads-dtype bf16), or with --accumulate-allreduce-grads-in-fp32;
 * otherwise the parameters' dtype. */
static void megatron_read_precision(struct mo_megatron_import *g,
				       struct mo_megatron_out *o)
{
	bool bf16 = megatron_flag(g, "--bf16"),
	     fp16 = megatron_flag(g, "--fp16");
	const struct mo_megatron_arg *p = bf16	 ? megatron_find(g, "--bf16")
					  : fp16 ? megatron_find(g, "--fp16")
						 : NULL;
	if (bf16 && fp16) {
		const struct mo_megatron_arg *f = megatron_find(g, "--fp16");
		megatron_diag(
		    g, MO_SEV_ERROR, "type", f->line, f->column, f->flag,
		    "--fp16 and --bf16 together: Megatron refuses the pair");
	}
	const char *dtype = bf16 ? "bfloat16" : fp16 ? "float16" : "float32";
	const char *why =
	    bf16 || fp16 ? NULL : "default fp32 (no --bf16 / --fp16)";
	megatron_put_str(o, MO_SEC_TRAIN, "compute_dtype", dtype,
			    MF_CDTYPE, p, why);
	megatron_put_str(o, MO_SEC_TRAIN, "params_dtype", dtype,
			    MF_PDTYPE, p, why);
	const struct mo_megatron_arg *m = NULL;
	const char *main = megatron_choice(g, "--main-grads-dtype",
					      mo_megatron_grad_dtypes, &m);
	bool in_bf16 = megatron_flag(g, "--grad-reduce-in-bf16");
	bool acc = megatron_flag(g, "--accumulate-allreduce-grads-in-fp32");
	const struct mo_megatron_arg *src = NULL;
	const char *grads = dtype;
	if (acc) {
		grads = "float32";
		src =
		    megatron_find(g, "--accumulate-allreduce-grads-in-fp32");
	} else if (bf16 && in_bf16) {
		src = megatron_find(g, "--grad-reduce-in-bf16");
	} else if (bf16 && main && strcmp(main, "bf16") == 0) {
		src = m;
	} else if (bf16) {
		grads = "float32";
	}
	megatron_put_str(o, MO_SEC_TRAIN, "grads_dtype", grads,
			    MF_GDTYPE, src,
			    bf16 ? "--bf16: fp32 main_grad buffers "
				   "(accumulate_allreduce_grads_in_fp32)"
				 : "main_grad in the parameters' dtype");
	const struct mo_megatron_arg *a = NULL;
	const char *opt =
	    megatron_choice(g, "--optimizer", mo_megatron_optimizers, &a);
	if (opt && strstr(opt, "muon")) {
		megatron_put_str(o, MO_SEC_TRAIN, "optimizer", "muon",
				    MF_OPT, a, NULL);
		return;
	}
	if (opt && strcmp(opt, "adam") != 0)
		megatron_unmodelled(
		    g, a, "this optimizer's state (counted as Adam's)");
	megatron_put_str(o, MO_SEC_TRAIN, "optimizer", "adamw", MF_OPT,
			    a, "default adam (decoupled weight decay)");
}

/* CUBLAS_WORKSPACE_CONFIG as PyTorch reads it (aten/src/ATen/cuda/
 * CublasHandlePool.cpp parseChosenWorkspaceSize: every ":SIZE:COUNT" match
 * of the regex :([0-9]+):([0-9]+), left to right, adds SIZE x COUNT KiB;
 * no match: PyTorch warns and keeps its default). KiB, 0 when no match, -1
 * past 16 GiB. */
static int64_t megatron_cublas_kib(const char *s)
{
	int64_t total = 0;
	bool any = false;
	for (const char *p = s; *p;) {
		const char *q = p;
		int64_t v[2] = {0, 0};
		bool ok = true;
		for (int k = 0; k < 2 && ok; k++) {
			ok = *q == ':' && q[1] >= '0' && q[1] <= '9';
			for (q += ok; ok && *q >= '0' && *q <= '9'; q++)
				v[k] = v[k] > (1 << 24) ? v[k] : v[k] * 10 + (*q - '0');
		}
		if (!ok) {
			p++;
			continue;
		}
		any = true;
		total += v[0] * v[1];
		if (v[0] > (1 << 24) || v[1] > (1 << 24) || total > (1 << 24))
			return -1;
		p = q;
	}
	return any ? total : 0;
}

/* The run's cuBLAS workspace: a functional test's ENV_VARS, or a training
 * script's `export CUBLAS_WORKSPACE_CONFIG=...` */
static void megatron_read_cublas(struct mo_megatron_import *g, struct mo_megatron_out *o)
{
	const char *text = g->cublas_config;
	for (size_t i = 0; !text && i < g->n_vars; i++)
		if (!g->vars[i].array && g->vars[i].value &&
		    strcmp(g->vars[i].name, "CUBLAS_WORKSPACE_CONFIG") == 0)
			text = g->vars[i].value;
	if (!text)
		return;
	int64_t kib = megatron_cublas_kib(text);
	if (kib <= 0) {
		megatron_diag(g, MO_SEV_WARNING, "assumed", g->cublas_line, g->cublas_column,
			      "CUBLAS_WORKSPACE_CONFIG",
			      "CUBLAS_WORKSPACE_CONFIG '%.60s': %s; the device preset's "
			      "workspace is used",
			      text, kib < 0 ? "more than 16 GiB" : "no :SIZE:COUNT pair, PyTorch "
			      "keeps its default");
		return;
	}
	megatron_put_int(o, MO_SEC_TRAIN, "cublas_workspace_kib", kib, MF_CUBLAS_WS, NULL,
			 "CUBLAS_WORKSPACE_CONFIG: the sum of SIZE x COUNT KiB");
}

/* Is a flag's value the script's positional parameter ($4, ${4}): a value its caller gives
 * when it runs the script, which the file does not hold? Then a `model-needed` warning at it,
 * saying what memopt uses until it is given, and true. */
static bool megatron_callers_value(struct mo_megatron_import *g, const char *flag,
				   const char *path, const char *until)
{
	struct mo_megatron_arg *a = megatron_find(g, flag);
	if (!a || a->n_values != 1)
		return false;
	const char *v = a->value;
	const char *digits = v[0] == '$' ? v + 1 + (v[1] == '{') : NULL;
	size_t n = digits ? strspn(digits, "0123456789") : 0;
	if (n == 0 || n > 2 || strcmp(digits + n, v[1] == '{' ? "}" : "") != 0)
		return false;
	megatron_diag(g, MO_SEV_WARNING, "model-needed", a->vline, a->vcolumn, path,
		      "%s is '%s', the script's argument %.*s, which its caller gives: the file "
		      "does not hold it; until it is given, %s",
		      flag, v, (int)n, digits, until);
	return true;
}

void megatron_read_training(struct mo_megatron_import *g,
				      struct mo_megatron_out *o,
				      const char *impl,
				      const struct mo_megatron_arg *impl_src)
{
	const struct mo_megatron_arg *a = NULL;
	int64_t v;
	v = megatron_required(g, "--micro-batch-size", 1, 1 << 20, 1, &a);
	megatron_put_int(o, MO_SEC_TRAIN, "micro_batch_size", v, MF_MBS,
			    a, NULL);
	if (!megatron_callers_value(g, "--global-batch-size", "training.global_batch_size",
				    "Megatron's default: micro-batch x data-parallel, one "
				    "micro-batch a step") &&
	    megatron_int(g, "--global-batch-size", 1, 1LL << 40, &v, &a))
		megatron_put_int(o, MO_SEC_TRAIN, "global_batch_size",
				    v, MF_GBS, a, NULL);
	megatron_read_precision(g, o);
	megatron_read_cublas(g, o);
	megatron_put_str(o, MO_SEC_TRAIN, "framework", "pytorch",
			    MF_FRAMEWORK, NULL, "Megatron-LM runs on PyTorch");
	megatron_put_str(o, MO_SEC_TRAIN, "transformer_impl", impl,
			    MF_TE_IMPL, impl_src, "default transformer_engine");
	megatron_put_flag(g, o, MO_SEC_TRAIN, "overlap_grad_reduce",
			     "--overlap-grad-reduce", MF_OVERLAP, "default");
	if (megatron_flag(g, "--tp-comm-overlap"))
		megatron_put_bool(o, MO_SEC_TRAIN, "tp_comm_overlap", true, MF_TP_OVERLAP,
				     megatron_find(g, "--tp-comm-overlap"), NULL);
	if (megatron_flag(g, "--deterministic-mode"))
		megatron_put_bool(o, MO_SEC_TRAIN, "deterministic_mode", true, MF_DETERMINISTIC,
				     megatron_find(g, "--deterministic-mode"), NULL);
	if (megatron_flag(g, "--moe-grouped-gemm"))
		megatron_put_bool(
		    o, MO_SEC_TRAIN, "moe_grouped_gemm", true, MF_GROUPED,
		    megatron_find(g, "--moe-grouped-gemm"), NULL);
	/* Megatron's default is on (arguments.py
	 * --no-gradient-accumulation-fusion, store_false into
	 * gradient_accumulation_fusion); the flag still leaves out the weight
	 * gradient each Linear then makes before DDP adds it to main_grad (a
	 * transient the estimate does not count) */
	bool no_fusion =
	    megatron_flag(g, "--no-gradient-accumulation-fusion");
	const struct mo_megatron_arg *nf =
	    no_fusion ? megatron_find(g, "--no-gradient-accumulation-fusion")
		      : NULL;
	megatron_put_bool(o, MO_SEC_TRAIN,
			     "gradient_accumulation_fusion", !no_fusion,
			     MF_GRAD_FUSION, nf,
			     "default (no --no-gradient-accumulation-fusion)");
	if (nf)
		megatron_unmodelled(
		    g, nf,
		    "the weight gradient computed into a temporary before "
		    "main_grad");
	megatron_read_dispatch(g, o);
	/* rope fusion (default on; --no-rope-fusion, arguments.py, store_false
	 * into apply_rope_fusion) decides which YaRN tables multi-latent
	 * attention keeps: written for MLA runs */
	if (megatron_mla(g)) {
		bool no_rope = megatron_flag(g, "--no-rope-fusion");
		megatron_put_bool(
		    o, MO_SEC_TRAIN, "apply_rope_fusion", !no_rope,
		    MF_ROPE_FUSION,
		    no_rope ? megatron_find(g, "--no-rope-fusion") : NULL,
		    "default (no --no-rope-fusion)");
	}
}
