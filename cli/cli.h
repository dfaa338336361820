/* The memopt command: subcommands share these helpers. */
#ifndef MEMOPT_CLI_H
#define MEMOPT_CLI_H

#include "json.h"

#include <memopt/memopt.h>
#include <stdbool.h>
#include <stdio.h>

enum { MO_EXIT_OK = 0, MO_EXIT_INVALID = 1, MO_EXIT_USAGE = 2 };

/* One invocation: options, inputs and what mo_check made of them. */
typedef struct mo_cli {
	const char *cmd;
	const char *config_path;
	const char *model_arg;
	const char *out_path;
	int64_t devices;
	uint64_t work_ms; /* --work-limit: estimate / plan stop after this (0: none) */
	bool json, all_paths, explain;
	char *config_text, *model_text;
	size_t config_len, model_len;
	mo_config *cfg;
	mo_model *model;
	mo_diags *diags;
} mo_cli;

void mo_cli_usage(FILE *f);
/* Reads a whole file (or stdin for "-") up to max bytes; caller frees. */
char *mo_cli_read(const char *path, size_t *len, size_t max);
bool mo_cli_is_preset(const char *name);
/* The model alone with an empty config (plan, ledger without CONFIG). */
int mo_cli_load_model_alone(mo_cli *c);
/* Reads CONFIG (and --model), runs mo_check. Returns an exit status. */
int mo_cli_load(mo_cli *c);
/* FILE:LINE:COL: error[CODE]: message, the source line and a caret. */
void mo_cli_print_diags(const mo_cli *c);
/* estimate / expand without a model: prints a `model-needed` error (JSON
 * or text) and returns the usage exit status. */
int mo_cli_no_model(const mo_cli *c);
/* Writes text to path (stdout when NULL). Returns an exit status. */
int mo_cli_write(const char *path, const char *text, size_t len);
/* Prints and releases j. */
int mo_cli_print_json(json_t *j);
void mo_cli_free(mo_cli *c);
/* The common options (-m -d -j -o --paths -h). Returns -1 to go on, else
 * an exit status. Leaves optind at the first operand. */
int mo_cli_parse_args(mo_cli *c, int argc, char **argv);

/* --work-limit MS for cmd: 0, or an exit status with a message. */
int mo_cli_work_limit(mo_cli *c, const char *cmd, const char *arg);
/* The estimate or plan call that follows runs under c's work limit (if
 * any) until mo_budget_end. */
void mo_cli_budget_begin(const mo_cli *c);

/* subcommands */
int mo_cli_check_command(mo_cli *c, int argc, char **argv);
int mo_cli_serve(int argc, char **argv);
int mo_cli_estimate(mo_cli *c, int argc, char **argv);
/* memopt plan [options] [CONFIG]: the cheapest config that fits a budget. */
int mo_cli_plan(mo_cli *c, int argc, char **argv);
/* memopt ledger TRACE [--model M] [CONFIG]: a measured trace, and the estimate beside it. */
int mo_cli_ledger(mo_cli *c, int argc, char **argv);
/* memopt import FILE: a model description (Megatron-LM arguments, a model
 * file, a training YAML, a config.json) as a memopt model file. */
int mo_cli_import(mo_cli *c, int argc, char **argv);
/* memopt launch CONFIG [options] -- CMD ARGS...: execs CMD or returns an exit status. */
int mo_cli_launch(int argc, char **argv);

#endif
