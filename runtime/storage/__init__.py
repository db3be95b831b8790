"""Storage: the `Store` protocol and its backends.

A store is a log of revisions over keys, as etcd's MVCC is: every write
(create, update, delete) gets the next global revision; the revision is the
resourceVersion. Values are opaque bytes (the object's JSON as the registry
encoded it, with its resourceVersion already inside: the store tells the
encoder the revision the write will get). Watch history and compaction come
from the same log.

Backends: `memory` (tests), `sqlite` (default, one file, WAL). Every backend
fans its watches out through `runtime.storage.fanout`. Storage knows nothing
of kinds or of the registry: keys and bytes only.
"""

from runtime.storage.base import (
    Compacted, Entry, Event, KeyExists, KeyNotFound, RevisionConflict, Store, StoreError, ValueEncoder,
)
from runtime.storage.memory import MemoryStore
from runtime.storage.sqlite import SqliteStore

__all__ = [
    "Compacted", "Entry", "Event", "KeyExists", "KeyNotFound", "RevisionConflict", "Store",
    "StoreError", "ValueEncoder", "open_store", "MemoryStore", "SqliteStore",
]


async def open_store(kind: str, path: str | None = None) -> Store:
    """Open a backend by name: `memory` or `sqlite` (path of the database file).

    Raises ValueError for an unknown name or a sqlite store without a path.
    """
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        if not path:
            raise ValueError("the sqlite store needs a file path")
        return await SqliteStore.open(path)
    raise ValueError(f"unknown store {kind!r}: expected memory or sqlite")
