"""Several SqliteStores over one file (`--workers`): one revision counter, every write seen by every store.

Two stores in this process stand for two workers: each has its own
connections, its own slot and wake-up socket (`PeerGroup`), exactly as
two processes would. Real threads run SQLite, so these tests run on trio's
real clock; they wait on events and watches, never on time.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import sqlite3
from pathlib import Path
from typing import AsyncIterator

import pytest
import trio

from runtime.server.storage import Compacted, StoreEvent
from runtime.server.storage.sqlite.store import SqliteStore
from runtime.server.storage.sqlite.peers import PeerGroup, SqlitePeers


def val(text: str):
    return lambda rev: f"{text}@{rev}".encode()


@pytest.fixture
def group() -> PeerGroup:
    made = PeerGroup(2)
    yield made
    made.close()


async def _open(path: Path, group: PeerGroup, index: int) -> SqliteStore:
    return await SqliteStore.open(path, peers=SqlitePeers(group.links(index)))


@pytest.fixture
async def pair(tmp_path: Path, group: PeerGroup, nursery) -> AsyncIterator[tuple[SqliteStore, SqliteStore]]:
    """Two stores over one file, each following the other's writes."""
    a, b = await _open(tmp_path / "s.db", group, 0), await _open(tmp_path / "s.db", group, 1)
    await nursery.start(a.follow_peers)
    await nursery.start(b.follow_peers)
    yield a, b
    nursery.cancel_scope.cancel()
    await a.aclose()
    await b.aclose()


async def _collect(store: SqliteStore, count: int, after: int = 0) -> list[StoreEvent]:
    events = []
    with trio.fail_after(30):  # a guard against a hang, not a timing assertion
        async for event in store.watch("/", after_revision=after):
            events.append(event)
            if len(events) == count:
                return events
    return events


async def test_a_write_of_one_store_reaches_the_watchers_of_the_other(pair):
    a, b = pair
    async with trio.open_nursery() as nursery:
        seen: list[StoreEvent] = []

        async def watch() -> None:
            seen.extend(await _collect(b, 2))

        nursery.start_soon(watch)
        await trio.testing.wait_all_tasks_blocked()
        first = await a.create("/k/x", val("x"))
        second = await a.update("/k/x", val("x2"), expected_revision=first.mod_revision)
    assert [(e.type, e.key, e.revision, e.value) for e in seen] == [
        ("ADDED", "/k/x", first.mod_revision, b"x@1"), ("MODIFIED", "/k/x", second.mod_revision, b"x2@2")]
    assert seen[1].prev_value == b"x@1"
    assert b.statistics().caught_up_events >= 1


async def test_both_stores_share_one_revision_counter_and_see_every_write_in_order(pair):
    a, b = pair
    per_task, tasks = 25, 4
    acknowledged: list[int] = []

    async def write(store: SqliteStore, name: str) -> None:
        for i in range(per_task):
            entry = await store.create(f"/k/{name}-{i}", val(f"{name}-{i}"))
            acknowledged.append(entry.mod_revision)

    total = 2 * tasks * per_task
    results: dict[str, list[StoreEvent]] = {}

    async def watch(name: str, store: SqliteStore) -> None:
        results[name] = await _collect(store, total)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch, "a", a)
        nursery.start_soon(watch, "b", b)
        await trio.testing.wait_all_tasks_blocked()
        for t in range(tasks):
            nursery.start_soon(write, a, f"a{t}")
            nursery.start_soon(write, b, f"b{t}")
    assert sorted(acknowledged) == list(range(1, total + 1))  # one counter, no revision twice
    for name in "ab":
        assert [e.revision for e in results[name]] == list(range(1, total + 1))
        assert all(e.value == f"{e.key[3:]}@{e.revision}".encode() for e in results[name])
    # Each store read the other's writes from the log (in its own batches or when woken).
    assert await a.current_revision() == await b.current_revision() == total


