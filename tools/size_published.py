"""Where a published large run's own layout ranks among the fitting layouts
`memopt size` answers for its device count and global batch, and how
memopt's best compares in predicted tokens per second per device: the
published-runs table of docs/sizing.md. Each model file under
tests/data/size/ states the run's layout in its parallel section and its
published throughput at its top. Run from the repository root after
`make`: python3 tools/size_published.py [--top K]

The search answers its top K exactly; the published layout's own figures
come from `memopt plan` (the planner's cheapest plan for that layout,
staged escalation included, as the search does for a layout its search
finds no plan for) and `memopt estimate` of that plan. Its rank is 1 +
the fitting layouts strictly faster when it lies within the top K, else
"below the top K"."""
import json
import os
import re
import subprocess
import sys
import tempfile

M = os.environ.get("MEMOPT", "build/memopt")
LIMIT_MS = os.environ.get("SIZE_WORK_LIMIT_MS", "600000")
TOP = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 200
# (model file, published tokens per second per GPU, where that figure is from)
RUNS = [
    ("tests/data/size/llama3_405b_16k.yaml", 400e12 / (6 * 405e9),
     "400 TFLOPs/GPU (Table 4) over 6 x 405e9 FLOPs a token"),
    ("tests/data/size/deepseek_v3_2048.yaml", 14.8e12 / (2.664e6 * 3600),
     "14.8T tokens in 2.664M H800 GPU hours"),
]


def val(text, sect, key, d):
    m = re.search(r"^%s:\n(?:  .*\n)*?  %s: *([^ #\n]+)" % (sect, key), text, re.M)
    if not m:
        return d
    v = m.group(1)
    return {"true": True, "false": False}.get(v, int(v) if v.isdigit() else v)


def layout_key(l):
    p = l["parallel"]
    return (p["tensor_parallel"], p["pipeline_parallel"], p["virtual_pipeline"],
            p["context_parallel"], p["expert_parallel"], p["data_parallel"],
            p["sequence_parallel"], l["training"]["micro_batch_size"])


def own_figures(path):
    """The published layout's planned step and peak, as the search plans it."""
    with tempfile.TemporaryDirectory() as d:
        none = os.path.join(d, "none.yaml")
        with open(none, "w") as f:
            f.write("recompute:\n  mode: None\n")
        plan = subprocess.run([M, "plan", "--model", path, none], capture_output=True, text=True)
        staged = re.search(r"^  full (\d+)-(\d+) .* fits  <- staged answer", plan.stderr, re.M)
        if "no plan fits" in plan.stderr and staged:
            # as the search does: the escalation's step that fits is the
            # start of a second planning
            with open(none, "w") as f:
                f.write("recompute:\n  mode: full\n  full_recompute_layer: [%s-%s]\n" % staged.groups())
            plan = subprocess.run([M, "plan", "--model", path, none], capture_output=True, text=True)
        cfg = os.path.join(d, "plan.yaml")
        with open(cfg, "w") as f:
            f.write(plan.stdout)
        est = subprocess.run([M, "estimate", "--json", "--model", path, cfg],
                             capture_output=True, text=True)
    j = json.loads(est.stdout)
    fits = plan.stderr.startswith("plan: fits")
    return j, fits


def describe(k):
    return "TP %d PP %d VPP %d CP %d EP %d DP %d SP %s B %d" % (
        k[0], k[1], k[2], k[3], k[4], k[5], "on" if k[6] else "off", k[7])


for path, published_tps, why in RUNS:
    if os.environ.get("ONLY") and os.environ["ONLY"] not in path:
        continue
    t = open(path).read()
    N = val(t, "parallel", "world_size", 0)
    G = val(t, "training", "global_batch_size", 0)
    S = val(t, "model", "seq_length", 0)
    own = (val(t, "parallel", "tensor_parallel", 1), val(t, "parallel", "pipeline_parallel", 1),
           val(t, "parallel", "virtual_pipeline", 1), val(t, "parallel", "context_parallel", 1),
           val(t, "parallel", "expert_parallel", 1), val(t, "parallel", "data_parallel", 1),
           val(t, "parallel", "sequence_parallel", False), val(t, "training", "micro_batch_size", 1))
    out = subprocess.run([M, "size", "--model", path, "--devices", str(N), "--global-batch", str(G),
                          "--top", str(TOP), "--json", "--work-limit", LIMIT_MS],
                         capture_output=True, text=True)
    j = json.loads(out.stdout)
    fit = [l for l in j["layouts"] if l["fits"]]
    est, fits = own_figures(path)
    step = est["time"]["step_seconds"]
    own_tps = G * S / step / N
    faster = sum(1 for l in fit if l["step_seconds"] < step)
    if faster < len(fit) or len(fit) < TOP:
        rank = "%d of the top %d" % (faster + 1, len(fit))
    else:
        rank = "below the top %d" % TOP
    best = fit[0] if fit else None
    print("| `%s` | %d | %d | %s | %s, %s | %s | %.1f s, %.0f tok/s/dev | %s | %.1f s, %.0f tok/s/dev | %.0f (%s) |%s" % (
        os.path.basename(path), N, G, describe(own),
        "fits" if fits else "no plan fits", "peak %.2f GiB" % (est["peak_bytes"] / 2**30),
        rank, step, own_tps, describe(layout_key(best)) if best else "-",
        best["step_seconds"] if best else 0, best["tokens_per_second_per_device"] if best else 0,
        published_tps, why, "" if j["complete"] else " (search stopped)"))
    sys.stdout.flush()
