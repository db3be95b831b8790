"""Spec audit: one test per rule of api-spec.md that the rest of the suite left unproved or got wrong.

Each test is named after the rule it proves; the section of the spec is in
the comment above each group. Where the spec is silent the expected
behaviour is Kubernetes' own (named in the test's docstring).
"""

from __future__ import annotations

import json

import httpx
import pytest
import yaml

from runtime.client.interface import DecodeError
from runtime.machinery.serializer import protobuf
from runtime.machinery.resourceversion import Incomparable, compare, is_at_least, parse
from tests.support.mock_http import mock_client
from tests.support.rbac import grant, rule, token_file, user
from tests.support.server import Server, start_in_process

TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"
POM = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))


def cluster_role(srv: Server, name: str, **meta) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, **meta}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["x"]}]}


async def sar(srv: Server, spec: dict, *, token: str | None = "admin", kind: str = "subjectaccessreviews",
              namespace: str = "", headers: dict | None = None) -> httpx.Response:
    path = f"{srv.authz}/namespaces/{namespace}/{kind}" if namespace else f"{srv.authz}/{kind}"
    async with srv.client(token=token) as c:
        return await c.post(path, json={"spec": spec}, headers=headers or {})


# ---- SubjectAccessReview: the rawSelector / requirements table ---------------------------------------

async def test_selector_with_neither_raw_selector_nor_requirements_is_unrestricted(srv):
    """Table row 1 (empty, empty): the request is unrestricted, not invalid (Kubernetes' validation 422s it)."""
    await grant(srv, user("alice"), rule(["list"], ["roles"], ["*"]), name="lister")
    for selectors in ({"fieldSelector": {}}, {"labelSelector": {"rawSelector": "", "requirements": []}},
                      {"fieldSelector": {"rawSelector": ""}, "labelSelector": {}}):
        r = await sar(srv, {"user": "alice", "resourceAttributes": {"verb": "list", "resource": "roles",
                                                                     "group": "g", **selectors}})
        assert r.status_code == 201, r.text
        assert r.json()["status"] == {
            "allowed": True,
            "reason": 'RBAC: allowed by ClusterRoleBinding "lister" of ClusterRole "lister" to User "alice"'}


# ---- Review statuses and SelfSubjectRulesReview fields ------------------------------------------------

async def test_rules_review_writes_incomplete_and_both_rule_lists_even_when_empty(srv):
    """status.incomplete, status.resourceRules and status.nonResourceRules are required: present when empty."""
    async with srv.client() as admin:
        for name in ("system:public-info-viewer", "system:basic-user", "system:discovery",
                     "miniplane:insight-ui-viewer"):
            assert (await admin.delete(f"{srv.rbac}/clusterrolebindings/{name}")).status_code == 200
    for accept in ("application/json", "application/yaml"):
        r = await sar(srv, {"namespace": "default"}, token=None, kind="selfsubjectrulesreviews",
                      headers={"Accept": accept})
        assert r.status_code == 201, r.text
        doc = json.loads(r.content) if accept == "application/json" else yaml.safe_load(r.content)
        assert doc["status"] == {"resourceRules": [], "nonResourceRules": [], "incomplete": False}


