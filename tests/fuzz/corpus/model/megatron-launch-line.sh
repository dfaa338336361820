#!/bin/bash
CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes=2 \
  pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 --seq-length 8192 --max-position-embeddings 8192 --swiglu --micro-batch-size 1 --global-batch-size 128 --bf16 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --recompute-granularity full --recompute-method block --recompute-num-layers 4 --data-path '/data/my corpus' 2>&1 | tee log
