"""Built-in controllers end to end: a real server running them (`controllers=True`) and the real kubectl.

- ClusterRole aggregation: a role labelled `aggregate-to-view` reaches view,
  edit and admin within a second, and leaves them when the label goes;
- garbage collection: `kubectl delete --cascade=foreground` and `=orphan`;
- `kubectl delete namespace` of a namespace holding 500 Roles and 500
  RoleBindings, some held by finalizers a test controller releases only once
  the namespace reports them: the namespace and everything in it go, nothing
  outside is touched, and the namespace status shows the progress;
- a server restarted in the middle of that cascade (sqlite, same data dir)
  finishes it: stopped gracefully (its controllers drain, so only the held
  objects are left for the next one), or killed with SIGKILL in the middle
  of the content deletion.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
import trio

from runtime.client.kubeconfig import load_kubeconfig
from tests.support.serverproc import spawn_server
from controllers.aggregation import same_rules
from runtime.client.interface import Client
from runtime.client.http import open_http_client
from runtime.controller.finalizers import has_finalizer, remove_finalizer
from runtime.controller.testing import wait_for_object
from tests.support.server import Server, start_server
from tests.support.kubectl import Kubectl

DOMAIN = "k8s.io"
GROUP = f"rbac.authorization.{DOMAIN}"
HOLD = "example.com/hold"
WIDGETS = {"apiGroups": ["widgets.example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}
#: The acceptance bound for aggregation to reach view, edit and admin.
AGGREGATION_DEADLINE = 1.0
#: How long a namespace cascade of a thousand objects may take on a loaded test machine.
CASCADE_DEADLINE = 180.0


@pytest.fixture
async def controlled(nursery, tmp_path) -> Server:
    """A server running the built-in controllers, under `k8s.io` so kubectl's typed commands work."""
    return await start_server(nursery, tmp_path, api_domain=DOMAIN, controllers=True)


@pytest.fixture
def kubectl_c(controlled, tmp_path) -> Kubectl:
    return Kubectl(controlled, str(tmp_path / "kube-cache"))


def condition(ns: dict[str, Any] | None, ctype: str) -> dict[str, Any]:
    return next((c for c in ((ns or {}).get("status") or {}).get("conditions") or [] if c["type"] == ctype), {})


async def wait_fewer_than(client: Client, kind: str, namespace: str, bound: int, deadline: float) -> None:
    """Return once fewer than `bound` objects of `kind` are left in `namespace` (a list, then its watch)."""
    rt = client.scheme.by_kind(kind)
    with trio.fail_after(deadline):
        page = await client.list(rt, namespace=namespace)
        left = len(page.items)
        if left < bound:
            return
        async with client.watch(rt, namespace=namespace, resource_version=page.resource_version) as events:
            async for event in events:
                if event.type == "ERROR":
                    raise event.error() or RuntimeError("watch failed")
                left += {"ADDED": 1, "DELETED": -1}.get(event.type, 0)
                if left < bound:
                    return
    raise AssertionError(f"the watch of {kind} in {namespace} ended with {left} left")


