"""JSON merge patch (RFC 7386).

An object patch merges key by key: `null` deletes the key, an object value
merges recursively, anything else (scalars, arrays) replaces the value. A
patch that is not an object replaces the whole target. No schema is involved:
lists are always replaced, as Kubernetes does for `application/merge-patch+json`.

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from runtime.machinery.patch.errors import MalformedPatch

__all__ = ["apply_merge_patch", "merge_patch", "create_merge_patch"]


def decode_object_patch(patch: Any) -> dict[str, Any]:
    """A merge or strategic patch as a JSON object (bytes/str are parsed); 400 PatchError otherwise."""
    if isinstance(patch, (bytes, bytearray, str)):
        try:
            patch = json.loads(patch)
        except ValueError as e:
            raise MalformedPatch(f"error decoding patch: {e}") from None
    if not isinstance(patch, dict):
        raise MalformedPatch("json: cannot unmarshal %s into Go value of type map[string]interface {}"
                             % ("array" if isinstance(patch, list) else "value"))
    return patch

def apply_merge_patch(doc: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply `patch` (a decoded value or its JSON text) to `doc`; return a new object.

    The input is never modified. Raises MalformedPatch when the patch is not
    JSON, or when it is not an object (the result would not be an object).
    """
    patch = decode_object_patch(patch)
    return merge_patch(doc, patch)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch(target, patch) on any JSON values; returns a new value."""
    return _merge(copy.deepcopy(target), patch)


def _merge(target: Any, patch: Any) -> Any:
    """Merge into `target`, which the caller owns (already a copy)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = _merge(target.get(key), value)
    return target


def create_merge_patch(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The merge patch that turns `before` into `after` (jsonpatch's CreateMergePatch): keys gone are `null`,
    objects are diffed key by key, anything else changed is sent whole. `merge_patch(before, patch)` equals
    `after` for values without `null`s (a merge patch cannot set one)."""
    patch: dict[str, Any] = {key: None for key in before if key not in after}
    for key, value in after.items():
        old = before.get(key)
        if key not in before or old != value:
            both = isinstance(old, dict) and isinstance(value, dict)
            patch[key] = create_merge_patch(old, value) if both else value
    return patch
