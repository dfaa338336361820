/* mo_check: the sequence every face runs (CLI, HTTP API, launcher), kept in
 * one place so the faces cannot drift. */
#include "config/config.h"
#include "load/load.h"
#include "resolve/resolve.h"

#include <string.h>

/* A graph-mode recompute_config whose file names no layer count is placed
 * on the model's layers (none: a model-needed warning). */
static void check_place_graph(mo_config *c, mo_diags *diags, const mo_model *m)
{
	config_graph_place(c, diags, m ? mo_model_num_layers(m) : 0, m ? mo_model_mtp_layers(m) : 0);
}

int mo_check(mo_config **cfg, mo_model **model, mo_diags *diags, const mo_input *in,
	     mo_error *err)
{
	return mo_check_resolved(cfg, model, NULL, diags, in, err);
}

int mo_check_resolved(mo_config **cfg, mo_model **model, mo_resolved **resolved,
		      mo_diags *diags, const mo_input *in, mo_error *err)
{
	*cfg = NULL;
	*model = NULL;
	if (resolved)
		*resolved = NULL;
	if (!in || !in->config) {
		error_set(err, MO_ERR_USAGE, 0, 0, "no config text");
		return -1;
	}
	if (mo_config_parse(cfg, diags, in->config, in->config_len,
			    in->config_name ? in->config_name : "<config>", in->limits, err) != 0)
		return -1;
	if (in->shared_model) {
		check_place_graph(*cfg, diags, in->shared_model);
		mo_model_check(in->shared_model, diags);
		mo_validate_resolve(diags, *cfg, in->shared_model, resolved);
		mo_diags_sort(diags);
		return 0;
	}
	if (load_model(model, diags, *cfg, in, err) != 0) {
		mo_config_free(*cfg);
		*cfg = NULL;
		return -1;
	}
	check_place_graph(*cfg, diags, *model);
	if (*model) {
		if (in->devices > 0)
			mo_model_set_devices(*model, in->devices);
		mo_model_check(*model, diags);
	}
	mo_validate_resolve(diags, *cfg, *model, resolved);
	mo_diags_sort(diags);
	return 0;
}
