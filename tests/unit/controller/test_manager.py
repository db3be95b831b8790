"""Manager rules: synced before started, crashing parts restarted with backoff, graceful stop."""

from __future__ import annotations

import pytest
import trio

from runtime.client.interface import ObjectKey
from runtime.controller.testing import open_test_env

RBAC = "rbac.authorization.svc.io/v1"


async def run_stoppable(env, manager):
    """Start `manager` under its own cancel scope; return an async function that cancels it and waits."""
    scope = trio.CancelScope()
    done = trio.Event()

    async def run(task_status=trio.TASK_STATUS_IGNORED) -> None:
        with scope:
            await manager.run(task_status=task_status)
        done.set()

    await env.nursery.start(run)

    async def stop() -> None:
        scope.cancel()
        await done.wait()
    return stop


def role(name: str, ns: str = "default") -> dict:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]}


async def test_manager_is_started_only_once_its_informers_have_synced(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()

        async def reconcile(key: ObjectKey) -> None:
            return None

        manager.controller().for_(env.scheme.by_kind("Role")).complete(reconcile)
        manager.controller().for_(env.scheme.by_kind("Namespace")).complete(reconcile)
        await env.start(manager)
        informers = manager.informers.informers()
        assert len(informers) == 2 and all(i.has_synced() for i in informers)  # one per kind: Role, Namespace
        assert {s.name: s.running for s in manager.statistics().runnables.values()} == {
            "role": True, "namespace": True}


async def test_a_crashing_controller_is_restarted_and_the_others_keep_running(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        broken_keys: list[str] = []
        healthy_keys: list[str] = []
        crashed = [False]

        def fragile_map(obj: dict) -> list[ObjectKey]:
            if obj["metadata"]["name"] == "poison" and not crashed[0]:
                crashed[0] = True
                raise ValueError("map bug")
            return [ObjectKey(obj["metadata"]["namespace"], obj["metadata"]["name"])]

        async def broken(key: ObjectKey) -> None:
            broken_keys.append(str(key))

        async def healthy(key: ObjectKey) -> None:
            healthy_keys.append(str(key))

        manager = env.manager()
        manager.controller("fragile").watches(rt, fragile_map).complete(broken)
        manager.controller("healthy").for_(rt).complete(healthy)
        await env.start(manager)
        await env.client.create(role("poison"))
        await trio.sleep(0.5)  # less than the first restart backoff (1 s)
        status = manager.statistics().runnables
        assert status["fragile"].restarts == 1 and not status["fragile"].running
        assert "ValueError: map bug" in status["fragile"].last_error
        await env.client.create(role("meanwhile"))
        await trio.sleep(0.1)
        assert "default/meanwhile" in healthy_keys and status["healthy"].running
        await trio.sleep(5)
        # Restarted: its handlers replayed every cached object, so nothing was lost.
        assert sorted(broken_keys) == ["default/meanwhile", "default/poison"]
        assert manager.statistics().runnables["fragile"].running


async def test_a_crashing_runnable_is_restarted_with_growing_backoff(autojump_clock):
    async with open_test_env() as env:
        starts: list[float] = []

        class Crashy:
            async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
                starts.append(trio.current_time())
                task_status.started()
                if len(starts) <= 3:
                    raise RuntimeError(f"crash {len(starts)}")
                await trio.sleep_forever()

        manager = env.manager()
        manager.add("crashy", Crashy())
        await env.start(manager)
        await trio.sleep(100)
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert gaps == pytest.approx([1.0, 2.0, 4.0])
        assert manager.statistics().runnables["crashy"].restarts == 3


async def test_stop_lets_running_and_queued_reconciles_finish(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        for name in ("a", "b", "c"):
            await env.client.create(role(name))
        finished: list[str] = []

        async def slow(key: ObjectKey) -> None:
            await trio.sleep(2)
            finished.append(key.name)

        manager = env.manager(grace_period=10.0)
        manager.controller().for_(rt).complete(slow)
        stopped = await run_stoppable(env, manager)
        await trio.sleep(1)  # "a" is running, "b" and "c" are queued
        stop_at = trio.current_time()
        await stopped()
        assert finished == ["a", "b", "c"]
        assert trio.current_time() - stop_at == pytest.approx(5.0)  # 1 s left of "a", 2 s each for "b", "c"


async def test_stop_cancels_reconciles_still_running_after_the_grace_period(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("stuck"))
        outcome: list[str] = []

        async def stuck(key: ObjectKey) -> None:
            try:
                await trio.sleep(1000)
                outcome.append("finished")
            except trio.Cancelled:
                outcome.append(f"cancelled at {trio.current_time() - began[0]:.0f}")
                raise

        began = [0.0]
        manager = env.manager(grace_period=10.0)
        manager.controller().for_(rt).complete(stuck)
        stopped = await run_stoppable(env, manager)
        await trio.sleep(1)
        began[0] = trio.current_time()
        await stopped()
        assert outcome == ["cancelled at 10"]
