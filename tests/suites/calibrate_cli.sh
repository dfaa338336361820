#!/bin/sh
# `memopt calibrate` with training logs (tests/data/steplog): a run given
# as a Megatron-LM or MindSpore Transformers log fits exactly as the same
# run given the log's step time in seconds (the median after the first two
# time lines, worked out by hand in tests/data/steplog/SOURCES.md); a log
# without time lines, with too few or with a malformed time is refused
# with exit 2 and the reason (line and column when there is one).
# MEMOPT = binary.
set -u
cd "$(dirname "$0")/../.."
MEMOPT=${MEMOPT:-$(pwd)/build/memopt}
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
S=$(pwd)/tests/data/megatron/steptime
L=$(pwd)/tests/data/steplog

runs() { # runs FILE FIRST SECOND
  printf '%s\n' "# two Megatron-LM CI runs on h100" \
    "$S/gpt3_mcore_te_tp2_pp2_cp2.h100.yaml - $2" \
    "$S/gpt3_mcore_te_tp1_pp4_vp1.h100.yaml - $3" > "$1"
}
runs "$tmp/seconds.txt" 0.29065 0.092
runs "$tmp/logs.txt" "$L/cli-megatron.log" "$L/cli-mindformers.log"
"$MEMOPT" calibrate --constants launch_us --json "$tmp/seconds.txt" > "$tmp/seconds.json" 2> "$tmp/err"
rc1=$?
"$MEMOPT" calibrate --constants launch_us --json "$tmp/logs.txt" > "$tmp/logs.json" 2> "$tmp/err"
rc2=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s "$tmp/seconds.json" "$tmp/logs.json" &&
   grep -q '"measured_seconds": 0.29065' "$tmp/logs.json" &&
   grep -Eq '"measured_seconds": 0\.(092|0919999)' "$tmp/logs.json"; then
  ok "logs fit as their step times in seconds (0.29065 s, 0.092 s)"
else
  bad "logs against seconds: exit $rc1 / $rc2"; cat "$tmp/err"
  diff "$tmp/seconds.json" "$tmp/logs.json" | head -20
fi
"$MEMOPT" calibrate --constants launch_us -o "$tmp/device.yaml" "$tmp/logs.txt" 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'preset: h100' "$tmp/device.yaml" && grep -q 'median |error|' "$tmp/err"
then ok "text answer with logs: the device map and the table"
else bad "text answer with logs: exit $rc"; fi

refused() { # refused NAME LOGTEXT EXPECTED-STDERR
  printf '%b' "$2" > "$tmp/bad.log"
  runs "$tmp/bad.txt" "$tmp/bad.log" 0.092
  "$MEMOPT" calibrate "$tmp/bad.txt" > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] && grep -qF "$3" "$tmp/err"; then ok "$1: exit 2, '$3'"
  else bad "$1: exit $rc"; cat "$tmp/err"; fi
}
refused "no time line" "training ...\n" "bad.log: no per-iteration time line"
refused "two time lines" "per_step_time: 5ms\nper_step_time: 5ms\n" \
  "bad.log: 2 time lines: the first 2 are warm-up"
refused "garbage time" "x\n iteration 1/ 2 | elapsed time per iteration (ms): abc |\n" \
  "bad.log:2:52: elapsed time per iteration (ms):"
refused "huge time" "elapsed time per iteration (ms): 99999999999.0 |\n" "bad.log:1:33:"

if [ $fails -ne 0 ]; then echo "$fails failed"; exit 1; fi
echo "calibrate_cli: all passed"
