"""bindings/python/memopt.py against libmemopt.so (MEMOPT_LIB or build/)."""
import os
import subprocess
import sys
import threading
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
import memopt  # noqa: E402

REAL = os.path.join(ROOT, "tests", "data", "real-configs", "pynative_ds3.yaml")
MEMOPT = os.environ.get("MEMOPT", os.path.join(ROOT, "build", "memopt"))

GOOD = """recompute:
  mode: full
  full_recompute_layer: [0-15]
swap:
  enable: True
  layer_swap:
    - layers: [16-30]
"""
BAD = """recompute:
  mode: full
  full_recompute_layer: [0-15]
  mode: select
"""


class Binding(unittest.TestCase):
    def test_loads_the_right_library(self):
        self.assertTrue(os.path.exists(memopt.library_path) or "/" not in memopt.library_path)
        if os.environ.get("MEMOPT_LIB"):
            self.assertEqual(memopt.library_path, os.environ["MEMOPT_LIB"])

    def test_struct_layouts_match_the_header(self):
        """Every ctypes Structure against sizeof/offsetof from memopt.h."""
        import ctypes
        import shutil
        import tempfile
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        structs = {"mo_error": memopt._Error, "mo_diag": memopt._Diag,
                   "mo_input": memopt._Input, "mo_rule": memopt._Rule,
                   "mo_action": memopt._Action}
        if memopt._budget_begin is not None:
            structs["mo_budget"] = memopt._Budget
        if memopt.has_estimator():
            structs["mo_estimate_stage"] = memopt._EstStage
            structs["mo_estimate_layer"] = memopt._EstLayer
        if memopt._size_run is not None:
            structs["mo_size_input"] = memopt._SizeInput
            structs["mo_size_layout"] = memopt._SizeLayout
        lines = ["#include <memopt/memopt.h>", "#include <stddef.h>", "#include <stdio.h>",
                 "int main(void) {"]
        for cname, py in structs.items():
            lines.append('printf("%s %%zu\\n", sizeof(%s));' % (cname, cname))
            for f in py._fields_:
                lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));'
                             % (cname, f[0], cname, f[0]))
        if memopt.has_estimator():
            lines.append('printf("MO_EST_BUCKETS %d\\n", (int)MO_EST_BUCKETS);')
        for code in ("MO_ERR_BUDGET", "MO_ERR_CANCELLED", "MO_ERR_MODEL_NEEDED"):
            lines.append('printf("%s %%d\\n", (int)%s);' % (code, code))
        lines.append("return 0; }")
        with tempfile.TemporaryDirectory() as d:
            src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
            with open(src, "w") as f:
                f.write("\n".join(lines) + "\n")
            subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "core", "include"),
                            "-o", exe, src], check=True)
            out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
        got = dict(line.rsplit(" ", 1) for line in out.splitlines())
        for cname, py in structs.items():
            self.assertEqual(int(got[cname]), ctypes.sizeof(py), cname)
            for f in py._fields_:
                self.assertEqual(int(got["%s.%s" % (cname, f[0])]),
                                 getattr(py, f[0]).offset, "%s.%s" % (cname, f[0]))
        if memopt.has_estimator():
            self.assertEqual(int(got["MO_EST_BUCKETS"]), memopt.MO_EST_BUCKETS)
        for code in ("MO_ERR_BUDGET", "MO_ERR_CANCELLED", "MO_ERR_MODEL_NEEDED"):
            self.assertEqual(int(got[code]), getattr(memopt, code), code)

    def test_presets(self):
        names = [p["name"] for p in memopt.presets()]
        self.assertIn("llama2-7b", names)

    def test_validate_valid(self):
        r = memopt.validate(GOOD, model="llama2-7b")
        self.assertEqual(r, {"valid": True, "errors": [], "warnings": []})

    def test_validate_errors_match_the_cli(self):
        r = memopt.validate(BAD, model="llama2-7b", name="bad.yaml")
        self.assertFalse(r["valid"])
        e = r["errors"][0]
        self.assertEqual((e["code"], e["line"], e["column"], e["file"]),
                         ("duplicate-key", 4, 3, "bad.yaml"))
        self.assertIn("hint", e)
        # the same diagnostics as `memopt validate --json`
        if os.access(MEMOPT, os.X_OK):
            import json
            import tempfile
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                f.write(BAD)
            try:
                out = subprocess.run([MEMOPT, "validate", "--json", "-m", "llama2-7b", f.name],
                                     capture_output=True, text=True).stdout
                cli = json.loads(out)
                r2 = memopt.validate(BAD, model="llama2-7b", name=f.name)
                strip = lambda ds: [{k: d[k] for k in ("code", "message", "line", "column", "path")}
                                    for d in ds]
                self.assertEqual(strip(cli["errors"]), strip(r2["errors"]))
                self.assertEqual(cli["valid"], r2["valid"])
            finally:
                os.unlink(f.name)

    def test_warning_is_valid(self):
        r = memopt.validate("recompute:\n  mode: null\n", model="llama2-7b")
        self.assertTrue(r["valid"])
        self.assertTrue(r["warnings"])

    def test_no_model(self):
        r = memopt.validate("recompute:\n  full_recompute_layer: [0-3]\n")
        self.assertFalse(r["valid"])
        self.assertEqual(r["errors"][0]["code"], "model-needed")

    def test_model_as_text_and_file(self):
        import tempfile
        text = [p for p in memopt.presets() if p["name"] == "llama2-7b"]
        self.assertTrue(text)
        yaml_text = subprocess.run([MEMOPT, "presets", "llama2-7b"], capture_output=True,
                                   text=True).stdout if os.access(MEMOPT, os.X_OK) else None
        if not yaml_text:
            self.skipTest("no memopt binary to print the preset")
        self.assertTrue(memopt.validate(GOOD, model=yaml_text)["valid"])
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(yaml_text)
        try:
            self.assertTrue(memopt.validate(GOOD, model=f.name)["valid"])
        finally:
            os.unlink(f.name)

    def test_unknown_preset_is_a_hard_error(self):
        with self.assertRaises(memopt.MemoptError):
            memopt.validate(GOOD, model="no-such-preset")

    def test_expand(self):
        p = memopt.expand(GOOD, model="llama2-7b")
        layers = p["layers"]
        self.assertEqual(len(layers), 32)
        self.assertEqual(layers[0]["actions"][0]["action"], "recompute")
        self.assertEqual(layers[0]["actions"][0]["path"], "")
        self.assertEqual(layers[0]["actions"][0]["rule"],
                         {"section": "recompute", "key": "full_recompute_layer", "line": 3})
        self.assertEqual(layers[16]["actions"][0]["action"], "swap")
        self.assertEqual(layers[31]["actions"], [])
        self.assertEqual(p["prefetch"], 1)

    def test_expand_matches_the_cli(self):
        if not os.access(MEMOPT, os.X_OK):
            self.skipTest("no memopt binary")
        import json
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(GOOD)
        try:
            cli = json.loads(subprocess.run([MEMOPT, "expand", "--json", "-m", "llama2-7b", f.name],
                                            capture_output=True, text=True).stdout)
        finally:
            os.unlink(f.name)
        mine = memopt.expand(GOOD, model="llama2-7b")
        for a, b in zip(cli["layers"], mine["layers"]):
            self.assertEqual((a["layer"], a["type"]), (b["layer"], b["type"]))
            self.assertEqual([(x["path"], x["action"], x["rule"]["key"]) for x in a["actions"]],
                             [(x["path"], x["action"], x["rule"]["key"]) for x in b["actions"]])

    def test_expand_invalid_raises(self):
        with self.assertRaises(memopt.InvalidConfig) as cm:
            memopt.expand(BAD, model="llama2-7b")
        self.assertEqual(cm.exception.result["errors"][0]["code"], "duplicate-key")

    @unittest.skipUnless(os.path.exists(REAL), "no real training YAML")
    def test_real_training_yaml(self):
        with open(REAL, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(memopt.validate(text, devices=8)["valid"])
        p = memopt.expand(text, devices=8)
        self.assertEqual(p["layers"][0]["type"], "mla-dense")
        self.assertTrue(p["layers"][-1]["mtp"])

    def test_threads(self):
        errs = []

        def work():
            try:
                for _ in range(20):
                    assert memopt.validate(GOOD, model="llama2-7b")["valid"]
                    assert not memopt.validate(BAD, model="llama2-7b")["valid"]
            except Exception as e:  # pragma: no cover
                errs.append(e)
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errs, [])

    def test_estimate(self):
        if not memopt.has_estimator():
            with self.assertRaises(memopt.Unavailable):
                memopt.estimate(GOOD, model="llama2-7b")
            self.skipTest("this libmemopt has no estimator yet")
        e = memopt.estimate(GOOD, model="llama2-7b")
        self.assertGreater(e["peak_bytes"], 0)
        self.assertGreaterEqual(e["reserved_peak_bytes"], e["peak_bytes"])
        self.assertEqual(len(e["layers"]), 32)
        self.assertEqual(e["peak_bytes"], max(s["peak_bytes"] for s in e["stages"]))
        # recompute of layers 0-15 keeps less than keeping layer 31 as is
        self.assertLess(e["layers"][0]["activation_bytes"], e["layers"][31]["activation_bytes"])
        base = memopt.estimate("recompute:\n  mode: null\n",
                               model="llama2-7b")
        self.assertLess(e["peak_bytes"], base["peak_bytes"])
        with self.assertRaises(memopt.InvalidConfig):
            memopt.estimate(BAD, model="llama2-7b")

    def test_estimate_matches_the_cli(self):
        if not memopt.has_estimator() or not os.access(MEMOPT, os.X_OK):
            self.skipTest("no estimator or no memopt binary")
        import json
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(GOOD)
        try:
            r = subprocess.run([MEMOPT, "estimate", "--json", "-m", "llama2-7b", f.name],
                               capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        cli = json.loads(r.stdout)
        mine = memopt.estimate(GOOD, model="llama2-7b")
        for k in ("peak_bytes", "reserved_peak_bytes", "capacity_bytes"):
            self.assertEqual(cli[k], mine[k], k)
        self.assertEqual([l["activation_bytes"] for l in cli["layers"]],
                         [l["activation_bytes"] for l in mine["layers"]])
        # the step time and its breakdown, as the CLI's JSON answer gives them
        for k in ("step_seconds", "compute_seconds", "bubble_seconds", "mfu",
                  "tokens_per_second_per_device", "largest_term"):
            self.assertEqual(cli["time"][k], mine["time"][k], k)
        self.assertEqual(mine["time"]["step_seconds"], cli["cost"]["step_seconds"])

    @unittest.skipUnless(os.path.exists(REAL), "no real training YAML")
    def test_estimate_needs_devices(self):
        if not memopt.has_estimator():
            self.skipTest("no estimator")
        with open(REAL, encoding="utf-8") as f:
            text = f.read()
        with self.assertRaises(memopt.MemoptError) as cm:
            memopt.estimate(text)
        self.assertIn("device", str(cm.exception))
        self.assertGreater(memopt.estimate(text, devices=8)["peak_bytes"], 0)

    def test_estimate_time_limit(self):
        """4,096 stages of 100,000 layers, 2^31-1 micro-batches (tens of
        milliseconds of work): WorkLimit from a 1 ms time_limit= and from
        cancel=; a normal estimate under a generous limit is the same as
        without."""
        if not memopt.has_estimator():
            self.skipTest("no estimator")
        with self.assertRaises(memopt.WorkLimit) as cm:
            memopt.estimate(DEEP, time_limit=0.001)
        self.assertTrue(str(cm.exception).startswith("work-limit:"), str(cm.exception))
        self.assertEqual(cm.exception.code, memopt.MO_ERR_BUDGET)
        polls = []
        with self.assertRaises(memopt.WorkLimit) as cm:
            memopt.estimate(DEEP, cancel=lambda: polls.append(1) or len(polls) > 2)
        self.assertTrue(str(cm.exception).startswith("cancelled:"), str(cm.exception))
        self.assertEqual(cm.exception.code, memopt.MO_ERR_CANCELLED)
        self.assertEqual(len(polls), 3)
        self.assertEqual(memopt.estimate(GOOD, model="llama2-7b", time_limit=60)["peak_bytes"],
                         memopt.estimate(GOOD, model="llama2-7b")["peak_bytes"])
        for bad in (0, -1, float("nan")):
            with self.assertRaises(ValueError):
                memopt.estimate(GOOD, model="llama2-7b", time_limit=bad)


class Size(unittest.TestCase):
    def test_size_matches_the_cli(self):
        """memopt.size() gives `memopt size --json`'s answer, and its first
        layout re-estimates to its peak through memopt.estimate()."""
        import json
        r = memopt.size("llama2-7b", 8, 16, top=3)
        cli = json.loads(subprocess.run(
            [MEMOPT, "size", "--model", "llama2-7b", "--devices", "8", "--global-batch", "16",
             "--top", "3", "--json"], capture_output=True, text=True, check=True).stdout)
        self.assertEqual(r, cli)
        best = r["layouts"][0]
        self.assertTrue(best["fits"])
        e = memopt.estimate(best["config"], model=best["model"])
        self.assertEqual(e["peak_bytes"], best["peak_bytes"])

    def test_size_range_and_bad_input(self):
        r = memopt.size("llama2-7b", (4, 16), 16, top=2)
        self.assertIsInstance(r["smallest_devices"], int)
        with self.assertRaises(memopt.MemoptError):
            memopt.size("llama2-7b", 0, 16)


# At the estimate's bounds (tests/hostile/work.py has the same for the CLI).
DEEP = """training: {local_batch_size: 1, global_batch_size: 8}
parallelism: {data_parallel_shard: 1, tensor_parallel: 1, pipeline_parallel: 4096, micro_batch_num: 2147483647}
model: {model_type: llama, vocab_size: 32000, seq_length: 4096, hidden_size: 2048,
  intermediate_size: 5632, num_hidden_layers: 100000, num_attention_heads: 16, num_key_value_heads: 16}
recompute: {mode: full, full_recompute_layer: [0-3]}
"""


if __name__ == "__main__":
    unittest.main()
