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

# The same key in a --model file: the position is that file's, not the config's
printf 'model:\n  num_layers: 2\nparallelism:\n  data_parallel_shard: -1\n' > "$tmp/open.yaml"
printf 'recompute:\n  full_recompute_layer: []\n' > "$tmp/plain.yaml"
"$MEMOPT" estimate --model "$tmp/open.yaml" "$tmp/plain.yaml" > /dev/null 2> "$tmp/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "^$tmp/open.yaml:4:24: error\[model-needed\]" "$tmp/err" \
   && grep -q 'help: pass --devices N' "$tmp/err"; then
  ok "unknown device count in a --model file: the model file's line and column"
else bad "unknown device count in a --model file (exit $rc)"; cat "$tmp/err"; fi

# The assumed model values, in --json (`assumed`) and --explain. Read from
# r1.3.0/pretrain_llama2_7b.yaml: num_heads 32 and no n_kv_heads, so the K/V
# groups are the 32 heads; no kv_channels, so 4096 / 32 = 128; multiple_of
# and num_layers are given, so neither is assumed.
f=$D/r1.3.0/pretrain_llama2_7b.yaml
"$MEMOPT" estimate --json "$f" > "$tmp/a.json" 2> /dev/null
rc=$?
"$MEMOPT" estimate --explain "$f" > "$tmp/a.txt" 2> /dev/null
if [ $rc -eq 0 ] && $PY - "$tmp/a.json" "$tmp/a.txt" <<'PYEOF'
import json, sys
a = {x["path"]: x for x in json.load(open(sys.argv[1]))["assumed"]}
assert a["model.num_query_groups"]["value"] == "32", a
assert a["model.kv_channels"]["value"] == "128", a
assert all(x["source"] for x in a.values()), a
assert not any("multiple_of" in p or "num_layers" == p.split(".")[-1] for p in a), a
text = open(sys.argv[2]).read()
head = "assumed model values (the file leaves them out):"
assert head in text, text[-500:]
listed = text.split(head, 1)[1]
for p, x in a.items():
    assert "  %s = %s  (%s)" % (p, x["value"], x["source"]) in listed, p
PYEOF
then ok "llama2-7b r1.3.0: assumed K/V groups 32 and kv_channels 128 in --json and --explain"
else bad "assumed list (exit $rc)"; fi

# The trust signals without --explain, short: the accuracy line, the
# assumed values by name (the two read above from the file among them) and
# what is left out (graph mode, context.mode: 0 in that file, is not modelled).
"$MEMOPT" estimate "$f" > "$tmp/t.txt" 2> /dev/null
if $PY - "$tmp/a.json" "$tmp/t.txt" <<'PYEOF'
import json, sys
a = json.load(open(sys.argv[1]))["assumed"]
text = open(sys.argv[2]).read()
trust = text.split("\ntrust:\n", 1)[1]
assert "measured accuracy of the mindspore rules:" in trust, trust
assert "  assumed: %d model values the file leaves out (" % len(a) in trust, trust
assert "model.num_query_groups = 32" in trust and "model.kv_channels = 128" in trust, trust
assert "--explain gives their sources" in trust, trust
assert "  left out: 1 setting not modelled (context.mode;" in trust, trust
assert "assumed model values (the file leaves them out):" not in text, text
PYEOF
then ok "llama2-7b r1.3.0: trust signals by default (accuracy, assumed by name, left out)"
else bad "trust signals without --explain"; cat "$tmp/t.txt"; fi

# the template with its pretrained_model_dir there: the config.json (a
# Qwen3-8B of 36 layers, the corpus copy) is read from the working directory
# and the template's run over it (parallel_config: TP 2, PP 2), by estimate
# and import alike; from another folder, the hint names the path not read
mkdir -p "$tmp/run/hf/qwen3"
cp tests/corpus/files/hf-config/Qwen--Qwen3-8B/config.json "$tmp/run/hf/qwen3/"
sed 's#^pretrained_model_dir: .*#pretrained_model_dir: "hf/qwen3"#' \
  $D/master/llm_pretrain_dense_template.yaml > "$tmp/run/t.yaml"
(cd "$tmp/run" && "$MEMOPT" import t.yaml > "$tmp/imp.yaml" 2> "$tmp/err")
rc=$?
if [ $rc -eq 0 ] && grep -q '^  num_layers: 36$' "$tmp/imp.yaml" &&
   grep -q '^  tensor_parallel: 2$' "$tmp/imp.yaml" && grep -q '^  pipeline_parallel: 2$' "$tmp/imp.yaml"; then
  ok "import: pretrained_model_dir's config.json read, the YAML's run over it"
else bad "import with pretrained_model_dir present (exit $rc)"; cat "$tmp/err"; fi
(cd "$tmp/run" && "$MEMOPT" estimate --json t.yaml > "$tmp/est.json" 2> "$tmp/err")
rc=$?
if [ $rc -eq 0 ] && $PY - "$tmp/est.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert not [w for w in d["warnings"] if w["code"] == "model-needed"], d["warnings"]
assert [s["num_layers"] for s in d["stages"]] == [18, 18], d["stages"]
PYEOF
then ok "estimate: priced on pretrained_model_dir's config.json over 2 stages"
else bad "estimate with pretrained_model_dir present (exit $rc)"; fi
"$MEMOPT" estimate --json "$tmp/run/t.yaml" > "$tmp/est.json" 2> "$tmp/err"
rc=$?
if [ $rc -eq 2 ] && $PY - "$tmp/est.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
w = [x for x in d["warnings"] if x["code"] == "model-needed"]
assert w and "pretrained_model_dir (hf/qwen3), not read: No such file" in w[0]["hint"], w
PYEOF
then ok "estimate from another folder: model-needed, the hint says what was not read"
else bad "estimate with pretrained_model_dir absent (exit $rc)"; cat "$tmp/est.json"; fi

if [ $fails -ne 0 ]; then echo "mindformers_cli: $fails failed"; exit 1; fi
echo "mindformers_cli: all passed"
