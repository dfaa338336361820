#!/usr/bin/python3
"""Data-driven golden cases for `memopt validate` / `memopt expand`
(jansson's test/suites style). Standard library only.

    tests/golden/run.py MEMOPT [CASE_DIR...]

Layout (relative to tests/golden/):
  valid/<case>/config.yaml          a config that must validate (exit 0, "valid": true)
  invalid/<code>/<case>/config.yaml a config with findings, in the folder of the
                   rule code (docs/rules.md) it tests: that code must be among the
                   case's expected diagnostics; invalid/several-rules/ holds
                   cases about findings of several rules at once
  <case>/model     one line: a file relative to the case folder, a file
                   relative to tests/golden/ (models/dense8.yaml), a preset
                   name (llama2-7b), or "none" (no --model)
  <case>/args      optional: extra command-line arguments (one line)
  <case>/expect    optional for valid cases: one diagnostic per line,
                   `CODE LINE COLUMN [error|warning]`; '#' starts a comment.
                   The severity defaults to warning for the warning codes of
                   docs/rules.md and to error otherwise. The multiset of
                   (code, line, column, severity) must equal memopt's, so a
                   missing or an extra diagnostic fails. The expected exit
                   status is 1 when an error is expected, else 0.
  <case>/expect.json   optional: a subset of `memopt expand --json` (objects:
                   the listed keys must match; lists: same length, matched
                   item by item, unless the first item is the string "...":
                   then the remaining items must appear in order)
  <case>/xfail     the case is known to fail (a core bug, see
                   DISCREPANCIES.md); the file holds the reason. An xfail case
                   that passes is an error (XPASS), so the fix is noticed.

Every expected diagnostic must also appear in the human output on stderr as
`config.yaml:LINE:COL: SEVERITY[CODE]: ` (when its file is the config).
"""
import json
import os
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
WARNING_CODES = {"legacy-key", "no-match", "exclude-no-effect", "no-effect", "redundant",
                 "unread-key", "unmodelled", "model-replaced",
                 "single-device"}
TIMEOUT = 20


def read_expect(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) not in (3, 4):
                raise ValueError("%s:%d: want CODE LINE COLUMN [severity]" % (path, n))
            code, ln, col = line[0], int(line[1]), int(line[2])
            sev = line[3] if len(line) == 4 else (
                "warning" if code in WARNING_CODES else "error")
            if sev not in ("error", "warning"):
                raise ValueError("%s:%d: bad severity %r" % (path, n, sev))
            out.append((code, ln, col, sev))
    return out


def model_args(case):
    p = os.path.join(case, "model")
    if not os.path.exists(p):
        raise ValueError("%s: no model file" % case)
    with open(p, encoding="utf-8") as f:
        m = f.read().strip()
    if m in ("", "none"):
        return []
    for base in (case, HERE):
        if os.path.isfile(os.path.join(base, m)):
            return ["--model", os.path.relpath(os.path.join(base, m))]
    return ["--model", m]


def extra_args(case):
    p = os.path.join(case, "args")
    if not os.path.exists(p):
        return []
    with open(p, encoding="utf-8") as f:
        return f.read().split()


def subset(exp, act, where="$"):
    """Returns None when exp is a subset of act, else a description."""
    if isinstance(exp, dict):
        if not isinstance(act, dict):
            return "%s: want an object, got %r" % (where, act)
        for k, v in exp.items():
            if k not in act:
                return "%s: key %r missing" % (where, k)
            r = subset(v, act[k], "%s.%s" % (where, k))
            if r:
                return r
        return None
    if isinstance(exp, list):
        if not isinstance(act, list):
            return "%s: want a list, got %r" % (where, act)
        if exp and exp[0] == "...":
            i = 0
            for n, e in enumerate(exp[1:]):
                while i < len(act) and subset(e, act[i]) is not None:
                    i += 1
                if i == len(act):
                    return "%s: item %d of the expected sequence not found in order: %s" % (
                        where, n, json.dumps(e))
                i += 1
            return None
        if len(exp) != len(act):
            return "%s: want %d items, got %d" % (where, len(exp), len(act))
        for n, (e, a) in enumerate(zip(exp, act)):
            r = subset(e, a, "%s[%d]" % (where, n))
            if r:
                return r
        return None
    if exp != act or type(exp) is not type(act):
        return "%s: want %r, got %r" % (where, exp, act)
    return None


