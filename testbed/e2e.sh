#!/usr/bin/env bash
# Runs podflow's real test bed (make e2e; make record with PODFLOW_RECORD=1): installs the
# Debian packages a node needs when they are missing, builds the pinned Kubernetes
# binaries, the test bed's helpers and images, then runs the Go e2e test, which starts a
# control plane and a node on this machine, reproduces every scenario and checks podflow
# against them. Needs root. See testbed/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

if [[ $(id -u) != 0 ]]; then
  echo "e2e: the test bed runs a kubelet, containerd, runc and CNI: run it as root (sudo make e2e)" >&2
  exit 1
fi

# One test bed per machine: it owns fixed loopback ports, /var/lib/podflow-testbed and the
# CNI bridge. A second run (another checkout, say) waits here for the first to finish.
exec 8>/run/podflow-testbed.lock
if ! flock -n 8; then
  echo "e2e: another test bed is running; waiting for it to finish"
  flock 8
fi

# Pinned builds and images are kept per machine, not per checkout (PODFLOW_CACHE moves them).
cache=${PODFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podflow}/testbed
export PODFLOW_TESTBED_BIN=${PODFLOW_TESTBED_BIN:-$cache/bin}
export PODFLOW_TESTBED_IMAGES=${PODFLOW_TESTBED_IMAGES:-$cache/images}
export PODFLOW_BIN=${PODFLOW_BIN:-$repo/bin/podflow}
# Every scenario's diagnosis rule must exist; PODFLOW_E2E_STRICT=0 skips those that do not.
export PODFLOW_E2E_STRICT=${PODFLOW_E2E_STRICT:-1}
mkdir -p "$PODFLOW_TESTBED_BIN" "$PODFLOW_TESTBED_IMAGES"

# Debian packages of a node, installed only when missing.
# chromium renders podflow's HTML reports in the browser test.
packages=(containerd runc containernetworking-plugins busybox-static iproute2 iptables systemd mount chromium)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if (( ${#missing[@]} )); then
  echo "e2e: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Whatever happens from here on (failure, Ctrl-C, go test's timeout killing the test
# binary before its own cleanup), stop every process the test bed started and remove its
# mounts, address and bridge. The test binary does it when it can; this catches the rest.
reap() {
  (cd "$repo" && PODFLOW_TESTBED_REAP=1 go test -tags e2e -count=1 -run '^$' ./testbed/e2e/ >/dev/null) ||
    echo "e2e: cleanup after the test bed failed; see $0" >&2
}
trap reap EXIT
trap 'exit 130' INT TERM

"$here/build-tools.sh"

echo "e2e: building the test bed's helpers and images"
(
  cd "$repo"
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$PODFLOW_TESTBED_BIN/runcwrap" ./testbed/runcwrap
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$PODFLOW_TESTBED_BIN/pause" ./testbed/pause
  go run ./testbed/mkimage -name podflow.test/busybox:1 -o "$PODFLOW_TESTBED_IMAGES/busybox.tar" \
    -busybox /bin/busybox -cmd sh
  go run ./testbed/mkimage -name podflow.test/pause:1 -o "$PODFLOW_TESTBED_IMAGES/pause.tar" \
    -file "$PODFLOW_TESTBED_BIN/pause=/pause" -entrypoint /pause
  # A binary for another CPU architecture, in an image labelled with the node's: starting
  # it fails with a real "exec format error" (image-wrong-arch).
  foreign=arm64
  [[ $(go env GOARCH) == arm64 ]] && foreign=amd64
  CGO_ENABLED=0 GOARCH=$foreign go build -trimpath -ldflags '-s -w' -o "$PODFLOW_TESTBED_IMAGES/server-$foreign" ./testbed/pause
  # podflow itself, for the Indexed Job of the fleet test.
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$PODFLOW_TESTBED_IMAGES/podflow" ./cmd/podflow
  go run ./testbed/mkimage -name podflow.test/podflow:1 -o "$PODFLOW_TESTBED_IMAGES/podflow.tar" \
    -file "$PODFLOW_TESTBED_IMAGES/podflow=/usr/local/bin/podflow" -file "$PODFLOW_TESTBED_IMAGES/podflow=/bin/podflow"
  go run ./testbed/mkimage -name podflow.test/foreign-arch:1 -o "$PODFLOW_TESTBED_IMAGES/foreign-arch.tar" \
    -file "$PODFLOW_TESTBED_IMAGES/server-$foreign=/server" -entrypoint /server
)

if [[ ! -x $PODFLOW_BIN ]]; then
  make -C "$repo" build
fi

cd "$repo"
# HTML reports in a real browser: the DOM must hold every finding; screenshots are kept.
echo "e2e: HTML reports in headless chromium (screenshots in bin/artifacts)"
PODFLOW_BROWSER=chromium PODFLOW_ARTIFACTS="$repo/bin/artifacts" \
  go test -count=1 -run '^TestHTMLReportInBrowser$' -v ./analyze/ | grep -E '^(=== RUN|--- |\s+render_browser_test|PASS|FAIL|ok)'

# The pinned kubectl against podflow serve on a recorded bundle: no cluster needed, so it
# runs before the test bed comes up (and alone: go test ./testbed/e2e -run Serve).
echo "e2e: kubectl against podflow serve"
go test -count=1 -run '^TestServeWithKubectl$' -v ./testbed/e2e/ | grep -E '^(=== RUN|--- |\s+serve_test|PASS|FAIL|ok)'

# The fleet test's index: PostgreSQL from Debian on 127.0.0.1, which the Job's pods reach
# on the node's network.
# The server must not inherit the test bed's lock (fd 8), or it would hold it after the
# run; it is stopped with the rest of the test bed.
pg_e2e_data="${PODFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podflow}/postgres/e2e"
PODFLOW_E2E_POSTGRES=$("$repo/.ci/postgres.sh" install "$pg_e2e_data" 54331 8>&-)
export PODFLOW_E2E_POSTGRES
trap 'reap; "$repo/.ci/postgres.sh" stop "$pg_e2e_data" 54331 >/dev/null 2>&1 || true' EXIT

# Scenarios wait side by side, so parallelism is about waiting, not CPU. The output is
# go test -v's, and ends, when a test failed, with each failed test's own lines: the run
# prints thousands of lines and, after a failure, the components' logs.
go build -o "$repo/bin/failsummary" ./testbed/failsummary
go test -json -tags e2e -count=1 -timeout 45m -parallel 32 -skip '^TestServeWithKubectl$' ./testbed/e2e/ 2>&1 |
  "$repo/bin/failsummary"
