"""Events over HTTP: core/v1 and events.k8s.io/v1 served, selected by field, printed, in Protobuf, and recorded by a client."""

from __future__ import annotations

from typing import Any

import trio

from runtime.client.interface import Client
from runtime.client.http import open_http_client
from runtime.machinery.serializer import protobuf
from runtime.controller.recorder import EventBroadcaster
from runtime.client.kubeconfig import load_kubeconfig
from tests.support.event_objects import core_event, events_v1_event
from tests.support.server import start_in_process

EVENTS = "/api/v1/namespaces/ci/events"
TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


async def namespace(c, name: str = "ci") -> None:
    r = await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert r.status_code == 201, r.text


async def create(c, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = await c.post(path, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def names(listed: dict[str, Any]) -> list[str]:
    return sorted(item["metadata"]["name"] for item in listed["items"])


async def test_core_events_are_served_namespaced_with_short_name_ev(server):
    async with server.client() as c:
        resources = (await c.get("/api/v1")).json()["resources"]
    (events,) = [r for r in resources if r["name"] == "events"]
    assert events["namespaced"] is True and events["kind"] == "Event" and events["shortNames"] == ["ev"]
    assert sorted(events["verbs"]) == ["create", "delete", "deletecollection", "get", "list", "patch", "update",
                                       "watch"]


async def test_events_k8s_io_is_served_under_the_api_domain(nursery, tmp_path, server):
    async with server.client() as c:
        assert "events.svc.io" in [g["name"] for g in (await c.get("/apis")).json()["groups"]]
    k8s = await start_in_process(nursery, tmp_path / "k8s", api_domain="k8s.io")
    async with k8s.client() as c:
        (events,) = (await c.get("/apis/events.k8s.io/v1")).json()["resources"]
    assert (events["name"], events["namespaced"], events["kind"]) == ("events", True, "Event")


async def test_get_events_field_selector_involved_object_name(server):
    async with server.client() as c:
        await namespace(c)
        await create(c, EVENTS, core_event("x.1", involved="x"))
        await create(c, EVENTS, core_event("y.1", involved="y"))
        await create(c, EVENTS, core_event("x.2", involved="x", type="Warning"))
        assert names((await c.get(EVENTS, params={"fieldSelector": "involvedObject.name=x"})).json()) == ["x.1", "x.2"]
        assert names((await c.get("/api/v1/events", params={
            "fieldSelector": "involvedObject.name=x,involvedObject.kind=Role,type=Warning"})).json()) == ["x.2"]
        assert names((await c.get(EVENTS, params={"fieldSelector": "source=role-controller,reason!=Synced"})).json()) \
            == []
        bad = await c.get(EVENTS, params={"fieldSelector": "spec.x=1"})
    assert bad.status_code == 400 and bad.json()["message"] == "field label not supported: spec.x"


async def test_describe_finds_the_events_of_a_cluster_scoped_object_across_namespaces(server):
    # kubectl describe of a cluster-scoped object asks every namespace with an empty involvedObject.namespace.
    async with server.client() as c:
        await create(c, "/api/v1/namespaces/default/events",
                     core_event("view.1", "default", involved="view", involved_namespace=""))
        found = (await c.get("/api/v1/events", params={
            "fieldSelector": "involvedObject.name=view,involvedObject.namespace=,involvedObject.kind=Role"})).json()
    assert names(found) == ["view.1"]


async def test_an_invalid_event_is_422_in_kubernetes_words(server):
    async with server.client() as c:
        await namespace(c)
        r = await c.post(EVENTS, json=core_event("x.1", involved_namespace="other"))
    assert r.status_code == 422
    assert r.json()["message"] == ('Event "x.1" is invalid: involvedObject.namespace: Invalid value: "other": '
                                   "does not match event.namespace")


async def test_events_k8s_io_validates_strictly(server):
    path = "/apis/events.svc.io/v1/namespaces/ci/events"
    async with server.client() as c:
        await namespace(c)
        ok = await c.post(path, json={**events_v1_event("a.1"), "apiVersion": "events.svc.io/v1"})
        bad = await c.post(path, json={**events_v1_event("a.2", type="Info", deprecatedCount=3),
                                       "apiVersion": "events.svc.io/v1"})
        selected = (await c.get(path, params={"fieldSelector": "regarding.name=reader,reportingController="
                                                              "example.com/role-controller"})).json()
    assert ok.status_code == 201 and bad.status_code == 422
    assert [cause["field"] for cause in bad.json()["details"]["causes"]] == ["type", "count"]
    assert names(selected) == ["a.1"]


async def test_get_events_prints_last_seen_type_reason_object_message(server):
    async with server.client() as c:
        await namespace(c)
        await create(c, EVENTS, core_event("x.1", involved="x", message="did it"))
        table = (await c.get(EVENTS, headers={"Accept": TABLE})).json()
    assert [(col["name"], col["priority"]) for col in table["columnDefinitions"]] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1), ("Source", 1), ("Message", 0),
        ("First Seen", 1), ("Count", 1), ("Name", 1)]
    (row,) = table["rows"]
    assert row["cells"][1:7] == ["Normal", "Synced", "role/x", "", "role-controller", "did it"]
    assert row["cells"][8:] == [1, "x.1"]


