/* Megatron-LM arguments: the diagnostics every part reports with, the
 * arguments as flags with values and positions (from shell words or a
 * functional-test model_config.yaml), reading one flag with argparse's
 * rules, and every flag the model does not read accounted for. */
#include "import/megatron_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- diagnostics ----------------------------------------------------------
 */

mo_diag *megatron_diag(struct mo_megatron_import *g, mo_severity sev,
				 const char *code, int line, int column,
				 const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mo_diag *d = diags_vadd(g->diags, sev, code, g->file, line, column,
				   path, fmt, ap);
	va_end(ap);
	/* a sourced file's words stand at its `source` line: say which file */
	if (d && g->sourced)
		diag_set_hint(g->diags, d, "in the sourced file %.200s", g->sourced);
	return d;
}

void megatron_fail(struct mo_megatron_import *g, mo_error_code code,
			     int line, int column, const char *msg)
{
	if (!g->failed)
		error_set(g->err, code, line, column, "%s:%d:%d: %s",
			     g->file, line, column, msg);
	g->failed = true;
}

/* ---- arguments
 * ---------------------------------------------------------------- */

bool megatron_is_flag(const char *w)
{
	return w[0] == '-' &&
	       ((w[1] == '-' && w[2] != '\0') || (w[1] >= 'a' && w[1] <= 'z') ||
		(w[1] >= 'A' && w[1] <= 'Z'));
}

struct mo_megatron_arg *megatron_new_arg(struct mo_megatron_import *g,
						   size_t *cap,
						   const char *flag, int line,
						   int column)
{
	if (g->n_args == *cap) {
		size_t n = *cap ? *cap * 2 : 128;
		struct mo_megatron_arg *args =
		    arena_alloc(g->arena, n * sizeof(*args));
		if (!args) {
			megatron_fail(g, MO_ERR_NOMEM, line, column,
					 "out of memory");
			return NULL;
		}
		if (g->n_args)
			memcpy(args, g->args, g->n_args * sizeof(*args));
		g->args = args;
		*cap = n;
	}
	struct mo_megatron_arg *a = &g->args[g->n_args++];
	*a = (struct mo_megatron_arg){.flag = flag,
				      .line = line,
				      .column = column,
				      .vline = line,
				      .vcolumn = column};
	return a;
}

/* False when out of memory (said through megatron_fail). */
bool megatron_add_value(struct mo_megatron_import *g,
			struct mo_megatron_arg *a, const char *value, int line,
			int column)
{
	if (a->n_values == a->values_cap) {
		size_t n = a->values_cap ? a->values_cap * 2 : 4;
		const char **values = arena_alloc(g->arena, n * sizeof(*values));
		if (!values) {
			megatron_fail(g, MO_ERR_NOMEM, line, column, "out of memory");
			return false;
		}
		if (a->n_values)
			memcpy(values, a->values, a->n_values * sizeof(*values));
		a->values = values;
		a->values_cap = n;
	}
	a->values[a->n_values] = value;
	if (a->n_values == 0) {
		a->value = value;
		a->vline = line;
		a->vcolumn = column;
	} else if (a->n_values == 1) {
		a->xline = line;
		a->xcolumn = column;
	}
	a->n_values++;
	return true;
}

/* `--flag value...` and `--flag=value` from words[from..]. A word before
 * any flag is a stray value (unread-key). */
static bool megatron_words_to_args(struct mo_megatron_import *g, size_t from)
{
	size_t cap = 0;
	struct mo_megatron_arg *cur = NULL;
	for (size_t i = from; i < g->n_words; i++) {
		const struct megatron_word *w = &g->words[i];
		if (!megatron_is_flag(w->text)) {
			if (cur) {
				if (!megatron_add_value(g, cur, w->text, w->line,
							w->column))
					return false;
			} else
				megatron_diag(
				    g, MO_SEV_WARNING, "unread-key", w->line,
				    w->column, NULL,
				    "'%.80s' is not a flag's value: not read",
				    w->text);
			continue;
		}
		const char *eq = strchr(w->text, '=');
		const char *flag = eq ? arena_strndup(g->arena, w->text,
							 (size_t)(eq - w->text))
				      : w->text;
		if (!flag || !(cur = megatron_new_arg(g, &cap, flag, w->line,
							 w->column))) {
			megatron_fail(g, MO_ERR_NOMEM, w->line, w->column,
					 "out of memory");
			return false;
		}
		if (eq && !megatron_add_value(g, cur, eq + 1, w->line,
					      w->column + (int)(eq + 1 - w->text)))
			return false;
	}
	return true;
}

bool megatron_ends_with_n(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	return n >= t && memcmp(s + n - t, tail, t) == 0;
}

bool megatron_ends_with(const char *s, const char *tail)
{
	return megatron_ends_with_n(s, strlen(s), tail);
}

/* A launcher count: a positive integer, or a shell variable (unknown). */
static int64_t megatron_launcher_count(struct mo_megatron_import *g,
					  const struct megatron_word *w,
					  const char *value)
{
	char *end;
	errno = 0;
	long long v = strtoll(value, &end, 10);
	if (strchr(value, '$') || !strcmp(value, "auto") ||
	    !strcmp(value, "gpu") || !strcmp(value, "cpu") ||
	    !strcmp(value, "xpu")) {
		g->launcher_unknown =
		    true; /* a shell variable, or torchrun's own count */
		return 0;
	}
	if (errno || end == value || (*end && *end != ':') || v < 1 ||
	    v > MO_MODEL_MAX_DEGREE) {
		megatron_diag(
		    g, MO_SEV_ERROR, "type", w->line, w->column, w->text,
		    "%s: '%.40s' is not a process or node count in [1, %d]",
		    w->text, value, MO_MODEL_MAX_DEGREE);
		return 0;
	}
	return v;
}

/* The launcher flags the device count comes from, by name (torchrun spells the first both
 * ways). */
enum megatron_launcher_flag { LAUNCHER_OTHER, LAUNCHER_PROCS, LAUNCHER_NODES, LAUNCHER_WORLD };

static const struct {
	const char *name;
	enum megatron_launcher_flag flag;
} mo_megatron_launcher_flags[] = {
	{"--nproc_per_node", LAUNCHER_PROCS},
	{"--nproc-per-node", LAUNCHER_PROCS},
	{"--nnodes", LAUNCHER_NODES},
	/* MindSpore's msrun (MindSpeed-LLM's MindSpore scripts): the processes of every node,
	 * and of this one */
	{"--worker_num", LAUNCHER_WORLD},
	{"--local_worker_num", LAUNCHER_PROCS},
};

/* The flag the first n bytes of word name (the part before any '='). */
static enum megatron_launcher_flag megatron_launcher_flag_of(const char *word, size_t n)
{
	for (size_t i = 0; i < sizeof mo_megatron_launcher_flags / sizeof *mo_megatron_launcher_flags;
	     i++) {
		const char *name = mo_megatron_launcher_flags[i].name;
		if (strlen(name) == n && memcmp(word, name, n) == 0)
			return mo_megatron_launcher_flags[i].flag;
	}
	return LAUNCHER_OTHER;
}

/* torchrun's (python -m torch.distributed.run's) --nproc-per-node and
 * --nnodes, before the script. */
