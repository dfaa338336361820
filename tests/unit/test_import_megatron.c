/* The Megatron-LM importer (core/src/import/megatron*.c) on Megatron's
 * own functional-test model_config.yaml files (tests/data/megatron/, source
 * and commit in tests/data/megatron/SOURCES.md), on launch lines and
 * arguments files written here, and on hostile input. Every expectation is
 * written from reading the file and Megatron's arguments.py: the hand-made
 * model files beside each model_config.yaml (tests/data/megatron/<case>.yaml,
 * each key with its flag) are the reference the import must reproduce. */
/* cmocka needs these first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_files.h"
/* clang-format on */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "model/model_internal.h"
#include "yaml/yaml.h"

#include <jansson.h>

#define DATA "tests/data/megatron/"

/* The import of text; the diagnostics stay in *diags. */
static char *import_text(const char *text, const char *name, int64_t devices,
			 mo_diags **diags)
{
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(diags), 0);
	int rc = mo_megatron_import(&yaml, *diags, text, strlen(text), name,
				    devices, NULL, &err);
	if (rc != 0)
		fprintf(stderr, "import: rc %d, %s\n", rc, err.text);
	assert_int_equal(rc, 0);
	assert_non_null(yaml);
	return yaml;
}

static char *import_case(const char *c, int64_t devices, mo_diags **diags)
{
	char path[256];
	snprintf(path, sizeof path, DATA "%s.model_config.yaml", c);
	char *text = test_read_file(path, NULL);
	char *yaml = import_text(text, path, devices, diags);
	free(text);
	return yaml;
}

static mo_doc *parse(const char *yaml)
{
	mo_doc *doc = NULL;
	mo_error err = {0};
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(
	    yaml_tree_parse(&doc, d, yaml, strlen(yaml), "import", NULL, &err),
	    0);
	assert_int_equal(mo_diags_errors(d), 0);
	mo_diags_free(d);
	return doc;
}

/* "section.key" in a parsed model file, or NULL. */
static const mo_node *at(const mo_doc *doc, const char *path)
{
	char sect[32];
	const char *dot = strchr(path, '.');
	assert_non_null(dot);
	snprintf(sect, sizeof sect, "%.*s", (int)(dot - path), path);
	const mo_node *s = map_get(doc->root, sect);
	return s ? map_get(s, dot + 1) : NULL;
}

static int64_t int_at(const mo_doc *doc, const char *path)
{
	const mo_node *v = at(doc, path);
	int64_t i = -1;
	bool ovf = false;
	if (!v)
		fail_msg("%s missing", path);
	assert_true(scalar_int(v, &i, &ovf));
	return i;
}

static const char *str_at(const mo_doc *doc, const char *path)
{
	const mo_node *v = at(doc, path);
	if (!v)
		fail_msg("%s missing", path);
	return v->value;
}

/* The diagnostic with this code whose path is `flag`, or NULL. */
static const mo_diag *diag_for(const mo_diags *d, const char *code,
			       const char *flag)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *x = mo_diags_get(d, i);
		if (strcmp(x->code, code) == 0 &&
		    (!flag || (x->path && strcmp(x->path, flag) == 0)))
			return x;
	}
	return NULL;
}

static size_t count_code(const mo_diags *d, const char *code)
{
	size_t n = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++)
		n += strcmp(mo_diags_get(d, i)->code, code) == 0;
	return n;
}

/* Two scalars equal as PyYAML types them (0.0 and 0 are the same number). */
static bool same_scalar(const mo_node *a, const mo_node *b)
{
	double x, y;
	int64_t i;
	bool ovf;
	bool na = scalar_float(a, &x) ||
		  (scalar_int(a, &i, &ovf) && ((x = (double)i), 1));
	bool nb = scalar_float(b, &y) ||
		  (scalar_int(b, &i, &ovf) && ((y = (double)i), 1));
	if (na && nb)
		return x == y;
	return a->len == b->len && memcmp(a->value, b->value, a->len) == 0;
}

/* Every key of the hand-made model file has the same value in the
 * import. */
static void assert_matches_hand_file(const char *c, const mo_doc *imported)
{
	char path[256];
	snprintf(path, sizeof path, DATA "%s.yaml", c);
	char *text = test_read_file(path, NULL);
	mo_doc *hand = parse(text);
	size_t keys = 0;
	for (size_t s = 0; s + 1 < hand->root->n; s += 2) {
		const mo_node *sect = hand->root->items[s + 1];
		/* the device comes from the golden values' file name
		 * (dgx_h100, dgx_a100), not from the arguments */
		if (strcmp(hand->root->items[s]->value, "device") == 0)
			continue;
		const mo_node *mine =
		    map_get(imported->root, hand->root->items[s]->value);
		assert_non_null(mine);
		for (size_t k = 0; k + 1 < sect->n; k += 2, keys++) {
			const char *key = sect->items[k]->value;
			const mo_node *v = map_get(mine, key);
			if (!v)
				fail_msg("%s: %s.%s not imported", c,
					 hand->root->items[s]->value, key);
			if (!same_scalar(sect->items[k + 1], v))
				fail_msg("%s: %s.%s is %s in the hand-made "
					 "file, %s imported",
					 c, hand->root->items[s]->value, key,
					 sect->items[k + 1]->value, v->value);
		}
	}
	assert_true(keys >= 30);
	doc_free(hand);
	free(text);
}

/* The five cases of figures.tsv after the first: the import is the model
 * file written by hand from the same model_config.yaml, key for key. */
static void test_cases_match_hand_files(void **state)
{
	(void)state;
	static const char *const cases[] = {
	    "gpt3_7b_tp1_pp4_memory_speed",
	    "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed",
	    "gpt3_mcore_te_tp1_pp1_uniform_full_recompute",
	    "gpt3_mcore_te_tp2_pp2_cp2",
	    "gpt3_mcore_te_tp2_pp1_te_8experts2parallel_dist_optimizer"};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		mo_diags *d = NULL;
		char *yaml = import_case(cases[i], 8, &d);
		mo_doc *doc = parse(yaml);
		assert_matches_hand_file(cases[i], doc);
		/* nothing left unread: every flag of Megatron's CI file is
		 * known */
		assert_int_equal(count_code(d, "unread-key"), 0);
		assert_int_equal(mo_diags_errors(d), 0);
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
}

/* gpt3_7b_tp1_pp4_memory_speed: --num-layers-per-virtual-pipeline-stage 1
 * over PP 4 is 8 virtual stages; the memory flags memopt does not model
 * are named at their lines. */
static void test_tp1_pp4(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml = import_case("gpt3_7b_tp1_pp4_memory_speed", 8, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "parallel.virtual_pipeline"), 8);
	assert_int_equal(int_at(doc, "parallel.pipeline_parallel"), 4);
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 2);
	assert_int_equal(int_at(doc, "parallel.data_parallel_shard"), 1);
	assert_int_equal(int_at(doc, "model.ffn_hidden_size"), 16384);
	assert_string_equal(str_at(doc, "model.position_embedding_type"),
			    "learned_absolute");
	assert_string_equal(str_at(doc, "training.grads_dtype"), "float32");
	assert_string_equal(str_at(doc, "training.transformer_impl"),
			    "transformer_engine");
	const mo_diag *g = diag_for(d, "unmodelled", "--overlap-param-gather");
	assert_non_null(g);
	assert_int_equal(g->line, 51);
	assert_int_equal(g->column, 3);
	/* --no-gradient-accumulation-fusion (line 53): the model key off,
	 * and the weight gradient it then makes before main_grad named as
	 * not modelled at its line */
	assert_string_equal(str_at(doc, "training.gradient_accumulation_fusion"),
			    "false");
	/* no MLA: no rope-fusion key */
	assert_null(strstr(yaml, "apply_rope_fusion"));
	assert_non_null(strstr(yaml, "gradient_accumulation_fusion: false  # "
				     "--no-gradient-accumulation-fusion"));
	g = diag_for(d, "unmodelled", "--no-gradient-accumulation-fusion");
	assert_non_null(g);
	assert_int_equal(g->line, 53);
	/* each key names its flag */
	assert_non_null(strstr(
	    yaml,
	    "virtual_pipeline: 8  # --num-layers-per-virtual-pipeline-stage"));
	assert_non_null(
	    strstr(yaml, "num_query_groups: 8  # --num-query-groups"));
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* gpt3_7b_tp4_pp1_memory_speed at 1739859b: --vocab-size 131072 (the
 * hand-made file's 131073 is the tokenizer of that commit, which added an
 * EOD token; NullTokenizer since c9dfe347 keeps the size as given, and the
 * import follows it), the rest as the hand-made file. */
static void test_tp4_pp1(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml = import_case("gpt3_7b_tp4_pp1_memory_speed", 8, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.vocab_size"), 131072);
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 4);
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 2);
	assert_int_equal(int_at(doc, "model.num_query_groups"), 8);
	assert_string_equal(str_at(doc, "model.hidden_act"), "gelu");
	assert_string_equal(str_at(doc, "model.normalization"), "LayerNorm");
	assert_string_equal(str_at(doc, "training.overlap_grad_reduce"),
			    "true");
	assert_string_equal(str_at(doc, "parallel.distributed_optimizer"),
			    "true");
	assert_string_equal(str_at(doc, "model.add_bias_linear"), "true");
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* TP 8 over 2 K/V groups: Megatron-LM gives each rank one group's K/V
 * (attention.py:353-365 at d98e8a64), so the import says so and the model
 * passes its parallel rule; TP 2 divides the groups and says nothing. */
static void test_tp_above_kv_groups(void **state)
{
	(void)state;
	static const char *fmt =
	    "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 4096 "
	    "--num-attention-heads 32 --group-query-attention --num-query-groups 2 "
	    "--tensor-model-parallel-size %d --seq-length 4096 --max-position-embeddings 4096 "
	    "--micro-batch-size 1 --global-batch-size 8 --bf16 --vocab-size 32000\n";
	char text[512];
	for (int tp = 2; tp <= 8; tp *= 4) {
		snprintf(text, sizeof text, fmt, tp);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "kv.sh", 0, &d);
		assert_int_equal(mo_diags_errors(d), 0);
		mo_doc *doc = parse(yaml);
		assert_int_equal(int_at(doc, "parallel.tensor_parallel"), tp);
		if (tp == 8)
			assert_string_equal(str_at(doc, "model.replicate_kv_heads"), "true");
		else
			assert_null(strstr(yaml, "replicate_kv_heads"));
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
}

/* A vocabulary that is the tokenizer's: Megatron pads it to a multiple of
 * --make-vocab-size-divisible-by x TP (build_tokenizer.py:138 at
 * d98e8a64). MindSpeed-LLM's Llama 3 scripts give 16032 under TP 8: any
 * tokenizer of up to 128,256 entries (Llama 3's is 128,256) gets 128,256
 * rows, so those are the model's vocabulary. The default divisor 128 under
 * TP 8 (1,024) decides nothing: the vocabulary stays memopt's assumption. */
static void test_vocabulary_from_padding(void **state)
{
	(void)state;
	static const char *fmt =
	    "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 2 --hidden-size 4096 "
	    "--num-attention-heads 32 --tensor-model-parallel-size 8 --seq-length 4096 "
	    "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8 --bf16 "
	    "--tokenizer-type PretrainedFromHF --tokenizer-name-or-path ./llama-3-8b-hf %s\n";
	static const struct {
		const char *divisor;
		int64_t vocab; /* 0: no vocab_size key (memopt's default) */
	} cases[] = {{"--make-vocab-size-divisible-by 16032", 128256}, {"", 0}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[640];
		snprintf(text, sizeof text, fmt, cases[i].divisor);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "vocab.sh", 0, &d);
		assert_int_equal(mo_diags_errors(d), 0);
		const mo_diag *x = diag_for(d, "assumed", "--vocab-size");
		assert_non_null(x);
		assert_int_equal(x->line, 1);
		mo_doc *doc = parse(yaml);
		if (cases[i].vocab) {
			assert_int_equal(int_at(doc, "model.vocab_size"), cases[i].vocab);
			assert_non_null(strstr(x->message, "up to 128256 entries"));
		} else {
			assert_null(at(doc, "model.vocab_size"));
			assert_non_null(strstr(x->message, "default 32000"));
		}
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
}

/* MindSpeed-LLM's --noop-layers: identity layers without parameters that
 * keep their place in Megatron's even split. The model gets the real layers
 * and a layout with each stage's real ones; the dense layers first are
 * counted among real layers; under dualpipev rank r holds V chunks r and
 * 2PP - 1 - r; another split leaves the flag `unmodelled`. */
static void test_noop_layers(void **state)
{
	(void)state;
	static const char *head =
	    "torchrun --nproc-per-node 8 pretrain_gpt.py --hidden-size 1024 "
	    "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 "
	    "--micro-batch-size 1 --global-batch-size 64 --bf16 --vocab-size 32000 "
	    "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 512 ";
	static const struct {
		const char *args;
		int64_t layers, first_dense;
		const char *layout; /* NULL: none written */
		size_t unmodelled;
	} cases[] = {
	    {"--num-layers 8 --pipeline-model-parallel-size 2 --noop-layers 1,7 "
	     "--first-k-dense-replace 2",
	     6, 1, "Et*3|t*3L", 0},
	    {"--num-layers 16 --pipeline-model-parallel-size 2 "
	     "--num-layers-per-virtual-pipeline-stage 2 --noop-layers 14,15 --mtp-num-layers 1 "
	     "--first-k-dense-replace 1",
	     14, 1, "Et*2|t*2|t*2|t*2|t*2|t*2|t*2|m*1L", 0},
	    {"--num-layers 8 --pipeline-model-parallel-size 2 --schedules-method dualpipev "
	     "--noop-layers 6,7 --first-k-dense-replace 1",
	     6, 1, "Et*2|t*4L", 1}, /* rank 0: positions 0-1 and 6-7 */
	    {"--num-layers 8 --pipeline-model-parallel-size 2 --num-layer-list 3,5 "
	     "--noop-layers 7 --first-k-dense-replace 1",
	     8, 1, NULL, 2}, /* the layer list and the noop layers */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char text[1024];
		snprintf(text, sizeof text, "%s%s\n", head, cases[i].args);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "noop.sh", 0, &d);
		if (mo_diags_errors(d))
			fprintf(stderr, "%s", yaml);
		assert_int_equal(mo_diags_errors(d), 0);
		mo_doc *doc = parse(yaml);
		assert_int_equal(int_at(doc, "model.num_layers"), cases[i].layers);
		assert_int_equal(int_at(doc, "model.first_k_dense_replace"), cases[i].first_dense);
		if (cases[i].layout)
			assert_string_equal(str_at(doc, "parallel.pipeline_model_parallel_layout"),
					    cases[i].layout);
		else
			assert_null(strstr(yaml, "pipeline_model_parallel_layout"));
		assert_int_equal(count_code(d, "unmodelled"), cases[i].unmodelled);
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
	/* MindSpeed refuses a position outside the layers */
	char text[1024];
	snprintf(text, sizeof text, "%s--num-layers 8 --noop-layers 3,8\n", head);
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import(&yaml, d, text, strlen(text), "bad.sh", 0, NULL, &err), 0);
	assert_int_equal(count_code(d, "type"), 1);
	free(yaml);
	mo_diags_free(d);
}

/* Writes text to dir/name. */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* How many diagnostics' messages hold needle. */
static size_t count_text(const mo_diags *d, const char *needle)
{
	size_t n = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++)
		n += strstr(mo_diags_get(d, i)->message, needle) != NULL;
	return n;
}

/* `source FILE` / `. FILE`: read from the script's folder when the caller
 * gives it (the shared arguments of the launch come from there, nested
 * files too, the script-folder idioms resolved), each refusal a warning
 * that says why: a cycle, a path out of the folder (.., absolute, a link
 * out), a missing file, too deep, or no folder given. */
