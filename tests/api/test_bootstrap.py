"""The bootstrap RBAC policy: created at first start, reconciled at every start.

Reconciliation adds what is missing (rules, subjects, labels, whole objects)
and removes nothing a user added; an object annotated
`rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone. The
restart tests run two sqlite-backed servers one after the other on the same
data directory (the first one's nursery is cancelled before the second starts).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
import trio

from runtime.server.rbac import load_bootstrap_policy
from tests.support.rbac import ok
from tests.support.server import Server, start_in_process

LABEL = "kubernetes.io/bootstrapping=rbac-defaults"
#: The stores whose objects outlive a server.
PERSISTENT = pytest.mark.stores("sqlite", "etcd")


async def run_server(tmp_path, step: Callable[[Server], Awaitable[None]], **options) -> None:
    """Start a server on `tmp_path`, run `step` against it, then stop it."""
    async with trio.open_nursery() as nursery:
        srv = await start_in_process(nursery, tmp_path, **options)
        await step(srv)
        nursery.cancel_scope.cancel()


async def get_cluster(srv: Server, kind: str, name: str) -> dict:
    async with srv.client() as admin:
        return await ok(await admin.get(f"{srv.rbac}/{kind}/{name}"))


async def put_cluster(srv: Server, kind: str, obj: dict) -> dict:
    async with srv.client() as admin:
        return await ok(await admin.put(f"{srv.rbac}/{kind}/{obj['metadata']['name']}", json=obj))


async def test_first_start_creates_every_bootstrap_object_labelled_rbac_defaults(server):
    wanted = {(o["kind"], o["metadata"]["name"]) for o in load_bootstrap_policy(server.domain)}
    found = set()
    async with server.client() as admin:
        for kind, plural in (("ClusterRole", "clusterroles"), ("ClusterRoleBinding", "clusterrolebindings")):
            listed = await ok(await admin.get(f"{server.rbac}/{plural}", params={"labelSelector": LABEL}))
            found |= {(kind, i["metadata"]["name"]) for i in listed["items"]}
    assert found == wanted


async def test_bootstrap_policy_follows_the_api_domain(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    role = await get_cluster(srv, "clusterroles", "system:basic-user")
    assert role["apiVersion"] == "rbac.authorization.k8s.io/v1"
    assert {g for r in role["rules"] for g in r["apiGroups"]} == {"authorization.k8s.io", "authentication.k8s.io"}


@PERSISTENT
async def test_restart_keeps_a_rule_a_user_added(tmp_path):
    extra = {"verbs": ["get"], "nonResourceURLs": ["/metrics"]}

    async def add(srv):
        role = await get_cluster(srv, "clusterroles", "system:discovery")
        role["rules"].append(extra)
        await put_cluster(srv, "clusterroles", role)

    async def check(srv):
        assert extra in (await get_cluster(srv, "clusterroles", "system:discovery"))["rules"]

    await run_server(tmp_path, add)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_restores_a_deleted_bootstrap_rule(tmp_path):
    async def strip(srv):
        role = await get_cluster(srv, "clusterroles", "system:public-info-viewer")
        role["rules"] = [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]
        await put_cluster(srv, "clusterroles", role)
        async with srv.client(token=None) as anonymous:
            assert (await anonymous.get("/healthz")).status_code == 403

    async def check(srv):
        rules = (await get_cluster(srv, "clusterroles", "system:public-info-viewer"))["rules"]
        urls = {u for r in rules for u in r.get("nonResourceURLs", [])}
        assert urls == {"/healthz", "/livez", "/readyz", "/version", "/version/"}
        async with srv.client(token=None) as anonymous:
            assert (await anonymous.get("/healthz")).status_code == 200

    await run_server(tmp_path, strip)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_recreates_a_deleted_bootstrap_object(tmp_path):
    async def delete(srv):
        async with srv.client() as admin:
            await ok(await admin.delete(f"{srv.rbac}/clusterrolebindings/system:discovery"))
            await ok(await admin.delete(f"{srv.rbac}/clusterroles/system:discovery"))

    async def check(srv):
        assert (await get_cluster(srv, "clusterrolebindings", "system:discovery"))["subjects"][0]["name"] == \
            "system:authenticated"
        assert (await get_cluster(srv, "clusterroles", "system:discovery"))["rules"]

    await run_server(tmp_path, delete)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_recreates_a_deleted_system_namespace(tmp_path):
    async def delete(srv):
        async with srv.client() as admin:
            await ok(await admin.delete("/api/v1/namespaces/kube-node-lease"))
            with trio.fail_after(30):  # the namespace controller finalizes it
                while (await admin.get("/api/v1/namespaces/kube-node-lease")).status_code != 404:
                    await trio.sleep(0.05)

    async def check(srv):
        async with srv.client() as admin:
            got = await admin.get("/api/v1/namespaces/kube-node-lease")
            assert got.status_code == 200 and got.json()["status"]["phase"] == "Active"

    await run_server(tmp_path, delete, controllers=True)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_restores_removed_subjects_and_keeps_added_ones(tmp_path):
    added = {"apiGroup": "rbac.authorization.svc.io", "kind": "User", "name": "alice"}

    async def edit(srv):
        binding = await get_cluster(srv, "clusterrolebindings", "system:public-info-viewer")
        binding["subjects"] = [added]
        await put_cluster(srv, "clusterrolebindings", binding)

    async def check(srv):
        subjects = (await get_cluster(srv, "clusterrolebindings", "system:public-info-viewer"))["subjects"]
        assert added in subjects
        assert {s["name"] for s in subjects} == {"alice", "system:authenticated", "system:unauthenticated"}

    await run_server(tmp_path, edit)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_keeps_user_labels_and_restores_bootstrap_labels(tmp_path):
    async def relabel(srv):
        role = await get_cluster(srv, "clusterroles", "system:basic-user")
        role["metadata"]["labels"] = {"team": "platform"}
        await put_cluster(srv, "clusterroles", role)

    async def check(srv):
        labels = (await get_cluster(srv, "clusterroles", "system:basic-user"))["metadata"]["labels"]
        assert labels == {"team": "platform", "kubernetes.io/bootstrapping": "rbac-defaults"}

    await run_server(tmp_path, relabel)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_leaves_an_object_with_autoupdate_false_alone(tmp_path):
    async def protect(srv):
        role = await get_cluster(srv, "clusterroles", "system:public-info-viewer")
        role["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        role["rules"] = [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]
        await put_cluster(srv, "clusterroles", role)

    async def check(srv):
        rules = (await get_cluster(srv, "clusterroles", "system:public-info-viewer"))["rules"]
        assert rules == [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]

    await run_server(tmp_path, protect)
    await run_server(tmp_path, check)


@PERSISTENT
async def test_restart_rebinds_a_bootstrap_binding_whose_role_ref_was_changed(tmp_path):
    async def rebind(srv):
        async with srv.client() as admin:
            await ok(await admin.delete(f"{srv.rbac}/clusterrolebindings/system:discovery"))
            await ok(await admin.post(f"{srv.rbac}/clusterrolebindings", json={
                "metadata": {"name": "system:discovery"},
                "roleRef": {"apiGroup": f"rbac.authorization.{srv.domain}", "kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "User", "name": "alice"}]}), 201)

    async def check(srv):
        binding = await get_cluster(srv, "clusterrolebindings", "system:discovery")
        assert binding["roleRef"]["name"] == "system:discovery"
        # as Kubernetes' reconciler: the stored subjects stay, the missing ones are added
        assert [s["name"] for s in binding["subjects"]] == ["alice", "system:authenticated"]

    await run_server(tmp_path, rebind)
    await run_server(tmp_path, check)
