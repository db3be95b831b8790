"""authentication/v1 SelfSubjectReview (`kubectl auth whoami`)."""

from __future__ import annotations

from typing import Optional

from runtime.models.base import K8sModel, list_field, map_field
from runtime.models.meta import ObjectMeta

__all__ = ["UserInfoModel", "SelfSubjectReviewStatus", "SelfSubjectReview"]


class UserInfoModel(K8sModel):
    username: Optional[str] = None
    uid: Optional[str] = None
    groups: Optional[list[str]] = list_field()
    extra: Optional[dict[str, list[str]]] = map_field()


class SelfSubjectReviewStatus(K8sModel):
    user_info: Optional[UserInfoModel] = None


class SelfSubjectReview(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    status: Optional[SelfSubjectReviewStatus] = None
