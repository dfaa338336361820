/*
 * memopt — configs: the recompute / recompute_comm / swap sections parsed, read back node by node.
 * Part of the public API; include <memopt/memopt.h> for all of it
 * (conventions there).
 */
#ifndef MEMOPT_API_CONFIG_H
#define MEMOPT_API_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <memopt/errors.h>
#include <memopt/limits.h>
#include <memopt/diags.h>
#include <memopt/model.h>
#include <memopt/node.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Opaque; created by mo_config_parse / mo_check, owned by the caller,
 * freed with mo_config_free (after every plan made from it). */
typedef struct mo_config mo_config;

/* Parses text holding the three sections, alone or in a whole training
 * YAML. Syntax and structure problems go to diags (code, line, column).
 * Returns 0 with *out set (even when diags has errors, as long as the
 * text was YAML), or -1 with *out NULL and err filled on a hard error.
 * `name` labels diagnostics. The text and name are copied; *out belongs to
 * the caller (mo_config_free). */
int mo_config_parse(mo_config **out, mo_diags *diags, const char *text,
		    size_t len, const char *name, const mo_limits *lim,
		    mo_error *err);
/* Frees the config (after every plan and estimate made from it); NULL is
 * fine. */
void mo_config_free(mo_config *c);

/* 1 when the file is a whole training YAML (has keys other than the
 * three sections), else 0. */
int mo_config_is_training_yaml(const mo_config *c);

/* The model the config file carries itself (a PyNative/graph-mode
 * training YAML), as mo_model_load: returns 0 with *out set (a new model
 * the caller frees with mo_model_free; diags may hold its errors), 1 when
 * the file carries none (a finding says what is missing when it is a
 * training YAML), -1 with err filled on a hard error. */
int mo_config_model(mo_model **out, mo_diags *diags, const mo_config *c,
		    mo_error *err);

/* The value of a section ("recompute", "recompute_comm" or "swap") as
 * written, NULL when the config has no such section. When the section is a
 * block at the start of a line, *first_line and *end_line (both optional)
 * get the 1-based lines [first, end) it spans in the text; else 0. */
const mo_node *mo_config_section(const mo_config *c, const char *name, int *first_line,
				 int *end_line);

/* The config's regex patterns, in the order: recompute.select_module,
 * recompute.exclude_op, recompute_comm.select_module, swap.op_swap. */
typedef struct mo_config_pattern {
	const char *section; /* "recompute", "recompute_comm", "swap" */
	const char *key;     /* "select_module", "exclude_op", "op_swap" */
	const char *regex;   /* the pattern as written */
	int compiled;        /* 0: it does not compile (a `regex` finding says why) */
	int comm_only;       /* it acts on communication paths only */
} mo_config_pattern;
/* How many regex patterns the config has. */
size_t mo_config_pattern_count(const mo_config *c);
/* Fills *out with pattern i: returns 0, or -1 out of range. Strings are
 * borrowed from c. */
int mo_config_pattern_get(mo_config_pattern *out, const mo_config *c, size_t i);
/* Scratch space for matching many paths (PCRE2 match data): one per thread. */
typedef struct mo_matcher mo_matcher;
/* A new matcher (free it with mo_matcher_free), NULL when out of memory. */
mo_matcher *mo_matcher_new(void);
/* Frees the matcher; NULL is fine. */
void mo_matcher_free(mo_matcher *mt);
/* Whether pattern i fully matches path (PCRE2, the same compiled regex the
 * rules use; comm_only is the caller's to apply): 1 match, 0 no match or
 * a pattern that does not compile, -1 a match limit hit or an error. */
int mo_config_pattern_match(mo_matcher *mt, const mo_config *c, size_t i, const char *path,
			    size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
