#!/usr/bin/env python3
"""Why a published large run's layout ranks where it does: the step-time
terms (`memopt estimate --json`, "time": the slowest stage's breakdown, which
adds up to step_seconds, the figure the search ranks by) of the published
layout with the planner's plan for it, beside the first and the last of the
search's top K (`memopt size --top K`), each estimated from the layout's own
model and config in the answer. The term that differs most between the
published layout and the K-th is the one that puts it below the top K.

Not part of `make test` (the two searches take minutes on a loaded machine):
docs/sizing.md quotes its output. Usage, from the repository root after
`make`: python3 tests/size/published_terms.py [MEMOPT] [--top K]"""
import json
import os
import subprocess
import sys
import tempfile

M = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "build/memopt"
TOP = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 200
RUNS = [("tests/data/size/llama3_405b_16k.yaml", 16384, 2048),
        ("tests/data/size/deepseek_v3_2048.yaml", 2048, 15360)]
TERMS = ["compute", "comm_tp", "comm_cp", "comm_ep", "comm_pp", "comm_dp", "bubble",
         "optimizer", "recompute", "swap", "fixed"]


def estimate(model_path, config_text):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(config_text)
    try:
        out = subprocess.run([M, "estimate", "--json", "--model", model_path, f.name],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return json.loads(out.stdout)


def estimate_layout(layout):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(layout["model"])
    try:
        return estimate(f.name, layout["config"])
    finally:
        os.unlink(f.name)


def published(path):
    """The planner's plan for the published layout and its estimate."""
    plan = subprocess.run([M, "plan", "--model", path, "/dev/stdin"],
                          input="recompute:\n  mode: None\n", capture_output=True, text=True)
    return estimate(path, plan.stdout), plan.stderr.splitlines()[0] if plan.stderr else ""


def name(l):
    p = l["parallel"]
    return "TP %d PP %d VPP %d CP %d EP %d DP %d B %d" % (
        p["tensor_parallel"], p["pipeline_parallel"], p["virtual_pipeline"],
        p["context_parallel"], p["expert_parallel"], p["data_parallel"],
        l["training"]["micro_batch_size"])


def row(label, e):
    t = e["time"]
    return "| %s | %.2f | %s | %.1f |" % (
        label, t["step_seconds"], " | ".join("%.2f" % t[k + "_seconds"] for k in TERMS),
        e["peak_bytes"] / 2**30)


for path, n, g in RUNS:
    own, planned = published(path)
    out = subprocess.run([M, "size", "--model", path, "--devices", str(n), "--global-batch", str(g),
                          "--top", str(TOP), "--json", "--work-limit", "900000"],
                         capture_output=True, text=True)
    fit = [l for l in json.loads(out.stdout)["layouts"] if l["fits"]]
    first, last = estimate_layout(fit[0]), estimate_layout(fit[-1])
    print("%s (%s)\n" % (os.path.basename(path), planned))
    print("| layout | step s | %s | peak GiB |" % " | ".join(TERMS))
    print("|---|" + "---|" * (len(TERMS) + 2))
    print(row("published (the planner's plan)", own))
    print(row("#1 " + name(fit[0]), first))
    print(row("#%d %s" % (len(fit), name(fit[-1])), last))
    d = {k: own["time"][k + "_seconds"] - last["time"][k + "_seconds"] for k in TERMS}
    print("\npublished - #%d: %s\n" % (len(fit), ", ".join(
        "%s %+.2f s" % (k, v) for k, v in sorted(d.items(), key=lambda kv: -abs(kv[1])) if abs(v) >= 0.01)))
    sys.stdout.flush()
