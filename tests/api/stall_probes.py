#!/usr/bin/python3
"""The heavier probes of notes/server-survival.md, at the server's defaults
(not in any suite: each takes minutes of CPU on a loaded machine).
MEMOPT=<binary> python3 tests/api/stall_probes.py idle|one|eight|eightslow|mib|deep64

one: a 63 KB validate, expand and layout of 1,474 backtracking patterns
(the issue's first probe), at the defaults and under --work-limit 500;
eightslow: eight validates of 2,000 slow patterns of an accepted shape
(stall.slow_patterns) at once, /healthz beside."""
import os
import resource
import sys
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import Server, request  # noqa: E402
import stall as st  # noqa: E402
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
what = sys.argv[1]
def hz():
    t=time.time(); s=st.healthz(srv.port, 30.0); return s, round(time.time()-t,2)
def vm(k):
    for ln in open("/proc/%d/status" % srv.proc.pid):
        if ln.startswith(k): return int(ln.split()[1])//1024
if what == "idle":
    srv = Server("--quiet")
    socks=[]
    for a in range(2,7):
        for _ in range(1000):
            try: socks.append(st.connect_from(srv.port, "127.0.0.%d" % a))
            except OSError: pass
    time.sleep(1)
    print("idle 5000 from 5 addresses: /healthz", hz(), "open", st.metric(srv.port, "memopt_http_connections_open"))
    for s in socks: s.close()
elif what == "one":
    body = st.backtracking(1474)
    for args in ((), ("--work-limit", "500")):
        srv = Server("--quiet", "--cache-entries", "0", *args)
        for route in ("validate", "expand", "layout"):
            t = time.time()
            s, _, d = request(srv.port, "POST", "/api/v1/" + route, body,
                              {"Content-Type": "application/json"}, timeout=300)
            print("%s 1,474 backtracking patterns (%d bytes) %s: %s in %.2f s %s" % (
                route, len(body), " ".join(args) or "defaults", s, time.time() - t, d[:70]))
        srv.close()
    sys.exit(0)
elif what in ("eight", "eightslow"):
    srv = Server("--quiet", "--cache-entries", "0")
    body = st.backtracking(1290) if what == "eight" else st.slow_patterns(2000)
    res = {}
    def one(i):
        t=time.time()
        try:
            s,_,d = request(srv.port, "POST", "/api/v1/validate", body, {"Content-Type":"application/json"}, timeout=300)
        except OSError as e: s=repr(e)
        res[i]=(s, round(time.time()-t,1))
    th=[threading.Thread(target=one,args=(i,)) for i in range(8)]
    [t.start() for t in th]; time.sleep(0.5)
    print("eight 63 KB validates (%d bytes): /healthz" % len(body), hz())
    [t.join() for t in th]
    print("  answers", sorted(res.values()))
elif what == "deep64":
    srv = Server("--quiet", "--cache-entries", "0")
    res = {}
    def one(i):
        t=time.time()
        try:
            s,_,d = request(srv.port, "POST", "/api/v1/expand", st.DEEP + b"# %d\n" % i, {"Content-Type":"application/yaml"}, timeout=120)
            res[i]=(s, len(d), round(time.time()-t,1))
        except OSError as e: res[i]=(repr(e)[:30],)
    th=[threading.Thread(target=one,args=(i,)) for i in range(64)]
    [t.start() for t in th]; time.sleep(0.3)
    print("64 deep expands: /healthz", hz())
    [t.join() for t in th]
    print("  statuses", Counter(r[0] for r in res.values()), "max s", max(r[-1] for r in res.values() if len(r)>1), "VmHWM MB", vm("VmHWM"))
elif what == "mib":
    srv = Server("--quiet", "--cache-entries", "0")
    body = st.backtracking(21000)
    while len(body) > 1048576: body = st.backtracking(int(21000*1048576/len(body))-10)
    t=time.time()
    s,_,d = request(srv.port, "POST", "/api/v1/validate", body, {"Content-Type":"application/json"}, timeout=300)
    print("1 MiB validate (%d bytes): %s in %.1f s" % (len(body), s, time.time()-t))
srv.close()
