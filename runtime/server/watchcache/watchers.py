"""Events of the watch cache and the watches that receive them.

Contract: a `CacheEvent` is one change of one object as the cache applied
it; `as_seen(event, match)` is that change as a watcher filtering with
`match` sees it; a `Watcher` queues what it sees on a bounded channel and
closes itself (`overflowed`) when its reader falls behind. `TooOld` is a
watch from before the history (410 Gone).

Internal to `runtime.server.watchcache`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import trio

from runtime.machinery.storedobject import StoredObject

if TYPE_CHECKING:
    from runtime.server.watchcache.cache import KindCache

__all__ = ["CacheEvent", "Matcher", "TooOld", "Watcher", "as_seen", "EVENT_OVERHEAD"]

#: What one history event counts for besides its object's bytes (the event, the decoded dict's frame).
EVENT_OVERHEAD = 256


class TooOld(Exception):
    """A watch from a revision older than the cache's history (answered 410 Gone)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


@dataclass(frozen=True, slots=True)
class CacheEvent:
    """A change of one object: `obj` is the new state (for DELETED, the last state stamped
    with the delete's revision); `prev` the state before (None for ADDED)."""

    type: str
    obj: StoredObject
    prev: StoredObject | None
    revision: int
    time: float
    #: What the event counts for in the history's byte budget (encoded size + EVENT_OVERHEAD).
    size: int = EVENT_OVERHEAD
    _prev_at_revision: StoredObject | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def prev_at_revision(self) -> StoredObject:
        """`prev` stamped with this event's revision: what a watcher that stops matching gets
        as DELETED. Made once per event, shared by every watcher."""
        made = self._prev_at_revision
        if made is None:
            assert self.prev is not None
            made = self.prev.with_revision(self.revision)
            object.__setattr__(self, "_prev_at_revision", made)  # frozen: set once, as cached_property would
        return made


#: A watcher's filter: does this object (namespace, label and field selectors) count?
Matcher = Callable[[StoredObject], bool]


def as_seen(event: CacheEvent, match: Matcher) -> tuple[str, StoredObject] | None:
    """`event` as a watcher filtering with `match` sees it, or None when it sees nothing.

    A change that makes an object match is ADDED, one that makes it stop
    matching is DELETED (with the previous state at the new revision).
    """
    if event.type == "ADDED":
        return ("ADDED", event.obj) if match(event.obj) else None
    if event.type == "DELETED":
        return ("DELETED", event.obj) if match(event.obj) else None
    now = match(event.obj)
    before = event.prev is not None and match(event.prev)
    if now:
        return ("MODIFIED" if before else "ADDED", event.obj)
    if before:
        return ("DELETED", event.prev_at_revision)
    return None


class Watcher:
    """One watch on a kind. Events arrive on `events` (a bounded channel) as (type, object).

    A watcher that falls `capacity` events behind is closed with `overflowed`
    set: the client re-watches from its last resourceVersion, as with
    Kubernetes' cacher and its slow watchers. Events at or below `after` are
    skipped (a watch from a revision the cache has not reached yet).
    """

    def __init__(self, cache: "KindCache", match: Matcher, capacity: int, bookmarks: bool,
                 after: int = 0) -> None:
        self._cache = cache
        self.match = match
        self.bookmarks = bookmarks
        self.after = after
        self._send, self.events = trio.open_memory_channel[tuple[str, StoredObject]](capacity)
        self.overflowed = False
        self.gone = False  # the cache restarted its history: the client must relist
        self.initial_count = 0  # synthetic ADDED events queued first
        #: The revision this watcher is complete up to once `events` is drained.
        self.start_revision = cache.revision

    @property
    def pending(self) -> int:
        """Events queued and not yet received."""
        return self._send.statistics().current_buffer_used

    def deliver(self, item: tuple[str, StoredObject]) -> None:
        """Queue `item` as it is (an initial ADDED); a watcher it overflows is closed (`overflowed`)."""
        try:
            self._send.send_nowait(item)
        except trio.WouldBlock:
            self.overflowed = True
            self.close()
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self.close()

    def offer(self, event: CacheEvent) -> None:
        """Queue `event` as this watcher sees it (see `as_seen`)."""
        if event.revision <= self.after:
            return
        seen = as_seen(event, self.match)
        if seen is not None:
            self.deliver(seen)

    def close(self) -> None:
        """Stop receiving; the reader sees the end of `events` after what is queued."""
        self._cache.drop_watcher(self)
        self._send.close()
