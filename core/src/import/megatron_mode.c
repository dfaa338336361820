/* What a Megatron-LM functional test runs: its model_config.yaml's MODE,
 * "pretraining" unless given (tests/functional_tests/shell_test_utils/
 * run_ci_test.sh:77-80 at d98e8a64). An `inference` test runs the
 * inference engine on the model (a forward pass, a KV cache or the
 * dynamic-batching buffer --inference-dynamic-batching-buffer-size-gb
 * sizes; no gradients, no optimizer states); an `rl` test alternates such
 * rollouts with training steps. memopt prices a training step of the
 * model the arguments give: the mode is said once, at its key, as
 * `unmodelled`, and the flags that only that mode reads (sampling,
 * prompts, the engine's buffers, GRPO's settings) are covered by that
 * warning rather than each reported unread. */
#include "import/megatron_internal.h"

#include <string.h>

/* The flags (or flag prefixes, ending in '-') of each mode's own
 * settings: Megatron-LM's inference and RL arguments
 * (megatron/training/arguments.py _add_inference_args, _add_rl_args at
 * d98e8a64) and the inference scripts' own (examples/inference). */
static const char *const mo_megatron_inference_flags[] = {
    "--inference-", "--temperature", "--top_k", "--top_p", "--return-log-probs",
    "--num-tokens-to-generate", "--prompts", "--prompt-file", "--output-path",
    "--incoming-requests-", "--max-tokens-to-oom", "--flash-decode",
    "--enable-chunked-prefill", "--use-flashinfer-fused-rope", "--use-legacy-static-engine",
    "--moe-pad-experts-for-cuda-graph-inference", "--termination-id", NULL};

static const char *const mo_megatron_rl_flags[] = {
    "--grpo-", "--rl-", "--langrl-", "--perform-rl-step", NULL};

static bool megatron_mode_listed(const char *flag, const char *const *list)
{
	for (size_t i = 0; list[i]; i++) {
		size_t n = strlen(list[i]);
		if (list[i][n - 1] == '-' ? strncmp(flag, list[i], n) == 0
					  : strcmp(flag, list[i]) == 0)
			return true;
	}
	return false;
}

bool megatron_mode_covers(const struct mo_megatron_import *g, const char *flag)
{
	switch (g->mode) {
	case MEGATRON_MODE_INFERENCE:
		return megatron_mode_listed(flag, mo_megatron_inference_flags);
	case MEGATRON_MODE_RL:
		return megatron_mode_listed(flag, mo_megatron_inference_flags) ||
		       megatron_mode_listed(flag, mo_megatron_rl_flags);
	default:
		return false;
	}
}

void megatron_read_mode(struct mo_megatron_import *g, const mo_doc *doc)
{
	const mo_node *key = NULL;
	const mo_node *v = map_get_kv(doc->root, "MODE", &key);
	const char *mode = v && v->kind == MO_NODE_SCALAR ? v->value : NULL;
	if (!mode || strcmp(mode, "pretraining") == 0)
		return;
	if (strcmp(mode, "inference") == 0) {
		g->mode = MEGATRON_MODE_INFERENCE;
		megatron_diag(g, MO_SEV_WARNING, "unmodelled", v->line, v->column, "MODE",
			      "MODE: inference: this test runs Megatron's inference engine on the model "
			      "(a forward pass with its KV cache or dynamic-batching buffer; no "
			      "gradients, no optimizer states); memopt prices a training step of the "
			      "same model, and the inference settings are not in the estimate");
		return;
	}
	if (strcmp(mode, "rl") == 0) {
		g->mode = MEGATRON_MODE_RL;
		megatron_diag(g, MO_SEV_WARNING, "unmodelled", v->line, v->column, "MODE",
			      "MODE: rl: this test alternates rollouts with the inference engine and "
			      "training steps; memopt prices the training step, and the rollouts' "
			      "memory (the KV cache, what --rl-offload-optimizer-during-inference "
			      "moves) is not in the estimate");
		return;
	}
	megatron_diag(g, MO_SEV_WARNING, "unread-key", v->line, v->column, "MODE",
		      "MODE: '%.40s' is not a mode memopt knows (pretraining, inference, rl): "
		      "priced as a training step",
		      mode);
}
