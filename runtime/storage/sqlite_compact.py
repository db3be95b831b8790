"""Compaction of `SqliteStore`'s log: a plain function of the writer connection, run on a worker thread.

Contract: `compact_log(conn, revision)` drops, in one write transaction,
every row superseded at or below `revision` and every delete at or below
it; each key keeps its newest row <= revision unless that row is a delete,
and every row above `revision` stays. It reads the file's head and
compacted revision inside that transaction, so it is right even when other
processes write the file (`runtime.storage.sqlite_peers`). No trio here.
"""

from __future__ import annotations

import sqlite3

from runtime.storage.sqlite_reads import head_and_compacted

__all__ = ["compact_log"]


def compact_log(conn: sqlite3.Connection, new: int) -> int:
    """Compact at `new`; returns the compacted revision (unchanged when `new` is not newer).

    Raises ValueError for a revision newer than the file's head, sqlite3.Error.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        head, old = head_and_compacted(conn)
        if new > head:
            raise ValueError(f"cannot compact at {new}: current revision is {head}")
        if new <= old:
            conn.execute("ROLLBACK")
            return old
        # Only keys written in (old, new] can have rows to drop: every other
        # key's rows <= old were reduced to one live row by the last compaction.
        conn.execute(
            """DELETE FROM kv WHERE rev IN (
                 SELECT k.rev FROM kv AS k INDEXED BY kv_key_rev
                 WHERE k.key IN (SELECT key FROM kv WHERE rev > :old AND rev <= :new)
                   AND k.rev <= :new
                   AND (k.deleted != 0 OR EXISTS (
                         SELECT 1 FROM kv AS n INDEXED BY kv_key_rev
                         WHERE n.key = k.key AND n.rev > k.rev AND n.rev <= :new)))""",
            {"old": old, "new": new})
        conn.execute("UPDATE meta SET value = ? WHERE name = 'compacted'", (new,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return new