async def test_review_status_allowed_is_written_false_in_protobuf_too(srv):
    """`allowed` is required: a no-opinion answer carries allowed=false (field 1 present), denied unset."""
    r = await sar(srv, {"user": "nobody", "resourceAttributes": {"verb": "get", "resource": "roles"}},
                  headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert r.status_code == 201
    assert protobuf.decode(r.content)["status"] == {"allowed": False}


async def test_local_review_namespace_defaults_from_the_path_with_metadata_empty(srv):
    """LocalSubjectAccessReview: spec.resourceAttributes.namespace empty is defaulted to the path's namespace."""
    r = await sar(srv, {"user": "nobody", "resourceAttributes": {"verb": "get", "resource": "roles"}},
                  kind="localsubjectaccessreviews", namespace="default")
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["resourceAttributes"]["namespace"] == "default"
    assert r.json()["metadata"]["namespace"] == "default" and r.json()["status"] == {"allowed": False}


# ---- ClusterRoleBinding and RoleBinding: subjects.apiGroup defaults ----------------------------------

async def test_subject_api_group_defaults_by_kind_when_unset_or_empty(srv):
    """ServiceAccount: ""; User and Group: the rbac group. An explicit "" is unset, as Go's defaulting sees it."""
    group = f"rbac.authorization.{srv.domain}"
    body = {"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "apiGroup": "", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g", "apiGroup": ""},
                         {"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]}
    async with srv.client() as c:
        r = await c.post(f"{srv.rbac}/clusterrolebindings", json=body)
    assert r.status_code == 201, r.text
    assert [s["apiGroup"] for s in r.json()["subjects"]] == [group, group, ""]
    assert r.json()["roleRef"]["apiGroup"] == group


# ---- Media types: Table / PartialObjectMetadata on writes and reviews ---------------------------------

async def test_writes_answer_the_table_or_metadata_form_asked_and_a_status_unchanged(srv):
    """Kubernetes transforms every response object: a create asked for a Table gets one; a Status passes as is."""
    async with srv.client() as c:
        created = await c.post(f"{srv.rbac}/clusterroles", json=cluster_role(srv, "t"), headers={"Accept": TABLE})
        assert created.status_code == 201, created.text
        assert created.json()["kind"] == "Table" and created.json()["rows"][0]["cells"][0] == "t"
        patched = await c.patch(f"{srv.rbac}/clusterroles/t", json={"metadata": {"labels": {"a": "b"}}},
                                headers={**MERGE, "Accept": POM})
        assert patched.status_code == 200
        assert patched.json()["kind"] == "PartialObjectMetadata" and "rules" not in patched.json()
        deleted = await c.delete(f"{srv.rbac}/clusterroles/t", headers={"Accept": TABLE})
        assert deleted.status_code == 200 and deleted.json()["kind"] == "Status"


async def test_reviews_answer_406_to_a_table_alone_and_metadata_when_asked(srv):
    """Reviews have no table form (406 when it is the only type accepted); PartialObjectMetadata works as for any object."""
    spec = {"user": "u", "resourceAttributes": {"verb": "get"}}
    alone = await sar(srv, spec, headers={"Accept": TABLE})
    fallback = await sar(srv, spec, headers={"Accept": f"{TABLE}, application/json"})
    metadata = await sar(srv, spec, headers={"Accept": POM})
    assert alone.status_code == 406 and alone.json()["reason"] == "NotAcceptable"
    assert fallback.status_code == 201 and fallback.json()["status"] == {"allowed": False}
    assert metadata.status_code == 201 and metadata.json()["kind"] == "PartialObjectMetadata"


# ---- Media types 7: the Protobuf envelope ------------------------------------------------------------

async def test_a_client_rejects_protobuf_with_a_different_prefix():
    role = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": {"name": "r"}}
    body = b"k8s\x01" + protobuf.encode(role)[len(protobuf.PROTOBUF_PREFIX):]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": "application/vnd.kubernetes.protobuf"})

    async with mock_client(handler, protobuf=True) as client:
        with pytest.raises(DecodeError):
            await client.get(client.scheme.by_kind("Role"), "r", namespace="a")


# ---- Path shapes: methods a path does not serve --------------------------------------------------------

async def test_the_all_namespaces_path_serves_only_list_and_watch(srv):
    """Kubernetes routes only GET there: POST and DELETE are 405; an item under it does not exist (404)."""
    body = {"metadata": {"name": "x", "namespace": "default"}, "rules": []}
    async with srv.client() as c:
        assert (await c.get(f"{srv.rbac}/roles")).status_code == 200
        posted = await c.post(f"{srv.rbac}/roles", json=body)
        assert posted.status_code == 405 and posted.json()["reason"] == "MethodNotAllowed"
        assert (await c.delete(f"{srv.rbac}/rolebindings")).status_code == 405
        assert (await c.get(f"{srv.rbac}/roles/x")).status_code == 404
        assert (await c.get(f"{srv.rbac}/roles/x", params={"watch": "1"})).status_code == 404


async def test_a_collection_path_answers_405_to_put_and_patch(srv):
    async with srv.client() as c:
        for path in (f"{srv.rbac}/clusterroles", f"{srv.rbac}/namespaces/default/roles"):
            put = await c.put(path, json={"metadata": {"name": "x"}, "rules": []})
            patch = await c.patch(path, json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
            assert put.status_code == 405 and put.json()["reason"] == "MethodNotAllowed"
            assert patch.status_code == 405


# ---- Authentication 3: dry run is authorized as the real request -------------------------------------

async def test_a_dry_run_patch_needs_patch_permission(srv):
    await grant(srv, user("alice"), rule(["get"], ["clusterroles"], [f"rbac.authorization.{srv.domain}"]))
    async with srv.client() as admin:
        assert (await admin.post(f"{srv.rbac}/clusterroles", json=cluster_role(srv, "p"))).status_code == 201
    async with srv.client(token="alice-token") as alice:
        r = await alice.patch(f"{srv.rbac}/clusterroles/p", params={"dryRun": "All"},
                              json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert r.status_code == 403 and 'cannot patch resource "clusterroles"' in r.json()["message"]


# ---- States and transitions: a delete that leaves the object --------------------------------------------

async def test_a_second_delete_with_orphan_dependents_false_answers_202_and_keeps_the_timestamp(srv):
    """Kubernetes answers 202 to every delete that leaves the object when orphanDependents=false."""
    async with srv.client() as c:
        await c.post(f"{srv.rbac}/clusterroles", json=cluster_role(srv, "held", finalizers=["x.io/hold"]))
        first = await c.delete(f"{srv.rbac}/clusterroles/held", params={"orphanDependents": "false"})
        second = await c.delete(f"{srv.rbac}/clusterroles/held", params={"orphanDependents": "false"})
        plain = await c.delete(f"{srv.rbac}/clusterroles/held")
    assert (first.status_code, second.status_code, plain.status_code) == (202, 202, 200)
    stamp = first.json()["metadata"]["deletionTimestamp"]
    assert second.json()["metadata"]["deletionTimestamp"] == stamp == plain.json()["metadata"]["deletionTimestamp"]


# ---- Events: the BOOKMARK that ends the initial events ----------------------------------------------

async def test_the_initial_events_bookmark_holds_kind_api_version_resource_version_and_the_annotation(srv):
    async with srv.client() as c:
        async with c.stream("GET", f"{srv.rbac}/clusterroles", params={
                "watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                "allowWatchBookmarks": "true"}, timeout=httpx.Timeout(30, read=None)) as r:
            async for line in r.aiter_lines():
                event = json.loads(line)
                if event["type"] == "BOOKMARK":
                    break
    rv = event["object"]["metadata"]["resourceVersion"]
    assert event["object"] == {"kind": "ClusterRole", "apiVersion": f"rbac.authorization.{srv.domain}/v1",
                               "metadata": {"resourceVersion": rv,
                                            "annotations": {"k8s.io/initial-events-end": "true"}}}


# ---- Versioning 4-5: comparing resource versions ---------------------------------------------------

def test_resource_versions_are_ordered_by_length_then_text_without_a_bit_size():
    assert compare("9", "10") == -1 and compare("10", "9") == 1
    assert compare(str(2**70), str(2**70 - 1)) == 1
    assert compare("1" + "0" * 40, "9" * 40) == 1


def test_resource_versions_with_a_leading_zero_or_zero_are_not_orderable():
    """Kubernetes' CompareResourceVersion: well formed is digits with no leading zero; "0" is a special value."""
    assert parse("007") is None and parse("0") is None and parse("7") == 7
    for a, b in (("007", "7"), ("0", "5"), ("010", "9")):
        with pytest.raises(Incomparable):
            compare(a, b)
    assert compare("007", "007") == 0  # equal strings are equal, whatever they hold
    assert is_at_least("5", "0")  # "0" asks for any version
