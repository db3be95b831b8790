"""The watch cache: `WatchCache` (one store watch, all kinds) and `KindCache` (one kind).

Contract:

- `WatchCache.run()` lists the store, then applies its log in order; every
  kind shares `WatchCache.revision`, the last revision applied.
- Each `KindCache` holds its current objects (decoded once, as the store
  wrote them; an object read from the store, not written by this process,
  is checked at once and decoded when first read, the newest
  `decode_budget` decodes keeping their dict) and its event history. History is trimmed by age, so it
  covers `history_seconds`, and by size: all kinds' history together holds
  at most `max_history_bytes` (each event counts its object's encoded size
  plus `EVENT_OVERHEAD`), the oldest events going first, so a high write
  rate of big objects cannot grow memory without bound. Either way it is
  complete for every revision greater than `WatchCache.oldest_revision`; a
  watch from an older revision is the caller's to serve (from the store's
  log, or 410).
- Snapshots (`KindCache.snapshot(R)`): the kind's state at an older revision
  R, made by rolling the current state back through the history events newer
  than R. They cost no memory beyond the history (the last few are memoised).
  A snapshot exists for R >= `KindCache.snapshot_floor`: once the history
  holds more than `capacity` events, snapshots of revisions whose events are
  older than `SNAPSHOT_FRESH_SECONDS` (75 s) are given up, as Kubernetes does
  with a full cache; the caller then reads the store. (Compaction of the store
  also ends snapshots: the caller checks the store's compacted revision.)
- `KindCache.view(R)` is the state at R (the current one, or a snapshot) as
  a `SortedObjects`: a page of a paged list costs O(log n + page), never the
  collection (`runtime.server.watchcache.pages`).
- The first list of the store (and a relist) is read in pages of
  `INITIAL_LIST_CHUNK` entries, all at the first page's revision, so a huge
  store is never held twice (raw and decoded) and other tasks run between
  pages.
- `KindCache.watch()` registers a `Watcher` atomically with respect to
  incoming events: initial state and/or history replay first, then live
  events, each filtered by the watcher's matcher (an object that stops
  matching is DELETED, one that starts matching is ADDED).

Internal to `runtime.server.watchcache`: imported by its modules only.
"""

from __future__ import annotations

import bisect
import logging
import math
import weakref
from collections import OrderedDict, deque
from itertools import islice
from typing import Any, Callable, Iterable

import trio

from runtime.machinery.storedobject import (
    DEFAULT_DECODE_BUDGET, CorruptObject, DecodeBudget, StoredObject, decode_stored,
)
from runtime.server.storage import Compacted, StoreEvent, Store, StoreUnavailable
from runtime.server.watchcache.fresh import SharedRevisionReads
from runtime.server.watchcache.mailbox import start_timer
from runtime.server.watchcache.pages import SortedObjects
from runtime.server.watchcache.watchers import EVENT_OVERHEAD, CacheEvent, Matcher, TooOld, Watcher

__all__ = [
    "KindCache", "WatchCache", "SNAPSHOT_FRESH_SECONDS", "DEFAULT_CAPACITY", "DEFAULT_MAX_HISTORY_BYTES",
    "INITIAL_LIST_CHUNK",
]

log = logging.getLogger(__name__)

#: Snapshots of revisions younger than this survive a full cache (Kubernetes' eventFreshDuration).
SNAPSHOT_FRESH_SECONDS = 75.0
#: History events per kind beyond which old snapshots are given up (Kubernetes' upper watch cache size).
DEFAULT_CAPACITY = 100 * 1024
#: Snapshots memoised per kind (the pages of a paged list share one).
_MEMO_SNAPSHOTS = 4
#: Encoded bytes the history of all kinds may hold (decoded, an object takes about ten times its JSON).
DEFAULT_MAX_HISTORY_BYTES = 64 * 1024 * 1024
#: Entries per store read of the cache's (re)list.
INITIAL_LIST_CHUNK = 1000
#: First and longest wait (s) before reading the store again after a failed read.
RETRY_DELAYS = (0.1, 5.0)


def _decode(key: str, value: bytes, revision: int, corrupt: dict[str, str], budget: DecodeBudget,
            origin: object = None) -> StoredObject | None:
    """The stored object (see `decode_stored`); None for a value that does not decode (recorded, logged).

    A corrupt row must not stop the cache (Kubernetes serves the rest and
    answers a GET of that object with a 500 "corrupt object").
    """
    try:
        obj = decode_stored(key, value, revision, origin, lazy=budget)
    except CorruptObject as exc:
        corrupt[key] = exc.detail
        log.error("watch cache: skipping corrupt object %s at revision %d: %s", key, revision, exc.detail)
        return None
    corrupt.pop(key, None)
    return obj