static void megatron_read_launcher(struct mo_megatron_import *g,
				      size_t script)
{
	for (size_t i = 0; i < script; i++) {
		const struct megatron_word *w = &g->words[i];
		const char *eq = strchr(w->text, '=');
		size_t n = eq ? (size_t)(eq - w->text) : strlen(w->text);
		const char *value =
		    eq ? eq + 1 : (i + 1 < script ? g->words[i + 1].text : "");
		enum megatron_launcher_flag flag = megatron_launcher_flag_of(w->text, n);
		if (flag == LAUNCHER_PROCS) {
			g->launcher_procs =
			    megatron_launcher_count(g, w, value);
			g->procs_line = w->line;
			g->procs_column = w->column;
		} else if (flag == LAUNCHER_NODES) {
			g->launcher_nodes =
			    megatron_launcher_count(g, w, value);
		} else if (flag == LAUNCHER_WORLD) {
			bool unknown = g->launcher_unknown;
			g->launcher_world = megatron_launcher_count(g, w, value);
			g->launcher_unknown = unknown; /* this count alone is not needed */
			g->world_line = w->line;
			g->world_column = w->column;
		}
	}
}

/* Megatron-LM's entry points of models memopt does not price (it prices
 * the decoder-only transformer of pretrain_gpt.py): what each trains. */
static const struct {
	const char *script, *what;
} mo_megatron_unsupported_entries[] = {
    {"pretrain_bert.py", "BERT, an encoder"},
    {"pretrain_ict.py", "an ICT retriever (BERT encoders)"},
    {"pretrain_t5.py", "T5, an encoder-decoder"},
    {"pretrain_retro.py", "RETRO, a retrieval-augmented model"},
    {"pretrain_mamba.py", "a hybrid Mamba model"},
    {"run_mamba_text_generation_server.py", "a hybrid Mamba model"},
    {"pretrain_vlm.py", "a vision-language model"},
    {"pretrain_vision_classify.py", "a vision transformer"},
    {"pretrain_vision_dino.py", "a vision transformer"},
    {"pretrain_vision_inpaint.py", "a vision transformer"},
    {NULL, NULL}};

/* An entry point of a model memopt does not price: an `unsupported` error at
 * it (the arguments are still read, for what else they say). */
static void megatron_check_entry(struct mo_megatron_import *g,
				    const struct megatron_word *w)
{
	const char *base = strrchr(w->text, '/');
	base = base ? base + 1 : w->text;
	for (size_t i = 0; mo_megatron_unsupported_entries[i].script; i++)
		if (strcmp(base, mo_megatron_unsupported_entries[i].script) == 0)
			megatron_diag(
			    g, MO_SEV_ERROR, "unsupported", w->line, w->column,
			    NULL,
			    "%s trains %s: memopt prices decoder-only "
			    "transformers (pretrain_gpt.py and its kin)",
			    base, mo_megatron_unsupported_entries[i].what);
}

/* MindSpeed-LLM's FSDP2 trainer (train_fsdp2.py): its arguments are `--section.key`
 * overrides of the YAML it takes first, and its model the Hugging Face directory
 * model.model_name_or_path names; no Megatron flag describes it. Its run is read
 * (megatron_fsdp2.c) and the words are not read as Megatron's; without a caller that
 * gives the model, a `model-needed` error at the entry point says what was read. */
static bool megatron_model_elsewhere(struct mo_megatron_import *g, size_t script)
{
	if (!megatron_is_fsdp2(&g->words[script]))
		return false;
	megatron_read_launcher(g, script);
	megatron_fsdp2_read(g, script);
	if (!g->failed && !g->fsdp2_caller)
		megatron_fsdp2_model_needed(g);
	return true;
}

/* Megatron-LM's tasks/main.py builds the model its --task names
 * (tasks/main.py lines 88-97 at 23.04): BERT classifiers and ORQA
 * retrievers (BERT encoders) memopt does not price; LAMBADA / WIKITEXT103
 * evaluate a GPT. */
static const struct {
	const char *task, *what;
} mo_megatron_unsupported_tasks[] = {
    {"RACE", "BERT finetuned for RACE (tasks/race)"},
    {"MNLI", "BERT finetuned for MNLI (tasks/glue)"},
    {"QQP", "BERT finetuned for QQP (tasks/glue)"},
    {"ICT-ZEROSHOT-NQ", "an ORQA retriever (BERT encoders)"},
    {"RETRIEVER-EVAL", "an ORQA retriever (BERT encoders)"},
    {"RET-FINETUNE-NQ", "an ORQA retriever (BERT encoders)"},
    {NULL, NULL}};

/* tasks/main.py with a --task of a model memopt does not price: an
 * `unsupported` error at the task's name. */
static void megatron_check_task(struct mo_megatron_import *g,
				const struct megatron_word *entry)
{
	if (!megatron_ends_with(entry->text, "tasks/main.py"))
		return;
	struct mo_megatron_arg *a = megatron_find(g, "--task");
	if (!a || a->n_values != 1)
		return;
	for (size_t i = 0; mo_megatron_unsupported_tasks[i].task; i++)
		if (strcmp(a->value, mo_megatron_unsupported_tasks[i].task) == 0)
			megatron_diag(g, MO_SEV_ERROR, "unsupported", a->vline, a->vcolumn,
				      "--task",
				      "tasks/main.py --task %s runs %s: memopt prices "
				      "decoder-only transformers",
				      a->value, mo_megatron_unsupported_tasks[i].what);
}

/* Flags of layers that are not transformer layers: a hybrid layer pattern
 * (Mamba, attention and MLP layers in one stack, sized by the pattern, not
 * by --num-layers), MindSpeed-LLM's linear-attention (Gated DeltaNet)
 * layers, and Megatron-LM's: --experimental-attention-variant
 * gated_delta_net with every --linear-attention-freq-th layer full
 * attention (transformer_config.py linear_attention_freq and the
 * linear_* head sizes, at d98e8a64), with Qwen3-Next's attention output
 * gate and shared-expert gate beside them. */
static const char *const mo_megatron_hybrid_flags[] = {
    "--hybrid-override-pattern", "--hybrid-layer-pattern",
    "--full-attention-interval", "--linear-num-key-heads", "--mamba-expand",
    "--linear-attention-freq", "--linear-num-value-heads", "--linear-key-head-dim",
    "--linear-value-head-dim", "--linear-conv-kernel-dim",
    NULL};

/* The hybrid model's companions, read with its error when there is one:
 * its layers are refused, not these flags left unread. */
static const char *const mo_megatron_hybrid_companions[] = {
    "--attention-output-gate", "--moe-shared-expert-gate", NULL};

static bool megatron_is_hybrid_flag(const struct mo_megatron_arg *a)
{
	for (size_t k = 0; mo_megatron_hybrid_flags[k]; k++)
		if (strcmp(a->flag, mo_megatron_hybrid_flags[k]) == 0)
			return true;
	return strcmp(a->flag, "--experimental-attention-variant") == 0 && a->value &&
	       strcmp(a->value, "gated_delta_net") == 0;
}

/* The first such flag: an `unsupported` error at it; the others are read with it (the
 * same refused layers, not flags left unread). */
void megatron_check_hybrid(struct mo_megatron_import *g)
{
	bool said = false;
	for (size_t i = 0; i < g->n_args; i++) {
		struct mo_megatron_arg *a = &g->args[i];
		if (!megatron_is_hybrid_flag(a))
			continue;
		a->used = true;
		if (!said)
			megatron_diag(g, MO_SEV_ERROR, "unsupported", a->line,
				      a->column, a->flag,
				      "%s: Mamba or linear-attention layers; memopt "
				      "prices transformer layers only",
				      a->flag);
		said = true;
	}
	for (size_t i = 0; said && i < g->n_args; i++)
		for (size_t k = 0; mo_megatron_hybrid_companions[k]; k++)
			g->args[i].used |= strcmp(g->args[i].flag, mo_megatron_hybrid_companions[k]) == 0;
}

/* A launch line: the words after the first `*.py` are Megatron's; an
 * arguments file (its first word a flag): every word is, a `*.py` value
 * included. */
