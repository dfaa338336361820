/* Megatron-LM arguments: the recompute flags, which are a memopt config,
 * not the model: reported with the config that does the same. */
#include "import/megatron_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- recompute: a memopt config, not the model
 * ---------------------------------- */

/* The layers --recompute-method block N recomputes: the first N of every
 * pipeline chunk (PP x VPP chunks of equal size). */
static void megatron_block_layers(mo_buf *b,
				     const struct mo_megatron_shape *s,
				     int64_t chunks, int64_t n)
{
	int64_t per = chunks > 0 ? s->layers / chunks : s->layers;
	int64_t shown = chunks < 16 ? chunks : 16;
	for (int64_t c = 0; c < shown && per > 0; c++) {
		int64_t lo = c * per, hi = lo + (n < per ? n : per) - 1;
		if (lo == hi)
			buf_printf(b, "%s%lld", c ? ", " : "",
				      (long long)lo);
		else
			buf_printf(b, "%s%lld-%lld", c ? ", " : "",
				      (long long)lo, (long long)hi);
	}
	if (shown < chunks)
		buf_puts(b, ", ...");
}

static const char *const mo_megatron_granularities[] = {"full", "selective",
							NULL};
static const char *const mo_megatron_methods[] = {"uniform", "block", NULL};

/* Megatron's recompute flags, as the recompute section that does the same
 * (a warning: the model file does not carry it). */
void megatron_read_recompute(struct mo_megatron_import *g,
				       const struct mo_megatron_shape *s,
				       int64_t vpp)
{
	const struct mo_megatron_arg *a = NULL, *m = NULL, *n = NULL;
	const char *gran = megatron_choice(g, "--recompute-granularity",
					      mo_megatron_granularities, &a);
	const char *method = megatron_choice(g, "--recompute-method",
						mo_megatron_methods, &m);
	int64_t count = 1;
	megatron_int(g, "--recompute-num-layers", 1, MO_MODEL_MAX_LAYERS,
			&count, &n);
	if (megatron_flag(g, "--recompute-activations")) {
		gran = "selective";
		a = megatron_find(g, "--recompute-activations");
	}
	megatron_find(g, "--recompute-modules");
	megatron_find(g, "--distribute-saved-activations");
	if (!gran)
		return;
	mo_buf b;
	buf_init(&b, 4096);
	if (strcmp(gran, "selective") == 0) {
		buf_printf(
		    &b,
		    "recompute: {mode: select, select_module: {<the modules of "
		    "--recompute-modules, default core_attn>: [0-%lld]}}",
		    (long long)s->layers - 1);
	} else if (method && strcmp(method, "block") == 0) {
		buf_puts(&b,
			    "recompute: {mode: full, full_recompute_layer: [");
		megatron_block_layers(&b, s, model_mul(s->pp, vpp),
					 count);
		buf_puts(&b, "]}");
	} else {
		buf_printf(
		    &b,
		    "recompute: {mode: full, full_recompute_layer: [0-%lld]}",
		    (long long)s->layers - 1);
	}
	mo_diag *d = megatron_diag(
	    g, MO_SEV_WARNING, "megatron-recompute", a->line, a->column,
	    a->flag,
	    "%s %s: recompute belongs in the memopt config, not the model "
	    "file; the estimate of this file alone recomputes nothing",
	    a->flag, gran);
	if (d && !b.failed)
		diag_set_hint(g->diags, d,
				 "the config that does the same: %s", b.data);
	buf_free(&b);
}
