"""OpenAPI v3 documents: what kubectl's validation, apply and explain read from them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from api.openapi import (
    openapi_v3_document, openapi_v3_document_bytes, openapi_v3_hash, openapi_v3_index, schema_name,
)
from runtime import models
from runtime.machinery.scheme import Scheme

_REF = "#/components/schemas/"
_METHODS = ("get", "put", "post", "delete", "patch")


def _group_versions(scheme: Scheme) -> list[str]:
    return [t.api_version for t in scheme.types]


def _documents() -> Iterator[tuple[Scheme, str, dict[str, Any]]]:
    for domain in ("svc.io", "k8s.io"):
        scheme = Scheme(domain)
        for gv in dict.fromkeys(_group_versions(scheme)):
            doc = openapi_v3_document(scheme, gv)
            assert doc is not None
            yield scheme, gv, doc


DOCUMENTS = list(_documents())
IDS = [f"{s.domain}:{gv}" for s, gv, _ in DOCUMENTS]


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in _METHODS:
            if method in item:
                yield path, method, item[method]


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Follow allOf[0] then $ref, as kubectl's strategic-merge-patch walker does."""
    if schema.get("allOf"):
        schema = schema["allOf"][0]
    if "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].removeprefix(_REF)]
    return schema


def _kind_schema(doc: dict[str, Any], gvk: dict[str, str]) -> dict[str, Any]:
    (schema,) = [s for s in doc["components"]["schemas"].values()
                 if gvk in s.get("x-kubernetes-group-version-kind", [])]
    return schema


def test_index_lists_every_group_version_with_its_content_hash() -> None:
    scheme = Scheme("svc.io")
    paths = openapi_v3_index(scheme)["paths"]
    assert set(paths) == {"api/v1", "apis/rbac.authorization.svc.io/v1", "apis/authorization.svc.io/v1",
                          "apis/authentication.svc.io/v1", "apis/coordination.svc.io/v1", "apis/events.svc.io/v1",
                          "apis/apiextensions.svc.io/v1", "apis/insight.svc.io/v1", "apis/apps/v1",
                          "apis/autoscaling/v2", "apis/autoscaling/v1", "apis/batch/v1", "apis/networking.svc.io/v1",
                          "apis/policy/v1", "apis/discovery.svc.io/v1", "apis/scheduling.svc.io/v1",
                          "apis/storage.svc.io/v1", "apis/admissionregistration.svc.io/v1"}
    body = openapi_v3_document_bytes(scheme, "rbac.authorization.svc.io/v1")
    assert body is not None
    digest = hashlib.sha512(body).hexdigest().upper()
    assert openapi_v3_hash(body) == digest
    assert paths["apis/rbac.authorization.svc.io/v1"]["serverRelativeURL"] == (
        f"/openapi/v3/apis/rbac.authorization.svc.io/v1?hash={digest}")
    assert paths["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")


def test_the_documents_tested_are_every_group_version_of_both_domains() -> None:
    # The tests parametrized over DOCUMENTS would be skipped, not failed, over an empty list.
    for domain in ("svc.io", "k8s.io"):
        index = openapi_v3_index(Scheme(domain))["paths"]
        assert {"api/v1", f"apis/rbac.authorization.{domain}/v1"} <= set(index)
        tested = {gv for s, gv, _ in DOCUMENTS if s.domain == domain}
        assert {f"apis/{gv}" if "/" in gv else f"api/{gv}" for gv in tested} == set(index)


def test_served_bytes_are_the_document_as_json() -> None:
    scheme = Scheme("svc.io")
    body = openapi_v3_document_bytes(scheme, "v1")
    assert body is not None and json.loads(body) == openapi_v3_document(scheme, "v1")


