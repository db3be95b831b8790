"""Informers: a local, always-current cache of one kind, fed by list + watch (client-go's SharedInformer).

`Informer(client, kind)` lists the kind, then watches from the list's
resourceVersion, asking for bookmarks:

- after a dropped or ended watch it resumes from the last version it saw
  (an event's or a bookmark's), so nothing is missed or repeated;
- a watch answered 410 Gone (an ERROR event with code 410, or a 410 answer)
  means that version left the server's history: it relists, and objects gone
  meanwhile are reported DELETED with `final_state_unknown` and their last
  known state (client-go's `DeletedFinalStateUnknown` tombstones);
- failed lists and watches are retried with exponential backoff (0.8 s
  doubling to 30 s, as client-go's reflector).

The store of current objects is owned by the informer's `run()` task; reads
(`get`, `list`, `by_index`) are sync and never block. Indexers (client-go's
`Indexer`) are named functions mapping an object to index values
(`namespace` is built in; add more with `add_indexers({name: fn})`);
`by_index(name, value)` returns the objects filed under a value, costing
O(those objects), never O(the cache). Reads return objects in no particular
order: sort where order matters. `statistics()` counts the reads and the
objects they visited (a `list()` visits every cached object, `by_index` its
bucket, `get` one), so a test can prove what one event costs a controller
as the cache grows. Handlers are sync callables
receiving an `ObjectEvent`; they run inline, in per-object order, after the
store has changed, and must be quick (enqueue a key). A handler added after
the first list gets an ADDED for every object first (replayed adds).
`add_handler(h, replay=False)` skips that replay, for handlers whose
events only wake objects that are reconciled anyway when their own kind is
replayed (see `runtime.controller.controller.Builder.watches`).
`has_synced()` is true once the first list is in the store; `run()` calls
`task_status.started()` then. `wait_for(rv)` waits until the store reflects
at least resourceVersion `rv` (read-your-writes after a client write).
`resync_period` re-delivers every object as MODIFIED with `old is obj`.
`transform` (client-go's SetTransform) maps each listed or watched object
(ADDED, MODIFIED, DELETED; not bookmarks) before it is stored, indexed or
handed to handlers: the cache holds only what it returns. It must return a
new object, never mutate its input (a shared one). An informer with a
transform lists in pages (`runtime.controller.pager`), so what it drops of
each page is freed before the next is read. `partial_metadata` is
the transform of a metadata-only informer (Kubernetes' PartialObjectMetadata,
managed fields stripped), whose objects are just apiVersion, kind, metadata;
`runtime.controller.transforms` has it and the others.

`runtime.controller.informerfactory.InformerFactory` hands out one shared informer per kind
(and namespace, selectors and transform) per process and runs them all.

Example::

    informer = Informer(client, scheme.by_kind("ClusterRole"))
    informer.add_handler(lambda event: queue.add(event.key))
    async with trio.open_nursery() as nursery:
        await nursery.start(informer.run)            # listed and synced
        written = await client.create(role)
        await informer.wait_for(written["metadata"]["resourceVersion"])
        assert informer.get(ObjectKey("", "r")) is not None

A client that offers `shared_reads()` (the in-process `LocalClient`) is
read through it: the informer then holds the server's own cached objects
rather than a copy of each, halving the memory of an in-process controller
manager and the time of its first list; an informer of a transform reads
its views (`viewed_reads`), made once per object by the watch cache.

Caveats:
    Objects in the store and in events are shared: never mutate them (copy
    first). With an in-process client they are the server's own objects. A handler that raises ends `run()` with that exception (the
    factory logs it and restarts the informer after a backoff).
    With non-numeric resource versions `wait_for` returns only on an exact
    match of the last version seen.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import trio

from runtime.machinery import errors
from runtime.client.interface import ClientError, ObjectKey, Reader, key_of, object_meta
from runtime.controller.pager import list_in_pages
from runtime.controller.ratelimit import ItemExponentialRateLimiter
from runtime.controller.transforms import METADATA_TRANSFORMS, Transform, partial_metadata
from runtime.machinery.resourceversion import is_at_least
from runtime.machinery.scheme import ResourceType

__all__ = [
    "ObjectEvent", "EventHandler", "IndexFunc", "Informer", "InformerStatistics", "NAMESPACE_INDEX", "Transform",
    "partial_metadata",
]

log = logging.getLogger(__name__)

NAMESPACE_INDEX = "namespace"


@dataclass(frozen=True)
class ObjectEvent:
    """A change the informer saw: ADDED, MODIFIED (with `old`) or DELETED.

    For DELETED, `obj` is the last state; `final_state_unknown` says the
    delete was noticed only by a relist, so `obj` may be older than the real
    final state.
    """

    type: str
    obj: dict[str, Any]
    old: dict[str, Any] | None = None
    final_state_unknown: bool = False

    @property
    def key(self) -> ObjectKey:
        return key_of(self.obj)


#: A quick, sync callback for every event (typically: enqueue a key).
EventHandler = Callable[[ObjectEvent], None]
#: Index values of an object (e.g. its namespace, or the roles it binds).
IndexFunc = Callable[[dict[str, Any]], Iterable[str]]


def _namespace_index(obj: dict[str, Any]) -> list[str]:
    return [object_meta(obj).get("namespace") or ""]


@dataclass(frozen=True)
class InformerStatistics:
    """A snapshot: objects held, lists and watches made, events applied, relists after 410, errors.

    Work counters (monotonic): `reads` calls of `get`, `list`, `keys`,
    `by_index` and `index_keys`; `visited` the objects (or keys) those reads
    went through: the whole cache for `list` and `keys`, the bucket for
    `by_index` and `index_keys`, one for a `get` that found its object.
    `index_updates` counts index entries added or removed by store changes;
    `handlers` is how many handlers each event calls now.
    """

    objects: int
    lists: int
    watches: int
    events: int
    relists_gone: int
    errors: int
    resource_version: str
    synced: bool
    reads: int = 0
    visited: int = 0
    index_updates: int = 0
    handlers: int = 0


class Informer:
    """A cache of one kind kept current by list + watch (see the module docs).

    `namespace` ("" = all), `label_selector` and `field_selector` narrow what
    is cached. `indexers` adds named index functions. `resync_period`
    (seconds) re-delivers the whole store periodically; None never does.
    `transform` maps every object before it is cached (see the module docs).
    """

    def __init__(self, client: Reader, kind: ResourceType, *, namespace: str = "", label_selector: str = "",
                 field_selector: str = "", resync_period: float | None = None,
                 indexers: dict[str, IndexFunc] | None = None,
                 watch_timeout: tuple[int, int] = (300, 600), transform: Transform | None = None) -> None:
        self.client = client
        self.transform = transform
        shared_reads = getattr(client, "shared_reads", None)
        reader = shared_reads() if callable(shared_reads) else client
        viewed = getattr(reader, "viewed_reads", None) if transform is not None else None
        self._reader: Reader = viewed(transform) if callable(viewed) else reader
        #: What this informer applies itself: nothing when its reader hands out the transform's views.
        self._own_transform = None if callable(viewed) else transform
        self.kind = kind
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = resync_period
        self.watch_timeout = watch_timeout
        self._objects: dict[ObjectKey, dict[str, Any]] = {}
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: _namespace_index}
        self._indices: dict[str, dict[str, set[ObjectKey]]] = {NAMESPACE_INDEX: {}}
        self._handlers: list[EventHandler] = []
        self._resource_version = ""
        self._synced = False
        self._synced_event = trio.Event()
        self._progress = trio.Event()
        self._running = False
        self._backoff = ItemExponentialRateLimiter(base=0.8, cap=30.0)
        self._lists = self._watches = self._events = self._relists = self._errors = 0
        self._reads = self._visited = self._index_updates = 0
        if indexers:
            self.add_indexers(indexers)

    @property
    def metadata_only(self) -> bool:
        """Whether this informer caches only apiVersion, kind and metadata (`partial_metadata`,
        `ownership_metadata`: a metadata-only informer)."""
        return self.transform in METADATA_TRANSFORMS

    def __repr__(self) -> str:
        partial = " metadata" if self.metadata_only else ""
        return f"<Informer{partial} {self.kind.group_resource} ns={self.namespace!r}>"

    # ---- reads (sync) -----------------------------------------------------------------------------

    def get(self, key: ObjectKey | str) -> dict[str, Any] | None:
        """The cached object of `key` (an ObjectKey or `ns/name`), None if absent. Do not mutate it."""
        if isinstance(key, str):
            key = ObjectKey.parse(key)
        obj = self._objects.get(key)
        self._reads += 1
        self._visited += obj is not None
        return obj

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Cached objects, in no particular order; only `namespace`'s when given (by the namespace index).

        Without a namespace this visits the whole cache: an event handler or
        a reconciler that runs per event should read an index instead.
        """
        if namespace is not None:
            return self.by_index(NAMESPACE_INDEX, namespace)
        self._reads += 1
        self._visited += len(self._objects)
        return list(self._objects.values())

    def keys(self) -> list[ObjectKey]:
        """Keys of the cached objects, in no particular order."""
        self._reads += 1
        self._visited += len(self._objects)
        return list(self._objects)

    def by_index(self, index: str, value: str) -> list[dict[str, Any]]:
        """Objects whose index function `index` yields `value`, in no particular order.

        Costs O(those objects). Raises KeyError for an unknown index.
        """
        keys = self._indices[index].get(value) or ()
        self._reads += 1
        self._visited += len(keys)
        objects = self._objects
        return [objects[k] for k in keys]

    def index_keys(self, index: str, value: str) -> list[ObjectKey]:
        """Keys of the objects `by_index(index, value)` returns (same order). KeyError for an unknown index."""
        keys = self._indices[index].get(value) or ()
        self._reads += 1
        self._visited += len(keys)
        return list(keys)

    def index_size(self, index: str, value: str) -> int:
        """How many objects `by_index(index, value)` would return, in O(1) (visits none). KeyError if unknown."""
        return len(self._indices[index].get(value) or ())

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Add (or replace) named indexes; objects already cached are indexed at once.

        An index function returns the values to file an object under (none:
        the object is not in that index). It must be pure and quick: it runs
        on every change of every object, inline in the informer's task.
        """
        for name, fn in indexers.items():
            self._indexers[name] = fn
            index: dict[str, set[ObjectKey]] = {}
            self._indices[name] = index
            for key, obj in self._objects.items():
                for value in fn(obj):
                    index.setdefault(value, set()).add(key)

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """`add_indexers({name: fn})`: one index."""
        self.add_indexers({name: fn})

    # ---- handlers ---------------------------------------------------------------------------------

    def add_handler(self, handler: EventHandler, *, replay: bool = True) -> None:
        """Call `handler` for every future event; if already synced (and `replay`), first an ADDED for each object."""
        if self._synced and replay:
            for obj in list(self._objects.values()):
                handler(ObjectEvent("ADDED", obj))
        self._handlers.append(handler)

    def remove_handler(self, handler: EventHandler) -> None:
        """Stop calling `handler` (no-op if it was not added)."""
        try:
            self._handlers.remove(handler)
        except ValueError:
            pass

    # ---- sync state -------------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """Whether the first list is in the store."""
        return self._synced

    async def wait_synced(self) -> None:
        """Block until `has_synced()`."""
        await self._synced_event.wait()

    @property
    def resource_version(self) -> str:
        """The last resourceVersion the store reflects (list, event or bookmark); "" before the first list."""
        return self._resource_version

    async def wait_for(self, resource_version: str) -> None:
        """Block until the store reflects `resource_version` or newer (see Caveats for opaque versions)."""
        while not is_at_least(self._resource_version, resource_version):
            await self._progress.wait()

    def statistics(self) -> InformerStatistics:
        return InformerStatistics(len(self._objects), self._lists, self._watches, self._events, self._relists,
                                  self._errors, self._resource_version, self._synced, self._reads, self._visited,
                                  self._index_updates, len(self._handlers))

    # ---- the run task -----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """List, then watch forever; started() once the first list is in the store.

        Raises RuntimeError if already running; a handler's exception ends it.
        """
        if self._running:
            raise RuntimeError(f"{self!r} is already running")
        self._running = True
        started = False
        try:
            async with trio.open_nursery() as nursery:
                if self.resync_period:
                    nursery.start_soon(self._resync_loop)
                need_list = True
                while True:
                    if need_list:
                        try:
                            await self._list_and_replace()
                        except (errors.StatusError, ClientError) as exc:
                            await self._failed("list", exc)
                            continue
                        need_list = False
                        if not started:
                            started = True
                            task_status.started()
                    try:
                        expired = await self._watch_once()
                    except (errors.StatusError, ClientError) as exc:
                        if getattr(exc, "code", None) == 410:
                            expired = True
                        else:
                            await self._failed("watch", exc)
                            continue
                    if expired:
                        self._relists += 1
                        log.info("%r: resourceVersion %s expired; relisting", self, self._resource_version)
                        need_list = True
                    self._backoff.forget("run")
        finally:
            self._running = False

    async def _failed(self, what: str, exc: BaseException) -> None:
        self._errors += 1
        delay = self._backoff.when("run")
        log.warning("%r: %s failed (%s); retrying in %.1fs", self, what, exc, delay)
        await trio.sleep(delay)

    async def _list_and_replace(self) -> None:
        transform = self.transform
        listed: dict[ObjectKey, dict[str, Any]] = {}
        if transform is None:
            page = await self._reader.list(self.kind, namespace=self.namespace, label_selector=self.label_selector,
                                          field_selector=self.field_selector)
            listed = {key_of(o): o for o in page.items}
            version = page.resource_version
        else:  # in pages: only what the transform keeps of each outlives it
            own = self._own_transform
            version = await list_in_pages(self._reader, self.kind, lambda items: listed.update(
                (key_of(o), o) for o in (items if own is None else map(own, items))), namespace=self.namespace,
                label_selector=self.label_selector, field_selector=self.field_selector)
        self._lists += 1
        old = self._objects
        events: list[ObjectEvent] = []
        # A first list is delivered in the server's order (by key, as Kubernetes lists); a relist is
        # compared with what was held, in key order. Sorting 100,000 keys would cost a second at start-up.
        for key in sorted(listed) if old else listed:
            obj, before = listed[key], old.get(key)
            if before is None:
                events.append(ObjectEvent("ADDED", obj))
            elif object_meta(before).get("resourceVersion") != object_meta(obj).get("resourceVersion"):
                events.append(ObjectEvent("MODIFIED", obj, before))
        for key in sorted(set(old) - set(listed)):
            events.append(ObjectEvent("DELETED", old[key], final_state_unknown=True))
        self._objects = {}
        for name in self._indices:
            self._indices[name] = {}
        for key, obj in listed.items():
            self._store(key, obj)
        self._advance(version)
        if not self._synced:
            self._synced = True
            self._synced_event.set()
        self._dispatch(events)

    async def _watch_once(self) -> bool:
        """One watch from the last version; True when it expired (410), False when it ended."""
        self._watches += 1
        timeout = random.randint(*self.watch_timeout)
        opened, seen = trio.current_time(), 0
        async with self._reader.watch(self.kind, namespace=self.namespace, resource_version=self._resource_version,
                                     label_selector=self.label_selector, field_selector=self.field_selector,
                                     allow_watch_bookmarks=True, timeout_seconds=timeout) as events:
            async for event in events:
                seen += 1
                if event.type == "ERROR":
                    error = event.error()
                    assert error is not None
                    if error.code == 410:
                        return True
                    raise error
                if event.type == "BOOKMARK":
                    self._advance(event.resource_version)
                    continue
                self._apply(event.type, event.object)
                self._backoff.forget("run")
        if not seen and trio.current_time() - opened < 1.0:
            # client-go's "very short watch": a server closing at once must not make us spin.
            raise ClientError("watch closed at once without events")
        return False

    def _apply(self, event_type: str, raw: dict[str, Any]) -> None:
        self._events += 1
        obj = raw if self._own_transform is None else self._own_transform(raw)
        key = key_of(obj)
        before = self._objects.get(key)
        if event_type == "DELETED":
            self._unstore(key)
            event = ObjectEvent("DELETED", obj)
        else:
            self._store(key, obj)
            event = ObjectEvent("ADDED", obj) if before is None else ObjectEvent("MODIFIED", obj, before)
        self._advance(object_meta(raw).get("resourceVersion") or "")
        self._dispatch([event])

    def _store(self, key: ObjectKey, obj: dict[str, Any]) -> None:
        if key in self._objects:
            self._unindex(key, self._objects[key])
        self._objects[key] = obj
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                index.setdefault(value, set()).add(key)
                self._index_updates += 1

    def _unstore(self, key: ObjectKey) -> None:
        obj = self._objects.pop(key, None)
        if obj is not None:
            self._unindex(key, obj)

    def _unindex(self, key: ObjectKey, obj: dict[str, Any]) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    self._index_updates += 1
                    if not keys:
                        del index[value]

    def _advance(self, resource_version: str) -> None:
        if resource_version:
            self._resource_version = resource_version
        self._progress.set()
        self._progress = trio.Event()

    def _dispatch(self, events: list[ObjectEvent]) -> None:
        for event in events:
            for handler in list(self._handlers):
                handler(event)

    async def _resync_loop(self) -> None:
        assert self.resync_period
        while True:
            await trio.sleep(self.resync_period)
            if self._synced:
                self._dispatch([ObjectEvent("MODIFIED", obj, obj) for obj in list(self._objects.values())])
