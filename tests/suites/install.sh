#!/bin/sh
# make install into a DESTDIR: the tree (SONAME, symlinks, headers, pkg-config,
# binary, web assets, man pages); examples/launcher built against that tree
# through pkg-config, shared and static, run on a real training YAML and on a
# bad config; the installed memopt serves the installed web root; make
# uninstall leaves no files behind.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
if [ -n "${SAN:-}" ]; then echo "skipped under SAN=1 (the example would need the sanitizer runtime)"; exit 0; fi
for t in pkg-config cc readelf; do
  command -v $t > /dev/null || { echo "skipped: no $t"; exit 0; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/root
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

if ! make -s BUILD="$BUILD" install DESTDIR="$D" PREFIX=/usr > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"; echo "FAIL: make install"; exit 1
fi
U=$D/usr
for f in bin/memopt lib/libmemopt.a lib/libmemopt.so.0.1.0 include/memopt/memopt.h \
         lib/pkgconfig/memopt.pc share/memopt/web/index.html share/memopt/accuracy.tsv \
         share/man/man1/memopt.1; do
  [ -f "$U/$f" ] && ok "installed $f" || bad "missing $f"
done
for c in validate expand export presets serve launch estimate plan ledger size; do
  [ -f "$U/share/man/man1/memopt-$c.1" ] || bad "missing man page memopt-$c.1"
done
[ "$(readlink "$U/lib/libmemopt.so")" = libmemopt.so.0 ] && ok "libmemopt.so -> libmemopt.so.0" || bad "libmemopt.so link"
[ "$(readlink "$U/lib/libmemopt.so.0")" = libmemopt.so.0.1.0 ] && ok "libmemopt.so.0 -> libmemopt.so.0.1.0" || bad "libmemopt.so.0 link"
readelf -d "$U/lib/libmemopt.so.0.1.0" | grep -q 'SONAME.*\[libmemopt.so.0\]' && ok "SONAME libmemopt.so.0" || bad "SONAME"
# only the public API is exported
if nm -D --defined-only "$U/lib/libmemopt.so.0.1.0" | awk '$2 ~ /^[TDBR]$/ {print $3}' | grep -v '^mo_' | grep -v '^_' > "$tmp/extra"; then
  bad "symbols outside mo_*: $(head -5 "$tmp/extra" | tr '\n' ' ')"
else ok "exports only mo_* symbols"; fi
# every exported function is declared in the installed header
missing=""
for s in $(nm -D --defined-only "$U/lib/libmemopt.so.0.1.0" | awk '$2 == "T" {print $3}'); do
  grep -q "\\b$s(" "$U/include/memopt/"*.h || missing="$missing $s"
done
[ -z "$missing" ] && ok "every exported function is in the headers" || bad "undeclared exports:$missing"
perm=$(stat -c %a "$U/bin/memopt")
[ "$perm" = 755 ] && ok "memopt mode 755" || bad "memopt mode $perm"
grep -q '^Requires.private: .*yaml-0.1' "$U/lib/pkgconfig/memopt.pc" && ok "memopt.pc Requires.private" || bad "memopt.pc Requires.private"
"$U/bin/memopt" --version | grep -q '^memopt 0\.' && ok "installed memopt --version" || bad "memopt --version"
for p in "$U"/share/man/man1/*.1; do
  if command -v groff > /dev/null && [ -n "$(groff -man -Tutf8 -ww -z "$p" 2>&1)" ]; then
    bad "groff warnings in $(basename "$p")"
  fi
done

# the example, through pkg-config only, against the staged tree
PKG_CONFIG_PATH=$U/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
cflags=$(pkg-config --cflags memopt | sed "s/ *$//")
[ "$cflags" = "-I$U/include" ] && ok "pkg-config --cflags: $cflags" || bad "pkg-config --cflags: $cflags"
if make -s -C examples OUT="$tmp/launcher" > "$tmp/ex.log" 2>&1 &&
   make -s -C examples STATIC=1 OUT="$tmp/launcher-static" >> "$tmp/ex.log" 2>&1; then
  ok "examples/launcher builds (shared and static)"
else cat "$tmp/ex.log"; bad "examples/launcher does not build"; fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
if [ -x "$tmp/launcher" ]; then
  LD_LIBRARY_PATH=$U/lib ldd "$tmp/launcher" | grep -q "libmemopt.so.0 => $U/lib/libmemopt.so.0" \
    && ok "the shared example loads the installed libmemopt.so.0" || bad "ldd: $(LD_LIBRARY_PATH=$U/lib ldd "$tmp/launcher" | grep memopt)"
  ldd "$tmp/launcher-static" | grep -q libmemopt && bad "the static example needs libmemopt.so" || ok "the static example is self-contained"
  real=tests/data/real-configs/pynative_ds3.yaml
  if [ -f "$real" ]; then
    args="$real --devices 8"; want="layers 0-0 (mla-dense): recompute (whole layer) [recompute.full_recompute_layer]"
  else
    cat > "$tmp/t.yaml" <<'EOF'
recompute:
  mode: full
  full_recompute_layer: [0-15]
EOF
    args="$tmp/t.yaml --model llama2-7b"; want="layers 0-15 (dense): recompute (whole layer) [recompute.full_recompute_layer]"
  fi
  for bin in "$tmp/launcher" "$tmp/launcher-static"; do
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH=$U/lib "$bin" $args > "$tmp/run.out" 2>&1
    rc=$?
    if [ $rc = 0 ] && grep -qF "$want" "$tmp/run.out" && grep -q '^valid: ready to launch' "$tmp/run.out" &&
       grep -q '^estimate: peak [0-9.]* GiB per device' "$tmp/run.out" && grep -q '^  stage 0: peak' "$tmp/run.out"; then
      ok "$(basename "$bin") prints the plan and the estimate of $(echo $args | cut -d' ' -f1)"
    else bad "$(basename "$bin"): exit $rc: $(cat "$tmp/run.out")"; fi
  done
  printf 'recompute:\n  mode: full\n  full_recompute_layer: [3-1]\n' > "$tmp/bad.yaml"
  LD_LIBRARY_PATH=$U/lib "$tmp/launcher" "$tmp/bad.yaml" --model llama2-7b > "$tmp/bad.out" 2>&1
  rc=$?
  if [ $rc = 1 ] && grep -q 'bad.yaml:3:.*error\[' "$tmp/bad.out" && grep -q '^invalid: not launching' "$tmp/bad.out"; then
    ok "the example refuses a bad config"
  else bad "bad config: exit $rc: $(cat "$tmp/bad.out")"; fi
fi

# the installed memopt serves the installed web root by default
if command -v curl > /dev/null; then
  echo '<!-- installed copy -->' >> "$U/share/memopt/web/index.html"
  "$U/bin/memopt" serve --port 0 --quiet 2> "$tmp/serve.err" &
  pid=$!
  port=""
  for _ in $(seq 1 50); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/serve.err")
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -n "$port" ] && curl -fsS "http://127.0.0.1:$port/" | grep -q 'installed copy'; then
    ok "serve without --web-root uses PREFIX/share/memopt/web"
  else bad "serve default web root: $(cat "$tmp/serve.err")"; fi
  kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
fi

make -s BUILD="$BUILD" uninstall DESTDIR="$D" PREFIX=/usr > /dev/null 2>&1 || bad "make uninstall failed"
left=$(find "$D" ! -type d)
[ -z "$left" ] && ok "make uninstall leaves no files" || bad "left after uninstall: $left"
[ ! -e "$U/include/memopt" ] && [ ! -e "$U/share/memopt" ] && ok "uninstall removes include/memopt and share/memopt" \
  || bad "directories left"

if [ $fails -ne 0 ]; then echo "install: $fails failed"; exit 1; fi
echo "install: all passed"
