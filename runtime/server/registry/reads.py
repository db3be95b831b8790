"""GET of one object: from the watch cache once it may answer, else a consistent read from the store.

resourceVersion unset: the most recent state (the cache once it caught up
with the store, else the store); "0": any (the cache as is); N: not older
than N (504 "Too large resource version" if the cache does not reach it).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from runtime.server.kinds import Subresource, ViewSubresource
from runtime.machinery.storedobject import CorruptObject, StoredObject
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import not_found
from runtime.server.registry.conversion import remote, shown
from runtime.server.registry.primitives import RegistryCore
from runtime.machinery.scheme import ResourceType

__all__ = ["get"]


async def get(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str, name: str, *,
              resource_version: str | None = None, subresource: Subresource | None = None) -> StoredObject:
    """One object, or `subresource`'s view of it (None: the object). Raises NotFound, BadRequest
    (malformed version), ResourceVersionTooLarge (504), CorruptObject (500, stored but undecodable)."""
    core.authorize_request(user, "get", rt, namespace, name, subresource)
    core.check_verb(rt, "get", subresource)
    key = rt.storage_key(namespace, name)
    if await core.wait_for_version(resource_version):
        cache = core.kind_cache(rt)
        obj = cache.get(key)
        if obj is None and key in cache.corrupt:
            raise CorruptObject(key, cache.corrupt[key])
    else:
        obj = await core.read_current(rt, key, name)  # the cache lags: a consistent read from the store
    if obj is None:
        raise not_found(rt, name)
    if subresource is not None and isinstance(subresource, ViewSubresource):
        if remote(rt) is not None:  # a view reads the version asked (its paths are that version's)
            [obj] = await shown(core, rt, [obj])
        return StoredObject(key, subresource.view(obj.copy_dict()), obj.revision)
    return obj
