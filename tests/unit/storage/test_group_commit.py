"""Rules of the group commit (`runtime.server.storage.group_commit`), over a store that only counts.

The store's `apply` runs on the commit thread; a gate (a `threading.Event`)
holds a batch there so that the test can act while it commits.
"""

from __future__ import annotations

import threading

import pytest
import trio
import trio.testing

from runtime.server.storage.base import StoreError
from runtime.server.storage.group_commit import Applied, GroupCommit, Write


class CountingStore:
    """A `BatchStore` that numbers each write, records batches and deliveries, and can hold or fail a batch."""

    def __init__(self) -> None:
        self.last = 0
        self.batches: list[list[str]] = []
        self.delivered: list[int] = []
        self.gates: dict[int, threading.Event] = {}  # batch number -> released when set
        self.entered: dict[int, threading.Event] = {}
        self.fail: dict[int, Exception] = {}
        self.landed_anyway = 0  # a failed batch's writes that reached the file all the same

    def hold(self, n: int) -> threading.Event:
        self.entered[n] = threading.Event()
        self.gates[n] = threading.Event()
        return self.gates[n]

    def head(self) -> int:
        return self.last

    def apply(self, batch: list[Write], head: int) -> Applied:
        n = len(self.batches)
        self.batches.append([w.key for w in batch])
        if n in self.gates:
            self.entered[n].set()
            assert self.gates[n].wait(10), "the test never released the batch"
        if n in self.fail:
            raise self.fail[n]
        return Applied(head + len(batch), [], [(head + i + 1, None) for i in range(len(batch))])

    def recover(self, head: int) -> Applied | None:
        return Applied(head + self.landed_anyway, [], []) if self.landed_anyway else None

    def deliver(self, applied: Applied) -> None:
        self.last = applied.head
        self.delivered.append(applied.head)

    def failure(self, key: str, exc: Exception) -> StoreError:
        return StoreError(f"{key}: commit failed: {exc}")


def write(key: str) -> Write:
    return Write("create", key, lambda rev: b"v", None)


async def entered(store: CountingStore, n: int) -> None:
    """Wait until the commit thread is inside batch `n` (a real wait on the thread, not on time)."""
    assert await trio.to_thread.run_sync(store.entered[n].wait, 10)


async def more_during_a_commit(nursery: trio.Nursery, store: CountingStore, submit, keys: str) -> None:
    """`submit("a")`, whose batch the store holds, then `submit` each of `keys` while it commits."""
    nursery.start_soon(submit, "a")
    await entered(store, 0)
    for key in keys:
        nursery.start_soon(submit, key)
    await trio.testing.wait_all_tasks_blocked()


async def test_writes_arriving_during_a_commit_are_taken_by_the_same_thread_run() -> None:
    store = CountingStore()
    group = GroupCommit(store)
    first = store.hold(0)
    results: dict[str, int] = {}

    async def submit(key: str) -> None:
        results[key] = await group.submit(write(key))

    async with trio.open_nursery() as nursery:
        await more_during_a_commit(nursery, store, submit, "bcd")
        assert group.pending == 3
        first.set()
    assert store.batches[0] == ["a"] and sorted(store.batches[1]) == ["b", "c", "d"]  # (in arrival order)
    assert group.carried == 1  # the thread went on to the second batch: no task ran between the two
    assert results["a"] == 1 and sorted(results.values()) == [1, 2, 3, 4] and store.delivered == [1, 4]


async def test_a_writer_waits_for_its_own_batch_only_not_for_the_run() -> None:
    store = CountingStore()
    group = GroupCommit(store)
    first, second = store.hold(0), store.hold(1)
    done: list[str] = []
    a_answered = trio.Event()

    async def submit(key: str) -> None:
        await group.submit(write(key))
        done.append(key)
        if key == "a":
            a_answered.set()

    async with trio.open_nursery() as nursery:
        await more_during_a_commit(nursery, store, submit, "b")
        first.set()
        await entered(store, 1)  # the run carries on with b's batch ...
        with trio.fail_after(10):
            await a_answered.wait()  # ... while a, whose batch is done, has its answer
        assert done == ["a"]
        second.set()
    assert done == ["a", "b"]


async def test_a_task_waiting_for_exclusive_stops_the_run_after_its_batch() -> None:
    store = CountingStore()
    group = GroupCommit(store)
    first = store.hold(0)
    inside: list[int] = []

    async def compaction() -> None:
        async with group.exclusive():
            inside.append(group.pending)  # b waits: no commit runs while this holds

    async with trio.open_nursery() as nursery:
        nursery.start_soon(group.submit, write("a"))
        await entered(store, 0)
        nursery.start_soon(group.submit, write("b"))
        nursery.start_soon(compaction)
        await trio.testing.wait_all_tasks_blocked()
        first.set()
    assert inside == [1]
    assert store.batches == [["a"], ["b"]] and group.carried == 0  # b came in a run of its own, after


async def test_a_failed_commit_fails_its_batch_only_and_what_landed_anyway_is_delivered() -> None:
    store = CountingStore()
    group = GroupCommit(store)
    first = store.hold(0)
    store.fail[1] = OSError("disk I/O error")
    store.landed_anyway = 1
    outcomes: dict[str, object] = {}

    async def submit(key: str) -> None:
        try:
            outcomes[key] = await group.submit(write(key))
        except StoreError as exc:
            outcomes[key] = str(exc)

    async with trio.open_nursery() as nursery:
        await more_during_a_commit(nursery, store, submit, "b")
        first.set()
    assert outcomes == {"a": 1, "b": "b: commit failed: disk I/O error"}
    assert store.delivered == [1, 2]  # the head moved past what reached the file
    assert await group.submit(write("c")) == 3  # and the next write carries on from there


async def test_a_write_cancelled_while_pending_is_never_applied() -> None:
    store = CountingStore()
    group = GroupCommit(store)
    first = store.hold(0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(group.submit, write("a"))
        await entered(store, 0)
        async with trio.open_nursery() as waiting:
            waiting.start_soon(group.submit, write("b"))
            await trio.testing.wait_all_tasks_blocked()
            waiting.cancel_scope.cancel()
        assert group.pending == 0
        first.set()
    assert store.batches == [["a"]]


async def test_a_closed_group_fails_pending_and_later_writes() -> None:
    store = CountingStore()
    group = GroupCommit(store)
    first = store.hold(0)
    closed = StoreError("store is closed")
    failures: list[str] = []

    async def submit(key: str) -> None:
        with pytest.raises(StoreError) as caught:
            await group.submit(write(key))
        failures.append(f"{key}: {caught.value}")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(group.submit, write("a"))
        await entered(store, 0)
        nursery.start_soon(submit, "b")
        await trio.testing.wait_all_tasks_blocked()
        group.close(closed)
        first.set()
        async with group.exclusive():
            group.fail_pending(closed)
    await submit("c")
    assert store.batches == [["a"]] and failures == ["b: store is closed", "c: store is closed"]
