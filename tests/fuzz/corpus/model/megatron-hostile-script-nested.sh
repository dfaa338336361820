B=${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-1}}}}}}}}}}}}
A=( --num-layers $B --hidden-size 8 )
torchrun x.py ${A[@]}
