#!/bin/sh
# bindings/python/memopt.py (ctypes) against the built libmemopt.so.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then echo "skipped: no $PY"; exit 0; fi
if [ -n "${SAN:-}" ]; then
  # an ASan-built library cannot be dlopen'ed into an uninstrumented python
  echo "skipped under SAN=1"; exit 0
fi
MEMOPT_LIB=$(pwd)/$BUILD/libmemopt.so
if [ ! -e "$MEMOPT_LIB" ]; then echo "FAIL: $MEMOPT_LIB not built"; exit 1; fi
export MEMOPT_LIB
exec "$PY" -m unittest -q tests/python/test_binding.py
