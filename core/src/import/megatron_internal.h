/* What a Megatron-LM user has is not a model file but the arguments of a
 * run: a launch line (`torchrun ... pretrain_gpt.py --num-layers 32 ...`),
 * an arguments file (one flag per line, or shell continuation lines), a
 * training script as Megatron-LM ships them (flags in bash arrays, launched
 * as `torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]}`:
 * a small, bounded expansion of assignments and `$NAME` forms, not a
 * shell; see megatron_shell.c), or a functional-test
 * model_config.yaml (its MODEL_ARGS mapping of `--flag: value`). These files
 * read them with the semantics of Megatron's megatron/training/arguments.py
 * (NVIDIA/Megatron-LM d98e8a64: the defaults where a flag is absent, the
 * derived values, the flags it forces) and write the memopt model file they
 * describe, each key with the flag it comes from in a comment. Every flag is
 * accounted for: read, known not to change device memory, known to change it in
 * a way the estimate does not model (`unmodelled`), or reported as `unread-key`
 * with its position. mo_model_load reads such a text through here, so `--model
 * FILE` and POST /api/v1/models/import take it as they take any model file.
 * Sources and the flag table: docs/megatron-import.md.
 *
 * Private to the Megatron reader (the import/megatron*.c files): its state, the
 * arguments, the items it writes, and what each of its files gives the
 * others. */
#ifndef MEMOPT_IMPORT_MEGATRON_INTERNAL_H
#define MEMOPT_IMPORT_MEGATRON_INTERNAL_H

#include "import/import_internal.h"

#define MO_MG_MAX_ARGS 20000 /* flags and values in one text */
#define MO_MG_MAX_TOKEN 4096 /* bytes in one argument */
#define MO_MG_MAX_SOURCE_DEPTH 4 /* files sourced inside sourced files */
#define MO_MG_MAX_IF_DEPTH 16    /* conditionals inside conditionals */
#define MO_MG_MAX_ITEMS 96       /* model-file keys one import writes */

/* One flag as given: its first value (NULL when none), how many values
 * followed it, and where the flag and its values are. */
struct mo_megatron_arg {
	const char *flag;
	const char *value;
	size_t n_values;
	int line, column;   /* the flag */
	int vline, vcolumn; /* its first value (the flag's when none) */
	int xline, xcolumn; /* its second value */
	/* every value, for argparse's list flags (`--recompute-modules mlp moe`,
	 * a YAML list); values_cap is the arena array's room */
	const char **values;
	size_t values_cap;
	bool used;
};

/* One shell word with its 1-based position. */
struct megatron_word {
	const char *text;
	int line, column;
};

/* A growing list of words. */
struct mo_megatron_words {
	struct megatron_word *v;
	size_t n, cap;
};

/* A training script's variable: a text (`NAME=value`) or an array
 * (`NAME=( words )`, each word where it was written). */
struct mo_megatron_var {
	const char *name;
	const char *value;
	struct mo_megatron_words items;
	bool array;
};

/* SLURM's counts of a launch (megatron_slurm.c); 0: not given. */
struct mo_megatron_slurm {
	int64_t tasks, nodes, per_node;
	bool given, unknown; /* unknown: a count that is not a number */
	int line, column;    /* the last count read */
};

