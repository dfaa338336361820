#!/usr/bin/python3
"""The heaviest valid requests (what a hostile or careless client can ask),
each against a fresh server:
the answer, its size, the time it took and the server's memory (VmHWM: the
peak; VmRSS right after the answer and 2 s later); then eight of the
deepest estimates at once while /healthz is probed nine times, and eight
1 MiB layout floods at once. Not part of `make bench` (it takes about a
minute). See bench/rss_probe.sh for the long run.
    python3 bench/http_probe.py [MEMOPT]"""
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
sys.path.insert(0, os.path.join(ROOT, "tests", "hostile"))
if len(sys.argv) > 1:
    os.environ["MEMOPT"] = os.path.abspath(sys.argv[1])
from common import Server, request  # noqa: E402
import survive  # noqa: E402
import work  # noqa: E402

# the first probe: 100,000 stages and 2^31-1 micro-batches
DEEPEST = survive.HUGE_ESTIMATE.replace(b"pipeline_parallel: 20000", b"pipeline_parallel: 100000") \
    .replace(b"num_hidden_layers: 20000", b"num_hidden_layers: 100000")


def status(srv):
    out = {}
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for ln in f:
            if ln.startswith(("VmHWM", "VmRSS")):
                out[ln.split(":")[0]] = int(ln.split()[1]) // 1024
    return out


def post(port, path, body, ctype):
    try:
        st, _, data = request(port, "POST", path, body, {"Content-Type": ctype}, timeout=400)
        return st, len(data)
    except OSError as e:
        return repr(e), 0


def memory(srv):
    s = status(srv)
    time.sleep(2)
    return "peak %d MB, RSS after %d MB, 2 s later %d MB" % (s["VmHWM"], s["VmRSS"], status(srv)["VmRSS"])


CASES = (
    ("100,000-stage estimate (%d bytes)" % len(DEEPEST), "/api/v1/estimate", DEEPEST, "application/yaml"),
    ("20,000-stage estimate", "/api/v1/estimate", survive.HUGE_ESTIMATE, "application/yaml"),
    ("2,000-stage 60 MB timeline", "/api/v1/estimate", work.LONG_TIMELINE.encode(), "application/yaml"),
    ("sizes out of range", "/api/v1/estimate", work.HUGE.encode(), "application/yaml"),
    ("1 MiB layout, 3,640 patterns", "/api/v1/layout", survive.layout_flood(), "application/json"),
)


def at_once(name, path, body, ctype, probe):
    srv = Server("--quiet")
    try:
        res = []
        threads = [threading.Thread(target=lambda: res.append(post(srv.port, path, body, ctype)))
                   for _ in range(8)]
        t0 = time.time()
        for t in threads:
            t.start()
        ok = 0
        if probe:
            time.sleep(1)
            for _ in range(9):
                try:
                    ok += request(srv.port, "GET", "/healthz", timeout=2)[0] == 200
                except OSError:
                    pass
                time.sleep(0.3)
        for t in threads:
            t.join()
        took = time.time() - t0
        print("8 x %-26s statuses %s in %.1f s%s; %s" % (
            name, sorted(set(r[0] for r in res)), took,
            "; /healthz answered %d of 9 probes" % ok if probe else "", memory(srv)))
    finally:
        srv.close()


def main():
    for name, path, body, ctype in CASES:
        srv = Server("--quiet")
        try:
            t0 = time.time()
            st, n = post(srv.port, path, body, ctype)
            print("%-36s %s, %d bytes in %.2f s; %s" % (name, st, n, time.time() - t0, memory(srv)))
        finally:
            srv.close()
    at_once("20,000-stage estimates", "/api/v1/estimate", survive.HUGE_ESTIMATE, "application/yaml", True)
    at_once("1 MiB layouts", "/api/v1/layout", survive.layout_flood(), "application/json", True)


if __name__ == "__main__":
    main()
