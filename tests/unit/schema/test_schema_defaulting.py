"""Defaulting applies `default` as Kubernetes does on decode (structuraldefaulting.Default)."""

from runtime.server.schema import Structural, apply_defaults

OBJ = {"type": "object"}


def _schema(props: dict, **extra) -> Structural:
    return Structural.from_openapi({**OBJ, "properties": props, **extra})


def test_missing_property_gets_its_default():
    s = _schema({"spec": {**OBJ, "properties": {"replicas": {"type": "integer", "default": 1}}}})
    assert apply_defaults({"spec": {}}, s) == {"spec": {"replicas": 1}}


def test_present_property_keeps_its_value():
    s = _schema({"spec": {**OBJ, "properties": {"replicas": {"type": "integer", "default": 1}}}})
    assert apply_defaults({"spec": {"replicas": 5}}, s) == {"spec": {"replicas": 5}}


def test_missing_parent_is_not_created_without_its_own_default():
    s = _schema({"spec": {**OBJ, "properties": {"replicas": {"type": "integer", "default": 1}}}})
    assert apply_defaults({}, s) == {}


def test_defaults_apply_inside_a_defaulted_object():
    s = _schema({"spec": {**OBJ, "default": {}, "properties": {"replicas": {"type": "integer", "default": 1}}}})
    assert apply_defaults({}, s) == {"spec": {"replicas": 1}}


def test_null_of_non_nullable_field_with_default_is_defaulted():
    s = _schema({"a": {"type": "string", "default": "x"}})
    assert apply_defaults({"a": None}, s) == {"a": "x"}


def test_null_of_nullable_field_is_kept():
    s = _schema({"a": {"type": "string", "nullable": True, "default": "x"}})
    assert apply_defaults({"a": None}, s) == {"a": None}


def test_null_of_non_nullable_field_without_default_is_dropped():
    s = _schema({"a": {"type": "string"}, "b": {"type": "string", "nullable": True}})
    assert apply_defaults({"a": None, "b": None}, s) == {"b": None}


def test_defaults_under_items():
    s = _schema({"l": {"type": "array", "items": {**OBJ, "properties": {"p": {"type": "integer", "default": 80}}}}})
    assert apply_defaults({"l": [{}, {"p": 1}]}, s) == {"l": [{"p": 80}, {"p": 1}]}


def test_null_item_becomes_the_items_default():
    s = _schema({"l": {"type": "array", "items": {"type": "string", "default": "d"}}})
    assert apply_defaults({"l": ["a", None]}, s) == {"l": ["a", "d"]}


def test_defaults_under_additional_properties():
    s = _schema({"m": {**OBJ, "additionalProperties": {**OBJ, "properties": {"v": {"type": "string", "default": "z"}}}}})
    assert apply_defaults({"m": {"a": {}, "b": {"v": "y"}}}, s) == {"m": {"a": {"v": "z"}, "b": {"v": "y"}}}


def test_null_map_value_becomes_the_additional_properties_default():
    s = _schema({"m": {**OBJ, "additionalProperties": {"type": "string", "default": "z"}}})
    assert apply_defaults({"m": {"a": None}}, s) == {"m": {"a": "z"}}


def test_default_is_a_copy_never_shared_between_objects():
    s = _schema({"spec": {**OBJ, "properties": {"l": {"type": "array", "items": {"type": "string"}, "default": []}}}})
    first = apply_defaults({"spec": {}}, s)
    first["spec"]["l"].append("x")
    assert apply_defaults({"spec": {}}, s) == {"spec": {"l": []}}


def test_apply_defaults_never_modifies_its_input():
    s = _schema({"a": {"type": "string", "default": "x"}})
    given = {}
    apply_defaults(given, s)
    assert given == {}
