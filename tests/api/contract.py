#!/usr/bin/python3
"""Contract test: starts the real server on an ephemeral port, calls every
operation of api/openapi.yaml with good and bad requests, and checks each
status and body against the document. Also static files, headers, CORS and
the graceful shutdown. Exit status 0 when everything holds."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, Server, Spec, chunked, parse_raw, raw, request  # noqa: E402

SPEC = Spec()
FAILURES = []
CALLED = set()

GOOD = "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n"
# the comment keeps the word the core-less stub looks for
INVALID = "# bad: out of order\nrecompute:\n  mode: full\n  full_recompute_layer: [5, 0-3]\n"
FIXTURES = os.path.join(ROOT, "tests", "api", "fixtures")


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def call(port, method, path, body=None, headers=None, expect=None):
    """A documented call: checks status and body against the spec."""
    status, hdrs, data = request(port, method, path, body, headers)
    op, tpl = SPEC.operation(path, method)
    if op is not None:
        CALLED.add((tpl, "get" if method == "HEAD" else method.lower()))
    if expect is not None and status != expect:
        fail("%s %s: status %d, expected %d: %s" % (method, path, status, expect, data[:300]))
    for e in SPEC.check(path, method, status, hdrs, data):
        fail(e)
    if hdrs.get("x-content-type-options") != "nosniff":
        fail("%s %s: no X-Content-Type-Options: nosniff" % (method, path))
    if "default-src 'self'" not in hdrs.get("content-security-policy", ""):
        fail("%s %s: no strict Content-Security-Policy" % (method, path))
    return status, hdrs, data


def as_json(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def cfg(config, model=None, **extra):
    body = {"config": config}
    if model is not None:
        body["model"] = model
    body.update(extra)
    return json.dumps(body)


JSON = {"Content-Type": "application/json"}
YAML = {"Content-Type": "application/yaml"}


def test_operations(port):
    call(port, "GET", "/healthz", expect=200)
    call(port, "HEAD", "/healthz", expect=200)
    _, _, data = call(port, "GET", "/api/v1/openapi.yaml", expect=200)
    if data.decode() != SPEC.text:
        fail("the served OpenAPI document differs from api/openapi.yaml")
    _, _, data = call(port, "GET", "/api/v1/presets", expect=200)
    presets = (as_json(data) or {}).get("presets") or [{"name": "none"}]
    name = presets[0]["name"]
    call(port, "GET", "/api/v1/presets/" + name, expect=200)
    call(port, "GET", "/api/v1/presets/no-such-model", expect=404)
    return name


def test_config_ops(port, preset):
    for op in ("validate", "expand", "export"):
        path = "/api/v1/" + op
        _, _, data = call(port, "POST", path, cfg(GOOD, preset), JSON, expect=200)
        good = as_json(data) or {}
        if good.get("valid") is not True:
            fail("%s: a valid config answered %s" % (op, data[:300]))
        _, _, data = call(port, "POST", path, cfg(INVALID, preset), JSON, expect=200)
        bad = as_json(data) or {}
        if bad.get("valid") is not False or not bad.get("errors"):
            fail("%s: an invalid config answered %s" % (op, data[:300]))
        call(port, "POST", path, cfg(GOOD, preset, devices=8), JSON, expect=200)
        call(port, "POST", path, fixture("training.yaml"), YAML, expect=200)
    _, _, data = call(port, "POST", "/api/v1/expand", cfg(GOOD, preset), JSON)
    if not (as_json(data) or {}).get("layers"):
        fail("expand: no layers for a valid config")
    _, _, data = call(port, "POST", "/api/v1/export", cfg(GOOD, preset), JSON)
    if "recompute" not in (as_json(data) or {}).get("yaml", ""):
        fail("export: no yaml for a valid config")


def test_migrate(port, preset):
    """POST /api/v1/migrate on a real graph-mode file: finetune_llama3_1_8b
    (MindSpore Transformers master) has `recompute: True` over 32 layers on
    one stage, and mp_comm_recompute / recompute_slice_activation True."""
    path = "/api/v1/migrate"
    with open(os.path.join(ROOT, "tests", "data", "mindformers", "master",
                           "finetune_llama3_1_8b.yaml"), "rb") as f:
        text = f.read()
    _, _, data = call(port, "POST", path, text, YAML, expect=200)
    m = as_json(data) or {}
    out = m.get("yaml", "")
    if (m.get("valid") is not True or "recompute_config" in out
            or "recompute:\n  mode: full\n  full_recompute_layer: [0-31]\n" not in out):
        fail("migrate: llama3_1_8b answered %s" % data[:300])
    dropped = sorted(w.get("path") for w in m.get("warnings", [])
                     if w.get("code") == "no-equivalent")
    if dropped != ["recompute_config.mp_comm_recompute",
                   "recompute_config.recompute_slice_activation"]:
        fail("migrate: no-equivalent warnings %r" % (dropped,))
    if out.replace("recompute:\n  mode: full\n  full_recompute_layer: [0-31]\n", "") != \
            text.decode().replace("".join(text.decode().splitlines(True)[80:86]), ""):
        fail("migrate: bytes outside the block changed")
    _, _, data = call(port, "POST", path, cfg(text.decode()), JSON, expect=200)
    if (as_json(data) or {}).get("yaml") != out:
        fail("migrate: the JSON body answered differently from the YAML body")
    _, _, data = call(port, "POST", path, cfg(GOOD, preset), JSON, expect=200)
    r = as_json(data) or {}
    if r.get("valid") is not False or "no top-level recompute_config" not in r.get("error", ""):
        fail("migrate: a file without the block answered %s" % data[:300])
    _, _, data = call(port, "POST", path, cfg(INVALID, preset), JSON, expect=200)
    r = as_json(data) or {}
    if r.get("valid") is not False or not r.get("errors") or "yaml" in r:
        fail("migrate: an invalid config answered %s" % data[:300])


def test_estimate(port, preset):
    path = "/api/v1/estimate"
    _, _, data = call(port, "POST", path, cfg(GOOD, preset), JSON, expect=200)
    summary = as_json(data) or {}
    if "layers" in summary or any("timeline" in s for s in summary.get("stages") or []):
        fail("estimate: the default answer is the summary, without layers or timelines")
    # the summary carries the accuracy's figures; the runs behind them on request
    # (the rows of api/accuracy.tsv for the answer's rules)
    acc = summary.get("accuracy") or {}
    with open(os.path.join(ROOT, "api", "accuracy.tsv"), encoding="utf-8") as f:
        rows = [l for l in f.read().splitlines() if l.split("\t")[0] == summary.get("framework")]
    if "runs" in acc or acc.get("run_count") != len(rows) or not rows or not acc.get("worst_run"):
        fail("estimate: the summary's accuracy is not the figures without the runs: %r" % (acc,))
    _, _, data = call(port, "POST", path, cfg(GOOD, preset, detail=["accuracy"]), JSON, expect=200)
    runs = ((as_json(data) or {}).get("accuracy") or {}).get("runs") or []
    if len(runs) != len(rows) or (as_json(data) or {}).get("detail") != ["accuracy"]:
        fail("estimate: detail accuracy did not answer the %d runs: %s" % (len(rows), data[:300]))
    if max(abs(r["error_percent"]) for r in runs) != acc.get("max_abs_error_percent"):
        fail("estimate: the summary's worst error is not the runs' worst")
    _, _, data = call(port, "POST", path, cfg(GOOD, preset, detail="full"), JSON, expect=200)
    e = as_json(data) or {}
    if e.get("valid") is not True or not e.get("peak_bytes") or not e.get("capacity_bytes"):
        fail("estimate: a valid config answered %s" % data[:300])
    stages = e.get("stages") or [{}]
    if not stages[0].get("timeline") or not stages[0].get("peak_event"):
        fail("estimate: stage 0 has no timeline or peak event")
    if max(s.get("peak_bytes", 0) for s in stages) != e.get("peak_bytes"):
        fail("estimate: peak_bytes is not the busiest stage's peak")
    if len(e.get("layers") or []) < 1:
        fail("estimate: no per-layer figures")
    assumed = e.get("assumed")
    if not isinstance(assumed, list) or not all(
            isinstance(a, dict) and all(isinstance(a.get(k), str) and a.get(k)
                                        for k in ("path", "value", "source"))
            for a in assumed):
        fail("estimate: 'assumed' is not a list of {path, value, source}: %r" % (assumed,))
    _, _, data = call(port, "POST", path, cfg(INVALID, preset), JSON, expect=200)
    bad = as_json(data) or {}
    if bad.get("valid") is not False or "peak_bytes" in bad:
        fail("estimate: an invalid config answered %s" % data[:300])
    call(port, "POST", path, cfg("swap:\n  enable: False\n"), JSON, expect=422)
    if "run" in e:
        fail("estimate: a config of three sections has a run: %r" % (e["run"],))
    test_estimate_run(port)
    test_estimate_run_keys(port)
    test_export_run(port)


RUN_CASE = os.path.join(ROOT, "tests", "golden", "valid", "recompute-config-on-model-given")


def test_estimate_run(port):
    """A configs/general-style training YAML over a model given apart: the
    answer says which run it priced. config.yaml writes parallel_config
    data_parallel 2 (line 16), model_parallel 2 (line 17), pipeline_stage 2
    (line 18) and micro_batch_num 4 (line 19); hf.json is the model."""
    with open(os.path.join(RUN_CASE, "config.yaml"), encoding="utf-8") as f:
        config = f.read()
    with open(os.path.join(RUN_CASE, "hf.json"), encoding="utf-8") as f:
        hf = f.read()
    for model in (hf, "llama2-7b"):
        _, _, data = call(port, "POST", "/api/v1/estimate", cfg(config, model), JSON, expect=200)
        e = as_json(data) or {}
        run = e.get("run") or {}
        par = (run.get("model") or {}).get("parallel") or {}
        got = {x["path"]: (x["key"], x["line"]) for x in run.get("from_config") or []}
        want = {"parallel.data_parallel": ("parallel_config.data_parallel", 16),
                "parallel.tensor_parallel": ("parallel_config.model_parallel", 17),
                "parallel.pipeline_parallel": ("parallel_config.pipeline_stage", 18),
                "training.micro_batch_num": ("parallel_config.micro_batch_num", 19)}
        if (par.get("pipeline_parallel") != 2 or par.get("tensor_parallel") != 2 or
                len(e.get("stages") or []) != 2 or
                any(got.get(k) != v for k, v in want.items())):
            fail("estimate run over %s: %r" % ("hf.json" if model == hf else model, run))


def test_estimate_run_keys(port):
    """The run's other keys over a model given apart have their model-file
    paths too: model_config's use_flash_attention, hidden_dropout and
    attention_dropout (model.attention, model.hidden_dropout,
    model.attention_dropout), the optimizer section (training.optimizer) and
    a device key (device), each with its key and line in the YAML."""
    with open(os.path.join(RUN_CASE, "config.yaml"), encoding="utf-8") as f:
        config = f.read()
    with open(os.path.join(RUN_CASE, "hf.json"), encoding="utf-8") as f:
        hf = f.read()
    extra = "    use_flash_attention: False\n    hidden_dropout: 0.1\n    attention_dropout: 0.05\n"
    config = config.replace("    offset: 0\n", "    offset: 0\n" + extra, 1)
    config += "optimizer:\n  type: AdamW\ntraining:\n  device: ascend-910b\n"
    lines = config.split("\n")
    def line_of(text):
        return next(i + 1 for i, l in enumerate(lines) if l.strip() == text)
    want = {"model.attention": ("model.model_config.use_flash_attention", line_of("use_flash_attention: False")),
            "model.hidden_dropout": ("model.model_config.hidden_dropout", line_of("hidden_dropout: 0.1")),
            "model.attention_dropout": ("model.model_config.attention_dropout", line_of("attention_dropout: 0.05")),
            "training.optimizer": ("optimizer", line_of("type: AdamW")),
            "device": ("training.device", line_of("device: ascend-910b"))}
    _, _, data = call(port, "POST", "/api/v1/estimate", cfg(config, hf), JSON, expect=200)
    run = (as_json(data) or {}).get("run") or {}
    got = {x["path"]: (x["key"], x["line"]) for x in run.get("from_config") or []}
    for path, kl in want.items():
        if got.get(path) != kl:
            fail("estimate run: %s is %r, expected %r" % (path, got.get(path), kl))
    model = run.get("model") or {}
    if ((model.get("model") or {}).get("attention") != "eager" or
            (model.get("model") or {}).get("hidden_dropout") != 0.1 or
            model.get("device") != "ascend-910b"):
        fail("estimate run: the values priced are not the YAML's: %r" % (model,))


def test_export_run(port):
    """POST /export as written, a training YAML that carries its own model
    (tests/api/fixtures/training.yaml: PyNative, parallelism
    tensor_parallel 2, pipeline_parallel 1, data_parallel_shard 2) with that
    model edited to TP 1 and PP 2: the answer is the file with those two
    values in its own keys, every other line as it was; unedited, the file
    as it was."""
    text = fixture("training.yaml").decode()
    _, _, data = call(port, "POST", "/api/v1/models/import", text.encode(), YAML, expect=200)
    model = (as_json(data) or {}).get("model") or {}
    _, _, data = call(port, "POST", "/api/v1/export",
                      cfg(text, json.dumps(model), form="as-written"), JSON, expect=200)
    if (as_json(data) or {}).get("yaml") != text:
        fail("export as written, model unedited: not the file as it was: %s" % data[:300])
    model["parallel"].update(tensor_parallel=1, pipeline_parallel=2)
    _, _, data = call(port, "POST", "/api/v1/export",
                      cfg(text, json.dumps(model), form="as-written"), JSON, expect=200)
    got = ((as_json(data) or {}).get("yaml") or "").split("\n")
    want = text.split("\n")
    for i, l in enumerate(want):
        if l == "  tensor_parallel: 2":
            want[i] = "  tensor_parallel: 1"
        elif l == "  pipeline_parallel: 1":
            want[i] = "  pipeline_parallel: 2"
    if got != want:
        fail("export as written, TP 1 and PP 2: %s" % data[:600])


NONE = "recompute:\n  mode: None\n"


def test_plan(port, preset):
    path = "/api/v1/plan"
    _, _, data = call(port, "POST", path, cfg(NONE, "llama3-70b", budget="48GiB"), JSON, expect=200)
    p = as_json(data) or {}
    if p.get("valid") is not True or p.get("fits") is not True or "recompute" not in p.get("config", ""):
        fail("plan: a fitting budget answered %s" % data[:300])
    est = p.get("estimate") or {}
    if not est.get("peak_bytes") or est["peak_bytes"] > 48 * 2**30:
        fail("plan: the estimate's peak %r is over the budget" % est.get("peak_bytes"))
    if p.get("exact") and p.get("predicted_peak_bytes") != est.get("peak_bytes"):
        fail("plan: predicted peak differs from the estimate's")
    staged = p.get("staged") or {}
    if not staged.get("steps") or staged.get("overhead_percent") is None:
        fail("plan: no staged escalation in %s" % data[:300])
    if p.get("overhead_percent", 1e9) > (staged.get("overhead_percent") or 0) + 1e-9:
        fail("plan: costlier than the staged escalation")
    _, _, data = call(port, "POST", path, cfg(NONE, preset, budget=1024, allow="full,layer_swap"), JSON,
                      expect=200)
    if (as_json(data) or {}).get("fits") is not False:
        fail("plan: a 1 KiB budget fits?")
    _, _, data = call(port, "POST", path, cfg(INVALID, preset), JSON, expect=200)
    if (as_json(data) or {}).get("valid") is not False:
        fail("plan: an invalid starting config answered %s" % data[:300])
    call(port, "POST", path, cfg("swap:\n  enable: False\n"), JSON, expect=422)


def test_size(port):
    """POST /api/v1/size: the layouts of llama2-7b over 8 devices; the first
    fits and is the fastest; each layout's model file and config estimate
    again to its peak; bad questions are 422."""
    path = "/api/v1/size"
    body = json.dumps({"model": "llama2-7b", "devices": 8, "global_batch": 16, "top": 3})
    _, _, data = call(port, "POST", path, body, JSON, expect=200)
    r = as_json(data) or {}
    lays = r.get("layouts") or []
    if not lays or lays[0].get("fits") is not True or r.get("complete") is not True:
        fail("size: llama2-7b over 8 devices answered %s" % data[:300])
    steps = [l["step_seconds"] for l in lays if l.get("fits")]
    if steps != sorted(steps):
        fail("size: fitting layouts not ordered by step time: %r" % steps)
    for l in lays:
        _, _, est = call(port, "POST", "/api/v1/estimate", cfg(l["config"], l["model"]), JSON,
                         expect=200)
        peak = ((as_json(est) or {}).get("estimate") or as_json(est) or {}).get("peak_bytes")
        if peak != l["peak_bytes"]:
            fail("size: a layout re-estimates to %r, not %r" % (peak, l["peak_bytes"]))
    body = json.dumps({"model": "llama2-7b", "devices": "4-16", "global_batch": 16, "top": 2})
    _, _, data = call(port, "POST", path, body, JSON, expect=200)
    if not isinstance((as_json(data) or {}).get("smallest_devices"), int):
        fail("size: a device range answered no smallest count: %s" % data[:300])
    call(port, "POST", path, json.dumps({"model": "llama2-7b", "devices": 0, "global_batch": 8}),
         JSON, expect=422)
    call(port, "POST", path, json.dumps({"model": "llama2-7b", "devices": 8}), JSON, expect=422)
    call(port, "POST", path, json.dumps({"model": "llama2-7b", "devices": 8, "global_batch": 8,
                                         "teleport": 1}), JSON, expect=422)
    test_size_base(port)


def test_size_base(port):
    """"base": a graph-mode training YAML (tests/data/mindformers) with its own
    model: each layout's config is that file rewritten (its first and last
    lines kept), and it estimates by itself to the layout's peak; a base that
    is not a training YAML is 422."""
    path = "/api/v1/size"
    with open(os.path.join(ROOT, "tests/data/mindformers/master/pretrain_qwen3_32b_4k.yaml")) as f:
        base = f.read()
    body = json.dumps({"base": base, "devices": 16, "global_batch": 64, "top": 2})
    _, _, data = call(port, "POST", path, body, JSON, expect=200)
    lays = (as_json(data) or {}).get("layouts") or []
    if len(lays) != 2:
        fail("size: the base answered %s" % data[:300])
    for l in lays:
        conf = l.get("config", "")
        if conf.splitlines()[:3] != base.splitlines()[:3] or \
                conf.splitlines()[-3:] != base.splitlines()[-3:]:
            fail("size: the base's first or last lines changed")
        _, _, est = call(port, "POST", "/api/v1/estimate", cfg(conf), JSON, expect=200)
        peak = ((as_json(est) or {}).get("estimate") or as_json(est) or {}).get("peak_bytes")
        if peak != l["peak_bytes"]:
            fail("size: a base layout re-estimates to %r, not %r" % (peak, l["peak_bytes"]))
    call(port, "POST", path, json.dumps({"model": "llama2-7b", "base": "recompute:\n  mode: None\n",
                                         "devices": 8, "global_batch": 8}), JSON, expect=422)


def test_layout(port, preset):
    """The layout the web UI builds on: types, per-layer types, matches, sections."""
    lay = "/api/v1/layout"
    conf = ("recompute:\n  mode: select\n  select_module:\n    '.*mlp': [0-1]\n"
            "  exclude_op:\n    'no_such_op': [0]\nswap:\n  enable: False\n")
    _, _, data = call(port, "POST", lay, cfg(conf, preset), JSON, expect=200)
    d = as_json(data) or {}
    types = d.get("types") or []
    if not types or len(d.get("layer_types") or []) != d.get("num_layers", -1) + d.get("mtp_num_layers", 0):
        fail("layout: types %r, %d layer types" % ([t.get("name") for t in types], len(d.get("layer_types") or [])))
    pats = {p["pattern"]: p for p in d.get("patterns") or []}
    mlp = pats.get(".*mlp", {}).get("matches") or [[]]
    if "mlp" not in mlp[0] or any(m for m in pats.get("no_such_op", {}).get("matches", [[1]])):
        fail("layout: pattern matches %r" % pats)
    if d.get("sections", {}).get("recompute", {}).get("select_module") != {".*mlp": ["0-1"]}:
        fail("layout: sections %r" % d.get("sections"))
    if d.get("section_lines", {}).get("swap") != {"start": 7, "end": 9}:
        fail("layout: section lines %r" % d.get("section_lines"))
    _, _, data = call(port, "POST", lay, cfg("a: [", preset), JSON, expect=200)
    d = as_json(data) or {}
    if d.get("valid") is not False or "sections" in d or not d.get("types"):
        fail("layout of a non-YAML config: %s" % data[:300])
    _, _, data = call(port, "POST", lay, fixture("training.yaml"), YAML, expect=200)
    if (as_json(data) or {}).get("training_yaml") is not True:
        fail("layout: a training YAML is not flagged: %s" % data[:300])
    call(port, "POST", lay, cfg(GOOD), JSON, expect=422)
    call(port, "POST", lay, cfg(GOOD, "no-such-preset"), JSON, expect=422)
    call(port, "POST", lay, "{", JSON, expect=400)
    call(port, "POST", lay, "x", {"Content-Type": "text/plain"}, expect=415)


def test_models(port, preset):
    _, _, model = request(port, "GET", "/api/v1/presets/" + preset)
    call(port, "POST", "/api/v1/validate", cfg(GOOD, as_json(model)), JSON, expect=200)
    call(port, "POST", "/api/v1/validate", cfg(GOOD, model.decode()), JSON, expect=200)
    call(port, "POST", "/api/v1/models/import", fixture("hf-config.json"), JSON, expect=200)
    call(port, "POST", "/api/v1/models/import", fixture("training.yaml"), YAML, expect=200)
    call(port, "POST", "/api/v1/models/import", "{}", JSON, expect=422)
    call(port, "POST", "/api/v1/models/import", "{\"a\": ", JSON, expect=400)
    call(port, "POST", "/api/v1/models/import", "x", {"Content-Type": "text/plain"}, expect=415)


def test_problems(port, preset):
    v = "/api/v1/validate"
    _, _, data = call(port, "POST", v, '{\n  "config": "x",\n  "model": ]\n}', JSON, expect=400)
    p = as_json(data) or {}
    if p.get("line") != 3 or not p.get("column"):
        fail("malformed JSON: line/column %r/%r, expected line 3" % (p.get("line"), p.get("column")))
    call(port, "POST", v, '{"config": "a", "config": "b"}', JSON, expect=400)
    call(port, "POST", v, "", JSON, expect=400)
    call(port, "POST", v, "[1, 2]", JSON, expect=422)
    call(port, "POST", v, '{"config": 42}', JSON, expect=422)
    call(port, "POST", v, '{"model": "%s"}' % preset, JSON, expect=422)
    call(port, "POST", v, cfg(GOOD, "no-such-preset"), JSON, expect=422)
    call(port, "POST", v, cfg(GOOD, 7), JSON, expect=422)
    call(port, "POST", v, cfg(GOOD, preset, devices=0), JSON, expect=422)
    call(port, "POST", v, cfg(GOOD, preset, devices="8"), JSON, expect=422)
    call(port, "POST", v, cfg(GOOD, preset, colour="blue"), JSON, expect=422)
    call(port, "POST", "/api/v1/expand", cfg("swap:\n  enable: False\n"), JSON, expect=422)
    call(port, "POST", v, "config: 1", {"Content-Type": "text/plain"}, expect=415)
    call(port, "POST", v, cfg(GOOD), {"Content-Type": "application/json; charset=latin1"}, expect=415)
    call(port, "POST", v, cfg(GOOD), {}, expect=415)
    call(port, "POST", "/api/v1/plan", cfg(GOOD, preset, budget="lots"), JSON, expect=422)
    call(port, "POST", "/api/v1/plan", cfg(GOOD, preset, allow=["teleport"]), JSON, expect=422)
    raw_call(port, b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Content-Length: 104857600\r\n\r\n", "/api/v1/validate", 413)
    big = b'{"config": "' + b"#" * (1024 * 1024 + 16) + b'"}'
    raw_call(port, b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n" + chunked(big), "/api/v1/validate", 413)


LEDGER = os.path.join(ROOT, "tests", "data", "ledger", "pp2-stage0-optimizer.csv")


def test_ledger(port, preset):
    """POST /api/v1/ledger: the real pp 2 stage-0 rows (the AdamW update of
    the embedding, 10246.244140625 MiB at line 8), with an estimate beside
    them, and the errors of a malformed trace and of a bad request."""
    with open(LEDGER) as f:
        trace = f.read()
    _, _, data = call(port, "POST", "/api/v1/ledger", json.dumps({"trace": trace}), JSON,
                      expect=200)
    peak = (as_json(data) or {}).get("peak", {})
    if peak.get("bytes") != int(10246.244140625 * 1048576) or peak.get("line") != 8:
        fail("ledger: the pp2 peak is %r at line %r" % (peak.get("bytes"), peak.get("line")))
    curve = (as_json(data) or {}).get("curve") or []
    if not 0 < len(curve) <= 1024 or max(p["bytes"] for p in curve) != peak.get("bytes") \
            or not any(p["time_us"] == peak.get("time_us") and p["bytes"] == peak.get("bytes")
                       for p in curve):
        fail("ledger: the curve (%d points) does not hold the peak's row" % len(curve))
    _, _, data = call(port, "POST", "/api/v1/ledger",
                      json.dumps({"trace": trace, "model": preset}), JSON, expect=200)
    cmp = (as_json(data) or {}).get("compare") or {}
    if len(cmp.get("buckets", [])) != 5:
        fail("ledger: no comparison with the model: %r" % data[:300])
    _, _, data = call(port, "POST", "/api/v1/ledger", json.dumps(
        {"trace": "Name,Size(KB),Allocation Time(us),Release Time(us)\nA,1,5,9\nB,1,4,9\n"}),
        JSON, expect=422)
    p = as_json(data) or {}
    if p.get("line") != 3 or "order" not in p.get("detail", ""):
        fail("ledger: an out-of-order row gives %r" % p)
    call(port, "POST", "/api/v1/ledger", json.dumps({"trace": 5}), JSON, expect=422)
    call(port, "POST", "/api/v1/ledger", json.dumps({"trace": "x", "extra": 1}), JSON,
         expect=422)
    call(port, "POST", "/api/v1/ledger", "{", JSON, expect=400)
    call(port, "POST", "/api/v1/ledger", "trace: x\n", YAML, expect=415)


STEPTIME = os.path.join(ROOT, "tests", "data", "megatron", "steptime")


def test_calibrate(port):
    """POST /api/v1/calibrate: two Megatron-LM CI runs on H100 (measured
    iteration times, tests/data/megatron/steptime/measured.tsv); launch_us
    moves, the other constants stay, the fitted map names the preset."""
    runs = []
    for case, seconds in (("gpt3_mcore_te_tp2_pp2_cp2", 0.29062),
                          ("gpt3_mcore_te_tp1_pp4_vp1", 0.09183)):
        with open(os.path.join(STEPTIME, case + ".h100.yaml")) as f:
            runs.append({"model": f.read(), "measured_seconds": seconds})
    _, _, data = call(port, "POST", "/api/v1/calibrate",
                      json.dumps({"runs": runs, "constants": ["launch_us"]}), JSON, expect=200)
    data = as_json(data) or {"constants": [], "device_yaml": "", "runs": []}
    k = {c["name"]: c for c in data["constants"]}
    if "gemm_efficiency" not in k:
        fail("calibrate: no constants in %r" % data)
        return
    if k["gemm_efficiency"]["after"] != k["gemm_efficiency"]["before"]:
        fail("calibrate: gemm_efficiency moved though only launch_us was named")
    if "preset: h100" not in data["device_yaml"] or len(data["runs"]) != 2:
        fail("calibrate: %r" % data)
    call(port, "POST", "/api/v1/calibrate", json.dumps({"runs": []}), JSON, expect=422)
    call(port, "POST", "/api/v1/calibrate",
         json.dumps({"runs": runs, "constants": ["peak"]}), JSON, expect=422)
    call(port, "POST", "/api/v1/calibrate", json.dumps({"runs": [{"model": "llama2-7b"}]}),
         JSON, expect=422)
    call(port, "POST", "/api/v1/calibrate", "{", JSON, expect=400)
    test_calibrate_logs(port, runs)


STEPLOG = os.path.join(ROOT, "tests", "data", "steplog")


def test_calibrate_logs(port, runs):
    """POST /api/v1/calibrate with training logs (tests/data/steplog,
    medians worked out by hand in its SOURCES.md): a Megatron-LM log and a
    MindSpore Transformers log fit as their step times in seconds, each
    run says what its log gave and which lines were warm-up; a log that is
    not one is a 422 invalid-log at its line and column."""
    logs = []
    for name in ("cli-megatron.log", "cli-mindformers.log"):
        with open(os.path.join(STEPLOG, name)) as f:
            logs.append(f.read())
    by_log = [{"model": runs[0]["model"], "log": logs[0]},
              {"model": runs[1]["model"], "log": logs[1]}]
    by_sec = [dict(runs[0], measured_seconds=0.29065), dict(runs[1], measured_seconds=0.092)]
    answers = []
    for body in (by_log, by_sec):
        _, _, data = call(port, "POST", "/api/v1/calibrate",
                          json.dumps({"runs": body, "constants": ["launch_us"]}), JSON,
                          expect=200)
        answers.append(as_json(data) or {"runs": [{}, {}], "constants": []})
    a, b = answers
    if a["constants"] != b["constants"] or len(a["runs"]) != 2:
        fail("calibrate with logs: %r, with seconds: %r" % (a, b))
        return
    want = (("megatron-lm", 0.29065, 6, [(1, 1, 4.2103), (2, 2, 0.5128)], 0),
            ("mindformers", 0.092, 5, [(1, 1, 61.023), (2, 2, 0.130)], None))
    for run, (fmt, sec, times, warm, skipped) in zip(a["runs"], want):
        log = run.get("log") or {}
        got_warm = [(w["line"], w["iteration"], round(w["seconds"], 6))
                    for w in log.get("warmup", [])]
        if (log.get("format") != fmt or abs(run["measured_seconds"] - sec) > 1e-12 or
                abs(log.get("median_seconds", 0) - sec) > 1e-12 or log.get("times") != times or
                log.get("used") != times - 2 or got_warm != warm or
                log.get("skipped_iterations") != skipped):
            fail("calibrate log run: %r" % run)
    for r in b["runs"]:
        if "log" in r:
            fail("calibrate: a run given in seconds has a log: %r" % r)
    bad = "x\n iteration 1/ 2 | elapsed time per iteration (ms): abc |\n"
    _, _, data = call(port, "POST", "/api/v1/calibrate",
                      json.dumps({"runs": [dict(by_log[0], log=bad)]}), JSON, expect=422)
    doc = as_json(data) or {}
    if (doc.get("type") != "urn:memopt:problem:invalid-log" or doc.get("line") != 2 or
            doc.get("column") != 52 or not doc.get("detail", "").startswith("runs[0].log: ")):
        fail("calibrate: a garbage log: %r" % doc)
    for r in ({"model": "llama2-7b", "measured_seconds": 1.0, "log": logs[0]},
              {"model": "llama2-7b", "log": 5},
              {"model": "llama2-7b", "log": "training ...\n"}):
        call(port, "POST", "/api/v1/calibrate", json.dumps({"runs": [r]}), JSON, expect=422)


def raw_call(port, data, path, expect):
    resp = parse_raw(raw(port, data, timeout=20))
    if not resp or resp[0] != expect:
        fail("raw POST %s: %r, expected %d" % (path, resp and resp[0], expect))
        return
    for e in SPEC.check(path, "POST", resp[0], resp[1], resp[2]):
        fail(e)


def test_not_found_and_methods(port):
    for path in ("/api/v1/nope", "/api/v2/validate", "/nope.html", "/api"):
        call(port, "GET", path, expect=404)
    for method, path in (("GET", "/api/v1/validate"), ("PUT", "/api/v1/expand"),
                         ("POST", "/healthz"), ("DELETE", "/api/v1/presets"),
                         ("POST", "/metrics"), ("POST", "/")):
        _, hdrs, _ = call(port, method, path, "{}", JSON, expect=405)
        if not hdrs.get("allow"):
            fail("%s %s: 405 without Allow" % (method, path))


def test_metrics(port):
    _, _, data = call(port, "GET", "/metrics", expect=200)
    text = data.decode()
    for needle in ('memopt_http_requests_total{route="/api/v1/validate",status="200"}',
                   'memopt_http_request_duration_seconds_bucket{route="/healthz",le="+Inf"}',
                   "memopt_http_requests_in_flight"):
        if needle not in text:
            fail("/metrics lacks %s" % needle)


def test_static(port, embedded):
    _, hdrs, page = call(port, "GET", "/", expect=200)
    if b"memopt" not in page or b"/api/v1/openapi.yaml" not in page or b"<script>" in page:
        fail("index page: missing text or an inline script")
    etag = hdrs.get("etag")
    if not etag or "no-cache" not in hdrs.get("cache-control", ""):
        fail("/: no ETag or Cache-Control")
    call(port, "GET", "/", headers={"If-None-Match": etag}, expect=304)
    st, hdrs, _ = request(port, "GET", "/app.css")
    if st != 200 or not hdrs.get("content-type", "").startswith("text/css"):
        fail("/app.css: %d %s" % (st, hdrs.get("content-type")))
    for path in ("/../Makefile", "/%2e%2e/Makefile", "/..%2fMakefile", "/index.html%00.css",
                 "/.hidden.html", "//index.html", "/web/../index.html", "/a\\b.html",
                 "/index.html/", "/%252e%252e/Makefile", "/Makefile", "/index.exe"):
        st, _, _ = request(port, "GET", path)
        if st != 404:
            fail("static %s (embedded=%s): %d, expected 404" % (path, embedded, st))
    if not embedded:
        raw_resp = raw(port, b"GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        if b"root:" in raw_resp:
            fail("path traversal served /etc/passwd")


def test_symlinks():
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "sub"))
        with open(os.path.join(root, "sub", "ok.html"), "w") as f:
            f.write("<p>ok</p>")
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write("<p>index</p>")
        os.symlink("/etc/passwd", os.path.join(root, "passwd.txt"))
        os.symlink("/etc", os.path.join(root, "etc"))
        os.symlink(os.path.join(root, "sub"), os.path.join(root, "link"))
        os.mkdir(os.path.join(root, "dir.html"))
        srv = Server("--web-root", root)
        try:
            for path, want in (("/sub/ok.html", 200), ("/passwd.txt", 404), ("/etc/passwd.txt", 404),
                               ("/link/ok.html", 404), ("/dir.html", 404), ("/", 200)):
                st, _, _ = request(srv.port, "GET", path)
                if st != want:
                    fail("web root with symlinks: %s gave %d, expected %d" % (path, st, want))
        finally:
            srv.close()


def test_cors():
    srv = Server("--cors-origin", "http://ui.example", "--web-root", "web")
    try:
        _, hdrs, _ = request(srv.port, "GET", "/healthz")
        if hdrs.get("access-control-allow-origin") != "http://ui.example":
            fail("CORS: no Access-Control-Allow-Origin")
        st, hdrs, _ = request(srv.port, "OPTIONS", "/api/v1/validate",
                              headers={"Origin": "http://ui.example",
                                       "Access-Control-Request-Method": "POST"})
        if st != 204 or "POST" not in hdrs.get("access-control-allow-methods", ""):
            fail("CORS preflight: %d %r" % (st, hdrs))
    finally:
        srv.close()


def test_graceful_shutdown():
    """SIGTERM while a request's body is still arriving: it is answered,
    then the server exits 0."""
    srv = Server("--web-root", "web")
    body = cfg(GOOD).encode()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.sendall(b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body[:5])
    time.sleep(0.2)
    srv.proc.terminate()
    time.sleep(0.2)
    s.sendall(body[5:])
    resp = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        resp += chunk
    s.close()
    rc = srv.stop()
    if not resp.startswith(b"HTTP/1.1 200"):
        fail("in-flight request during SIGTERM: %r" % resp[:100])
    if rc != 0:
        fail("exit status after SIGTERM: %d\n%s" % (rc, srv.stderr()[-2000:]))
    srv.close()


def test_overload():
    """--max-inflight 1: while one request's body is arriving, another
    request is refused with a documented 503 and Retry-After; /healthz is
    not (it is outside the in-flight limit)."""
    srv = Server("--max-inflight", "1")
    try:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        s.sendall(b"POST /api/v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{")
        time.sleep(0.3)
        _, hdrs, _ = call(srv.port, "GET", "/api/v1/presets", expect=503)
        if not hdrs.get("retry-after"):
            fail("503 without Retry-After")
        call(srv.port, "GET", "/healthz", expect=200)
        s.close()
        time.sleep(0.3)
        call(srv.port, "GET", "/api/v1/presets", expect=200)
    finally:
        srv.close()


def test_cli_usage():
    exe = os.environ.get("MEMOPT") or os.path.join(ROOT, "build", "memopt")
    for args, want in ((["--help"], 0), (["--port", "abc"], 2), (["--port", "70000"], 2),
                       (["--bogus"], 2), (["--max-body", "12 parsecs"], 2),
                       (["--host", "not-an-address", "--port", "0"], 1),
                       (["--web-root", "/nonexistent/dir", "--port", "0"], 1)):
        rc = subprocess.run([exe, "serve", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20).returncode
        if rc != want:
            fail("memopt serve %s: exit %d, expected %d" % (" ".join(args), rc, want))


def test_access_log(srv):
    lines = [ln for ln in srv.stderr().splitlines() if ln.startswith("{")]
    if not lines:
        fail("no access log lines")
    for ln in lines:
        try:
            json.loads(ln)
        except ValueError:
            fail("access log line is not JSON: %r" % ln[:200])
            break


def test_coverage():
    for tpl, item in SPEC.doc["paths"].items():
        for method in item:
            if (tpl, method) not in CALLED:
                fail("operation %s %s was never called" % (method.upper(), tpl))


def main():
    srv = Server("--web-root", "web")
    try:
        preset = test_operations(srv.port)
        test_config_ops(srv.port, preset)
        test_migrate(srv.port, preset)
        test_models(srv.port, preset)
        test_layout(srv.port, preset)
        test_estimate(srv.port, preset)
        test_plan(srv.port, preset)
        test_size(srv.port)
        test_ledger(srv.port, preset)
        test_calibrate(srv.port)
        test_problems(srv.port, preset)
        test_not_found_and_methods(srv.port)
        test_static(srv.port, embedded=False)
        test_metrics(srv.port)
        test_access_log(srv)
        if not srv.alive():
            fail("the server died")
        rc = srv.stop()
        if rc != 0:
            fail("exit status %d after SIGTERM:\n%s" % (rc, srv.stderr()[-3000:]))
    finally:
        srv.close()
    emb = Server()
    try:
        test_static(emb.port, embedded=True)
    finally:
        emb.close()
    test_symlinks()
    test_cors()
    test_graceful_shutdown()
    test_overload()
    test_cli_usage()
    test_coverage()
    if FAILURES:
        print("%d contract failure(s)" % len(FAILURES))
        return 1
    print("api contract: all %d operations checked, every answer matches api/openapi.yaml" % len(CALLED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
