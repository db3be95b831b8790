"""OpenAPI value validation reports kube-openapi's messages with apiextensions' field errors."""

import pytest

from runtime.server.schema import Structural, validate

OBJ = {"type": "object"}


def _errors(prop: dict, value, *, required: list | None = None) -> list[str]:
    spec = {**OBJ, "properties": {"x": prop}}
    if required:
        spec["required"] = required
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": spec}})
    return [str(e) for e in validate({"spec": {"x": value} if value is not ... else {}}, schema)]


def test_wrong_type_is_type_invalid_naming_the_json_type():
    assert _errors({"type": "integer"}, "string") == [
        'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"']


def test_object_for_a_string_names_object():
    assert _errors({"type": "string"}, {"a": 1}) == [
        'spec.x: Invalid value: "object": spec.x in body must be of type string: "object"']


def test_null_for_a_non_nullable_field():
    assert _errors({"type": "string"}, None) == [
        'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"']


def test_null_for_a_nullable_field_is_valid():
    assert _errors({"type": "string", "nullable": True}, None) == []


def test_integer_is_a_number_and_integral_float_an_integer():
    assert _errors({"type": "number"}, 3) == []
    assert _errors({"type": "integer"}, 3.0) == []
    assert _errors({"type": "integer"}, 3.5) == [
        'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"']


def test_boolean_is_not_a_number():
    assert _errors({"type": "integer"}, True) == [
        'spec.x: Invalid value: "boolean": spec.x in body must be of type integer: "boolean"']


def test_int_or_string_accepts_both_and_rejects_others():
    ios = {"x-kubernetes-int-or-string": True}
    assert _errors(ios, 1) == [] and _errors(ios, "50%") == []
    assert _errors(ios, True) == [
        'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"']


def test_required_field_missing():
    assert _errors({"type": "string"}, ..., required=["x"]) == ["spec.x: Required value"]


def test_enum():
    assert _errors({"type": "string", "enum": ["a", "b"]}, "c") == [
        'spec.x: Unsupported value: "c": supported values: "a", "b"']
    assert _errors({"type": "integer", "enum": [1, 2]}, 3) == ['spec.x: Unsupported value: 3: supported values: "1", "2"']


def test_max_length_counts_characters_not_bytes():
    assert _errors({"type": "string", "maxLength": 3}, "héé") == []
    assert _errors({"type": "string", "maxLength": 3}, "abcd") == ["spec.x: Too long: may not be more than 3 bytes"]


def test_min_length():
    assert _errors({"type": "string", "minLength": 2}, "a") == [
        'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long']


def test_pattern_is_searched_not_matched():
    assert _errors({"type": "string", "pattern": "b"}, "abc") == []
    assert _errors({"type": "string", "pattern": "^[a-z]+$"}, "ab1") == [
        "spec.x: Invalid value: \"ab1\": spec.x in body should match '^[a-z]+$'"]


def test_only_the_first_string_failure_is_reported():
    assert _errors({"type": "string", "maxLength": 1, "pattern": "^z$"}, "ab") == [
        "spec.x: Too long: may not be more than 1 byte"]


def test_minimum_and_maximum():
    assert _errors({"type": "integer", "minimum": 1}, 0) == [
        "spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"]
    assert _errors({"type": "integer", "maximum": 10, "exclusiveMaximum": True}, 10) == [
        "spec.x: Invalid value: 10: spec.x in body should be less than 10"]
    assert _errors({"type": "number", "minimum": 0.5, "exclusiveMinimum": True}, 0.5) == [
        "spec.x: Invalid value: 0.5: spec.x in body should be greater than 0.5"]


def test_multiple_of():
    assert _errors({"type": "integer", "multipleOf": 3}, 9) == []
    assert _errors({"type": "integer", "multipleOf": 3}, 10) == [
        "spec.x: Invalid value: 10: spec.x in body should be a multiple of 3"]
    assert _errors({"type": "number", "multipleOf": 0.5}, 1.5) == []


def test_min_items_and_max_items():
    arr = {"type": "array", "items": {"type": "integer"}}
    assert _errors({**arr, "minItems": 2}, [1]) == ["spec.x: Invalid value: 1: spec.x in body should have at least 2 items"]
    assert _errors({**arr, "maxItems": 1}, [1, 2]) == ["spec.x: Too many: 2: must have at most 1 items"]


def test_unique_items():
    arr = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert _errors(arr, [1, 1]) == ['spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates']


def test_item_errors_are_indexed():
    arr = {"type": "array", "items": {"type": "integer"}}
    assert _errors(arr, [1, "a"]) == [
        'spec.x[1]: Invalid value: "string": spec.x[1] in body must be of type integer: "string"']


def test_min_and_max_properties():
    m = {**OBJ, "additionalProperties": {"type": "string"}}
    assert _errors({**m, "minProperties": 2}, {"a": "b"}) == [
        "spec.x: Invalid value: 1: spec.x in body should have at least 2 properties"]
    assert _errors({**m, "maxProperties": 1}, {"a": "b", "c": "d"}) == ["spec.x: Too many: 2: must have at most 1 items"]


def test_additional_properties_values_are_named_with_dots():
    m = {**OBJ, "additionalProperties": {"type": "string"}}
    assert _errors(m, {"k": 1}) == [
        'spec.x.k: Invalid value: "integer": spec.x.k in body must be of type string: "integer"']


def test_any_of_summary_has_no_field():
    prop = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True, "maximum": 5}
    assert _errors(prop, 3) == []
    errors = _errors({"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]}, "c")
    assert errors[0] == '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)'


def test_one_of_and_not():
    assert _errors({"type": "string", "oneOf": [{"pattern": "a"}, {"pattern": "b"}]}, "ab")[0] == (
        '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives')
    assert _errors({"type": "string", "not": {"pattern": "a"}}, "a") == [
        '<nil>: Invalid value: "": "spec.x" must not validate the schema (not)']


def test_root_required_is_a_bare_field_name():
    schema = Structural.from_openapi({**OBJ, "required": ["spec"], "properties": {"spec": OBJ}})
    assert [str(e) for e in validate({}, schema)] == ["spec: Required value"]


@pytest.mark.parametrize("fmt,good,bad", [
    ("date-time", "2020-01-02T03:04:05Z", "2020-01-02"),
    ("date", "2020-02-29", "2021-02-29"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", "xyz"),
    ("ipv4", "10.0.0.1", "10.0.0"),
    ("ipv6", "::1", "10.0.0.1"),
    ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
    ("email", "a@example.com", "not-an-email"),
    ("hostname", "example.com", "-bad-.com"),
    ("byte", "aGVsbG8=", "not base64!"),
    ("duration", "1h30m", "an hour"),
    ("mac", "01:23:45:67:89:ab", "01:23"),
    ("uri", "https://example.com/x", "not a uri"),
])
def test_formats_kubernetes_validates(fmt, good, bad):
    prop = {"type": "string", "format": fmt}
    assert _errors(prop, good) == []
    assert _errors(prop, bad) == [
        f'spec.x: Invalid value: "{bad}": spec.x in body must be of type {fmt}: "{bad}"']


def test_unknown_formats_and_numeric_formats_validate_nothing():
    assert _errors({"type": "string", "format": "color-of-the-sky"}, "blue") == []
    assert _errors({"type": "integer", "format": "int32"}, 2 ** 40) == []