class KindCache:
    """Current objects and the recent history of one kind (one storage prefix)."""

    def __init__(self, owner: "WatchCache", prefix: str, capacity: int = DEFAULT_CAPACITY) -> None:
        self._owner = owner
        self.prefix = prefix
        self.capacity = capacity
        self.objects: dict[str, StoredObject] = {}
        self.history: deque[CacheEvent] = deque()
        self.history_bytes = 0  # sum of the history's event sizes
        self._watchers: set[Watcher] = set()
        #: Each filter an open watcher has, by itself: weakly, so a filter goes with its last watcher.
        self._filters: weakref.WeakValueDictionary[Matcher, Matcher] = weakref.WeakValueDictionary()
        self._keys: list[str] = []  # sorted keys of `objects`, kept in step with it
        self._evicted = 0  # snapshots of revisions <= this were given up (full cache)
        self._memo: OrderedDict[int, tuple[list[str], list[StoredObject]]] = OrderedDict()
        #: Keys whose stored value does not decode -> why; left out of `objects` (GET answers 500).
        self.corrupt: dict[str, str] = {}

    @property
    def revision(self) -> int:
        return self._owner.revision

    @property
    def snapshot_floor(self) -> int:
        """Snapshots exist for revisions >= this (and <= `revision`)."""
        return max(self._owner.oldest_revision, self._evicted)

    @property
    def watchers(self) -> int:
        """Open watchers of this kind."""
        return len(self._watchers)

    def get(self, key: str) -> StoredObject | None:
        return self.objects.get(key)

    def list(self, prefix: str = "", match: Matcher | None = None) -> list[StoredObject]:
        """Objects under `prefix`, sorted by key, at `self.revision`."""
        if prefix and prefix != self.prefix:
            objs = SortedObjects(self._keys, lambda i: self.objects[self._keys[i]]).page(prefix)[0]
        else:
            objs = [self.objects[k] for k in self._keys]
        return [o for o in objs if match(o)] if match is not None else objs

    def snapshot(self, revision: int, prefix: str = "") -> list[StoredObject] | None:
        """Objects under `prefix` sorted by key as they were at `revision`.

        Returns None when no snapshot of that revision is kept (older than
        `snapshot_floor`, or newer than the cache).
        """
        if revision == self.revision:
            return self.list(prefix)
        view = self.view(revision)
        return None if view is None else view.page(prefix)[0]

    def view(self, revision: int) -> SortedObjects | None:
        """The objects at `revision` sorted by key: the current state, or a snapshot (None: none kept)."""
        if revision == self.revision:
            keys, objects = self._keys, self.objects
            return SortedObjects(keys, lambda i: objects[keys[i]])
        if revision > self.revision or revision < self.snapshot_floor:
            return None
        memo = self._memo.get(revision)
        if memo is None:
            memo = self._roll_back(revision)
            self._memo[revision] = memo
            while len(self._memo) > _MEMO_SNAPSHOTS:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(revision)
        return SortedObjects(memo[0], memo[1].__getitem__)

    def _roll_back(self, revision: int) -> tuple[list[str], list[StoredObject]]:
        # The oldest event after `revision` of each key holds, in `prev`, the key's state at it.
        before: dict[str, StoredObject | None] = {}
        for event in reversed(self.history):
            if event.revision <= revision:
                break
            before[event.obj.key] = event.prev
        keys = sorted(set(self._keys).union(before)) if before else list(self._keys)
        out_keys: list[str] = []
        objs: list[StoredObject] = []
        for key in keys:
            obj = before[key] if key in before else self.objects[key]
            if obj is not None:
                out_keys.append(key)
                objs.append(obj)
        return out_keys, objs

    def watch(self, match: Matcher, *, after_revision: int | None, initial: bool,
              capacity: int = 1000, bookmarks: bool = False) -> Watcher:
        """Open a watcher, atomically with respect to incoming events.

        initial: first a synthetic ADDED for every matching object at the current revision.
        after_revision: replay history after it (raises TooOld when not kept); a
        revision newer than the cache means: skip events up to it.
        """
        after = 0
        if after_revision is not None:
            if after_revision < self._owner.oldest_revision:
                raise TooOld(after_revision, self._owner.oldest_revision)
            after = after_revision
        replay = [e for e in self._events_after(after_revision)] if after_revision is not None else []
        current = self.list(match=match) if initial else []
        watcher = Watcher(self, self._shared(match), capacity + len(current) + len(replay), bookmarks, after)
        for obj in current:
            watcher.deliver(("ADDED", obj))
        watcher.initial_count = len(current)
        for event in replay:
            watcher.offer(event)
        self._watchers.add(watcher)
        return watcher

    def _shared(self, match: Matcher) -> Matcher:
        """`match`, or an equal filter an open watcher has: equal filters share one identity, so that an
        event is tested once per filter (`Watcher.offer`). A filter that does not hash is its own."""
        try:
            return self._filters.setdefault(match, match)
        except TypeError:
            return match

    def drop_watcher(self, watcher: Watcher) -> None:
        """Offer `watcher` no more events (its `close()` calls this)."""
        self._watchers.discard(watcher)

    def _events_after(self, revision: int | None) -> Iterable[CacheEvent]:
        if revision is None or revision >= self.revision or not self.history:
            return []
        # History is in revision order: bisect for the first event after `revision`.
        lo, hi = 0, len(self.history)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.history[mid].revision <= revision:
                lo = mid + 1
            else:
                hi = mid
        return islice(self.history, lo, None)

    def _apply(self, event: CacheEvent) -> None:
        key = event.obj.key
        if event.type == "DELETED":
            if self.objects.pop(key, None) is not None:
                i = bisect.bisect_left(self._keys, key)
                del self._keys[i]
        else:
            if key not in self.objects:
                bisect.insort(self._keys, key)
            self.objects[key] = event.obj
        self.history.append(event)
        self.history_bytes += event.size
        self._owner.history_bytes += event.size
        seen: dict[int, tuple[str, StoredObject] | None] = {}  # per filter: watches of one selector test it once
        for watcher in list(self._watchers):
            watcher.offer(event, seen)

    def _trim(self, cutoff: float) -> int:
        """Drop history older than `cutoff`; returns the newest revision dropped (0: none)."""
        dropped = 0
        while self.history and self.history[0].time < cutoff:
            dropped = self._drop_oldest()
        return dropped

    def _drop_oldest(self) -> int:
        """Drop the oldest history event; returns its revision."""
        event = self.history.popleft()
        self.history_bytes -= event.size
        self._owner.history_bytes -= event.size
        return event.revision

    def _evict_snapshots(self, fresh_after: float) -> None:
        """A full cache gives up snapshots of revisions whose events are older than `fresh_after`."""
        excess = len(self.history) - self.capacity
        if excess <= 0:
            return
        for event in islice(self.history, excess):
            if event.time >= fresh_after:
                break
            self._evicted = max(self._evicted, event.revision)
        self._forget_memo()

    def _forget_memo(self) -> None:
        floor = self.snapshot_floor
        for revision in [r for r in self._memo if r < floor]:
            del self._memo[revision]

    def _reset(self, objects: Iterable[StoredObject]) -> None:
        self.objects = {o.key: o for o in objects}
        self._keys = sorted(self.objects)
        self.history.clear()
        self._owner.history_bytes -= self.history_bytes
        self.history_bytes = 0
        self._memo.clear()
        for watcher in list(self._watchers):
            watcher.gone = True
            watcher.close()


