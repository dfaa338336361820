#!/usr/bin/env python3
"""Every Megatron-LM CI run kept in tests, sized: `memopt size` for the run's
own device count and global batch (`--top all`), then

 - the run's own layout (TP, PP, VPP, CP, EP, ETP, DP, sequence parallel,
   distributed optimizer, micro-batch size) must be among the fitting
   layouts; a run that counts the embedding and / or the loss as layers of
   the pipeline split (--account-for-*-in-pipeline-split in its recipe, the
   <case>.model_config.yaml) must be there with the same flags in its
   Megatron-LM arguments and the recipe's VPP; a run whose stages are placed
   by hand (--pipeline-model-parallel-layout), which the search's splits
   cannot hold, is explained instead, and the check is then that the answer
   rejects its PP for that reason (pp_even) and does not return it;
 - its predicted step time (the layout's step_seconds in the answer) must be
   within the time model's error of the run's measured step time. The
   measured time is the median `iteration-time` the run logged in its
   golden values (tests/data/megatron/steptime/measured.tsv, and for the
   runs kept for memory only tests/data/size/ci_measured.tsv, the same
   method; source path and commit in each row). The error allowed is the
   time model's own per-run bound, MAX_ERROR of tests/unit/test_steptime.c
   (read from there, so the two cannot drift apart).

The runs: every <case>.model_config.yaml of tests/data/megatron and
tests/data/megatron/steptime, each on every device it has a measured time for
(the model file <case>.<device>.yaml of steptime/, else <case>.yaml of
tests/data/megatron when its device is that one).

Usage: ci_runs.py MEMOPT [--table]. --table prints the docs/sizing.md table.
Exit 1 on any failure."""
import glob
import json
import os
import re
import subprocess
import sys

import yaml

MEMOPT = sys.argv[1] if len(sys.argv) > 1 else "build/memopt"
TABLE = "--table" in sys.argv
DATA = "tests/data/megatron/"
STEP = DATA + "steptime/"

with open("tests/unit/test_steptime.c") as f:
    MAX_ERROR = float(re.search(r"^#define MAX_ERROR ([0-9.]+)", f.read(), re.M).group(1))



def recipe_args(case):
    """The run's own Megatron-LM arguments (MODEL_ARGS of its
    <case>.model_config.yaml, the CI recipe kept with its source)."""
    for path in (STEP + case + ".model_config.yaml", DATA + case + ".model_config.yaml"):
        if os.path.exists(path):
            with open(path) as f:
                return yaml.safe_load(f).get("MODEL_ARGS", {}) or {}
    return {}


ACCOUNT = ("--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split")
HAND = ("--pipeline-model-parallel-layout", "--decoder-first-pipeline-num-layers",
        "--decoder-last-pipeline-num-layers")


def accounted(args):
    """The run's split when it counts the embedding and / or the loss as
    layers (Megatron-LM's --account-for-*-in-pipeline-split, no layout by
    hand): which flags, and its VPP from its own arguments; else None."""
    flags = tuple(f for f in ACCOUNT if args.get(f))
    if not flags or any(args.get(f) for f in HAND):
        return None
    vpp = args.get("--num-virtual-stages-per-pipeline-rank")
    if vpp is None and args.get("--num-layers-per-virtual-pipeline-stage"):
        pp = args.get("--pipeline-model-parallel-size", 1)
        vpp = args["--num-layers"] // pp // args["--num-layers-per-virtual-pipeline-stage"]
    return flags, vpp or 1


