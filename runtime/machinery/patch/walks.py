"""Schema-driven walks over objects: field sets, comparison, merge, removal.

A small Python version of structured-merge-diff's `typed` package, for the
shapes miniplane's kinds have: structs, granular or atomic maps, and atomic,
set and map lists. Each walk takes a value and its schema node
(`runtime.machinery.patch.schema`); untyped values behave as structured-merge-diff's
deduced schema (objects granular, lists atomic).

- `to_field_set(value, node)`: the leaf fields a value sets (ToFieldSet).
- `compare(old, new, node)`: the paths added, modified and removed.
- `merge(lhs, rhs, node)`: `rhs` laid over `lhs` (apply's merge): granular
  maps per key, map lists per key, set lists per value, atomic values replaced.
- `remove_items(value, node, paths)`: the value without those paths.
- `ensure_named_fields(paths, node)`: the set plus every struct field that
  has members below it (EnsureNamedFieldsAreMembers).
- `walk_kind(node, *values)` and `index_items(items, node, ...)`: how a walk
  treats a value (leaf, map or list) and a list's items by path element; the
  steps every walk here takes, for walks elsewhere (`runtime.machinery.patch.created`).

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from runtime.machinery.patch.errors import PatchNotApplicable
from runtime.machinery.patch.fieldpath import FieldSet, Path, PathElement, path_string
from runtime.machinery.patch.json_patch import json_equal
from runtime.machinery.patch.schema import UNTYPED, ListNode, MapNode, Node, Scalar, Struct
from runtime.machinery.validation.gofmt import go_quote

__all__ = ["MISSING", "Comparison", "to_field_set", "compare", "merge", "remove_items",
           "ensure_named_fields", "item_element", "index_items", "walk_kind"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""An absent value (distinct from JSON null)."""


@dataclass(frozen=True)
class Comparison:
    """Paths that `new` adds, changes and drops relative to `old`."""

    added: FieldSet
    modified: FieldSet
    removed: FieldSet


def walk_kind(node: Node, *values: Any) -> str:
    """How a walk treats this value: 'leaf', 'map' (granular object) or 'list' (set/map list)."""
    present = [v for v in values if v is not MISSING and v is not None]
    if isinstance(node, (Struct, MapNode)):
        if node.atomic or any(not isinstance(v, dict) for v in present):
            return "leaf"
        return "map"
    if isinstance(node, ListNode):
        if node.list_type not in ("set", "map") or any(not isinstance(v, list) for v in present):
            return "leaf"
        return "list"
    if isinstance(node, Scalar) or not present:
        return "leaf"
    return "map" if all(isinstance(v, dict) for v in present) else "leaf"


def _child_node(node: Node, key: str) -> Node:
    return node.child(key).node


def _declared(node: Node, key: str) -> bool:
    return isinstance(node, Struct) and key in node.fields


def item_element(item: Any, node: ListNode, index: int, *, strict: bool, prefix: Path = ()) -> PathElement:
    """The path element naming a list item: by map keys, by value, or by index.

    With `strict` (an applied configuration) an item without its keys raises
    PatchNotApplicable; otherwise it falls back to its index.
    """
    if node.list_type == "map":
        defaults = dict(node.key_defaults)
        if isinstance(item, dict) and node.map_keys and all(k in item or k in defaults for k in node.map_keys):
            return PathElement.key({k: item[k] if k in item else defaults[k] for k in node.map_keys})
        if strict:
            missing = next((k for k in node.map_keys
                            if not isinstance(item, dict) or (k not in item and k not in defaults)), "")
            raise PatchNotApplicable(f"{path_string(prefix)}: element {index}: associative list with keys has an "
                             f"element that omits key field {go_quote(missing)} (and doesn't have default value)")
        return PathElement.index(index)
    if node.list_type == "set" and not isinstance(item, (dict, list)):
        return PathElement.value(item)
    return PathElement.index(index)


def index_items(items: list[Any] | None, node: ListNode, path: Path, strict: bool) -> dict[PathElement, Any]:
    """List items by path element, in list order; later duplicates are dropped (or rejected if strict)."""
    indexed: dict[PathElement, Any] = {}
    for n, item in enumerate(items or ()):
        pe = item_element(item, node, n, strict=strict, prefix=path)
        if pe in indexed:
            if strict:
                raise PatchNotApplicable(f"{path_string(path)}: duplicate entries for key {pe}")
            continue
        indexed[pe] = item
    return indexed


# --- ToFieldSet ----------------------------------------------------------------

