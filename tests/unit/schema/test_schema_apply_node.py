"""Merge markers of custom kinds: Structural.merge_info and the server-side apply node tree."""

from runtime.machinery.patch.apply import server_side_apply
from runtime.machinery.patch.schema import UNTYPED, ListNode, MapNode, Struct
from runtime.server.schema import Structural, schema_node

OBJ = {"type": "object"}
SCHEMA = Structural.from_openapi({**OBJ, "properties": {"spec": {**OBJ, "properties": {
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {**OBJ, "required": ["name"], "properties": {"name": {"type": "string"},
                                                                    "port": {"type": "integer"}}}},
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "labels": {**OBJ, "additionalProperties": {"type": "string"}},
    "selector": {**OBJ, "x-kubernetes-map-type": "atomic", "properties": {"a": {"type": "string"}}},
    "free": {"x-kubernetes-preserve-unknown-fields": True},
}}}})


def test_merge_info_of_any_field_path():
    assert SCHEMA.merge_info("spec.ports").list_type == "map"
    assert SCHEMA.merge_info(("spec", "ports")).map_keys == ("name",)
    assert SCHEMA.merge_info("spec.tags").list_type == "set"
    assert SCHEMA.merge_info("spec.selector").map_type == "atomic"
    assert SCHEMA.merge_info("spec.nothing").list_type == ""
    assert SCHEMA.at(("spec", "ports", 0, "port")).type == "integer"


def test_schema_node_has_the_apply_engines_shape():
    root = schema_node(SCHEMA)
    spec = root.child("spec").node
    assert isinstance(root, Struct) and isinstance(spec, Struct)
    ports = spec.child("ports").node
    assert isinstance(ports, ListNode) and ports.list_type == "map" and ports.map_keys == ("name",)
    assert spec.child("tags").node.list_type == "set"
    assert isinstance(spec.child("labels").node, MapNode)
    assert spec.child("selector").node.atomic
    assert spec.child("free").node is UNTYPED
    assert schema_node(SCHEMA) is root


def test_server_side_apply_merges_a_custom_map_list_by_key():
    node = schema_node(SCHEMA)
    live = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
            "spec": {"ports": [{"name": "http", "port": 80}]}}
    first = server_side_apply(None, live, manager="one", model=node, force=False, api_version="x/v1", kind="X",
                              now="2024-01-01T00:00:00Z")
    applied = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
               "spec": {"ports": [{"name": "https", "port": 443}]}}
    merged = server_side_apply(first, applied, manager="two", model=node, force=False, api_version="x/v1", kind="X",
                               now="2024-01-01T00:00:00Z")
    assert [p["name"] for p in merged["spec"]["ports"]] == ["http", "https"]