def not_searched(m, sized):
    """Why the search cannot hold the run's own layout, or None: a
    pipeline_model_parallel_layout (Megatron-LM's
    --pipeline-model-parallel-layout, or the split the import writes for
    --account-for-embedding/loss-in-pipeline-split) places the layers over
    the stages by hand, where the search's Megatron-LM layouts are the even
    split of num_layers, the accounted splits and (no MTP layers) the uneven
    first / last stages (size_layouts.c walk_pp, Megatron-LM's assert
    without a layout). The answer must then say so: its pp_even group for
    the run's PP and layers."""
    p = m.get("parallel", {})
    layout = p.get("pipeline_model_parallel_layout")
    if not layout:
        return None
    pp, layers = p.get("pipeline_parallel", 1), m["model"]["num_layers"]
    group = [g for g in sized["rejections"] if g["code"] == "pp_even" and
             g["params"] == {"pipeline_parallel": pp, "layers": layers}]
    if not group:
        return ""
    return ("its layers are placed on the stages by hand (`%s`: E the embedding, t a layer, m "
            "the MTP layer, L the loss, a bar between virtual stages); the search's Megatron-LM "
            "layouts split the %d layers evenly, the embedding and the loss counted as layers or "
            "not, or with an uneven first / last stage (neither with MTP layers), and PP %d does "
            "not divide them (`pp_even`: %d layouts)" % (cell(layout), layers, pp,
                                                         group[0]["count"]))


def cell(text):
    """text inside a Markdown table cell"""
    return text.replace("|", "\\|")


def measured_rows():
    rows = {}
    for path in (STEP + "measured.tsv", "tests/data/size/ci_measured.tsv"):
        with open(path) as f:
            for line in f.read().splitlines()[1:]:
                c = line.split("\t")
                rows[(c[0], c[1])] = float(c[4])
    return rows


def model_file(case, device):
    for path in (STEP + "%s.%s.yaml" % (case, device), DATA + "%s.yaml" % case):
        if os.path.exists(path):
            with open(path) as f:
                m = yaml.safe_load(f)
            if m.get("device") == device or (isinstance(m.get("device"), dict) and
                                             m["device"].get("preset") == device):
                return path, m
    return None, None


def config_file(case):
    for path in (STEP + case + ".config.yaml", DATA + case + ".config.yaml"):
        if os.path.exists(path):
            return path
    return STEP + "none.config.yaml"


def own_layout(m):
    p, t = m.get("parallel", {}), m.get("training", {})
    tp, ep = p.get("tensor_parallel", 1), p.get("expert_parallel", 1)
    moe = m.get("model", {}).get("num_moe_experts", 0) or 0
    return {"TP": tp, "PP": p.get("pipeline_parallel", 1), "VPP": p.get("virtual_pipeline", 1),
            "CP": p.get("context_parallel", 1), "EP": ep,
            # expert TP: Megatron-LM's default is TP; meaningless without experts
            "ETP": p.get("expert_tensor_parallel", tp) if moe else None,
            "DP": p.get("data_parallel"), "SP": bool(p.get("sequence_parallel", False)),
            "DO": bool(p.get("distributed_optimizer", False)), "B": t.get("micro_batch_size", 1)}


def layout_key(l, moe):
    p = l["parallel"]
    return {"TP": p["tensor_parallel"], "PP": p["pipeline_parallel"], "VPP": p["virtual_pipeline"],
            "CP": p["context_parallel"], "EP": p["expert_parallel"],
            "ETP": p.get("expert_tensor_parallel") if moe else None,
            "DP": p["data_parallel"], "SP": p["sequence_parallel"],
            "DO": p["distributed_optimizer"], "B": l["training"]["micro_batch_size"]}


def words(k):
    s = "TP %d PP %d VPP %d CP %d EP %d" % (k["TP"], k["PP"], k["VPP"], k["CP"], k["EP"])
    if k["ETP"] is not None:
        s += " ETP %d" % k["ETP"]
    return s + " DP %d SP %s DO %s B %d" % (k["DP"], "on" if k["SP"] else "off",
                                           "on" if k["DO"] else "off", k["B"])


