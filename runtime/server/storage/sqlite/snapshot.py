"""Snapshots of a SQLite store: saved online with SQLite's backup API, restored into a data directory.

Contract:

- `save_snapshot(db, file)` copies the store at `db` into `file` while
  servers keep writing it: SQLite's backup API copies every page in one
  step, inside one read transaction, so the copy is the store exactly as of
  one revision (WAL readers never block writers, nor writers them). The copy
  is written beside `file` and renamed into place once verified, so `file`
  is never half a snapshot; it is a self-contained file (rollback journal,
  no WAL beside it).
- `snapshot_status(file)` verifies a snapshot (SQLite's integrity check,
  miniplane's schema) and describes it: revision, compacted revision, live
  keys, size.
- `restore_snapshot(file, db)` verifies `file`, then writes it as the store
  `db` (WAL mode), refusing to overwrite an existing store: restore into a
  new data directory, or move the old store away first, as `etcdctl
  snapshot restore` refuses an existing data directory.

Every function is synchronous (a command runs it; a server would run it on
a worker thread) and raises SnapshotError with the reason.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from runtime.server.storage.base import StoreError
from runtime.server.storage.sqlite.reads import head_and_compacted

__all__ = ["SnapshotError", "SnapshotInfo", "save_snapshot", "restore_snapshot", "snapshot_status"]

#: The schema version a snapshot must have (`runtime.server.storage.sqlite.store`'s).
_SCHEMA_VERSION = 1


class SnapshotError(StoreError):
    """A snapshot cannot be saved, read or restored; the message says why."""


@dataclass(frozen=True)
class SnapshotInfo:
    """What a snapshot holds: the store as of `revision` (history kept after `compacted`), `keys` live keys."""

    path: str
    revision: int
    compacted: int
    keys: int
    size: int


def _describe(conn: sqlite3.Connection, path: str) -> SnapshotInfo:
    """Verify `conn`'s database as a miniplane store and describe it. Raises SnapshotError."""
    try:
        check = conn.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            raise SnapshotError(f"{path}: damaged: {'; '.join(str(row[0]) for row in check[:3])}")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"kv", "latest", "meta"} <= tables:
            raise SnapshotError(f"{path}: not a miniplane SQLite store (no kv, latest and meta tables)")
        schema = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        if schema is None or schema[0] != _SCHEMA_VERSION:
            raise SnapshotError(f"{path}: store schema {schema[0] if schema else 'unknown'}, "
                                f"expected {_SCHEMA_VERSION}")
        conn.execute("BEGIN")
        try:
            head, compacted = head_and_compacted(conn)
            (keys,) = conn.execute("SELECT count(*) FROM latest").fetchone()
        finally:
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise SnapshotError(f"{path}: not a readable SQLite store: {exc}") from exc
    return SnapshotInfo(path, head, compacted, keys, 0)


def _copy(source: sqlite3.Connection, target: str, journal_mode: str) -> None:
    """Back `source` up into a new file `target` in `journal_mode`, durably."""
    dest = sqlite3.connect(target, isolation_level=None)
    try:
        source.backup(dest)  # pages=-1: every page in one step, one read transaction: one revision
        mode = dest.execute(f"PRAGMA journal_mode={journal_mode}").fetchone()[0]
        if str(mode).lower() != journal_mode.lower():
            raise SnapshotError(f"{target}: cannot use journal mode {journal_mode} (got {mode})")
    finally:
        dest.close()
    fd = os.open(target, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_part(source_path: str, target: str, journal_mode: str, action: str, *, verify: bool) -> str:
    """Copy the database at `source_path` into `{target}.part` (`journal_mode`); returns that path.

    `verify`: check the source is a sound store first. Raises SnapshotError
    ("cannot `action` the snapshot"); a failure leaves no `.part` file.
    """
    part = f"{target}.part"
    source = _open_existing(source_path)
    try:
        if verify:
            _describe(source, source_path)
        Path(part).unlink(missing_ok=True)
        _copy(source, part, journal_mode)
    except sqlite3.Error as exc:
        Path(part).unlink(missing_ok=True)
        raise SnapshotError(f"{target}: cannot {action} the snapshot: {exc}") from exc
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    finally:
        source.close()
    return part


def _open_existing(path: str) -> sqlite3.Connection:
    if not os.path.isfile(path):
        raise SnapshotError(f"{path}: no such file")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        conn.execute("PRAGMA query_only=1")
    except sqlite3.Error as exc:
        raise SnapshotError(f"{path}: cannot open: {exc}") from exc
    return conn


def _finish(part: str, final: str) -> None:
    os.replace(part, final)
    fd = os.open(os.path.dirname(os.path.abspath(final)), os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself survives a crash
    finally:
        os.close(fd)


def save_snapshot(db: str | os.PathLike[str], file: str | os.PathLike[str]) -> SnapshotInfo:
    """Copy the store `db` (servers may be writing it) into the snapshot `file`; returns its description.

    Raises SnapshotError (no store, a damaged store, a file that cannot be written).
    """
    db, file = os.fspath(db), os.fspath(file)
    part = _copy_part(db, file, "DELETE", "save", verify=True)  # a damaged store makes no snapshot
    info = snapshot_status(part)
    _finish(part, file)
    return SnapshotInfo(file, info.revision, info.compacted, info.keys, info.size)


def snapshot_status(file: str | os.PathLike[str]) -> SnapshotInfo:
    """Verify the snapshot `file` and describe it. Raises SnapshotError."""
    file = os.fspath(file)
    conn = _open_existing(file)
    try:
        info = _describe(conn, file)
    finally:
        conn.close()
    return SnapshotInfo(file, info.revision, info.compacted, info.keys, os.path.getsize(file))


def restore_snapshot(file: str | os.PathLike[str], db: str | os.PathLike[str]) -> SnapshotInfo:
    """Write the snapshot `file` as the store `db`; returns the snapshot's description.

    Raises SnapshotError (a damaged or foreign snapshot, `db` exists already).
    """
    file, db = os.fspath(file), os.fspath(db)
    for existing in (db, f"{db}-wal"):
        if os.path.exists(existing):
            raise SnapshotError(f"{existing} exists: restore into a new data directory, "
                                f"or move the store there away first")
    info = snapshot_status(file)
    os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
    part = _copy_part(file, db, "WAL", "restore", verify=False)
    for extra in (f"{part}-wal", f"{part}-shm"):  # the WAL of the fresh copy is empty: checkpointed at close
        Path(extra).unlink(missing_ok=True)
    _finish(part, db)
    return info
