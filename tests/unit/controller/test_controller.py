"""Reconciler rules: keys not events, backoff on errors, TerminalError, requeue_after, predicates, mapping."""

from __future__ import annotations

import pytest
import trio

from runtime.client.interface import ObjectKey
from runtime.controller.controller import (
    Result, TerminalError, all_of, any_of, enqueue_owner, generation_changed, labels_changed,
)
from runtime.controller.informer import ObjectEvent
from runtime.controller.testing import open_test_env
from tests.support.crds import widget_crd

RBAC = "rbac.authorization.svc.io/v1"


def role(name: str, ns: str = "default", labels: dict | None = None, verbs: tuple[str, ...] = ("get",)) -> dict:
    meta: dict = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": RBAC, "kind": "Role", "metadata": meta,
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": list(verbs)}]}


class Recorder:
    """A reconciler that records (time, key) and can be told to fail or requeue."""

    def __init__(self, outcomes: list | None = None) -> None:
        self.calls: list[tuple[float, ObjectKey]] = []
        self.outcomes = list(outcomes or [])
        self.changed = trio.Event()

    async def reconcile(self, key: ObjectKey) -> Result | None:
        self.calls.append((trio.current_time(), key))
        self.changed.set()
        self.changed = trio.Event()
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def wait_calls(self, n: int) -> None:
        with trio.fail_after(3600):
            while len(self.calls) < n:
                await self.changed.wait()

    def keys(self) -> list[str]:
        return [str(k) for _, k in self.calls]


async def test_reconcile_gets_the_key_of_each_object_not_the_event(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        await env.client.create(role("existing"))
        recorder = Recorder()
        manager = env.manager()
        manager.controller().for_(rt).complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("new"))
        await recorder.wait_calls(2)
        assert sorted(recorder.keys()) == ["default/existing", "default/new"]
        assert all(isinstance(k, ObjectKey) for _, k in recorder.calls)


async def test_complete_returns_the_reconciler_unchanged_for_use_as_a_decorator(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()

        @manager.controller("decorated").for_(env.scheme.by_kind("Role")).complete
        async def reconcile(key: ObjectKey) -> None:
            return None

        assert reconcile.__name__ == "reconcile" and "decorated" in manager.controllers


async def test_failing_reconcile_is_retried_with_exponential_backoff(autojump_clock):
    async with open_test_env() as env:
        recorder = Recorder([RuntimeError("boom")] * 4)
        manager = env.manager()
        manager.controller().for_(env.scheme.by_kind("Role")).complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("flaky"))
        await recorder.wait_calls(5)
        times = [t for t, _ in recorder.calls]
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert gaps == pytest.approx([0.005, 0.01, 0.02, 0.04])  # client-go's 5 ms doubling
        stats = manager.controllers["role"].statistics()
        assert stats.errors == 4 and stats.reconciles == 5


