"""The admissionregistration kinds in Kubernetes' Protobuf (issue 39): webhook configurations and validating
policies travel as k8s.io/api admissionregistration/v1 messages; mutating policies are JSON only here.

Field numbers are checked against Kubernetes' generated.proto by hand-built wire bytes, not the codec's own
classes."""

from __future__ import annotations

import pytest

from runtime.machinery.serializer.protobuf import PROTOBUF_PREFIX, decode, encode, supports
from runtime.machinery.serializer.proto import runtime_pb2
from tests.support.admission_objects import API_VERSION, PROTOBUF_OBJECTS


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


def raw_of(data: bytes) -> bytes:
    assert data[:4] == PROTOBUF_PREFIX
    envelope = runtime_pb2.Unknown()
    envelope.ParseFromString(data[4:])
    return envelope.raw


@pytest.mark.parametrize("kind", sorted(PROTOBUF_OBJECTS))
def test_every_admission_kind_with_a_message_round_trips_json_protobuf_json(kind: str):
    assert decode(encode(PROTOBUF_OBJECTS[kind])) == PROTOBUF_OBJECTS[kind]


def test_field_numbers_are_kubernetes_webhooks_2_name_1_object_selector_10_and_11():
    obj = {"apiVersion": API_VERSION, "kind": "ValidatingWebhookConfiguration",
           "webhooks": [{"name": "a.b.c", "objectSelector": {}}]}
    assert raw_of(encode(obj)) == _ld(2, _ld(1, "a.b.c") + _ld(10, b""))
    mutating = {**obj, "kind": "MutatingWebhookConfiguration"}
    assert raw_of(encode(mutating)) == _ld(2, _ld(1, "a.b.c") + _ld(11, b""))


def test_a_rule_is_embedded_as_kubes_rule_with_operations_and_named_rule():
    obj = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy",
           "spec": {"matchConstraints": {"resourceRules": [{"resourceNames": ["x"], "operations": ["CREATE"],
                                                            "resources": ["pods"]}]}}}
    named = _ld(1, "x") + _ld(2, _ld(1, "CREATE") + _ld(2, _ld(3, "pods")))
    assert raw_of(encode(obj)) == _ld(2, _ld(2, _ld(3, named)))


def test_fields_without_omitempty_are_written_as_go_writes_them():
    obj = {"apiVersion": API_VERSION, "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "h"},
           "webhooks": [{"name": "a.b.c", "clientConfig": {"service": {"namespace": "n", "name": "s"}}}]}
    hook = decode(encode(obj))["webhooks"][0]
    assert hook["admissionReviewVersions"] == [] and hook["clientConfig"]["service"] == {"namespace": "n",
                                                                                          "name": "s"}
    policy = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"},
              "spec": {"validations": [{}], "variables": [{}]}}
    assert decode(encode(policy))["spec"] == {"validations": [{"expression": ""}],
                                              "variables": [{"name": "", "expression": ""}]}


def test_mutating_policies_have_no_protobuf_message_here():
    assert supports(API_VERSION, "ValidatingAdmissionPolicy") and supports(API_VERSION, "MutatingWebhookConfiguration")
    assert not supports(API_VERSION, "MutatingAdmissionPolicy")
    assert not supports(API_VERSION, "MutatingAdmissionPolicyBinding")
