"""A store of this process hands its writes to a waiting follower as it commits them (`FollowsAtCommit.follow`).

The rules: an event published while the follower waits with nothing
pending goes to its sink before the write returns, and is not yielded;
everything else (the sink raised, or the follower was busy with earlier
events) comes through the iterator, in revision order, as `watch`.
The watch cache is the follower: a write through `ReadYourWritesStore` returns
without waiting. Memory and SQLite stores (`make_local_store`).
"""

from __future__ import annotations

from typing import AsyncIterator

import pytest
import trio
import trio.testing

from runtime.server.registry.read_your_writes import ReadYourWritesStore
from runtime.server.storage import StoreEvent
from runtime.server.watchcache import WatchCache
from tests.support.stores import StoreFactory


def val(text: str):
    return lambda revision: text.encode()


async def _drain(it: AsyncIterator[StoreEvent], into: list[StoreEvent]) -> None:
    async for event in it:
        into.append(event)


async def test_a_follower_waiting_with_nothing_pending_gets_the_event_before_the_write_returns(
        make_local_store: StoreFactory) -> None:
    store = await make_local_store()
    sunk: list[StoreEvent] = []
    yielded: list[StoreEvent] = []

    def sink(event: StoreEvent) -> None:
        sunk.append(event)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_drain, store.follow("/w/", after_revision=0, sink=sink), yielded)
        await trio.testing.wait_all_tasks_blocked()
        entry = await store.create("/w/a", val("a"))
        assert [(e.key, e.revision) for e in sunk] == [("/w/a", entry.mod_revision)]  # no task switch needed
        await store.create("/x/b", val("b"))  # another prefix: not the follower's
        await store.update("/w/a", val("a2"), expected_revision=None)
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert [(e.type, e.key) for e in sunk] == [("ADDED", "/w/a"), ("MODIFIED", "/w/a")]
    assert yielded == []


async def test_an_event_the_sink_raises_on_comes_through_the_iterator_and_later_ones_keep_their_order(
        make_local_store: StoreFactory, caplog) -> None:
    store = await make_local_store()
    sunk: list[int] = []
    yielded: list[int] = []
    seen: list[int] = []  # as the follower handled them, either way

    def sink(event: StoreEvent) -> None:
        if event.revision == 2:
            raise RuntimeError("a bug in the follower")
        sunk.append(event.revision)
        seen.append(event.revision)

    async def consume() -> None:
        async for event in store.follow("/w/", after_revision=0, sink=sink):
            yielded.append(event.revision)
            seen.append(event.revision)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        await trio.testing.wait_all_tasks_blocked()
        await store.create("/w/1", val("1"))
        entry = await store.create("/w/2", val("2"))  # the sink raises: the write still succeeds
        assert entry.mod_revision == 2
        await store.create("/w/3", val("3"))  # queued behind 2 unless the follower took 2 meanwhile
        await trio.testing.wait_all_tasks_blocked()
        await store.create("/w/4", val("4"))  # the follower waits again with nothing pending
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert seen == [1, 2, 3, 4]  # each once, in order
    assert 2 in yielded and 1 in sunk and 4 in sunk
    assert "watch sink failed on the event at revision 2" in caplog.text


async def test_a_write_through_settled_writes_returns_with_the_cache_holding_it_and_no_wait(
        make_local_store: StoreFactory, nursery, monkeypatch: pytest.MonkeyPatch) -> None:
    store = await make_local_store()
    cache = WatchCache(store)
    await nursery.start(cache.run)
    await trio.testing.wait_all_tasks_blocked()

    async def no_wait(*args, **kwargs):
        raise AssertionError("the write waited for the cache")

    monkeypatch.setattr(cache, "wait_for", no_wait)
    writes = ReadYourWritesStore(store, cache, wait=5.0)
    key = "/rbac.authorization/clusterroles/a"
    entry = await writes.create(key, val('{"metadata": {"name": "a"}}'))
    assert cache.revision == entry.mod_revision
    assert cache.kind("/rbac.authorization/clusterroles/").objects[key].revision == entry.mod_revision
    revision, _ = await writes.delete(key, expected_revision=None)
    assert cache.revision == revision and key not in cache.kind("/rbac.authorization/clusterroles/").objects
