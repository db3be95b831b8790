"""Group commit: one process's writes, committed in batches by one worker thread at a time.

Contract: `GroupCommit(store)` over a `BatchStore` (below). `await
submit(write)` returns the write's result once its batch is committed and
delivered, or raises its error. `exclusive()` holds commits off (compaction,
a catch-up, close); `let_pending_through()` waits until the writes pending
then are in a commit (or withdrawn), so that a task taking turns in
`exclusive()` lets writes through between its turns; `close(error)` fails every later commit, and `fail_pending()`
(inside `exclusive`) what is waiting.

How a write flows:
- A writer that finds no commit running starts one: it takes every pending
  write and hands the batch to a worker thread (`trio.to_thread`, driven by a
  system task of its own). Every writer, that one too, then parks on an event
  of its own, woken once.
- The thread carries on: once a batch is committed it hands the outcome to
  the trio thread (`TrioToken.run_sync_soon`: callbacks run in order) and
  takes the writes that arrived meanwhile, until none are pending or a task
  waits in `exclusive()`. It does not wait for trio to run a task between
  batches: with the serving thread busy, that wait lasted a scheduler round of
  every runnable task, the round's writes piled up into one batch, and the
  serving thread sat idle while it committed. No writer waits for more than
  its own batch either: the run is not any writer's task.
- When the run ends with writes pending (they came as the thread finished),
  the first of them is woken to start the next.
- A writer cancelled before its write is taken leaves the pending list; a
  taken write gets its outcome (a commit on the thread cannot be called back),
  though its cancelled writer no longer waits for it.
- A batch whose commit raised fails all its writes; the store then reads
  what reached the file anyway (`recover`, on the thread) so that the head
  and the watchers stay true, and the run ends.

`Write.taken` and the pending list are shared with the thread under a
`threading.Lock`; results, events and wake-ups are set on the trio thread.

Internal to `runtime.server.storage`: imported by its modules only.
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Literal, Protocol

import trio

from runtime.server.storage.base import StoreEvent, StoreError, ValueEncoder

__all__ = ["Applied", "BatchStore", "GroupCommit", "Write"]

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Write:
    """One caller's write waiting for (or taken into) a group commit."""

    op: Literal["create", "update", "delete"]
    key: str
    encode: ValueEncoder | None
    expected: int | None
    taken: bool = False
    done: bool = False
    result: Any = None
    error: BaseException | None = None
    wake: trio.Event | None = None  # set while its writer is parked: its batch is done, or it starts the next run


@dataclass(frozen=True)
class Applied:
    """What one commit did: the new head, its events and each write's (result, error)."""

    head: int
    events: list[StoreEvent]
    outcomes: list[tuple[Any, BaseException | None]]
    lost: int = 0  # peers: the revisions up to this one were compacted before this process saw them


class BatchStore(Protocol):
    """What a store gives its group commit."""

    def head(self) -> int:
        """The last revision delivered (trio thread)."""

    def apply(self, batch: list[Write], head: int) -> Applied:
        """Worker thread: commit `batch` after `head` in one transaction; raises if the commit failed."""

    def recover(self, head: int) -> Applied | None:
        """Worker thread, after a failed commit: what reached the file after `head` anyway (None: nothing)."""

    def deliver(self, applied: Applied) -> None:
        """Trio thread, in commit order, before the batch's writers resume: the head moves, watchers hear."""

    def failure(self, key: str, exc: Exception) -> StoreError:
        """The error a write of a batch whose commit raised `exc` fails with."""


