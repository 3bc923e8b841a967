#!/usr/bin/env bash
# Builds test/go/derive-peer (op-node's derivation code from the Go module proxy) into
# .ci/work/bin (ignored), keyed by a hash of its sources: rebuilt only when they change. Modules
# land in Go's own cache. A cold build downloads ~100 modules and compiles op-node's derive package
# and go-ethereum (op-geth): minutes on a small machine; later builds take seconds. Prints its path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
src="$root/test/go/derive-peer"
command -v go >/dev/null || { echo "go is needed to build the derivation peer (test/go/derive-peer)" >&2; exit 1; }
key="$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -c1-16)"
dir="$root/.ci/work/bin/derive-peer-$key"
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -x "$dir/derive-peer" ]; then
  (cd "$src" && go build -buildvcs=false -o "$dir/derive-peer.tmp" . && mv "$dir/derive-peer.tmp" "$dir/derive-peer") >&2
fi
echo "$dir/derive-peer"
