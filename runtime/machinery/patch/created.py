"""The FieldsV1 a create records for its manager, in one walk of the object.

A create (no stored object, no managed fields sent) gives its manager every
field the object sets, less the never-owned ones (`STRIPPED_FIELDS`): what
`strip_meta(compare({}, obj).added).to_fields_v1()` computes through a set of
paths. This builds the same FieldsV1 tree straight from the object, without
the paths: every create runs it, and the path set, its difference and its
re-nesting were most of a create's managed-fields cost.

Equal by construction to the general route (a property test holds them
together): every value below the root is a member; a member with members
below it carries `".": {}`; entries sort as `FieldSet` sorts them.

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.patch.fieldpath import PathElement
from runtime.machinery.patch.schema import ListNode, Node
from runtime.machinery.patch.walks import index_items, walk_kind

__all__ = ["created_fields_v1"]

#: The never-owned paths as a tree: a key here is not a member; its value, if a dict, strips below it.
_STRIPPED: dict[str, Any] = {
    "apiVersion": None, "kind": None,
    "metadata": {key: None for key in ("name", "namespace", "creationTimestamp", "selfLink", "uid",
                                       "clusterName", "generation", "managedFields", "resourceVersion")},
}


def created_fields_v1(obj: dict[str, Any], node: Node) -> dict[str, Any]:
    """FieldsV1 of the fields `obj` sets, less the never-owned ones ({} when it sets none)."""
    return _below(obj, node, _STRIPPED)


def _below(value: Any, node: Node, stripped: dict[str, Any] | None) -> dict[str, Any]:
    """The FieldsV1 entries below `value`: one per key or list item, in `FieldSet`'s order."""
    if not value or not isinstance(value, (dict, list)):
        return {}  # a scalar, a null, or an empty object or list: a leaf
    kind = walk_kind(node, value)
    if kind == "map":
        # Every element here is a field, and fields sort by name.
        items = [(PathElement.field(key), value[key], node.child(key).node) for key in sorted(value)]
    elif kind == "list":
        assert isinstance(node, ListNode)
        items = sorted(((pe, child, node.item) for pe, child in index_items(value, node, (), False).items()),
                       key=lambda item: item[0].sort_key)
    else:
        return {}
    out: dict[str, Any] = {}
    for pe, child, child_node in items:
        if stripped is not None and pe.kind == "f" and pe.text in stripped:
            entries = _below(child, child_node, stripped[pe.text])
            if entries:  # not a member itself; only what lies below it
                out[pe.fields_v1_key()] = entries
            continue
        entries = _below(child, child_node, None)
        out[pe.fields_v1_key()] = {".": {}, **entries} if entries else {}
    return out
