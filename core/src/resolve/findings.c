/* Findings of the fill (op-recompute-swap, exclude-no-effect), merged over
 * segments: a finding is made per segment, and consecutive segments with
 * the same finding become one layer range, so a 1,000-layer model reports
 * one diagnostic per pattern with its layers, never one per layer. A
 * segment that repeats an earlier one (twins.c) replays that one's log.
 * At the end the findings, and the patterns that hit the match limit,
 * become diagnostics. */
#include "resolve/resolve_internal.h"

#include <stdlib.h>
#include <string.h>

bool findings_init(mo_resolve_findings *f, const mo_resolved *r, mo_arena *a)
{
	f->segments = r->segs;
	if (!f->report)
		return true;
	f->log_start = arena_alloc(a, r->n_segs * sizeof(*f->log_start));
	f->log_count = arena_alloc(a, r->n_segs * sizeof(*f->log_count));
	return f->log_start && f->log_count;
}

void findings_add(mo_resolve_findings *f, const char *code, const mo_pattern_ref *about,
		     const mo_pattern_ref *other, uint64_t lo, uint64_t hi)
{
	if (f->n && f->list[f->n - 1].code == code && f->list[f->n - 1].about == about &&
	    f->list[f->n - 1].other == other && f->list[f->n - 1].hi + 1 == lo) {
		f->list[f->n - 1].hi = hi;
		return;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 32;
		mo_finding *list = realloc(f->list, cap * sizeof(*list));
		if (!list) {
			f->out_of_memory = true;
			return;
		}
		f->list = list;
		f->cap = cap;
	}
	f->list[f->n++] = (mo_finding){code, about, other, lo, hi};
}

void findings_add_segment(mo_resolve_findings *f, const mo_seg *g, const char *code,
			     const mo_pattern_ref *about, const mo_pattern_ref *other)
{
	findings_add(f, code, about, other, g->lo, g->hi);
	if (!f->report)
		return;
	if (f->n_log == f->cap_log) {
		size_t cap = f->cap_log ? f->cap_log * 2 : 32;
		mo_segment_finding *log = realloc(f->log, cap * sizeof(*log));
		if (!log) {
			f->out_of_memory = true;
			return;
		}
		f->log = log;
		f->cap_log = cap;
	}
	f->log[f->n_log++] = (mo_segment_finding){code, about, other};
	f->log_count[g - f->segments]++;
}

void findings_segment_start(mo_resolve_findings *f, const mo_seg *g)
{
	if (f->report)
		f->log_start[g - f->segments] = (uint32_t)f->n_log;
}

/* findings_add merges the replayed findings with the previous ones
 * exactly as computing them would. */
void findings_replay(mo_resolve_findings *f, const mo_seg *twin, const mo_seg *g)
{
	if (!f->report)
		return;
	size_t t = (size_t)(twin - f->segments);
	for (uint32_t k = f->log_start[t]; k < f->log_start[t] + f->log_count[t]; k++)
		findings_add(f, f->log[k].code, f->log[k].about, f->log[k].other, g->lo, g->hi);
}

/* Ranges of every finding with this code/about/other, marking them consumed. */
static void findings_collect(mo_resolve_findings *f, size_t first, char *buf, size_t size)
{
	buf[0] = '\0';
	mo_finding *f0 = &f->list[first];
	for (size_t i = first; i < f->n; i++) {
		mo_finding *x = &f->list[i];
		if (x->code && x->code == f0->code && x->about == f0->about && x->other == f0->other) {
			ranges_append(buf, size, x->lo, x->hi);
			if (i != first)
				x->code = NULL;
		}
	}
}

static void report_limit_hits(const mo_resolve_matches *matches, const mo_config *c,
				 mo_diags *diags)
{
	for (size_t i = 0; i < matches->n_refs; i++) {
		const mo_pattern *p = matches->refs[i].pattern;
		if (matches->refs[i].limit_hit)
			diags_add_at(diags, MO_SEV_ERROR, "regex", c->doc->name, p->key, p->dpath,
					"pattern '%.60s' hit the match limit: it backtracks catastrophically",
					p->regex);
	}
}

static void report_exclude_no_effect(const mo_finding *f, const mo_config *c,
					mo_diags *diags, const char *layers)
{
	const mo_pattern_ref *ref = f->about;
	mo_diag *d = diags_add_at(
		diags, MO_SEV_WARNING, f->code, c->doc->name, ref->pattern->key, ref->pattern->dpath,
		"exclude_op '%.60s' has no effect in layers %s: nothing it matches is recomputed there",
		ref->pattern->regex, layers);
	diag_set_hint(diags, d, "exclude_op applies only inside recomputed regions");
	diag_set_layers(diags, d, layers);
}

static void report_op_recompute_swap(const mo_finding *f, const mo_config *c,
					mo_diags *diags, const char *layers)
{
	const mo_pattern_ref *ref = f->about, *other = f->other;
	const mo_node *at = ref->pattern->layers.at;
	mo_diag *d = diags_add_at(
		diags, MO_SEV_ERROR, f->code, c->doc->name, at ? at : ref->pattern->key,
		ref->pattern->dpath,
		"op_swap '%.60s' and %s.%s (line %d) act on the same module in layers %s",
		ref->pattern->regex, other ? other->rule.section : "recompute",
		other ? other->rule.key : "?", other ? other->rule.line : 0, layers);
	diag_set_hint(diags, d,
			 "an op is either recomputed or swapped: drop one of the two on these layers");
	diag_set_layers(diags, d, layers);
}

void findings_report(mo_resolve_findings *f, const mo_resolve_matches *matches,
			const mo_config *c, mo_diags *diags)
{
	char layers[200];
	report_limit_hits(matches, c, diags);
	for (size_t i = 0; i < f->n; i++) {
		const mo_finding *x = &f->list[i];
		if (!x->code)
			continue;
		findings_collect(f, i, layers, sizeof layers);
		if (strcmp(x->code, "exclude-no-effect") == 0)
			report_exclude_no_effect(x, c, diags, layers);
		else
			report_op_recompute_swap(x, c, diags, layers);
	}
}

void findings_release(mo_resolve_findings *f)
{
	free(f->list);
	free(f->log);
	f->list = NULL;
	f->log = NULL;
}
