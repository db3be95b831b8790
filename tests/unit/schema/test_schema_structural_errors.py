"""structural_errors: the CRD schema rules, with Kubernetes' field paths and words."""

import pytest

from runtime.server.schema import structural_errors

OBJ = {"type": "object"}
P = "openAPIV3Schema"


def _spec(prop: dict) -> dict:
    return {**OBJ, "properties": {"spec": {**OBJ, "properties": {"x": prop}}}}


X = f"{P}.properties[spec].properties[x]"


def test_a_structural_schema_has_no_errors():
    assert structural_errors(_spec({"type": "array", "items": {"type": "string"}})) == []


def test_every_field_needs_a_type():
    assert structural_errors(_spec({"description": "d"})) == [
        (f"{X}.type", "Required value: must not be empty for specified object fields")]


def test_array_items_need_a_type_and_arrays_need_items():
    assert structural_errors(_spec({"type": "array", "items": {}})) == [
        (f"{X}.items.type", "Required value: must not be empty for specified array items")]
    assert structural_errors(_spec({"type": "array"})) == [(f"{X}.items", "Required value: must be specified")]


def test_root_must_be_an_object_with_a_type():
    assert structural_errors({}) == [(f"{P}.type", "Required value: must not be empty at the root")]
    assert structural_errors({"type": "string"}) == [(f"{P}.type", 'Invalid value: "string": must be object at the root')]


def test_int_or_string_and_preserve_unknown_fields_need_no_type():
    assert structural_errors(_spec({"x-kubernetes-int-or-string": True})) == []
    assert structural_errors(_spec({"x-kubernetes-preserve-unknown-fields": True})) == []


