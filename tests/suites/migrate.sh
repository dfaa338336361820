#!/bin/sh
# `memopt migrate` on MindSpore Transformers graph-mode files
# (tests/data/mindformers, sources in SOURCES.tsv): the recompute_config
# block is replaced by recompute / recompute_comm sections and nothing else
# changes (one diff hunk; the bytes before and after the block identical;
# PyYAML reads every other top-level key unchanged); the sections say what
# docs/mindformers.md says the block means (expectations below written from
# each file's recompute_config, pipeline_stage, num_layers and offset); and
# `memopt expand` gives the same per-layer actions for both files. Keys with
# no equivalent are `no-equivalent` warnings; refusals exit 1.
set -u
cd "$(dirname "$0")/../.."
MEMOPT=${MEMOPT:-$(pwd)/build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
if ! "$PY" -c 'import yaml' 2>/dev/null; then echo "skipped: $PY has no yaml module"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
D=tests/data/mindformers

# name | expected sections as JSON (layer sets as range strings) | the keys
# reported no-equivalent, comma-separated
#
# finetune_llama3_1_8b: `recompute: True`, 32 layers, one stage -> 0-31;
#   mp_comm_recompute and recompute_slice_activation are True.
# finetune_glm4_9b: 40 layers, pipeline_stage 4, offset [-1, 0, 2, -1] ->
#   stages of 9, 10, 12, 9 layers starting at 0, 9, 19, 31; recompute
#   [6, 3, 2, 3] -> the first 6, 3, 2, 3 of each stage.
# finetune_qwen2_5_7b_8k: 28 layers, 2 stages of 14; recompute [7, 7] ->
#   0-6, 14-20; select_recompute {name: [14, 14]} on the other layers, names
#   mapped (feed_forward -> mlp, w1.activation -> activation_func, w1 ->
#   linear_fc1, w2 -> linear_fc2); every other key False.
# finetune_llama3_1_70b: 80 layers, 8 stages of 10; select and
#   select_comm_recompute [10,8,6,4,2,0,0,0] -> 0-9, 10-17, 20-25, 30-33,
#   40-41; the comm default `.*\.norm` is the all-gather after it.
# finetune_qwen2_5_0_5b_8k: every key False -> `mode: None`, no comm section.
cat > "$tmp/cases" <<'EOF'
master/finetune_llama3_1_8b|{"recompute": {"mode": "full", "full_recompute_layer": "0-31"}}|mp_comm_recompute,recompute_slice_activation
master/finetune_glm4_9b|{"recompute": {"mode": "full", "full_recompute_layer": "0-5,9-11,19-20,31-33"}}|mp_comm_recompute,recompute_slice_activation
master/finetune_qwen2_5_7b_8k|{"recompute": {"mode": "full", "full_recompute_layer": "0-6,14-20", "select_module": {"mlp\\.mul": "7-13,21-27", "mlp\\.activation_func\\.silu": "7-13,21-27", "mlp\\.linear_fc1\\.reshape": "7-13,21-27", "mlp\\.linear_fc2\\.reshape": "7-13,21-27"}}}|
master/finetune_llama3_1_70b|{"recompute": {"mode": "select", "select_module": {"mlp\\.mul": "0-17,20-25,30-33,40-41", "mlp\\.activation_func\\.silu": "0-17,20-25,30-33,40-41"}}, "recompute_comm": {"enable": true, "select_module": {".*\\.input\\.allgather": "0-17,20-25,30-33,40-41"}}}|mp_comm_recompute,recompute_slice_activation
master/finetune_qwen2_5_0_5b_8k|{"recompute": {"mode": "None"}}|
EOF

cat > "$tmp/check.py" <<'PYEOF'
import json, re, sys, yaml

orig_path, mig_path, expected_json, orig_plan, mig_plan = sys.argv[1:6]
orig = open(orig_path, "rb").read().decode()
mig = open(mig_path, "rb").read().decode()

# the block: from its key's line to the end of its last indented line
m = re.search(r"^recompute_config:", orig, re.M)
assert m, "no recompute_config in the original"
start = m.start()
end = orig.index("\n", start)
pos = end + 1
while pos < len(orig):
    nl = orig.find("\n", pos)
    nl = len(orig) if nl < 0 else nl
    line = orig[pos:nl]
    if line.strip() == "":
        pos = nl + 1
        continue
    if not line.startswith((" ", "\t")):
        break
    end = nl
    pos = nl + 1
prefix, suffix = orig[:start], orig[end:]
assert mig.startswith(prefix), "bytes before the block changed"
assert mig.endswith(suffix), "bytes after the block changed"
assert len(mig) >= len(prefix) + len(suffix)
middle = yaml.safe_load(mig[len(prefix):len(mig) - len(suffix)])

def ids(v):
    out = set()
    for it in (v if isinstance(v, list) else str(v).split(",")):
        a, _, b = str(it).strip().partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out

def norm(sec):
    sec = dict(sec)
    if "full_recompute_layer" in sec:
        sec["full_recompute_layer"] = ids(sec["full_recompute_layer"])
    if "select_module" in sec:
        sec["select_module"] = {k: ids(v) for k, v in sec["select_module"].items()}
    return sec

expected = json.loads(expected_json)
got = {k: norm(v) for k, v in middle.items()}
want = {k: norm(v) for k, v in expected.items()}
assert got == want, "sections %r, expected %r" % (got, want)

# PyYAML: every other top-level key unchanged
a, b = yaml.safe_load(orig), yaml.safe_load(mig)
a.pop("recompute_config")
for k in expected:
    assert k not in a
    b.pop(k)
assert a == b, "other keys differ: %r" % sorted(set(a) ^ set(b))

# the same plan, per layer (the rule's key and line differ by design)
def plan(path):
    d = json.load(open(path))
    return [sorted((x["path"], x["action"]) for x in l["actions"]) for l in d["layers"]]
assert plan(orig_plan) == plan(mig_plan), "expand differs"
PYEOF

while IFS='|' read -r name expected dropped; do
  f=$D/$name.yaml
  "$MEMOPT" migrate "$f" -o "$tmp/m.yaml" 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then bad "$name: migrate exit $rc"; cat "$tmp/err"; continue; fi
  hunks=$(diff "$f" "$tmp/m.yaml" | grep -c '^[0-9]')
  [ "$hunks" -eq 1 ] || bad "$name: diff has $hunks hunks, expected 1"
  "$MEMOPT" expand --json "$f" > "$tmp/a.json" 2> /dev/null
  "$MEMOPT" expand --json "$tmp/m.yaml" > "$tmp/b.json" 2> /dev/null
  if "$PY" "$tmp/check.py" "$f" "$tmp/m.yaml" "$expected" "$tmp/a.json" "$tmp/b.json"; then
    ok "$name: sections as expected, bytes outside kept, same expand"
  else bad "$name: content"; fi
  got=$(sed -n 's/.*warning\[no-equivalent\]: migrate: recompute_config\.\([a-z_]*\) .*/\1/p' \
    "$tmp/err" | paste -sd, -)
  if [ "$got" = "$dropped" ]; then ok "$name: no-equivalent [$got]"
  else bad "$name: no-equivalent [$got], expected [$dropped]"; fi
  if grep -q '^recompute_config' "$tmp/m.yaml"; then bad "$name: block still there"; fi
done < "$tmp/cases"

# JSON form: the diagnostics and the text
f=$D/master/finetune_glm4_9b.yaml
"$MEMOPT" migrate --json "$f" > "$tmp/out.json" 2> /dev/null
rc=$?
"$MEMOPT" migrate "$f" > "$tmp/m.yaml" 2> /dev/null
if [ $rc -eq 0 ] && "$PY" - "$tmp/out.json" "$tmp/m.yaml" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["yaml"] == open(sys.argv[2]).read()
w = [x for x in d["warnings"] if x["code"] == "no-equivalent"]
assert [(x["line"], x["column"], x["path"]) for x in w] == [
    (148, 3, "recompute_config.mp_comm_recompute"),
    (149, 3, "recompute_config.recompute_slice_activation")], w
PYEOF
then ok "migrate --json: yaml as the text form, no-equivalent at 148:3 and 149:3"
else bad "migrate --json (exit $rc)"; fi

# refusals: layers cannot be placed (the template names no layer count);
# the recompute sections beside the block; a file without the block
expect_refusal() {
  "$MEMOPT" migrate "$1" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "error\[migrate\]: migrate: $2" "$tmp/err"
  then ok "refused: $3"; else bad "refusal $3 (exit $rc)"; cat "$tmp/err"; fi
}
expect_refusal $D/master/llm_pretrain_dense_template.yaml "recompute_config is not applied" \
  "template without a layer count"
{ cat $D/master/finetune_llama3_1_8b.yaml; printf 'recompute:\n  mode: None\n'; } > "$tmp/both.yaml"
expect_refusal "$tmp/both.yaml" "the file already has" "recompute section beside the block"
sed '81,86d' $D/master/finetune_llama3_1_8b.yaml > "$tmp/none.yaml" # lines 81-86: the block
expect_refusal "$tmp/none.yaml" "the file has no top-level recompute_config" "no block"

# swap_config stays, with a warning
{ cat $D/master/finetune_llama3_1_8b.yaml; printf 'swap_config:\n  swap: True\n'; } > "$tmp/swap.yaml"
"$MEMOPT" migrate "$tmp/swap.yaml" > "$tmp/m.yaml" 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] && tail -2 "$tmp/m.yaml" | grep -q '^swap_config:' &&
  grep -q 'warning\[no-equivalent\]: migrate: swap_config is left' "$tmp/err"; then
  ok "swap_config left in place with a no-equivalent warning"
else bad "swap_config (exit $rc)"; fi

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
