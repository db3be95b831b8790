"""Every kind through every wire encoding: a body sent in one media type is answered in any other.

Request and response encodings are independent (spec: Media types 4): each
kind is created with a body in JSON, YAML, Protobuf and CBOR, each answered
in JSON, YAML, Protobuf and CBOR, and every answer decodes to the object a
plain JSON GET returns. Reviews (never stored) answer the same decision in
every pair. Lists in each encoding hold the items the JSON list holds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from runtime.machinery.serializer import cbor
from runtime.machinery.serializer import protobuf
from runtime.server.featuregates import DEFAULT_GATES
from tests.support.server import Server, start_in_process

MEDIA = {"json": "application/json", "yaml": "application/yaml",
         "protobuf": "application/vnd.kubernetes.protobuf", "cbor": "application/cbor"}
PAIRS = [(req, resp) for req in MEDIA for resp in MEDIA]


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, feature_gates={**DEFAULT_GATES, "CBORServingAndStorage": True})


def encode_body(codec: str, obj: dict[str, Any]) -> bytes:
    if codec == "json":
        return json.dumps(obj).encode()
    if codec == "yaml":
        return yaml.safe_dump(obj).encode()
    if codec == "protobuf":
        return protobuf.encode(obj)
    return cbor.encode(obj)


def decode_answer(codec: str, data: bytes) -> Any:
    if codec == "json":
        return json.loads(data)
    if codec == "yaml":
        return yaml.safe_load(data)
    if codec == "protobuf":
        return protobuf.decode(data)
    return cbor.decode(data)


def as_sent_in(codec: str, doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` as it reads after a trip through `codec`: Protobuf drops empty optional strings (Go's omitempty)."""
    return protobuf.decode(protobuf.encode(doc)) if codec == "protobuf" else doc


def without_items_type(doc: dict[str, Any]) -> dict[str, Any]:
    """Protobuf list items carry no apiVersion/kind (Kubernetes' typed items do not); compare without them."""
    items = [{k: v for k, v in i.items() if k not in ("apiVersion", "kind")} for i in doc["items"]]
    return dict(doc, items=items)


def kinds(domain: str) -> dict[str, tuple[str, bool, dict[str, Any]]]:
    """Kind -> (plural, namespaced, body without metadata.name)."""
    rbac = f"rbac.authorization.{domain}"
    rules = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["a"]}]
    return {
        "ClusterRole": ("clusterroles", False, {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "rules": rules,
                                                "metadata": {"labels": {"app": "x"}, "annotations": {"n": "1"}}}),
        "Role": ("roles", True, {"apiVersion": f"{rbac}/v1", "kind": "Role", "rules": rules, "metadata": {}}),
        "ClusterRoleBinding": ("clusterrolebindings", False, {
            "apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding", "metadata": {},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "apiGroup": rbac, "name": "alice"},
                         {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]}),
        "RoleBinding": ("rolebindings", True, {
            "apiVersion": f"{rbac}/v1", "kind": "RoleBinding", "metadata": {},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "apiGroup": rbac, "name": "devs"}]}),
        "Namespace": ("namespaces", False, {"apiVersion": "v1", "kind": "Namespace", "metadata": {}}),
    }


def collection(srv: Server, kind: str, plural: str, namespaced: bool) -> str:
    prefix = "/api/v1" if kind == "Namespace" else srv.rbac
    return f"{prefix}/namespaces/default/{plural}" if namespaced else f"{prefix}/{plural}"


@pytest.mark.parametrize("kind", ["ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding", "Namespace"])
async def test_every_request_encoding_is_answered_in_every_response_encoding(srv, kind):
    plural, namespaced, template = kinds(srv.domain)[kind]
    path = collection(srv, kind, plural, namespaced)
    async with srv.client() as c:
        for req, resp in PAIRS:
            body = json.loads(json.dumps(template))
            body["metadata"]["name"] = f"{kind.lower()}-{req}-{resp}"
            r = await c.post(path, content=encode_body(req, body),
                             headers={"Content-Type": MEDIA[req], "Accept": MEDIA[resp]})
            assert r.status_code == 201, (req, resp, r.content[:300])
            assert r.headers["content-type"] == MEDIA[resp]
            created = decode_answer(resp, r.content)
            plain = as_sent_in(resp, (await c.get(f"{path}/{body['metadata']['name']}")).json())
            assert created == plain, (req, resp)
            got = await c.get(f"{path}/{body['metadata']['name']}", headers={"Accept": MEDIA[resp]})
            assert decode_answer(resp, got.content) == plain, (req, resp)


