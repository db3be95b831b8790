"""`ReadYourWritesStore`: the store as the registry writes to it; a write answers once this server's watch cache holds it.

Why: the registry serves reads and authorizes from its watch cache. With a
store of this process (memory, SQLite) the cache holds a write by the time
the write returns (the store hands it over as it commits: nothing to wait
for); with etcd the write's event arrives over etcd's watch a moment after
etcd's answer. Waiting for it keeps one server's answers in
the order of its writes whatever the store: a RoleBinding answered 201
authorizes the next request to that server, a created object is in the next
list at any resourceVersion (Kubernetes' own apiserver does not wait, and
its authorizer lags its writes by an informer's delay).

The wait is bounded (`wait` s): a cache that does not catch up (etcd's
watch broken) delays the answer, never fails the write, which is applied.
Reads, watches and the rest pass through to the store unchanged.

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.server.storage import Entry, Store, ValueEncoder
from runtime.server.watchcache import WatchCache

__all__ = ["ReadYourWritesStore"]


class ReadYourWritesStore:
    """`store` whose create, update and delete return once `cache` holds their revision (at most `wait` s)."""

    def __init__(self, store: Store, cache: WatchCache, wait: float) -> None:
        self.inner = store
        self._cache = cache
        self._wait = wait

    async def create(self, key: str, encode: ValueEncoder) -> Entry:
        entry = await self.inner.create(key, encode)
        await self._settled(entry.mod_revision)
        return entry

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        entry = await self.inner.update(key, encode, expected_revision=expected_revision)
        await self._settled(entry.mod_revision)
        return entry

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        revision, entry = await self.inner.delete(key, expected_revision=expected_revision)
        await self._settled(revision)
        return revision, entry

    async def _settled(self, revision: int) -> None:
        # The write was a checkpoint already: a cache that holds it needs no second one.
        if self._cache.revision < revision:
            await self._cache.wait_for(revision, timeout=self._wait)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # reads, watches, revisions, compaction: the store's own
