#!/bin/sh
# Runs every benchmark: each built $BUILD/bench/bench_* binary, then every
# bench/*.sh but this one. Benchmarks print their numbers and ratios; a
# benchmark that fails to run makes the whole run fail.
set -u
BUILD=${BUILD:-build}
export BUILD
MEMOPT=${MEMOPT:-$(pwd)/$BUILD/memopt}
export MEMOPT
fail=0
for b in "$BUILD"/bench/bench_*; do
  [ -x "$b" ] || continue
  echo "== $b"
  if ! "$b"; then echo "FAIL: $b"; fail=1; fi
done
for s in bench/*.sh; do
  [ -f "$s" ] || continue
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== $s"
  if ! sh "$s"; then echo "FAIL: $s"; fail=1; fi
done
exit $fail
