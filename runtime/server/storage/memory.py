"""`MemoryStore`: the `Store` log held in process memory (tests, dry runs).

Contract: the full `Store` semantics (see `runtime.server.storage.base`) without
durability. Every write gets the next global revision; each key keeps its rows
until compaction; `list(revision=R)` reads the newest row <= R per key; watch
replays rows from the log, then follows live writes.

A page of a list costs O(page): a bisect finds its first key in a sorted key
list, live keys only for a list at now; a list at a past revision also steps
over keys that did not exist then (deleted keys are kept until compaction).
`statistics().keys_read` counts the keys lists looked at.

A compaction costs what was written since the last one, not the store's
size: the log holds only the rows after the compacted revision, and only
the keys of the rows it drops can hold rows to trim
(`statistics().compacted_rows` counts those rows). It trims `COMPACT_TURN`
rows' keys at a time, writes going on in between.

Watches go through `runtime.server.storage.fanout.WatchFanout`, as in every backend.

Internal to `runtime.server.storage`: imported by its modules only.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import AsyncIterator

import trio

from runtime.server.storage.base import (
    Compacted, Entry, StoreEvent, KeyExists, KeyNotFound, Page, RevisionConflict, StoreError, StoreStatistics,
    ValueEncoder,
)
from runtime.server.storage.fanout import DEFAULT_WATCH_BUFFER, FollowsAtCommit, WatchFanout, as_bytes, prefix_upper_bound

__all__ = ["MemoryStore", "MemoryStoreStatistics"]

#: Rows of the log a compaction trims between two checkpoints (writes go on between them).
COMPACT_TURN = 1_000


@dataclass(frozen=True, slots=True)
class _Row:
    """One write in the log (an StoreEvent plus the key's create revision)."""

    event: StoreEvent
    create_revision: int

    @property
    def revision(self) -> int:
        return self.event.revision

    def entry(self) -> Entry:
        ev = self.event
        assert ev.value is not None
        return Entry(ev.key, ev.value, ev.revision, self.create_revision)


@dataclass(frozen=True)
class MemoryStoreStatistics(StoreStatistics):
    """A snapshot of a MemoryStore: revisions and open watches (`StoreStatistics`), live keys, log rows.

    `keys_read` counts the keys every list so far has looked at;
    `compacted_rows` the log rows whose keys every compaction so far has
    looked at (one per row taken: the work does not grow with the store);
    `history_rows` the rows the keys keep (each its newest at or below the
    compacted revision, unless a delete, and every row after it).
    """

    keys: int
    rows: int
    keys_read: int = 0
    compacted_rows: int = 0
    history_rows: int = 0


def _rev(row: _Row) -> int:
    return row.event.revision


class MemoryStore(FollowsAtCommit):
    """The `Store` protocol over in-memory structures. Not durable.

    `watch_buffer` bounds each watcher's queue of live events (see WatchFanout).
    """

    def __init__(self, *, watch_buffer: int = DEFAULT_WATCH_BUFFER) -> None:
        self._log: list[_Row] = []                 # the rows after the compacted revision, ascending
        self._history: dict[str, list[_Row]] = {}  # key -> its kept rows, ascending
        self._keys: list[str] = []                 # sorted keys of _history
        self._live: list[str] = []                 # sorted keys whose newest row is not a delete
        self._keys_read = 0
        self._compacted_rows = 0
        self._revision = 0
        self._compacted = 0
        self._compacting = trio.Lock()
        self._closed = False
        self._fanout = WatchFanout(self._read_log, lambda: self._compacted, published=0,
                                   buffer=watch_buffer)

    # -- writes -------------------------------------------------------------

    def _current(self, key: str) -> _Row | None:
        rows = self._history.get(key)
        if not rows or rows[-1].event.type == "DELETED":
            return None
        return rows[-1]

    def _append(self, row: _Row, origin: ValueEncoder | None = None) -> None:
        """Log `row` and publish its event (live, with the encoder that made it; the log keeps none)."""
        key = row.event.key
        rows = self._history.get(key)
        if rows is None:
            rows = self._history[key] = []
            bisect.insort(self._keys, key)
        rows.append(row)
        self._log.append(row)
        self._revision = row.revision
        event = row.event
        # The origin's event only for a live reader; built directly (dataclasses.replace costs 3x).
        if origin is not None and self._fanout.watchers:
            event = StoreEvent(event.type, event.key, event.revision, event.value, event.prev_value, origin)
        self._fanout.publish((event,))

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
        row = _Row(StoreEvent("ADDED", key, rev, value, None), rev)
        self._append(row, encode)
        bisect.insort(self._live, key)
        return row.entry()

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        """Replace a key's value. Returns the new entry. Raises KeyNotFound, RevisionConflict."""
        await self._enter()
        cur = self._checked(key, expected_revision)
        rev = self._revision + 1
        value = as_bytes(encode(rev))
        row = _Row(StoreEvent("MODIFIED", key, rev, value, cur.event.value), cur.create_revision)
        self._append(row, encode)
        return row.entry()

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        """Delete a key. Returns (delete revision, last entry). Raises KeyNotFound, RevisionConflict."""
        await self._enter()
        cur = self._checked(key, expected_revision)
        rev = self._revision + 1
        self._append(_Row(StoreEvent("DELETED", key, rev, None, cur.event.value), cur.create_revision))
        del self._live[bisect.bisect_left(self._live, key)]
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

    async def list(self, prefix: str, *, revision: int | None = None, start_after: str = "",
                   limit: int = 0) -> Page:
        """A page of the entries under `prefix` sorted by key as of `revision` (None or future: now).

        Keys > `start_after`, at most `limit` (0: all). Raises Compacted.
        """
        await self._enter()
        at = self._revision if revision is None else min(revision, self._revision)
        if at < self._compacted:
            raise Compacted(at, self._compacted)
        keys = self._live if at == self._revision else self._keys
        lo = (bisect.bisect_right(keys, start_after) if start_after and start_after >= prefix
              else bisect.bisect_left(keys, prefix))
        bound = prefix_upper_bound(prefix)
        hi = len(keys) if bound is None else bisect.bisect_left(keys, bound, lo)
        out: list[Entry] = []
        for i in range(lo, hi):
            rows = self._history[keys[i]]
            j = bisect.bisect_right(rows, at, key=_rev)
            if j and rows[j - 1].event.type != "DELETED":
                if limit and len(out) == limit:  # one entry past the page: more remain
                    self._keys_read += i + 1 - lo
                    return Page(out, at, True)
                out.append(rows[j - 1].entry())
        self._keys_read += hi - lo
        return Page(out, at, False)

    def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[StoreEvent]:
        """Events under `prefix` with revision > after_revision, in order, forever.

        Raises Compacted (first iteration; later if the watcher falls behind a
        compaction), StoreError after aclose().
        """
        return self._fanout.watch(prefix, after_revision=after_revision)

    async def _read_log(self, prefix: str, after: int, upto: int, limit: int) -> list[StoreEvent]:
        if after < self._compacted:
            raise Compacted(after, self._compacted)
        out: list[StoreEvent] = []
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
        async with self._compacting:  # one at a time: each trims what the log held up to its revision
            if revision > self._revision:
                raise ValueError(f"cannot compact at {revision}: current revision is {self._revision}")
            if revision <= self._compacted:
                return
            # The log holds exactly the rows after the compacted revision: those up to `revision` go, and only
            # their keys can hold rows to drop (a key untouched since the last compaction has one row, not a
            # delete, that stays). So a compaction costs what was written since the last, not the store's size.
            cut = bisect.bisect_right(self._log, revision, key=_rev)
            touched = [row.event.key for row in self._log[:cut]]
            del self._log[:cut]
            self._compacted = revision  # reads below it answer Compacted from here on
            # Writes go on between turns (the rows they add are newer than `revision`). Shielded: a key left
            # untrimmed now would never be trimmed, its rows being gone from the log.
            with trio.CancelScope(shield=True):
                for start in range(0, len(touched), COMPACT_TURN):
                    if start:
                        await trio.lowlevel.checkpoint()
                    self._trim(touched[start:start + COMPACT_TURN], revision)

    def _trim(self, keys: list[str], revision: int) -> None:
        """Drop the rows of `keys` that `revision` superseded (a key seen before in this compaction: no-op)."""
        for key in keys:
            self._compacted_rows += 1
            rows = self._history.get(key)
            if rows is None:
                continue  # deleted and trimmed away earlier in this compaction
            i = bisect.bisect_right(rows, revision, key=_rev)  # rows[:i] are <= revision
            keep_from = i - 1 if i and rows[i - 1].event.type != "DELETED" else i
            if keep_from == 0:
                continue  # nothing superseded: trimmed already, or made again since
            del rows[:keep_from]
            if not rows:  # deleted at or below `revision`: gone from the history
                del self._history[key]
                del self._keys[bisect.bisect_left(self._keys, key)]

    def statistics(self) -> MemoryStoreStatistics:
        """Revisions, live key count, log rows after the compacted revision, open watches, work counts.

        Counts the kept rows key by key: a snapshot for tests and tools, not for every request.
        """
        return MemoryStoreStatistics(self._revision, self._compacted, self._fanout.watchers, len(self._live),
                                     len(self._log), self._keys_read, self._compacted_rows,
                                     sum(len(rows) for rows in self._history.values()))

    async def aclose(self) -> None:
        """Refuse further calls; open watches raise StoreError."""
        self._closed = True
        self._fanout.close()
        await trio.lowlevel.checkpoint()
