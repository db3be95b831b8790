"""The pytest-trio harness users test their controllers with: the built-in controllers run in it
(unless turned off), its aggregated roles are filled when it opens, and it serves any API domain."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
import trio

from runtime.machinery import errors
from runtime.client.interface import ObjectKey
from runtime.server.rbac.aggregation import aggregate_rules, same_rules
from runtime.server.rbac.user import UserInfo
from controllers import aggregation
from runtime.controller.testing import TestEnv, open_test_env, wait_aggregated
from runtime.controller.testing import miniplane_controllers, miniplane_domain, miniplane_env  # noqa: F401  (the fixtures)
from tests.support.crds import GROUP, widget, widget_crd

WIDGET = f"widgets.{GROUP}"
ALICE = UserInfo("alice", groups=("system:authenticated",))
AGGREGATED = ("admin", "edit", "view")
ROOT = Path(__file__).resolve().parents[3]


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


# ---- what the built-in controllers do, and what does not happen without them ----------------------

def is_established(crd: dict[str, Any] | None) -> bool:
    return any(c["type"] == "Established" and c["status"] == "True"
               for c in ((crd or {}).get("status") or {}).get("conditions") or [])


async def holds_within(wait: Callable[[], Awaitable[Any]], seconds: float = 5.0) -> bool:
    """Whether `wait()` returns within `seconds` (trio's clock: instant under `autojump_clock`)."""
    with trio.move_on_after(seconds):
        await wait()
        return True
    return False


async def crd_established(env: TestEnv) -> bool:
    await env.client.create(widget_crd(env.scheme.domain))
    return await holds_within(lambda: env.wait_for(env.scheme.by_kind("CustomResourceDefinition"), WIDGET,
                                                   is_established))


async def namespace_deleted(env: TestEnv) -> bool:
    namespaces = env.scheme.by_kind("Namespace")
    await env.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    await env.client.delete(namespaces, "doomed")
    return await holds_within(lambda: env.wait_for(namespaces, "doomed", lambda o: o is None))


async def dependent_collected(env: TestEnv) -> bool:
    roles, cluster_roles = env.scheme.by_kind("Role"), env.scheme.by_kind("ClusterRole")
    owner = await env.client.create({"apiVersion": cluster_roles.api_version, "kind": "ClusterRole",
                                     "metadata": {"name": "owner"}, "rules": []})
    ref = {"apiVersion": owner["apiVersion"], "kind": "ClusterRole", "name": "owner",
           "uid": owner["metadata"]["uid"]}
    await env.client.create({"apiVersion": roles.api_version, "kind": "Role", "rules": [],
                             "metadata": {"name": "dependent", "namespace": "default", "ownerReferences": [ref]}})
    await env.client.delete(cluster_roles, "owner")
    return await holds_within(lambda: env.wait_for(roles, "dependent", lambda o: o is None, namespace="default"))


async def aggregated_roles_filled(env: TestEnv) -> bool:
    """Whether admin, edit and view hold, now, the rules their aggregation gives (and some)."""
    roles = (await env.client.list(env.scheme.by_kind("ClusterRole"))).items
    by_name = {r["metadata"]["name"]: r for r in roles}
    return all(by_name[n].get("rules") and same_rules(by_name[n]["rules"], aggregate_rules(by_name[n], roles))
               for n in AGGREGATED)


async def admin_binding_grants(env: TestEnv) -> bool:
    """Whether alice, bound to `admin` in `default`, may list its roles."""
    bindings = env.scheme.by_kind("RoleBinding")
    await env.client.create({
        "apiVersion": bindings.api_version, "kind": "RoleBinding",
        "metadata": {"name": "alice-admin", "namespace": "default"},
        "roleRef": {"apiGroup": bindings.group, "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": bindings.group}]})
    try:
        await env.client_as(ALICE).list(env.scheme.by_kind("Role"), namespace="default")
    except errors.Forbidden:
        return False
    return True


async def test_the_aggregated_roles_are_filled_when_the_env_opens():
    async with open_test_env() as env:
        assert env.controllers is not None and env.controllers.leading
        assert await aggregated_roles_filled(env)
        assert await admin_binding_grants(env)


async def test_wait_aggregated_returns_at_the_aggregation_fixed_point(autojump_clock):
    async with open_test_env(controllers=False) as env:
        manager = env.manager()
        aggregation.setup(manager)
        await env.start(manager)
        with trio.fail_after(5):
            await wait_aggregated(env.client)
        assert await aggregated_roles_filled(env)


async def test_the_env_establishes_crds_and_serves_their_resources(autojump_clock):
    async with open_test_env() as env:
        assert await crd_established(env)
        created = await env.client.create(widget("w", "default"))
        assert created["spec"]["maxSize"] == 10  # the schema's default: the kind is served by its CRD


async def test_the_env_finishes_deleting_a_namespace(autojump_clock):
    async with open_test_env() as env:
        assert await namespace_deleted(env)


async def test_the_env_collects_a_dependent_after_its_owner_is_deleted(autojump_clock):
    async with open_test_env() as env:
        assert await dependent_collected(env)


async def test_without_controllers_nothing_establishes_deletes_collects_or_aggregates(autojump_clock):
    async with open_test_env(controllers=False) as env:
        assert not await aggregated_roles_filled(env)
        assert not await admin_binding_grants(env)
        assert not await crd_established(env)
        assert env.scheme.by_api_version_kind(f"{GROUP}/v1", "Widget") is None  # the CRD's kind is never served
        assert not await namespace_deleted(env)
        assert not await dependent_collected(env)


# ---- the API domain --------------------------------------------------------------------------------

async def test_the_domain_option_serves_kubernetes_crds(autojump_clock):
    async with open_test_env(domain="k8s.io") as env:
        assert env.scheme.by_kind("CustomResourceDefinition").api_version == "apiextensions.k8s.io/v1"
        assert await crd_established(env)
        assert (await env.client.create(widget("w", "default")))["apiVersion"] == f"{GROUP}/v1"


@pytest.mark.parametrize("miniplane_domain", ["k8s.io"])
async def test_the_fixture_serves_the_domain_miniplane_domain_names(miniplane_domain, miniplane_env, autojump_clock):
    assert miniplane_env.scheme.domain == "k8s.io"
    assert await crd_established(miniplane_env)


@pytest.mark.parametrize("miniplane_controllers", [False])
async def test_the_fixture_runs_no_controllers_when_miniplane_controllers_is_false(
        miniplane_controllers, miniplane_env, autojump_clock):
    assert miniplane_env.controllers is None
    assert not await aggregated_roles_filled(miniplane_env)
    assert not await namespace_deleted(miniplane_env)


def test_importing_the_harness_loads_no_controllers():
    # runtime imports nothing of controllers (docs/design.md): the env imports them by name when it opens.
    script = "import sys, runtime.controller.testing; print(sorted(m for m in sys.modules if m.split('.')[0] == 'controllers'))"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_suite_that_imports_only_miniplane_env_gets_the_default_options(tmp_path):
    # A user's conftest that imports the one fixture it uses: its options default, not "fixture not found".
    (tmp_path / "test_user_suite.py").write_text(
        "from runtime.controller.testing import miniplane_env  # noqa: F401\n\n"
        "async def test_env(miniplane_env):\n"
        "    assert miniplane_env.scheme.domain == 'svc.io'\n"
        "    assert miniplane_env.controllers is not None\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "trio_mode=true",
                          str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "1 passed" in out.stdout, out.stdout + out.stderr