async def test_success_resets_the_backoff_of_the_key(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        recorder = Recorder([RuntimeError("1"), RuntimeError("2"), None, RuntimeError("3"), None])
        manager = env.manager()
        manager.controller().for_(rt).complete(recorder.reconcile)
        await env.start(manager)
        created = await env.client.create(role("reset"))
        await recorder.wait_calls(3)
        await env.client.update(dict(created, rules=role("reset", verbs=("list",))["rules"]))
        await recorder.wait_calls(5)
        times = [t for t, _ in recorder.calls]
        assert times[4] - times[3] == pytest.approx(0.005)


async def test_terminal_error_is_not_retried_until_the_next_event(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        recorder = Recorder([TerminalError("cannot ever work")])
        manager = env.manager()
        manager.controller().for_(rt).complete(recorder.reconcile)
        await env.start(manager)
        created = await env.client.create(role("hopeless"))
        await recorder.wait_calls(1)
        await trio.sleep(3600)
        assert len(recorder.calls) == 1
        assert manager.controllers["role"].statistics().terminal_errors == 1
        await env.client.update(dict(created, rules=role("hopeless", verbs=("list",))["rules"]))
        await recorder.wait_calls(2)


async def test_requeue_after_runs_the_key_again_after_the_delay(autojump_clock):
    async with open_test_env() as env:
        recorder = Recorder([Result(requeue_after=30.0)])
        manager = env.manager()
        manager.controller().for_(env.scheme.by_kind("Role")).complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("timed"))
        await recorder.wait_calls(2)
        assert recorder.calls[1][0] - recorder.calls[0][0] == pytest.approx(30.0)


async def test_generation_changed_predicate_drops_metadata_only_updates(autojump_clock):
    # On a kind that counts generations (a CRD: spec changes); RBAC kinds have none, so the
    # predicate would drop every update of theirs, as controller-runtime's does.
    async with open_test_env(controllers=False) as env:
        rt = env.scheme.by_kind("CustomResourceDefinition")
        recorder = Recorder()
        manager = env.manager()
        manager.controller().for_(rt, generation_changed).complete(recorder.reconcile)
        await env.start(manager)
        created = await env.client.create(widget_crd(env.registry.scheme.domain))
        name = created["metadata"]["name"]
        await recorder.wait_calls(1)
        await env.client.patch(rt, name, {"metadata": {"labels": {"only": "labels"}}})
        await trio.sleep(60)
        assert len(recorder.calls) == 1
        current = await env.client.get(rt, name)
        await env.client.update(dict(current, spec=dict(current["spec"], scope="Cluster")))
        await recorder.wait_calls(2)


def test_stock_predicates_compare_old_and_new_objects():
    old = {"metadata": {"name": "a", "generation": 1, "labels": {"x": "1"}}}
    same_gen = {"metadata": {"name": "a", "generation": 1, "labels": {"x": "2"}}}
    assert labels_changed(ObjectEvent("MODIFIED", same_gen, old))
    assert not generation_changed(ObjectEvent("MODIFIED", same_gen, old))
    assert generation_changed(ObjectEvent("ADDED", same_gen))
    assert any_of(generation_changed, labels_changed)(ObjectEvent("MODIFIED", same_gen, old))
    assert not all_of(generation_changed, labels_changed)(ObjectEvent("MODIFIED", same_gen, old))


async def test_with_predicate_applies_to_every_source(autojump_clock):
    async with open_test_env() as env:
        recorder = Recorder()
        manager = env.manager()
        manager.controller().for_(env.scheme.by_kind("Role")) \
            .with_predicate(lambda e: (e.obj["metadata"].get("labels") or {}).get("pick") == "me") \
            .complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("ignored"))
        await env.client.create(role("picked", labels={"pick": "me"}))
        await recorder.wait_calls(1)
        await trio.sleep(60)
        assert recorder.keys() == ["default/picked"]


async def test_a_key_is_never_reconciled_by_two_workers_at_once(autojump_clock):
    async with open_test_env() as env:
        rt = env.scheme.by_kind("Role")
        running: dict[ObjectKey, int] = {}
        overlaps: list[ObjectKey] = []
        peak = [0]
        calls: list[ObjectKey] = []

        async def reconcile(key: ObjectKey) -> None:
            running[key] = running.get(key, 0) + 1
            if running[key] > 1:
                overlaps.append(key)
            peak[0] = max(peak[0], sum(running.values()))
            calls.append(key)
            await trio.sleep(10)
            running[key] -= 1

        manager = env.manager()
        manager.controller().for_(rt).with_options(max_concurrent_reconciles=3).complete(reconcile)
        await env.start(manager)
        for name in ("a", "b", "c"):
            await env.client.create(role(name))
        await trio.sleep(1)
        await env.client.patch(rt, "a", {"metadata": {"labels": {"v": "2"}}}, namespace="default")
        await trio.sleep(60)
        assert not overlaps and peak[0] == 3
        assert [str(k) for k in calls].count("default/a") == 2  # re-added while running: runs again after


