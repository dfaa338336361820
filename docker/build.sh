#!/bin/sh
# The one build script: the Dockerfile's build stage runs it, and CI runs it
# on the host (tests/suites/docker.sh), so the two cannot drift.
#
#   docker/build.sh [--no-deps] [--build DIR] [--out DIR] [--jobs N]
#
# 1. installs the Debian build dependencies (only as root, only what is
#    missing; --no-deps skips this step),
# 2. builds libmemopt and memopt (make),
# 3. installs into DESTDIR=OUT with PREFIX=/usr (default OUT: /out),
# 4. checks the staged binary runs.
set -eu
cd "$(dirname "$0")/.."

BUILD_DEPS="build-essential pkg-config libyaml-dev libpcre2-dev libjansson-dev libmicrohttpd-dev zlib1g-dev"
deps=1
build=build
out=/out
jobs=$(nproc 2> /dev/null || echo 2)
while [ $# -gt 0 ]; do
  case $1 in
    --no-deps) deps=0 ;;
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "docker/build.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if [ $deps = 1 ]; then
  missing=""
  for p in $BUILD_DEPS; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' ||
      missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "docker/build.sh: missing Debian packages:$missing (run as root, or --no-deps)" >&2
      exit 1
    fi
    echo "docker/build.sh: installing$missing"
    apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing > /dev/null
  fi
fi

make -j"$jobs" BUILD="$build" all
make BUILD="$build" install DESTDIR="$out" PREFIX=/usr
"$out/usr/bin/memopt" --version
