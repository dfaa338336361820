"""Helpers for the HTTP API tests: start the real server, raw and
http.client requests, and a small OpenAPI 3.0 schema checker (the subset
api/openapi.yaml uses: $ref, type, nullable, required, properties,
additionalProperties, items, enum, minimum, maximum, oneOf, allOf).
Standard library plus python3-yaml only."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC_PATH = os.path.join(ROOT, "api", "openapi.yaml")


def memopt_binary():
    exe = os.environ.get("MEMOPT") or os.path.join(ROOT, "build", "memopt")
    if not os.access(exe, os.X_OK):
        sys.exit("MEMOPT binary not found: %s" % exe)
    return exe


class Server:
    """`memopt serve --port 0` in the background; stderr goes to a file."""

    def __init__(self, *args, preexec_fn=None):
        self.log = tempfile.NamedTemporaryFile(prefix="memopt-serve-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([memopt_binary(), "serve", "--port", "0", *args],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log, cwd=ROOT, preexec_fn=preexec_fn)
        self.port = self._wait_port()

    def _wait_port(self):
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(self.log.name, "rb") as f:
                m = re.search(rb"listening on http://[^\s]+:(\d+)", f.read())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.stderr())
            time.sleep(0.02)
        raise RuntimeError("server did not print its port: " + self.stderr())

    def stderr(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=30):
        """SIGTERM; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        return rc

    def close(self):
        self.stop()
        self.log.close()
        os.unlink(self.log.name)


def request(port, method, path, body=None, headers=None, timeout=10):
    """One request on a new connection: (status, headers dict lowercased, bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, str):
            body = body.encode()
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        conn.close()


def post_json(port, path, obj, ctype="application/json"):
    body = obj if isinstance(obj, (bytes, str)) else json.dumps(obj)
    return request(port, "POST", path, body, {"Content-Type": ctype})


def raw(port, data, timeout=5.0, read=True):
    """Sends raw bytes, returns everything read until the server closes or
    the timeout (bytes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        try:
            s.sendall(data)
        except OSError:
            pass
        if not read:
            return b""
        s.settimeout(timeout)
        while True:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, OSError):
                break
            if not chunk:
                break
            out += chunk
            if _complete(out):
                break
    finally:
        s.close()
    return out


def _complete(data):
    """True when data holds a whole HTTP response (by Content-Length)."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return bool(m) and len(body) >= int(m.group(1))


def parse_raw(data):
    """(status, headers dict lowercased, body) of a raw response, or None."""
    head, sep, body = data.partition(b"\r\n\r\n")
    m = STATUS_LINE.match(data)
    if not sep or not m:
        return None
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), hdrs, body


def chunked(data, size=65536):
    out = b""
    for i in range(0, len(data), size):
        piece = data[i:i + size]
        out += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\n\r\n"


STATUS_LINE = re.compile(rb"^HTTP/1\.[01] [1-5]\d\d [^\r\n]*\r\n")


def well_formed_http(data):
    """Empty (the server closed) or one or more (pipelined) responses, each
    with a valid status line, headers and as many body bytes as its
    Content-Length says."""
    while data:
        if not STATUS_LINE.match(data):
            return False
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            return False
        m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        if not m:
            return True  # no length: the body runs to the end
        n = int(m.group(1))
        if len(rest) < n:
            return False
        data = rest[n:]
    return True


# ---- OpenAPI subset ------------------------------------------------------

class Spec:
    def __init__(self, path=SPEC_PATH):
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.doc = yaml.safe_load(self.text)

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            assert ref.startswith("#/"), ref
            node = self.doc
            for part in ref[2:].split("/"):
                node = node[part]
        return node

    def operation(self, path, method):
        """(operation, templated path) or (None, templated path or None)."""
        for tpl, item in self.doc["paths"].items():
            rx = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(tpl)) + "$"
            if re.match(rx, path):
                m = method.lower()
                if m == "head":
                    m = "get"
                return item.get(m), tpl
        return None, None

    def response(self, path, method, status):
        """The response object for that call, per the document."""
        op, tpl = self.operation(path, method)
        comps = self.doc["components"]["responses"]
        if tpl is None:
            return self.resolve(comps["NotFound"]) if status == 404 else None
        if op is None:
            return self.resolve(comps["MethodNotAllowed"]) if status == 405 else None
        r = op["responses"].get(str(status))
        return self.resolve(r) if r is not None else None

    def errors(self, schema, value, where="$"):
        """Validation errors of value against schema (list of strings)."""
        schema = self.resolve(schema)
        errs = []
        if value is None:
            return [] if schema.get("nullable") else ["%s: null" % where]
        if "allOf" in schema:
            for sub in schema["allOf"]:
                errs += self.errors(sub, value, where)
        if "oneOf" in schema:
            ok = sum(1 for sub in schema["oneOf"] if not self.errors(sub, value, where))
            if ok != 1:
                errs.append("%s: matches %d of oneOf" % (where, ok))
        errs += self._type_errors(schema, value, where)
        if errs:
            return errs
        if "enum" in schema and value not in schema["enum"]:
            errs.append("%s: %r not in %r" % (where, value, schema["enum"]))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                errs.append("%s: %r < %r" % (where, value, schema["minimum"]))
            if "maximum" in schema and value > schema["maximum"]:
                errs.append("%s: %r > %r" % (where, value, schema["maximum"]))
        if isinstance(value, dict):
            errs += self._object_errors(schema, value, where)
        if isinstance(value, list) and "items" in schema:
            for i, item in enumerate(value):
                errs += self.errors(schema["items"], item, "%s[%d]" % (where, i))
        return errs

    @staticmethod
    def _type_errors(schema, value, where):
        t = schema.get("type")
        checks = {
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str),
            "boolean": lambda v: isinstance(v, bool),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        }
        if t and not checks[t](value):
            return ["%s: expected %s, got %s" % (where, t, type(value).__name__)]
        return []

    def _object_errors(self, schema, value, where):
        errs = []
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errs.append("%s: missing %s" % (where, key))
        for key, v in value.items():
            if key in props:
                errs += self.errors(props[key], v, "%s.%s" % (where, key))
            elif schema.get("additionalProperties") is False:
                errs.append("%s: unexpected member %s" % (where, key))
            elif isinstance(schema.get("additionalProperties"), dict):
                errs += self.errors(schema["additionalProperties"], v, "%s.%s" % (where, key))
        return errs

    def check(self, path, method, status, headers, body):
        """Errors of one answer against the document (list of strings)."""
        resp = self.response(path, method, status)
        if resp is None:
            return ["%s %s: status %d is not documented" % (method, path, status)]
        content = resp.get("content")
        ctype = headers.get("content-type", "").split(";")[0].strip()
        if not content:
            return []
        if ctype not in content:
            return ["%s %s %d: content type %r not in %r" % (method, path, status, ctype, list(content))]
        if method == "HEAD":
            return []
        schema = content[ctype].get("schema", {})
        if ctype.endswith("json"):
            try:
                value = json.loads(body)
            except ValueError as e:
                return ["%s %s %d: body is not JSON: %s" % (method, path, status, e)]
        else:
            value = body.decode("utf-8")
        return ["%s %s %d: %s" % (method, path, status, e) for e in self.errors(schema, value)]