static void test_sourced_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/memopt-source-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[600];
	snprintf(sub, sizeof sub, "%s/conf", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	put_file(dir, "conf/model.sh",
		 "MODEL_ARGS=\"--num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
		 "--seq-length 1024 --max-position-embeddings 1024 --vocab-size 32000\"\n"
		 "source conf/train.sh\n");
	put_file(dir, "conf/train.sh", "TRAIN_ARGS=\"--micro-batch-size 1 --global-batch-size 8 "
				       "--bf16 --tensor-model-parallel-size 2\"\n"
				       "source conf/model.sh\n"); /* a cycle */
	put_file(dir, "deep.sh", "source deep.sh\n");
	char link[600];
	snprintf(link, sizeof link, "%s/out.sh", dir);
	assert_int_equal(symlink("/etc/hostname", link), 0);
	const char *script =
	    "#!/bin/bash\n"
	    "SCRIPT_DIR=\"$(dirname \"$(readlink -f \"$0\")\")\"\n"
	    "source \"${SCRIPT_DIR}/conf/model.sh\"\n" /* line 3 */
	    ". ../x.sh\n"
	    "source /etc/profile\n"
	    "source out.sh\n"
	    "source missing.sh\n"
	    "torchrun --nproc-per-node 8 pretrain_gpt.py $MODEL_ARGS $TRAIN_ARGS\n";
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import_dir(&yaml, d, script, strlen(script), "run.sh", dir, 0,
						NULL, &err),
			 0);
	assert_int_equal(mo_diags_errors(d), 0);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 4);
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 2);
	assert_int_equal(int_at(doc, "training.global_batch_size"), 8);
	doc_free(doc);
	free(yaml);
	assert_int_equal(count_text(d, "a cycle"), 1);
	assert_int_equal(count_text(d, "a path out of the script's folder"), 1);
	assert_int_equal(count_text(d, "an absolute path"), 1);
	assert_int_equal(count_text(d, "leads out of the script's folder"), 1);
	assert_int_equal(count_text(d, "no such file beside the script"), 1);
	for (size_t i = 0; i < mo_diags_count(d); i++) /* all at the main script's lines */
		assert_true(mo_diags_get(d, i)->line >= 3 && mo_diags_get(d, i)->line <= 8);
	mo_diags_free(d);

	/* a file sourcing itself stops at the first repeat; without the
	 * folder nothing is read */
	const char *deep = "#!/bin/bash\nsource deep.sh\nsource conf/model.sh\n"
			   "torchrun pretrain_gpt.py $MODEL_ARGS\n";
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import_dir(&yaml, d, deep, strlen(deep), "deep-run.sh", dir, 0,
						NULL, &err),
			 0);
	assert_int_equal(count_text(d, "a cycle"), 2); /* deep.sh, conf/model.sh's loop */
	free(yaml);
	mo_diags_free(d);
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import(&yaml, d, deep, strlen(deep), "deep-run.sh", 0, NULL, &err), 0);
	assert_int_equal(count_text(d, "given one text"), 2);
	assert_true(mo_diags_errors(d) > 0); /* --num-layers and the others are missing */
	free(yaml);
	mo_diags_free(d);

	const char *names[] = {"conf/model.sh", "conf/train.sh", "deep.sh", "out.sh"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char path[700];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A functional test's MODE (run_ci_test.sh:77-80 at d98e8a64): inference
 * and rl are said once, unmodelled at MODE, and the flags only that mode
 * reads are covered by it; pretraining (the default) says nothing; an
 * unknown mode is an unread key. The inference flags in a pretraining
 * test stay unread. */
static void test_functional_mode(void **state)
{
	(void)state;
	static const struct {
		const char *mode;
		size_t unmodelled, unread;
	} cases[] = {
	    {"inference", 1, 1}, /* --grpo-kl-beta is not an inference flag */
	    {"rl", 1, 0},
	    {"pretraining", 0, 4},
	    {"finetune", 0, 5}, /* MODE itself */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[600];
		snprintf(text, sizeof text,
			 "MODE: %s\n"
			 "MODEL_ARGS:\n"
			 "  --num-layers: 4\n  --hidden-size: 512\n  --num-attention-heads: 8\n"
			 "  --seq-length: 1024\n  --max-position-embeddings: 1024\n"
			 "  --vocab-size: 1000\n  --micro-batch-size: 1\n"
			 "  --temperature: 1.0\n  --inference-max-seq-length: 4096\n"
			 "  --prompts: hello\n  --grpo-kl-beta: 0.0\n",
			 cases[i].mode);
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_megatron_import(&yaml, d, text, strlen(text), "model_config.yaml",
						    0, NULL, &err),
				 0);
		size_t at_mode = 0;
		for (size_t k = 0; k < mo_diags_count(d); k++) {
			const mo_diag *g = mo_diags_get(d, k);
			at_mode += strcmp(g->code, "unmodelled") == 0 && g->line == 1 && g->column == 7;
		}
		assert_int_equal(at_mode, cases[i].unmodelled);
		assert_int_equal(count_code(d, "unmodelled"), cases[i].unmodelled);
		assert_int_equal(count_code(d, "unread-key"), cases[i].unread);
		free(yaml);
		mo_diags_free(d);
	}
}

/* Megatron-LM's Gated DeltaNet hybrid (functional test gpt3_mcore_te_tp2_pp1_gdn
 * at d98e8a64): refused at --experimental-attention-variant gated_delta_net,
 * in a model_config.yaml as on a launch line, its linear-attention sizes and
 * gates read with the error, not left unread. */
static void test_gated_delta_net(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "MODEL_ARGS:\n"
	    "  --num-layers: 4\n  --hidden-size: 512\n  --num-attention-heads: 8\n"
	    "  --seq-length: 1024\n  --max-position-embeddings: 1024\n  --vocab-size: 1000\n"
	    "  --experimental-attention-variant: gated_delta_net\n"
	    "  --linear-attention-freq: 3\n  --linear-conv-kernel-dim: 4\n"
	    "  --linear-key-head-dim: 64\n  --linear-value-head-dim: 64\n"
	    "  --linear-num-key-heads: 4\n  --linear-num-value-heads: 8\n"
	    "  --attention-output-gate: true\n",
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 "
	    "--seq-length 1024 --max-position-embeddings 1024 --vocab-size 1000 "
	    "--experimental-attention-variant gated_delta_net --linear-attention-freq 3 "
	    "--attention-output-gate\n"};
	static const int line[] = {8, 1}, column[] = {3, 150};
	for (size_t i = 0; i < 2; i++) {
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_megatron_import(&yaml, d, texts[i], strlen(texts[i]),
						    i ? "run.sh" : "model_config.yaml", 0, NULL, &err),
				 0);
		assert_int_equal(count_code(d, "unsupported"), 1);
		assert_int_equal(count_code(d, "unread-key"), 0);
		for (size_t k = 0; k < mo_diags_count(d); k++)
			if (strcmp(mo_diags_get(d, k)->code, "unsupported") == 0) {
				assert_int_equal(mo_diags_get(d, k)->line, line[i]);
				assert_int_equal(mo_diags_get(d, k)->column, column[i]);
			}
		free(yaml);
		mo_diags_free(d);
	}
}

/* Writes len bytes to dir/name. */
static void put_bytes(const char *dir, const char *name, const void *bytes, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	fclose(f);
}

/* The import of a script whose tokenizer is `--FLAG path` of the given
 * type, launched from dir (NULL: the caller opens nothing); its
 * model.vocab_size into *vocab (-1: none written, memopt's default
 * applies) and the diagnostics into *d. */
static void import_with_tokenizer(const char *dir, const char *type, const char *flag,
				  const char *path, int64_t *vocab, mo_diags **d)
{
	char script[600];
	snprintf(script, sizeof script,
		 "torchrun --nproc-per-node 2 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
		 "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
		 "--micro-batch-size 1 --global-batch-size 2 --tensor-model-parallel-size 2 "
		 "--tokenizer-type %s %s %s\n",
		 type, flag, path);
	mo_megatron_dirs dirs = {.launch = dir};
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(d), 0);
	assert_int_equal(mo_megatron_import_at(&yaml, *d, script, strlen(script), "run.sh",
					       dir ? &dirs : NULL, 0, NULL, &err),
			 0);
	mo_doc *doc = parse(yaml);
	*vocab = at(doc, "model.vocab_size") ? int_at(doc, "model.vocab_size") : -1;
	doc_free(doc);
	free(yaml);
}

/* A vocabulary that is the tokenizer's, read where the run is launched
 * from, counted as the trainer counts it: a tokenizer.json's largest id +
 * 1 over its vocabulary and added tokens (len(tokenizer)); a SentencePiece
 * model's pieces (field 1 of its ModelProto), with tokenizer_config.json's
 * added tokens; config.json's vocab_size, said to be the model's rows; a
 * path that is not there, a file that is not SentencePiece and a caller
 * that opens nothing fall back to memopt's default, saying why. */
static void test_tokenizer_vocabulary(void **state)
{
	(void)state;
	char dir[] = "/tmp/memopt-tokenizer-XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *subs[] = {"fast", "slow", "rows"};
	for (size_t i = 0; i < 3; i++) {
		char sub[600];
		snprintf(sub, sizeof sub, "%s/%s", dir, subs[i]);
		assert_int_equal(mkdir(sub, 0700), 0);
	}
	/* ids 0..2 and an added token at 3 (one more, "b", is in the vocab) */
	put_file(dir, "fast/tokenizer.json",
		 "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2}},"
		 " \"added_tokens\": [{\"id\": 3, \"content\": \"<s>\"}, {\"id\": 1, \"content\": \"b\"}]}");
	/* three pieces (field 1, each {piece: "a"}) and a trainer_spec
	 * (field 2), which is not one */
	static const unsigned char proto[] = {0x0a, 3, 0x0a, 1, 'a', 0x0a, 3, 0x0a, 1, 'b',
					      0x12, 2, 0x08, 1, 0x0a, 3, 0x0a, 1, 'c'};
	put_bytes(dir, "slow/tokenizer.model", proto, sizeof proto);
	put_file(dir, "slow/tokenizer_config.json",
		 "{\"added_tokens_decoder\": {\"3\": {\"content\": \"<pad>\"}, \"4\": {}}}");
	put_bytes(dir, "sp.model", proto, sizeof proto);
	put_file(dir, "rows/config.json", "{\"vocab_size\": 125696}");
	put_file(dir, "bad.model", "hello, not a protobuf");

	int64_t vocab = 0;
	mo_diags *d = NULL;
	import_with_tokenizer(dir, "PretrainedFromHF", "--tokenizer-name-or-path", "fast", &vocab, &d);
	assert_int_equal(vocab, 4);
	assert_int_equal(count_text(d, "vocabulary"), 0);
	mo_diags_free(d);
	import_with_tokenizer(dir, "HuggingFaceTokenizer", "--tokenizer-model", "./slow/", &vocab, &d);
	assert_int_equal(vocab, 5);
	mo_diags_free(d);
	/* Hugging Face's from_pretrained takes the folder of a file named */
	import_with_tokenizer(dir, "PretrainedFromHF", "--tokenizer-name-or-path",
			      "slow/tokenizer.model", &vocab, &d);
	assert_int_equal(vocab, 5);
	mo_diags_free(d);
	import_with_tokenizer(dir, "Llama2Tokenizer", "--tokenizer-model", "sp.model", &vocab, &d);
	assert_int_equal(vocab, 3);
	mo_diags_free(d);
	char absolute[600];
	snprintf(absolute, sizeof absolute, "%s/sp.model", dir);
	import_with_tokenizer("/nonexistent", "Llama2Tokenizer", "--tokenizer-model", absolute,
			      &vocab, &d);
	assert_int_equal(vocab, 3);
	mo_diags_free(d);
	import_with_tokenizer(dir, "PretrainedFromHF", "--tokenizer-name-or-path", "rows", &vocab, &d);
	assert_int_equal(vocab, 125696);
	assert_int_equal(count_text(d, "the model's rows"), 1);
	mo_diags_free(d);

	/* not read: memopt's default, and why */
	import_with_tokenizer(dir, "Llama2Tokenizer", "--tokenizer-model", "bad.model", &vocab, &d);
	assert_int_equal(vocab, -1);
	assert_int_equal(count_text(d, "not a SentencePiece model"), 1);
	mo_diags_free(d);
	import_with_tokenizer(dir, "PretrainedFromHF", "--tokenizer-name-or-path", "missing", &vocab,
			      &d);
	assert_int_equal(vocab, -1);
	assert_int_equal(count_text(d, "--tokenizer-name-or-path missing is not read: no such"), 1);
	mo_diags_free(d);
	/* a folder with none of the files */
	import_with_tokenizer(dir, "PretrainedFromHF", "--tokenizer-name-or-path", ".", &vocab, &d);
	assert_int_equal(vocab, -1);
	assert_int_equal(count_text(d, "holds no tokenizer.json"), 1);
	mo_diags_free(d);
	/* a caller that opens no files (a server) reads nothing */
	import_with_tokenizer(NULL, "PretrainedFromHF", "--tokenizer-name-or-path", "fast", &vocab,
			      &d);
	assert_int_equal(vocab, -1);
	assert_int_equal(count_text(d, "is not read"), 0);
	mo_diags_free(d);
	/* a type whose count is not only its file's is not read */
	import_with_tokenizer(dir, "GPTSentencePieceTokenizer", "--tokenizer-model", "sp.model",
			      &vocab, &d);
	assert_int_equal(vocab, -1);
	mo_diags_free(d);

	const char *names[] = {"fast/tokenizer.json", "slow/tokenizer.model",
			       "slow/tokenizer_config.json", "sp.model", "rows/config.json",
			       "bad.model"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char path[700];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		assert_int_equal(unlink(path), 0);
	}
	for (size_t i = 0; i < 3; i++) {
		char sub[600];
		snprintf(sub, sizeof sub, "%s/%s", dir, subs[i]);
		assert_int_equal(rmdir(sub), 0);
	}
	assert_int_equal(rmdir(dir), 0);
}

/* MindSpeed-LLM's DeepSeek-V4 flags (c77308a1): mHC as its model keys
 * (mhc_feature.py:11-20), --position-embedding-type deepseek4 as rope
 * (csa_feature.py:13), the compressed sparse attention `unmodelled` at
 * --kv-compress (the PyTorch estimate has no op table for it) with its own
 * flags read, the memory features unmodelled at their flags, numerics and
 * the DeepSeek-V4 spec read: no flag left unread. */
static void test_mindspeed_dsv4(void **state)
{
	(void)state;
	const char *line =
	    "torchrun --nproc_per_node 8 pretrain_deepseek4.py --num-layers 4 --hidden-size 512 "
	    "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 4096 "
	    "--padded-vocab-size 1024 --vocab-size 1000 --make-vocab-size-divisible-by 1 "
	    "--micro-batch-size 1 --bf16 --multi-latent-attention --q-lora-rank 256 "
	    "--kv-lora-rank 128 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
	    "--position-embedding-type deepseek4 --spec mindspeed_llm.tasks.models.spec."
	    "deepseek4_spec layer_spec --enable-mhc --hc-mult 4 --use-fused-mhc --hc-eps 1e-6\n"
	    "  --kv-compress --compress-ratios 0 4 128 4 --o-groups 4 --o-lora-rank 256 "
	    "--sliding-window-size 128 --enable-dsa-indexer --index-topk 512 "
	    "--use-sparse-flash-attn --use-fused-lightning-indexer --max-batch-size 4 "
	    "--original-seq-len 4096 --compress-rope-theta 160000 --rope-factor 16 "
	    "--swiglu-limit 10.0 --n-hash-layers 1 --moe-fb-overlap --mtp-mem-efficient-logits "
	    "--context-parallel-algo kvallgather_cp_algo --rope-scaling-type yarn\n";
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import(&yaml, d, line, strlen(line), "ds4.sh", 0, NULL, &err),
			 0);
	assert_int_equal(mo_diags_errors(d), 0);
	mo_doc *doc = parse(yaml);
	assert_string_equal(str_at(doc, "model.enable_hyper_connections"), "true");
	assert_int_equal(int_at(doc, "model.hc_mult"), 4);
	assert_int_equal(int_at(doc, "model.hc_sinkhorn_iters"), 20);
	assert_string_equal(str_at(doc, "model.use_fused_mhc"), "true");
	assert_string_equal(str_at(doc, "model.position_embedding_type"), "rope");
	assert_int_equal(int_at(doc, "model.vocab_size"), 1024);
	assert_null(at(doc, "model.experimental_attention_variant"));
	doc_free(doc);
	free(yaml);
	assert_int_equal(count_code(d, "unread-key"), 0);
	size_t kv = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *g = mo_diags_get(d, i);
		if (strcmp(g->code, "unmodelled") == 0 && strcmp(g->path, "--kv-compress") == 0) {
			kv++;
			assert_int_equal(g->line, 2);
			assert_int_equal(g->column, 3);
			assert_non_null(strstr(g->hint, "--compress-ratios"));
		}
	}
	assert_int_equal(kv, 1);
	assert_int_equal(count_text(d, "--n-hash-layers: not in the estimate"), 1);
	assert_int_equal(count_text(d, "--moe-fb-overlap: not in the estimate"), 1);
	assert_int_equal(count_text(d, "--mtp-mem-efficient-logits: not in the estimate"), 1);
	assert_int_equal(count_text(d, "--context-parallel-algo"), 0); /* CP 1 */
	mo_diags_free(d);
}

