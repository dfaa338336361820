#!/bin/sh
# The README's tour is real output: every `$ memopt ...` block of README.md is
# run in examples/tour/ and compared with what the README shows (a line "  ..."
# stands for any lines). The contract in docs/ is held to the code: every
# diagnostic code the core can emit (tools/diag_codes.py) has its section in
# docs/rules.md, and every example there triggers its code; no file of the
# repository points outside it. MEMOPT = the binary to test.
set -u
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
"$PY" - "$MEMOPT" <<'PYEOF' || exit 1
import re, shlex, subprocess, sys

memopt = sys.argv[1]
text = open("README.md", encoding="utf-8").read()
blocks = re.findall(r"```\n(\$ memopt .*?)```", text, re.S)
if not blocks:
    sys.exit("FAIL: README.md has no `$ memopt` block")


def matches(want, got):
    """want's lines equal got's, a line '  ...' standing for any lines."""
    if not want:
        return not got
    if want[0].strip() == "...":
        return any(matches(want[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and want[0] == got[0] and matches(want[1:], got[1:])


fail = n = 0
for block in blocks:
    # one block may hold several commands, each followed by its output
    for cmd in re.split(r"(?m)^(?=\$ memopt )", block):
        if not cmd.strip():
            continue
        first, _, out = cmd.partition("\n")
        argv = shlex.split(first[2:].split("#", 1)[0])
        r = subprocess.run([memopt] + argv[1:], cwd="examples/tour", capture_output=True, text=True)
        got = (r.stdout + r.stderr).rstrip("\n").split("\n") if (r.stdout + r.stderr) else []
        want = out.rstrip("\n").split("\n") if out.strip() else []
        n += 1
        if not matches(want, got):
            fail += 1
            print("FAIL: README `%s` differs from the real output:" % first)
            print("\n".join(got))
if fail:
    sys.exit(1)
print("ok: the README's %d commands print what it shows" % n)
PYEOF
exec "$PY" - "$MEMOPT" <<'PYEOF'
import os, re, shlex, subprocess, sys, tempfile

memopt = os.path.abspath(sys.argv[1])
text = open("docs/rules.md", encoding="utf-8").read()
codes = subprocess.run([sys.executable, "tools/diag_codes.py", "--names"], check=True,
                       capture_output=True, text=True).stdout.split()
if len(codes) < 30:
    sys.exit("FAIL: tools/diag_codes.py found only %d codes in core/src" % len(codes))
sections = dict(re.findall(r"(?ms)^### `([a-z0-9-]+)`\n(.*?)(?=^##|\Z)", text))
fail = 0
for code in codes:
    if code not in sections:
        print("FAIL: the core emits `%s` (tools/diag_codes.py) and docs/rules.md has no "
              "section for it" % code)
        fail += 1
ran = 0
with tempfile.TemporaryDirectory() as tmp:
    for code, body in sections.items():
        examples = re.findall(r"```(?:yaml|sh)\n(# memopt [^\n]*)\n(.*?)```", body, re.S)
        if not examples:
            if "No example:" not in body:
                print("FAIL: docs/rules.md `%s` has no example (and says no reason)" % code)
                fail += 1
            continue
        for first, _ in examples:
            path = os.path.join(tmp, "example-%s" % code)
            with open(path, "w", encoding="utf-8") as f:
                f.write(first + "\n" + _)
            argv = shlex.split(first[2:])
            argv = [path if a == "FILE" else a for a in argv]
            r = subprocess.run([memopt] + argv[1:], cwd=tmp, capture_output=True, text=True)
            ran += 1
            if "[%s]" % code not in r.stderr + r.stdout:
                print("FAIL: docs/rules.md's example for `%s` (%s) does not report it:\n%s"
                      % (code, first, r.stderr + r.stdout))
                fail += 1
# every key of the model reader's table is in the model file reference
keys = []
for path in subprocess.run(["git", "ls-files", "core/src"], capture_output=True,
                           text=True).stdout.split():
    if path.endswith(".c"):
        m = re.search(r"mo_model_keys\[\] = \{(.*?)\n\};", open(path, encoding="utf-8").read(), re.S)
        if m:
            keys += re.findall(r'\{"([a-z0-9_]+)",', m.group(1))
reference = open("docs/model-file.md", encoding="utf-8").read()
if len(keys) < 50:
    print("FAIL: the model key table (mo_model_keys[] in core/src) was not found")
    fail += 1
for k in keys:
    if "`%s`" % k not in reference:
        print("FAIL: the model reader accepts `%s`; docs/model-file.md does not say so" % k)
        fail += 1
# no pointer outside the repository in the front door, the guide or the
# sources, and no "SPEC n" / "issue n" citation in them
outside = re.compile(r"\.\./shared|/work/shared")
citation = re.compile(r"\bSPEC[ -](?:[0-9]|section)|\b[Ii]ssues? #?[0-9]+")
files = subprocess.run(["git", "ls-files", "README.md", "docs", "core", "cli", "api", "server",
                        "web", "bindings", "man", "bench", "tests", "tools", "Makefile"],
                       capture_output=True, text=True).stdout.split()
for f in files:
    if f == "tests/suites/readme.sh" or not os.path.isfile(f):
        continue
    try:
        body = open(f, encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    for m in outside.finditer(body):
        print("FAIL: %s:%d points outside the repository (%s)"
              % (f, body.count("\n", 0, m.start()) + 1, m.group(0)))
        fail += 1
    # a comment says why, not which request asked for it
    if f.startswith(("tests/data/", "tests/corpus/", "tests/calibration/")):
        continue
    for m in citation.finditer(body):
        print("FAIL: %s:%d cites a request (%s): say why instead"
              % (f, body.count("\n", 0, m.start()) + 1, m.group(0)))
        fail += 1
if fail:
    sys.exit(1)
print("ok: docs/rules.md documents the core's %d codes; its %d examples report them; "
      "docs/model-file.md the %d model keys" % (len(codes), ran, len(keys)))
PYEOF
