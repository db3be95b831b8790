"""Server-side Table rows (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`).

Columns per kind as `kubectl get` shows them in Kubernetes; every other kind
gets Name and Created At. Each row's `object` is PartialObjectMetadata (or
the whole object, or nothing, by `includeObject`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from runtime.objects import StoredObject

__all__ = ["table", "partial_object_metadata", "columns_for"]

_NAME = {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}
_CREATED = {"name": "Created At", "type": "date", "format": "",
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}
_AGE = {"name": "Age", "type": "string", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}


def _col(name: str, description: str, priority: int = 0) -> dict[str, Any]:
    return {"name": name, "type": "string", "format": "", "description": description, "priority": priority}


def age(timestamp: str | None, now: datetime | None = None) -> str:
    """kubectl's short human duration (`5s`, `3m`, `2d`)."""
    if not timestamp:
        return "<unknown>"
    created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    seconds = int(((now or datetime.now(timezone.utc)) - created).total_seconds())
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
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 730:
        return f"{days}d"
    return f"{days // 365}y"


def _subjects(obj: dict, kind: str) -> str:
    names = []
    for s in obj.get("subjects") or []:
        if s.get("kind") == kind:
            names.append(f"{s.get('namespace', '')}/{s.get('name')}" if kind == "ServiceAccount" else s.get("name"))
    return ", ".join(names)


def _binding_cells(obj: dict) -> list[Any]:
    ref = obj.get("roleRef") or {}
    return [obj["metadata"].get("name"), f"{ref.get('kind', '')}/{ref.get('name', '')}",
            age(obj["metadata"].get("creationTimestamp")),
            _subjects(obj, "User"), _subjects(obj, "Group"), _subjects(obj, "ServiceAccount")]


_BINDING_COLUMNS = [_NAME, _col("Role", "Role is the role being bound"), _AGE,
                    _col("Users", "Users in the binding", 1), _col("Groups", "Groups in the binding", 1),
                    _col("ServiceAccounts", "ServiceAccounts in the binding", 1)]

_KIND_COLUMNS: dict[str, tuple[list[dict], Callable[[dict], list[Any]]]] = {
    "ClusterRoleBinding": (_BINDING_COLUMNS, _binding_cells),
    "RoleBinding": (_BINDING_COLUMNS, _binding_cells),
    "Namespace": ([_NAME, _col("Status", "The status of the namespace"), _AGE],
                  lambda o: [o["metadata"].get("name"), (o.get("status") or {}).get("phase", ""),
                             age(o["metadata"].get("creationTimestamp"))]),
}


def columns_for(kind: str) -> tuple[list[dict], Callable[[dict], list[Any]]]:
    return _KIND_COLUMNS.get(kind, ([_NAME, _CREATED],
                                    lambda o: [o["metadata"].get("name"), o["metadata"].get("creationTimestamp")]))


def partial_object_metadata(obj: dict[str, Any], meta_api_version: str) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": meta_api_version, "metadata": obj["metadata"]}


def table(kind: str, objects: Iterable[StoredObject], *, meta_api_version: str, resource_version: str = "",
          continue_token: str = "", remaining: int | None = None, include_object: str = "Metadata",
          with_columns: bool = True) -> dict[str, Any]:
    """A Table of `objects` (`include_object`: None | Object | Metadata)."""
    columns, cells = columns_for(kind)
    rows = []
    for o in objects:
        row: dict[str, Any] = {"cells": cells(o.obj)}
        if include_object == "Object":
            row["object"] = o.obj
        elif include_object != "None":
            row["object"] = partial_object_metadata(o.obj, meta_api_version)
        rows.append(row)
    meta: dict[str, Any] = {}
    if resource_version:
        meta["resourceVersion"] = resource_version
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    out: dict[str, Any] = {"kind": "Table", "apiVersion": meta_api_version, "metadata": meta}
    if with_columns:
        out["columnDefinitions"] = columns
    out["rows"] = rows
    return out