/* MindSpeed-LLM's fine-tuning launches (c77308a1, examples/mcore/qwen3/tune_qwen3_8b_4K_lora_ptd.sh
 * and v2.3.0's tune_*_qlora_ptd.sh): LoRA (features_manager/finetune/lora.py:13-27, the model
 * wrapped by peft, training/training.py:151-195) is one `unmodelled` warning at its first flag,
 * the other LoRA flags named in its hint; --qlora (NF4 base weights) one of its own; --stage
 * sft and the data / prompt flags change nothing (no diagnostic); --stage dpo keeps a
 * reference model (tasks/posttrain/dpo/dpo_model.py:51-55): `unmodelled` at it. */
static void test_mindspeed_lora_flags(void **state)
{
	(void)state;
	static const char base[] =
	    "torchrun --nproc_per_node 8 posttrain_gpt.py --num-layers 4 --hidden-size 64 "
	    "--num-attention-heads 4 --seq-length 32 --max-position-embeddings 32 "
	    "--padded-vocab-size 1024 --micro-batch-size 1 --bf16 --finetune "
	    "--is-instruction-dataset --prompt-type qwen3 --variable-seq-lengths "
	    "--no-pad-to-seq-lengths --neat-pack\n";
	const struct {
		const char *tail, *stage_flag, *lora_flag, *read_with;
		int lora_column;
		size_t unmodelled;
	} cases[] = {
	    {"  --stage sft --lora-r 8 --lora-alpha 16 --lora-fusion --lora-target-modules "
	     "linear_qkv linear_proj\n", NULL, "--lora-r", "--lora-target-modules", 15, 1},
	    {"  --lora-target-modules linear_qkv --lora-r 8 --qlora --stage dpo "
	     "--is-pairwise-dataset --dpo-loss-type sigmoid\n", "--stage", "--lora-target-modules",
	     "--lora-r", 3, 3},
	    {"  --stage sft\n", NULL, NULL, NULL, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text, "%s%s", base, cases[i].tail);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "tune.sh", 0, &d);
		free(yaml);
		assert_int_equal(mo_diags_errors(d), 0);
		assert_int_equal(count_code(d, "unread-key"), 0);
		assert_int_equal(count_code(d, "unmodelled"), cases[i].unmodelled);
		size_t lora = 0;
		for (size_t k = 0; k < mo_diags_count(d); k++) {
			const mo_diag *g = mo_diags_get(d, k);
			if (strcmp(g->code, "unmodelled") != 0 || !strstr(g->message, "LoRA: the base"))
				continue;
			lora++;
			assert_int_equal(g->line, 2);
			assert_int_equal(g->column, cases[i].lora_column);
			assert_non_null(strstr(g->message, "no optimizer states"));
			assert_string_equal(g->path, cases[i].lora_flag);
			assert_non_null(strstr(g->hint, cases[i].read_with));
		}
		assert_int_equal(lora, cases[i].lora_column ? 1 : 0);
		if (cases[i].stage_flag) {
			const mo_diag *g = diag_for(d, "unmodelled", cases[i].stage_flag);
			assert_non_null(g);
			assert_non_null(strstr(g->message, "reference model"));
			assert_non_null(diag_for(d, "unmodelled", "--qlora"));
		}
		mo_diags_free(d);
	}
}

/* An array named without a subscript, `$ARGS` / `${ARGS}`, is its element 0 (bash(1),
 * Arrays): MindSpeed-LLM v2.0.0's examples/mcore/mixtral/train_prm_mixtral_8x7B_full_ptd.sh
 * passes `$ACCELERATE_ARGS`, an array of three flags, so only the first reaches the run. */
static void test_script_array_without_subscript(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "ACC=(\n"
	    "    --overlap-grad-reduce\n"
	    "    --use-distributed-optimizer\n"
	    ")\n"
	    "DT=( --bf16 --fp16 )\n"
	    "torchrun posttrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 \\\n"
	    "    --seq-length 32 --max-position-embeddings 32 --vocab-size 1000 \\\n"
	    "    --micro-batch-size 1 $ACC ${DT}\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "acc.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(int_at(doc, "model.num_layers"), 4);
	/* the first element only: no distributed optimizer */
	assert_string_equal(str_at(doc, "parallel.distributed_optimizer"), "false");
	assert_string_equal(str_at(doc, "training.compute_dtype"), "bfloat16");
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* DeepSeek-V3.2's sparse attention: Megatron-LM's --experimental-attention-variant
 * dsa (transformer_config.py:301-357 at d98e8a64) and MindSpeed-LLM's
 * --enable-dsa-indexer (examples/mcore/deepseek32/, c77308a1) are `unmodelled`
 * at their flag, with the flags read with them named: the PyTorch rules price
 * the MLA. Another variant (gdn) stays unread. */
static void test_dsa_variant_flags(void **state)
{
	(void)state;
	static const char *const lines[] = {
	    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
	    "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 "
	    "--vocab-size 1000 --micro-batch-size 1 --bf16 --multi-latent-attention "
	    "--q-lora-rank 192 --kv-lora-rank 64\n"
	    "  --experimental-attention-variant dsa --dsa-indexer-n-heads 64 "
	    "--dsa-indexer-topk 2048 --dsa-indexer-loss-coeff 0.01\n",
	    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
	    "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 "
	    "--vocab-size 1000 --micro-batch-size 1 --bf16 --multi-latent-attention "
	    "--q-lora-rank 192 --kv-lora-rank 64\n"
	    "  --enable-dsa-indexer --use-fused-lightning-indexer --use-sparse-flash-attn "
	    "--enable-mla-absorb --index-topk 1024\n"};
	static const char *const flag[] = {"--experimental-attention-variant",
					   "--enable-dsa-indexer"};
	static const char *const read_with[] = {"--dsa-indexer-n-heads, --dsa-indexer-topk, "
						"--dsa-indexer-loss-coeff",
						"--enable-mla-absorb, --index-topk"};
	for (size_t k = 0; k < 2; k++) {
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_megatron_import(&yaml, d, lines[k], strlen(lines[k]), "dsa.sh",
						    0, NULL, &err),
				 0);
		assert_int_equal(mo_diags_errors(d), 0);
		assert_int_equal(count_code(d, "unread-key"), 0);
		size_t n = 0;
		for (size_t i = 0; i < mo_diags_count(d); i++) {
			const mo_diag *g = mo_diags_get(d, i);
			if (strcmp(g->code, "unmodelled") == 0 && strcmp(g->path, flag[k]) == 0) {
				n++;
				assert_int_equal(g->line, 2);
				assert_int_equal(g->column, 3);
				assert_non_null(strstr(g->hint, read_with[k]));
			}
		}
		assert_int_equal(n, 1);
		free(yaml);
		mo_diags_free(d);
	}
}

/* The memory flags of Megatron-LM's functional tests at core_v0.12.0 and
 * core_v0.15.0 that the estimate does not model: each an `unmodelled`
 * warning at its line and column, none `unread-key` (Megatron FSDP's earlier
 * name, arguments.py:2133 at core_v0.12.0; the output layer's deferred
 * weight gradients, tensor_parallel/layers.py:500-503; FP8's BF16 first and
 * last layers, arguments.py:1345; the interleaved schedule's group,
 * schedules.py:729; a distillation teacher, post_training/model_provider.py:126,
 * all at core_v0.15.0). */
static void test_release_memory_flags(void **state)
{
	(void)state;
	static const char text[] =
	    "MODEL_ARGS:\n"
	    "  --num-layers: 4\n  --hidden-size: 512\n  --num-attention-heads: 8\n"
	    "  --seq-length: 1024\n  --max-position-embeddings: 1024\n  --vocab-size: 1000\n"
	    "  --micro-batch-size: 1\n  --bf16: true\n"
	    "  --use-custom-fsdp: true\n"
	    "  --defer-embedding-wgrad-compute: true\n"
	    "  --wgrad-deferral-limit: 2\n"
	    "  --first-last-layers-bf16: true\n"
	    "  --microbatch-group-size-per-virtual-pipeline-stage: 4\n"
	    "  --export-kd-teacher-load: /teacher\n";
	static const char *const flags[] = {
	    "--use-custom-fsdp", "--defer-embedding-wgrad-compute", "--wgrad-deferral-limit",
	    "--first-last-layers-bf16", "--microbatch-group-size-per-virtual-pipeline-stage",
	    "--export-kd-teacher-load"};
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import(&yaml, d, text, strlen(text), "model_config.yaml", 0,
					    NULL, &err),
			 0);
	assert_int_equal(count_code(d, "unread-key"), 0);
	for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
		size_t n = 0;
		for (size_t i = 0; i < mo_diags_count(d); i++) {
			const mo_diag *g = mo_diags_get(d, i);
			if (strcmp(g->code, "unmodelled") == 0 && strcmp(g->path, flags[k]) == 0) {
				n++;
				assert_int_equal(g->line, 10 + (int)k);
				assert_int_equal(g->column, 3);
			}
		}
		assert_int_equal(n, 1);
	}
	free(yaml);
	mo_diags_free(d);
}

/* MindSpeed-LLM 2.x / 26.x and MindSpeed flags (mindspeed_llm/ at v26.0.0 57c33296, mindspeed/
 * at v26.0.0_core_r0.12.1 0ed973d6): cross-layer attention (hunyuan_large_attention.py:85-93:
 * every factor-th layer without K/V projection), experts placed whole over TP x EP
 * (moe/experts.py:102-106), Adam's states in bf16 (O2AdamW, adamw.py:120-125), a layer spec
 * with norms after attention and MLP (gemma2_spec: TransformerLayerWithPostNorm) each
 * `unmodelled` at its line and column; router numerics (moe_router.py:15), the framework
 * (ms_patch_feature.py:14) and a spec that builds the flags' layer (qwen3_spec.py:37-58)
 * known not to change memory; no flag unread. */
