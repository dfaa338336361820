"""Where each Megatron-LM CI run's own layout ranks among the fitting
layouts `memopt size --top all` answers for its device count and global
batch: the validation table of docs/sizing.md. Run from the repository
root after `make`: python3 tools/size_rank.py"""
import json
import os
import re
import subprocess
import sys

M = os.environ.get("MEMOPT", "build/memopt")
runs = ["gpt3_7b_tp1_pp4_memory_speed", "gpt3_7b_tp4_pp1_memory_speed",
        "gpt3_mcore_te_tp1_pp1_uniform_full_recompute",
        "gpt3_mcore_te_tp2_pp1_te_8experts2parallel_dist_optimizer",
        "gpt3_mcore_te_tp2_pp2_cp2", "gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed"]
# Megatron-LM's README model table (H100), as model files kept beside the
# step-time fixtures: the rows small enough to search whole here
if len(sys.argv) > 1 and sys.argv[1] == "--model-table":
    runs = ["steptime/mfu_1_7b", "steptime/mfu_7_1b", "steptime/mfu_16b", "steptime/mfu_32b",
            "steptime/mfu_70b", "steptime/mfu_119b"]
    if len(sys.argv) > 2:  # one row: --model-table mfu_70b
        runs = ["steptime/" + sys.argv[2]]
LIMIT_MS = os.environ.get("SIZE_WORK_LIMIT_MS", "120000")
# measured step times (median) of the CI runs, by (case, device)
MEASURED = {}
with open("tests/data/megatron/steptime/measured.tsv") as f:
    for line in f.read().splitlines()[1:]:
        c = line.split("\t")
        MEASURED[(c[0], c[1])] = float(c[4])
def val(text, sect, key, d):
    m = re.search(r"^%s:\n(?:  .*\n)*?  %s: *([^ #\n]+)" % (sect, key), text, re.M)
    if not m: return d
    v = m.group(1)
    return {"true": True, "false": False}.get(v, int(v) if v.isdigit() else v)
for r in runs:
    path = "tests/data/megatron/%s.yaml" % r
    t = open(path).read()
    G = val(t, "training", "global_batch_size", 0); N = val(t, "parallel", "world_size", 0)
    dev = re.search(r"^device: *([a-z0-9-]+)", t, re.M)
    measured = MEASURED.get((r.split("/")[-1], dev.group(1) if dev else ""))
    tp = val(t, "parallel", "tensor_parallel", 1)
    own = dict(tp=tp, pp=val(t, "parallel", "pipeline_parallel", 1), vpp=val(t, "parallel", "virtual_pipeline", 1),
               cp=val(t, "parallel", "context_parallel", 1), ep=val(t, "parallel", "expert_parallel", 1),
               dp=val(t, "parallel", "data_parallel", 1), sp=val(t, "parallel", "sequence_parallel", False),
               do=val(t, "parallel", "distributed_optimizer", False), b=val(t, "training", "micro_batch_size", 1))
    out = subprocess.run([M, "size", "--model", path, "--devices", str(N), "--global-batch", str(G), "--top", "all", "--json",
                          "--work-limit", LIMIT_MS],
                         capture_output=True, text=True)
    if not out.stdout.strip():
        print("| %s | no answer: %s |" % (r, out.stderr.strip()[:200]))
        continue
    j = json.loads(out.stdout)
    if not j["complete"]:
        print("| %s | stopped by the %s ms work limit (%d estimated) |" % (r, LIMIT_MS, j["estimated"]))
        continue
    fit = [l for l in j["layouts"] if l["fits"]]
    def key(l):
        p = l["parallel"]
        return dict(tp=p["tensor_parallel"], pp=p["pipeline_parallel"], vpp=p["virtual_pipeline"], cp=p["context_parallel"],
                    ep=p["expert_parallel"], dp=p["data_parallel"], sp=p["sequence_parallel"], do=p["distributed_optimizer"],
                    b=l["training"]["micro_batch_size"])
    hits = [(i, l) for i, l in enumerate(fit) if key(l) == own]
    etp_note = ""
    if hits:
        i, l = hits[0]
        # rank: 1 + layouts strictly faster
        rank = 1 + sum(1 for x in fit if x["step_seconds"] < l["step_seconds"])
        ties = sum(1 for x in fit if x["step_seconds"] == l["step_seconds"])
        best = fit[0]
        print("| `%s` | %d | %d | TP %d PP %d VPP %d CP %d EP %d DP %d SP %s B %d | %s | %d of %d (%d tie) | %.3f s | %s | %.3f s | %s |" % (
            r, N, G, own["tp"], own["pp"], own["vpp"], own["cp"], own["ep"], own["dp"], "on" if own["sp"] else "off", own["b"],
            "fits, peak %.2f GiB" % (l["peak_bytes"] / 2**30), rank, len(fit), ties, l["step_seconds"],
            "%.3f s (%s)" % (measured, dev.group(1)) if measured else "-", best["step_seconds"],
            "TP %d PP %d VPP %d CP %d EP %d DP %d B %d" % tuple(key(best)[k] for k in ("tp","pp","vpp","cp","ep","dp","b"))))
    else:
        print("| %s | NOT FOUND (%d fitting) |" % (r, len(fit)))
    sys.stdout.flush()
