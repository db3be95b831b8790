"""Custom objects live as built-in ones do: namespace cascade deletion, garbage collection by ownerReferences (custom
owners and custom dependents, with built-in ones either side, Foreground too), defaults of a schema changed later on
read, the scale subresource named as Kubernetes names it, CBOR when its gate is on; and the built-in controllers
run out of process follow kinds created after they started."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from controllers.cli import run_controllers
from runtime.client.interface import Client
from runtime.machinery.serializer import cbor
from runtime.server.featuregates import DEFAULT_GATES
from runtime.client.kubeconfig import load_kubeconfig
from runtime.client.local import LocalClient
from runtime.controller.testing import ADMIN, wait_for_object
from tests.support.crds import GROUP, crd_path, established, watch_crd, widget, widget_crd, widgets_path
from tests.support.server import Server, start_in_process, start_server

CRDS, WIDGETS = crd_path(), widgets_path()
#: How long the controllers may take to collect, on a loaded test machine.
DEADLINE = 30


@pytest.fixture
async def crd_server(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, controllers=True)


async def serve_widgets(server: Server) -> None:
    async with server.client() as c:
        assert (await c.post(crd_path(server.domain), json=widget_crd(server.domain))).status_code == 201
        await established(c, domain=server.domain)


def admin(server: Server) -> LocalClient:
    """An in-process admin client of `server` (its scheme is the server's: custom kinds included)."""
    return LocalClient(server.registry, ADMIN, field_manager="test")


def owner_ref(owner: dict[str, Any], *, block: bool = False) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
            **({"blockOwnerDeletion": True} if block else {})}


def owned(obj: dict[str, Any], owner: dict[str, Any], *, block: bool = False) -> dict[str, Any]:
    obj["metadata"]["ownerReferences"] = [owner_ref(owner, block=block)]
    return obj


def role(server: Server, name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace}, "rules": []}


async def gone(client: Client, kind: Any, name: str, namespace: str = "") -> None:
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, kind, name, lambda o: o is None, namespace=namespace)


async def test_deleting_a_namespace_deletes_the_custom_objects_in_it(crd_server):
    await serve_widgets(crd_server)
    async with crd_server.client() as c:
        await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
        for name in ("w1", "w2"):
            assert (await c.post(widgets_path("a"), json=widget(name))).status_code == 201
        held = widget("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(widgets_path("a"), json=held)
        await c.post(WIDGETS, json=widget("bystander"))
        assert (await c.delete("/api/v1/namespaces/a")).status_code == 200
        client = admin(crd_server)
        namespaces = client.scheme.by_kind("Namespace")
        with trio.fail_after(DEADLINE):
            ns = await wait_for_object(client, namespaces, "a", lambda o: any(
                x["type"] == "NamespaceFinalizersRemaining" and x["status"] == "True"
                for x in (o or {}).get("status", {}).get("conditions", [])))
        remaining = {x["type"]: x for x in ns["status"]["conditions"]}
        assert remaining["NamespaceContentRemaining"]["message"] == \
            f"Some resources are remaining: widgets.{GROUP} has 1 resource instances"
        assert [o["metadata"]["name"] for o in (await c.get(widgets_path("a"))).json()["items"]] == ["held"]
        await c.patch(f"{widgets_path('a')}/held", json={"metadata": {"finalizers": None}},
                      headers={"Content-Type": "application/merge-patch+json"})
        await gone(client, namespaces, "a")
        assert (await c.get(widgets_path("a"))).json()["items"] == []
        assert (await c.get(f"{WIDGETS}/bystander")).status_code == 200


async def test_a_custom_object_whose_custom_owner_is_deleted_is_garbage_collected(crd_server):
    await serve_widgets(crd_server)
    client = admin(crd_server)
    widgets = client.scheme.by_kind("Widget", GROUP)
    owner = await client.create(widget("owner", "default"))
    await client.create(owned(widget("dependent", "default"), owner))
    await client.create(widget("unrelated", "default"))
    await client.delete(widgets, "owner", namespace="default")
    await gone(client, widgets, "dependent", "default")
    assert (await client.get(widgets, "unrelated", namespace="default"))["metadata"]["name"] == "unrelated"


async def test_built_in_and_custom_objects_are_collected_across_each_other(crd_server):
    await serve_widgets(crd_server)
    client = admin(crd_server)
    widgets, roles = client.scheme.by_kind("Widget", GROUP), client.scheme.by_kind("Role")
    # A Role owned by a Widget, and a Widget owned by a Role.
    widget_owner = await client.create(widget("widget-owner", "default"))
    await client.create(owned(role(crd_server, "role-dependent"), widget_owner))
    role_owner = await client.create(role(crd_server, "role-owner"))
    await client.create(owned(widget("widget-dependent", "default"), role_owner))
    await client.delete(widgets, "widget-owner", namespace="default")
    await client.delete(roles, "role-owner", namespace="default")
    await gone(client, roles, "role-dependent", "default")
    await gone(client, widgets, "widget-dependent", "default")


async def test_a_custom_owner_deleted_in_foreground_goes_after_its_blocking_dependents(crd_server):
    await serve_widgets(crd_server)
    client = admin(crd_server)
    widgets = client.scheme.by_kind("Widget", GROUP)
    owner = await client.create(widget("owner", "default"))
    held = owned(widget("dependent", "default"), owner, block=True)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(held)
    deleted = await client.delete(widgets, "owner", namespace="default", propagation_policy="Foreground")
    assert deleted["metadata"]["finalizers"] == ["foregroundDeletion"]
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, widgets, "dependent", lambda o: o and o["metadata"].get("deletionTimestamp"),
                              namespace="default")
    assert (await client.get(widgets, "owner", namespace="default"))["metadata"]["deletionTimestamp"]
    await client.patch(widgets, "dependent", {"metadata": {"finalizers": None}}, namespace="default")
    await gone(client, widgets, "owner", "default")


