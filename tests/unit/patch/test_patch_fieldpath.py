"""Field sets and their FieldsV1 encoding, exactly as Kubernetes writes them."""

from __future__ import annotations

import json

import pytest

from runtime.models import ClusterRole
from runtime.machinery.patch import FieldSet, PatchError, PathElement, fields_of

F = PathElement.field


def test_fields_v1_nests_paths_as_objects() -> None:
    fields = FieldSet.of([(F("metadata"), F("labels"), F("a")), (F("rules"),)])
    assert fields.to_fields_v1() == {"f:metadata": {"f:labels": {"f:a": {}}}, "f:rules": {}}


def test_member_with_members_below_carries_dot() -> None:
    fields = FieldSet.of([(F("metadata"), F("labels")), (F("metadata"), F("labels"), F("a"))])
    assert fields.to_fields_v1() == {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}


def test_map_list_items_are_keyed_by_sorted_compact_json() -> None:
    item = PathElement.key({"uid": "123", "kind": "X"})
    assert item.fields_v1_key() == 'k:{"kind":"X","uid":"123"}'
    assert str(item) == '[kind="X",uid="123"]'


def test_set_items_are_keyed_by_value() -> None:
    fields = FieldSet.of([(F("metadata"), F("finalizers"), PathElement.value("a/b"))])
    assert fields.to_fields_v1() == {"f:metadata": {"f:finalizers": {'v:"a/b"': {}}}}
    assert fields.strings() == ['.metadata.finalizers[="a/b"]']


def test_fields_v1_round_trip() -> None:
    encoded = {
        "f:metadata": {
            "f:finalizers": {".": {}, 'v:"x"': {}},
            "f:labels": {".": {}, "f:app": {}},
            "f:ownerReferences": {".": {}, 'k:{"uid":"1"}': {".": {}, "f:name": {}}},
        },
        "f:rules": {},
    }
    decoded = FieldSet.from_fields_v1(encoded)
    assert len(decoded) == 8
    assert decoded.to_fields_v1() == encoded
    assert json.dumps(decoded.to_fields_v1()) == json.dumps(encoded)  # same key order too


def test_encoding_sorts_fields_before_keys_before_values() -> None:
    fields = FieldSet.of([(F("x"), PathElement.value("b")), (F("x"), PathElement.key({"k": "a"})), (F("x"), F("z"))])
    assert list(fields.to_fields_v1()["f:x"]) == ["f:z", 'k:{"k":"a"}', 'v:"b"']


def test_iteration_lists_members_before_deeper_paths() -> None:
    fields = FieldSet.of([(F("a"), F("b")), (F("z"),), (F("a"),)])
    assert fields.strings() == [".a", ".z", ".a.b"]


def test_malformed_fields_v1_is_rejected() -> None:
    with pytest.raises(PatchError):
        FieldSet.from_fields_v1({"x:what": {}})


def test_fields_of_excludes_identity_and_server_set_metadata() -> None:
    obj = {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "r", "uid": "u", "resourceVersion": "7", "generation": 2,
                     "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"a": "1"},
                     "managedFields": [{"manager": "x"}]},
        "rules": [{"verbs": ["get"]}],
    }
    assert fields_of(obj, ClusterRole).to_fields_v1() == {"f:metadata": {"f:labels": {"f:a": {}}}, "f:rules": {}}


def test_fields_of_owns_map_list_items_by_key() -> None:
    # OwnerReference is an atomic struct in Kubernetes: each item is owned whole, by its key.
    obj = {"metadata": {"name": "r", "ownerReferences": [{"uid": "1", "name": "o"}], "finalizers": ["f"]}}
    assert fields_of(obj, ClusterRole).to_fields_v1() == {"f:metadata": {
        "f:finalizers": {'v:"f"': {}},
        "f:ownerReferences": {'k:{"uid":"1"}': {}},
    }}
