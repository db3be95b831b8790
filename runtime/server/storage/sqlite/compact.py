"""Compaction of `SqliteStore`'s log: plain functions of the writer connection, run on a worker thread.

Contract: compaction at `revision` makes every row superseded at or below
`revision`, and every delete at or below it, unreadable, and then drops
them; each key keeps its newest row <= revision unless that row is a
delete, and every row above `revision` stays. It is done in short
transactions, so that commits go on between them (one transaction over a
large history held the writer for as long as it ran: 0.6 s for 50,000 keys
written twice), as etcd compacts in batches of keys:

- `mark_compacted(conn, revision)` raises the file's compacted revision
  (meta `compacted`) in one transaction. From its commit on, a read below
  it answers Compacted (each read checks it in its own snapshot), so the
  rows it makes unreadable may go at any time after.
- `clean_log(conn, batch)` drops them for the keys written in the next
  `batch` revisions after the file's cleaned mark (meta `cleaned`), and
  moves the mark in the same transaction; True once the mark reaches the
  compacted revision. Every row of a key a transaction looks at goes at
  once, so no snapshot sees a key half cleaned; a key not written since the
  mark was reduced to its one readable row before. A cleaning cut short
  (a crash, a cancelled compaction) goes on from the mark at the next one.

Both read the file's head, compacted revision and mark inside their
transaction, so they are right even when other processes write the file
(`runtime.server.storage.sqlite.peers`). No trio here.

Internal to `runtime.server.storage.sqlite`: imported by its modules only.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator

from runtime.server.storage.sqlite.reads import head_and_compacted

__all__ = ["CLEAN_BATCH", "mark_compacted", "clean_log"]

#: Revisions of the log one cleaning transaction covers (etcd's compaction batch limit is 1,000 keys).
CLEAN_BATCH = 1000

_CLEANED_SQL = "SELECT value FROM meta WHERE name = 'cleaned'"


@contextmanager
def _write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT (unless the block rolled back itself); ROLLBACK on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        if conn.in_transaction:
            conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def mark_compacted(conn: sqlite3.Connection, new: int) -> int:
    """Raise the compacted revision to `new`; returns the compacted revision (unchanged when `new` is not
    newer). Raises ValueError for a revision newer than the file's head, sqlite3.Error."""
    with _write_transaction(conn):
        head, old = head_and_compacted(conn)
        if new > head:
            raise ValueError(f"cannot compact at {new}: current revision is {head}")
        if new <= old:
            conn.execute("ROLLBACK")
            return old
        conn.execute("UPDATE meta SET value = ? WHERE name = 'compacted'", (new,))
    return new


def clean_log(conn: sqlite3.Connection, batch: int = CLEAN_BATCH) -> bool:
    """Drop what compaction made unreadable for the keys written in the next `batch` revisions after the
    cleaned mark, and move the mark; True once it has reached the compacted revision. Raises sqlite3.Error."""
    with _write_transaction(conn):
        _, compacted = head_and_compacted(conn)
        low = conn.execute(_CLEANED_SQL).fetchone()[0]
        if low >= compacted:
            conn.execute("ROLLBACK")
            return True
        high = min(low + batch, compacted)
        conn.execute(
            """DELETE FROM kv WHERE rev IN (
                 SELECT k.rev FROM kv AS k INDEXED BY kv_key_rev
                 WHERE k.key IN (SELECT key FROM kv WHERE rev > :low AND rev <= :high)
                   AND k.rev <= :compacted
                   AND (k.deleted != 0 OR EXISTS (
                         SELECT 1 FROM kv AS n INDEXED BY kv_key_rev
                         WHERE n.key = k.key AND n.rev > k.rev AND n.rev <= :compacted)))""",
            {"low": low, "high": high, "compacted": compacted})
        conn.execute("UPDATE meta SET value = ? WHERE name = 'cleaned'", (high,))
    return high >= compacted
