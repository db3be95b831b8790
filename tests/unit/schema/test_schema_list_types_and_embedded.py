"""List-type set/map uniqueness and embedded resources' apiVersion/kind/metadata."""

from runtime.server.schema import Structural, validate

OBJ = {"type": "object"}


def _errors(prop: dict, value) -> list[str]:
    schema = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": {"x": prop}}}})
    return [str(e) for e in validate({"spec": {"x": value}}, schema)]


def test_set_list_duplicates_are_reported_at_each_copy():
    s = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    assert _errors(s, ["a", "b", "a"]) == ['spec.x[2]: Duplicate value: "a"']


def test_map_list_duplicate_key():
    s = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
         "items": {**OBJ, "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}}
    assert _errors(s, [{"name": "a", "v": 1}, {"name": "a", "v": 2}]) == ['spec.x[1]: Duplicate value: "a"']


def test_map_list_with_two_keys_reports_the_key_object():
    s = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
         "items": {**OBJ, "properties": {"name": {"type": "string"}, "proto": {"type": "string"}}}}
    assert _errors(s, [{"name": "a", "proto": "TCP"}, {"name": "a", "proto": "UDP"}]) == []
    assert _errors(s, [{"name": "a", "proto": "TCP"}, {"name": "a", "proto": "TCP"}]) == [
        'spec.x[1]: Duplicate value: {"name":"a","proto":"TCP"}']


def test_atomic_list_may_repeat():
    assert _errors({"type": "array", "items": {"type": "string"}}, ["a", "a"]) == []


EMBEDDED = {**OBJ, "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}


def test_embedded_resource_needs_api_version_and_kind():
    assert _errors(EMBEDDED, {}) == ["spec.x.apiVersion: Required value: must not be empty",
                                     "spec.x.kind: Required value: must not be empty"]


def test_embedded_resource_kind_and_api_version_are_checked():
    errors = _errors(EMBEDDED, {"apiVersion": "a/b/c", "kind": "Not_A_Kind"})
    assert errors[0] == 'spec.x.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'
    assert errors[1].startswith('spec.x.kind: Invalid value: "Not_A_Kind": may have mixed case, but should otherwise '
                                "match: a DNS-1035 label must consist of lower case")


def test_embedded_resource_metadata_is_object_meta():
    errors = _errors(EMBEDDED, {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"a": "-bad-"}}})
    assert len(errors) == 1 and errors[0].startswith('spec.x.metadata.labels: Invalid value: "-bad-"')


def test_valid_embedded_resource():
    assert _errors(EMBEDDED, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}}) == []
