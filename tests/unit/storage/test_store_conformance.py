"""The `Store` contract, checked against every backend (memory, sqlite, etcd).

etcd's revisions are global to the cluster the session shares, so the suite
counts revisions from the store's revision when a test begins (`rev(n)`: the
n-th write of the test); for memory and sqlite that base is 0. Each etcd
store gets a key prefix of its own, so tests never see each other's keys.
The backends and fixtures are in this folder's conftest.py.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable

import pytest
import trio
import trio.testing

from runtime.server.storage import (
    Compacted, Entry, EtcdStore, StoreEvent, KeyExists, KeyNotFound, Page, RevisionConflict, Store,
    StoreError,
)
from runtime.server.storage import MemoryStore
from runtime.server.storage.sqlite.store import SqliteStore

if TYPE_CHECKING:  # the fixtures' types
    from tests.support.stores import Revs, StoreFactory


def val(text: str) -> Callable[[int], bytes]:
    """An encoder writing `text@revision`, so tests can see which revision it was given."""
    return lambda rev: f"{text}@{rev}".encode()


async def take(it: AsyncIterator[StoreEvent], n: int) -> list[StoreEvent]:
    return [await it.__anext__() for _ in range(n)]


def brief(events: list[StoreEvent]) -> list[tuple[str, str, int]]:
    return [(e.type, e.key, e.revision) for e in events]


# -- create / get / update / delete ------------------------------------------

async def test_create_then_get_returns_the_entry(store: Store, rev: Revs) -> None:
    created = await store.create("/g/a", val("one"))
    assert created == Entry("/g/a", rev.value("one", 1), rev(1), rev(1))
    assert await store.get("/g/a") == created


async def test_get_of_missing_key_returns_none(store: Store) -> None:
    assert await store.get("/g/nope") is None


async def test_create_of_existing_key_raises_key_exists(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    with pytest.raises(KeyExists):
        await store.create("/g/a", val("two"))
    assert (await store.get("/g/a")).value == rev.value("one", 1)


async def test_update_replaces_value_and_keeps_create_revision(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    await store.create("/g/b", val("other"))
    updated = await store.update("/g/a", val("two"), expected_revision=rev(1))
    assert updated == Entry("/g/a", rev.value("two", 3), rev(3), rev(1))
    assert await store.get("/g/a") == updated


async def test_unconditional_update_ignores_current_revision(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    await store.update("/g/a", val("two"), expected_revision=None)
    assert (await store.update("/g/a", val("three"), expected_revision=None)).mod_revision == rev(3)


async def test_update_of_missing_key_raises_key_not_found(store: Store) -> None:
    with pytest.raises(KeyNotFound):
        await store.update("/g/a", val("x"), expected_revision=None)


async def test_update_with_stale_revision_raises_conflict_with_current_entry(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    current = await store.update("/g/a", val("two"), expected_revision=rev(1))
    with pytest.raises(RevisionConflict) as info:
        await store.update("/g/a", val("three"), expected_revision=rev(1))
    assert info.value.current == current


async def test_delete_returns_its_revision_and_the_last_entry(store: Store, rev: Revs) -> None:
    last = await store.create("/g/a", val("one"))
    assert await store.delete("/g/a", expected_revision=rev(1)) == (rev(2), last)
    assert await store.get("/g/a") is None


async def test_delete_of_missing_key_raises_key_not_found(store: Store) -> None:
    with pytest.raises(KeyNotFound):
        await store.delete("/g/a", expected_revision=None)


async def test_delete_with_stale_revision_raises_conflict(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    await store.update("/g/a", val("two"), expected_revision=None)
    with pytest.raises(RevisionConflict):
        await store.delete("/g/a", expected_revision=rev(1))
    assert (await store.get("/g/a")).value == rev.value("two", 2)


async def test_deleted_key_can_be_created_again_with_a_new_create_revision(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    await store.delete("/g/a", expected_revision=None)
    again = await store.create("/g/a", val("again"))
    assert (again.create_revision, again.mod_revision) == (rev(3), rev(3))


async def test_refused_writes_use_no_revision(store: Store, rev: Revs) -> None:
    await store.create("/g/a", val("one"))
    for refused in (store.create("/g/a", val("x")),
                    store.update("/g/b", val("x"), expected_revision=None),
                    store.update("/g/a", val("x"), expected_revision=rev(99)),
                    store.delete("/g/b", expected_revision=None)):
        with pytest.raises((KeyExists, KeyNotFound, RevisionConflict)):
            await refused
    assert await store.current_revision() == rev(1)
    assert (await store.create("/g/c", val("c"))).mod_revision == rev(2)


async def test_encoder_error_fails_only_that_write(store: Store, rev: Revs) -> None:
    def broken(revision: int) -> bytes:
        raise ValueError("cannot encode")

    with pytest.raises(ValueError):
        await store.create("/g/a", broken)
    assert await store.get("/g/a") is None
    assert (await store.create("/g/b", val("b"))).mod_revision == rev(1)


# -- revisions -----------------------------------------------------------------

@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_new_local_store_is_at_revision_zero(backend: str, tmp_path) -> None:
    store = MemoryStore() if backend == "memory" else await SqliteStore.open(tmp_path / "s.db")
    assert (await store.current_revision(), await store.compacted_revision()) == (0, 0)
    await store.aclose()


async def test_a_new_store_lists_nothing_at_its_current_revision(store: Store, rev: Revs) -> None:
    assert await store.compacted_revision() <= rev(0)
    assert await store.list("/") == Page([], rev(0), False)


async def test_revisions_strictly_increase_across_keys(store: Store, rev: Revs) -> None:
    revs = [(await store.create(f"/r/{i}", val("v"))).mod_revision for i in range(5)]
    revs.append((await store.update("/r/0", val("w"), expected_revision=None)).mod_revision)
    revs.append((await store.delete("/r/1", expected_revision=None))[0])
    assert revs == [rev(n) for n in range(1, 8)]
    assert await store.current_revision() == rev(7)


async def test_encoder_gets_the_revision_the_write_gets(store: Store, rev: Revs) -> None:
    seen: list[int] = []

    def encode(revision: int) -> bytes:
        seen.append(revision)
        return b"%d" % revision

    created = await store.create("/e/a", encode)
    updated = await store.update("/e/a", encode, expected_revision=None)
    assert seen == [created.mod_revision, updated.mod_revision] == [rev(1), rev(2)]
    assert updated.value == b"%d" % rev(2)


async def test_concurrent_writers_get_distinct_revisions(store: Store, rev: Revs) -> None:
    entries: list[Entry] = []

    async def writer(i: int) -> None:
        for j in range(5):
            entries.append(await store.create(f"/c/{i}/{j}", val(f"{i}.{j}")))

    async with trio.open_nursery() as nursery:
        for i in range(20):
            nursery.start_soon(writer, i)
    revs = sorted(e.mod_revision for e in entries)
    assert revs == [rev(n) for n in range(1, 101)]
    # The entry a write returns holds the value encoded for the revision it got.
    assert all(e.value == f"{e.key[3:].replace('/', '.')}@{e.mod_revision}".encode() for e in entries)


# -- list ----------------------------------------------------------------------

async def test_list_returns_entries_under_prefix_sorted_by_key(store: Store, rev: Revs) -> None:
    for key in ("/p/b", "/p/a", "/pq/x", "/p", "/o/z", "/p/a/deeper"):
        await store.create(key, val(key))
    entries, at, more = await store.list("/p/")
    assert [e.key for e in entries] == ["/p/a", "/p/a/deeper", "/p/b"]
    assert (at, more) == (rev(6), False)


async def test_empty_prefix_lists_every_key_in_code_point_order(store: Store) -> None:
    for key in ("/\U0010ffff", "/b", "/a/x"):
        await store.create(key, val(key))
    assert [e.key for e in (await store.list("")).entries] == ["/a/x", "/b", "/\U0010ffff"]
    assert [e.key for e in (await store.list("/\U0010ffff")).entries] == ["/\U0010ffff"]


async def test_list_omits_deleted_keys(store: Store) -> None:
    await store.create("/p/a", val("a"))
    await store.create("/p/b", val("b"))
    await store.delete("/p/a", expected_revision=None)
    assert [e.key for e in (await store.list("/p/")).entries] == ["/p/b"]


async def test_list_at_past_revision_returns_the_state_then(store: Store, rev: Revs) -> None:
    await store.create("/p/a", val("a1"))                             # 1
    await store.create("/p/b", val("b1"))                             # 2
    await store.update("/p/a", val("a2"), expected_revision=rev(1))   # 3
    await store.delete("/p/b", expected_revision=None)                # 4
    await store.create("/p/c", val("c1"))                             # 5
    assert await store.list("/p/", revision=rev(2)) == Page(
        [Entry("/p/a", rev.value("a1", 1), rev(1), rev(1)),
         Entry("/p/b", rev.value("b1", 2), rev(2), rev(2))], rev(2), False)
    assert await store.list("/p/", revision=rev(4)) == Page(
        [Entry("/p/a", rev.value("a2", 3), rev(3), rev(1))], rev(4), False)
    assert [e.key for e in (await store.list("/p/", revision=rev(5))).entries] == ["/p/a", "/p/c"]


async def test_list_at_future_revision_reads_now(store: Store, rev: Revs) -> None:
    await store.create("/p/a", val("a"))
    entries, at, _ = await store.list("/p/", revision=rev(50))
    assert ([e.key for e in entries], at) == (["/p/a"], rev(1))


# -- paged lists ---------------------------------------------------------------

async def _fill(store: Store, n: int, prefix: str = "/pg/") -> list[str]:
    keys = [f"{prefix}{i:03d}" for i in range(n)]
    for key in keys:
        await store.create(key, val(key))
    return keys


async def _all_pages(store: Store, prefix: str, *, revision: int | None, limit: int,
                     between: Callable[[int], Awaitable[None]] | None = None) -> tuple[list[Page], list[Entry]]:
    """Page through `prefix` by `limit`, calling `between(i)` after page i; returns pages and entries."""
    pages = [await store.list(prefix, revision=revision, limit=limit)]
    while pages[-1].more:
        if between is not None:
            await between(len(pages))
        pages.append(await store.list(prefix, revision=pages[0].revision, limit=limit,
                                      start_after=pages[-1].entries[-1].key))
    return pages, [e for p in pages for e in p.entries]


async def test_pages_at_one_revision_form_the_list_despite_writes_between_pages(store: Store) -> None:
    keys = await _fill(store, 10)
    whole = await store.list("/pg/")

    async def churn(i: int) -> None:
        # Before, inside and after the next page; a delete and an update of keys still to come.
        await store.create(f"/pg/{i:03d}x", val("new"))
        await store.create(f"/pg/{i * 3 + 1:03d}a", val("new"))
        await store.delete(keys[-i], expected_revision=None)
        await store.update(keys[-i - 1], val("changed"), expected_revision=None)

    pages, entries = await _all_pages(store, "/pg/", revision=None, limit=3, between=churn)
    assert entries == whole.entries
    assert [len(p.entries) for p in pages] == [3, 3, 3, 1]
    assert {p.revision for p in pages} == {whole.revision}
    assert [p.more for p in pages] == [True, True, True, False]


async def test_pages_at_a_past_revision_skip_keys_absent_then(store: Store) -> None:
    keys = await _fill(store, 6)
    await store.delete(keys[1], expected_revision=None)
    then = await store.list("/pg/")
    await store.create(keys[1], val("again"))
    await store.delete(keys[4], expected_revision=None)
    await store.create("/pg/999", val("later"))
    pages, entries = await _all_pages(store, "/pg/", revision=then.revision, limit=2)
    assert entries == then.entries
    assert [[e.key for e in p.entries] for p in pages] == [[keys[0], keys[2]], [keys[3], keys[4]], [keys[5]]]


async def test_limit_larger_than_the_rest_returns_the_rest_and_no_more(store: Store) -> None:
    keys = await _fill(store, 5)
    page = await store.list("/pg/", start_after=keys[2], limit=10)
    assert ([e.key for e in page.entries], page.more) == (keys[3:], False)
    exact = await store.list("/pg/", start_after=keys[2], limit=2)
    assert ([e.key for e in exact.entries], exact.more) == (keys[3:], False)


async def test_start_after_past_the_end_is_an_empty_last_page(store: Store, rev: Revs) -> None:
    await _fill(store, 3)
    assert await store.list("/pg/", start_after="/pg/999", limit=2) == Page([], rev(3), False)
    assert await store.list("/pg/", start_after="/ph", limit=2) == Page([], rev(3), False)


async def test_start_after_before_the_prefix_starts_at_the_prefix(store: Store) -> None:
    keys = await _fill(store, 3)
    await store.create("/pa/z", val("outside"))
    page = await store.list("/pg/", start_after="/pa/z", limit=2)
    assert ([e.key for e in page.entries], page.more) == (keys[:2], True)


async def test_a_page_of_a_large_collection_reads_only_the_page(make_store: StoreFactory) -> None:
    store = await make_store()
    # Enough keys that a scan would cost ten pages: etcd's counter is exact (keys received), SQLite's coarse.
    count = 300 if isinstance(store, EtcdStore) else 3000
    middle = count // 2

    async def writer(first: int) -> None:
        for i in range(first, count, 50):
            await store.create(f"/pg/{i:04d}", val("v"))

    async with trio.open_nursery() as nursery:
        for first in range(50):
            nursery.start_soon(writer, first)
    past = await store.current_revision()
    await store.update(f"/pg/{middle:04d}", val("w"), expected_revision=None)
    work = _work_counter(store)
    for revision in (None, past):
        before = work()
        page = await store.list("/pg/", revision=revision, start_after=f"/pg/{middle:04d}", limit=10)
        paged = work() - before
        await store.list("/pg/", revision=revision)
        whole = work() - before - paged
        assert [e.key for e in page.entries] == [f"/pg/{i:04d}" for i in range(middle + 1, middle + 11)]
        # A page that scanned the collection would cost about what the whole list costs.
        assert whole >= 10 * max(paged, 1), (revision, paged, whole)


def _work_counter(store: Store) -> Callable[[], int]:
    """A counter of the work the backend's lists did: keys looked at (or received from etcd), or SQLite VM
    steps (thousands)."""
    if isinstance(store, (MemoryStore, EtcdStore)):
        return lambda: store.statistics().keys_read
    assert isinstance(store, SqliteStore)
    return lambda: store.statistics().read_ksteps


# -- watch ---------------------------------------------------------------------

async def test_watch_replays_history_then_live_events_in_order(store: Store, rev: Revs) -> None:
    await store.create("/w/a", val("a"))
    await store.create("/w/b", val("b"))
    it = store.watch("/w/", after_revision=rev(0))
    assert brief(await take(it, 2)) == [("ADDED", "/w/a", rev(1)), ("ADDED", "/w/b", rev(2))]
    await store.update("/w/a", val("a2"), expected_revision=None)
    await store.delete("/w/b", expected_revision=None)
    assert brief(await take(it, 2)) == [("MODIFIED", "/w/a", rev(3)), ("DELETED", "/w/b", rev(4))]
    await it.aclose()


async def test_watch_after_revision_skips_older_events(store: Store, rev: Revs) -> None:
    for i in range(4):
        await store.create(f"/w/{i}", val("v"))
    it = store.watch("/w/", after_revision=rev(2))
    assert brief(await take(it, 2)) == [("ADDED", "/w/2", rev(3)), ("ADDED", "/w/3", rev(4))]
    await it.aclose()


async def test_watch_delivers_live_events_to_a_waiting_watcher(store: Store, rev: Revs) -> None:
    got: list[StoreEvent] = []

    async def consume() -> None:
        it = store.watch("/w/", after_revision=rev(0))
        got.extend(await take(it, 3))
        await it.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        await trio.testing.wait_all_tasks_blocked()
        for i in range(3):
            await store.create(f"/w/{i}", val("v"))
    assert brief(got) == [("ADDED", f"/w/{i}", rev(i + 1)) for i in range(3)]


async def test_watch_filters_events_by_prefix(store: Store, rev: Revs) -> None:
    await store.create("/w/a", val("a"))
    await store.create("/x/a", val("x"))
    await store.create("/wx/a", val("wx"))
    it = store.watch("/w/", after_revision=rev(0))
    first = await take(it, 1)
    await store.create("/x/b", val("x"))
    await store.create("/w/b", val("b"))
    assert brief(first + await take(it, 1)) == [("ADDED", "/w/a", rev(1)), ("ADDED", "/w/b", rev(5))]
    await it.aclose()


async def test_update_and_delete_events_carry_prev_value(store: Store, rev: Revs) -> None:
    await store.create("/w/a", val("one"))
    await store.update("/w/a", val("two"), expected_revision=None)
    await store.delete("/w/a", expected_revision=None)
    it = store.watch("/w/", after_revision=rev(0))
    assert await take(it, 3) == [
        StoreEvent("ADDED", "/w/a", rev(1), rev.value("one", 1), None),
        StoreEvent("MODIFIED", "/w/a", rev(2), rev.value("two", 2), rev.value("one", 1)),
        StoreEvent("DELETED", "/w/a", rev(3), None, rev.value("two", 2)),
    ]
    await it.aclose()


async def test_watch_from_a_listed_revision_misses_nothing(store: Store, rev: Revs) -> None:
    await store.create("/w/a", val("a"))
    listed = await store.list("/w/")
    await store.create("/w/b", val("b"))
    it = store.watch("/w/", after_revision=listed.revision)
    await store.update("/w/a", val("a2"), expected_revision=None)
    assert brief(await take(it, 2)) == [("ADDED", "/w/b", rev(2)), ("MODIFIED", "/w/a", rev(3))]
    await it.aclose()


async def test_slow_watcher_catches_up_from_the_log_in_order(make_local_store: StoreFactory) -> None:
    store = await make_local_store(watch_buffer=2)
    await store.create("/w/0", val("v"))
    it = store.watch("/w/", after_revision=0)
    events = await take(it, 1)  # now following live writes, with room for two
    for i in range(1, 8):
        await store.create(f"/w/{i}", val("v"))
    events += await take(it, 7)
    assert [e.revision for e in events] == list(range(1, 9))
    await it.aclose()


async def test_closing_a_watch_unregisters_it(store: Store, rev: Revs) -> None:
    it = store.watch("/w/", after_revision=rev(0))
    await store.create("/w/a", val("a"))
    await take(it, 1)
    assert store.statistics().watchers == 1
    await it.aclose()
    assert store.statistics().watchers == 0


# -- compaction ----------------------------------------------------------------

async def _history(store: Store) -> None:
    await store.create("/k/a", val("a1"))                          # 1
    await store.create("/k/b", val("b1"))                          # 2
    await store.update("/k/a", val("a2"), expected_revision=None)  # 3
    await store.delete("/k/b", expected_revision=None)             # 4
    await store.create("/k/c", val("c1"))                          # 5
    await store.update("/k/a", val("a3"), expected_revision=None)  # 6


async def test_compaction_keeps_current_values(store: Store, rev: Revs) -> None:
    await _history(store)
    await store.compact(rev(6))
    assert await store.compacted_revision() == rev(6)
    assert await store.list("/k/") == Page(
        [Entry("/k/a", rev.value("a3", 6), rev(6), rev(1)), Entry("/k/c", rev.value("c1", 5), rev(5), rev(5))],
        rev(6), False)


async def test_list_at_the_compacted_revision_is_still_readable(store: Store, rev: Revs) -> None:
    await _history(store)
    await store.compact(rev(4))
    assert await store.list("/k/", revision=rev(4)) == Page(
        [Entry("/k/a", rev.value("a2", 3), rev(3), rev(1))], rev(4), False)


async def test_list_older_than_compaction_raises_compacted(store: Store, rev: Revs) -> None:
    await _history(store)
    await store.compact(rev(4))
    with pytest.raises(Compacted) as info:
        await store.list("/k/", revision=rev(3))
    assert (info.value.requested, info.value.compacted) == (rev(3), rev(4))


async def test_watch_older_than_compaction_raises_compacted(store: Store, rev: Revs) -> None:
    await _history(store)
    await store.compact(rev(4))
    it = store.watch("/k/", after_revision=rev(3))
    with pytest.raises(Compacted):
        await it.__anext__()


async def test_watch_from_the_compacted_revision_replays_later_events(store: Store, rev: Revs) -> None:
    await _history(store)
    await store.compact(rev(4))
    it = store.watch("/k/", after_revision=rev(4))
    assert await take(it, 2) == [StoreEvent("ADDED", "/k/c", rev(5), rev.value("c1", 5), None),
                                 StoreEvent("MODIFIED", "/k/a", rev(6), rev.value("a3", 6), rev.value("a2", 3))]
    await it.aclose()


async def test_compaction_at_an_older_revision_is_a_no_op(store: Store, rev: Revs) -> None:
    await _history(store)
    await store.compact(rev(4))
    await store.compact(rev(2))
    assert await store.compacted_revision() == rev(4)


async def test_compaction_in_the_future_is_refused(store: Store, rev: Revs) -> None:
    await _history(store)
    with pytest.raises(ValueError):
        await store.compact(rev(7))


async def test_slow_watcher_behind_compaction_raises_compacted(make_local_store: StoreFactory) -> None:
    store = await make_local_store(watch_buffer=1)
    await store.create("/k/a", val("a"))
    it = store.watch("/k/", after_revision=0)
    await take(it, 1)
    for _ in range(4):
        await store.update("/k/a", val("a"), expected_revision=None)
    await store.compact(4)
    assert (await take(it, 1))[0].revision == 2  # the one event it had room for
    with pytest.raises(Compacted):
        await it.__anext__()


# -- closing -------------------------------------------------------------------

async def test_closed_store_refuses_calls_and_ends_watches(make_store: StoreFactory) -> None:
    store = await make_store()
    created = await store.create("/z/a", val("a"))
    it = store.watch("/z/", after_revision=created.mod_revision)
    failures: list[BaseException] = []

    async def consume() -> None:
        try:
            await it.__anext__()
        except StoreError as exc:
            failures.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        await trio.testing.wait_all_tasks_blocked()
        await store.aclose()
    assert len(failures) == 1
    with pytest.raises(StoreError):
        await store.create("/z/b", val("b"))


# -- the protocol's shape ------------------------------------------------------

def _protocol_methods() -> list[str]:
    return [name for name, member in vars(Store).items()
            if callable(member) and not name.startswith("_")]


@pytest.mark.parametrize("backend", [MemoryStore, SqliteStore, EtcdStore])
def test_backends_implement_every_store_method_with_its_signature(backend: type) -> None:
    assert set(_protocol_methods()) == {"create", "update", "delete", "get", "list", "watch", "current_revision",
                                        "compacted_revision", "compact", "aclose"}
    for name in _protocol_methods():
        want = inspect.signature(getattr(Store, name))
        have = inspect.signature(getattr(backend, name))
        assert inspect.iscoroutinefunction(getattr(backend, name)) == \
            inspect.iscoroutinefunction(getattr(Store, name)), name
        assert str(have.return_annotation) == str(want.return_annotation), name
        for param in want.parameters.values():
            got = have.parameters[param.name]
            assert (got.kind, got.default, str(got.annotation)) == \
                (param.kind, param.default, str(param.annotation)), f"{name}({param.name})"
        extra = [p for p in have.parameters.values() if p.name not in want.parameters]
        assert all(p.default is not inspect.Parameter.empty for p in extra), name