class WatchCache:
    """Every kind's cache, fed in order by one watch of the whole store."""

    def __init__(self, store: Store, prefixes: Iterable[str] = (), *, history_seconds: float = 300.0,
                 capacity: int = DEFAULT_CAPACITY, max_history_bytes: int = DEFAULT_MAX_HISTORY_BYTES,
                 decode_budget: int = DEFAULT_DECODE_BUDGET,
                 decode_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.store = store
        #: Consistent reads ask the store's revision through this: concurrent readers share a call.
        self.store_revisions = SharedRevisionReads(store.current_revision)
        self.history_seconds = history_seconds
        self.max_history_bytes = max_history_bytes
        #: What the history of every kind counts for against `max_history_bytes`.
        self.history_bytes = 0
        self._capacity = capacity
        #: The objects read from the store decode when first read; this many newest decodes keep their dict,
        #: and each keeps `decode_view` of itself, made by its check, for the in-process informers.
        self.decodes = DecodeBudget(decode_budget, decode_view)
        #: One cache per kind prefix (`/<group>/<plural>/`), made when a kind is asked for or its first key
        #: is seen: kinds added while the server runs (custom kinds) find their objects already here.
        self.kinds: dict[str, KindCache] = {}
        for prefix in prefixes:
            self.kind(prefix)
        self.revision = 0
        self.oldest_revision = 0  # history is complete for every revision > this
        self._progress = trio.Event()
        #: Set when `run` ends: nothing will be applied any more, so `wait_for` stops waiting.
        self.stopped = False
        self._handlers: list[Callable[[CacheEvent], None]] = []

    def kind(self, prefix: str) -> KindCache:
        """The cache of the kind whose keys start with `prefix` (`/<group>/<plural>/`), made on first use."""
        cache = self.kinds.get(prefix)
        if cache is None:
            cache = self.kinds[prefix] = KindCache(self, prefix, self._capacity)
        return cache

    def add_handler(self, handler: Callable[[CacheEvent], None]) -> None:
        """Call `handler` (sync, quick) for every event after it is applied (e.g. the RBAC index)."""
        self._handlers.append(handler)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """List the store, then follow its log forever; relist if the log was compacted under us.

        A failing store read (say a disk I/O error) does not stop the cache: the
        watch resumes from the last applied revision, and a relist is tried
        again, after a backoff (`RETRY_DELAYS`). Only a failure of the very first
        list propagates: there is nothing to serve without it.
        """
        start_timer()  # the watches' deadline keeper, one per trio run: running before the first watch
        try:
            await self._list_and_follow(task_status)
        finally:
            self.stopped = True
            self._progress.set()  # wakes every `wait_for`: a stopped cache will not catch up

    async def _list_and_follow(self, task_status: trio.TaskStatus[None]) -> None:
        started = False
        delay = RETRY_DELAYS[0]
        while True:
            try:
                grouped, corrupt, revision = await self._list_store()
            except Exception:
                if not started:
                    raise
                log.exception("watch cache: relisting the store failed; retrying in %.1f s", delay)
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_DELAYS[1])
                continue
            delay = RETRY_DELAYS[0]
            for prefix, objs in grouped.items():
                self.kind(prefix)._reset(objs)
                self.kinds[prefix].corrupt = corrupt[prefix]
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
                    await self._follow()
                    nursery.cancel_scope.cancel()
            except Compacted:
                log.warning("watch cache fell behind compaction; relisting")

    async def _list_store(self) -> tuple[dict[str, list[StoredObject]], dict[str, dict[str, str]], int]:
        """The store's objects by kind prefix, its corrupt keys by prefix, and the revision listed.

        Read in pages of `INITIAL_LIST_CHUNK` at the first page's revision;
        a page compacted away meanwhile starts the list over.
        """
        while True:
            grouped: dict[str, list[StoredObject]] = {p: [] for p in self.kinds}
            corrupt: dict[str, dict[str, str]] = {p: {} for p in self.kinds}
            revision: int | None = None
            after = ""
            try:
                while True:
                    entries, revision, more = await self.store.list("/", revision=revision, start_after=after,
                                                                    limit=INITIAL_LIST_CHUNK)
                    for entry in entries:
                        prefix = self._prefix_of(entry.key)
                        if prefix is not None:
                            objs = grouped.setdefault(prefix, [])
                            obj = _decode(entry.key, entry.value, entry.mod_revision, corrupt.setdefault(prefix, {}),
                                          self.decodes)
                            if obj is not None:
                                objs.append(obj)
                    if not more or not entries:
                        return grouped, corrupt, revision
                    after = entries[-1].key
            except Compacted:
                log.warning("watch cache: the list's revision %s was compacted while paging; listing again", revision)

    async def _follow(self) -> None:
        """Apply the store's log after `self.revision`, resuming after a failed read. Raises Compacted."""
        delay = RETRY_DELAYS[0]
        # A store of this process hands its writes over as it commits them (when this task waits with
        # nothing pending): the cache holds a write before the write returns, with no task switch.
        follow = getattr(self.store, "follow", None)
        while True:
            try:
                events = follow("/", after_revision=self.revision, sink=self._apply) if follow is not None \
                    else self.store.watch("/", after_revision=self.revision)
                async for event in events:
                    self._apply(event)
                    delay = RETRY_DELAYS[0]
                return  # a store's watch never ends by itself: start over with a list
            except Compacted:
                raise
            except Exception as exc:  # a remote store (etcd) being down is expected: no traceback then
                log.log(logging.WARNING if isinstance(exc, StoreUnavailable) else logging.ERROR,
                        "watch cache: reading the store's log failed (%s); resuming after revision %d in %.1f s",
                        exc, self.revision, delay, exc_info=not isinstance(exc, StoreUnavailable))
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_DELAYS[1])

    def _prefix_of(self, key: str) -> str | None:
        """`/<group>/<plural>/` of a key `/<group>/<plural>/[<namespace>/]<name>` (None for other shapes)."""
        parts = key.split("/", 3)
        if len(parts) < 4 or parts[0] or not parts[1] or not parts[2]:
            return None
        return f"/{parts[1]}/{parts[2]}/"

    def _apply(self, event: StoreEvent) -> None:
        prefix = self._prefix_of(event.key)
        if prefix is not None:
            cache = self.kind(prefix)
            prev = cache.objects.get(event.key)
            now = trio.current_time()
            size = len(event.value if event.value is not None else event.prev_value or b"") + EVENT_OVERHEAD
            if event.type == "DELETED":
                if cache.corrupt.pop(event.key, None) is not None:
                    prev = None  # a corrupt object: watchers never saw it, nothing to tell them
                elif prev is None and event.prev_value is not None:
                    prev = _decode(event.key, event.prev_value, event.revision, {}, self.decodes)
                if prev is not None:
                    cache_event = CacheEvent("DELETED", self._gone(prev, event.revision), prev,
                                             event.revision, now, size)
                    cache._apply(cache_event)
                    self._call_handlers(cache_event)
            else:
                assert event.value is not None
                obj = _decode(event.key, event.value, event.revision, cache.corrupt, self.decodes, event.origin)
                if obj is None:
                    if prev is not None:  # became unreadable: gone from every watcher's view
                        cache_event = CacheEvent("DELETED", self._gone(prev, event.revision), prev,
                                                 event.revision, now, size)
                        cache._apply(cache_event)
                        self._call_handlers(cache_event)
                else:
                    cache.corrupt.pop(event.key, None)
                    kind = "MODIFIED" if prev is not None else "ADDED"
                    cache_event = CacheEvent(kind, obj, prev, event.revision, now, size)
                    cache._apply(cache_event)
                    self._call_handlers(cache_event)
            if self.history_bytes > self.max_history_bytes:
                self._shed()
        self.revision = event.revision
        self._notify()

    def _gone(self, prev: StoredObject, revision: int) -> StoredObject:
        """A DELETED event's object: `prev` stamped with `revision`, held as bytes like the others."""
        return prev.with_revision(revision).keep_within(self.decodes)

    def _shed(self) -> None:
        """Drop the oldest events of all kinds until the history fits `max_history_bytes`."""
        while self.history_bytes > self.max_history_bytes:
            oldest = min((c for c in self.kinds.values() if c.history), key=lambda c: c.history[0].revision,
                         default=None)
            if oldest is None:
                break
            self.oldest_revision = max(self.oldest_revision, oldest._drop_oldest())
        for cache in self.kinds.values():
            cache._forget_memo()

    def _call_handlers(self, event: CacheEvent) -> None:
        for handler in self._handlers:
            try:
                handler(event)
            except Exception:  # a broken handler must not stop the cache
                log.exception("watch cache handler failed")

    def _notify(self) -> None:
        self._progress.set()
        self._progress = trio.Event()

    def trim(self) -> None:
        """Drop history older than the window, and snapshots of a full cache (see the module doc)."""
        now = trio.current_time()
        cutoff = now - self.history_seconds
        for cache in self.kinds.values():
            dropped = cache._trim(cutoff)
            # Revisions are applied in time order, so every kind keeps all events after the
            # newest one any kind dropped.
            self.oldest_revision = max(self.oldest_revision, dropped)
        for cache in self.kinds.values():
            cache._evict_snapshots(now - SNAPSHOT_FRESH_SECONDS)
            cache._forget_memo()

    async def _trim_loop(self) -> None:
        while True:
            await trio.sleep(min(10.0, self.history_seconds / 4))
            self.trim()

    async def wait_for(self, revision: int, timeout: float = math.inf) -> bool:
        """Wait until the cache has applied `revision`. Returns False on timeout or once the cache stopped."""
        if self.revision >= revision:  # the common case: no cancel scope, no scheduling
            await trio.lowlevel.checkpoint()
            return True
        with trio.move_on_after(timeout):
            while self.revision < revision:
                if self.stopped:
                    return False
                await self._progress.wait()
            return True
        return False

    async def wait_fresh(self, timeout: float = 3.0) -> bool:
        """Wait until the cache holds the store's current revision (a consistent read).

        Returns False when it did not catch up within `timeout`.
        """
        return await self.wait_for(await self.store_revisions.current(), timeout)

