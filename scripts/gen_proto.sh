#!/bin/sh
# Regenerate runtime/machinery/serializer/proto/*_pb2.py from the .proto files beside them
# (Kubernetes' generated.proto copies and gnostic's OpenAPI v2 document, openapi_v2.proto).
#
# Usage: scripts/gen_proto.sh [OUT_DIR]   (OUT_DIR defaults to the repository root)
#
# Uses grpcio-tools' bundled protoc (`python -m grpc_tools.protoc`; set PYTHON
# to choose the interpreter, default .venv/bin/python), so the output depends
# only on the installed grpcio-tools version: the same version regenerates the
# checked-in modules byte for byte (tests/unit/test_protobuf_codec.py checks
# this). The include root is the repository root, so the generated imports
# read `from runtime.machinery.serializer.proto import ..._pb2`.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-"$root/.venv/bin/python"}
out=${1:-"$root"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
"$python" -m grpc_tools.protoc --proto_path=. --python_out="$out" runtime/machinery/serializer/proto/*.proto
