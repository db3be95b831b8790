"""What the built-in admission plug-ins ask of the registry that runs them, and their refusal.

`AdmissionContext` is the registry's part they read and write through:
the scheme, the watch cache by kind (LimitRanges and ResourceQuotas of a
namespace, as kube's plug-ins read their informers), the store (the
quota's conflict-checked status write), consistent reads, authorization
decisions (CEL's `authorizer` in match conditions). `forbidden` is
Kubernetes' `admission.NewForbidden`: `pods "x" is forbidden: <why>`.
"""

from __future__ import annotations

from typing import Any, Protocol

from runtime.machinery import errors
from runtime.machinery.kindinfo import KindInfo
from runtime.machinery.scheme import ResourceType, Scheme
from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac import Decision
from runtime.server.rbac.attributes import Attributes
from runtime.server.storage import Store
from runtime.server.watchcache import KindCache

__all__ = ["AdmissionContext", "forbidden", "resource_type", "namespace_objects"]


class AdmissionContext(Protocol):
    scheme: Scheme
    store: Store

    def kind_cache(self, rt: ResourceType) -> KindCache: ...

    async def read_current(self, rt: ResourceType, key: str, name: str = "") -> StoredObject | None: ...

    def decide(self, attrs: Attributes) -> Decision: ...


def resource_type(scheme: Scheme, info: KindInfo) -> ResourceType | None:
    """The scheme's stored type of kind `info` (None when the scheme does not serve it)."""
    return next((rt for rt in scheme.stored_types() if rt.info is info), None)


def namespace_objects(context: AdmissionContext, rt: ResourceType, namespace: str) -> list[StoredObject]:
    """The cached objects of `rt` in `namespace`, by name."""
    return context.kind_cache(rt).list(rt.namespace_prefix(namespace))


def forbidden(rt: ResourceType, obj: dict[str, Any], why: str) -> errors.Forbidden:
    """403 in Kubernetes' words for an admission plug-in's refusal of `obj`."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    return errors.Forbidden(f'{rt.group_resource} "{name}" is forbidden: {why}', name=name, group=rt.group,
                            kind=rt.plural)
