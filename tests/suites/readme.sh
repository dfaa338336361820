#!/bin/sh
# The README's tour is real output: every `$ memopt ...` block of README.md is
# run in examples/tour/ and compared with what the README shows (a line "  ..."
# stands for any lines). MEMOPT = the binary to test.
set -u
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
exec "$PY" - "$MEMOPT" <<'PYEOF'
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
