#!/bin/sh
# The server survives its users (a shared service): floods past the connection
# limit, slow headers and uploads, per-client caps, shutdown on SIGTERM and
# SIGHUP with work in flight (tests/api/survive.py).
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
exec /usr/bin/python3 tests/api/survive.py