bool megatron_classify_words(struct mo_megatron_import *g)
{
	size_t script = g->n_words;
	bool arguments_file =
	    g->n_words > 0 && megatron_is_flag(g->words[0].text);
	for (size_t i = 0; i < g->n_words && !arguments_file; i++)
		if (megatron_ends_with(g->words[i].text, ".py")) {
			script = i;
			break;
		}
	if (script < g->n_words && megatron_model_elsewhere(g, script))
		return false;
	if (script < g->n_words) {
		megatron_check_entry(g, &g->words[script]);
		megatron_read_launcher(g, script);
		if (megatron_command_of(g->words[0].text, strlen(g->words[0].text)) ==
		    MEGATRON_CMD_SRUN) { /* a launch line: srun ... python x.py */
			megatron_read_srun(g, g->words, script);
			g->srun_launch = true;
		}
	}
	if (!megatron_words_to_args(g, script < g->n_words ? script + 1 : 0))
		return false;
	if (script < g->n_words)
		megatron_check_task(g, &g->words[script]);
	return true;
}

bool megatron_read_words(struct mo_megatron_import *g,
				   const char *text, size_t len)
{
	return megatron_split_words(g, text, len) &&
	       megatron_classify_words(g);
}

/* ---- reading one flag
 * ----------------------------------------------------------- */

/* The last occurrence of a flag (argparse: the last one wins); every
 * occurrence is marked read. */
struct mo_megatron_arg *megatron_find(struct mo_megatron_import *g,
						const char *flag)
{
	struct mo_megatron_arg *last = NULL;
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, flag) == 0) {
			g->args[i].used = true;
			last = &g->args[i];
		}
	return last;
}

/* Whether a flag is given, without marking it read (its own reader, or the
 * unmodelled list, still reports it). */
bool megatron_given(const struct mo_megatron_import *g, const char *flag)
{
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, flag) == 0)
			return true;
	return false;
}

/* Is the word a whole `$NAME` / `${NAME}`? The shell reader keeps such a word as written
 * only when the script assigns NAME nowhere (megatron_dollar, megatron_braced). */
static bool megatron_bare_variable(const char *s)
{
	if (*s++ != '$')
		return false;
	bool braced = *s == '{';
	s += braced;
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	if (braced && *s++ != '}')
		return false;
	return *s == '\0';
}

static bool megatron_values_bare_variables(const struct mo_megatron_arg *a)
{
	for (size_t k = 0; k < a->n_values; k++)
		if (!megatron_bare_variable(a->values[k]))
			return false;
	return true;
}

bool megatron_flag(struct mo_megatron_import *g, const char *flag)
{
	struct mo_megatron_arg *a = megatron_find(g, flag);
	if (a && a->n_values > 0 && megatron_values_bare_variables(a)) {
		/* `--sequence-parallel $FITUNE_ARGS` with FITUNE_ARGS assigned nowhere
		 * (MindSpeed-LLM v2.3.0 pretrain_hunyuanLarge_389b_A3_ptd.sh:149): bash expands
		 * an unquoted unset variable to no word at all (bash(1), Word Splitting), so the
		 * switch has no value; what the environment may hold is not known */
		megatron_diag(g, MO_SEV_WARNING, "megatron-script", a->vline, a->vcolumn, flag,
			      "'%.40s' after %s (a switch) is a variable this script does not "
			      "assign: read as nothing, as bash expands it when it is unset (its "
			      "value in the environment is not known)",
			      a->value, flag);
		a->n_values = 0;
	}
	if (a && a->n_values > 0)
		megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn,
				 flag, "%s takes no value, got '%.40s'", flag,
				 a->value);
	return a != NULL;
}

/* The flag's one value, or NULL (absent, or an error reported). */
const char *megatron_values_joined(struct mo_megatron_import *g,
				   const struct mo_megatron_arg *a)
{
	if (!a || a->n_values == 0)
		return NULL;
	if (a->n_values == 1)
		return a->value;
	mo_buf b;
	buf_init(&b, 0);
	for (size_t k = 0; k < a->n_values; k++)
		buf_printf(&b, "%s%s", k ? " " : "", a->values[k]);
	const char *joined = b.failed ? NULL : arena_strndup(g->arena, b.data, b.len);
	buf_free(&b);
	return joined;
}

const char *megatron_value(struct mo_megatron_import *g,
				     struct mo_megatron_arg *a)
{
	if (!a)
		return NULL;
	if (a->n_values == 0) {
		megatron_diag(g, MO_SEV_ERROR, "type", a->line, a->column,
				 a->flag, "%s needs a value", a->flag);
		return NULL;
	}
	if (a->n_values > 1) {
		megatron_diag(g, MO_SEV_ERROR, "type", a->xline, a->xcolumn,
				 a->flag, "%s takes one value, got %zu",
				 a->flag, a->n_values);
		return NULL;
	}
	if (strchr(a->value, '$')) {
		megatron_diag(
		    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, a->flag,
		    "%s: '%.80s' is a shell variable; memopt needs its value",
		    a->flag, a->value);
		return NULL;
	}
	return a->value;
}

/* An integer flag in [lo, hi]; *src is the argument when it was read. */
bool megatron_int(struct mo_megatron_import *g, const char *flag,
			    int64_t lo, int64_t hi, int64_t *out,
			    const struct mo_megatron_arg **src)
{
	struct mo_megatron_arg *a = megatron_find(g, flag);
	const char *s = megatron_value(g, a);
	char *end;
	if (!s)
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end) {
		megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn,
				 flag, "%s must be an integer, got '%.40s'",
				 flag, s);
		return false;
	}
	if (errno == ERANGE || v < lo || v > hi) {
		megatron_diag(
		    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, flag,
		    "%s must be an integer in [%lld, %lld], got %.40s", flag,
		    (long long)lo, (long long)hi, s);
		return false;
	}
	*out = v;
	if (src)
		*src = a;
	return true;
}

bool megatron_double(struct mo_megatron_import *g, const char *flag,
			       double *out, const struct mo_megatron_arg **src)
{
	struct mo_megatron_arg *a = megatron_find(g, flag);
	const char *s = megatron_value(g, a);
	char *end;
	if (!s)
		return false;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= 0.0 && v <= 1.0)) {
		megatron_diag(
		    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, flag,
		    "%s must be a number in [0, 1], got '%.40s'", flag, s);
		return false;
	}
	*out = v;
	*src = a;
	return true;
}

/* A string flag whose value is one of `choices` (NULL-terminated). */
const char *megatron_choice(struct mo_megatron_import *g,
				      const char *flag,
				      const char *const *choices,
				      const struct mo_megatron_arg **src)
{
	struct mo_megatron_arg *a = megatron_find(g, flag);
	const char *s = megatron_value(g, a);
	if (!s)
		return NULL;
	for (size_t i = 0; choices[i]; i++)
		if (strcmp(s, choices[i]) == 0) {
			*src = a;
			return choices[i];
		}
	mo_diag *d = megatron_diag(
	    g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, flag,
	    "%s: '%.40s' is not one of Megatron's choices", flag, s);
	size_t n = 0;
	while (choices[n])
		n++;
	const char *best = did_you_mean(s, choices, n);
	if (d && best)
		diag_set_hint(g->diags, d, "did you mean '%s'?", best);
	return NULL;
}

mo_diag *megatron_unmodelled(struct mo_megatron_import *g, const struct mo_megatron_arg *a,
			     const char *what)
{
	return megatron_diag(g, MO_SEV_WARNING, "unmodelled", a->line, a->column, a->flag,
			     "%s: not in the estimate: %s", a->flag, what);
}

void megatron_unmodelled_with(struct mo_megatron_import *g, const struct mo_megatron_arg *a,
			      const char *what, const mo_buf *with)
{
	mo_diag *d = megatron_unmodelled(g, a, what);
	if (d && with->len && !with->failed)
		diag_set_hint(g->diags, d, "read with it: %s", with->data);
}

