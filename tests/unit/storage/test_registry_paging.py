"""A paged list read from the store costs O(page): the registry reads with a start key and a limit.

Counted on a MemoryStore (`statistics().keys_read`: the keys every list
looked at), filled directly (no registry writes) with 100,000 ClusterRoles.
(20,000 where the size only has to dwarf a page). A registry that fell back
to reading the whole collection for a page would read them all per page; the
registry reads 501 keys (the page, and the store's look-ahead).
"""

from __future__ import annotations

import trio

from runtime.machinery.storedobject import dumps_json
from runtime.server.registry import Registry
from runtime.machinery.options import ListOptions
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.controller.testing import ADMIN
from runtime.server.watchcache import INITIAL_LIST_CHUNK, WatchCache

OBJECTS = 100_000
SOME = 20_000
PAGE = 500


def role_json(name: str):
    def encode(rev: int) -> bytes:
        return dumps_json({"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                           "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(rev),
                                        "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"bulk": "yes"}},
                           "rules": []})
    return encode


async def filled_store(n: int, rt) -> MemoryStore:
    store = MemoryStore()
    for i in range(n):
        name = f"bulk-{i:06d}"
        await store.create(rt.storage_key(None, name), role_json(name))
    return store


def keys_read(store: MemoryStore) -> int:
    return store.statistics().keys_read


async def page_costs(registry: Registry, rt, store: MemoryStore, opts: ListOptions) -> tuple[list[int], list[str]]:
    """Keys the store read for each page of the paged list `opts` starts, and the names listed."""
    costs, names = [], []
    while True:
        before = keys_read(store)
        page = await registry.list(ADMIN, rt, "", opts)
        costs.append(keys_read(store) - before)
        names += [o.name for o in page.items]
        if not page.continue_token:
            return costs, names
        opts = ListOptions(limit=PAGE, continue_token=page.continue_token)


async def test_a_paged_list_below_the_cache_reads_the_store_a_page_at_a_time(nursery, autojump_clock):
    scheme = Scheme()
    rt = scheme.by_kind("ClusterRole")
    store = await filled_store(OBJECTS, rt)
    listed_at = await store.current_revision()
    # No snapshots: every page at an older revision must come from the store.
    registry = Registry(store, scheme, feature_gates={"ListFromCacheSnapshot": False})
    await nursery.start(registry.run)
    await store.create(rt.storage_key(None, "later"), role_json("later"))
    assert await registry.cache.wait_fresh(5)

    before = keys_read(store)
    whole = await registry.list(ADMIN, rt, "", ListOptions(resource_version=str(listed_at),
                                                             resource_version_match="Exact"))
    full_list = keys_read(store) - before
    assert len(whole.items) == OBJECTS and full_list <= OBJECTS + 1  # (steps over "later", not there then)

    costs, names = await page_costs(registry, rt, store, ListOptions(
        limit=PAGE, resource_version=str(listed_at), resource_version_match="Exact"))
    assert len(costs) == OBJECTS // PAGE and names == [o.name for o in whole.items]
    assert max(costs) <= PAGE + 1, f"keys read per page: {sorted(set(costs))}"  # the page and one look-ahead
    assert sum(costs) <= full_list + len(costs)  # the whole paged list costs what one full list does


async def test_a_continue_token_no_snapshot_covers_reads_the_store_a_page_at_a_time(nursery, autojump_clock):
    scheme = Scheme()
    rt = scheme.by_kind("ClusterRole")
    store = await filled_store(SOME, rt)
    registry = Registry(store, scheme, history_seconds=10)
    await nursery.start(registry.run)
    before = keys_read(store)
    first = await registry.list(ADMIN, rt, "", ListOptions(limit=PAGE))
    assert keys_read(store) == before  # the current state: from the cache, no store read
    assert first.remaining == SOME - PAGE
    await store.create(rt.storage_key(None, "later"), role_json("later"))
    await trio.sleep(60)  # the history (and with it every snapshot of the first page's revision) is trimmed
    kind = registry.cache.kind(rt.storage_prefix)
    assert kind.snapshot_floor > first.resource_version and kind.view(first.resource_version) is None

    costs, names = await page_costs(registry, rt, store, ListOptions(limit=PAGE, continue_token=first.continue_token))
    assert len(names) == SOME - PAGE and "later" not in names
    assert max(costs) <= PAGE + 1, f"keys read per page: {sorted(set(costs))}"
    assert sum(costs) <= SOME + len(costs)


async def test_a_paged_list_from_the_cache_reads_no_store_and_counts_what_remains(nursery, autojump_clock):
    scheme = Scheme()
    rt = scheme.by_kind("ClusterRole")
    store = await filled_store(5 * PAGE, rt)
    registry = Registry(store, scheme)
    await nursery.start(registry.run)
    older = await store.current_revision()
    await store.create(rt.storage_key(None, "later"), role_json("later"))
    assert await registry.cache.wait_fresh(5)
    before = keys_read(store)
    now, _ = await page_costs(registry, rt, store, ListOptions(limit=PAGE))
    snapshot, names = await page_costs(registry, rt, store, ListOptions(
        limit=PAGE, resource_version=str(older), resource_version_match="Exact"))
    assert keys_read(store) == before and len(now) == 6 and len(snapshot) == 5 and "later" not in names
    page = await registry.list(ADMIN, rt, "", ListOptions(limit=PAGE, resource_version=str(older),
                                                            resource_version_match="Exact"))
    assert page.remaining == 4 * PAGE


async def test_the_watch_caches_list_reads_the_store_in_bounded_pages_at_one_revision(nursery, autojump_clock):
    rt = Scheme().by_kind("ClusterRole")
    store = await filled_store(2 * INITIAL_LIST_CHUNK + 10, rt)
    reads: list[tuple[int | None, int, int]] = []
    plain_list = store.list

    async def counted(prefix, **options):
        page = await plain_list(prefix, **options)
        reads.append((options.get("revision"), options.get("limit", 0), len(page.entries)))
        if len(reads) == 1:  # a write while the list pages: later pages stay at the first page's revision
            await store.create(rt.storage_key(None, "during"), role_json("during"))
        return page

    store.list = counted  # type: ignore[method-assign]
    cache = WatchCache(store)
    await nursery.start(cache.run)
    listed_at = reads[1][0]
    assert [(limit, n) for _, limit, n in reads] == [(INITIAL_LIST_CHUNK, INITIAL_LIST_CHUNK)] * 2 + \
        [(INITIAL_LIST_CHUNK, 10)]
    assert reads[0][0] is None and reads[2][0] == listed_at == 2 * INITIAL_LIST_CHUNK + 10
    assert await cache.wait_fresh(5)
    assert len(cache.kind(rt.storage_prefix).objects) == 2 * INITIAL_LIST_CHUNK + 11  # "during" from the log
