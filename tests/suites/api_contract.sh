#!/bin/sh
# HTTP API contract: every operation of api/openapi.yaml against the real
# server (MEMOPT, set by tests/run.sh; build/memopt otherwise). The document
# is also linted when openapi-spec-validator happens to be installed.
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
if command -v openapi-spec-validator >/dev/null 2>&1; then
  openapi-spec-validator api/openapi.yaml >/dev/null 2>&1 ||
    { echo "api/openapi.yaml: openapi-spec-validator failed"; openapi-spec-validator api/openapi.yaml; exit 1; }
fi
exec /usr/bin/python3 tests/api/contract.py
