"""apiextensions/v1: CustomResourceDefinition, the kind that lets users bring their own kinds.

A CRD names a group and a kind (`spec.names`), its scope, and one or more
versions, each with an OpenAPI v3 schema (`schema.openAPIV3Schema`, kept as
plain JSON: it is a recursive JSONSchemaProps), subresources (`status`,
`scale`), printer columns and selectable fields. Exactly one version is the
storage version. The status records the names accepted and the conditions
(`NamesAccepted`, `Established`, `Terminating`) a controller sets.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from runtime.models.base import K8sModel, list_field
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = [
    "CustomResourceDefinitionNames", "CustomResourceValidation", "CustomResourceSubresourceScale",
    "CustomResourceSubresources", "CustomResourceColumnDefinition", "SelectableField",
    "CustomResourceDefinitionVersion", "CustomResourceConversion", "CustomResourceDefinitionSpec",
    "CustomResourceDefinitionCondition", "CustomResourceDefinitionStatus", "CustomResourceDefinition",
    "CustomResourceDefinitionList",
]


class CustomResourceDefinitionNames(K8sModel):
    plural: Optional[str] = Field(None, description="The plural name of the resource to serve.")
    singular: Optional[str] = Field(None, description="The singular name of the resource (lower case).")
    short_names: Optional[list[str]] = list_field(description="Short names for the resource (kubectl get wd).")
    kind: Optional[str] = Field(None, description="The serialized kind of the resource (CamelCase, singular).")
    list_kind: Optional[str] = Field(None, description="The serialized kind of the list (default `<kind>List`).")
    categories: Optional[list[str]] = list_field(description="Grouped resources this one belongs to (`all`).")


class CustomResourceValidation(K8sModel):
    open_api_v3_schema: Optional[dict[str, Any]] = Field(
        None, alias="openAPIV3Schema", description="The OpenAPI v3 schema used for validation and pruning.")


class CustomResourceSubresourceScale(K8sModel):
    spec_replicas_path: Optional[str] = Field(None, description="JSON path to the desired replicas (`.spec.replicas`).")
    status_replicas_path: Optional[str] = Field(None, description="JSON path to the observed replicas.")
    label_selector_path: Optional[str] = Field(None, description="JSON path to the label selector (string form).")


class CustomResourceSubresources(K8sModel):
    status: Optional[dict[str, Any]] = Field(None, description="Enables the /status subresource.")
    scale: Optional[CustomResourceSubresourceScale] = Field(None, description="Enables the /scale subresource.")


class CustomResourceColumnDefinition(K8sModel):
    name: Optional[str] = None
    type: Optional[str] = None
    format: Optional[str] = None
    description: Optional[str] = None
    priority: Optional[int] = None
    json_path: Optional[str] = None


class SelectableField(K8sModel):
    json_path: Optional[str] = Field(None, description="A JSON path to a field that field selectors may name.")


class CustomResourceDefinitionVersion(K8sModel):
    name: Optional[str] = Field(None, description="The version name (v1, v1beta1, ...).")
    served: Optional[bool] = Field(None, description="Whether this version is served.")
    storage: Optional[bool] = Field(None, description="Whether this version is the storage version (exactly one).")
    deprecated: Optional[bool] = None
    deprecation_warning: Optional[str] = None
    schema_: Optional[CustomResourceValidation] = Field(None, alias="schema")
    subresources: Optional[CustomResourceSubresources] = None
    additional_printer_columns: Optional[list[CustomResourceColumnDefinition]] = list_field()
    selectable_fields: Optional[list[SelectableField]] = list_field()


class CustomResourceConversion(K8sModel):
    strategy: Optional[str] = Field(None, description="`None`: only apiVersion changes between versions.")
    webhook: Optional[dict[str, Any]] = None


class CustomResourceDefinitionSpec(K8sModel):
    group: Optional[str] = Field(None, description="The API group of the custom kind.")
    names: Optional[CustomResourceDefinitionNames] = None
    scope: Optional[str] = Field(None, description="`Namespaced` or `Cluster`.")
    versions: Optional[list[CustomResourceDefinitionVersion]] = list_field()
    conversion: Optional[CustomResourceConversion] = None
    preserve_unknown_fields: Optional[bool] = None


class CustomResourceDefinitionCondition(K8sModel):
    type: Optional[str] = None
    status: Optional[str] = None
    last_transition_time: Optional[str] = None
    reason: Optional[str] = None
    message: Optional[str] = None


class CustomResourceDefinitionStatus(K8sModel):
    conditions: Optional[list[CustomResourceDefinitionCondition]] = list_field(list_type="map", map_keys=["type"])
    accepted_names: Optional[CustomResourceDefinitionNames] = None
    stored_versions: Optional[list[str]] = list_field()


class CustomResourceDefinition(K8sModel):
    """A custom kind: its group, names, scope and versions (with schemas)."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[CustomResourceDefinitionSpec] = None
    status: Optional[CustomResourceDefinitionStatus] = None


class CustomResourceDefinitionList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[CustomResourceDefinition]] = None
