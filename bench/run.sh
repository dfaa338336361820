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
  # the long-run memory probe runs a minute here; its own default is 10
  # minutes (notes/server-survival.md has those runs)
  args=
  [ "$(basename "$s")" = rss_probe.sh ] && args=${RSS_PROBE_SECONDS:-60}
  echo "== $s $args"
  # shellcheck disable=SC2086
  if ! sh "$s" $args; then echo "FAIL: $s"; fail=1; fi
done
exit $fail