/* The reader's state for one text. */
struct mo_megatron_import {
	mo_arena *arena;
	mo_diags *diags;
	const char *file;
	mo_error *err;
	struct mo_megatron_arg *args;
	size_t n_args;
	struct megatron_word *words;
	size_t n_words;
	int64_t launcher_procs, launcher_nodes; /* torchrun's, 0 = not given */
	int64_t launcher_world; /* msrun's --worker_num, 0 = not given or unknown */
	int world_line, world_column;
	int procs_line, procs_column;
	bool launcher_unknown; /* a launcher count is a shell variable */
	bool quiet_world;      /* no warning for an unknown device count (the
				* loader's model follows --devices) */
	bool failed;	       /* out of memory or a limit (err set) */
	struct mo_megatron_var *vars; /* a training script's */
	size_t n_vars;
	size_t expanded; /* bytes and words expansions made, all told */
	/* CUBLAS_WORKSPACE_CONFIG from a functional test's ENV_VARS, NULL
	 * when absent */
	const char *cublas_config;
	int cublas_line, cublas_column;
	/* sourced files (`source FILE`, `. FILE`): read from dir, the folder
	 * of the script the caller read from disk (NULL: reported, not read);
	 * the files being read, outermost first (cycles); the one being read
	 * now, named in its diagnostics; the bytes read so far */
	const char *dir;
	/* the folder the run is launched from, which the tokenizer's path
	 * and an FSDP2 launch's YAML and model directory are opened from
	 * (NULL: the tokenizer is not read, the YAML is said not read) */
	const char *launch_dir;
	const char *sourcing[MO_MG_MAX_SOURCE_DEPTH];
	int n_sourcing;
	const char *sourced;
	size_t source_bytes, max_bytes;
	int if_depth; /* conditionals being read, nested */
	bool model_config; /* the text is a functional-test model_config.yaml */
	/* its MODE (megatron_read_mode) */
	enum megatron_mode { MEGATRON_MODE_PRETRAINING, MEGATRON_MODE_INFERENCE,
			     MEGATRON_MODE_RL } mode;
	/* its MODEL_ENV_VARS.MODEL_ARGS.GPUS_PER_NODE (0: not given) */
	int64_t env_gpus_per_node;
	int env_gpus_line, env_gpus_column;
	/* a launch run by srun (its counts), the batch script's #SBATCH
	 * directives, and the `sh -c TEXT` texts being read, nested */
	bool srun_launch;
	struct mo_megatron_slurm srun, sbatch;
	int sh_depth;
	/* an `exit` was read: the text being read ends there (the shell running
	 * it stops; a `bash -c` text's or a batch script's exit ends that text) */
	bool exited;
	/* MindSpeed-LLM's FSDP2 launch (megatron_fsdp2.c): the run read (NULL:
	 * not such a launch), and whether the caller gives the model
	 * (mo_fsdp2_import) rather than the Megatron reader saying it is
	 * needed */
	struct mo_fsdp2_run *fsdp2;
	bool fsdp2_caller;
};

/* A value the import writes, with the flag it comes from (NULL: a default
 * or a derived value, said in `why`) and the model field it sets. */
struct mo_megatron_item {
	struct mo_item
	    item;  /* section, key and value, as model_write.c writes them */
	int field; /* enum mo_mf, -1 for the keys the model reader skips */
	const struct mo_megatron_arg *src;
	const char *why;
};

struct mo_megatron_out {
	struct mo_megatron_item v[MO_MG_MAX_ITEMS];
	size_t n;
};

/* What later parts need from earlier ones. */
/* What later parts need from earlier ones. */
struct mo_megatron_shape {
	int64_t layers, hidden, heads, ffn, tp, pp, vpp;
	int64_t groups; /* the query groups (K/V heads) */
	int64_t mtp;    /* --mtp-num-layers */
	/* MindSpeed-LLM's --noop-layers, when modelled: noop[i] for each of
	 * the --num-layers positions an identity layer takes (NULL: none) */
	unsigned char *noop;
	int64_t n_noop;
	bool dualpipev; /* MindSpeed's V-shaped split (read with the noop layers) */
	bool swiglu;
	/* MindSpeed-LLM's --geglu / --gelu-tanh: a gated GeLU MLP */
	bool geglu;
	/* the MoE layers: --num-experts (0: a dense model) and the dense
	 * layers before the first MoE one, in real-layer numbering */
	int64_t experts, first_dense;
	/* the vocabulary is the tokenizer's (no --vocab-size): its padded
	 * rows are decided once TP is read (megatron_read_vocab_rows) */
	bool vocab_from_tokenizer;
	const struct mo_megatron_arg *tokenizer;
	int64_t vocab_divisor;
};

