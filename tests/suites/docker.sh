#!/bin/sh
# docker/: runs docker/build.sh (the Dockerfile's build stage) on the host into
# a temporary DESTDIR and checks the tree; checks that the runtime stage
# installs the package of every library the binary needs; lints the Dockerfile
# (hadolint when installed, else structural rules); checks compose.yaml and
# k8s.yaml. No Docker engine is needed.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
DF=docker/Dockerfile

# 1. the build script, as CI runs it (deps are the test runner's business)
if sh docker/build.sh --no-deps --build "$BUILD" --out "$tmp/out" > "$tmp/build.log" 2>&1; then
  ok "docker/build.sh --no-deps --out DIR"
else cat "$tmp/build.log"; bad "docker/build.sh failed"; fi
for f in usr/bin/memopt usr/share/memopt/web/index.html usr/lib/libmemopt.so.0 \
         usr/lib/pkgconfig/memopt.pc usr/include/memopt/memopt.h usr/share/man/man1/memopt.1; do
  [ -e "$tmp/out/$f" ] && ok "staged /$f" || bad "not staged: /$f"
done
tail -n 1 "$tmp/build.log" | grep -q '^memopt [0-9]' && ok "the staged memopt runs" || bad "staged memopt --version"
grep -q 'sh docker/build.sh' $DF && ok "the Dockerfile's build stage runs docker/build.sh" \
  || bad "the Dockerfile does not run docker/build.sh"
# every build dependency the script installs exists in Debian (on this host)
deps=$(sed -n 's/^BUILD_DEPS="\(.*\)"$/\1/p' docker/build.sh)
for p in $deps; do
  apt-cache show "$p" > /dev/null 2>&1 || dpkg-query -W "$p" > /dev/null 2>&1 || bad "build dep $p unknown to apt"
done

# 2. the runtime stage installs the package of every NEEDED library (bookworm
#    names; this host is Debian too)
runtime=$(awk '/^FROM .*slim/{f=1} f' $DF)
if [ -x "$tmp/out/usr/bin/memopt" ] && command -v readelf > /dev/null; then
  for so in $(readelf -d "$tmp/out/usr/bin/memopt" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
    case $so in libc.so.*|libm.so.*|ld-linux*|libpthread*|libdl*|librt*|libgcc_s*|libasan*|libubsan*) continue ;; esac
    pkg=$(dpkg -S "*/$so" 2> /dev/null | head -n 1 | cut -d: -f1)
    if [ -z "$pkg" ]; then bad "no package owns $so"; continue; fi
    printf '%s\n' "$runtime" | grep -qw -- "$pkg" && ok "runtime stage installs $pkg ($so)" \
      || bad "runtime stage lacks $pkg for $so"
  done
fi

# 3. lint
if command -v hadolint > /dev/null; then
  hadolint $DF && ok "hadolint" || bad "hadolint"
else
  echo "note: hadolint is not packaged in Debian; structural checks instead"
  nfrom=$(grep -c '^FROM ' $DF)
  [ "$nfrom" -ge 2 ] && ok "multi-stage ($nfrom FROM)" || bad "not multi-stage"
  grep -q '^FROM debian:bookworm AS build$' $DF && ok "build stage debian:bookworm" || bad "build stage"
  [ "$(grep '^FROM ' $DF | tail -n 1 | cut -d' ' -f2)" = debian:bookworm-slim ] && ok "runtime debian:bookworm-slim" \
    || bad "runtime stage base"
  grep '^FROM ' $DF | grep -q ':latest\|^FROM [^:]*$' && bad "unpinned base image" || ok "base images tagged"
  user=$(printf '%s\n' "$runtime" | sed -n 's/^USER \([^ ]*\).*/\1/p' | tail -n 1)
  case $user in ''|root|0|0:*|root:*) bad "runtime USER is '${user:-unset}'" ;; *) ok "runtime USER $user (non-root)" ;; esac
  printf '%s\n' "$runtime" | grep -q '^HEALTHCHECK .*' && printf '%s\n' "$runtime" | grep -q '/healthz' \
    && ok "HEALTHCHECK on /healthz" || bad "no HEALTHCHECK on /healthz"
  printf '%s\n' "$runtime" | grep -q '^CMD \["memopt", "serve", "--host", "0.0.0.0"' && ok "CMD serves on 0.0.0.0" \
    || bad "CMD"
  printf '%s\n' "$runtime" | grep -q -- '--no-install-recommends' && printf '%s\n' "$runtime" | grep -q 'rm -rf /var/lib/apt/lists' \
    && ok "apt: --no-install-recommends, lists removed" || bad "apt hygiene"
  printf '%s\n' "$runtime" | grep -q 'COPY --from=build' && ok "runtime copies from the build stage" || bad "COPY --from=build"
  printf '%s\n' "$runtime" | grep -q 'libyaml-dev\|build-essential' && bad "build deps in the runtime stage" || ok "no build deps at runtime"
  grep -q '^ADD ' $DF && bad "ADD (use COPY)" || ok "no ADD"
fi
[ -f .dockerignore ] && grep -qx build .dockerignore && ok ".dockerignore keeps build/ out" || bad ".dockerignore"

# 4. compose and Kubernetes manifests
if [ -x "$PY" ] && "$PY" -c 'import yaml' 2> /dev/null; then
  if "$PY" - > "$tmp/py.log" 2>&1 <<'PYEOF'
import yaml, sys
c = yaml.safe_load(open("docker/compose.yaml"))
s = c["services"]["memopt"]
assert s["build"]["dockerfile"] == "docker/Dockerfile" and s["build"]["context"] == "..", s["build"]
assert all(p.startswith("127.0.0.1:") for p in s["ports"]), s["ports"]
assert s["read_only"] is True and s["user"].split(":")[0] != "0"
docs = [d for d in yaml.safe_load_all(open("docker/k8s.yaml")) if d]
kinds = {d["kind"]: d for d in docs}
dep, svc = kinds["Deployment"], kinds["Service"]
spec = dep["spec"]
assert spec["replicas"] == 3, spec["replicas"]
labels = spec["template"]["metadata"]["labels"]
assert spec["selector"]["matchLabels"].items() <= labels.items()
assert svc["spec"]["selector"].items() <= labels.items(), "the Service selects no pod"
pod = spec["template"]["spec"]
assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
(ctr,) = pod["containers"]
sc = ctr["securityContext"]
assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
assert sc["capabilities"]["drop"] == ["ALL"]
for probe in ("readinessProbe", "livenessProbe"):
    assert ctr[probe]["httpGet"]["path"] == "/healthz", probe
    assert ctr[probe]["httpGet"]["port"] in ("http", 8080)
assert ctr["resources"]["requests"] and ctr["resources"]["limits"]["memory"]
ports = {p["name"]: p["containerPort"] for p in ctr["ports"]}
args = ctr["args"]
assert args[args.index("--port") + 1] == str(ports["http"]) and "0.0.0.0" in args
assert svc["spec"]["ports"][0]["targetPort"] in ("http", ports["http"])
print("manifests ok")
PYEOF
  then ok "compose.yaml and k8s.yaml (3 replicas, probes, non-root, read-only root, Service)"
  else cat "$tmp/py.log"; bad "manifests"; fi
else
  echo "skip manifests: no python3-yaml"
fi

if [ $fails -ne 0 ]; then echo "docker: $fails failed"; exit 1; fi
echo "docker: all passed"