static void test_mindspeed_26_flags(void **state)
{
	(void)state;
	static const char text[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 4 \\\n"
	    "  --num-experts 8 --moe-ffn-hidden-size 64 --moe-grouped-gemm \\\n"
	    "  --cla-share-factor 2 --share-kvstates \\\n"
	    "  --moe-tp-extend-ep --o2-optimizer \\\n"
	    "  --spec mindspeed_llm.tasks.models.spec.gemma2_spec layer_spec \\\n"
	    "  --norm-topk-prob --ai-framework pytorch \\\n"
	    "  --seq-length 32 --max-position-embeddings 32 --vocab-size 1000 \\\n"
	    "  --micro-batch-size 1\n";
	static const struct {
		const char *flag;
		int line, column;
	} at[] = {{"--cla-share-factor", 3, 3},  {"--share-kvstates", 3, 24},
		  {"--moe-tp-extend-ep", 4, 3},  {"--o2-optimizer", 4, 22},
		  {"--spec", 5, 3}};
	mo_diags *d = NULL;
	char *yaml = import_text(text, "h.sh", 1, &d);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(count_code(d, "unread-key"), 0);
	for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
		const mo_diag *g = diag_for(d, "unmodelled", at[k].flag);
		assert_non_null(g);
		assert_int_equal(g->line, at[k].line);
		assert_int_equal(g->column, at[k].column);
	}
	assert_int_equal(count_code(d, "unmodelled"), 5);
	free(yaml);
	mo_diags_free(d);

	static const char qwen3[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 4 "
	    "--spec mindspeed_llm.tasks.models.spec.qwen3_spec layer_spec --seq-length 32 "
	    "--max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1\n";
	yaml = import_text(qwen3, "q.sh", 1, &d);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_null(diag_for(d, "unread-key", "--spec"));
	assert_null(diag_for(d, "unmodelled", "--spec"));
	free(yaml);
	mo_diags_free(d);

	static const char other[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 4 "
	    "--spec my_project.layers layer_spec --seq-length 32 "
	    "--max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1\n";
	yaml = import_text(other, "o.sh", 1, &d);
	assert_non_null(diag_for(d, "unread-key", "--spec"));
	free(yaml);
	mo_diags_free(d);
}

/* A functional-test config's device count from the CI recipe beside it
 * (tests/test_utils/recipes/<platform>/NAME.yaml at Megatron-LM d98e8a64,
 * whose recipe_parser.py:384 loads every .yaml below recipes/ at any depth;
 * tests/test_utils/recipes/NAME.yaml at core_v0.12.0 and core_v0.15.0, whose
 * common.py:221 / recipe_parser.py:237 load recipes_dir.glob("*.yaml")):
 * the product whose first test_case is the config's folder, in a recipe
 * whose spec.model is its model folder; spec.nodes x spec.gpus, a product's
 * (or its inner products') nodes / gpus replacing the spec's, the config's
 * MODEL_ENV_VARS.MODEL_ARGS.GPUS_PER_NODE the gpus. No recipe, recipes that
 * disagree, or a count that cannot hold TP x PP x CP: a model-needed
 * warning at parallel.world_size saying which, and no device count. */
static const char recipe_config[] =
    "MODEL_ARGS:\n"
    "  --num-layers: 4\n  --hidden-size: 512\n  --num-attention-heads: 8\n"
    "  --seq-length: 1024\n  --max-position-embeddings: 1024\n  --vocab-size: 32000\n"
    "  --micro-batch-size: 1\n  --bf16: true\n  --tensor-model-parallel-size: %d\n";

struct recipe_case {
	const char *name;
	int tp;
	const char *extra;  /* more of the config (MODEL_ENV_VARS) */
	int64_t world;      /* 0: a warning holding `warning` */
	const char *warning;
};

static void recipe_mkdirs(const char *root, const char *rel)
{
	char path[700];
	for (const char *p = rel; (p = strchr(p, '/')) != NULL; p++) {
		snprintf(path, sizeof path, "%s/%.*s", root, (int)(p - rel), rel);
		(void)mkdir(path, 0700);
	}
	snprintf(path, sizeof path, "%s/%s", root, rel);
	(void)mkdir(path, 0700);
}

static void test_recipe_devices(void **state)
{
	(void)state;
	char root[] = "/tmp/memopt-recipe-XXXXXX";
	assert_non_null(mkdtemp(root));
	recipe_mkdirs(root, "tests/test_utils/recipes/h100");
	recipe_mkdirs(root, "tests/test_utils/recipes/gb200");
	put_file(root, "tests/test_utils/recipes/h100/gpt.yaml",
		 "type: basic\nspec:\n  name: '{test_case}'\n  model: gpt\n  nodes: 1\n  gpus: 8\n"
		 "  script: |-\n    echo ${{HOME}}\nproducts:\n"
		 "  - test_case: [one]\n    products:\n      - environment: [dev]\n"
		 "  - test_case: [both]\n"
		 "  - test_case: [wide]\n"
		 "  - test_case: [env]\n"
		 "  - test_case: [first, second]\n");
	put_file(root, "tests/test_utils/recipes/gb200/gpt-2node.yaml",
		 "spec:\n  model: gpt\n  nodes: 1\n  gpus: 4\nproducts:\n"
		 "  - test_case: [inner]\n    products:\n      - nodes: 2\n"
		 "  - test_case: [both]\n");
	put_file(root, "tests/test_utils/recipes/gb200/moe.yaml",
		 "spec:\n  model: moe\n  nodes: 1\n  gpus: 4\nproducts:\n  - test_case: [none]\n");
	put_file(root, "tests/test_utils/recipes/gb200/broken.yaml", "spec: [\n");
	/* a recipe in the folder itself, as core_v0.15.0's gpt-static-inference.yaml */
	put_file(root, "tests/test_utils/recipes/gpt-inference.yaml",
		 "spec:\n  model: gpt\n  nodes: 1\n  gpus: 1\nproducts:\n"
		 "  - test_case: [flat]\n    products:\n      - environment: [dev]\n"
		 "        platforms: [dgx_h100]\n");
	static const struct recipe_case cases[] = {
	    {"one", 2, "", 8, NULL},
	    {"flat", 1, "", 1, NULL},
	    {"inner", 2, "", 8, NULL},
	    {"env", 1, "MODEL_ENV_VARS:\n  MODEL_ARGS:\n    GPUS_PER_NODE: 2\n", 2, NULL},
	    {"both", 1, "", 0, "different device counts"},
	    {"wide", 16, "", 0, "not a multiple of TP x PP x CP"},
	    {"none", 1, "", 0, "no recipe beside this config names it"},
	    {"second", 1, "", 0, "no recipe beside this config names it"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct recipe_case *c = &cases[i];
		char rel[200], dir[800], text[1200];
		snprintf(rel, sizeof rel, "tests/functional_tests/test_cases/gpt/%s", c->name);
		recipe_mkdirs(root, rel);
		snprintf(dir, sizeof dir, "%s/%s", root, rel);
		int n = snprintf(text, sizeof text, "%s", c->extra);
		snprintf(text + n, sizeof text - (size_t)n, recipe_config, c->tp);
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_megatron_import_dir(&yaml, d, text, strlen(text),
							"model_config.yaml", dir, 0, NULL, &err),
				 0);
		mo_doc *doc = parse(yaml);
		size_t needed = 0;
		for (size_t k = 0; k < mo_diags_count(d); k++) {
			const mo_diag *g = mo_diags_get(d, k);
			needed += strcmp(g->code, "model-needed") == 0 && g->path &&
				  strcmp(g->path, "parallel.world_size") == 0;
		}
		if (c->world) {
			assert_int_equal(int_at(doc, "parallel.world_size"), c->world);
			assert_int_equal(needed, 0);
		} else {
			assert_null(at(doc, "parallel.world_size"));
			assert_int_equal(needed, 1);
			assert_int_equal(count_text(d, c->warning), 1);
		}
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
		/* the caller's count wins over the recipe's */
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(mo_megatron_import_dir(&yaml, d, text, strlen(text),
							"model_config.yaml", dir, 16, NULL, &err),
				 0);
		doc = parse(yaml);
		assert_int_equal(int_at(doc, "parallel.world_size"), 16);
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
	/* a config not where Megatron-LM keeps it: the warning says where the count is */
	char text[1200];
	snprintf(text, sizeof text, recipe_config, 1);
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_megatron_import_dir(&yaml, d, text, strlen(text), "model_config.yaml",
						root, 0, NULL, &err),
			 0);
	assert_int_equal(count_text(d, "tests/functional_tests/test_cases/MODEL/CASE/"), 1);
	free(yaml);
	mo_diags_free(d);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* The MoE memory test: MLA, MTP, the dense first layer of --moe-layer-freq
 * ([0]*1+[1]*15), 4 virtual stages, the GPT-2 vocabulary assumed from
 * --vocab-file, --expert-tensor-parallel-size 1 under TP 2 named. */
static void test_moe_memory_speed(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml =
	    import_case("gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed", 8, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.first_k_dense_replace"), 1);
	assert_int_equal(int_at(doc, "model.mtp_num_layers"), 1);
	assert_int_equal(int_at(doc, "model.q_lora_rank"), 1536);
	assert_int_equal(int_at(doc, "model.qk_rope_head_dim"), 64);
	assert_int_equal(int_at(doc, "model.make_vocab_size_divisible_by"),
			 3232);
	assert_int_equal(int_at(doc, "parallel.virtual_pipeline"), 4);
	assert_int_equal(int_at(doc, "parallel.expert_parallel"), 4);
	assert_string_equal(str_at(doc, "model.position_embedding_type"),
			    "rope");
	assert_string_equal(str_at(doc, "model.attention"), "eager");
	assert_string_equal(str_at(doc, "model.add_qkv_bias"), "false");
	/* --moe-grouped-gemm (line 85): TE GroupedLinear's own workspaces */
	assert_string_equal(str_at(doc, "training.moe_grouped_gemm"), "true");
	/* no --no-gradient-accumulation-fusion: Megatron's default, on */
	assert_string_equal(str_at(doc, "training.gradient_accumulation_fusion"),
			    "true");
	assert_non_null(strstr(yaml, "gradient_accumulation_fusion: true  # default"));
	/* --no-rope-fusion (line 31): MLA keeps its YaRN tables of 4096
	 * positions */
	assert_string_equal(str_at(doc, "training.apply_rope_fusion"), "false");
	/* lines 83, 93, 94: what the alltoall dispatcher keeps */
	assert_string_equal(str_at(doc, "training.moe_token_dispatcher_type"),
			    "alltoall");
	assert_string_equal(str_at(doc, "training.moe_router_dtype"), "float32");
	assert_string_equal(str_at(doc, "training.moe_permute_fusion"), "true");
	/* --expert-tensor-parallel-size 1 (line 16) is the model key now */
	assert_int_equal(int_at(doc, "parallel.expert_tensor_parallel"), 1);
	assert_null(diag_for(d, "unmodelled", "--expert-tensor-parallel-size"));
	const mo_diag *x = diag_for(d, "assumed", "--vocab-file");
	assert_non_null(x);
	assert_int_equal(x->line, 42);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* --recompute-granularity full --recompute-method uniform
 * --recompute-num-layers 1 over 12 layers: a warning at the flag whose
 * hint is the config beside the case (full_recompute_layer [0-11]). */
static void test_recompute_flags(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml =
	    import_case("gpt3_mcore_te_tp1_pp1_uniform_full_recompute", 8, &d);
	const mo_diag *r =
	    diag_for(d, "megatron-recompute", "--recompute-granularity");
	assert_non_null(r);
	assert_int_equal(r->severity, MO_SEV_WARNING);
	assert_int_equal(r->line, 42);
	assert_non_null(r->hint);
	assert_non_null(
	    strstr(r->hint, "mode: full, full_recompute_layer: [0-11]"));
	char *config = test_read_file(
	    DATA "gpt3_mcore_te_tp1_pp1_uniform_full_recompute.config.yaml",
	    NULL);
	assert_non_null(strstr(config, "full_recompute_layer: [0-11]"));
	free(config);
	free(yaml);
	mo_diags_free(d);
}

/* A launch line as users write it: environment, torchrun with 8 processes
 * on 2 nodes, continuation lines, a quoted value, --flag=value, a
 * redirection and a pipe after the arguments; block recompute over PP 2. */
static void test_launch_line(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 "
	    "--nnodes=2 \\\n"
	    "    pretrain_gpt.py \\\n"
	    "    --num-layers 32 --hidden-size 4096 --ffn-hidden-size=14336 "
	    "\\\n"
	    "    --num-attention-heads 32 --group-query-attention "
	    "--num-query-groups 8 \\\n"
	    "    --seq-length 8192 --max-position-embeddings 8192 --swiglu \\\n"
	    "    --position-embedding-type rope --normalization RMSNorm \\\n"
	    "    --tokenizer-type NullTokenizer --vocab-size \"128256\" \\\n"
	    "    --micro-batch-size 1 --global-batch-size 128 --bf16 \\\n"
	    "    --tensor-model-parallel-size 4 --pipeline-model-parallel-size "
	    "2 \\\n"
	    "    --recompute-granularity full --recompute-method block "
	    "--recompute-num-layers 4 \\\n"
	    "    --data-path '/data/my corpus' --seq-length 4096 2>&1 | tee "
	    "train.log\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "launch.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "parallel.world_size"), 16);
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 2);
	assert_int_equal(int_at(doc, "model.ffn_hidden_size"), 14336);
	assert_int_equal(int_at(doc, "model.vocab_size"), 128256);
	/* argparse: the last --seq-length wins */
	assert_int_equal(int_at(doc, "model.seq_length"), 4096);
	assert_string_equal(str_at(doc, "model.hidden_act"), "swiglu");
	/* --sequence-parallel not given */
	assert_string_equal(str_at(doc, "parallel.sequence_parallel"), "false");
	assert_string_equal(str_at(doc, "parallel.distributed_optimizer"),
			    "false");
	const mo_diag *r =
	    diag_for(d, "megatron-recompute", "--recompute-granularity");
	assert_non_null(r);
	assert_int_equal(r->line, 11);
	assert_int_equal(r->column, 5);
	/* the first 4 layers of each of the 2 stages of 16 */
	assert_non_null(strstr(r->hint, "[0-3, 16-19]"));
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(count_code(d, "unread-key"), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* --tp-comm-overlap (Transformer Engine's userbuffers beside the TP GEMMs)
 * becomes training.tp_comm_overlap, which the step time reads. */
static void test_tp_comm_overlap(void **state)
{
	(void)state;
	static const char text[] =
	    "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
	    "    --num-layers 4 --hidden-size 1024 --num-attention-heads 8 \\\n"
	    "    --seq-length 2048 --max-position-embeddings 2048 \\\n"
	    "    --tokenizer-type NullTokenizer --vocab-size 32000 \\\n"
	    "    --micro-batch-size 1 --global-batch-size 8 --bf16 \\\n"
	    "    --tensor-model-parallel-size 4 --sequence-parallel "
	    "--tp-comm-overlap\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "launch.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_string_equal(str_at(doc, "training.tp_comm_overlap"), "true");
	assert_string_equal(str_at(doc, "parallel.sequence_parallel"), "true");
	assert_int_equal(mo_diags_errors(d), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* A `*.py` value in an arguments file is a value, not the script; torchrun's
 * own process count (gpu) leaves the device count to --devices. */
static void test_launch_edges(void **state)
{
	(void)state;
	static const char args[] =
	    "--num-layers 2 --hidden-size 8 --num-attention-heads 2 "
	    "--tokenizer-model tok.py --seq-length 16 --micro-batch-size 1\n";
	mo_diags *d = NULL;
	char *yaml = import_text(args, "args", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 2);
	assert_int_equal(int_at(doc, "model.seq_length"), 16);
	assert_non_null(diag_for(d, "model-needed", NULL));
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
	static const char line[] =
	    "torchrun --nproc-per-node gpu pretrain_gpt.py --num-layers 2 "
	    "--hidden-size 8 --num-attention-heads 2 --seq-length 16\n";
	yaml = import_text(line, "line", 0, &d);
	doc = parse(yaml);
	assert_null(at(doc, "parallel.world_size"));
	assert_non_null(diag_for(d, "model-needed", NULL));
	assert_int_equal(count_code(d, "type"), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* An arguments file, one flag per line with comments; Megatron's defaults
 * fill the rest: FFN int(4h x 2/3 / 64) x 64 with --swiglu, one query
 * group per head without --group-query-attention, fp16 keeps gradients in
 * fp16, top-k 2. An unknown flag is reported at its line. */
static void test_arguments_file(void **state)
{
	(void)state;
	static const char text[] =
	    "# model\n"
	    "--num-layers 24\n"
	    "--hidden-size 2048\n"
	    "--num-attention-heads 16\n"
	    "--num-query-groups 4\n"
	    "--swiglu\n"
	    "--seq-length 2048\n"
	    "--max-position-embeddings 2048\n"
	    "--vocab-size 32000\n"
	    "--num-experts 8\n"
	    "--micro-batch-size 2\n"
	    "--fp16\n"
	    "--use-distributed-optimizer\n"
	    "--tensor-model-parallel-size 1 --sequence-parallel\n"
	    "--my-own-flag x y\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "args.txt", 4, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.ffn_hidden_size"), 5440);
	assert_int_equal(int_at(doc, "model.num_query_groups"), 16);
	assert_int_equal(int_at(doc, "model.moe_router_topk"), 2);
	assert_int_equal(int_at(doc, "model.moe_ffn_hidden_size"), 5440);
	assert_string_equal(str_at(doc, "training.params_dtype"), "float16");
	assert_string_equal(str_at(doc, "training.grads_dtype"), "float16");
	/* --sequence-parallel is turned off at TP 1 */
	assert_string_equal(str_at(doc, "parallel.sequence_parallel"), "false");
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 4);
	assert_string_equal(str_at(doc, "model.position_embedding_type"),
			    "learned_absolute");
	const mo_diag *u = diag_for(d, "unread-key", "--my-own-flag");
	assert_non_null(u);
	assert_int_equal(u->line, 15);
	assert_int_equal(u->column, 1);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* --model FILE: mo_model_load reads a model_config.yaml itself; --devices 8
 * gives DP 2 with the DDP shard degree kept at 1, and the `parallel` rule
 * points at the flag in the user's file. */
static void test_load_as_model(void **state)
{
	(void)state;
	size_t len;
	char *text = test_read_file(
	    DATA
	    "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed.model_config.yaml",
	    &len);
	mo_diags *d = NULL;
	mo_model *m = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(
	    mo_model_load(&m, d, text, len, "moe.yaml", NULL, &err), 0);
	assert_int_equal(count_code(d, "model-needed"), 0);
	mo_model_set_devices(m, 8);
	assert_int_equal(m->data_parallel, 2);
	assert_int_equal(m->data_parallel_shard, 1);
	assert_int_equal(m->num_layers, 16);
	assert_int_equal(m->mtp_num_layers, 1);
	assert_true(m->multi_latent_attention);
	assert_string_equal(m->framework, "pytorch");
	/* the Megatron keys, read by the model reader */
	assert_string_equal(m->position_embedding_type, "rope");
	assert_string_equal(m->transformer_impl, "transformer_engine");
	assert_false(m->add_bias_linear);
	assert_true(m->overlap_grad_reduce);
	assert_int_equal(m->max_position_embeddings, 4096);
	mo_model_free(m);
	mo_diags_free(d);
	free(text);

	/* a layout Megatron refuses (TP 3 does not divide 32 heads): the
	 * `parallel` error is at the flag in the user's text, not in the YAML
	 * the import wrote */
	static const char bad[] =
	    "torchrun --nproc-per-node 6 pretrain_gpt.py\n"
	    "  --num-layers 4 --hidden-size 4096 --num-attention-heads 32\n"
	    "  --seq-length 1024 --micro-batch-size 1\n"
	    "  --tensor-model-parallel-size 3\n";
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(
	    mo_model_load(&m, d, bad, strlen(bad), "bad.sh", NULL, &err), 0);
	mo_model_check(m, d);
	const mo_diag *p =
	    diag_for(d, "parallel", "--tensor-model-parallel-size");
	assert_non_null(p);
	assert_int_equal(p->line, 4);
	assert_int_equal(p->column, 3);
	assert_int_equal(m->world_size, 6);
	mo_model_free(m);
	mo_diags_free(d);
}

/* POST /api/v1/models/import with a model_config.yaml body: the model, and
 * the warnings at the flags' lines. */
static void test_api_import(void **state)
{
	(void)state;
	mo_api_options opt;
	mo_api_response res = {0};
	size_t len;
	char *text = test_read_file(
	    DATA
	    "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed.model_config.yaml",
	    &len);
	mo_api_options_default(&opt);
	assert_int_equal(mo_api_handle(&res, "POST", "/api/v1/models/import",
				       "application/yaml", text, len, &opt),
			 0);
	assert_int_equal(res.status, 200);
	json_t *j = json_loads(res.body, 0, NULL);
	assert_non_null(j);
	json_t *model = json_object_get(j, "model");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(model, "model"), "num_layers")),
			 16);
	assert_int_equal(
	    json_integer_value(json_object_get(
		json_object_get(model, "parallel"), "expert_parallel")),
	    4);
	/* --expert-tensor-parallel-size 1 (line 16): a key, not a warning */
	assert_int_equal(
	    json_integer_value(json_object_get(
		json_object_get(model, "parallel"), "expert_tensor_parallel")),
	    1);
	json_t *warnings = json_object_get(j, "warnings");
	for (size_t i = 0; i < json_array_size(warnings); i++) {
		json_t *w = json_array_get(warnings, i);
		assert_false(
		    !strcmp(json_string_value(json_object_get(w, "code")),
			    "unmodelled") &&
		    json_integer_value(json_object_get(w, "line")) == 16);
	}
	json_decref(j);
	mo_api_response_free(&res);
	free(text);
}

static void test_detect(void **state)
{
	(void)state;
	static const char *const yes[] = {
	    "MODEL_ARGS:\n  --num-layers: 2\n",
	    "--num-layers 2 --hidden-size 8\n",
	    "torchrun --nproc_per_node 2 pretrain_gpt.py --num-layers 2\n",
	    "# comment\nX=1 python pretrain_gpt.py --hidden-size 8\n"};
	static const char *const no[] = {
	    "model:\n  num_layers: 2\n  hidden_size: 8\n",
	    "{\"num_hidden_layers\": 2, \"hidden_size\": 8}",
	    "---\nrecompute:\n  mode: None\n# --num-layers\n",
	    "echo --num-layers\n"};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		assert_int_equal(mo_megatron_detect(yes[i], strlen(yes[i])), 1);
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		assert_int_equal(mo_megatron_detect(no[i], strlen(no[i])), 0);
	assert_int_equal(mo_megatron_detect(NULL, 0), 0);
}

/* One hostile text: import returns rc; the first error with this code is
 * at this line and column. */
static void assert_refused(const char *text, size_t len, int rc_want,
			   const char *code, int line, int column)
{
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	int rc =
	    mo_megatron_import(&yaml, d, text, len, "hostile", 0, NULL, &err);
	assert_int_equal(rc, rc_want);
	const mo_diag *e = NULL;
	for (size_t i = 0; i < mo_diags_count(d) && !e; i++)
		if (mo_diags_get(d, i)->severity == MO_SEV_ERROR &&
		    strcmp(mo_diags_get(d, i)->code, code) == 0)
			e = mo_diags_get(d, i);
	if (!e)
		fail_msg("no %s error for %.60s", code, text);
	assert_int_equal(e->line, line);
	assert_int_equal(e->column, column);
	free(yaml);
	mo_diags_free(d);
}

static void test_hostile(void **state)
{
	(void)state;
	/* a number past int64 and one past the layer limit */
	const char *t =
	    "--num-layers 99999999999999999999999 --hidden-size 8\n";
	assert_refused(t, strlen(t), 0, "type", 1, 14);
	t = "--hidden-size 8\n--num-layers 100001\n";
	assert_refused(t, strlen(t), 0, "type", 2, 14);
	/* a missing value: the next word is a flag */
	t = "--num-layers --hidden-size 8\n";
	assert_refused(t, strlen(t), 0, "type", 1, 1);
	/* two values for one */
	t = "--num-layers 2 3 --hidden-size 8\n";
	assert_refused(t, strlen(t), 0, "type", 1, 16);
	/* a shell variable where memopt needs the number */
	t = "--num-layers $LAYERS --hidden-size 8\n";
	assert_refused(t, strlen(t), 0, "type", 1, 14);
	/* a value not among Megatron's choices */
	t = "--num-layers 2 --hidden-size 8 --normalization BatchNorm\n";
	assert_refused(t, strlen(t), 0, "type", 1, 48);
	/* an unterminated quote, at the quote */
	t = "--num-layers 2 --hidden-size 8\n--data-path 'open\n";
	assert_refused(t, strlen(t), 1, "megatron-syntax", 2, 13);
	/* a 1 MB line: one argument over 4096 bytes, at its start */
	size_t n = 1u << 20;
	char *big = malloc(n + 64);
	assert_non_null(big);
	strcpy(big, "--num-layers 2 --hidden-size ");
	memset(big + strlen(big), '7', n);
	big[29 + n] = '\0';
	assert_refused(big, strlen(big), 1, "megatron-syntax", 1, 30);
	/* a 1 MB line of 250,000 short arguments: the argument count */
	for (size_t i = 0; i + 4 <= n; i += 4)
		memcpy(big + i, "-x  ", 4);
	big[n] = '\0';
	memcpy(big, "--hidden-size 8 --num-layers 2 ", 31);
	/* words: 4, then "-x" at column 33 + 4j; the 20,001st is j = 19,996 */
	assert_refused(big, n, 1, "megatron-syntax", 1, 33 + 4 * 19996);
	free(big);
	/* MODEL_ARGS that is not a mapping, and a mapping as a value */
	t = "MODEL_ARGS: [--num-layers]\n--hidden-size: 1\n";
	assert_refused(t, strlen(t), 0, "type", 1, 1);
	t = "MODEL_ARGS:\n  --num-layers: {a: 1}\n  --hidden-size: 8\n";
	assert_refused(t, strlen(t), 0, "type", 2, 17);
}

/* Larger than the limit: a hard error before any work. */
static void test_size_limit(void **state)
{
	(void)state;
	mo_limits lim;
	mo_limits_default(&lim);
	lim.max_bytes = 16;
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	const char *t = "--num-layers 2 --hidden-size 8\n";
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(
	    mo_megatron_import(&yaml, d, t, strlen(t), "big", 0, &lim, &err),
	    -1);
	assert_int_equal(err.code, MO_ERR_LIMIT);
	assert_null(yaml);
	mo_diags_free(d);
}

/* ---- Megatron-LM's own training scripts (tests/data/megatron/scripts/) ----
 */

static char *import_script(const char *file, int64_t devices, mo_diags **d)
{
	char path[256];
	snprintf(path, sizeof path, DATA "scripts/%s", file);
	char *text = test_read_file(path, NULL);
	assert_int_equal(mo_megatron_detect(text, strlen(text)), 1);
	char *yaml = import_text(text, path, devices, d);
	free(text);
	return yaml;
}

/* The diagnostics with this code are exactly at these lines (column 1). */
static void assert_lines(const mo_diags *d, const char *code, const int *lines,
			 size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *x = mo_diags_get(d, i);
		if (strcmp(x->code, code) != 0)
			continue;
		if (k >= n)
			fail_msg("an extra %s at %d:%d", code, x->line,
				 x->column);
		assert_int_equal(x->line, lines[k]);
		assert_int_equal(x->column, 1);
		k++;
	}
	assert_int_equal(k, n);
}

/* examples/gpt3/train_gpt3_175b_distributed.sh: GPT_MODEL_ARGS 96 x 12288,
 * 96 heads, 2048 positions; TRAINING_ARGS micro-batch 1, global 1536,
 * --fp16; MODEL_PARALLEL_ARGS TP 8, PP 16; DISTRIBUTED_ARGS
 * --nproc_per_node $GPUS_PER_NODE (8) --nnodes $NUM_NODES (1). As shipped
 * (one node: "Change for multinode config") TP x PP = 128 is more than 8
 * devices: the parallel rule at --nproc_per_node in DISTRIBUTED_ARGS. */
static void test_script_gpt3_175b(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, DATA "scripts/%s",
		 "train_gpt3_175b_distributed.sh");
	char *text = test_read_file(path, NULL);
	mo_diags *d = NULL;
	char *yaml = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	/* the import is written; the diagnostics carry the error */
	assert_int_equal(mo_megatron_import(&yaml, d, text, strlen(text), path,
					    0, NULL, &err),
			 0);
	free(yaml);
	const mo_diag *e = NULL;
	for (size_t i = 0; i < mo_diags_count(d) && !e; i++)
		if (mo_diags_get(d, i)->severity == MO_SEV_ERROR)
			e = mo_diags_get(d, i);
	assert_non_null(e);
	assert_string_equal(e->code, "parallel");
	assert_int_equal(e->line, 22);
	assert_int_equal(e->column, 5);
	assert_non_null(strstr(e->message, "128"));
	mo_diags_free(d);
	free(text);

	/* on 16 nodes of 8 */
	yaml = import_script("train_gpt3_175b_distributed.sh", 128, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 96);
	assert_int_equal(int_at(doc, "model.hidden_size"), 12288);
	assert_int_equal(int_at(doc, "model.num_attention_heads"), 96);
	assert_int_equal(int_at(doc, "model.ffn_hidden_size"), 4 * 12288);
	assert_int_equal(int_at(doc, "model.seq_length"), 2048);
	assert_int_equal(int_at(doc, "model.max_position_embeddings"), 2048);
	/* --vocab-file $VOCAB_FILE ($3): the GPT-2 vocabulary, assumed */
	assert_int_equal(int_at(doc, "model.vocab_size"), 50257);
	assert_int_equal(int_at(doc, "training.micro_batch_size"), 1);
	assert_int_equal(int_at(doc, "training.global_batch_size"), 1536);
	assert_string_equal(str_at(doc, "training.compute_dtype"), "float16");
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 8);
	assert_int_equal(int_at(doc, "parallel.pipeline_parallel"), 16);
	assert_int_equal(int_at(doc, "parallel.world_size"), 128);
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 1);
	assert_int_equal(mo_diags_errors(d), 0);
	/* --step-batch-size-schedule (line 40) ramps the global batch up, the
	 * micro-batch stays (training/config/training_config.py:29-37 at
	 * d98e8a64): known not to change memory, nothing left unread */
	assert_int_equal(count_code(d, "unread-key"), 0);
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const char *p = mo_diags_get(d, i)->path;
		assert_true(!p || strcmp(p, "--step-batch-size-schedule") != 0);
	}
	assert_int_equal(count_code(d, "megatron-script"), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* examples/mixtral/train_mixtral_8x7b_distributed.sh: 32 x 4096, FFN 14336,
 * 32 heads in 8 groups, sequence 4096 of 32768 positions, 8 experts top-2;
 * TP 1, PP 4, EP 8, distributed optimizer, --sequence-parallel (off at TP
 * 1); bf16; 8 GPUs x NNODES=${SLURM_NNODES:-"1"}: 8 devices, DP 2. The
 * `if [ -n "${WANDB_API_KEY}" ]` block is skipped with a warning. */
static void test_script_mixtral(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml = import_script("train_mixtral_8x7b_distributed.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 32);
	assert_int_equal(int_at(doc, "model.hidden_size"), 4096);
	assert_int_equal(int_at(doc, "model.ffn_hidden_size"), 14336);
	assert_int_equal(int_at(doc, "model.num_attention_heads"), 32);
	assert_int_equal(int_at(doc, "model.num_query_groups"), 8);
	assert_int_equal(int_at(doc, "model.seq_length"), 4096);
	assert_int_equal(int_at(doc, "model.max_position_embeddings"), 32768);
	assert_string_equal(str_at(doc, "model.normalization"), "RMSNorm");
	assert_string_equal(str_at(doc, "model.hidden_act"), "swiglu");
	assert_string_equal(str_at(doc, "model.add_bias_linear"), "false");
	assert_int_equal(int_at(doc, "model.num_moe_experts"), 8);
	assert_int_equal(int_at(doc, "model.moe_router_topk"), 2);
	assert_int_equal(int_at(doc, "training.global_batch_size"), 256);
	assert_string_equal(str_at(doc, "training.compute_dtype"), "bfloat16");
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 1);
	assert_int_equal(int_at(doc, "parallel.pipeline_parallel"), 4);
	assert_int_equal(int_at(doc, "parallel.expert_parallel"), 8);
	assert_int_equal(int_at(doc, "parallel.world_size"), 8);
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 2);
	assert_string_equal(str_at(doc, "parallel.distributed_optimizer"),
			    "true");
	assert_string_equal(str_at(doc, "parallel.sequence_parallel"), "false");
	assert_int_equal(mo_diags_errors(d), 0);
	static const int ifs[] = {102};
	assert_lines(d, "megatron-script", ifs, 1);
	const mo_diag *u = diag_for(d, "unmodelled", "--overlap-param-gather");
	assert_non_null(u);
	assert_int_equal(u->line, 57);
	assert_int_equal(count_code(d, "unread-key"), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* examples/llama/train_llama3_8b_h100_fp8.sh: the numbers are variables
 * (NUM_LAYERS=32, SEQ_LENGTH=8192, GLOBAL_BATCH_SIZE=128, TP_SIZE=1,
 * CP_SIZE=1), the distributed optimizer comes from
 * TRAINING_ARGS+=("${DDP_ARGS[@]}"), the FP8 and tokenizer arrays are
 * filled in `if` blocks (skipped: no --vocab-size, no FP8 flags). mkdir
 * and set are not run (warnings). */
static void test_script_llama3(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml = import_script("train_llama3_8b_h100_fp8.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 32);
	assert_int_equal(int_at(doc, "model.hidden_size"), 4096);
	assert_int_equal(int_at(doc, "model.kv_channels"), 128);
	assert_int_equal(int_at(doc, "model.num_query_groups"), 8);
	assert_int_equal(int_at(doc, "model.seq_length"), 8192);
	assert_int_equal(int_at(doc, "training.global_batch_size"), 128);
	assert_string_equal(str_at(doc, "training.grads_dtype"), "bfloat16");
	assert_string_equal(str_at(doc, "training.overlap_grad_reduce"),
			    "true");
	assert_int_equal(int_at(doc, "parallel.context_parallel"), 1);
	assert_int_equal(int_at(doc, "parallel.world_size"), 8);
	assert_int_equal(int_at(doc, "parallel.data_parallel"), 8);
	assert_string_equal(str_at(doc, "parallel.distributed_optimizer"),
			    "true");
	assert_int_equal(mo_diags_errors(d), 0);
	/* mkdir x 3, the `if [ ! -f ... ]` it cannot decide, set +x; the
	 * DTYPE == fp8 and the MOCK tokenizer conditions are decided: their
	 * branches are read (the vocabulary, the FP8 flags at their lines) */
	static const int lines[] = {18, 19, 45, 180, 196};
	assert_lines(d, "megatron-script", lines, 5);
	assert_int_equal(int_at(doc, "model.vocab_size"), 128256);
	/* --overlap-param-gather comes through "${DDP_ARGS[@]}": its line */
	const mo_diag *u = diag_for(d, "unmodelled", "--overlap-param-gather");
	assert_non_null(u);
	assert_int_equal(u->line, 128);
	u = diag_for(d, "unmodelled", "--fp8-format");
	assert_non_null(u);
	assert_int_equal(u->line, 108);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* Conditionals over texts the script knows are decided as bash decides
 * them: the branch that runs is read at its own lines, the others left
 * out; `||` / `&&` left to right with an unknown side that cannot change
 * the answer; anything else leaves the block out with a warning. */
static void test_script_conditionals(void **state)
{
	(void)state;
	static const char *fmt =
	    "#!/bin/bash\n"
	    "X=%s\n"
	    "EMPTY=\n"
	    "if [[ \"$X\" == \"fp8\" ]]; then\n"       /* 4 */
	    "    L=\"--num-layers 4\"\n"
	    "    if [ -z \"$EMPTY\" ]; then H=\"--hidden-size 64\"; fi\n"
	    "elif [ \"$X\" = bf16 ] || [[ x == y ]]; then\n"
	    "    L=\"--num-layers 8 --bogus-flag-a\"\n" /* 8 */
	    "    H=\"--hidden-size 128\"\n"
	    "else\n"
	    "    L=\"--num-layers 12\"\n"
	    "    H=\"--hidden-size 256\"\n"
	    "fi\n"
	    "if [[ $1 == a ]] && [ x != x ]; then L=\"--num-layers 99\"; fi\n"
	    "if [[ $1 == a ]] || [ x = x ]; then M=\"--micro-batch-size 2\"; fi\n"
	    "if [ -f /etc/hosts ]; then L=\"--num-layers 77\"\n"   /* 16: not decided */
	    "fi\n"
	    "torchrun --nproc-per-node 8 pretrain_gpt.py $L $H --num-attention-heads 8 "
	    "--seq-length 64 --max-position-embeddings 64 --micro-batch-size 1 $M "
	    "--vocab-size 1000\n";
	static const struct {
		const char *x;
		int64_t layers, hidden;
	} cases[] = {{"fp8", 4, 64}, {"bf16", 8, 128}, {"fp16", 12, 256}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[2048];
		snprintf(text, sizeof text, fmt, cases[i].x);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "if.sh", 0, &d);
		assert_int_equal(mo_diags_errors(d), 0);
		mo_doc *doc = parse(yaml);
		assert_int_equal(int_at(doc, "model.num_layers"), cases[i].layers);
		assert_int_equal(int_at(doc, "model.hidden_size"), cases[i].hidden);
		assert_int_equal(int_at(doc, "training.micro_batch_size"), 2);
		static const int undecided[] = {16};
		assert_lines(d, "megatron-script", undecided, 1);
		/* a flag from the branch read is reported where it is written */
		const mo_diag *u = diag_for(d, "unread-key", "--bogus-flag-a");
		if (cases[i].layers == 8) {
			assert_non_null(u);
			assert_int_equal(u->line, 18); /* expanded on the launch line */
		} else {
			assert_null(u);
		}
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
}

/* A functional-test config with a flag twice: read as Megatron-LM's test
 * runner passes it (every entry a flag, argparse keeps the last), a
 * warning where a memopt config has the error. */
static void test_model_config_duplicate_flag(void **state)
{
	(void)state;
	static const char text[] = "MODEL_ARGS:\n"
				   "  --num-layers: 2\n"
				   "  --hidden-size: 64\n"
				   "  --num-attention-heads: 8\n"
				   "  --seq-length: 64\n"
				   "  --max-position-embeddings: 64\n"
				   "  --micro-batch-size: 1\n"
				   "  --vocab-size: 1000\n"
				   "  --num-layers: 4\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "model_config.yaml", 8, &d);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(count_code(d, "duplicate-key"), 1);
	const mo_diag *w = mo_diags_get(d, 0);
	assert_string_equal(w->code, "duplicate-key");
	assert_int_equal(w->severity, MO_SEV_WARNING);
	assert_int_equal(w->line, 9);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 4);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* Expansion rules on a script written here: ${N:-default} with N unset,
 * empty and set; $1 and $(...) kept as written (a path is fine); an
 * unquoted ${A[@]} splits an item at blanks, a quoted one does not (the
 * two-word item then is a stray flag value). */
static void test_script_expansion(void **state)
{
	(void)state;
	static const char text[] =
	    "L=${LAYERS:-4}\n"
	    "EMPTY=\n"
	    "H=${EMPTY:-\"16\"}\n"
	    "L=${L:-99}\n"
	    "CKPT=$1\n"
	    "NOW=$(date +%s)\n"
	    "M=( --num-layers $L --hidden-size ${H} \"--num-attention-heads "
	    "2\" "
	    "--seq-length 8 --max-position-embeddings 8 )\n"
	    "D=( --save $CKPT/x --load $NOW )\n"
	    "export NODES=2\n"
	    "torchrun --nproc_per_node 4 --nnodes $NODES train.py ${M[@]} "
	    "\"${D[@]}\" --micro-batch-size 1\n";
	mo_diags *d = NULL;
	assert_int_equal(mo_megatron_detect(text, strlen(text)), 1);
	char *yaml = import_text(text, "x.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 4);
	assert_int_equal(int_at(doc, "model.hidden_size"), 16);
	assert_int_equal(int_at(doc, "model.num_attention_heads"), 2);
	assert_int_equal(int_at(doc, "parallel.world_size"), 8);
	assert_int_equal(mo_diags_errors(d), 0);
	/* "$(date +%s)" stays one word in the quoted "${D[@]}" */
	assert_int_equal(count_code(d, "unread-key"), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* a number from $1: an error at the value where it is used */
	static const char positional[] =
	    "N=$1\nA=( --num-layers $N --hidden-size 8 )\n"
	    "torchrun x.py ${A[@]}\n";
	assert_refused(positional, strlen(positional), 0, "type", 2, 18);
}

/* Hostile scripts: every one an error at its line and column, none runs
 * long. */
static void test_script_hostile(void **state)
{
	(void)state;
	/* an array doubling itself: 2 x 2^14 words pass the 20,000 a
	 * command or array may have, at line 16's second ${A[@]} */
	mo_buf b;
	buf_init(&b, 0);
	buf_append(&b, "A=( x )\n", 8);
	for (int i = 0; i < 40; i++)
		buf_append(&b, "A=( ${A[@]} ${A[@]} )\n", 22);
	buf_append(&b, "torchrun x.py --num-layers 2 ${A[@]}\n", 37);
	assert_refused(b.data, b.len, 1, "limit", 16, 13);
	/* long words doubling: 4001 x (2^(k+1) - 2) bytes after k doublings
	 * pass the 1 MiB expansion budget at line 9 (k = 8), its first ${A[@]}
	 */
	b.len = 0;
	buf_append(&b, "A=( ", 4);
	for (int i = 0; i < 4000; i++)
		buf_append(&b, "y", 1);
	buf_append(&b, " )\n", 3);
	for (int i = 0; i < 40; i++)
		buf_append(&b, "A=( ${A[@]} ${A[@]} )\n", 22);
	assert_refused(b.data, b.len, 1, "limit", 9, 5);
	/* a text doubling itself: the 4096-byte argument at line 14 */
	b.len = 0;
	buf_append(&b, "A=x\n", 4);
	for (int i = 0; i < 40; i++)
		buf_append(&b, "A=$A$A\n", 7);
	buf_append(&b, "# ${A[@]}\n", 10);
	assert_refused(b.data, b.len, 1, "megatron-syntax", 14, 3);
	/* defaults nested 9 deep: at the ninth */
	b.len = 0;
	buf_append(&b, "B=", 2);
	for (int i = 0; i < 9; i++)
		buf_append(&b, "${X:-", 5);
	buf_append(&b, "1", 1);
	for (int i = 0; i < 9; i++)
		buf_append(&b, "}", 1);
	buf_append(&b, "\n# ${A[@]}\n", 11);
	assert_refused(b.data, b.len, 1, "limit", 1, 43);
	buf_free(&b);
	/* syntax this reader does not model, at its place */
	const char *t = "A=( --num-layers 2\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 1, 3);
	t = "A=${B/x/y}\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 1, 3);
	t = "A=( 1 )\neval \"A=( 2 )\"\ntorchrun x.py ${A[@]}\n"; /* eval can set A */
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 1);
	t = "A=( 1 )\ntorchrun x.py --num-layers=${A[@]}x\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 28);
	/* an array's first word with a default: not modelled (`${A}` alone is element 0) */
	t = "A=( --num-layers 2 )\nB=${A:-x}\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 3);
	/* no launch command: at the start */
	t = "A=( --num-layers 2 )\necho ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 1, 1);
	t = "A=( 1 )\ntorchrun x.py ${A[@]}\npython y.py ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 3, 1);
	t = "A=( 1 )\nif true; then\n  A=( 2 )\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 1);
	t = "A=( $(echo \n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 1, 5);
	t = "A=( 1 )\ntorchrun x.py ${A[@]} (\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 23);
}

/* The way MindSpeed-LLM and pre-2024 Megatron-LM examples write it: flags in
 * quoted texts, expanded unquoted (split at blanks as the shell splits them),
 * one through ${NAME[@]}; MindSpeed-LLM's --padded-vocab-size and memory
 * flags; the split flags keep the place of their expansion. */
static void test_script_text_variables(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
	    "NPUS_PER_NODE=8\n"
	    "TP=2\n"
	    "GPT_ARGS=\"\n"
	    "    --num-layers 4 \\\n"
	    "    --hidden-size 64 \\\n"
	    "    --num-attention-heads 4 \\\n"
	    "    --tensor-model-parallel-size ${TP} \\\n"
	    "    --seq-length 32 --max-position-embeddings 32 \\\n"
	    "    --padded-vocab-size 1000 \\\n"
	    "    --tokenizer-type PretrainedFromHF\n"
	    "\"\n"
	    "MEM_ARGS=\"--swap-attention --reuse-fp32-param\"\n"
	    "torchrun --nproc_per_node $NPUS_PER_NODE pretrain_gpt.py \\\n"
	    "    $GPT_ARGS \\\n"
	    "    ${MEM_ARGS[@]} \\\n"
	    "    --micro-batch-size 1\n";
	mo_diags *d = NULL;
	assert_int_equal(mo_megatron_detect(text, strlen(text)), 1);
	char *yaml = import_text(text, "x.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 4);
	assert_int_equal(int_at(doc, "model.hidden_size"), 64);
	assert_int_equal(int_at(doc, "model.vocab_size"), 1000);
	assert_int_equal(int_at(doc, "model.make_vocab_size_divisible_by"), 1);
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 2);
	assert_int_equal(int_at(doc, "parallel.world_size"), 8);
	assert_int_equal(mo_diags_errors(d), 0);
	const mo_diag *sw = diag_for(d, "unmodelled", "--swap-attention");
	assert_non_null(sw);
	assert_int_equal(sw->line, 17); /* the ${MEM_ARGS[@]} that brings it */
	assert_int_equal(sw->column, 5);
	assert_non_null(diag_for(d, "unmodelled", "--reuse-fp32-param"));
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* Entry points and layer patterns of models memopt does not price: an
 * `unsupported` error at them, not a GPT priced in their place. */
static void test_unsupported_models(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "torchrun pretrain_bert.py --num-layers 2 --hidden-size 8 "
	    "--num-attention-heads 2 --seq-length 8 "
	    "--max-position-embeddings 8 --micro-batch-size 1\n",
	    "python pretrain_mamba.py --num-layers 2 --hidden-size 8 "
	    "--num-attention-heads 2 --seq-length 8 "
	    "--hybrid-override-pattern M*M- --micro-batch-size 1\n",
	    /* tasks/main.py builds the model --task names (23.04, 88-97) */
	    "python tasks/main.py --task RET-FINETUNE-NQ --num-layers 2 "
	    "--hidden-size 8 --num-attention-heads 2 --seq-length 8 "
	    "--max-position-embeddings 8 --micro-batch-size 1\n"};
	static const int columns[] = {10, 8, 29};
	for (size_t i = 0; i < 3; i++) {
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		int rc = mo_megatron_import(&yaml, d, texts[i], strlen(texts[i]), "x",
					    8, NULL, &err);
		assert_true(rc != 0 || mo_diags_errors(d) > 0);
		const mo_diag *u = NULL;
		for (size_t k = 0; k < mo_diags_count(d) && !u; k++)
			if (strcmp(mo_diags_get(d, k)->code, "unsupported") == 0)
				u = mo_diags_get(d, k);
		assert_non_null(u);
		assert_int_equal(u->severity, MO_SEV_ERROR);
		assert_int_equal(u->line, 1);
		assert_int_equal(u->column, columns[i]);
		free(yaml);
		mo_diags_free(d);
	}
}

/* CUBLAS_WORKSPACE_CONFIG as PyTorch's parseChosenWorkspaceSize reads it:
 * every :SIZE:COUNT pair adds SIZE x COUNT KiB; none is PyTorch's default
 * (the device preset's, said); absent, no key. */
static void test_cublas_workspace(void **state)
{
	(void)state;
	char *text = test_read_file(DATA "gpt3_mcore_te_tp2_pp2_cp2.model_config.yaml", NULL);
	static const struct {
		const char *value;
		int64_t kib;
	} cases[] = {{":4096:2:16:8", 4096 * 2 + 16 * 8}, {":4096:8", 32768},
		     {"x:16:8:", 128}, {"4096", 0}, {":99999999:99999999", 0}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *at = strstr(text, "ENV_VARS:\n");
		assert_non_null(at);
		size_t head = (size_t)(at - text) + strlen("ENV_VARS:\n");
		char *t = malloc(strlen(text) + 128);
		assert_non_null(t);
		memcpy(t, text, head);
		sprintf(t + head, "  CUBLAS_WORKSPACE_CONFIG: \"%s\"\n%s", cases[i].value,
			text + head);
		mo_diags *d = NULL;
		char *yaml = import_text(t, "cp2.yaml", 8, &d);
		mo_doc *doc = parse(yaml);
		if (cases[i].kib > 0) {
			assert_int_equal(int_at(doc, "training.cublas_workspace_kib"),
					 cases[i].kib);
		} else {
			assert_null(strstr(yaml, "cublas_workspace_kib"));
			assert_non_null(diag_for(d, "assumed", "CUBLAS_WORKSPACE_CONFIG"));
		}
		doc_free(doc);
		free(yaml);
		free(t);
		mo_diags_free(d);
	}
	mo_diags *d = NULL;
	char *yaml = import_text(text, "cp2.yaml", 8, &d);
	assert_null(strstr(yaml, "cublas_workspace_kib"));
	free(yaml);
	mo_diags_free(d);
	free(text);
}

/* Shell forms of real launch scripts: backquotes holding quotes and blanks,
 * a sourced file (said at its line and column, not read), an array's one
 * element and its length, a loop (skipped, said); MindSpeed-LLM's
 * --gelu-tanh (a gated MLP, mlp.py core_mlp_init); Megatron's even
 * pipeline split (arguments.py: layers a multiple of PP unless a layout or
 * an uneven first / last stage says otherwise). */
static void test_script_shell_forms(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "DATETIME=`date +'date_%y-%m-%d_time_%H'`\n"
	    "source \"${SCRIPT_DIR}/conf/arguments.sh\"\n"
	    "IPs=('IP1' 'IP2')\n"
	    "MASTER_ADDR=${IPs[0]}\n"
	    "NNODES=${#IPs[@]}\n"
	    "for i in \"${!IPs[@]}\";\n"
	    "do\n"
	    "    NODE_RANK=$i\n"
	    "done\n"
	    "torchrun --nproc_per_node 8 --nnodes $NNODES pretrain_gpt.py \\\n"
	    "    --num-layers 24 --hidden-size 64 --num-attention-heads 4 \\\n"
	    "    --ffn-hidden-size 128 --gelu-tanh \\\n"
	    "    --pipeline-model-parallel-size 16 \\\n"
	    "    --seq-length 32 --max-position-embeddings 32 \\\n"
	    "    --vocab-size 1000 --micro-batch-size 1\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "x.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "parallel.world_size"), 16); /* 8 x 2 nodes */
	assert_string_equal(str_at(doc, "model.hidden_act"), "geglu");
	const mo_diag *src = NULL, *loop = NULL;
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *x = mo_diags_get(d, i);
		if (strstr(x->message, "this reader was given one text"))
			src = x;
		if (strstr(x->message, "loop"))
			loop = x;
	}
	assert_non_null(src);
	assert_int_equal(src->severity, MO_SEV_WARNING);
	assert_int_equal(src->line, 3);
	assert_int_equal(src->column, 1);
	assert_non_null(loop);
	assert_int_equal(loop->line, 7);
	/* 24 layers over PP 16: refused at the PP value */
	const mo_diag *pp = diag_for(d, "parallel", "--pipeline-model-parallel-size");
	assert_non_null(pp);
	assert_int_equal(pp->severity, MO_SEV_ERROR);
	assert_int_equal(pp->line, 14);
	assert_int_equal(pp->column, 36);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* an uneven first stage says how: no refusal; the first stage 9 layers, the 15
	 * others (24 - 9) / 15 = 1 each (transformer_block.py:104-137 at d98e8a64), read as
	 * that layout */
	static const char uneven[] =
	    "torchrun pretrain_gpt.py --num-layers 24 --hidden-size 64 "
	    "--num-attention-heads 4 --pipeline-model-parallel-size 16 "
	    "--decoder-first-pipeline-num-layers 9 --seq-length 32 "
	    "--max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1\n";
	yaml = import_text(uneven, "y.sh", 16, &d);
	assert_null(diag_for(d, "parallel", "--pipeline-model-parallel-size"));
	assert_null(diag_for(d, "unmodelled", "--decoder-first-pipeline-num-layers"));
	assert_non_null(strstr(yaml, "pipeline_model_parallel_layout: \"Ettttttttt|t|t|t|t|t|t|t|t|t|"
				     "t|t|t|t|t|tL\""));
	free(yaml);
	mo_diags_free(d);
	/* a first stage that leaves the others an uneven count (24 - 8 over 15): Megatron-LM
	 * refuses it (the same lines), the import leaves the flag unmodelled */
	static const char refused[] =
	    "torchrun pretrain_gpt.py --num-layers 24 --hidden-size 64 "
	    "--num-attention-heads 4 --pipeline-model-parallel-size 16 "
	    "--decoder-first-pipeline-num-layers 8 --seq-length 32 "
	    "--max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1\n";
	yaml = import_text(refused, "z.sh", 16, &d);
	assert_null(strstr(yaml, "pipeline_model_parallel_layout"));
	assert_non_null(diag_for(d, "unmodelled", "--decoder-first-pipeline-num-layers"));
	free(yaml);
	mo_diags_free(d);
}

/* The forms of Megatron-LM's examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh (d98e8a64):
 * an array joined into a text by a quoted assignment, `cd` / `git` / `exit` in it, `|| {
 * ...; }` left out, and the batch script given to `sbatch <<EOF` (expanded as a
 * here-document, then read as a script: srun's `bash -x -c "${CMD}"` runs the text). */
static void test_script_heredoc(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "ARGS=(\n"
	    "    --num-layers 4 --hidden-size 64 --num-attention-heads 4\n"
	    "    --seq-length 32 --max-position-embeddings 32\n"
	    "    --vocab-size 1000 --micro-batch-size 1\n"
	    ")\n"
	    "ARGS=( \"${ARGS[@]}\" --moe-layer-freq [0]*1+[1]*3 --num-experts 4 )\n"
	    "CMD=\"\n"
	    "cd /work;\n"
	    "git rev-parse HEAD;\n"
	    "${PROFILE} python pretrain_gpt.py ${ARGS[@]}\"\n"
	    "mkdir -p logs || {\n"
	    "    echo \"no ${LOGS}\" # }\n"
	    "    exit 1\n"
	    "}\n"
	    "sbatch --nodes 2 <<EOF\n"
	    "#!/bin/bash\n"
	    "#SBATCH --ntasks-per-node=8\n"
	    "srun --mpi=pmix bash -x -c \"${CMD}\" 2>&1 | tee \\${SLURM_JOB_ID}.log\n"
	    "EOF\n"
	    "exit 0\n"
	    "torchrun never_read.py\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "x.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(int_at(doc, "model.num_layers"), 4);
	assert_int_equal(int_at(doc, "model.first_k_dense_replace"), 1);
	assert_int_equal(int_at(doc, "parallel.world_size"), 16); /* sbatch's 2 x #SBATCH 8 */
	/* cd and git are read past at the here-document's `<<`, where the text stands */
	const mo_diag *cd = NULL;
	for (size_t i = 0; i < mo_diags_count(d); i++)
		if (strstr(mo_diags_get(d, i)->message, "'cd' is not run"))
			cd = mo_diags_get(d, i);
	assert_non_null(cd);
	assert_int_equal(cd->line, 16);
	assert_int_equal(cd->column, 18);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* a quoted delimiter: the body as written; `&&` then the launch on the same line */
	static const char quoted[] =
	    "#!/bin/bash\n"
	    "bash <<'END'\n"
	    "cd /work && torchrun --nproc_per_node 4 pretrain_gpt.py --num-layers 2 "
	    "--hidden-size 64 --num-attention-heads 4 --seq-length 32 "
	    "--max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1 || exit 1\n"
	    "END\n";
	yaml = import_text(quoted, "q.sh", 0, &d);
	doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(int_at(doc, "parallel.world_size"), 4);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* an array joined: an unassigned one stays as written, a text is itself */
	static const char joined[] =
	    "#!/bin/bash\n"
	    "T=\"--num-layers 2\"\n"
	    "C=\"${T[@]} --data-path ${NONE[@]}\"\n"
	    "torchrun pretrain_gpt.py $C --hidden-size 64 --num-attention-heads 4 "
	    "--seq-length 32 --max-position-embeddings 32 --vocab-size 1000 "
	    "--micro-batch-size 1\n";
	yaml = import_text(joined, "j.sh", 1, &d);
	doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 2);
	assert_int_equal(mo_diags_errors(d), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* what it does not read, at its line and column */
	const char *t = "A=( 1 )\nsbatch <<EOF\nsrun python x.py ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 8); /* no EOF line */
	t = "A=( 1 )\nmkdir x || {\n echo\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 12); /* no '}' */
	t = "A=( 1 )\nmkdir x && { echo; }\ntorchrun x.py ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 12);
	t = "A=( 1 )\nsbatch <<$E\nEOF\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 10);
	t = "A=( 1 )\nsbatch <<EOF <<EOF\nEOF\n# ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 2, 14);
	/* a flag line after a line whose `\` is missing: bash finds no such command and goes
	 * on; a warning at it, the launch before it read */
	static const char cut[] =
	    "#!/bin/bash\n"
	    "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
	    "--seq-length 32 --max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1\n"
	    "    --save /ckpt \\\n"
	    "    | tee log\n";
	yaml = import_text(cut, "c.sh", 1, &d);
	assert_int_equal(mo_diags_errors(d), 0);
	const mo_diag *flag = NULL;
	for (size_t i = 0; i < mo_diags_count(d); i++)
		if (strstr(mo_diags_get(d, i)->message, "'--save' is not a command"))
			flag = mo_diags_get(d, i);
	assert_non_null(flag);
	assert_int_equal(flag->line, 3);
	assert_int_equal(flag->column, 5);
	free(yaml);
	mo_diags_free(d);
	/* an exit ends the script: no launch after it */
	t = "A=( 1 )\nexit 0\ntorchrun x.py ${A[@]}\n";
	assert_refused(t, strlen(t), 1, "megatron-script", 1, 1);
	/* a here-document's text inside a here-document's, deeper than the bound */
	mo_buf b;
	buf_init(&b, 0);
	buf_append(&b, "A=( 1 )\n", 8);
	for (int i = 0; i < 6; i++)
		buf_printf(&b, "bash <<E%d\n", i);
	for (int i = 5; i >= 0; i--)
		buf_printf(&b, "E%d\n", i);
	buf_append(&b, "# ${A[@]}\n", 10);
	assert_refused(b.data, b.len, 1, "limit", 2, 6); /* at the outer `<<` */
	buf_free(&b);
}

/* MindSpeed-LLM's release scripts: a weight conversion run as `bash FILE` before the launch
 * (v26.1.0 fsdp2/longcat_flash_lite) and a variable the script assigns nowhere after a switch
 * (v2.3.0 pretrain_hunyuanLarge_389b_A3_ptd.sh: `--sequence-parallel` then `$FITUNE_ARGS`).
 * bash runs FILE in a child process, which cannot set the script's variables, and expands an
 * unquoted unset variable to no word (bash(1), Command Execution Environment, Word
 * Splitting): both read past with a warning, the switch read as given. */
static void test_script_child_shell(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "bash tests/tools/convert.sh --to mcore\n"
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 \\\n"
	    "    --tensor-model-parallel-size 2 --sequence-parallel \\\n"
	    "    $FITUNE_ARGS \\\n"
	    "    --seq-length 32 --max-position-embeddings 32 --vocab-size 1000 \\\n"
	    "    --micro-batch-size 1 --use-distributed-optimizer ${UNSET_ARGS}\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "c.sh", 2, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_string_equal(str_at(doc, "parallel.sequence_parallel"), "true");
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 2);
	assert_string_equal(str_at(doc, "parallel.distributed_optimizer"), "true");
	const mo_diag *child = NULL;
	for (size_t i = 0; i < mo_diags_count(d); i++)
		if (strstr(mo_diags_get(d, i)->message, "child shell"))
			child = mo_diags_get(d, i);
	assert_non_null(child);
	assert_int_equal(child->severity, MO_SEV_WARNING);
	assert_int_equal(child->line, 2);
	assert_int_equal(child->column, 1);
	const mo_diag *sp = diag_for(d, "megatron-script", "--sequence-parallel");
	assert_non_null(sp);
	assert_int_equal(sp->severity, MO_SEV_WARNING);
	assert_int_equal(sp->line, 5);
	assert_int_equal(sp->column, 5);
	assert_non_null(diag_for(d, "megatron-script", "--use-distributed-optimizer"));
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* a word that is not a lone variable after a switch stays an error, and a shell given
	 * a text (-c) is not a file it runs */
	static const char valued[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
	    "--sequence-parallel x$A --seq-length 32 --max-position-embeddings 32 "
	    "--vocab-size 1000 --micro-batch-size 1\n";
	mo_diags *e = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&e), 0);
	yaml = NULL;
	(void)mo_megatron_import(&yaml, e, valued, strlen(valued), "v.sh", 1, NULL, &err);
	const mo_diag *type = diag_for(e, "type", "--sequence-parallel");
	assert_non_null(type);
	assert_int_equal(type->severity, MO_SEV_ERROR);
	free(yaml);
	mo_diags_free(e);
	static const char text_c[] = "#!/bin/bash\n"
				     "bash -c 'echo x'\n"
				     "torchrun pretrain_gpt.py --num-layers 4\n";
	assert_int_equal(mo_diags_new(&e), 0);
	yaml = NULL;
	(void)mo_megatron_import(&yaml, e, text_c, strlen(text_c), "t.sh", 1, NULL, &err);
	assert_non_null(diag_for(e, "megatron-script", NULL));
	assert_true(mo_diags_errors(e) > 0);
	free(yaml);
	mo_diags_free(e);
}

