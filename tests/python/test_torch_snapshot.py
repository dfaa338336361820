"""bindings/python/memopt_torch_snapshot.py: a snapshot in the shape
torch.cuda.memory._snapshot() gives (device_traces of alloc /
free_requested / free_completed events with time_us and frames), pickled
here (no torch on the test machine), converted, and read by `memopt ledger`
with exact expectations."""
import json
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
import memopt_torch_snapshot as conv  # noqa: E402

MEMOPT = os.environ.get("MEMOPT", os.path.join(ROOT, "build", "memopt"))
MIB = 1 << 20


def ev(action, addr, size, t, name="forward", filename="/home/u/model.py"):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
            "frames": [{"filename": "/usr/lib/python3/torch/nn/modules/module.py",
                        "line": 1500, "name": "_call_impl"},
                       {"filename": filename, "line": 42, "name": name}]}


# weights 64 MiB (freed before recording: only its free is seen), activation
# 16 MiB kept 10 -> 50, a 32 MiB temporary 20 -> 21 (requested at 20.5), a
# gradient 8 MiB from 40, never freed.
SNAPSHOT = {
    "segments": [],
    "device_traces": [[
        ev("free_completed", 0x1000, 64 * MIB, 5),
        ev("alloc", 0x2000, 16 * MIB, 10, "attention"),
        ev("alloc", 0x3000, 32 * MIB, 20, "mlp"),
        ev("free_requested", 0x3000, 32 * MIB, 20.5),
        ev("free_completed", 0x3000, 32 * MIB, 21),
        ev("alloc", 0x3000, 8 * MIB, 40, "backward"),
        ev("free_requested", 0x2000, 16 * MIB, 50),
        ev("free_completed", 0x2000, 16 * MIB, 50),
    ]],
}


class TorchSnapshot(unittest.TestCase):
    def convert(self, snapshot):
        return [json.loads(x) for x in conv.convert(snapshot)]

    def test_rows(self):
        lines = self.convert(SNAPSHOT)
        self.assertEqual(lines[0]["format"], "memopt-trace")
        self.assertEqual(lines[0]["freed_unrecorded"], 1)
        self.assertEqual(lines[1:], [
            {"name": "model.py:42:attention", "bytes": 16 * MIB, "alloc_us": 10, "free_us": 50},
            {"name": "model.py:42:mlp", "bytes": 32 * MIB, "alloc_us": 20, "free_us": 21},
            {"name": "model.py:42:backward", "bytes": 8 * MIB, "alloc_us": 40, "free_us": None},
        ])

    def test_memopt_reads_it(self):
        with tempfile.TemporaryDirectory() as d:
            snap = os.path.join(d, "s.pickle")
            with open(snap, "wb") as f:
                pickle.dump(SNAPSHOT, f)
            trace = os.path.join(d, "t.jsonl")
            with open(trace, "w") as f:
                self.assertEqual(subprocess.call(
                    [sys.executable, os.path.join(ROOT, "bindings", "python",
                                                  "memopt_torch_snapshot.py"), snap], stdout=f), 0)
            out = subprocess.run([MEMOPT, "ledger", trace, "--json"], capture_output=True,
                                 check=True).stdout
        j = json.loads(out)
        self.assertEqual(j["format"], "memopt-trace")
        # at 20: activation 16 + temporary 32 = 48 MiB, the peak
        self.assertEqual(j["peak"]["bytes"], 48 * MIB)
        self.assertEqual(j["peak"]["op"], "model.py:42:mlp")
        self.assertEqual(j["peak"]["time_us"], 20)
        self.assertEqual(j["peak"]["outside_bytes"], 0)

    def test_refuses_objects(self):
        # a pickle that would call os.system on load
        data = b"cos\nsystem\n(S'echo pwned'\ntR."
        with self.assertRaises(pickle.UnpicklingError):
            conv.load_snapshot(data)

    def test_no_trace(self):
        with self.assertRaises(ValueError):
            list(conv.convert({"segments": []}))


if __name__ == "__main__":
    unittest.main()
