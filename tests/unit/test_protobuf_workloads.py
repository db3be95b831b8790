"""The workload kinds in Kubernetes' Protobuf (issue 38 point 3): clients of k8s.io/api decode what miniplane writes.

Field numbers are checked against Kubernetes' generated.proto (k8s.io/api v1.28) by hand-built wire bytes, not the
codec's own classes; the round trips use realistic objects in Kubernetes' canonical JSON form
(tests/support/workload_objects.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from runtime.machinery.scheme import Scheme
from runtime.machinery.serializer import protobuf, protofacts
from runtime.machinery.serializer.protobuf import PROTOBUF_PREFIX, decode, encode
from runtime.models import codegen
from runtime.machinery.serializer.proto import apps_v1_pb2, autoscaling_v1_pb2, autoscaling_v2_pb2, core_v1_pb2
from runtime.machinery.serializer.proto import intstr_pb2, runtime_pb2
from tests.support.workload_objects import DEPLOYMENT, HPA_V1, HPA_V2, POD, SERVICE, WORKLOAD_OBJECTS


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _ld(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _vi(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def raw_of(data: bytes) -> bytes:
    """The typed message's bytes inside the envelope."""
    assert data[:4] == PROTOBUF_PREFIX
    envelope = runtime_pb2.Unknown()
    envelope.ParseFromString(data[4:])
    return envelope.raw


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return PROTOBUF_PREFIX + _ld(1, _ld(1, api_version) + _ld(2, kind)) + _ld(2, raw)


@pytest.mark.parametrize("kind", sorted(WORKLOAD_OBJECTS))
def test_every_workload_kind_round_trips_json_protobuf_json(kind: str) -> None:
    obj = WORKLOAD_OBJECTS[kind]
    assert decode(encode(obj)) == obj


def test_the_autoscaling_v1_form_of_the_hpa_round_trips_as_its_own_message() -> None:
    assert decode(encode(HPA_V1)) == HPA_V1
    assert decode(encode(HPA_V2)) == HPA_V2


def test_field_numbers_are_kubernetes_pod_spec_2_containers_2_image_2() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}
    assert raw_of(encode(pod)) == _ld(2, _ld(2, _ld(1, "c") + _ld(2, "nginx:1.25")))


def test_field_numbers_are_kubernetes_deployment_spec_replicas_1() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3}}
    assert raw_of(encode(deployment)) == _ld(2, _vi(1, 3))


@pytest.mark.parametrize(("message", "field", "number"), [
    (core_v1_pb2.Pod, "status", 3), (core_v1_pb2.PodSpec, "initContainers", 20),
    (core_v1_pb2.PodSpec, "ephemeralContainers", 34), (core_v1_pb2.PodSpec, "schedulingGates", 38),
    (core_v1_pb2.Container, "envFrom", 19), (core_v1_pb2.Container, "restartPolicy", 24),
    (core_v1_pb2.ServicePort, "targetPort", 4), (core_v1_pb2.ServiceSpec, "clusterIPs", 18),
    (core_v1_pb2.VolumeSource, "projected", 26), (core_v1_pb2.PodStatus, "hostIPs", 16),
    (apps_v1_pb2.DeploymentSpec, "progressDeadlineSeconds", 9), (apps_v1_pb2.StatefulSetSpec, "ordinals", 11),
    (autoscaling_v2_pb2.HorizontalPodAutoscalerSpec, "metrics", 4), (autoscaling_v2_pb2.MetricSpec,
                                                                    "containerResource", 7),
    (autoscaling_v1_pb2.HorizontalPodAutoscalerSpec, "targetCPUUtilizationPercentage", 4),
    (intstr_pb2.IntOrString, "intVal", 2), (intstr_pb2.IntOrString, "strVal", 3),
])
def test_known_field_numbers_of_generated_proto(message: type[Message], field: str, number: int) -> None:
    assert message.DESCRIPTOR.fields_by_name[field].number == number


def test_int_or_string_is_a_json_number_or_string_on_the_wire_type_intval_strval() -> None:
    service = {"apiVersion": "v1", "kind": "Service",
               "spec": {"ports": [{"port": 80, "targetPort": "http"}, {"port": 81, "targetPort": 8081}]}}
    named = _ld(1, _vi(3, 80) + _ld(4, _vi(1, 1) + _ld(3, "http")))
    numbered = _ld(1, _vi(3, 81) + _ld(4, _vi(1, 0) + _vi(2, 8081)))
    assert raw_of(encode(service)) == _ld(2, named + numbered)
    assert decode(encode(service))["spec"]["ports"] == service["spec"]["ports"]


