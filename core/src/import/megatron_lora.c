/* MindSpeed-LLM's fine-tuning and post-training flags (Ascend/MindSpeed-LLM
 * c77308a1 unless named; the same flags at v1.0.0 to v26.1.0):
 *
 * - LoRA (features_manager/finetune/lora.py:13-27; the model wrapped by
 *   peft's get_peft_model, training/training.py:151-195): the base weights
 *   are frozen, so they have no gradients and no optimizer states, and only
 *   the rank-r adapters of --lora-target-modules are trained. The estimate
 *   prices a full fine-tune (every weight's gradient and optimizer states):
 *   one `unmodelled` warning at the first LoRA flag, the others read with
 *   it (named in its hint). LU-LoRA (features_manager/finetune/lu_lora.py:
 *   14-18) is LoRA with its own layer-wise rates: the same warning.
 * - QLoRA (--qlora, v2.0.0 training/arguments.py:379; v2.3.0
 *   tasks/posttrain/lora/qlora.py:24-98): the frozen base weights of the
 *   parallel linear layers kept as bitsandbytes NF4 (4 bits a weight),
 *   dequantised for each matmul: `unmodelled` at --qlora, the weights priced
 *   at the training dtype.
 * - --stage (features_manager/megatron_basic/megatron_basic.py:27-30; v2.0.0
 *   training/arguments.py:607-611 adds orm, prm, simpo, trl_ppo; v1.0.0's
 *   arguments.py:460-463 has sft, dpo, rm): sft trains
 *   the model as pretraining does; dpo holds a frozen reference model beside
 *   the trained one (tasks/posttrain/dpo/dpo_model.py:51-55) and runs each
 *   sample's chosen and rejected responses; simpo the chosen and rejected
 *   responses without a reference; orm / prm (rm) a reward model, whose output
 *   layer is a one-output value head; trl_ppo the actor with a critic, a
 *   reference and a reward model. What is not sft is `unmodelled` at the
 *   flag.
 * - the data, prompt and loss flags of these launches (features_manager/
 *   finetune/finetune.py:15-27, dataset/dataset.py:13-21,
 *   dataset/data_preprocess.py:46-64, dpo/dpo.py:17-30,
 *   tokenizer/build_tokenizer.py:25, inference/inference.py:32-33):
 *   how samples are read, padded, packed and scored; the batch's
 *   sequences are at most --seq-length long, which the estimate prices.
 *   Known not to change memory. */
#include "import/megatron_internal.h"

#include <string.h>

static const char *const lora_flags[] = {
    "--lora-r",		 "--lora-alpha",	  "--lora-target-modules",
    "--lora-load",	 "--lora-modules-to-save", "--lora-register-forward-hook",
    "--lora-fusion",	 "--lora-ckpt-filter",	  "--lu-lora-final-layer-index",
    "--lu-lora-lr",	 "--lu-lora-lr-ratio",	  NULL};

static const char *const tune_irrelevant[] = {
    "--is-instruction-dataset", "--variable-seq-lengths", "--cut-max-seqlen",
    "--no-pad-to-seq-lengths",	"--neat-pack",		  "--padded-samples",
    "--pad-to-multiple-of",	"--no-shuffle",		  "--enable-thinking",
    "--pack",			"--workers",		  "--reward-tokens",
    "--placeholder-token",	"--prompt-type",	  "--is-pairwise-dataset",
    "--dpo-loss-type",		"--dpo-beta",		  "--dpo-label-smoothing",
    "--pref-ftx",		"--ref-model",		  "--refer-model-iter",
    "--reward-model",		"--simpo-beta",		  "--simpo-loss-type",
    "--gamma-beta-ratio",	"--max-length",		  "--max-new-tokens",
    "--rollout-batch-size",	"--qlora-save-dequantize", NULL};

/* What each training stage keeps beyond the model --stage sft trains. */
static const struct {
	const char *stage, *what;
} tune_stages[] = {
    {"dpo", "DPO: a frozen reference model beside the trained one "
	    "(tasks/posttrain/dpo/dpo_model.py:51-55), each sample's chosen and "
	    "rejected responses run together"},
    {"simpo", "SimPO: each sample's chosen and rejected responses run together"},
    {"orm", "a reward model: its output layer a one-output value head, not the "
	    "vocabulary's"},
    {"prm", "a reward model: its output layer a one-output value head, not the "
	    "vocabulary's"},
    /* 1.0.0's name of the reward-model stage (training/arguments.py:460-463 at v1.0.0) */
    {"rm", "a reward model: its output layer a one-output value head, not the "
	   "vocabulary's"},
    {"trl_ppo", "PPO: the actor with a critic, a reference and a reward model"},
    {"ray_ppo", "a Ray post-training stage's models beside the trained one"},
    {"ray_online_dpo", "a Ray post-training stage's models beside the trained one"},
    {"ray_grpo", "a Ray post-training stage's models beside the trained one"},
    {NULL, NULL}};

static bool tune_listed(const char *const *list, const char *flag)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], flag) == 0)
			return true;
	return false;
}

/* One warning at the first LoRA flag given, the others named in its hint. */
static void tune_read_lora(struct mo_megatron_import *g)
{
	struct mo_megatron_arg *first = NULL;
	mo_buf with;
	buf_init(&with, 0);
	for (size_t i = 0; i < g->n_args; i++) {
		struct mo_megatron_arg *a = &g->args[i];
		if (!tune_listed(lora_flags, a->flag))
			continue;
		if (!first)
			first = a;
		else if (strcmp(a->flag, first->flag) != 0)
			buf_printf(&with, "%s%s", with.len ? ", " : "", a->flag);
		a->used = true;
	}
	if (first)
		megatron_unmodelled_with(g, first,
					 "LoRA: the base weights are frozen (no gradients, no "
					 "optimizer states for them) and only the adapters are "
					 "trained; the estimate prices a full fine-tune of every weight",
					 &with);
	buf_free(&with);
}

static void tune_read_stage(struct mo_megatron_import *g)
{
	if (!megatron_given(g, "--stage"))
		return;
	struct mo_megatron_arg *a = megatron_find(g, "--stage");
	if (!a->value) {
		a->used = false; /* argparse refuses it: reported as given */
		return;
	}
	if (strcmp(a->value, "sft") == 0)
		return;
	for (size_t i = 0; tune_stages[i].stage; i++)
		if (strcmp(a->value, tune_stages[i].stage) == 0) {
			megatron_unmodelled(g, a, tune_stages[i].what);
			return;
		}
	a->used = false;
}

void megatron_read_tune(struct mo_megatron_import *g)
{
	tune_read_lora(g);
	struct mo_megatron_arg *q = megatron_find(g, "--qlora");
	if (q)
		megatron_unmodelled(g, q, "QLoRA: the frozen base weights kept in 4-bit NF4 "
					  "(bitsandbytes), priced at the training dtype");
	tune_read_stage(g);
	for (size_t i = 0; i < g->n_args; i++)
		if (tune_listed(tune_irrelevant, g->args[i].flag))
			g->args[i].used = true;
}