def test_unserved_group_version_has_no_document() -> None:
    assert openapi_v3_document(Scheme("svc.io"), "rbac.authorization.k8s.io/v1") is None
    assert openapi_v3_document_bytes(Scheme("svc.io"), "v2") is None


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_document_is_openapi_3_json(scheme: Scheme, gv: str, doc: dict[str, Any]) -> None:
    assert doc["openapi"] == "3.0.0" and doc["info"]["title"]
    assert json.loads(json.dumps(doc)) == doc
    assert doc["paths"] and all(path.startswith("/") for path in doc["paths"])


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_every_ref_resolves(scheme: Scheme, gv: str, doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    refs = [node["$ref"] for node in _walk(doc) if "$ref" in node]
    assert refs
    for ref in refs:
        assert ref.startswith(_REF) and ref.removeprefix(_REF) in schemas, ref


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_every_kind_and_list_schema_carries_its_gvk(scheme: Scheme, gv: str, doc: dict[str, Any]) -> None:
    kinds = [t for t in scheme.types if t.api_version == gv]
    assert kinds
    for t in kinds:
        gvk = {"group": t.group, "kind": t.kind, "version": t.version}
        assert doc["components"]["schemas"][schema_name(t.model)]["x-kubernetes-group-version-kind"] == [gvk]
        if t.info.list_model is not None:
            list_gvk = {**gvk, "kind": t.list_kind}
            assert _kind_schema(doc, list_gvk) is doc["components"]["schemas"][schema_name(t.info.list_model)]


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_every_operation_names_its_kind_and_action(scheme: Scheme, gv: str, doc: dict[str, Any]) -> None:
    actions = {"get", "list", "post", "put", "patch", "delete", "deletecollection"}
    assert list(_operations(doc))
    for path, method, op in _operations(doc):
        gvk = op["x-kubernetes-group-version-kind"]
        assert isinstance(gvk, dict) and _kind_schema(doc, gvk)
        assert op["x-kubernetes-action"] in actions, path
    op_ids = [op["operationId"] for _, _, op in _operations(doc)]
    assert len(op_ids) == len(set(op_ids))


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_writes_take_field_validation_dry_run_and_field_manager(scheme: Scheme, gv: str,
                                                                 doc: dict[str, Any]) -> None:
    writes = [(p, m, op) for p, m, op in _operations(doc) if m in ("post", "put", "patch")]
    assert writes
    for path, method, op in writes:
        names = {param["name"] for param in op["parameters"]}  # on the operation, where kubectl looks
        assert {"fieldValidation", "dryRun", "fieldManager"} <= names, (path, method)
        assert "pretty" in {param["name"] for param in doc["paths"][path]["parameters"]}


def test_every_stored_kind_has_a_patch_taking_field_validation() -> None:
    # kubectl create -f / replace -f leave validation to the server only when this holds.
    scheme = Scheme("svc.io")
    stored = {t.kind for t in scheme.stored_types()}
    assert {"Namespace", "ClusterRole", "RoleBinding", "CustomResourceDefinition"} <= stored
    for t in scheme.stored_types():
        doc = openapi_v3_document(scheme, t.api_version) or {}
        patches = [op for _, m, op in _operations(doc) if m == "patch"
                   and op["x-kubernetes-group-version-kind"] == {"group": t.group, "version": t.version,
                                                                 "kind": t.kind}]
        assert patches, t.kind
        assert all("fieldValidation" in {p["name"] for p in op["parameters"]} for op in patches)


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_patch_accepts_the_four_patch_types(scheme: Scheme, gv: str, doc: dict[str, Any]) -> None:
    patches = [op for _, method, op in _operations(doc) if method == "patch"]
    # A group version with a stored kind has patches (its review kinds have none).
    assert bool(patches) == any(t.api_version == gv and not t.virtual for t in scheme.types)
    for op in patches:
        assert set(op["requestBody"]["content"]) == {
            "application/json-patch+json", "application/merge-patch+json",
            "application/strategic-merge-patch+json", "application/apply-patch+yaml"}


def test_bodies_are_offered_in_json_yaml_and_protobuf() -> None:
    doc = openapi_v3_document(Scheme("k8s.io"), "rbac.authorization.k8s.io/v1") or {}
    post = doc["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles"]["post"]
    content = post["requestBody"]["content"]
    assert {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"} <= set(content)
    assert content["application/json"]["schema"] == {"$ref": _REF + "io.k8s.api.rbac.v1.ClusterRole"}
    assert post["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].endswith(".ClusterRole")


@pytest.mark.parametrize(("scheme", "gv", "doc"), DOCUMENTS, ids=IDS)
def test_optional_fields_are_plain_typed_properties(scheme: Scheme, gv: str, doc: dict[str, Any]) -> None:
    assert doc["components"]["schemas"]
    for node in _walk(doc["components"]):
        assert "anyOf" not in node and node.get("type") != "null" and "null" not in node.get("type", [])


def test_schema_names_follow_kubernetes() -> None:
    assert schema_name(models.ClusterRole) == "io.k8s.api.rbac.v1.ClusterRole"
    assert schema_name(models.ObjectMeta) == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert schema_name(models.Namespace) == "io.k8s.api.core.v1.Namespace"
    assert schema_name(models.UserInfoModel) == "io.k8s.api.authentication.v1.UserInfo"


def test_required_fields_follow_the_spec_tables() -> None:
    schemas = (openapi_v3_document(Scheme("svc.io"), "rbac.authorization.svc.io/v1") or {})["components"]["schemas"]
    assert schemas["io.k8s.api.rbac.v1.PolicyRule"]["required"] == ["verbs"]
    assert schemas["io.k8s.api.rbac.v1.RoleRef"]["required"] == ["apiGroup", "kind", "name"]
    assert schemas["io.k8s.api.rbac.v1.Subject"]["required"] == ["kind", "name"]
    assert schemas["io.k8s.api.rbac.v1.ClusterRoleBinding"]["required"] == ["roleRef"]
    assert "required" not in schemas["io.k8s.api.rbac.v1.ClusterRole"]


def test_list_and_patch_markers_come_from_the_models() -> None:
    schemas = (openapi_v3_document(Scheme("svc.io"), "v1") or {})["components"]["schemas"]
    meta = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    assert meta["ownerReferences"]["x-kubernetes-patch-merge-key"] == "uid"
    assert meta["ownerReferences"]["x-kubernetes-list-map-keys"] == ["uid"]
    assert meta["finalizers"]["x-kubernetes-list-type"] == "set"
    conditions = schemas["io.k8s.api.core.v1.NamespaceStatus"]["properties"]["conditions"]
    assert conditions["x-kubernetes-patch-strategy"] == "merge"


def test_field_descriptions_come_from_the_models() -> None:
    schemas = (openapi_v3_document(Scheme("svc.io"), "rbac.authorization.svc.io/v1") or {})["components"]["schemas"]
    rule = schemas["io.k8s.api.rbac.v1.PolicyRule"]
    assert rule["properties"]["verbs"]["description"] == models.PolicyRule.model_fields["verbs"].description
    assert rule["description"].startswith("What a role allows")
    assert rule["properties"]["nonResourceURLs"]["type"] == "array"


def test_explain_finds_the_kind_from_its_collection_path() -> None:
    # kubectl explain reads the GVK from an operation on .../RESOURCE, then the schema with it.
    doc = openapi_v3_document(Scheme("svc.io"), "rbac.authorization.svc.io/v1") or {}
    for path, resource, kind in (("/apis/rbac.authorization.svc.io/v1/clusterroles", "clusterroles", "ClusterRole"),
                                 ("/apis/rbac.authorization.svc.io/v1/namespaces/{namespace}/roles", "roles", "Role")):
        gvk = doc["paths"][path]["get"]["x-kubernetes-group-version-kind"]
        assert gvk["kind"] == kind
        rules = _kind_schema(doc, gvk)["properties"]["rules"]
        assert rules["type"] == "array" and _resolve(doc, rules["items"])["required"] == ["verbs"]


def test_namespaced_kinds_list_across_all_namespaces() -> None:
    doc = openapi_v3_document(Scheme("svc.io"), "rbac.authorization.svc.io/v1") or {}
    op = doc["paths"]["/apis/rbac.authorization.svc.io/v1/rolebindings"]["get"]
    assert op["x-kubernetes-action"] == "list" and "watch" in {p["name"] for p in op["parameters"]}
    assert set(doc["paths"]["/apis/rbac.authorization.svc.io/v1/rolebindings"]) == {"get", "parameters"}


def test_strategic_merge_walk_reaches_nested_fields() -> None:
    # kubectl apply walks the kind schema key by key: allOf[0], then $ref, then properties.
    doc = openapi_v3_document(Scheme("svc.io"), "v1") or {}
    ns = _kind_schema(doc, {"group": "", "kind": "Namespace", "version": "v1"})
    meta = _resolve(doc, ns["properties"]["metadata"])
    assert {"labels", "annotations", "ownerReferences"} <= set(meta["properties"])
    owner = _resolve(doc, meta["properties"]["ownerReferences"]["items"])
    assert "uid" in owner["properties"]


def test_delete_options_and_status_carry_their_gvks() -> None:
    doc = openapi_v3_document(Scheme("svc.io"), "rbac.authorization.svc.io/v1") or {}
    schemas = doc["components"]["schemas"]
    delete = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]["x-kubernetes-group-version-kind"]
    assert {"group": "", "kind": "DeleteOptions", "version": "v1"} in delete
    assert {"group": "rbac.authorization.svc.io", "kind": "DeleteOptions", "version": "v1"} in delete
    status = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Status"]["x-kubernetes-group-version-kind"]
    assert status == [{"group": "", "kind": "Status", "version": "v1"}]
