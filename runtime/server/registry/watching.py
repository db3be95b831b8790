"""Watch: the spec's start semantics over the watch cache, bookmarks and timeouts.

`open_watch()` validates the request (422 for the spec's invalid option
combinations, 400 for malformed selectors or versions) and returns a
`WatchStream`; everything that may wait happens while the stream is iterated,
so the client gets its 200 and headers at once.

| resourceVersion | sendInitialEvents (default)  | start                                                |
|-----------------|------------------------------|------------------------------------------------------|
| unset           | true                         | consistent read, synthetic ADDED for that state, then changes |
| "0"             | true                         | synthetic ADDED for the cache's state, then changes  |
| N               | false                        | every change after N                                 |
| unset / "0"     | false (explicit)             | changes after the most recent / the cache's version  |
| N               | true (NotOlderThan)          | state at a version >= N (waits for it), then changes |

- A start version N older than the cache's history is served from the
  store's log when the log still reaches back that far; otherwise the stream's
  first event is ERROR with a 410 Expired Status ("too old resource version").
- A start version newer than the store waits: events up to N are skipped.
  A state that must be at least N (sendInitialEvents) waits up to the
  request's timeout (at most `MAX_START_WAIT` without one), then ERROR 504
  "Too large resource version".
- With `allowWatchBookmarks`, a BOOKMARK (kind, apiVersion and
  metadata.resourceVersion only) follows the initial state, annotated
  `k8s.io/initial-events-end: "true"`; idle watches get one every
  `BOOKMARK_INTERVAL` seconds, and one more just before `timeoutSeconds`
  closes the stream, so a client resumes without replaying anything.
- Selectors: an object that stops matching is DELETED, one that starts
  matching ADDED (see `runtime.server.watchcache.as_seen`).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable

import trio

from runtime.machinery import errors
from runtime.machinery.storedobject import CorruptObject, StoredObject, decode_stored
from runtime.server.rbac.user import UserInfo
from runtime.server.registry.answers import parse_resource_version, store_errors, too_large, too_old
from runtime.server.registry.primitives import RegistryCore, Selection
from runtime.server.registry.listing import validate_list_options
from runtime.machinery.options import ListOptions
from runtime.machinery.scheme import ResourceType
from runtime.server.storage import Compacted, StoreEvent
from runtime.server.watchcache import CacheEvent, Matcher, TooOld, Watcher, as_seen

__all__ = ["WatchStream", "open_watch", "BOOKMARK_INTERVAL", "MAX_START_WAIT", "INITIAL_EVENTS_END"]

#: How often an idle watch that allows bookmarks gets one (Kubernetes: about a minute).
BOOKMARK_INTERVAL = 5.0
#: How long a watch without timeoutSeconds waits for a state the cache has not reached.
MAX_START_WAIT = 60.0
#: Queued events a watch takes without a checkpoint (each wait for a new event is one).
_CHECKPOINT_EVERY = 32
#: The annotation of the bookmark that ends the initial events.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

_Item = tuple[str, "StoredObject | dict[str, Any]"]


@dataclass
class WatchStream:
    """An open watch. Iterate for `(type, object)`: object is a StoredObject, or a dict
    for BOOKMARK and ERROR events. Ends at the timeout, or when the server closes it
    (a watcher too slow to keep up is closed; its client resumes from its last version)."""

    core: RegistryCore
    rt: ResourceType
    match: Matcher
    timeout: float = math.inf
    #: Send the state first (synthetic ADDED).
    initial: bool = False
    #: Start after this revision (no initial state).
    after: int | None = None
    #: The state must be at least this revision (sendInitialEvents with NotOlderThan).
    min_revision: int | None = None
    #: Catch up with the store's current revision first (resourceVersion unset).
    consistent: bool = False
    bookmarks: bool = False
    #: Mark the end of the initial state with an annotated BOOKMARK.
    initial_end: bool = False
    #: How each object is shown (the kind's version of what is stored; see `Strategy.present`).
    present: Callable[[StoredObject], StoredObject] | None = None
    #: Instead of `present`, when showing calls out (a CRD's conversion webhook): awaited per event;
    #: a failure ends the watch with an ERROR event (its Status).
    convert: Callable[[list[StoredObject]], Awaitable[list[StoredObject]]] | None = None
    _watcher: Watcher | None = field(default=None, init=False, repr=False)

    @property
    def backlog(self) -> int:
        """Events queued for this watch: the next ones iteration yields without waiting (0 before it starts).

        The HTTP layer writes a frame per event but sends once nothing is
        queued (as kube-apiserver flushes a watch when its channel is empty).
        """
        return self._watcher.pending if self._watcher is not None else 0

    def bookmark(self, revision: int, *, initial_end: bool = False) -> dict[str, Any]:
        """A BOOKMARK event's object: kind, apiVersion and metadata.resourceVersion only."""
        meta: dict[str, Any] = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}

    async def __aiter__(self) -> AsyncIterator[_Item]:
        # No yield happens inside a cancel scope: the HTTP layer drives this generator.
        deadline = trio.current_time() + self.timeout
        cache = self.core.cache
        target = self.min_revision
        if self.consistent:
            with store_errors(self.rt):
                target = max(target or 0, await cache.store_revisions.current())
        if target is not None and cache.revision < target:
            reached = False
            with trio.move_on_at(min(deadline, trio.current_time() + MAX_START_WAIT)):
                reached = await cache.wait_for(target)
            if not reached:
                if trio.current_time() < deadline:
                    yield "ERROR", too_large(target, cache.revision).status()
                return
        kind = self.core.kind_cache(self.rt)
        replay_after: int | None = None
        try:
            watcher = kind.watch(self.match, after_revision=self.after, initial=self.initial,
                                 bookmarks=self.bookmarks)
        except TooOld as exc:
            with store_errors(self.rt):
                compacted = await self.core.store.compacted_revision()
            if exc.requested < compacted:
                yield "ERROR", too_old(exc.requested, min(exc.oldest, compacted))
                return
            # The cache's history does not reach back, the store's log does: replay it first.
            watcher = kind.watch(self.match, after_revision=None, initial=False, bookmarks=self.bookmarks)
            replay_after = exc.requested
        self._watcher = watcher
        try:
            if replay_after is not None:
                replayed: list[bool] = []
                async for item in self._replay_log(kind.prefix, replay_after, watcher.start_revision, deadline,
                                                   replayed):
                    shown = await self._converted(item) if self.convert is not None else self._shown(item)
                    yield shown
                    if shown[0] == "ERROR":
                        return
                if not replayed:
                    return  # cut short (timeout, or the log was compacted meanwhile): the client resumes
            async for item in self._follow(watcher, deadline):
                shown = await self._converted(item) if self.convert is not None else self._shown(item)
                yield shown
                if shown[0] == "ERROR":
                    return
        finally:
            watcher.close()

    def _shown(self, item: _Item) -> _Item:
        event_type, obj = item
        if self.present is None or not isinstance(obj, StoredObject):
            return item
        return event_type, self.present(obj)

    async def _converted(self, item: _Item) -> _Item:
        event_type, obj = item
        if self.convert is None or not isinstance(obj, StoredObject):
            return item
        try:
            [shown] = await self.convert([obj])
        except errors.StatusError as exc:
            return "ERROR", exc.status()
        return event_type, shown

    async def _follow(self, watcher: Watcher, deadline: float) -> AsyncIterator[_Item]:
        cache = self.core.cache
        initial_left = watcher.initial_count
        pending_end = self.initial_end
        # The client has every change up to `last` once it has what was yielded.
        last = self.after or 0
        queued = 0  # events taken without waiting since the last checkpoint
        while True:
            if pending_end and initial_left <= 0:
                pending_end = False
                last = max(last, watcher.start_revision)
                yield "BOOKMARK", self.bookmark(watcher.start_revision, initial_end=True)
            now = trio.current_time()
            if now >= deadline:
                break
            item = None
            ended = False
            try:
                # An event already queued is taken at once, without a wait.
                item = watcher.events.receive_nowait()
            except trio.WouldBlock:
                queued = 0
                wake = min(deadline, now + BOOKMARK_INTERVAL) if self.bookmarks else deadline
                try:  # no cancel scope per wait: the mailbox keeps the deadline
                    item = await watcher.events.receive_until(wake)
                except trio.EndOfChannel:
                    ended = True
            except trio.EndOfChannel:
                ended = True
            else:
                queued += 1
                if queued >= _CHECKPOINT_EVERY:  # a long backlog still lets other tasks run
                    queued = 0
                    await trio.lowlevel.checkpoint()
            if ended:
                if watcher.gone:
                    yield "ERROR", too_old(last, cache.oldest_revision)
                return  # closed: an overflowed (too slow) watcher ends here
            if item is None:
                # Nothing queued: every change up to the cache's revision has been sent.
                if self.bookmarks and watcher.pending == 0 and cache.revision >= last and initial_left <= 0:
                    last = cache.revision
                    yield "BOOKMARK", self.bookmark(last)
                continue
            event_type, obj = item
            if initial_left > 0:
                initial_left -= 1
            else:
                last = max(last, obj.revision)
            yield event_type, obj
        # Closing at the timeout: a last bookmark lets the client resume from here.
        if self.bookmarks and watcher.pending == 0 and cache.revision >= last and initial_left <= 0:
            yield "BOOKMARK", self.bookmark(cache.revision)

    async def _replay_log(self, prefix: str, after: int, upto: int, deadline: float,
                          done: list[bool]) -> AsyncIterator[_Item]:
        """Events of `prefix` in (after, upto] from the store's log, as this watch sees them.

        Appends True to `done` once every event up to `upto` was replayed.
        """
        if after >= upto:
            done.append(True)
            return
        # Watch every key: the log is contiguous there, so reaching `upto` is certain.
        log = self.core.store.watch("/", after_revision=after)
        try:
            while trio.current_time() < deadline:
                event: StoreEvent | None = None
                compacted: Compacted | None = None
                with trio.move_on_at(deadline):
                    try:
                        event = await log.__anext__()
                    except Compacted as exc:
                        compacted = exc
                if compacted is not None:
                    yield "ERROR", too_old(after, compacted.compacted)
                    return
                if event is None:
                    return
                if event.revision > upto:
                    done.append(True)
                    return
                if event.key.startswith(prefix):
                    cache_event = _cache_event(event)
                    seen = as_seen(cache_event, self.match) if cache_event is not None else None
                    if seen is not None:
                        yield seen
                if event.revision >= upto:
                    done.append(True)
                    return
        finally:
            await log.aclose()


