"""CRD conversion webhooks over HTTP: a real HTTPS webhook (tests/support/webhookserver.py, the CRD's caBundle)
converts between v1 (`spec.host` + `spec.port`, the storage version) and v2 (`spec.address: "host:port"`).

Each test checks what the server sent (every ConversionReview: uid, desiredAPIVersion, objects) and what it
stored (always v1). The faults (a webhook that is down, answers garbage, or a wrong uid) are answered 500 in
kube's words, as kube-apiserver does. Memory store only: the conversion is the registry's, not the store's.
On trio's real clock: the webhook answers over real sockets.
"""

from __future__ import annotations

import copy
import json
import socket

import pytest
import trio

from runtime.machinery.storedobject import loads_json
from tests.support.crds import crd_path, established
from tests.support.server import Server, start_in_process
from tests.support.webhookserver import WebhookReply, start_webhook_server

pytestmark = pytest.mark.stores("memory")

GROUP = "conv.example.com"
NAME = f"hosts.{GROUP}"
STRING, INTEGER = {"type": "string"}, {"type": "integer"}


def _path(version: str, name: str = "") -> str:
    return f"/apis/{GROUP}/{version}/namespaces/default/hosts" + (f"/{name}" if name else "")


def _version(name: str, spec: dict, storage: bool) -> dict:
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": {"type": "object", "properties": spec}}}}}


def hosts_crd(client_config: dict) -> dict:
    return {"apiVersion": "apiextensions.svc.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": NAME},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "hosts", "singular": "host", "kind": "Host", "listKind": "HostList"},
                     "versions": [_version("v1", {"host": STRING, "port": INTEGER}, True),
                                  _version("v2", {"address": STRING}, False)],
                     "conversion": {"strategy": "Webhook", "webhook": {
                         "clientConfig": client_config, "conversionReviewVersions": ["v1"]}}}}


def convert(obj: dict, desired: str) -> dict:
    """The webhook's conversion: v1 host+port <-> v2 address."""
    out = copy.deepcopy(obj)
    spec = out.get("spec") or {}
    if desired.endswith("/v2") and "address" not in spec and "host" in spec:
        spec = {"address": f"{spec['host']}:{spec['port']}"}
    elif desired.endswith("/v1") and "address" in spec:
        host, _, port = spec["address"].rpartition(":")
        spec = {"host": host, "port": int(port)}
    out["spec"], out["apiVersion"] = spec, desired
    return out


async def converter(request) -> dict:
    review = request.json()["request"]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": review["uid"], "result": {"status": "Success"},
                         "convertedObjects": [convert(o, review["desiredAPIVersion"]) for o in review["objects"]]}}


@pytest.fixture
async def server(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, controllers=True)


async def _serve_crd(server: Server, client_config: dict) -> None:
    async with server.client() as c:
        r = await c.post(crd_path(), json=hosts_crd(client_config))
        assert r.status_code == 201, r.text
        await established(c, NAME)


async def _stored_object(server: Server, name: str) -> dict:
    """The object as the store holds it (the storage version's shape)."""
    rt = next(t for t in server.registry.scheme.stored_types() if t.group == GROUP)
    entry = await server.plane.store.get(rt.storage_key("default", name))
    return loads_json(entry.value)


def _reviews(webhook) -> list[dict]:
    return [r.json() for r in webhook.requests]


async def test_objects_are_read_listed_and_written_in_the_version_asked_and_stored_in_the_storage_one(
        server, nursery):
    webhook = await start_webhook_server(nursery, converter)
    await _serve_crd(server, webhook.client_config("/convert"))
    async with server.client() as c:
        created = await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host",
                                                  "metadata": {"name": "web"}, "spec": {"host": "a", "port": 80}})
        assert created.status_code == 201, created.text
        assert webhook.requests == []  # a write in the storage version converts nothing
        shown = await c.get(_path("v2", "web"))
        assert shown.status_code == 200, shown.text
        assert shown.json()["apiVersion"] == f"{GROUP}/v2" and shown.json()["spec"] == {"address": "a:80"}
        [review] = _reviews(webhook)
        assert review["apiVersion"] == "apiextensions.k8s.io/v1" and review["kind"] == "ConversionReview"
        assert review["request"]["desiredAPIVersion"] == f"{GROUP}/v2"
        [sent] = review["request"]["objects"]
        assert sent["apiVersion"] == f"{GROUP}/v1" and sent["spec"] == {"host": "a", "port": 80}
        assert sent["metadata"]["uid"] == created.json()["metadata"]["uid"]
        updated = await c.put(_path("v2", "web"), json=dict(shown.json(), spec={"address": "b:8080"}))
        assert updated.status_code == 200, updated.text
        assert updated.json()["apiVersion"] == f"{GROUP}/v2" and updated.json()["spec"] == {"address": "b:8080"}
        stored = await _stored_object(server, "web")
        assert stored["apiVersion"] == f"{GROUP}/v1" and stored["spec"] == {"host": "b", "port": 8080}
        await c.post(_path("v2"), json={"apiVersion": f"{GROUP}/v2", "kind": "Host", "metadata": {"name": "db"},
                                        "spec": {"address": "c:5432"}})
        assert (await _stored_object(server, "db"))["spec"] == {"host": "c", "port": 5432}
        before = len(webhook.requests)
        listed = await c.get(_path("v2"))
        assert listed.status_code == 200, listed.text
        assert sorted(i["spec"]["address"] for i in listed.json()["items"]) == ["b:8080", "c:5432"]
        assert {i["apiVersion"] for i in listed.json()["items"]} == {f"{GROUP}/v2"}
        [list_review] = _reviews(webhook)[before:]  # one review for the whole list
        assert len(list_review["request"]["objects"]) == 2
        uids = [r["request"]["uid"] for r in _reviews(webhook)]
        assert len(set(uids)) == len(uids)
        crd = (await c.get(f"{crd_path()}/{NAME}")).json()
        assert crd["status"]["storedVersions"] == ["v1"]


