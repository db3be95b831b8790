"""Namespace lifecycle: cascade deletion of content, progress conditions, then the namespace goes."""

from __future__ import annotations

import trio

from controllers import namespace as nsctl
from controllers.builtin import FIELD_MANAGER, builtin_manager
from runtime.controller.finalizers import remove_finalizer
from runtime.controller.testing import ADMIN, open_test_env

RBAC = "rbac.authorization.svc.io/v1"


def role(name: str, ns: str, finalizers: list[str] | None = None) -> dict:
    meta: dict = {"name": name, "namespace": ns}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": RBAC, "kind": "Role", "metadata": meta,
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]}


def binding(name: str, ns: str) -> dict:
    return {"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}]}


async def make_namespace(env, name: str) -> None:
    await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def condition(ns: dict | None, ctype: str) -> dict:
    for c in ((ns or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == ctype:
            return c
    return {}


async def test_deleting_a_namespace_removes_its_roles_and_bindings_then_itself(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=FIELD_MANAGER)))
        await make_namespace(env, "team")
        for i in range(3):
            await env.client.create(role(f"r{i}", "team"))
            await env.client.create(binding(f"b{i}", "team"))
        await env.client.create(role("elsewhere", "default"))
        deleted = await env.client.delete(env.scheme.by_kind("Namespace"), "team")
        assert deleted["status"]["phase"] == "Terminating"
        with trio.fail_after(60):
            await env.wait_for(env.scheme.by_kind("Namespace"), "team", lambda o: o is None)
        for kind in ("Role", "RoleBinding"):
            assert (await env.client.list(env.scheme.by_kind(kind), namespace="team")).items == []
        assert [r["metadata"]["name"] for r in
                (await env.client.list(env.scheme.by_kind("Role"), namespace="default")).items] == ["elsewhere"]


async def test_content_finalizers_hold_the_namespace_and_are_reported_in_conditions(autojump_clock):
    async with open_test_env(controllers=False) as env:
        namespaces, roles = env.scheme.by_kind("Namespace"), env.scheme.by_kind("Role")
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=FIELD_MANAGER)))
        await make_namespace(env, "held")
        await env.client.create(role("sticky", "held", ["example.com/hold"]))
        await env.client.create(role("plain", "held"))
        await env.client.delete(namespaces, "held")
        with trio.fail_after(60):
            ns = await env.wait_for(namespaces, "held", lambda o: condition(o, nsctl.FINALIZERS_REMAINING))
        assert condition(ns, nsctl.FINALIZERS_REMAINING) | {"lastTransitionTime": ""} == {
            "type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizerRemain",
            "message": "Some finalizers are remaining: example.com/hold in 1 resource instances",
            "lastTransitionTime": ""}
        assert condition(ns, nsctl.CONTENT_REMAINING)["message"] == \
            "Some resources are remaining: roles.rbac.authorization.svc.io has 1 resource instances"
        assert condition(ns, nsctl.CONTENT_FAILURE)["status"] == "False"
        assert condition(ns, nsctl.DISCOVERY_FAILURE)["reason"] == "ResourcesDiscovered"
        assert ns["spec"]["finalizers"] == ["kubernetes"] and ns["status"]["phase"] == "Terminating"
        assert [r["metadata"]["name"] for r in (await env.client.list(roles, namespace="held")).items] == ["sticky"]
        sticky = await env.client.get(roles, "sticky", namespace="held")
        await remove_finalizer(env.client, sticky, "example.com/hold")
        with trio.fail_after(60):
            await env.wait_for(namespaces, "held", lambda o: o is None)


async def test_a_restart_in_the_middle_of_a_cascade_finishes_it(autojump_clock):
    async with open_test_env(controllers=False) as env:
        namespaces, roles = env.scheme.by_kind("Namespace"), env.scheme.by_kind("Role")
        await make_namespace(env, "midway")
        await env.client.create(role("sticky", "midway", ["example.com/hold"]))
        await env.client.create(binding("b", "midway"))

        first = builtin_manager(env.client_as(ADMIN, field_manager=FIELD_MANAGER))
        scope = trio.CancelScope()

        async def run_first(task_status=trio.TASK_STATUS_IGNORED) -> None:
            with scope:
                await first.run(task_status=task_status)
        await env.nursery.start(run_first)
        await env.client.delete(namespaces, "midway")
        with trio.fail_after(60):
            await env.wait_for(namespaces, "midway", lambda o: condition(o, nsctl.CONTENT_REMAINING).get("status")
                               == "True")
        scope.cancel()
        await trio.sleep(15)  # the first manager is gone
        sticky = await env.client.get(roles, "sticky", namespace="midway")
        await remove_finalizer(env.client, sticky, "example.com/hold")
        await trio.sleep(60)
        assert (await env.client.get(namespaces, "midway"))["spec"]["finalizers"] == ["kubernetes"]
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=FIELD_MANAGER)))
        with trio.fail_after(60):
            await env.wait_for(namespaces, "midway", lambda o: o is None)


async def test_live_namespaces_and_their_content_are_left_alone(autojump_clock):
    async with open_test_env(controllers=False) as env:
        await env.start(builtin_manager(env.client_as(ADMIN, field_manager=FIELD_MANAGER)))
        await make_namespace(env, "live")
        await env.client.create(role("r", "live"))
        await trio.sleep(60)
        assert (await env.client.get(env.scheme.by_kind("Role"), "r", namespace="live"))["metadata"]["name"] == "r"
        assert condition(await env.client.get(env.scheme.by_kind("Namespace"), "live"),
                         nsctl.CONTENT_REMAINING) == {}


def test_conditions_keep_their_transition_time_unless_the_status_changes():
    wanted = nsctl.deletion_conditions({"roles.x": 1}, {}, [])
    first, changed = nsctl.merge_conditions([], wanted, "T1")
    assert changed and all(c["lastTransitionTime"] == "T1" for c in first)
    again, changed = nsctl.merge_conditions(first, wanted, "T2")
    assert not changed and again == first
    cleared, changed = nsctl.merge_conditions(first, nsctl.deletion_conditions({}, {}, []), "T3")
    remaining = next(c for c in cleared if c["type"] == nsctl.CONTENT_REMAINING)
    failure = next(c for c in cleared if c["type"] == nsctl.CONTENT_FAILURE)
    assert changed and remaining == {"type": nsctl.CONTENT_REMAINING, "status": "False",
                                     "reason": "ContentRemoved", "message": "All content successfully removed",
                                     "lastTransitionTime": "T3"}
    assert failure["lastTransitionTime"] == "T1"


def test_delete_failures_become_a_content_failure_condition():
    conditions = nsctl.deletion_conditions({}, {}, ["b failed", "a failed"])
    failure = next(c for c in conditions if c["type"] == nsctl.CONTENT_FAILURE)
    assert failure == {"type": nsctl.CONTENT_FAILURE, "status": "True", "reason": "ContentDeletionFailed",
                       "message": "Failed to delete all resource types, 2 remaining: a failed, b failed"}
    assert [c["type"] for c in conditions] == list(nsctl.CONDITION_TYPES)