def test_quantity_is_its_string_and_a_json_number_is_written_as_its_text() -> None:
    limits = {"cpu": 2, "memory": "1Gi", "scale": 0.5}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}}
    got = decode(encode(pod))["spec"]["containers"][0]["resources"]["limits"]
    assert got == {"cpu": "2", "memory": "1Gi", "scale": "0.5"}
    entry = _ld(1, "memory") + _ld(2, _ld(1, "1Gi"))
    assert _ld(1, entry) in raw_of(encode(pod))


def test_an_inline_struct_takes_its_keys_from_the_parent_volume_source_is_field_2() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"volumes": [{"name": "v", "emptyDir": {}}],
                                                       "containers": []}}
    assert raw_of(encode(pod)) == _ld(2, _ld(1, _ld(1, "v") + _ld(2, _ld(2, b""))))
    assert decode(encode(pod))["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]


def test_a_field_named_unlike_its_json_key_api_group_of_ingress_class_parameters() -> None:
    cls = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
           "spec": {"controller": "c", "parameters": {"apiGroup": "g.io", "kind": "P", "name": "p"}}}
    assert raw_of(encode(cls)) == _ld(2, _ld(1, "c") + _ld(2, _ld(1, "g.io") + _ld(2, "P") + _ld(3, "p")))
    assert decode(encode(cls)) == {**cls, "metadata": {}}  # Go writes the non-pointer metadata


def test_a_pointer_set_to_zero_is_kept_replicas_0_and_a_non_pointer_zero_left_out() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "spec": {"replicas": 0, "minReadySeconds": 0, "paused": False}}
    assert decode(encode(deployment))["spec"] == {"replicas": 0, "strategy": {},
                                                  "template": {"metadata": {}, "spec": {"containers": []}}}


def test_a_field_without_omitempty_is_written_when_zero_replica_set_status_replicas() -> None:
    data = _envelope("apps/v1", "ReplicaSet", _ld(3, b""))
    assert decode(data)["status"] == {"replicas": 0}


def test_an_optional_field_without_omitempty_is_written_too_stateful_set_available_replicas() -> None:
    data = _envelope("apps/v1", "StatefulSet", _ld(3, b""))
    assert decode(data)["status"] == {"replicas": 0, "availableReplicas": 0}


def test_non_pointer_structs_are_written_empty_as_go_writes_them() -> None:
    pod = decode(_envelope("v1", "Pod", _ld(2, _ld(2, _ld(1, "c"))) + _ld(3, _ld(8, _ld(1, "c")))))
    assert pod["spec"]["containers"] == [{"name": "c", "resources": {}}]
    assert pod["status"]["containerStatuses"] == [{"name": "c", "state": {}, "lastState": {}, "ready": False,
                                                   "restartCount": 0, "image": "", "imageID": ""}]


def _as_go_writes_it(message: Message) -> None:
    """Set every unset non-pointer scalar to its zero and every non-pointer struct, as Go's Marshal writes them."""
    plan_pointer = {f"{p}.{m}.{f}" for p, ms in protofacts.NULLABLE_FIELDS.items()
                    for m, fs in ms.items() for f in fs.split()}
    descriptor = message.DESCRIPTOR
    if descriptor.full_name.startswith("k8s.io.apimachinery"):
        return  # meta's messages keep their own (older) facts
    for field in descriptor.fields:
        full = f"{descriptor.full_name}.{field.name}"
        if field.is_repeated:
            items = getattr(message, field.name)
            if field.message_type is not None and not field.message_type.GetOptions().map_entry:
                for item in items:
                    _as_go_writes_it(item)
            continue
        pointer = full in plan_pointer
        if field.message_type is not None:
            if message.HasField(field.name):
                _as_go_writes_it(getattr(message, field.name))
            elif not pointer and not field.message_type.full_name.startswith("k8s.io.apimachinery"):
                getattr(message, field.name).SetInParent()
                _as_go_writes_it(getattr(message, field.name))
        elif not pointer and not message.HasField(field.name):
            setattr(message, field.name, field.default_value)


