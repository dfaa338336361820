/* MindSpeed-LLM's FSDP2 launch (core/src/import/megatron_fsdp2.c): the run a
 * `torchrun ... train_fsdp2.py RUN.yaml --section.key value` launch describes,
 * over a model given apart. Every expectation is written from MindSpeed-LLM's
 * code at c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/fsdp2/utils/
 * arguments.py (the defaults: cutoff_len 2048 :193-196, per_device_train_batch_size
 * 8 :625-627, gradient_accumulation_steps 1 :544-546, param_dtype bf16 :444-446;
 * the command line over the YAML, _merge_yaml_into_cmd_args :1054-1077; the YAML
 * opened from the launch directory, _load_yaml_if_provided :1042-1048),
 * distributed/parallel_state.py (fsdp_size must be the world size :97-98; the
 * dp_fsdp x cp mesh :86-91), models/model_factory.py (edp = world / (ep x
 * ep_fsdp) :192) and models/model_loader.py (the model loaded in float32
 * :117-135). */
/* cmocka needs these first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memopt/memopt.h"
#include "model/model.h"

/* A small Qwen3-shaped config.json (dense, or with experts). */
static const char dense_json[] =
    "{\"architectures\": [\"Qwen3ForCausalLM\"], \"model_type\": \"qwen3\", "
    "\"num_hidden_layers\": 4, \"hidden_size\": 256, \"intermediate_size\": 512, "
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, "
    "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"tie_word_embeddings\": false, "
    "\"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-06}";
static const char moe_json[] =
    "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"model_type\": \"qwen3_moe\", "
    "\"num_hidden_layers\": 4, \"hidden_size\": 256, \"intermediate_size\": 512, "
    "\"moe_intermediate_size\": 128, \"num_experts\": 16, \"num_experts_per_tok\": 2, "
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, "
    "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"tie_word_embeddings\": false, "
    "\"hidden_act\": \"silu\", \"rms_norm_eps\": 1e-06}";

static mo_model *arch_of(const char *json)
{
	mo_model *m = NULL;
	mo_diags *d = NULL;
	mo_error err = {0};
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(mo_model_load(&m, d, json, strlen(json), "config.json", NULL, &err), 0);
	mo_diags_free(d);
	return m;
}

