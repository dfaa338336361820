#!/bin/sh
# HTTP benchmark: wrk on loopback against /healthz (the baseline) and POST
# /api/v1/validate and /api/v1/estimate with a 32-layer preset config
# (llama2-7b), 64 connections.
# Prints requests/s, p99 latency and the validate/healthz throughput ratio,
# both with the response cache (the default; wrk repeats one body, so those
# answers are replayed) and without it (--cache-entries 0: computed).
#   BUILD=build  DURATION=5  ROUNDS=3  CONNECTIONS=64  WRK_THREADS=2  sh bench/http.sh
# Each round runs every case for DURATION seconds, one after the other; the
# figures are medians over the rounds, and each ratio is taken within a
# round (healthz and validate seconds apart) before its median, so load
# from elsewhere on a shared machine shifts both sides alike.
# Targets: an uncached estimate at most 3x an uncached validate in server
# CPU (the answer is a summary unless "detail" asks for more);
# ratio >= 0.8, validate p99 <= 5 ms on a 2-core machine (a
# scheduler validates every job before queuing it: the check must cost about
# what a health check costs).
# wrk and the server share the machine: both figures come from the same run.
# Each line also gives the server's own CPU time per request (user + system,
# from /proc/PID/stat over the run; median over the rounds): it moves far
# less than req/s and p99 with the load of other processes (about 14 -> 19
# us for /healthz between a quiet machine and a load average of 7, where
# p99 went from 6 to 22 ms), so it tells the server's cost apart from the
# machine's weather. The load average before and after is printed too.
# wrk keeps two threads: with one, its single thread caps /healthz (about
# 52k against 77k req/s in the same minute) and flatters the ratio.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MEMOPT=${MEMOPT:-$(pwd)/$BUILD/memopt}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-64}
WRK_THREADS=${WRK_THREADS:-2}

if ! command -v wrk >/dev/null 2>&1; then
  echo "bench/http.sh: wrk is not installed (Debian package wrk; make deps installs it)" >&2
  exit 1
fi
[ -x "$MEMOPT" ] || { echo "bench/http.sh: $MEMOPT not built" >&2; exit 1; }

. bench/lib/servers.sh
# The default server (response cache on: identical requests are replayed)
# and one with the cache off, where every request is computed.
start cached; cport=$port; cpid=$pid
start uncached --cache-entries 0; uport=$port; upid=$pid
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

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

# sanity: the request is answered and the config is valid, by both servers
for p in $cport $uport; do
  answer=$(curl -s -H 'Content-Type: application/json' --data-binary @- \
    "http://127.0.0.1:$p/api/v1/validate" <<EOF
$(sed -n 's/^wrk.body = \[==\[\(.*\)\]==\]$/\1/p' "$tmp/validate.lua")
EOF
)
  case $answer in
    *'"valid":true'*) ;;
    *) echo "bench/http.sh: unexpected validate answer: $answer" >&2; exit 1 ;;
  esac
done