/* MindSpeed-LLM 1.0.0's names (mindspeed_llm/training/arguments.py at v1.0.0 062fb4fc):
 * --multi-head-latent-attention with --qk-nope-head-dim / --qk-rope-head-dim (70-76) read as
 * Megatron's MLA, --moe-layer-freq 1 beside --first-k-dense-replace (every layer after the
 * first K: transformer_block.py:71-78) read, another freq unmodelled, ALiBi (587) a
 * position embedding without parameters whose bias is unmodelled. */
static void test_mindspeed_v1_flags(void **state)
{
	(void)state;
	static const char text[] =
	    "#!/bin/bash\n"
	    "GPT_ARGS=\"--num-layers 4 --hidden-size 256 --num-attention-heads 4 "
	    "--multi-head-latent-attention --qk-rope-head-dim 16 --qk-nope-head-dim 32 "
	    "--kv-lora-rank 64 --v-head-dim 32 --spec mindspeed_llm.tasks.models.spec.deepseek_spec "
	    "layer_spec --num-experts 4 --moe-intermediate-size 64 --first-k-dense-replace 1 "
	    "--moe-layer-freq 1 --seq-length 32 --max-position-embeddings 32 "
	    "--padded-vocab-size 1000 --micro-batch-size 1\"\n"
	    "torchrun pretrain_gpt.py $GPT_ARGS\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "m.sh", 1, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_string_equal(str_at(doc, "model.multi_latent_attention"), "true");
	assert_int_equal(int_at(doc, "model.qk_nope_head_dim"), 32);
	assert_int_equal(int_at(doc, "model.qk_rope_head_dim"), 16);
	assert_int_equal(int_at(doc, "model.first_k_dense_replace"), 1);
	assert_null(diag_for(d, "unread-key", "--moe-layer-freq"));
	assert_null(diag_for(d, "unread-key", "--spec"));
	assert_null(diag_for(d, "unread-key", "--qk-rope-head-dim"));
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	static const char every2[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
	    "--num-experts 4 --first-k-dense-replace 1 --moe-layer-freq 2 "
	    "--position-embedding-type alibi --seq-length 32 --max-position-embeddings 32 "
	    "--vocab-size 1000 --micro-batch-size 1\n";
	yaml = import_text(every2, "f.sh", 1, &d);
	doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_non_null(diag_for(d, "unmodelled", "--moe-layer-freq"));
	assert_non_null(diag_for(d, "unmodelled", "--position-embedding-type"));
	assert_string_equal(str_at(doc, "model.position_embedding_type"), "none");
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);

	/* MindSpeed-LLM 2.0.0's name for the MTP layers (mindspeed_llm/training/arguments.py:162
	 * at v2.0.0 3a712f58: --num-nextn-predict-layers, int, default 0), its DeepSeek-V3
	 * scripts' `--num-nextn-predict-layers 1` */
	static const char nextn[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
	    "--num-nextn-predict-layers 1 --seq-length 32 --max-position-embeddings 32 "
	    "--vocab-size 1000 --micro-batch-size 1\n";
	yaml = import_text(nextn, "n.sh", 1, &d);
	doc = parse(yaml);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(int_at(doc, "model.mtp_num_layers"), 1);
	assert_null(diag_for(d, "unread-key", "--num-nextn-predict-layers"));
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* --account-for-embedding- / --account-for-loss-in-pipeline-split with 6 layers, PP 4, VPP 2:
 * Megatron splits 6 + 2 over 8 virtual stages, one each, the embedding's and the loss's
 * stages building no layer (transformer_block.py:147-205 at d98e8a64): the layout
 * E|t|t|t|t|t|t|L, no virtual_pipeline key and no unmodelled warning for the two flags. */
static void test_accounted_split(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml = import_case("gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split",
				 8, &d);
	assert_non_null(strstr(yaml, "pipeline_model_parallel_layout: \"E|t|t|t|t|t|t|L\""));
	assert_null(strstr(yaml, "virtual_pipeline:"));
	assert_null(diag_for(d, "unmodelled", "--account-for-embedding-in-pipeline-split"));
	assert_null(diag_for(d, "unmodelled", "--account-for-loss-in-pipeline-split"));
	free(yaml);
	mo_diags_free(d);
	/* with MTP layers the import leaves the split to the model (and warns) */
	const char *mtp = "--num-layers 6 --pipeline-model-parallel-size 4 --hidden-size 64 "
			  "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
			  "--micro-batch-size 1 --mtp-num-layers 2 "
			  "--account-for-embedding-in-pipeline-split";
	yaml = import_text(mtp, "mtp.sh", 8, &d);
	assert_null(strstr(yaml, "pipeline_model_parallel_layout"));
	assert_non_null(diag_for(d, "unmodelled", "--account-for-embedding-in-pipeline-split"));
	free(yaml);
	mo_diags_free(d);
}

/* --recompute-modules: the recompute hint names Megatron's output-discarding modules under
 * discard_module and the checkpointed ones under select_module, each over the layers that
 * have the module. The expected section is tests/data/megatron/
 * gpt3_mcore_te_tp2_pp2_ep4_etp1_selective_recompute_experimental.config.yaml, written from
 * Megatron's source: 16 layers, the first 3 dense ([0]*3+[1]*13), one MTP layer (16) built
 * as a MoE layer; `mlp` on the dense layers only (transformer_layer.py:537-539), `moe_act`
 * on the experts, under Transformer Engine the MLA input norm and the MoE layers' pre-MLP
 * norm real and the dense layers' fused into linear_fc1 (gpt_layer_specs.py:244-340). */
static void test_recompute_modules_hint(void **state)
{
	(void)state;
	mo_diags *d = NULL;
	char *yaml = import_case("gpt3_mcore_te_tp2_pp2_ep4_etp1_selective_recompute_experimental", 8,
				 &d);
	const mo_diag *x = diag_for(d, "megatron-recompute", "--recompute-granularity");
	assert_non_null(x);
	assert_non_null(x->hint);
	assert_non_null(strstr(x->hint, "select_module: {'.*mlp': [0-2]}"));
	assert_non_null(strstr(x->hint, "discard_module: {'.*input_layernorm': [0-16], "
					"'.*pre_mlp_layernorm': [3-16], "));
	assert_non_null(strstr(x->hint, "apply_rotary_emb_[qk]|[qkv]_handoff)': [0-16], "
					"'.*mlp\\.experts\\.activation_func': [3-16]}"));
	free(yaml);
	mo_diags_free(d);
}

/* A MoE model's --recompute-modules as launch-line words: `moe` on the MoE layers and `mlp`
 * on the dense ones are one pattern over both; `shared_experts` only where there are
 * experts; under the local spec every layer's norms are real (gpt_layer_specs.py:413-456). */
static void test_recompute_modules_by_layer_kind(void **state)
{
	(void)state;
	static const char head[] =
	    "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 12 --hidden-size 1024 "
	    "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
	    "--micro-batch-size 1 --global-batch-size 8 --vocab-size 32000 --bf16 "
	    "--num-experts 8 --moe-layer-freq '([0]*4+[1]*8)' --moe-grouped-gemm "
	    "--moe-shared-expert-intermediate-size 1024 --recompute-granularity selective ";
	static const struct {
		const char *tail, *want, *absent;
	} cases[] = {
	    {"--recompute-modules mlp moe\n", "select_module: {'.*mlp': [0-11]}}", "discard_module"},
	    {"--recompute-modules moe\n", "select_module: {'.*mlp': [4-11]}}", "discard_module"},
	    {"--recompute-modules mlp shared_experts\n",
	     "select_module: {'.*mlp': [0-3], '.*mlp\\.shared_experts': [4-11]}}", "discard_module"},
	    {"--recompute-modules layernorm moe_act\n",
	     "discard_module: {'.*pre_mlp_layernorm': [4-11], "
	     "'.*mlp\\.experts\\.activation_func': [4-11]}}",
	     "input_layernorm"},
	    {"--transformer-impl local --recompute-modules layernorm\n",
	     "discard_module: {'.*input_layernorm': [0-11], '.*pre_mlp_layernorm': [0-11]}}",
	     "select_module"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[1024];
		snprintf(text, sizeof text, "%s%s", head, cases[i].tail);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "launch.sh", 0, &d);
		const mo_diag *x = diag_for(d, "megatron-recompute", "--recompute-granularity");
		assert_non_null(x);
		assert_non_null(x->hint);
		if (!strstr(x->hint, cases[i].want) || strstr(x->hint, cases[i].absent))
			fail_msg("%s: hint %s, want %s without %s", cases[i].tail, x->hint,
				 cases[i].want, cases[i].absent);
		free(yaml);
		mo_diags_free(d);
	}
	/* a dense model: `moe` names no layer, `mlp` every one */
	const char *dense =
	    "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
	    "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
	    "--micro-batch-size 1 --global-batch-size 8 --vocab-size 32000 --bf16 "
	    "--recompute-granularity selective --recompute-modules moe\n";
	mo_diags *d = NULL;
	char *yaml = import_text(dense, "launch.sh", 0, &d);
	const mo_diag *x = diag_for(d, "megatron-recompute", "--recompute-granularity");
	assert_non_null(x);
	assert_non_null(strstr(x->hint, "recompute: {mode: select}"));
	free(yaml);
	mo_diags_free(d);
}

/* argparse's nargs flag written as several words on a launch line: every word is a module
 * (before, only the first was read and the rest dropped without a word). A dense model
 * under Transformer Engine: both norms are fused into the next Linear, `layernorm` adds
 * nothing. */
static void test_recompute_modules_words(void **state)
{
	(void)state;
	const char *text =
	    "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
	    "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
	    "--micro-batch-size 1 --global-batch-size 8 --vocab-size 32000 --bf16 "
	    "--tensor-model-parallel-size 2 --recompute-granularity selective "
	    "--recompute-modules core_attn mlp layernorm\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "launch.sh", 0, &d);
	const mo_diag *x = diag_for(d, "megatron-recompute", "--recompute-granularity");
	assert_non_null(x);
	assert_non_null(x->hint);
	assert_non_null(strstr(x->hint, "'.*self_attention\\.core_attention': [0-7], '.*mlp': [0-7]}}"));
	assert_null(strstr(x->hint, "discard_module"));
	free(yaml);
	mo_diags_free(d);
}

/* Runs SLURM launches (srun(1), sbatch(1)): every task is one process and one device, so the
 * device count is --ntasks, or --nodes x --ntasks-per-node, srun's own counts before the
 * #SBATCH directives'; the command srun runs is the launch, a `sh -c TEXT` text read as more
 * of the script (Megatron-LM 23.04's examples/pretrain_gpt3_175B.sh form). A `<WORDS>`
 * placeholder is one word, not a redirection. */
static void test_slurm_launch(void **state)
{
	(void)state;
	static const char model[] =
	    "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 "
	    "--max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 64 "
	    "--vocab-size 32000 --tensor-model-parallel-size 2 --bf16";
	static const struct {
		const char *head, *tail;
		int64_t dp;
	} cases[] = {
	    /* #SBATCH nodes x tasks per node, srun runs the script directly: 4 x 8 / TP 2 */
	    {"#!/bin/bash\n#SBATCH --nodes=4 --exclusive\n#SBATCH --ntasks-per-node=8\n"
	     "srun -l --container-image img python -u pretrain_gpt.py ",
	     "\n", 16},
	    /* srun's own counts win over the allocation's: 2 x 8 / 2 */
	    {"#SBATCH -N 16\n#SBATCH --ntasks-per-node=8\nsrun --nodes 2 python pretrain_gpt.py ",
	     "\n", 8},
	    /* --ntasks alone, -n spelling */
	    {"srun -n 32 python pretrain_gpt.py ", "\n", 16},
	    /* sh -c "${run_cmd}", with a placeholder in the options */
	    {"#SBATCH <SLURM OPTIONS> --nodes=2 --ntasks-per-node=4\n"
	     "options=\" --data-path <PATH TO THE DATA> ",
	     "\"\nrun_cmd=\"python -u pretrain_gpt.py ${options}\"\n"
	     "srun -l --output=log sh -c \"${run_cmd}\"\n",
	     4},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[2048];
		snprintf(text, sizeof text, "%s%s%s", cases[i].head, model, cases[i].tail);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "slurm.sh", 0, &d);
		mo_doc *doc = parse(yaml);
		if (int_at(doc, "parallel.data_parallel") != cases[i].dp)
			fail_msg("case %zu: data_parallel %lld, want %lld\n%s", i,
				 (long long)int_at(doc, "parallel.data_parallel"),
				 (long long)cases[i].dp, yaml);
		assert_int_equal(int_at(doc, "model.num_layers"), 8);
		assert_null(diag_for(d, "model-needed", NULL));
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
	/* a count that is a placeholder: no device count, said as model-needed */
	char text[2048];
	snprintf(text, sizeof text, "#SBATCH --nodes=your_own_num_nodes\n"
				    "srun python pretrain_gpt.py %s\n", model);
	mo_diags *d = NULL;
	char *yaml = import_text(text, "slurm.sh", 0, &d);
	assert_non_null(diag_for(d, "model-needed", NULL));
	free(yaml);
	mo_diags_free(d);
	/* srun running neither a script nor a shell text */
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	static const char bare[] = "#!/bin/bash\nsrun hostname\n";
	assert_int_not_equal(mo_megatron_import(&yaml, d, bare, strlen(bare), "bare.sh", 0, NULL,
						&err), 0);
	assert_non_null(diag_for(d, "megatron-script", NULL));
	mo_diags_free(d);
}

/* A functional-test config whose MODEL_ARGS merges an anchored mapping (`<<:
 * *BASE_MODEL_ARGS`, gpt3_mcore_reruns_resume_check_grads at d98e8a64): the CI runner's
 * `yq 'explode(.) | ...'` brings the base's flags in and the mapping's own override them. */
static void test_model_config_merge_key(void **state)
{
	(void)state;
	static const char text[] =
	    "BASE_MODEL_ARGS: &BASE_MODEL_ARGS\n"
	    "  --num-layers: 32\n"
	    "  --hidden-size: 3072\n"
	    "  --num-attention-heads: 24\n"
	    "  --seq-length: 4096\n"
	    "  --max-position-embeddings: 4096\n"
	    "  --micro-batch-size: 4\n"
	    "  --vocab-size: 32000\n"
	    "MODEL_ARGS:\n"
	    "  --micro-batch-size: 2\n"
	    "  <<: *BASE_MODEL_ARGS\n"
	    "  --tensor-model-parallel-size: 2\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "model_config.yaml", 8, &d);
	mo_doc *doc = parse(yaml);
	assert_int_equal(int_at(doc, "model.num_layers"), 32);
	assert_int_equal(int_at(doc, "model.hidden_size"), 3072);
	assert_int_equal(int_at(doc, "training.micro_batch_size"), 2);
	assert_int_equal(int_at(doc, "parallel.tensor_parallel"), 2);
	assert_null(diag_for(d, "unread-key", "<<"));
	assert_int_equal(mo_diags_errors(d), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

/* Files whose model is not in them say so (model-needed, path `model`) and nothing else:
 * MindSpeed-LLM's FSDP2 trainer, whose model is a Hugging Face directory named by
 * --model.model_name_or_path; a functional-test config whose MODEL_ARGS is empty. A value
 * that is the script's positional parameter (`--global-batch-size $4`) is a model-needed
 * warning with what is used until it is given. */
static void test_model_elsewhere(void **state)
{
	(void)state;
	static const char *const texts[] = {
	    "#!/bin/bash\nDISTRIBUTED_ARGS=\"--nproc_per_node 8 --nnodes 1\"\n"
	    "torchrun $DISTRIBUTED_ARGS train_fsdp2.py examples/fsdp2/qwen3/q.yaml \\\n"
	    "    --model.model_name_or_path /home/data/Qwen3-8B/ --parallel.fsdp_size 8\n",
	    "ENV_VARS:\n  NCCL_ALGO: Tree\nMODEL_ARGS:\nTEST_TYPE: regular\n",
	};
	for (size_t i = 0; i < 2; i++) {
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		assert_true(mo_megatron_detect(texts[i], strlen(texts[i])));
		int rc = mo_megatron_import(&yaml, d, texts[i], strlen(texts[i]), "f", 0, NULL,
					    &err);
		assert_int_not_equal(rc, 0);
		const mo_diag *x = diag_for(d, "model-needed", "model");
		assert_non_null(x);
		assert_int_equal(x->severity, MO_SEV_ERROR);
		assert_int_equal(mo_diags_errors(d), 1);
		if (i == 0)
			assert_non_null(strstr(x->message, "/home/data/Qwen3-8B/"));
		assert_null(diag_for(d, "missing-key", NULL));
		free(yaml);
		mo_diags_free(d);
	}
	static const char positional[] =
	    "#!/bin/bash\nbs=$4\n"
	    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 256 "
	    "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
	    "--micro-batch-size 2 --global-batch-size $bs --vocab-size 1000\n";
	mo_diags *d = NULL;
	char *yaml = import_text(positional, "p.sh", 0, &d);
	const mo_diag *x = diag_for(d, "model-needed", "training.global_batch_size");
	assert_non_null(x);
	assert_int_equal(x->severity, MO_SEV_WARNING);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_null(strstr(yaml, "global_batch_size"));
	free(yaml);
	mo_diags_free(d);
}

/* MindSpore's msrun (MindSpeed-LLM's MindSpore scripts): --worker_num is every node's
 * processes, the device count; the scripts write it as WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES)),
 * an arithmetic expansion over integers the script assigns, which is evaluated (sums of
 * products); anything else in $((...)) stays as written. */
static void test_msrun_world(void **state)
{
	(void)state;
	static const char model[] =
	    "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 "
	    "--max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 64 "
	    "--vocab-size 32000 --tensor-model-parallel-size 2 --bf16\"\n";
	static const struct {
		const char *world;
		int64_t dp;
	} cases[] = {
	    {"$(($NPUS_PER_NODE*$NNODES))", 16},  /* 8 x 4 / TP 2 */
	    {"$((NPUS_PER_NODE*$NNODES))", 16},   /* a bare name, as bash reads it */
	    {"$(( ${NPUS_PER_NODE} * 2 + 16 ))", 16},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[2048];
		snprintf(text, sizeof text,
			 "#!/bin/bash\nNPUS_PER_NODE=8\nNNODES=4\nWORLD_SIZE=%s\n"
			 "DISTRIBUTED_ARGS=\"--worker_num $WORLD_SIZE --local_worker_num "
			 "$NPUS_PER_NODE --master_port 6000\"\n"
			 "GPT_ARGS=\"%s"
			 "msrun $DISTRIBUTED_ARGS pretrain_gpt.py $GPT_ARGS\n",
			 cases[i].world, model);
		mo_diags *d = NULL;
		char *yaml = import_text(text, "ms.sh", 0, &d);
		mo_doc *doc = parse(yaml);
		if (int_at(doc, "parallel.data_parallel") != cases[i].dp)
			fail_msg("%s: %s", cases[i].world, yaml);
		assert_null(diag_for(d, "model-needed", NULL));
		doc_free(doc);
		free(yaml);
		mo_diags_free(d);
	}
	/* a variable the script does not assign: no count, said */
	char text[2048];
	snprintf(text, sizeof text,
		 "#!/bin/bash\nWORLD_SIZE=$(($GPUS*$NODES))\n"
		 "GPT_ARGS=\"%smsrun --worker_num $WORLD_SIZE pretrain_gpt.py $GPT_ARGS\n",
		 model);
	mo_diags *d = NULL;
	char *yaml = import_text(text, "ms.sh", 0, &d);
	assert_non_null(diag_for(d, "model-needed", "parallel.world_size"));
	free(yaml);
	mo_diags_free(d);
}

/* Flags of Megatron-LM's and MindSpeed-LLM's launches, each classified from
 * its framework source (megatron_args.c, megatron_shell.c): `unmodelled` where
 * it changes memory the estimate does not count, only at a value that turns
 * the thing on (MindSpeed-LLM's --attention-mask-type causal, its default, is
 * silent; general keeps the batch's [s, s] mask); nothing where it leaves memory
 * unchanged (determinism, test switches, a load hook); an error where Megatron-LM
 * stops at it; and read where memopt models what it switches (--quick-geglu, a
 * gated unit as --geglu). Never `unread-key`. */
static void test_launch_flag_classes(void **state)
{
	(void)state;
	static const struct {
		const char *args, *flag, *code; /* code NULL: no diagnostic at the flag */
	} cases[] = {
	    {"--attention-mask-type general", "--attention-mask-type", "unmodelled"},
	    {"--attention-mask-type causal", "--attention-mask-type", NULL},
	    {"--cp-attention-mask-type general", "--cp-attention-mask-type", "unmodelled"},
	    {"--cp-window-size 1", "--cp-window-size", NULL},
	    {"--cp-window-size 2", "--cp-window-size", "unmodelled"},
	    {"--cp-window-size $CP_WINDOW", "--cp-window-size", "unmodelled"},
	    {"--megatron-fsdp-main-grads-dtype bf16", "--megatron-fsdp-main-grads-dtype",
	     "unmodelled"},
	    {"--megatron-fsdp-main-grads-dtype auto", "--megatron-fsdp-main-grads-dtype", NULL},
	    {"--DDP-impl torch", "--DDP-impl", "unmodelled"},
	    {"--DDP-impl local", "--DDP-impl", NULL},
	    {"--tp-comm-overlap-cfg tp.yaml", "--tp-comm-overlap-cfg", "unmodelled"},
	    {"--no-post-layer-norm", "--no-post-layer-norm", "unmodelled"},
	    {"--npu-deterministic", "--npu-deterministic", NULL},
	    {"--use-deter-comp", "--use-deter-comp", NULL},
	    {"--error-injection-rate 100", "--error-injection-rate", NULL},
	    {"--export-te-mcore-model", "--export-te-mcore-model", NULL},
	    {"--yarn-beta-fast 32", "--yarn-beta-fast", NULL},
	    {"--step-batch-size-schedule 0:16", "--step-batch-size-schedule", NULL},
	    {"--checkpoint-activations", "--checkpoint-activations", "type"},
	    {"--fc-type up_down", "--fc-type", NULL},
	    {"--swiglu --fc-type up_down", "--fc-type", "unmodelled"},
	    {"--enable-high-availability", "--enable-high-availability", "unmodelled"},
	    {"--recompute-norm-num-layers 2", "--recompute-norm-num-layers", "unmodelled"},
	    {"--qat-scheme w8a8", "--qat-scheme", "unmodelled"},
	    {"--mg-save-dir /cache/mg", "--mg-save-dir", NULL},
	    {"--fix-router", "--fix-router", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[512];
		snprintf(text, sizeof text,
			 "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 512 "
			 "--num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 "
			 "--vocab-size 1000 --micro-batch-size 1 %s\n",
			 cases[i].args);
		mo_diags *d = NULL;
		char *yaml = NULL;
		mo_error err = {0};
		assert_int_equal(mo_diags_new(&d), 0);
		assert_int_equal(
		    mo_megatron_import(&yaml, d, text, strlen(text), "run.sh", 0, NULL, &err), 0);
		assert_int_equal(count_code(d, "unread-key"), 0);
		size_t at_flag = 0;
		for (size_t k = 0; k < mo_diags_count(d); k++) {
			const mo_diag *g = mo_diags_get(d, k);
			at_flag += g->path && strcmp(g->path, cases[i].flag) == 0;
		}
		if (cases[i].code) {
			if (!diag_for(d, cases[i].code, cases[i].flag))
				fail_msg("%s: no %s", cases[i].args, cases[i].code);
			assert_int_equal(at_flag, 1);
		} else if (at_flag != 0)
			fail_msg("%s: said at %s", cases[i].args, cases[i].flag);
		free(yaml);
		mo_diags_free(d);
	}
}

/* --quick-geglu (training/argument_utils.py:323-326 at d98e8a64): a gated
 * unit, fc1 2 x ffn wide as with --geglu, the key naming the flag. */
static void test_quick_geglu(void **state)
{
	(void)state;
	static const char text[] =
	    "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 "
	    "--seq-length 1024 --max-position-embeddings 1024 --vocab-size 1000 "
	    "--micro-batch-size 1 --quick-geglu\n";
	mo_diags *d = NULL;
	char *yaml = import_text(text, "run.sh", 0, &d);
	mo_doc *doc = parse(yaml);
	assert_string_equal(str_at(doc, "model.hidden_act"), "geglu");
	assert_int_equal(int_at(doc, "model.ffn_hidden_size"), 2048);
	assert_non_null(strstr(yaml, "# --quick-geglu"));
	assert_int_equal(count_code(d, "unread-key"), 0);
	doc_free(doc);
	free(yaml);
	mo_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cases_match_hand_files),
	    cmocka_unit_test(test_tp1_pp4),
	    cmocka_unit_test(test_cublas_workspace),
	    cmocka_unit_test(test_tp4_pp1),
	    cmocka_unit_test(test_tp_above_kv_groups),
	    cmocka_unit_test(test_vocabulary_from_padding),
	    cmocka_unit_test(test_noop_layers),
	    cmocka_unit_test(test_sourced_files),
	    cmocka_unit_test(test_script_conditionals),
	    cmocka_unit_test(test_model_config_duplicate_flag),
	    cmocka_unit_test(test_moe_memory_speed),
	    cmocka_unit_test(test_recompute_flags),
	    cmocka_unit_test(test_launch_line),
	    cmocka_unit_test(test_slurm_launch),
	    cmocka_unit_test(test_model_config_merge_key),
	    cmocka_unit_test(test_model_elsewhere),
	    cmocka_unit_test(test_msrun_world),
	    cmocka_unit_test(test_tp_comm_overlap),
	    cmocka_unit_test(test_launch_edges),
	    cmocka_unit_test(test_arguments_file),
	    cmocka_unit_test(test_load_as_model),
	    cmocka_unit_test(test_api_import),
	    cmocka_unit_test(test_detect),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_size_limit),
	    cmocka_unit_test(test_script_gpt3_175b),
	    cmocka_unit_test(test_script_mixtral),
	    cmocka_unit_test(test_script_llama3),
	    cmocka_unit_test(test_script_expansion),
	    cmocka_unit_test(test_script_text_variables),
	    cmocka_unit_test(test_unsupported_models),
	    cmocka_unit_test(test_script_hostile),
	    cmocka_unit_test(test_script_shell_forms),
	    cmocka_unit_test(test_script_heredoc),
	    cmocka_unit_test(test_script_child_shell),
	    cmocka_unit_test(test_mindspeed_v1_flags),
	    cmocka_unit_test(test_accounted_split),
	    cmocka_unit_test(test_recompute_modules_hint),
	    cmocka_unit_test(test_recompute_modules_by_layer_kind),
	    cmocka_unit_test(test_recompute_modules_words),
	    cmocka_unit_test(test_recipe_devices),
	    cmocka_unit_test(test_mindspeed_dsv4),
	    cmocka_unit_test(test_dsa_variant_flags),
	    cmocka_unit_test(test_release_memory_flags),
	    cmocka_unit_test(test_tokenizer_vocabulary),
	    cmocka_unit_test(test_functional_mode),
	    cmocka_unit_test(test_gated_delta_net),
	    cmocka_unit_test(test_mindspeed_26_flags),
	    cmocka_unit_test(test_mindspeed_lora_flags),
	    cmocka_unit_test(test_script_array_without_subscript),
	    cmocka_unit_test(test_launch_flag_classes),
	    cmocka_unit_test(test_quick_geglu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
