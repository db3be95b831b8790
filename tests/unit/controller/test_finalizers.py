"""Finalizer rules: conditional add/remove, and cleanup strictly before the object may go."""

from __future__ import annotations

import pytest
import trio

from runtime.machinery import errors
from runtime.client.interface import ObjectKey
from runtime.controller.controller import Result
from runtime import models
from runtime.controller.finalizers import (
    ensure_finalizer, handle_finalizer, has_finalizer, is_terminating, remove_finalizer,
)
from runtime.controller.testing import open_test_env

RBAC = "rbac.authorization.svc.io/v1"
FINALIZER = "example.com/cleanup"


def role(name: str, ns: str = "default") -> dict:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name, "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]}


def binding(name: str, role_name: str, ns: str = "default") -> dict:
    return {"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "Role", "name": role_name},
            "subjects": [{"kind": "User", "name": "u"}]}


async def test_ensure_finalizer_adds_it_once():
    async with open_test_env() as env:
        obj = await env.client.create(role("r"))
        added = await ensure_finalizer(env.client, obj, FINALIZER)
        assert added["metadata"]["finalizers"] == [FINALIZER]
        again = await ensure_finalizer(env.client, added, FINALIZER)
        assert again is added  # nothing written


async def test_finalizer_writes_are_conditional_on_the_version_read():
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        obj = await ensure_finalizer(env.client, await env.client.create(role("r")), FINALIZER)
        await env.client.patch(rt, "r", {"metadata": {"finalizers": [FINALIZER, "other.io/x"]}}, namespace="default")
        with pytest.raises(errors.Conflict):
            await remove_finalizer(env.client, obj, FINALIZER)
        current = await env.client.get(rt, "r", namespace="default")
        kept = await remove_finalizer(env.client, current, FINALIZER)
        assert kept["metadata"]["finalizers"] == ["other.io/x"]


async def test_removing_the_last_finalizer_of_a_terminating_object_deletes_it():
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await ensure_finalizer(env.client, await env.client.create(role("r")), FINALIZER)
        terminating = await env.client.delete(rt, "r", namespace="default")
        assert terminating["metadata"]["deletionTimestamp"]
        await remove_finalizer(env.client, terminating, FINALIZER)
        with pytest.raises(errors.NotFound):
            await env.client.get(rt, "r", namespace="default")


async def test_cleanup_runs_before_the_object_is_released(autojump_clock):
    """A controller owning a finalizer on Roles deletes the role's bindings before the role goes."""
    async with open_test_env() as env:
        roles, bindings = env.scheme.by_kind("Role"), env.scheme.by_kind("RoleBinding")
        journal: list[str] = []
        attempts = [0]

        async def cleanup(obj: dict) -> None:
            attempts[0] += 1
            if attempts[0] == 1:
                raise RuntimeError("cleanup failed once")  # the object must stay meanwhile
            still_there = await env.client.get(roles, obj["metadata"]["name"], namespace="default")
            journal.append(f"cleanup while role terminating={bool(still_there['metadata']['deletionTimestamp'])}")
            for b in (await env.client.list(bindings, namespace="default")).items:
                if b["roleRef"]["name"] == obj["metadata"]["name"]:
                    await env.client.delete(bindings, b["metadata"]["name"], namespace="default")

        async def reconcile(key: ObjectKey) -> Result:
            try:
                obj = await env.client.get(roles, key.name, namespace=key.namespace)
            except errors.NotFound:
                return Result()
            await handle_finalizer(env.client, obj, FINALIZER, cleanup)
            return Result()

        manager = env.manager()
        manager.controller().for_(roles).complete(reconcile)
        await env.start(manager)
        await env.client.create(role("owner"))
        await env.client.create(binding("uses-owner", "owner"))
        await env.wait_for(roles, "owner", lambda o: o and has_finalizer(o, FINALIZER), namespace="default")
        await env.client.delete(roles, "owner", namespace="default")
        with trio.fail_after(60):
            await env.wait_for(roles, "owner", lambda o: o is None, namespace="default")
        assert journal == ["cleanup while role terminating=True"] and attempts[0] == 2
        assert (await env.client.list(bindings, namespace="default")).items == []


