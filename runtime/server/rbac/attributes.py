"""What is being asked: the authorization `Attributes` of one request.

Mirrors `k8s.io/apiserver/pkg/authorization/authorizer.AttributesRecord`.
A request is either a resource request (verb on group/resource[/subresource],
maybe a namespace and a name) or a non-resource request (verb on a URL path).
Field and label selector requirements are carried for authorizers that use
them; RBAC ignores them, as Kubernetes' RBAC does (they can only restrict).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable

from runtime.server.rbac.user import UserInfo

__all__ = [
    "SelectorRequirement", "Attributes", "resource_attributes", "non_resource_attributes",
]


@dataclass(frozen=True)
class SelectorRequirement:
    """One parsed field- or label-selector requirement (key, operator, values)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attributes:
    """The attributes of one request, as the authorizer sees them.

    `resource_request` tells which half applies: group, version, resource,
    subresource, namespace and name for a resource request; `path` for a
    non-resource request. Build them with `resource_attributes` or
    `non_resource_attributes`.
    """

    user: UserInfo
    verb: str
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    resource_request: bool = False
    path: str = ""
    field_selector: tuple[SelectorRequirement, ...] = ()
    label_selector: tuple[SelectorRequirement, ...] = ()


def resource_attributes(
    user: UserInfo,
    verb: str,
    resource: str,
    *,
    api_group: str = "",
    api_version: str = "",
    subresource: str = "",
    namespace: str = "",
    name: str = "",
    field_selector: Iterable[SelectorRequirement] = (),
    label_selector: Iterable[SelectorRequirement] = (),
    path: str = "",
) -> Attributes:
    """Return the `Attributes` of a resource request.

    `api_group=""` is the core group. `name=""` means the collection
    (list, watch, create, deletecollection).
    """
    return Attributes(
        user=user, verb=verb, namespace=namespace, api_group=api_group,
        api_version=api_version, resource=resource, subresource=subresource, name=name,
        resource_request=True, path=path,
        field_selector=tuple(field_selector), label_selector=tuple(label_selector),
    )


def non_resource_attributes(user: UserInfo, verb: str, path: str) -> Attributes:
    """Return the `Attributes` of a non-resource request (`verb` is the lower-cased HTTP method)."""
    return Attributes(user=user, verb=verb, path=path, resource_request=False)
