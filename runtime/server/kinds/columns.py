"""Table columns: what `kubectl get` prints for a kind (`as=Table`), as each kind's strategy declares them.

A kind's `Columns` are its column definitions (name, type, format,
description, priority: every field Kubernetes' JSON carries) and a function
giving one object's cells. Kinds without their own print Name and Created At,
as Kubernetes' default table convertor does. `age` is kubectl's short
human duration.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

__all__ = ["Columns", "column", "doc_column", "age", "NAME_COLUMN", "AGE_COLUMN", "DEFAULT_COLUMNS"]

# Kubernetes' descriptions (metav1.ObjectMeta).
_NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some resources "
             "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
             "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
             "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
_CREATED_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
                "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
                "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
                "Null for lists. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")


@dataclass(frozen=True)
class Columns:
    """A kind's column definitions and the function giving one object's cells."""

    definitions: tuple[dict[str, Any], ...]
    cells: Callable[[dict[str, Any]], list[Any]]


def column(name: str, description: str, *, type_: str = "string", format_: str = "", priority: int = 0
           ) -> dict[str, Any]:
    """One column definition (`priority` 1: shown by `kubectl get -o wide` only)."""
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


def doc_column(name: str, model: type[Any], json_name: str, **options: Any) -> dict[str, Any]:
    """A column described by `model`'s field `json_name` (its JSON name), as Kubernetes' printers take their
    descriptions from its types' `SwaggerDoc()` (the OpenAPI's text); `column`'s options. KeyError for a field
    the model has not."""
    for field_name, info in model.model_fields.items():
        if (info.alias or field_name) == json_name:
            return column(name, info.description or "", **options)
    raise KeyError(json_name)


NAME_COLUMN = column("Name", _NAME_DOC, format_="name")
_CREATED = column("Created At", _CREATED_DOC, type_="date")
AGE_COLUMN = column("Age", _CREATED_DOC)


def age(timestamp: str | None, now: datetime | None = None) -> str:
    """Return kubectl's short human duration since `timestamp` (`5s`, `3m20s`, `4h12m`, `2d3h`, `3y`).

    Kubernetes' `duration.HumanDuration`; `<unknown>` without a timestamp,
    `<invalid>` more than a second in the future.
    """
    if not timestamp:
        return "<unknown>"
    created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    seconds = int(((now or datetime.now(timezone.utc)) - created).total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _default_cells(obj: dict) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), meta.get("creationTimestamp")]


DEFAULT_COLUMNS = Columns((NAME_COLUMN, _CREATED), _default_cells)
