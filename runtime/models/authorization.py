"""authorization/v1 kinds: the four access reviews."""

from __future__ import annotations

from typing import Optional

from runtime.models.base import K8sModel, list_field, map_field
from runtime.models.meta import ObjectMeta

__all__ = [
    "SelectorRequirement", "FieldSelectorAttributes", "LabelSelectorAttributes",
    "ResourceAttributes", "NonResourceAttributes", "SubjectAccessReviewSpec",
    "SubjectAccessReviewStatus", "SubjectAccessReview", "LocalSubjectAccessReview",
    "SelfSubjectAccessReviewSpec", "SelfSubjectAccessReview", "SelfSubjectRulesReviewSpec",
    "ResourceRule", "NonResourceRule", "SubjectRulesReviewStatus", "SelfSubjectRulesReview",
]


class SelectorRequirement(K8sModel):
    key: Optional[str] = None
    operator: Optional[str] = None
    values: Optional[list[str]] = list_field()


class FieldSelectorAttributes(K8sModel):
    raw_selector: Optional[str] = None
    requirements: Optional[list[SelectorRequirement]] = list_field()


class LabelSelectorAttributes(K8sModel):
    raw_selector: Optional[str] = None
    requirements: Optional[list[SelectorRequirement]] = list_field()


class ResourceAttributes(K8sModel):
    namespace: Optional[str] = None
    verb: Optional[str] = None
    group: Optional[str] = None
    version: Optional[str] = None
    resource: Optional[str] = None
    subresource: Optional[str] = None
    name: Optional[str] = None
    field_selector: Optional[FieldSelectorAttributes] = None
    label_selector: Optional[LabelSelectorAttributes] = None


class NonResourceAttributes(K8sModel):
    path: Optional[str] = None
    verb: Optional[str] = None


class SubjectAccessReviewSpec(K8sModel):
    resource_attributes: Optional[ResourceAttributes] = None
    non_resource_attributes: Optional[NonResourceAttributes] = None
    user: Optional[str] = None
    groups: Optional[list[str]] = list_field()
    extra: Optional[dict[str, list[str]]] = map_field()
    uid: Optional[str] = None


class SubjectAccessReviewStatus(K8sModel):
    allowed: Optional[bool] = None
    denied: Optional[bool] = None
    reason: Optional[str] = None
    evaluation_error: Optional[str] = None


class SubjectAccessReview(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[SubjectAccessReviewSpec] = None
    status: Optional[SubjectAccessReviewStatus] = None


class LocalSubjectAccessReview(SubjectAccessReview):
    pass


class SelfSubjectAccessReviewSpec(K8sModel):
    resource_attributes: Optional[ResourceAttributes] = None
    non_resource_attributes: Optional[NonResourceAttributes] = None


class SelfSubjectAccessReview(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[SelfSubjectAccessReviewSpec] = None
    status: Optional[SubjectAccessReviewStatus] = None


class SelfSubjectRulesReviewSpec(K8sModel):
    namespace: Optional[str] = None


class ResourceRule(K8sModel):
    verbs: Optional[list[str]] = list_field()
    api_groups: Optional[list[str]] = list_field()
    resources: Optional[list[str]] = list_field()
    resource_names: Optional[list[str]] = list_field()


class NonResourceRule(K8sModel):
    verbs: Optional[list[str]] = list_field()
    non_resource_urls: Optional[list[str]] = list_field(alias="nonResourceURLs")


class SubjectRulesReviewStatus(K8sModel):
    resource_rules: Optional[list[ResourceRule]] = list_field()
    non_resource_rules: Optional[list[NonResourceRule]] = list_field()
    incomplete: Optional[bool] = None
    evaluation_error: Optional[str] = None


class SelfSubjectRulesReview(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[SelfSubjectRulesReviewSpec] = None
    status: Optional[SubjectRulesReviewStatus] = None
