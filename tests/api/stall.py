#!/usr/bin/python3
"""No request stalls another, and the server is sound however it is
started (memopt serve). Each check names what it requires; exit status 0
when every one holds. The figures before and after each fix are in
notes/server-survival.md.

- stdio closed: started with `<&- >&- 2>&-` (as some supervisors do), the
  server must answer /healthz (the "listening on" line used to land in
  libmicrohttpd's wake-up pipe, which had taken fd 2: nothing was served).
- stderr stuck: stderr a pipe nobody reads; 3,000 requests (about 500 KB
  of access log) must all be answered, /healthz within 1 s after them, and
  memopt_log_lines_dropped_total must count the lines that found no room
  (every thread froze once about 62 KB were written).
- fd limit: `ulimit -n 256` under the default --max-connections 4096: a
  warning on stderr saying so.
- framing (RFC 9112): Content-Length with Transfer-Encoding, or two
  different Content-Lengths: 400 and the connection closed (the bytes after
  the body were served as a second request); a transfer coding other than
  chunked: 501 at once (no answer at all before); HTTP/1.1 without Host:
  400 (HTTP/1.0 without Host stays 200); every refusal problem+json.
- chunked over the limit: a chunked body that goes on past the body cap
  gets a 413 problem (it was reset after 64 MiB with no answer).
- client shares: one address gets an eighth of --max-inflight (429 past
  it) and of --max-connections: 16 slow uploads from one address under
  --max-inflight 16 leave room for another address (503 before), and 500
  idle connections from 5 addresses under --max-connections 400 leave
  /healthz answering within 1 s (it waited for the idle timeout).
- small bodies off the workers: four 15 KB validate/expand/layout bodies
  of backtracking patterns on --threads 2: /healthz answers each probe
  within 1 s (bodies under 64 KiB were computed on the workers); the same
  for eight 508-byte ledger requests whose estimate runs to the limit.
- work limit on every route: --work-limit 500, validate, expand and
  layout of 1,250 backtracking patterns are 422 work-limit; a validate
  whose client hangs up stops (in flight back to 0 within 2 s).
- expand by segments: a 187-byte expand of 100,000 identical layers is
  answered as one segment, under 64 KiB (it listed every layer: 15.8 MB);
  per_layer true for it is 422 answer-too-large before anything is built.
- web root recreated: removed and made again, the new files are served at
  once (404 until a restart before).
- 100,001 layers: refused as out of range, the one error (it was also
  reported as "the model has no layer count", then its ranges checked
  against a 1-layer model: "outside the model (layers 0-0)").
- refused before built: answers over --max-answer (an estimate's or a
  plan's per-layer figures of 100,000 layers, a layout's layer list) are
  422 answer-too-large before any JSON is built.
- pattern shapes: backtracking patterns are refused where they enter
  (pattern-shape, line and column), at once.
- gzip and ETag: an expand answer is gzip'ed for a client that takes it;
  a GET answer has an ETag and a repeat naming it gets 304."""
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import Server, memopt_binary, parse_raw, raw, request  # noqa: E402

FAILURES = []
SAN = bool(os.environ.get("SAN"))
SLOW = 3 if SAN else 1  # the sanitizer builds are slower: wider time bounds


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def healthz(port, budget=1.0 * SLOW):
    """The status of GET /healthz within budget seconds, or the error."""
    try:
        return request(port, "GET", "/healthz", timeout=budget)[0]
    except OSError as e:
        return repr(e)


def static_page(port, budget=1.0 * SLOW):
    """The status of GET / (the web UI's index) within budget seconds."""
    try:
        return request(port, "GET", "/", timeout=budget)[0]
    except OSError as e:
        return repr(e)


def probe_beside(port, probes=5):
    """/healthz and GET / probes: those that failed or took over 1 s."""
    slow = []
    for _ in range(probes):
        for name, probe in (("/healthz", healthz), ("/", static_page)):
            t = time.time()
            st = probe(port, 5.0 * SLOW)
            if st != 200 or time.time() - t > 1.0 * SLOW:
                slow.append((name, st, round(time.time() - t, 2)))
        time.sleep(0.1)
    return slow


