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

from runtime.models.base import Base64, K8sModel, list_field, map_field
from runtime.models.meta import (
    Condition, DeleteOptions, LabelSelector, LabelSelectorRequirement, ListMeta, ManagedFieldsEntry,
    ObjectMeta, OwnerReference, Preconditions, Status, StatusCause, StatusDetails,
)
from runtime.models.rbac import (
    AggregationRule, ClusterRole, ClusterRoleBinding, ClusterRoleBindingList, ClusterRoleList,
    PolicyRule, Role, RoleBinding, RoleBindingList, RoleList, RoleRef, Subject,
)
from runtime.models.authorization import (
    FieldSelectorAttributes, LabelSelectorAttributes, LocalSubjectAccessReview,
    NonResourceAttributes, NonResourceRule, ResourceAttributes, ResourceRule,
    SelectorRequirement, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    SelfSubjectRulesReview, SelfSubjectRulesReviewSpec, SubjectAccessReview,
    SubjectAccessReviewSpec, SubjectAccessReviewStatus, SubjectRulesReviewStatus,
)
from runtime.models.authentication import (
    BoundObjectReference, SelfSubjectReview, SelfSubjectReviewStatus, TokenRequest, TokenRequestSpec,
    TokenRequestStatus, TokenReview, TokenReviewSpec, TokenReviewStatus, UserInfoModel,
)
from runtime.models.core import (
    ConfigMap, ConfigMapList, LocalObjectReference, Namespace, NamespaceCondition, NamespaceList, NamespaceSpec, NamespaceStatus, ServiceAccount,
    Secret, SecretList, ServiceAccountList,
)
from runtime.models.coordination import Lease, LeaseList, LeaseSpec
from runtime.models.events import (
    Event, EventList, EventSeries, EventSource, EventsV1Event, EventsV1EventList, EventsV1EventSeries, ObjectReference,
)
from runtime.models.apiextensions import (
    CustomResourceDefinition, CustomResourceDefinitionList, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
)

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
