#!/bin/sh
# Prints the README's planner-vs-staged-escalation table: every built-in
# preset (std-gqa aside: it plans as std) at three budgets, from
# `memopt plan --json` (overhead_percent against staged.overhead_percent).
# Run from the repository root:  tools/plan_table.sh [MEMOPT]
set -eu
M=${1:-${MEMOPT:-build/memopt}}
none=$(mktemp)
trap 'rm -f "$none"' EXIT
printf 'recompute:\n  mode: None\n' > "$none"
echo "| preset | budget | planner | staged escalation | exact |"
echo "|---|---|---|---|---|"
for p in $("$M" presets | awk '$1 != "std-gqa" { print $1 }'); do
  for b in 58GiB 40GiB 24GiB; do
    # memopt exits 1 when no plan fits; its JSON still says so, with the least peak
    "$M" plan --json --model "$p" --budget "$b" "$none" 2>/dev/null |
      python3 -c '
import json, sys
p, b = sys.argv[1], sys.argv[2]
d = json.load(sys.stdin)
gib = lambda x: "%.2f GiB" % (x / 2**30)
s = d["staged"]
plan = ("%.2f%%" % d["overhead_percent"]) if d["fits"] \
    else "no fit (least peak %s)" % gib(d["predicted_peak_bytes"])
if s["answer"] is not None:
    staged = "%.2f%% (%s)" % (s["overhead_percent"], s["steps"][s["answer"]]["label"])
else:
    staged = "never fits (least peak %s)" % gib(min(t["peak_bytes"] for t in s["steps"]))
print("| %s | %s | %s | %s | %s |" % (p, b, plan, staged, "yes" if d["exact"] else "no"))
' "$p" "$b"
  done
done