@pytest.mark.parametrize("obj", [POD, DEPLOYMENT, SERVICE, HPA_V2], ids=lambda o: o["kind"])
def test_a_go_client_writing_every_non_pointer_field_decodes_to_the_same_json(obj: dict[str, Any]) -> None:
    data = encode(obj)
    envelope = runtime_pb2.Unknown()
    envelope.ParseFromString(data[4:])
    message = protofacts.KINDS[obj["kind"]][0].message()
    message.ParseFromString(envelope.raw)
    _as_go_writes_it(message)
    envelope.raw = message.SerializeToString()
    assert decode(PROTOBUF_PREFIX + envelope.SerializeToString()) == obj


def test_hpa_messages_are_chosen_by_version_and_domain_free_groups_exactly() -> None:
    assert protobuf.supports("autoscaling/v1", "HorizontalPodAutoscaler")
    assert protobuf.supports("autoscaling/v2", "HorizontalPodAutoscaler")
    assert not protobuf.supports("autoscaling/v2beta2", "HorizontalPodAutoscaler")
    assert raw_of(encode(HPA_V1)) != raw_of(encode(dict(HPA_V1, apiVersion="autoscaling/v2")))
    assert protobuf.supports("apps/v1", "Deployment") and not protobuf.supports("apps.example.com/v1", "Deployment")
    assert protobuf.supports("networking.k8s.io/v1", "Ingress") and not protobuf.supports("v1", "Ingress")
    assert protobuf.supports("v1", "Binding") and protobuf.supports("policy/v1", "Eviction")


def test_every_served_workload_kind_has_a_protobuf_form() -> None:
    scheme = Scheme("k8s.io")
    workload = {"Pod", "Service", "Endpoints", "PersistentVolumeClaim", "PersistentVolume", "Node", "LimitRange",
                "ResourceQuota", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ControllerRevision",
                "Job", "CronJob", "Ingress", "IngressClass", "NetworkPolicy", "PodDisruptionBudget",
                "HorizontalPodAutoscaler", "EndpointSlice", "PriorityClass", "StorageClass"}
    served = [t for t in scheme.types if t.kind in workload]
    assert {t.kind for t in served} == workload
    for rt in served:
        assert protobuf.supports(rt.api_version, rt.kind), rt.api_version
        assert protobuf.supports(rt.api_version, rt.list_kind), rt.api_version


def test_the_facts_tables_name_real_fields_of_real_messages() -> None:
    messages = {}
    for kinds in protofacts.KINDS.values():
        for spec in kinds:
            stack = [spec.message.DESCRIPTOR]
            while stack:
                d = stack.pop()
                if d.full_name not in messages:
                    messages[d.full_name] = d
                    stack += [f.message_type for f in d.fields if f.message_type is not None]
    for table in (protofacts.ALWAYS_FIELDS, protofacts.NULLABLE_FIELDS, protofacts.INLINE_FIELDS):
        for package, by_message in table.items():
            for name, fields in by_message.items():
                descriptor = messages[f"{package}.{name}"]
                assert set(fields.split()) <= set(descriptor.fields_by_name), f"{package}.{name}: {fields}"
    for key in protofacts.JSON_NAMES:
        message, _, field = key.rpartition(".")
        assert field in messages[message].fields_by_name


def test_a_wrong_json_type_in_a_workload_names_the_field_path() -> None:
    bad = copy.deepcopy(DEPLOYMENT)
    bad["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "eighty"
    with pytest.raises(protobuf.ProtobufError, match=r"spec\.template\.spec\.containers\[0\]\.ports\[0\]"):
        encode(bad)


SCHEME = Scheme("k8s.io")
MANIFESTS = {
    "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                     "livenessProbe": {"httpGet": {"path": "/", "port": 80}}}],
                     "volumes": [{"name": "v", "configMap": {"name": "x"}}]}},
    "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "d"},
                   "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                       "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}},
    "Service": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
                "spec": {"selector": {"a": "b"}, "ports": [{"port": 80, "targetPort": "web"}, {"port": 81}]}},
    "HorizontalPodAutoscaler": {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "d"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"}, "maxReplicas": 5,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 50}}}]}},
}


def _go_writes_too(kind: str, obj: dict[str, Any]) -> None:
    """The empty structs and required zeros Go's encoder writes for a defaulted object of `kind`."""
    if kind == "Pod":
        obj["status"] = {}
        for container in obj["spec"]["containers"]:
            container.setdefault("resources", {})
    elif kind == "Deployment":
        obj["status"] = {}
        for container in obj["spec"]["template"]["spec"]["containers"]:
            container.setdefault("resources", {})
    elif kind == "Service":
        obj["status"] = {"loadBalancer": {}}
    else:
        obj["status"] = {"desiredReplicas": 0}


