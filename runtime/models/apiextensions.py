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

from runtime.models.base import K8sModel, int_field, list_field
from runtime.models.meta import ListMeta, ObjectMeta

__all__ = [
    "CustomResourceDefinitionNames", "CustomResourceValidation", "CustomResourceSubresourceScale",
    "CustomResourceSubresources", "CustomResourceColumnDefinition", "SelectableField",
    "CustomResourceDefinitionVersion", "CustomResourceConversion", "CustomResourceDefinitionSpec",
    "CustomResourceDefinitionCondition", "CustomResourceDefinitionStatus", "CustomResourceDefinition",
    "CustomResourceDefinitionList",
]


class CustomResourceDefinitionNames(K8sModel):
    """CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition."""

    plural: Optional[str] = Field(None, description="The plural name of the resource to serve.")
    singular: Optional[str] = Field(None, description="The singular name of the resource (lower case).")
    short_names: Optional[list[str]] = list_field(description="Short names for the resource (kubectl get wd).")
    kind: Optional[str] = Field(None, description="The serialized kind of the resource (CamelCase, singular).")
    list_kind: Optional[str] = Field(None, description="The serialized kind of the list (default `<kind>List`).")
    categories: Optional[list[str]] = list_field(description="Grouped resources this one belongs to (`all`).")


class CustomResourceValidation(K8sModel):
    """CustomResourceValidation is a list of validation methods for CustomResources."""

    open_api_v3_schema: Optional[dict[str, Any]] = Field(
        None, alias="openAPIV3Schema", description="The OpenAPI v3 schema used for validation and pruning.")


class CustomResourceSubresourceScale(K8sModel):
    """CustomResourceSubresourceScale defines how to serve the scale subresource for CustomResources."""

    spec_replicas_path: Optional[str] = Field(None, description="JSON path to the desired replicas (`.spec.replicas`).")
    status_replicas_path: Optional[str] = Field(None, description="JSON path to the observed replicas.")
    label_selector_path: Optional[str] = Field(None, description="JSON path to the label selector (string form).")


class CustomResourceSubresources(K8sModel):
    """CustomResourceSubresources defines the status and scale subresources for CustomResources."""

    status: Optional[dict[str, Any]] = Field(None, description="Enables the /status subresource.")
    scale: Optional[CustomResourceSubresourceScale] = Field(None, description="Enables the /scale subresource.")


class CustomResourceColumnDefinition(K8sModel):
    """CustomResourceColumnDefinition specifies a column for server side printing."""

    name: Optional[str] = Field(None, description="A human readable name for the column.")
    type: Optional[str] = Field(None, description="An OpenAPI type definition for this column (integer, number, "
                                                  "string, boolean, date).")
    format: Optional[str] = Field(None, description="An optional OpenAPI type definition for this column (name: "
                                                    "a primary identifier).")
    description: Optional[str] = Field(None, description="A human readable description of this column.")
    priority: Optional[int] = int_field(
        bits=32, description="An integer defining the relative importance of this column (0: shown in standard "
                             "view; more: wide view).")
    json_path: Optional[str] = Field(None, description="A simple JSON path evaluated against each custom resource "
                                                       "to produce the value of this column.")


class SelectableField(K8sModel):
    """SelectableField specifies the JSON path of a field that may be used with field selectors."""

    json_path: Optional[str] = Field(None, description="A JSON path to a field that field selectors may name.")


class CustomResourceDefinitionVersion(K8sModel):
    """CustomResourceDefinitionVersion describes a version for CRD."""

    name: Optional[str] = Field(None, description="The version name (v1, v1beta1, ...).")
    served: Optional[bool] = Field(None, description="Whether this version is served.")
    storage: Optional[bool] = Field(None, description="Whether this version is the storage version (exactly one).")
    deprecated: Optional[bool] = Field(None, description="Whether this version is deprecated (requests warn).")
    deprecation_warning: Optional[str] = Field(None, description="Overrides the default warning returned to clients "
                                                                 "of a deprecated version.")
    schema_: Optional[CustomResourceValidation] = Field(None, alias="schema", description="The schema used for "
                                                        "validation, pruning and defaulting of this version.")
    subresources: Optional[CustomResourceSubresources] = Field(None, description="The subresources this version "
                                                                                 "serves (status, scale).")
    additional_printer_columns: Optional[list[CustomResourceColumnDefinition]] = list_field(
        description="Additional columns returned in Table output (kubectl get).")
    selectable_fields: Optional[list[SelectableField]] = list_field(
        description="Paths to fields that may be used as field selectors (at most 8).")


class CustomResourceConversion(K8sModel):
    """CustomResourceConversion describes how to convert different versions of a CR."""

    strategy: Optional[str] = Field(None, description="`None`: only apiVersion changes between versions.")
    webhook: Optional[dict[str, Any]] = Field(None, description="How to call a conversion webhook (not served "
                                                                "here: only strategy None is accepted).")


class CustomResourceDefinitionSpec(K8sModel):
    """CustomResourceDefinitionSpec describes how a user wants their resource to appear."""

    group: Optional[str] = Field(None, description="The API group of the custom kind.")
    names: Optional[CustomResourceDefinitionNames] = Field(None, description="The resource and kind names of the "
                                                                             "custom resource.")
    scope: Optional[str] = Field(None, description="`Namespaced` or `Cluster`.")
    versions: Optional[list[CustomResourceDefinitionVersion]] = list_field(
        description="All versions of this resource that may be served; exactly one is the storage version.")
    conversion: Optional[CustomResourceConversion] = Field(None, description="How to convert between versions.")
    preserve_unknown_fields: Optional[bool] = Field(None, description="Deprecated; must be false in v1: "
                                                                      "x-kubernetes-preserve-unknown-fields instead.")


class CustomResourceDefinitionCondition(K8sModel):
    """CustomResourceDefinitionCondition contains details for the current condition of this CRD."""

    type: Optional[str] = Field(None, description="The type of the condition (Established, NamesAccepted, "
                                                  "Terminating).")
    status: Optional[str] = Field(None, description="The status of the condition: True, False or Unknown.")
    last_transition_time: Optional[str] = Field(None, description="The last time the condition transitioned.")
    reason: Optional[str] = Field(None, description="A unique, one-word, CamelCase reason for the last transition.")
    message: Optional[str] = Field(None, description="A human-readable message about the last transition.")


class CustomResourceDefinitionStatus(K8sModel):
    """CustomResourceDefinitionStatus indicates the state of the CustomResourceDefinition."""

    conditions: Optional[list[CustomResourceDefinitionCondition]] = list_field(
        list_type="map", map_keys=["type"], description="The observations of the definition's current state.")
    accepted_names: Optional[CustomResourceDefinitionNames] = Field(None, description="The names actually being "
                                                                                      "used to serve discovery.")
    stored_versions: Optional[list[str]] = list_field(description="The versions that have ever been persisted.")


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
