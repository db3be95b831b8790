"""authentication/v1: SelfSubjectReview (`kubectl auth whoami`), TokenRequest (a service account's token) and
TokenReview (is this token valid, and whose is it?). Descriptions are Kubernetes' own, shortened."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from runtime.models.base import K8sModel, int_field, list_field, map_field
from runtime.models.meta import ObjectMeta

__all__ = ["UserInfoModel", "SelfSubjectReviewStatus", "SelfSubjectReview",
           "BoundObjectReference", "TokenRequestSpec", "TokenRequestStatus", "TokenRequest",
           "TokenReviewSpec", "TokenReviewStatus", "TokenReview"]


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


class BoundObjectReference(K8sModel):
    """BoundObjectReference is a reference to an object that a token is bound to."""

    kind: Optional[str] = Field(None, description="Kind of the referent.")
    api_version: Optional[str] = Field(None, description="API version of the referent.")
    name: Optional[str] = Field(None, description="Name of the referent.")
    uid: Optional[str] = Field(None, description="UID of the referent.")


class TokenRequestSpec(K8sModel):
    """TokenRequestSpec contains client provided parameters of a token request."""

    audiences: Optional[list[str]] = list_field(
        description="Audiences are the intendend audiences of the token. A recipient of a token must identify "
                    "themself with an identifier in the list of audiences of the token, and otherwise should reject "
                    "the token. Defaults to the audiences of the API server.")
    expiration_seconds: Optional[int] = int_field(
        description="ExpirationSeconds is the requested duration of validity of the request (at least 600, "
                    "default 3600).")
    bound_object_ref: Optional[BoundObjectReference] = Field(
        None, description="BoundObjectRef is a reference to an object that the token will be bound to. The token "
                          "will only be valid for as long as the bound object exists.")


class TokenRequestStatus(K8sModel):
    """TokenRequestStatus is the result of a token request."""

    token: Optional[str] = Field(None, description="Token is the opaque bearer token.")
    expiration_timestamp: Optional[str] = Field(
        None, description="ExpirationTimestamp is the time of expiration of the returned token.")


class TokenRequest(K8sModel):
    """TokenRequest requests a token for a given service account."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[TokenRequestSpec] = None
    status: Optional[TokenRequestStatus] = None


class TokenReviewSpec(K8sModel):
    """TokenReviewSpec is a description of the token authentication request."""

    token: Optional[str] = Field(None, description="Token is the opaque bearer token.")
    audiences: Optional[list[str]] = list_field(
        description="Audiences is a list of the identifiers that the resource server presented with the token "
                    "identifies as. Defaults to the audiences of the API server.")


class TokenReviewStatus(K8sModel):
    """TokenReviewStatus is the result of the token authentication request."""

    authenticated: Optional[bool] = Field(
        None, description="Authenticated indicates that the token was associated with a known user.")
    user: Optional[UserInfoModel] = Field(None, description="User is the UserInfo associated with the provided token.")
    audiences: Optional[list[str]] = list_field(
        description="Audiences are audience identifiers chosen by the authenticator that are compatible with both "
                    "the TokenReview and token.")
    error: Optional[str] = Field(None, description="Error indicates that the token couldn't be checked")


class TokenReview(K8sModel):
    """TokenReview attempts to authenticate a token to a known user."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[TokenReviewSpec] = None
    status: Optional[TokenReviewStatus] = None
