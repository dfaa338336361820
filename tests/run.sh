#!/bin/sh
# Runs every test: the cmocka binaries, then each tests/suites/*.sh.
# BUILD names the build folder (build, or build-san under `make check`).
set -u
BUILD=${BUILD:-build}
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
for s in tests/suites/*.sh; do
  [ -f "$s" ] || continue
  echo "== $s"
  if ! sh "$s"; then echo "FAIL: $s"; fail=1; fi
done
if [ $fail -ne 0 ]; then echo "SOME TESTS FAILED"; exit 1; fi
echo "ALL TESTS PASSED"
