#!/usr/bin/python3
"""Byte-compares the command-line answers of two memopt binaries: every
command with good and bad options and operands, run from the repository
root; stdout, stderr and the exit status must be the same. Used to show
that a change to cli/ changes no behaviour: run it with the binary of the
commit before and the binary after.

    /usr/bin/python3 tools/compare_cli.py OLD/memopt NEW/memopt [--show]

Prints one block per differing invocation and a summary; exit status 1
when any differs. Cases whose messages changed on purpose are listed in
EXPECTED_CHANGES with the reason; they are reported but not counted."""
import os, re, subprocess, sys, tempfile

TOUR = "examples/tour/"
GOOD, BAD, NONE = TOUR + "tour.yaml", TOUR + "tour-bad.yaml", TOUR + "none.yaml"
TRACE = "tests/data/ledger/select-ffn-layers.csv"
MEGA = "tests/data/megatron/gpt3_7b_tp1_pp4_memory_speed.model_config.yaml"
M = ["--model", "llama2-7b"]

CASES = [
    [], ["--help"], ["-h"], ["help"], ["--version"], ["-V"], ["version"], ["nosuch"],
    ["validate"], ["validate", GOOD], ["validate", BAD], ["validate", "-j", BAD],
    ["validate", GOOD, BAD], ["validate", "--nosuch", GOOD], ["validate", "-h"],
    ["validate", "--mod", "llama2-7b", BAD], ["validate", "-m", "nosuch-model", GOOD],
    ["validate", "-d", "0", GOOD], ["validate", "-d", "x", GOOD], ["validate", "-d", "8", GOOD],
    ["validate", "--work-limit", "x", GOOD], ["validate", "/nonexistent.yaml"],
    ["expand"] + M + [GOOD], ["expand", "--json", "--paths"] + M + [GOOD], ["expand", GOOD],
    ["expand", "-j", GOOD], ["expand"] + M + [BAD],
    ["export", GOOD], ["export", "-j", GOOD], ["export", BAD], ["migrate", GOOD],
    ["presets"], ["presets", "-j"], ["presets", "llama2-7b"], ["presets", "nosuch"],
    ["estimate"] + M + [GOOD], ["estimate", "--explain"] + M + [GOOD],
    ["estimate", "-j"] + M + [GOOD], ["estimate", GOOD], ["estimate", "-j", GOOD],
    ["estimate", "--ex"] + M + [GOOD], ["estimate"] + M, ["estimate", "--work-limit", "1"] + M + [GOOD],
    ["import", MEGA], ["import", "-j", MEGA], ["import", "--devices", "8", MEGA], ["import"],
    ["import", "-h"], ["import", "--help"],
    ["plan", "--help"], ["plan"], ["plan", "--budget", "40GiB"] + M + [NONE],
    ["plan", "-b", "40GiB", "-j"] + M, ["plan", "-b", "0"] + M, ["plan", "-b", "x"] + M,
    ["plan", "--allow", "nope"] + M, ["plan", "--allow", "select,full", "-b", "30GiB"] + M,
    ["plan", "--maximize", "bogus"] + M, ["plan", "--max", "seq_length", "--limit", "8192"] + M,
    ["plan", "--paths"] + M, ["plan"] + M + [GOOD, BAD], ["plan", "--limit", "0"] + M,
    ["ledger"], ["ledger", "-h"], ["ledger", TRACE], ["ledger", "-j", TRACE], ["ledger", "-"],
    ["ledger", "--stage", "x", TRACE], ["ledger", "--transient-ms", "0", TRACE],
    ["ledger", "--first-layer", "-1", "--layer-start", "Empty:7.5", TRACE],
    ["ledger", "--model", "dsv3-mini", TRACE], ["ledger", "--nosuch", TRACE],
    ["launch"], ["launch", "-h"], ["launch", GOOD, "--"], ["launch", GOOD, "--", "true"],
    ["launch", "--max-memory", "lots", GOOD, "--", "true"], ["launch", BAD, "--", "true"],
    ["launch", "-j", GOOD, "--", "true"], ["launch", "-m", "llama2-7b", GOOD, "--", "true"],
    ["launch", "-m", "llama2-7b", "-d", "8", GOOD, "--", "sh", "-c", "cat $MEMOPT_CONFIG"],
    ["launch", "-m", "llama2-7b", "--max-memory", "1MiB", GOOD, "--", "true"],
    ["serve", "--help"], ["serve", "-h"], ["serve", "--port", "x"], ["serve", "--nosuch"], ["serve", "extra"],
]

# Deliberate differences of the command-table change against the build
# before it (the one option parser names the command and the range in every
# bad-value message; serve's errors no longer repeat its usage; migrate's
# "no recompute_config" has no 0:0 position; the usage's --json line):
# shown with --show, not counted. Empty it to compare two builds where
# nothing should change.
EXPECTED_CHANGES = {
    ("validate", "-d", "0", GOOD), ("validate", "-d", "x", GOOD),
    ("plan", "--limit", "0", "--model", "llama2-7b"),
    ("launch", "--max-memory", "lots", GOOD, "--", "true"),
    ("serve", "--port", "x"), ("serve", "--nosuch"), ("serve", "extra"),
    ("migrate", GOOD),
    # memopt --help's --json line names docs/api.md instead of an outside document
    (), ("--help",), ("-h",), ("help",), ("nosuch",), ("validate", "--nosuch", GOOD),
    ("validate", "-h"),
}


def run(binary, args, tmp):
    env = dict(os.environ, TMPDIR=tmp)
    p = subprocess.run([binary] + args, capture_output=True, env=env, timeout=300)
    return p.returncode, p.stdout, mask(p.stderr, tmp)


def mask(err, tmp):
    """launch's private directory differs from run to run"""
    err = err.replace(tmp.encode(), b"TMP")
    return re.sub(rb"memopt-launch-\w{6}", b"memopt-launch-XXXXXX", err)


def main():
    old, new = sys.argv[1], sys.argv[2]
    show = "--show" in sys.argv
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    differ = expected = 0
    with tempfile.TemporaryDirectory() as tmp:
        for args in CASES:
            a, b = run(old, args, tmp), run(new, args, tmp)
            if a == b:
                continue
            known = tuple(args) in EXPECTED_CHANGES
            if known:
                expected += 1
            else:
                differ += 1
            if show or not known:
                print("%s: memopt %s" % ("changed on purpose" if known else "DIFFERS",
                                         " ".join(args)))
                for what, x, y in (("exit", a[0], b[0]), ("stdout", a[1], b[1]),
                                   ("stderr", a[2], b[2])):
                    if x != y:
                        print("  %s old: %r\n  %s new: %r" % (what, x[:600], what, y[:600]))
    print("%d invocations, %d differ, %d changed on purpose" % (len(CASES), differ, expected))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
