"""Generated Protobuf modules for Kubernetes' wire messages (do not edit).

The `.proto` files here are trimmed copies of Kubernetes' `generated.proto`
files with their real packages, field names and numbers; the `*_pb2.py`
modules are generated from them by `scripts/gen_proto.sh` and checked in.
Use them through `runtime.machinery.serializer.protobuf`, not directly.
"""

#: The generated modules (imported by name; the package itself defines nothing).
__all__ = ["admissionregistration_v1_pb2", "apps_v1_pb2", "authentication_v1_pb2", "authorization_v1_pb2",
           "autoscaling_v1_pb2", "autoscaling_v2_pb2", "batch_v1_pb2", "core_v1_pb2", "discovery_v1_pb2",
           "events_v1_pb2", "intstr_pb2", "meta_v1_pb2", "networking_v1_pb2", "openapi_v2_pb2", "policy_v1_pb2",
           "rbac_v1_pb2", "resource_pb2", "runtime_pb2", "scheduling_v1_pb2", "storage_v1_pb2"]
