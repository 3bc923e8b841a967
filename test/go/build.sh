#!/usr/bin/env bash
# Builds the Go programs the tests run, into .ci/work/bin (ignored), once per version: go-ethereum's
# geth (`go install` from the Go module proxy, keyed by its version) for the execution-apis replay,
# test/go/strictclient (keyed by a hash of its sources, so it is rebuilt only when they change), and
# op-geth (Optimism's geth, the OP Stack oracle; built from test/go/op-geth, keyed by a hash of its
# go.mod and go.sum, which pin the op-geth release) and test/go/compose-config (compose-go, the
# Compose reference implementation, rendering infra/node's templates; keyed by a hash of its
# sources). Modules land in Go's own cache (GOMODCACHE, ~/go/pkg/mod by default). Prints four lines:
#   geth <path>
#   strictclient <path>
#   op-geth <path>
#   compose-config <path>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$root/.ci/work/bin"
geth_version=v1.17.10
command -v go >/dev/null || { echo "go is needed to build geth and the strict client (test/go)" >&2; exit 1; }
mkdir -p "$bin"
# One build at a time (test files run in parallel workers, and .ci/run builds ahead of them).
exec 9>"$bin/.lock"
flock 9

geth_dir="$bin/geth-$geth_version"
if [ ! -x "$geth_dir/geth" ]; then
  GOBIN="$geth_dir" go install "github.com/ethereum/go-ethereum/cmd/geth@$geth_version" >&2
fi

src="$root/test/go/strictclient"
key="$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -c1-16)"
client_dir="$bin/strictclient-$key"
if [ ! -x "$client_dir/strictclient" ]; then
  (cd "$src" && go build -buildvcs=false -o "$client_dir/strictclient.tmp" . && mv "$client_dir/strictclient.tmp" "$client_dir/strictclient") >&2
fi

op_src="$root/test/go/op-geth"
op_key="$(cat "$op_src/go.mod" "$op_src/go.sum" | sha256sum | cut -c1-16)"
op_dir="$bin/op-geth-$op_key"
if [ ! -x "$op_dir/geth" ]; then
  # cmd/geth is resolved through the module's replace (go-ethereum => op-geth).
  (cd "$op_src" && go build -buildvcs=false -o "$op_dir/geth.tmp" github.com/ethereum/go-ethereum/cmd/geth && mv "$op_dir/geth.tmp" "$op_dir/geth") >&2
fi
compose_src="$root/test/go/compose-config"
compose_key="$(cat "$compose_src/go.mod" "$compose_src/go.sum" "$compose_src"/*.go | sha256sum | cut -c1-16)"
compose_dir="$bin/compose-config-$compose_key"
if [ ! -x "$compose_dir/compose-config" ]; then
  (cd "$compose_src" && go build -buildvcs=false -o "$compose_dir/compose-config.tmp" . && mv "$compose_dir/compose-config.tmp" "$compose_dir/compose-config") >&2
fi
echo "geth $geth_dir/geth"
echo "strictclient $client_dir/strictclient"
echo "op-geth $op_dir/geth"
echo "compose-config $compose_dir/compose-config"
