"""The `Store` contract, checked against every backend (memory, sqlite)."""

from __future__ import annotations

import inspect
from typing import AsyncIterator, Awaitable, Callable

import pytest
import trio
import trio.testing

from runtime.storage import (
    Compacted, Entry, Event, KeyExists, KeyNotFound, RevisionConflict, Store, StoreError,
)
from runtime.storage import MemoryStore
from runtime.storage.sqlite import SqliteStore

StoreFactory = Callable[..., Awaitable[Store]]


@pytest.fixture(params=["memory", "sqlite"])
async def make_store(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[StoreFactory]:
    """An async factory of fresh stores of the parametrized backend; all closed afterwards."""
    opened: list[Store] = []

    async def make(**options) -> Store:
        if request.param == "memory":
            store: Store = MemoryStore(**options)
        else:
            store = await SqliteStore.open(tmp_path / f"store{len(opened)}.db", **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.aclose()


@pytest.fixture
async def store(make_store: StoreFactory) -> Store:
    return await make_store()


def val(text: str) -> Callable[[int], bytes]:
    """An encoder writing `text@revision`, so tests can see which revision it was given."""
    return lambda rev: f"{text}@{rev}".encode()


async def take(it: AsyncIterator[Event], n: int) -> list[Event]:
    return [await it.__anext__() for _ in range(n)]


def brief(events: list[Event]) -> list[tuple[str, str, int]]:
    return [(e.type, e.key, e.revision) for e in events]


# -- create / get / update / delete ------------------------------------------

async def test_create_then_get_returns_the_entry(store: Store) -> None:
    created = await store.create("/g/a", val("one"))
    assert created == Entry("/g/a", b"one@1", 1, 1)
    assert await store.get("/g/a") == created


async def test_get_of_missing_key_returns_none(store: Store) -> None:
    assert await store.get("/g/nope") is None


async def test_create_of_existing_key_raises_key_exists(store: Store) -> None:
    await store.create("/g/a", val("one"))
    with pytest.raises(KeyExists):
        await store.create("/g/a", val("two"))
    assert (await store.get("/g/a")).value == b"one@1"


async def test_update_replaces_value_and_keeps_create_revision(store: Store) -> None:
    await store.create("/g/a", val("one"))
    await store.create("/g/b", val("other"))
    updated = await store.update("/g/a", val("two"), expected_revision=1)
    assert updated == Entry("/g/a", b"two@3", 3, 1)
    assert await store.get("/g/a") == updated


async def test_unconditional_update_ignores_current_revision(store: Store) -> None:
    await store.create("/g/a", val("one"))
    await store.update("/g/a", val("two"), expected_revision=None)
    assert (await store.update("/g/a", val("three"), expected_revision=None)).mod_revision == 3


async def test_update_of_missing_key_raises_key_not_found(store: Store) -> None:
    with pytest.raises(KeyNotFound):
        await store.update("/g/a", val("x"), expected_revision=None)


async def test_update_with_stale_revision_raises_conflict_with_current_entry(store: Store) -> None:
    await store.create("/g/a", val("one"))
    current = await store.update("/g/a", val("two"), expected_revision=1)
    with pytest.raises(RevisionConflict) as info:
        await store.update("/g/a", val("three"), expected_revision=1)
    assert info.value.current == current


async def test_delete_returns_its_revision_and_the_last_entry(store: Store) -> None:
    last = await store.create("/g/a", val("one"))
    assert await store.delete("/g/a", expected_revision=1) == (2, last)
    assert await store.get("/g/a") is None


async def test_delete_of_missing_key_raises_key_not_found(store: Store) -> None:
    with pytest.raises(KeyNotFound):
        await store.delete("/g/a", expected_revision=None)


async def test_delete_with_stale_revision_raises_conflict(store: Store) -> None:
    await store.create("/g/a", val("one"))
    await store.update("/g/a", val("two"), expected_revision=None)
    with pytest.raises(RevisionConflict):
        await store.delete("/g/a", expected_revision=1)
    assert (await store.get("/g/a")).value == b"two@2"


async def test_deleted_key_can_be_created_again_with_a_new_create_revision(store: Store) -> None:
    await store.create("/g/a", val("one"))
    await store.delete("/g/a", expected_revision=None)
    again = await store.create("/g/a", val("again"))
    assert (again.create_revision, again.mod_revision) == (3, 3)


async def test_refused_writes_use_no_revision(store: Store) -> None:
    await store.create("/g/a", val("one"))
    for refused in (store.create("/g/a", val("x")),
                    store.update("/g/b", val("x"), expected_revision=None),
                    store.update("/g/a", val("x"), expected_revision=99),
                    store.delete("/g/b", expected_revision=None)):
        with pytest.raises((KeyExists, KeyNotFound, RevisionConflict)):
            await refused
    assert await store.current_revision() == 1
    assert (await store.create("/g/c", val("c"))).mod_revision == 2


async def test_encoder_error_fails_only_that_write(store: Store) -> None:
    def broken(rev: int) -> bytes:
        raise ValueError("cannot encode")

    with pytest.raises(ValueError):
        await store.create("/g/a", broken)
    assert await store.get("/g/a") is None
    assert (await store.create("/g/b", val("b"))).mod_revision == 1


# -- revisions -----------------------------------------------------------------

async def test_empty_store_is_at_revision_zero(store: Store) -> None:
    assert await store.current_revision() == 0
    assert await store.compacted_revision() == 0
    assert await store.list("/") == ([], 0)


async def test_revisions_strictly_increase_across_keys(store: Store) -> None:
    revs = [(await store.create(f"/r/{i}", val("v"))).mod_revision for i in range(5)]
    revs.append((await store.update("/r/0", val("w"), expected_revision=None)).mod_revision)
    revs.append((await store.delete("/r/1", expected_revision=None))[0])
    assert revs == list(range(1, 8))
    assert await store.current_revision() == 7


async def test_encoder_gets_the_revision_the_write_gets(store: Store) -> None:
    seen: list[int] = []

    def encode(rev: int) -> bytes:
        seen.append(rev)
        return b"%d" % rev

    created = await store.create("/e/a", encode)
    updated = await store.update("/e/a", encode, expected_revision=None)
    assert seen == [created.mod_revision, updated.mod_revision] == [1, 2]
    assert updated.value == b"2"


async def test_concurrent_writers_get_distinct_revisions(store: Store) -> None:
    entries: list[Entry] = []

    async def writer(i: int) -> None:
        for j in range(5):
            entries.append(await store.create(f"/c/{i}/{j}", val(f"{i}.{j}")))

    async with trio.open_nursery() as nursery:
        for i in range(20):
            nursery.start_soon(writer, i)
    revs = sorted(e.mod_revision for e in entries)
    assert revs == list(range(1, 101))
    assert all(e.value == f"{e.key[3:].replace('/', '.')}@{e.mod_revision}".encode() for e in entries)


# -- list ----------------------------------------------------------------------

async def test_list_returns_entries_under_prefix_sorted_by_key(store: Store) -> None:
    for key in ("/p/b", "/p/a", "/pq/x", "/p", "/o/z", "/p/a/deeper"):
        await store.create(key, val(key))
    entries, rev = await store.list("/p/")
    assert [e.key for e in entries] == ["/p/a", "/p/a/deeper", "/p/b"]
    assert rev == 6


async def test_empty_prefix_lists_every_key_in_code_point_order(store: Store) -> None:
    for key in ("/\U0010ffff", "/b", "/a/x"):
        await store.create(key, val(key))
    assert [e.key for e in (await store.list(""))[0]] == ["/a/x", "/b", "/\U0010ffff"]
    assert [e.key for e in (await store.list("/\U0010ffff"))[0]] == ["/\U0010ffff"]


async def test_list_omits_deleted_keys(store: Store) -> None:
    await store.create("/p/a", val("a"))
    await store.create("/p/b", val("b"))
    await store.delete("/p/a", expected_revision=None)
    assert [e.key for e in (await store.list("/p/"))[0]] == ["/p/b"]


async def test_list_at_past_revision_returns_the_state_then(store: Store) -> None:
    await store.create("/p/a", val("a1"))                        # 1
    await store.create("/p/b", val("b1"))                        # 2
    await store.update("/p/a", val("a2"), expected_revision=1)   # 3
    await store.delete("/p/b", expected_revision=None)           # 4
    await store.create("/p/c", val("c1"))                        # 5
    assert await store.list("/p/", revision=2) == (
        [Entry("/p/a", b"a1@1", 1, 1), Entry("/p/b", b"b1@2", 2, 2)], 2)
    assert await store.list("/p/", revision=4) == ([Entry("/p/a", b"a2@3", 3, 1)], 4)
    assert [e.key for e in (await store.list("/p/", revision=5))[0]] == ["/p/a", "/p/c"]


async def test_list_at_future_revision_reads_now(store: Store) -> None:
    await store.create("/p/a", val("a"))
    entries, rev = await store.list("/p/", revision=50)
    assert ([e.key for e in entries], rev) == (["/p/a"], 1)


# -- watch ---------------------------------------------------------------------

async def test_watch_replays_history_then_live_events_in_order(store: Store) -> None:
    await store.create("/w/a", val("a"))
    await store.create("/w/b", val("b"))
    it = store.watch("/w/", after_revision=0)
    assert brief(await take(it, 2)) == [("ADDED", "/w/a", 1), ("ADDED", "/w/b", 2)]
    await store.update("/w/a", val("a2"), expected_revision=None)
    await store.delete("/w/b", expected_revision=None)
    assert brief(await take(it, 2)) == [("MODIFIED", "/w/a", 3), ("DELETED", "/w/b", 4)]
    await it.aclose()


async def test_watch_after_revision_skips_older_events(store: Store) -> None:
    for i in range(4):
        await store.create(f"/w/{i}", val("v"))
    it = store.watch("/w/", after_revision=2)
    assert brief(await take(it, 2)) == [("ADDED", "/w/2", 3), ("ADDED", "/w/3", 4)]
    await it.aclose()


async def test_watch_delivers_live_events_to_a_waiting_watcher(store: Store) -> None:
    got: list[Event] = []

    async def consume() -> None:
        it = store.watch("/w/", after_revision=0)
        got.extend(await take(it, 3))
        await it.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        await trio.testing.wait_all_tasks_blocked()
        for i in range(3):
            await store.create(f"/w/{i}", val("v"))
    assert brief(got) == [("ADDED", f"/w/{i}", i + 1) for i in range(3)]


async def test_watch_filters_events_by_prefix(store: Store) -> None:
    await store.create("/w/a", val("a"))
    await store.create("/x/a", val("x"))
    await store.create("/wx/a", val("wx"))
    it = store.watch("/w/", after_revision=0)
    first = await take(it, 1)
    await store.create("/x/b", val("x"))
    await store.create("/w/b", val("b"))
    assert brief(first + await take(it, 1)) == [("ADDED", "/w/a", 1), ("ADDED", "/w/b", 5)]
    await it.aclose()


async def test_update_and_delete_events_carry_prev_value(store: Store) -> None:
    await store.create("/w/a", val("one"))
    await store.update("/w/a", val("two"), expected_revision=None)
    await store.delete("/w/a", expected_revision=None)
    it = store.watch("/w/", after_revision=0)
    assert await take(it, 3) == [
        Event("ADDED", "/w/a", 1, b"one@1", None),
        Event("MODIFIED", "/w/a", 2, b"two@2", b"one@1"),
        Event("DELETED", "/w/a", 3, None, b"two@2"),
    ]
    await it.aclose()


async def test_watch_from_a_listed_revision_misses_nothing(store: Store) -> None:
    await store.create("/w/a", val("a"))
    _, rev = await store.list("/w/")
    await store.create("/w/b", val("b"))
    it = store.watch("/w/", after_revision=rev)
    await store.update("/w/a", val("a2"), expected_revision=None)
    assert brief(await take(it, 2)) == [("ADDED", "/w/b", 2), ("MODIFIED", "/w/a", 3)]
    await it.aclose()


async def test_slow_watcher_catches_up_from_the_log_in_order(make_store: StoreFactory) -> None:
    store = await make_store(watch_buffer=2)
    await store.create("/w/0", val("v"))
    it = store.watch("/w/", after_revision=0)
    events = await take(it, 1)  # now following live writes, with room for two
    for i in range(1, 8):
        await store.create(f"/w/{i}", val("v"))
    events += await take(it, 7)
    assert [e.revision for e in events] == list(range(1, 9))
    await it.aclose()


async def test_closing_a_watch_unregisters_it(store: Store) -> None:
    it = store.watch("/w/", after_revision=0)
    await store.create("/w/a", val("a"))
    await take(it, 1)
    assert store.statistics().watchers == 1
    await it.aclose()
    assert store.statistics().watchers == 0


# -- compaction ----------------------------------------------------------------

async def _history(store: Store) -> None:
    await store.create("/k/a", val("a1"))                      # 1
    await store.create("/k/b", val("b1"))                      # 2
    await store.update("/k/a", val("a2"), expected_revision=None)  # 3
    await store.delete("/k/b", expected_revision=None)         # 4
    await store.create("/k/c", val("c1"))                      # 5
    await store.update("/k/a", val("a3"), expected_revision=None)  # 6


async def test_compaction_keeps_current_values(store: Store) -> None:
    await _history(store)
    await store.compact(6)
    assert await store.compacted_revision() == 6
    assert await store.list("/k/") == (
        [Entry("/k/a", b"a3@6", 6, 1), Entry("/k/c", b"c1@5", 5, 5)], 6)


async def test_list_at_the_compacted_revision_is_still_readable(store: Store) -> None:
    await _history(store)
    await store.compact(4)
    assert await store.list("/k/", revision=4) == ([Entry("/k/a", b"a2@3", 3, 1)], 4)


async def test_list_older_than_compaction_raises_compacted(store: Store) -> None:
    await _history(store)
    await store.compact(4)
    with pytest.raises(Compacted) as info:
        await store.list("/k/", revision=3)
    assert (info.value.requested, info.value.compacted) == (3, 4)


async def test_watch_older_than_compaction_raises_compacted(store: Store) -> None:
    await _history(store)
    await store.compact(4)
    it = store.watch("/k/", after_revision=3)
    with pytest.raises(Compacted):
        await it.__anext__()


async def test_watch_from_the_compacted_revision_replays_later_events(store: Store) -> None:
    await _history(store)
    await store.compact(4)
    it = store.watch("/k/", after_revision=4)
    assert await take(it, 2) == [Event("ADDED", "/k/c", 5, b"c1@5", None),
                                 Event("MODIFIED", "/k/a", 6, b"a3@6", b"a2@3")]
    await it.aclose()


async def test_compaction_at_an_older_revision_is_a_no_op(store: Store) -> None:
    await _history(store)
    await store.compact(4)
    await store.compact(2)
    assert await store.compacted_revision() == 4


async def test_compaction_in_the_future_is_refused(store: Store) -> None:
    await _history(store)
    with pytest.raises(ValueError):
        await store.compact(7)


async def test_slow_watcher_behind_compaction_raises_compacted(make_store: StoreFactory) -> None:
    store = await make_store(watch_buffer=1)
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
    await store.create("/z/a", val("a"))
    it = store.watch("/z/", after_revision=1)
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


@pytest.mark.parametrize("backend", [MemoryStore, SqliteStore])
def test_backends_implement_every_store_method_with_its_signature(backend: type) -> None:
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
