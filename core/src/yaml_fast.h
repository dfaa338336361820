/* A one-pass reader for the plain shape most configs have (core/src/yaml_fast.c). */
#ifndef MEMOPT_YAML_FAST_H
#define MEMOPT_YAML_FAST_H

#include "internal.h"

/* Builds doc's tree (doc->src, doc->srclen) when the text keeps to block
 * mappings and sequences of one-line keys and values: plain, single- and
 * double-quoted scalars without escapes or line breaks, one-line flow
 * sequences of such scalars, comments. Returns 1 with *root set to the
 * tree libyaml's events would build (same kinds, values, styles, lines,
 * columns, byte offsets and weights; duplicate keys not checked), or 0
 * for anything else (the caller then asks libyaml; nodes already made stay
 * in the arena unused). Never reports a diagnostic. */
int mo_yaml_fast(mo_doc *doc, const mo_limits *lim, mo_node **root);

/* mo_yaml_parse without the reader above (libyaml only): the reference the
 * tests compare it with. */
int mo_yaml_parse_libyaml(mo_doc **out, mo_diags *diags, const char *text,
			  size_t len, const char *name, const mo_limits *lim,
			  mo_error *err);

#endif
