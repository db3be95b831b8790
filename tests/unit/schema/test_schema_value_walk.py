"""The one walk of a value under its structural schema (`value_children`), and the DNS-1035 rule of embedded kinds."""

from runtime.schema.embedded import embedded_resource_errors
from runtime.schema.structural import Structural, value_children
from runtime.validation.names import dns1035_label_errors


def test_the_walk_names_each_declared_part_by_its_field_path():
    s = Structural.from_openapi({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"ports": {"type": "array", "items": {"type": "integer"}}},
                 "additionalProperties": False},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}}})
    obj = {"spec": {"ports": [1, 2]}, "labels": {"a": "b"}, "other": 1}
    top = [(where, value) for value, _, where in value_children(obj, s, "")]
    assert top == [("spec", {"ports": [1, 2]}), ("labels", {"a": "b"})]  # "other" is undeclared
    spec = s.properties["spec"]
    ports = [where for _, _, where in value_children(obj["spec"], spec, "spec")]
    assert ports == ["spec.ports"]
    assert [w for _, _, w in value_children([1, 2], spec.properties["ports"], "spec.ports")] == \
        ["spec.ports[0]", "spec.ports[1]"]
    assert [w for _, _, w in value_children({"a": "b"}, s.properties["labels"], "labels")] == ["labels[a]"]


def test_a_kind_is_a_dns1035_label_as_go_matches_it_not_before_a_trailing_newline():
    assert dns1035_label_errors("web") == []
    assert dns1035_label_errors("web\n") != []
    errors = embedded_resource_errors({"apiVersion": "v1", "kind": "Web\n"}, "spec.x")
    assert [e.field for e in errors] == ["spec.x.kind"]
