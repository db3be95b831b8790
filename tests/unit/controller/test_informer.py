"""Informer rules (client-go's reflector and shared informer), against the in-process server."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from runtime.client.interface import ObjectKey, TransportError
from runtime.controller.informer import Informer, ObjectEvent
from runtime.controller.informerfactory import InformerFactory
from runtime.controller.transforms import partial_metadata
from runtime.controller.testing import open_test_env


class FlakyClient:
    """Wraps a client; `drop_watches()` breaks every open watch like a lost connection,
    `block_watches()` holds new watches until `unblock_watches()`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.scheme = inner.scheme
        self._dropped = trio.Event()
        self._open = trio.Event()
        self._open.set()
        self.watches = 0

    def resource(self, kind):
        return self.inner.resource(kind)

    async def list(self, *args, **kwargs):
        return await self.inner.list(*args, **kwargs)

    def drop_watches(self) -> None:
        self._dropped.set()
        self._dropped = trio.Event()

    def block_watches(self) -> None:
        self._open = trio.Event()

    def unblock_watches(self) -> None:
        self._open.set()

    @asynccontextmanager
    async def watch(self, kind, **kwargs):
        dropped = self._dropped
        while not self._open.is_set():
            await self._open.wait()
        await trio.lowlevel.checkpoint()
        if dropped.is_set() or not self._open.is_set():
            raise TransportError("connection reset by test before the watch began")
        self.watches += 1

        async def cut() -> None:
            await dropped.wait()
            raise TransportError("connection reset by test")

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(cut)
                async with self.inner.watch(kind, **kwargs) as events:
                    yield events
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            leaves = [e for e in group.exceptions if not isinstance(e, trio.Cancelled)]
            raise (leaves[0] if len(leaves) == 1 else group) from None


def role(name: str, ns: str = "default", verbs: tuple[str, ...] = ("get",)) -> dict:
    return {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": list(verbs)}]}


async def server_state(env, rt) -> dict[ObjectKey, str]:
    page = await env.client.list(rt)
    return {ObjectKey(o["metadata"]["namespace"], o["metadata"]["name"]): o["metadata"]["resourceVersion"]
            for o in page.items}


def cache_state(informer: Informer) -> dict[ObjectKey, str]:
    return {k: informer.get(k)["metadata"]["resourceVersion"] for k in informer.keys()}


async def test_informer_syncs_after_the_first_list_and_follows_changes(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("before"))
        informer = Informer(env.client, rt)
        events: list[tuple[str, str]] = []
        informer.add_handler(lambda e: events.append((e.type, e.key.name)))
        assert not informer.has_synced()
        await env.nursery.start(informer.run)
        assert informer.has_synced()
        assert informer.get("default/before") is not None
        await env.client.create(role("after"))
        await env.client.update(dict(await env.client.get(rt, "after", namespace="default"),
                                     rules=role("after", verbs=("list",))["rules"]))
        gone = await env.client.delete(rt, "before", namespace="default")
        written = await env.client.create(role("marker"))
        await informer.wait_for(written["metadata"]["resourceVersion"])
        assert events == [("ADDED", "before"), ("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "before"),
                          ("ADDED", "marker")]
        assert cache_state(informer) == await server_state(env, rt)
        assert gone["status"] == "Success"


async def test_store_equals_server_state_after_killed_watch_connections(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        flaky = FlakyClient(env.client)
        informer = Informer(flaky, rt)
        events: list[ObjectEvent] = []
        informer.add_handler(events.append)
        await env.nursery.start(informer.run)
        for i in range(3):
            await env.client.create(role(f"r{i}"))
            flaky.drop_watches()
            await trio.sleep(1)
        flaky.block_watches()
        flaky.drop_watches()
        await env.client.create(role("while-down"))
        await env.client.delete(rt, "r0", namespace="default")
        latest = await env.client.create(role("last"))
        flaky.unblock_watches()
        await informer.wait_for(latest["metadata"]["resourceVersion"])
        assert cache_state(informer) == await server_state(env, rt)
        stats = informer.statistics()
        assert stats.lists == 1 and stats.relists_gone == 0 and flaky.watches >= 4
        # Resumed from the last version: every change seen exactly once, none replayed.
        assert [(e.type, e.key.name) for e in events] == [
            ("ADDED", "r0"), ("ADDED", "r1"), ("ADDED", "r2"), ("ADDED", "while-down"), ("DELETED", "r0"),
            ("ADDED", "last")]


async def test_expired_resource_version_relists_and_reports_missed_deletes(autojump_clock):
    async with open_test_env(history_seconds=1.0) as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("doomed"))
        await env.client.create(role("kept"))
        flaky = FlakyClient(env.client)
        informer = Informer(flaky, rt)
        events: list[ObjectEvent] = []
        informer.add_handler(events.append)
        await env.nursery.start(informer.run)
        flaky.block_watches()
        flaky.drop_watches()
        # The drop takes effect when the informer's tasks next run: let them, so that the writes below
        # happen while it is disconnected (a write reaches a connected watch without a task switch).
        await trio.sleep(0.1)
        await env.client.delete(rt, "doomed", namespace="default")
        kept = await env.client.get(rt, "kept", namespace="default")
        await env.client.update(dict(kept, rules=role("kept", verbs=("list",))["rules"]))
        latest = await env.client.create(role("new"))
        # The server forgets the history the informer would resume from: cache and store log.
        await trio.sleep(30)
        await env.registry.store.compact(await env.registry.store.current_revision())
        flaky.unblock_watches()
        await informer.wait_for(latest["metadata"]["resourceVersion"])
        assert cache_state(informer) == await server_state(env, rt)
        assert informer.statistics().relists_gone == 1 and informer.statistics().lists == 2
        after = [(e.type, e.key.name, e.final_state_unknown) for e in events[2:]]
        assert after == [("MODIFIED", "kept", False), ("ADDED", "new", False), ("DELETED", "doomed", True)]
        assert events[-1].obj["metadata"]["name"] == "doomed"  # the last state it knew


@pytest.mark.parametrize("transformed", [False, True], ids=["plain", "transformed"])
async def test_bookmarks_advance_the_version_without_events_of_the_kind(autojump_clock, transformed):
    seen: list[dict] = []
    transform = (lambda obj: seen.append(obj) or partial_metadata(obj)) if transformed else None
    async with open_test_env() as env:
        informer = Informer(env.client, env.scheme.by_kind("Role"), transform=transform)
        await env.nursery.start(informer.run)
        before = informer.resource_version
        ns = await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        with trio.fail_after(60):
            await informer.wait_for(ns["metadata"]["resourceVersion"])
        assert int(informer.resource_version) > int(before)
        assert informer.statistics().events == 0
        assert seen == []  # a bookmark is not an object: never transformed


async def test_a_late_handler_first_gets_an_add_for_every_cached_object(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("a"))
        await env.client.create(role("b"))
        informer = Informer(env.client, rt)
        await env.nursery.start(informer.run)
        seen: list[tuple[str, str]] = []
        informer.add_handler(lambda e: seen.append((e.type, e.key.name)))
        assert seen == [("ADDED", "a"), ("ADDED", "b")]


async def test_namespace_and_custom_indexes_find_objects(autojump_clock):
    async with open_test_env() as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        bindings = env.scheme.by_kind("RoleBinding")
        for ns, name, role_name in (("default", "b1", "view"), ("team", "b2", "view"), ("team", "b3", "edit")):
            await env.client.create({
                "apiVersion": "rbac.authorization.svc.io/v1", "kind": "RoleBinding",
                "metadata": {"name": name, "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": role_name},
                "subjects": [{"kind": "User", "name": "u"}]})
        informer = Informer(env.client, bindings, indexers={"role": lambda o: [o["roleRef"]["name"]]})
        await env.nursery.start(informer.run)
        # Reads come in no particular order.
        assert sorted(o["metadata"]["name"] for o in informer.list("team")) == ["b2", "b3"]
        assert sorted(str(k) for k in informer.index_keys("role", "view")) == ["default/b1", "team/b2"]
        done = await env.client.delete(bindings, "b2", namespace="team")
        latest = await env.client.create({
            "apiVersion": "rbac.authorization.svc.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b4", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "User", "name": "u"}]})
        await informer.wait_for(latest["metadata"]["resourceVersion"])
        assert [str(k) for k in informer.index_keys("role", "view")] == ["default/b1"]
        assert sorted(o["metadata"]["name"] for o in informer.by_index("role", "edit")) == ["b3", "b4"]
        assert informer.index_size("role", "edit") == 2
        assert done["status"] == "Success"


