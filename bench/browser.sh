#!/bin/sh
# The web UI's 128-layer slider round trip (target 100 ms from a keypress
# to the answers rendered) and the bytes one slider step moves on a
# 128-layer, 8-stage model (target 64 KiB): runs the browser suite, which
# measures them (12 keypresses, median; 6 steps, the largest) into
# test-output/slider-roundtrip.json and slider-wire.json, and prints the
# figures against the targets. Skips, saying so, when the browser suite
# skips (no chromium).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MEMOPT=${MEMOPT:-$(pwd)/$BUILD/memopt}
export MEMOPT
out=test-output/slider-roundtrip.json
wire=test-output/slider-wire.json
rm -f "$out" "$wire"
log=$(sh tests/suites/browser.sh 2>&1)
rc=$?
if [ ! -f "$out" ]; then
  echo "$log" | tail -3
  case $log in *SKIP:*) echo "browser: skipped"; exit 0 ;; esac
  echo "browser: the suite did not measure the round trip (exit $rc)"
  exit 1
fi
/usr/bin/python3 - "$out" "$wire" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
if os.path.exists(sys.argv[2]):
    w = json.load(open(sys.argv[2]))
    print("browser: one slider step, 128 layers in 8 stages: %d bytes on the wire at most (%s; target %d: %s)"
          % (w["max_bytes"], ", ".join(str(b) for b in w["steps"]), w["limit_bytes"],
             "met" if w["max_bytes"] <= w["limit_bytes"] else "NOT met"))
else:
    print("browser: the suite did not measure the slider step's bytes (test-output/slider-wire.json)")
ms, painted = d["median_ms"], d["median_painted_ms"]
print("browser: 128-layer slider round trip %.1f ms to the answers rendered, %.1f ms to the "
      "next painted frame (median of %d; target 100 ms: %s)"
      % (ms, painted, len(d["samples"]), "met" if ms <= 100 else "NOT met"))
PY
