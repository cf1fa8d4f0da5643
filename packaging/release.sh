#!/usr/bin/env bash
# Builds podflow's release into dist/ (make release): per platform a static binary,
# packed with the README as podflow-OS-ARCH.tar.gz; SHA256SUMS; and the krew manifest
# dist/podflow.yaml with every archive's checksum. krew links the binary as
# kubectl-podflow, the name under which podflow presents itself as the kubectl plugin;
# without krew, a link of that name on the PATH does the same.
# Usage: packaging/release.sh VERSION COMMIT RELEASE_URL HOMEPAGE [OS/ARCH...]
set -euo pipefail
version=$1 commit=$2 url=$3 homepage=$4
shift 4
repo=$(cd "$(dirname "$0")/.." && pwd)
dist=$repo/dist
platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)
if (( $# )); then
  platforms=("$@")
fi

rm -rf "$dist"
mkdir -p "$dist"
manifest=$(sed -e "s|@VERSION@|$version|" -e "s|@RELEASE_URL@|$url|g" -e "s|@HOMEPAGE@|$homepage|" \
  "$repo/packaging/krew/podflow.yaml" | grep -v '^#')
for p in "${platforms[@]}"; do
  os=${p%/*} arch=${p#*/} ext=""
  [[ $os == windows ]] && ext=.exe
  stage=$dist/podflow-$os-$arch
  mkdir -p "$stage"
  (cd "$repo" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$stage/podflow$ext" ./cmd/podflow)
  cp "$repo/README.md" "$stage/"
  # Reproducible archives: fixed order, owner and time.
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    -cf - "podflow$ext" README.md | gzip -n > "$stage.tar.gz"
  rm -rf "$stage"
  sum=$(sha256sum "$stage.tar.gz" | cut -d' ' -f1)
  manifest=${manifest//@SHA256_${os}_${arch}@/$sum}
  echo "release: $os/$arch $sum"
done
(cd "$dist" && sha256sum ./*.tar.gz | sed 's| \./| |' > SHA256SUMS)
if [[ $manifest == *@SHA256_* ]]; then
  # A partial build (some platforms only) cannot make a manifest krew accepts.
  echo "release: not every platform built; no krew manifest written" >&2
else
  printf '%s\n' "$manifest" > "$dist/podflow.yaml"
fi
echo "release: dist/ holds ${#platforms[@]} archive(s) and SHA256SUMS"