def to_field_set(value: Any, node: Node, *, strict: bool = False) -> FieldSet:
    """The fields `value` sets: scalars, atomic values, map keys, list items (with their contents).

    Struct fields that are objects count only through their contents, except
    when null or empty. `strict` rejects map-list items without keys and
    duplicate items (PatchError 422), as for an applied configuration.
    """
    out: set[Path] = set()
    _to_set(value, node, (), out, strict)
    return FieldSet(frozenset(out))


def _to_set(value: Any, node: Node, path: Path, out: set[Path], strict: bool) -> None:
    kind = walk_kind(node, value)
    if kind == "leaf":
        if path:
            out.add(path)
        return
    if kind == "map":
        if not isinstance(value, dict):
            return
        for key, child in value.items():
            child_path = path + (PathElement.field(key),)
            _to_set(child, _child_node(node, key), child_path, out, strict)
            if child is None or child == {} or not _declared(node, key):
                out.add(child_path)
        return
    assert isinstance(node, ListNode)
    for pe, item in index_items(value if isinstance(value, list) else None, node, path, strict).items():
        child_path = path + (pe,)
        _to_set(item, node.item, child_path, out, strict)
        out.add(child_path)


# --- Compare -----------------------------------------------------------------------

_NOTHING = FieldSet()


def compare(old: Any, new: Any, node: Node) -> Comparison:
    """Paths added, modified and removed going from `old` to `new` (typed.Compare)."""
    if isinstance(old, dict) and not old and isinstance(new, dict) and walk_kind(node, new) == "map":
        # From nothing (a create): every path of `new` is added, found without comparing.
        below: set[Path] = set()
        for key, child in new.items():
            _all_paths(child, _child_node(node, key), (PathElement.field(key),), below)
        return Comparison(FieldSet(frozenset(below)), _NOTHING, _NOTHING)
    added: set[Path] = set()
    modified: set[Path] = set()
    removed: set[Path] = set()

    def leaf(lhs: Any, rhs: Any, path: Path) -> None:
        if lhs is MISSING:
            added.add(path)
        elif rhs is MISSING:
            removed.add(path)
        elif not json_equal(lhs, rhs):
            modified.add(path)

    def walk(lhs: Any, rhs: Any, node: Node, path: Path) -> None:
        kind = walk_kind(node, lhs, rhs)
        if kind == "map":
            lmap = lhs if isinstance(lhs, dict) else {}
            rmap = rhs if isinstance(rhs, dict) else {}
            if not lmap and not rmap:
                return leaf(lhs, rhs, path)
            for key in list(lmap) + [k for k in rmap if k not in lmap]:
                walk(lmap.get(key, MISSING), rmap.get(key, MISSING), _child_node(node, key),
                     path + (PathElement.field(key),))
        elif kind == "list":
            assert isinstance(node, ListNode)
            litems = index_items(lhs if isinstance(lhs, list) else None, node, path, False)
            ritems = index_items(rhs if isinstance(rhs, list) else None, node, path, False)
            if not litems and not ritems:
                return leaf(lhs, rhs, path)
            for pe in list(litems) + [p for p in ritems if p not in litems]:
                walk(litems.get(pe, MISSING), ritems.get(pe, MISSING), node.item, path + (pe,))
        else:
            return leaf(lhs, rhs, path)
        # after the children of a non-leaf: the object or item itself appeared or went away
        if lhs is MISSING:
            added.add(path)
        elif rhs is MISSING:
            removed.add(path)

    walk(old, new, node, ())
    return Comparison(FieldSet(frozenset(added)), FieldSet(frozenset(modified)), FieldSet(frozenset(removed)))


def _all_paths(value: Any, node: Node, path: Path, out: set[Path]) -> None:
    """The paths `compare` finds added for `value` where there was nothing: it and everything below it."""
    kind = walk_kind(node, value)
    if kind == "map" and isinstance(value, dict):  # a null where an object goes is a leaf, as compare finds it
        for key, child in value.items():
            _all_paths(child, _child_node(node, key), path + (PathElement.field(key),), out)
    elif kind == "list" and isinstance(value, list):
        assert isinstance(node, ListNode)
        for pe, item in index_items(value, node, path, False).items():
            _all_paths(item, node.item, path + (pe,), out)
    out.add(path)


# --- Merge ---------------------------------------------------------------------------

def merge(lhs: Any, rhs: Any, node: Node) -> Any:
    """`rhs` merged over `lhs` (typed.Merge); returns a new value, MISSING if both are absent."""
    return _merge(lhs, rhs, node, ())


