"""docs: column descriptions taken from the models, as Kubernetes' printers take them from its types'
`SwaggerDoc()` (the OpenAPI descriptions)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from runtime.server.kinds.columns import column

__all__ = ["doc_column"]


def doc_column(name: str, model: type[BaseModel], json_name: str, **options: Any) -> dict[str, Any]:
    """A column described by `model`'s field `json_name` (its JSON name; `column`'s options: priority)."""
    for field_name, info in model.model_fields.items():
        if (info.alias or field_name) == json_name:
            return column(name, info.description or "", **options)
    raise KeyError(json_name)
