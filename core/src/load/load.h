/* load: where a model comes from, decided once (preset, model text, the
 * config's own training YAML), for mo_check and the public loaders
 * (mo_model_load, mo_model_preset, mo_config_model in memopt/model.h and
 * memopt/config.h). */
#ifndef MEMOPT_LOAD_H
#define MEMOPT_LOAD_H

#include "model/model.h"

/* The model mo_check uses: in->preset, else in->model (a text that holds
 * no model is a usage error), else the model the config file carries
 * (none: *model stays NULL). Returns 0, or -1 with err filled. */
int load_model(mo_model **model, mo_diags *diags, const mo_config *c, const mo_input *in,
		  mo_error *err);

#endif
