L=${LAYERS:-4}
CKPT=$1
NOW=$(date +%s)
M=( --num-layers $L --hidden-size ${L} "--num-attention-heads 2" )
D=( --save $CKPT --load $NOW )
M+=( --seq-length 8 )
if [ -n "$X" ]; then
  M+=( --bf16 )
fi
export NODES=2
torchrun --nproc_per_node 4 --nnodes $NODES train.py ${M[@]} "${D[@]}"
