#!/bin/sh
# Runs every test: the cmocka binaries, then each tests/suites/*.sh.
# BUILD names the build folder (build, or build-san / build-ubsan under
# `make check`); SUITES, when set, the suites to run (names without .sh,
# e.g. "golden hostile"; the clang UBSan build runs a few).
set -u
BUILD=${BUILD:-build}
SUITES=${SUITES:-}
export BUILD
MEMOPT=$(pwd)/$BUILD/memopt
export MEMOPT
fail=0
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  echo "== $t"
  if ! "$t"; then echo "FAIL: $t"; fail=1; fi
done
for t in "$BUILD"/tests/fuzz_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  corpus=tests/fuzz/corpus/${name#fuzz_}
  echo "== $t (replay $corpus)"
  if ! "$t" "$corpus"; then echo "FAIL: $t"; fail=1; fi
done
if [ -n "$SUITES" ]; then
  suites=$(for n in $SUITES; do echo "tests/suites/$n.sh"; done)
else
  suites=$(ls tests/suites/*.sh)
fi
for s in $suites; do
  if [ ! -f "$s" ]; then echo "FAIL: no suite $s"; fail=1; continue; fi
  echo "== $s"
  if ! sh "$s"; then echo "FAIL: $s"; fail=1; fi
done
if [ $fail -ne 0 ]; then echo "SOME TESTS FAILED"; exit 1; fi
echo "ALL TESTS PASSED"
