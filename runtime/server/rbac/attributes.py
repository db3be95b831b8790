"""What is being asked: the `RequestInfo` of one request, and its authorization `Attributes`.

`RequestInfo` mirrors `k8s.io/apiserver/pkg/endpoints/request.RequestInfo`
(the HTTP layer's `api.requestinfo.request_info` reads it off a request);
`Attributes` mirrors `k8s.io/apiserver/pkg/authorization/authorizer.AttributesRecord`:
the same record plus who asks, so one definition serves both. A request is
either a resource request (verb on group/resource[/subresource], maybe a
namespace and a name) or a non-resource request (verb on a URL path).
Field and label selector requirements are carried for authorizers that use
them; RBAC ignores them, as Kubernetes' RBAC does (they can only restrict).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable

from runtime.server.rbac.user import UserInfo

__all__ = [
    "SelectorRequirement", "RequestInfo", "Attributes", "resource_attributes", "non_resource_attributes",
]


@dataclass(frozen=True)
class SelectorRequirement:
    """One parsed field- or label-selector requirement (key, operator, values)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestInfo:
    """What one request asks, whoever asks it.

    `resource_request` tells which half applies: group, version, resource,
    subresource, namespace and name for a resource request; `path` (the URL
    path, of either kind of request) for a non-resource request.
    """

    verb: str
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    resource_request: bool = False
    path: str = ""


@dataclass(frozen=True, kw_only=True)
class Attributes(RequestInfo):
    """The attributes of one request, as the authorizer sees them: its `RequestInfo`, who asks, its selectors.

    Build them with `resource_attributes` or `non_resource_attributes`.
    """

    user: UserInfo
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
