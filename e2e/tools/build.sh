#!/usr/bin/env bash
# build.sh [BIN_DIR] builds kube-apiserver and etcd, at the versions pinned in this
# directory's go.mod, into BIN_DIR (default: the repository's bin/). It does nothing when
# both binaries exist and BIN_DIR/.e2e-versions records the same pinned versions.
# E2E_RELEASE=1.36 builds the previous reference instead, pinned in kube136/go.mod (give it
# its own BIN_DIR: the e2e Makefile uses bin/1.36). A lock file serialises concurrent builds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-go}
bin=${1:-$here/../../bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
case ${E2E_RELEASE:-} in
"" | 1.37) cd "$here" ;;
1.36) cd "$here/kube136" ;;
*) echo "build.sh: E2E_RELEASE=$E2E_RELEASE: the releases pinned here are 1.37 (default) and 1.36" >&2; exit 2 ;;
esac
stamp=$bin/.e2e-versions

kube_pkg=k8s.io/kubernetes/cmd/kube-apiserver
etcd_pkg=go.etcd.io/etcd/server/v3
want=$("$GO" list -m -f '{{.Path}} {{.Version}}' k8s.io/kubernetes "$etcd_pkg")
kube_version=$(awk '$1 == "k8s.io/kubernetes" {print $2}' <<<"$want")

up_to_date() {
  [[ -x $bin/kube-apiserver && -x $bin/etcd && -f $stamp && "$(cat "$stamp")" == "$want" ]]
}
if up_to_date; then
  echo "e2e binaries up to date in $bin ($(tr '\n' ' ' <"$stamp"))"
  exit 0
fi

# Another developer may be building the same thing: wait for them, then re-check.
exec 9>"$bin/.e2e-build.lock"
if command -v flock >/dev/null; then
  flock 9
  if up_to_date; then echo "e2e binaries were built concurrently in $bin"; exit 0; fi
fi

tmp=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building kube-apiserver ${kube_version} and etcd into $bin (cold: ~10 min on 2 cores)"
start=$(date +%s)
# The version ldflags make /version and the compatibility version report the real release
# instead of v0.0.0-master. CGO is off as in the upstream release builds.
ver=k8s.io/component-base/version
minor=$(cut -d. -f2 <<<"$kube_version")
CGO_ENABLED=0 "$GO" build -trimpath \
  -ldflags="-s -w -X $ver.gitVersion=$kube_version -X $ver.gitMajor=1 -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean" \
  -o "$tmp/" "$kube_pkg" "$etcd_pkg"
# go names the binary of .../server/v3 after "server".
mv "$tmp/server" "$bin/etcd"
mv "$tmp/kube-apiserver" "$bin/kube-apiserver"
printf '%s\n' "$want" >"$stamp"
echo "built e2e binaries in $(( $(date +%s) - start ))s: $(tr '\n' ' ' <"$stamp")"
