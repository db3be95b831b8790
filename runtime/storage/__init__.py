"""Storage: the `Store` protocol and its backends.

A store is a log of revisions over keys, as etcd's MVCC is: every write
(create, update, delete) gets the next global revision; the revision is the
resourceVersion. Values are opaque bytes (the object's JSON as the registry
encoded it, with its resourceVersion already inside: the store tells the
encoder the revision the write will get). Watch history and compaction come
from the same log.

Backends: `memory` (tests), `sqlite` (default, one file, WAL).
"""

from runtime.storage.base import (
    Compacted, Entry, Event, KeyExists, KeyNotFound, RevisionConflict, Store, StoreError,
    ValueEncoder, open_store,
)

__all__ = [
    "Compacted", "Entry", "Event", "KeyExists", "KeyNotFound", "RevisionConflict", "Store",
    "StoreError", "ValueEncoder", "open_store",
]