def run(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return p.returncode, p.stdout, p.stderr


def check_case(memopt, case, kind):
    """Returns a list of problems (empty = pass)."""
    problems = []
    cfg = os.path.relpath(os.path.join(case, "config.yaml"))
    args = model_args(case) + extra_args(case)
    expect = read_expect(os.path.join(case, "expect"))
    if kind == "invalid" and not expect:
        return ["invalid case without an expect file"]
    if kind == "invalid":
        folder = os.path.basename(os.path.dirname(case))
        codes = {e[0] for e in expect}
        if folder == "several-rules" and len(codes) < 2:
            return ["a several-rules case expecting one code: move it to invalid/%s/" % min(codes)]
        if folder != "several-rules" and folder not in codes:
            return ["filed under %s/ but expects no %s diagnostic (expects %s)" % (
                folder, folder, ", ".join(sorted(codes)))]
    want_rc = 1 if any(e[3] == "error" for e in expect) else 0
    if kind == "valid" and want_rc:
        return ["valid case expects errors"]

    rc, out, err = run([memopt, "validate", "--json"] + args + [cfg])
    if rc is None:
        return ["validate --json timed out"]
    if rc != want_rc:
        problems.append("validate --json exit %s, want %d" % (rc, want_rc))
    try:
        doc = json.loads(out.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        problems.append("validate --json: no JSON on stdout (%s); stderr: %s" % (
            e, err.decode("utf-8", "replace")[:500]))
        return problems
    got = []
    for sev, key in (("error", "errors"), ("warning", "warnings")):
        for d in doc.get(key, []):
            got.append((d.get("code"), d.get("line"), d.get("column"), sev))
            for field in ("code", "message", "line", "column", "path"):
                if field not in d:
                    problems.append("diagnostic without %r: %r" % (field, d))
    if doc.get("valid") is not (want_rc == 0):
        problems.append('"valid" is %r' % doc.get("valid"))
    missing = Counter(expect) - Counter(got)
    extra = Counter(got) - Counter(expect)
    for d in sorted(missing.elements()):
        problems.append("missing  %s %d %d %s" % d)
    for d in sorted(extra.elements(), key=str):
        problems.append("extra    %s %s %s %s" % d)

    # The human form: FILE:LINE:COL: severity[code]: on stderr.
    rc2, _, herr = run([memopt, "validate"] + args + [cfg])
    if rc2 != rc:
        problems.append("validate (human) exit %s, --json exit %s" % (rc2, rc))
    text = herr.decode("utf-8", "replace")
    config_diags = [d for d in doc.get("errors", []) + doc.get("warnings", [])
                    if d.get("file") in (None, cfg)]
    for d in config_diags:
        sev = "error" if d in doc.get("errors", []) else "warning"
        if d.get("line"):
            needle = "%s:%d:%d: %s[%s]: " % (cfg, d["line"], d["column"], sev, d["code"])
        else:
            needle = "%s[%s]: " % (sev, d["code"])
        if needle not in text:
            problems.append("stderr lacks %r" % needle)

    ej = os.path.join(case, "expect.json")
    if os.path.exists(ej):
        with open(ej, encoding="utf-8") as f:
            want = json.load(f)
        rc3, out3, err3 = run([memopt, "expand", "--json"] + args + [cfg])
        if rc3 != 0:
            problems.append("expand --json exit %s: %s" % (rc3, err3.decode("utf-8", "replace")[:300]))
        else:
            try:
                r = subset(want, json.loads(out3.decode("utf-8")))
            except ValueError as e:
                r = "expand --json: bad JSON (%s)" % e
            if r:
                problems.append("expand: " + r)
    return problems


def main():
    if len(sys.argv) < 2:
        print("usage: run.py MEMOPT [CASE...]", file=sys.stderr)
        return 2
    memopt = sys.argv[1]
    os.chdir(os.path.dirname(os.path.dirname(HERE)))  # the repository root
    bad = 0
    if len(sys.argv) > 2:
        cases = [os.path.abspath(c) for c in sys.argv[2:]]
    else:
        cases = []
        d = os.path.join(HERE, "valid")
        cases += [os.path.join(d, c) for c in sorted(os.listdir(d))
                  if os.path.isdir(os.path.join(d, c))]
        d = os.path.join(HERE, "invalid")
        for code in sorted(os.listdir(d)):
            if os.path.exists(os.path.join(d, code, "config.yaml")):
                print("FAIL invalid/%s: a case outside a rule-code folder; "
                      "move it to invalid/<code>/%s" % (code, code))
                bad += 1
                continue
            cases += [os.path.join(d, code, c) for c in sorted(os.listdir(os.path.join(d, code)))
                      if os.path.isdir(os.path.join(d, code, c))]
    counts = Counter()
    for case in cases:
        rel = os.path.relpath(case, HERE)
        kind = rel.split(os.sep)[0]
        name = rel
        try:
            problems = check_case(memopt, case, kind)
        except (OSError, ValueError) as e:
            problems = ["runner: %s" % e]
        xf = os.path.join(case, "xfail")
        if os.path.exists(xf):
            with open(xf, encoding="utf-8") as f:
                reason = f.read().strip()
            if problems:
                counts["XFAIL"] += 1
                print("XFAIL %s (%s)" % (name, reason))
            else:
                counts["XPASS"] += 1
                bad += 1
                print("XPASS %s: passes now; remove its xfail file and its DISCREPANCIES entry" % name)
            continue
        if problems:
            counts["FAIL"] += 1
            bad += 1
            print("FAIL  %s" % name)
            for p in problems:
                print("      " + p)
        else:
            counts["PASS"] += 1
            print("PASS  %s" % name)
    print("golden: %d passed, %d failed, %d xfail, %d xpass" % (
        counts["PASS"], counts["FAIL"], counts["XFAIL"], counts["XPASS"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
