#!/usr/bin/env bash
# Runs the test bed's scale phase (make e2e-scale): the pinned etcd and kube-apiserver on
# loopback, kwok with 50 fake nodes, 5k then 20k pods across 100 namespaces with 10
# events each, and podflow collect -A timed side by side with kubectl cluster-info dump
# and the floor (testbed/scale). Not part of make e2e. See testbed/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

if [[ $(id -u) != 0 ]]; then
  echo "e2e-scale: the scale phase shares the test bed's machine lock in /run: run it as root (sudo make e2e-scale)" >&2
  exit 1
fi

# One test bed per machine: make e2e and the scale phase never run together, since each
# would distort the other's timings. A second run waits here for the first to finish.
exec 8>/run/podflow-testbed.lock
if ! flock -n 8; then
  echo "e2e-scale: another test bed is running; waiting for it to finish"
  flock 8
fi

cache=${PODFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podflow}/testbed
export PODFLOW_TESTBED_BIN=${PODFLOW_TESTBED_BIN:-$cache/bin}
mkdir -p "$PODFLOW_TESTBED_BIN"
"$here/build-tools.sh"

cd "$repo"
podflow=${PODFLOW_BIN:-$repo/bin/podflow}
[[ -x $podflow ]] || make build
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$PODFLOW_TESTBED_BIN/scale-floor" ./testbed/scale/floor
# kwok's stage manifests, from the pinned module: a kwok binary already cached does not
# mean its module's sources are in this machine's module cache, so fetch them first.
stages=$(cd "$here/tools/kwok" && go mod download sigs.k8s.io/kwok && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
[[ -d $stages ]] || { echo "e2e-scale: kwok's stage manifests are not at $stages" >&2; exit 1; }
go build -o "$PODFLOW_TESTBED_BIN/scale" ./testbed/scale
exec "$PODFLOW_TESTBED_BIN/scale" -bin "$PODFLOW_TESTBED_BIN" -podflow "$podflow" \
  -floor "$PODFLOW_TESTBED_BIN/scale-floor" -kwok-stages "$stages" \
  -dir "${PODFLOW_SCALE_DIR:-/var/lib/podflow-testbed-scale}" \
  -sizes "${PODFLOW_SCALE_SIZES:-5000,20000}" -rounds "${PODFLOW_SCALE_ROUNDS:-1}" ${PODFLOW_SCALE_FLAGS:-}