def wait_healthz(port, budget):
    deadline = time.time() + budget
    st = None
    while time.time() < deadline:
        st = healthz(port, 1.0)
        if st == 200:
            return st
        time.sleep(0.1)
    return st


def metric(port, name):
    st, _, data = request(port, "GET", "/metrics", timeout=5)
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_stdio_closed():
    port = free_port()
    proc = subprocess.Popen(["sh", "-c", 'exec "$0" serve --port "$1" <&- >&- 2>&-',
                             memopt_binary(), str(port)])
    try:
        st = wait_healthz(port, 10)
        if st != 200:
            fail("stdio closed: /healthz %r (the server must answer)" % st)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
        if rc != 0:
            fail("stdio closed: exit status %r" % rc)


def test_stderr_stuck():
    port = free_port()
    proc = subprocess.Popen([memopt_binary(), "serve", "--port", str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        if wait_healthz(port, 10) != 200:
            fail("stderr stuck: the server did not start")
            return
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2 * SLOW)
        answered = 0
        try:
            for _ in range(3000):
                conn.request("GET", "/healthz?padding=" + "p" * 100)
                r = conn.getresponse()
                r.read()
                answered += r.status == 200
        except OSError as e:
            fail("stderr stuck: request %d: %r" % (answered + 1, e))
        finally:
            conn.close()
        t = time.time()
        st = healthz(port)
        if st != 200:
            fail("stderr stuck: /healthz %r after %.1f s" % (st, time.time() - t))
        dropped = metric(port, "memopt_log_lines_dropped_total")
        if answered != 3000 or not dropped:
            fail("stderr stuck: %d of 3000 answered, %r lines counted dropped"
                 % (answered, dropped))
        print("  stderr stuck: %d answered, %d log lines dropped" % (answered, dropped or 0))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            fail("stderr stuck: no exit 30 s after SIGTERM")
            return
        if proc.returncode != 0:
            fail("stderr stuck: exit status %r" % proc.returncode)


def test_fd_limit_warning():
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    srv = Server("--quiet", preexec_fn=low_limit)
    try:
        if "open file limit (256" not in srv.stderr():
            fail("fd limit: no warning for ulimit -n 256 under --max-connections 4096: %r"
                 % srv.stderr()[:300])
    finally:
        srv.close()


def problem_of(data):
    got = parse_raw(data)
    if not got:
        return None, None, None
    st, hdrs, body = got
    try:
        code = json.loads(body.decode()).get("type", "").rpartition(":")[2]
    except ValueError:
        code = None
    return st, hdrs, code


POST = (b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\n")
SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def expect(port, name, data, status, close=True, problem=True):
    """Sends data; the answer must be `status` as problem+json (unless not
    problem), and the connection closed when close (at most one answer)."""
    t = time.time()
    out = raw(port, data, timeout=3.0 * SLOW)
    took = time.time() - t
    st, hdrs, code = problem_of(out)
    if st != status or (problem and (not code or "problem+json" not in
                                     (hdrs or {}).get("content-type", ""))):
        fail("framing %s: %r (want %d problem+json) %r" % (name, st, status, out[:160]))
    elif close and (took > 2.0 * SLOW or b"/healthz" in out or b'"status":"ok"' in out):
        fail("framing %s: connection open %.1f s, %r (must close at once, no second answer)"
             % (name, took, out[-200:]))


def test_framing():
    srv = Server("--quiet")
    try:
        p = srv.port
        expect(p, "Content-Length + Transfer-Encoding",
               POST + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + SMUGGLED,
               400)
        expect(p, "two Content-Lengths",
               POST + b"Content-Length: 2\r\nContent-Length: 44\r\n\r\n{}" + SMUGGLED, 400)
        # refused by libmicrohttpd 0.9.75 itself, with its own HTML page and
        # no hook for the body (docs/http-api-and-web-ui.md, "Answers the
        # library makes"): each must still be answered and closed
        expect(p, "Content-Length: 2, 44",
               POST + b"Content-Length: 2, 44\r\n\r\n{}" + SMUGGLED, 400, problem=False)
        expect(p, "chunk size 2^64",
               POST + b"Transfer-Encoding: chunked\r\n\r\n10000000000000000\r\n{}\r\n0\r\n\r\n",
               413, problem=False)
        expect(p, "40 KiB chunk extension",
               POST + b"Transfer-Encoding: chunked\r\n\r\n2;" + b"e" * 40960
               + b"\r\n{}\r\n0\r\n\r\n", 500, problem=False)
        expect(p, "1,000 header lines",
               b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               + b"".join(b"X%d: 1\r\n" % i for i in range(1000)) + b"\r\n", 431, problem=False)
        # more query arguments than libmicrohttpd can hold: it logged a 431
        # and never sent it (the client waited for the idle timeout)
        for n in (65, 500, 2000):
            expect(p, "%d query arguments" % n,
                   b"GET /healthz?" + b"&".join(b"a%d=1" % i for i in range(n))
                   + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414)
        out = raw(p, b"GET /healthz?" + b"&".join(b"a%d=1" % i for i in range(64))
                  + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", timeout=3.0)
        if (parse_raw(out) or [None])[0] != 200:
            fail("framing: 64 query arguments: %r (want 200)" % out[:80])
        for te in (b"identity", b"chunked, identity", b"gzip, chunked", b"gzip"):
            expect(p, "Transfer-Encoding: " + te.decode(),
                   POST + b"Transfer-Encoding: " + te + b"\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501)
        expect(p, "HTTP/1.1 without Host", b"GET /healthz HTTP/1.1\r\n\r\n", 400)
        out = raw(p, b"GET /healthz HTTP/1.0\r\n\r\n", timeout=3.0)
        if (parse_raw(out) or [None])[0] != 200:
            fail("framing: HTTP/1.0 without Host: %r (want 200)" % out[:80])
        ok = raw(p, POST + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", timeout=3.0)
        if (parse_raw(ok) or [None])[0] != 422:
            fail("framing: a plain chunked body: %r (want 422 from validate)" % ok[:80])
        if healthz(p) != 200:
            fail("framing: /healthz after the probes")
    finally:
        srv.close()


def test_chunked_over_limit():
    """A chunked body that goes on past the limit: a 413 problem, not a
    reset (the server drops the connection after 64 MiB read)."""
    import threading
    srv = Server("--quiet", "--max-body", "64KiB")
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=20)
    got = []

    def reader():
        buf = b""
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                buf += b
        except OSError as e:
            buf += b"<%r>" % e
        got.append(buf)

    try:
        c.sendall(POST + b"Transfer-Encoding: chunked\r\n\r\n")
        th = threading.Thread(target=reader)
        th.start()
        chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
        sent = 0
        try:
            while sent < (100 << 20) and not got:
                c.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        th.join(10)
        st, _, code = problem_of(got[0] if got else b"")
        if st != 413 or code != "body-too-large":
            fail("chunked over the limit: %r after %d MiB (want a 413 problem)"
                 % ((got[0] if got else b"")[:80], sent >> 20))
    finally:
        c.close()
        srv.close()


def connect_from(port, source):
    return socket.create_connection(("127.0.0.1", port), timeout=5,
                                    source_address=(source, 0))


def request_from(port, source, method, path, body=None, headers=None, timeout=5):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_client_share_inflight():
    """16 slow uploads from one address fill --max-inflight 16: another
    address must still be served (its share is its own)."""
    srv = Server("--quiet", "--max-inflight", "16", "--max-connections", "256",
                 "--deadline", "20")
    socks = []
    try:
        for _ in range(16):
            s = connect_from(srv.port, "127.0.0.1")
            s.sendall(POST + b"Content-Length: 1000\r\n\r\n{")
            socks.append(s)
        time.sleep(0.5)
        refused = 0
        for s in socks:
            s.settimeout(0.2)
            try:
                refused += s.recv(4096).startswith(b"HTTP/1.1 429")
            except OSError:
                pass
        try:
            st, _ = request_from(srv.port, "127.0.0.2", "POST", "/api/v1/validate",
                                 body=b'{"config": "{}"}',
                                 headers={"Content-Type": "application/json"})
        except OSError as e:
            st = repr(e)
        if st != 200 or refused < 14:
            fail("client share: another address got %r beside 16 slow uploads from one "
                 "(%d of them refused 429; want 200 and >= 14)" % (st, refused))
        print("  client share: other address %r, %d of 16 uploads 429" % (st, refused))
    finally:
        for s in socks:
            s.close()
        srv.close()


def test_client_share_connections():
    """500 idle connections from 5 addresses under --max-connections 400:
    /healthz from a sixth must answer within 1 s (each address keeps to an
    eighth of the connections)."""
    srv = Server("--quiet", "--max-connections", "400")
    socks = []
    try:
        for a in range(2, 7):
            for _ in range(100):
                try:
                    socks.append(connect_from(srv.port, "127.0.0.%d" % a))
                except OSError:
                    pass
        time.sleep(0.5)
        t = time.time()
        st = healthz(srv.port, 5.0)
        took = time.time() - t
        if st != 200 or took > 1.0 * SLOW:
            fail("client share: /healthz %r after %.1f s beside 500 idle connections from "
                 "5 addresses (want 200 within 1 s)" % (st, took))
        print("  idle connections: /healthz %r in %.2f s" % (st, took))
    finally:
        for s in socks:
            s.close()
        srv.close()


def backtracking(n):
    """A validate/expand/layout body of n patterns that backtrack to PCRE2's
    match limit on every layer path: about 10 ms of matching each (40 take
    0.28 s to validate on main at 2f3d5fc), in 49 bytes apiece. Refused
    where they enter now (pattern-shape)."""
    lines = ["recompute:", "  mode: select", "  select_module:"]
    lines += ["    '(?:.*.*.*.*.*.*.*.*.*.*)*z%05d': [0-31]" % i for i in range(n)]
    return json.dumps({"config": "\n".join(lines) + "\n", "model": "llama2-7b"}).encode()


def slow_patterns(n, first=0, model="llama2-7b"):
    """A validate/expand/layout body of n patterns of an accepted shape
    (five '.*' in a row: polynomial, no repeated group) that PCRE2 matches
    against every layer path within its match limit: about 0.8 ms each on
    an idle machine, 9,000 of them (281 KB) 7-8 s of validate, none a limit
    hit, so only the deadline or the hang-up can stop them early."""
    lines = ["recompute:", "  mode: select", "  select_module:"]
    lines += ["    '.*.*.*.*.*%05d': [0-31]" % i for i in range(first, first + n)]
    return json.dumps({"config": "\n".join(lines) + "\n", "model": model}).encode()


def post_open(port, path, body, ctype="application/json"):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
              b"Content-Length: %d\r\n\r\n" % (path.encode(), ctype.encode(), len(body)) + body)
    return s


def test_small_bodies_off_workers():
    """Four 15 KB validates of backtracking patterns on --threads 2: every
    /healthz probe within 1 s (small bodies computed on the workers and
    held both)."""
    srv = Server("--quiet", "--threads", "2", "--compute-threads", "1", "--cache-entries", "0")
    body = slow_patterns(1500)
    if len(body) >= 65536:
        fail("small bodies: the body is %d bytes (want under 64 KiB)" % len(body))
    socks = []
    try:
        for route in ("validate", "expand", "layout", "validate"):
            socks.append(post_open(srv.port, "/api/v1/" + route, body))
        time.sleep(0.3)
        slow = probe_beside(srv.port)
        if slow:
            fail("small bodies: /healthz beside four 15 KB backtracking requests: %r "
                 "(want 5 of 5, and GET /, within 1 s)" % slow)
    finally:
        for s in socks:
            s.close()
        srv.close()


def in_flight(port):
    return metric(port, "memopt_http_requests_in_flight")


def test_ledger_off_workers():
    """Eight 508-byte ledger requests whose estimate runs to the work limit,
    on --threads 2: every /healthz probe within 1 s (small bodies of every
    route computed on the workers: /healthz waited 9.97 s at the defaults)."""
    import survive  # its 20,000-stage estimate
    trace = "Name,Size(KB),Allocation Time(us),Release Time(us)\nA,1,4,9\nB,1,5,9\n"
    body = json.dumps({"trace": trace, "config": survive.HUGE_ESTIMATE.decode()}).encode()
    srv = Server("--quiet", "--threads", "2", "--compute-threads", "1", "--work-limit", "3000",
                 "--cache-entries", "0")
    socks = []
    try:
        for _ in range(8):
            socks.append(post_open(srv.port, "/api/v1/ledger", body))
        time.sleep(0.3)
        slow = probe_beside(srv.port)
        if slow:
            fail("ledger: /healthz beside eight long ledger requests: %r (want 5 of 5 within "
                 "1 s, and GET / too)" % slow)
    finally:
        for s in socks:
            s.close()
        srv.close()


def test_work_limit_every_route():
    """--work-limit 500: validate, expand and layout of 6,000 slow patterns
    each (187 KB, about 5 s of validate and 1.3 s of expand on an idle
    machine, none a match-limit hit; 2,000 were expanded within 0.42 s) are
    422 work-limit (1,250 backtracking patterns were 200 after
    seconds, 12.8 to 19.9 s under load when first measured)."""
    srv = Server("--quiet", "--work-limit", "500", "--cache-entries", "0")
    try:
        # patterns of their own per route: the model keeps what each
        # pattern matched, so a second route on the same patterns would
        # find most of the work done
        for k, route in enumerate(("validate", "expand", "layout")):
            body = slow_patterns(6000, 10000 * (k + 1) % 100000)
            t = time.time()
            st, _, data = request(srv.port, "POST", "/api/v1/" + route, body,
                                  {"Content-Type": "application/json"}, timeout=120)
            took = time.time() - t
            print("  work limit: %s %d in %.2f s" % (route, st, took))
            if st != 422 or b"work-limit" not in data:
                fail("work limit: %s of 6,000 slow patterns answered %d %r in %.1f s "
                     "(want 422 work-limit)" % (route, st, data[:100], took))
    finally:
        srv.close()


def test_hang_up_stops_validate():
    """A validate computing for a while (no work limit; 9,000 slow patterns, about 1.4 s on
    an idle machine and longer under load, never a match-limit hit and under the
    pattern budget, so nothing but the hang-up can end it early) stops once its client
    hangs up. How long it takes to the end is measured first on this machine (other pattern
    texts, so the model's pattern memo cannot serve the second run): the hung-up one must
    still compute a third of that after it was seen computing (the control), then end
    within 2 s of the hang-up and well before it would have ended by itself."""
    srv = Server("--quiet", "--work-limit", "0", "--cache-entries", "0")
    try:
        t = time.time()
        st, _ = request_from(srv.port, "127.0.0.1", "POST", "/api/v1/validate",
                             slow_patterns(9000, 10000),
                             {"Content-Type": "application/json"},
                             timeout=120 * SLOW)
        whole = time.time() - t
        if st != 200:
            fail("hang-up: the timing validate answered %d (want 200)" % st)
        s = post_open(srv.port, "/api/v1/validate", slow_patterns(9000))
        busy, t = in_flight(srv.port), time.time()
        while busy != 2 and time.time() - t < 5.0 * SLOW:
            time.sleep(0.02)
            busy = in_flight(srv.port)
        seen = time.time()
        time.sleep(whole / 3)
        still = in_flight(srv.port)
        s.close()
        t = time.time()
        n = still
        while time.time() - t < 2.0 * SLOW:
            n = in_flight(srv.port)
            if n == 1:  # this /metrics request itself
                break
            time.sleep(0.05)
        ended = time.time() - seen
        print("  hang-up: the validate takes %.1f s to the end; in flight %r while computing, "
              "%r %.1f s later, %r %.1f s after the hang-up" %
              (whole, busy, still, whole / 3, n, time.time() - t))
        if busy != 2 or still != 2 or n != 1:
            fail("hang-up: in flight %r while computing, %r a third of the way (want 2: it must "
                 "still compute), %r 2 s after the client hung up (want 1: the /metrics "
                 "request itself)" % (busy, still, n))
        if whole < 0.6 or ended > 0.8 * whole:
            fail("hang-up: it ended %.2f s after it was seen computing; by itself it takes "
                 "%.2f s (want at least 0.6 s, and the hang-up to end it before 80%% of that)"
                 % (ended, whole))
    finally:
        srv.close()


def test_pattern_shapes():
    """1,474 backtracking patterns (63 KB; 13.5 s of validate when first
    measured, 422 work-limit since the pattern budget) are refused where
    they enter: 200 valid: false, every error a pattern-shape with line and
    column, answered at once; a pattern of an accepted shape beside them
    is not named."""
    srv = Server("--quiet", "--cache-entries", "0")
    try:
        body = json.loads(backtracking(1474))
        body["config"] += "    '.*mlp': [0-3]\n"
        t = time.time()
        st, _, data = request(srv.port, "POST", "/api/v1/validate", json.dumps(body).encode(),
                              {"Content-Type": "application/json"}, timeout=60)
        took = time.time() - t
        ans = json.loads(data) if st == 200 else {}
        errors = ans.get("errors", [])
        shapes = [e for e in errors if e.get("code") == "pattern-shape"]
        first = shapes[0] if shapes else {}
        print("  pattern shapes: %d, %d errors (+%r omitted) in %.2f s"
              % (st, len(errors), ans.get("omitted"), took))
        if (st != 200 or ans.get("valid") is not False or not errors
                or len(shapes) != len(errors) or first.get("line") != 4
                or first.get("column") != 30 or took > 2.0 * SLOW
                or any(".*mlp'" in e.get("message", "") for e in errors)):
            fail("pattern shapes: %d valid %r, %d errors of which %d pattern-shape, first %r, "
                 "%.1f s (want 200 valid false, pattern-shape at line 4 column 30 for each, "
                 "at once)" % (st, ans.get("valid"), len(errors), len(shapes), first, took))
    finally:
        srv.close()


DEEP = (b"model:\n  model_config:\n    type: LlamaConfig\n    num_layers: 100000\n"
        b"    hidden_size: 4096\n    num_heads: 32\n    seq_length: 4096\n    vocab_size: 32000\n"
        b"recompute_config:\n  recompute: True\n")


def test_expand_by_segments():
    """A 187-byte expand of 100,000 identical layers: an answer of segments
    (it listed every layer: 15.8 MB, 243 MB peak); a per-layer listing of
    them, asked for, is refused before it is built."""
    srv = Server("--quiet", "--cache-entries", "0")
    try:
        t = time.time()
        st, _, data = request(srv.port, "POST", "/api/v1/expand", DEEP,
                              {"Content-Type": "application/yaml"}, timeout=120)
        took = time.time() - t
        segs = json.loads(data).get("segments") if st == 200 else None
        print("  expand of 100,000 layers: %d, %d bytes in %.2f s" % (st, len(data), took))
        if st != 200 or len(data) > 65536 or not segs or segs[0].get("last") != 99999:
            fail("expand by segments: %d, %d bytes, segments %r (want 200 under 64 KiB, one "
                 "segment 0-99999)" % (st, len(data), (segs or [])[:1]))
        body = json.dumps({"config": DEEP.decode(), "per_layer": True}).encode()
        st, _, data = request(srv.port, "POST", "/api/v1/expand", body,
                              {"Content-Type": "application/json"}, timeout=120)
        if st != 422 or b"answer-too-large" not in data:
            fail("expand per_layer of 100,000 layers: %d %r (want 422 answer-too-large)"
                 % (st, data[:100]))
    finally:
        srv.close()


def vm_hwm_mb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for ln in f:
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1]) // 1024
    return None


def test_refused_before_built():
    """Answers over --max-answer are refused before they are built (the
    refusal says "at least": a floor, counted before any JSON exists): the
    estimate's per-layer figures of 100,000 layers (22 MB built, 5.4 s and
    222 MB of server memory, then refused), the plan of them (its estimate
    lists every layer), and a layout's layer list under --max-answer 64KiB."""
    deep = DEEP.decode().replace("recompute_config:\n  recompute: True\n",
                                 "recompute:\n  mode: full\n  full_recompute_layer: [0-99999]\n")
    # The default 10 s work limit is not what is tested: under ASan on a loaded
    # machine the plan of 100,000 layers can take longer than that to price.
    srv = Server("--quiet", "--cache-entries", "0", "--work-limit", "120000")
    try:
        st, _, data = request(srv.port, "POST", "/api/v1/estimate",
                              json.dumps({"config": deep, "detail": "layers"}).encode(),
                              {"Content-Type": "application/json"}, timeout=120)
        peak = vm_hwm_mb(srv)
        print("  estimate layers of 100,000: %d, server peak %r MB" % (st, peak))
        if st != 422 or b"answer-too-large" not in data or b"at least" not in data:
            fail("estimate layers of 100,000 layers: %d %r (want 422 answer-too-large, "
                 "refused before it is built: 'at least')" % (st, data[:160]))
        if not SAN and (peak or 0) >= 150:
            fail("estimate layers of 100,000 layers: server peak %r MB (want under 150: the "
                 "answer refused before it is built)" % peak)
        st, _, data = request(srv.port, "POST", "/api/v1/plan",
                              json.dumps({"config": deep, "budget": "20GiB"}).encode(),
                              {"Content-Type": "application/json"}, timeout=120 * SLOW)
        if st != 422 or b"answer-too-large" not in data or b"at least" not in data:
            fail("plan of 100,000 layers: %d %r (want 422 answer-too-large before it is "
                 "built)" % (st, data[:160]))
    finally:
        srv.close()
    srv = Server("--quiet", "--cache-entries", "0", "--max-answer", "64KiB")
    try:
        st, _, data = request(srv.port, "POST", "/api/v1/layout",
                              json.dumps({"config": deep}).encode(),
                              {"Content-Type": "application/json"}, timeout=120)
        if st != 422 or b"answer-too-large" not in data or b"at least" not in data:
            fail("layout of 100,000 layers under --max-answer 64KiB: %d %r (want 422 "
                 "answer-too-large before it is built)" % (st, data[:160]))
    finally:
        srv.close()


def test_layer_count_over_limit():
    """A model of 100,001 layers is refused for its layer count being out of
    range, not reported as having none ("the model has no layer count")."""
    srv = Server("--quiet")
    try:
        body = json.dumps({"config": "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n",
                           "model": {"num_layers": 100001, "hidden_size": 4096, "num_heads": 32,
                                     "seq_length": 4096, "vocab_size": 32000}}).encode()
        st, _, data = request(srv.port, "POST", "/api/v1/validate", body,
                              {"Content-Type": "application/json"})
        errors = json.loads(data).get("errors", []) if st == 200 else []
        codes = [e.get("code") for e in errors]
        if st != 200 or len(errors) != 1 or not any(
                e.get("code") == "type" and "100000" in e.get("message", "") for e in errors):
            fail("100,001 layers: %d %r (want the range error alone: no missing-key, no "
                 "layer-range against the 1 layer the refused model stands with)"
                 % (st, [(e.get("code"), e.get("message")) for e in errors]))
    finally:
        srv.close()


def test_web_root_recreated():
    """The web root removed and made again (a deploy): served again at
    once (it was 404 until a restart)."""
    import shutil
    import tempfile
    root = tempfile.mkdtemp(prefix="memopt-web-")
    web = os.path.join(root, "web")
    os.mkdir(web)
    with open(os.path.join(web, "index.html"), "w") as f:
        f.write("<!doctype html><title>one</title>\n")
    srv = Server("--quiet", "--web-root", web)
    try:
        st1 = request(srv.port, "GET", "/", timeout=5)[0]
        shutil.rmtree(web)
        os.mkdir(web)
        with open(os.path.join(web, "index.html"), "w") as f:
            f.write("<!doctype html><title>two</title>\n")
        st2, _, data = request(srv.port, "GET", "/", timeout=5)
        if st1 != 200 or st2 != 200 or b"two" not in data:
            fail("web root recreated: %r then %r %r (want 200 and the new page)"
                 % (st1, st2, data[:60]))
    finally:
        srv.close()
        shutil.rmtree(root, ignore_errors=True)


def test_gzip_and_etag():
    """An expand answer for a client that takes gzip comes gzip'ed (and
    reads back the same); a GET answer carries an ETag and a repeated
    request naming it gets 304 with no body (both were always sent whole)."""
    import gzip as gz
    srv = Server("--quiet")
    try:
        body = json.dumps({"config": "recompute:\n  mode: full\n  full_recompute_layer: [0-31]\n",
                           "model": "llama2-7b", "all_paths": True}).encode()
        hdrs = {"Content-Type": "application/json"}
        st, h, plain = request(srv.port, "POST", "/api/v1/expand", body, hdrs)
        st2, h2, packed = request(srv.port, "POST", "/api/v1/expand", body,
                                  dict(hdrs, **{"Accept-Encoding": "gzip"}))
        try:
            same = h2.get("content-encoding") == "gzip" and gz.decompress(packed) == plain
        except OSError:
            same = False
        print("  gzip: expand %d bytes -> %d gzip" % (len(plain), len(packed)))
        if st != 200 or st2 != 200 or not same or len(packed) * 4 > len(plain):
            fail("gzip: expand %d/%d, %d bytes -> %d, Content-Encoding %r (want gzip, a quarter "
                 "or less, reading back the same)" % (st, st2, len(plain), len(packed),
                                                       h2.get("content-encoding")))
        st, h, data = request(srv.port, "GET", "/api/v1/presets")
        etag = h.get("etag")
        st2, h2, data2 = request(srv.port, "GET", "/api/v1/presets",
                                 headers={"If-None-Match": etag or '"none"'})
        if st != 200 or not etag or st2 != 304 or data2:
            fail("etag: presets %d ETag %r, again with If-None-Match: %d %r (want 304, empty)"
                 % (st, etag, st2, data2[:40]))
    finally:
        srv.close()


def main():
    t0 = time.time()
    only = sys.argv[1:]
    for name, step in (("stdio closed", test_stdio_closed),
                       ("stderr stuck", test_stderr_stuck),
                       ("fd limit warning", test_fd_limit_warning),
                       ("framing", test_framing),
                       ("chunked over limit", test_chunked_over_limit),
                       ("client share inflight", test_client_share_inflight),
                       ("client share conns", test_client_share_connections),
                       ("small bodies off workers", test_small_bodies_off_workers),
                       ("ledger off workers", test_ledger_off_workers),
                       ("work limit every route", test_work_limit_every_route),
                       ("hang-up stops validate", test_hang_up_stops_validate),
                       ("pattern shapes", test_pattern_shapes),
                       ("expand by segments", test_expand_by_segments),
                       ("refused before built", test_refused_before_built),
                       ("web root recreated", test_web_root_recreated),
                       ("layer count over limit", test_layer_count_over_limit),
                       ("gzip and etag", test_gzip_and_etag)):
        if only and name not in only:
            continue
        t = time.time()
        try:
            step()
        except Exception as e:  # a server that did not start, a refused connection
            fail("%s: %r" % (name, e))
        print("  %-22s %.1f s" % (name, time.time() - t))
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("no request stalls another: ok in %.1f s" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
