"""`SharedRevisionReads`: the store's current revision for consistent reads, one store call per wave of readers.

Why: a consistent read (a GET or LIST without resourceVersion, a watch that
starts from the current state, the namespace check before a create) asks the
store for its current revision, then waits until the watch cache holds it.
On etcd that is a round trip per request, under load the biggest part of a
GET. Concurrent readers may share a call, but only one that began after
they asked (otherwise a write acknowledged before a reader began could be
missing from what it reads). So a reader that finds a call in flight waits
for it to end and shares the next one with every reader that arrived
meanwhile: a wave. However many readers, a wave costs one store call, and
at most two waves serve any reader.

The call of a wave is made by one of its readers, shielded from that
reader's cancellation so that the others still get their answer (it is
bounded by the store's own timeouts). A failed call fails every reader of
its wave with the same error.

Internal to `runtime.server.watchcache`: imported by its modules only.
"""

from __future__ import annotations

from typing import Awaitable, Callable

import trio

__all__ = ["SharedRevisionReads"]


class _Wave:
    """Readers sharing one store call: its revision or its error once `done` is set."""

    def __init__(self) -> None:
        self.done = trio.Event()
        self.revision: int | None = None
        self.error: BaseException | None = None

    def answer(self) -> int:
        if self.error is not None:
            raise self.error
        if self.revision is None:  # the call ended by a BaseException its maker alone got
            raise trio.BrokenResourceError("the shared revision read did not finish")
        return self.revision


class SharedRevisionReads:
    """`current()`: a revision the store reported after the call began (see the module doc)."""

    def __init__(self, read: Callable[[], Awaitable[int]]) -> None:
        self._read = read
        self._running: _Wave | None = None  # the wave whose store call is in flight
        self._next: _Wave | None = None  # readers who arrived while it was: they share the next call
        #: Store calls made (tests count them).
        self.calls = 0

    async def current(self) -> int:
        """The store's current revision, read by a call that began after this one did."""
        if self._running is None:
            return await self._lead(self._take_next())
        wave = self._next = self._next or _Wave()
        while True:
            running = self._running
            if running is wave or wave.done.is_set():  # its call is in flight, or was made while this waited
                await wave.done.wait()
                return wave.answer()
            if running is None:  # the call before ended and no reader of this wave has made its call yet
                return await self._lead(self._take_next())
            await running.done.wait()

    def _take_next(self) -> _Wave:
        wave, self._next = self._next or _Wave(), None
        return wave

    async def _lead(self, wave: _Wave) -> int:
        self._running = wave
        self.calls += 1
        try:
            with trio.CancelScope(shield=True):  # the wave's other readers wait for this call
                wave.revision = await self._read()
        except Exception as exc:
            wave.error = exc
        finally:
            self._running = None
            wave.done.set()
        return wave.answer()
