"""Generated Protobuf modules for Kubernetes' wire messages (do not edit).

The `.proto` files here are trimmed copies of Kubernetes' `generated.proto`
files with their real packages, field names and numbers; the `*_pb2.py`
modules are generated from them by `scripts/gen_proto.sh` and checked in.
Use them through `runtime.codec.protobuf`, not directly.
"""
