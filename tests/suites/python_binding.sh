#!/bin/sh
# bindings/python (ctypes) against the built libmemopt.so: the unit tests of
# test_binding.py, the faces and the example of test_faces.py (pytest when
# installed, else its own runner), and `pip install` of the package into a
# scratch venv (no network: --no-build-isolation --no-index), imported from
# elsewhere.
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
"$PY" -m unittest -q tests/python/test_binding.py || exit 1
if "$PY" -c "import pytest" 2>/dev/null; then
  "$PY" -m pytest -q tests/python/test_faces.py tests/python/test_size.py || exit 1
else
  "$PY" tests/python/test_faces.py || exit 1
  "$PY" tests/python/test_size.py || exit 1
fi
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
if ! "$PY" -m venv --system-site-packages "$venv/env" >/dev/null 2>&1; then
  echo "python binding: no venv module here: the pip install is not checked"
  exit 0
fi
if ! "$venv/env/bin/pip" install -q --no-build-isolation --no-index ./bindings/python >"$venv/pip.log" 2>&1; then
  echo "FAIL: pip install ./bindings/python:"; tail -5 "$venv/pip.log"; exit 1
fi
(cd "$venv" && "$venv/env/bin/python" -c '
import memopt, sys
assert memopt.__file__.startswith(sys.prefix), memopt.__file__
r = memopt.validate("recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n", model="llama2-7b")
assert r["valid"], r
print("python binding: pip-installed memopt %s imports from %s" % (memopt.__version__, sys.prefix))
') || { echo "FAIL: the pip-installed package"; exit 1; }
