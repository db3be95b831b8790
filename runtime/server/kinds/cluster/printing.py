"""What the cluster kinds' printers share: column descriptions taken from the models, as Kubernetes takes
them from its types' `SwaggerDoc()` (the same text as the OpenAPI descriptions)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from runtime.server.kinds.columns import column

__all__ = ["field_doc", "doc_column"]


def field_doc(model: type[BaseModel], json_name: str) -> str:
    """The description of `model`'s field `json_name` (its JSON name); "" if it has none."""
    for name, info in model.model_fields.items():
        if (info.alias or name) == json_name:
            return info.description or ""
    raise KeyError(json_name)


def doc_column(name: str, model: type[BaseModel], json_name: str, **options: Any) -> dict[str, Any]:
    """A column described by `model`'s field `json_name` (`column`'s options: type_, priority)."""
    return column(name, field_doc(model, json_name), **options)