/* A launch directory (a MindSpeed-LLM checkout) under /tmp. */
static void make_dir(char *dir, size_t n)
{
	snprintf(dir, n, "/tmp/memopt-fsdp2-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0700);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_tree(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static const mo_diag *find(const mo_diags *d, const char *code, const char *part)
{
	for (size_t i = 0; i < mo_diags_count(d); i++) {
		const mo_diag *x = mo_diags_get(d, i);
		if (strcmp(x->code, code) == 0 && (!part || strstr(x->message, part)))
			return x;
	}
	return NULL;
}

static int import(mo_model **m, mo_diags **d, const char *launch, const char *dir,
		  const mo_model *arch)
{
	mo_error err = {0};
	assert_int_equal(mo_diags_new(d), 0);
	assert_true(mo_fsdp2_detect(launch, strlen(launch)));
	mo_megatron_dirs dirs = {.launch = dir};
	return mo_fsdp2_import(m, *d, launch, strlen(launch), "run.sh", &dirs, arch, 0, NULL,
			       &err);
}

static const char run_yaml[] = "model:\n"
			       "  trust_remote_code: False\n"
			       "data:\n"
			       "  cutoff_len: 4096\n"
			       "parallel:\n"
			       "  fsdp_size: 4\n"
			       "  reduce_dtype: bf16\n"
			       "training:\n"
			       "  optimizer: adamw\n"
			       "  gradient_accumulation_steps: 2\n"
			       "  lr: 1e-05\n";

/* The YAML the launch names, from the launch directory; the command line over
 * it (fsdp_size 8 wins over the YAML's 4); the defaults the YAML leaves
 * (per_device_train_batch_size 8); FSDP over the whole world. */
static void test_yaml_and_overrides(void **state)
{
	(void)state;
	char dir[64];
	make_dir(dir, sizeof dir);
	write_file(dir, "examples/fsdp2/q/run.yaml", run_yaml);
	static const char launch[] =
	    "#!/bin/bash\nNPUS_PER_NODE=8\nNNODES=1\n"
	    "torchrun --nproc_per_node $NPUS_PER_NODE --nnodes $NNODES train_fsdp2.py "
	    "examples/fsdp2/q/run.yaml \\\n"
	    "    --model.model_name_or_path /home/data/Qwen3-8B/ \\\n"
	    "    --parallel.fsdp_size 8\n";
	mo_model *arch = arch_of(dense_json), *m = NULL;
	mo_diags *d = NULL;
	assert_int_equal(import(&m, &d, launch, dir, arch), 0);
	assert_non_null(m);
	assert_int_equal(m->world_size, 8);
	assert_int_equal(m->data_parallel_shard, 8);
	assert_int_equal(m->data_parallel, 8);
	assert_int_equal(m->tensor_parallel, 1);
	assert_int_equal(m->context_parallel, 1);
	assert_int_equal(m->seq_length, 4096);
	assert_int_equal(m->micro_batch_size, 8);
	assert_int_equal(m->micro_batch_num, 2);
	assert_string_equal(m->framework, "pytorch");
	assert_string_equal(m->compute_dtype, "bfloat16");
	assert_string_equal(m->params_dtype, "float32");
	assert_string_equal(m->optimizer, "adamw");
	assert_int_equal(m->num_layers, 4);
	/* reduce_dtype bf16: unmodelled at its key in the YAML (line 7, column 3) */
	const mo_diag *x = find(d, "unmodelled", "reduce_dtype");
	assert_non_null(x);
	assert_int_equal(x->line, 7);
	assert_int_equal(x->column, 3);
	assert_string_equal(x->file, "examples/fsdp2/q/run.yaml");
	/* param_dtype bf16 (the default): fully_shard gathers in it, memopt in
	 * the float32 shards' dtype: said at the script (no key gives it) */
	const mo_diag *p = find(d, "unmodelled", "param_dtype");
	assert_non_null(p);
	assert_int_equal(p->line, 4);
	assert_int_equal(mo_diags_errors(d), 0);
	mo_model_free(m);
	mo_model_free(arch);
	mo_diags_free(d);
	remove_tree(dir);
}

/* A YAML that is not there: said at the path's token (line 2, column 43), the
 * run read from the command line; with no model, model-needed says what was read. */
static void test_yaml_missing_no_model(void **state)
{
	(void)state;
	char dir[64];
	make_dir(dir, sizeof dir);
	static const char launch[] = "#!/bin/bash\n"
				     "torchrun --nproc_per_node 16 --nnodes 2 train_fsdp2.py "
				     "examples/fsdp2/q/gone.yaml \\\n"
				     "    --model.model_name_or_path /nowhere/Qwen3-8B/ \\\n"
				     "    --parallel.fsdp_size 32 --training.per_device_train_batch_size 2\n";
	mo_model *m = NULL;
	mo_diags *d = NULL;
	assert_int_equal(import(&m, &d, launch, dir, NULL), 1);
	assert_null(m);
	const mo_diag *y = find(d, "megatron-script", "examples/fsdp2/q/gone.yaml");
	assert_non_null(y);
	assert_int_equal(y->line, 2);
	assert_int_equal(y->column, 56);
	const mo_diag *x = find(d, "model-needed", "32 devices");
	assert_non_null(x);
	assert_int_equal(x->severity, MO_SEV_ERROR);
	assert_non_null(strstr(x->message, "per_device_train_batch_size 2"));
	assert_non_null(strstr(x->message, "/nowhere/Qwen3-8B/"));
	assert_int_equal(mo_diags_errors(d), 1);
	mo_diags_free(d);
	remove_tree(dir);
}

/* model_name_or_path's config.json from the launch directory (a relative
 * path, as transformers opens it where the trainer runs); no YAML: the
 * defaults (cutoff_len 2048, per_device_train_batch_size 8). */
static void test_model_dir(void **state)
{
	(void)state;
	char dir[64];
	make_dir(dir, sizeof dir);
	write_file(dir, "weights/q/config.json", dense_json);
	static const char launch[] = "torchrun --nproc_per_node 4 train_fsdp2.py \\\n"
				     "    --model.model_name_or_path ./weights/q \\\n"
				     "    --parallel.fsdp_size 4\n";
	mo_model *m = NULL;
	mo_diags *d = NULL;
	assert_int_equal(import(&m, &d, launch, dir, NULL), 0);
	assert_int_equal(m->num_layers, 4);
	assert_int_equal(m->hidden_size, 256);
	assert_int_equal(m->seq_length, 2048);
	assert_int_equal(m->micro_batch_size, 8);
	assert_int_equal(m->world_size, 4);
	mo_model_free(m);
	mo_diags_free(d);
	remove_tree(dir);
}

/* Experts: ep_size is memopt's expert_parallel; ep_size x ep_fsdp_size = world
 * shards each rank's experts over the rest, as memopt's FSDP does; a smaller
 * product replicates them (edp): unmodelled at ep_fsdp_size. fsdp_size other
 * than the world: the trainer stops (an error at it). cp_size: context parallel,
 * FSDP still over the whole world (data_parallel_shard x CP = world). */
static void test_experts_and_sizes(void **state)
{
	(void)state;
	char dir[64];
	make_dir(dir, sizeof dir);
	write_file(dir, "r.yaml", "parallel:\n  cp_size: 2\n  ep_size: 4\n  ep_fsdp_size: 2\n");
	static const char launch[] = "torchrun --nproc_per_node 16 train_fsdp2.py r.yaml "
				     "--parallel.fsdp_size 16\n";
	mo_model *arch = arch_of(moe_json), *m = NULL;
	mo_diags *d = NULL;
	assert_int_equal(import(&m, &d, launch, dir, arch), 0);
	assert_int_equal(m->expert_parallel, 4);
	assert_int_equal(m->context_parallel, 2);
	assert_int_equal(m->data_parallel_shard, 8);
	const mo_diag *x = find(d, "unmodelled", "ep_fsdp_size");
	assert_non_null(x);
	assert_int_equal(x->line, 4);
	assert_int_equal(mo_diags_errors(d), 0);
	mo_model_free(m);
	mo_diags_free(d);
	m = NULL;
	static const char wrong[] = "torchrun --nproc_per_node 16 train_fsdp2.py r.yaml "
				    "--parallel.fsdp_size 8 --parallel.ep_fsdp_size 4\n";
	assert_int_equal(import(&m, &d, wrong, dir, arch), 0);
	const mo_diag *e = find(d, "parallel", "fsdp_size 8");
	assert_non_null(e);
	assert_int_equal(e->severity, MO_SEV_ERROR);
	assert_null(find(d, "unmodelled", "ep_fsdp_size"));
	mo_model_free(m);
	mo_model_free(arch);
	mo_diags_free(d);
	remove_tree(dir);
}

/* A caller that opens no files (a server): the YAML is said, not read. */
static void test_no_launch_dir(void **state)
{
	(void)state;
	static const char launch[] = "torchrun --nproc_per_node 8 train_fsdp2.py x.yaml "
				     "--parallel.fsdp_size 8\n";
	mo_model *arch = arch_of(dense_json), *m = NULL;
	mo_diags *d = NULL;
	assert_int_equal(import(&m, &d, launch, NULL, arch), 0);
	assert_non_null(find(d, "megatron-script", "this caller opens no files"));
	assert_int_equal(m->world_size, 8);
	mo_model_free(m);
	mo_model_free(arch);
	mo_diags_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_yaml_and_overrides),
	    cmocka_unit_test(test_yaml_missing_no_model),
	    cmocka_unit_test(test_model_dir),
	    cmocka_unit_test(test_experts_and_sizes),
	    cmocka_unit_test(test_no_launch_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
