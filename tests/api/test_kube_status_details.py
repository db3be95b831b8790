"""A Status carries `details` wherever kube-apiserver's constructor sets them, even empty (issue 35).

The `NotFound` of a served group version's handler (go-restful finds no route:
`NewGenericServerResponse(404, ...)` with an empty GroupResource) is
`"details": {}`; so are the 405 of a route without the method and the 403 of a
non-resource path (`NewForbidden` with an empty GroupResource). Clients read
`status.details.name` and must find the object.
"""

from __future__ import annotations

import pytest
import yaml

from runtime.machinery.serializer import cbor
from runtime.machinery.serializer import protobuf
from runtime.server.featuregates import DEFAULT_GATES
from tests.support.crds import GROUP, crd_path, established, watch_crd, widget, widget_crd, widgets_path
from tests.support.rbac import token_file
from tests.support.server import Server, start_in_process

PB = "application/vnd.kubernetes.protobuf"


def failure(message: str, reason: str, code: int) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "details": {}, "code": code}


NOT_FOUND = failure("the server could not find the requested resource", "NotFound", 404)


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path),
                                  feature_gates={**DEFAULT_GATES, "CBORServingAndStorage": True})


async def test_an_unknown_resource_of_a_served_group_version_is_404_with_empty_details(srv):
    async with srv.client() as c:
        for path in ("/api/v1/namespaces/default/replicationcontrollers", "/api/v1/podtemplates", f"{srv.rbac}/nope",
                     f"{srv.rbac}/namespaces/default/nope/x", "/api/v1/namespaces/default/serviceaccounts/a/nope"):
            r = await c.get(path)
            assert r.status_code == 404 and r.json() == NOT_FOUND, (path, r.text)
            assert r.text.index('"details":{}') < r.text.index('"code":404')  # kube's field order


async def test_the_empty_details_are_kept_in_every_media_type(srv):
    async with srv.client() as c:
        as_yaml = await c.get("/api/v1/namespaces/default/replicationcontrollers", headers={"Accept": "application/yaml"})
        as_cbor = await c.get("/api/v1/namespaces/default/replicationcontrollers", headers={"Accept": "application/cbor"})
        as_pb = await c.get("/api/v1/namespaces/default/replicationcontrollers", headers={"Accept": PB})
    assert yaml.safe_load(as_yaml.text) == NOT_FOUND
    assert cbor.decode(as_cbor.content) == NOT_FOUND
    assert as_pb.headers["content-type"] == PB
    assert protobuf.decode(as_pb.content)["details"] == {}
    assert b"\x2a\x00" in as_pb.content  # field 5 (details), present and empty


async def test_a_method_a_route_does_not_take_is_405_with_empty_details(srv):
    async with srv.client() as c:
        r = await c.put(f"{srv.rbac}/clusterroles", json={})
    assert r.status_code == 405
    assert r.json() == failure("the server does not allow this method on the requested resource",
                               "MethodNotAllowed", 405)


async def test_a_forbidden_non_resource_path_is_403_with_empty_details(srv):
    async with srv.client(token="bob-token") as bob:
        r = await bob.get("/nowhere")
    assert r.status_code == 403
    assert r.json() == failure('forbidden: User "bob" cannot get path "/nowhere"', "Forbidden", 403)


async def test_a_create_refused_while_its_crd_terminates_is_405_naming_group_and_resource(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c:
        await c.post(crd_path(), json=widget_crd())
        await established(c)
        held = widget("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(widgets_path(), json=held)
        await c.delete(f"{crd_path()}/widgets.{GROUP}")
        await watch_crd(c, lambda o: o is not None and o["metadata"].get("deletionTimestamp"))
        r = await c.post(widgets_path(), json=widget("late"))
        assert r.status_code == 405
        assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": "create not allowed while custom resource definition is terminating",
                            "reason": "MethodNotAllowed", "details": {"group": GROUP, "kind": "widgets"},
                            "code": 405}
        await c.patch(f"{widgets_path()}/held", json={"metadata": {"finalizers": None}},
                      headers={"Content-Type": "application/merge-patch+json"})
