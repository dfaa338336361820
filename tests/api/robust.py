#!/usr/bin/python3
"""Robustness of the HTTP server: malformed request lines, 64 KiB headers,
bodies over the limit (announced, chunked, unannounced), slow-loris and idle
clients, 1,000 concurrent connections and 10,000 random and mutated JSON
bodies. /healthz must keep answering, every answer must be well-formed (and
documented, for API calls), and the server must exit 0 on SIGTERM (under
`make check` that includes ASan's leak check). FUZZ_COUNT overrides 10,000."""
import http.client
import json
import os
import random
import re
import selectors
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Server, Spec, chunked, parse_raw, raw, request, well_formed_http  # noqa: E402

SPEC = Spec()
FAILURES = []
LOCK = threading.Lock()


def fail(msg):
    with LOCK:
        FAILURES.append(msg)
        if len(FAILURES) <= 30:
            print("FAIL:", msg)


def healthz_ok(port, budget=2.0):
    t0 = time.time()
    try:
        st, _, _ = request(port, "GET", "/healthz", timeout=budget)
    except OSError as e:
        fail("/healthz: %s" % e)
        return None
    dt = time.time() - t0
    if st != 200:
        fail("/healthz answered %d" % st)
    return dt


# ---- malformed requests ----------------------------------------------------

MALFORMED = [
    b"GARBAGE\r\n\r\n",
    b"GET\r\n\r\n",
    b"GET / HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET / HTTP/1.1\r\n\r\n",
    b"GET /  HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n",
    b"\x00\x01\x02\xff\xfe\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + bytes(range(64)) + b"\r\n\r\n",
    b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n : empty name\r\n\r\n",
    b"GET / HTTP/1.1\nHost: 127.0.0.1\n\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\tfolded\r\n\r\n",
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}{}{}",
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n\r\n",
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
    b"GET /%zz%00%%2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET http://evil.example/etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET ../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"get /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"BREW /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /healthz HTTP/1.0\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
]


# libmicrohttpd 0.9.75 answers an unparsable Content-Length itself with a
# 400 whose header block is sent twice (its own error path, before any
# handler runs); the connection is closed after it. Checked separately.
BAD_LENGTH = [
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n",
    b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n",
]


