"""Events of the watch cache and the watches that receive them.

Contract: a `CacheEvent` is one change of one object as the cache applied
it; `as_seen(event, match)` is that change as a watcher filtering with
`match` sees it; a `Watcher` queues what it sees in a bounded mailbox and
closes itself (`overflowed`) when its reader falls behind; `events` is a
`Mailbox` (one reader, a wait with a deadline but no cancel scope), and
`pending` its length. `offer(event, seen)` shares what watchers of
one filter see of one event through `seen` (keyed by the filter's identity:
the cache gives equal filters one identity, `KindCache.watch`), so 1,000
watches of one selector test it once per event. `TooOld` is a watch from
before the history (410 Gone).

Internal to `runtime.server.watchcache`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import trio

from runtime.machinery.storedobject import StoredObject
from runtime.server.watchcache.mailbox import Mailbox

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

_UNSEEN: object = object()  # `offer`'s mark: this filter has not looked at the event yet


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
    """One watch on a kind. Events arrive in `events` (a bounded `Mailbox`) as (type, object).

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
        self.events: Mailbox[tuple[str, StoredObject]] = Mailbox(capacity)
        self.overflowed = False
        self.gone = False  # the cache restarted its history: the client must relist
        self.initial_count = 0  # synthetic ADDED events queued first
        #: The revision this watcher is complete up to once `events` is drained.
        self.start_revision = cache.revision

    @property
    def pending(self) -> int:
        """Events queued and not yet received."""
        return len(self.events)

    def deliver(self, item: tuple[str, StoredObject]) -> None:
        """Queue `item` as it is (an initial ADDED); a watcher it overflows is closed (`overflowed`)."""
        try:
            self.events.put_nowait(item)
        except trio.WouldBlock:
            self.overflowed = True
            self.close()
        except trio.ClosedResourceError:
            self.close()

    def offer(self, event: CacheEvent, seen: dict[int, tuple[str, StoredObject] | None] | None = None) -> None:
        """Queue `event` as this watcher sees it (see `as_seen`); `seen`, when given, holds what each
        filter (by identity) saw of this same event, and gets what this one sees."""
        if event.revision <= self.after:
            return
        if seen is None:
            shown = as_seen(event, self.match)
        else:
            key = id(self.match)
            shown = seen.get(key, _UNSEEN)
            if shown is _UNSEEN:
                shown = seen[key] = as_seen(event, self.match)
        if shown is not None:
            self.deliver(shown)  # type: ignore[arg-type]

    def close(self) -> None:
        """Stop receiving; the reader sees the end of `events` after what is queued."""
        self._cache.drop_watcher(self)
        self.events.close()
