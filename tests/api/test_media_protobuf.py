"""Protobuf answers, read with Kubernetes' field numbers held here (not with the server's own classes).

The facts below are copied from Kubernetes' `generated.proto` files
(k8s.io/api/rbac/v1, k8s.io/api/core/v1, k8s.io/apimachinery/pkg/apis/meta/v1,
k8s.io/apimachinery/pkg/runtime). A small wire-format reader decodes the
server's bytes by them, so a wrong field number in the server's codec fails
here even if it round-trips through its own generated classes.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from runtime.machinery.serializer import protobuf
from runtime.machinery.scheme import Scheme
from tests.support.server import STARTERS, Server, start_in_process

PB = "application/vnd.kubernetes.protobuf"
POM = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
POML = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

# message -> {field: (number, type)}; type is "string", "int", "bytes", "map", or a message name; "[]" repeats.
FACTS: dict[str, dict[str, tuple[int, str]]] = {
    "Unknown": {"typeMeta": (1, "TypeMeta"), "raw": (2, "bytes"), "contentEncoding": (3, "string"),
                "contentType": (4, "string")},
    "TypeMeta": {"apiVersion": (1, "string"), "kind": (2, "string")},
    "ClusterRole": {"metadata": (1, "ObjectMeta"), "rules": (2, "[]PolicyRule"),
                    "aggregationRule": (3, "AggregationRule")},
    "Role": {"metadata": (1, "ObjectMeta"), "rules": (2, "[]PolicyRule")},
    "ClusterRoleBinding": {"metadata": (1, "ObjectMeta"), "subjects": (2, "[]Subject"), "roleRef": (3, "RoleRef")},
    "RoleBinding": {"metadata": (1, "ObjectMeta"), "subjects": (2, "[]Subject"), "roleRef": (3, "RoleRef")},
    "PolicyRule": {"verbs": (1, "[]string"), "apiGroups": (2, "[]string"), "resources": (3, "[]string"),
                   "resourceNames": (4, "[]string"), "nonResourceURLs": (5, "[]string")},
    "Subject": {"kind": (1, "string"), "apiGroup": (2, "string"), "name": (3, "string"),
                "namespace": (4, "string")},
    "RoleRef": {"apiGroup": (1, "string"), "kind": (2, "string"), "name": (3, "string")},
    "AggregationRule": {"clusterRoleSelectors": (1, "[]LabelSelector")},
    "LabelSelector": {"matchLabels": (1, "map")},
    "Namespace": {"metadata": (1, "ObjectMeta"), "spec": (2, "NamespaceSpec"), "status": (3, "NamespaceStatus")},
    "NamespaceSpec": {"finalizers": (1, "[]string")},
    "NamespaceStatus": {"phase": (1, "string")},
    "ObjectMeta": {"name": (1, "string"), "generateName": (2, "string"), "namespace": (3, "string"),
                   "uid": (5, "string"), "resourceVersion": (6, "string"), "generation": (7, "int"),
                   "creationTimestamp": (8, "Time"), "labels": (11, "map"), "annotations": (12, "map"),
                   "ownerReferences": (13, "[]OwnerReference"), "finalizers": (14, "[]string"),
                   "managedFields": (17, "[]ManagedFieldsEntry")},
    "OwnerReference": {"kind": (1, "string"), "name": (3, "string"), "uid": (4, "string"),
                       "apiVersion": (5, "string"), "controller": (6, "int"), "blockOwnerDeletion": (7, "int")},
    "ManagedFieldsEntry": {"manager": (1, "string"), "operation": (2, "string"), "apiVersion": (3, "string"),
                           "time": (4, "Time"), "fieldsType": (6, "string"), "fieldsV1": (7, "FieldsV1"),
                           "subresource": (8, "string")},
    "FieldsV1": {"Raw": (1, "bytes")},
    "ListMeta": {"resourceVersion": (2, "string"), "continue": (3, "string"), "remainingItemCount": (4, "int")},
    "Time": {"seconds": (1, "int"), "nanos": (2, "int")},
    "Status": {"metadata": (1, "ListMeta"), "status": (2, "string"), "message": (3, "string"),
               "reason": (4, "string"), "details": (5, "StatusDetails"), "code": (6, "int")},
    "StatusDetails": {"name": (1, "string"), "group": (2, "string"), "kind": (3, "string")},
    "PartialObjectMetadata": {"metadata": (1, "ObjectMeta")},
    "WatchEvent": {"type": (1, "string"), "object": (2, "RawExtension")},
    "RawExtension": {"raw": (1, "bytes")},
}
LISTS = {"ClusterRoleList": "ClusterRole", "RoleList": "Role", "ClusterRoleBindingList": "ClusterRoleBinding",
         "RoleBindingList": "RoleBinding", "NamespaceList": "Namespace",
         "PartialObjectMetadataList": "PartialObjectMetadata"}
for _list, _item in LISTS.items():
    FACTS[_list] = {"metadata": (1, "ListMeta"), "items": (2, f"[]{_item}")}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def wire_fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs of one message: varints as ints, length-delimited fields as bytes."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == 2:
            size, pos = _varint(data, pos)
            out.append((number, data[pos:pos + size]))
            pos += size
        else:
            raise AssertionError(f"unexpected wire type {wire} for field {number}")
    return out


def read(message: str, data: bytes) -> dict[str, Any]:
    """Decode `data` as `message` by FACTS; a field number not in FACTS fails the test."""
    by_number = {num: (name, typ) for name, (num, typ) in FACTS[message].items()}
    out: dict[str, Any] = {}
    for number, value in wire_fields(data):
        assert number in by_number, f"{message} has no field number {number} in Kubernetes"
        name, typ = by_number[number]
        repeated = typ.startswith("[]")
        typ = typ.removeprefix("[]")
        if typ == "string":
            item: Any = value.decode()
        elif typ in ("int", "bytes"):
            item = value
        elif typ == "map":
            entry = dict(wire_fields(value))
            out.setdefault(name, {})[entry[1].decode()] = entry.get(2, b"").decode()
            continue
        else:
            item = read(typ, value)
        if repeated:
            out.setdefault(name, []).append(item)
        else:
            out[name] = item
    return out


def envelope(data: bytes) -> tuple[str, str, dict[str, Any]]:
    """Check the 4-byte prefix and the Unknown envelope; return apiVersion, kind and the decoded message."""
    assert data[:4] == b"\x6b\x38\x73\x00"
    unknown = read("Unknown", data[4:])
    assert "contentEncoding" not in unknown and "contentType" not in unknown
    kind = unknown["typeMeta"]["kind"]
    return unknown["typeMeta"]["apiVersion"], kind, read(kind, unknown["raw"])


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io")


@pytest.fixture(params=sorted(STARTERS))
async def any_srv(request, nursery, tmp_path) -> Server:
    """In process, then behind real HTTPS (the smoke test of Protobuf on the wire)."""
    return await STARTERS[request.param](nursery, tmp_path, api_domain="k8s.io")


async def seed(srv: Server) -> None:
    rbac = "rbac.authorization.k8s.io"
    async with srv.client() as c:
        await c.post(f"{srv.rbac}/clusterroles", json={
            "apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": {"name": "agg", "labels": {"a": "b"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}})
        await c.post(f"{srv.rbac}/namespaces/default/roles", json={
            "apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": {"name": "r"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]}]})
        await c.post(f"{srv.rbac}/namespaces/default/rolebindings", json={
            "apiVersion": f"{rbac}/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]})


async def test_every_kind_and_list_is_kubernetes_protobuf_by_field_number(any_srv):
    srv = any_srv
    await seed(srv)
    paths = {"ClusterRole": f"{srv.rbac}/clusterroles/agg", "Role": f"{srv.rbac}/namespaces/default/roles/r",
             "RoleBinding": f"{srv.rbac}/namespaces/default/rolebindings/rb",
             "ClusterRoleBinding": f"{srv.rbac}/clusterrolebindings/cluster-admin",
             "Namespace": "/api/v1/namespaces/default"}
    async with srv.client() as c:
        for kind, path in paths.items():
            plain = (await c.get(path)).json()
            r = await c.get(path, headers={"Accept": PB})
            assert r.headers["content-type"] == PB
            api_version, got_kind, msg = envelope(r.content)
            assert (api_version, got_kind) == (plain["apiVersion"], kind)
            assert msg["metadata"]["name"] == plain["metadata"]["name"]
            assert msg["metadata"]["resourceVersion"] == plain["metadata"]["resourceVersion"]
            listed = await c.get(path.rsplit("/", 1)[0], headers={"Accept": PB})
            _, list_kind, lst = envelope(listed.content)
            assert list_kind == f"{kind}List" and lst["metadata"]["resourceVersion"].isdigit()
            assert plain["metadata"]["name"] in [i["metadata"]["name"] for i in lst["items"]]
        _, _, role = envelope((await c.get(paths["Role"], headers={"Accept": PB})).content)
        assert role["rules"] == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                                  "resourceNames": ["p"]}]
        _, _, binding = envelope((await c.get(paths["RoleBinding"], headers={"Accept": PB})).content)
        plain = (await c.get(paths["RoleBinding"])).json()
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}
        assert binding["subjects"] == plain["subjects"]  # an empty apiGroup may be written: Go writes every string
        assert binding["subjects"][0]["name"] == "sa" and binding["subjects"][0]["namespace"] == "default"
        _, _, agg = envelope((await c.get(paths["ClusterRole"], headers={"Accept": PB})).content)
        assert agg["aggregationRule"] == {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}
        assert agg["metadata"]["labels"] == {"a": "b"} and agg["metadata"]["creationTimestamp"]["seconds"] > 0


async def test_errors_are_status_messages_in_protobuf(srv):
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles/missing", headers={"Accept": PB})
    assert r.status_code == 404 and r.headers["content-type"] == PB
    api_version, kind, status = envelope(r.content)
    assert (api_version, kind) == ("v1", "Status")
    assert (status["status"], status["reason"], status["code"]) == ("Failure", "NotFound", 404)
    assert status["details"] == {"name": "missing", "group": "rbac.authorization.k8s.io", "kind": "clusterroles"}


async def test_partial_object_metadata_and_its_list_in_protobuf(srv):
    await seed(srv)
    async with srv.client() as c:
        one = await c.get(f"{srv.rbac}/namespaces/default/roles/r", headers={"Accept": f"{PB};{POM}"})
        listed = await c.get(f"{srv.rbac}/roles", headers={"Accept": f"{PB};{POML}"})
    api_version, kind, pom = envelope(one.content)
    assert (api_version, kind) == ("meta.k8s.io/v1", "PartialObjectMetadata")
    assert pom["metadata"]["namespace"] == "default" and set(pom) == {"metadata"}
    _, kind, pom_list = envelope(listed.content)
    assert kind == "PartialObjectMetadataList" and [i["metadata"]["name"] for i in pom_list["items"]] == ["r"]


async def test_protobuf_lists_stream_the_bytes_of_the_whole_list(srv):
    async with srv.client() as c:
        for i in range(30):
            await c.post(f"{srv.rbac}/clusterroles", json={
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": f"s{i}"}})
        r = await c.get(f"{srv.rbac}/clusterroles", headers={"Accept": PB})
        plain = (await c.get(f"{srv.rbac}/clusterroles")).json()
    decoded = protobuf.decode(r.content)
    assert [i["metadata"]["name"] for i in decoded["items"]] == [i["metadata"]["name"] for i in plain["items"]]
    assert r.content == protobuf.encode(dict(decoded, items=decoded["items"]))


async def test_watch_streams_are_length_prefixed_watch_events_holding_enveloped_objects(any_srv, autojump_clock):
    srv = any_srv
    async with srv.client() as c:
        async with c.stream("GET", f"{srv.rbac}/clusterroles", params={"watch": "1", "timeoutSeconds": "1"},
                            headers={"Accept": f"{PB};stream=watch"}) as r:
            assert r.headers["content-type"] == f"{PB};stream=watch"
            data = await r.aread()
    frames, pos = [], 0
    while pos < len(data):
        (size,) = struct.unpack(">I", data[pos:pos + 4])
        frames.append(read("WatchEvent", data[pos + 4:pos + 4 + size]))
        pos += 4 + size
    assert frames and {f["type"] for f in frames} == {"ADDED"}
    api_version, kind, obj = envelope(frames[0]["object"]["raw"])
    assert (api_version, kind) == ("rbac.authorization.k8s.io/v1", "ClusterRole") and obj["metadata"]["name"]


async def test_table_has_no_protobuf_form_406_alone_json_with_a_fallback(srv):
    table = "as=Table;g=meta.k8s.io;v=v1"
    async with srv.client() as c:
        alone = await c.get(f"{srv.rbac}/clusterroles", headers={"Accept": f"{PB};{table}"})
        fallback = await c.get(f"{srv.rbac}/clusterroles",
                               headers={"Accept": f"{PB};{table}, application/json;{table}"})
    assert alone.status_code == 406 and alone.json()["reason"] == "NotAcceptable"
    assert fallback.status_code == 200 and fallback.json()["kind"] == "Table"


async def test_the_domains_protobuf_media_type_is_answered_as_asked(nursery, tmp_path):
    srv = await start_in_process(nursery, tmp_path)  # domain svc.io
    async with srv.client() as c:
        r = await c.get(f"{srv.rbac}/clusterroles/admin", headers={"Accept": "application/vnd.svc.protobuf"})
        body = protobuf.encode({"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
                                "metadata": {"name": "mine"}})
        created = await c.post(f"{srv.rbac}/clusterroles", content=body,
                               headers={"Content-Type": "application/vnd.svc.protobuf"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/vnd.svc.protobuf"
    assert envelope(r.content)[:2] == ("rbac.authorization.svc.io/v1", "ClusterRole")
    assert created.status_code == 201 and created.json()["metadata"]["name"] == "mine"


async def test_kinds_without_a_protobuf_form_fall_back_to_the_next_type_or_406(srv):
    without = [t for t in Scheme(srv.domain).types
               if not t.virtual and not protobuf.supports(t.api_version, t.kind) and "list" in t.info.verbs]
    if not without:
        pytest.skip("every served kind has a Protobuf form")
    rt = without[0]
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    path = f"{prefix}/namespaces/default/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    async with srv.client() as c:
        fallback = await c.get(path, headers={"Accept": f"{PB}, application/json"})
        alone = await c.get(path, headers={"Accept": PB})
    assert fallback.status_code == 200 and fallback.json()["kind"] == rt.list_kind
    assert alone.status_code == 406
