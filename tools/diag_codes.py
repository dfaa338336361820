#!/usr/bin/python3
"""Lists the diagnostic codes the core can emit: the code argument of every
call to diags_add / diags_add_at, and of every core function that
takes a `const char *code` and passes it on (found by its parameter list),
read from core/src/**/*.c. A code argument that is a variable contributes
the literals its callers pass; string literals inside it (a ternary) are
each a code. Prints `code file:line` per call site, or with --names the
sorted set of codes. tests/suites/readme.sh holds docs/rules.md against it.

    /usr/bin/python3 tools/diag_codes.py [--names]"""
import glob, os, re, sys

CODE = re.compile(r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)*)"')


def split_args(text, start):
    """The arguments of the call whose '(' is at start, and where it ends."""
    depth, args, cur, i, quote = 0, [], [], start, None
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\":
                cur.append(text[i + 1]); i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch; cur.append(ch)
        elif ch == "(":
            depth += 1
            if depth > 1:
                cur.append(ch)
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur)); return args, i
            cur.append(ch)
        elif ch == "," and depth == 1:
            args.append("".join(cur)); cur = []
        else:
            cur.append(ch)
        i += 1
    return args, i


def emitters(sources):
    """{function: index of its `code` parameter}, diags_add* included."""
    found = {"diags_add": 2, "diags_add_at": 2}
    decl = re.compile(r"\b(\w+)\s*\(([^;{)]*const char \*code\b[^;{)]*)\)\s*(?:\{|__attribute__)")
    for text in sources.values():
        for m in decl.finditer(text):
            params = [p.strip() for p in m.group(2).split(",")]
            for k, p in enumerate(params):
                if re.fullmatch(r"const char \*code", p):
                    found.setdefault(m.group(1), k)
    return found


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = {}
    for path in sorted(glob.glob(os.path.join(root, "core/src/**/*.c"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            sources[os.path.relpath(path, root)] = f.read()
    funcs = emitters(sources)
    call = re.compile(r"\b(%s)\s*\(" % "|".join(map(re.escape, funcs)))
    sites = []
    for path, text in sources.items():
        for m in call.finditer(text):
            args, _ = split_args(text, m.end() - 1)
            k = funcs[m.group(1)]
            if len(args) <= k or args[k].strip().startswith("const char"):
                continue  # the definition or a prototype
            line = text.count("\n", 0, m.start()) + 1
            for code in CODE.findall(args[k]):
                sites.append((code, "%s:%d" % (path, line)))
    if "--names" in sys.argv:
        print("\n".join(sorted({c for c, _ in sites})))
    else:
        for code, where in sorted(sites):
            print(code, where)


if __name__ == "__main__":
    main()
