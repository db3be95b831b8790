"""A watcher's queue of events: bounded, one reader, whose wait ends at a deadline without a cancel scope.

Contract: `Mailbox(capacity)` takes items with `put_nowait(item)` (raises `trio.WouldBlock` when full,
`trio.ClosedResourceError` once closed) and gives them, in order, to its one reader: `receive_nowait()`
(raises `trio.WouldBlock` when empty, `trio.EndOfChannel` once closed and drained), `await receive()`
(waits), `await receive_until(deadline)` (waits until trio's clock reaches `deadline`, then returns
None), and `async for`. `close()` ends it: the reader gets what is queued, then the end. `len()` is the
count queued. A wait is a checkpoint (it may be cancelled, and other tasks run). `start_timer()` starts
the run's deadline keeper now if it is not running (the watch cache does at its start, so that it is
there before any watch, not spawned by the first); a wait with a deadline starts it otherwise.

Why not `trio.open_memory_channel` under `trio.move_on_at`: a watch waits once per event it is given,
and that pair costs about 45 Python calls per wait (the scope's deadline registered and removed in
trio's deadline heap, the channel's statistics and tasks), which 1,000 watchers pay on every event
(bench_fanout). Here a waiting reader is parked with `trio.lowlevel.wait_task_rescheduled`, woken by
`put_nowait` or `close`, and its deadline is kept by one task per trio run (`_Timer`, a system task,
so it outlives any one nursery): one heap entry per waiting mailbox, moved lazily (a deadline pushed
later is seen when its old time comes), so an event costs no heap work at all. The heap holds its
mailboxes weakly: a watch that ends leaves nothing behind but an entry that is skipped.
"""

from __future__ import annotations

import heapq
import itertools
import math
import weakref
from collections import deque
from typing import Any, Generic, TypeVar

import outcome
import trio

__all__ = ["Mailbox", "start_timer"]

T = TypeVar("T")


class Mailbox(Generic[T]):
    """A bounded queue with one reader (see the module doc)."""

    def __init__(self, capacity: int) -> None:
        self._items: deque[T] = deque()
        self._capacity = capacity
        self._closed = False
        self._reader: trio.lowlevel.Task | None = None  # parked in a wait, to be rescheduled once
        #: Until when the parked reader waits (inf: no deadline); the timer's entry, if any, is at `timed`.
        self.wake_at = math.inf
        self.timed: float | None = None

    def __len__(self) -> int:
        return len(self._items)

    def put_nowait(self, item: T) -> None:
        if self._closed:
            raise trio.ClosedResourceError
        if len(self._items) >= self._capacity:
            raise trio.WouldBlock
        self._items.append(item)
        self._resume(True)

    def close(self) -> None:
        self._closed = True
        self._resume(True)

    def receive_nowait(self) -> T:
        if self._items:
            return self._items.popleft()
        if self._closed:
            raise trio.EndOfChannel
        raise trio.WouldBlock

    async def receive(self) -> T:
        item = await self.receive_until(math.inf)
        assert item is not None
        return item

    async def receive_until(self, deadline: float) -> T | None:
        """The next item, waiting for it until `deadline` (None then); raises `trio.EndOfChannel` at the end."""
        if self._items or self._closed:
            await trio.lowlevel.checkpoint()
            return self.receive_nowait()
        if deadline <= trio.current_time():
            await trio.lowlevel.checkpoint()
            return None
        assert self._reader is None, "a mailbox has one reader"
        self.wake_at = deadline
        if deadline != math.inf:
            _timer().keep(self)
        self._reader = trio.lowlevel.current_task()

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._reader = None
            return trio.lowlevel.Abort.SUCCEEDED

        given = await trio.lowlevel.wait_task_rescheduled(abort)
        return self.receive_nowait() if given else None

    def __aiter__(self) -> Mailbox[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None

    def waiting(self) -> bool:
        """Whether its reader is parked in a wait."""
        return self._reader is not None

    def expire(self) -> None:
        """The timer's call at `wake_at`: the parked reader resumes with None."""
        self._resume(False)

    def _resume(self, given: bool) -> None:
        """The parked reader (if any) resumes: with an item or the end (`given`), or at its deadline."""
        reader = self._reader
        if reader is not None:
            self._reader = None
            trio.lowlevel.reschedule(reader, outcome.Value(given))


class _Timer:
    """Every waiting mailbox's deadline, for one trio run: wakes each at its `wake_at` (see the module doc)."""

    def __init__(self) -> None:
        # Weakly: a watch whose client went leaves its mailbox (and what it still holds) to be collected.
        self._heap: list[tuple[float, int, weakref.ref[Mailbox[Any]]]] = []
        self._order = itertools.count()  # ties broken by entry, never by comparing mailboxes
        self._sleep: trio.CancelScope | None = None

    def keep(self, mailbox: Mailbox[Any]) -> None:
        """`mailbox` waits until its `wake_at`: give it an entry unless one at or before that time stands."""
        when = mailbox.wake_at
        if mailbox.timed is not None and mailbox.timed <= when:
            return  # the standing entry comes first and looks again then
        mailbox.timed = when
        heapq.heappush(self._heap, (when, next(self._order), weakref.ref(mailbox)))
        if self._sleep is not None and when < self._sleep.deadline:
            self._sleep.deadline = when

    async def run(self) -> None:
        while True:
            with trio.CancelScope(deadline=self._heap[0][0] if self._heap else math.inf) as self._sleep:
                await trio.sleep_forever()
            self._sleep = None
            now = trio.current_time()
            heap = self._heap
            while heap and heap[0][0] <= now:
                when, _, ref = heapq.heappop(heap)
                mailbox = ref()
                if mailbox is None or mailbox.timed != when:
                    continue  # an entry given up for an earlier one
                mailbox.timed = None
                if not mailbox.waiting():
                    continue  # it pushes an entry when it next waits
                if mailbox.wake_at <= now:
                    mailbox.expire()
                else:
                    self.keep(mailbox)  # it waits on, its deadline moved later


_TIMER: trio.lowlevel.RunVar[_Timer] = trio.lowlevel.RunVar("miniplane_mailbox_timer")


def start_timer() -> None:
    """Start this trio run's deadline keeper unless it runs (see the module doc)."""
    _timer()


def _timer() -> _Timer:
    try:
        return _TIMER.get()
    except LookupError:
        timer = _Timer()
        _TIMER.set(timer)
        trio.lowlevel.spawn_system_task(timer.run, name="miniplane mailbox timer")
        return timer