async def test_a_watch_in_another_version_sees_converted_events(server, nursery):
    webhook = await start_webhook_server(nursery, converter)
    await _serve_crd(server, webhook.client_config("/convert"))
    async with server.client() as c:
        listed = (await c.get(_path("v2"))).json()
        params = {"watch": "1", "resourceVersion": listed["metadata"]["resourceVersion"]}
        with trio.fail_after(10):
            async with c.stream("GET", _path("v2"), params=params) as events:
                await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host",
                                                "metadata": {"name": "web"}, "spec": {"host": "a", "port": 80}})
                async for line in events.aiter_lines():
                    event = json.loads(line)
                    assert event["type"] == "ADDED"
                    assert event["object"]["apiVersion"] == f"{GROUP}/v2"
                    assert event["object"]["spec"] == {"address": "a:80"}
                    break
    assert _reviews(webhook)[-1]["request"]["desiredAPIVersion"] == f"{GROUP}/v2"


async def _fault(server: Server, client_config: dict) -> dict:
    await _serve_crd(server, client_config)
    async with server.client() as c:
        r = await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host", "metadata": {"name": "web"},
                                            "spec": {"host": "a", "port": 80}})
        assert r.status_code == 201, r.text
        with trio.fail_after(5):
            shown = await c.get(_path("v2", "web"))
        assert shown.status_code == 500
        return shown.json()


async def test_a_webhook_that_is_down_is_a_500_in_kubes_words(server):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status = await _fault(server, {"url": f"https://127.0.0.1:{port}/convert"})
    assert "reason" not in status
    assert status["message"] == (f"conversion webhook for {GROUP}/v1, Kind=Host failed: Post "
                                 f'"https://127.0.0.1:{port}/convert?timeout=30s": dial tcp 127.0.0.1:{port}: '
                                 "connect: connection refused")


async def test_a_webhook_answering_garbage_is_a_500_in_kubes_words(server, nursery):
    async def garbage(request):
        return WebhookReply(b"garbage")
    webhook = await start_webhook_server(nursery, garbage)
    status = await _fault(server, webhook.client_config("/convert"))
    assert status["message"].startswith(f"conversion webhook for {GROUP}/v1, Kind=Host failed: couldn't get "
                                        "version/kind; json parse error")


async def test_a_webhook_answering_another_uid_is_a_500_in_kubes_words(server, nursery):
    async def wrong_uid(request):
        answer = await converter(request)
        answer["response"]["uid"] = "wrong"
        return answer
    webhook = await start_webhook_server(nursery, wrong_uid)
    status = await _fault(server, webhook.client_config("/convert"))
    uid = webhook.requests[-1].json()["request"]["uid"]
    assert status["message"] == (f'conversion webhook for {GROUP}/v1, Kind=Host failed: expected response.uid="{uid}", '
                                 'got "wrong"')


async def test_a_converted_object_may_change_only_labels_and_annotations(server, nursery):
    async def renaming(request):
        answer = await converter(request)
        for obj in answer["response"]["convertedObjects"]:
            obj["metadata"]["name"] = "other"
        return answer
    webhook = await start_webhook_server(nursery, renaming)
    status = await _fault(server, webhook.client_config("/convert"))
    assert status["message"] == (f"conversion webhook for {GROUP}/v1, Kind=Host returned invalid object: must have "
                                 "the same name: web != other")


