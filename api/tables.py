"""Server-side Tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`) and PartialObjectMetadata.

Pure builders. Columns per kind are the ones Kubernetes' printers
(`pkg/printers/internalversion/printers.go`) give `kubectl get`, generated
as the API server does (wide: every column, priority 1 ones included):

- ClusterRole, Role: Name, Created At (the default of any other kind too);
- ClusterRoleBinding, RoleBinding: Name, Role (`Kind/name`), Age, and at
  priority 1 Users, Groups, ServiceAccounts (`namespace/name`);
- Namespace: Name, Status (the phase), Age;
- Lease: Name, Holder (`spec.holderIdentity`), Age.

Column `type`s are Kubernetes' (`string`, `date`), Name has `format: name`;
every definition carries name, type, format, description and priority, as
Kubernetes' JSON does. Each row's `object` follows `includeObject`:
`Metadata` (default) a PartialObjectMetadata, with `metadata.namespace` for
namespaced kinds since it is the object's own metadata; `Object` the whole
object; `None` null.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from runtime import errors
from runtime.objects import StoredObject

__all__ = ["INCLUDE_OBJECT", "Columns", "age", "columns_for", "include_object_option", "partial_object_metadata",
           "partial_object_metadata_list", "table"]

#: The values of the `includeObject` query parameter.
INCLUDE_OBJECT = ("None", "Object", "Metadata")

# Kubernetes' descriptions (metav1.ObjectMeta and rbac SwaggerDoc()).
_NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some resources "
             "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
             "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
             "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
_CREATED_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
                "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
                "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
                "Null for lists. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
_ROLE_REF_DOC = ("RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. "
                 "If the RoleRef cannot be resolved, the Authorizer must return an error.")
_CLUSTER_ROLE_REF_DOC = ("RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot "
                         "be resolved, the Authorizer must return an error.")


def _col(name: str, description: str, *, type_: str = "string", format_: str = "", priority: int = 0
         ) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


_NAME = _col("Name", _NAME_DOC, format_="name")
_CREATED = _col("Created At", _CREATED_DOC, type_="date")
_AGE = _col("Age", _CREATED_DOC)


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


def _subjects(obj: dict, kind: str) -> str:
    names = []
    for s in obj.get("subjects") or []:
        if s.get("kind") == kind:
            names.append(f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount"
                         else s.get("name", ""))
    return ", ".join(names)


def _binding_cells(obj: dict) -> list[Any]:
    ref = obj.get("roleRef") or {}
    meta = obj["metadata"]
    return [meta.get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", age(meta.get("creationTimestamp")),
            _subjects(obj, "User"), _subjects(obj, "Group"), _subjects(obj, "ServiceAccount")]


def _binding_columns(role_ref_doc: str, what: str) -> list[dict[str, Any]]:
    return [_NAME, _col("Role", role_ref_doc), _AGE,
            _col("Users", f"Users in the {what}", priority=1), _col("Groups", f"Groups in the {what}", priority=1),
            _col("ServiceAccounts", f"ServiceAccounts in the {what}", priority=1)]


def _default_cells(obj: dict) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), meta.get("creationTimestamp")]


def _namespace_cells(obj: dict) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), (obj.get("status") or {}).get("phase", ""), age(meta.get("creationTimestamp"))]


def _lease_cells(obj: dict) -> list[Any]:
    meta = obj["metadata"]
    holder = (obj.get("spec") or {}).get("holderIdentity") or ""
    return [meta.get("name", ""), holder, age(meta.get("creationTimestamp"))]


_HOLDER_DOC = ("holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader "
               "Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name "
               "field.")


@dataclass(frozen=True)
class Columns:
    """A kind's column definitions and the function giving one object's cells."""

    definitions: tuple[dict[str, Any], ...]
    cells: Callable[[dict[str, Any]], list[Any]]


_DEFAULT = Columns((_NAME, _CREATED), _default_cells)
_KIND_COLUMNS: dict[str, Columns] = {
    "ClusterRoleBinding": Columns(tuple(_binding_columns(_CLUSTER_ROLE_REF_DOC, "clusterRoleBinding")),
                                  _binding_cells),
    "RoleBinding": Columns(tuple(_binding_columns(_ROLE_REF_DOC, "roleBinding")), _binding_cells),
    "Namespace": Columns((_NAME, _col("Status", "The status of the namespace"), _AGE), _namespace_cells),
    "Lease": Columns((_NAME, _col("Holder", _HOLDER_DOC), _AGE), _lease_cells),
}


def columns_for(kind: str) -> Columns:
    """Return the Table columns of `kind` (Name and Created At for kinds without their own)."""
    return _KIND_COLUMNS.get(kind, _DEFAULT)


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


def table(kind: str, objects: Iterable[StoredObject], *, meta_api_version: str, list_meta: dict[str, Any] | None = None,
          resource_version: str = "", include_object: str = "Metadata", with_columns: bool = True) -> dict[str, Any]:
    """Return the Table of `objects` (stored objects of `kind`).

    `list_meta` is the list's metadata (resourceVersion, continue,
    remainingItemCount) for a list; for one object pass `resource_version`.
    `with_columns=False` writes `columnDefinitions: null`, as Kubernetes
    does for every watch event after the first.
    """
    columns = columns_for(kind)
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
