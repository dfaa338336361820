/* MindSpeed-LLM's --noop-layers: identity layers that keep their place in
 * Megatron's pipeline split. The model gets the real layers, the dense
 * layers first counted among them, and the layout of each stage's real
 * ones (megatron_noop_layout). */
#include "import/megatron_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pipeline-split flags that place layers another way: with any of them
 * --noop-layers is left to the `unmodelled` report. */
static const char *const mo_noop_other_splits[] = {
    "--pipeline-model-parallel-layout", "--num-layer-list",
    "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
    "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
    NULL};

/* --schedules-method dualpipev without a virtual pipeline: MindSpeed's
 * V-shaped split (dualpipev_chunks.py:43-53 at 028de58c: 2 x PP chunks of
 * num_layers / PP / 2, rank r holding chunk r and chunk 2PP - 1 - r). Read
 * without marking the flag: the schedule itself stays `unmodelled`. 1:
 * dualpipev, 0: no schedule flag, -1: another (not read). */
static int megatron_noop_dualpipev(const struct mo_megatron_import *g)
{
	const struct mo_megatron_arg *a = NULL;
	for (size_t i = 0; i < g->n_args; i++)
		if (strcmp(g->args[i].flag, "--schedules-method") == 0)
			a = &g->args[i];
	if (!a)
		return 0;
	if (a->n_values != 1 || strcmp(a->value, "dualpipev") != 0 ||
	    megatron_given(g, "--num-layers-per-virtual-pipeline-stage") ||
	    megatron_given(g, "--num-virtual-stages-per-pipeline-rank"))
		return -1;
	return 1;
}

/* One element of --noop-layers (Python's int(x) of a comma-separated
 * item, as MindSpeed's arguments.py reads it): digits with optional
 * spaces; -1 when it is not one. */
static int64_t megatron_noop_item(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	while (end > p && end[-1] == ' ')
		end--;
	if (p == end || end - p > 9)
		return -1;
	int64_t v = 0;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/* MindSpeed-LLM's --noop-layers "i,j,...": the 0-based positions among
 * --num-layers that are identity layers (MindSpeed arguments.py:794-801 at
 * 028de58c: each in [0, num_layers), a set; mindspeed_llm/core/transformer/
 * transformer_block.py:188 at c77308a1 builds a NoopTransformerLayer there,
 * with no parameters, in Megatron's even split of all --num-layers). Read
 * when the split is Megatron's even one (with or without a virtual
 * pipeline); else reported `unmodelled` by megatron_account. */
void megatron_read_noop(struct mo_megatron_import *g, struct mo_megatron_shape *s)
{
	if (!megatron_given(g, "--noop-layers"))
		return;
	for (size_t i = 0; mo_noop_other_splits[i]; i++)
		if (megatron_given(g, mo_noop_other_splits[i]))
			return;
	int dualpipev = megatron_noop_dualpipev(g);
	if (dualpipev < 0)
		return;
	s->dualpipev = dualpipev > 0;
	struct mo_megatron_arg *a = megatron_find(g, "--noop-layers");
	const char *text = megatron_value(g, a);
	if (!text || s->layers < 1)
		return;
	unsigned char *noop = arena_alloc(g->arena, (size_t)s->layers);
	if (!noop) {
		megatron_fail(g, MO_ERR_NOMEM, a->vline, a->vcolumn, "out of memory");
		return;
	}
	memset(noop, 0, (size_t)s->layers);
	int64_t n = 0;
	for (const char *p = text;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		int64_t v = megatron_noop_item(p, end);
		if (v < 0 || v >= s->layers) {
			megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, a->flag,
				      "%s: each element must be a layer in [0, %lld) (MindSpeed "
				      "refuses '%.*s')",
				      a->flag, (long long)s->layers, (int)(end - p > 40 ? 40 : end - p),
				      p);
			return;
		}
		n += !noop[v];
		noop[v] = 1;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (n >= s->layers) {
		megatron_diag(g, MO_SEV_ERROR, "type", a->vline, a->vcolumn, a->flag,
			      "%s leaves no real layer of the %lld", a->flag,
			      (long long)s->layers);
		return;
	}
	s->noop = noop;
	s->n_noop = n;
}

/* How many identity layers are among the positions before `layer`. */
int64_t megatron_noop_below(const struct mo_megatron_shape *s, int64_t layer)
{
	int64_t n = 0;
	for (int64_t i = 0; s->noop && i < layer && i < s->layers; i++)
		n += s->noop[i];
	return n;
}

/* The real layers among positions [chunk x per, (chunk + 1) x per). */
static int64_t megatron_noop_real(const struct mo_megatron_shape *s, int64_t chunk, int64_t per)
{
	return per - (megatron_noop_below(s, (chunk + 1) * per) - megatron_noop_below(s, chunk * per));
}

/* With --noop-layers, the per-stage layers as a pipeline layout: Megatron's
 * even split gives virtual stage k (chunk k / PP of rank k % PP) the
 * positions [k x per, (k + 1) x per), per = num_layers / (PP x VPP); a
 * stage's real layers are those positions less its identity layers, the
 * MTP layers on the last (Megatron's post-process stage). Under dualpipev
 * rank r holds the real layers of its two V chunks; the loss and MTP,
 * which dualpipev runs on rank 0, stay on the last stage here. */
void megatron_noop_layout(struct mo_megatron_import *g, struct mo_megatron_out *o,
				 const struct mo_megatron_shape *s)
{
	int64_t stages = model_mul(s->pp, s->vpp > 1 ? s->vpp : 1);
	int64_t chunks = s->dualpipev ? model_mul(s->pp, 2) : stages;
	if (!s->noop || chunks < 1 || s->layers % chunks != 0)
		return; /* an uneven split is reported by its own rule */
	int64_t per = s->layers / chunks;
	mo_buf b;
	buf_init(&b, 0);
	buf_puts(&b, "E");
	for (int64_t k = 0; k < stages; k++) {
		if (k > 0)
			buf_puts(&b, "|");
		int64_t real = megatron_noop_real(s, k, per);
		if (s->dualpipev)
			real += megatron_noop_real(s, chunks - 1 - k, per);
		if (real > 0)
			buf_printf(&b, "t*%lld", (long long)real);
	}
	if (s->mtp > 0)
		buf_printf(&b, "m*%lld", (long long)s->mtp);
	buf_puts(&b, "L");
	const char *text = b.failed ? NULL : arena_strdup(g->arena, b.data);
	buf_free(&b);
	if (!text) {
		megatron_fail(g, MO_ERR_NOMEM, 0, 0, "out of memory");
		return;
	}
	megatron_put_str(o, MO_SEC_PAR, "pipeline_model_parallel_layout", text, MF_STAGES,
			 megatron_find(g, "--noop-layers"),
			 "Megatron's even split with the --noop-layers left out");
}