/* The lexer of shell words (megatron_shell.c). */
struct mo_megatron_lexer;

/* megatron_slurm.c */
/* What a script's command word names (megatron_shell.c's table): a launcher
 * of the training script, srun, exec, the shell's own builtins that change
 * the reading, or any other command. */
enum megatron_command {
	MEGATRON_CMD_OTHER,
	MEGATRON_CMD_LAUNCHER, /* torchrun, python, python3, deepspeed */
	MEGATRON_CMD_SRUN,
	MEGATRON_CMD_EXEC,
	MEGATRON_CMD_EXIT,
	MEGATRON_CMD_UNSET,
	MEGATRON_CMD_SOURCE, /* source, . */
	MEGATRON_CMD_SHELL,  /* sh, bash, /bin/sh, /bin/bash */
	MEGATRON_CMD_SBATCH
};
/* The kind of the n-byte command word w. */
enum megatron_command megatron_command_of(const char *w, size_t n);
void megatron_read_srun(struct mo_megatron_import *g, const struct megatron_word *w, size_t n);
/* sbatch's own options (`sbatch --nodes 2 <<EOF`): they override the batch script's
 * #SBATCH directives (sbatch(1)), so they are read after them. */
/* The multi-latent attention flag given (Megatron's or MindSpeed-LLM 1.0.0's name), NULL
 * when none (megatron_model.c). */
const struct mo_megatron_arg *megatron_mla(struct mo_megatron_import *g);
void megatron_read_sbatch_options(struct mo_megatron_import *g, const struct megatron_word *w,
				  size_t n);
/* The `#SBATCH` lines' counts; 0, or -1 when out of memory (at *oom_line; the caller fails). */
int megatron_read_sbatch(struct mo_megatron_import *g, const char *text, size_t len,
			 int *oom_line);
/* The device count SLURM gives a launch srun runs (0: none or unknown), at the count that
 * says it. */
int64_t megatron_slurm_world(struct mo_megatron_import *g, int *line, int *column);

