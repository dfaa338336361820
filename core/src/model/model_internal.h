/* Private to the model handle's files (the model/ files). */
#ifndef MEMOPT_MODEL_INTERNAL_H
#define MEMOPT_MODEL_INTERNAL_H

#include "model/model.h"

/* micro_batch_num from global / (local * dp) when possible. */
void model_derive_batches(mo_model *m);

#endif
