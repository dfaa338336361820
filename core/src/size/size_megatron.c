/* Megatron-LM's own recompute for a layout that needs a plan: its block
 * method (megatron/training/arguments.py --recompute-method block;
 * transformer_block.py _checkpointed_forward), full recompute of the first
 * n layers of every model chunk, the least n that fits (every layer: the
 * uniform method). A plan that swaps or recomputes selected modules per
 * layer, which memopt's planner may find cheaper, is not one Megatron-LM's
 * arguments can run. */
#include "size/size.h"
#include "config/config.h"
#include "estimate/estimate.h"
#include "planner/planner.h"

#include <stdio.h>
#include <string.h>

/* The config of block n on layout c: the first n layers of each model
 * chunk (all of a chunk of n or fewer, as Megatron-LM's block method runs
 * a chunk's layers below n). Returns the parsed config, or NULL with err. */
static mo_config *megatron_block_config(const mo_size_cand *c, int64_t layers, int64_t n,
					mo_error *err)
{
	mo_buf b;
	char item[64];
	buf_init(&b, 0);
	static const char head[] = "recompute:\n  mode: full\n  full_recompute_layer: [";
	buf_append(&b, head, sizeof head - 1);
	bool any = false;
	for (int64_t k = 0; k < c->pp * c->vpp; k++) {
		int64_t first, len;
		size_chunk_span(c, layers, k, &first, &len);
		int64_t take = len < n ? len : n;
		if (take < 1)
			continue;
		int w = snprintf(item, sizeof item, "%s%lld-%lld", any ? ", " : "",
				 (long long)first, (long long)(first + take - 1));
		buf_append(&b, item, (size_t)w);
		any = true;
	}
	buf_append(&b, "]\n", 2);
	mo_config *cfg = NULL;
	if (b.failed)
		error_set(err, MO_ERR_NOMEM, 0, 0, "out of memory");
	else if (mo_config_parse(&cfg, NULL, b.data, b.len, "<megatron block>", NULL, err) != 0)
		cfg = NULL;
	buf_free(&b);
	return cfg;
}

/* The peak of block n on wm: 0 with *peak, or -1 with err. */
static int megatron_block_peak(uint64_t *peak, const mo_model *wm, const mo_size_cand *c,
			       int64_t n, mo_error *err)
{
	mo_config *cfg = megatron_block_config(c, wm->num_layers, n, err);
	mo_estimate *e = NULL;
	int rc = cfg ? est_run_unlisted(&e, cfg, wm, err) : -1;
	if (rc == 0)
		*peak = mo_estimate_peak_bytes(e);
	mo_estimate_free(e);
	mo_config_free(cfg);
	return rc;
}

int size_megatron_plan(mo_planner_result **out, const mo_model *wm, const mo_size_cand *c,
		       uint64_t budget, mo_error *err)
{
	*out = NULL;
	/* the longest chunk: block n of it recomputes every layer */
	int64_t per = 0;
	for (int64_t k = 0; k < c->pp * c->vpp; k++) {
		int64_t first, len;
		size_chunk_span(c, wm->num_layers, k, &first, &len);
		per = len > per ? len : per;
	}
	uint64_t peak = 0;
	if (per < 1 || megatron_block_peak(&peak, wm, c, per, err) != 0)
		return per < 1 ? 0 : -1;
	if (peak > budget)
		return 0; /* not even every layer */
	int64_t lo = 1, hi = per; /* block hi fits; the least n that does */
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (megatron_block_peak(&peak, wm, c, mid, err) != 0)
			return -1;
		if (peak <= budget)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* the planner keeps a start that fits as it is: its result carries the
	 * config, its YAML and its estimate as any plan's */
	mo_config *start = megatron_block_config(c, wm->num_layers, hi, err);
	mo_planner_input pin = {.model = wm, .budget = budget, .start = start,
				.allow = MO_PLAN_ALLOW_FULL, .no_staged = 1};
	mo_planner_options opts = {.no_min_peak = true};
	int rc = start ? planner_run_opts(out, &pin, &opts, err) : -1;
	mo_config_free(start);
	if (rc == 0 && !mo_planner_fits(*out)) {
		mo_planner_result_free(*out);
		*out = NULL;
	}
	return rc;
}