/* megatron_args.c */
mo_diag *megatron_diag(struct mo_megatron_import *g, mo_severity sev,
			  const char *code, int line, int column,
			  const char *path, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
void megatron_fail(struct mo_megatron_import *g, mo_error_code code,
		      int line, int column, const char *msg);
bool megatron_is_flag(const char *w);
struct mo_megatron_arg *megatron_new_arg(struct mo_megatron_import *g,
					    size_t *cap, const char *flag,
					    int line, int column);
bool megatron_add_value(struct mo_megatron_import *g,
			struct mo_megatron_arg *a, const char *value, int line,
			int column);
bool megatron_ends_with_n(const char *s, size_t n, const char *tail);
bool megatron_ends_with(const char *s, const char *tail);
bool megatron_classify_words(struct mo_megatron_import *g);
bool megatron_read_words(struct mo_megatron_import *g, const char *text,
			    size_t len);
struct mo_megatron_arg *megatron_find(struct mo_megatron_import *g,
					 const char *flag);
bool megatron_flag(struct mo_megatron_import *g, const char *flag);
/* Whether a flag is given, without marking it read (its own reader, or the
 * unmodelled list, still reports it). */
bool megatron_given(const struct mo_megatron_import *g, const char *flag);
const char *megatron_value(struct mo_megatron_import *g,
			      struct mo_megatron_arg *a);
/* A list flag's values joined by spaces; NULL when it has none. */
const char *megatron_values_joined(struct mo_megatron_import *g,
				   const struct mo_megatron_arg *a);
bool megatron_int(struct mo_megatron_import *g, const char *flag, int64_t lo,
		     int64_t hi, int64_t *out,
		     const struct mo_megatron_arg **src);
bool megatron_double(struct mo_megatron_import *g, const char *flag,
			double *out, const struct mo_megatron_arg **src);
const char *megatron_choice(struct mo_megatron_import *g, const char *flag,
			       const char *const *choices,
			       const struct mo_megatron_arg **src);
mo_diag *megatron_unmodelled(struct mo_megatron_import *g, const struct mo_megatron_arg *a,
			     const char *what);
/* The same, with the flags read alongside it (a list in `with`) as its hint. */
void megatron_unmodelled_with(struct mo_megatron_import *g, const struct mo_megatron_arg *a,
			      const char *what, const mo_buf *with);
void megatron_account(struct mo_megatron_import *g);

/* megatron_shell.c */
int megatron_word(struct mo_megatron_import *g, struct mo_megatron_lexer *x,
		     int *line, int *column);
bool megatron_split_words(struct mo_megatron_import *g, const char *text,
			     size_t len);
bool megatron_read_script(struct mo_megatron_import *g, const char *text,
			     size_t len);
bool megatron_is_script(const char *text, size_t len);
/* a functional test's MODE (megatron_shell.c) */
void megatron_read_mode(struct mo_megatron_import *g, const mo_doc *doc);
bool megatron_mode_covers(const struct mo_megatron_import *g, const char *flag);
bool megatron_read_model_config(struct mo_megatron_import *g,
				   const mo_doc *doc);

/* megatron_model.c */
void megatron_read_shape(struct mo_megatron_import *g,
			    struct mo_megatron_out *o,
			    struct mo_megatron_shape *s);
void megatron_read_vocab_rows(struct mo_megatron_import *g, struct mo_megatron_out *o,
			      const struct mo_megatron_shape *s);
/* Mamba or linear-attention layers (a launch line's or a model_config's
 * flags): an `unsupported` error at the first flag that names them. */
void megatron_check_hybrid(struct mo_megatron_import *g);
bool megatron_read_tokenizer(struct mo_megatron_import *g, struct mo_megatron_out *o,
			     const struct mo_megatron_shape *s, const char **unread);
void megatron_read_vocab(struct mo_megatron_import *g, struct mo_megatron_out *o,
			 struct mo_megatron_shape *s);
void megatron_put_flag(struct mo_megatron_import *g,
			  struct mo_megatron_out *o, int section,
			  const char *key, const char *flag, int field,
			  const char *why);
void megatron_read_positions(struct mo_megatron_import *g,
				struct mo_megatron_out *o);
void megatron_read_layer(struct mo_megatron_import *g,
			    struct mo_megatron_out *o,
			    const struct mo_megatron_shape *s,
			    const char **impl_out,
			    const struct mo_megatron_arg **impl_src);
void megatron_read_mla(struct mo_megatron_import *g,
			  struct mo_megatron_out *o);
void megatron_read_training(struct mo_megatron_import *g,
			       struct mo_megatron_out *o, const char *impl,
			       const struct mo_megatron_arg *impl_src);

/* megatron_moe.c */
void megatron_read_moe(struct mo_megatron_import *g,
			  struct mo_megatron_out *o,
			  struct mo_megatron_shape *s);
void megatron_read_dispatch(struct mo_megatron_import *g,
			       struct mo_megatron_out *o);

/* megatron_source.c: a sourced file's text into *text (in the arena, *len
 * bytes), pushed on g->sourcing, *shown its path relative to the script's
 * folder (for diagnostics): NULL; else why it is not read,
 * megatron_source_nomem when out of memory. megatron_source_close pops
 * it. */
extern const char megatron_source_nomem[];
const char *megatron_source_open(struct mo_megatron_import *g, const char *name, char **text,
				 size_t *len, const char **shown);
void megatron_source_close(struct mo_megatron_import *g);

/* megatron_noop.c: --noop-layers into s (when the split is one it reads);
 * the identity layers among the positions before `layer`; the pipeline
 * layout of each stage's real layers */
void megatron_read_noop(struct mo_megatron_import *g, struct mo_megatron_shape *s);
int64_t megatron_noop_below(const struct mo_megatron_shape *s, int64_t layer);
void megatron_noop_layout(struct mo_megatron_import *g, struct mo_megatron_out *o,
			  const struct mo_megatron_shape *s);

/* megatron_recipe.c: a functional-test config's device count from the CI
 * recipe beside it (0: none, or not a multiple of mp; *said: a warning
 * was given), *why where it comes from */
int64_t megatron_recipe_world(struct mo_megatron_import *g, int64_t mp, const char **why,
			      bool *said);

/* megatron_dsv4.c: MindSpeed-LLM's DeepSeek-V4 flags (mHC, the compressed
 * sparse attention); whether --spec names its DeepSeek-V4 layers */
void megatron_read_dsv4(struct mo_megatron_import *g, struct mo_megatron_out *o,
			const struct mo_megatron_shape *s);
void megatron_dsv4_spec(struct mo_megatron_import *g);
/* DeepSeek-V3.2's sparse attention (Megatron-LM's --experimental-attention-variant
 * dsa, MindSpeed-LLM's --enable-dsa-indexer without --kv-compress): `unmodelled`
 * at its flag, the flags read with it named */
void megatron_read_dsa(struct mo_megatron_import *g);

/* megatron_lora.c: MindSpeed-LLM's fine-tuning flags: LoRA / QLoRA and the
 * training stages not sft `unmodelled` at their flag (one warning for the LoRA
 * flags), the data, prompt and loss flags known not to change memory */
void megatron_read_tune(struct mo_megatron_import *g);

/* megatron_fsdp2.c: whether the script word is MindSpeed-LLM's FSDP2 trainer;
 * its run (the YAML the launch names, the --section.key words over it) into
 * g->fsdp2; the model-needed error that says what of it was read */
struct mo_fsdp2_run;
bool megatron_is_fsdp2(const struct megatron_word *w);
void megatron_fsdp2_read(struct mo_megatron_import *g, size_t script);
void megatron_fsdp2_model_needed(struct mo_megatron_import *g);
/* The run read over arch (a copy), else over model_name_or_path's config.json,
 * into *out (0); 1 when there is no model (the model-needed error said), -1. */
int megatron_fsdp2_build(mo_model **out, struct mo_megatron_import *g, const mo_model *arch,
			 int64_t devices);

/* megatron.c: the arguments of the text into g (words, a script, or a
 * functional-test config). 0, 1 (it does not parse: diagnostics), -1. */
int megatron_read_input(struct mo_megatron_import *g, const char *text, size_t len,
		       const mo_limits *lim);

/* megatron_layout.c */
void megatron_read_parallel(struct mo_megatron_import *g,
			       struct mo_megatron_out *o,
			       struct mo_megatron_shape *s, int64_t devices);

/* megatron_recompute.c */
void megatron_read_recompute(struct mo_megatron_import *g,
				const struct mo_megatron_shape *s, int64_t vpp,
				const char *impl);

/* megatron_write.c */
/* The items in the order they are written (section by section) into
 * order (room for MO_MG_MAX_ITEMS); returns how many. */
size_t megatron_order(const struct mo_megatron_out *o, const struct mo_megatron_item **order);
void megatron_put_int(struct mo_megatron_out *o, int section,
			 const char *key, int64_t v, int field,
			 const struct mo_megatron_arg *src, const char *why);
void megatron_put_bool(struct mo_megatron_out *o, int section,
			  const char *key, bool v, int field,
			  const struct mo_megatron_arg *src, const char *why);
void megatron_put_double(struct mo_megatron_out *o, int section,
			    const char *key, double v, int field,
			    const struct mo_megatron_arg *src, const char *why);
void megatron_put_str(struct mo_megatron_out *o, int section,
			 const char *key, const char *v, int field,
			 const struct mo_megatron_arg *src, const char *why);
int megatron_write_yaml(const struct mo_megatron_out *o, mo_buf *body,
			   mo_error *err);
bool megatron_annotate(const struct mo_megatron_out *o, const mo_buf *body,
			  const char *name, mo_buf *dst);

#endif
