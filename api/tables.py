"""Server-side Tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`) and PartialObjectMetadata.

Pure builders. A kind's columns are its strategy's (`runtime.server.kinds.columns`):
the ones Kubernetes' printers (`pkg/printers/internalversion/printers.go`)
give `kubectl get`, every column included (wide), as the API server does. Each row's `object` follows `includeObject`:
`Metadata` (default) a PartialObjectMetadata, with `metadata.namespace` for
namespaced kinds since it is the object's own metadata; `Object` the whole
object; `None` null.
"""

from __future__ import annotations

from typing import Any, Iterable

from runtime.machinery import errors
from runtime.machinery.storedobject import StoredObject
from runtime.machinery.scheme import ResourceType

__all__ = ["INCLUDE_OBJECT", "include_object_option", "partial_object_metadata", "partial_object_metadata_list",
           "table"]

#: The values of the `includeObject` query parameter.
INCLUDE_OBJECT = ("None", "Object", "Metadata")

def include_object_option(value: str | None) -> str:
    """Return the `includeObject` query value (default `Metadata`); BadRequest for an unknown one."""
    if not value:
        return "Metadata"
    if value not in INCLUDE_OBJECT:
        raise errors.BadRequest(f'unrecognized includeObject value: "{value}"')
    return value


def partial_object_metadata(obj: dict[str, Any], meta_api_version: str) -> dict[str, Any]:
    """Return the PartialObjectMetadata of `obj`: kind, the asked apiVersion, and `obj`'s metadata unchanged."""
    return {"kind": "PartialObjectMetadata", "apiVersion": meta_api_version, "metadata": obj["metadata"]}


def partial_object_metadata_list(list_meta: dict[str, Any], meta_api_version: str) -> dict[str, Any]:
    """Return the header (no items) of a PartialObjectMetadataList."""
    return {"kind": "PartialObjectMetadataList", "apiVersion": meta_api_version, "metadata": list_meta}


def table(rt: ResourceType, objects: Iterable[StoredObject], *, meta_api_version: str, list_meta: dict[str, Any] | None = None,
          resource_version: str = "", include_object: str = "Metadata", with_columns: bool = True) -> dict[str, Any]:
    """Return the Table of `objects` (stored objects of `rt`), with its strategy's columns.

    `list_meta` is the list's metadata (resourceVersion, continue,
    remainingItemCount) for a list; for one object pass `resource_version`.
    `with_columns=False` writes `columnDefinitions: null`, as Kubernetes
    does for every watch event after the first.
    """
    columns = rt.strategy.columns
    rows = []
    for o in objects:
        row: dict[str, Any] = {"cells": columns.cells(o.obj)}
        if include_object == "Object":
            row["object"] = o.obj
        elif include_object == "None":
            row["object"] = None
        else:
            row["object"] = partial_object_metadata(o.obj, meta_api_version)
        rows.append(row)
    meta = dict(list_meta) if list_meta is not None else (
        {"resourceVersion": resource_version} if resource_version else {})
    return {"kind": "Table", "apiVersion": meta_api_version, "metadata": meta,
            "columnDefinitions": list(columns.definitions) if with_columns else None, "rows": rows}
