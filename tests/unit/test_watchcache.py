"""The watch cache: one ordered store watch, kinds sharing its revision, history, snapshots, watchers.

Driven over a MemoryStore with trio's MockClock (history windows and
snapshot freshness are in trio time).
"""

from __future__ import annotations


import pytest
import trio
from trio.testing import MockClock

from runtime.server.storage.compaction import run_compactor
from runtime.machinery.storedobject import dumps_json
from runtime.server.registry import Registry
from runtime.machinery.options import ListOptions
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.server.watchcache import TooOld, WatchCache, as_seen

ROLES = "/rbac.authorization/clusterroles/"
BINDINGS = "/rbac.authorization/clusterrolebindings/"


def value(name: str, labels: dict[str, str] | None = None, **extra):
    def encode(rev: int) -> bytes:
        meta = {"name": name, "resourceVersion": str(rev)}
        if labels:
            meta["labels"] = labels
        return dumps_json({"kind": "ClusterRole", "metadata": meta, **extra})
    return encode


class CountingStore(MemoryStore):
    """A MemoryStore that counts list() calls (to show which reads reach the store)."""

    def __init__(self) -> None:
        super().__init__()
        self.lists = 0

    async def list(self, prefix, **options):
        self.lists += 1
        return await super().list(prefix, **options)


async def started_cache(nursery, store, **kw) -> WatchCache:
    cache = WatchCache(store, [ROLES, BINDINGS], **kw)
    await nursery.start(cache.run)
    return cache


async def synced(cache: WatchCache) -> None:
    assert await cache.wait_fresh(5)


def names(objs) -> list[str]:
    return [o.name for o in objs]


