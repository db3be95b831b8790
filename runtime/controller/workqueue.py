"""The controller work queue: fair, deduplicating, delaying and rate-limited, with client-go's semantics.

A `WorkQueue` holds hashable keys (e.g. an object's namespace/name) that need
processing. Its contract, as client-go's `util/workqueue` states it:

- Fair: items are served first in, first out; parked `get()` callers are
  served in the order they parked.
- Deduplicating: `add(item)` of an item already waiting does nothing.
- A key is never in two workers at once: between `get()` and `done(item)` the
  item is *processing*; adding it again meanwhile only marks it dirty, and
  `done(item)` queues it again, so the latest add is always processed after
  the work that was running when it arrived.
- `add_after(item, delay)` queues the item later (served by the `run()` task);
  a second `add_after` of a pending item keeps the earlier deadline.
- `add_rate_limited(item)` is `add_after(item, rate_limiter.when(item))`;
  `forget(item)` resets the item's backoff once it succeeded.
- `shut_down()` makes `add*` ignore new items and wakes parked getters with
  `QueueShutDown`; items already queued are still handed out, then `get()`
  raises `QueueShutDown`. `drain()` shuts down and waits until no item is
  processing.

Only `get()`, `drain()` and `run()` may block, so only they are async; `add`,
`add_after`, `add_rate_limited`, `done`, `forget` never block. Everything runs
in trio tasks of one `trio.run` (no threads, no locks).

Example::

    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)          # serves add_after / add_rate_limited
        for _ in range(workers):
            nursery.start_soon(worker, queue)

    async def worker(queue: WorkQueue[str]) -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            try:
                await reconcile(key)
            except Exception:
                queue.add_rate_limited(key)     # retry with backoff
            else:
                queue.forget(key)               # success: reset the backoff
            finally:
                queue.done(key)

Caveats:
    A worker must call `done(item)` for every item `get()` returned, also when
    it fails or is cancelled (use ``try``/``finally``); otherwise the item stays
    processing, is never handed out again, and `drain()` waits forever.
    Delayed items wait only while some task runs `run()`. Pending delayed
    items are dropped at shutdown. Time is `trio.current_time()`, so `add*`
    and `statistics()` must be called inside `trio.run`.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

import trio

from runtime.controller.metrics import QueueMetrics
from runtime.controller.ratelimit import RateLimiter, default_controller_rate_limiter

__all__ = ["WorkQueue", "QueueShutDown", "WorkQueueStatistics", "DurationStats"]

T = TypeVar("T", bound=Hashable)


class QueueShutDown(Exception):
    """Raised by `WorkQueue.get()` and `get_nowait()` once the queue is shut down and empty.

    A worker catching it should return: no more items will come.
    """


@dataclass(frozen=True)
class DurationStats:
    """Observed durations in seconds: how many, their sum and the latest one."""

    count: int = 0
    total: float = 0.0
    last: float = 0.0

    @property
    def mean(self) -> float:
        """Return the average duration, 0.0 if nothing was observed."""
        return self.total / self.count if self.count else 0.0

    def observe(self, seconds: float) -> DurationStats:
        """Return these stats with one more observation."""
        return DurationStats(self.count + 1, self.total + seconds, seconds)


@dataclass(frozen=True)
class WorkQueueStatistics:
    """A snapshot of a `WorkQueue`, as client-go's workqueue metrics report it.

    depth: items queued, waiting for a `get()` (also `len(queue)`).
    delayed: items waiting for their `add_after` deadline.
    adds: adds accepted since creation (deduplicated adds are not counted).
    retries: `add_after`/`add_rate_limited` calls accepted since creation.
    processing: items between `get()` and `done()`.
    tasks_waiting: tasks parked in `get()`.
    longest_running_processor: seconds the oldest processing item has run (0.0 if none).
    unfinished_work: seconds of work in progress, summed over processing items.
    queue_latency: time from an item's first add to the `get()` that returned it.
    work_duration: time from `get()` to `done()`.
    shutting_down: whether `shut_down()` or `drain()` was called.
    """

    depth: int
    delayed: int
    adds: int
    retries: int
    processing: int
    tasks_waiting: int
    longest_running_processor: float
    unfinished_work: float
    queue_latency: DurationStats
    work_duration: DurationStats
    shutting_down: bool


class WorkQueue(Generic[T]):
    """A fair, deduplicating, delaying, rate-limited work queue of hashable keys (see the module docs).

    `rate_limiter` decides `add_rate_limited` delays; it defaults to
    `default_controller_rate_limiter()` (5 ms doubling per item up to 1000 s,
    10 qps overall with a burst of 100). `metrics` is told of every accepted
    add, retry, queue latency and work duration (client-go's metrics
    provider; see `runtime.controller.metrics`).
    """

    def __init__(self, rate_limiter: RateLimiter | None = None, *, metrics: QueueMetrics | None = None) -> None:
        self._rate_limiter: RateLimiter = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter()
        )
        self._metrics = metrics
        # Every queued item is dirty and not processing (client-go's invariant);
        # dirty items that are processing are queued again by done().
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: dict[T, float] = {}  # item -> when get() returned it
        self._shutting_down = False

        # Getters park only while the queue is empty; add() hands the item
        # straight to the first parked task, so no later get_nowait() can
        # overtake it and a woken getter never finds the queue empty.
        self._getters = trio.lowlevel.ParkingLot()
        self._handoffs: dict[trio.lowlevel.Task, T] = {}
        self._idle = trio.lowlevel.ParkingLot()  # drain(): woken when nothing is processing

        # Delayed adds: a heap of (ready_at, seq, item); _delayed holds each
        # item's live entry, so a replaced entry left in the heap is skipped.
        self._delayed: dict[T, tuple[float, int]] = {}
        self._heap: list[tuple[float, int, T]] = []
        self._seq = itertools.count()
        self._wakeup = trio.lowlevel.ParkingLot()  # run(): the earliest deadline moved
        self._running = False

        self._adds = 0
        self._retries = 0
        self._added_at: dict[T, float] = {}  # item -> first add since it was last handed out
        self._latency = DurationStats()
        self._work = DurationStats()

    # -- the queue -------------------------------------------------------

    def add(self, item: T) -> None:
        """Mark `item` as needing processing; never blocks.

        Does nothing if the item is already waiting or the queue is shut down.
        If the item is processing, it is queued again when `done(item)` is called.
        """
        if self._shutting_down or item in self._dirty:
            return
        self._adds += 1
        if self._metrics is not None:
            self._metrics.added()
        self._added_at.setdefault(item, trio.current_time())
        self._dirty.add(item)
        if item in self._processing:
            return
        self._enqueue(item)

    async def get(self) -> T:
        """Return the next item, blocking until one is queued; the caller must later call `done(item)`.

        Raises `QueueShutDown` once the queue is shut down and no item is queued
        (items queued before shutdown are still returned).
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            item = self.get_nowait()
        except trio.WouldBlock:
            pass
        else:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return item
        task = trio.lowlevel.current_task()
        # A cancelled park leaves the lot before any handoff, so no item is lost.
        await self._getters.park()
        try:
            return self._handoffs.pop(task)
        except KeyError:
            # Woken by shut_down() rather than by an item.
            raise QueueShutDown("the work queue is shut down") from None

    def get_nowait(self) -> T:
        """Return the next queued item without blocking; the caller must later call `done(item)`.

        Raises `trio.WouldBlock` if no item is queued, `QueueShutDown` if none
        is queued and the queue is shut down.
        """
        if self._queue:
            return self._start(self._queue.popleft())
        if self._shutting_down:
            raise QueueShutDown("the work queue is shut down")
        raise trio.WouldBlock

    def done(self, item: T) -> None:
        """Mark `item` as processed; queue it again if it was added while processing.

        Raises `ValueError` if `item` is not processing (never returned by
        `get()`, or `done` already called).
        """
        try:
            started = self._processing.pop(item)
        except KeyError:
            raise ValueError(f"{item!r} is not being processed") from None
        worked = trio.current_time() - started
        self._work = self._work.observe(worked)
        if self._metrics is not None:
            self._metrics.worked(worked)
        if item in self._dirty:
            self._enqueue(item)
        if not self._processing:
            self._idle.unpark_all()

    def __len__(self) -> int:
        """Return the number of queued items (informational: don't gate `add` or `get` on it)."""
        return len(self._queue)

    # -- shutdown --------------------------------------------------------

    @property
    def shutting_down(self) -> bool:
        """Whether `shut_down()` (or `drain()`) was called."""
        return self._shutting_down

    def shut_down(self) -> None:
        """Stop accepting items; wake parked getters with `QueueShutDown`; stop `run()`.

        Queued items are still handed out by `get()`; pending delayed items are
        dropped. Calling it again does nothing.
        """
        if self._shutting_down:
            return
        self._shutting_down = True
        self._delayed.clear()
        self._heap.clear()
        # Getters park only while the queue is empty, so every one of them
        # would otherwise wait forever.
        self._getters.unpark_all()
        self._wakeup.unpark_all()

    async def drain(self) -> None:
        """Shut down (see `shut_down()`), then block until no item is processing.

        Workers must keep calling `done()` (and may keep calling `get()` for
        queued items) meanwhile. Cancel the call to stop waiting; the queue
        stays shut down.
        """
        self.shut_down()
        if not self._processing:
            await trio.lowlevel.checkpoint()
            return
        while self._processing:
            await self._idle.park()

    # -- delays and rate limiting -----------------------------------------

    def add_after(self, item: T, delay: float) -> None:
        """Add `item` once `delay` seconds have passed; never blocks.

        A delay <= 0 adds at once. If the item already waits for a deadline,
        the earlier deadline wins (a shorter re-add replaces a longer one).
        Does nothing once the queue is shut down. Deadlines are served by `run()`.
        """
        if self._shutting_down:
            return
        self._retries += 1
        if self._metrics is not None:
            self._metrics.retried()
        if delay <= 0:
            self.add(item)
            return
        ready_at = trio.current_time() + delay
        pending = self._delayed.get(item)
        if pending is not None and pending[0] <= ready_at:
            return
        seq = next(self._seq)
        self._delayed[item] = (ready_at, seq)
        heapq.heappush(self._heap, (ready_at, seq, item))
        if self._heap[0][1] == seq:
            # The earliest deadline moved closer: run() must re-arm its timer.
            self._wakeup.unpark_all()

    def add_rate_limited(self, item: T) -> None:
        """Add `item` after the delay the rate limiter gives it (`add_after(item, limiter.when(item))`)."""
        self.add_after(item, self._rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Reset `item`'s rate limiting (call on success); it does not replace `done(item)`."""
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return how many times `item` was rate-limited since it was last forgotten."""
        return self._rate_limiter.num_requeues(item)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve `add_after` deadlines until the queue shuts down, then return.

        Calls `task_status.started()` at once, so ``await nursery.start(queue.run)``
        works. Raises `RuntimeError` if another `run()` is already serving this queue.
        """
        if self._running:
            raise RuntimeError("WorkQueue.run() is already running")
        self._running = True
        try:
            task_status.started()
            while not self._shutting_down:
                self._add_due()
                deadline = self._heap[0][0] if self._heap else math.inf
                with trio.move_on_at(deadline):
                    await self._wakeup.park()
        finally:
            self._running = False

    # -- metrics ---------------------------------------------------------

    def statistics(self) -> WorkQueueStatistics:
        """Return a snapshot of the queue's metrics (see `WorkQueueStatistics`)."""
        now = trio.current_time()
        running = [now - started for started in self._processing.values()]
        return WorkQueueStatistics(
            depth=len(self._queue),
            delayed=len(self._delayed),
            adds=self._adds,
            retries=self._retries,
            processing=len(self._processing),
            tasks_waiting=len(self._getters),
            longest_running_processor=max(running, default=0.0),
            unfinished_work=sum(running),
            queue_latency=self._latency,
            work_duration=self._work,
            shutting_down=self._shutting_down,
        )

    # -- internals -------------------------------------------------------

    def _enqueue(self, item: T) -> None:
        """Hand a dirty, not processing item to the first parked getter, else queue it."""
        if len(self._getters):
            (task,) = self._getters.unpark(count=1)
            self._handoffs[task] = self._start(item)
        else:
            self._queue.append(item)

    def _start(self, item: T) -> T:
        """Move `item` from dirty to processing, recording its queue latency."""
        now = trio.current_time()
        self._dirty.discard(item)
        self._processing[item] = now
        added = self._added_at.pop(item, None)
        if added is not None:
            self._latency = self._latency.observe(now - added)
            if self._metrics is not None:
                self._metrics.waited(now - added)
        return item

    def _add_due(self) -> None:
        """Add every delayed item whose deadline has passed, earliest first."""
        now = trio.current_time()
        while self._heap and self._heap[0][0] <= now:
            _, seq, item = heapq.heappop(self._heap)
            pending = self._delayed.get(item)
            if pending is not None and pending[1] == seq:
                del self._delayed[item]
                self.add(item)
