/* The memopt command: subcommands share these helpers. */
#ifndef MEMOPT_CLI_H
#define MEMOPT_CLI_H

#include "json.h"

#include <memopt/memopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { MO_EXIT_OK = 0, MO_EXIT_INVALID = 1, MO_EXIT_USAGE = 2 };
/* The exit status of a failed estimate or plan: MO_EXIT_INVALID when the
 * input is the problem (invalid, or the model leaves the device count
 * open), MO_EXIT_USAGE otherwise. */
int mo_cli_exit_of(const mo_error *err);
/* The code a hard error has in the diagnostics' shape ("limit", "work-limit",
 * "model-needed", "io" ...), chosen by its mo_error_code. */
const char *mo_cli_error_word(const mo_error *err);

/* One invocation: options, inputs and what mo_check made of them. */
typedef struct mo_cli {
	const char *cmd;
	const char *config_path;
	const char *model_arg;
	const char *out_path;
	int64_t devices;
	uint64_t work_ms; /* --work-limit: estimate / plan stop after this (0: none) */
	bool work_set;    /* --work-limit given; else MO_CLI_WORK_MS */
	bool json, all_paths, explain;
	char *config_text, *model_text;
	size_t config_len, model_len;
	char *model_dir; /* the model file's folder (a script's sourced files), NULL for stdin */
	mo_config *cfg;
	mo_model *model;
	mo_resolved *resolved; /* what validation worked out, for expand and estimate */
	mo_diags *diags;
	const struct mo_cli_command *command; /* the table entry being run */
} mo_cli;

/* ---- the command table (main.c) ------------------------------------------
 * One entry a command: main finds it by name, sets up one mo_cli, calls run
 * with argv starting at the command's name, and frees the mo_cli. */
typedef struct mo_cli_command {
	const char *name;
	int (*run)(mo_cli *c, int argc, char **argv);
	/* -h / --help on stdout, and on stderr after an unknown option */
	void (*usage)(FILE *f);
	/* the command's lines under "commands:" in `memopt --help` */
	const char *help;
	/* instead of run, for the commands that take the common options and exactly one CONFIG:
	 * called once the config is read and checked */
	int (*answer)(mo_cli *c);
} mo_cli_command;

/* ---- the option parser (options.c), shared by every command ---------------
 * A command lists the options it takes in a mo_cli_option array (ending
 * with an entry whose name is NULL); mo_cli_parse checks each value where
 * it enters and stores it in the mo_cli or in the command's own struct. */
typedef enum mo_cli_kind {
	MO_ARG_HELP,   /* prints the command's usage on stdout, exit 0 */
	MO_ARG_FLAG,   /* bool = true */
	MO_ARG_OFF,    /* int = 0 (a --quiet that turns a default off) */
	MO_ARG_TEXT,   /* const char * (the argv string itself) */
	MO_ARG_INT,    /* int64_t in [lo, hi] (strtoll) */
	MO_ARG_UINT,   /* unsigned in [lo, hi], digits only */
	MO_ARG_COUNT,  /* size_t in [lo, hi], digits only */
	MO_ARG_REAL,   /* double in [lo, hi] */
	MO_ARG_BYTES,  /* uint64_t, a size as mo_parse_size reads it, in [lo, hi] */
	MO_ARG_BYTES_Z, /* size_t, as MO_ARG_BYTES */
	MO_ARG_CALL,   /* the option's own function checks and stores it */
} mo_cli_kind;

typedef struct mo_cli_option {
	const char *name; /* long name, without the dashes; NULL ends the list */
	char letter;      /* short form, 0 for none */
	mo_cli_kind kind;
	bool own;         /* stored in the command's own struct, not in mo_cli */
	size_t offset;    /* offsetof the field in mo_cli or in the own struct */
	double lo, hi;    /* the accepted range (numbers and sizes) */
	/* what the value must be, after "memopt CMD: --NAME takes " (NULL:
	 * "a count from LO to HI" / "a number from LO to HI") */
	const char *takes;
	int (*call)(mo_cli *c, void *own, const char *arg); /* MO_ARG_CALL: 0 or -1 */
} mo_cli_option;

/* --work-limit MS: c->work_ms (MO_ARG_CALL). */
int mo_cli_set_work_limit(mo_cli *c, void *own, const char *arg);

/* The options several commands share, to put in their lists. */
#define MO_CLI_OPT_MODEL                                                                    \
	{"model", 'm', MO_ARG_TEXT, false, offsetof(mo_cli, model_arg), 0, 0, NULL, NULL}
#define MO_CLI_OPT_DEVICES                                                                  \
	{"devices", 'd', MO_ARG_INT, false, offsetof(mo_cli, devices), 1, 1000000, NULL, NULL}
#define MO_CLI_OPT_JSON {"json", 'j', MO_ARG_FLAG, false, offsetof(mo_cli, json), 0, 0, NULL, NULL}
#define MO_CLI_OPT_OUTPUT                                                                   \
	{"output", 'o', MO_ARG_TEXT, false, offsetof(mo_cli, out_path), 0, 0, NULL, NULL}
#define MO_CLI_OPT_WORK_LIMIT                                                               \
	{"work-limit", 0, MO_ARG_CALL, false, 0, 0, 0, "milliseconds from 0 (none) to 86400000", \
	 mo_cli_set_work_limit}