class GroupCommit:
    """The pending writes of one store and the one commit run that may go on at a time (see the module docs)."""

    def __init__(self, store: BatchStore) -> None:
        self._store = store
        self._pending: list[Write] = []
        self._handoff = threading.Lock()  # the pending list and Write.taken, shared with the thread
        self._running = False  # a run is on its thread (trio thread's view: set at start, cleared at its end)
        self._run_done = trio.Event()
        self._held = trio.Lock()  # exclusive() holders, one at a time
        self._wanted = 0  # tasks in exclusive(): a run stops carrying on
        self._closed: BaseException | None = None
        self._in_flight: list[Write] = []  # the batch the thread works on (read on the trio thread once it ended)
        #: Batches a run committed after its first.
        self.carried = 0

    @property
    def pending(self) -> int:
        """Writes not yet taken into a batch."""
        return len(self._pending)

    async def submit(self, w: Write) -> Any:
        """Commit `w` with whatever else is pending; returns its result or raises its error."""
        with self._handoff:
            self._pending.append(w)
        try:
            while not w.done:
                if not w.taken and not self._running and not self._held.locked():
                    # A cancelled writer stops before its write is taken: then it is never applied.
                    await trio.lowlevel.checkpoint_if_cancelled()
                    self._start()
                    continue
                w.wake = trio.Event()
                await w.wake.wait()
        except BaseException:
            with self._handoff:
                taken = w.taken
                if not taken:
                    self._pending.remove(w)  # never applied
            if not taken:
                self._wake_next()  # in case it was the one woken to start the next run
            raise
        if w.error is not None:
            raise w.error
        return w.result

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """No commit runs inside; waits for a running one (which stops carrying on) to end."""
        self._wanted += 1
        try:
            await self._held.acquire()
            try:
                while self._running:
                    await self._run_done.wait()
            except BaseException:
                self._held.release()
                raise
        finally:
            self._wanted -= 1
        try:
            yield
        finally:
            self._held.release()
            self._wake_next()

    async def let_pending_through(self) -> None:
        """Between two turns in `exclusive()`: wait until a pending write's writer has started their run
        (the next `exclusive()` waits for it), or none is left. The writer starts it, not this task: a
        writer cancelled meanwhile withdraws its write, which is then never applied."""
        while self._pending and not self._running and not self._held.locked():
            self._wake_next()
            await trio.lowlevel.checkpoint()  # the woken writer runs: it starts the run, or withdraws

    def close(self, error: BaseException) -> None:
        """Fail every later commit's writes with `error`."""
        self._closed = error

    def fail_pending(self, error: BaseException) -> None:
        """Fail the writes waiting for a commit (call inside `exclusive`)."""
        with self._handoff:
            batch = self._take()
        _finish(batch, error)

    def _start(self) -> None:
        with self._handoff:
            batch = self._take()
        if not batch:
            return
        if self._closed is not None:
            _finish(batch, self._closed)
            return
        self._running, self._run_done = True, trio.Event()
        trio.lowlevel.spawn_system_task(self._run, batch, self._store.head(), name="group commit")

    async def _run(self, batch: list[Write], head: int) -> None:
        """The run: a task of its own (no writer waits for more than its batch) driving the thread."""
        try:
            # Shielded: once a batch is on the thread its outcome must be delivered.
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._carry_on, batch, head, trio.lowlevel.current_trio_token())
        except Exception as exc:  # _carry_on catches what apply raises: this is a bug here
            log.error("group commit: the commit thread failed", exc_info=exc)
            _finish(self._in_flight, StoreError(f"the commit thread failed: {exc!r}"))
        finally:
            # After the run's last delivery: the thread queued them before it returned.
            self._running = False
            self._run_done.set()
            self._wake_next()

    def _carry_on(self, batch: list[Write], head: int, token: trio.lowlevel.TrioToken) -> None:
        """Worker thread: commit `batch`, then each batch that arrived meanwhile."""
        first = True
        while batch:
            self._in_flight = batch
            try:
                applied = self._store.apply(batch, head)
            except Exception as exc:
                recovered = None
                try:
                    recovered = self._store.recover(head)
                except Exception:
                    log.exception("group commit: could not read what a failed commit left")
                token.run_sync_soon(self._failed, batch, exc, recovered)
                return
            self.carried += not first  # counted before the hand-over: the writers may look at once
            first = False
            token.run_sync_soon(self._delivered, batch, applied)
            head = applied.head
            with self._handoff:
                batch = [] if self._wanted or self._closed is not None else self._take()

    def _delivered(self, batch: list[Write], applied: Applied) -> None:
        """Trio thread, in commit order: the outcome, then the batch's writers wake."""
        try:
            for w, (result, error) in zip(batch, applied.outcomes):
                w.result, w.error = result, error
            self._store.deliver(applied)
        except Exception:  # raised here it would end trio's run: its writers hear of it instead
            log.exception("group commit: delivering a committed batch failed")
            for w in batch:
                if w.error is None:
                    w.result, w.error = None, StoreError(f"{w.key}: committed, but its delivery failed")
        finally:
            _finish(batch, None)

    def _failed(self, batch: list[Write], exc: Exception, recovered: Applied | None) -> None:
        try:
            for w in batch:
                w.error = self._store.failure(w.key, exc)
            if recovered is not None:
                self._store.deliver(recovered)
        except Exception:
            log.exception("group commit: reporting a failed commit failed")
        finally:
            _finish(batch, StoreError(f"commit failed: {exc}"))

    def _take(self) -> list[Write]:
        batch, self._pending = self._pending, []
        for w in batch:
            w.taken = True
        return batch

    def _wake_next(self) -> None:
        """With no commit running or held off and writes pending, wake the first: it starts the next run."""
        if self._running or self._held.locked():
            return
        with self._handoff:
            first = self._pending[0] if self._pending else None
        if first is not None and first.wake is not None:
            first.wake.set()


def _finish(batch: list[Write], error: BaseException | None) -> None:
    """Mark the batch's writes done (those without an outcome failing with `error`) and wake their writers."""
    for w in batch:
        if error is not None and w.error is None and not w.done:
            w.error = error
        w.done = True
        if w.wake is not None:
            w.wake.set()
