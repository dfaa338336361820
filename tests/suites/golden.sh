#!/bin/sh
# Golden cases (tests/golden/{valid,invalid}/<case>): code, line and column of
# every diagnostic, exit status, human output and expand subsets.
# MEMOPT = the binary to test.
set -u
MEMOPT=${MEMOPT:-build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
out=$("$PY" tests/golden/run.py "$MEMOPT"); rc=$?
# PASS lines only with VERBOSE=1; everything else (FAIL, XFAIL, XPASS, summary)
if [ "${VERBOSE:-0}" = 1 ]; then printf '%s\n' "$out"; else printf '%s\n' "$out" | grep -v '^PASS '; fi
exit $rc
