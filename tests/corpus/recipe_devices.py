#!/usr/bin/env python3
"""Writes tests/corpus/devices.tsv: the device count each Megatron-LM
functional-test config of the corpus runs on, read from the CI recipes kept
beside them (files/megatron-functional/<version>/tests/test_utils/recipes/,
copied by gather.sh), as Megatron-LM's CI reads them at d98e8a64 (and at the
release tags core_v0.12.0 and core_v0.15.0, whose rules differ only where said):

- tests/test_utils/python_scripts/recipe_parser.py: a product names its test
  case by the first item of `test_case` (flatten_products, line 128), and its
  keys (its inner `products` flattened into it) replace the spec's
  (flatten_workload, lines 183-186): the run has spec.nodes x spec.gpus
  unless a product says otherwise; the recipe's spec.model is the
  test_cases folder (gpt, moe).
  The recipes are every **/*.yaml under tests/test_utils/recipes/
  (load_workloads, line 384: <platform>/*.yaml and the top-level files). At
  core_v0.12.0 (tests/test_utils/python_scripts/common.py: flatten_products
  36-49, flatten_workload 52-64, load_workloads 221) and core_v0.15.0
  (recipe_parser.py: 51-75, 237) the same rules read the *.yaml files of
  tests/test_utils/recipes/ itself, which has no platform folders there.
- tests/functional_tests/shell_test_utils/run_ci_test.sh:297-306: a config's
  MODEL_ENV_VARS.MODEL_ARGS.GPUS_PER_NODE is the processes per node of its
  MODEL_ARGS run (core_v0.15.0: lines 171-179; core_v0.12.0 reads no
  MODEL_ENV_VARS, and none of its configs has one).

The count is the answer when the recipes give one count that is a multiple
of the config's TP x PP x CP; otherwise "-" (no recipe names the test, the
recipes disagree, or their count cannot hold the layout: the count is not
known from the files, and memopt must say so with a model-needed warning).
Independent of memopt: PyYAML and the rules above. Run from the repository
root after gather.sh: python3 tests/corpus/recipe_devices.py
"""
import glob
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "files")


def recipes(version_dir):
    runs = {}
    root = os.path.join(version_dir, "tests", "test_utils", "recipes")
    for path in sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        spec = doc.get("spec") or {}
        for p in doc.get("products") or []:
            case = p["test_case"][0]
            for inner in p.get("products") or [{}]:
                nodes = inner.get("nodes", p.get("nodes", spec.get("nodes")))
                gpus = inner.get("gpus", p.get("gpus", spec.get("gpus")))
                rel = os.path.relpath(path, version_dir)
                runs.setdefault((spec.get("model"), case), set()).add((rel, nodes, gpus))
    return runs


def main():
    out = ["# file\tdevices\twhere from (tests/corpus/recipe_devices.py)"]
    sources = [l.rstrip("\n").split("\t") for l in open(os.path.join(HERE, "SOURCES.tsv"))][1:]
    cache = {}
    for row in sources:
        if row[1] != "megatron-functional":
            continue
        local = row[0]
        parts = row[4].split("/")  # tests/functional_tests/test_cases/MODEL/CASE/...
        model, case = parts[3], parts[4]
        vdir = os.path.join(FILES, row[1], row[2])
        if vdir not in cache:
            cache[vdir] = recipes(vdir)
        with open(os.path.join(FILES, local), encoding="utf-8") as f:
            cfg = yaml.safe_load(f)
        args = cfg.get("MODEL_ARGS") or {}
        mp = 1
        for flag in ("--tensor-model-parallel-size", "--pipeline-model-parallel-size",
                     "--context-parallel-size"):
            mp *= int(args.get(flag, 1))
        env = ((cfg.get("MODEL_ENV_VARS") or {}).get("MODEL_ARGS") or {}).get("GPUS_PER_NODE")
        runs = sorted(cache[vdir].get((model, case), set()))
        counts = {n * (env or g) for _, n, g in runs}
        fit = {c for c in counts if c % mp == 0}
        if not runs:
            out.append("%s\t-\tno recipe names %s" % (local, case))
        elif len(fit) == 1 and len(counts) == 1:
            rel, n, g = runs[0]
            out.append("%s\t%d\t%s: nodes %d x %s %d" % (
                local, fit.pop(), rel, n,
                "MODEL_ENV_VARS.MODEL_ARGS.GPUS_PER_NODE" if env else "gpus", env or g))
        else:
            out.append("%s\t-\t%s; TP x PP x CP = %d" % (local, "; ".join(
                "%s: nodes %d x gpus %d" % r for r in runs), mp))
    with open(os.path.join(HERE, "devices.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
