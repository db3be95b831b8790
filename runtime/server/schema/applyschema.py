"""Merge schema of a custom kind for server-side apply (`runtime.machinery.patch.schema` nodes).

`schema_node(structural, metadata=)` turns a structural schema into the
node tree the patch engines read for built-in kinds (`schema_for(model)`),
so server-side apply, strategic-merge-free merges and managed fields work
for custom objects unchanged:

- an object with `properties` is a `Struct` (atomic under
  `x-kubernetes-map-type: atomic`); undeclared keys are `UNTYPED` (what
  preserve-unknown-fields keeps);
- an object with an additionalProperties schema is a `MapNode`;
- an array is a `ListNode` with its `x-kubernetes-list-type` (default
  `atomic`) and `x-kubernetes-list-map-keys`;
- scalars and int-or-string are `SCALAR`; a node without a type
  (preserve-unknown-fields) is `UNTYPED`;
- `metadata` at the root and in embedded resources is the `metadata` node
  given (the caller passes `schema_for(ObjectMeta)`), else `UNTYPED`.

Trees are built once per schema (cached by node identity).

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import functools

from runtime.machinery.patch.schema import SCALAR, UNTYPED, Field, ListNode, MapNode, Node, Struct
from runtime.server.schema.structural.schema import Structural

__all__ = ["schema_node"]


def schema_node(structural: Structural, *, metadata: Node = UNTYPED, name: str = "CustomResource") -> Node:
    """The patch-engine node of `structural` (see the module docstring)."""
    return _cached(structural, metadata, name)


@functools.lru_cache(maxsize=256)
def _cached(structural: Structural, metadata: Node, name: str) -> Node:
    return _node(structural, metadata, name, is_resource=True)


def _node(s: Structural, metadata: Node, name: str, *, is_resource: bool = False) -> Node:
    atomic = s.x_map_type == "atomic"
    if s.type == "array":
        item = _node(s.items, metadata, name) if s.items is not None else UNTYPED
        return ListNode(item, s.x_list_type or "atomic", s.x_list_map_keys)
    if s.x_int_or_string or s.type in ("string", "integer", "number", "boolean"):
        return SCALAR
    if s.type == "object" or s.properties or s.additional_schema is not None:
        if s.additional_schema is not None and not s.properties:
            return MapNode(_node(s.additional_schema, metadata, name), atomic=atomic)
        struct = Struct(name, atomic=atomic)
        for key, prop in s.properties.items():
            struct.fields[key] = Field(_node(prop, metadata, name, is_resource=prop.x_embedded_resource))
        if is_resource or s.x_embedded_resource:
            struct.fields["metadata"] = Field(metadata)
            struct.fields.setdefault("apiVersion", Field(SCALAR))
            struct.fields.setdefault("kind", Field(SCALAR))
        return struct
    return UNTYPED
