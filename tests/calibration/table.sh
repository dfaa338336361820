#!/bin/sh
# Prints the README's "Calibration (Ascend 910B)" table: each measured peak
# of tests/calibration/ascend-910b.md against `memopt estimate --json`
# (the stage's allocated peak). Run from the repository root:
#   tests/calibration/table.sh [MEMOPT]             the calibration rows
#   tests/calibration/table.sh --heldout [MEMOPT]   runs the rules were NOT
#       fitted on: the same model families as measured and published by the
#       pynative-cost-evaluator authors (GitHub suhaibo666/autoparallel,
#       analysis/realmachine/); see notes/calibration.md "Held-out check".
#   tests/calibration/table.sh --dsv4 [MEMOPT]      the DeepSeek-V4-style runs
#       of ascend-910b.md section C (YAMLs under dsv4/, origin in each
#       header; notes/dsv4.md), one row per pipeline stage.
set -eu
rows=calibration
if [ "${1:-}" = --heldout ]; then rows=heldout; shift; fi
if [ "${1:-}" = --dsv4 ]; then rows=dsv4; shift; fi
M=${1:-${MEMOPT:-build/memopt}}
C=tests/calibration

calibration_rows() {
  cat <<'ROWS'
A: MHA, pp 1|std|none.yaml|0|24191.1
A: GQA, pp 1|std-gqa|none.yaml|0|23039.1
A: MHA, pp 2, stage 0|std-mha-pp2.yaml|none.yaml|0|15946.1
A: MHA, pp 2, stage 1|std-mha-pp2.yaml|none.yaml|1|19227.3
A: GQA, pp 2, stage 0|std-gqa-pp2.yaml|none.yaml|0|15116.0
A: GQA, pp 2, stage 1|std-gqa-pp2.yaml|none.yaml|1|18459.3
B: 2 layers, full recompute|dsv3-2l.yaml|full-0-1.yaml|0|11733.0
B: 6 layers, full recompute|dsv3-6l.yaml|full-0-5.yaml|0|13213.2
B: 4 layers, full recompute, seq 2048|dsv3-4l-s2048.yaml|full-0-3.yaml|0|8810.5
B: 4 layers, no recompute|dsv3-4l.yaml|none.yaml|0|15285.4
B: 4 layers, select self_attention|dsv3-4l.yaml|select-attn-0-3.yaml|0|14716.4
B: 8 layers, select self_attention (ledger read)|dsv3-8l.yaml|select-attn-0-7.yaml|0|18828.2
B: 8 layers, select mlp (ledger read)|dsv3-8l.yaml|select-mlp-0-7.yaml|0|15764.7
B: 8 layers, select feed_forward = none (ledger read)|dsv3-8l.yaml|select-ffn-0-7.yaml|0|19967.3
ROWS
}

# scorecard_anchors.py of the same repository (each with its real figure),
# validation_matrix.md and cp2_none/DIAGNOSIS.md: DP 2 full, EP 2, CP 2
# (colossal / ulysses). The 8-layer select rows (self_attention, mlp,
# feed_forward = no cell matched = no recompute) were held out until session
# 4, when their allocation ledgers were read to write the fp32-parameter rules
# (notes/ledger-decode-dsv3-mini.md): they are calibration rows now.
heldout_rows() {
  cat <<'ROWS'
B: 8 layers, full recompute|dsv3-8l.yaml|full-0-7.yaml|0|13953.3
B: 4 layers, EP 2, full recompute|dsv3-4l-ep2.yaml|full-0-3.yaml|0|12474.1
B: 4 layers, CP 2 (colossal), micro-batch 2, full|dsv3-4l-cp2.yaml|full-0-3.yaml|0|12433.0
B: 4 layers, CP 2 (ulysses), micro-batch 2, full|dsv3-4l-cp2.yaml|full-0-3.yaml|0|12441.0
B: 8 layers, CP 2, micro-batch 2, no recompute|dsv3-8l-cp2.yaml|none.yaml|0|20119.4
ROWS
}

# the measured figures of section C (liveness_ab_validate.py REAL and the
# final report's MTP run); the model file is also the recompute config
dsv4_rows() {
  for f in "fused full recompute|fused-pp4-full|24153.3 14641.7 14097.7 23508.0" \
           "fused no recompute|fused-pp4-none|30395.0 21019.4 17799.9 27822.0" \
           "unfused full recompute|unfused-pp4-full|50187.9 43940.0 43407.1 47888.1" \
           "fused full recompute, MTP 1|fused-pp4-full-mtp1|- - - 39898"; do
    what=${f%%|*}; rest=${f#*|}; file=${rest%%|*}; figs=${rest#*|}
    s=0
    for m in $figs; do
      [ "$m" = - ] || echo "C: $what, stage $s|dsv4/$file.yaml|dsv4/$file.yaml|$s|$m"
      s=$((s + 1))
    done
  done
}

echo "| run | measured MiB | estimated MiB | error |"
echo "|---|---:|---:|---:|"
"${rows}_rows" | while IFS='|' read -r what model config stage measured; do
  case $model in *.yaml) model=$C/$model ;; esac
  est=$("$M" estimate --json --model "$model" "$C/$config" |
        python3 -c "import json,sys; print(json.load(sys.stdin)['stages'][$stage]['peak_bytes'])")
  python3 -c "
e=$est/1048576; m=$measured
print('| $what | %.1f | %.1f | %+.2f%% |' % (m, e, (e-m)/m*100))"
done
