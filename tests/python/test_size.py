"""memopt.size() (bindings/python) against libmemopt.so and the CLI: the typed
answer (SizeResult / SizeLayout keys and types), the same layouts as
`memopt size --json` and as POST /api/v1/size (a `memopt serve` on a
free port), every returned layout re-estimated by
memopt.estimate() to its peak, a training YAML as the base (its own model,
each config the file rewritten and estimating by itself to the layout's
peak), and the refusals. Runs under pytest, or alone (unittest)."""
import json
import os
import re
import subprocess
import sys
import typing
import unittest
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
import memopt  # noqa: E402

MEMOPT = os.environ.get("MEMOPT", os.path.join(ROOT, "build", "memopt"))
GRAPH = os.path.join(ROOT, "tests", "data", "mindformers", "master", "pretrain_qwen3_32b_4k.yaml")


def _check_typed(test, value, hint):
    """value against a TypedDict / List / Dict / Optional hint, recursively."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        test.assertTrue(any(_matches(value, a) for a in typing.get_args(hint)), (value, hint))
    elif origin is list:
        test.assertIsInstance(value, list)
        for v in value:
            _check_typed(test, v, typing.get_args(hint)[0])
    elif origin is dict:
        test.assertIsInstance(value, dict)
        for k, v in value.items():
            _check_typed(test, k, typing.get_args(hint)[0])
            _check_typed(test, v, typing.get_args(hint)[1])
    elif isinstance(hint, type) and issubclass(hint, dict):
        test.assertIsInstance(value, dict)
        hints = typing.get_type_hints(hint)
        test.assertLessEqual(set(value), set(hints), hint.__name__)
        test.assertGreaterEqual(set(value), set(hint.__required_keys__), hint.__name__)
        for k, v in value.items():
            _check_typed(test, v, hints[k])
    elif hint is float:
        test.assertIsInstance(value, (int, float))
    else:
        test.assertIsInstance(value, hint)
        test.assertFalse(hint is int and isinstance(value, bool), value)


def _matches(value, hint):
    try:
        _check_typed(unittest.TestCase(), value, hint)
        return True
    except AssertionError:
        return False


class Size(unittest.TestCase):
    def test_typed_and_as_the_cli(self):
        r = memopt.size("mixtral-8x7b", 16, 64, top=4)
        _check_typed(self, r, memopt.SizeResult)
        out = subprocess.run([MEMOPT, "size", "--model", "mixtral-8x7b", "--devices", "16",
                              "--global-batch", "64", "--top", "4", "--json"],
                             capture_output=True, text=True, check=True).stdout
        cli = json.loads(out)
        self.assertEqual([(l["parallel"], l["training"], l["peak_bytes"]) for l in r["layouts"]],
                         [(l["parallel"], l["training"], l["peak_bytes"])
                          for l in cli["layouts"]])
        self.assertEqual(r["rejected"], cli["rejected"])
        self.assertEqual(r["rejections"], cli["rejections"])
        # mixtral-8x7b: 32 heads, 8 query groups; 16 devices, 8 a node:
        # TP 16 is cut by the node rule with its two numbers
        node = [g for g in r["rejections"] if g["code"] == "tp_node"]
        self.assertEqual([g["params"] for g in node],
                         [{"tensor_parallel": 16, "devices_per_node": 8}])
        for g in r["rejections"]:
            self.assertEqual(r["rejected"][g["reason"]], g["count"])

    def test_as_the_api(self):
        """size() answers what POST /api/v1/size answers for the same
        request: a count with a budget, and a device range (its smallest
        count that fits)."""
        srv = subprocess.Popen([MEMOPT, "serve", "--port", "0"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        try:
            port = None
            for line in srv.stderr:
                m = re.search(r"listening on http://[^\s:]+:(\d+)", line)
                if m:
                    port = int(m.group(1))
                    break
            self.assertIsNotNone(port, "no 'listening on' line from memopt serve")
            for py, body in (
                    (dict(model="llama3-70b", devices=64, global_batch=64, top=6, budget=48 * 2 ** 30),
                     {"model": "llama3-70b", "devices": 64, "global_batch": 64, "top": 6,
                      "budget": 48 * 2 ** 30}),
                    (dict(model="mixtral-8x7b", devices=(4, 32), global_batch=64, top=4),
                     {"model": "mixtral-8x7b", "devices": "4-32", "global_batch": 64, "top": 4})):
                r = memopt.size(py.pop("model"), py.pop("devices"), py.pop("global_batch"), **py)
                req = urllib.request.Request("http://127.0.0.1:%d/api/v1/size" % port,
                                             data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=120) as resp:
                    api = json.loads(resp.read())
                key = lambda l: (l["parallel"], l["training"], l["peak_bytes"], l["step_seconds"],
                                 l["fits"], l["config"])
                self.assertTrue(r["layouts"], body)
                self.assertEqual([key(l) for l in r["layouts"]], [key(l) for l in api["layouts"]], body)
                for k in ("rejected", "rejections", "accepted", "estimated", "planned", "complete"):
                    self.assertEqual(r[k], api[k], (k, body))
                self.assertEqual(r["smallest_devices"], api.get("smallest_devices"), body)
            self.assertIsNotNone(r["smallest_devices"])
        finally:
            srv.terminate()
            srv.wait(timeout=30)
            srv.stderr.close()

    def test_every_layout_reestimates(self):
        for preset in ("llama3-70b", "mixtral-8x7b"):
            r = memopt.size(preset, 64 if preset == "llama3-70b" else 16, 64, top=5)
            self.assertTrue(r["layouts"] and r["layouts"][0]["fits"], preset)
            for l in r["layouts"]:
                e = memopt.estimate(l["config"], model=l["model"])
                self.assertEqual(e["peak_bytes"], l["peak_bytes"], (preset, l["parallel"]))

    def test_base(self):
        with open(GRAPH) as f:
            base = f.read()
        r = memopt.size(None, 16, 64, top=3, base=base)
        _check_typed(self, r, memopt.SizeResult)
        self.assertEqual(len(r["layouts"]), 3)
        for l in r["layouts"]:
            conf = l["config"]
            self.assertEqual(conf.splitlines()[:20], base.splitlines()[:20])
            self.assertIn("recompute:\n", conf)
            self.assertNotIn("recompute_config:", conf)
            e = memopt.estimate(conf)
            self.assertEqual(e["peak_bytes"], l["peak_bytes"], l["parallel"])

    def test_refusals(self):
        with self.assertRaises(TypeError):
            memopt.size(None, 8, 16)
        with self.assertRaises(memopt.MemoptError):
            memopt.size("llama2-7b", 0, 16)
        with self.assertRaises(memopt.MemoptError):   # not a training YAML
            memopt.size("llama2-7b", 8, 16, base="recompute:\n  mode: None\n")
        with self.assertRaises(memopt.InvalidConfig):  # a base with errors
            memopt.size(None, 8, 16, base="parallel_config: {}\nrecompute:\n  mode: bogus\n")


if __name__ == "__main__":
    unittest.main()
