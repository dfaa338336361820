#!/usr/bin/env python3
"""The real-file corpus (tests/corpus): every file of SOURCES.tsv through
`memopt import --json`, and the training files' models priced by `memopt
estimate`, against expect.tsv (written from reading each file) and
models.tsv (published parameter counts).

A file is right when:
  train        the import gives a valid model with no error, `estimate`
               runs on it without error, and its parameter count is within
               1% of the published one (when its model has one); a
               Megatron-LM functional-test config also has devices.tsv's
               device count (from the CI recipes beside it), or, where that
               says "-", a model-needed warning for it; a Hugging Face
               config.json, which holds no device count, a model-needed
               warning at parallel.world_size (not a silent 1 device);
  unsupported  the import does not pass it off as a model it can price
               (no valid model, an error, or an `unsupported` diagnostic);
  other        nothing crashes or hangs (exit 0, 1 or 2).

known.tsv lists the files not right today, each with the reason. The check
fails when a file is wrong that is not listed, or listed and now right (the
list only shrinks by being edited). --table prints the table by kind and
version (docs/corpus.md), --wrong the wrong files with what went wrong.
--crash-only (the sanitizer builds, whose library cannot be loaded into
Python): only that no import crashes, hangs or trips a sanitizer.
Run from the repository root; MEMOPT names the binary (default build/memopt).
"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "files")
MEMOPT = os.environ.get("MEMOPT", os.path.abspath("build/memopt"))
LIB = os.environ.get("MEMOPT_LIB", os.path.join(os.path.dirname(MEMOPT), "libmemopt.so"))
TIMEOUT = 60


def read_tsv(name):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append(line.rstrip("\n").split("\t"))
    return rows


class Lib:
    """mo_model_load + mo_model_parameters on a model file's text."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.mo_diags_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        L.mo_diags_free.argtypes = [ctypes.c_void_p]
        L.mo_model_load.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                    ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                    ctypes.c_void_p, ctypes.c_void_p]
        L.mo_model_parameters.restype = ctypes.c_int64
        L.mo_model_parameters.argtypes = [ctypes.c_void_p]
        L.mo_model_free.argtypes = [ctypes.c_void_p]

    def parameters(self, text):
        L = self.lib
        d, m = ctypes.c_void_p(), ctypes.c_void_p()
        if L.mo_diags_new(ctypes.byref(d)) != 0:
            return None
        raw = text.encode()
        rc = L.mo_model_load(ctypes.byref(m), d, raw, len(raw), b"import", None, None)
        n = L.mo_model_parameters(m) if rc == 0 and m.value else None
        if m.value:
            L.mo_model_free(m)
        L.mo_diags_free(d)
        return n


def run(args, cwd=None):
    try:
        p = subprocess.run([MEMOPT] + args, capture_output=True, text=True, timeout=TIMEOUT,
                           cwd=cwd)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def codes(items):
    return [i.get("code", "?") if isinstance(i, dict) else str(i) for i in items or []]


def judge_devices(ans, want):
    """What is wrong with a functional-test config's device count, or None:
    devices.tsv's count read (world_size, no model-needed warning at it), or,
    where the files do not give one ("-"), a model-needed warning that says so."""
    world = None
    for line in ans["yaml"].splitlines():
        bare = line.split("#")[0].strip()
        if bare.startswith("world_size:"):
            world = int(bare.split(":")[1])
    needed = any(isinstance(w, dict) and w.get("code") == "model-needed" and
                 w.get("path") == "parallel.world_size" for w in ans.get("warnings") or [])
    if want == "-":
        if world is not None or not needed:
            return "devices: read as %s, where the recipes give no count for it" % world
        return None
    if world != int(want) or needed:
        return "devices: %s, the CI recipe's %s%s" % (
            world, want, " (with a model-needed warning)" if needed else "")
    return None


def judge_unsaid_devices(ans):
    """What is wrong with a config.json's device count, or None: the file
    gives none, so the import must say so (model-needed at
    parallel.world_size) rather than price 1 device silently."""
    if any(isinstance(w, dict) and w.get("code") == "model-needed" and
           w.get("path") == "parallel.world_size" for w in ans.get("warnings") or []):
        return None
    return "devices: the file gives none, and no model-needed warning says so"


def launch_dir(path):
    """Where a MindSpeed-LLM script runs: its version's checkout root
    (files/mindspeed-script/VERSION, files/mindspeed-ci/VERSION for the CI
    scripts), from which train_fsdp2.py opens the YAML it names; None for the
    other kinds (the working directory)."""
    parts = path.split("/")
    if parts[0] in ("mindspeed-script", "mindspeed-ci"):
        return os.path.join(FILES, parts[0], parts[1])
    return None


def import_args(row):
    """memopt import's arguments for one expect.tsv row: its fifth column,
    when given, names the model a user gives with --model (a file under
    files/, e.g. the Hugging Face config.json of the directory an FSDP2
    launch's model_name_or_path names on the user's machine)."""
    full = os.path.join(FILES, row[0])
    given = row[4] if len(row) > 4 and row[4] else None
    return ["import", "--json"] + (["--model", os.path.join(FILES, given)] if given else []) + [full]


