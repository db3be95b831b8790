"""Defaulting: apply a structural schema's `default`s, as apiextensions does.

`apply_defaults(obj, schema)` returns a defaulted copy (the input is never
modified). Kubernetes defaults on every decode: a create or update body,
and an object read from storage (so a default added to the schema later
shows on read). The algorithm is `structuraldefaulting.Default` preceded by
`PruneNonNullableNullsWithoutDefaults`, the order the custom resource codec
runs them:

1. A `null` under a non-nullable schema without a default is dropped (from
   an object) — Kubernetes treats it as unset.
2. For every declared property with a default that is missing, or `null`
   while the property is not nullable, the default (a deep copy) is set;
   defaults inside the new value apply too.
3. Map values (additionalProperties) and list items that are `null` under a
   non-nullable schema with a default become that default.
4. The walk descends into properties, additionalProperties and items.

Defaults are used as written: the schema's defaults are required to be
pruned and valid by `structural_errors`, which is where that is checked.

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.server.schema.structural.schema import Structural

__all__ = ["apply_defaults", "needs_defaults", "prune_non_nullable_nulls"]


def apply_defaults(obj: Any, schema: Structural | None) -> Any:
    """A defaulted copy of `obj` (see the module docstring)."""
    out = copy.deepcopy(obj)
    prune_non_nullable_nulls(out, schema)
    _default(out, schema)
    return out


def needs_defaults(obj: Any, schema: Structural | None) -> bool:
    """Whether `apply_defaults(obj, schema)` would change `obj`; walks it without copying.

    For reads: an object stored before a default was added to the schema is
    defaulted when read, and only such an object pays for the copy.
    """
    if schema is None:
        return False
    if isinstance(obj, dict):
        for key, prop in schema.properties.items():
            if prop.has_default and (key not in obj or _non_nullable_null(obj[key], prop)):
                return True
        for key, value in obj.items():
            child = schema.child(key)
            if child is None:
                continue
            if value is None and not child.nullable:
                return True  # dropped (no default) or defaulted
            if needs_defaults(value, child):
                return True
    elif isinstance(obj, list) and schema.items is not None:
        return any(_non_nullable_null(value, schema.items) or needs_defaults(value, schema.items) for value in obj)
    return False


def _non_nullable_null(value: Any, s: Structural | None) -> bool:
    return value is None and s is not None and not s.nullable and s.has_default


def _default(x: Any, s: Structural | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        for key, prop in s.properties.items():
            if not prop.has_default:
                continue
            if key not in x or _non_nullable_null(x[key], prop):
                x[key] = copy.deepcopy(prop.default)
        for key in list(x):
            value = x[key]
            prop = s.properties.get(key)
            if prop is not None:
                _default(value, prop)
            elif s.additional_properties is not None:
                child = s.additional_schema
                if _non_nullable_null(value, child):
                    x[key] = copy.deepcopy(child.default)
                _default(value, child)
    elif isinstance(x, list):
        for i, value in enumerate(x):
            if _non_nullable_null(value, s.items):
                x[i] = copy.deepcopy(s.items.default)
            _default(value, s.items)


def prune_non_nullable_nulls(x: Any, s: Structural | None) -> None:
    """Drop, in place, object fields that are `null` under a non-nullable schema without a default."""
    if s is None:
        return
    if isinstance(x, dict):
        for key in list(x):
            value = x[key]
            child = s.properties.get(key)
            if child is None:
                child = s.additional_schema
            if child is None:
                continue
            if value is None and not child.nullable and not child.has_default:
                del x[key]
            else:
                prune_non_nullable_nulls(value, child)
    elif isinstance(x, list):
        for value in x:
            prune_non_nullable_nulls(value, s.items)
