"""The merge schema is derived from the pydantic models' field markers."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import ConfigDict

from runtime.models import ClusterRole, Namespace, RoleBinding, SubjectAccessReview
from runtime.models.base import K8sModel, map_field
from runtime.machinery.patch.schema import UNTYPED, ListNode, MapNode, Scalar, Struct, schema_for


def test_fields_are_named_by_their_json_alias() -> None:
    meta = schema_for(ClusterRole).child("metadata").node
    assert isinstance(meta, Struct)
    assert {"ownerReferences", "resourceVersion", "managedFields"} <= meta.fields.keys()
    rule = schema_for(ClusterRole).child("rules").node
    assert isinstance(rule, ListNode) and "nonResourceURLs" in rule.item.fields  # type: ignore[attr-defined]


def test_owner_references_are_a_map_list_keyed_by_uid_with_merge_strategy() -> None:
    field = schema_for(ClusterRole).child("metadata").node.child("ownerReferences")
    assert isinstance(field.node, ListNode)
    assert (field.node.list_type, field.node.map_keys) == ("map", ("uid",))
    assert field.patch_strategies == {"merge"} and field.patch_merge_key == "uid"


def test_finalizers_are_a_merging_set_of_scalars() -> None:
    field = schema_for(Namespace).child("metadata").node.child("finalizers")
    assert isinstance(field.node, ListNode) and field.node.list_type == "set"
    assert isinstance(field.node.item, Scalar) and "merge" in field.patch_strategies


def test_rules_and_subjects_are_atomic_lists_without_strategy() -> None:
    for model, name in ((ClusterRole, "rules"), (RoleBinding, "subjects")):
        field = schema_for(model).child(name)
        assert isinstance(field.node, ListNode) and field.node.list_type == "atomic"
        assert not field.patch_strategies


def test_namespace_conditions_are_keyed_by_type() -> None:
    field = schema_for(Namespace).child("status").node.child("conditions")
    assert isinstance(field.node, ListNode) and field.node.map_keys == ("type",)
    assert field.patch_merge_key == "type"


def test_labels_are_a_granular_map_of_scalars() -> None:
    labels = schema_for(ClusterRole).child("metadata").node.child("labels").node
    assert isinstance(labels, MapNode) and not labels.atomic and isinstance(labels.value, Scalar)


def test_map_of_lists_unwraps_both_levels() -> None:
    extra = schema_for(SubjectAccessReview).child("spec").node.child("extra").node
    assert isinstance(extra, MapNode) and isinstance(extra.value, ListNode)


def test_unknown_fields_are_untyped() -> None:
    assert schema_for(ClusterRole).child("noSuchField").node is UNTYPED


def test_atomic_markers_on_fields_and_models_are_honoured() -> None:
    class Ref(K8sModel):
        model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})
        name: Optional[str] = None

    class Holder(K8sModel):
        ref: Optional[Ref] = None
        data: Optional[dict[str, Any]] = map_field(map_type="atomic")

    schema = schema_for(Holder)
    assert schema.child("ref").node.atomic  # type: ignore[attr-defined]
    assert schema.child("data").node.atomic  # type: ignore[attr-defined]
