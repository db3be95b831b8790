"""The watch cache: `WatchCache` (one store watch, all kinds) and `KindCache` (one kind)."""

from __future__ import annotations

import logging
import math
from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable

import trio

from runtime.objects import StoredObject
from runtime.storage import Compacted, Event, Store

__all__ = ["CacheEvent", "Watcher", "KindCache", "WatchCache", "TooOld"]

log = logging.getLogger(__name__)


class TooOld(Exception):
    """A watch from a revision older than the cache's history (answered 410 Gone)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


@dataclass(frozen=True)
class CacheEvent:
    """A change of one object: `obj` is the new state (for DELETED, the last state stamped
    with the delete's revision); `prev` the state before (None for ADDED)."""

    type: str
    obj: StoredObject
    prev: StoredObject | None
    revision: int
    time: float


#: A watcher's filter: does this object (in this namespace-prefix, with these selectors) count?
Matcher = Callable[[StoredObject], bool]


class Watcher:
    """One watch on a kind. Events arrive on `events` (a bounded channel).

    A watcher that falls `capacity` events behind is closed with `overflowed`
    set: the client re-watches from its last resourceVersion, as Kubernetes'
    cacher does with slow watchers.
    """

    def __init__(self, cache: "KindCache", match: Matcher, capacity: int, bookmarks: bool) -> None:
        self._cache = cache
        self.match = match
        self.bookmarks = bookmarks
        self._send, self.events = trio.open_memory_channel[tuple[str, StoredObject | int]](capacity)
        self.overflowed = False
        self.gone = False  # the cache restarted its history: the client must relist
        self.initial_count = 0  # synthetic ADDED events queued first

    def _deliver(self, item: tuple[str, StoredObject | int]) -> None:
        try:
            self._send.send_nowait(item)
        except trio.WouldBlock:
            self.overflowed = True
            self.close()
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self.close()

    def offer(self, event: CacheEvent) -> None:
        """Send `event` as this watcher sees it: selectors turn changes into ADDED/DELETED."""
        now = self.match(event.obj)
        before = event.prev is not None and self.match(event.prev)
        if event.type == "ADDED":
            if now:
                self._deliver(("ADDED", event.obj))
        elif event.type == "MODIFIED":
            if now and before:
                self._deliver(("MODIFIED", event.obj))
            elif now:
                self._deliver(("ADDED", event.obj))
            elif before:
                self._deliver(("DELETED", event.prev.with_revision(event.revision)))
        elif event.type == "DELETED" and self.match(event.obj):
            self._deliver(("DELETED", event.obj))

    def bookmark(self, revision: int) -> None:
        if self.bookmarks:
            self._deliver(("BOOKMARK", revision))

    def close(self) -> None:
        self._cache._watchers.discard(self)
        self._send.close()


class KindCache:
    """Current objects and the recent history of one kind (one storage prefix)."""

    def __init__(self, owner: "WatchCache", prefix: str) -> None:
        self._owner = owner
        self.prefix = prefix
        self.objects: dict[str, StoredObject] = {}
        self.history: deque[CacheEvent] = deque()
        self._watchers: set[Watcher] = set()
        self._sorted_keys: list[str] | None = None

    @property
    def revision(self) -> int:
        return self._owner.revision

    def get(self, key: str) -> StoredObject | None:
        return self.objects.get(key)

    def list(self, prefix: str = "", match: Matcher | None = None) -> list[StoredObject]:
        """Objects under `prefix`, sorted by key, at `self.revision`."""
        if self._sorted_keys is None:
            self._sorted_keys = sorted(self.objects)
        keys = self._sorted_keys
        if prefix and prefix != self.prefix:
            import bisect
            start = bisect.bisect_left(keys, prefix)
            end = bisect.bisect_left(keys, prefix + "\uffff")
            keys = keys[start:end]
        objs = [self.objects[k] for k in keys]
        return [o for o in objs if match(o)] if match is not None else objs

    def watch(self, match: Matcher, *, after_revision: int | None, initial: bool,
              capacity: int = 1000, bookmarks: bool = False) -> Watcher:
        """Open a watcher, atomically with respect to incoming events.

        initial: first a synthetic ADDED for every matching object at the current revision.
        after_revision: replay history after it (raises TooOld when not kept).
        """
        if after_revision is not None and after_revision < self._owner.oldest_revision:
            raise TooOld(after_revision, self._owner.oldest_revision)
        backlog = len(self.objects) if initial else 0
        watcher = Watcher(self, match, capacity + backlog + len(self.history), bookmarks)
        if initial:
            for obj in self.list(match=match):
                watcher._deliver(("ADDED", obj))
                watcher.initial_count += 1
        if after_revision is not None:
            for event in self.history:
                if event.revision > after_revision:
                    watcher.offer(event)
        self._watchers.add(watcher)
        return watcher

    def _apply(self, event: CacheEvent) -> None:
        if event.type == "DELETED":
            self.objects.pop(event.obj.key, None)
            self._sorted_keys = None
        else:
            if event.obj.key not in self.objects:
                self._sorted_keys = None
            self.objects[event.obj.key] = event.obj
        self.history.append(event)
        for watcher in list(self._watchers):
            watcher.offer(event)

    def _trim(self, cutoff: float) -> None:
        while self.history and self.history[0].time < cutoff:
            self.history.popleft()

    def _reset(self, objects: Iterable[StoredObject]) -> None:
        self.objects = {o.key: o for o in objects}
        self._sorted_keys = None
        self.history.clear()
        for watcher in list(self._watchers):
            watcher.gone = True
            watcher.close()


class WatchCache:
    """Every kind's cache, fed in order by one watch of the whole store."""

    def __init__(self, store: Store, prefixes: Iterable[str], *, history_seconds: float = 300.0) -> None:
        self.store = store
        self.history_seconds = history_seconds
        self.kinds = {p: KindCache(self, p) for p in prefixes}
        self.revision = 0
        self.oldest_revision = 0  # history is complete for every revision > this
        self._progress = trio.Event()
        self._handlers: list[Callable[[CacheEvent], None]] = []

    def kind(self, prefix: str) -> KindCache:
        return self.kinds[prefix]

    def add_handler(self, handler: Callable[[CacheEvent], None]) -> None:
        """Call `handler` (sync, quick) for every event after it is applied (e.g. the RBAC index)."""
        self._handlers.append(handler)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """List the store, then follow its log forever; relist if the log was compacted under us."""
        started = False
        while True:
            entries, revision = await self.store.list("/")
            grouped: dict[str, list[StoredObject]] = {p: [] for p in self.kinds}
            for entry in entries:
                prefix = self._prefix_of(entry.key)
                if prefix is not None:
                    grouped[prefix].append(StoredObject.from_json(entry.key, entry.value, entry.mod_revision))
            for prefix, objs in grouped.items():
                self.kinds[prefix]._reset(objs)
            self.revision = self.oldest_revision = revision
            self._notify()
            for prefix, objs in grouped.items():
                for obj in objs:
                    self._call_handlers(CacheEvent("ADDED", obj, None, obj.revision, trio.current_time()))
            if not started:
                started = True
                task_status.started()
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._trim_loop)
                    async for event in self.store.watch("/", after_revision=revision):
                        self._apply(event)
                    nursery.cancel_scope.cancel()
            except Compacted:
                log.warning("watch cache fell behind compaction; relisting")

    def _prefix_of(self, key: str) -> str | None:
        for prefix in self.kinds:
            if key.startswith(prefix):
                return prefix
        return None

    def _apply(self, event: Event) -> None:
        prefix = self._prefix_of(event.key)
        if prefix is not None:
            cache = self.kinds[prefix]
            prev = cache.objects.get(event.key)
            now = trio.current_time()
            if event.type == "DELETED":
                if prev is None and event.prev_value is not None:
                    prev = StoredObject.from_json(event.key, event.prev_value, event.revision)
                if prev is not None:
                    cache_event = CacheEvent("DELETED", prev.with_revision(event.revision), prev,
                                             event.revision, now)
                    cache._apply(cache_event)
                    self._call_handlers(cache_event)
            else:
                obj = StoredObject.from_json(event.key, event.value, event.revision)
                kind = "MODIFIED" if prev is not None else "ADDED"
                cache_event = CacheEvent(kind, obj, prev, event.revision, now)
                cache._apply(cache_event)
                self._call_handlers(cache_event)
        self.revision = event.revision
        self._notify()

    def _call_handlers(self, event: CacheEvent) -> None:
        for handler in self._handlers:
            try:
                handler(event)
            except Exception:  # a broken handler must not stop the cache
                log.exception("watch cache handler failed")

    def _notify(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

    async def _trim_loop(self) -> None:
        while True:
            await trio.sleep(min(10.0, self.history_seconds / 4))
            cutoff = trio.current_time() - self.history_seconds
            for cache in self.kinds.values():
                dropped = cache.history[0].revision if cache.history and cache.history[0].time < cutoff else None
                cache._trim(cutoff)
                if dropped is not None:
                    self.oldest_revision = max(self.oldest_revision, dropped)

    async def wait_for(self, revision: int, timeout: float = math.inf) -> bool:
        """Wait until the cache has applied `revision`. Returns False on timeout."""
        with trio.move_on_after(timeout):
            while self.revision < revision:
                await self._progress.wait()
            return True
        return False

    async def wait_fresh(self, timeout: float = 3.0) -> bool:
        """Wait until the cache holds the store's current revision (a consistent read)."""
        return await self.wait_for(await self.store.current_revision(), timeout)
