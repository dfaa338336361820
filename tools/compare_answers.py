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


def compare_models(root, bo, bn):
    n = diff = 0
    for f in model_corpus(root):
        with open(f, "rb") as fh:
            raw = fh.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        ct = "application/json" if f.endswith(".json") else "application/yaml"
        a, b = post(bo, "models/import", raw, ct), post(bn, "models/import", raw, ct)
        n += 1
        if a != b:
            diff += 1
            print("DIFF models/import %s: %d vs %d" % (os.path.relpath(f, root), a[0], b[0]))
        for cfg in MODEL_CONFIGS:
            data = json.dumps({"config": cfg, "model": text, "devices": 8}).encode()
            for route in MODEL_ROUTES:
                a, b = post(bo, route, data), post(bn, route, data)
                n += 1
                if a != b:
                    diff += 1
                    print("DIFF %s model=%s: %d vs %d" % (route, os.path.relpath(f, root), a[0], b[0]))
    return n, diff


def main():
    old, new = sys.argv[1], sys.argv[2]
    routes = ROUTES
    if "--routes" in sys.argv:
        routes = sys.argv[sys.argv.index("--routes") + 1].split(",")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    po, bo = serve(old)
    pn, bn = serve(new)
    n = diff = 0
    try:
        for f in corpus(root):
            with open(f, "rb") as fh:
                text = fh.read()
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError:
                continue
            for model in MODELS:
                body = {"config": text}
                if model:
                    body["model"] = model
                data = json.dumps(body).encode()
                for route in routes:
                    a, b = post(bo, route, data), post(bn, route, data)
                    n += 1
                    if a != b:
                        diff += 1
                        print("DIFF %s %s model=%s: %d vs %d" % (route, os.path.relpath(f, root), model, a[0], b[0]))
        mn, md = compare_models(root, bo, bn)
        n += mn; diff += md
    finally:
        po.terminate(); pn.terminate()
    print("%d answers compared, %d differ" % (n, diff))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
