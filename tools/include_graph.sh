#!/bin/sh
# The include edges between folders (core/src/<subsystem>, the faces, the
# public header), printed one "from -> to" a line. Fails when the folders'
# graph has a cycle, when a face (api, server, cli, bench, examples, fuzz
# harnesses, tools) includes a core-private header (the faces are built
# against core/include/memopt/ only), or when a core folder includes another
# core folder's internal header: each folder's face is core/src/<f>/<f>.h,
# every other header in it is its own. When the core's objects are built
# ($BUILD/obj/core/src, BUILD defaults to build), the same for the symbols
# each core folder's objects take from another's: a function declared in
# the wrong header cannot hide a cycle; and inside each core folder, the
# circles of files that call each other (more than two fails). Run by
# `make check`; by hand:
#   sh tools/include_graph.sh        (from the repository root)
set -eu
cd "$(dirname "$0")/.."

# folder of a file: core/src/<sub>/x.c -> core/<sub>; api/x.c -> api; ...
folder_of() {
  case $1 in
    core/src/*) echo "$1" | awk -F/ '{print "core/" $3}' ;;
    core/include/*) echo "public" ;;
    tests/fuzz/*) echo "tests/fuzz" ;;
    *) dirname "$1" ;;
  esac
}

# where `#include "name"` from file resolves: next to the file, then the -I
# folders in the Makefile's order (core/include, core/src, api, server, tests)
resolve() { # file name
  dir=$(dirname "$1")
  for base in "$dir" core/include core/src api server tests; do
    if [ -f "$base/$2" ]; then
      echo "$base/$2" | sed 's|^\./||'
      return
    fi
  done
  echo "?/$2"
}

edges=$(mktemp "${TMPDIR:-/tmp}/memopt-include-edges.XXXXXX")
trap 'rm -f "$edges"' EXIT INT TERM
find core/src api server cli bench examples tests/fuzz tools -name '*.[ch]' 2>/dev/null |
  LC_ALL=C sort | while read -r f; do
  from=$(folder_of "$f")
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
    while read -r inc; do
      target=$(resolve "$f" "$inc")
      to=$(folder_of "$target")
      [ "$from" = "$to" ] || echo "$from -> $to $f $target"
    done
done >"$edges"

echo "include edges between folders (from -> to: #include lines):"
awk '{k = $1 " -> " $3; n[k]++} END {for (k in n) print "  " k ": " n[k]}' "$edges" | LC_ALL=C sort

status=0
# a face may include the public header and other faces' headers, never the core's
bad=$(awk '$1 !~ /^core\// && $3 ~ /^core\// {print "  " $4 " includes " $5}' "$edges")
if [ -n "$bad" ]; then
  echo "FAIL: faces include core-private headers:"; echo "$bad"; status=1
fi
# a core folder may include another core folder's face only
internal=$(awk '$1 ~ /^core\// && $3 ~ /^core\// {
    n = split($5, p, "/"); face = substr($3, 6) ".h"
    if (p[n] != face) print "  " $4 " includes " $5 " (the face is " substr($3, 6) "/" face ")" }' "$edges")
if [ -n "$internal" ]; then
  echo "FAIL: core folders include another folder's internal header:"; echo "$internal"; status=1
fi
unresolved=$(awk '$3 ~ /^\?/ {print "  " $4 ": " $5}' "$edges")
if [ -n "$unresolved" ]; then
  echo "FAIL: includes that resolve to no file:"; echo "$unresolved"; status=1
fi
# tsort reports a loop on stderr when the graph has a cycle
if ! awk '{print $1, $3}' "$edges" | tsort >/dev/null 2>"$edges.loop"; then :; fi
if [ -s "$edges.loop" ]; then
  echo "FAIL: the folders' include graph has a cycle:"; sed 's/^/  /' "$edges.loop"; status=1
fi
rm -f "$edges.loop"
[ $status -eq 0 ] && echo "ok: no cycle between folders; the faces include only the public header and each other; core folders include only each other's face"

# link edges: undefined symbols of a folder's objects defined by another's
objdir=${BUILD:-build}/obj/core/src
# a folder's objects whose source still exists (a build dir keeps the
# objects of a file that moved to another folder)
objects_of() { # objdir/folder/
  for o in "$1"*.o; do
    if [ -f "core/src/$(basename "$1")/$(basename "$o" .o).c" ]; then echo "$o"; fi
  done
}
if [ -d "$objdir" ] && command -v nm >/dev/null 2>&1; then
  for d in "$objdir"/*/; do
    f=core/$(basename "$d")
    objs=$(objects_of "$d")
    [ -n "$objs" ] || continue
    # shellcheck disable=SC2086 # one word an object path
    nm -g --defined-only $objs 2>/dev/null | awk -v f="$f" 'NF == 3 {print $3, f}'
  done | LC_ALL=C sort >"$edges.defs"
  for d in "$objdir"/*/; do
    f=core/$(basename "$d")
    objs=$(objects_of "$d")
    [ -n "$objs" ] || continue
    # shellcheck disable=SC2086
    nm -u $objs 2>/dev/null | awk -v f="$f" 'NF == 2 {print $2, f}'
  done | LC_ALL=C sort -u >"$edges.uses"
  LC_ALL=C join "$edges.uses" "$edges.defs" | awk '$2 != $3 {print $2, $3}' | LC_ALL=C sort -u >"$edges.links"
  echo "link edges between core folders (symbols a folder's objects use from another's):"
  awk '{print "  " $1 " -> " $2}' "$edges.links"
  if ! tsort "$edges.links" >/dev/null 2>"$edges.loop"; then :; fi
  if [ -s "$edges.loop" ]; then
    echo "FAIL: the core folders' link graph has a cycle:"; sed 's/^/  /' "$edges.loop"; status=1
  else
    echo "ok: no cycle in the link graph"
  fi
  rm -f "$edges.defs" "$edges.uses" "$edges.links" "$edges.loop"
  # inside a folder, files that call each other in a circle: two may (a
  # module and its helper), three or more are a knot to untangle
  echo "circles of files inside a core folder (symbols each file takes from the next):"
  if python3 - "$objdir" <<'EOF'
import subprocess, sys, os, glob, collections
objdir = sys.argv[1]
status = 0
for d in sorted(glob.glob(objdir + '/*/')):
    # objects of sources that exist (a build dir may keep a moved file's)
    objs = sorted(o for o in glob.glob(d + '*.o') if os.path.exists(
        os.path.join('core/src', os.path.basename(d.rstrip('/')), os.path.basename(o)[:-2] + '.c')))
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        name = os.path.basename(o)[:-2]
        out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBR':
                defs[p[2]] = name
            elif len(p) == 2 and p[0] == 'U':
                uses[name].add(p[1])
    g = {os.path.basename(o)[:-2]: set() for o in objs}
    for f, syms in uses.items():
        for s in syms:
            if s in defs and defs[s] != f:
                g[f].add(defs[s])
    # Tarjan
    idx, low, on, st, out, n = {}, {}, set(), [], [], [0]
    def sc(v):
        idx[v] = low[v] = n[0]; n[0] += 1; st.append(v); on.add(v)
        for w in g[v]:
            if w not in idx:
                sc(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            c = []
            while True:
                w = st.pop(); on.discard(w); c.append(w)
                if w == v: break
            out.append(sorted(c))
    for v in sorted(g):
        if v not in idx:
            sc(v)
    folder = os.path.basename(d.rstrip('/'))
    for c in out:
        if len(c) > 1:
            print('  core/%s: %s' % (folder, ' <-> '.join(c)))
        if len(c) > 2:
            status = 1
sys.exit(status)
EOF
  then
    echo "ok: no circle of more than two files inside a core folder"
  else
    echo "FAIL: a circle of more than two files inside a core folder"; status=1
  fi
fi
exit $status
