"""`CustomKindsFollower` for a least-privilege identity: a refused CRD list is one WARNING, never a stalled start.

controller-runtime needs no rule on customresourcedefinitions; a controller
identity without one must still start its manager and reconcile (issue 40).
"""

from __future__ import annotations

import logging

import trio

from runtime.client.interface import ObjectKey
from runtime.controller.customkinds import CustomKindsFollower
from runtime.controller.testing import open_test_env
from runtime.server.rbac.user import UserInfo

__all__: list[str] = []

#: May watch namespaces, nothing about CRDs.
WATCHER = UserInfo("namespace-watcher", groups=("system:authenticated",))


async def test_a_forbidden_crd_list_stops_the_follower_with_one_warning_and_never_blocks_the_manager(
        autojump_clock, caplog):
    caplog.set_level(logging.WARNING, logger="runtime.controller.customkinds")
    async with open_test_env(domain="k8s.io") as env:
        rbac = "rbac.authorization.k8s.io/v1"
        await env.client.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": "ns-watcher"},
                                 "rules": [{"apiGroups": [""], "resources": ["namespaces"],
                                            "verbs": ["get", "list", "watch"]}]})
        await env.client.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": "ns-watcher"},
                                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                             "name": "ns-watcher"},
                                 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                               "name": WATCHER.name}]})
        manager = env.manager(user=WATCHER)
        manager.add("custom-kinds", CustomKindsFollower(manager.client), needs_leader=False)
        seen: list[str] = []

        async def reconcile(key: ObjectKey) -> None:
            seen.append(key.name)

        manager.controller("namespaces").for_(env.scheme.by_kind("Namespace")).complete(reconcile)
        with trio.fail_after(30):
            await env.start(manager)
            while "default" not in seen:
                await trio.sleep(0.1)  # trio's clock: autojump_clock makes it instant
        await trio.sleep(120)  # long past any retry backoff: the follower asked once and stopped
        records = [r for r in caplog.records if r.name == "runtime.controller.customkinds"]
        warnings = [r.getMessage() for r in records]
        assert len(warnings) == 1 and records[0].levelno == logging.WARNING, warnings
        assert "will not follow the server's custom kinds" in warnings[0]
        assert "customresourcedefinitions" in warnings[0] and "forbidden" in warnings[0]
        assert manager.statistics().runnables["custom-kinds"].restarts == 0


async def test_a_forbidden_crd_watch_stops_the_follower_too(autojump_clock, caplog):
    """May list CRDs but not watch them: the informer's watch would be refused forever (and its start never
    come); the follower says so once and steps aside."""
    caplog.set_level(logging.WARNING, logger="runtime.controller.customkinds")
    async with open_test_env(domain="k8s.io") as env:
        rbac = "rbac.authorization.k8s.io/v1"
        await env.client.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": "crd-lister"},
                                 "rules": [{"apiGroups": ["apiextensions.k8s.io"],
                                            "resources": ["customresourcedefinitions"], "verbs": ["list"]}]})
        await env.client.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": "crd-lister"},
                                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                             "name": "crd-lister"},
                                 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                               "name": WATCHER.name}]})
        manager = env.manager(user=WATCHER)
        manager.add("custom-kinds", CustomKindsFollower(manager.client), needs_leader=False)
        with trio.fail_after(30):
            await env.start(manager)
        warnings = [r.getMessage() for r in caplog.records if r.name == "runtime.controller.customkinds"]
        assert len(warnings) == 1 and "watching customresourcedefinitions was refused" in warnings[0], warnings