async def test_owns_maps_an_owned_object_to_its_controller_owner(autojump_clock):
    async with open_test_env() as env:
        roles, bindings = env.scheme.by_kind("Role"), env.scheme.by_kind("RoleBinding")
        owner = await env.client.create(role("owner"))
        recorder = Recorder()
        manager = env.manager()
        manager.controller().for_(roles).owns(bindings).complete(recorder.reconcile)
        await env.start(manager)
        await recorder.wait_calls(1)
        ref = {"apiVersion": RBAC, "kind": "Role", "name": "owner", "uid": owner["metadata"]["uid"],
               "controller": True}
        await env.client.create({"apiVersion": RBAC, "kind": "RoleBinding",
                                 "metadata": {"name": "owned", "namespace": "default", "ownerReferences": [ref]},
                                 "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "Role",
                                             "name": "owner"},
                                 "subjects": [{"kind": "User", "name": "u"}]})
        await recorder.wait_calls(2)
        assert recorder.keys() == ["default/owner", "default/owner"]


def test_enqueue_owner_ignores_non_controller_and_other_kind_references():
    from runtime.machinery.scheme import Scheme
    roles = Scheme().by_kind("Role")
    obj = {"metadata": {"namespace": "ns", "ownerReferences": [
        {"apiVersion": RBAC, "kind": "Role", "name": "a", "controller": True},
        {"apiVersion": RBAC, "kind": "Role", "name": "b"},
        {"apiVersion": "other.io/v1", "kind": "Role", "name": "c", "controller": True},
        {"apiVersion": RBAC, "kind": "ClusterRole", "name": "d", "controller": True}]}}
    assert enqueue_owner(roles)(obj) == [ObjectKey("ns", "a")]
    assert enqueue_owner(roles, only_controller=False)(obj) == [ObjectKey("ns", "a"), ObjectKey("ns", "b")]


async def test_watches_maps_both_the_old_and_the_new_object(autojump_clock):
    async with open_test_env() as env:
        roles = env.scheme.by_kind("Role")
        recorder = Recorder()

        def by_label(obj: dict) -> list[ObjectKey]:
            target = (obj["metadata"].get("labels") or {}).get("target")
            return [ObjectKey("", target)] if target else []

        manager = env.manager()
        manager.controller("targets").watches(roles, by_label, labels_changed).complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("pointer", labels={"target": "first"}))
        await recorder.wait_calls(1)
        await env.client.patch(roles, "pointer", {"metadata": {"labels": {"target": "second"}}},
                               namespace="default")
        await recorder.wait_calls(3)
        assert recorder.keys()[0] == "first" and sorted(recorder.keys()[1:]) == ["first", "second"]


async def test_requeue_runs_the_key_again_with_the_rate_limiters_backoff(autojump_clock):
    async with open_test_env() as env:
        recorder = Recorder([Result(requeue=True)] * 3)
        manager = env.manager()
        manager.controller().for_(env.scheme.by_kind("Role")).complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("again"))
        await recorder.wait_calls(4)
        times = [t for t, _ in recorder.calls]
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert gaps == pytest.approx([0.005, 0.01, 0.02])  # not forgotten: the backoff grows as on errors
        stats = manager.controllers["role"].statistics()
        assert stats.errors == 0 and stats.reconciles == 4


async def test_requeue_after_wins_over_requeue(autojump_clock):
    async with open_test_env() as env:
        recorder = Recorder([Result(requeue=True, requeue_after=30.0)])
        manager = env.manager()
        manager.controller().for_(env.scheme.by_kind("Role")).complete(recorder.reconcile)
        await env.start(manager)
        await env.client.create(role("timed-too"))
        await recorder.wait_calls(2)
        assert recorder.calls[1][0] - recorder.calls[0][0] == pytest.approx(30.0)
