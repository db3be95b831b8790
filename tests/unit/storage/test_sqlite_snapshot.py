"""Snapshots of a SQLite store: saved while writers run, they are the store at one revision; restored, a store.

The backup runs on a worker thread as the command runs it; the store's
writers keep committing meanwhile (real threads: trio's real clock).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio

from runtime.server.storage.sqlite.store import SqliteStore
from runtime.server.storage.sqlite.snapshot import SnapshotError, restore_snapshot, save_snapshot, snapshot_status


def val(text: str):
    return lambda rev: f"{text}@{rev}".encode()


async def test_a_snapshot_saved_while_writers_run_is_the_store_at_one_revision(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    for i in range(200):
        await store.create(f"/k/{i}", val(f"v{i}"))
    running = trio.Event()
    saved = []

    async def write(n: int) -> None:
        i = 0
        while True:
            await store.update(f"/k/{(n * 37 + i) % 200}", val(f"w{n}-{i}"), expected_revision=None)
            if i == 20:
                running.set()
            i += 1

    async with trio.open_nursery() as nursery:
        for n in range(8):
            nursery.start_soon(write, n)
        await running.wait()
        before = await store.current_revision()
        saved.append(await trio.to_thread.run_sync(save_snapshot, tmp_path / "s.db", tmp_path / "snap.db"))
        after = await store.current_revision()
        nursery.cancel_scope.cancel()
    info = saved[0]
    assert before <= info.revision <= after and info.keys == 200
    assert info.size == (tmp_path / "snap.db").stat().st_size
    assert not (tmp_path / "snap.db-wal").exists()  # one self-contained file
    restore_snapshot(tmp_path / "snap.db", tmp_path / "restored" / "s.db")
    restored = await SqliteStore.open(tmp_path / "restored" / "s.db")
    # Exactly the original's state at that revision: every key at its value then.
    assert await restored.current_revision() == info.revision
    assert (await restored.list("/")).entries == (await store.list("/", revision=info.revision)).entries
    # Its history too: the events up to the snapshot's revision, as the original logged them.
    history = []
    async for event in restored.watch("/", after_revision=info.revision - 20):
        history.append(event)
        if event.revision == info.revision:
            break
    original = []
    async for event in store.watch("/", after_revision=info.revision - 20):
        original.append(event)
        if event.revision == info.revision:
            break
    assert history == original
    # And it carries on from there.
    assert (await restored.create("/k/new", val("new"))).mod_revision == info.revision + 1
    await restored.aclose()
    await store.aclose()


async def test_a_snapshot_keeps_the_compacted_revision(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("0"))
    for i in range(1, 5):
        await store.update("/k/a", val(str(i)), expected_revision=None)
    await store.compact(3)
    info = save_snapshot(tmp_path / "s.db", tmp_path / "snap.db")
    await store.aclose()
    assert (info.revision, info.compacted, info.keys) == (5, 3, 1)
    assert snapshot_status(tmp_path / "snap.db") == info


def test_restore_refuses_a_data_directory_that_has_a_store(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("CREATE TABLE x(y)")
    trio.run(_make_store, tmp_path / "src.db")
    save_snapshot(tmp_path / "src.db", tmp_path / "snap.db")
    with pytest.raises(SnapshotError, match="exists: restore into a new data directory"):
        restore_snapshot(tmp_path / "snap.db", tmp_path / "s.db")
    with sqlite3.connect(tmp_path / "s.db") as conn:  # untouched
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["x"]


async def _make_store(path: Path) -> None:
    store = await SqliteStore.open(path)
    await store.create("/k/a", val("a"))
    await store.aclose()


def test_a_damaged_or_foreign_file_is_no_snapshot(tmp_path: Path) -> None:
    (tmp_path / "text").write_text("not a database at all, just some text that is long enough " * 100)
    with pytest.raises(SnapshotError, match="not a readable SQLite store"):
        snapshot_status(tmp_path / "text")
    with sqlite3.connect(tmp_path / "other.db") as conn:
        conn.execute("CREATE TABLE users(name)")
    with pytest.raises(SnapshotError, match="not a miniplane SQLite store"):
        snapshot_status(tmp_path / "other.db")
    with pytest.raises(SnapshotError, match="no such file"):
        save_snapshot(tmp_path / "missing.db", tmp_path / "snap.db")
    trio.run(_make_store, tmp_path / "src.db")
    save_snapshot(tmp_path / "src.db", tmp_path / "snap.db")
    data = (tmp_path / "snap.db").read_bytes()
    (tmp_path / "cut.db").write_bytes(data[: len(data) // 2])
    with pytest.raises(SnapshotError):
        restore_snapshot(tmp_path / "cut.db", tmp_path / "restored" / "s.db")
    assert not (tmp_path / "restored" / "s.db").exists()
