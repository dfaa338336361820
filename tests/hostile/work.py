#!/usr/bin/python3
"""Requests that are valid but hostile to the estimator and the planner
(sizes at and past every bound, so a request cannot make the server run
unbounded or crash), through the CLI and the HTTP API. Each case says what
it requires; under SAN=1 (`make check`: ASan, UBSan with float-cast-overflow)
any sanitizer report is a failure too.

- sizes out of range (hidden 2^24, seq 2^31-1, micro-batch 2^20): a clear
  error (CLI exit 1 or 2 with the message, API 422 `limit`), never a negative or wrapped
  peak_bytes, never an out-of-range double -> integer conversion;
- MoE presets with swap and a wide default_prefetch (qwen3-30b-a3b 4 and 8,
  mixtral-8x7b 8): a plan, or "no plan fits" (exit 0/1), never "out of
  memory planning";
- select_module keys holding a newline, a control character, NEL, LS, a C1
  control, or over 1,024 characters (an explicit key): the planner answers
  and its config keeps the key (the planner used to write YAML libyaml
  rejects: "estimate needs a parsed config");
- `allow` with a non-string item or an unknown name: 422 naming the item;
  a 300-byte comma-separated `allow` is read whole (it was cut at 256);
- `plan --allow exclude`: no qsort(NULL, 0) (UBSan aborts on it);
- an estimate whose answer would be tens of MB: 422 answer-too-large.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from common import Server, post_json, request  # noqa: E402

MEMOPT = os.environ.get("MEMOPT") or "build/memopt"
SAN = os.environ.get("SAN", "") not in ("", "0")
FAILURES = []
SANITIZER = ("runtime error:", "AddressSanitizer", "LeakSanitizer")


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def cli(args, text, timeout=120):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        p = subprocess.run([MEMOPT] + args + [f.name], capture_output=True, text=True,
                           timeout=timeout)
    finally:
        os.unlink(f.name)
    if any(s in p.stderr for s in SANITIZER):
        fail("%s: sanitizer report:\n%s" % (" ".join(args), p.stderr[:3000]))
    return p


# A llama-shaped model whose sizes pass each field's own bound but whose
# tensors do not fit in 64 bits.
HUGE = """training:
  local_batch_size: 1048576
  global_batch_size: 1048576
parallelism:
  data_parallel_shard: 1
  tensor_parallel: 1
model:
  model_type: llama
  vocab_size: 2147483647
  seq_length: 2147483647
  hidden_size: 16777216
  intermediate_size: 67108864
  num_hidden_layers: 4
  num_attention_heads: 16
  num_key_value_heads: 16
recompute:
  mode: None
