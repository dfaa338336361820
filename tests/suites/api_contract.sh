#!/bin/sh
# HTTP API contract: every operation of api/openapi.yaml against the real
# server (MEMOPT, set by tests/run.sh; build/memopt otherwise).
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
exec /usr/bin/python3 tests/api/contract.py
