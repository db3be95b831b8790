"""The manager's client reads from the informer caches (controller-runtime's delegating client): no request for
a cached kind's get or list, fresh copies, selectors answered by the cache where it can, the server otherwise;
`api_reader` and `cache_reads=False` read live; a Conflict from a stale read requeues the key quietly."""

from __future__ import annotations

import logging

import pytest
import trio

from runtime import models
from runtime.client.interface import ObjectKey
from runtime.controller import CachedClient, Manager, Result
from runtime.controller.testing import ADMIN, open_test_env
from runtime.machinery import errors


class CountingClient:
    """Delegates to `client`, counting the get and list calls that reach it (the server's requests)."""

    def __init__(self, client) -> None:
        self.client = client
        self.scheme = client.scheme
        self.gets = self.lists = 0

    def __getattr__(self, name):
        return getattr(self.client, name)

    def resource(self, kind):
        return self.client.resource(kind)

    def shared_reads(self):  # the informers list and watch uncounted: only reconcile reads are counted
        return self.client.shared_reads()

    async def get(self, *args, **kwargs):
        self.gets += 1
        return await self.client.get(*args, **kwargs)

    async def list(self, *args, **kwargs):
        self.lists += 1
        return await self.client.list(*args, **kwargs)

    def watch(self, *args, **kwargs):
        return self.client.watch(*args, **kwargs)

    async def create(self, *args, **kwargs):
        return await self.client.create(*args, **kwargs)

    async def update(self, *args, **kwargs):
        return await self.client.update(*args, **kwargs)

    @property
    def requests(self) -> int:
        return self.gets + self.lists


def config_map(name: str, ns: str = "default", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "data": {"k": "v"}}


async def started(env, **options) -> tuple[Manager, CountingClient]:
    """A manager over a counting admin client, informing on ConfigMaps, running and synced."""
    server = CountingClient(env.client_as(ADMIN))
    manager = Manager(server, **options)
    manager.informers.informer(env.scheme.by_kind("ConfigMap"))
    await env.start(manager)
    return manager, server


async def cached(manager, obj: dict) -> None:
    informer = manager.informers.find(manager.scheme.by_kind("ConfigMap"))
    await informer.wait_for(obj["metadata"]["resourceVersion"])


async def test_a_get_of_an_informed_kind_makes_no_request_to_the_server(autojump_clock):
    async with open_test_env() as env:
        manager, server = await started(env)
        assert isinstance(manager.client, CachedClient) and manager.api_reader is server
        await cached(manager, await env.client.create(config_map("a")))
        rt = env.scheme.by_kind("ConfigMap")
        got = await manager.client.get(rt, "a", namespace="default")
        assert got["data"] == {"k": "v"} and got["apiVersion"] == "v1" and got["kind"] == "ConfigMap"
        with pytest.raises(errors.NotFound, match='configmaps "missing" not found'):
            await manager.client.get(rt, "missing", namespace="default")
        listed = await manager.client.list(rt, namespace="default")
        assert "a" in [o["metadata"]["name"] for o in listed.items]
        assert server.requests == 0
        assert manager.client.statistics().cache_reads == 3


async def test_the_api_reader_and_cache_reads_false_go_to_the_server(autojump_clock):
    async with open_test_env() as env:
        manager, server = await started(env)
        await env.client.create(config_map("a"))
        rt = env.scheme.by_kind("ConfigMap")
        assert (await manager.api_reader.get(rt, "a", namespace="default"))["metadata"]["name"] == "a"
        assert server.gets == 1
        live, live_server = await started(env, name="live", cache_reads=False)
        assert live.client is live_server
        await live.client.get(rt, "a", namespace="default")
        assert live_server.gets == 1


async def test_reads_the_cache_cannot_answer_go_to_the_server(autojump_clock):
    async with open_test_env() as env:
        manager, server = await started(env)
        await cached(manager, await env.client.create(config_map("a")))
        rt = env.scheme.by_kind("ConfigMap")
        with pytest.raises(errors.NotFound):  # a kind without an informer
            await manager.client.get(env.scheme.by_kind("Secret"), "none", namespace="default")
        assert server.gets == 1
        await manager.client.get(rt, "a", namespace="default", resource_version="1")  # not older than: live
        assert server.gets == 2
        await manager.client.list(rt, namespace="default", limit=1)  # a page: the cache has no continue tokens
        assert server.lists == 1
        with pytest.raises(errors.BadRequest):  # a field the cache has not: the server answers
            await manager.client.list(rt, field_selector="data.k=v")
        assert server.lists == 2
        with pytest.raises(errors.BadRequest):  # a selector that does not parse: the server's own answer
            await manager.client.list(rt, label_selector="a in (")
        assert server.lists == 3


