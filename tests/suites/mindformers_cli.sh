#!/bin/sh
# The CLI on MindSpore Transformers files (tests/data/mindformers): without a
# model, `estimate` and `expand` answer with a `model-needed` error at the
# model section in both forms, JSON included, with the same exit status (2);
# a graph-mode file estimates with its own recompute_config applied; an
# unknown device count names the key that leaves it open. MEMOPT = binary.
set -u
cd "$(dirname "$0")/../.."
MEMOPT=${MEMOPT:-$(pwd)/build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
D=tests/data/mindformers

# the template names no architecture (model.model_config is at line 52:3)
for cmd in estimate expand; do
  "$MEMOPT" $cmd --json $D/master/llm_pretrain_dense_template.yaml > "$tmp/out.json" 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] && $PY - "$tmp/out.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
e = [x for x in d["errors"] if x["code"] == "model-needed"]
assert d["valid"] is False, d
assert len(e) == 1 and e[0]["line"] == 52 and e[0]["column"] == 3, e
assert e[0]["path"] == "model.model_config", e
PYEOF
  then ok "$cmd --json without a model: model-needed at 52:3, exit 2"
  else bad "$cmd --json without a model (exit $rc)"; fi
  "$MEMOPT" $cmd $D/master/llm_pretrain_dense_template.yaml > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] && grep -q ':52:3: error\[model-needed\]' "$tmp/err"; then
    ok "$cmd without a model (text): same error, exit 2"
  else bad "$cmd without a model (text): exit $rc"; fi
done

# DeepSeek-V3 671B (r1.5.0): MoE from moe_config, so no false `parallel`
# error; its recompute_config per-stage list is applied (layer 3, the
# 4th of stage 0, is not recomputed: the first stage's count is 3)
"$MEMOPT" expand --json $D/r1.5.0/pretrain_deepseek3_671b.yaml > "$tmp/x.json" 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] && $PY - "$tmp/x.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
full = {l["layer"] for l in d["layers"]
        if any(a["path"] == "" and a["action"] == "recompute" for a in l["actions"])}
want = set(range(0, 3)) | set(range(4, 55)) | {56, 57}
assert full == want, sorted(full ^ want)
PYEOF
then ok "deepseek3 671b: expand applies recompute_config"
else bad "deepseek3 671b expand (exit $rc)"; cat "$tmp/err"; fi
"$MEMOPT" estimate --json $D/r1.5.0/pretrain_deepseek3_671b.yaml > "$tmp/e.json" 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] && $PY -c "import json,sys; d=json.load(open('$tmp/e.json')); assert d['peak_bytes'] > 0" ; then
  ok "deepseek3 671b: estimates (exit 0)"
else bad "deepseek3 671b estimate (exit $rc)"; fi

# PyNative file with data_parallel_shard: -1 and no device count: the
# error points at that key (line 39, column 24 of pynative_ds3.yaml)
"$MEMOPT" estimate --json tests/data/real-configs/pynative_ds3.yaml > "$tmp/d.json" 2> "$tmp/err"
rc=$?
if [ $rc -eq 1 ] && $PY - "$tmp/d.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["errors"][0]
assert e["code"] == "model-needed" and e["line"] == 39 and e["column"] == 24, e
assert e["path"] == "parallelism.data_parallel_shard", e
PYEOF
then ok "unknown device count: model-needed at data_parallel_shard"
else bad "unknown device count (exit $rc)"; cat "$tmp/d.json"; fi

if [ $fails -ne 0 ]; then echo "mindformers_cli: $fails failed"; exit 1; fi
echo "mindformers_cli: all passed"
