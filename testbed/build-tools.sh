#!/usr/bin/env bash
# Builds the test bed's pinned binaries (etcd, Kubernetes control plane, kubelet, crictl,
# kwok) into the machine-level cache (PODFLOW_CACHE, default ~/.cache/podflow/testbed/bin).
# A binary is rebuilt only when its pinned module changed, so reruns take seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${PODFLOW_TESTBED_BIN:-${PODFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podflow}/testbed/bin}
mkdir -p "$out"
# One build at a time: e2e.sh and a developer may run this together.
exec 9>"$out/.build.lock"
flock 9
k8s_version=v1.37.2
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=37 -X $pkg.gitTreeState=clean -X $pkg.buildDate=2026-01-01T00:00:00Z"

# A binary's stamp covers what decides its bytes: its module's pins and its link flags, so
# editing this script elsewhere (a new tool) does not rebuild Kubernetes.
stamp() { { cat "$1/go.mod" "$1/go.sum"; echo "$2"; } | sha256sum | cut -c1-16; }

build() { # build DIR NAME PACKAGE [LDFLAGS]
  local dir=$1 name=$2 pkgpath=$3 flags=${4:-"-s -w"}
  local want; want=$(stamp "$dir" "$pkgpath $flags")
  if [[ -x $out/$name && -f $out/$name.stamp && $(cat "$out/$name.stamp") == "$want" ]]; then
    echo "testbed: $name is up to date"; return
  fi
  echo "testbed: building $name"
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$flags" -o "$out/$name.tmp" "$pkgpath")
  mv "$out/$name.tmp" "$out/$name"
  echo "$want" > "$out/$name.stamp"
}

build "$here/tools/etcd" etcd .
for c in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
  build "$here/tools/k8s" "$c" "k8s.io/kubernetes/cmd/$c" "$ldflags"
done
build "$here/tools/crictl" crictl sigs.k8s.io/cri-tools/cmd/crictl
build "$here/tools/kubectl" kubectl . "$ldflags"
# The local image registry the image-pull scenarios pull from (testbed/e2e/registry.go).
build "$here/tools/registry" registry github.com/distribution/distribution/v3/cmd/registry
# kwok keeps the scale phase's fake nodes and pods alive (testbed/e2e-scale.sh).
build "$here/tools/kwok" kwok sigs.k8s.io/kwok/cmd/kwok "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=v0.8.0"
