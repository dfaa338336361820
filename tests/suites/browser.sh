#!/bin/sh
# Browser tests of the web UI (tests/browser/ui.test.mjs, after the node unit
# tests of its pure functions in units.test.mjs): playwright-core
# from npm (tests/browser/package-lock.json, installed with `npm ci`)
# driving Debian's chromium against the real server. Skips, saying so,
# only when chromium cannot be installed or launched; anything else that
# is missing is a failure.
set -eu
cd "$(dirname "$0")/../.."
: "${MEMOPT:=$(pwd)/build/memopt}"
export MEMOPT
# every file of the web UI is also built into the binary (no --web-root)
missing=$(find web -type f ! -name '.*' | LC_ALL=C sort | while read -r f; do
  grep -qx "$f" tools/embed.list || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "FAIL: tools/embed.list lacks:" $missing
  exit 1
fi
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
if [ ! -x "$CHROMIUM" ] && [ "$(id -u)" = 0 ]; then
  echo "browser: installing chromium"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || true
fi
if [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: browser tests: $CHROMIUM is not installed and could not be installed (apt-get install chromium as root)"
  exit 0
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
if ! timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
     --disable-background-networking --disable-component-update --disable-sync \
     --user-data-dir="$profile" --dump-dom about:blank >/dev/null 2>"$profile.err"; then
  echo "SKIP: browser tests: $CHROMIUM does not launch here:"
  tail -5 "$profile.err" 2>/dev/null || true
  rm -f "$profile.err"
  exit 0
fi
rm -f "$profile.err"
for tool in node npm; do
  command -v $tool >/dev/null 2>&1 || { echo "FAIL: browser tests need $tool (Debian package nodejs/npm)"; exit 1; }
done
cd tests/browser
if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.memopt-lock; then
  npm ci --no-audit --no-fund --loglevel=error || { echo "FAIL: npm ci in tests/browser"; exit 1; }
  cp package-lock.json node_modules/.memopt-lock
fi
node units.test.mjs || { echo "FAIL: web UI unit tests (tests/browser/units.test.mjs)"; exit 1; }
exec node ui.test.mjs
