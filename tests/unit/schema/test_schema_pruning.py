"""Pruning drops undeclared fields and reports them in Kubernetes' words (ported from pruning/algorithm_test.go)."""

import json

import pytest

from runtime.server.schema import Structural, prune

OBJ = {"type": "object"}
PRESERVE = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

# (name, input, schema (None = nil), is_resource_root, expected object, expected pruned paths)
KUBE_TABLE = [
    ("scalar", 4, {}, False, 4, []),
    ("scalar array", [1, 2], {"items": {}}, False, [1, 2], []),
    ("object array", [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}],
     {"items": {"properties": {"a": {}, "c": {}}}}, False,
     [{"a": 1}, {}, {"a": 1, "c": 3}], ["[1].b", "[2].b"]),
    ("object array with nil schema", [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}], None, False,
     [{}, {}, {}], ["[0].a", "[1].b", "[2].a", "[2].b", "[2].c"]),
    ("object array object",
     {"array": [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}], "unspecified": {"a": 1},
      "specified": {"a": 1, "b": 2, "c": 3}},
     {"properties": {"array": {"items": {"properties": {"a": {}, "c": {}}}},
                     "specified": {"properties": {"a": {}, "c": {}}}}}, False,
     {"array": [{"a": 1}, {}, {"a": 1, "c": 3}], "specified": {"a": 1, "c": 3}},
     ["array[1].b", "array[2].b", "specified.b", "unspecified"]),
    ("additionalProperties with schema", {"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1}}},
     {"properties": {"a": {}, "c": {"additionalProperties": {"type": "integer"}}}}, False,
     {"a": 1, "c": {"a": 1, "b": 2, "c": {}}}, ["b", "c.c.a"]),
    ("additionalProperties with bool",
     {"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1, "apiVersion": "unknown"}}},
     {"properties": {"a": {}, "c": {"additionalProperties": False}}}, False,
     {"a": 1, "c": {"a": 1, "b": 2, "c": {}}}, ["b", "c.c.a", "c.c.apiVersion"]),
]

NESTED_PRESERVE_IN = {
    "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": {"unspecified": "bar"},
    "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"}, "pruning": {"unspecified": "bar"},
                "apiVersion": "unknown", "preserving": {"unspecified": "bar"}},
    "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                   "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"}},
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
        "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
    "preservingAdditionalPropertiesKeyPruneValues": {
        "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
}
NESTED_PRESERVE_SCHEMA = {**PRESERVE, "properties": {
    "alpha": {"type": "string"}, "beta": {"type": "number"},
    "pruning": {**OBJ, "properties": {"preserving": PRESERVE, "pruning": OBJ}},
    "preserving": {**PRESERVE, "properties": {"preserving": PRESERVE, "pruning": OBJ}},
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
        **PRESERVE, "additionalProperties": {**OBJ, "properties": {"specified": OBJ}}},
    "preservingAdditionalPropertiesKeyPruneValues": {
        **OBJ, "additionalProperties": {**OBJ, "properties": {"specified": OBJ}}},
}}
NESTED_PRESERVE_OUT = {
    "unspecified": "bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": {"unspecified": "bar"},
    "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
    "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"}, "pruning": {},
                   "preserving": {"unspecified": "bar"}},
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
    "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}},
}
NESTED_PRESERVE_PRUNED = [
    "preserving.pruning.unspecified", "preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
    "preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
    "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
    "pruning.apiVersion", "pruning.pruning.unspecified", "pruning.unspecified", "pruning.unspecifiedObject",
]


def _meta() -> dict:
    return {"name": "instance", "unspecified": "bar"}


def _embedded(inner_spec: dict | None = None) -> dict:
    return {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar", "metadata": _meta(),
            "spec": {"unspecified": "bar", **(inner_spec or {})}}


EMBEDDED_SCHEMA = {**OBJ, "properties": {
    "pruned": {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {"spec": OBJ}},
    "preserving": {**OBJ, "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
    "nested": {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {"spec": {**OBJ, "properties": {
        "embedded": {**OBJ, "x-kubernetes-embedded-resource": True, "properties": {"spec": OBJ}}}}}},
}}
EMBEDDED_PRUNED = ["nested.spec.embedded.spec.unspecified", "nested.spec.embedded.unspecified",
                   "nested.spec.unspecified", "nested.unspecified", "pruned.spec.unspecified", "pruned.unspecified",
                   "unspecified"]


def _embedded_input() -> dict:
    return {"apiVersion": "foo/v1", "kind": "Foo", "metadata": _meta(), "unspecified": "bar",
            "pruned": _embedded(), "preserving": _embedded(), "nested": _embedded({"embedded": _embedded()})}


def _embedded_output(root: bool) -> dict:
    kept = {"apiVersion": "foo/v1", "kind": "Foo", "metadata": _meta()}
    out = {"pruned": {**kept, "spec": {}}, "preserving": _embedded(),
           "nested": {**kept, "spec": {"embedded": {**kept, "spec": {}}}}}
    return {**kept, **out} if root else out


@pytest.mark.parametrize("name,given,schema,root,expected,paths", KUBE_TABLE, ids=[t[0] for t in KUBE_TABLE])
def test_prune_matches_kubernetes_table(name, given, schema, root, expected, paths):
    structural = None if schema is None else Structural.from_openapi(schema)
    assert prune(given, structural, is_resource_root=root) == (expected, paths)


def test_prune_keeps_unknown_fields_under_preserve_unknown_fields_but_prunes_declared_children():
    assert prune(NESTED_PRESERVE_IN, Structural.from_openapi(NESTED_PRESERVE_SCHEMA), is_resource_root=False) \
        == (NESTED_PRESERVE_OUT, NESTED_PRESERVE_PRUNED)


@pytest.mark.parametrize("root", [False, True])
def test_prune_keeps_apiversion_kind_metadata_of_embedded_resources(root):
    out, paths = prune(_embedded_input(), Structural.from_openapi(EMBEDDED_SCHEMA), is_resource_root=root)
    assert out == _embedded_output(root)
    assert paths == EMBEDDED_PRUNED


def test_prune_keeps_root_apiversion_kind_metadata_without_reporting_them():
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": OBJ}})
    obj = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": {"foo": 1}, "status": {}}
    out, paths = prune(obj, schema)
    assert out == {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": {}}
    assert paths == ["spec.foo", "status"]


def test_prune_paths_are_the_words_of_unknown_field_errors():
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": {
        "list": {"type": "array", "items": {**OBJ, "properties": {"a": {"type": "string"}}}}}}}})
    _, paths = prune({"spec": {"list": [{"a": "x"}, {"a": "y", "b": 1}], "foo": 1}}, schema)
    assert [f'unknown field "{p}"' for p in paths] == ['unknown field "spec.foo"', 'unknown field "spec.list[1].b"']


def test_prune_never_modifies_its_input():
    given = {"spec": {"foo": 1}}
    before = json.dumps(given)
    prune(given, Structural.from_openapi({**OBJ, "properties": {"spec": OBJ}}))
    assert json.dumps(given) == before
