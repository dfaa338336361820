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
static void mo_megatron_block_layers(mo_buf *b,
				     const struct mo_megatron_shape *s,
				     int64_t chunks, int64_t n)
{
	int64_t per = chunks > 0 ? s->layers / chunks : s->layers;
	int64_t shown = chunks < 16 ? chunks : 16;
	for (int64_t c = 0; c < shown && per > 0; c++) {
		int64_t lo = c * per, hi = lo + (n < per ? n : per) - 1;
		if (lo == hi)
			mo_buf_printf(b, "%s%lld", c ? ", " : "",
				      (long long)lo);
		else
			mo_buf_printf(b, "%s%lld-%lld", c ? ", " : "",
				      (long long)lo, (long long)hi);
	}
	if (shown < chunks)
		mo_buf_puts(b, ", ...");
}

static const char *const mo_megatron_granularities[] = {"full", "selective",
							NULL};
static const char *const mo_megatron_methods[] = {"uniform", "block", NULL};

/* Megatron's recompute flags, as the recompute section that does the same
 * (a warning: the model file does not carry it). */
void mo_megatron_read_recompute(struct mo_megatron_import *g,
				       const struct mo_megatron_shape *s,
				       int64_t vpp)
{
	const struct mo_megatron_arg *a = NULL, *m = NULL, *n = NULL;
	const char *gran = mo_megatron_choice(g, "--recompute-granularity",
					      mo_megatron_granularities, &a);
	const char *method = mo_megatron_choice(g, "--recompute-method",
						mo_megatron_methods, &m);
	int64_t count = 1;
	mo_megatron_int(g, "--recompute-num-layers", 1, MO_MODEL_MAX_LAYERS,
			&count, &n);
	if (mo_megatron_flag(g, "--recompute-activations")) {
		gran = "selective";
		a = mo_megatron_find(g, "--recompute-activations");
	}
	mo_megatron_find(g, "--recompute-modules");
	mo_megatron_find(g, "--distribute-saved-activations");
	if (!gran)
		return;
	mo_buf b;
	mo_buf_init(&b, 4096);
	if (strcmp(gran, "selective") == 0) {
		mo_buf_printf(
		    &b,
		    "recompute: {mode: select, select_module: {<the modules of "
		    "--recompute-modules, default core_attn>: [0-%lld]}}",
		    (long long)s->layers - 1);
	} else if (method && strcmp(method, "block") == 0) {
		mo_buf_puts(&b,
			    "recompute: {mode: full, full_recompute_layer: [");
		mo_megatron_block_layers(&b, s, mo_model_mul(s->pp, vpp),
					 count);
		mo_buf_puts(&b, "]}");
	} else {
		mo_buf_printf(
		    &b,
		    "recompute: {mode: full, full_recompute_layer: [0-%lld]}",
		    (long long)s->layers - 1);
	}
	mo_diag *d = mo_megatron_diag(
	    g, MO_SEV_WARNING, "megatron-recompute", a->line, a->column,
	    a->flag,
	    "%s %s: recompute belongs in the memopt config, not the model "
	    "file; the estimate of this file alone recomputes nothing",
	    a->flag, gran);
	if (d && !b.failed)
		mo_diag_set_hint(g->diags, d,
				 "the config that does the same: %s", b.data);
	mo_buf_free(&b);
}