def _past_state(key: str, value: bytes) -> StoredObject | None:
    """A past state from the store's log, with the resourceVersion it was written with; None if corrupt."""
    try:
        return decode_stored(key, value, None)
    except CorruptObject:
        return None


def _cache_event(event: StoreEvent) -> CacheEvent | None:
    """A log event as the watch cache would have applied it; None when there is nothing to tell.

    Corrupt values are handled as the cache handles them: a corrupt state was
    never seen (no event), one that turned corrupt is DELETED.
    """
    prev = _past_state(event.key, event.prev_value) if event.prev_value is not None else None
    if event.type == "DELETED":
        if prev is None:
            return None
        return CacheEvent("DELETED", prev.with_revision(event.revision), prev, event.revision, 0.0)
    assert event.value is not None
    try:
        obj = decode_stored(event.key, event.value, event.revision)
    except CorruptObject:
        if prev is None:
            return None
        return CacheEvent("DELETED", prev.with_revision(event.revision), prev, event.revision, 0.0)
    return CacheEvent("MODIFIED" if prev is not None else "ADDED", obj, prev, event.revision, 0.0)


async def open_watch(core: RegistryCore, user: UserInfo, rt: ResourceType, namespace: str,
                     opts: ListOptions) -> WatchStream:
    """A watch of `rt` in `namespace` ("" = all) as the spec's watch table says.

    Raises Forbidden, MethodNotAllowed, Invalid (422) for option combinations
    ValidateListOptions refuses, BadRequest (400) for a malformed selector or
    resourceVersion.
    """
    selection = core.authorized_selection(user, "watch", rt, namespace, opts)
    return watch_selection(core, rt, opts, selection)


def watch_selection(core: RegistryCore, rt: ResourceType, opts: ListOptions, match: Selection) -> WatchStream:
    """`open_watch` once authorized."""
    validate_list_options(opts, watch=True)
    rv = opts.resource_version or ""
    legacy = rv in ("", "0")
    # Kubernetes' SetListOptionsDefaults: a legacy watch gets the initial state.
    initial = opts.send_initial_events if opts.send_initial_events is not None else legacy
    version = None if legacy else parse_resource_version(rv)
    timeout = float(opts.timeout_seconds) if opts.timeout_seconds and opts.timeout_seconds > 0 else math.inf
    return WatchStream(
        core, rt, match, timeout=timeout, initial=initial,
        after=version if not initial else None, min_revision=version if initial else None,
        consistent=rv == "", bookmarks=opts.allow_watch_bookmarks,
        initial_end=initial and opts.allow_watch_bookmarks)