#define MO_CLI_OPT_HELP {"help", 'h', MO_ARG_HELP, false, 0, 0, 0, NULL, NULL}
#define MO_CLI_OPT_END {NULL, 0, 0, false, 0, 0, 0, NULL, NULL}

/* The options of validate, expand, export, migrate, presets, estimate and
 * import: -m -d -j -o --paths --explain --work-limit -h. */
extern const mo_cli_option mo_cli_common_options[];

/* Parses argv[1..argc) against opts, storing into c and own. Returns -1 to
 * go on, else an exit status (0 after --help). Leaves optind at the first
 * operand (getopt_long moves operands after the options). */
int mo_cli_parse(mo_cli *c, const mo_cli_option *opts, void *own, int argc, char **argv);


void mo_cli_usage(FILE *f);
/* Reads a whole file (or stdin for "-") up to max bytes; caller frees. */
char *mo_cli_read(const char *path, size_t *len, size_t max);
/* The folder of a file read from disk (the caller frees it); NULL for stdin "-". */
char *mo_cli_dir_of(const char *path);
bool mo_cli_is_preset(const char *name);
/* The model alone with an empty config (plan, ledger without CONFIG). */
int mo_cli_load_model_alone(mo_cli *c);
/* Reads CONFIG (and --model), runs mo_check. Returns an exit status. */
int mo_cli_load(mo_cli *c);
/* The common options, then exactly one CONFIG, read and checked, then answer(c). Returns an
 * exit status. */
int mo_cli_one_config(mo_cli *c, int argc, char **argv, int (*answer)(mo_cli *c));
/* FILE:LINE:COL: error[CODE]: message, the source line and a caret. */
void mo_cli_print_diags(const mo_cli *c);
/* estimate / expand without a model: prints a `model-needed` error (JSON
 * or text) and returns the usage exit status. */
int mo_cli_no_model(const mo_cli *c);
/* What expand and estimate answer when the config cannot be priced (no model, or errors):
 * prints the findings and returns the exit status; -1 when it can be priced. */
int mo_cli_unpriceable(const mo_cli *c);
/* The estimate and the plan of the config read, from the resolution validation built (without
 * one, as the core answers an unresolved config). */
int mo_cli_estimate_run(const mo_cli *c, mo_estimate **out, mo_error *err);
/* The same without listing a timeline too long to list whole: the report shows no events. */
int mo_cli_estimate_summary(const mo_cli *c, mo_estimate **out, mo_error *err);
int mo_cli_expand_run(const mo_cli *c, mo_plan **out, mo_error *err);
/* Writes text to path (stdout when NULL). Returns an exit status. */
int mo_cli_write(const char *path, const char *text, size_t len);
/* Prints and releases j. */
int mo_cli_print_json(json_t *j);
/* Releases what c holds and clears it (a second call does nothing). */
void mo_cli_free(mo_cli *c);

/* The work limit of estimate, plan and launch without --work-limit: the
 * server's default (a request's computation stops after 10 s), so that no
 * input keeps a command busy for minutes. */
#define MO_CLI_WORK_MS 10000
/* The estimate or plan call that follows runs under c's work limit (if
 * any) until mo_budget_end. */
void mo_cli_budget_begin(const mo_cli *c);

/* The commands: main.c's table names each; every one takes the mo_cli main
 * set up and argv from the command's name on. */
int mo_cli_validate_answer(mo_cli *c);
int mo_cli_expand_answer(mo_cli *c);
/* export: canonical YAML; migrate: recompute_config rewritten as the sections */
int mo_cli_export_answer(mo_cli *c);
int mo_cli_migrate_answer(mo_cli *c);
/* presets [NAME]: the built-in models, or one as a model file */
int mo_cli_presets(mo_cli *c, int argc, char **argv);
int mo_cli_serve(mo_cli *c, int argc, char **argv);
void mo_cli_serve_usage(FILE *f);
int mo_cli_estimate(mo_cli *c, int argc, char **argv);
/* memopt plan [options] [CONFIG]: the cheapest config that fits a budget. */
/* calibrate: device constants fitted to measured step times */
int mo_cli_calibrate(mo_cli *c, int argc, char **argv);
void mo_cli_calibrate_usage(FILE *f);
int mo_cli_plan(mo_cli *c, int argc, char **argv);
void mo_cli_plan_usage(FILE *f);
/* memopt size --model M --devices N --global-batch G: layouts and plans. */
int mo_cli_size(mo_cli *c, int argc, char **argv);
void mo_cli_size_usage(FILE *f);
/* memopt ledger TRACE [--model M] [CONFIG]: a measured trace, and the estimate beside it. */
int mo_cli_ledger(mo_cli *c, int argc, char **argv);
void mo_cli_ledger_usage(FILE *f);
/* memopt import FILE: a model description (Megatron-LM arguments, a model
 * file, a training YAML, a config.json) as a memopt model file. */
int mo_cli_import(mo_cli *c, int argc, char **argv);
void mo_cli_import_usage(FILE *f);
/* memopt launch CONFIG [options] -- CMD ARGS...: execs CMD or returns an exit status. */
int mo_cli_launch(mo_cli *c, int argc, char **argv);
void mo_cli_launch_usage(FILE *f);

#endif
