"""`WatchFanout`: the watch machinery every backend shares, and small helpers of backends.

A watcher follows live writes through a bounded buffer and, when it is new or
falls behind (buffer full), catches up by reading the backend's log. Slow
watchers therefore cost bounded memory and never slow writers down; one that
falls behind compaction gets `Compacted` (etcd moves slow watchers to an
"unsynced" group the same way).

A follower in the same process whose handling of an event is synchronous
(the watch cache) may give a `sink`: an event published while that follower
waits with nothing pending is handed to the sink by the publishing task, so
it is applied before the write returns, without a task switch; anything
else (and an event the sink raised on, logged) still comes through the
iterator, in order (`FollowsAtCommit.follow`).

Internal to `runtime.server.storage`: imported by its modules only.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import AsyncIterator, Awaitable, Callable, Sequence

import trio

from runtime.server.storage.base import Compacted, StoreEvent, StoreError

__all__ = ["WatchFanout", "FollowsAtCommit", "Sink", "LogReader", "DEFAULT_WATCH_BUFFER", "prefix_upper_bound",
           "as_bytes"]

log = logging.getLogger(__name__)

#: Live events a watcher may have waiting before it drops to catching up from the log.
DEFAULT_WATCH_BUFFER = 1000

#: `async read(prefix, after, upto, limit)`: at most `limit` events under `prefix`
#: with after < revision <= upto, in order. Raises Compacted when after < the
#: compacted revision (checked against the same snapshot the events come from).
LogReader = Callable[[str, int, int, int], Awaitable[list[StoreEvent]]]


#: Applies one event at publish time; if it raises, the event comes through the iterator instead.
Sink = Callable[[StoreEvent], None]


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string greater than every string starting with `prefix`.

    Returns None when there is none (empty prefix, or only U+10FFFF chars).
    Python and SQLite (BINARY collation over UTF-8) both order strings by code
    point, so `prefix <= key < bound` is exactly `key.startswith(prefix)`.
    """
    stem = prefix.rstrip("\U0010ffff")
    if not stem:
        return None
    return stem[:-1] + chr(ord(stem[-1]) + 1)


@dataclass(eq=False)
class _Watcher:
    prefix: str
    #: Every matching event with revision <= upto is delivered or in `buffer`.
    upto: int
    #: True while live publishes feed `buffer`; False while catching up from the log.
    synced: bool = False
    buffer: deque[StoreEvent] = field(default_factory=deque)
    wakeup: trio.Event | None = None
    sink: Sink | None = None


class WatchFanout:
    """Fans committed events out to watchers; a watcher catches up from the log.

    The owner calls `publish(events)` once per commit, in revision order, from
    trio (never from a thread), after the events are durable. `published` is
    the last revision handed out; the log reader must see at least that far.
    """

    def __init__(self, read_log: LogReader, compacted: Callable[[], int], *, published: int,
                 buffer: int = DEFAULT_WATCH_BUFFER) -> None:
        if buffer < 1:
            raise ValueError("watch buffer must hold at least one event")
        self._read_log = read_log
        self._compacted = compacted
        self._buffer = buffer
        self._watchers: set[_Watcher] = set()
        self._closed = False
        self.published = published

    @property
    def watchers(self) -> int:
        """Number of open watches."""
        return len(self._watchers)

    def publish(self, events: Sequence[StoreEvent]) -> None:
        """Hand committed `events` (ascending revisions) to every live watcher. Never blocks."""
        if not events:
            return
        self.published = events[-1].revision
        for w in self._watchers:
            if not w.synced:
                continue  # it reads these from the log when it catches up
            changed = False
            for ev in events:
                if ev.revision <= w.upto:
                    continue  # already seen by a list/catch-up at a newer snapshot
                if ev.key.startswith(w.prefix):
                    # Parked on `wakeup` with an empty buffer, the follower has handled every earlier event.
                    if not (w.sink is not None and w.wakeup is not None and not w.buffer and _took(w.sink, ev)):
                        if len(w.buffer) >= self._buffer:
                            w.synced = False  # too slow: drop to the log from w.upto on
                            changed = True
                            break
                        w.buffer.append(ev)
                        changed = True
                w.upto = ev.revision
            if changed and w.wakeup is not None:
                w.wakeup.set()

    def lose(self, revision: int) -> None:
        """Events up to `revision` will never be published (another process wrote them, and they
        were compacted before this one read them): every watcher drops to the log, where it
        finds its next events compacted (Compacted)."""
        self.published = max(self.published, revision)
        for w in self._watchers:
            w.synced = False
            if w.wakeup is not None:
                w.wakeup.set()

    def close(self) -> None:
        """End every watch: each raises StoreError at its next empty buffer."""
        self._closed = True
        for w in self._watchers:
            if w.wakeup is not None:
                w.wakeup.set()

    async def watch(self, prefix: str, *, after_revision: int, sink: Sink | None = None) -> AsyncIterator[StoreEvent]:
        """Events under `prefix` after `after_revision`, in order, forever.

        Raises Compacted (first iteration, or later if this watcher falls
        behind a compaction while catching up), StoreError once closed.
        `sink`: see the module docs; an event it takes is not yielded.
        """
        if self._closed:
            raise StoreError("store is closed")
        compacted = self._compacted()
        if after_revision < compacted:
            raise Compacted(after_revision, compacted)
        w = _Watcher(prefix, after_revision, sink=sink)
        self._watchers.add(w)
        try:
            while True:
                if w.buffer:
                    # A checkpoint per event, as every trio async call is: a long
                    # replay neither starves other tasks nor ignores cancellation.
                    await trio.lowlevel.checkpoint()
                    yield w.buffer.popleft()
                    continue
                if self._closed:
                    raise StoreError("store is closed")
                if w.synced:
                    w.wakeup = trio.Event()
                    try:
                        await w.wakeup.wait()
                    finally:
                        w.wakeup = None
                    continue
                hi = self.published
                if w.upto < hi:
                    events = await self._read_log(prefix, w.upto, hi, self._buffer)
                    w.buffer.extend(events)
                    # A full chunk may have stopped short of hi: resume after its last event.
                    w.upto = events[-1].revision if len(events) >= self._buffer else hi
                # No await since the read returned, so nothing was published in between:
                # if the log got us to `published`, live publishes take over from here.
                if w.upto >= self.published:
                    w.synced = True
        finally:
            self._watchers.discard(w)


def _took(sink: Sink, event: StoreEvent) -> bool:
    try:
        sink(event)
    except Exception:  # the event goes through the iterator, to the follower's own error handling
        log.exception("watch sink failed on the event at revision %d", event.revision)
        return False
    return True


class FollowsAtCommit:
    """A store that publishes its writes in this process through `_fanout` (memory, SQLite)."""

    _fanout: WatchFanout

    def follow(self, prefix: str, *, after_revision: int, sink: Sink) -> AsyncIterator[StoreEvent]:
        """`watch`, for a follower of this process with a synchronous `sink` (see the module docs)."""
        return self._fanout.watch(prefix, after_revision=after_revision, sink=sink)


def as_bytes(value: object) -> bytes:
    """The encoder's result as bytes. Raises TypeError for anything else."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"a ValueEncoder must return bytes, not {type(value).__name__}")
