/* The launch-script reader (core/src/import/megatron_shell.c, megatron.c) on the shell
 * commands of MindSpeed-LLM's CI launch scripts (tests/st/shell_scripts/ and
 * tests/pipeline/ at c77308a1): the commands before and after the launch that change files
 * or packages, Python run on a text or on a conversion program, a trap, an array before a
 * line continuation, and a shell script that holds no model flag. Each script here is
 * written from the lines it cites; what is expected is what bash does with them. */
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

#include "api.h"
#include "model/model_internal.h"
#include "yaml/yaml.h"

/* The import of a script: 0 or the import's code; the model file in *yaml. */
static int import_text(const char *text, char **yaml, mo_diags **diags)
{
	mo_error err = {0};
	*yaml = NULL;
	assert_int_equal(mo_diags_new(diags), 0);
	return mo_megatron_import(yaml, *diags, text, strlen(text), "t.sh", 0, NULL, &err);
}

/* model.num_layers of an import's model file. */
static int64_t num_layers(const char *yaml)
{
	mo_doc *doc = NULL;
	mo_error err = {0};
	mo_diags *d = NULL;
	assert_int_equal(mo_diags_new(&d), 0);
	assert_int_equal(yaml_tree_parse(&doc, d, yaml, strlen(yaml), "import", NULL, &err), 0);
	const mo_node *model = map_get(doc->root, "model");
	assert_non_null(model);
	const mo_node *v = map_get(model, "num_layers");
	assert_non_null(v);
	int64_t n = -1;
	bool ovf = false;
	assert_true(scalar_int(v, &n, &ovf));
	doc_free(doc);
	mo_diags_free(d);
	return n;
}

/* The diagnostic whose message holds `text`, or NULL. */
static const mo_diag *said(const mo_diags *d, const char *text)
{
	for (size_t i = 0; i < mo_diags_count(d); i++)
		if (strstr(mo_diags_get(d, i)->message, text))
			return mo_diags_get(d, i);
	return NULL;
}

#define LAUNCH                                                                                     \
	"torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 "            \
	"--num-attention-heads 4 --seq-length 32 --max-position-embeddings 32 "                   \
	"--vocab-size 1000 --micro-batch-size 1\n"

/* `rm -rf /root/.cache` before the launch (qwen3_next_80b_4K_A3_ptd.sh:7), `rm -rf DIR`
 * after it (qwen2_moe_tp1_pp2_ep2_cp2_32k.sh:166), `cp`, `sed -i` and `mv` of the training
 * code around it (high_availability_error_dump_ptd.sh:24-39,121), `pip install` and a
 * `trap TEXT EXIT` (pretrain_deepseek4_flash_1k_fsdp2.sh:21,29): each a child process or a
 * handler run at exit, none of them changes the launch's words; a warning at each, where
 * `rm` and `trap` were errors and `cp x.py` was taken for a launch. */
