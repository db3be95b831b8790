"""`SqliteStore`: the `Store` log in one SQLite file (WAL mode), durable across kill -9.

Contract: the full `Store` semantics (see `runtime.server.storage.base`). A write
returns only after its transaction is committed to the WAL, so every
acknowledged write survives a kill -9 of the process; with the default
`synchronous="FULL"` the WAL is fsynced on each commit, so it survives a power
loss too. `synchronous="NORMAL"` skips that fsync: still safe against a
process crash (the WAL is in the OS page cache), not against power loss.

Layout::

    kv(rev INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB,
       deleted INTEGER NOT NULL, create_rev INTEGER NOT NULL, prev_rev INTEGER)
        -- the log: one row per write; rev is the global revision (resourceVersion)
    kv_key_rev ON kv(key, rev)     -- a key's history: past lists, compaction
    latest(key PRIMARY KEY, rev)   -- live keys -> their newest kv row
    meta(name PRIMARY KEY, value)  -- 'compacted' revision, 'cleaned' mark, 'schema' version

Why a `latest` table rather than "newest row per key" over kv_key_rev: the
current state is what nearly every read wants (get, list now, and the
precondition check of every write), and with `latest` its cost is one B-tree
lookup per key however long the key's history is until the next compaction; a
GROUP BY over the (key, rev) index reads every kept row of every key in the
range. It costs one more B-tree write per write, in the same transaction (so
it can never disagree with kv), which group commit makes cheap next to the
commit itself. Lists at a past revision do use kv_key_rev.

Writes use group commit (`runtime.server.storage.group_commit`): a write joins a
pending list; a writer that finds no commit running hands every pending write
to a worker thread, which applies them in one transaction, hands the outcome
back (acknowledging each write and publishing the events in revision order)
and carries on with the writes that came meanwhile. Fifty concurrent writers
share one fsync instead of paying fifty. Reads run on a small pool of reader
connections, each on a worker thread; WAL lets them read while a commit runs.
The reads, and what a page of a list costs, are in `runtime.server.storage.sqlite.reads`.

Several processes may share the file when each opens its store with
`peers=SqlitePeers(...)` (`runtime.server.storage.sqlite.peers`, `miniplane serve
--workers N`): the revision stays one global counter (each batch numbers its
writes after the newest row, read inside its write transaction); the writes
of other processes committed since this one last looked come first in its
batch's events, and `follow_peers()` (a task the owner runs) reads them as
soon as a peer announces a commit, so every process's watchers see every
write, in order; `current_revision()` is the newest revision any process
acknowledged. Without peers, this process owns the file.

Caveats:
- The ValueEncoder runs on the worker thread inside the write transaction:
  it must be pure (no trio calls) and quick, as `base.ValueEncoder` says.
- A write whose caller is cancelled after its batch started may still commit
  (as with etcd, a timed-out request may have been applied). So may a write
  whose commit reported an error after reaching the WAL: the store then takes
  its head from the file, so later writes and watches carry on.
- The store returns whatever bytes a row holds; deciding that a value is
  corrupt is the registry's job.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, AsyncContextManager, AsyncIterator, Callable, Literal, TypeVar

import trio

from runtime.server.storage.base import Entry, StoreEvent, Page, StoreError, StoreStatistics, ValueEncoder
from runtime.server.storage.fanout import DEFAULT_WATCH_BUFFER, FollowsAtCommit, WatchFanout
from runtime.server.storage.group_commit import Applied, GroupCommit, Write
from runtime.server.storage.sqlite.batch import apply_batch
from runtime.server.storage.sqlite.compact import CLEAN_BATCH, clean_log, mark_compacted
from runtime.server.storage.sqlite.errors import explain
from runtime.server.storage.sqlite.peers import SqlitePeers
from runtime.server.storage.sqlite.reads import COMPACTED_SQL, HEAD_SQL, read_get, read_list, read_log, read_tail

__all__ = ["SqliteStore", "SqliteStoreStatistics", "Synchronous"]

#: SQLite's `PRAGMA synchronous` levels that keep acknowledged writes across a process crash in WAL mode.
Synchronous = Literal["FULL", "NORMAL", "EXTRA"]

_SCHEMA_VERSION = 1

_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS kv(
    rev INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    value BLOB,
    deleted INTEGER NOT NULL,
    create_rev INTEGER NOT NULL,
    prev_rev INTEGER
);
CREATE INDEX IF NOT EXISTS kv_key_rev ON kv(key, rev);
CREATE TABLE IF NOT EXISTS latest(key TEXT PRIMARY KEY, rev INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta(name, value) VALUES ('schema', 1), ('compacted', 0);
-- A file compacted before there was a mark was compacted in one transaction: clean up to there.
INSERT OR IGNORE INTO meta(name, value) SELECT 'cleaned', value FROM meta WHERE name = 'compacted';
COMMIT;
"""

