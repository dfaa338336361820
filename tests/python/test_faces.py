"""The Python face's calls (validate, expand, estimate, plan, migrate,
ledger) and the example that checks a config before run_mindformer.py,
on real files. pytest style (pytest tests/python/test_faces.py); without
pytest, `python3 tests/python/test_faces.py` runs every test_ function.
The library: $MEMOPT_LIB, else build/libmemopt.so; memopt: the installed
package, else bindings/python.

What each file says was read from it (tests/data/mindformers/SOURCES.tsv):
finetune_llama3_1_8b.yaml (MindSpore Transformers research/llama3_1 at
f52743ca) is graph mode with recompute_config (lines 81-86) `recompute:
True` on its 32 layers and `recompute_slice_activation: True` (line 86);
tests/data/ledger/pp2-stage0-optimizer.csv is a trimmed MindSpore
memory-tracker ledger of stage 0 of dsv3-8l-pp2.yaml (its README)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("MEMOPT_LIB", os.path.join(ROOT, "build", "libmemopt.so"))
try:
    import memopt
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
    import memopt

LLAMA = os.path.join(ROOT, "tests/data/mindformers/master/finetune_llama3_1_8b.yaml")
TRACE = os.path.join(ROOT, "tests/data/ledger/pp2-stage0-optimizer.csv")
TRACE_MODEL = os.path.join(ROOT, "tests/data/ledger/dsv3-8l-pp2.yaml")
EXAMPLE = os.path.join(ROOT, "bindings/python/examples/check_before_run.py")
NONE = "recompute:\n  mode: None\n"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def cli_estimate(*args):
    out = subprocess.run([os.path.join(ROOT, "build", "memopt"), "estimate", "--json"] + list(args),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def raises(exc, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc as e:
        return e
    raise AssertionError("%s did not raise %s" % (fn.__name__, exc.__name__))


def test_validate_graph_mode_file():
    r = memopt.validate(read(LLAMA), name="llama.yaml")
    assert r["valid"] and not r["errors"]
    legacy = [w for w in r["warnings"] if w["code"] == "legacy-key"]
    assert legacy and legacy[0]["line"] == 81, legacy


def test_expand_applies_recompute_config():
    layers = memopt.expand(read(LLAMA))["layers"]
    assert len(layers) == 32
    assert all(any(a["path"] == "" and a["action"] == "recompute" for a in l["actions"]) for l in layers)


def test_estimate_is_the_cli_figure():
    e = memopt.estimate(read(LLAMA))
    assert e["peak_bytes"] == cli_estimate(LLAMA)["peak_bytes"]
    assert e["framework"] == "mindspore" and len(e["stages"]) == 1


def test_estimate_carries_the_trust_signals():
    """The measured accuracy of the rules in use, the assumed values and what
    is left out: the rows of api/accuracy.tsv for the mindspore rules (read
    here from the table itself), the same summary and assumed values as
    `memopt estimate --json`, and the file's two unmodelled settings (lines
    86 recompute_slice_activation and context.mode: 0, graph mode)."""
    e = memopt.estimate(read(LLAMA))
    acc = e["accuracy"]
    rows = [l.split("\t") for l in read(os.path.join(ROOT, "api/accuracy.tsv")).splitlines()
            if l.startswith("mindspore\t")]
    assert acc["rules"] == "mindspore" and acc["note"], acc
    assert acc["table"] and os.path.samefile(acc["table"], os.path.join(ROOT, "api/accuracy.tsv"))
    assert [r["run"] for r in acc["runs"]] == [r[1] for r in rows]
    assert [r["error_percent"] for r in acc["runs"]] == [float(r[5]) for r in rows]
    worst = max(rows, key=lambda r: abs(float(r[5])))
    assert acc["worst_run"] == worst[1] and acc["max_abs_error_percent"] == abs(float(worst[5]))
    cli = cli_estimate(LLAMA)
    assert abs(acc["median_abs_error_percent"] - cli["accuracy"]["median_abs_error_percent"]) < 1e-9
    assert e["assumed"] == cli["assumed"] and e["assumed"], e["assumed"]
    assert all(a["path"] and a["value"] and a["source"] for a in e["assumed"])
    left_out = sorted(w["path"] for w in e["warnings"] if w["code"] == "unmodelled")
    assert left_out == ["context.mode", "recompute_config.recompute_slice_activation"], left_out


def test_estimate_without_a_table_says_so():
    env = dict(os.environ, MEMOPT_ACCURACY="/nonexistent/accuracy.tsv",
               PYTHONPATH=os.path.dirname(memopt.__file__))
    out = subprocess.run([sys.executable, "-c", "import memopt, sys, json; "
                          "a = memopt.estimate(open(sys.argv[1]).read())['accuracy']; "
                          "print(json.dumps(a))", LLAMA], env=env, capture_output=True,
                         text=True, check=True).stdout
    a = json.loads(out)
    assert a["rules"] == "mindspore" and a["runs"] == [] and a["table"] is None, a
    assert a["median_abs_error_percent"] is None, a


def test_plan_fits_its_budget():
    p = memopt.plan(NONE, model="llama2-7b", budget="40GiB")
    assert p["fits"] and p["budget_bytes"] == 40 * 2 ** 30
    assert p["peak_bytes"] <= p["budget_bytes"]
    # the plan is a config: valid, and its estimate is the plan's peak
    assert memopt.validate(p["config"], model="llama2-7b")["valid"]
    assert memopt.estimate(p["config"], model="llama2-7b")["peak_bytes"] == p["peak_bytes"]
    raises(ValueError, memopt.plan, NONE, model="llama2-7b", budget="lots")


def test_migrate_graph_mode_file():
    m = memopt.migrate(read(LLAMA))
    assert "\nrecompute:\n  mode: full\n  full_recompute_layer: [0-31]\n" in m["yaml"]
    assert "\nrecompute_config:" not in m["yaml"]
    dropped = [w for w in m["warnings"] if w["code"] == "no-equivalent"]
    assert any(w["line"] == 86 for w in dropped), dropped
    e = raises(memopt.MemoptError, memopt.migrate, NONE)
    assert "recompute_config" in str(e)


def test_ledger_reads_and_compares():
    trace = read(TRACE)
    led = memopt.ledger(trace)
    assert led["format"] and led["rows"] > 0 and "compare" not in led
    cmp_ = memopt.ledger(trace, NONE, model=TRACE_MODEL, stage=0)["compare"]
    assert cmp_["stage"] == 0 and cmp_["estimate_peak_bytes"] > 0
    e = raises(memopt.MemoptError, memopt.ledger, "not,a,ledger\n1,2\n")
    assert str(e)


def run_example(*args):
    return subprocess.run([sys.executable, EXAMPLE] + list(args), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.path.dirname(memopt.__file__)))


def test_example_passes_a_config_that_fits():
    r = run_example(LLAMA)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "peak %.2f GiB" % (cli_estimate(LLAMA)["peak_bytes"] / 2 ** 30) in r.stdout, r.stdout
    assert "the mindspore rules on " in r.stdout and "median |error|" in r.stdout, r.stdout
    assert "assumed (the model file leaves them out): " in r.stdout, r.stdout


def test_example_stops_a_config_with_errors():
    bad = os.path.join(os.environ.get("TMPDIR", "/tmp"), "memopt-example-bad.yaml")
    with open(bad, "w", encoding="utf-8") as f:
        f.write(read(LLAMA) + "swap:\n  enable: True\n  layer_swap:\n    - layers: [0-99]\n")
    try:
        r = run_example(bad)
    finally:
        os.remove(bad)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "error[layer-range]" in r.stdout


def test_example_stops_a_config_over_its_budget():
    r = run_example(LLAMA, "--budget", "30GiB")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "out of memory" in r.stdout


if __name__ == "__main__":
    failed = 0
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    for n, f in tests:
        try:
            f()
            print("ok   %s" % n)
        except Exception as e:  # noqa: BLE001 - report every failure
            failed += 1
            print("FAIL %s: %r" % (n, e))
    print("%d of %d tests passed" % (len(tests) - failed, len(tests)))
    sys.exit(1 if failed else 0)