/* ---- every other flag accounted for
 * --------------------------------------------- */

/* Flags that do not change what a training step keeps in device memory:
 * logging, schedules, data, checkpoints, initialisation, numerics, fused
 * kernels that keep the same tensors, router balancing. */
static const char *const mo_megatron_irrelevant[] = {
    /* MindSpeed-LLM's data preprocessing and checkpoint conversion before training,
     * host-side (c77308a1, features_manager/dataset/data_preprocess.py:60,
     * features_manager/convert_checkpoint/convert_checkpoint.py:95); the router
     * fixed for load balancing (features_manager/moe/moe_router.py:28): memopt's
     * experts are evenly loaded either way */
    "--output-prefix",
    "--mg-save-dir",
    "--fix-router",
    "--use-mcore-models",
    "--use-legacy-models",
    "--distributed-backend",
    "--distributed-timeout-minutes",
    "--train-iters",
    "--train-samples",
    "--split",
    "--mock-data",
    "--tokenizer-model",
    "--merge-file",
    "--seed",
    "--init-method-std",
    "--weight-decay",
    "--clip-grad",
    "--norm-epsilon",
    "--rotary-base",
    "--rotary-percent",
    "--rotary-scaling-factor",
    "--rotary-seq-len-interpolation-factor",
    "--mscale",
    "--mscale-all-dim",
    "--attention-softmax-in-fp32",
    "--apply-query-key-layer-scaling",
    "--deterministic-mode",
    "--manual-gc",
    "--manual-gc-interval",
    "--no-check-for-nan-in-loss-and-grad",
    "--check-for-nan-in-loss-and-grad",
    "--use-persistent-ckpt-worker",
    "--async-save",
    "--exit-interval",
    "--exit-duration-in-mins",
    "--exit-signal-handler",
    "--mtp-loss-scaling-factor",
    "--moe-aux-loss-coeff",
    "--moe-z-loss-coeff",
    "--moe-router-load-balancing-type",
    "--moe-router-score-function",
    "--moe-router-pre-softmax",
    "--moe-router-topk-scaling-factor",
    "--moe-router-enable-expert-bias",
    "--moe-router-bias-update-rate",
    "--moe-router-group-topk",
    "--moe-router-num-groups",
    "--moe-input-jitter-eps",
    "--use-cpu-initialization",
    "--dataloader-type",
    "--num-workers",
    "--no-create-attention-mask-in-dataloader",
    "--reset-position-ids",
    "--reset-attention-mask",
    "--eod-mask-loss",
    "--calculate-per-token-loss",
    "--ddp-average-in-collective",
    "--decoupled-lr",
    "--decoupled-min-lr",
    "--num-dataset-builder-threads",
    "--te-rng-tracker",
    "--cross-entropy-loss-fusion",
    "--cross-entropy-fusion-impl",
    "--logging-level",
    "--vocab-file",
    "--init-model-with-meta-device",
    "--use-flash-attn",
    "--no-persist-layer-norm",
    "--micro-batch-size",
    /* MindSpeed-LLM (c77308a1): numerics of DeepSeek-V4's attention, MoE and
     * mHC (dsa_indexer_feature.py:24,43-47, mhc_feature.py:14,
     * swiglu_limit_feature.py:13, moe_router.py:18), fused kernels that
     * keep the same tensors, the data handler, the loss scale, storage;
     * --max-batch-size sizes the compressor's inference state, whose buffers
     * are commented out (compressor.py:66-69) */
    "--indexer-loss-coeff",
    "--max-batch-size",
    "--original-seq-len",
    "--compress-rope-theta",
    "--rope-theta",
    "--rope-factor",
    "--hc-eps",
    "--swiglu-limit",
    "--seq-aux",
    "--beta-fast",
    "--beta-slow",
    "--use-fused-swiglu",
    "--use-fused-rmsnorm",
    "--use-fused-rotary-pos-emb",
    "--handler-name",
    "--initial-loss-scale",
    "--no-shared-storage",
    /* MindSpeed-LLM's checkpoint conversion at start-up
     * (convert_checkpoint.py:31,79) */
    "--model-type-hf",
    "--enable-hf2mg-convert",
    /* MindSpeed-LLM 1.0.0 (mindspeed_llm/training/arguments.py at v1.0.0 062fb4fc):
     * router numerics and loss coefficients (101-110), Llama 3.1's rotary scaling
     * (417-421), ChatGLM's rotary variant (400), the numerics of Gemma, MiniCPM and Grok
     * (embedding and logit scales, norm offset, soft-capping: 319-323, 446-456,
     * 549-553), a fused kernel (302), the flash attention's input layout and its window
     * (405, 457, 533: flash attention keeps no scores), a bias added inside (444,
     * store_false), ALiBi's fill value (594), the torch_npu compile mode (540) */
    "--topk-group",
    "--routed-scaling-factor",
    "--moe-device-level-aux-loss-coeff",
    "--moe-comm-aux-loss-coeff",
    "--original-max-position-embeddings",
    "--low-freq-factor",
    "--high-freq-factor",
    "--use-glm-rope",
    "--embedding-multiplier-scale",
    "--output-multiplier-scale",
    "--input-jitter",
    "--add-rmsnorm-offset",
    "--input-embeds-norm",
    "--output-logit-softcapping",
    "--query-pre-attn-scalar",
    "--scale-emb",
    "--dim-model-base",
    "--scale-depth",
    "--use-fused-moe-token-permute-and-unpermute",
    "--shape-order",
    "--sliding-window",
    "--interleave-sliding-window",
    "--skip-bias-add",
    "--fill-neg-inf",
    "--jit-compile",
    "--exit-on-missing-checkpoint",
    /* MindSpeed-LLM's 2.x / 26.x flags (mindspeed_llm/features_manager/ at v26.0.0
     * 57c33296 unless named): the framework the run is on (ai_framework/
     * ms_patch_feature.py:14); router numerics (moe/moe_router.py:15,23,25,29;
     * --n-group, --moe-router-num-groups' old name, arguments/deprecated_args.py:27);
     * LongRoPE's and the partial rotary's numbers (common/rotary.py:33-55,
     * transformer/qwen3_next_attention/qwen3_next_feature.py:22); kernels that keep
     * the same tensors (Triton's Gated DeltaNet, qwen3_next_feature.py:24; the fused
     * ring-attention update, context_parallel/context_parallel_feature.py:24; MLA's
     * up-projections as four matmuls of the same weights, multi_latent_attention.py:
     * 180-260 under transformer/multi_latent_attention/mla_feature.py:16; Q, K and V
     * as three projections, models/module.py:52); MLA's LoRA scales, a scalar each
     * (mla_feature.py:30-33, multi_latent_attention.py:142-147); checkpoint conversion
     * (convert_checkpoint/convert_checkpoint.py:83,95 at v26.1.0) and data
     * preprocessing (dataset/data_preprocess.py:64); the distributed optimizer's DP
     * group on HCCL, whose device buffers are the checkpoint save's --hccl-slice-size
     * slices (MindSpeed v26.0.0_core_r0.12.1 0ed973d6,
     * features_manager/disable_gloo_group/disable_gloo_group_feature.py:11-14) */
    "--ai-framework",
    "--norm-topk-prob",
    "--router-gating-in-fp32",
    "--moe-revert-type-after-topk",
    "--topk-softmax-in-fp32",
    "--n-group",
    "--longrope-freqs-type",
    "--long-factor",
    "--short-factor",
    "--long-mscale",
    "--short-mscale",
    "--dynamic-factor",
    "--partial-rotary-factor",
    "--use-triton-gdn",
    "--use-fused-ring-attention-update",
    "--mla-mm-split",
    "--no-enable-linear-qkv",
    "--enable-mla-scale-q-lora",
    "--enable-mla-scale-kv-lora",
    "--hf-cfg-dir",
    "--enable-mg2hf-convert",
    "--workers",
    "--disable-gloo-group",
    /* checkpoint loading and the tokenizer's source: what is loaded, not
     * what the step keeps (megatron/training/arguments.py at d98e8a64) */
    "--use-checkpoint-opt_param-scheduler",
    "--no-use-tokenizer-model-from-checkpoint-args",
    "--auto-detect-ckpt-format",
    "--no-ckpt-fully-parallel-save",
    "--tiktoken-pattern",
    /* host-side data loading and process groups */
    "--no-mmap-bin-files",
    "--disable-gloo-process-groups",
    "--use-tp-pp-dp-mapping",
    /* numerics of the same tensors: zero-centred LayerNorm weights,
     * interleaved rotary halves, FP8's scaling history (FP8 itself is
     * unmodelled at --fp8-format), Muon's update scaling */
    "--apply-layernorm-1p",
    "--rotary-interleaved",
    "--fp8-amax-history-len",
    "--fp8-amax-compute-algo",
    "--muon-momentum",
    "--muon-extra-scale-factor",
    "--muon-scale-mode",
    "--apply-wd-to-qk-layernorm", /* weight decay's reach: the same tensors */
    /* checks and test switches; the batch-size ramp only lowers the
     * global batch of early steps (the micro-batch, which sets the peak,
     * is the same) */
    "--check-weight-hash-across-dp-replicas-interval",
    "--verify-integrity",
    "--test-mode",
    "--rampup-batch-size",
    /* the same for the step schedule that replaced it (training/config/
     * training_config.py:29-37 at d98e8a64: global batch sizes by consumed tokens) */
    "--step-batch-size-schedule",
    /* MindSpeed's deterministic computing: seeds and deterministic kernels
     * (features_manager/functional/npu_deterministic.py:10-16 at
     * v26.0.0_core_r0.12.1), and MindSpeed-LLM's older name for it
     * (training/arguments.py:536 at v1.0.0; features_manager/arguments/
     * deprecated_args.py:15-17 at c77308a1) */
    "--npu-deterministic",
    "--use-deter-comp",
    /* Megatron-LM at d98e8a64 unless named: the rerun state machine's injected
     * errors, a test switch (training/config/resilience_config.py:12-19); a
     * load_state_dict hook that renames a Transformer Engine checkpoint's keys
     * (post_training/arguments.py:22-28, model_builder.py:110-114; core_v0.15.0
     * model_provider.py:37-42); the asynchronous checkpoint save's strategy and host
     * shared memory (async_utils.py:69, 149, 160-174); a flag that is ignored
     * (core_v0.12.0 arguments.py:1730-1733, "DEPRECATED. This flag is ignored.");
     * the steps run before CUDA graphs are captured (transformer_config.py:1066: what
     * is captured is --cuda-graph-impl's); random routing for benchmarks
     * (moe/router.py:861: router balancing); the experimental switch, whose features
     * are their own flags (global_vars.py:168-169); NCCL registration of the same
     * FSDP buffers (arguments.py:3184); the fill-in-the-middle data
     * (arguments.py:3355-3359); MuP's initialisation and multipliers
     * (transformer_config.py:428-475); the gated unit's offset and the activation's
     * clamp (transformer_config.py:231, 235); sliding-window attention (arguments.py:
     * 2384-2388: the same attention tensors, the window a mask); the tokenizer
     * (core_v0.15.0 arguments.py:2799) */
    "--error-injection-rate",
    "--error-injection-type",
    "--export-te-mcore-model",
    "--async-strategy",
    "--async-ckpt-use-cpu-shm",
    "--no-async-tensor-model-parallel-allreduce",
    "--cuda-graph-warmup-steps",
    "--moe-router-force-load-balancing",
    "--enable-experimental",
    "--fsdp-manual-registration",
    "--fim-data",
    "--fim-rate",
    "--fim-spm-rate",
    "--use-mup",
    "--mup-base-hidden-size",
    "--glu-linear-offset",
    "--activation-func-clamp-value",
    "--window-size",
    "--window-attn-skip-freq",
    "--legacy-tokenizer",
    NULL};