_T = TypeVar("_T")

#: Events a catch-up (`follow_peers`) reads from the log at a time.
CATCH_UP_CHUNK = 1000

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SqliteStoreStatistics(StoreStatistics):
    """A snapshot of a SqliteStore.

    `commits` transactions carried `writes` acknowledged writes (so
    writes/commits is the mean group-commit batch); `largest_batch` is the most
    writes one commit took; `pending` writes wait for the next commit;
    `carried` batches were taken by a commit thread straight after its last
    (see `runtime.server.storage.group_commit`).
    """

    commits: int
    writes: int
    largest_batch: int
    pending: int
    read_ksteps: int = 0
    #: Catch-ups that found other processes' writes, and the events they published (peers only).
    catch_ups: int = 0
    caught_up_events: int = 0
    carried: int = 0


def _connect(path: str, synchronous: str, *, reader: bool) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves. check_same_thread=False:
    # trio's worker threads differ from call to call; our locks keep one user at a time.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: cannot use WAL mode (journal_mode is {mode})")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        if reader:
            conn.execute("PRAGMA query_only=1")
    except BaseException:
        conn.close()
        raise
    return conn


def _open_writer(path: str, synchronous: str) -> tuple[sqlite3.Connection, int, int]:
    conn = _connect(path, synchronous, reader=False)
    try:
        conn.executescript(_SCHEMA)
        (schema,) = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        if schema != _SCHEMA_VERSION:
            raise StoreError(f"{path}: schema version {schema}, expected {_SCHEMA_VERSION}")
        compacted = conn.execute(COMPACTED_SQL).fetchone()[0]
        head = max(compacted, conn.execute(HEAD_SQL).fetchone()[0] or 0)
    except BaseException:
        conn.close()
        raise
    return conn, head, compacted


