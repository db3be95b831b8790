"""The `Store` protocol, its value types and errors.

Keys are '/'-separated strings such as `/rbac.authorization/clusterroles/admin`
or `/rbac.authorization/roles/team-a/reader`; a list or watch takes a key
prefix ending in '/'.

Internal to `runtime.server.storage`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Callable, Literal, NamedTuple, Protocol

__all__ = [
    "Entry", "StoreEvent", "Page", "ValueEncoder", "StoreError", "StoreUnavailable", "KeyExists",
    "KeyNotFound", "RevisionConflict", "Compacted", "Store", "StoreStatistics",
]

#: Called with the revision the write will get; returns the bytes to store.
#: It runs while the store holds its write lock: keep it pure and quick.
#: Where the server assigns revisions (etcd) the store passes its prediction
#: and, when the write got another revision, calls the encoder again with the
#: real one for the returned Entry: the stored bytes then embed the predicted
#: revision, so readers take the revision from `mod_revision`, never from the
#: value (the registry's decoder re-stamps it). An encoder may thus run twice.
ValueEncoder = Callable[[int], bytes]


@dataclass(frozen=True)
class Entry:
    """A key's value as of `mod_revision` (the write that produced it)."""

    key: str
    value: bytes
    mod_revision: int
    create_revision: int


@dataclass(frozen=True)
class StoreEvent:
    """One write in the log.

    For ADDED/MODIFIED `value` is the new value; for DELETED `value` is None
    and `prev_value` holds the last value before the delete. `prev_value` is
    also set for MODIFIED.

    `origin` is the `ValueEncoder` that made `value` when the write was made
    by this process and its event is delivered live (None for events read
    back from the log or from another process): a writer that holds the
    object it encoded (the registry) recognizes its own write by it and need
    not decode the bytes again. It takes no part in equality.
    """

    type: Literal["ADDED", "MODIFIED", "DELETED"]
    key: str
    revision: int
    value: bytes | None
    prev_value: bytes | None
    origin: object = field(default=None, compare=False, repr=False)


class Page(NamedTuple):
    """One page of a list: `entries` sorted by key, all as of `revision`.

    `more` is True when keys after the last entry remain under the prefix at
    that revision (always False for an unlimited list). A NamedTuple, so
    `entries, revision, more = await store.list(prefix)` unpacks it.
    """

    entries: list[Entry]
    revision: int
    more: bool


class StoreError(Exception):
    """Base of storage errors."""


class StoreUnavailable(StoreError):
    """The backend cannot be reached or did not answer in time (a remote store: etcd).

    The outcome of a write that raised it is unknown: it may have been applied.
    """


class KeyExists(StoreError):
    """create() of a key that exists."""


class KeyNotFound(StoreError):
    """update()/delete() of a key that does not exist."""


class RevisionConflict(StoreError):
    """update()/delete() whose expected revision is not the key's current one."""

    def __init__(self, key: str, current: Entry) -> None:
        super().__init__(f"{key}: revision {current.mod_revision} is current")
        self.current = current


class Compacted(StoreError):
    """A watch or read at a revision older than the compacted revision."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__(f"revision {requested} is compacted (oldest kept: {compacted})")
        self.requested = requested
        self.compacted = compacted


@dataclass(frozen=True)
class StoreStatistics:
    """What every store's `statistics()` snapshot starts with; each backend's adds its own counts.

    `revision` is the newest revision the store has (or, etcd, has seen),
    `compacted_revision` the one history is kept after, `watchers` the open watches.
    """

    revision: int
    compacted_revision: int
    watchers: int


class Store(Protocol):
    """A revisioned key-value log. Every method is safe to call from many trio tasks.

    Every acknowledged write (a returned create/update/delete) is durable: it
    survives a kill -9 of the process (sqlite and etcd backends). A remote
    backend (etcd) may raise StoreUnavailable from any call, within its timeout.
    """

    async def create(self, key: str, encode: ValueEncoder) -> Entry:
        """Store a new key. Returns its entry. Raises KeyExists."""

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        """Replace a key's value. `expected_revision` None means unconditional.

        Returns the new entry. Raises KeyNotFound, RevisionConflict.
        """

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        """Delete a key. Returns (revision of the delete, the last entry).

        Raises KeyNotFound, RevisionConflict.
        """

    async def get(self, key: str) -> Entry | None:
        """The key's current entry, or None."""

    async def list(self, prefix: str, *, revision: int | None = None, start_after: str = "",
                   limit: int = 0) -> Page:
        """A page of the entries under `prefix` sorted by key, as of `revision` (None: now).

        Only keys > `start_after` (when not empty), at most `limit` of them (0:
        all). Returns the Page, whose revision is the one read: pass it as
        `revision` with `start_after` = the last key for the next page, and the
        pages form one consistent list. A page costs O(its size), not the
        collection's. Raises Compacted when `revision` is older than the
        compacted revision; a revision in the future is read as now by the
        caller's choice (check current_revision()).
        """

    def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[StoreEvent]:
        """Events under `prefix` with revision > after_revision, in order, forever.

        History comes from the log; then live events. Raises Compacted (on the
        first iteration) when after_revision < compacted revision. The iterator
        is an async generator: close it (or cancel) to stop.
        """

    async def current_revision(self) -> int:
        """The revision of the latest write (0 for an empty store)."""

    async def compacted_revision(self) -> int:
        """The oldest revision still readable (events after it are kept)."""

    async def compact(self, revision: int) -> None:
        """Drop history at and below `revision`, keeping each key's current value."""

    async def aclose(self) -> None:
        """Release the backend (close files, stop threads)."""
