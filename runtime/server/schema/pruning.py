"""Pruning: drop the fields a structural schema does not declare.

`prune(obj, schema)` is apiextensions' `pruning.PruneWithOptions` with
unknown-field tracking: it returns a pruned copy (the input is never
modified) and the sorted paths of the fields it dropped, in the words
Kubernetes uses for `unknown field "<path>"` (strict field validation) and
the matching warnings: `spec.foo`, `spec.items[0].bar`, `spec.map.key.x`.

- At the resource root (and in every `x-kubernetes-embedded-resource`
  object) `apiVersion`, `kind` and `metadata` are kept whatever the schema
  says; a nested non-embedded `metadata` is an ordinary field.
- Under `x-kubernetes-preserve-unknown-fields: true` unknown fields are
  kept, but declared properties (and additionalProperties) are still
  pruned below.
- additionalProperties with a schema prunes every value by that schema;
  `additionalProperties: true` (or false) without a schema keeps the keys
  but prunes object values to `{}`, as Kubernetes does (a nil schema
  prunes everything under it).
- Scalars are never pruned; a type mismatch is validation's business.

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.server.schema.structural.schema import Structural

__all__ = ["prune"]

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


def prune(obj: Any, schema: Structural | None, *, is_resource_root: bool = True) -> tuple[Any, list[str]]:
    """A pruned copy of `obj` and the sorted paths of what was dropped."""
    pruned: list[str] = []
    out = copy.deepcopy(obj)
    _prune(out, schema, [], pruned, embedded=is_resource_root or bool(schema and schema.x_embedded_resource))
    return out, sorted(pruned)


def _key(path: list[str], key: str) -> list[str]:
    return [*path, "." + key] if path else [key]


def _record(pruned: list[str], path: list[str], key: str) -> None:
    pruned.append("".join(_key(path, key)))


def _prune(x: Any, s: Structural | None, path: list[str], pruned: list[str], *, embedded: bool) -> None:
    if s is not None and s.x_preserve_unknown_fields:
        _skip_prune(x, s, path, pruned, embedded=embedded)
        return
    if isinstance(x, dict):
        if s is None:
            for key in list(x):
                _record(pruned, path, key)
                del x[key]
            return
        for key in list(x):
            value = x[key]
            if embedded and key in _META_FIELDS:
                continue
            if not _prune_field(value, s, key, path, pruned):
                if key not in _META_FIELDS or path:
                    _record(pruned, path, key)
                del x[key]
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for i, value in enumerate(x):
            _prune(value, items, [*path, f"[{i}]"], pruned, embedded=bool(items and items.x_embedded_resource))


def _prune_field(value: Any, s: Structural, key: str, path: list[str], pruned: list[str]) -> bool:
    """Prune field `key`'s `value` by the schema `s` gives it; False when `s` declares no such field."""
    prop = s.properties.get(key)
    if prop is not None:
        _prune(value, prop, _key(path, key), pruned, embedded=prop.x_embedded_resource)
    elif s.additional_properties is not None:
        child = s.additional_schema
        _prune(value, child, _key(path, key), pruned, embedded=bool(child and child.x_embedded_resource))
    else:
        return False
    return True


def _skip_prune(x: Any, s: Structural | None, path: list[str], pruned: list[str], *, embedded: bool) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        for key, value in x.items():
            if embedded and key in _META_FIELDS:
                continue
            _prune_field(value, s, key, path, pruned)
    elif isinstance(x, list):
        for i, value in enumerate(x):
            items = s.items
            _skip_prune(value, items, [*path, f"[{i}]"], pruned, embedded=bool(items and items.x_embedded_resource))
