#!/usr/bin/python3
"""Writes or checks api/accuracy.tsv: how far the estimate of each rule set
is from memory measured on real runs, run by run. The API and the CLI's
JSON answers carry the rows of the rules an estimate used, so that a
reader sees which runs back a figure and by how much they missed.

Rows (each measured figure is the run's own, never memopt's):
  mindspore  tests/calibration/table.sh, --heldout and --dsv4: Ascend 910B
             peaks measured on MindSpore PyNative runs (the calibration set,
             the runs the rules were not fitted on, and the DeepSeek-V4-style
             runs per stage, most of them open), against the stage's
             allocated peak;
  pytorch    tests/data/megatron/figures.tsv: Megatron-LM's published
             mem-max-allocated-bytes of the last rank at its first step with
             every optimizer state, against the last stage's peak.

    /usr/bin/python3 tools/accuracy_table.py [--memopt build/memopt] --write
    /usr/bin/python3 tools/accuracy_table.py [--memopt build/memopt] --check

--check fails (exit 1) when a row's error moved by more than 0.05
percentage points, or the rows changed: an estimate change then says how it
moved the measured error, and --write records it.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "api", "accuracy.tsv")
HEADER = ("# The estimate against measured peaks, by rule set (tools/accuracy_table.py writes it;\n"
          "# make test checks it). MiB = 1,048,576 bytes; error = (estimated - measured) / measured.\n"
          "rules\trun\tset\tmeasured_mib\testimated_mib\terror_percent\tsource\n")
MIB = 1048576.0


def calibration_rows(memopt, which):
    """which: "" (the calibration rows), "--heldout" or "--dsv4"."""
    heldout = which == "--heldout"
    args = ["sh", "tests/calibration/table.sh"] + ([which] if which else []) + [memopt]
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].replace(".", "").isdigit():
            continue
        run, measured, estimated = cells[0], float(cells[1]), float(cells[2])
        rows.append(("mindspore", "Ascend 910B " + run, "held-out" if heldout else "calibration",
                     measured, estimated,
                     "tests/calibration/table.sh" + (" " + which if which else "")))
    return rows


def megatron_rows(memopt):
    d = os.path.join(ROOT, "tests", "data", "megatron")
    none = os.path.join(d, ".accuracy-none.yaml")
    rows = []
    with open(os.path.join(d, "figures.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    try:
        with open(none, "w", encoding="utf-8") as f:
            f.write("recompute:\n  mode: None\n")
        for line in lines:
            cells = line.split("\t")
            if len(cells) < 3:
                continue
            name, step, measured = cells[0], int(cells[1]), int(cells[2])
            config = os.path.join(d, name + ".config.yaml")
            args = [memopt, "estimate", "--json", "--model", os.path.join(d, name + ".yaml"),
                    config if os.path.exists(config) else none]
            e = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
            estimated = e["stages"][-1]["peak_bytes"]
            rows.append(("pytorch", "Megatron-LM %s, step %d" % (name, step), "published",
                         measured / MIB, estimated / MIB, "tests/data/megatron/figures.tsv"))
    finally:
        if os.path.exists(none):
            os.remove(none)
    return rows


def measure(memopt):
    rows = (calibration_rows(memopt, "") + calibration_rows(memopt, "--heldout") +
            calibration_rows(memopt, "--dsv4") + megatron_rows(memopt))
    return [(r, run, s, m, e, (e - m) / m * 100.0, src) for r, run, s, m, e, src in rows]


def text_of(rows):
    return HEADER + "".join("%s\t%s\t%s\t%.1f\t%.1f\t%+.2f\t%s\n" % r for r in rows)


def read_table():
    rows = []
    with open(TABLE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line.startswith("rules\t"):
                continue
            c = line.rstrip("\n").split("\t")
            rows.append((c[0], c[1], c[2], float(c[3]), float(c[4]), float(c[5]), c[6]))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memopt", default=os.path.join(ROOT, "build", "memopt"))
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    a = ap.parse_args()
    memopt = os.path.abspath(a.memopt)
    rows = measure(memopt)
    if a.write:
        with open(TABLE, "w", encoding="utf-8") as f:
            f.write(text_of(rows))
        print("wrote %s: %d runs" % (os.path.relpath(TABLE, ROOT), len(rows)))
        return 0
    have = read_table()
    bad = []
    if [r[:3] for r in have] != [r[:3] for r in rows]:
        bad.append("the runs differ: the table has %d, the sources %d" % (len(have), len(rows)))
    for h, r in zip(have, rows):
        if h[:3] == r[:3] and abs(h[5] - r[5]) > 0.05:
            bad.append("%s: %s: the table says %+.2f%%, the estimate now %+.2f%%" % (r[0], r[1], h[5], r[5]))
    for b in bad:
        print("accuracy table: " + b)
    if bad:
        print("accuracy table: api/accuracy.tsv is stale: run tools/accuracy_table.py --write "
              "and say in the commit how the measured error moved")
        return 1
    print("accuracy table: %d runs, every error as recorded" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
