"""The pytest-trio harness users test their controllers with."""

from __future__ import annotations

import trio

from runtime.client import ObjectKey
from runtime.testing import miniplane_env  # noqa: F401  (the fixture)


async def test_the_fixture_serves_the_bootstrap_policy_and_default_namespace(miniplane_env):
    env = miniplane_env
    assert (await env.client.get(env.scheme.by_kind("ClusterRole"), "cluster-admin"))["rules"]
    assert (await env.client.get(env.scheme.by_kind("Namespace"), "default"))["status"]["phase"] == "Active"


async def test_a_user_controller_runs_in_the_environment(miniplane_env, autojump_clock):
    env = miniplane_env
    namespaces = env.scheme.by_kind("Namespace")
    manager = env.manager()

    async def label(key: ObjectKey) -> None:
        ns = await env.client.get(namespaces, key.name)
        if (ns["metadata"].get("labels") or {}).get("seen") != "yes":
            await env.client.patch(namespaces, key.name, {"metadata": {"labels": {"seen": "yes"}}})

    manager.controller().for_(namespaces).complete(label)
    await env.start(manager)
    await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}})
    with trio.fail_after(60):
        await env.wait_for(namespaces, "fresh", lambda o: o and o["metadata"].get("labels", {}).get("seen"))
