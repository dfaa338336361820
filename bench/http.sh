#!/bin/sh
# HTTP benchmark: wrk on loopback against /healthz (the baseline) and POST
# /api/v1/validate and /api/v1/estimate with a 32-layer preset config
# (llama2-7b), 64 connections.
# Prints requests/s, p99 latency and the validate/healthz throughput ratio.
#   BUILD=build  DURATION=10  CONNECTIONS=64  WRK_THREADS=2  sh bench/http.sh
# Targets (issue 4): ratio >= 0.8, validate p99 <= 5 ms on a 2-core machine.
# wrk and the server share the machine: both figures come from the same run.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MEMOPT=${MEMOPT:-$(pwd)/$BUILD/memopt}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
WRK_THREADS=${WRK_THREADS:-2}

if ! command -v wrk >/dev/null 2>&1; then
  echo "bench/http.sh: wrk is not installed (Debian package wrk; make deps installs it)" >&2
  exit 1
fi
[ -x "$MEMOPT" ] || { echo "bench/http.sh: $MEMOPT not built" >&2; exit 1; }

tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$MEMOPT" serve --port 0 --quiet 2>"$tmp/server.log" &
pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/^listening on http:\/\/.*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.log")
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "bench/http.sh: the server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }

# The request: a select/full recompute and swap plan on Llama-2-7B's 32 layers.
cat > "$tmp/config.yaml" <<'EOF'
recompute:
  mode: select
  full_recompute_layer: [0-7]
  select_module:
    '.*mlp': [8-23]
    'self_attention\.core_attention': [8-15]
  exclude_op:
    '.*linear_fc1': [8-11]
recompute_comm:
  enable: False
swap:
  enable: True
  default_prefetch: 1
  layer_swap:
    - layers: [24-29]
  op_swap:
    - op_name: 'mlp\.linear_fc2'
      layers: [30]
EOF
/usr/bin/python3 - "$tmp" <<'EOF'
import json, sys
d = sys.argv[1]
body = json.dumps({"config": open(d + "/config.yaml").read(), "model": "llama2-7b", "devices": 8})
with open(d + "/validate.lua", "w") as f:
    f.write('wrk.method = "POST"\n')
    f.write('wrk.headers["Content-Type"] = "application/json"\n')
    f.write("wrk.body = [==[" + body + "]==]\n")
EOF

# sanity: the request is answered and the config is valid
answer=$(curl -s -H 'Content-Type: application/json' --data-binary @- \
  "http://127.0.0.1:$port/api/v1/validate" <<EOF
$(sed -n 's/^wrk.body = \[==\[\(.*\)\]==\]$/\1/p' "$tmp/validate.lua")
EOF
)
case $answer in
  *'"valid":true'*) ;;
  *) echo "bench/http.sh: unexpected validate answer: $answer" >&2; exit 1 ;;
esac

run() { # name url [script]
  name=$1; url=$2; shift 2
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" > "$tmp/$name.txt"
}
# wrk prints 99% as e.g. 1.23ms, 850.00us or 1.02s
rps() { sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\).*/\1/p' "$tmp/$1.txt"; }
p99() {
  sed -n 's/^[[:space:]]*99%[[:space:]]*\([0-9.]*\)\([a-z]*\).*/\1 \2/p' "$tmp/$1.txt" |
    awk '{ v=$1; u=$2; if (u=="us") v/=1000; else if (u=="s") v*=1000; else if (u=="m") v*=60000; printf "%.3f", v }'
}
errors() { sed -n 's/^[[:space:]]*Non-2xx or 3xx responses:[[:space:]]*\([0-9]*\).*/\1/p' "$tmp/$1.txt"; }

run healthz "http://127.0.0.1:$port/healthz"
run validate "http://127.0.0.1:$port/api/v1/validate" -s "$tmp/validate.lua"
# the same body against the estimator (the timeline included in each answer)
run estimate "http://127.0.0.1:$port/api/v1/estimate" -s "$tmp/validate.lua"

h_rps=$(rps healthz); v_rps=$(rps validate); e_rps=$(rps estimate)
h_p99=$(p99 healthz); v_p99=$(p99 validate); e_p99=$(p99 estimate)
bad=$(errors validate); bad=${bad:-0}
ebad=$(errors estimate); ebad=${ebad:-0}

echo "memopt HTTP bench: wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s on 127.0.0.1 ($(nproc) CPUs, server threads: default)"
printf '  %-34s %10s req/s   p99 %8s ms\n' "GET /healthz" "$h_rps" "$h_p99"
printf '  %-34s %10s req/s   p99 %8s ms\n' "POST /api/v1/validate (llama2-7b)" "$v_rps" "$v_p99"
printf '  %-34s %10s req/s   p99 %8s ms\n' "POST /api/v1/estimate (llama2-7b)" "$e_rps" "$e_p99"
awk -v v="$v_rps" -v h="$h_rps" -v p="$v_p99" 'BEGIN {
  r = v / h
  printf "  validate/healthz ratio %.2f (target >= 0.80: %s); validate p99 %.3f ms (target <= 5 ms: %s)\n",
    r, (r >= 0.8 ? "met" : "NOT met"), p, (p <= 5 ? "met" : "NOT met") }'
[ "$bad" = 0 ] || echo "  warning: $bad validate answers were not 2xx"
[ "$ebad" = 0 ] || echo "  warning: $ebad estimate answers were not 2xx"
