#!/usr/bin/env python3
"""Checks a MindSpore Transformers training YAML before run_mindformer.py
starts it: every rule of the recompute / recompute_comm / swap sections (or
a graph-mode recompute_config), then the memory estimate against the
device. Exit 0 when the config is valid and fits, 1 when it has errors or
runs out of memory, 2 when it cannot be checked (no model, unreadable).

    python3 check_before_run.py configs/finetune.yaml \\
        && python run_mindformer.py --config configs/finetune.yaml

--model names the model when the file does not carry one (its
pretrained_model_dir's config.json, or a preset); --budget checks against
a smaller budget than the device (e.g. 50GiB).
"""
import argparse
import sys

import memopt


def gib(n):
    return "%.2f GiB" % (n / 2 ** 30)


def show(findings, kind):
    for d in findings:
        where = "%d:%d: " % (d["line"], d["column"]) if d.get("line") else ""
        print("%s%s[%s]: %s" % (where, kind, d["code"], d["message"]))
        if d.get("hint"):
            print("    help: %s" % d["hint"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--model", help="a preset, or a model file (config.json)")
    ap.add_argument("--budget", help="bytes per device, e.g. 50GiB (default: the device)")
    a = ap.parse_args()
    try:
        with open(a.config, encoding="utf-8") as f:
            text = f.read()
        checked = memopt.validate(text, model=a.model, name=a.config)
        show(checked["errors"], "error")
        show(checked["warnings"], "warning")
        if not checked["valid"]:
            print("%s: %d error(s): fix them before the run" % (a.config, len(checked["errors"])))
            return 1
        est = memopt.estimate(text, model=a.model, name=a.config)
    except memopt.MemoptError as e:
        print("%s: cannot be checked: %s" % (a.config, e))
        return 2
    limit = est["capacity_bytes"]
    if a.budget:
        limit = memopt.parse_size(a.budget)
    busiest = max(est["stages"], key=lambda s: s["peak_bytes"])
    print("%s: peak %s on stage %d at \"%s\" of %s" % (a.config, gib(est["peak_bytes"]), busiest["stage"],
                                                       busiest["peak_event"], gib(limit)))
    acc = est["accuracy"]
    if acc["runs"]:
        print("  the %s rules on %d measured runs: median |error| %.2f%%, worst %.2f%% (%s)"
              % (acc["rules"], len(acc["runs"]), acc["median_abs_error_percent"],
                 acc["max_abs_error_percent"], acc["worst_run"]))
    if est["assumed"]:
        print("  assumed (the model file leaves them out): %s"
              % ", ".join("%s = %s" % (x["path"], x["value"]) for x in est["assumed"]))
    if est["peak_bytes"] > limit:
        fix = memopt.plan(text, model=a.model, budget=limit, name=a.config)
        print("out of memory. %s:\n%s" % ("A plan that fits" if fix["fits"] else
                                          "The smallest peak any plan reaches (it does not fit)",
                                          fix["config"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
