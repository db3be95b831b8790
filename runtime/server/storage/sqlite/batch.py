"""One group commit's transaction on the SQLite log: the writes of a batch, applied in order.

Contract: `apply_batch(conn, batch, head, peers=)` runs on the store's writer
thread with the batch's writes (`Write`) in arrival order, numbers them after
`head` and commits once. A write's own failure (its precondition, its
encoder) fails only that write and uses no revision; an SQLite error rolls
back the whole batch and propagates. The group commit
(`runtime.server.storage.group_commit`) owns the waiting and the acknowledging; this
is the SQL a batch runs.

Internal to `runtime.server.storage.sqlite`: imported by its modules only.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Callable

from runtime.server.storage.base import Entry, StoreEvent, KeyExists, KeyNotFound, RevisionConflict
from runtime.server.storage.fanout import as_bytes
from runtime.server.storage.group_commit import Write
from runtime.server.storage.sqlite.reads import entry_of, unseen_events

__all__ = ["apply_batch"]


#: Keys looked up per statement (well under SQLite's bound on a statement's parameters).
_LOOKUP_CHUNK = 256


def apply_batch(conn: sqlite3.Connection, batch: list[Write], head: int, *,
                peers_lost: Callable[[int], None] | None = None
                ) -> tuple[int, list[StoreEvent], list[tuple[Any, BaseException | None]]]:
    """Apply `batch` after revision `head` in one transaction and commit (worker thread).

    Returns the new head, the events in revision order and each write's
    (result, error). With peers (`peers_lost` given), the writes other
    processes committed after `head` are read first and lead the events;
    if some were compacted before this process saw them, `peers_lost` is
    called at once with the revision up to which they are gone.

    The batch's keys are read in one statement (a chunk of them), its rows written by one `executemany`
    per table, whatever its size: each statement a call into SQLite and a hand-over of the GIL, which
    the serving thread waits on (per write, a lookup and two inserts, were most of the batch's Python).
    """
    events: list[StoreEvent] = []
    outcomes: list[tuple[Any, BaseException | None]] = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        if peers_lost is not None:
            head, unseen = unseen_events(conn, head)
            if unseen is None:
                peers_lost(head)
            events = unseen or []
        # Each key's (rev, value, create_rev) as the batch goes: None once deleted (or never there).
        current = _current(conn, list({w.key: None for w in batch}))
        rows: list[tuple[Any, ...]] = []
        latest: dict[str, int | None] = {}  # each key's last word: its newest revision, None when deleted
        for w in batch:
            cur = current.get(w.key)
            rev = head + 1
            try:
                # Everything that may refuse the write happens before any SQL write.
                if w.op == "create":
                    if cur is not None:
                        raise KeyExists(w.key)
                    prev = None
                else:
                    if cur is None:
                        raise KeyNotFound(w.key)
                    prev = entry_of(w.key, *cur)
                    if w.expected is not None and w.expected != prev.mod_revision:
                        raise RevisionConflict(w.key, prev)
                value = as_bytes(w.encode(rev)) if w.encode is not None else None
            except Exception as exc:
                outcomes.append((None, exc))
                continue
            if w.op == "create":
                assert value is not None
                rows.append((rev, w.key, value, 0, rev, None))
                current[w.key], latest[w.key] = (rev, value, rev), rev
                events.append(StoreEvent("ADDED", w.key, rev, value, None, w.encode))
                outcomes.append((Entry(w.key, value, rev, rev), None))
            elif w.op == "update":
                assert prev is not None and value is not None
                rows.append((rev, w.key, value, 0, prev.create_revision, prev.mod_revision))
                current[w.key], latest[w.key] = (rev, value, prev.create_revision), rev
                events.append(StoreEvent("MODIFIED", w.key, rev, value, prev.value, w.encode))
                outcomes.append((Entry(w.key, value, rev, prev.create_revision), None))
            else:
                assert prev is not None
                rows.append((rev, w.key, None, 1, prev.create_revision, prev.mod_revision))
                current[w.key], latest[w.key] = None, None
                events.append(StoreEvent("DELETED", w.key, rev, None, prev.value))
                outcomes.append(((rev, prev), None))
            head = rev
        if rows:
            conn.executemany("INSERT INTO kv VALUES (?, ?, ?, ?, ?, ?)", rows)
            kept = [(key, rev) for key, rev in latest.items() if rev is not None]
            gone = [(key,) for key, rev in latest.items() if rev is None]
            if kept:
                conn.executemany("INSERT OR REPLACE INTO latest(key, rev) VALUES (?, ?)", kept)
            if gone:
                conn.executemany("DELETE FROM latest WHERE key = ?", gone)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return head, events, outcomes


def _current(conn: sqlite3.Connection, keys: list[str]) -> dict[str, tuple[int, Any, Any] | None]:
    """The keys' latest (rev, value, create_rev), for those that are there."""
    found: dict[str, tuple[int, Any, Any] | None] = {}
    for start in range(0, len(keys), _LOOKUP_CHUNK):
        chunk = keys[start:start + _LOOKUP_CHUNK]
        sql = ("SELECT l.key, k.rev, k.value, k.create_rev FROM latest AS l JOIN kv AS k ON k.rev = l.rev "
               f"WHERE l.key IN ({', '.join('?' * len(chunk))})")
        for key, rev, value, create_rev in conn.execute(sql, chunk):
            found[key] = (rev, value, create_rev)
    return found
