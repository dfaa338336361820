#!/bin/sh
# Hostile input (tests/hostile/hostile.py): empty, garbage, huge, deep,
# alias bombs, huge lists and keys, many and catastrophic patterns, several
# documents, wrong roots, tags. Inputs are generated into a temporary folder.
# MEMOPT = the binary to test; SAN (1: ASan, ubsan: clang UBSan) relaxes the
# limits for the sanitizer builds.
set -u
MEMOPT=${MEMOPT:-build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
"$PY" tests/hostile/hostile.py gen "$tmp" || exit 1
"$PY" tests/hostile/hostile.py run "$MEMOPT" "$tmp"
