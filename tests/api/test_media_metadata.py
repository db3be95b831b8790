"""PartialObjectMetadata(List): metadata only, for get, list and watch, in JSON, YAML, CBOR and Protobuf."""

from __future__ import annotations

import json

import pytest
import yaml

from runtime.machinery.serializer import cbor
from runtime.machinery.serializer import protobuf
from runtime.server.featuregates import DEFAULT_GATES
from tests.support.server import Server, start_in_process

MEDIA = {"json": "application/json", "yaml": "application/yaml",
         "protobuf": "application/vnd.kubernetes.protobuf", "cbor": "application/cbor"}
DECODE = {"json": json.loads, "yaml": yaml.safe_load, "protobuf": protobuf.decode, "cbor": cbor.decode}
POM = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POML = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, feature_gates={**DEFAULT_GATES, "CBORServingAndStorage": True})


async def make_role(srv: Server, name: str = "r") -> dict:
    async with srv.client() as c:
        r = await c.post(f"{srv.rbac}/namespaces/default/roles", json={
            "apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "Role",
            "metadata": {"name": name, "labels": {"l": "1"}},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]})
    assert r.status_code == 201
    return r.json()


@pytest.mark.parametrize("codec", list(MEDIA))
async def test_get_answers_only_the_metadata_in_every_codec(srv, codec):
    role = await make_role(srv)
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/namespaces/default/roles/r", headers={"Accept": f"{MEDIA[codec]};{POM}"})
    assert r.status_code == 200 and r.headers["content-type"] == MEDIA[codec]
    doc = DECODE[codec](r.content)
    assert doc == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": role["metadata"]}


@pytest.mark.parametrize("codec", list(MEDIA))
async def test_list_answers_a_partial_object_metadata_list_in_every_codec(srv, codec):
    role = await make_role(srv)
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/namespaces/default/roles", headers={"Accept": f"{MEDIA[codec]};{POML}"})
    doc = DECODE[codec](r.content)
    assert doc["kind"] == "PartialObjectMetadataList" and doc["apiVersion"] == "meta.k8s.io/v1"
    assert doc["metadata"]["resourceVersion"].isdigit()
    (item,) = doc["items"]
    assert item["metadata"] == role["metadata"] and "rules" not in item
    if codec != "protobuf":  # Protobuf items carry no type, as Kubernetes' typed items
        assert item["kind"] == "PartialObjectMetadata"


async def test_the_metadata_group_of_the_domain_is_answered_under_its_name(srv):
    await make_role(srv)
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/namespaces/default/roles/r",
                        headers={"Accept": "application/json;as=PartialObjectMetadata;g=meta.svc.io;v=v1"})
    assert r.json()["apiVersion"] == "meta.svc.io/v1"


async def test_the_one_object_form_on_a_list_is_a_list_and_the_list_form_alone_on_an_object_is_406(srv):
    # The spec (media types 11): as=PartialObjectMetadata on a collection answers a PartialObjectMetadataList.
    await make_role(srv)
    async with srv.client() as c:
        on_list = await c.get(f"{srv.rbac}/roles", headers={"Accept": f"application/json;{POM}"})
        on_object = await c.get(f"{srv.rbac}/namespaces/default/roles/r",
                                headers={"Accept": f"application/json;{POML}"})
    assert on_list.status_code == 200 and on_list.json()["kind"] == "PartialObjectMetadataList"
    assert on_object.status_code == 406 and "not a list" in on_object.json()["message"]


async def test_a_fallback_in_accept_serves_the_full_object_when_metadata_cannot_be(srv):
    await make_role(srv)
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/namespaces/default/roles/r", headers={
            "Accept": "application/json;as=PartialObjectMetadata;g=meta.example.com;v=v1, application/json;q=0.9"})
        alone = await c.get(f"{srv.rbac}/namespaces/default/roles/r", headers={
            "Accept": "application/json;as=PartialObjectMetadata;g=meta.example.com;v=v1"})
    assert r.status_code == 200 and r.json()["kind"] == "Role" and r.json()["rules"]
    assert alone.status_code == 406


@pytest.mark.parametrize("codec", ["json", "protobuf", "cbor"])
async def test_watch_events_carry_partial_object_metadata(srv, codec, autojump_clock):
    role = await make_role(srv)
    async with srv.client() as c:
        async with c.stream("GET", f"{srv.rbac}/namespaces/default/roles",
                            params={"watch": "1", "timeoutSeconds": "1"},
                            headers={"Accept": f"{MEDIA[codec]};{POM}"}) as r:
            data = await r.aread()
    if codec == "json":
        events = [(e["type"], e["object"]) for e in map(json.loads, data.splitlines())]
    elif codec == "protobuf":
        events = protobuf.decode_watch_frames(data)
    else:
        events = [(e["type"], e["object"]) for e in cbor.decode_sequence(data)]
    assert [t for t, _ in events] == ["ADDED"]
    assert events[0][1] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                            "metadata": role["metadata"]}
