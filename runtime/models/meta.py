"""meta/v1 shapes: ObjectMeta, ListMeta, LabelSelector, Status, DeleteOptions, Condition."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import ConfigDict, Field

from runtime.models.base import K8sModel, int_field, list_field, map_field

__all__ = [
    "OwnerReference", "ManagedFieldsEntry", "ObjectMeta", "ListMeta", "LabelSelectorRequirement",
    "LabelSelector", "StatusCause", "StatusDetails", "Status", "Preconditions", "DeleteOptions", "Condition",
]


class OwnerReference(K8sModel):
    """An owner of this object; the garbage collector deletes dependents of a gone owner."""
    # Atomic as in Kubernetes: owned and replaced as one field by apply.
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})


    api_version: Optional[str] = None
    kind: Optional[str] = None
    name: Optional[str] = None
    uid: Optional[str] = None
    controller: Optional[bool] = None
    block_owner_deletion: Optional[bool] = None


class ManagedFieldsEntry(K8sModel):
    """One field manager's ownership record (server-side apply), fields in FieldsV1 form."""

    manager: Optional[str] = None
    operation: Optional[str] = None
    api_version: Optional[str] = None
    time: Optional[str] = None
    fields_type: Optional[str] = None
    fields_v1: Optional[dict[str, Any]] = Field(default=None, alias="fieldsV1")
    subresource: Optional[str] = None


class ObjectMeta(K8sModel):
    """Standard object metadata (the full Kubernetes field set)."""

    name: Optional[str] = Field(None, description="Name must be unique within a namespace.")
    generate_name: Optional[str] = Field(None, description="Prefix for a server-generated unique name.")
    namespace: Optional[str] = None
    uid: Optional[str] = None
    resource_version: Optional[str] = Field(None, description="Version at which the object was last modified.")
    generation: Optional[int] = int_field()
    creation_timestamp: Optional[str] = None
    deletion_timestamp: Optional[str] = Field(None, description="Set when a client first requests deletion.")
    deletion_grace_period_seconds: Optional[int] = int_field()
    labels: Optional[dict[str, str]] = map_field()
    annotations: Optional[dict[str, str]] = map_field()
    owner_references: Optional[list[OwnerReference]] = list_field(
        list_type="map", map_keys=["uid"], patch_strategy="merge", patch_merge_key="uid")
    finalizers: Optional[list[str]] = list_field(list_type="set", patch_strategy="merge")
    managed_fields: Optional[list[ManagedFieldsEntry]] = list_field(list_type="atomic")
    self_link: Optional[str] = None


class ListMeta(K8sModel):
    resource_version: Optional[str] = None
    continue_: Optional[str] = Field(None, alias="continue")
    remaining_item_count: Optional[int] = int_field()
    self_link: Optional[str] = None


class LabelSelectorRequirement(K8sModel):
    key: Optional[str] = None
    operator: Optional[str] = None
    values: Optional[list[str]] = list_field()


class LabelSelector(K8sModel):
    # Atomic as in Kubernetes: owned and replaced as one field by apply.
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    match_labels: Optional[dict[str, str]] = map_field()
    match_expressions: Optional[list[LabelSelectorRequirement]] = list_field()


class StatusCause(K8sModel):
    reason: Optional[str] = None
    message: Optional[str] = None
    field: Optional[str] = None


class StatusDetails(K8sModel):
    name: Optional[str] = None
    group: Optional[str] = None
    kind: Optional[str] = None
    uid: Optional[str] = None
    causes: Optional[list[StatusCause]] = list_field()
    retry_after_seconds: Optional[int] = int_field(bits=32)


class Status(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    status: Optional[str] = None
    message: Optional[str] = None
    reason: Optional[str] = None
    details: Optional[StatusDetails] = None
    code: Optional[int] = int_field(bits=32)


class Preconditions(K8sModel):
    uid: Optional[str] = None
    resource_version: Optional[str] = None


class DeleteOptions(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    grace_period_seconds: Optional[int] = int_field()
    preconditions: Optional[Preconditions] = None
    orphan_dependents: Optional[bool] = None
    propagation_policy: Optional[str] = None
    dry_run: Optional[list[str]] = list_field()
    ignore_store_read_error_with_cluster_breaking_potential: Optional[bool] = None


class Condition(K8sModel):
    """metav1.Condition: one aspect of an object's state (`status.conditions[]`, keyed by `type`).

    `status` is True, False or Unknown; `lastTransitionTime` (RFC 3339) is when
    `status` last changed; `observedGeneration` the `metadata.generation` it was
    set from. `runtime.controller.conditions` keeps these rules.
    """

    type: Optional[str] = None
    status: Optional[str] = None
    observed_generation: Optional[int] = int_field()
    last_transition_time: Optional[str] = None
    reason: Optional[str] = None
    message: Optional[str] = None
