"""The reads of `SqliteStore`: plain functions of a connection, run on a worker thread.

Contract: each `read_*` function takes a reader connection (`PRAGMA
query_only`) and does its work in one read transaction, so what it returns
is one snapshot; `SqliteStore` runs them on its reader pool via
`trio.to_thread`. No trio here. The table layout is `runtime.server.storage.sqlite.store`'s.

A page of a list costs O(page): at now it is a range of the `latest` table
(one row per live key) with a LIMIT; at a past revision it walks the
`kv_key_rev` index from the page's first key, a group of rows per key, and
stops one live key past the page. Neither reads the rest of the collection.

Internal to `runtime.server.storage.sqlite`: imported by its modules only.
"""

from __future__ import annotations

import sqlite3

from runtime.server.storage.base import Compacted, Entry, StoreEvent, Page
from runtime.server.storage.fanout import prefix_upper_bound

__all__ = [
    "CURRENT_SQL", "HEAD_SQL", "COMPACTED_SQL", "entry_of", "blob", "head_and_compacted",
    "read_get", "read_list", "read_log", "read_tail", "log_events",
    "unseen_events",
]

#: A live key's newest row: (rev, value, create_rev).
CURRENT_SQL = ("SELECT k.rev, k.value, k.create_rev FROM latest AS l JOIN kv AS k ON k.rev = l.rev "
               "WHERE l.key = ?")
HEAD_SQL = "SELECT max(rev) FROM kv"
COMPACTED_SQL = "SELECT value FROM meta WHERE name = 'compacted'"


def _range_sql(column: str, prefix: str, start_after: str = "") -> tuple[str, tuple[str, ...]]:
    """A `column` condition matching keys under `prefix` (and > start_after), as an index range."""
    low = f"{column} > ?" if start_after and start_after >= prefix else f"{column} >= ?"
    params: tuple[str, ...] = (max(prefix, start_after),)
    bound = prefix_upper_bound(prefix)
    if bound is None:
        return low, params
    return f"{low} AND {column} < ?", (*params, bound)


def blob(value: object) -> bytes:
    """A stored value as bytes, whatever its SQLite type (a damaged row may hold TEXT or NULL)."""
    if isinstance(value, bytes):
        return value
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return str(value).encode()


def entry_of(key: str, rev: int, value: object, create_rev: object) -> Entry:
    """An Entry from a kv row (a damaged create_rev falls back to rev)."""
    return Entry(key, blob(value), rev, create_rev if isinstance(create_rev, int) else rev)


def head_and_compacted(conn: sqlite3.Connection) -> tuple[int, int]:
    """(head, compacted) in the current read transaction.

    The head is max(compacted, newest row): compaction keeps every row above
    its revision, so only a compacted-away delete can hide the head.
    """
    compacted = conn.execute(COMPACTED_SQL).fetchone()[0]
    return max(compacted, conn.execute(HEAD_SQL).fetchone()[0] or 0), compacted


def read_get(conn: sqlite3.Connection, key: str) -> Entry | None:
    row = conn.execute(CURRENT_SQL, (key,)).fetchone()
    return entry_of(key, *row) if row is not None else None


def read_list(conn: sqlite3.Connection, prefix: str, revision: int | None, start_after: str,
              limit: int) -> Page:
    conn.execute("BEGIN")  # one snapshot for the revision and the rows
    try:
        head, compacted = head_and_compacted(conn)
        at = head if revision is None else min(revision, head)
        if at < compacted:
            raise Compacted(at, compacted)
        if at == head:
            cond, params = _range_sql("l.key", prefix, start_after)
            sql = ("SELECT l.key, k.rev, k.value, k.create_rev FROM latest AS l "
                   f"JOIN kv AS k ON k.rev = l.rev WHERE {cond} ORDER BY l.key")
            if limit:
                sql, params = sql + " LIMIT ?", (*params, limit + 1)  # one past the page: more?
            entries = [entry_of(*row) for row in conn.execute(sql, params)]
        else:
            entries = _list_past(conn, prefix, at, start_after, limit)
    finally:
        conn.execute("COMMIT")
    more = bool(limit) and len(entries) > limit
    return Page(entries[:limit] if more else entries, at, more)