async def populate(client: Client, namespace: str, roles: int, bindings: int, held: int) -> None:
    """`roles` Roles and `bindings` RoleBindings in `namespace`; the first `held` of each carry HOLD."""
    role_rt = client.scheme.by_kind("Role")

    def meta(name: str, i: int) -> dict[str, Any]:
        return {"name": name, "namespace": namespace, **({"finalizers": [HOLD]} if i < held else {})}

    limiter = trio.CapacityLimiter(8)

    async def make(obj: dict[str, Any]) -> None:
        async with limiter:
            await client.create(obj)

    async with trio.open_nursery() as nursery:
        for i in range(roles):
            nursery.start_soon(make, {"apiVersion": role_rt.api_version, "kind": "Role", "metadata": meta(f"r{i}", i),
                                      "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]})
        for i in range(bindings):
            nursery.start_soon(make, {"apiVersion": role_rt.api_version, "kind": "RoleBinding",
                                      "metadata": meta(f"b{i}", i),
                                      "roleRef": {"apiGroup": role_rt.group, "kind": "ClusterRole", "name": "view"},
                                      "subjects": [{"kind": "User", "name": f"u{i}"}]})


async def release_held(client: Client, namespace: str) -> None:
    """The test controller's cleanup: remove HOLD from every object of `namespace` carrying it."""
    for kind in ("Role", "RoleBinding"):
        for obj in (await client.list(client.scheme.by_kind(kind), namespace=namespace)).items:
            if has_finalizer(obj, HOLD):
                await remove_finalizer(client, obj, HOLD)


async def snapshot(client: Client) -> dict[str, tuple[str, str]]:
    """Every object outside team-a: kind/namespace/name -> (uid, resourceVersion)."""
    seen = {}
    for rt in client.scheme.stored_types():
        for obj in (await client.list(rt)).items:
            meta = obj["metadata"]
            if meta.get("namespace") == "team-a" or (rt.kind == "Namespace" and meta["name"] == "team-a"):
                continue
            if rt.kind == "Lease":
                continue  # leader election renews its lease on its own
            seen[f"{rt.kind}/{meta.get('namespace', '')}/{meta['name']}"] = (meta["uid"], meta["resourceVersion"])
    return seen


async def seed_outside(client: Client) -> None:
    """Objects that a cascade in team-a must not touch: another namespace's content, cluster-scoped roles."""
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
    await populate(client, "team-b", 5, 5, 0)
    await client.create({"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": "bystander"},
                         "rules": [WIDGETS]})


# ---- aggregation ---------------------------------------------------------------------------------

async def test_a_role_labelled_aggregate_to_view_reaches_view_edit_and_admin_within_a_second(controlled, kubectl_c):
    async with open_http_client(load_kubeconfig(controlled.kubeconfig)) as client:
        cluster_roles = client.scheme.by_kind("ClusterRole")
        await client.create({"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                             "metadata": {"name": "widget-reader"}, "rules": [WIDGETS]})

        aggregated = ("view", "edit", "admin")

        def has_widgets(role: dict[str, Any] | None) -> bool:
            return any(same_rules([rule], [WIDGETS]) for rule in (role or {}).get("rules") or [])

        assert not all([has_widgets(await client.get(cluster_roles, name)) for name in aggregated])
        await kubectl_c("label", "clusterrole", "widget-reader", f"{GROUP}/aggregate-to-view=true")
        with trio.fail_after(AGGREGATION_DEADLINE):
            for name in aggregated:
                await wait_for_object(client, cluster_roles, name, has_widgets)
        await kubectl_c("label", "clusterrole", "widget-reader", f"{GROUP}/aggregate-to-view-")
        with trio.fail_after(AGGREGATION_DEADLINE):
            for name in aggregated:
                await wait_for_object(client, cluster_roles, name, lambda role: not has_widgets(role))


# ---- garbage collection through kubectl ----------------------------------------------------------

async def make_owned(client: Client, owner_name: str, dependent_name: str) -> dict[str, Any]:
    """A ClusterRole and a Role in `default` it owns (blockOwnerDeletion); returns the owner."""
    owner = await client.create({"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                                 "metadata": {"name": owner_name}, "rules": [WIDGETS]})
    ref = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "name": owner_name,
           "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}
    await client.create({"apiVersion": f"{GROUP}/v1", "kind": "Role",
                         "metadata": {"name": dependent_name, "namespace": "default", "ownerReferences": [ref]},
                         "rules": [WIDGETS]})
    return owner


async def test_kubectl_delete_cascade_foreground_removes_the_dependents_first(controlled, kubectl_c):
    async with open_http_client(load_kubeconfig(controlled.kubeconfig)) as client:
        await make_owned(client, "fg-owner", "fg-dependent")
        with trio.fail_after(60):
            await kubectl_c("delete", "clusterrole", "fg-owner", "--cascade=foreground", "--timeout=60s")
        got = await kubectl_c("get", "role", "fg-dependent", "-n", "default", check=False)
        assert got.code != 0 and "NotFound" in got.err


async def test_kubectl_delete_cascade_orphan_leaves_the_dependents_without_the_owner(controlled, kubectl_c):
    async with open_http_client(load_kubeconfig(controlled.kubeconfig)) as client:
        await make_owned(client, "orphan-owner", "orphan-dependent")
        with trio.fail_after(60):
            await kubectl_c("delete", "clusterrole", "orphan-owner", "--cascade=orphan", "--timeout=60s")
        kept = json.loads((await kubectl_c("get", "role", "orphan-dependent", "-n", "default", "-o", "json")).out)
        assert "ownerReferences" not in kept["metadata"]


# ---- namespace cascade ---------------------------------------------------------------------------

async def test_kubectl_delete_namespace_removes_a_thousand_objects_and_waits_for_their_finalizers(
        controlled, kubectl_c):
    async with open_http_client(load_kubeconfig(controlled.kubeconfig)) as client:
        namespaces = client.scheme.by_kind("Namespace")
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
        await populate(client, "team-a", 500, 500, 25)
        await seed_outside(client)
        before = await snapshot(client)
        reported: list[dict[str, Any]] = []

        async def test_controller() -> None:
            # Releases the finalizers only once the namespace reports them: progress must be visible.
            ns = await wait_for_object(client, namespaces, "team-a",
                                       lambda o: condition(o, "NamespaceFinalizersRemaining").get("status") == "True")
            reported.append(ns)
            await release_held(client, "team-a")

        with trio.fail_after(CASCADE_DEADLINE):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(test_controller)
                result = await kubectl_c("delete", "namespace", "team-a", f"--timeout={int(CASCADE_DEADLINE)}s")
        assert 'namespace "team-a" deleted' in result.out

        [ns] = reported
        assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
        assert condition(ns, "NamespaceFinalizersRemaining")["message"] == \
            f"Some finalizers are remaining: {HOLD} in 50 resource instances"
        assert condition(ns, "NamespaceContentRemaining")["message"] == (
            f"Some resources are remaining: rolebindings.{GROUP} has 25 resource instances, "
            f"roles.{GROUP} has 25 resource instances")
        assert condition(ns, "NamespaceDeletionContentFailure")["status"] == "False"
        got = await kubectl_c("get", "namespace", "team-a", check=False)
        assert got.code != 0 and "NotFound" in got.err
        for kind in ("Role", "RoleBinding"):
            assert (await client.list(client.scheme.by_kind(kind), namespace="team-a")).items == []
        assert await snapshot(client) == before


async def test_a_server_restarted_in_the_middle_of_a_cascade_finishes_it(tmp_path):
    options = dict(api_domain=DOMAIN, controllers=True, store="sqlite")
    async with trio.open_nursery() as first:
        server = await start_server(first, tmp_path, **options)
        kubectl = Kubectl(server, str(tmp_path / "kube-cache"))
        async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
            await populate(client, "team-a", 500, 500, 10)
            await seed_outside(client)
            before = await snapshot(client)
        await kubectl("delete", "namespace", "team-a", "--wait=false")
        first.cancel_scope.cancel()  # mid-cascade: the held objects cannot have gone yet

    async with trio.open_nursery() as second:
        server = await start_server(second, tmp_path, **options)
        kubectl = Kubectl(server, str(tmp_path / "kube-cache"))
        async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
            namespaces = client.scheme.by_kind("Namespace")
            ns = await client.get(namespaces, "team-a")
            assert ns["status"]["phase"] == "Terminating"
            with trio.fail_after(CASCADE_DEADLINE):
                await wait_for_object(client, namespaces, "team-a",
                                      lambda o: condition(o, "NamespaceFinalizersRemaining").get("status") == "True")
                await release_held(client, "team-a")
                await wait_for_object(client, namespaces, "team-a", lambda o: o is None)
            for kind in ("Role", "RoleBinding"):
                assert (await client.list(client.scheme.by_kind(kind), namespace="team-a")).items == []
            assert await snapshot(client) == before
            listed = json.loads((await kubectl("get", "namespaces", "-o", "json")).out)
            assert "team-a" not in {item["metadata"]["name"] for item in listed["items"]}
        second.cancel_scope.cancel()


async def _spawn(data_dir: Path) -> trio.Process:
    """`miniplane serve` in a child process (sqlite, controllers on); returns once it serves."""
    proc, _url = await spawn_server(data_dir, "--store", "sqlite", "--api-domain", DOMAIN, "--controllers", "true")
    return proc


async def count(client: Client, kind: str, namespace: str) -> int:
    page = await client.list(client.scheme.by_kind(kind), namespace=namespace, limit=1)
    return len(page.items) + (page.remaining_item_count or 0)


async def test_a_server_killed_in_the_middle_of_deleting_content_finishes_after_restart(tmp_path):
    data_dir = tmp_path / "data"
    proc = await _spawn(data_dir)
    try:
        async with open_http_client(load_kubeconfig(data_dir / "admin.kubeconfig")) as client:
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
            await populate(client, "team-a", 500, 500, 10)
            await seed_outside(client)
            before = await snapshot(client)
            await client.delete(client.scheme.by_kind("Namespace"), "team-a")
            # Content deletion has begun (Roles are deleted first) but is far from done.
            await wait_fewer_than(client, "Role", "team-a", 490, CASCADE_DEADLINE)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()

    proc = await _spawn(data_dir)
    try:
        async with open_http_client(load_kubeconfig(data_dir / "admin.kubeconfig")) as client:
            namespaces = client.scheme.by_kind("Namespace")
            left = await count(client, "Role", "team-a") + await count(client, "RoleBinding", "team-a")
            assert left > 20  # more than the held objects: the new server has content to delete
            with trio.fail_after(CASCADE_DEADLINE):
                await wait_for_object(client, namespaces, "team-a",
                                      lambda o: condition(o, "NamespaceFinalizersRemaining").get("status") == "True")
                await release_held(client, "team-a")
                await wait_for_object(client, namespaces, "team-a", lambda o: o is None)
            assert await count(client, "Role", "team-a") + await count(client, "RoleBinding", "team-a") == 0
            assert await snapshot(client) == before
    finally:
        proc.kill()
        await proc.wait()
