"""core/v1 Namespace (namespaced kinds live and die with it) and ServiceAccount (an identity for processes).

ServiceAccount descriptions are Kubernetes' own, shortened. Its tokens are not
stored: they are asked of its `token` subresource (authentication/v1
`TokenRequest`, in `runtime.models.authentication`).
"""

from __future__ import annotations

from typing import Optional

from pydantic import ConfigDict, Field

from runtime.models.base import K8sModel, list_field
from runtime.models.events.core import ObjectReference
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = ["NamespaceSpec", "NamespaceCondition", "NamespaceStatus", "Namespace", "NamespaceList",
           "LocalObjectReference", "ServiceAccount", "ServiceAccountList"]


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


class LocalObjectReference(K8sModel):
    """LocalObjectReference contains enough information to let you locate the referenced object inside the same
    namespace."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    name: Optional[str] = Field(None, description="Name of the referent.")


class ServiceAccount(K8sModel):
    """ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an
    identity; a principal that can be authenticated and authorized; a set of secrets."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    secrets: Optional[list[ObjectReference]] = list_field(
        list_type="map", map_keys=["name"], patch_strategy="merge", patch_merge_key="name",
        description="Secrets is a list of the secrets in the same namespace that pods running using this "
                    "ServiceAccount are allowed to use. Only the name of each reference is kept.")
    image_pull_secrets: Optional[list[LocalObjectReference]] = list_field(
        description="ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling "
                    "any images in pods that reference this ServiceAccount.")
    automount_service_account_token: Optional[bool] = Field(
        None, description="AutomountServiceAccountToken indicates whether pods running as this service account "
                          "should have an API token automatically mounted.")


class ServiceAccountList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[ServiceAccount]] = list_field(
        description="List of ServiceAccounts.")
