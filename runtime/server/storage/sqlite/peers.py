"""Several processes over one SQLite file: what each has committed, and how they wake each other.

Contract: a parent makes a `PeerGroup` of N slots and hands each worker
process its `PeerLinks` (file descriptors the worker inherits);
each worker opens its `SqliteStore` with `SqlitePeers(links)`. Then:

- Revisions. A shared memory file (a memfd) holds one 64-bit slot per
  worker: the newest revision that worker committed. A worker stores it
  right after its commit and before it acknowledges any write of the
  batch, so `current()`, the maximum over the slots, is at least every
  revision any worker has acknowledged: a consistent read on one worker
  waits for its watch cache to reach it, and sees a write another worker
  acknowledged before the read began. Reading it costs no system call.
- Wake-ups. Each worker has a Unix datagram socket pair; after a commit a
  worker sends one byte, without blocking, to every other worker's pair.
  A woken worker reads the shared log after the last revision it published
  and feeds its own watchers (`SqliteStore.follow_peers`). A byte that does
  not fit (a full socket buffer) is dropped: the bytes already queued wake
  the worker anyway, and it reads everything up to the newest revision.
  No one polls: a worker with nothing to do sleeps in the kernel.

Why datagrams and not inotify on the WAL: inotify reports the WAL's
write() as it happens, before the commit is visible in the WAL index, and
SQLite updates the index through shared memory, which inotify does not
see; a worker woken then reads nothing and is never woken for that commit.
A byte sent after the commit cannot be early.

Why a file lock beside SQLite's: SQLite's own lock is not a blocking one
in this build (no SQLITE_ENABLE_SETLK_TIMEOUT): a writer that finds it
taken sleeps in its busy handler (1, 2, 5, 10 ... ms) and polls. The
writer of each process first takes an flock(2) on `<db>-lock`, which the
kernel hands to the next waiter as soon as it is released; SQLite's lock
is then free.

Linux only (memfd_create). Slots are written by their own worker only, and
read and written as aligned 8-byte words (one load or store).
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import socket
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import trio

__all__ = ["PeerGroup", "PeerLinks", "SqlitePeers"]

_SLOT = ctypes.sizeof(ctypes.c_uint64)


@dataclass(frozen=True)
class PeerLinks:
    """What one worker needs: its slot index and inherited file descriptors.

    `revisions_fd`: the shared slots; `wake_fd`: the datagram socket this
    worker is woken on; `peer_fds`: the sockets that wake every other worker.
    """

    index: int
    revisions_fd: int
    wake_fd: int
    peer_fds: tuple[int, ...]


class PeerGroup:
    """The parent's side: N revision slots and N socket pairs, alive as long as the group.

    The parent keeps every descriptor open, so a worker that dies and is
    restarted gets the same slot and sockets (wake-ups sent meanwhile wait
    in its socket's buffer).
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a peer group needs at least one worker")
        self.size = size
        self._memory = os.memfd_create("miniplane-revisions")
        os.ftruncate(self._memory, size * _SLOT)
        self._pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(size)]

    def links(self, index: int) -> PeerLinks:
        """Worker `index`'s links (0 <= index < size)."""
        if not 0 <= index < self.size:
            raise ValueError(f"worker index {index} out of range 0..{self.size - 1}")
        return PeerLinks(index, self._memory, self._pairs[index][0].fileno(),
                         tuple(pair[1].fileno() for i, pair in enumerate(self._pairs) if i != index))

    def close(self) -> None:
        """Close the parent's descriptors."""
        for receive, send in self._pairs:
            receive.close()
            send.close()
        self._pairs = []
        os.close(self._memory)


class SqlitePeers:
    """A worker's side: its slot, the others' slots, its wake-up socket and the writers' lock.

    Made from `PeerLinks`; the descriptors are duplicated, so the links
    stay the caller's. `SqliteStore.open(path, peers=...)` takes it over and
    closes it.
    """

    def __init__(self, links: PeerLinks) -> None:
        self.index = links.index
        fd = os.dup(links.revisions_fd)
        try:
            self._map = mmap.mmap(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        count = len(self._map) // _SLOT
        if not 0 <= self.index < count:
            self._map.close()
            raise ValueError(f"worker index {self.index} out of range 0..{count - 1}")
        self._slots = (ctypes.c_uint64 * count).from_buffer(self._map)
        self._wake_socket = socket.socket(fileno=os.dup(links.wake_fd))
        self._wake = trio.socket.from_stdlib_socket(self._wake_socket)
        self._peers = [socket.socket(fileno=os.dup(fd)) for fd in links.peer_fds]
        self._lock_fd: int | None = None
        self.wakeups = 0  # datagrams received
        self.sent = 0  # datagrams sent

    # -- revisions -------------------------------------------------------------

    def current(self) -> int:
        """The newest revision any worker has committed and announced."""
        return max(self._slots)

    def announce(self, revision: int) -> None:
        """Record `revision` as committed by this worker and wake every other one. Never blocks."""
        if revision > self._slots[self.index]:
            self._slots[self.index] = revision
        for peer in self._peers:
            try:
                peer.send(b"\x01", socket.MSG_DONTWAIT)
                self.sent += 1
            except OSError:
                pass  # a full buffer: wake-ups are queued already; a closed one: nobody to wake

    async def wait(self) -> None:
        """Block until another worker announced a commit (returns at once if one is queued)."""
        await self._wake.recv(64)
        self.wakeups += 1
        while True:  # every queued byte says the same: read the log once
            try:
                self._wake_socket.recv(64, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            self.wakeups += 1

    # -- the writers' lock -----------------------------------------------------

    def open_lock(self, db_path: str) -> None:
        """Open (creating) `<db>-lock`, the file the workers' writers take turns on."""
        if self._lock_fd is None:
            self._lock_fd = os.open(f"{db_path}-lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writers' lock (blocking: call on a worker thread)."""
        assert self._lock_fd is not None, "open_lock() first"
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close this worker's descriptors and the shared memory mapping."""
        self._wake.close()
        for peer in self._peers:
            peer.close()
        self._peers = []
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        del self._slots  # the mapping cannot close while a ctypes view exports it
        self._map.close()
