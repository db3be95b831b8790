"""Watches added to a running controller (controller-runtime's `Build` + `Watch`): the new kind's informer starts
in the manager, the call returns once it synced, its objects (those already there, then changes) reach the
controller's queue, and a restarted controller keeps the watch."""

from __future__ import annotations

import pytest
import trio

from runtime.client.interface import ObjectKey
from runtime.controller import Controller, ObjectEvent
from runtime.controller.testing import open_test_env


def secret(name: str, for_map: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": "default", "annotations": {"for": for_map}}}


def config_map(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def to_config_map(obj: dict) -> list[ObjectKey]:
    """A Secret's key of the ConfigMap its `for` annotation names."""
    return [ObjectKey(obj["metadata"]["namespace"], obj["metadata"]["annotations"]["for"])]


async def wait_reconciled(seen: list[ObjectKey], key: ObjectKey, times: int = 1) -> None:
    with trio.fail_after(30):
        while seen.count(key) < times:
            await trio.sleep(0.01)


async def test_a_watch_added_once_running_starts_its_informer_waits_for_sync_and_delivers_events(autojump_clock):
    async with open_test_env() as env:
        secrets = env.scheme.by_kind("Secret")
        await env.client.create(config_map("early"))
        await env.client.create(secret("before", for_map="early"))  # there before the watch: replayed
        manager = env.manager()
        seen: list[ObjectKey] = []

        async def reconcile(key: ObjectKey) -> None:
            seen.append(key)

        controller = manager.controller("maps").for_(env.scheme.by_kind("ConfigMap")).build(reconcile)
        assert isinstance(controller, Controller) and manager.controllers["maps"] is controller
        await env.start(manager)
        await wait_reconciled(seen, ObjectKey("default", "early"))
        assert manager.informers.find(secrets) is None
        source = await controller.watch(secrets, to_config_map)
        informer = manager.informers.find(secrets)
        assert source.informer is informer and informer.has_synced()
        await wait_reconciled(seen, ObjectKey("default", "early"), times=2)  # the replayed Secret
        await env.client.create(secret("later", for_map="late"))
        await wait_reconciled(seen, ObjectKey("default", "late"))
        # A crashed controller, restarted by the manager, registers the late source again.
        crashed: list[str] = []

        def breaking_once(obj: dict) -> list[ObjectKey]:
            if obj["metadata"]["name"] == "boom" and not crashed:
                crashed.append("boom")
                raise RuntimeError("a map that breaks once")
            return to_config_map(obj)

        await controller.watch(secrets, breaking_once)
        await env.client.create(secret("boom", for_map="boomed"))
        await wait_reconciled(seen, ObjectKey("default", "boomed"))  # replayed by the restarted controller
        assert crashed and manager.statistics().runnables["maps"].restarts == 1
        await env.client.create(secret("after-restart", for_map="restarted"))
        await wait_reconciled(seen, ObjectKey("default", "restarted"))


async def test_a_late_watch_keeps_only_what_its_predicates_keep(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()
        seen: list[ObjectKey] = []

        async def reconcile(key: ObjectKey) -> None:
            seen.append(key)

        controller = manager.controller("maps").for_(env.scheme.by_kind("ConfigMap")).build(reconcile)
        await env.start(manager)

        def only_kept(event: ObjectEvent) -> bool:
            return event.obj["metadata"]["name"].startswith("kept")

        await controller.watch(env.scheme.by_kind("Secret"), to_config_map, only_kept)
        await env.client.create(secret("dropped", for_map="dropped"))
        await env.client.create(secret("kept", for_map="kept"))
        await wait_reconciled(seen, ObjectKey("default", "kept"))
        assert ObjectKey("default", "dropped") not in seen


async def test_a_watch_needs_the_managers_informers(autojump_clock):
    async with open_test_env() as env:
        async def reconcile(key: ObjectKey) -> None:
            return None

        lone = Controller("lone", reconcile, [])
        with pytest.raises(RuntimeError, match="no informer factory"):
            await lone.watch(env.scheme.by_kind("Secret"))
        manager = env.manager()
        controller = manager.controller("maps").for_(env.scheme.by_kind("ConfigMap")).build(reconcile)
        await controller.watch(env.scheme.by_kind("Secret"), to_config_map)  # before running: only added
        assert len(controller.sources) == 2
        await env.start(manager)
        assert manager.informers.find(env.scheme.by_kind("Secret")).has_synced()  # started with the others
