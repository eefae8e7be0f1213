#!/usr/bin/env bash
# Generates the Go gRPC client of daemon/proto/cuzk/v1/proving.proto (protoc-gen-go and
# protoc-gen-go-grpc, as Curio generates lib/cuzk/proving*.pb.go) into
# daemon/tests/client/cuzkv1/ (git-ignored) for the daemon's tests. Installs what it needs from
# the project's own pins: protoc from PyPI (grpcio-tools, in .venv-proto) and the two Go
# plugins from the Go module proxy (into .venv-proto/bin).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/.venv-proto"
GO=${GO:-go}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    (apt-get update -qq && apt-get install -y -qq python3-venv) >&2
    python3 -m venv "$venv"
  }
fi
"$venv/bin/python" -c 'import grpc_tools' 2>/dev/null ||
  "$venv/bin/pip" install --quiet --disable-pip-version-check grpcio-tools==1.68.1 >&2
[ -x "$venv/bin/protoc-gen-go" ] || GOBIN="$venv/bin" "$GO" install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.1
[ -x "$venv/bin/protoc-gen-go-grpc" ] || GOBIN="$venv/bin" "$GO" install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
out="$repo/daemon/tests/client"
rm -rf "$out/cuzkv1"
"$venv/bin/python" -m grpc_tools.protoc -I "$repo/daemon/proto" \
  --plugin=protoc-gen-go="$venv/bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$venv/bin/protoc-gen-go-grpc" \
  --go_out="$out" --go_opt=module=github.com/cuzk/cuzk/daemon/tests/client \
  --go-grpc_out="$out" --go-grpc_opt=module=github.com/cuzk/cuzk/daemon/tests/client \
  cuzk/v1/proving.proto
ls "$out/cuzkv1"
