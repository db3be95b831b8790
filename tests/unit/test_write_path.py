"""A write costs its work once: one encode, no decode of its own bytes, one store write, a handful of handlers.

Counted, never timed: `dumps_json` and `loads_json` of `runtime.machinery.storedobject`
(the encoder of stored objects and the decoder of stored bytes) are wrapped
with counters; the store's statistics count writes; informer statistics
count the handlers an event calls. Each count is the same on the memory
and the SQLite store (both publish their own writes with their encoder); on
etcd a write whose revision etcd numbered otherwise than predicted is
encoded again, and decoded again when its event came before etcd's answer.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest
import trio

from controllers.builtin import builtin_manager
from runtime.machinery import storedobject as objects
from runtime.server.bootstrap import SYSTEM_USER, bootstrap
from runtime.client.local import LocalClient
from runtime.server.registry import Registry
from runtime.machinery.options import Body, ListOptions, WriteOptions
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.server.storage.etcd.store import EtcdStore
from runtime.server.storage.etcd.client import EtcdClient, parse_endpoints
from runtime.server.storage.sqlite.store import SqliteStore
from runtime.controller.testing import ADMIN
from tests.support.etcd import fresh_prefix

GROUP = "rbac.authorization.svc.io"


def cluster_role(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels or {"app": "bench"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}


class Counted:
    """`runtime.machinery.storedobject`' JSON functions, counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.encodes = self.decodes = 0
        plain_dumps, plain_loads = objects.dumps_json, objects.loads_json

        def dumps(obj: Any) -> bytes:
            self.encodes += 1
            return plain_dumps(obj)

        def loads(data: Any) -> Any:
            self.decodes += 1
            return plain_loads(data)

        monkeypatch.setattr(objects, "dumps_json", dumps)
        monkeypatch.setattr(objects, "loads_json", loads)


async def settled(store: MemoryStore) -> None:
    """Return once 30 s (mock time) pass without a store write.

    The memory store: its writes run on the trio thread, so the autojump
    clock cannot jump past a write still in flight (a SQLite commit runs in
    a worker thread, which the clock does not wait for).
    """
    while True:
        revision = store.statistics().revision
        await trio.sleep(30)
        if store.statistics().revision == revision:
            return


@asynccontextmanager
async def open_registry(backend: str, tmp_path) -> AsyncIterator[Registry]:
    store = MemoryStore() if backend == "memory" else await SqliteStore.open(tmp_path / "state.db")
    registry = Registry(store, Scheme())
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(registry.run)
            yield registry
            nursery.cancel_scope.cancel()
    finally:
        await store.aclose()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_create_is_encoded_once_and_its_bytes_never_decoded_again(backend, tmp_path, monkeypatch):
    async with open_registry(backend, tmp_path) as registry:
        rt = registry.scheme.by_kind("ClusterRole")
        await registry.create(ADMIN, rt, "", Body(cluster_role("warm")), WriteOptions())
        counted = Counted(monkeypatch)
        result = await registry.create(ADMIN, rt, "", Body(cluster_role("r")), WriteOptions())
        assert await registry.cache.wait_for(result.obj.revision, timeout=5)
        read = await registry.get(ADMIN, rt, "", "r")
        listed = await registry.list(ADMIN, rt, "", ListOptions())
        answer = [result.obj.json_bytes(), read.json_bytes()] + [o.json_bytes() for o in listed.items if o.name == "r"]
        assert (counted.encodes, counted.decodes) == (1, 0)  # the store's value, nothing more
        assert answer[0] is answer[1] is answer[2]  # one set of bytes for the answer, the cache and reads


class _AnswerAfterTheEvent(EtcdClient):
    """An EtcdClient that, once `held_for` is set, holds the answer of each applied txn until that
    registry's watch cache has applied the write's event."""

    held_for: Registry | None = None

    async def call(self, path: str, body: dict[str, Any], *, idempotent: bool) -> dict[str, Any]:
        answer = await super().call(path, body, idempotent=idempotent)
        if self.held_for is not None and path == "/v3/kv/txn" and answer.get("succeeded"):
            assert await self.held_for.cache.wait_for(int(answer["header"]["revision"]), timeout=5)
        return answer


