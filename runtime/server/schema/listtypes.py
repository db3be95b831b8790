"""`x-kubernetes-list-type` set and map invariants (apiextensions' `structurallisttype`).

`list_type_errors(obj, schema)`: in a `set` list no two items are equal
(each later copy is `Duplicate value: <item>`); in a `map` list every item is
an object (`must be an object for an array of list-type map`) and no two
items have the same key: the value of the one key, or the object of all
keys (`Duplicate value: {"name":"a","protocol":"TCP"}`); a missing key
counts as a value of its own. Paths are field paths (`spec.ports[1]`, map
values `spec.m[key]`).

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.server.schema.schema_errors import SchemaFieldError, duplicate, invalid
from runtime.server.schema.openapi import json_equal
from runtime.server.schema.structural.schema import Structural, visit_declared

__all__ = ["list_type_errors"]

_UNSET = object()


def list_type_errors(obj: Any, schema: Structural | None, *, path: str = "") -> list[SchemaFieldError]:
    """Duplicates in set and map lists (see the module docstring)."""
    out: list[SchemaFieldError] = []

    def visit(x: Any, s: Structural, at: str) -> None:
        if isinstance(x, list):
            if s.x_list_type == "set":
                _set(x, at, out)
            elif s.x_list_type == "map":
                _map(x, s.x_list_map_keys, at, out)

    if schema is not None:
        visit_declared(obj, schema, path, visit)
    return out


def _set(items: list, path: str, out: list[SchemaFieldError]) -> None:
    for i, item in enumerate(items):
        if any(json_equal(item, earlier) for earlier in items[:i]):
            out.append(duplicate(f"{path}[{i}]", item))


def _map(items: list, keys: tuple[str, ...], path: str, out: list[SchemaFieldError]) -> None:
    problems = [invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")
                for i, item in enumerate(items) if item is not None and not isinstance(item, dict)]
    if problems:
        out.extend(problems)
        return
    seen: list[tuple[Any, ...]] = []
    for i, item in enumerate(items):
        values = tuple((item or {}).get(k, _UNSET) for k in keys)
        if any(len(v) == len(values) and all(_same(a, b) for a, b in zip(v, values)) for v in seen):
            if len(keys) == 1:
                shown: Any = None if values[0] is _UNSET else values[0]
            else:
                shown = {k: v for k, v in zip(keys, values) if v is not _UNSET}
            out.append(duplicate(f"{path}[{i}]", shown))
        else:
            seen.append(values)


def _same(a: Any, b: Any) -> bool:
    if a is _UNSET or b is _UNSET:
        return a is b
    return json_equal(a, b)
