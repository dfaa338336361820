/* The short names the op tables (ops_mindspore.c, ops_pytorch.c) are written in: a row is a
 * line of data, and `.when = C_SP | C_TP` reads where `.when = MO_C_SP | MO_C_TP` would wrap.
 * One list, so both frameworks' tables say a condition the same way. */
#ifndef MEMOPT_ESTIMATE_OPS_NAMES_H
#define MEMOPT_ESTIMATE_OPS_NAMES_H

#include "estimate/estimate_internal.h"

/* the collective an op row runs */
#define AG MO_COMM_ALLGATHER
#define RS MO_COMM_REDUCESCATTER
#define AR MO_COMM_ALLREDUCE
#define A2A MO_COMM_ALLTOALL

/* the conditions a row holds under (.when) or not (.unless) */
#define C_GATED MO_C_GATED
#define C_LN MO_C_LN
#define C_FLASH MO_C_FLASH
#define C_HDROP MO_C_HDROP
#define C_ADROP MO_C_ADROP
#define C_GQA MO_C_GQA
#define C_SP MO_C_SP
#define C_TP MO_C_TP
#define C_CP MO_C_CP
#define C_QLORA MO_C_QLORA
#define C_SHARED MO_C_SHARED
#define C_EP MO_C_EPCOMM
#define C_FUSED MO_C_FUSEDACT
#define C_GELU MO_C_GELU
#define C_P32 MO_C_P32
#define C_TEKV MO_C_TEKV
#define C_LPOS MO_C_LPOS
#define C_QKLN MO_C_QKLN

#endif