def _list_past(conn: sqlite3.Connection, prefix: str, at: int, start_after: str, limit: int
               ) -> list[Entry]:
    """Up to limit + 1 entries as of `at`: the newest row <= at per key, unless a delete.

    The cursor is stepped lazily: the GROUP BY follows the (key, rev) index in
    key order and yields a key when its group ends, so the walk stops one live
    key past the page instead of grouping the whole range.
    """
    cond, params = _range_sql("key", prefix, start_after)
    groups = conn.execute(f"SELECT key, max(rev) FROM kv INDEXED BY kv_key_rev WHERE {cond} "
                          "AND rev <= ? GROUP BY key ORDER BY key", (*params, at))
    out: list[Entry] = []
    try:
        for key, rev in groups:
            row = conn.execute("SELECT value, create_rev, deleted FROM kv WHERE rev = ?", (rev,)).fetchone()
            if row is None or row[2]:
                continue
            out.append(entry_of(key, rev, row[0], row[1]))
            if limit and len(out) > limit:
                break
    finally:
        groups.close()
    return out


def read_log(conn: sqlite3.Connection, prefix: str, after: int, upto: int, limit: int) -> list[StoreEvent]:
    conn.execute("BEGIN")  # the compacted check and the rows from one snapshot
    try:
        _, compacted = head_and_compacted(conn)
        if after < compacted:
            raise Compacted(after, compacted)
        return log_events(conn, prefix, after, upto, limit)
    finally:
        conn.execute("COMMIT")


def read_tail(conn: sqlite3.Connection, after: int, limit: int) -> tuple[list[StoreEvent] | None, int, int]:
    """(events after `after`, at most `limit`; head; compacted) from one snapshot.

    The events are None when revisions after `after` were compacted away
    (a reader that fell that far behind cannot know what it missed).
    """
    conn.execute("BEGIN")
    try:
        head, compacted = head_and_compacted(conn)
        if after < compacted:
            return None, head, compacted
        return log_events(conn, "", after, head, limit), head, compacted
    finally:
        conn.execute("COMMIT")


def unseen_events(conn: sqlite3.Connection, head: int) -> tuple[int, list[StoreEvent] | None]:
    """(the file's head, the events after `head`) in the caller's transaction (a write one).

    The events are None when some after `head` were compacted away.
    """
    newest, compacted = head_and_compacted(conn)
    if newest <= head:
        return head, []
    if head < compacted:
        return newest, None
    return newest, log_events(conn, "", head, newest, newest - head)


def log_events(conn: sqlite3.Connection, prefix: str, after: int, upto: int, limit: int) -> list[StoreEvent]:
    """At most `limit` events under `prefix` with after < revision <= upto, in the caller's transaction."""
    # NOT INDEXED: walk the log by rev (rowid) rather than by key.
    cond, params = _range_sql("k.key", prefix)
    rows = conn.execute(
        "SELECT k.rev, k.key, k.value, k.deleted, k.prev_rev, p.value "
        "FROM kv AS k NOT INDEXED LEFT JOIN kv AS p ON p.rev = k.prev_rev "
        f"WHERE k.rev > ? AND k.rev <= ? AND {cond} ORDER BY k.rev LIMIT ?",
        (after, upto, *params, limit)).fetchall()
    events = []
    for rev, key, value, deleted, prev_rev, prev_value in rows:
        prev = blob(prev_value) if prev_rev is not None else None
        if deleted:
            events.append(StoreEvent("DELETED", key, rev, None, prev))
        else:
            events.append(StoreEvent("MODIFIED" if prev_rev is not None else "ADDED", key, rev,
                                blob(value), prev))
    return events