async def test_a_merge_patch_in_another_version_is_applied_to_that_version(server, nursery):
    webhook = await start_webhook_server(nursery, converter)
    await _serve_crd(server, webhook.client_config("/convert"))
    async with server.client() as c:
        await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host", "metadata": {"name": "web"},
                                        "spec": {"host": "a", "port": 80}})
        patched = await c.patch(_path("v2", "web"), json={"spec": {"address": "a:443"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        assert patched.status_code == 200, patched.text
        assert patched.json()["spec"] == {"address": "a:443"}
        assert [m["apiVersion"] for m in patched.json()["metadata"]["managedFields"]][-1] == f"{GROUP}/v2"
    assert (await _stored_object(server, "web"))["spec"] == {"host": "a", "port": 443}


async def test_stored_versions_grow_with_the_storage_version_and_stay_in_spec_versions(server, nursery):
    webhook = await start_webhook_server(nursery, converter)
    await _serve_crd(server, webhook.client_config("/convert"))
    async with server.client() as c:
        await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host", "metadata": {"name": "old"},
                                        "spec": {"host": "a", "port": 80}})
        crd = (await c.get(f"{crd_path()}/{NAME}")).json()
        crd["spec"]["versions"][0]["storage"], crd["spec"]["versions"][1]["storage"] = False, True
        moved = await c.put(f"{crd_path()}/{NAME}", json=crd)
        assert moved.status_code == 200, moved.text
        assert moved.json()["status"]["storedVersions"] == ["v1", "v2"]
        # The write returns once the server's cache holds the CRD: its kinds store v2 from now on.
        r = await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host", "metadata": {"name": "new"},
                                            "spec": {"host": "b", "port": 81}})
        assert r.status_code == 201, r.text
        assert (await _stored_object(server, "new"))["apiVersion"] == f"{GROUP}/v2"
        assert (await _stored_object(server, "new"))["spec"] == {"address": "b:81"}
        assert (await c.get(_path("v1", "old"))).json()["spec"] == {"host": "a", "port": 80}
        dropped = dict(moved.json(), spec=dict(moved.json()["spec"], versions=[moved.json()["spec"]["versions"][1]]))
        refused = await c.put(f"{crd_path()}/{NAME}", json=dropped)
        assert refused.status_code == 422
        assert 'status.storedVersions[0]: Invalid value: \\"v1\\": must appear in spec.versions' in refused.text


async def test_a_webhook_named_by_a_service_is_reached_by_the_services_tls_name(server, nursery):
    # An ExternalName Service reaches a loopback webhook (Endpoints may not hold a loopback address).
    webhook = await start_webhook_server(nursery, converter, hosts=("conv.default.svc",))
    port = int(webhook.url.rpartition(":")[2])
    async with server.client() as c:
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "conv"},
                   "spec": {"type": "ExternalName", "externalName": "localhost"}}
        assert (await c.post("/api/v1/namespaces/default/services", json=service)).status_code == 201
    await _serve_crd(server, {"service": {"namespace": "default", "name": "conv", "port": port, "path": "/convert"},
                              "caBundle": webhook.ca_bundle})
    async with server.client() as c:
        await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host", "metadata": {"name": "web"},
                                        "spec": {"host": "a", "port": 80}})
        shown = await c.get(_path("v2", "web"))
        assert shown.status_code == 200, shown.text
        assert shown.json()["spec"] == {"address": "a:80"}
    [request] = webhook.requests
    assert request.path == "/convert?timeout=30s" and request.headers["host"] == f"conv.default.svc:{port}"


async def test_a_watch_whose_conversion_fails_ends_with_an_error_event(server, nursery):
    async def failing(request):
        answer = await converter(request)
        answer["response"]["result"] = {"status": "Failure", "message": "cannot convert"}
        return answer
    webhook = await start_webhook_server(nursery, failing)
    await _serve_crd(server, webhook.client_config("/convert"))
    async with server.client() as c:
        listed = (await c.get(_path("v2"))).json()
        params = {"watch": "1", "resourceVersion": listed["metadata"]["resourceVersion"]}
        with trio.fail_after(10):
            async with c.stream("GET", _path("v2"), params=params) as events:
                await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host",
                                                "metadata": {"name": "web"}, "spec": {"host": "a", "port": 80}})
                lines = [json.loads(line) async for line in events.aiter_lines() if line]
    [event] = lines
    assert event["type"] == "ERROR" and event["object"]["code"] == 500
    assert event["object"]["message"] == f"conversion webhook for {GROUP}/v1, Kind=Host failed: cannot convert"


async def test_a_delete_in_another_version_answers_that_version_and_keeps_the_storage_one(server, nursery):
    webhook = await start_webhook_server(nursery, converter)
    await _serve_crd(server, webhook.client_config("/convert"))
    async with server.client() as c:
        await c.post(_path("v1"), json={"apiVersion": f"{GROUP}/v1", "kind": "Host",
                                        "metadata": {"name": "web", "finalizers": ["example.com/keep"]},
                                        "spec": {"host": "a", "port": 80}})
        deleting = await c.delete(_path("v2", "web"))
        assert deleting.status_code == 200, deleting.text
        assert deleting.json()["apiVersion"] == f"{GROUP}/v2" and deleting.json()["spec"] == {"address": "a:80"}
        assert deleting.json()["metadata"]["deletionTimestamp"]
        stored = await _stored_object(server, "web")
        assert stored["apiVersion"] == f"{GROUP}/v1" and stored["spec"] == {"host": "a", "port": 80}
        released = await c.patch(_path("v2", "web"), json={"metadata": {"finalizers": None}},
                                 headers={"Content-Type": "application/merge-patch+json"})
        assert released.status_code == 200, released.text
        assert (await c.get(_path("v2", "web"))).status_code == 404