static const char *const mo_megatron_irrelevant_prefixes[] = {
    "--log",
    "--lr",
    "--min-lr",
    "--save",
    "--load",
    "--eval-",
    "--tensorboard",
    "--wandb",
    "--data-",
    "--ckpt-",
    "--dist-ckpt",
    "--timing-",
    "--adam-",
    "--sgd-",
    "--no-load",
    "--no-save",
    "--profile",
    "--rerun-",
    "--straggler",
    "--use-dist-ckpt",
    "--pretrained-checkpoint",
    "--finetune",
    "--override-opt",
    "--ft-",
    "--one-logger",
    "--null-tokenizer-",
    "--tokenizer-",
    "--rope-scaling-", /* YaRN's numbers: the same tensors */
    "--yarn-",	       /* the same (arguments.py:2400-2410 at d98e8a64) */
    "--no-yarn-",
    NULL};

/* Flags that change device memory in a way the estimate does not model. */
static const struct {
	const char *flag, *what;
} mo_megatron_unmodelled_flags[] = {
    {"--overlap-param-gather",
     "the all-gather buffers of overlapped parameter gathering"},
    {"--fp8-format", "FP8 weights and activations"},
    /* the model's arguments come from the checkpoint (load_args_from_checkpoint,
     * megatron/training/checkpointing.py at d98e8a64), replacing the file's */
    {"--use-checkpoint-args",
     "the model's arguments are replaced by those the --load checkpoint saved; memopt prices "
     "the ones given here"},
    {"--cp-comm-type", "a context-parallel exchange other than the P2P ring (all-to-all or "
		       "all-gather buffers)"},
    {"--hierarchical-context-parallel-sizes", "hierarchical context-parallel exchange buffers"},
    {"--empty-unused-memory-level", "emptying the allocator's cache between steps (reserved, "
				    "not allocated, memory)"},
    {"--overlap-p2p-communication-warmup-flush",
     "pipeline sends and receives overlapped in warm-up and flush (their buffers alive together)"},
    {"--fp8-recipe", "FP8 weights and activations"},
    {"--fp8-param-gather", "FP8 parameters"},
    {"--optimizer-cpu-offload", "optimizer states in host memory"},
    {"--use-torch-fsdp2", "FSDP instead of DDP"},
    {"--use-megatron-fsdp", "FSDP instead of DDP"},
    {"--data-parallel-sharding-strategy", "FSDP instead of DDP"},
    {"--cpu-offloading", "activation offloading"},
    {"--fine-grained-activation-offloading", "activation offloading"},
    {"--tp-comm-overlap", "the user buffers of TP communication overlap"},
    {"--moe-expert-capacity-factor", "expert capacity padding"},
    {"--moe-pad-expert-input-to-capacity", "expert capacity padding"},
    {"--account-for-embedding-in-pipeline-split", "an uneven pipeline split"},
    {"--account-for-loss-in-pipeline-split", "an uneven pipeline split"},
    {"--decoder-first-pipeline-num-layers", "an uneven pipeline split"},
    {"--decoder-last-pipeline-num-layers", "an uneven pipeline split"},
    {"--cuda-graph-impl", "CUDA graphs' static buffers"},
    {"--enable-cuda-graph", "CUDA graphs' static buffers"},
    {"--external-cuda-graph", "CUDA graphs' static buffers"},
    {"--num-distributed-optimizer-instances",
     "several distributed optimizer instances"},
    {"--overlap-param-gather-with-optimizer-step",
     "overlapped parameter gathering"},
    {"--use-precision-aware-optimizer",
     "optimizer states in a lower precision"},
    {"--main-params-dtype", "master parameters in another dtype"},
    {"--exp-avg-dtype", "optimizer states in a lower precision"},
    {"--exp-avg-sq-dtype", "optimizer states in a lower precision"},
    {"--hybrid-override-pattern", "hybrid (Mamba) layers"},
    {"--hybrid-layer-pattern", "hybrid (Mamba) layers"},
    {"--moe-layer-recompute", "MoE layer recompute"},
    /* MindSpeed-LLM's memory features (its README's memory section) */
    {"--swap-attention", "attention activations swapped to host memory"},
    {"--swap-optimizer", "optimizer states swapped to host memory"},
    {"--recompute-activation-function", "the activation function recomputed"},
    {"--recompute-activation-function-num-layers",
     "the activation function recomputed"},
    {"--recompute-norm", "the norms recomputed"},
    {"--reuse-fp32-param", "fp32 master parameters sharing memory with the "
			   "bf16 ones"},
    {"--noop-layers", "no-op layers in the pipeline split"},
    /* MindSpeed-LLM 1.0.0 (mindspeed_llm/training/arguments.py at v1.0.0 062fb4fc): layers
     * and buffers its flags add (line of each) */
    {"--post-norm", "the norms after attention and MLP (322)"},
    {"--embed-layernorm", "the LayerNorm after the embedding (395)"},
    {"--shared-expert-gate", "the shared experts' gate (326)"},
    {"--add-dense-bias", "the attention output projection's bias (442)"},
    {"--output-layer-slice-num", "the output layer computed in slices (407)"},
    {"--kv-head-repeat-before-uly-alltoall",
     "K and V repeated to every head before Ulysses' all-to-all (155)"},
    {"--use-cp-send-recv-overlap", "ring attention's overlapped send / receive buffers (140)"},
    {"--ulysses-degree-in-cp", "the hybrid context-parallel split (137)"},
    {"--enable-recompute-layers-per-pp-rank",
     "--recompute-num-layers counted per pipeline rank (522)"},
    {"--use-mc2", "the TP all-gather fused into the matmul (MC2, 384)"},
    {"--sparse-mode", "the attention mask mode flash attention takes (531)"},
    {"--square-alibi-mask", "the ALiBi bias as heads x seq x seq (590)"},
    {"--num-layer-list", "an uneven pipeline split (layers per stage)"},
    {"--schedules-method", "another pipeline schedule (dualpipev)"},
    {"--moe-zero-memory", "MoE activations dropped and recomputed"},
    /* the layer counts of MindSpeed's recompute features (Ascend/MindSpeed 028de58c,
     * mindspeed/arguments.py:165, 308, 312) and of its MoE all-gather overlap (:160) */
    {"--moe-zero-memory-num-layers", "MoE activations dropped and recomputed in these layers"},
    {"--recompute-norm-num-layers", "the norms recomputed in these layers"},
    {"--recompute-in-advance", "recomputation run ahead of the backward pass that needs it"},
    {"--moe-allgather-overlap-comm", "the MoE all-gather dispatcher's overlapped buffers"},
    /* MindSpeed-LLM's MLA features (c77308a1, features_manager/transformer/
     * multi_latent_attention/mla_feature.py:33-41) */
    {"--recompute-mla-up-proj", "the MLA up projections recomputed"},
    {"--mla-swap-core-attn-out", "the MLA core attention output swapped to host memory"},
    {"--mla-up-proj-tp-overlap", "the MLA up projection's TP communication overlapped"},
    /* MindSpeed-LLM's high availability (c77308a1, features_manager/high_availability/
     * high_availability.py:13-30): a replica of the distributed optimizer's states
     * unless --distributed-optimizer-no-replica */
    {"--enable-high-availability", "a replica of the distributed optimizer's states"},
    {"--enable-hbmfault-repair", "the high-availability repair of device memory faults"},
    /* quantization-aware training (c77308a1, features_manager/qat/qat_quant_engine.py:16) */
    {"--qat-scheme", "quantization-aware training's quantized weights and scales"},
    /* MindSpeed-LLM's DeepSeek-V4 (c77308a1) */
    {"--moe-fb-overlap", "two micro-batches' forward and backward overlapped"},
    {"--mtp-mem-efficient-logits", "the MTP layers' logits computed in chunks"},
    {"--n-hash-layers", "hash-routed MoE layers (a token-to-expert table for the router's "
			"weight, router.py:362)"},
    {"--use-triton-mhc", "Triton kernels for the mHC head"},
    {"--moe-permutation-async-comm", "the MoE permutation's asynchronous communication"},
    {"--context-parallel-algo", "another context-parallel algorithm's buffers"},
    {"--mla-fa-without-pad", "MLA's V not padded to the QK head width for flash attention "
			     "(mla_feature.py:18)"},
    /* Megatron-LM's functional tests at core_v0.12.0 / core_v0.15.0 (megatron/training/
     * arguments.py at each tag unless named) */
    {"--use-custom-fsdp", "FSDP instead of DDP (Megatron FSDP's earlier name, "
			  "core_v0.12.0 arguments.py:2133)"},
    {"--defer-embedding-wgrad-compute",
     "the output layer's gradients kept until the pipeline flush "
     "(core/tensor_parallel/layers.py:500-503 at core_v0.15.0)"},
    {"--wgrad-deferral-limit", "the output layer's gradients kept until the pipeline flush "
			       "(core/tensor_parallel/layers.py:500-503 at core_v0.15.0)"},
    {"--first-last-layers-bf16", "FP8 weights and activations, the first and last layers in "
				 "BF16 (core_v0.15.0 arguments.py:1345-1350)"},
    {"--microbatch-group-size-per-virtual-pipeline-stage",
     "the interleaved schedule's warm-up micro-batches, (chunks - 1) x this group "
     "(core/pipeline_parallel/schedules.py:729 at core_v0.15.0)"},
    {"--export-kd-teacher-load", "a distillation teacher model beside the student "
				 "(post_training/model_provider.py:126 at core_v0.15.0)"},
    /* MindSpeed-LLM 2.x / 26.x (mindspeed_llm/ at v26.0.0 57c33296 unless named) and
     * MindSpeed (mindspeed/ at v26.0.0_core_r0.12.1 0ed973d6) */
    {"--cla-share-factor", "cross-layer attention: a layer whose global number the factor "
			   "divides has no K/V projection and takes the K/V of the layer "
			   "before (tasks/models/transformer/hunyuan_large_attention.py:85-93, "
			   "297-300), fewer attention weights and K/V activations"},
    {"--share-kvstates", "cross-layer attention's K/V passed between layers through the "
			 "recompute checkpoints (core/transformer/transformer_block.py:263, 293)"},
    {"--moe-tp-extend-ep", "experts placed whole over TP x EP ranks instead of split by TP "
			   "(MindSpeed features_manager/moe/tp_extend_ep.py:13, core/transformer/"
			   "moe/experts.py:102-106): the same expert weights a device, their "
			   "activations and all-to-all over TP x EP not"},
    {"--o2-optimizer", "Adam's exp_avg and exp_avg_sq in bf16 (O2AdamW, tasks/models/common/"
		       "adamw.py:120-125): 4 bytes a parameter where the estimate counts 8"},
    {"--o2-gradient", "bf16 main gradients in MindSpeed-LLM 2.0.0 to 2.3.0 (training/"
		      "arguments.py:1195, 1224 at v2.3.0 turn accumulate_allreduce_grads_in_fp32 "
		      "off after Megatron's check); since 26.0.0 registered only, read by nothing "
		      "(features_manager/megatron_basic/requirements_basic.py:16)"},
    {"--moe-alltoall-overlap-comm", "the MoE all-to-all overlapped with the expert matmuls "
				    "(MindSpeed arguments.py:158), its own autograd "
				    "function's saved activations"},
    {"--use-ascend-coc", "communication over computation: the TP matmuls cut into chunks "
			 "with their communication (MindSpeed arguments.py:108)"},
    {"--coc-fused-kernel", "communication over computation's fused kernel (MindSpeed "
			   "arguments.py:114)"},
    {"--use-ascend-mc2", "the TP all-gather fused into the matmul (MC2: --use-mc2's later "
			 "name, MindSpeed arguments.py:105)"},
    {"--swap-optimizer-times", "optimizer states swapped to host memory, in this many pieces "
			       "(MindSpeed features_manager/optimizer/swap_optimizer_feature.py:14)"},
    {"--rmsnorm-weight-in-fp32", "the RMSNorm weights in fp32 (core/models/common/"
				 "rms_norm.py:32-51)"},
    {"--init-norm-weight-in-fp32", "the norm weights in fp32 (features_manager/transformer/"
				   "multi_latent_attention/dsa_indexer_feature.py:13)"},
    {"--loss-compute-mode", "the cross-entropy computed in chunks of --loss-chunk-size tokens "
			    "(features_manager/memory/chunk_loss.py:22, core/models/gpt/"
			    "gpt_model.py:282 at TP 1 and CP 1): the logits not kept whole"},
    {"--loss-chunk-size", "the cross-entropy computed in chunks of this many tokens "
			  "(features_manager/memory/chunk_loss.py:24)"},
    {"--add-output-layer-bias", "the output layer's bias (vocabulary-size parameters, "
				"core/models/gpt/gpt_model.py:182)"},
    {"--tp-2d", "2-D tensor parallelism (--tp-x x --tp-y) in place of Megatron's TP split "
		"(MindSpeed arguments.py:977-981)"},
    {"--tp-x", "2-D tensor parallelism (MindSpeed arguments.py:979)"},
    {"--tp-y", "2-D tensor parallelism (MindSpeed arguments.py:981)"},
    {"--num-zero-experts", "zero-computation experts beside the real ones: the router's wider "
			   "output (core/transformer/moe/router.py:369-370) and the tokens they "
			   "take from the real experts (tasks/models/transformer/"
			   "zero_experts_moe_layer.py:100-101)"},
    {"--mla-zero-memory", "MLA activations dropped and recomputed (features_manager/"
			  "transformer/multi_latent_attention/mla_feature.py:18)"},
    {"--recompute-mtp-norm", "the MTP layer's norms recomputed (training/arguments.py:169 "
			     "at v2.1.0)"},
    {"--mtp-after-norm", "the MTP block's loss taken after the final norm (core/models/gpt/"
			 "gpt_model.py:239, 264 at v2.3.0: its cross-entropy memory)"},
    {"--share-mtp-embedding-and-output-weight",
     "the MTP layers' embedding and output weights shared with the main model's "
     "(training/arguments.py:168 at v2.0.0)"},
    {"--fsdp2-config-path", "FSDP instead of DDP (MindSpeed features_manager/distributed/"
			    "torch_fully_sharded_data_parallel.py:23)"},
    {"--hybrid-attention-ratio", "hybrid (Mamba) layers"},
    {"--hybrid-mlp-ratio", "hybrid (Mamba) layers"},
    {"--mamba-d-conv", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-chunk-size", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-d-state", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-headdim", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-ngroups", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-state-dim", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-head-dim", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--mamba-num-groups", "a Mamba layer's widths (hybrid Mamba layers)"},
    {"--linear-key-head-dim", "a linear-attention (Gated DeltaNet) layer's widths "
			      "(qwen3_next_feature.py:14-21)"},
    {"--linear-num-value-heads", "a linear-attention (Gated DeltaNet) layer's widths "
				 "(qwen3_next_feature.py:14-21)"},
    {"--linear-value-head-dim", "a linear-attention (Gated DeltaNet) layer's widths "
				"(qwen3_next_feature.py:14-21)"},
    /* Megatron-LM at d98e8a64 (megatron/ unless named) */
    {"--export-kd-cfg", "the distillation's settings, whose loss pairs keep student and teacher "
			"outputs (post_training/arguments.py:82-87, model_builder.py:498)"},
    {"--tp-comm-overlap-cfg", "the user buffers of TP communication overlap, as this file sizes "
			      "them (training/arguments.py:2880)"},
    {"--cuda-graph-modules", "CUDA graphs' static buffers of these modules (training/"
			     "arguments.py:2050)"},
    {"--cuda-graph-scope", "CUDA graphs' static buffers of these modules (training/"
			   "arguments.py:2047; core_v0.15.0 :1411)"},
    {"--fsdp-double-buffer", "Megatron FSDP's communication buffers kept double (training/"
			     "arguments.py:3202)"},
    {"--use-nccl-ub", "the DP / FSDP communication buffers registered as NCCL user buffers, "
		      "which turns FSDP's double buffers on (training/arguments.py:3171, 3202)"},
    {"--no-use-layer-wise-param-layout",
     "Muon's layer-wise optimizer with every parameter in one LayerWise buffer, more padding "
     "than the default layout (training/arguments.py:3160-3168)"},
    {"--offload-modules", "activation offloading of these modules (core/transformer/"
			  "transformer_config.py:1328, attention.py:399-409, moe/experts.py:256-266)"},
    {"--moe-flex-dispatcher-backend", "the flex dispatcher's backend and its communication "
				      "buffers (core/transformer/moe/moe_utils.py:1502)"},
    {"--delay-wgrad-compute", "weight gradients computed after the data gradients, their "
			      "inputs kept until then (core/model_parallel_config.py:348)"},
    {"--use-transformer-engine-op-fuser",
     "the MLP built from Transformer Engine's fused operations, which keep their own tensors "
     "(core/transformer/transformer_config.py:525)"},
    /* MindSpeed-LLM: no final norm (features_manager/models/module.py:48, core/models/gpt/
     * gpt_model.py:190-191 at c77308a1); the MTP layers recomputed (training/
     * arguments.py:171, core/transformer/multi_token_prediction.py:519 at v2.1.0) */
    {"--no-post-layer-norm", "no final norm: its weights and output are counted"},
    {"--recompute-mtp-layer", "the MTP layers recomputed"},
    {NULL, NULL}};

/* Flags that change device memory in a way the estimate does not model at
 * any value but the one that leaves things as they are (their default). */
static const struct {
	const char *flag, *off, *what;
} mo_megatron_unmodelled_unless[] = {
    /* MindSpeed-LLM's attention mask (features_manager/context_parallel/
     * context_parallel_feature.py:31-37 at c77308a1, default causal): `general` keeps the
     * batch's own [s, s] mask on the device (core/context_parallel/get_batch_utils.py:35-36;
     * MindSpeed model/transformer.py:75-90 at v26.0.0_core_r0.12.1), where causal builds a
     * compressed 2048 x 2048 one; --cp-attention-mask-type is its earlier name (training/
     * arguments.py:138, training/utils.py:341 at v1.0.0; deprecated_args.py:21-23, 66-70 at
     * c77308a1) */
    {"--attention-mask-type", "causal", "a general attention mask: the batch's [s, s] mask "
					"kept on the device"},
    {"--cp-attention-mask-type", "causal", "a general attention mask: the batch's [s, s] "
					   "mask kept on the device"},
    /* double ring attention: windows of the ring with their own groups and HCCL buffers
     * (context_parallel_feature.py:30 at c77308a1, default 1; MindSpeed core/
     * parallel_state.py:204-212 at v26.0.0_core_r0.12.1) */
    {"--cp-window-size", "1", "double ring attention's inner windows and their buffers"},
    /* communication over computation's chunk count (MindSpeed arguments.py:112 at
     * v26.0.0_core_r0.12.1, default 1); --use-ascend-coc says the feature */
    {"--coc-parallel-num", "1", "communication over computation in this many chunks"},
    /* Megatron FSDP's dtypes (training/arguments.py:3687-3697 at d98e8a64), its HSDP outer
     * sharding (:3193, default no_shard) */
    {"--megatron-fsdp-main-params-dtype", "fp32", "Megatron FSDP's master parameters in "
						  "this dtype"},
    {"--megatron-fsdp-main-grads-dtype", "auto", "Megatron FSDP's main gradients in this "
						 "dtype"},
    {"--megatron-fsdp-grad-comm-dtype", "auto", "Megatron FSDP's gradient communication "
						"buffers in this dtype"},
    {"--outer-dp-sharding-strategy", "no_shard", "the optimizer states sharded over HSDP's "
						 "outer data-parallel group"},
    /* a softmax offset, learnable: a parameter per attention head (core/transformer/
     * transformer_config.py:170, core/extensions/transformer_engine.py:2362) */
    {"--softmax-type", "vanilla", "the attention's softmax offset (a learnable one is a "
				  "parameter per head)"},
    /* torch's DistributedDataParallel in place of Megatron's own, whose contiguous
     * gradient buffer the estimate prices (arguments.py:947-950 at 23.04, default local) */
    {"--DDP-impl", "local", "torch's DistributedDataParallel and its gradient buckets"},
    {NULL, NULL, NULL}};

/* Flags Megatron-LM stops at, each with why: the launch never trains. */
static const struct {
	const char *flag, *why;
} mo_megatron_refused_flags[] = {
    {"--checkpoint-activations",
     "Megatron-LM exits at it: 'no longer valid, use --recompute-activations, or, for more "
     "control, --recompute-granularity and --recompute-method' (arguments.py:104-109 at "
     "23.04; training/arguments.py:372-377 at core_v0.12.0)"},
    {"--activations-checkpoint-method",
     "--recompute-method's name before Megatron-LM renamed it; since then (23.04 and later) "
     "argparse refuses the launch for an unknown flag (arguments.py:44-47 at 23.04)"},
    {NULL, NULL}};

/* MindSpeed-LLM's layer specs (--spec MODULE layer_spec, mindspeed_llm/tasks/models/spec/
 * at v26.0.0 57c33296; minimax_spec at c77308a1): NULL where the layer it builds is the one
 * the flags describe (Megatron's layer with the norms, attention and MLP the flags name:
 * qwen3_spec.py:37-58, bailing_spec.py, qwen2_moe_spec.py, and the MLA of plm_spec.py /
 * minicpm_spec.py with --multi-latent-attention), otherwise what it builds beyond them. */
static const struct {
	const char *module, *what;
} mo_mindspeed_specs[] = {
    {"qwen3_spec", NULL},
    {"bailing_spec", NULL},
    {"qwen2_moe_spec", NULL},
    {"plm_spec", NULL},
    {"minicpm_spec", NULL},
    {"gemma2_spec", "the norms after attention and MLP (TransformerLayerWithPostNorm)"},
    {"grok_spec", "the norms after attention and MLP (TransformerLayerWithPostNorm)"},
    {"phi35_moe_spec", "the attention output projection's bias (SelfAttentionWithDenseBias)"},
    {"hunyuan_spec", "Hunyuan-Large's layer and attention (transformer_layer_hunyuan.py, "
		     "hunyuan_large_attention.py), priced as the flags' layer"},
    {"longcat_spec", "LongCat-Flash's layer of two attention blocks and two dense MLPs beside "
		     "its MoE (longcat_transformer_layer.py), priced as one of each"},
    {"minimax_spec", "MiniMax's attention (minimax_attention.py), priced as the flags' "
		     "attention"},
    {"qwen3_next_spec", "Qwen3-Next's Gated DeltaNet and gated attention layers"},
    {"mamba_spec", "Mamba layers"},
    {NULL, NULL}};

/* --spec mindspeed_llm.tasks.models.spec.NAME: read when NAME builds the flags' layer,
 * `unmodelled` with what it adds when it builds more; another module stays unread. */
static bool megatron_account_spec(struct mo_megatron_import *g,
				  const struct mo_megatron_arg *a)
{
	static const char prefix[] = "mindspeed_llm.tasks.models.spec.";
	if (strcmp(a->flag, "--spec") != 0 || !a->value ||
	    strncmp(a->value, prefix, sizeof prefix - 1) != 0)
		return false;
	const char *name = a->value + sizeof prefix - 1;
	for (size_t i = 0; mo_mindspeed_specs[i].module; i++) {
		if (strcmp(name, mo_mindspeed_specs[i].module) != 0)
			continue;
		if (mo_mindspeed_specs[i].what)
			megatron_unmodelled(g, a, mo_mindspeed_specs[i].what);
		return true;
	}
	return false;
}

static bool megatron_known_irrelevant(const char *flag)
{
	for (size_t i = 0; mo_megatron_irrelevant[i]; i++)
		if (strcmp(flag, mo_megatron_irrelevant[i]) == 0)
			return true;
	for (size_t i = 0; mo_megatron_irrelevant_prefixes[i]; i++)
		if (strncmp(flag, mo_megatron_irrelevant_prefixes[i],
			    strlen(mo_megatron_irrelevant_prefixes[i])) == 0)
			return true;
	/* --no-X-fusion / --X-fusion: fused kernels keep the same tensors
	 * (--no-gradient-accumulation-fusion is read: a model key) */
	return megatron_ends_with(flag, "-fusion");
}

/* A flag of mo_megatron_unmodelled_unless: silent at its `off` value,
 * `unmodelled` at any other (a shell variable included). */
static bool megatron_account_unless(struct mo_megatron_import *g,
				    const struct mo_megatron_arg *a)
{
	for (size_t k = 0; mo_megatron_unmodelled_unless[k].flag; k++) {
		if (strcmp(mo_megatron_unmodelled_unless[k].flag, a->flag) != 0)
			continue;
		if (a->n_values != 1 || strcmp(a->value, mo_megatron_unmodelled_unless[k].off) != 0)
			megatron_unmodelled(g, a, mo_megatron_unmodelled_unless[k].what);
		return true;
	}
	return false;
}

static bool megatron_account_refused(struct mo_megatron_import *g,
				     const struct mo_megatron_arg *a)
{
	for (size_t k = 0; mo_megatron_refused_flags[k].flag; k++)
		if (strcmp(mo_megatron_refused_flags[k].flag, a->flag) == 0) {
			megatron_diag(g, MO_SEV_ERROR, "type", a->line, a->column, a->flag,
				      "%s: %s", a->flag, mo_megatron_refused_flags[k].why);
			return true;
		}
	return false;
}

/* Whether the flag is accounted for: said (unmodelled, refused) or known
 * not to change memory. */
static bool megatron_accounted(struct mo_megatron_import *g, const struct mo_megatron_arg *a)
{
	for (size_t k = 0; mo_megatron_unmodelled_flags[k].flag; k++)
		if (strcmp(mo_megatron_unmodelled_flags[k].flag, a->flag) == 0) {
			megatron_unmodelled(g, a, mo_megatron_unmodelled_flags[k].what);
			return true;
		}
	return megatron_account_unless(g, a) || megatron_account_refused(g, a) ||
	       megatron_known_irrelevant(a->flag) || megatron_mode_covers(g, a->flag) ||
	       megatron_account_spec(g, a);
}

void megatron_account(struct mo_megatron_import *g)
{
	for (size_t i = 0; i < g->n_args; i++) {
		struct mo_megatron_arg *a = &g->args[i];
		if (a->used)
			continue;
		if (!megatron_accounted(g, a))
			megatron_diag(g, MO_SEV_WARNING, "unread-key", a->line, a->column, a->flag,
				      "%.200s: a Megatron flag memopt does not read (not known to "
				      "leave memory unchanged)",
				      a->flag);
		a->used = true;
	}
}
