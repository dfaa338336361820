#!/bin/sh
# The web UI's 128-layer slider round trip (target 100 ms from a
# keypress to the answers rendered): runs the browser suite, which measures
# it (12 keypresses, median) into test-output/slider-roundtrip.json, and
# prints the figure against the target. Skips, saying so, when the browser
# suite skips (no chromium).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MEMOPT=${MEMOPT:-$(pwd)/$BUILD/memopt}
export MEMOPT
out=test-output/slider-roundtrip.json
rm -f "$out"
log=$(sh tests/suites/browser.sh 2>&1)
rc=$?
if [ ! -f "$out" ]; then
  echo "$log" | tail -3
  case $log in *SKIP:*) echo "browser: skipped"; exit 0 ;; esac
  echo "browser: the suite did not measure the round trip (exit $rc)"
  exit 1
fi
/usr/bin/python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ms, painted = d["median_ms"], d["median_painted_ms"]
print("browser: 128-layer slider round trip %.1f ms to the answers rendered, %.1f ms to the "
      "next painted frame (median of %d; target 100 ms: %s)"
      % (ms, painted, len(d["samples"]), "met" if ms <= 100 else "NOT met"))
PY
