"""OpenAPI over HTTP: v3 with Kubernetes' extensions and descriptions, v2 in JSON and Protobuf, caching headers."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from runtime.machinery.serializer.proto import openapi_v2_pb2 as gnostic

V2_PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


async def v3_documents(srv) -> dict[str, dict[str, Any]]:
    async with srv.client() as c:
        index = (await c.get("/openapi/v3")).json()
        return {path: (await c.get(entry["serverRelativeURL"])).json() for path, entry in index["paths"].items()}


async def test_v3_carries_kubernetes_list_and_patch_extensions(server):
    docs = await v3_documents(server)
    rbac = docs[f"apis/rbac.authorization.{server.domain}/v1"]["components"]["schemas"]
    meta = rbac["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    assert {k: v for k, v in meta["ownerReferences"].items() if k.startswith("x-")} == {
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"],
        "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "uid"}
    assert meta["finalizers"]["x-kubernetes-patch-strategy"] == "merge"
    assert rbac["io.k8s.api.rbac.v1.ClusterRole"]["properties"]["rules"]["x-kubernetes-list-type"] == "atomic"
    conditions = docs["api/v1"]["components"]["schemas"]["io.k8s.api.core.v1.NamespaceStatus"]["properties"][
        "conditions"]
    assert (conditions["x-kubernetes-patch-merge-key"], conditions["x-kubernetes-list-map-keys"]) == ("type",
                                                                                                      ["type"])


async def served_group_versions(srv) -> set[str]:
    """The v3 paths discovery implies: `api/v1` and `apis/<group>/<version>` for each group version served."""
    async with srv.client() as c:
        groups = (await c.get("/apis")).json()["groups"]
    return {"api/v1"} | {f"apis/{v['groupVersion']}" for g in groups for v in g["versions"]}


async def test_every_schema_and_property_has_a_description(server):
    docs = await v3_documents(server)
    assert set(docs) == await served_group_versions(server)  # one document per group version, none missed
    assert docs
    for path, doc in docs.items():
        schemas = doc["components"]["schemas"]
        assert any(schema.get("properties") for schema in schemas.values()), path
        for name, schema in schemas.items():
            assert schema.get("description"), (path, name)
            for prop, sub in schema.get("properties", {}).items():
                assert sub.get("description"), (path, name, prop)


async def test_v3_documents_have_etags_and_answer_304_when_unchanged(server):
    async with server.client() as c:
        index = (await c.get("/openapi/v3")).json()
        url = index["paths"]["api/v1"]["serverRelativeURL"]
        r = await c.get(url)
        again = await c.get(url, headers={"If-None-Match": r.headers["etag"]})
        unpinned = await c.get("/openapi/v3/api/v1")
    digest = hashlib.sha512(r.content).hexdigest().upper()
    assert url.endswith(f"?hash={digest}") and r.headers["etag"] == f'"{digest}"'
    assert r.headers["cache-control"] == "public, immutable" and r.headers["expires"].endswith("GMT")
    assert again.status_code == 304 and again.content == b"" and "content-type" not in again.headers
    assert unpinned.status_code == 200 and unpinned.headers["cache-control"] != "public, immutable"


async def test_a_stale_hash_is_redirected_to_the_current_document(server):
    async with server.client() as c:
        r = await c.get("/openapi/v3/api/v1", params={"hash": "0" * 128})
        index = (await c.get("/openapi/v3")).json()
    assert r.status_code == 301 and r.headers["location"] == index["paths"]["api/v1"]["serverRelativeURL"]


async def test_v2_json_defines_every_kind_with_its_group_version_kind(server):
    async with server.client() as c:
        r = await c.get("/openapi/v2", headers={"Accept": "application/json"})
    doc = r.json()
    assert r.headers["content-type"] == "application/json" and doc["swagger"] == "2.0"
    gvks = {(g["group"], g["kind"]) for s in doc["definitions"].values()
            for g in s.get("x-kubernetes-group-version-kind", [])}
    for kind in ("ClusterRole", "RoleBindingList", "SubjectAccessReview", "SelfSubjectRulesReview"):
        group = "authorization" if "Review" in kind else "rbac.authorization"
        assert (f"{group}.{server.domain}", kind) in gvks
    assert ("", "Namespace") in gvks
    refs = [n["$ref"] for n in walk(doc["definitions"]) if "$ref" in n]
    assert refs and all(ref.removeprefix("#/definitions/") in doc["definitions"] for ref in refs)
    assert not any("allOf" in n for n in walk(doc["definitions"]))


async def test_v2_protobuf_is_gnostics_document_spelled_as_kubectl_parses_it(server):
    async with server.client() as c:
        pb = await c.get("/openapi/v2", headers={"Accept": V2_PB})
        plain = (await c.get("/openapi/v2")).json()
        again = await c.get("/openapi/v2", headers={"Accept": V2_PB, "If-None-Match": pb.headers["etag"]})
    assert pb.status_code == 200
    assert pb.headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert again.status_code == 304
    doc = gnostic.Document.FromString(pb.content)
    assert doc.swagger == "2.0"
    definitions = {d.name: d.value for d in doc.definitions.additional_properties}
    assert set(definitions) == set(plain["definitions"])
    role = definitions["io.k8s.api.rbac.v1.ClusterRole"]
    assert list(role.type.value) == ["object"]
    props = {p.name: p.value for p in role.properties.additional_properties}
    assert props["metadata"]._ref == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert props["rules"].items.schema[0]._ref == "#/definitions/io.k8s.api.rbac.v1.PolicyRule"
    extensions = {e.name: e.value.yaml for e in role.vendor_extension}
    assert extensions["x-kubernetes-group-version-kind"] == (
        f"- group: rbac.authorization.{server.domain}\n  kind: ClusterRole\n  version: v1\n")
    assert {e.name: e.value.yaml for e in props["rules"].vendor_extension} == {"x-kubernetes-list-type": "atomic\n"}


@pytest.mark.parametrize("path", ["/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1"])
async def test_openapi_in_an_unknown_media_type_is_406(server, path):
    async with server.client() as c:
        r = await c.get(path, headers={"Accept": "application/xml"})
    assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable"