async def test_a_default_added_to_the_schema_later_shows_on_read_and_is_no_spec_change(crd_server):
    await serve_widgets(crd_server)
    async with crd_server.client() as c:
        stored = (await c.post(WIDGETS, json=widget("w"))).json()
        assert "color" not in stored["spec"]
        crd = (await c.get(f"{CRDS}/widgets.{GROUP}")).json()
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["color"][
            "default"] = "blue"
        updated = await c.put(f"{CRDS}/widgets.{GROUP}", json=crd)
        assert updated.status_code == 200
        # The server applies a CRD change as its cache sees it, before any watcher does.
        rv = updated.json()["metadata"]["resourceVersion"]
        await watch_crd(c, lambda o: o is not None and o["metadata"]["resourceVersion"] == rv)
        read = (await c.get(f"{WIDGETS}/w")).json()
        assert read["spec"]["color"] == "blue"
        listed = (await c.get(WIDGETS)).json()["items"]
        assert listed[0]["spec"]["color"] == "blue"
        label = await c.patch(f"{WIDGETS}/w", json={"metadata": {"labels": {"a": "b"}}},
                              headers={"Content-Type": "application/merge-patch+json"})
        assert label.json()["spec"]["color"] == "blue" and label.json()["metadata"]["generation"] == 1


