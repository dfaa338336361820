#!/bin/sh
# No request stalls another, and the server is sound however it is
# started: stdio closed, stderr stuck, a low fd limit, HTTP framing
# (tests/api/stall.py).
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
exec /usr/bin/python3 tests/api/stall.py
