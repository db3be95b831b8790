"""Storage: the `Store` protocol and its backends.

A store is a log of revisions over keys, as etcd's MVCC is: every write
(create, update, delete) gets the next global revision; the revision is the
resourceVersion. Values are opaque bytes (the object's JSON as the registry
encoded it, with its resourceVersion already inside: the store tells the
encoder the revision the write will get; etcd's store predicts it, and
readers take the revision from the entry, see `runtime.server.storage.etcd.store`). Watch
history and compaction come from the same log. Lists are paged: a page is the
entries after a key, at one revision (`Page`). Each backend's `statistics()`
snapshot extends `StoreStatistics` (revisions, open watches).

Backends: `memory` (tests), `sqlite` (default, one file, WAL; shared by
the processes of `--workers` through `sqlite_peers`, saved and restored by
`sqlite_snapshot`), `etcd` (a real etcd v3 cluster, as kube-apiserver uses). The memory and sqlite
backends fan their watches out through `runtime.server.storage.fanout`; etcd serves
each watch itself. Storage knows nothing of kinds or of the registry: keys
and bytes only.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from runtime.server.storage.base import (
    Compacted, Entry, StoreEvent, KeyExists, KeyNotFound, Page, RevisionConflict, Store, StoreError,
    StoreStatistics, StoreUnavailable, ValueEncoder,
)
from runtime.server.storage.etcd.store import EtcdStore
from runtime.server.storage.memory import MemoryStore
from runtime.server.storage.sqlite.store import SqliteStore
from runtime.server.storage.sqlite.peers import SqlitePeers

__all__ = [
    "Compacted", "Entry", "StoreEvent", "KeyExists", "KeyNotFound", "Page", "RevisionConflict", "Store",
    "StoreError", "StoreStatistics", "StoreUnavailable", "ValueEncoder", "open_store", "MemoryStore", "SqliteStore",
    "EtcdStore",
]

_ETCD_OPTIONS = ("prefix", "cafile", "certfile", "keyfile", "timeout")


async def open_store(kind: str, path: str | None = None, *, peers: SqlitePeers | None = None,
                     **options: str | float) -> Store:
    """Open a backend by name or URL. Returns the store.

    - `memory`; `sqlite` with `path`, the database file, and `peers` when
      other processes share it (`runtime.server.storage.sqlite.peers`).
    - `etcd://HOST:PORT[,HOST:PORT...]` (`etcds://` for TLS), options as
      query parameters or keywords: `prefix` (default `/registry`), `cafile`,
      `certfile`, `keyfile` (kube-apiserver's --etcd-cafile, --etcd-certfile,
      --etcd-keyfile; any of them means TLS), `timeout` (seconds per call,
      default 5). Example: `etcd://10.0.0.1:2379,10.0.0.2:2379?prefix=/registry`.

    Raises ValueError for an unknown name, a sqlite store without a path, a
    bad URL or option; StoreUnavailable when no etcd endpoint answers.
    """
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        if not path:
            raise ValueError("the sqlite store needs a file path")
        return await SqliteStore.open(path, peers=peers)
    if peers is not None:
        raise ValueError(f"only a sqlite store is shared through peers, not {kind!r}")
    url = urlsplit(kind)
    if url.scheme in ("etcd", "etcds"):
        if url.path not in ("", "/") or url.fragment:
            raise ValueError(f"{kind!r}: an etcd store URL is etcd://HOST:PORT[,HOST:PORT...][?options]")
        given = {**dict(parse_qsl(url.query, strict_parsing=bool(url.query))), **options}
        unknown = sorted(set(given) - set(_ETCD_OPTIONS))
        if unknown:
            raise ValueError(f"unknown etcd store option(s) {', '.join(unknown)}: "
                             f"expected {', '.join(_ETCD_OPTIONS)}")
        files = {name: str(given[name]) for name in ("cafile", "certfile", "keyfile") if given.get(name)}
        return await EtcdStore.open(url.netloc, prefix=str(given.get("prefix", "/registry")),
                                    secure=url.scheme == "etcds", timeout=float(given.get("timeout", 5.0)),
                                    **files)
    raise ValueError(f"unknown store {kind!r}: expected memory, sqlite or etcd://HOST:PORT")