def run_json(args):
    out = subprocess.run([MEMOPT] + args, capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        return None, out.stderr.strip()[:300]
    return json.loads(out.stdout), None


def main():
    measured = measured_rows()
    cases = sorted({os.path.basename(p)[:-len(".model_config.yaml")]
                    for p in glob.glob(DATA + "*.model_config.yaml") +
                    glob.glob(STEP + "*.model_config.yaml")})
    fails, lines = [], []
    for case in cases:
        devices = sorted(d for (c, d) in measured if c == case)
        if not devices:
            fails.append("%s: no measured step time (measured.tsv, ci_measured.tsv)" % case)
            continue
        for dev in devices:
            path, m = model_file(case, dev)
            if not path:
                fails.append("%s (%s): no model file for the device" % (case, dev))
                continue
            moe = (m.get("model", {}).get("num_moe_experts", 0) or 0) > 0
            own = own_layout(m)
            n, g = m["parallel"]["world_size"], m["training"]["global_batch_size"]
            sized, err = run_json(["size", "--model", path, "--devices", str(n), "--global-batch",
                                   str(g), "--top", "all", "--json",
                                   # the CLI's default limit is wall-clock time: on a loaded
                                   # machine it stops these small searches (1-2 s of CPU)
                                   "--work-limit", "600000"])
            est, err2 = run_json(["estimate", "--model", path, "--json", config_file(case)])
            if not sized or not est:
                fails.append("%s (%s): %s" % (case, dev, err or err2))
                continue
            if not sized["complete"]:
                fails.append("%s (%s): the search did not complete" % (case, dev))
                continue
            fit = [l for l in sized["layouts"] if l["fits"]]
            acct = accounted(recipe_args(case))
            if acct:
                # the run's own split, from its recipe: the same flags in the
                # layout's Megatron-LM arguments, VPP the recipe's
                own["VPP"] = acct[1]
                hits = [l for l in fit if layout_key(l, moe) == own and
                        all((f in l.get("megatron_args", "")) == (f in acct[0]) for f in ACCOUNT)]
            else:
                hits = [l for l in fit if layout_key(l, moe) == own]
            t = measured[(case, dev)]
            own_est = est["time"]["step_seconds"]
            name = "%s (%s)" % (case, dev)
            why = None if acct else not_searched(m, sized)
            if why == "":
                fails.append("%s: a hand-placed pipeline, but no pp_even rejection for it" % name)
            if why:
                if hits:
                    fails.append("%s: a hand-placed pipeline, but the search returns it" % name)
                own_words = words(own).replace("VPP 1 ", "")
                lines.append("| `%s` | %s | %d | %d | %s, stages `%s` | not searched: %s | - | - | %.3f s (%+.0f%%) | %.3f s |" % (
                    case, dev, n, g, own_words, cell(m["parallel"]["pipeline_model_parallel_layout"]), why,
                    own_est, 100 * (own_est / t - 1), t))
                continue
            if not hits:
                fails.append("%s: its layout %s is not among the %d fitting layouts" % (name, words(own), len(fit)))
                lines.append("| `%s` | %s | %d | %d | %s | NOT FOUND among %d | | | | %.3f s |" % (
                    case, dev, n, g, words(own), len(fit), t))
                continue
            l = hits[0]
            pred = l["step_seconds"]
            e = pred / t - 1
            if abs(e) > MAX_ERROR:
                fails.append("%s: predicted %.4f s, measured %.4f s: %+.1f%%, beyond the time model's %.0f%%" % (
                    name, pred, t, 100 * e, 100 * MAX_ERROR))
            rank = 1 + sum(1 for x in fit if x["step_seconds"] < pred)
            own_words = words(own) + (", " + " ".join("`%s`" % f for f in acct[0]) if acct else "")
            lines.append("| `%s` | %s | %d | %d | %s | fits (%s), rank %d of %d | %.3f s | %+.0f%% | %.3f s (%+.0f%%) | %.3f s |" % (
                case, dev, n, g, own_words, "plan: " + l["plan"], rank, len(fit), pred, 100 * e,
                own_est, 100 * (own_est / t - 1), t))
    if TABLE:
        print("| run | device | devices | global batch | its layout | in the search | predicted step "
              "(size) | error | `memopt estimate` of the run (its own recompute) | measured |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(lines))
    for f in fails:
        print("FAIL: " + f)
    print("size ci runs: %d runs, %d failure(s); error allowed %.0f%% (tests/unit/test_steptime.c MAX_ERROR)" % (
        len(lines), len(fails), 100 * MAX_ERROR))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
