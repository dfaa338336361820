#!/usr/bin/python3
"""A PyTorch memory snapshot as a memopt trace, for `memopt ledger`.

    torch.cuda.memory._record_memory_history()
    ... train a few steps ...
    pickle.dump(torch.cuda.memory._snapshot(), open("snapshot.pickle", "wb"))

    python3 memopt_torch_snapshot.py snapshot.pickle [--device N] > trace.jsonl
    memopt ledger trace.jsonl --model M [CONFIG]

The snapshot's `device_traces[N]` events are paired by address: an "alloc"
opens an allocation, its "free_completed" (else "free_requested", or
"free" in older PyTorch) closes it.
Each allocation becomes one JSON line {"name", "bytes", "alloc_us",
"free_us"} (free_us null: still allocated when the snapshot was taken), in
allocation order, after the header {"format": "memopt-trace", "version": 1}.
The name is the innermost Python frame outside torch ("file:line:function"),
else the innermost frame, else "alloc". Snapshots without "time_us" (older
PyTorch) get the event's index as its time; the header says so. Frees of
blocks allocated before recording began are counted in the header
("freed_unrecorded"), not as rows: their bytes are not in the trace.

The pickle is read with an unpickler that admits no class: a snapshot holds
only dicts, lists, strings and numbers, so a file that needs more is refused
instead of run. C could read this pickle too, but the JSON-lines form is what
memopt's reader streams, and it keeps the C side to one parser per format.
"""

import argparse
import io
import json
import pickle
import sys

NAME_MAX = 255


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(
            "the snapshot holds an object (%s.%s): not a torch memory snapshot" % (module, name))


def load_snapshot(data):
    """The snapshot dict from the pickle's bytes (or a JSON document)."""
    if data[:1] in (b"{", b"["):
        return json.loads(data)
    return _PlainUnpickler(io.BytesIO(data)).load()


def _frame_name(frames):
    if not frames:
        return "alloc"
    pick = None
    for f in frames:
        if "/torch/" not in f.get("filename", "") and f.get("filename", "").endswith(".py"):
            pick = f
            break
    f = pick or frames[0]
    name = "%s:%s:%s" % (f.get("filename", "?").split("/")[-1], f.get("line", 0), f.get("name", "?"))
    return name[:NAME_MAX]


def convert(snapshot, device=0):
    """The trace's lines (strings) for one device."""
    traces = snapshot.get("device_traces") if isinstance(snapshot, dict) else None
    if not isinstance(traces, list) or device >= len(traces) or not isinstance(traces[device], list):
        raise ValueError("no device_traces[%d] in the snapshot (record with "
                         "torch.cuda.memory._record_memory_history() before taking it)" % device)
    events = traces[device]
    timed = all("time_us" in e for e in events)
    rows, open_at, unrecorded = [], {}, 0
    for i, e in enumerate(events):
        action, addr = e.get("action"), e.get("addr")
        t = e["time_us"] if timed else i
        if action == "alloc":
            open_at[addr] = len(rows)
            rows.append({"name": _frame_name(e.get("frames")), "bytes": int(e.get("size", 0)),
                         "alloc_us": t, "free_us": None})
        elif action in ("free", "free_requested", "free_completed"):
            k = open_at.get(addr)
            if k is None:  # allocated before recording began
                unrecorded += action != "free_requested"
                continue
            rows[k]["free_us"] = t  # the completed free, when it comes, wins
            if action != "free_requested":
                del open_at[addr]
    rows.sort(key=lambda r: r["alloc_us"])
    header = {"format": "memopt-trace", "version": 1, "source": "pytorch-snapshot",
              "device": device, "time": "time_us" if timed else "event index",
              "freed_unrecorded": unrecorded}
    yield json.dumps(header)
    for r in rows:
        yield json.dumps(r)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snapshot", help="torch.cuda.memory._snapshot() saved with pickle")
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        with open(args.snapshot, "rb") as f:
            snap = load_snapshot(f.read())
        for line in convert(snap, args.device):
            sys.stdout.write(line + "\n")
    except (OSError, ValueError, pickle.UnpicklingError, EOFError) as e:
        sys.stderr.write("memopt_torch_snapshot: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
