"""The work queue keeps client-go's semantics (util/workqueue), driven by trio's MockClock."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from trio.testing import MockClock

from runtime.controller.ratelimit import ItemExponentialRateLimiter
from runtime.controller.workqueue import DurationStats, QueueShutDown, WorkQueue


def drain_nowait(queue: WorkQueue[str]) -> list[str]:
    """Get and finish every queued item, in order."""
    items = []
    while len(queue):
        item = queue.get_nowait()
        queue.done(item)
        items.append(item)
    return items


# -- queue -------------------------------------------------------------------


async def test_add_deduplicates_while_queued(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    queue.add("a")
    assert len(queue) == 2
    assert drain_nowait(queue) == ["a", "b"]


async def test_items_are_served_first_in_first_out(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    for item in "cab":
        queue.add(item)
    assert [await queue.get() for _ in range(3)] == ["c", "a", "b"]


async def test_get_nowait_would_block_on_an_empty_queue(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    with pytest.raises(trio.WouldBlock):
        queue.get_nowait()


async def test_get_blocks_until_an_item_is_added(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    got: list[str] = []

    async def getter() -> None:
        got.append(await queue.get())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(getter)
        await trio.testing.wait_all_tasks_blocked()
        assert got == []
        queue.add("a")
    assert got == ["a"]


async def test_parked_getters_are_served_in_arrival_order(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    got: list[tuple[int, str]] = []

    async def getter(n: int) -> None:
        got.append((n, await queue.get()))

    async with trio.open_nursery() as nursery:
        for n in range(3):
            nursery.start_soon(getter, n)
            await trio.testing.wait_all_tasks_blocked()
        queue.add("a")
        queue.add("b")
        # Handed over already: a get_nowait cannot overtake a parked getter.
        with pytest.raises(trio.WouldBlock):
            queue.get_nowait()
        queue.add("c")
    assert sorted(got) == [(0, "a"), (1, "b"), (2, "c")]


async def test_cancelled_getter_loses_no_item(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    with trio.move_on_after(1):
        await queue.get()
    queue.add("a")
    assert queue.get_nowait() == "a"


async def test_re_add_during_processing_runs_again_after_done(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    item = await queue.get()
    queue.add("a")
    assert len(queue) == 0  # dirty, but not handed out while processing
    queue.done(item)
    assert await queue.get() == "a"


async def test_an_item_is_never_processed_by_two_workers_at_once(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    in_flight: set[str] = set()
    overlaps: list[str] = []
    runs: list[str] = []

    async def worker() -> None:
        while True:
            try:
                item = await queue.get()
            except QueueShutDown:
                return
            if item in in_flight:
                overlaps.append(item)
            in_flight.add(item)
            runs.append(item)
            await trio.sleep(1)
            in_flight.discard(item)
            queue.done(item)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker)
        nursery.start_soon(worker)
        queue.add("a")
        await trio.sleep(0.5)  # a worker holds "a"
        queue.add("a")
        queue.add("b")
        await trio.sleep(0.1)
        # The idle worker took "b", not the dirty "a".
        assert sorted(in_flight) == ["a", "b"]
        await queue.drain()
    assert overlaps == []
    assert runs == ["a", "b", "a"]


async def test_done_of_an_item_not_processing_raises(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    with pytest.raises(ValueError):
        queue.done("a")
    queue.done(queue.get_nowait())
    with pytest.raises(ValueError):
        queue.done("a")


# -- shutdown ----------------------------------------------------------------


async def test_shut_down_wakes_parked_getters(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    raised: list[int] = []

    async def getter(n: int) -> None:
        with pytest.raises(QueueShutDown):
            await queue.get()
        raised.append(n)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(getter, 0)
        nursery.start_soon(getter, 1)
        await trio.testing.wait_all_tasks_blocked()
        queue.shut_down()
    assert sorted(raised) == [0, 1]


async def test_add_is_ignored_after_shut_down(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.shut_down()
    queue.add("a")
    queue.add_after("b", 1)
    queue.add_rate_limited("c")
    assert len(queue) == 0
    assert queue.statistics().delayed == 0
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_queued_items_are_still_handed_out_after_shut_down(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.shut_down()
    assert queue.shutting_down
    assert await queue.get() == "a"
    with pytest.raises(QueueShutDown):
        queue.get_nowait()


async def test_drain_waits_for_items_in_flight(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    item = await queue.get()
    drained_at: list[float] = []

    async def drainer() -> None:
        await queue.drain()
        drained_at.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drainer)
        await trio.sleep(5)
        assert drained_at == []
        assert queue.shutting_down
        done_at = trio.current_time()
        queue.done(item)
    assert drained_at == [done_at]


async def test_drain_returns_at_once_when_nothing_is_processing(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    start = trio.current_time()
    await queue.drain()
    assert queue.shutting_down
    assert trio.current_time() == start


# -- delays ------------------------------------------------------------------


async def test_add_after_adds_items_in_deadline_order(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    got: list[tuple[float, str]] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        start = trio.current_time()
        queue.add_after("slow", 1.0)
        queue.add_after("fast", 0.25)
        queue.add_after("mid", 0.5)
        assert len(queue) == 0
        for _ in range(3):
            item = await queue.get()
            got.append((trio.current_time() - start, item))
            queue.done(item)
        queue.shut_down()
    assert got == [(0.25, "fast"), (0.5, "mid"), (1.0, "slow")]


async def test_add_after_a_shorter_delay_replaces_a_longer_one(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        start = trio.current_time()
        queue.add_after("a", 5.0)
        queue.add_after("a", 1.0)
        assert queue.statistics().delayed == 1
        queue.done(await queue.get())
        assert trio.current_time() - start == 1.0
        # The replaced 5 s deadline does not fire again.
        await trio.sleep(10)
        assert len(queue) == 0
        queue.shut_down()


async def test_add_after_a_longer_delay_keeps_the_shorter_one(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        start = trio.current_time()
        queue.add_after("a", 1.0)
        queue.add_after("a", 5.0)
        queue.done(await queue.get())
        assert trio.current_time() - start == 1.0
        await trio.sleep(10)
        assert len(queue) == 0
        queue.shut_down()


async def test_add_after_without_delay_adds_at_once(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("a", 0)
    assert queue.get_nowait() == "a"


async def test_add_after_while_processing_runs_again_after_done(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        queue.add("a")
        item = await queue.get()
        queue.add_after("a", 1.0)
        await trio.sleep(2)
        assert len(queue) == 0  # fired while processing: dirty, not queued
        queue.done(item)
        assert queue.get_nowait() == "a"
        queue.shut_down()


async def test_run_returns_when_the_queue_shuts_down(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        queue.add_after("a", 100)
        queue.shut_down()
    assert queue.statistics().delayed == 0


async def test_a_second_run_is_rejected(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        with pytest.raises(RuntimeError):
            await queue.run()
        queue.shut_down()


# -- rate limiting -----------------------------------------------------------


async def test_add_rate_limited_backs_off_exponentially_per_item(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue(ItemExponentialRateLimiter(base=1.0, cap=4.0))
    waits: list[float] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        for _ in range(4):
            start = trio.current_time()
            queue.add_rate_limited("a")
            queue.done(await queue.get())
            waits.append(trio.current_time() - start)
        assert queue.num_requeues("a") == 4
        queue.shut_down()
    assert waits == [1.0, 2.0, 4.0, 4.0]


async def test_forget_resets_rate_limiting(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue(ItemExponentialRateLimiter(base=1.0, cap=100.0))
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        for _ in range(3):
            queue.add_rate_limited("a")
            queue.done(await queue.get())
        queue.forget("a")
        assert queue.num_requeues("a") == 0
        start = trio.current_time()
        queue.add_rate_limited("a")
        queue.done(await queue.get())
        assert trio.current_time() - start == 1.0
        queue.shut_down()


async def test_default_rate_limiter_first_retry_waits_5ms(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        start = trio.current_time()
        queue.add_rate_limited("a")
        queue.done(await queue.get())
        assert trio.current_time() - start == pytest.approx(0.005)
        queue.shut_down()


# -- statistics --------------------------------------------------------------


async def test_statistics_count_depth_adds_retries_and_processing(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("a")  # deduplicated: not an add
    queue.add("b")
    queue.add_after("c", 10)
    queue.get_nowait()
    stats = queue.statistics()
    assert (stats.depth, stats.delayed, stats.adds, stats.retries, stats.processing) == (1, 1, 2, 1, 1)
    assert stats.tasks_waiting == 0
    assert not stats.shutting_down


async def test_statistics_measure_queue_latency_and_work_duration(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    await trio.sleep(2)
    a = await queue.get()
    await trio.sleep(1)
    b = await queue.get()
    await trio.sleep(3)
    stats = queue.statistics()
    assert stats.queue_latency == DurationStats(count=2, total=5.0, last=3.0)
    assert stats.queue_latency.mean == 2.5
    assert stats.longest_running_processor == 4.0
    assert stats.unfinished_work == 7.0
    queue.done(a)
    queue.done(b)
    stats = queue.statistics()
    assert stats.work_duration == DurationStats(count=2, total=7.0, last=3.0)
    assert (stats.processing, stats.longest_running_processor, stats.unfinished_work) == (0, 0.0, 0.0)


async def test_queue_latency_of_a_re_add_starts_at_the_first_add(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    item = await queue.get()
    queue.add("a")
    await trio.sleep(2)
    queue.add("a")  # deduplicated: the clock keeps running from the first re-add
    await trio.sleep(1)
    queue.done(item)
    await queue.get()
    assert queue.statistics().queue_latency.last == 3.0


async def test_statistics_count_parked_getters(autojump_clock: MockClock) -> None:
    queue: WorkQueue[str] = WorkQueue()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(queue.get)
        await trio.testing.wait_all_tasks_blocked()
        assert queue.statistics().tasks_waiting == 1
        nursery.cancel_scope.cancel()
    assert queue.statistics().tasks_waiting == 0