async def test_every_kind_shares_the_revision_of_the_one_store_watch(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    await store.create(ROLES + "a", value("a"))
    entry = await store.create(BINDINGS + "b", value("b"))
    await synced(cache)
    assert cache.revision == entry.mod_revision
    assert cache.kind(ROLES).revision == cache.kind(BINDINGS).revision == entry.mod_revision


async def test_objects_are_decoded_once_and_shared_by_reads(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    await store.create(ROLES + "a", value("a"))
    await synced(cache)
    kind = cache.kind(ROLES)
    assert kind.get(ROLES + "a") is kind.list()[0] is kind.snapshot(cache.revision)[0]


async def test_snapshot_rolls_back_to_the_state_at_an_older_revision(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    await store.create(ROLES + "a", value("a", rules=[1]))
    await store.create(ROLES + "b", value("b"))
    mid = await store.current_revision()
    await store.update(ROLES + "a", value("a", rules=[2]), expected_revision=None)
    await store.delete(ROLES + "b", expected_revision=None)
    await store.create(ROLES + "c", value("c"))
    await synced(cache)
    snap = cache.kind(ROLES).snapshot(mid)
    stored, _, _ = await store.list(ROLES, revision=mid)
    assert [(o.key, o.revision) for o in snap] == [(e.key, e.mod_revision) for e in stored]
    assert snap[0].obj["rules"] == [1]


async def test_snapshot_of_a_prefix_is_the_slice_under_it(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    for name in ("x1", "x2", "y1"):
        await store.create(ROLES + name, value(name))
    mid = await store.current_revision()
    await store.create(ROLES + "x3", value("x3"))
    await synced(cache)
    assert names(cache.kind(ROLES).snapshot(mid, ROLES + "x")) == ["x1", "x2"]


async def test_no_snapshot_below_the_history(nursery):
    store = MemoryStore()
    await store.create(ROLES + "a", value("a"))
    cache = await started_cache(nursery, store)
    await store.create(ROLES + "b", value("b"))
    await synced(cache)
    assert cache.kind(ROLES).snapshot(cache.oldest_revision - 1) is None
    assert names(cache.kind(ROLES).snapshot(cache.oldest_revision)) == ["a"]


async def test_history_is_trimmed_by_age_and_never_shorter_than_the_window(nursery, autojump_clock: MockClock):
    store = MemoryStore()
    cache = await started_cache(nursery, store, history_seconds=60)
    old = await store.create(ROLES + "old", value("old"))
    await synced(cache)
    await trio.sleep(50)
    young = await store.create(ROLES + "young", value("young"))
    await synced(cache)
    await trio.sleep(20)  # "old" is 70 s old, "young" 20 s
    cache.trim()
    assert [e.revision for e in cache.kind(ROLES).history] == [young.mod_revision]
    assert cache.oldest_revision == old.mod_revision
    with pytest.raises(TooOld):
        cache.kind(ROLES).watch(lambda o: True, after_revision=old.mod_revision - 1, initial=False)
    cache.kind(ROLES).watch(lambda o: True, after_revision=old.mod_revision, initial=False).close()


async def test_a_full_cache_gives_up_snapshots_of_events_older_than_75_seconds(nursery, autojump_clock):
    store = MemoryStore()
    cache = await started_cache(nursery, store, history_seconds=600, capacity=2)
    first = await store.create(ROLES + "a", value("a"))
    await synced(cache)
    await trio.sleep(80)
    await store.create(ROLES + "b", value("b"))
    await store.create(ROLES + "c", value("c"))
    await synced(cache)
    kind = cache.kind(ROLES)
    cache.trim()
    assert len(kind.history) == 3  # watch history is kept for the whole window
    assert kind.snapshot(first.mod_revision - 1) is None  # that event is older than 75 s
    assert names(kind.snapshot(first.mod_revision)) == ["a"]


async def test_a_full_cache_keeps_snapshots_of_fresh_events(nursery, autojump_clock):
    store = MemoryStore()
    cache = await started_cache(nursery, store, capacity=1)
    first = await store.create(ROLES + "a", value("a"))
    await store.create(ROLES + "b", value("b"))
    await synced(cache)
    cache.trim()
    assert names(cache.kind(ROLES).snapshot(first.mod_revision - 1)) == []


async def test_watch_replays_history_after_the_revision_then_follows(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    a = await store.create(ROLES + "a", value("a"))
    await store.create(ROLES + "b", value("b"))
    await synced(cache)
    watcher = cache.kind(ROLES).watch(lambda o: True, after_revision=a.mod_revision, initial=False)
    await store.delete(ROLES + "a", expected_revision=None)
    events = [await watcher.events.receive() for _ in range(2)]
    assert [(t, o.name) for t, o in events] == [("ADDED", "b"), ("DELETED", "a")]
    assert events[1][1].revision == await store.current_revision()


async def test_watch_from_a_future_revision_skips_events_up_to_it(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    future = cache.revision + 2
    watcher = cache.kind(ROLES).watch(lambda o: True, after_revision=future, initial=False)
    for name in "abc":
        await store.create(ROLES + name, value(name))
    _, obj = await watcher.events.receive()
    assert obj.name == "c" and obj.revision == future + 1


def test_selector_transitions_become_added_and_deleted():
    from runtime.machinery.storedobject import StoredObject
    from runtime.server.watchcache import CacheEvent

    def obj(labels, rev):
        return StoredObject("k", {"metadata": {"name": "k", "labels": labels}}, rev)

    match = lambda o: o.labels.get("a") == "b"  # noqa: E731
    starts = CacheEvent("MODIFIED", obj({"a": "b"}, 5), obj({}, 4), 5, 0.0)
    stops = CacheEvent("MODIFIED", obj({}, 6), obj({"a": "b"}, 5), 6, 0.0)
    stays_out = CacheEvent("MODIFIED", obj({"c": "d"}, 7), obj({}, 6), 7, 0.0)
    assert as_seen(starts, match)[0] == "ADDED"
    kind, seen = as_seen(stops, match)
    assert kind == "DELETED" and seen.labels == {"a": "b"} and seen.revision == 6
    assert seen.obj["metadata"]["resourceVersion"] == "6"
    assert as_seen(stays_out, match) is None


async def test_a_watcher_that_falls_behind_is_closed_as_overflowed(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    watcher = cache.kind(ROLES).watch(lambda o: True, after_revision=None, initial=False, capacity=2)
    for name in "abc":
        await store.create(ROLES + name, value(name))
    await synced(cache)
    assert watcher.overflowed
    received = [item async for item in watcher.events]
    assert len(received) == 2


async def test_consistent_list_is_served_from_the_cache_without_a_store_list(nursery):
    store = CountingStore()
    registry = Registry(store, Scheme())
    await nursery.start(registry.run)
    from runtime.controller.testing import ADMIN
    rt = registry.scheme.by_kind("ClusterRole")
    before = store.lists
    for _ in range(5):
        await registry.list(ADMIN, rt, "", ListOptions())
        await registry.list(ADMIN, rt, "", ListOptions(resource_version="0"))
    assert store.lists == before


async def test_compaction_loop_compacts_only_history_older_than_the_retention(nursery, autojump_clock):
    store = MemoryStore()
    registry = Registry(store, Scheme())
    await nursery.start(registry.run)
    old = await store.create(ROLES + "a", value("a"))
    nursery.start_soon(run_compactor, store, 1.0, 10.0)
    await trio.sleep(5)
    young = await store.create(ROLES + "b", value("b"))
    await trio.sleep(7)  # "a" is 12 s old, "b" 7 s
    assert await store.compacted_revision() == old.mod_revision
    await trio.sleep(5)
    assert await store.compacted_revision() == young.mod_revision


async def test_compaction_loop_survives_a_failing_compaction(nursery, autojump_clock):
    store = MemoryStore()
    registry = Registry(store, Scheme())
    await nursery.start(registry.run)
    calls = []

    async def broken(revision):
        calls.append(revision)
        raise RuntimeError("disk on fire")

    store.compact = broken
    await store.create(ROLES + "a", value("a"))
    nursery.start_soon(run_compactor, store, 1.0, 2.0)
    await trio.sleep(10)
    assert len(calls) > 1


class StalledWatchStore(CountingStore):
    """A store whose watch never delivers: the cache stays at its first list."""

    follow = None  # no hand-over at commit either: everything goes through `watch`

    def watch(self, prefix, *, after_revision):
        async def never():
            await trio.sleep_forever()
            yield  # pragma: no cover
        return never()


async def test_consistent_reads_go_to_the_store_while_the_cache_lags(nursery, autojump_clock):
    from runtime.controller.testing import ADMIN
    store = StalledWatchStore()
    registry = Registry(store, Scheme())
    await nursery.start(registry.run)
    await store.create(ROLES + "late", value("late"))
    rt = registry.scheme.by_kind("ClusterRole")
    listed = await registry.list(ADMIN, rt, "", ListOptions())
    assert names(listed.items) == ["late"] and listed.resource_version == await store.current_revision()
    assert (await registry.get(ADMIN, rt, "", "late")).name == "late"
    cached = await registry.list(ADMIN, rt, "", ListOptions(resource_version="0"))
    assert cached.items == []  # "Any" is the cache as it is


@pytest.mark.parametrize("gate,store_lists", [(True, 0), (False, 1)])
async def test_exact_lists_at_an_older_version_come_from_a_snapshot_unless_the_gate_is_off(
        nursery, gate, store_lists):
    from runtime.controller.testing import ADMIN
    store = CountingStore()
    registry = Registry(store, Scheme(), feature_gates={"ListFromCacheSnapshot": gate})
    await nursery.start(registry.run)
    old = await store.create(ROLES + "a", value("a"))
    await store.create(ROLES + "b", value("b"))
    await synced(registry.cache)
    rt = registry.scheme.by_kind("ClusterRole")
    before = store.lists
    listed = await registry.list(ADMIN, rt, "", ListOptions(resource_version=str(old.mod_revision),
                                                             resource_version_match="Exact"))
    assert names(listed.items) == ["a"] and listed.resource_version == old.mod_revision
    assert store.lists - before == store_lists


async def test_a_stopped_cache_releases_every_wait_for_a_revision_it_will_never_reach():
    cache = WatchCache(MemoryStore())
    answers: list[bool] = []

    async def wait() -> None:
        answers.append(await cache.wait_for(cache.revision + 100))  # no timeout: only the stop ends it

    with trio.fail_after(5):
        async with trio.open_nursery() as waiters:  # outside the cache's scope: only its stop reaches them
            async with trio.open_nursery() as feed:
                await feed.start(cache.run)
                waiters.start_soon(wait)
                waiters.start_soon(wait)
                await trio.testing.wait_all_tasks_blocked()
                assert answers == []
                feed.cancel_scope.cancel()  # the cache stops; its waiters must not hang
    assert answers == [False, False] and cache.stopped


class _LabelIs:
    """A filter equal to every other of the same label, that counts the objects it tests."""

    tested = 0

    def __init__(self, label: str) -> None:
        self.label = label

    def __call__(self, obj) -> bool:
        _LabelIs.tested += 1
        return obj.labels.get("fan") == self.label

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _LabelIs) and other.label == self.label

    def __hash__(self) -> int:
        return hash(self.label)


async def test_watchers_of_equal_filters_test_each_event_once_and_each_get_it(nursery):
    store = MemoryStore()
    cache = await started_cache(nursery, store)
    same = [cache.kind(ROLES).watch(_LabelIs("x"), after_revision=None, initial=False) for _ in range(5)]
    other = cache.kind(ROLES).watch(_LabelIs("y"), after_revision=None, initial=False)
    own = cache.kind(ROLES).watch(lambda o: o.labels.get("fan") == "x", after_revision=None, initial=False)
    _LabelIs.tested = 0
    await store.create(ROLES + "a", value("a", {"fan": "x"}))
    await synced(cache)
    assert _LabelIs.tested == 2  # once for the five watches of "x", once for the one of "y"
    assert [w.events.receive_nowait()[1].name for w in same + [own]] == ["a"] * 6
    assert other.pending == 0 and all(w.pending == 0 for w in same)