@pytest.mark.parametrize("kind", ["ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding", "Namespace"])
async def test_a_list_in_every_encoding_holds_the_items_of_the_json_list(srv, kind):
    plural, namespaced, template = kinds(srv.domain)[kind]
    path = collection(srv, kind, plural, namespaced)
    async with srv.client() as c:
        for i in range(3):
            body = json.loads(json.dumps(template))
            body["metadata"]["name"] = f"item-{i}"
            assert (await c.post(path, json=body)).status_code == 201
        plain = (await c.get(path)).json()
        for codec, media in MEDIA.items():
            r = await c.get(path, headers={"Accept": media})
            assert r.status_code == 200 and r.headers["content-type"] == media
            listed = decode_answer(codec, r.content)
            assert listed["kind"] == f"{kind}List" and len(listed["items"]) == len(plain["items"])
            expected = without_items_type(plain)
            if codec == "protobuf":
                expected["items"] = [as_sent_in(codec, dict(i, apiVersion=plain["apiVersion"], kind=kind))
                                     for i in expected["items"]]
                expected = without_items_type(expected)
            assert without_items_type(listed) == expected, codec


async def test_updates_and_patches_answer_in_the_asked_encoding_whatever_the_body(srv):
    path = f"{srv.rbac}/clusterroles"
    role = {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole", "metadata": {"name": "u"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]}
    async with srv.client() as c:
        await c.post(path, json=role)
        role["rules"][0]["verbs"] = ["list"]
        r = await c.put(f"{path}/u", content=encode_body("yaml", role),
                        headers={"Content-Type": MEDIA["yaml"], "Accept": MEDIA["protobuf"]})
        assert r.status_code == 200 and protobuf.decode(r.content)["rules"][0]["verbs"] == ["list"]
        r = await c.patch(f"{path}/u", content=b'{"metadata":{"labels":{"p":"1"}}}',
                          headers={"Content-Type": "application/merge-patch+json", "Accept": MEDIA["cbor"]})
        assert r.status_code == 200 and cbor.decode(r.content)["metadata"]["labels"] == {"p": "1"}


REVIEWS = {  # kind -> (path under the authorization group, spec)
    "SubjectAccessReview": ("subjectaccessreviews", {"user": "alice", "resourceAttributes": {"verb": "get",
                                                                                             "resource": "pods"}}),
    "LocalSubjectAccessReview": ("namespaces/default/localsubjectaccessreviews",
                                 {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods",
                                                                          "namespace": "default"}}),
    "SelfSubjectAccessReview": ("selfsubjectaccessreviews", {"resourceAttributes": {"verb": "get",
                                                                                    "resource": "pods"}}),
    "SelfSubjectRulesReview": ("selfsubjectrulesreviews", {"namespace": "default"}),
}


@pytest.mark.parametrize("kind", list(REVIEWS))
async def test_reviews_are_decided_alike_in_every_encoding_pair(srv, kind):
    sub, spec = REVIEWS[kind]
    body = {"apiVersion": f"authorization.{srv.domain}/v1", "kind": kind, "spec": spec}
    async with srv.client() as c:
        plain = (await c.post(f"{srv.authz}/{sub}", json=body)).json()
        for req, resp in PAIRS:
            r = await c.post(f"{srv.authz}/{sub}", content=encode_body(req, body),
                             headers={"Content-Type": MEDIA[req], "Accept": MEDIA[resp]})
            assert r.status_code == 201, (req, resp, r.content[:300])
            answer = decode_answer(resp, r.content)
            assert (answer["kind"], answer["spec"], answer["status"]) == (kind, plain["spec"], plain["status"])


async def test_self_subject_review_answers_the_caller_in_every_encoding_pair(srv):
    body = {"apiVersion": f"authentication.{srv.domain}/v1", "kind": "SelfSubjectReview"}
    path = f"/apis/authentication.{srv.domain}/v1/selfsubjectreviews"
    async with srv.client() as c:
        plain = (await c.post(path, json=body)).json()
        for req, resp in PAIRS:
            r = await c.post(path, content=encode_body(req, body),
                             headers={"Content-Type": MEDIA[req], "Accept": MEDIA[resp]})
            assert r.status_code == 201, (req, resp, r.content[:300])
            assert decode_answer(resp, r.content)["status"] == plain["status"], (req, resp)