async def test_core_events_travel_in_protobuf(server):
    media = "application/vnd.svc.protobuf"
    async with server.client() as c:
        await namespace(c)
        created = await c.post(EVENTS, content=protobuf.encode(core_event("x.1")), headers={"Content-Type": media})
        got = await c.get(f"{EVENTS}/x.1", headers={"Accept": media})
    assert created.status_code == 201, created.text
    assert got.headers["content-type"] == media
    event = protobuf.decode(got.content)
    assert (event["kind"], event["involvedObject"]["name"], event["count"]) == ("Event", "reader", 1)


async def watch_for_event(client: Client, involved: str, namespace: str, check) -> dict[str, Any]:
    """The first event about `involved` for which `check` holds: listed, then watched (no polling)."""
    rt = client.scheme.by_kind("Event")
    selector = f"involvedObject.name={involved}"
    page = await client.list(rt, namespace=namespace, field_selector=selector)
    for item in page.items:
        if check(item):
            return item
    async with client.watch(rt, namespace=namespace, field_selector=selector,
                            resource_version=page.resource_version) as stream:
        async for event in stream:
            if event.type in ("ADDED", "MODIFIED") and check(event.object):
                return event.object
    raise AssertionError("the watch ended")


async def test_the_recorder_writes_through_the_http_client(server, nursery):
    async with server.client() as c:
        await namespace(c)
    async with open_http_client(load_kubeconfig(server.kubeconfig), transport=server.transport) as client:
        role = await client.create({"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
                                    "metadata": {"name": "reader", "namespace": "ci"}, "rules": []})
        broadcaster = EventBroadcaster(client)
        await nursery.start(broadcaster.run)
        recorder = broadcaster.recorder("role-controller")
        recorder.event(role, "Normal", "Synced", "rules aggregated")
        with trio.fail_after(30):  # created first (else, on a slower store, both would go in one create)
            await watch_for_event(client, "reader", "ci", lambda e: e.get("count") == 1)
        recorder.event(role, "Normal", "Synced", "rules aggregated")
        with trio.fail_after(30):
            event = await watch_for_event(client, "reader", "ci", lambda e: e.get("count") == 2)
            while broadcaster.statistics().patched < 1:
                await trio.sleep(0.01)  # on etcd a write's watch event may come before its answer
    assert event["involvedObject"]["uid"] == role["metadata"]["uid"] and event["message"] == "rules aggregated"
    assert broadcaster.statistics().created == 1 and broadcaster.statistics().patched == 1