run() { # name server-pid url [script]: appends this round's figures to $tmp/name.all
  name=$1; spid=$2; url=$3; shift 3
  t0=$(ticks_of "$spid")
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" > "$tmp/$name.txt"
  t1=$(ticks_of "$spid")
  echo "$(rps_of "$tmp/$name.txt") $(p99_of "$tmp/$name.txt") $(errors_of "$tmp/$name.txt")" \
    "$(cpu_of "$tmp/$name.txt" $((t1 - t0)))" >> "$tmp/$name.all"
}
# a process's user + system CPU time so far, in clock ticks (the command
# name in field 2 has no spaces: memopt)
ticks_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
CLK_TCK=$(getconf CLK_TCK)
# the server's CPU microseconds per request: ticks over wrk's request count
cpu_of() {
  n=$(sed -n 's/^[[:space:]]*\([0-9][0-9]*\) requests in.*/\1/p' "$1")
  awk -v t="$2" -v n="${n:-0}" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }'
}
# wrk prints 99% as e.g. 1.23ms, 850.00us or 1.02s
rps_of() { sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\).*/\1/p' "$1"; }
p99_of() {
  sed -n 's/^[[:space:]]*99%[[:space:]]*\([0-9.]*\)\([a-z]*\).*/\1 \2/p' "$1" |
    awk '{ v=$1; u=$2; if (u=="us") v/=1000; else if (u=="s") v*=1000; else if (u=="m") v*=60000; printf "%.3f", v }'
}
errors_of() {
  n=$(sed -n 's/^[[:space:]]*Non-2xx or 3xx responses:[[:space:]]*\([0-9]*\).*/\1/p' "$1")
  echo "${n:-0}"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rps() { awk '{ print $1 }' "$tmp/$1.all" | median; }
p99() { awk '{ print $2 }' "$tmp/$1.all" | median; }
errors() { awk '{ n += $3 } END { print n + 0 }' "$tmp/$1.all"; }
cpu() { awk '{ print $4 }' "$tmp/$1.all" | median; }
# the median over the rounds of (name's rps / healthz's rps in the same round)
ratio() { paste -d' ' "$tmp/$1.all" "$tmp/healthz.all" | awk '{ print $1 / $(NF / 2 + 1) }' | median; }

# what the cache did: hits on the cached server, none on the other
hits() {
  curl -s "http://127.0.0.1:$1/metrics" |
    sed -n 's/^memopt_response_cache_hits_total \([0-9]*\)$/\1/p'
}

for _ in $(seq "$ROUNDS"); do
  run healthz "$cpid" "http://127.0.0.1:$cport/healthz"
  run validate_c "$cpid" "http://127.0.0.1:$cport/api/v1/validate" -s "$tmp/validate.lua"
  run validate_u "$upid" "http://127.0.0.1:$uport/api/v1/validate" -s "$tmp/validate.lua"
  # the same body against the estimator (no "detail": the summary answer)
  run estimate_c "$cpid" "http://127.0.0.1:$cport/api/v1/estimate" -s "$tmp/validate.lua"
  run estimate_u "$upid" "http://127.0.0.1:$uport/api/v1/estimate" -s "$tmp/validate.lua"
done
c_hits=$(hits "$cport"); u_hits=$(hits "$uport")

line() { # label name
  printf '  %-44s %10s req/s   p99 %8s ms   server CPU %6s us/req\n' \
    "$1" "$(rps "$2")" "$(p99 "$2")" "$(cpu "$2")"
}
verdict() { # label name
  awk -v r="$(ratio "$2")" -v p="$(p99 "$2")" -v l="$1" 'BEGIN {
    printf "  %-9s validate/healthz ratio %.2f (target >= 0.80: %s); p99 %.3f ms (target <= 5 ms: %s)\n",
      l, r, (r >= 0.8 ? "met" : "NOT met"), p, (p <= 5 ? "met" : "NOT met") }'
}

echo "memopt HTTP bench: wrk -t$WRK_THREADS -c$CONNECTIONS, $ROUNDS rounds of ${DURATION}s per case on 127.0.0.1 ($(nproc) CPUs, server threads: default; medians)"
echo "  load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  wrk repeats one body: 'cached' is the default server, which replays the stored"
echo "  answer (response cache hits: ${c_hits:-0}); 'uncached' runs with --cache-entries 0"
echo "  and computes every answer (what a stream of distinct configs costs)"
line "GET /healthz" healthz
line "POST /api/v1/validate (llama2-7b) cached" validate_c
line "POST /api/v1/validate (llama2-7b) uncached" validate_u
line "POST /api/v1/estimate (llama2-7b) cached" estimate_c
line "POST /api/v1/estimate (llama2-7b) uncached" estimate_u
verdict cached: validate_c
verdict uncached: validate_u
# what an answer costs beyond the check: the summary estimate (no "detail",
# what a client gets by default) against validate, both computed
awk -v e="$(cpu estimate_u)" -v v="$(cpu validate_u)" 'BEGIN {
  r = (v > 0 ? e / v : 0)
  printf "  uncached: estimate/validate server CPU %.1f / %.1f us = %.2fx (target <= 3: %s)\n",
    e, v, r, (v > 0 && r <= 3 ? "met" : "NOT met") }'
[ -z "$u_hits" ] || [ "$u_hits" = 0 ] || echo "  warning: the uncached server answered $u_hits requests from a cache"
for n in validate_c validate_u estimate_c estimate_u; do
  bad=$(errors "$n")
  [ "$bad" = 0 ] || echo "  warning: $bad $n answers were not 2xx"
done
