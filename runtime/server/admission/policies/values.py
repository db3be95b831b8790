"""Values between JSON and admission policies' CEL, and the mutating policies' CEL types.

- `to_cel(value)`: a JSON value (an object, a param, the request) as CEL sees
  it in a policy: maps with the fields' own names (no escaping: kube gives
  policies unstructured objects), null as null.
- `to_json(value)`: a CEL result back to JSON (what a mutation produced);
  raises `ValueError` for a value JSON has no form for (a type, a timestamp is
  given as its RFC 3339 text).
- `ObjectType` / `ObjectValue`: Kubernetes' `Object{...}` data literals of
  mutating policies (`k8s.io/apiserver/pkg/cel/mutation/dynamic`): cel-python
  parses `Object{spec: Object.spec{replicas: 1}}` as message construction and
  calls the named type with the fields; the `Object` variable is such a type,
  and `Object.spec` its child type (any field name). `type_mismatches(value)`
  is kube's `CheckTypeNamesMatchFieldPathNames`.
- `JSONPATCH_TYPE`: `JSONPatch{op, path, from, value}`, and `JSONPATCH_FUNCTIONS`
  the `jsonpatch.escapeKey(key)` function (`~` as `~0`, `/` as `~1`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

__all__ = ["to_cel", "to_json", "ObjectType", "ObjectValue", "OBJECT_TYPE", "JSONPatchValue", "JSONPATCH_TYPE",
           "JSONPATCH_FUNCTIONS", "JSONPATCH_NAMESPACE", "type_mismatches"]


def to_cel(value: Any) -> Any:
    """`value` (JSON) as a CEL value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        return celtypes.ListType([to_cel(v) for v in value])
    if isinstance(value, dict):
        return celtypes.MapType({celtypes.StringType(k): to_cel(v) for k, v in value.items()})
    return value


def to_json(value: Any) -> Any:
    """A CEL value as JSON. Raises ValueError for one JSON cannot hold."""
    if value is None or isinstance(value, (bool, str)):
        return bool(value) if isinstance(value, bool) else (None if value is None else str(value))
    if isinstance(value, celtypes.UintType):
        return int(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, timedelta):
        return f"{value.total_seconds():g}s"
    if isinstance(value, bytes):
        raise ValueError("bytes cannot be marshalled to JSON")
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"map key {k!r} is of type {_type_name(k)}, not string")
            out[str(k)] = to_json(v)
        return out
    raise ValueError(f"unsupported type: {_type_name(value)}")


def _type_name(value: Any) -> str:
    return type(value).__name__


class ObjectValue(celtypes.MapType):
    """An `Object...{}` literal: a map of the fields set, carrying its type name."""

    def __init__(self, type_name: str, fields: Any = None) -> None:
        super().__init__(fields or {})
        self.type_name = type_name


class ObjectType(celtypes.MapType):
    """A named `Object` type: `Object.spec` is its child type; calling it with fields builds a value.

    A map (cel-python resolves `a.b` on a map as `a["b"]`), empty for every
    other purpose.
    """

    def __init__(self, type_name: str, build: Callable[[str, Any], celtypes.MapType] = ObjectValue) -> None:
        super().__init__()
        self.type_name = type_name
        self._build = build

    def __getitem__(self, key: Any) -> "ObjectType":
        return ObjectType(f"{self.type_name}.{key}", self._build)

    def get(self, key: Any, default: Any = None) -> "ObjectType":
        return self[key]

    def __contains__(self, key: object) -> bool:
        return True

    def __call__(self, fields: Any) -> celtypes.MapType:
        return self._build(self.type_name, fields)

    def __hash__(self) -> int:
        return hash(self.type_name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectType) and other.type_name == self.type_name


OBJECT_TYPE = ObjectType("Object")


def type_mismatches(value: Any, path: tuple[str, ...] | None = None) -> list[str]:
    """kube's CheckTypeNamesMatchFieldPathNames: each `Object...{}` under field `f` of an object typed `T`
    must be typed `T.f`; lists and plain maps in between are transparent."""
    if path is None:
        path = (value.type_name,) if isinstance(value, ObjectValue) else ("Object",)
    found: list[str] = []
    if isinstance(value, ObjectValue):
        expected = ".".join(path)
        if value.type_name != expected:
            found.append(f'unexpected type name "{value.type_name}", expected "{expected}", which matches field '
                         "name path from root Object type")
        for key, child in value.items():
            found += type_mismatches(child, (*path, str(key)))
    elif isinstance(value, list):
        for item in value:
            found += type_mismatches(item, path)
    elif isinstance(value, dict):
        for item in value.values():
            found += type_mismatches(item, path)
    return found


class JSONPatchValue(celtypes.MapType):
    """A `JSONPatch{op, path, from, value}` literal."""

    def __init__(self, type_name: str, fields: Any = None) -> None:
        super().__init__(fields or {})


JSONPATCH_TYPE = ObjectType("JSONPatch", JSONPatchValue)

#: The receiver `jsonpatch` of `jsonpatch.escapeKey(k)` (cel-python calls `escapeKey(jsonpatch, k)`).
JSONPATCH_NAMESPACE = celtypes.MapType()


def _escape_key(target: Any, key: Any) -> Any:
    if target is not JSONPATCH_NAMESPACE or not isinstance(key, str):
        return CELEvalError("no such overload: escapeKey")
    return celtypes.StringType(str(key).replace("~", "~0").replace("/", "~1"))


JSONPATCH_FUNCTIONS: dict[str, Callable[..., Any]] = {"escapeKey": _escape_key}
