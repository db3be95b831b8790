"""Walk pydantic models as JSON schemas: which JSON keys a model knows, what each holds."""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

__all__ = ["FieldShape", "shape_of", "fields_of", "unknown_fields"]


@dataclass(frozen=True)
class FieldShape:
    """The JSON shape of a field: `model`, `list`, `map`, `scalar` or `any`."""

    kind: str
    model: type[BaseModel] | None = None
    item: "FieldShape | None" = None
    python_type: Any = None
    extensions: tuple[tuple[str, Any], ...] = ()

    def ext(self, name: str, default: Any = None) -> Any:
        return dict(self.extensions).get(name, default)


def shape_of(annotation: Any, extensions: dict[str, Any] | None = None) -> FieldShape:
    """The shape of a type annotation (Optional unwrapped)."""
    ext = tuple(sorted((extensions or {}).items()))
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return shape_of(args[0], extensions) if len(args) == 1 else FieldShape("any", extensions=ext)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return FieldShape("model", model=annotation, extensions=ext)
    if origin is list:
        (item,) = typing.get_args(annotation)
        return FieldShape("list", item=shape_of(item), extensions=ext)
    if origin is dict:
        _, value = typing.get_args(annotation)
        return FieldShape("map", item=shape_of(value), extensions=ext)
    if annotation is Any:
        return FieldShape("any", extensions=ext)
    return FieldShape("scalar", python_type=annotation, extensions=ext)


@functools.cache
def fields_of(model: type[BaseModel]) -> dict[str, FieldShape]:
    """JSON name -> shape for every field of a model (aliases as Kubernetes spells them)."""
    out: dict[str, FieldShape] = {}
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else None
        out[info.alias or name] = shape_of(info.annotation, extra)
    return out


def unknown_fields(model: type[BaseModel], data: Any, path: str = "") -> list[str]:
    """Paths (`spec.foo`, `rules[0].bar`) of keys in `data` that `model` does not know, at any depth."""
    found: list[str] = []
    _walk(FieldShape("model", model=model), data, path, found)
    return found


#: Shapes with keys below them to check (scalars and `any` hold none the model knows).
_NESTED = frozenset(("model", "list", "map"))


def _walk(shape: FieldShape, data: Any, path: str, found: list[str]) -> None:
    # Runs on every write's body: no call for a scalar, a path made only to report or to go deeper.
    if shape.kind == "model" and isinstance(data, dict):
        known = fields_of(shape.model)
        for key, value in data.items():
            sub = known.get(key)
            if sub is None:
                found.append(f"{path}.{key}" if path else key)
            elif sub.kind in _NESTED and isinstance(value, (dict, list)):
                _walk(sub, value, f"{path}.{key}" if path else key, found)
    elif shape.kind == "list" and isinstance(data, list) and shape.item is not None:
        if shape.item.kind in _NESTED:
            for i, value in enumerate(data):
                if isinstance(value, (dict, list)):
                    _walk(shape.item, value, f"{path}[{i}]", found)
    elif shape.kind == "map" and isinstance(data, dict) and shape.item is not None:
        if shape.item.kind in _NESTED:
            for key, value in data.items():
                if isinstance(value, (dict, list)):
                    _walk(shape.item, value, f"{path}.{key}" if path else key, found)
