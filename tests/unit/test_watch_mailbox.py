"""A watcher's mailbox (`runtime.server.watchcache.mailbox.Mailbox`): its queue rules, its deadlines (kept by
one timer per trio run, on trio's clock) and its wait's cancellation, one test per rule."""

from __future__ import annotations

import gc
import math
import weakref

import pytest
import trio
import trio.testing

from runtime.server.watchcache.mailbox import Mailbox


async def test_items_come_out_in_the_order_they_went_in() -> None:
    box: Mailbox[int] = Mailbox(10)
    for i in range(5):
        box.put_nowait(i)
    assert len(box) == 5
    assert [box.receive_nowait() for _ in range(3)] + [await box.receive(), await box.receive()] == [0, 1, 2, 3, 4]
    assert len(box) == 0


async def test_a_full_mailbox_refuses_the_next_item() -> None:
    box: Mailbox[int] = Mailbox(2)
    box.put_nowait(1)
    box.put_nowait(2)
    with pytest.raises(trio.WouldBlock):
        box.put_nowait(3)
    assert len(box) == 2


async def test_an_empty_mailbox_would_block() -> None:
    with pytest.raises(trio.WouldBlock):
        Mailbox[int](1).receive_nowait()


async def test_a_closed_mailbox_gives_what_it_holds_then_the_end_and_takes_nothing_more() -> None:
    box: Mailbox[str] = Mailbox(5)
    box.put_nowait("a")
    box.close()
    with pytest.raises(trio.ClosedResourceError):
        box.put_nowait("b")
    assert [item async for item in box] == ["a"]
    with pytest.raises(trio.EndOfChannel):
        await box.receive_until(math.inf)


async def test_a_waiting_reader_gets_the_item_put_meanwhile(nursery, autojump_clock) -> None:
    box: Mailbox[str] = Mailbox(5)
    got: list[str | None] = []

    async def read() -> None:
        got.append(await box.receive_until(trio.current_time() + 60))
    nursery.start_soon(read)
    await trio.testing.wait_all_tasks_blocked()
    assert box.waiting()
    box.put_nowait("a")
    await trio.testing.wait_all_tasks_blocked()
    assert got == ["a"] and not box.waiting()


async def test_a_waiting_reader_gets_the_end_when_closed(nursery, autojump_clock) -> None:
    box: Mailbox[str] = Mailbox(5)
    ended = trio.Event()

    async def read() -> None:
        with pytest.raises(trio.EndOfChannel):
            await box.receive()
        ended.set()
    nursery.start_soon(read)
    await trio.testing.wait_all_tasks_blocked()
    box.close()
    await ended.wait()


async def test_a_wait_ends_with_none_at_its_deadline_on_trios_clock(autojump_clock) -> None:
    box: Mailbox[str] = Mailbox(5)
    start = trio.current_time()
    assert await box.receive_until(start + 7.5) is None
    assert trio.current_time() == pytest.approx(start + 7.5)


async def test_a_deadline_already_past_returns_none_at_once(autojump_clock) -> None:
    box: Mailbox[str] = Mailbox(5)
    start = trio.current_time()
    assert await box.receive_until(start - 1) is None
    assert trio.current_time() == start


async def test_waits_with_deadlines_later_and_earlier_each_end_at_their_own(autojump_clock) -> None:
    # The timer keeps one entry per mailbox, moved lazily: a later deadline after an earlier one, and an
    # earlier one after a later one, must each still end on time.
    box: Mailbox[str] = Mailbox(5)
    start = trio.current_time()
    for offset in (5.0, 20.0, 3.0, 3.5, 100.0):
        begun = trio.current_time()
        assert await box.receive_until(begun + offset) is None
        assert trio.current_time() == pytest.approx(begun + offset)
    assert trio.current_time() == pytest.approx(start + 131.5)


async def test_many_mailboxes_wake_each_at_its_deadline(nursery, autojump_clock) -> None:
    start = trio.current_time()
    woke: dict[int, float] = {}

    async def wait(i: int) -> None:
        assert await Mailbox[int](1).receive_until(start + 10 - i) is None
        woke[i] = trio.current_time() - start
    for i in range(10):
        nursery.start_soon(wait, i)
    await trio.sleep(11)
    assert woke == pytest.approx({i: 10 - i for i in range(10)})


async def test_a_cancelled_wait_leaves_the_mailbox_to_its_next_wait(autojump_clock) -> None:
    box: Mailbox[str] = Mailbox(5)
    with trio.move_on_after(1):
        await box.receive_until(trio.current_time() + 30)
    assert not box.waiting()
    box.put_nowait("a")  # nobody is woken: the cancelled reader was let go
    assert await box.receive_until(trio.current_time() + 30) == "a"
    begun = trio.current_time()
    assert await box.receive_until(begun + 2) is None  # the old 30 s entry does not end this one late
    assert trio.current_time() == pytest.approx(begun + 2)


async def test_the_timer_holds_a_mailbox_weakly(nursery, autojump_clock) -> None:
    box: Mailbox[str] = Mailbox(5)

    async def read() -> None:
        assert await box.receive_until(trio.current_time() + 3600) == "a"  # its timer entry stands for an hour
    nursery.start_soon(read)
    await trio.testing.wait_all_tasks_blocked()
    box.put_nowait("a")
    await trio.testing.wait_all_tasks_blocked()
    box.put_nowait("what a gone client left queued")
    gone = weakref.ref(box)
    del box
    gc.collect()
    assert gone() is None