"""


def test_sizes_out_of_range(port):
    p = cli(["estimate", "--json"], HUGE)
    if p.returncode not in (1, 2) or "sizes out of range" not in p.stdout + p.stderr:
        fail("huge sizes, CLI: exit %d, %r" % (p.returncode, (p.stdout + p.stderr)[:300]))
    if '"peak_bytes": -' in p.stdout:
        fail("huge sizes, CLI: a negative peak_bytes")
    st, _, body = post_json(port, "/api/v1/estimate", HUGE.encode(), "application/yaml")
    if st != 422 or b"sizes out of range" not in body:
        fail("huge sizes, API: %d %r" % (st, body[:300]))


def test_moe_swap_prefetch():
    for model, pf in (("qwen3-30b-a3b", 4), ("qwen3-30b-a3b", 8), ("mixtral-8x7b", 8)):
        p = cli(["plan", "-m", model], "swap:\n  enable: True\n  default_prefetch: %d\n" % pf)
        if p.returncode not in (0, 1) or "out of memory" in p.stderr:
            fail("plan %s default_prefetch %d: exit %d, %r" % (model, pf, p.returncode, p.stderr[:200]))


KEYS = {
    "newline": ('"a\\nb.*mlp"', "a\nb.*mlp"),
    "control": ('"a\\x01.*mlp"', "a\x01.*mlp"),
    "nel": ('"a\\N.*mlp"', "a\u0085.*mlp"),
    "line-separator": ('"a\\L.*mlp"', "a\u2028.*mlp"),
    "c1-control": ('"a\\x9f.*mlp"', "a\u009f.*mlp"),
    "quote-backslash": ('"a\\"\\\\d.*mlp"', "a\"\\d.*mlp"),
}


def test_pattern_keys(port):
    entries = dict((name, (yaml_key + ": [0-3]\n", key)) for name, (yaml_key, key) in KEYS.items())
    long_key = "x" * 1100 + ".*mlp"
    entries["1100-characters"] = ('? "%s"\n    : [0-3]\n' % long_key, long_key)
    for name, (entry, key) in entries.items():
        config = "recompute:\n  mode: select\n  select_module:\n    " + entry
        p = cli(["plan", "-m", "llama2-7b", "--json"], config)
        if p.returncode not in (0, 1):
            fail("plan, %s key: exit %d, %r" % (name, p.returncode, p.stderr[:200]))
            continue
        st, _, body = post_json(port, "/api/v1/plan", {"config": config, "model": "llama2-7b"})
        if st != 200:
            fail("API plan, %s key: %d %r" % (name, st, body[:200]))
            continue
        import yaml  # python3-yaml, as the API tests use
        text = json.loads(body).get("config", "")
        planned = yaml.safe_load(text) or {}
        if key not in ((planned.get("recompute") or {}).get("select_module") or {}):
            fail("API plan, %s key: the plan lost the key: %r" % (name, text[:200]))


def test_allow(port):
    base = {"config": "recompute:\n  mode: None\n", "model": "llama2-7b"}
    for allow, where in ((["select", 5], "item 1"), (["select", "bogus"], "item 1"),
                         ([None], "item 0"), ([], "non-empty")):
        st, _, body = post_json(port, "/api/v1/plan", dict(base, allow=allow))
        if st != 422 or where.encode() not in body:
            fail("allow %r: %d %r" % (allow, st, body[:200]))
    long_allow = "select," * 42 + "full"  # 298 bytes: 'full' lies past byte 256
    st, _, body = post_json(port, "/api/v1/plan", dict(base, allow=long_allow))
    if st != 200:
        fail("a 298-byte allow string: %d %r" % (st, body[:200]))


def test_allow_exclude_alone():
    p = cli(["plan", "-m", "llama2-7b", "--allow", "exclude"], "recompute:\n  mode: None\n")
    if p.returncode not in (0, 1):
        fail("plan --allow exclude: exit %d, %r" % (p.returncode, p.stderr[:300]))


# 2,000 stages of one layer and 10,000 micro-batches: a timeline of
# 262,144 events (the estimator's cap), some 60 MB of JSON.
LONG_TIMELINE = HUGE.replace("local_batch_size: 1048576", "local_batch_size: 1") \
    .replace("global_batch_size: 1048576", "global_batch_size: 10000") \
    .replace("vocab_size: 2147483647", "vocab_size: 32000").replace("seq_length: 2147483647", "seq_length: 4096") \
    .replace("hidden_size: 16777216", "hidden_size: 2048").replace("intermediate_size: 67108864", "intermediate_size: 5632") \
    .replace("num_hidden_layers: 4", "num_hidden_layers: 2000") \
    .replace("tensor_parallel: 1", "tensor_parallel: 1\n  pipeline_parallel: 2000")


def test_answer_cap(port):
    # the 2,000-stage timeline takes 3 s to reach the answer cap here, 10 s
    # or more under ASan on a loaded machine: the server's work limit and
    # this client's wait are widened for the sanitizer builds (main)
    st, _, body = request(port, "POST", "/api/v1/estimate", LONG_TIMELINE.encode(),
                          {"Content-Type": "application/yaml"}, timeout=90 if SAN else 10)
    if st != 422 or b"answer-too-large" not in body or len(body) > 4096:
        fail("a 60 MB estimate answer: %d, %d bytes %r" % (st, len(body), body[:200]))


# 100,000 pipeline stages and 2^31-1 micro-batches: the pipeline was walked
# micro-batch by micro-batch (10 s of server work, minutes in the CLI). The
# stage count is bounded where it enters the estimate (an answer lists every
# stage): a 422 `limit` naming the field and the bound, at once.
STAGES_100K = """training: {local_batch_size: 1, global_batch_size: 8}
parallelism: {data_parallel_shard: 1, tensor_parallel: 1, pipeline_parallel: 100000, micro_batch_num: 2147483647}
model: {model_type: llama, vocab_size: 32000, seq_length: 4096, hidden_size: 2048,
  intermediate_size: 5632, num_hidden_layers: 100000, num_attention_heads: 16, num_key_value_heads: 16}
