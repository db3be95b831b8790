"""Writes of a subresource that is another kind's view of the object (a custom kind's `scale`: a Scale).

GET of such a subresource answers its `ViewSubresource.view` of the object; a
PUT (or a json or merge PATCH, applied to the current view) gives a new view,
which its `from_view` turns into the new object, written as any
update is (`RegistryCore.guaranteed_update`: admission, validation, retries),
and answered as its view again.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any, Callable

from runtime.machinery import errors
from runtime.server.kinds import ViewSubresource
from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import WriteResult, conflict
from runtime.server.registry.primitives import RegistryCore
from runtime.machinery.options import WriteOptions
from runtime.machinery.scheme import ResourceType

__all__ = ["update_view"]


async def update_view(core: RegistryCore, user: UserInfo, rt: ResourceType, key: str, name: str, view: Any,
                      opts: WriteOptions, subresource: ViewSubresource, current: StoredObject | None = None,
                      transform_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> WriteResult:
    """Write `view` of `subresource` (or, with `transform_view`, what it makes of the current view);
    answer the new view.

    A view's resourceVersion, when set, is a precondition (409 when stale).
    Raises BadRequest for a view that is not an object, Invalid from `from_view`.
    """
    def transform(cur: StoredObject) -> dict[str, Any]:
        wanted = transform_view(subresource.view(cur.copy_dict())) if transform_view else view
        if not isinstance(wanted, dict):
            raise errors.BadRequest("the body of the request must be an object")
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if rv and rv != cur.obj["metadata"].get("resourceVersion"):
            raise conflict(rt, name)
        new = subresource.from_view(wanted, cur.copy_dict())
        new["metadata"]["resourceVersion"] = cur.obj["metadata"].get("resourceVersion")
        return new

    result = await core.guaranteed_update(user, rt, key, name, transform, opts, [], subresource=subresource,
                                          first=current)
    return WriteResult(StoredObject(key, subresource.view(result.obj.copy_dict()), result.obj.revision),
                       False, result.warnings)
