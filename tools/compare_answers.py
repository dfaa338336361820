#!/usr/bin/python3
"""Byte-compares the HTTP API answers of two memopt binaries over a corpus:
every YAML under tests/ and examples/ (the real configs of
tests/data/real-configs among them), through each route, with several model
choices; and every model text under tests/data/megatron,
tests/fuzz/corpus/model, tests/golden (*model*) and examples (*.json)
(Megatron arguments, model files, HF config.json) imported and used as the
model of two small configs. A refactoring must change no answer, and this
shows it: run it with the binary of the commit before and the binary after.

    /usr/bin/python3 tools/compare_answers.py OLD/memopt NEW/memopt [--routes a,b]

Prints one line per differing answer and a summary; exit status 1 when any
answer differs."""
import glob, json, os, subprocess, sys, time, urllib.request, urllib.error

ROUTES = ["validate", "expand", "estimate", "export", "layout", "plan"]
MODELS = [None, "llama2-7b", "dsv3-mini"]


def serve(binary):
    p = subprocess.Popen([binary, "serve", "--port", "0", "--quiet", "--cache-entries", "0"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = p.stderr.readline()
    while line and "listening on" not in line:
        line = p.stderr.readline()
    if not line:
        sys.exit("%s: the server did not start" % binary)
    return p, line.split("listening on ", 1)[1].strip()


def post(base, route, body, content_type="application/json"):
    rq = urllib.request.Request(base + "/api/v1/" + route, data=body,
                                headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(rq, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def corpus(root):
    files = []
    for pat in ("tests/**/*.yaml", "tests/**/*.yml", "examples/**/*.yaml"):
        files += glob.glob(os.path.join(root, pat), recursive=True)
    return sorted(f for f in files if "node_modules" not in f)


def model_corpus(root):
    """Model texts the loader reads (Megatron arguments and scripts, model
    files, training YAMLs, HF config.json), sent as "model" beside a few
    configs and alone to /api/v1/models/import."""
    files = []
    for pat in ("tests/data/megatron/*", "tests/fuzz/corpus/model/*", "tests/golden/**/*model*",
                "examples/**/*.json"):
        files += glob.glob(os.path.join(root, pat), recursive=True)
    return sorted(f for f in files if os.path.isfile(f))


MODEL_CONFIGS = ["recompute:\n  select_module:\n    '.*mlp': [0-1]\n",
                 "swap:\n  layer_swap:\n    - layers: [0]\n"]
MODEL_ROUTES = ["validate", "estimate", "layout"]


def read_text(path):
    """The file's bytes and text, or (bytes, None) when it is not UTF-8."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw, None


class Compare:
    """Posts each request to both servers and counts the answers that differ."""

    def __init__(self, bo, bn):
        self.bo, self.bn, self.n, self.diff = bo, bn, 0, 0

    def same(self, route, data, label, content_type="application/json"):
        a = post(self.bo, route, data, content_type)
        b = post(self.bn, route, data, content_type)
        self.n += 1
        if a != b:
            self.diff += 1
            print("DIFF %s %s: %d vs %d" % (route, label, a[0], b[0]))


def compare_configs(cmp, root, routes):
    for f in corpus(root):
        _, text = read_text(f)
        if text is None:
            continue
        for model in MODELS:
            body = {"config": text}
            if model:
                body["model"] = model
            data = json.dumps(body).encode()
            for route in routes:
                cmp.same(route, data, "%s model=%s" % (os.path.relpath(f, root), model))


def compare_models(cmp, root):
    for f in model_corpus(root):
        raw, text = read_text(f)
        if text is None:
            continue
        label = os.path.relpath(f, root)
        ct = "application/json" if f.endswith(".json") else "application/yaml"
        cmp.same("models/import", raw, label, ct)
        for cfg in MODEL_CONFIGS:
            data = json.dumps({"config": cfg, "model": text, "devices": 8}).encode()
            for route in MODEL_ROUTES:
                cmp.same(route, data, "model=" + label)


def main():
    old, new = sys.argv[1], sys.argv[2]
    routes = ROUTES
    if "--routes" in sys.argv:
        routes = sys.argv[sys.argv.index("--routes") + 1].split(",")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    po, bo = serve(old)
    pn, bn = serve(new)
    cmp = Compare(bo, bn)
    try:
        compare_configs(cmp, root, routes)
        compare_models(cmp, root)
    finally:
        po.terminate(); pn.terminate()
    n, diff = cmp.n, cmp.diff
    print("%d answers compared, %d differ" % (n, diff))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
