"""The merge schema of a kind, derived from its pydantic model.

`schema_for(model)` walks `model_fields` (unwrapping Optional, list and dict
annotations, naming fields by their JSON alias) and reads the
`x-kubernetes-*` markers that `runtime.models.base.list_field`/`map_field`
put in `json_schema_extra`. The result is a tree of nodes the engines share:

- `Struct`: named fields, each a `Field` (its node plus the strategic-merge
  markers `x-kubernetes-patch-strategy`/`x-kubernetes-patch-merge-key`);
  atomic when the field or the model says `x-kubernetes-map-type: atomic` (the field's `granular`
  overrides an atomic model's).
- `ListNode`: `list_type` atomic | set | map, with `map_keys` for map lists.
- `MapNode`: a string-keyed map (`dict[str, X]`), granular unless atomic.
- `Scalar`: a leaf.
- `UNTYPED`: anything the model does not describe (unknown fields, `Any`).
  Engines treat it as Kubernetes treats unknown fields: objects merge key by
  key, lists are replaced whole (atomic), scalars are leaves.

Nodes are plain values, built once per model and cached.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field as dc_field, replace
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from runtime.models.base import UNDECLARED_LIST_TYPE

__all__ = [
    "Node", "Scalar", "Struct", "ListNode", "MapNode", "Untyped", "Field",
    "SCALAR", "UNTYPED", "UNTYPED_FIELD", "schema_for", "merge_node", "node_for_annotation",
]


class Node:
    """Base of schema nodes."""

    def child(self, key: str) -> "Field":
        """The child reached by object key `key` (untyped if not described)."""
        return UNTYPED_FIELD


class Scalar(Node):
    """A leaf value (string, number, boolean)."""

    def __repr__(self) -> str:
        return "Scalar"


class Untyped(Node):
    """A value the schema does not describe: maps merge per key, lists are atomic."""

    def __repr__(self) -> str:
        return "Untyped"


SCALAR = Scalar()
UNTYPED = Untyped()


@dataclass(frozen=True)
class Field:
    """A child node with the strategic-merge markers declared on its field."""

    node: Node
    patch_strategies: frozenset[str] = frozenset()
    patch_merge_key: str = ""


UNTYPED_FIELD = Field(UNTYPED)


@dataclass(eq=False, repr=False)
class Struct(Node):
    """An object with named fields (a pydantic model)."""

    name: str
    fields: dict[str, Field] = dc_field(default_factory=dict)
    atomic: bool = False

    def child(self, key: str) -> Field:
        return self.fields.get(key, UNTYPED_FIELD)

    def __repr__(self) -> str:
        return f"Struct({self.name}{', atomic' if self.atomic else ''})"


@dataclass(eq=False, repr=False)
class MapNode(Node):
    """A map with string keys and values of one type."""

    value: Node
    atomic: bool = False

    def child(self, key: str) -> Field:
        return Field(self.value)

    def __repr__(self) -> str:
        return f"MapNode({self.value!r}{', atomic' if self.atomic else ''})"


@dataclass(eq=False, repr=False)
class ListNode(Node):
    """A list: `atomic` (one value), `set` (of scalars) or `map` (items keyed by `map_keys`)."""

    item: Node
    list_type: str = "atomic"
    map_keys: tuple[str, ...] = ()
    #: A key field's default, where the schema declares one: an item that omits the key is keyed by it
    #: (structured-merge-diff's rule; a port's `protocol` is TCP).
    key_defaults: tuple[tuple[str, Any], ...] = ()

    def __repr__(self) -> str:
        return f"ListNode({self.item!r}, {self.list_type}{', ' + ','.join(self.map_keys) if self.map_keys else ''})"


def merge_node(schema: "type[BaseModel] | Node") -> "Node":
    """A kind's merge schema: a pydantic model's tree (`schema_for`), or a node given as is (a custom
    kind's, built from its structural schema)."""
    return schema if isinstance(schema, Node) else schema_for(schema)


@functools.cache
def schema_for(model: type[BaseModel]) -> Struct:
    """The schema tree of `model` (cached). Raises TypeError for a non-model."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"not a pydantic model: {model!r}")
    return _struct(model, {})


def node_for_annotation(annotation: Any) -> Node:
    """The node for a bare type annotation (used for fields; exposed for tests)."""
    return _node(annotation, {}, {})


def _struct(model: type[BaseModel], building: dict[type, Struct]) -> Struct:
    if model in building:  # a recursive model refers to the node being built
        return building[model]
    node = Struct(model.__name__, atomic=_model_map_type(model) == "atomic")
    building[model] = node
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        child = _node(info.annotation, extra, building)
        strategies = frozenset(s for s in str(extra.get("x-kubernetes-patch-strategy", "")).split(",") if s)
        node.fields[info.alias or name] = Field(child, strategies, str(extra.get("x-kubernetes-patch-merge-key", "")))
    return node


def _key_defaults(item: Any, keys: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """The defaults the item model declares (`json_schema_extra["default"]`) for the map keys among its fields."""
    item = _unwrap_optional(item)
    if not keys or not (isinstance(item, type) and issubclass(item, BaseModel)):
        return ()
    found = []
    for name, info in item.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if (info.alias or name) in keys and "default" in extra:
            found.append((info.alias or name, extra["default"]))
    return tuple(found)


def _model_map_type(model: type[BaseModel]) -> str:
    extra = model.model_config.get("json_schema_extra")
    return str(extra.get("x-kubernetes-map-type", "")) if isinstance(extra, dict) else ""


def _node(annotation: Any, extra: dict[str, Any], building: dict[type, Struct]) -> Node:
    annotation = _unwrap_optional(annotation)
    origin = get_origin(annotation)
    if annotation is Any or annotation is None:
        return UNTYPED
    if origin is Literal or annotation in (str, int, float, bool):
        return SCALAR
    if origin in (list, tuple, set, frozenset):
        args = get_args(annotation)
        item = _node(args[0], {}, building) if args else UNTYPED
        list_type = str(extra.get("x-kubernetes-list-type", "atomic"))
        keys = tuple(extra.get("x-kubernetes-list-map-keys") or ())
        merge_key = extra.get("x-kubernetes-patch-merge-key")
        if extra.get(UNDECLARED_LIST_TYPE) and merge_key and "merge" in str(
                extra.get("x-kubernetes-patch-strategy", "")).split(","):
            # No list type, but a strategic merge key: server-side apply keys its items by it, as
            # kube-openapi's schema conversion does (a Pod's containers by name).
            list_type, keys = "map", (str(merge_key),)
        return ListNode(item, list_type, keys, _key_defaults(args[0] if args else None, keys))
    if origin is dict:
        args = get_args(annotation)
        value = _node(args[1], {}, building) if len(args) == 2 else UNTYPED
        return MapNode(value, atomic=extra.get("x-kubernetes-map-type") == "atomic")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        struct = _struct(annotation, building)
        # The field's own map type overrides its model's both ways (a PV's claimRef is a granular
        # ObjectReference, which is atomic elsewhere).
        map_type = extra.get("x-kubernetes-map-type")
        if map_type == "atomic" and not struct.atomic:
            return replace(struct, atomic=True)
        if map_type == "granular" and struct.atomic:
            return replace(struct, atomic=False)
        return struct
    return UNTYPED


def _unwrap_optional(annotation: Any) -> Any:
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else Any
    return annotation
