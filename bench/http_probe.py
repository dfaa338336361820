#!/usr/bin/python3
"""The issue 18 probe round's heavy requests against one server, with the
answer, its size, the time it took and the server's RSS (VmHWM, VmRSS)
after each; then eight of the deepest at once while /healthz is probed nine
times. Not part of `make bench` (it takes about 25 s).
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


def rss(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        return " ".join(ln.split(":")[0] + " " + ln.split(":")[1].strip()
                        for ln in f if ln.startswith(("VmHWM", "VmRSS")))


def estimate(port, body):
    try:
        st, _, data = request(port, "POST", "/api/v1/estimate", body,
                              {"Content-Type": "application/yaml"}, timeout=400)
        return st, len(data)
    except OSError as e:
        return repr(e), 0


def main():
    srv = Server("--quiet")
    try:
        for name, body in (("20,000-stage estimate", survive.HUGE_ESTIMATE),
                           ("2,000-stage 60 MB timeline", work.LONG_TIMELINE.encode()),
                           ("sizes out of range", work.HUGE.encode())):
            t0 = time.time()
            st, n = estimate(srv.port, body)
            print("%-28s %s, %d bytes in %.2f s; %s" % (name, st, n, time.time() - t0, rss(srv)))
        res = []
        threads = [threading.Thread(target=lambda: res.append(estimate(srv.port, survive.HUGE_ESTIMATE)))
                   for _ in range(8)]
        t0 = time.time()
        for t in threads:
            t.start()
        time.sleep(1)
        ok = 0
        for _ in range(9):
            try:
                ok += request(srv.port, "GET", "/healthz", timeout=2)[0] == 200
            except OSError:
                pass
            time.sleep(0.3)
        for t in threads:
            t.join()
        print("8 at once: statuses %s in %.1f s; /healthz answered %d of 9 probes; %s"
              % (sorted(set(r[0] for r in res)), time.time() - t0, ok, rss(srv)))
    finally:
        srv.close()


if __name__ == "__main__":
    main()
