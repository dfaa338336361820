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
/usr/bin/python3 tests/api/contract.py

# The response cache: a repeated POST is replayed (same answer, marked
# X-Memopt-Cache: hit, counted in /metrics); --cache-entries 0 turns it off.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memopt-api-contract.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
serve() { # [options]: starts a server, sets $pid and $base
  "$MEMOPT" serve --port 0 --quiet "$@" 2>"$tmp/log" </dev/null >/dev/null &
  pid=$!
  base=
  for _ in $(seq 100); do
    # the background job may not have created its log yet
    base=$(sed -n 's/^listening on \(http:.*\)$/\1/p' "$tmp/log" 2>/dev/null || true)
    [ -n "$base" ] && break
    sleep 0.05
  done
  [ -n "$base" ] || { echo "api contract: the server did not start"; cat "$tmp/log"; exit 1; }
}
post() { # name: POSTs the validate body, keeps headers and body
  curl -s -D "$tmp/$1.h" -o "$tmp/$1.b" -H 'Content-Type: application/json' \
    --data-binary '{"config": "recompute:\n  mode: full\n  full_recompute_layer: [0-3]\n", "model": "llama2-7b"}' \
    "$base/api/v1/validate"
}
fail() { echo "api contract (response cache): $*"; exit 1; }
serve
post a; post b
grep -qi '^X-Memopt-Cache: miss' "$tmp/a.h" || fail "the first answer is not a miss"
grep -qi '^X-Memopt-Cache: hit' "$tmp/b.h" || fail "the repeated request is not a hit"
cmp -s "$tmp/a.b" "$tmp/b.b" || fail "the replayed answer differs"
curl -s "$base/metrics" | grep -q '^memopt_response_cache_hits_total 1$' || fail "/metrics does not count the hit"
kill "$pid"; wait "$pid" 2>/dev/null || true
serve --cache-entries 0
post c; post d
grep -qi '^X-Memopt-Cache' "$tmp/d.h" && fail "--cache-entries 0 still caches"
cmp -s "$tmp/a.b" "$tmp/d.b" || fail "the uncached answer differs"
curl -s "$base/metrics" | grep -q '^memopt_response_cache' && fail "/metrics counts a cache that is off"
kill "$pid"; wait "$pid" 2>/dev/null || true
pid=
echo "api contract: response cache replays identical requests, off with --cache-entries 0"
