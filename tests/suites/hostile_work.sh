#!/bin/sh
# Valid but hostile estimator / planner requests (work stays bounded): sizes
# out of range, MoE swap plans, odd pattern keys, bad `allow`, answers over
# the size cap (tests/hostile/work.py), through the CLI and the HTTP API.
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
exec /usr/bin/python3 tests/hostile/work.py