async def test_finalizer_helpers_work_on_typed_objects():
    async with open_test_env() as env:
        created = await env.client.create(models.Role(metadata=models.ObjectMeta(name="typed", namespace="default")))
        assert not has_finalizer(created, FINALIZER) and not is_terminating(created)
        added = await ensure_finalizer(env.client, created, FINALIZER)
        assert isinstance(added, models.Role) and added.metadata.finalizers == [FINALIZER]
        assert has_finalizer(added, FINALIZER)
        await env.client.delete(models.Role, "typed", namespace="default")
        terminating = await env.client.get(models.Role, "typed", namespace="default")
        assert is_terminating(terminating)
        cleaned: list[str] = []

        async def cleanup(obj: models.Role) -> None:
            cleaned.append(obj.metadata.name)

        await handle_finalizer(env.client, terminating, FINALIZER, cleanup)
        assert cleaned == ["typed"]
        with pytest.raises(errors.NotFound):
            await env.client.get(models.Role, "typed", namespace="default")


async def test_a_cleanup_returning_a_result_keeps_the_finalizer_and_the_reconcile_returns_it(autojump_clock):
    """Cleanup says "not done yet" with Result(requeue_after=5): the Role stays, the key comes back in 5 s."""
    async with open_test_env() as env:
        roles = env.scheme.by_kind("Role")
        calls: list[float] = []
        outcomes: list[object] = []

        async def cleanup(obj: dict) -> Result | None:
            calls.append(trio.current_time())
            still_there = await env.client.get(roles, obj["metadata"]["name"], namespace="default")
            assert has_finalizer(still_there, FINALIZER)  # kept while the cleanup waits
            return Result(requeue_after=5) if trio.current_time() - calls[0] < 10 else None

        async def reconcile(key: ObjectKey) -> Result | None:
            try:
                obj = await env.client.get(roles, key.name, namespace=key.namespace)
            except errors.NotFound:
                return None
            outcome = await handle_finalizer(env.client, obj, FINALIZER, cleanup)
            if is_terminating(obj):
                outcomes.append(outcome)
            return outcome if isinstance(outcome, Result) else None

        manager = env.manager()
        manager.controller().for_(roles).complete(reconcile)
        await env.start(manager)
        await env.client.create(role("waits"))
        await env.wait_for(roles, "waits", lambda o: o and has_finalizer(o, FINALIZER), namespace="default")
        await env.client.delete(roles, "waits", namespace="default")
        with trio.fail_after(60):
            await env.wait_for(roles, "waits", lambda o: o is None, namespace="default")
        # Called on the delete's events, then every 5 s until done at 10 s; the Role stayed meanwhile.
        assert sorted({round(t - calls[0]) for t in calls}) == [0, 5, 10]
        assert outcomes[:-1] == [Result(requeue_after=5)] * (len(calls) - 1)
        assert isinstance(outcomes[-1], dict) and not outcomes[-1]["metadata"].get("finalizers")  # as written


async def test_a_cleanup_returning_an_empty_result_is_done_and_releases_the_finalizer():
    """`Result()` is a reconcile's "nothing more": a cleanup returning it is done, as one returning None (it
    kept the finalizer and returned the Result, which asks for no run: the object stayed for good)."""
    async with open_test_env(controllers=False) as env:
        roles = env.scheme.by_kind("Role")
        obj = await ensure_finalizer(env.client, await env.client.create(role("done")), FINALIZER)
        await env.client.delete(roles, "done", namespace="default")
        terminating = await env.client.get(roles, "done", namespace="default")

        async def cleanup(obj: dict) -> Result:
            return Result()

        released = await handle_finalizer(env.client, terminating, FINALIZER, cleanup)
        assert isinstance(released, dict) and not has_finalizer(released, FINALIZER)
        with pytest.raises(errors.NotFound):
            await env.client.get(roles, "done", namespace="default")
        assert obj["metadata"]["finalizers"] == [FINALIZER]
