"""What a failed SQLite call means, in words an operator can act on.

Contract: `explain(exc)` is the exception's text followed, for the SQLite
result codes a sick disk gives, by what is wrong and what ends it:
SQLITE_FULL (no space: the disk or the file system is full), SQLITE_READONLY
(the file or its file system is read-only), SQLITE_IOERR (the disk failed a
read or write). The store puts it in the error a failed commit raises, and
the registry answers it as a 500 Status, as kube-apiserver answers an etcd
that refuses writes ("etcdserver: mvcc: database space exceeded").

Internal to `runtime.server.storage.sqlite`: imported by its modules only.
"""

from __future__ import annotations

import sqlite3

__all__ = ["explain"]

_MEANINGS = (
    ("SQLITE_FULL", "the disk holding the database is full; writes fail until space is freed"),
    ("SQLITE_READONLY", "the database file or its file system is read-only; writes fail until it is writable"),
    ("SQLITE_IOERR", "the disk failed an I/O operation"),
)


def explain(exc: BaseException) -> str:
    """`exc`'s text, with the meaning of its SQLite result code when the disk is to blame."""
    name = getattr(exc, "sqlite_errorname", "") if isinstance(exc, sqlite3.Error) else ""
    for code, meaning in _MEANINGS:
        if name == code or name.startswith(code + "_"):
            return f"{exc} ({meaning})"
    return str(exc)
