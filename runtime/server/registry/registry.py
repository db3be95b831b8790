"""`Registry`: the one entry point of every request, over HTTP or in-process — a thin facade.

Each call carries the caller's `UserInfo`; the registry authorizes it (RBAC),
decodes and validates the body, runs the kind's strategy, and reads from the
watch cache or writes to the store. Dry run stops right before persisting.
Each verb lives in its own module (`reads`, `listing`, `watching`, `writes`,
`patching`, `deletion`, `reviews`), built on `RegistryCore`'s primitives.
A request's subresource is resolved here, once: its name (the path's) to the
kind's object of it (`runtime.server.kinds.Subresource`), which the verb
modules are handed (None: the main resource). What it answers is in the
version asked (`runtime.server.registry.conversion`: a CRD's conversion
webhook awaited, a LIST in one review).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import functools
from typing import Any

from runtime.machinery.storedobject import StoredObject
from runtime.server.kinds import Subresource
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import conversion
from runtime.server.registry import deletion
from runtime.server.registry import listing
from runtime.server.registry import patching
from runtime.server.registry import reads
from runtime.server.registry import reviews
from runtime.server.registry import action_subresources as subresources
from runtime.server.registry import watching
from runtime.server.registry import writes
from runtime.server.registry.answers import DeleteResult, ListResult, WriteResult
from runtime.server.registry.primitives import RegistryCore
from runtime.machinery.options import Body, ListOptions, ParsedDeleteOptions, PatchType, WriteOptions, patch_type
from runtime.machinery.scheme import ResourceType

__all__ = ["Registry"]


class Registry(RegistryCore):
    """Serves every kind of `scheme` from `store`, authorized by `authorizer` (RBAC by default).

    Start `run()` in a nursery before serving: it fills the watch cache.
    Every method raises the `runtime.machinery.errors` answer of a refused request.
    """

    async def get(self, user: UserInfo, rt: ResourceType, namespace: str, name: str, *,
                  resource_version: str | None = None, subresource: str = "") -> StoredObject:
        """One object (see `runtime.server.registry.reads`)."""
        part = _subresource(rt, subresource) if subresource else None
        obj = await reads.get(self, user, rt, namespace, name, resource_version=resource_version, subresource=part)
        return (await conversion.shown(self, rt, [obj]))[0]

    async def get_cached(self, user: UserInfo, rt: ResourceType, namespace: str, name: str) -> StoredObject | None:
        """`get(user, rt, namespace, name)` when the watch cache answers it as it stands, else None (a kind
        a webhook converts, the cache lagging behind the store, no such object: `get` does more or answers
        otherwise). Raises what `get` raises before reading (Forbidden, MethodNotAllowed, ServiceUnavailable)."""
        if conversion.remote(rt) is not None:
            return None
        self.authorize_request(user, "get", rt, namespace, name)
        self.check_verb(rt, "get")
        if not await self.wait_for_version(None):
            return None
        obj = self.kind_cache(rt).get(rt.storage_key(namespace, name))
        if obj is None:
            return None
        return rt.strategy.present(obj) if rt.strategy.converts else obj

    async def list(self, user: UserInfo, rt: ResourceType, namespace: str, opts: ListOptions) -> ListResult:
        """A collection (the paging and resourceVersion rules live in `runtime.server.registry.listing`)."""
        listed = await listing.list_objects(self, user, rt, namespace, opts)
        if rt.strategy.converts:
            listed.items = await conversion.shown(self, rt, listed.items, listed=True)
        return listed

    async def open_watch(self, user: UserInfo, rt: ResourceType, namespace: str,
                         opts: ListOptions) -> watching.WatchStream:
        """A watch stream (see `runtime.server.registry.watching`)."""
        stream = await watching.open_watch(self, user, rt, namespace, opts)
        stream.present = rt.strategy.present
        if conversion.remote(rt) is not None:
            stream.convert = functools.partial(conversion.shown, self, rt)
        return stream

    async def create(self, user: UserInfo, rt: ResourceType, namespace: str, body: Body,
                     opts: WriteOptions = WriteOptions(), *, name: str = "", subresource: str = "") -> WriteResult:
        """POST: a new object (201); for a virtual kind (a review), its evaluation; to a `subresource` of
        object `name` that is another kind (a ServiceAccount's token), the kind's answer."""
        if subresource:
            return await subresources.create_on(self, user, rt, namespace, name, _subresource(rt, subresource), body,
                                                opts)
        if rt.virtual:
            return await reviews.review(self, user, rt, namespace, body, opts)
        return await self._presented(rt, await writes.create(self, user, rt, namespace, body, opts))

    async def update(self, user: UserInfo, rt: ResourceType, namespace: str, name: str, body: Body,
                     opts: WriteOptions = WriteOptions(), *, subresource: str = "") -> WriteResult:
        """PUT: replace an object (200), or create it when missing (201) if the kind allows it."""
        part = _subresource(rt, subresource) if subresource else None
        return await self._presented(rt, await writes.update(self, user, rt, namespace, name, body, opts, part))

    async def patch(self, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                    kind: PatchType | str, body: Body, opts: WriteOptions = WriteOptions(), *,
                    subresource: str = "") -> WriteResult:
        """PATCH in one of the four types: a `PatchType`, or a Content-Type (415 if unknown)."""
        if not isinstance(kind, PatchType):
            kind = patch_type(kind, cbor=self.gate("CBORServingAndStorage"),
                              strategic=rt.strategy.supports_strategic_merge)
        part = _subresource(rt, subresource) if subresource else None
        return await self._presented(rt, await patching.patch(self, user, rt, namespace, name, kind, body, opts,
                                                              part))

    async def delete(self, user: UserInfo, rt: ResourceType, namespace: str, name: str,
                     options: ParsedDeleteOptions = ParsedDeleteOptions()) -> DeleteResult:
        """DELETE: two-phase when the object has finalizers (see `runtime.server.registry.deletion`)."""
        deleted = await deletion.delete(self, user, rt, namespace, name, options)
        if isinstance(deleted.body, StoredObject):
            deleted.body = (await conversion.shown(self, rt, [deleted.body]))[0]
        return deleted

    async def delete_collection(self, user: UserInfo, rt: ResourceType, namespace: str,
                                list_opts: ListOptions, options: ParsedDeleteOptions) -> dict[str, Any]:
        """DELETE on a collection: every matching object, as single deletes; a success Status."""
        return await deletion.delete_collection(self, user, rt, namespace, list_opts, options)

    async def _presented(self, rt: ResourceType, result: WriteResult) -> WriteResult:
        """A write's answer in the version it was asked in (custom kinds store another one)."""
        result.obj = (await conversion.shown(self, rt, [result.obj]))[0]
        return result

    def allowed(self, attrs: Attributes) -> bool:
        """Whether the authorizer allows `attrs` (impersonation checks, non-resource paths)."""
        return self.decide(attrs).allowed


class _Unserved(Subresource):
    """A subresource the kind does not have: it serves no verb, so the verb is refused as any verb the
    kind does not offer (405), once the caller may ask for it (403 first)."""

    verbs = ()

    def __init__(self, name: str) -> None:
        self.name = name


def _subresource(rt: ResourceType, name: str) -> Subresource:
    """The kind's object of the subresource the path names (`_Unserved` when it has none)."""
    return rt.strategy.subresources.get(name) or _Unserved(name)