async def test_a_write_acknowledged_by_one_store_is_within_the_others_current_revision(pair):
    a, b = pair
    for i in range(20):
        entry = await (a if i % 2 else b).create(f"/k/{i}", val(str(i)))
        other = b if i % 2 else a
        # No waiting: the slot is written before the write returns.
        assert await other.current_revision() >= entry.mod_revision


async def test_a_lost_wakeup_is_made_up_by_the_next_consistent_read(tmp_path, group, nursery):
    # a's announcements reach nobody (its links name no peer socket): only the shared slot says it wrote.
    # Its opening announcement reaches nobody either, so b has no wake-up from it that would start a
    # catch-up while a writes below and let it see the write (a race that failed CI once).
    mute = dataclasses.replace(group.links(0), peer_fds=())
    a = await SqliteStore.open(tmp_path / "s.db", peers=SqlitePeers(mute))
    b = await _open(tmp_path / "s.db", group, 1)
    await nursery.start(b.follow_peers)
    try:
        entry = await a.create("/k/x", val("x"))
        assert b.statistics().revision < entry.mod_revision  # b has not seen it
        assert await b.current_revision() == entry.mod_revision  # ... but knows it exists, and catches up
        events = await _collect(b, 1)
        assert [(e.key, e.revision) for e in events] == [("/k/x", entry.mod_revision)]
    finally:
        await a.aclose()
        await b.aclose()


async def test_writes_compacted_before_a_store_saw_them_end_its_watches_with_compacted(tmp_path, group):
    a, b = await _open(tmp_path / "s.db", group, 0), await _open(tmp_path / "s.db", group, 1)
    try:
        base = await b.create("/k/base", val("base"))
        watch = b.watch("/k/", after_revision=base.mod_revision)
        # b follows nothing here: a writes and compacts past what b has published.
        for i in range(3):
            await a.update("/k/base", val(f"v{i}"), expected_revision=None)
        await a.compact(await a.current_revision())
        await b.create("/k/later", val("later"))  # b's batch finds the gap compacted
        with pytest.raises(Compacted):
            with trio.fail_after(30):
                await watch.__anext__()
        await watch.aclose()
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_reopened_store_announces_the_files_head(tmp_path, group):
    plain = await SqliteStore.open(tmp_path / "s.db")  # written without peers: no slot knows these
    for i in range(3):
        await plain.create(f"/k/{i}", val(str(i)))
    await plain.aclose()
    other = SqlitePeers(group.links(1))
    try:
        assert other.current() == 0
        store = await _open(tmp_path / "s.db", group, 0)
        assert other.current() == 3
        with trio.fail_after(30):
            await other.wait()  # and woke its peers
        await store.aclose()
    finally:
        other.close()


async def test_queued_wakeups_are_read_at_once(group):
    sender, receiver = SqlitePeers(group.links(0)), SqlitePeers(group.links(1))
    try:
        for revision in range(1, 51):
            sender.announce(revision)
        with trio.fail_after(30):
            await receiver.wait()
        assert receiver.wakeups == 50 and sender.sent == 50
        assert receiver.current() == 50
        with trio.move_on_after(0) as scope:  # nothing left to wake it
            await receiver.wait()
        assert scope.cancelled_caught
    finally:
        sender.close()
        receiver.close()


def test_a_peer_group_refuses_indexes_outside_it(group):
    with pytest.raises(ValueError):
        group.links(2)
    with pytest.raises(ValueError):
        PeerGroup(0)


async def test_a_store_opens_its_file_under_the_writers_lock(tmp_path: Path, group: PeerGroup,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers start at once: two connections turning a new file to WAL together make one fail at once.
    probe = os.open(f"{tmp_path / 's.db'}-lock", os.O_RDWR | os.O_CREAT)
    held_while_opening: list[bool] = []
    real = sqlite3.connect

    def connect(*args, **kwargs):  # opening the store connects once: its writer (readers connect on first read)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held_while_opening.append(True)  # another descriptor holds it: the opener
        else:
            fcntl.flock(probe, fcntl.LOCK_UN)
            held_while_opening.append(False)
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    store = await _open(tmp_path / "s.db", group, 0)
    await store.aclose()
    os.close(probe)
    assert held_while_opening == [True]