def _merge(lhs: Any, rhs: Any, node: Node, path: Path) -> Any:
    kind = walk_kind(node, lhs, rhs)
    if kind == "map":
        lmap = lhs if isinstance(lhs, dict) else {}
        rmap = rhs if isinstance(rhs, dict) else {}
        if lmap or rmap:
            out = {}
            for key in list(lmap) + [k for k in rmap if k not in lmap]:
                value = _merge(lmap.get(key, MISSING), rmap.get(key, MISSING), _child_node(node, key),
                               path + (PathElement.field(key),))
                if value is not MISSING:
                    out[key] = value
            return out if out else MISSING
    elif kind == "list":
        assert isinstance(node, ListNode)
        litems = index_items(lhs if isinstance(lhs, list) else None, node, path, False)
        ritems = index_items(rhs if isinstance(rhs, list) else None, node, path, False)
        if litems or ritems:
            merged = [_merge(litems.get(pe, MISSING), ritems.get(pe, MISSING), node.item, path + (pe,))
                      for pe in _merged_order(list(litems), list(ritems))]
            merged = [m for m in merged if m is not MISSING]
            return merged if merged else MISSING
    return copy.deepcopy(rhs if rhs is not MISSING else lhs)


def _merged_order(lorder: list[PathElement], rorder: list[PathElement]) -> list[PathElement]:
    """Item order of a merged list (typed/merge.go visitListItems).

    Items only in `lhs` keep their place; items in `rhs` come in rhs order,
    shared items moving to where rhs puts them.
    """
    lset, rset = set(lorder), set(rorder)
    shared = [pe for pe in rorder if pe in lset]
    next_shared = shared.pop(0) if shared else None
    out: list[PathElement] = []
    done: set[PathElement] = set()
    li = ri = 0
    while li < len(lorder) or ri < len(rorder):
        if li < len(lorder) and ri < len(rorder):
            pe = lorder[li]
            if pe == rorder[ri]:
                out.append(pe)
                done.add(pe)
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in rset and next_shared is not None and next_shared != pe:
                li += 1  # shared item, but not the one we want in this round
                continue
        if li < len(lorder):
            pe = lorder[li]
            if pe not in rset:
                out.append(pe)
                li += 1
                continue
            if pe in done:
                li += 1
                continue
        if ri < len(rorder):
            pe = rorder[ri]
            out.append(pe)
            done.add(pe)
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
        elif li < len(lorder):
            li += 1  # a shared item already taken from rhs
    return out


# --- RemoveItems -------------------------------------------------------------------------

def remove_items(value: Any, node: Node, paths: FieldSet) -> Any:
    """`value` without the members of `paths` (a member removes its whole subtree).

    An object or list emptied by the removal becomes MISSING, so the caller
    drops its key, as Kubernetes' typed round trip does.
    """
    if not paths:
        return value
    kind = walk_kind(node, value)
    if kind == "map" and isinstance(value, dict) and value:
        out = {}
        for key, child in value.items():
            pe = PathElement.field(key)
            if pe in paths.members:
                continue
            below = paths.children.get(pe)
            if below:
                child = remove_items(child, _child_node(node, key), below)
            if child is not MISSING:
                out[key] = child
        return out if out else MISSING
    if kind == "list" and isinstance(value, list) and value:
        assert isinstance(node, ListNode)
        items = []
        for n, item in enumerate(value):
            pe = item_element(item, node, n, strict=False)
            if pe in paths.members:
                continue
            below = paths.children.get(pe)
            if below:
                item = remove_items(item, node.item, below)
            if item is not MISSING:
                items.append(item)
        return items if items else MISSING
    return value


def ensure_named_fields(paths: FieldSet, node: Node) -> FieldSet:
    """`paths` plus each struct field that has members below it (EnsureNamedFieldsAreMembers)."""
    out: set[Path] = set()
    _ensure(paths, node, (), out)
    return FieldSet(frozenset(out))


def _ensure(paths: FieldSet, node: Node, prefix: Path, out: set[Path]) -> None:
    out.update(prefix + (pe,) for pe in paths.members)
    for pe, below in paths.children.items():
        if pe.kind == "f":
            if _declared(node, pe.text):
                out.add(prefix + (pe,))
            child = _child_node(node, pe.text)
        else:
            child = node.item if isinstance(node, ListNode) else UNTYPED
        _ensure(below, child, prefix + (pe,), out)
