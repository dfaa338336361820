/*
 * memopt — validate, expand, price and export the recompute / recompute_comm /
 * swap sections of a MindSpore Transformers training config.
 *
 * Conventions (libgit2 / jansson style):
 *  - every public symbol starts with mo_; opaque handles have a matching _free;
 *  - out-parameters come first; a function returning a new object through
 *    `**out` gives the caller ownership (free it with the matching _free);
 *  - pointers returned as values are borrowed and live as long as their
 *    parent handle; `char *` results (mo_export, mo_model_to_yaml, ...) are
 *    malloc'd, NUL-terminated, and released by the caller with free();
 *  - every _free accepts NULL; on failure a `**out` is set to NULL;
 *  - input texts (config, model) are copied: the caller may release them as
 *    soon as the call returns; a mo_limits is copied too;
 *  - hard failures (out of memory, limits, unreadable input) fill a
 *    caller-owned mo_error (usually on the stack; NULL when the caller does
 *    not want the details); findings about the config are diagnostics
 *    collected in a mo_diags list.
 *
 * Threads: every function is safe to call from several threads on distinct
 * handles, and const handles (a loaded model, a parsed config) may be shared
 * read-only. Behind that promise, a few caches change inside const handles,
 * each under a lock of its own: a config keeps the matches and the plan of
 * its last resolution against a model (the config's lock); a model keeps the
 * estimator's layer graphs and result memo, and the path information and
 * pattern matches of its layouts (one lock each, per model). The only
 * process-wide state is a pool of at most 64 free 16 KiB arena chunks, under
 * its own lock, that a long-running server reuses instead of returning warm
 * memory to the system. docs/architecture.md lists them. Each thread also
 * has its own work budget (mo_budget_begin), thread-local.
 */
#ifndef MEMOPT_MEMOPT_H
#define MEMOPT_MEMOPT_H

/* One header a subject; this one includes them all. */
#define MO_VERSION_STRING "0.1.0"

#include <memopt/errors.h>   /* mo_error and its codes */
#include <memopt/limits.h>   /* mo_limits: bounds on hostile input */
#include <memopt/budget.h>   /* mo_budget: deadline and cancel per thread */
#include <memopt/diags.h>    /* mo_diags: findings with code and position */
#include <memopt/sizes.h>    /* mo_parse_size */
#include <memopt/model.h>    /* mo_model: presets, model files, imports */
#include <memopt/config.h>   /* mo_config: the three sections, the node view */
#include <memopt/check.h>    /* mo_validate, mo_check */
#include <memopt/expand.h>   /* mo_expand, mo_plan: what each layer does */
#include <memopt/export.h>   /* mo_export, mo_migrate */
#include <memopt/estimate.h> /* mo_estimate: memory and cost */
#include <memopt/planner.h>  /* mo_planner: the cheapest plan under a budget */
#include <memopt/ledger.h>   /* measured traces against the estimate */
#include <memopt/steplog.h>  /* measured step times from training logs */
#include <memopt/size.h>     /* mo_size: layouts and plans for N devices */

#endif