async def test_the_scale_subresource_is_an_autoscaling_v1_scale_in_both_discoveries(crd_server):
    await serve_widgets(crd_server)
    async with crd_server.client() as c:
        legacy = {r["name"]: r for r in (await c.get(f"/apis/{GROUP}/v1")).json()["resources"]}
        assert (legacy["widgets/scale"]["group"], legacy["widgets/scale"]["version"],
                legacy["widgets/scale"]["kind"]) == ("autoscaling", "v1", "Scale")
        assert legacy["widgets/status"]["kind"] == "Widget" and "group" not in legacy["widgets/status"]
        aggregated = (await c.get("/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})).json()
        [group] = [g for g in aggregated["items"] if g["metadata"]["name"] == GROUP]
        subresources = {s["subresource"]: s for s in group["versions"][0]["resources"][0]["subresources"]}
        assert subresources["scale"]["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        assert subresources["status"]["responseKind"] == {"group": GROUP, "version": "v1", "kind": "Widget"}


async def test_custom_objects_travel_in_cbor_when_the_gate_is_on(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True,
                                    feature_gates={**DEFAULT_GATES, "CBORServingAndStorage": True})
    await serve_widgets(server)
    async with server.client() as c:
        created = await c.post(WIDGETS, content=cbor.encode(widget("w", color="red")),
                               headers={"Content-Type": "application/cbor", "Accept": "application/cbor"})
        assert created.status_code == 201 and created.headers["Content-Type"] == "application/cbor"
        assert cbor.decode(created.content)["spec"] == {"size": 1, "maxSize": 10, "color": "red"}
        read = await c.get(f"{WIDGETS}/w", headers={"Accept": "application/cbor"})
        assert cbor.decode(read.content)["metadata"]["name"] == "w"


async def test_built_in_controllers_out_of_process_collect_and_cascade_kinds_made_after_they_started(
        nursery, tmp_path):
    server = await start_server(nursery, tmp_path)  # no controllers in the server: they run over HTTPS
    config = load_kubeconfig(server.kubeconfig)
    manager = await nursery.start(run_controllers, config, [])
    assert manager.scheme.by_kind("Widget", GROUP) is None
    await serve_widgets(server)  # established by the out-of-process CRD controller
    client = manager.client  # its scheme follows the server's CRDs
    widgets = client.scheme.by_kind("Widget", GROUP)
    assert widgets is not None and widgets.plural == "widgets"
    owner = await client.create(widget("owner", "default"))
    await client.create(owned(widget("dependent", "default"), owner))
    await client.delete(widgets, "owner", namespace="default")
    await gone(client, widgets, "dependent", "default")
    namespaces = client.scheme.by_kind("Namespace")
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    await client.create(widget("w", "a"))
    await client.delete(namespaces, "a")
    await gone(client, namespaces, "a")
    assert (await client.list(widgets, namespace="a")).items == []


async def test_a_crd_whose_names_another_crd_of_its_group_holds_is_not_established(crd_server):
    await serve_widgets(crd_server)
    rival = widget_crd()
    rival["metadata"]["name"] = f"gizmos.{GROUP}"
    rival["spec"]["names"] = {"plural": "gizmos", "kind": "Gizmo", "shortNames": ["wd"]}  # wd: the widgets'
    async with crd_server.client() as c:
        assert (await c.post(CRDS, json=rival)).status_code == 201
        refused = await watch_crd(c, lambda o: o is not None and any(
            x["type"] == "NamesAccepted" for x in (o.get("status") or {}).get("conditions") or []),
            name=f"gizmos.{GROUP}")
        conditions = {x["type"]: x for x in refused["status"]["conditions"]}
        assert (conditions["NamesAccepted"]["status"], conditions["NamesAccepted"]["reason"]) == \
            ("False", "NameConflict")
        assert conditions["NamesAccepted"]["message"] == "names are already in use: wd"
        assert conditions["Established"]["status"] == "False"
        assert (await c.get(f"/apis/{GROUP}/v1/namespaces/default/gizmos")).status_code == 404


async def test_a_terminating_crd_refuses_creates_until_its_objects_are_gone(crd_server):
    await serve_widgets(crd_server)
    async with crd_server.client() as c:
        held = widget("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(WIDGETS, json=held)
        deleted = await c.delete(f"{CRDS}/widgets.{GROUP}")
        assert deleted.json()["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
        terminating = {x["type"]: x for x in deleted.json()["status"]["conditions"]}["Terminating"]
        assert (terminating["status"], terminating["reason"]) == ("True", "InstanceDeletionPending")
        meta = deleted.json()["metadata"]  # and marked as the generic store's markAsDeleting marks
        assert (meta["deletionGracePeriodSeconds"], meta["generation"]) == (0, 2)
        await watch_crd(c, lambda o: o is not None and o["metadata"].get("deletionTimestamp"))
        create = await c.post(WIDGETS, json=widget("late"))
        assert create.status_code == 405 and create.json()["message"] == \
            "create not allowed while custom resource definition is terminating"
        client = admin(crd_server)  # the CRD's finalizer deletes its objects; "held" stays, marked
        with trio.fail_after(DEADLINE):
            await wait_for_object(client, client.scheme.by_kind("Widget", GROUP), "held",
                                  lambda o: o and o["metadata"].get("deletionTimestamp"), namespace="default")
        await c.patch(f"{WIDGETS}/held", json={"metadata": {"finalizers": None}},
                      headers={"Content-Type": "application/merge-patch+json"})
        await watch_crd(c, lambda o: o is None)
        assert (await c.get(WIDGETS)).status_code == 404


async def test_discovery_and_openapi_follow_a_crd_while_the_server_runs(crd_server):
    async with crd_server.client() as c:
        assert "com.example.stable.v1.Widget" not in (await c.get("/openapi/v2")).json()["definitions"]
        await serve_widgets(crd_server)
        v2 = (await c.get("/openapi/v2")).json()
        assert v2["definitions"]["com.example.stable.v1.Widget"]["properties"]["spec"]["properties"]["size"][
            "description"] == "How big the widget is."
        index = (await c.get("/openapi/v3")).json()["paths"]
        v3 = (await c.get(index[f"apis/{GROUP}/v1"]["serverRelativeURL"])).json()
        assert "com.example.stable.v1.Widget" in v3["components"]["schemas"]
        assert f"/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets/{{name}}/scale" in v3["paths"]
        assert GROUP in [g["name"] for g in (await c.get("/apis")).json()["groups"]]
        await c.delete(f"{CRDS}/widgets.{GROUP}")
        await watch_crd(c, lambda o: o is None)
        assert f"apis/{GROUP}/v1" not in (await c.get("/openapi/v3")).json()["paths"]
        assert "com.example.stable.v1.Widget" not in (await c.get("/openapi/v2")).json()["definitions"]
        assert (await c.get(f"/apis/{GROUP}/v1")).status_code == 404


async def test_a_schema_change_applies_to_later_writes_not_to_stored_objects(crd_server):
    await serve_widgets(crd_server)
    async with crd_server.client() as c:
        await c.post(WIDGETS, json=widget("big", size=9))
        crd = (await c.get(f"{CRDS}/widgets.{GROUP}")).json()
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"][
            "maximum"] = 5
        updated = await c.put(f"{CRDS}/widgets.{GROUP}", json=crd)
        rv = updated.json()["metadata"]["resourceVersion"]
        await watch_crd(c, lambda o: o is not None and o["metadata"]["resourceVersion"] == rv)
        assert (await c.get(f"{WIDGETS}/big")).json()["spec"]["size"] == 9  # stored objects stay
        refused = await c.post(WIDGETS, json=widget("new", size=6))
        assert refused.status_code == 422 and refused.json()["details"]["causes"][0]["field"] == "spec.size"
        assert "should be less than or equal to 5" in refused.json()["message"]
