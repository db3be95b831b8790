"""Kubernetes strategic merge patch, driven by the model's schema.

`apply_strategic_merge_patch(doc, patch, model)` follows apimachinery's
`strategicpatch.StrategicMergeMapPatch` (server side):

- Objects merge key by key; `null` deletes a key; unknown fields merge as
  untyped objects. A field with patch strategy `replace` is replaced whole.
- Lists whose field has patch strategy `merge` merge: lists of objects by
  their `x-kubernetes-patch-merge-key` (`metadata.ownerReferences` by `uid`,
  Namespace `status.conditions` by `type`), lists of scalars as a set without
  duplicates (`metadata.finalizers`). Every other list is replaced whole
  (`rules`, `subjects`).
- Order of a merged list, as Kubernetes computes it: items named in the patch
  take the patch's order, items only on the server keep theirs, and a
  server-only item goes before a patch item only when it came before it in
  the server list. So a patch that adds a new item without `$setElementOrder`
  puts it first (`["c"]` onto `["a","b"]` gives `["c","a","b"]`); kubectl
  always sends `$setElementOrder`, which fixes the order explicitly.
- Directives: `$patch: replace` (an object or a merge list is replaced by the
  patch), `$patch: delete` (an object is removed; in a merge list, the items
  with that merge key are removed), `$patch: merge` (the default, accepted
  where Kubernetes rejects it), `$retainKeys: [...]` (keys of the object not
  listed are cleared), `$deleteFromPrimitiveList/<field>: [...]` (those scalars
  are removed from the list), `$setElementOrder/<field>: [...]` (final order).

Deviations, all on inputs Kubernetes handles oddly: `$patch: delete` on an
object removes the key where Kubernetes leaves `{}` (which its typed round
trip then drops for maps); a value added where the original had none is
cleaned of directives and nulls, as a patch into an empty value.

Errors: PatchError 400 for a malformed document or directive ("invalid patch
format of retainKeys", "unknown patch type: ..."), 422 for a patch that does
not fit the object (a merge-list item without its merge key, lists of lists,
mixed element types).

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from runtime.machinery.patch.errors import MalformedPatch, PatchNotApplicable
from runtime.machinery.patch.merge import decode_object_patch
from runtime.machinery.patch.schema import UNTYPED, Field, ListNode, Node, merge_node
from runtime.machinery.validation.gofmt import go_plus_v

__all__ = ["apply_strategic_merge_patch"]

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_PREFIX = "$deleteFromPrimitiveList"
_ORDER_PREFIX = "$setElementOrder"
_MISSING = object()


def apply_strategic_merge_patch(doc: dict[str, Any], patch: Any, model: type) -> dict[str, Any]:
    """Apply a strategic merge patch (decoded object or JSON text) to `doc`; return a new object.

    `model` is the pydantic model of the kind; its field markers drive list
    merging. The inputs are never modified. Raises PatchError (400/422).
    """
    patch = decode_object_patch(patch)
    result = _merge_map(copy.deepcopy(doc), copy.deepcopy(patch), merge_node(model))
    return result


def _merge_map(original: dict[str, Any], patch: dict[str, Any], node: Node) -> dict[str, Any]:
    """Merge `patch` into `original` (both owned by the caller) and return it."""
    if _DIRECTIVE in patch:
        directive = patch.pop(_DIRECTIVE)
        if directive == "replace":
            return _merge_map({}, patch, node)
        if directive == "delete":
            return {}
        if directive != "merge":
            patch[_DIRECTIVE] = directive
            raise MalformedPatch(f"unknown patch type: {go_plus_v(directive)} in map: {go_plus_v(patch)}")
    _apply_retain_keys(original, patch)
    _apply_element_orders(original, patch, node)
    for key in [k for k in patch if k.startswith(_DELETE_PREFIX)]:
        _delete_from_primitive_list(original, _suffix(key, _DELETE_PREFIX), patch.pop(key))
    for key, value in patch.items():
        child = node.child(key)
        if value is None or (isinstance(value, dict) and value.get(_DIRECTIVE) == "delete"):
            original.pop(key, None)
            continue
        current = original.get(key, _MISSING)
        if current is _MISSING or _shape(current) != _shape(value):
            original[key] = _fresh(value, child)
        elif isinstance(value, dict):
            if "replace" in child.patch_strategies:
                original[key] = _fresh(value, child)
            else:
                original[key] = _merge_map(current, value, child.node)
        elif isinstance(value, list):
            original[key] = _merge_list_field(current, value, child)
        else:
            original[key] = value
    return original


def _fresh(value: Any, child: Field) -> Any:
    """The value a patch sets where the original has none: the patch applied to an empty value."""
    if isinstance(value, dict):
        return _merge_map({}, value, child.node)
    if isinstance(value, list) and "merge" in child.patch_strategies:
        return _merge_slice([], value, _item_node(child), child.patch_merge_key)
    return value


def _merge_list_field(current: list[Any], value: list[Any], child: Field) -> list[Any]:
    if "merge" in child.patch_strategies:
        return _merge_slice(current, value, _item_node(child), child.patch_merge_key)
    return value


def _item_node(child: Field) -> Node:
    return child.node.item if isinstance(child.node, ListNode) else UNTYPED


def _shape(value: Any) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"


# --- lists -----------------------------------------------------------------

def _merge_slice(original: list[Any], patch: list[Any], item: Node, merge_key: str) -> list[Any]:
    """Merge a `merge`-strategy list (patch.go mergeSlice)."""
    if not original and not patch:
        return original
    if _element_kind(original, patch) != "map":
        merged = _dedupe(original + patch)
        return _normalize_order(merged, patch, original, "")
    if not merge_key:
        raise PatchNotApplicable("cannot merge lists without merge key for type map")
    original, patch = _apply_list_directives(original, patch, merge_key, item)
    merged = list(original)
    for element in patch:
        if merge_key not in element:
            raise PatchNotApplicable(_no_merge_key(element, merge_key))
        at = _find_by_key(merged, merge_key, element[merge_key])
        if at is None:
            merged.append(_merge_map({}, element, item))
        else:
            merged[at] = _merge_map(merged[at], element, item)
    return _normalize_order(merged, patch, original, merge_key)


def _apply_list_directives(original: list[Any], patch: list[Any], merge_key: str,
                           item: Node) -> tuple[list[Any], list[Any]]:
    """Handle `$patch` elements of a list of objects (mergeSliceWithSpecialElements)."""
    rest: list[Any] = []
    replace = False
    for element in patch:
        if _DIRECTIVE not in element:
            rest.append(element)
            continue
        directive = element[_DIRECTIVE]
        if directive == "delete":
            if merge_key not in element:
                raise PatchNotApplicable(_no_merge_key(element, merge_key))
            original = [o for o in original if not (isinstance(o, dict) and merge_key in o
                                                    and _same(o[merge_key], element[merge_key]))]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            trimmed = {k: v for k, v in element.items() if k != _DIRECTIVE}
            if merge_key in trimmed:
                rest.append(trimmed)
        else:
            raise MalformedPatch(f"unknown patch type: {go_plus_v(directive)} in map: {go_plus_v(element)}")
    if replace:
        return [_merge_map({}, e, item) for e in rest], []
    return original, rest


def _delete_from_primitive_list(original: dict[str, Any], key: str, values: Any) -> None:
    if not isinstance(values, list):
        raise MalformedPatch("invalid patch format of primitive list")
    current = original.get(key)
    if isinstance(current, list):
        doomed = {_ident(v) for v in values}
        original[key] = [v for v in current if _ident(v) not in doomed]


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN_KEYS not in patch:
        return
    keys = patch.pop(_RETAIN_KEYS)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise MalformedPatch("invalid patch format of retainKeys")
    retained = set(keys)
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_PREFIX, _ORDER_PREFIX)):
            continue
        if key not in retained:
            raise MalformedPatch("invalid patch format of retainKeys")
    for key in [k for k in original if k not in retained]:
        del original[key]


def _apply_element_orders(original: dict[str, Any], patch: dict[str, Any], node: Node) -> None:
    """Process `$setElementOrder/<field>` with its list (patch.go mergePatchIntoOriginal)."""
    for directive in [k for k in patch if k.startswith(_ORDER_PREFIX)]:
        order = patch.pop(directive)
        key = _suffix(directive, _ORDER_PREFIX)
        if not isinstance(order, list):
            raise MalformedPatch("invalid patch format of setElementOrder list")
        child = node.child(key)
        current = original.get(key, _MISSING)
        value = patch.get(key, _MISSING)
        if current is not _MISSING and not isinstance(current, list):
            raise PatchNotApplicable(f"expected a []interface {{}}, but received a {_go_type(current)}")
        if value is not _MISSING and not isinstance(value, list):
            raise MalformedPatch("invalid patch format of setElementOrder list")
        merge_key = child.patch_merge_key
        if value is not _MISSING:
            _validate_order(value, order, merge_key)
        if current is _MISSING and value is _MISSING:
            continue
        if value is _MISSING:
            merged = current
        elif current is _MISSING:
            merged = _fresh(value, child)
        else:
            merged = _merge_list_field(current, value, child)
        patch.pop(key, None)
        server = current if current is not _MISSING else []
        if merged and _element_kind(merged, []) != "map":
            merge_key = ""
        original[key] = _normalize_order(merged, order, server, merge_key)


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """Items of the patch list must appear in `order` in the same relative order."""
    if not order or not patch_list:
        return
    items = [e for e in patch_list if not (merge_key and isinstance(e, dict) and e.get(_DIRECTIVE) == "delete")]
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        if isinstance(items[pi], dict) and _DIRECTIVE in items[pi]:
            pi += 1
            continue
        if _same(_key_of(items[pi], merge_key), _key_of(order[oi], merge_key)):
            pi += 1
        oi += 1
    if pi < len(items) and oi >= len(order):
        raise MalformedPatch("The order in patch list:\n%s\n doesn't match %s list:\n%s\n"
                             % (go_plus_v(patch_list), _ORDER_PREFIX, go_plus_v(order)))


def _normalize_order(merged: list[Any], wanted: list[Any], server: list[Any], merge_key: str) -> list[Any]:
    """Order `merged`: items named in `wanted` in its order, interleaved with server-only items.

    patch.go normalizeElementOrder + mergeSortedSlice: a server-only item goes
    before a patch item only if both are in the server list and it came first.
    """
    wanted_at = _positions(wanted, merge_key)
    server_at = _positions(server, merge_key)
    named = [e for e in merged if _ident(_key_of(e, merge_key)) in wanted_at]
    server_only = [e for e in merged if _ident(_key_of(e, merge_key)) not in wanted_at]
    named.sort(key=lambda e: wanted_at[_ident(_key_of(e, merge_key))])
    server_only.sort(key=lambda e: server_at.get(_ident(_key_of(e, merge_key)), len(server)))
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(named):
        if j >= len(named):
            out.append(server_only[i])
            i += 1
            continue
        if i < len(server_only):
            left = server_at.get(_ident(_key_of(server_only[i], merge_key)))
            right = server_at.get(_ident(_key_of(named[j], merge_key)))
            if left is not None and right is not None and left < right:
                out.append(server_only[i])
                i += 1
                continue
        out.append(named[j])
        j += 1
    return out


def _positions(items: list[Any], merge_key: str) -> dict[Any, int]:
    at: dict[Any, int] = {}
    for n, e in enumerate(items):
        if merge_key and not (isinstance(e, dict) and merge_key in e):
            raise PatchNotApplicable(_no_merge_key(e, merge_key))
        at.setdefault(_ident(_key_of(e, merge_key)), n)
    return at


def _key_of(element: Any, merge_key: str) -> Any:
    if merge_key:
        if not isinstance(element, dict) or merge_key not in element:
            raise PatchNotApplicable(_no_merge_key(element, merge_key))
        return element[merge_key]
    return element


def _element_kind(*lists: list[Any]) -> str:
    """'map' or 'scalar' for lists whose elements share one JSON type (patch.go sliceElementType)."""
    kinds = {_json_type(e) for lst in lists for e in lst}
    if "array" in kinds:
        raise PatchNotApplicable("lists of lists are not supported")
    if len(kinds) > 1:
        raise PatchNotApplicable("list element types are not identical: %s" % " ".join(go_plus_v(lst) for lst in lists))
    return "map" if kinds == {"object"} else "scalar"


def _find_by_key(items: list[Any], merge_key: str, value: Any) -> int | None:
    for n, e in enumerate(items):
        if isinstance(e, dict) and merge_key in e and _same(e[merge_key], value):
            return n
    return None


def _dedupe(items: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for e in items:
        ident = _ident(e)
        if ident not in seen:
            seen.add(ident)
            out.append(e)
    return out


def _ident(value: Any) -> Any:
    """A hashable identity with JSON equality (True is not 1, 1 is 1.0)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, (dict, list)):
        return ("json", json.dumps(value, sort_keys=True))
    return (type(value).__name__, value)


def _same(a: Any, b: Any) -> bool:
    return _ident(a) == _ident(b)


def _suffix(key: str, prefix: str) -> str:
    head, sep, tail = key.partition("/")
    if head != prefix or not sep:
        raise MalformedPatch("invalid patch format of primitive list" if prefix == _DELETE_PREFIX
                         else "invalid patch format of setElementOrder list")
    return tail


def _no_merge_key(element: Any, merge_key: str) -> str:
    return f"map: {go_plus_v(element)} does not contain declared merge key: {merge_key}"


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "string"


def _go_type(value: Any) -> str:
    return {"object": "map[string]interface {}", "array": "[]interface {}", "bool": "bool",
            "number": "float64", "string": "string", "null": "<nil>"}[_json_type(value)]
