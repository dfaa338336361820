# Sourced by the HTTP benchmarks (bench/http.sh, bench/rss_probe.sh): a
# scratch folder $tmp, memopt servers on ephemeral ports, and a cleanup
# that stops every process listed in $pids. Needs $MEMOPT; $KEEP keeps $tmp.
tmp=$(mktemp -d)
pids=
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# start NAME [serve options]: a server on an ephemeral port; sets $port
# and $pid
start() {
  name=$1; shift
  "$MEMOPT" serve --port 0 --quiet "$@" 2>"$tmp/$name.log" </dev/null >/dev/null &
  pid=$!
  pids="$pids $pid"
  port=
  for _ in $(seq 100); do
    # (the log may not exist yet: the server's shell has not opened it)
    port=$(sed -n 's/^listening on http:\/\/.*:\([0-9][0-9]*\)$/\1/p' "$tmp/$name.log" 2>/dev/null || :)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { echo "$0: the $name server did not start" >&2; cat "$tmp/$name.log" >&2; exit 1; }
}
