#!/bin/sh
# api/accuracy.tsv (the measured accuracy every estimate answer carries)
# against the estimator as built: each run's error as recorded, within 0.05
# percentage points. A change of the estimate that moves one fails here and
# says to run tools/accuracy_table.py --write (and to say how it moved).
# MEMOPT = the binary to test.
set -u
MEMOPT=${MEMOPT:-build/memopt}
PY=/usr/bin/python3
if [ ! -x "$MEMOPT" ]; then echo "FAIL: $MEMOPT not built"; exit 1; fi
exec "$PY" tools/accuracy_table.py --memopt "$MEMOPT" --check