@pytest.mark.parametrize("keyword,value,message", [
    ("$ref", "#/definitions/x", "Forbidden: $ref is not supported"),
    ("id", "x", "Forbidden: id is not supported"),
    ("additionalItems", False, "Forbidden: additionalItems is not supported"),
    ("patternProperties", {"^a": {"type": "string"}}, "Forbidden: patternProperties is not supported"),
    ("definitions", {"a": {"type": "string"}}, "Forbidden: definitions is not supported"),
    ("dependencies", {"a": ["b"]}, "Forbidden: dependencies is not supported"),
    ("$schema", "http://json-schema.org/draft-04/schema#", "Forbidden: $schema is not supported"),
    ("uniqueItems", True, "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
])
def test_forbidden_keywords(keyword, value, message):
    assert (f"{X}.{keyword}", message) in structural_errors(_spec({"type": "object", keyword: value}))


def test_type_null_is_forbidden():
    assert (f"{X}.type", "Forbidden: type cannot be set to null, use nullable as an alternative") in \
        structural_errors(_spec({"type": "null"}))


def test_properties_and_additional_properties_are_exclusive():
    assert (f"{X}.additionalProperties", "Forbidden: additionalProperties and properties are mutual exclusive") in \
        structural_errors(_spec({**OBJ, "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}))


def test_additional_properties_forbidden_at_the_root():
    assert (f"{P}.additionalProperties", "Forbidden: must not be used at the root") in \
        structural_errors({**OBJ, "additionalProperties": {"type": "string"}})


def test_root_metadata_may_only_restrict_name_and_generate_name():
    assert structural_errors({**OBJ, "properties": {"metadata": {**OBJ, "properties": {
        "name": {"type": "string", "maxLength": 10}}}}}) == []
    assert structural_errors({**OBJ, "properties": {"metadata": {**OBJ, "properties": {
        "labels": {**OBJ, "additionalProperties": {"type": "string"}}}}}}) == [
        (f"{P}.properties[metadata]", ("Forbidden: must not specify anything other than name and generateName, "
                                      "but metadata is implicitly specified"))]


def test_no_default_in_top_level_metadata():
    errors = structural_errors({**OBJ, "properties": {"metadata": {**OBJ, "default": {}}}})
    assert (f"{P}.properties[metadata].default", "Forbidden: must not be set in top-level metadata") in errors


def test_value_validations_may_not_carry_structure():
    errors = structural_errors(_spec({"type": "string", "anyOf": [{"type": "string", "description": "d"}]}))
    assert (f"{X}.anyOf[0].type", "Forbidden: must be empty to be structural") in errors
    assert (f"{X}.anyOf[0].description", "Forbidden: must be empty to be structural") in errors


def test_int_or_string_any_of_pattern_is_allowed():
    assert structural_errors(_spec({"x-kubernetes-int-or-string": True,
                                    "anyOf": [{"type": "integer"}, {"type": "string"}]})) == []


def test_value_validation_fields_must_exist_in_the_structure():
    errors = structural_errors(_spec({**OBJ, "allOf": [{"properties": {"y": {"maxLength": 1}}}]}))
    assert errors == [(f"{X}.properties[y]", f"Required value: because it is defined in {X}.allOf[0].properties[y]")]


def test_pattern_must_compile_as_go_regexp():
    assert structural_errors(_spec({"type": "string", "pattern": "^(?!a)"})) == [
        (f"{X}.pattern", ("Invalid value: \"^(?!a)\": must be a valid regular expression, but isn't: "
                         "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"))]


def test_list_map_keys_must_be_required_scalar_properties():
    base = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    assert structural_errors(_spec({**base, "items": {**OBJ, "required": ["name"],
                                                       "properties": {"name": {"type": "string"}}}})) == []
    assert structural_errors(_spec({**base, "items": {**OBJ, "properties": {"name": {"type": "string"}}}})) == [
        (f"{X}.items.properties[name].default", ("Required value: this property is in x-kubernetes-list-map-keys, "
                                                "so it must have a default or be a required property"))]
    assert (f"{X}.x-kubernetes-list-map-keys", 'Invalid value: ["name"]: entries must all be names of item properties') \
        in structural_errors(_spec({**base, "items": {**OBJ, "properties": {"id": {"type": "string"}}}}))


def test_list_type_values_and_map_keys_need_map():
    assert (f"{X}.x-kubernetes-list-type", 'Unsupported value: "bag": supported values: "atomic", "set", "map"') in \
        structural_errors(_spec({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}))
    assert (f"{X}.x-kubernetes-list-type", "Required value: must be map if x-kubernetes-list-map-keys is non-empty") in \
        structural_errors(_spec({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["a"]}))
    assert (f"{X}.type", 'Invalid value: "string": must be object if x-kubernetes-map-type is specified') in \
        structural_errors(_spec({"type": "string", "x-kubernetes-map-type": "atomic"}))


def test_embedded_resource_must_be_an_object():
    assert (f"{X}.type", 'Invalid value: "string": must be object if x-kubernetes-embedded-resource is true') in \
        structural_errors(_spec({"type": "string", "x-kubernetes-embedded-resource": True}))


def test_preserve_unknown_fields_false_is_invalid():
    assert (f"{X}.x-kubernetes-preserve-unknown-fields", "Invalid value: false: must be true or undefined") in \
        structural_errors(_spec({"type": "object", "x-kubernetes-preserve-unknown-fields": False}))


def test_defaults_must_be_pruned():
    assert structural_errors(_spec({**OBJ, "properties": {"a": {"type": "string"}}, "default": {"b": 1}})) == [
        (f"{X}.default", 'Invalid value: {"b":1}: must not have unknown fields')]


def test_defaults_must_validate():
    assert structural_errors(_spec({"type": "integer", "maximum": 3, "default": 5})) == [
        (f"{X}.default", "Invalid value: 5:  in body should be less than or equal to 3")]


def test_cel_rules_must_compile():
    errors = structural_errors(_spec({**OBJ, "x-kubernetes-validations": [{"rule": "self.a >"}]}))
    assert len(errors) == 1 and errors[0][0] == f"{X}.x-kubernetes-validations[0].rule"
    assert errors[0][1].startswith('Invalid value: {"rule":"self.a >"}: compilation failed: Syntax error')


def test_rule_checks():
    errors = structural_errors(_spec({**OBJ, "x-kubernetes-validations": [
        {"rule": " "}, {"rule": "true", "reason": "Nope"}, {"rule": "true", "fieldPath": ".missing"}]}))
    assert (f"{X}.x-kubernetes-validations[0].rule", "Required value: rule is not specified") in errors
    assert (f"{X}.x-kubernetes-validations[1].reason", ('Unsupported value: "Nope": supported values: '
            '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"')) in errors
    assert (f"{X}.x-kubernetes-validations[2].fieldPath", 'Invalid value: ".missing": fieldPath must be a valid path') \
        in errors


def test_old_self_only_where_old_values_correlate():
    item = {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
    assert structural_errors(_spec({"type": "array", "items": item})) == [
        (f"{X}.items.x-kubernetes-validations[0].rule",
         f'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within {X}')]
