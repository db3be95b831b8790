"""Namespace lifecycle over HTTPS: finalizer and phase, termination, subresources, cascade deletion.

The registry's side runs on the plain `server` fixture (no controllers, so a
terminating namespace stays terminating); the cascade needs the built-in
controllers (`start_in_process(..., controllers=True)`).
"""

from __future__ import annotations

import trio

from runtime.client.kubeconfig import load_kubeconfig
from runtime.client.http import open_http_client
from runtime.controller.testing import wait_for_object
from tests.support.server import start_in_process

NS = "/api/v1/namespaces"
HOLD = "example.com/hold"
RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]


def namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def role(server, name: str, ns: str, finalizers: list[str] | None = None) -> dict:
    meta: dict = {"name": name, "namespace": ns}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "Role", "metadata": meta,
            "rules": RULES}


def binding(server, name: str, ns: str) -> dict:
    return {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": f"rbac.authorization.{server.domain}", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}]}


def condition(ns: dict | None, ctype: str) -> dict:
    return next((c for c in ((ns or {}).get("status") or {}).get("conditions") or [] if c["type"] == ctype), {})


async def create(c, url: str, body: dict) -> dict:
    r = await c.post(url, json=body)
    assert r.status_code == 201, r.text
    return r.json()


# ---- the registry's side -------------------------------------------------------------------------

async def test_a_new_namespace_gets_the_kubernetes_finalizer_and_phase_active(server):
    async with server.client() as c:
        created = await create(c, NS, namespace("fresh"))
        assert created["spec"]["finalizers"] == ["kubernetes"] and created["status"] == {"phase": "Active"}


async def test_delete_marks_the_namespace_terminating_and_keeps_it(server):
    async with server.client() as c:
        await create(c, NS, namespace("doomed"))
        r = await c.delete(f"{NS}/doomed")
        assert r.status_code == 200
        ns = r.json()
        assert ns["kind"] == "Namespace" and ns["metadata"]["deletionTimestamp"]
        assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
        assert (await c.get(f"{NS}/doomed")).json()["status"]["phase"] == "Terminating"


async def test_creating_content_in_a_terminating_namespace_is_403(server):
    async with server.client() as c:
        await create(c, NS, namespace("doomed"))
        await c.delete(f"{NS}/doomed")
        r = await c.post(f"{server.rbac}/namespaces/doomed/roles", json=role(server, "late", "doomed"))
        assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
        assert r.json()["message"] == (f'roles.rbac.authorization.{server.domain} "late" is forbidden: unable to '
                                       "create new content in namespace doomed because it is being terminated")


async def test_a_second_delete_of_a_terminating_namespace_returns_it_unchanged(server):
    async with server.client() as c:
        await create(c, NS, namespace("doomed"))
        first = (await c.delete(f"{NS}/doomed")).json()
        again = await c.delete(f"{NS}/doomed")
        assert again.status_code == 200 and again.json() == first


async def test_the_status_subresource_writes_only_status(server):
    async with server.client() as c:
        ns = await create(c, NS, namespace("st"))
        ns["status"] = {"phase": "Active", "conditions": [{"type": "Custom", "status": "True"}]}
        ns["metadata"]["labels"] = {"ignored": "yes"}
        r = await c.put(f"{NS}/st/status", json=ns)
        assert r.status_code == 200, r.text
        assert r.json()["status"]["conditions"] == [{"type": "Custom", "status": "True"}]
        assert "ignored" not in r.json()["metadata"].get("labels", {})


async def test_the_finalize_subresource_releases_a_terminating_namespace(server):
    async with server.client() as c:
        await create(c, NS, namespace("fin"))
        ns = (await c.delete(f"{NS}/fin")).json()
        ns["spec"]["finalizers"] = []
        r = await c.put(f"{NS}/fin/finalize", json=ns)
        assert r.status_code == 200, r.text
        assert (await c.get(f"{NS}/fin")).status_code == 404


async def test_foreground_on_a_namespace_adds_foreground_deletion_to_its_metadata(server):
    async with server.client() as c:
        await create(c, NS, namespace("fg"))
        r = await c.request("DELETE", f"{NS}/fg", json={"propagationPolicy": "Foreground"})
        assert r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert r.json()["spec"]["finalizers"] == ["kubernetes"]


async def test_orphan_dependents_false_on_a_namespace_is_foreground_and_answers_202(server):
    async with server.client() as c:
        await create(c, NS, namespace("od"))
        r = await c.request("DELETE", f"{NS}/od", json={"orphanDependents": False})
        assert r.status_code == 202 and r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]


# ---- with the built-in controllers ---------------------------------------------------------------

async def test_a_deleted_namespace_is_emptied_then_goes_and_nothing_else_is_touched(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c:
        for ns in ("gone", "kept"):
            await create(c, NS, namespace(ns))
            for i in range(3):
                await create(c, f"{server.rbac}/namespaces/{ns}/roles", role(server, f"r{i}", ns))
                await create(c, f"{server.rbac}/namespaces/{ns}/rolebindings", binding(server, f"b{i}", ns))
        kept = (await c.get(f"{server.rbac}/namespaces/kept/roles")).json()["items"]
        await c.delete(f"{NS}/gone")
        async with open_http_client(load_kubeconfig(server.kubeconfig), transport=server.transport) as client:
            with trio.fail_after(30):
                await wait_for_object(client, client.scheme.by_kind("Namespace"), "gone", lambda o: o is None)
        for resource in ("roles", "rolebindings"):
            assert (await c.get(f"{server.rbac}/namespaces/gone/{resource}")).json()["items"] == []
        assert (await c.get(f"{server.rbac}/namespaces/kept/roles")).json()["items"] == kept


async def test_content_finalizers_show_as_progress_conditions_until_released(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c, open_http_client(load_kubeconfig(server.kubeconfig), transport=server.transport) as client:
        namespaces = client.scheme.by_kind("Namespace")
        await create(c, NS, namespace("held"))
        await create(c, f"{server.rbac}/namespaces/held/roles", role(server, "sticky", "held", [HOLD]))
        await create(c, f"{server.rbac}/namespaces/held/roles", role(server, "plain", "held"))
        await c.delete(f"{NS}/held")
        with trio.fail_after(30):
            ns = await wait_for_object(client, namespaces, "held",
                                       lambda o: condition(o, "NamespaceFinalizersRemaining").get("status") == "True")
        assert condition(ns, "NamespaceFinalizersRemaining")["message"] == \
            f"Some finalizers are remaining: {HOLD} in 1 resource instances"
        assert condition(ns, "NamespaceContentRemaining")["message"] == \
            f"Some resources are remaining: roles.rbac.authorization.{server.domain} has 1 resource instances"
        sticky = (await c.get(f"{server.rbac}/namespaces/held/roles/sticky")).json()
        sticky["metadata"]["finalizers"] = []
        assert (await c.put(f"{server.rbac}/namespaces/held/roles/sticky", json=sticky)).status_code == 200
        with trio.fail_after(30):
            await wait_for_object(client, namespaces, "held", lambda o: o is None)


async def test_a_namespace_deleted_in_foreground_goes_once_both_finalizers_are_released(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c, open_http_client(load_kubeconfig(server.kubeconfig), transport=server.transport) as client:
        await create(c, NS, namespace("fg"))
        await create(c, f"{server.rbac}/namespaces/fg/roles", role(server, "r", "fg"))
        await c.request("DELETE", f"{NS}/fg", json={"propagationPolicy": "Foreground"})
        with trio.fail_after(30):
            await wait_for_object(client, client.scheme.by_kind("Namespace"), "fg", lambda o: o is None)
