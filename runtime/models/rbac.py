"""rbac/v1 kinds: ClusterRole, Role, ClusterRoleBinding, RoleBinding and their lists."""

from __future__ import annotations

from typing import Optional

from pydantic import ConfigDict, Field

from runtime.models.base import K8sModel, list_field
from runtime.models.meta import LabelSelector, ListMeta, ObjectMeta

__all__ = [
    "PolicyRule", "AggregationRule", "ClusterRole", "Role", "Subject", "RoleRef",
    "ClusterRoleBinding", "RoleBinding", "ClusterRoleList", "RoleList",
    "ClusterRoleBindingList", "RoleBindingList",
]


class PolicyRule(K8sModel):
    """What a role allows: verbs on resources of API groups, or on non-resource URLs."""

    verbs: Optional[list[str]] = list_field(description="Verbs this rule allows; `*` means all verbs.")
    api_groups: Optional[list[str]] = list_field(
        description="API groups of the resources; empty string is the core group, `*` all groups.")
    resources: Optional[list[str]] = list_field(
        description="Resources this rule applies to; `*` means all, `*/sub` that subresource of all.")
    resource_names: Optional[list[str]] = list_field(
        description="Optional whitelist of names; empty means all.")
    non_resource_urls: Optional[list[str]] = list_field(
        alias="nonResourceURLs",
        description="Partial URLs; `*` only as the whole last segment. Only in ClusterRoles bound by ClusterRoleBindings.")


class AggregationRule(K8sModel):
    cluster_role_selectors: Optional[list[LabelSelector]] = list_field(
        description="ClusterRoles matched by any selector contribute their rules.")


class ClusterRole(K8sModel):
    """A cluster-level group of PolicyRules, bindable as a unit."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    aggregation_rule: Optional[AggregationRule] = Field(
        None, description="When set, rules are controller-managed from the selected ClusterRoles.")
    rules: Optional[list[PolicyRule]] = list_field(description="Rules of this role.")


class Role(K8sModel):
    """A namespaced group of PolicyRules, bindable by a RoleBinding."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    rules: Optional[list[PolicyRule]] = list_field(description="Rules of this role.")


class Subject(K8sModel):
    # Atomic as in Kubernetes: owned and replaced as one field by apply.
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    kind: Optional[str] = Field(None, description="User, Group or ServiceAccount.")
    api_group: Optional[str] = None
    name: Optional[str] = None
    namespace: Optional[str] = None


class RoleRef(K8sModel):
    # Atomic as in Kubernetes: owned and replaced as one field by apply.
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    api_group: Optional[str] = None
    kind: Optional[str] = None
    name: Optional[str] = None


class ClusterRoleBinding(K8sModel):
    """Attaches a ClusterRole to subjects across the whole cluster."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    subjects: Optional[list[Subject]] = list_field(description="Who the role applies to.")
    role_ref: Optional[RoleRef] = Field(None, description="The role bound; immutable.")


class RoleBinding(K8sModel):
    """Attaches a Role (same namespace) or ClusterRole to subjects within one namespace."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    subjects: Optional[list[Subject]] = list_field(description="Who the role applies to.")
    role_ref: Optional[RoleRef] = Field(None, description="The role bound; immutable.")


class ClusterRoleList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[ClusterRole]] = None


class RoleList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Role]] = None


class ClusterRoleBindingList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[ClusterRoleBinding]] = None


class RoleBindingList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[RoleBinding]] = None