def test_malformed(port):
    for payload in BAD_LENGTH:
        resp = raw(port, payload, timeout=5)
        if not resp.startswith(b"HTTP/1.1 400 ") or b"Connection: close" not in resp:
            fail("bad Content-Length %r: answer %r" % (payload[-30:], resp[:120]))
    for payload in MALFORMED:
        resp = raw(port, payload, timeout=5)
        if not well_formed_http(resp):
            fail("malformed request %r: answer %r" % (payload[:60], resp[:120]))
        parsed = parse_raw(resp)
        if parsed and "json" in parsed[1].get("content-type", ""):
            body = parsed[2][: int(parsed[1].get("content-length", len(parsed[2])))]
            try:
                json.loads(body)
            except ValueError:
                fail("malformed request %r: JSON answer does not parse" % payload[:60])
    if b"root:" in raw(port, b"GET /../../../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):
        fail("traversal served /etc/passwd")


def test_big_headers(port):
    one = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n"
    many = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(
        b"X-H%d: %s\r\n" % (i, b"b" * 60) for i in range(1100)) + b"\r\n"
    for name, payload in (("one 64 KiB header", one), ("1,100 headers", many)):
        resp = raw(port, payload, timeout=5)
        if not well_formed_http(resp):
            fail("%s: %r" % (name, resp[:120]))
        elif resp.startswith(b"HTTP/1.1 200"):
            fail("%s: accepted" % name)


# ---- the server's own answers before any route -------------------------------

def problem_of(port, payload, status, code, what):
    """Sends payload raw; the answer must be a problem+json of status/code."""
    parsed = parse_raw(raw(port, payload, timeout=5))
    if not parsed:
        fail("%s: no answer" % what)
        return None
    st, hdrs, body = parsed
    ctype = hdrs.get("content-type", "")
    if st != status or ctype != "application/problem+json":
        fail("%s: %d %s (want %d problem+json)" % (what, st, ctype, status))
        return None
    try:
        doc = json.loads(body[: int(hdrs.get("content-length", len(body)))])
    except ValueError:
        fail("%s: the problem does not parse" % what)
        return None
    if doc.get("status") != status or doc.get("type") != "urn:memopt:problem:" + code:
        fail("%s: %r" % (what, doc))
    return doc


def test_own_answers(port):
    """A 10 KiB request target, 20 KiB of headers (both within the 32 KiB
    MHD keeps for a request head), a Host naming another site, a charset
    that only starts like UTF-8: problem+json answers from the server."""
    problem_of(port, b"GET /healthz?" + b"q" * 10240 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
               414, "uri-too-long", "10 KiB query")
    problem_of(port, b"GET /" + b"p" * 10240 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
               414, "uri-too-long", "10 KiB path")
    problem_of(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(
        b"X-H%d: %s\r\n" % (i, b"h" * 1000) for i in range(20)) + b"\r\n",
        431, "headers-too-large", "20 KiB of headers")
    for host in (b"evil.example", b"evil.example:%d" % port, b"127.0.0.1.evil.example",
                 b"localhost.evil.example", b"[::1", b"1:2:3"):
        problem_of(port, b"GET /api/v1/presets HTTP/1.1\r\nHost: " + host + b"\r\n\r\n",
                   421, "host-not-allowed", "Host: %s" % host.decode())
    for host in ("127.0.0.1:%d" % port, "localhost", "LOCALHOST:%d" % port, "[::1]:%d" % port,
                 "app.localhost", "10.1.2.3", "localhost."):
        st, _, _ = request(port, "GET", "/healthz", headers={"Host": host})
        if st != 200:
            fail("Host: %s answered %d" % (host, st))
    problem_of(port, (
        b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json; charset=utf-8x\r\nContent-Length: 2\r\n\r\n{}"),
        415, "unsupported-media-type", "charset=utf-8x")
    st, hdrs, _ = request(port, "GET", "/api/v1/presets")
    if st != 200 or "x-memopt-cache" in hdrs:
        fail("GET /api/v1/presets: %d, X-Memopt-Cache %r" % (st, hdrs.get("x-memopt-cache")))
    st, hdrs, _ = request(port, "POST", "/api/v1/validate", body='{"config": "recompute: {}"}',
                          headers={"Content-Type": "application/json"})
    if st != 200 or hdrs.get("x-memopt-cache") not in ("hit", "miss"):
        fail("POST validate: %d, X-Memopt-Cache %r" % (st, hdrs.get("x-memopt-cache")))


def test_allowed_host():
    """--allowed-host lists the names besides IP literals and localhost."""
    srv = Server("--allowed-host", "memopt.example", "--quiet")
    try:
        for host, want in (("memopt.example:8080", 200), ("MEMOPT.example", 200),
                           ("other.example", 421), ("127.0.0.1", 200)):
            st, _, _ = request(srv.port, "GET", "/healthz", headers={"Host": host})
            if st != want:
                fail("--allowed-host memopt.example: Host %s answered %d" % (host, st))
    finally:
        srv.close()
    srv = Server("--allowed-host", "*", "--quiet")
    try:
        st, _, _ = request(srv.port, "GET", "/healthz", headers={"Host": "anything.example"})
        if st != 200:
            fail("--allowed-host '*': answered %d" % st)
    finally:
        srv.close()


# ---- bodies over the limit ---------------------------------------------------

def test_big_bodies(port):
    head = (b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
    big = b'{"config": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    # announced: answered after the headers, before the body
    resp = parse_raw(raw(port, head + b"Content-Length: %d\r\n\r\n" % len(big) + big[:65536], timeout=10))
    if not resp or resp[0] != 413:
        fail("announced 2 MiB body: %r" % (resp and resp[0]))
    # chunked: read and discarded, answered at the end
    resp = parse_raw(raw(port, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(big, 100000), timeout=20))
    if not resp or resp[0] != 413:
        fail("chunked 2 MiB body: %r" % (resp and resp[0]))
    else:
        for e in SPEC.check("/api/v1/validate", "POST", resp[0], resp[1], resp[2]):
            fail(e)
    # neither: HTTP/1.1 says the body is empty; the rest is garbage
    resp = raw(port, head + b"\r\n" + big[:200000], timeout=10)
    if not resp.startswith(b"HTTP/1.1 ") or not well_formed_http(resp):
        fail("unannounced body: %r" % resp[:120])
    # exactly at the limit still parses (as JSON; the config is big but fine)
    at = b'{"config": "' + b"#" * (1024 * 1024 - 14) + b'"}'
    resp = parse_raw(raw(port, head + b"Content-Length: %d\r\n\r\n" % len(at) + at, timeout=30))
    if not resp or resp[0] == 413:
        fail("a body of exactly 1 MiB: %r" % (resp and resp[0]))


# ---- slow and idle clients -----------------------------------------------------

def test_slow_clients(port, timeout_s):
    socks = []
    for i in range(100):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2 == 0:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        else:
            s.sendall(b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100000\r\n\r\n{")
        socks.append(s)
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(50)]
    worst = 0.0
    t_end = time.time() + timeout_s + 1.5
    while time.time() < t_end:
        for s in socks:
            try:
                s.send(b"a")
            except OSError:
                pass
        worst = max(worst, healthz_ok(port) or 0.0)
        time.sleep(0.2)
    if worst > 1.0:
        fail("slow-loris: /healthz took %.2f s" % worst)
    closed = 0
    for s in idle:
        s.settimeout(2)
        try:
            closed += s.recv(1) == b""
        except OSError:
            closed += 1
        s.close()
    if closed < len(idle):
        fail("idle connections: %d of %d closed after the %d s timeout" % (closed, len(idle), timeout_s))
    for s in socks:
        s.close()


def test_many_connections(port, n=1000):
    sel = selectors.DefaultSelector()
    socks = []
    for i in range(n):
        # from 8 addresses: one address may hold an eighth of the
        # connections (--max-per-client)
        s = socket.create_connection(("127.0.0.1", port), timeout=10,
                                     source_address=("127.0.0.%d" % (2 + i % 8), 0))
        socks.append(s)
    for s in socks:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, bytearray())
    ok = 0
    other = []
    deadline = time.time() + 30
    pending = n
    while pending and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            try:
                chunk = key.fileobj.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            key.data.extend(chunk)
            if not chunk or re.search(rb"\r\n\r\n.*\}", bytes(key.data), re.S):
                if key.data.startswith(b"HTTP/1.1 200"):
                    ok += 1
                else:
                    other.append(bytes(key.data[:60]))
                sel.unregister(key.fileobj)
                pending -= 1
    if healthz_ok(port) is None or ok != n:
        fail("1,000 concurrent connections: %d answered 200, %d pending; others %r"
             % (ok, pending, other[:5]))
    for s in socks:
        s.close()
    sel.close()


# ---- random and mutated bodies ---------------------------------------------------

SEEDS = [
    "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n",
    "recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-7]\n  exclude_op:\n    '.*allgather': [0-3]\n",
    "recompute_comm:\n  enable: True\n  select_module:\n    '.*\\.all_gather': [0-3]\n",
    "swap:\n  enable: True\n  default_prefetch: 1\n  layer_swap:\n    - layers: [16-30]\n"
    "  op_swap:\n    - op_name: '.*mlp'\n      layers: [2-3]\n",
    "recompute:\n  mode: full\n  full_recompute_layer: [5, 0-3]\n",
    "recompute:\n  mode: select\n  select_module:\n    '(a+)+$': [0-3]\n    '[': [1]\n",
    "recompute: &a [*a]\n",
    "a: &a [*a, *a, *a]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b, *b]\n",
]
JUNK = ["", "\x00", "\ud800", "\xff", "'", '"', "{", "[", "]", "}", ":", "- ", "\n", "\t", "&a", "*a",
        "!!python/object", "0x1F", "010", "1e999", "-", "99999999999999999999", "\u202e", "%", "\\"]


def mutate_text(rng, text):
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        i = rng.randrange(len(text) + 1)
        if op == 0:
            text = text[:i] + rng.choice(JUNK) + text[i:]
        elif op == 1:
            text = text[:i] + text[i + rng.randint(1, 8):]
        elif op == 2 and text:
            j = rng.randrange(len(text))
            text = text[:i] + text[j:j + rng.randint(1, 30)] + text[i:]
        elif op == 3:
            text = text[:i]
        else:
            text = text[:i] + chr(rng.randrange(1, 0x3000)) + text[i:]
    return text


def random_json(rng, depth=0):
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 7, 2 ** 31, 2 ** 63, -2 ** 63, 1.5, -0.0, 1e300])
    if kind in (3, 4):
        return rng.choice(JUNK + ["llama2-7b", "config", "model"])
    if kind == 5:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["config", "model", "devices", "all_paths", "x", ""]): random_json(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def make_body(rng, presets):
    kind = rng.randrange(10)
    seed = rng.choice(SEEDS)
    if kind < 4:  # valid JSON, mutated YAML inside
        obj = {"config": mutate_text(rng, seed)}
        if rng.random() < 0.7:
            obj["model"] = rng.choice(presets)
        if rng.random() < 0.3:
            obj["devices"] = rng.choice([1, 2, 8, 64, 3])
        return "application/json", json.dumps(obj).encode()
    if kind < 6:  # mutated JSON text
        text = json.dumps({"config": seed, "model": rng.choice(presets), "devices": 8})
        return "application/json", mutate_text(rng, text).encode("utf-8", "surrogatepass")
    if kind == 6:  # random JSON values
        return "application/json", json.dumps(random_json(rng)).encode()
    if kind == 7:  # deep nesting and odd bytes
        n = rng.choice([10, 500, 3000, 20000])
        return "application/json", rng.choice([b"[" * n + b"]" * n, b'{"config":' * n,
                                               bytes(rng.randrange(256) for _ in range(200))])
    # a whole mutated YAML body
    return "application/yaml", mutate_text(rng, seed).encode("utf-8", "surrogatepass")


PATHS = ["/api/v1/validate", "/api/v1/expand", "/api/v1/export", "/api/v1/migrate",
         "/api/v1/models/import"]


def fuzz_worker(port, seed, count, presets, stats):
    rng = random.Random(seed)
    conn = None
    for _ in range(count):
        path = rng.choice(PATHS)
        ctype, body = make_body(rng, presets)
        for attempt in range(2):
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("POST", path, body=body, headers={"Content-Type": ctype})
                r = conn.getresponse()
                data = r.read()
                hdrs = {k.lower(): v for k, v in r.getheaders()}
                break
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                conn = None
                if attempt:
                    fail("fuzz %s: %s (body %r)" % (path, e, body[:80]))
                    return
        errs = SPEC.check(path, "POST", r.status, hdrs, data)
        if errs:
            fail("fuzz body %r: %s" % (body[:100], errs[0]))
        with LOCK:
            stats[r.status] = stats.get(r.status, 0) + 1
        if hdrs.get("connection", "").lower() == "close":
            conn.close()
            conn = None
    if conn:
        conn.close()


def test_fuzz(port, total):
    _, _, data = request(port, "GET", "/api/v1/presets")
    presets = [p["name"] for p in json.loads(data)["presets"]] + ["nope"]
    stats = {}
    threads = [threading.Thread(target=fuzz_worker, args=(port, 1000 + i, total // 8, presets, stats))
               for i in range(8)]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            healthz_ok(port, budget=10)
            stop.wait(0.5)

    watcher = threading.Thread(target=watch)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    print("fuzz: %d bodies, statuses %s" % (sum(stats.values()), dict(sorted(stats.items()))))


def test_metrics(port):
    _, _, data = request(port, "GET", "/metrics")
    for ln in data.decode().splitlines():
        if ln.startswith("#"):
            continue
        if not re.match(r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9.e+-]+$', ln):
            fail("metrics line: %r" % ln)


def main():
    timeout_s = 2
    total = int(os.environ.get("FUZZ_COUNT", "10000"))
    srv = Server("--timeout", str(timeout_s), "--web-root", "web")
    t0 = time.time()
    try:
        steps = [("malformed requests", lambda: test_malformed(srv.port)),
                 ("big headers", lambda: test_big_headers(srv.port)),
                 ("own answers", lambda: test_own_answers(srv.port)),
                 ("allowed hosts", test_allowed_host),
                 ("big bodies", lambda: test_big_bodies(srv.port)),
                 ("slow and idle clients", lambda: test_slow_clients(srv.port, timeout_s)),
                 ("1,000 connections", lambda: test_many_connections(srv.port)),
                 ("random bodies", lambda: test_fuzz(srv.port, total)),
                 ("metrics", lambda: test_metrics(srv.port))]
        for name, step in steps:
            t = time.time()
            step()
            if healthz_ok(srv.port) is None or not srv.alive():
                fail("server not answering after: %s" % name)
                break
            print("  %-22s %.1f s" % (name, time.time() - t))
        rc = srv.stop()
        err = srv.stderr()
        if rc != 0:
            fail("exit status %d after SIGTERM" % rc)
        if any(w in err for w in ("AddressSanitizer", "runtime error:", "LeakSanitizer", "ThreadSanitizer")):
            fail("sanitizer report:\n" + err[err.find("=="):][:4000])
    finally:
        srv.close()
    if FAILURES:
        print("%d robustness failure(s)" % len(FAILURES))
        return 1
    print("api robustness: ok in %.1f s" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
