"""A create's managed fields, built in one walk, equal the general route through field paths.

`runtime.machinery.patch.created` skips the path set a create's ownership used to go
through; these properties hold it to that route for any object: the kinds'
own schemas and one with set, map and atomic lists, granular and atomic maps.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.models import ClusterRole, ClusterRoleBinding, Namespace
from runtime.machinery.patch import update_managed_fields
from runtime.machinery.patch.created import created_fields_v1
from runtime.machinery.patch.managed_fields import strip_meta
from runtime.machinery.patch.schema import SCALAR, UNTYPED, Field, ListNode, MapNode, Node, Struct, merge_node
from runtime.machinery.patch.walks import compare

#: A schema with every shape a walk tells apart (custom resources' structural schemas give these).
_ITEM = Struct("Item", {"name": Field(SCALAR), "port": Field(SCALAR), "value": Field(UNTYPED)})
_SHAPES = Struct("Shapes", {
    "metadata": Field(merge_node(ClusterRole).child("metadata").node),
    "spec": Field(Struct("Spec", {
        "set": Field(ListNode(SCALAR, "set")),
        "items": Field(ListNode(_ITEM, "map", ("name", "port"))),
        "atomic": Field(ListNode(_ITEM, "atomic")),
        "labels": Field(MapNode(SCALAR)),
        "frozen": Field(MapNode(SCALAR, atomic=True)),
        "nested": Field(Struct("Nested", {"inner": Field(SCALAR)}, atomic=True)),
    })),
})

_keys = st.sampled_from(["name", "port", "value", "a", "b", "set", "items", "atomic", "labels", "frozen",
                         "nested", "inner", "uid", "kind", "generation", "managedFields", "x.y/z"])
_scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a", "b", "get", "pods"])
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner,
                                                                                               max_size=4),
                       max_leaves=20)
_metadata = st.fixed_dictionaries({"name": st.just("n")}, optional={
    "labels": st.dictionaries(st.sampled_from(["a", "b", "x.y/z"]), st.sampled_from(["1", "2"]), max_size=3),
    "annotations": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["", "v"]), max_size=2),
    "uid": st.just("u"), "resourceVersion": st.just("1"), "generation": st.just(1),
    "finalizers": st.lists(st.sampled_from(["f/a", "f/b"]), max_size=3),
    "ownerReferences": st.lists(st.fixed_dictionaries({"uid": st.sampled_from(["1", "2"]), "name": st.just("o")}),
                                max_size=3),
    "extra": _values})


def _objects(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("K"), "metadata": _metadata},
                                 optional={**fields, "other": _values})


def _by_paths(obj: dict[str, Any], node: Node) -> str:
    """The general route: every path a create adds, less the never-owned ones, nested as FieldsV1."""
    return json.dumps(strip_meta(compare({}, obj, node).added).to_fields_v1())


def _walked(obj: dict[str, Any], node: Node) -> str:
    """The one walk's FieldsV1, as bytes (the order of entries is part of the answer)."""
    return json.dumps(created_fields_v1(obj, node))


_ROLE_RULES = st.lists(st.fixed_dictionaries({"verbs": st.lists(st.sampled_from(["get", "list"]), max_size=2)},
                                             optional={"apiGroups": st.lists(st.just(""), max_size=1),
                                                       "resources": st.lists(st.just("pods"), max_size=2)}),
                       max_size=3)
_SHAPES_SPEC = st.fixed_dictionaries({}, optional={
    "set": st.lists(_scalars, max_size=4),
    "items": st.lists(st.dictionaries(st.sampled_from(["name", "port", "value"]), _scalars, max_size=3), max_size=4),
    "atomic": st.lists(_values, max_size=3),
    "labels": st.dictionaries(st.sampled_from(["a", "b"]), _scalars, max_size=2),
    "frozen": st.dictionaries(st.sampled_from(["a", "b"]), _scalars, max_size=2),
    "nested": st.dictionaries(st.sampled_from(["inner", "a"]), _scalars, max_size=2),
}) | _values


@settings(max_examples=150, deadline=None)
@given(_objects(rules=_ROLE_RULES, aggregationRule=_values))
def test_create_fields_of_a_cluster_role_equal_the_path_route(obj: dict[str, Any]) -> None:
    assert _walked(obj, merge_node(ClusterRole)) == _by_paths(obj, merge_node(ClusterRole))


@settings(max_examples=150, deadline=None)
@given(_objects(spec=_SHAPES_SPEC))
def test_create_fields_of_every_list_and_map_shape_equal_the_path_route(obj: dict[str, Any]) -> None:
    assert _walked(obj, _SHAPES) == _by_paths(obj, _SHAPES)


@settings(max_examples=100, deadline=None)
@given(_objects(subjects=_values, roleRef=_values, spec=_values, status=_values))
def test_create_fields_of_other_kinds_equal_the_path_route(obj: dict[str, Any]) -> None:
    for model in (ClusterRoleBinding, Namespace):
        assert _walked(obj, merge_node(model)) == _by_paths(obj, merge_node(model))


def test_create_records_one_update_entry_with_the_fields_it_sets() -> None:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "uid": "u", "labels": {"a": "1"}},
           "spec": {"finalizers": ["kubernetes"]}}
    created = update_managed_fields(None, obj, manager="m", model=Namespace, api_version="v1", now="T")
    assert created["metadata"]["managedFields"] == [{
        "manager": "m", "operation": "Update", "apiVersion": "v1", "time": "T", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:finalizers": {}}}}]
    assert "managedFields" not in obj["metadata"]


def test_create_that_sets_only_never_owned_fields_records_no_entry() -> None:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "uid": "u", "managedFields": None}}
    created = update_managed_fields(None, obj, manager="m", model=Namespace, api_version="v1", now="T")
    assert "managedFields" not in created["metadata"]