async def test_answers_are_fresh_copies_a_caller_may_change(autojump_clock):
    async with open_test_env() as env:
        manager, server = await started(env)
        await cached(manager, await env.client.create(config_map("a", team="x")))
        rt = env.scheme.by_kind("ConfigMap")
        got = await manager.client.get(rt, "a", namespace="default")
        got["data"]["k"] = "changed"
        got["metadata"]["labels"]["team"] = "y"
        listed = (await manager.client.list(rt, namespace="default")).items
        listed[0]["data"].clear()
        again = await manager.client.get(rt, "a", namespace="default")
        assert again["data"] == {"k": "v"} and again["metadata"]["labels"] == {"team": "x"}
        typed = await manager.client.get(models.ConfigMap, "a", namespace="default")
        assert isinstance(typed, models.ConfigMap) and typed.data == {"k": "v"}
        typed.data["k"] = "typed change"
        typed_list = await manager.client.list(models.ConfigMap, namespace="default")
        assert all(isinstance(c, models.ConfigMap) for c in typed_list.items)
        assert (await manager.client.get(models.ConfigMap, "a", namespace="default")).data == {"k": "v"}
        assert server.requests == 0


async def test_label_and_name_selectors_are_answered_from_the_cache_as_the_server_answers_them(autojump_clock):
    async with open_test_env() as env:
        manager, server = await started(env)
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        for obj in (config_map("a", team="x"), config_map("b", team="y"), config_map("c"),
                    config_map("a", "other", team="x")):
            last = await env.client.create(obj)
        await cached(manager, last)
        rt = env.scheme.by_kind("ConfigMap")
        queries = [dict(label_selector="team=x"), dict(label_selector="team"), dict(label_selector="team!=x"),
                   dict(label_selector="team in (x,y)", namespace="default"), dict(field_selector="metadata.name=a"),
                   dict(field_selector="metadata.namespace=other"),
                   dict(field_selector="metadata.name!=a", label_selector="team")]
        for query in queries:
            from_cache = await manager.client.list(rt, **query)
            from_server = await env.client.list(rt, **query)
            names = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in from_cache.items]
            assert names == [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in from_server.items], query
        assert server.requests == 0


async def test_a_conflict_from_a_stale_cache_requeues_the_key_quietly_with_backoff(autojump_clock, caplog):
    async with open_test_env() as env:
        server = CountingClient(env.client_as(ADMIN))
        manager = Manager(server)
        rt = env.scheme.by_kind("ConfigMap")
        runs: list[str] = []

        async def reconcile(key: ObjectKey) -> Result | None:
            current = await manager.client.get(rt, key.name, namespace=key.namespace)
            if not runs:  # another writer gets in between the cached read and this write
                await env.client.update({**current, "data": {"k": "theirs"}})
            runs.append(current["data"]["k"])
            if current["data"]["k"] != "mine":
                await manager.client.update({**current, "data": {"k": "mine"}})
            return None

        manager.controller("writer").for_(rt).complete(reconcile)
        await env.client.create(config_map("a"))
        caplog.set_level(logging.DEBUG, logger="runtime.controller.controller")
        await env.start(manager)
        with trio.fail_after(30):
            await env.wait_for(rt, "a", lambda o: o and o["data"] == {"k": "mine"}, namespace="default")
        stats = manager.controllers["writer"].statistics()
        assert stats.conflicts == 1 and stats.errors == 1 and runs[0] == "v"
        records = [r for r in caplog.records if r.name == "runtime.controller.controller"]
        assert not [r for r in records if r.levelno >= logging.ERROR]
        conflicts = [r for r in records if r.levelno == logging.DEBUG and "conflict" in r.getMessage()]
        assert len(conflicts) == 1 and conflicts[0].exc_info is None


async def test_an_already_exists_from_a_stale_cache_requeues_the_key_quietly_too(autojump_clock, caplog):
    """A create of what the cache did not hold yet (create_or_update over the cache: NotFound there, then the
    server has it) fails AlreadyExists, the stale cache's other face: requeued at DEBUG, as a Conflict."""
    async with open_test_env() as env:
        manager = Manager(env.client_as(ADMIN))
        rt = env.scheme.by_kind("ConfigMap")
        runs: list[ObjectKey] = []

        async def reconcile(key: ObjectKey) -> Result | None:
            runs.append(key)
            if len(runs) == 1:
                raise errors.AlreadyExists('configmaps "a-copy" already exists', name="a-copy", kind="configmaps")
            return None

        manager.controller("copier").for_(rt).complete(reconcile)
        await env.client.create(config_map("a"))
        caplog.set_level(logging.DEBUG, logger="runtime.controller.controller")
        await env.start(manager)
        with trio.fail_after(30):
            while len(runs) < 2:
                await trio.sleep(0.1)
        assert manager.controllers["copier"].statistics().conflicts == 1 and runs[0] == runs[1]
        records = [r for r in caplog.records if r.name == "runtime.controller.controller"]
        assert not [r for r in records if r.levelno >= logging.ERROR]
        quiet = [r for r in records if r.levelno == logging.DEBUG and "AlreadyExists" in r.getMessage()]
        assert len(quiet) == 1 and quiet[0].exc_info is None
