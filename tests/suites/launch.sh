#!/bin/sh
# memopt launch: a real child command sees MEMOPT_PLAN / MEMOPT_CONFIG and the
# files hold the right JSON / YAML; refusals (errors, missing `--`, no command,
# unrunnable command, --max-memory) never run the child. MEMOPT = the binary.
set -u
cd "$(dirname "$0")/../.."
MEMOPT=${MEMOPT:-$(pwd)/build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t"
TMPDIR=$tmp/t
export TMPDIR
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
# expect NAME WANT_RC GOT_RC
expect() { if [ "$3" = "$2" ]; then ok "$1"; else bad "$1: exit $3, want $2"; fi; }

cat > "$tmp/good.yaml" <<'EOF'
recompute:
  mode: full
  full_recompute_layer: [0-15]
swap:
  enable: True
  default_prefetch: 2
  layer_swap:
    - layers: [16-29]
EOF
cat > "$tmp/bad.yaml" <<'EOF'
recompute:
  mode: full
  full_recompute_layer: [0-15]
  mode: select
EOF

# 1. a python child reads both files through the environment
cat > "$tmp/child.py" <<'EOF'
import json, os, stat, sys, yaml
plan_path, cfg_path = os.environ["MEMOPT_PLAN"], os.environ["MEMOPT_CONFIG"]
plan = json.load(open(plan_path))
cfg = yaml.safe_load(open(cfg_path))
d = os.path.dirname(plan_path)
assert os.path.dirname(cfg_path) == d, (plan_path, cfg_path)
assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, oct(os.stat(d).st_mode)
for p in (plan_path, cfg_path):
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600, p
layers = plan["layers"]
assert len(layers) == 32, len(layers)
assert [l["layer"] for l in layers] == list(range(32))
def acts(i): return [(a["path"], a["action"]) for a in layers[i]["actions"]]
assert acts(0) == [("", "recompute")] and acts(15) == [("", "recompute")], acts(0)
assert acts(16) == [("", "swap")] and acts(29) == [("", "swap")], acts(16)
assert acts(30) == [] and acts(31) == [], acts(31)
assert layers[0]["actions"][0]["rule"]["key"] == "full_recompute_layer"
assert plan["prefetch"] == 2 and plan["model"] == "llama2-7b", plan
assert cfg["recompute"]["full_recompute_layer"] == ["0-15"], cfg
assert cfg["swap"]["layer_swap"][0]["layers"], cfg
assert sys.argv[1:] == ["a b", "c"], sys.argv
open(os.environ["MARK"], "w").write("ran")
print("child ok")
EOF
MARK=$tmp/mark1 "$MEMOPT" launch "$tmp/good.yaml" --model llama2-7b -- \
  "$PY" "$tmp/child.py" "a b" c > "$tmp/out1" 2> "$tmp/err1"
rc=$?
expect "valid config: the child runs" 0 $rc
if [ -f "$tmp/mark1" ] && grep -q '^child ok$' "$tmp/out1"; then ok "child sees the plan and the config"
else bad "child output: $(cat "$tmp/out1" "$tmp/err1")"; fi
grep -q 'MEMOPT_PLAN=' "$tmp/err1" && ok "memopt's own messages on stderr" || bad "no MEMOPT_PLAN line on stderr"
if grep -q MEMOPT "$tmp/out1"; then bad "memopt wrote to the child's stdout"; else ok "stdout belongs to the child"; fi

# 2. a shell child: echo $MEMOPT_PLAN, cat it; the exit status is the child's
"$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b -- sh -c 'echo "$MEMOPT_PLAN"; cat "$MEMOPT_PLAN"; exit 7' \
  > "$tmp/out2" 2> /dev/null
rc=$?
expect "exec: the child's exit status is launch's" 7 $rc
if head -n 1 "$tmp/out2" | grep -q "^$TMPDIR/memopt-launch-.*/plan.json$" &&
   tail -n +2 "$tmp/out2" | "$PY" -c 'import json,sys; j=json.load(sys.stdin); assert len(j["layers"]) == 32'
then ok "sh child: path under TMPDIR, JSON parses"; else bad "sh child output: $(head -c 300 "$tmp/out2")"; fi

# 3. a whole training YAML: MEMOPT_CONFIG keeps every other key
real=tests/data/real-configs/pynative_ds3.yaml
if [ -f "$real" ]; then
  "$MEMOPT" launch "$real" --devices 8 -- "$PY" -c '
import json, os, sys, yaml
src, cfg = yaml.safe_load(open(sys.argv[1])), yaml.safe_load(open(os.environ["MEMOPT_CONFIG"]))
assert src == cfg, "the exported training YAML differs"
plan = json.load(open(os.environ["MEMOPT_PLAN"]))
assert plan["devices"] == 8 and len(plan["layers"]) > 1
print("real ok")' "$real" > "$tmp/out3" 2> "$tmp/err3"
  rc=$?
  if [ $rc = 0 ] && grep -q 'real ok' "$tmp/out3"; then ok "training YAML $real"
  else bad "training YAML: exit $rc $(cat "$tmp/out3" "$tmp/err3")"; fi
else
  echo "skip training YAML: $real absent"
fi

# 4. refusals: the child never runs
"$MEMOPT" launch "$tmp/bad.yaml" --model llama2-7b -- touch "$tmp/mark4" 2> "$tmp/err4"
rc=$?
expect "bad config refused" 1 $rc
[ ! -e "$tmp/mark4" ] && ok "bad config: the child did not run" || bad "bad config: the child ran"
grep -q "bad.yaml:4:3: error\[duplicate-key\]\|bad.yaml:4:3: error\[" "$tmp/err4" && ok "diagnostic with line:col" \
  || bad "bad config diagnostics: $(cat "$tmp/err4")"
grep -q 'refusing to run touch' "$tmp/err4" && ok "refusal names the command" || bad "no refusal message"

"$MEMOPT" launch "$tmp/good.yaml" --model llama2-7b touch "$tmp/mark5" 2> "$tmp/err5"
rc=$?
expect "missing -- refused" 2 $rc
[ ! -e "$tmp/mark5" ] && ok "missing --: nothing ran" || bad "missing --: the child ran"
grep -q 'missing `--`' "$tmp/err5" && ok "missing -- message" || bad "message: $(cat "$tmp/err5")"

"$MEMOPT" launch "$tmp/good.yaml" --model llama2-7b -- 2> /dev/null
expect "no command after -- refused" 2 $?
"$MEMOPT" launch -- true 2> /dev/null
expect "no CONFIG refused" 2 $?
"$MEMOPT" launch "$tmp/good.yaml" "$tmp/good.yaml" -m llama2-7b -- true 2> /dev/null
expect "two CONFIGs refused" 2 $?
"$MEMOPT" launch "$tmp/missing.yaml" -m llama2-7b -- touch "$tmp/mark6" 2> /dev/null
expect "unreadable CONFIG" 2 $?
"$MEMOPT" launch "$tmp/good.yaml" -- touch "$tmp/mark6" 2> "$tmp/err6"
expect "no model: refused (model-needed)" 1 $?
grep -q "model-needed" "$tmp/err6" && ok "no model: model-needed diagnostic" || bad "no model: $(cat "$tmp/err6")"
[ ! -e "$tmp/mark6" ] && ok "no model: nothing ran" || bad "no model: the child ran"
"$MEMOPT" launch "$tmp/good.yaml" -m no-such-preset -- true 2> /dev/null
expect "unknown preset" 2 $?

rm -rf "$TMPDIR"/memopt-launch-*
"$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b -- "$tmp/no-such-command" 2> "$tmp/err7"
expect "unrunnable command" 2 $?
grep -q 'cannot run' "$tmp/err7" && ok "unrunnable: message" || bad "unrunnable message: $(cat "$tmp/err7")"
[ -z "$(ls -A "$TMPDIR")" ] && ok "unrunnable: the temp directory is removed" \
  || bad "left behind: $(ls -A "$TMPDIR")"

"$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b --max-memory lots -- true 2> /dev/null
expect "--max-memory with a bad size" 2 $?

# 5. --max-memory: a peak above the limit refuses, a generous one runs
"$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b --max-memory 1MiB -- touch "$tmp/mark8" 2> "$tmp/err8"
rc=$?
if grep -q 'estimator, which is not built' "$tmp/err8"; then
  expect "--max-memory before the estimator: usage" 2 $rc
  [ ! -e "$tmp/mark8" ] && ok "--max-memory: nothing ran" || bad "--max-memory: the child ran"
else
  expect "--max-memory 1MiB refused" 1 $rc
  [ ! -e "$tmp/mark8" ] && ok "--max-memory 1MiB: the child did not run" || bad "--max-memory 1MiB: the child ran"
  grep -qi 'peak' "$tmp/err8" && ok "refusal names the peak" || bad "refusal: $(cat "$tmp/err8")"
  "$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b --max-memory 100TiB -- touch "$tmp/mark9" 2> "$tmp/err9"
  expect "--max-memory 100TiB runs" 0 $?
  [ -e "$tmp/mark9" ] && ok "--max-memory 100TiB: the child ran" || bad "--max-memory 100TiB: no child"
  grep -q 'estimated peak [0-9.]* GiB' "$tmp/err9" && ok "the estimate is printed" || bad "no estimate: $(cat "$tmp/err9")"
  # the limit sits between the estimate's peak and one byte below it
  peak=$("$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b -- "$PY" -c \
    'import json,os; print(json.load(open(os.environ["MEMOPT_PLAN"]))["estimate"]["peak_bytes"])' 2> /dev/null)
  case $peak in
    ''|*[!0-9]*) bad "plan.json has no estimate.peak_bytes ($peak)" ;;
    *)
      ok "plan.json carries the estimate (peak $peak bytes)"
      "$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b --max-memory "$peak" -- true 2> /dev/null
      expect "--max-memory = the peak runs" 0 $?
      "$MEMOPT" launch "$tmp/good.yaml" -m llama2-7b --max-memory $((peak - 1)) -- touch "$tmp/mark10" 2> /dev/null
      expect "--max-memory = the peak - 1 refused" 1 $?
      [ ! -e "$tmp/mark10" ] && ok "peak - 1: the child did not run" || bad "peak - 1: the child ran"
      ;;
  esac
  # no device count: no estimate, so --max-memory cannot be honoured
  if [ -f "$real" ]; then
    "$MEMOPT" launch "$real" --max-memory 1000GiB -- touch "$tmp/mark11" 2> "$tmp/err11"
    rc=$?
    if grep -q 'no estimate\|needs an estimate' "$tmp/err11"; then
      expect "--max-memory without a device count refused" 1 $rc
      [ ! -e "$tmp/mark11" ] && ok "no device count: the child did not run" || bad "no device count: the child ran"
    fi
  fi
fi

# 6. CONFIG on stdin
"$MEMOPT" launch - -m llama2-7b -- sh -c 'grep -q full_recompute_layer "$MEMOPT_CONFIG"' \
  < "$tmp/good.yaml" 2> /dev/null
expect "CONFIG from stdin" 0 $?

if [ $fails -ne 0 ]; then echo "launch: $fails failed"; exit 1; fi
echo "launch: all passed"