recompute: {mode: full, full_recompute_layer: [0-3]}
"""

# At the bounds: 4,096 stages, 100,000 layers, 2^31-1 micro-batches. The
# stage's peak comes from the schedule's closed form: an answer, in tens of
# milliseconds (bench_estimate prints the time), whatever the micro-batch count.
DEEP = STAGES_100K.replace("pipeline_parallel: 100000", "pipeline_parallel: 4096")


def test_long_step(port):
    p = cli(["estimate"], STAGES_100K)
    if p.returncode != 2 or "error[limit]" not in p.stderr or "pipeline_parallel" not in p.stderr \
            or "4096" not in p.stderr:
        fail("100,000 stages, CLI: exit %d, %r" % (p.returncode, p.stderr[-300:]))
    st, _, body = post_json(port, "/api/v1/estimate", STAGES_100K.encode(), "application/yaml")
    if st != 422 or b"limit" not in body or b"pipeline_parallel" not in body or b"4096" not in body:
        fail("100,000 stages, API: %d %r" % (st, body[:300]))
    p = cli(["estimate"], DEEP)
    if p.returncode != 0 or "4096 micro-batches in flight" not in p.stdout \
            or "first events only" not in p.stdout:
        fail("4,096 stages x 2^31-1 micro-batches, CLI: exit %d, %r"
             % (p.returncode, (p.stdout[:300] + p.stderr[-300:])))


def test_cli_work_limit():
    """--work-limit stops estimate, plan and launch with error[work-limit]
    (exit 2); a bad value is a usage error naming the option. DEEP's estimate
    takes tens of milliseconds, its plan seconds: a 1 ms limit stops both."""
    for args, what in ((["estimate", "--work-limit", "1"], "error[work-limit]"),
                       (["estimate", "--json", "--work-limit", "1"], '"work-limit"'),
                       (["plan", "--work-limit", "1"], "work-limit:"),
                       (["launch", "--work-limit", "1"], "work-limit:")):
        argv = args[:1] + args[1:]
        if args[0] == "launch":
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                f.write(DEEP)
            try:
                p = subprocess.run([MEMOPT, "launch", f.name, "--work-limit", "1", "--", "true"],
                                   capture_output=True, text=True, timeout=120)
            finally:
                os.unlink(f.name)
        else:
            p = cli(argv, DEEP)
        out = p.stdout + p.stderr
        if p.returncode != 2 or what not in out:
            fail("%s on 4,096 stages: exit %d, %r" % (" ".join(args), p.returncode, out[-300:]))
    p = cli(["estimate", "--work-limit", "soon"], DEEP)
    if p.returncode != 2 or "--work-limit takes milliseconds" not in p.stderr:
        fail("--work-limit soon: exit %d, %r" % (p.returncode, p.stderr[-200:]))
    p = cli(["estimate", "--work-limit", "60000", "-m", "llama2-7b"], "recompute:\n  mode: None\n")
    if p.returncode != 0:
        fail("estimate of llama2-7b within 60 s: exit %d, %r" % (p.returncode, p.stderr[-300:]))


def main():
    srv = Server("--quiet", *(["--work-limit", "60000"] if SAN else []))
    try:
        for step in (lambda: test_sizes_out_of_range(srv.port), test_moe_swap_prefetch,
                     lambda: test_pattern_keys(srv.port), lambda: test_allow(srv.port),
                     test_allow_exclude_alone, lambda: test_answer_cap(srv.port),
                     lambda: test_long_step(srv.port),
                     test_cli_work_limit):
            step()
        rc = srv.stop(60)
        if rc != 0:
            fail("server exit status %d" % rc)
        if any(s in srv.stderr() for s in SANITIZER):
            fail("server sanitizer report:\n" + srv.stderr()[:3000])
    finally:
        srv.close()
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    print("hostile work: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
