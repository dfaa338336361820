#!/bin/sh
# bindings/python/memopt_torch_snapshot.py: PyTorch memory snapshot -> memopt
# trace, read by `memopt ledger` (MEMOPT, set by tests/run.sh).
set -u
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
exec "$PY" -m unittest -q tests/python/test_torch_snapshot.py
