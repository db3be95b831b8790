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
from runtime.server.storage.sqlite.reads import CURRENT_SQL, entry_of, unseen_events

__all__ = ["apply_batch"]


def apply_batch(conn: sqlite3.Connection, batch: list[Write], head: int, *,
                peers_lost: Callable[[int], None] | None = None
                ) -> tuple[int, list[StoreEvent], list[tuple[Any, BaseException | None]]]:
    """Apply `batch` after revision `head` in one transaction and commit (worker thread).

    Returns the new head, the events in revision order and each write's
    (result, error). With peers (`peers_lost` given), the writes other
    processes committed after `head` are read first and lead the events;
    if some were compacted before this process saw them, `peers_lost` is
    called at once with the revision up to which they are gone.
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
        for w in batch:
            cur = conn.execute(CURRENT_SQL, (w.key,)).fetchone()
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
                conn.execute("INSERT INTO kv VALUES (?, ?, ?, 0, ?, NULL)", (rev, w.key, value, rev))
                conn.execute("INSERT INTO latest(key, rev) VALUES (?, ?)", (w.key, rev))
                assert value is not None
                events.append(StoreEvent("ADDED", w.key, rev, value, None, w.encode))
                outcomes.append((Entry(w.key, value, rev, rev), None))
            elif w.op == "update":
                assert prev is not None and value is not None
                conn.execute("INSERT INTO kv VALUES (?, ?, ?, 0, ?, ?)",
                             (rev, w.key, value, prev.create_revision, prev.mod_revision))
                conn.execute("UPDATE latest SET rev = ? WHERE key = ?", (rev, w.key))
                events.append(StoreEvent("MODIFIED", w.key, rev, value, prev.value, w.encode))
                outcomes.append((Entry(w.key, value, rev, prev.create_revision), None))
            else:
                assert prev is not None
                conn.execute("INSERT INTO kv VALUES (?, ?, NULL, 1, ?, ?)",
                             (rev, w.key, prev.create_revision, prev.mod_revision))
                conn.execute("DELETE FROM latest WHERE key = ?", (w.key,))
                events.append(StoreEvent("DELETED", w.key, rev, None, prev.value))
                outcomes.append(((rev, prev), None))
            head = rev
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return head, events, outcomes