class _Batches:
    """A store as its group commit sees it (`runtime.server.storage.group_commit.BatchStore`)."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def head(self) -> int:
        return self._store._head

    def apply(self, batch: list[Write], head: int) -> Applied:
        return self._store._apply_batch(batch, head)

    def recover(self, head: int) -> Applied | None:
        return self._store._recover(head)

    def deliver(self, applied: Applied) -> None:
        self._store._deliver(applied)

    def failure(self, key: str, exc: Exception) -> StoreError:
        err = StoreError(f"{key}: commit failed: {explain(exc)}")
        err.__cause__ = exc
        return err


class SqliteStore(FollowsAtCommit):
    """The `Store` protocol over one SQLite file. Open with `await SqliteStore.open(path)`."""

    #: Revisions of the log each of a compaction's cleaning transactions covers (tests make it small).
    clean_batch = CLEAN_BATCH

    def __init__(self, path: str, writer: sqlite3.Connection, *, head: int, compacted: int,
                 synchronous: str, readers: int, watch_buffer: int, peers: SqlitePeers | None = None) -> None:
        """Use `SqliteStore.open()`; this takes an already opened writer connection."""
        self.path = path
        self._writer = writer
        self._peers = peers
        self._behind = trio.Event()  # set: other processes committed past what this one published
        self._catch_ups = 0
        self._caught_up_events = 0
        self._synchronous = synchronous
        self._head = head            # last committed (and published) revision
        self._compacted = compacted
        self._closed = False
        self._group = GroupCommit(_Batches(self))
        self._readers = readers
        self._read_slots = trio.Semaphore(readers)
        self._idle: list[sqlite3.Connection] = []
        self._commits = 0
        self._writes = 0
        self._largest_batch = 0
        self._read_steps: list[list[int]] = []  # a counter per reader connection (see _count_steps)
        self._fanout = WatchFanout(self._read_log, lambda: self._compacted, published=head,
                                   buffer=watch_buffer)

    @classmethod
    async def open(cls, path: str | os.PathLike[str], *, synchronous: Synchronous = "FULL",
                   readers: int = 4, watch_buffer: int = DEFAULT_WATCH_BUFFER,
                   peers: SqlitePeers | None = None) -> SqliteStore:
        """Open (creating if needed) the store at `path`. Returns the store.

        `synchronous`: FULL (default) survives power loss; NORMAL survives a
        process crash only, and commits faster. `readers`: size of the reader
        connection pool. `watch_buffer`: see `WatchFanout`. `peers`: share the
        file with other processes (see the module doc); the store closes it.
        Raises StoreError (not WAL-capable, unknown schema), sqlite3.Error.
        """
        path = os.fspath(path)
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA, not {synchronous!r}")
        if path == ":memory:" or path.startswith("file::memory:"):
            raise ValueError("an in-memory SQLite database cannot be shared by connections: "
                             "use MemoryStore")
        if readers < 1:
            raise ValueError("need at least one reader connection")
        if watch_buffer < 1:
            raise ValueError("watch buffer must hold at least one event")
        if peers is not None:
            peers.open_lock(path)

        def open_writer() -> tuple[sqlite3.Connection, int, int]:
            # Under the writers' lock: workers start at once, and two connections turning a new file to WAL
            # together make one fail at once ("database is locked": SQLite's busy wait cannot help a deadlock).
            with peers.writing() if peers is not None else nullcontext():
                return _open_writer(path, synchronous)

        writer, head, compacted = await trio.to_thread.run_sync(open_writer)
        if peers is not None:
            # A predecessor killed between its commit and its announcement: wake the others for it.
            peers.announce(head)
        return cls(path, writer, head=head, compacted=compacted, synchronous=synchronous,
                   readers=readers, watch_buffer=watch_buffer, peers=peers)

    # -- writes: group commit ------------------------------------------------

    async def create(self, key: str, encode: ValueEncoder) -> Entry:
        """Store a new key. Returns its entry once durable. Raises KeyExists."""
        return await self._submit(Write("create", key, encode, None))

    async def update(self, key: str, encode: ValueEncoder, *, expected_revision: int | None) -> Entry:
        """Replace a key's value. Returns the new entry once durable.

        Raises KeyNotFound, RevisionConflict.
        """
        return await self._submit(Write("update", key, encode, expected_revision))

    async def delete(self, key: str, *, expected_revision: int | None) -> tuple[int, Entry]:
        """Delete a key. Returns (delete revision, last entry) once durable.

        Raises KeyNotFound, RevisionConflict.
        """
        return await self._submit(Write("delete", key, None, expected_revision))

    async def _submit(self, w: Write) -> Any:
        if self._closed:
            raise StoreError("store is closed")
        return await self._group.submit(w)

    def _deliver(self, applied: Applied) -> None:
        """Trio thread, commits in order: the head moves, watchers hear (then the writers answer)."""
        moved, self._head = applied.head > self._head, applied.head
        own = sum(1 for _, error in applied.outcomes if error is None)
        if own:
            self._commits += 1
            self._writes += own
            self._largest_batch = max(self._largest_batch, own)
        if applied.lost:
            self._fanout.lose(applied.lost)
        self._fanout.publish(applied.events)
        if moved and self._peers is not None:
            self._peers.announce(applied.head)  # before the callers resume: before any acknowledgement

    def _recover(self, head: int) -> Applied | None:
        """Worker thread, after a failed commit: what reached the file after `head` anyway.

        A commit can fail after its transaction reached the WAL (an I/O error
        reported late). Its rows then exist: the head moves past them, or every
        later write would collide with their revisions, and their events are
        published, or watchers would miss them. Those writes were answered with
        an error: their outcome is unknown to their callers, as with etcd.
        """
        newest = max(self._compacted, self._writer.execute(HEAD_SQL).fetchone()[0] or 0)
        if newest <= head:
            return None
        return Applied(newest, read_log(self._writer, "", head, newest, newest - head), [])

    def _apply_batch(self, batch: list[Write], head: int) -> Applied:
        """Worker thread: apply `batch` in one transaction after revision `head` and commit.

        A write's own failure (precondition, encoder) fails only that write and
        uses no revision; an SQLite error fails the whole batch (rolled back).
        With peers, `head` is the last revision this process published: the
        writes of other processes after it are read first and lead the events.
        """
        lost: list[int] = []  # revisions up to it were compacted unseen: watchers must start over
        with self._peers.writing() if self._peers is not None else nullcontext():
            head, events, outcomes = apply_batch(self._writer, batch, head,
                                                 peers_lost=None if self._peers is None else lost.append)
        return Applied(head, events, outcomes, max(lost, default=0))

    # -- other processes' writes (peers) --------------------------------------

    async def follow_peers(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Publish other processes' writes to this store's watchers as they commit, until cancelled.

        started() at once. Without peers there is nothing to follow and it
        returns. Woken by a peer's announcement (or by `current_revision()`
        seeing a newer revision than this process published), it reads the
        log after that revision and publishes it, holding commits off (`exclusive()`) so
        that its events and this process's own stay in revision order. A
        failed read is logged and tried again. Returns once the store is closed.
        """
        task_status.started()
        if self._peers is None:
            return
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._listen, self._peers)
            delay = 0.05
            while not self._closed:
                await self._behind.wait()
                self._behind = trio.Event()
                try:
                    await self._catch_up()
                    delay = 0.05
                except Exception:
                    log.exception("sqlite store: reading other processes' writes failed; again in %.2f s", delay)
                    await trio.sleep(delay)
                    delay = min(delay * 2, 5.0)
                    self._behind.set()
            nursery.cancel_scope.cancel()

    async def _listen(self, peers: SqlitePeers) -> None:
        try:
            while True:
                await peers.wait()
                self._behind.set()
        except trio.ClosedResourceError:
            return  # the store closed

    async def _catch_up(self) -> None:
        async with self._group.exclusive():
            while not self._closed:
                events, head, compacted = await self._read(read_tail, self._head, CATCH_UP_CHUNK)
                self._compacted = max(self._compacted, compacted)
                if events is None:
                    self._head = max(self._head, head)
                    self._fanout.lose(head)
                    return
                if events:
                    self._head = events[-1].revision
                    self._catch_ups += 1
                    self._caught_up_events += len(events)
                    self._fanout.publish(events)
                if len(events) < CATCH_UP_CHUNK:
                    return

    # -- reads ----------------------------------------------------------------

    async def _read(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run `fn(conn, *args)` on a pooled reader connection in a worker thread."""
        if self._closed:
            raise StoreError("store is closed")
        async with self._read_slots:
            if self._closed:
                raise StoreError("store is closed")
            conn = self._idle.pop() if self._idle else None
            conn, result, error = await trio.to_thread.run_sync(self._run_read, conn, fn, args)
            self._idle.append(conn)
        if error is not None:
            raise error
        return result

    def _run_read(self, conn: sqlite3.Connection | None, fn: Callable[..., _T], args: tuple[Any, ...]
                  ) -> tuple[sqlite3.Connection, Any, BaseException | None]:
        if conn is None:
            conn = _connect(self.path, self._synchronous, reader=True)
            self._read_steps.append(_count_steps(conn))
        try:
            return conn, fn(conn, *args), None
        except Exception as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return conn, None, exc

    async def get(self, key: str) -> Entry | None:
        """The key's current entry, or None."""
        return await self._read(read_get, key)

    async def list(self, prefix: str, *, revision: int | None = None, start_after: str = "",
                   limit: int = 0) -> Page:
        """A page of the entries under `prefix` sorted by key, as of `revision` (None or future: now).

        Keys > `start_after`, at most `limit` (0: all), from one snapshot; the
        page costs O(page) (see `runtime.server.storage.sqlite.reads`). Raises Compacted.
        """
        return await self._read(read_list, prefix, revision, start_after, limit)

    def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[StoreEvent]:
        """Events under `prefix` with revision > after_revision, in order, forever.

        History comes from the kv table, then live events. Raises Compacted
        (first iteration; later if the watcher falls behind a compaction),
        StoreError after aclose().
        """
        return self._fanout.watch(prefix, after_revision=after_revision)

    async def _read_log(self, prefix: str, after: int, upto: int, limit: int) -> list[StoreEvent]:
        return await self._read(read_log, prefix, after, upto, limit)

    async def current_revision(self) -> int:
        """The revision of the latest acknowledged write, by any process (0 for an empty store)."""
        if self._peers is None:
            return self._head
        newest = self._peers.current()
        if newest > self._head:
            self._behind.set()  # a lost wake-up cannot leave a reader waiting
        return max(newest, self._head)

    async def compacted_revision(self) -> int:
        """The oldest revision still readable."""
        return self._compacted

    # -- maintenance ----------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Drop rows superseded at or below `revision`, and deletes at or below it.

        Each key keeps its newest row <= revision unless that row is a delete;
        every row above `revision` stays. A revision at or below the compacted
        one is a no-op. Raises ValueError for a revision newer than the current one.

        Reads below `revision` answer Compacted from the first short transaction
        on; the rows go in transactions of `clean_batch` revisions each
        (`runtime.server.storage.sqlite.compact`), the writes pending meanwhile committed
        between them, so a compaction holds no write back for longer than one.
        """
        if self._closed:
            raise StoreError("store is closed")
        async with self._group.exclusive():
            if revision <= self._compacted:
                return
            with trio.CancelScope(shield=True):
                self._compacted = await trio.to_thread.run_sync(self._write_sync, mark_compacted, revision)
        done = False
        while not done:
            await self._group.let_pending_through()  # before the next transaction takes the writer again
            async with self._group.exclusive():
                if self._closed:  # between two transactions: the file is gone (using it would crash sqlite3)
                    return  # the next compaction (after a reopen) cleans on from the mark
                with trio.CancelScope(shield=True):
                    done = await trio.to_thread.run_sync(self._write_sync, clean_log, self.clean_batch)

    def hold_commits(self) -> AsyncContextManager[None]:
        """`async with store.hold_commits():` no commit runs inside (it waits for a running one), as
        during a compaction's transaction or a catch-up: writes submitted meanwhile wait, counted in
        `statistics().pending`, and commit together once it ends."""
        return self._group.exclusive()

    def _write_sync(self, fn: Callable[..., _T], *args: Any) -> _T:
        with self._peers.writing() if self._peers is not None else nullcontext():
            return fn(self._writer, *args)

    def statistics(self) -> SqliteStoreStatistics:
        """Revisions, open watches and group-commit counters."""
        return SqliteStoreStatistics(self._head, self._compacted, self._fanout.watchers,
                                     self._commits, self._writes, self._largest_batch,
                                     self._group.pending, sum(c[0] for c in self._read_steps),
                                     self._catch_ups, self._caught_up_events, self._group.carried)

    async def aclose(self) -> None:
        """Fail pending writes, end watches, wait for running reads, close the file."""
        if self._closed:
            return
        self._closed = True
        self._group.close(StoreError("store is closed"))
        self._fanout.close()
        self._behind.set()  # follow_peers returns
        with trio.CancelScope(shield=True):
            async with self._group.exclusive():
                self._group.fail_pending(StoreError("store is closed"))
            for _ in range(self._readers):
                await self._read_slots.acquire()  # running reads finish first
            conns, self._idle = [self._writer, *self._idle], []
            await trio.to_thread.run_sync(_close_all, conns)
            if self._peers is not None:
                self._peers.close()


def _count_steps(conn: sqlite3.Connection) -> list[int]:
    """Count `conn`'s VM instructions in thousands; returns the one-cell counter.

    A progress handler every 1000 instructions costs next to nothing; one
    connection runs on one thread at a time, so its cell needs no lock.
    """
    counter = [0]

    def tick() -> int:
        counter[0] += 1
        return 0  # 0: carry on

    conn.set_progress_handler(tick, 1000)
    return counter


def _close_all(conns: list[sqlite3.Connection]) -> None:
    for conn in conns:
        conn.close()
