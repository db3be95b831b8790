"""Conversion that calls out (a CRD's conversion webhook) on the registry's paths: awaited, batched.

A kind whose strategy is a `RemoteConverter` that `converts_remotely` stores
every object in its storage version and serves it in the version asked, as
kube-apiserver's storage codec converts on decode and encode. The webhook is
async HTTP, so the registry awaits it here; every other kind keeps its
strategy's synchronous `present`, at no cost (`remote(rt)` is None):

- `shown(core, rt, objs, listed=)`: stored objects in `rt`'s version; those
  of another version go to the webhook in one ConversionReview (a LIST is
  one review, as kube converts an UnstructuredList), then the strategy's
  `present` (defaults). Objects of another kind (a Scale view) pass as they are.
- `converting(core, rt)`: the registry core the write path of such a kind
  runs on (`create_object`, `guaranteed_update`): the same core, but its
  store (`ConvertingStore`) hands the write path objects in `rt`'s version
  and stores them in the storage version. So admission, defaulting,
  validation (and its ratcheting against the old object) and managed fields
  see the request's version throughout, as kube's handlers see their
  version's hub; keys outside the kind's prefix (the namespace check) pass
  through untouched.

Every failure is `ConversionFailed` (500, kube's words); a watch ends with
it as an ERROR event (`runtime.server.registry.watching`).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.scheme import ResourceType
from runtime.machinery.storedobject import ObjectEncoder, StoredObject, decode_stored, dumps_json
from runtime.server.kinds.conversionwebhook import RemoteConverter
from runtime.server.registry.primitives import RegistryCore
from runtime.server.storage import Entry, RevisionConflict
from runtime.server.storage.encryption import is_stale

__all__ = ["remote", "shown", "converting", "ConvertingStore"]


def remote(rt: ResourceType) -> RemoteConverter | None:
    """The kind's converter when converting calls out (None: its synchronous `present` does it)."""
    strategy = rt.strategy
    return strategy if isinstance(strategy, RemoteConverter) and strategy.converts_remotely else None


async def shown(core: RegistryCore, rt: ResourceType, objs: list[StoredObject], *,
                listed: bool = False) -> list[StoredObject]:
    """`objs` as `rt`'s version shows them (see the module doc). Raises ConversionFailed."""
    converter = remote(rt)
    if converter is None:
        return [rt.strategy.present(o) for o in objs] if rt.strategy.converts else objs
    todo = [i for i, o in enumerate(objs) if o.obj.get("kind") == rt.kind and o.obj.get("apiVersion") != rt.api_version]
    out = [rt.strategy.present(o) for o in objs]
    if todo:
        converted = await converter.to_version(core.webhook_client, [objs[i] for i in todo], listed=listed)
        for i, obj in zip(todo, converted):
            out[i] = obj
    return out


def converting(core: RegistryCore, rt: ResourceType) -> RegistryCore:
    """`core` itself for a kind that converts in place; else a copy of it whose store converts (see the
    module doc). A shallow copy: it shares every part (cache, admission, authorizer) but the store."""
    converter = remote(rt)
    if converter is None:
        return core
    view = copy.copy(core)
    view.store = ConvertingStore(core.store, core, rt, converter)  # type: ignore[assignment]
    return view


class ConvertingStore:
    """The store as a write of `rt` sees it: values of the kind's keys in `rt`'s version (the webhook
    converts on every get, create, update and conflict). Only what the write path calls is here."""

    def __init__(self, store: Any, core: RegistryCore, rt: ResourceType, converter: RemoteConverter) -> None:
        self._store = store
        self._core = core
        self._rt = rt
        self._converter = converter

    def _ours(self, key: str) -> bool:
        return key.startswith(self._rt.storage_prefix)

    async def _to_request(self, entry: Entry) -> Entry:
        stored = decode_stored(entry.key, entry.value, entry.mod_revision)
        [converted] = await shown(self._core, self._rt, [stored])
        if converted is stored:
            return entry
        return Entry(entry.key, dumps_json(converted.obj), entry.mod_revision, entry.create_revision)

    async def _encoded(self, encoder: ObjectEncoder) -> ObjectEncoder:
        return ObjectEncoder(await self._converter.to_storage(self._core.webhook_client, encoder.obj))

    async def get(self, key: str) -> Entry | None:
        entry = await self._store.get(key)
        return entry if entry is None or not self._ours(key) else await self._to_request(entry)

    async def create(self, key: str, encoder: ObjectEncoder) -> Entry:
        if not self._ours(key):
            return await self._store.create(key, encoder)
        entry = await self._store.create(key, await self._encoded(encoder))
        return self._answered(encoder, entry)

    async def update(self, key: str, encoder: ObjectEncoder, *, expected_revision: int) -> Entry:
        if not self._ours(key):
            return await self._store.update(key, encoder, expected_revision=expected_revision)
        stored = await self._encoded(encoder)
        try:
            entry = await self._store.update(key, stored, expected_revision=expected_revision)
        except RevisionConflict as exc:
            # The state that won, in the request's version: the write path retries on it.
            raise RevisionConflict(key, await self._to_request(exc.current)) from None
        return self._answered(encoder, entry)

    async def delete(self, key: str, *, expected_revision: int | None = None) -> Any:
        return await self._store.delete(key, expected_revision=expected_revision)

    async def stale(self, key: str) -> bool:
        """Whether the stored value is sealed by an old key (`runtime.server.storage.encryption.is_stale`)."""
        return await is_stale(self._store, key)

    @staticmethod
    def _answered(encoder: ObjectEncoder, entry: Entry) -> Entry:
        """The written entry as the write path reads it back: the request's object at the stored revision."""
        value = encoder(entry.mod_revision)
        return Entry(entry.key, value, entry.mod_revision, entry.create_revision)