async def test_periodic_resync_redelivers_every_object_unchanged(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("a"))
        informer = Informer(env.client, rt, resync_period=10.0)
        resyncs: list[ObjectEvent] = []
        informer.add_handler(lambda e: resyncs.append(e) if e.type == "MODIFIED" else None)
        await env.nursery.start(informer.run)
        await trio.sleep(25)
        assert len(resyncs) == 2
        assert all(e.old is e.obj and e.key == ObjectKey("default", "a") for e in resyncs)


async def test_factory_hands_out_one_informer_per_kind_and_waits_for_all(autojump_clock):
    async with open_test_env() as env:
        factory = InformerFactory(env.client)
        roles = factory.informer(env.scheme.by_kind("Role"))
        assert factory.informer(env.scheme.by_kind("Role")) is roles
        assert factory.informer(env.scheme.by_kind("Role"), namespace="default") is not roles
        namespaces = factory.informer(env.scheme.by_kind("Namespace"))
        await env.nursery.start(factory.run)
        assert roles.has_synced() and namespaces.has_synced()
        late = factory.informer(env.scheme.by_kind("ClusterRole"))
        with trio.fail_after(10):
            await late.wait_synced()
        assert late.get("view") is not None


async def test_factory_restarts_an_informer_whose_handler_raised(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        factory = InformerFactory(env.client)
        informer = factory.informer(rt)
        failures = []

        def handler(event: ObjectEvent) -> None:
            if event.key.name == "bad" and not failures:
                failures.append(event)
                raise RuntimeError("handler bug")

        informer.add_handler(handler)
        await env.nursery.start(factory.run)
        await env.client.create(role("bad"))
        latest = await env.client.create(role("good"))
        with trio.fail_after(120):
            await informer.wait_for(latest["metadata"]["resourceVersion"])
        assert factory.restarts == 1 and failures
        assert cache_state(informer) == await server_state(env, rt)