@pytest.mark.parametrize("kind", sorted(MANIFESTS))
def test_an_object_after_kubernetes_defaults_round_trips_with_what_go_writes_of_it(kind: str) -> None:
    obj = copy.deepcopy(MANIFESTS[kind])
    rt = next(t for t in SCHEME.types if t.api_version == obj["apiVersion"] and t.kind == kind)
    rt.strategy.default(obj)
    expected = copy.deepcopy(obj)
    _go_writes_too(kind, expected)
    assert decode(encode(obj)) == expected
    assert decode(encode(expected)) == expected


# Beside the checkout, else the machine's (a clone elsewhere, as CI's): where the model generator finds them.
SWAGGER = codegen.DEFAULT_SOURCE.parent / "swagger.json"


def _served_messages() -> dict[str, Any]:
    """Every k8s.io/api message a served workload kind reaches, by full name."""
    out: dict[str, Any] = {}
    for kind in WORKLOAD_OBJECTS:
        for spec in protofacts.KINDS[kind]:
            stack = [spec.message.DESCRIPTOR]
            while stack:
                d = stack.pop()
                if (d.full_name not in out and d.full_name.startswith("k8s.io.api.")
                        and not d.GetOptions().map_entry):
                    out[d.full_name] = d
                    stack += [f.message_type for f in d.fields if f.message_type is not None]
    return out


def test_the_messages_carry_every_v1_28_openapi_property_with_its_json_type() -> None:
    definitions = json.loads(SWAGGER.read_text())["definitions"]
    inline = {f"{p}.{m}.{f}" for p, ms in protofacts.INLINE_FIELDS.items() for m, fs in ms.items()
              for f in fs.split()}
    scalar = {FieldDescriptor.TYPE_STRING: "string", FieldDescriptor.TYPE_BOOL: "boolean",
              FieldDescriptor.TYPE_INT32: "integer", FieldDescriptor.TYPE_INT64: "integer"}
    served = _served_messages()
    inlined = {f.message_type.full_name for d in served.values() for f in d.fields if f"{d.full_name}.{f.name}" in inline}
    checked = 0
    for name, descriptor in served.items():
        definition = definitions.get("io.k8s." + name.removeprefix("k8s.io."))
        if definition is None:  # an inlined struct: its properties are its parent's
            assert name in inlined, name
            continue
        keys = {protofacts.JSON_NAMES.get(f"{name}.{f.name}", f.name): f for f in descriptor.fields
                if f"{name}.{f.name}" not in inline}
        for f in descriptor.fields:
            if f"{name}.{f.name}" in inline:
                keys.update({g.name: g for g in f.message_type.fields})
        props = set(definition.get("properties", {}))
        assert set(keys) <= props and props - set(keys) <= {"apiVersion", "kind"}, name  # TypeMeta is the envelope's
        for key, prop in definition.get("properties", {}).items():
            field = keys.get(key)
            if field is not None and field.message_type is None and not field.is_repeated and "type" in prop:
                assert scalar[field.type] == prop["type"], f"{name}.{key}"
                checked += 1
    assert checked > 500


def test_the_fields_without_omitempty_are_the_openapi_required_ones_and_the_few_read_in_types_go() -> None:
    definitions = json.loads(SWAGGER.read_text())["definitions"]
    read_in_types_go = {"k8s.io.api.apps.v1.StatefulSetStatus.availableReplicas",
                        "k8s.io.api.apps.v1.StatefulSetOrdinals.start"}
    served = _served_messages()
    always = {f"{p}.{m}.{f}" for p, ms in protofacts.ALWAYS_FIELDS.items() for m, fs in ms.items()
              for f in fs.split() if f"{p}.{m}" in served}
    required = set()
    for name, descriptor in served.items():
        definition = definitions.get("io.k8s." + name.removeprefix("k8s.io."), {})
        for key in definition.get("required", []):
            field = next((f for f in descriptor.fields
                          if protofacts.JSON_NAMES.get(f"{name}.{f.name}", f.name) == key), None)
            if field is not None and field.name != "metadata":
                required.add(f"{name}.{field.name}")
    inlined_required = {"k8s.io.api.core.v1.EphemeralContainerCommon.name"}  # EphemeralContainer's `name`
    assert always - read_in_types_go - inlined_required == required
