"""Rules specific to the SQLite backend: the file, durability across reopen, group commit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import trio
import trio.testing

from runtime.server.storage import Compacted, StoreEvent, StoreError, open_store
import runtime.server.storage.sqlite.store as sqlite_module
from runtime.server.storage.sqlite.store import SqliteStore


def val(text: str):
    return lambda rev: f"{text}@{rev}".encode()


def rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


async def test_open_store_opens_sqlite_by_name(tmp_path: Path) -> None:
    store = await open_store("sqlite", str(tmp_path / "s.db"))
    assert isinstance(store, SqliteStore)
    await store.aclose()


async def test_file_is_in_wal_mode(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/a", val("a"))
    assert rows(tmp_path / "s.db", "PRAGMA journal_mode") == [("wal",)]
    await store.aclose()


async def test_unknown_synchronous_level_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        await SqliteStore.open(tmp_path / "s.db", synchronous="OFF")  # type: ignore[arg-type]


async def test_in_memory_database_is_refused() -> None:
    with pytest.raises(ValueError):
        await SqliteStore.open(":memory:")


async def test_every_write_appends_one_log_row(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("a"))
    await store.update("/k/a", val("b"), expected_revision=None)
    await store.delete("/k/a", expected_revision=None)
    assert rows(tmp_path / "s.db", "SELECT rev, key, value, deleted, create_rev, prev_rev FROM kv") == [
        (1, "/k/a", b"a@1", 0, 1, None), (2, "/k/a", b"b@2", 0, 1, 1), (3, "/k/a", None, 1, 1, 2)]
    await store.aclose()


async def test_reopened_store_has_every_write_and_continues_revisions(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("a"))
    await store.create("/k/b", val("b"))
    await store.update("/k/a", val("a2"), expected_revision=1)
    await store.aclose()

    store = await SqliteStore.open(tmp_path / "s.db")
    assert await store.current_revision() == 3
    assert [(e.key, e.value) for e in (await store.list("/k/"))[0]] == [
        ("/k/a", b"a2@3"), ("/k/b", b"b@2")]
    assert (await store.create("/k/c", val("c"))).mod_revision == 4
    await store.aclose()


async def test_reopened_store_keeps_compacted_revision_and_head(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("a"))
    await store.create("/k/b", val("b"))
    await store.delete("/k/b", expected_revision=None)
    await store.compact(3)  # drops the trailing delete row itself
    await store.aclose()

    store = await SqliteStore.open(tmp_path / "s.db")
    assert (await store.current_revision(), await store.compacted_revision()) == (3, 3)
    with pytest.raises(Compacted):
        await store.list("/k/", revision=2)
    assert (await store.create("/k/c", val("c"))).mod_revision == 4
    await store.aclose()


async def test_compaction_deletes_superseded_rows_and_deletes(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("a1"))                         # 1
    await store.create("/k/b", val("b1"))                         # 2
    await store.update("/k/a", val("a2"), expected_revision=None)  # 3
    await store.delete("/k/b", expected_revision=None)            # 4
    await store.update("/k/a", val("a3"), expected_revision=None)  # 5
    await store.compact(4)
    assert rows(tmp_path / "s.db", "SELECT rev FROM kv ORDER BY rev") == [(3,), (5,)]
    assert rows(tmp_path / "s.db", "SELECT value FROM meta WHERE name = 'compacted'") == [(4,)]
    await store.aclose()


async def _written_twice(store: SqliteStore, keys: int) -> int:
    """`keys` keys created and updated once each; returns the head."""
    for i in range(keys):
        await store.create(f"/h/{i:04}", val("v1"))
    for i in range(keys):
        await store.update(f"/h/{i:04}", val("v2"), expected_revision=None)
    return await store.current_revision()


async def test_a_compaction_cleans_in_short_transactions_with_writes_committed_between_them(
        tmp_path: Path, monkeypatch) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    head = await _written_twice(store, 100)  # 200 revisions: ten transactions of 20
    store.clean_batch = 20
    real_clean, commits_at_each = sqlite_module.clean_log, []

    def counted_clean(conn, batch):
        commits_at_each.append(store.statistics().commits)
        return real_clean(conn, batch)

    monkeypatch.setattr(sqlite_module, "clean_log", counted_clean)
    compacting = True

    async def writer(w: int) -> None:
        i = 0
        while compacting:
            await store.create(f"/w/{w}/{i}", val("w"))
            i += 1

    async with trio.open_nursery() as nursery:
        for w in range(5):
            nursery.start_soon(writer, w)
        await trio.sleep(0.01)
        with trio.fail_after(30):  # a cleaning that stopped moving its mark would go on for ever
            await store.compact(head)
        compacting = False
    assert len(commits_at_each) == 10
    assert all(a < b for a, b in zip(commits_at_each, commits_at_each[1:])), commits_at_each
    assert rows(tmp_path / "s.db", "SELECT count(*) FROM kv WHERE key LIKE '/h/%'") == [(100,)]
    assert rows(tmp_path / "s.db", "SELECT value FROM meta WHERE name IN ('compacted', 'cleaned')") == [(head,)] * 2
    with pytest.raises(Compacted):
        await store.list("/h/", revision=head - 1)
    assert [e.value for e in (await store.list("/h/", revision=head)).entries] == [f"v2@{101 + i}".encode()
                                                                                   for i in range(100)]
    await store.aclose()


async def test_a_cleaning_cut_short_goes_on_from_its_mark_at_the_next_compaction(tmp_path: Path, monkeypatch) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    head = await _written_twice(store, 50)  # 100 revisions: five transactions of 20
    store.clean_batch = 20
    real_clean, calls = sqlite_module.clean_log, []

    def failing_third(conn, batch):
        calls.append(batch)
        if len(calls) == 3:
            raise sqlite3.OperationalError("disk I/O error")
        return real_clean(conn, batch)

    monkeypatch.setattr(sqlite_module, "clean_log", failing_third)
    with pytest.raises(sqlite3.OperationalError):
        await store.compact(head)
    # Compacted already (reads below it refused), cleaned only as far as two transactions went.
    assert await store.compacted_revision() == head
    with pytest.raises(Compacted):
        await store.list("/h/", revision=head - 1)
    assert rows(tmp_path / "s.db", "SELECT value FROM meta WHERE name = 'cleaned'") == [(40,)]
    assert rows(tmp_path / "s.db", "SELECT count(*) FROM kv WHERE key LIKE '/h/%'") == [(60,)]  # 40 keys cleaned
    monkeypatch.setattr(sqlite_module, "clean_log", real_clean)
    await store.create("/later", val("l"))
    await store.aclose()

    store = await SqliteStore.open(tmp_path / "s.db")  # the mark outlives the process
    store.clean_batch = 20
    with trio.fail_after(30):
        await store.compact(head + 1)
    assert rows(tmp_path / "s.db", "SELECT count(*) FROM kv WHERE key LIKE '/h/%'") == [(50,)]
    assert rows(tmp_path / "s.db", "SELECT value FROM meta WHERE name = 'cleaned'") == [(head + 1,)]
    await store.aclose()


async def test_a_store_closed_while_its_compaction_cleans_ends_the_compaction_quietly(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    head = await _written_twice(store, 50)
    store.clean_batch = 20
    real_clean, calls = sqlite_module.clean_log, []

    def closing_during_the_first(conn, batch):
        calls.append(batch)
        if len(calls) == 1:  # on the compaction's thread: the store closes while this transaction runs
            trio.from_thread.run_sync(nursery.start_soon, store.aclose)
        return real_clean(conn, batch)

    monkeypatch.setattr(sqlite_module, "clean_log", closing_during_the_first)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await store.compact(head)  # returns: no error (nor a crash) from the closed file
    assert len(calls) == 1
    assert rows(tmp_path / "s.db", "SELECT value FROM meta WHERE name = 'cleaned'") == [(20,)]


async def test_a_file_compacted_before_the_cleaned_mark_existed_is_clean_up_to_its_compacted_revision(
        tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    head = await _written_twice(store, 3)
    await store.compact(head)
    await store.aclose()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("DELETE FROM meta WHERE name = 'cleaned'")  # as a file of an earlier miniplane
    store = await SqliteStore.open(tmp_path / "s.db")
    assert rows(tmp_path / "s.db", "SELECT value FROM meta WHERE name = 'cleaned'") == [(head,)]
    await store.aclose()


async def test_concurrent_writes_share_commits(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")

    async def writer(i: int) -> None:
        await store.create(f"/c/{i}", val("v"))

    async with trio.open_nursery() as nursery:
        for i in range(50):
            nursery.start_soon(writer, i)
    stats = store.statistics()
    assert stats.writes == 50
    assert stats.commits < 50
    assert stats.largest_batch > 1
    await store.aclose()


async def test_writers_waiting_while_the_lock_is_held_commit_together_once_it_is_let_go(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    done: list[int] = []

    async def writer(i: int) -> None:
        await store.create(f"/w/{i}", val("v"))
        done.append(i)

    with trio.fail_after(10):  # writers nobody wakes would park for ever: fail instead of hanging the run
        async with trio.open_nursery() as nursery:
            async with store.hold_commits():  # held by something other than a commit: a compaction, a catch-up
                for i in range(20):
                    nursery.start_soon(writer, i)
                await trio.testing.wait_all_tasks_blocked()
                assert done == [] and store.statistics().pending == 20
    assert sorted(done) == list(range(20))
    stats = store.statistics()
    assert (stats.commits, stats.writes, stats.largest_batch) == (1, 20, 20)
    await store.aclose()


async def test_a_task_writing_in_a_loop_stops_when_cancelled(tmp_path: Path) -> None:
    # Alone, it always finds no commit running and starts one: cancellation must still reach it between two
    # writes, not after its last.
    store = await SqliteStore.open(tmp_path / "s.db")
    written: list[int] = []
    five = trio.Event()

    async def loop() -> None:
        for i in range(300):
            await store.create(f"/l/{i:03}", val("v"))
            written.append(i)
            if i == 4:
                five.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop)
        await five.wait()
        nursery.cancel_scope.cancel()
    assert 5 <= len(written) < 10, len(written)  # it stopped at its next write
    # Every acknowledged write is there; the one it was waiting for when cancelled may be too (taken into a
    # batch, a write commits whether or not its writer still waits, as a timed-out request may be applied).
    stored = [e.key for e in (await store.list("/l/"))[0]]
    assert stored[:len(written)] == [f"/l/{i:03}" for i in written] and len(stored) - len(written) in (0, 1)
    await store.aclose()


async def test_write_cancelled_before_its_commit_is_not_applied(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    async with trio.open_nursery() as nursery:
        async with store.hold_commits():  # a commit (or a compaction) is in progress
            nursery.start_soon(store.create, "/k/a", val("a"))
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    assert await store.get("/k/a") is None
    assert (await store.create("/k/b", val("b"))).mod_revision == 1
    await store.aclose()


async def test_failed_commit_fails_its_batch_and_the_store_stays_usable(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("a"))
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("CREATE TRIGGER boom BEFORE INSERT ON kv WHEN NEW.key = '/k/boom' "
                     "BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(StoreError):
        await store.create("/k/boom", val("x"))
    assert await store.current_revision() == 1
    assert (await store.create("/k/b", val("b"))).mod_revision == 2
    assert [e.key for e in (await store.list("/k/"))[0]] == ["/k/a", "/k/b"]
    await store.aclose()


async def test_corrupt_values_are_returned_as_stored_bytes(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "s.db")
    await store.create("/k/a", val("a"))
    await store.create("/k/b", val("b"))
    with sqlite3.connect(tmp_path / "s.db") as conn:
        conn.execute("UPDATE kv SET value = ? WHERE rev = 1", (b"\xff\x00not json",))
        conn.execute("UPDATE kv SET value = 'text, not a blob' WHERE rev = 2")
    assert (await store.get("/k/a")).value == b"\xff\x00not json"
    assert [e.value for e in (await store.list("/k/"))[0]] == [b"\xff\x00not json",
                                                                 b"text, not a blob"]
    it = store.watch("/k/", after_revision=0)
    assert await it.__anext__() == StoreEvent("ADDED", "/k/a", 1, b"\xff\x00not json", None)
    await it.aclose()
    await store.aclose()
