#!/bin/sh
# PyYAML (what MindSpore Transformers loads configs with) reads `memopt export`
# output as the same configuration as the original: the three sections
# (layer lists compared as sets of ids, absent keys as their defaults) and
# every other top-level key unchanged.
# Inputs: tests/golden/export/*.yaml and tests/data/real-configs/*.yaml.
set -u
MEMOPT=${MEMOPT:-build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then
  echo "skipped: $MEMOPT not built"; exit 0
fi
if ! "$PY" -c 'import yaml' 2>/dev/null; then
  echo "skipped: $PY has no yaml module"; exit 0
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# Golden inputs are checked against a 32-layer preset (export refuses an
# invalid config); the real training YAMLs carry their own model.
MODEL=llama2-7b
"$MEMOPT" export --model $MODEL tests/golden/export/seed01-select-mlp.yaml >/dev/null 2>&1
if [ $? -eq 2 ]; then
  echo "skipped: $MEMOPT has no export command"; exit 0
fi

fail=0
n=0
for f in tests/golden/export/*.yaml tests/data/real-configs/*.yaml; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  out="$tmp/out.yaml"
  case $f in
    tests/*) set -- --model $MODEL ;;
    *) set -- ;;
  esac
  if ! "$MEMOPT" export "$@" "$f" >"$out" 2>"$tmp/err"; then
    echo "FAIL: memopt export $f"; cat "$tmp/err"; fail=1; continue
  fi
  if ! "$PY" - "$f" "$out" <<'EOF'
import sys, yaml

SECTIONS = ("recompute", "recompute_comm", "swap")

def layers(v):
    ids = set()
    for it in v or []:
        if isinstance(it, int) and not isinstance(it, bool):
            ids.add(it)
            continue
        s = str(it).strip()
        a, _, b = s.partition("-")
        ids.update(range(int(a), int(b or a) + 1))
    return ids

def patterns(m):
    return {k: layers(v) for k, v in (m or {}).items()}

def norm(doc):
    r = {}
    if "recompute" in doc:
        s = doc["recompute"] or {}
        r["recompute"] = {
            "mode": str(s.get("mode", "None")),
            "full": layers(s.get("full_recompute_layer")),
            "select": patterns(s.get("select_module")),
            "exclude": patterns(s.get("exclude_op")),
        }
    if "recompute_comm" in doc:
        s = doc["recompute_comm"] or {}
        r["recompute_comm"] = {
            "enable": bool(s.get("enable", False)),
            "select": patterns(s.get("select_module")),
        }
    if "swap" in doc:
        s = doc["swap"] or {}
        pf = s.get("default_prefetch")
        r["swap"] = {
            "enable": bool(s.get("enable", False)),
            "prefetch": 1 if pf is None else pf,
            "layer_swap": [layers(e.get("layers")) for e in s.get("layer_swap") or []],
            "op_swap": [(e.get("op_name"), layers(e.get("layers")))
                        for e in s.get("op_swap") or []],
        }
    r["rest"] = {k: v for k, v in doc.items() if k not in SECTIONS}
    return r

with open(sys.argv[1], encoding="utf-8") as f:
    a = yaml.safe_load(f)
with open(sys.argv[2], encoding="utf-8") as f:
    b = yaml.safe_load(f)
na, nb = norm(a), norm(b)
if na != nb:
    print("original:", na)
    print("exported:", nb)
    sys.exit(1)
EOF
  then
    echo "FAIL: PyYAML reads the export of $f differently"; fail=1
  fi
done
[ $fail -eq 0 ] && echo "ok: $n exports read the same by PyYAML"
exit $fail
