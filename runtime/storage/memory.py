"""`MemoryStore`: the `Store` log held in process memory (tests, dry runs).

Contract: the full `Store` semantics (see `runtime.storage.base`) without
durability. Every write gets the next global revision; each key keeps its rows
until compaction; `list(revision=R)` reads the newest row <= R per key; watch
replays rows from the log, then follows live writes.

This module also holds `WatchFanout`, the watch machinery both backends share:
a watcher follows live writes through a bounded buffer and, when it is new or
falls behind (buffer full), catches up by reading the backend's log. Slow
watchers therefore cost bounded memory and never slow writers down; one that
falls behind compaction gets `Compacted` (etcd moves slow watchers to an
"unsynced" group the same way).
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field
from typing import AsyncIterator, Awaitable, Callable, Sequence

import trio

from runtime.storage.base import (
    Compacted, Entry, Event, KeyExists, KeyNotFound, RevisionConflict, StoreError, ValueEncoder,
)

__all__ = [
    "MemoryStore", "MemoryStoreStatistics", "WatchFanout", "LogReader", "DEFAULT_WATCH_BUFFER",
    "prefix_upper_bound", "as_bytes",
]

#: Live events a watcher may have waiting before it drops to catching up from the log.
DEFAULT_WATCH_BUFFER = 1000

#: `async read(prefix, after, upto, limit)`: at most `limit` events under `prefix`
#: with after < revision <= upto, in order. Raises Compacted when after < the
#: compacted revision (checked against the same snapshot the events come from).
LogReader = Callable[[str, int, int, int], Awaitable[list[Event]]]


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
    buffer: deque[Event] = field(default_factory=deque)
    wakeup: trio.Event | None = None


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

    def publish(self, events: Sequence[Event]) -> None:
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
                    if len(w.buffer) >= self._buffer:
                        w.synced = False  # too slow: drop to the log from w.upto on
                        changed = True
                        break
                    w.buffer.append(ev)
                    changed = True
                w.upto = ev.revision
            if changed and w.wakeup is not None:
                w.wakeup.set()

    def close(self) -> None:
        """End every watch: each raises StoreError at its next empty buffer."""
        self._closed = True
        for w in self._watchers:
            if w.wakeup is not None:
                w.wakeup.set()

    async def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[Event]:
        """Events under `prefix` after `after_revision`, in order, forever.

        Raises Compacted (first iteration, or later if this watcher falls
        behind a compaction while catching up), StoreError once closed.
        """
        if self._closed:
            raise StoreError("store is closed")
        compacted = self._compacted()
        if after_revision < compacted:
            raise Compacted(after_revision, compacted)
        w = _Watcher(prefix, after_revision)
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


@dataclass(frozen=True, slots=True)
class _Row:
    """One write in the log (an Event plus the key's create revision)."""

    event: Event
    create_revision: int

    @property
    def revision(self) -> int:
        return self.event.revision

    def entry(self) -> Entry:
        ev = self.event
        assert ev.value is not None
        return Entry(ev.key, ev.value, ev.revision, self.create_revision)


@dataclass(frozen=True)
class MemoryStoreStatistics:
    """A snapshot of a MemoryStore: revisions, live keys, log rows, open watches."""

    revision: int
    compacted_revision: int
    keys: int
    rows: int
    watchers: int


def _rev(row: _Row) -> int:
    return row.event.revision


class MemoryStore:
    """The `Store` protocol over in-memory structures. Not durable.

    `watch_buffer` bounds each watcher's queue of live events (see WatchFanout).
    """

    def __init__(self, *, watch_buffer: int = DEFAULT_WATCH_BUFFER) -> None:
        self._log: list[_Row] = []                 # every kept row, ascending revision
        self._history: dict[str, list[_Row]] = {}  # key -> its kept rows, ascending
        self._keys: list[str] = []                 # sorted keys of _history
        self._live = 0                             # keys whose newest row is not a delete
        self._revision = 0
        self._compacted = 0
        self._closed = False
        self._fanout = WatchFanout(self._read_log, lambda: self._compacted, published=0,
                                   buffer=watch_buffer)

    # -- writes -------------------------------------------------------------

    def _current(self, key: str) -> _Row | None:
        rows = self._history.get(key)
        if not rows or rows[-1].event.type == "DELETED":
            return None
        return rows[-1]

    def _append(self, row: _Row) -> None:
        key = row.event.key
        rows = self._history.get(key)
        if rows is None:
            rows = self._history[key] = []
            bisect.insort(self._keys, key)
        rows.append(row)
        self._log.append(row)
        self._revision = row.revision
        self._fanout.publish([row.event])

    async def _enter(self) -> None:
        # A checkpoint first: a cancelled call does nothing.
        await trio.lowlevel.checkpoint()
        if self._closed:
            raise StoreError("store is closed")

    async def create(self, key: str, encode: ValueEncoder) -> Entry:
        """Store a new key. Returns its entry. Raises KeyExists."""
        await self._enter()
        if self._current(key) is not None:
            raise KeyExists(key)
        rev = self._revision + 1
        value = as_bytes(encode(rev))
        row = _Row(Event("ADDED", key, rev, value, None), rev)
        self._append(row)
        self._live += 1
        return row.entry()

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        """Replace a key's value. Returns the new entry. Raises KeyNotFound, RevisionConflict."""
        await self._enter()
        cur = self._checked(key, expected_revision)
        rev = self._revision + 1
        value = as_bytes(encode(rev))
        row = _Row(Event("MODIFIED", key, rev, value, cur.event.value), cur.create_revision)
        self._append(row)
        return row.entry()

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        """Delete a key. Returns (delete revision, last entry). Raises KeyNotFound, RevisionConflict."""
        await self._enter()
        cur = self._checked(key, expected_revision)
        rev = self._revision + 1
        self._append(_Row(Event("DELETED", key, rev, None, cur.event.value), cur.create_revision))
        self._live -= 1
        return rev, cur.entry()

    def _checked(self, key: str, expected_revision: int | None) -> _Row:
        cur = self._current(key)
        if cur is None:
            raise KeyNotFound(key)
        if expected_revision is not None and expected_revision != cur.revision:
            raise RevisionConflict(key, cur.entry())
        return cur

    # -- reads --------------------------------------------------------------

    async def get(self, key: str) -> Entry | None:
        """The key's current entry, or None."""
        await self._enter()
        cur = self._current(key)
        return cur.entry() if cur is not None else None

    async def list(self, prefix: str, *, revision: int | None = None) -> tuple[list[Entry], int]:
        """Entries under `prefix` sorted by key as of `revision` (None or future: now).

        Returns (entries, the revision read). Raises Compacted.
        """
        await self._enter()
        at = self._revision if revision is None else min(revision, self._revision)
        if at < self._compacted:
            raise Compacted(at, self._compacted)
        lo = bisect.bisect_left(self._keys, prefix)
        bound = prefix_upper_bound(prefix)
        hi = len(self._keys) if bound is None else bisect.bisect_left(self._keys, bound)
        out: list[Entry] = []
        for key in self._keys[lo:hi]:
            rows = self._history[key]
            i = bisect.bisect_right(rows, at, key=_rev)
            if i and rows[i - 1].event.type != "DELETED":
                out.append(rows[i - 1].entry())
        return out, at

    def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[Event]:
        """Events under `prefix` with revision > after_revision, in order, forever.

        Raises Compacted (first iteration; later if the watcher falls behind a
        compaction), StoreError after aclose().
        """
        return self._fanout.watch(prefix, after_revision=after_revision)

    async def _read_log(self, prefix: str, after: int, upto: int, limit: int) -> list[Event]:
        if after < self._compacted:
            raise Compacted(after, self._compacted)
        out: list[Event] = []
        start = bisect.bisect_right(self._log, after, key=_rev)
        for row in self._log[start:]:
            if row.revision > upto or len(out) >= limit:
                break
            if row.event.key.startswith(prefix):
                out.append(row.event)
        return out

    async def current_revision(self) -> int:
        """The revision of the latest write (0 for an empty store)."""
        return self._revision

    async def compacted_revision(self) -> int:
        """The oldest revision still readable."""
        return self._compacted

    # -- maintenance --------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Drop rows superseded at or below `revision` (and deletes at or below it).

        Each key keeps its newest row <= revision unless that row is a delete.
        A revision at or below the compacted one is a no-op. Raises ValueError
        for a revision newer than the current one.
        """
        await self._enter()
        if revision > self._revision:
            raise ValueError(f"cannot compact at {revision}: current revision is {self._revision}")
        if revision <= self._compacted:
            return
        kept_keys: list[str] = []
        for key in self._keys:
            rows = self._history[key]
            i = bisect.bisect_right(rows, revision, key=_rev)  # rows[:i] are <= revision
            keep_from = i - 1 if i and rows[i - 1].event.type != "DELETED" else i
            if keep_from > 0:
                del rows[:keep_from]
            if rows:
                kept_keys.append(key)
            else:
                del self._history[key]
        self._keys = kept_keys
        self._log = [r for r in self._log
                     if r.revision > revision or self._history.get(r.event.key, [None])[0] is r]
        self._compacted = revision

    def statistics(self) -> MemoryStoreStatistics:
        """Revisions, live key count, kept log rows and open watches."""
        return MemoryStoreStatistics(self._revision, self._compacted, self._live, len(self._log),
                                     self._fanout.watchers)

    async def aclose(self) -> None:
        """Refuse further calls; open watches raise StoreError."""
        self._closed = True
        self._fanout.close()
        await trio.lowlevel.checkpoint()


def as_bytes(value: object) -> bytes:
    """The encoder's result as bytes. Raises TypeError for anything else."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"a ValueEncoder must return bytes, not {type(value).__name__}")
