"""Consistent reads share the store calls that learn its revision (`runtime.server.watchcache.SharedRevisionReads`)."""

from __future__ import annotations

import pytest
import trio

from runtime.server.storage import StoreUnavailable
from runtime.server.watchcache import SharedRevisionReads


class _Store:
    """A store whose revision read takes `latency` s; records when each call began and the revision it saw."""

    def __init__(self, latency: float = 1.0) -> None:
        self.latency = latency
        self.revision = 0
        self.began: list[float] = []
        self.fail: Exception | None = None

    async def current_revision(self) -> int:
        self.began.append(trio.current_time())
        seen = self.revision  # a read sees the writes made before it began
        await trio.sleep(self.latency)
        if self.fail is not None:
            raise self.fail
        return seen


async def test_one_reader_makes_one_call(autojump_clock):
    store = _Store()
    reads = SharedRevisionReads(store.current_revision)
    store.revision = 7
    assert await reads.current() == 7
    assert reads.calls == 1


async def test_readers_arriving_during_a_call_share_the_next_one(autojump_clock):
    store = _Store()
    reads = SharedRevisionReads(store.current_revision)
    answers: dict[int, int] = {}

    async def read(i: int) -> None:
        answers[i] = await reads.current()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read, 0)
        await trio.sleep(0.5)  # the first call is in flight
        for i in range(1, 50):
            nursery.start_soon(read, i)
    assert len(answers) == 50
    assert reads.calls == 2  # 50 readers, two store calls: one per wave


async def test_no_reader_gets_a_revision_read_before_it_asked(autojump_clock):
    # A write acknowledged before a reader began must be within the revision it gets (linearizable reads).
    store = _Store()
    reads = SharedRevisionReads(store.current_revision)
    checked = []

    async def read_after_write(delay: float) -> None:
        await trio.sleep(delay)
        store.revision += 1  # a write, acknowledged now
        written = store.revision
        assert await reads.current() >= written
        checked.append(written)

    async with trio.open_nursery() as nursery:
        for i in range(40):
            nursery.start_soon(read_after_write, i * 0.13)
    assert len(checked) == 40
    assert reads.calls < 40


async def test_a_failed_call_fails_every_reader_of_its_wave_and_the_next_wave_tries_again(autojump_clock):
    store = _Store()
    reads = SharedRevisionReads(store.current_revision)
    store.fail = StoreUnavailable("etcd: no leader")
    failures = []

    async def read() -> None:
        with pytest.raises(StoreUnavailable):
            await reads.current()
        failures.append(1)

    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(read)
    # The first reader's call, then one shared by the four that arrived while it was in flight.
    assert (len(failures), reads.calls) == (5, 2)
    store.fail, store.revision = None, 3
    assert await reads.current() == 3


async def test_a_reader_cancelled_while_its_wave_waits_does_not_strand_the_others(autojump_clock):
    store = _Store()
    reads = SharedRevisionReads(store.current_revision)
    store.revision = 5
    answers = []

    async def cancelled_reader() -> None:
        with trio.move_on_after(1.0):  # its request ends during the second call (t = 1 to 2)
            await reads.current()

    async def reader() -> None:
        answers.append(await reads.current())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)  # the first call, t = 0 to 1
        await trio.sleep(0.5)
        nursery.start_soon(cancelled_reader)  # these two share the second call; either may make it
        nursery.start_soon(reader)
    assert answers == [5, 5]
    assert reads.calls == 2
