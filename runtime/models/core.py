"""core/v1 Namespace: namespaced kinds live and die with it."""

from __future__ import annotations

from typing import Optional

from runtime.models.base import K8sModel, list_field
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = ["NamespaceSpec", "NamespaceCondition", "NamespaceStatus", "Namespace", "NamespaceList"]


class NamespaceSpec(K8sModel):
    finalizers: Optional[list[str]] = list_field(
        description="Must be empty before the namespace is removed from storage.")


class NamespaceCondition(K8sModel):
    type: Optional[str] = None
    status: Optional[str] = None
    last_transition_time: Optional[str] = None
    reason: Optional[str] = None
    message: Optional[str] = None


class NamespaceStatus(K8sModel):
    phase: Optional[str] = None
    conditions: Optional[list[NamespaceCondition]] = list_field(
        list_type="map", map_keys=["type"], patch_strategy="merge", patch_merge_key="type")


class Namespace(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[NamespaceSpec] = None
    status: Optional[NamespaceStatus] = None


class NamespaceList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Namespace]] = None
