"""The JSON form of insight results: frozen dataclasses to Kubernetes-style camelCase dicts.

`JSONValue.to_dict()` walks the dataclass fields: names become camelCase
(`api_group` -> `apiGroup`, `non_resource_url` -> `nonResourceURL`), nested
dataclasses their `to_dict()`, tuples lists, mappings dicts, enums their
value. As Go's `omitempty`, None, "" and empty collections are left out,
except the fields a class names in `_KEEP_EMPTY` (where "" means something,
e.g. the core API group). Booleans and numbers are always written.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = ["JSONValue", "camel_case", "to_json"]

_WORDS = {"url": "URL", "urls": "URLs", "id": "ID"}


def camel_case(name: str) -> str:
    """Return the camelCase of a snake_case field name, Kubernetes' way (`non_resource_urls` -> `nonResourceURLs`)."""
    head, *rest = name.split("_")
    return head + "".join(_WORDS.get(w, w[:1].upper() + w[1:]) for w in rest)


def _empty(value: Any) -> bool:
    if value is None or value == "":
        return True
    return isinstance(value, (tuple, list, Mapping, frozenset, set)) and not value


def to_json(value: Any) -> Any:
    """Return the JSON form of `value` (dataclass, enum, tuple, mapping or scalar)."""
    if isinstance(value, JSONValue):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {camel_case(f.name): to_json(getattr(value, f.name))
                for f in dataclasses.fields(value) if not _empty(getattr(value, f.name))}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [to_json(v) for v in value]
    return value


class JSONValue:
    """Mixin for frozen result dataclasses: `to_dict()` is their Kubernetes-style JSON."""

    _KEEP_EMPTY: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        """Return this value as a JSON dict (camelCase keys, empty fields omitted)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None or (_empty(value) and f.name not in self._KEEP_EMPTY):
                continue
            out[camel_case(f.name)] = to_json(value)
        return out
