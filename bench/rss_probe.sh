#!/bin/sh
# Long-run RSS probe (a server runs for weeks): does the release server's memory stay flat
# under hours of mixed traffic? Two servers, the default one (response
# cache on) and one with --cache-entries 0 (every answer computed), each
# under wrk for SECONDS with a rotation of requests (bench/rss_mix.py):
# validate, estimate, plan, layout and export on 8 presets x 10 device
# counts x 4 configs (1,600 distinct bodies: the response cache (1,024
# entries) and the model cache (64 pairs) keep evicting), and one hostile
# body in eight (bad JSON, wrong shapes, an alias bomb, deep nesting,
# binary, sizes past 64 bits, odd pattern keys, a wrong media type). Beside
# them a loop sends the heavy requests one at a time, to each server in
# turn: the 20,000-stage estimate (the work limit), the 1 MiB layout of
# 3,640 catastrophic patterns, the 60 MB timeline (answer-too-large) and a
# 2 MiB body (413).
# Every INTERVAL seconds it samples VmRSS of both servers from
# /proc/PID/status; at the end it prints RSS at start, after 1 min, at the
# end (5 s after the load stopped) and the maximum, the lowest sample of
# each minute (the spikes of the heavy requests left out: what stays), the
# requests served (from each server's /metrics, by route and status) and
# whether /healthz still answers.
#   sh bench/rss_probe.sh [SECONDS]    (default 600)
#   MEMOPT=build/memopt CONNECTIONS=16 INTERVAL=10 KEEP=1 (keep the temp dir)
set -eu
cd "$(dirname "$0")/.."
SECONDS_RUN=${1:-600}
BUILD=${BUILD:-build}
MEMOPT=${MEMOPT:-$(pwd)/$BUILD/memopt}
CONNECTIONS=${CONNECTIONS:-16}
INTERVAL=${INTERVAL:-10}

command -v wrk >/dev/null 2>&1 || { echo "bench/rss_probe.sh: wrk is not installed" >&2; exit 1; }
[ -x "$MEMOPT" ] || { echo "bench/rss_probe.sh: $MEMOPT not built" >&2; exit 1; }

. bench/lib/servers.sh
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
hwm_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

/usr/bin/python3 bench/rss_mix.py "$tmp"
start cached; cport=$port; cpid=$pid
start uncached --cache-entries 0; uport=$port; upid=$pid
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

t0=$(date +%s)
wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s "$tmp/mix.lua" "http://127.0.0.1:$cport" \
  > "$tmp/wrk-cached.txt" 2>&1 &
wc_pid=$!; pids="$pids $wc_pid"
wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s "$tmp/mix.lua" "http://127.0.0.1:$uport" \
  > "$tmp/wrk-uncached.txt" 2>&1 &
wu_pid=$!; pids="$pids $wu_pid"

: > "$tmp/heavy.txt"
# the heavy requests, one at a time, alternating servers, until the end
heavy() { # port route content-type file
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 60 -H "Content-Type: $3" \
    --data-binary "@$tmp/$4" "http://127.0.0.1:$1$2" >> "$tmp/heavy.txt" 2>/dev/null || echo "curl-failed" >> "$tmp/heavy.txt"
}
(
  while [ $(($(date +%s) - t0)) -lt $((SECONDS_RUN - 60)) ]; do
    for p in $cport $uport; do
      heavy "$p" /api/v1/estimate application/yaml deep.yaml
      heavy "$p" /api/v1/layout application/json flood.json
      heavy "$p" /api/v1/estimate application/yaml timeline.yaml
      heavy "$p" /api/v1/validate application/json big.json
    done
    sleep 5
  done
) &
heavy_pid=$!; pids="$pids $heavy_pid"

echo "t cached_kb uncached_kb" > "$tmp/samples.txt"
while kill -0 "$wc_pid" 2>/dev/null || kill -0 "$wu_pid" 2>/dev/null; do
  echo "$(($(date +%s) - t0)) $(rss_kb "$cpid") $(rss_kb "$upid")" >> "$tmp/samples.txt"
  sleep "$INTERVAL"
done
wait "$heavy_pid" 2>/dev/null || :
sleep 5
echo "$(($(date +%s) - t0)) $(rss_kb "$cpid") $(rss_kb "$upid")" >> "$tmp/samples.txt"

healthz() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$1/healthz" || echo none; }
summary() { # label column pid port wrk-output
  awk -v col="$2" -v label="$1" 'NR > 1 { t[NR] = $1; v[NR] = $col; n = NR }
    END {
      start = v[2]; m = start; one = start; half = t[n] / 2
      for (i = 2; i <= n; i++) {
        if (v[i] > m) m = v[i]
        if (t[i] <= 60) one = v[i]
        if (t[i] <= half) mid = v[i]
      }
      printf "  %-9s RSS start %.1f MB, after 1 min %.1f MB, end %.1f MB, max %.1f MB\n",
        label, start / 1024, one / 1024, v[n] / 1024, m / 1024
    }' "$tmp/samples.txt"
  # the lowest sample of each whole minute
  awk -v col="$2" 'NR > 2 { mn = int($1 / 60); if (!(mn in lo) || $col < lo[mn]) lo[mn] = $col; if (mn > last) last = mn }
    END { printf "            lowest per minute (MB):"; for (i = 0; i <= last; i++) if (i in lo) printf " %.0f", lo[i] / 1024; print "" }' \
    "$tmp/samples.txt"
  echo "            VmHWM $(($(hwm_kb "$3") / 1024)) MB; /healthz at the end: $(healthz "$4")"
  echo "            wrk: $(sed -n 's/^[[:space:]]*\([0-9]* requests in .*\)$/\1/p' "$5"); $(sed -n 's/^Requests\/sec:[[:space:]]*/req\/s /p' "$5")"
  curl -s --max-time 5 "http://127.0.0.1:$4/metrics" | awk '
    /^memopt_http_requests_total\{/ {
      match($0, /route="[^"]*"/); r = substr($0, RSTART + 7, RLENGTH - 8)
      match($0, /status="[^"]*"/); s = substr($0, RSTART + 8, RLENGTH - 9)
      n[r] = n[r] " " s ":" $NF; total += $NF }
    /^memopt_response_cache_(hits|misses|evictions)_total / { c = c " " $1 "=" $2 }
    END { printf "            served %d:", total; for (r in n) printf " %s[%s ]", r, n[r]; print ""
          if (c != "") print "           " c }'
}
echo "memopt RSS probe: ${SECONDS_RUN}s, wrk -t1 -c$CONNECTIONS per server, samples every ${INTERVAL}s ($(nproc) CPUs)"
echo "  load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
summary cached 2 "$cpid" "$cport" "$tmp/wrk-cached.txt"
summary uncached 3 "$upid" "$uport" "$tmp/wrk-uncached.txt"
echo "  heavy requests (status seconds: count): $(sort "$tmp/heavy.txt" | awk '{ print $1 }' | uniq -c | awk '{ printf "%s x%d ", $2, $1 }')"
echo "  samples (s, cached kB, uncached kB):"
awk 'NR > 1 { printf "%s%s/%s/%s", (NR > 2 ? " " : "    "), $1, $2, $3 } END { print "" }' "$tmp/samples.txt" | fold -s -w 100
