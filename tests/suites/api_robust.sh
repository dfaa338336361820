#!/bin/sh
# HTTP server robustness: malformed requests, big headers and bodies, slow
# clients, 1,000 connections, 10,000 random bodies (FUZZ_COUNT overrides).
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
exec /usr/bin/python3 tests/api/robust.py