async def test_creates_on_etcd_are_decoded_again_only_when_etcd_numbered_them_otherwise(etcd_endpoint, monkeypatch):
    # Each answer is held until the watch cache has applied the write's event: every event comes first,
    # and still carries its write's encoder. (One create at a time: etcd numbers them as predicted.)
    client = _AnswerAfterTheEvent(parse_endpoints(etcd_endpoint, secure=False))
    store = EtcdStore(client, prefix=fresh_prefix())
    registry = Registry(store, Scheme())

    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(registry.run)
            rt = registry.scheme.by_kind("ClusterRole")
            await registry.create(ADMIN, rt, "", Body(cluster_role("warm")), WriteOptions())
            client.held_for = registry
            counted = Counted(monkeypatch)
            mispredicted = store.statistics().mispredicted
            for i in range(8):
                await registry.create(ADMIN, rt, "", Body(cluster_role(f"r-{i}")), WriteOptions())
            again = store.statistics().mispredicted - mispredicted
            assert counted.encodes == 8 + again
            assert counted.decodes <= again < 8
            nursery.cancel_scope.cancel()
    finally:
        await store.aclose()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_the_answer_of_a_write_and_the_watch_cache_hold_one_object(backend, tmp_path):
    async with open_registry(backend, tmp_path) as registry:
        rt = registry.scheme.by_kind("ClusterRole")
        created = await registry.create(ADMIN, rt, "", Body(cluster_role("r")), WriteOptions())
        updated = await registry.update(ADMIN, rt, "", "r", Body(cluster_role("r", {"app": "other"})),
                                        WriteOptions())
        assert await registry.cache.wait_for(updated.obj.revision, timeout=5)
        cached = registry.cache.kind(rt.storage_prefix).get(updated.obj.key)
        assert cached is updated.obj and created.obj is not updated.obj
        assert cached.obj["metadata"]["resourceVersion"] == str(updated.obj.revision)


async def test_a_clusterrole_create_with_the_builtin_controllers_is_one_store_write(autojump_clock):
    store = MemoryStore()
    registry = Registry(store, Scheme())
    async with trio.open_nursery() as nursery:
        await nursery.start(registry.run)
        await bootstrap(registry)
        manager = builtin_manager(LocalClient(registry, SYSTEM_USER))
        await nursery.start(manager.run)
        await settled(store)  # start-up work done (the bootstrap roles aggregated)
        rt = registry.scheme.by_kind("ClusterRole")
        before = store.statistics().revision
        for i in range(20):
            await registry.create(ADMIN, rt, "", Body(cluster_role(f"r-{i}")), WriteOptions())
        await settled(store)
        assert store.statistics().revision - before == 20  # no controller writes for a plain role
        nursery.cancel_scope.cancel()


async def test_an_event_calls_a_handful_of_handlers_not_one_per_pair_of_kinds(autojump_clock):
    registry = Registry(MemoryStore(), Scheme())
    async with trio.open_nursery() as nursery:
        await nursery.start(registry.run)
        manager = builtin_manager(LocalClient(registry, SYSTEM_USER))
        await nursery.start(manager.run)
        kinds = len(registry.scheme.stored_types())
        rt = registry.scheme.by_kind("ClusterRole")
        informer = next(i for i in manager.informers.informers() if i.kind is rt and not i.namespace)
        handlers = informer.statistics().handlers
        # Aggregation (its own kind and the roles it selects), the garbage collector (its own kind and one
        # route to every kind), the kind follower of the collector: a count that does not grow with the kinds.
        assert handlers <= 6 < kinds, (handlers, kinds)
        nursery.cancel_scope.cancel()

