"""`LocalClient`: the `Client` interface straight to an in-process `Registry`.

Every call goes through `Registry` exactly as an HTTP request would after
authentication: authorized as `user`, decoded, validated, admitted and
stored. Objects come back as deep copies (the registry's `StoredObject`s are
shared and must not be mutated), except through `shared_reads()`: a client
for readers that never mutate what they read (informers use it), whose
reads hand out the registry's own objects.

Example::

    client = LocalClient(registry, UserInfo("system:apiserver", groups=("system:masters",)))
    ns = await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
"""

from __future__ import annotations

import copy
from contextlib import aclosing, asynccontextmanager
from functools import partial
from typing import Any, AsyncIterator, Callable

from runtime.machinery import errors
from runtime.client.interface import BaseClient, ObjectList, WatchEvent, WatchStream
from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.options import Body, ListOptions, ParsedDeleteOptions, WriteOptions
from runtime.machinery.scheme import ResourceType

__all__ = ["LocalClient"]

#: What an informer caches of an object (`runtime.controller.transforms`).
Transform = Callable[[dict[str, Any]], dict[str, Any]]


def _plain(value: StoredObject | dict[str, Any]) -> dict[str, Any]:
    return value.copy_dict() if isinstance(value, StoredObject) else copy.deepcopy(value)


def _shared(value: StoredObject | dict[str, Any]) -> dict[str, Any]:
    return value.obj if isinstance(value, StoredObject) else value


#: Watch events whose object is the server's word (a Status, a version), not an object of the kind.
_AS_SENT = frozenset({"ERROR", "BOOKMARK"})


def _viewed(transform: Transform, value: StoredObject | dict[str, Any]) -> dict[str, Any]:
    return value.take_view(transform) if isinstance(value, StoredObject) else transform(value)


class LocalClient(BaseClient):
    """A `Client` calling `registry` in-process as `user`.

    `field_manager` is the default field manager of writes (e.g. the
    controller's name); `user_agent` names the caller in managedFields when no
    field manager is given.
    """

    def __init__(self, registry: Registry, user: UserInfo, *, field_manager: str = "",
                 user_agent: str = "miniplane-local-client") -> None:
        super().__init__(registry.scheme, field_manager=field_manager)
        self.registry = registry
        self.user = user
        self.user_agent = user_agent
        #: What reads return of each object, and of a watch's ERROR and BOOKMARK events.
        self._read = self._read_as_sent = _plain

    def with_user(self, user: UserInfo) -> "LocalClient":
        """A client for the same registry acting as another user."""
        client = LocalClient(self.registry, user, field_manager=self.field_manager, user_agent=self.user_agent)
        client._read, client._read_as_sent = self._read, self._read_as_sent
        return client

    def shared_reads(self) -> "LocalClient":
        """This client, with reads (get, list, watch) that return the registry's own objects, not copies.

        For readers that never mutate what they read: an informer (which asks
        for this when its client offers it) then holds the server's cached
        objects themselves, not a second copy of each. Mutating one corrupts
        the server's cache. Writes are unchanged.
        """
        client = self.with_user(self.user)
        client._read = client._read_as_sent = _shared
        return client

    def viewed_reads(self, transform: Transform) -> "LocalClient":
        """`shared_reads()` that return what `transform` makes of each object (a watch's ERROR and
        BOOKMARK events as they are), taken from the watch cache's own view where it keeps one
        (`StoredObject.take_view`): an informer of that transform then never decodes an object twice,
        nor keeps a whole dict for a moment longer than the transform runs."""
        client = self.shared_reads()
        client._read = partial(_viewed, transform)
        return client

    def resource(self, kind: Any) -> ResourceType:
        """The kind as the registry serves it now (custom kinds come and go with their CRDs).

        Raises NotFound when it is not served, as the server answers an unknown resource.
        """
        rt = super().resource(kind)
        served = self.registry.scheme.by_resource(rt.group, rt.version, rt.plural)
        if served is None:
            raise errors.NotFound("the server could not find the requested resource")
        return served

    def _opts(self, opts: WriteOptions) -> WriteOptions:
        return WriteOptions(dry_run=opts.dry_run, field_manager=opts.field_manager,
                            field_validation=opts.field_validation, force=opts.force, user_agent=self.user_agent)

    async def _get(self, rt: ResourceType, namespace: str, name: str, resource_version: str | None,
                   subresource: str) -> dict[str, Any]:
        obj = await self.registry.get(self.user, rt, namespace, name, resource_version=resource_version,
                                      subresource=subresource)
        return self._read(obj)

    async def _list(self, rt: ResourceType, namespace: str, opts: ListOptions) -> ObjectList[dict[str, Any]]:
        listed = await self.registry.list(self.user, rt, namespace, opts)
        read = self._read
        return ObjectList([read(o) for o in listed.items], str(listed.resource_version),
                          listed.continue_token, listed.remaining)

    def _watch(self, rt: ResourceType, namespace: str, opts: ListOptions) -> WatchStream:
        return self._open_watch(rt, namespace, opts)

    @asynccontextmanager
    async def _open_watch(self, rt: ResourceType, namespace: str,
                          opts: ListOptions) -> AsyncIterator[AsyncIterator[WatchEvent]]:
        stream = await self.registry.open_watch(self.user, rt, namespace, opts)
        # The registry's stream never yields inside a cancel scope, so the
        # caller's task may drive it directly; closing it frees the watcher.
        async with aclosing(stream.__aiter__()) as events:
            read, as_sent = self._read, self._read_as_sent

            async def iterate() -> AsyncIterator[WatchEvent]:
                async for event_type, payload in events:
                    yield WatchEvent(event_type, as_sent(payload) if event_type in _AS_SENT else read(payload))

            async with aclosing(iterate()) as iterator:
                yield iterator

    async def _create(self, rt: ResourceType, namespace: str, obj: dict[str, Any],
                      opts: WriteOptions) -> dict[str, Any]:
        result = await self.registry.create(self.user, rt, namespace, Body(copy.deepcopy(obj)), self._opts(opts))
        return result.obj.copy_dict()

    async def _update(self, rt: ResourceType, namespace: str, name: str, obj: dict[str, Any],
                      opts: WriteOptions, subresource: str) -> dict[str, Any]:
        result = await self.registry.update(self.user, rt, namespace, name, Body(copy.deepcopy(obj)),
                                            self._opts(opts), subresource=subresource)
        return result.obj.copy_dict()

    async def _patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str, patch: Any,
                     opts: WriteOptions, subresource: str) -> dict[str, Any]:
        result = await self.registry.patch(self.user, rt, namespace, name, patch_type, Body(copy.deepcopy(patch)),
                                           self._opts(opts), subresource=subresource)
        return result.obj.copy_dict()

    async def _delete(self, rt: ResourceType, namespace: str, name: str, opts: ParsedDeleteOptions) -> dict[str, Any]:
        result = await self.registry.delete(self.user, rt, namespace, name, opts)
        return _plain(result.body)

    async def _delete_collection(self, rt: ResourceType, namespace: str, list_opts: ListOptions,
                                 opts: ParsedDeleteOptions) -> dict[str, Any]:
        return await self.registry.delete_collection(self.user, rt, namespace, list_opts, opts)