static void test_commands_not_run(void **state)
{
	(void)state;
	static const char script[] =
	    "#!/bin/bash\n"
	    "rm -rf /root/.cache\n"
	    "training_file=$basepath/mindspeed_llm/training/training.py\n"
	    "cp $training_file $training_file.back\n"
	    "sed -i '/args/a\\\n"
	    "        raise_dump_error(iteration)' $training_file\n"
	    "pip install --no-cache-dir transformers==5.8.1\n"
	    "trap '\n"
	    "    pip install --no-cache-dir transformers==5.2.0 || exit 1\n"
	    "' EXIT\n" LAUNCH "mv $training_file.back $training_file\n"
	    "rm -rf ${PROFILE_DIR}\n";
	char *yaml;
	mo_diags *d;
	assert_int_equal(import_text(script, &yaml, &d), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(num_layers(yaml), 4);
	const char *cmds[] = {"'rm' is not run", "'cp' is not run", "'sed' is not run",
			      "'pip' is not run", "'trap' is not run", "'mv' is not run"};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
		assert_non_null(said(d, cmds[i]));
	const mo_diag *rm = said(d, "'rm' is not run");
	assert_int_equal(rm->line, 2);
	assert_int_equal(rm->column, 1);
	free(yaml);
	mo_diags_free(d);
}

/* `python -c "import mindspeed; ...load()" &` before the launch
 * (deepseek_v3_mcore_tp2_pp2_ep2_dualpipev_fb.sh:10-14) runs a text, no script: not a
 * launch (it was "a second launch command"); `python convert_ckpt_v2.py ...` and `python
 * ./preprocess_data.py ...` before it (tune_qwen3_30b_a3b_4K_full_ptd_tp4_pp2_ep1.sh:150,162)
 * are MindSpeed-LLM's conversion and preprocessing programs, not the launch: the launch's
 * --num-layers is read, not the conversion's. */
static void test_python_before_launch(void **state)
{
	(void)state;
	static const char script[] =
	    "#!/bin/bash\n"
	    "python -c \"import mindspeed; from mindspeed.op_builder import GMMOpBuilder; "
	    "GMMOpBuilder().load()\" &\n"
	    "python convert_ckpt_v2.py \\\n"
	    "    --load-model-type hf --num-layers 48 --save-dir ./ckpt\n"
	    "python ./preprocess_data.py --input x.parquet --workers 4\n" LAUNCH;
	char *yaml;
	mo_diags *d;
	assert_int_equal(import_text(script, &yaml, &d), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(num_layers(yaml), 4);
	const mo_diag *text = said(d, "'python -c ...' is not run");
	assert_non_null(text);
	assert_int_equal(text->line, 2);
	const mo_diag *conv = said(d, "'convert_ckpt_v2.py' is not run");
	assert_non_null(conv);
	assert_int_equal(conv->line, 3);
	assert_non_null(said(d, "'./preprocess_data.py' is not run"));
	free(yaml);
	mo_diags_free(d);

	/* two training launches are still two (the reader reads one) */
	static const char two[] = "#!/bin/bash\n" LAUNCH LAUNCH;
	assert_int_not_equal(import_text(two, &yaml, &d), 0);
	assert_non_null(said(d, "a second launch command"));
	free(yaml);
	mo_diags_free(d);
}

/* `  ${OPTIMIZE_ARGS[@]}\` then a line that starts with blanks
 * (tests/st/shell_scripts/qwen3_30b_tp4_cp2_ep2.sh:139): bash removes the `\` and the
 * newline, and the blanks of the next line end the word, so the array is a whole word; an
 * array joined by `\` to a word on the next line's first column is not, and is refused. */
static void test_array_before_continuation(void **state)
{
	(void)state;
	static const char script[] =
	    "#!/bin/bash\n"
	    "A=(--num-layers 4 --hidden-size 64)\n"
	    "B=(--num-attention-heads 4 --seq-length 32)\n"
	    "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
	    "  ${A[@]}\\\n"
	    "  ${B[@]}\\\n"
	    "  --max-position-embeddings 32 --vocab-size 1000 --micro-batch-size 1\n";
	char *yaml;
	mo_diags *d;
	assert_int_equal(import_text(script, &yaml, &d), 0);
	assert_int_equal(mo_diags_errors(d), 0);
	assert_int_equal(num_layers(yaml), 4);
	free(yaml);
	mo_diags_free(d);

	static const char joined[] =
	    "#!/bin/bash\n"
	    "A=(--num-layers 4 --hidden-size 64)\n"
	    "torchrun --nproc_per_node 8 pretrain_gpt.py ${A[@]}\\\n"
	    "x --num-attention-heads 4\n";
	assert_int_not_equal(import_text(joined, &yaml, &d), 0);
	assert_non_null(said(d, "an array here"));
	free(yaml);
	mo_diags_free(d);
}

/* A `#!/bin/bash` script that runs Python and holds no model flag (tests/pipeline/st/
 * layerwise_disaggregated_training/tune_qwen25_7b_tp1pp4_layerwise_disaggregated.sh: a
 * driver that runs conversions and other launch scripts) is a shell script, read as one,
 * where it was read as YAML; a YAML file is not, a `#!` comment on its first line or not. */
static void test_shell_shebang(void **state)
{
	(void)state;
	static const char driver[] = "#!/bin/bash\n"
				     "set -u\n"
				     "trap cleanup INT TERM EXIT\n"
				     "python convert_ckpt_v2.py --load-model-type hf\n";
	assert_true(mo_megatron_detect(driver, strlen(driver)));
	static const char env[] = "#!/usr/bin/env bash\npython x.py\n";
	assert_true(mo_megatron_detect(env, strlen(env)));
	static const char yaml[] = "#!/bin/bash\nmodel:\n  num_layers: 2\n";
	assert_false(mo_megatron_detect(yaml, strlen(yaml)));
	static const char python[] = "#!/usr/bin/python3\nimport x\nrun('a.py')\n";
	assert_false(mo_megatron_detect(python, strlen(python)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_commands_not_run),
	    cmocka_unit_test(test_python_before_launch),
	    cmocka_unit_test(test_array_before_continuation),
	    cmocka_unit_test(test_shell_shebang),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
