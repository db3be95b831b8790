"""Validation ratcheting of OpenAPI schema errors (Kubernetes 1.33): on update, an error on a value unchanged
from the old object is not reported; one rule per test (runtime.server.schema.ratcheting)."""

from runtime.server.schema import Structural, validate

OBJ = {"type": "object"}
SCHEMA = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": {
    "size": {"type": "integer", "maximum": 10},
    "color": {"type": "string", "enum": ["red", "blue"]},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {**OBJ, "required": ["name"], "properties": {
                  "name": {"type": "string"}, "port": {"type": "integer", "maximum": 65535}}}},
    "hosts": {"type": "array", "items": {"type": "string", "maxLength": 5}},
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 5}},
    "labels": {**OBJ, "additionalProperties": {"type": "string", "maxLength": 5}},
    "ratio": {"type": "number", "maximum": 1},
    "inner": {**OBJ, "required": ["must"], "properties": {"must": {"type": "string"}, "other": {"type": "string"}}},
}}}})


def _fields(spec, old_spec=None):
    old = None if old_spec is None else {"spec": old_spec}
    return [e.field for e in validate({"spec": spec}, SCHEMA, old=old)]


def test_ratcheting_an_unchanged_invalid_value_passes_an_update():
    old = {"size": 20, "color": "red"}
    assert _fields(old) == ["spec.size"]
    assert _fields({"size": 20, "color": "blue"}, old) == []


def test_ratcheting_a_changed_invalid_value_is_reported():
    assert _fields({"size": 30}, {"size": 20}) == ["spec.size"]


def test_ratcheting_a_value_the_old_object_lacked_is_reported():
    assert _fields({"size": 5, "color": "green"}, {"size": 5}) == ["spec.color"]


def test_ratcheting_compares_numbers_as_go_does_so_an_integer_turned_float_changed():
    assert _fields({"ratio": 2.0}, {"ratio": 2}) == ["spec.ratio"]


def test_ratcheting_correlates_map_list_items_by_their_keys_in_any_order():
    old = {"ports": [{"name": "a", "port": 70000}, {"name": "b", "port": 80}]}
    assert _fields({"ports": [{"name": "b", "port": 81}, {"name": "a", "port": 70000}]}, old) == []


def test_ratcheting_does_not_correlate_atomic_list_items():
    old = {"hosts": ["toolong", "ok"]}
    assert _fields({"hosts": ["toolong", "ok2"]}, old) == ["spec.hosts[0]"]
    assert _fields({"hosts": ["toolong", "ok"]}, old) == []  # the list itself is unchanged


def test_ratcheting_does_not_correlate_set_items():
    assert _fields({"tags": ["toolong", "new"]}, {"tags": ["toolong"]}) == ["spec.tags[0]"]


def test_ratcheting_correlates_map_values_by_key():
    assert _fields({"labels": {"a": "toolong", "b": "x"}}, {"labels": {"a": "toolong"}}) == []


def test_ratcheting_a_required_field_missing_from_a_changed_parent_is_reported():
    assert _fields({"inner": {"other": "y"}}, {"inner": {"other": "x"}}) == ["spec.inner.must"]
    assert _fields({"inner": {"other": "x"}, "size": 1}, {"inner": {"other": "x"}}) == []
