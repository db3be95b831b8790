"""JSON and admission policies' CEL values (`runtime.server.admission.policies.values`): the `Object{}` and
`JSONPatch{}` literals cel-python is given, kube's type-name check, `jsonpatch.escapeKey`; one test per rule."""

from __future__ import annotations

import pytest

from runtime.server.admission.policies.expressions import Budget, Scope, compile_cel
from runtime.server.admission.policies.mutator import MUTATION_INPUTS
from runtime.server.admission.policies.values import JSONPatchValue, ObjectValue, to_cel, to_json, type_mismatches


def run(text: str) -> object:
    return Scope(dict(MUTATION_INPUTS), {}).run(compile_cel(text), Budget())


def test_an_object_literal_is_a_map_of_the_fields_set_with_its_type_name():
    value = run("Object{spec: Object.spec{replicas: 3, template: Object.spec.template{}}}")
    assert isinstance(value, ObjectValue) and value.type_name == "Object"
    assert to_json(value) == {"spec": {"replicas": 3, "template": {}}}


def test_type_names_must_follow_the_field_path():
    value = run("Object{spec: Object.specx{replicas: 1}}")
    assert type_mismatches(value) == ['unexpected type name "Object.specx", expected "Object.spec", which matches '
                                      "field name path from root Object type"]


def test_list_items_take_the_type_name_of_their_list_field():
    value = run("Object{spec: Object.spec{containers: [Object.spec.containers{name: 'a'}]}}")
    assert type_mismatches(value) == []


def test_a_json_patch_literal_carries_op_path_and_value():
    value = run('[JSONPatch{op: "add", path: "/metadata/labels/a", value: "b"}]')
    assert isinstance(value[0], JSONPatchValue)  # type: ignore[index]
    assert to_json(value) == [{"op": "add", "path": "/metadata/labels/a", "value": "b"}]


def test_escape_key_escapes_tilde_then_slash():
    assert run('jsonpatch.escapeKey("example.com/a~b")') == "example.com~1a~0b"


def test_json_round_trips_through_cel():
    doc = {"a": [1, 2.5, "x", True, None], "b": {"c": {}}}
    assert to_json(to_cel(doc)) == doc


def test_bytes_have_no_json_form():
    with pytest.raises(ValueError):
        to_json(run("b'abc'"))
