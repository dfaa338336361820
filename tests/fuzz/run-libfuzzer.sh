#!/bin/sh
# Runs one fuzz target under clang libFuzzer (+ASan+UBSan, with the integer
# checks of `make check`'s clang build) for a while.
# Not part of `make test` (which replays the corpora). Needs clang and
# libclang-rt-*-dev.
#   TARGET=config sh tests/fuzz/run-libfuzzer.sh [SECONDS] [JOBS]
# (default 300 s, 2 jobs; TARGET: config, estimate, plan, model, api_request, ledger, steplog)
# New interesting inputs go to $OUT/corpus-$TARGET (not the committed
# corpus); crash inputs to $OUT/crash-*: copy those to
# tests/fuzz/corpus/$TARGET/ and report.
# The committed corpus: hand-written seeds (golden configs, tricky-*) plus
# lf-* files, a libFuzzer -merge=1 of a 240 s run (only inputs adding coverage).
set -u
SECS=${1:-300}
JOBS=${2:-2}
CLANG=${CLANG:-clang}
TARGET=${TARGET:-config}
OUT=${OUT:-build/fuzz}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PKGS="yaml-0.1 libpcre2-8 jansson"
# UBSan as in the Makefile's UBSAN_CHECKS: a wrapped size is a finding
UB="undefined,float-cast-overflow,float-divide-by-zero,unsigned-integer-overflow,unsigned-shift-base,implicit-conversion"
CFL="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Icore/include -Icore/src -Iapi $(pkg-config --cflags $PKGS)"
mkdir -p "$OUT/obj" "$OUT/corpus-$TARGET"
OUT=$(cd "$OUT" && pwd)
# The library with coverage instrumentation (fuzzer-no-link), the target with the driver.
objs=""
# the core, and api/ with its embedded files (the request reader's harness
# calls mo_api_handle)
sh tools/embed.sh $(cat tools/embed.list) > "$OUT/embedded.c" || exit 1
for src in core/src/*/*.c api/*.c "$OUT/embedded.c"; do
  o="$OUT/obj/$(echo "$src" | tr / _ | sed 's/\.c$//').o"
  "$CLANG" $CFL -fsanitize=fuzzer-no-link,address,$UB -fno-sanitize-recover=all -c "$src" -o "$o" || exit 1
  objs="$objs $o"
done
"$CLANG" $CFL -fsanitize=fuzzer,address,$UB -fno-sanitize-recover=all -o "$OUT/fuzz_$TARGET" \
  "tests/fuzz/fuzz_$TARGET.c" $objs $(pkg-config --libs $PKGS) -lm -lpthread || exit 1
echo "built $OUT/fuzz_$TARGET; fuzzing for ${SECS}s with $JOBS jobs"
# -jobs writes fuzz-N.log into the working folder: run inside $OUT
cd "$OUT"
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
./"fuzz_$TARGET" -max_total_time="$SECS" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
  -jobs="$JOBS" -workers="$JOBS" -artifact_prefix=./ -print_final_stats=1 \
  -dict="$ROOT/tests/fuzz/config.dict" "corpus-$TARGET" "$ROOT/tests/fuzz/corpus/$TARGET"
status=$?
ls crash-* leak-* timeout-* oom-* 2>/dev/null && echo "findings above (in $OUT)" || echo "no crashes"
exit $status