def judge(lib, models, row, none_cfg, devices, unsaid):
    """(right, what) for one expect.tsv row; unsaid: the files that give no
    device count (Hugging Face config.json)."""
    path, cls, key = row[0], row[1], row[2]
    rc, out, err = run(import_args(row), launch_dir(path))
    if rc not in (0, 1, 2):
        return False, "import: exit %s (crash or hang)" % rc
    try:
        ans = json.loads(out) if out.strip() else None
    except ValueError:
        return False, "import: output is not JSON"
    valid = bool(ans and ans.get("valid"))
    errors = codes(ans.get("errors")) if ans else []
    warnings = codes(ans.get("warnings")) if ans else []
    if cls == "other":
        return True, ""
    if cls == "unsupported":
        named = any(c == "unsupported" for c in errors + warnings)
        if not valid or errors or named:
            return True, ""
        return False, "priced as a model it is not (import valid, no error)"
    if not valid or errors:
        first = (err.strip().splitlines() or ["no model"])[0]
        return False, "import: %s" % (",".join(errors) or first)[:160]
    if path in devices:
        wrong = judge_devices(ans, devices[path])
        if wrong:
            return False, wrong
    if path in unsaid:
        wrong = judge_unsaid_devices(ans)
        if wrong:
            return False, wrong
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as t:
        t.write(ans["yaml"])
        model_file = t.name
    try:
        erc, _, eerr = run(["estimate", "--model", model_file, none_cfg])
        params = lib.parameters(ans["yaml"])
    finally:
        os.unlink(model_file)
    if erc not in (0, 1):
        return False, "estimate: exit %s: %s" % (erc, (eerr.strip().splitlines() or [""])[-1][:120])
    if key != "-":
        want = models[key]
        if params is None:
            return False, "no parameter count"
        dev = (params - want) / want
        if abs(dev) > 0.01:
            return False, "parameters %.3gB, published %.3gB (%+.1f%%)" % (params / 1e9, want / 1e9,
                                                                          100 * dev)
    return True, ""


def crash_only():
    bad = 0
    rows = read_tsv("expect.tsv")
    for row in rows:
        rc, _, err = run(import_args(row), launch_dir(row[0]))
        if rc not in (0, 1, 2) or "Sanitizer" in err or "runtime error" in err:
            print("CRASH: %s: exit %s %s" % (row[0], rc, err.strip()[-200:]))
            bad += 1
    print("corpus (crash only): %d files, %d crashed" % (len(rows), bad))
    return 1 if bad else 0


def main():
    if "--crash-only" in sys.argv:
        return crash_only()
    lib = Lib(LIB)
    models = {r[0]: float(r[1]) for r in read_tsv("models.tsv")}
    sources = {r[0]: r for r in read_tsv("SOURCES.tsv")[1:]}
    expect = read_tsv("expect.tsv")
    devices = {r[0]: r[1] for r in read_tsv("devices.tsv")}
    unsaid = {f for f, src in sources.items() if src[1] == "hf-config"}
    known = {r[0]: r[1] for r in read_tsv("known.tsv")} if os.path.exists(
        os.path.join(HERE, "known.tsv")) else {}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as t:
        t.write("recompute:\n  mode: None\n")
        none_cfg = t.name
    results = []
    try:
        for row in expect:
            if row[0] not in sources:
                print("expect.tsv names %s, which SOURCES.tsv does not" % row[0])
                return 1
            right, what = judge(lib, models, row, none_cfg, devices, unsaid)
            results.append((row, right, what))
    finally:
        os.unlink(none_cfg)
    if len(results) != len(sources):
        print("expect.tsv has %d rows, SOURCES.tsv %d files" % (len(results), len(sources)))
        return 1
    if "--table" in sys.argv:
        print_table(results, sources, known)
        return 0
    if "--wrong" in sys.argv:
        for row, right, what in results:
            if not right:
                print("%s\t%s\t%s" % (row[0], row[1], what))
        return 0
    bad = 0
    for row, right, what in results:
        if not right and row[0] not in known:
            print("WRONG (not in known.tsv): %s: %s" % (row[0], what))
            bad += 1
        if right and row[0] in known:
            print("RIGHT now (remove it from known.tsv): %s" % row[0])
            bad += 1
    n_right = sum(1 for _, r, _ in results if r)
    print("corpus: %d files, %d right, %d known wrong%s" % (len(results), n_right,
                                                           len(results) - n_right,
                                                           "" if not bad else ", %d unexpected" % bad))
    return 1 if bad else 0


def print_table(results, sources, known):
    """Files and right ones by kind, version and class; for training files
    also those with a published size and, of them, the ones within 1%."""
    table = {}
    for row, right, _ in results:
        src = sources[row[0]]
        t = table.setdefault((src[1], src[2], row[1]), [0, 0, 0, 0])
        t[0] += 1
        t[1] += right
        if row[2] != "-":
            t[2] += 1
            t[3] += right
    print("| kind | version | class | files | right | with a published size | of them right |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (kind, version, cls), t in sorted(table.items()):
        print("| %s | %s | %s | %d | %d | %d | %d |" % ((kind, version, cls) + tuple(t)))
    tot = [sum(t[i] for t in table.values()) for i in range(4)]
    print("| all | | | %d | %d | %d | %d |" % tuple(tot))


if __name__ == "__main__":
    sys.exit(main())
