"""Typed object model: pydantic v2 models for every kind miniplane serves.

Models decode and type-check bodies (a wrong type is a 400, as the spec's field
typing rules say); semantic rules (required fields, names, roleRef) live in
`runtime.machinery.validation` and answer 422. Every field is optional here so that the
decoder never reports a missing field: Kubernetes reports those as Invalid.

List semantics for patching and OpenAPI (`x-kubernetes-list-type`, ...) are
declared on the fields with `list_field(...)`, the one source the patch
engines and the OpenAPI generator read.

`catalog` holds the built-in kinds' facts (`KindInfo`s: group, names, scope,
model, verbs), which every `Scheme` serves.
"""

import importlib
from typing import Any

#: The module each name of `__all__` lives in: imported from there when first asked for (PEP 562), so that
#: importing one model (or the catalog's facts) does not build them all.
_MODULES = {
    "base": (
        "Base64", "K8sModel", "list_field", "map_field"
    ),
    "meta": (
        "Condition", "DeleteOptions", "LabelSelector", "LabelSelectorRequirement", "ListMeta", "ManagedFieldsEntry",
        "ObjectMeta", "OwnerReference", "Preconditions", "Status", "StatusCause", "StatusDetails"
    ),
    "rbac": (
        "AggregationRule", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBindingList", "ClusterRoleList",
        "PolicyRule", "Role", "RoleBinding", "RoleBindingList", "RoleList", "RoleRef", "Subject"
    ),
    "authorization": (
        "FieldSelectorAttributes", "LabelSelectorAttributes", "LocalSubjectAccessReview", "NonResourceAttributes",
        "NonResourceRule", "ResourceAttributes", "ResourceRule", "SelectorRequirement", "SelfSubjectAccessReview",
        "SelfSubjectAccessReviewSpec", "SelfSubjectRulesReview", "SelfSubjectRulesReviewSpec",
        "SubjectAccessReview", "SubjectAccessReviewSpec", "SubjectAccessReviewStatus", "SubjectRulesReviewStatus"
    ),
    "authentication": (
        "BoundObjectReference", "SelfSubjectReview", "SelfSubjectReviewStatus", "TokenRequest", "TokenRequestSpec",
        "TokenRequestStatus", "TokenReview", "TokenReviewSpec", "TokenReviewStatus", "UserInfoModel"
    ),
    "core": (
        "ConfigMap", "ConfigMapList", "LocalObjectReference", "Namespace", "NamespaceCondition", "NamespaceList",
        "NamespaceSpec", "NamespaceStatus", "ServiceAccount", "Secret", "SecretList", "ServiceAccountList"
    ),
    "coordination": (
        "Lease", "LeaseList", "LeaseSpec"
    ),
    "events": (
        "Event", "EventList", "EventSeries", "EventSource", "EventsV1Event", "EventsV1EventList",
        "EventsV1EventSeries", "ObjectReference"
    ),
    "apiextensions": (
        "CustomResourceDefinition", "CustomResourceDefinitionList", "CustomResourceDefinitionNames",
        "CustomResourceDefinitionSpec", "CustomResourceDefinitionStatus", "CustomResourceDefinitionVersion"
    ),
}
_HOMES = {name: f"runtime.models.{module}" for module, names in _MODULES.items() for name in names}

__all__ = [
    "K8sModel", "Base64", "list_field", "map_field",
    "Condition", "DeleteOptions", "LabelSelector", "LabelSelectorRequirement", "ListMeta", "ManagedFieldsEntry",
    "ObjectMeta", "OwnerReference", "Preconditions", "Status", "StatusCause", "StatusDetails",
    "AggregationRule", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBindingList",
    "ClusterRoleList", "PolicyRule", "Role", "RoleBinding", "RoleBindingList", "RoleList",
    "RoleRef", "Subject",
    "FieldSelectorAttributes", "LabelSelectorAttributes", "LocalSubjectAccessReview",
    "NonResourceAttributes", "NonResourceRule", "ResourceAttributes", "ResourceRule",
    "SelectorRequirement", "SelfSubjectAccessReview", "SelfSubjectAccessReviewSpec",
    "SelfSubjectRulesReview", "SelfSubjectRulesReviewSpec", "SubjectAccessReview",
    "SubjectAccessReviewSpec", "SubjectAccessReviewStatus", "SubjectRulesReviewStatus",
    "SelfSubjectReview", "SelfSubjectReviewStatus", "UserInfoModel",
    "BoundObjectReference", "TokenRequest", "TokenRequestSpec", "TokenRequestStatus",
    "TokenReview", "TokenReviewSpec", "TokenReviewStatus",
    "Namespace", "NamespaceCondition", "NamespaceList", "NamespaceSpec", "NamespaceStatus",
    "LocalObjectReference", "ServiceAccount", "ServiceAccountList", "ConfigMap", "ConfigMapList", "Secret",
    "SecretList",
    "Lease", "LeaseList", "LeaseSpec",
    "ObjectReference", "EventSource", "EventSeries", "Event", "EventList", "EventsV1Event", "EventsV1EventList",
    "EventsV1EventSeries",
    "CustomResourceDefinition", "CustomResourceDefinitionList", "CustomResourceDefinitionNames",
    "CustomResourceDefinitionSpec", "CustomResourceDefinitionStatus", "CustomResourceDefinitionVersion",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


def ref(name: str) -> str:
    """The `"module:Class"` reference of model `name` (a `KindInfo` takes it, importing nothing)."""
    return f"{_HOMES[name]}:{name}"
