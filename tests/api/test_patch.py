"""PATCH by Content-Type: json patch, merge patch, strategic merge patch; 415, 422, 409, managers."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]
SUITES = Path("/work/shared/testdata/json-patch-tests")
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}


def cr(server, name: str = "reader", **extra) -> dict:
    body = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": copy.deepcopy(RULES)}
    body.update(extra)
    return body


async def make(c, server, name: str = "reader", **meta) -> dict:
    body = cr(server, name)
    body["metadata"].update(meta)
    r = await c.post(f"{server.rbac}/clusterroles", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def patch(c, server, headers: dict, doc, name: str = "reader", **params):
    return await c.patch(f"{server.rbac}/clusterroles/{name}", content=json.dumps(doc), headers=headers,
                         params=params)


# ---- json patch (RFC 6902) ------------------------------------------------------------------------

def _annotation_cases() -> list[tuple[str, dict]]:
    """json-patch-tests cases whose documents are string maps: they fit a ClusterRole's annotations."""
    out = []
    for suite in ("tests.json", "spec_tests.json"):
        for i, case in enumerate(json.loads((SUITES / suite).read_text())):
            if case.get("disabled"):
                continue
            docs = [case["doc"]] + ([case["expected"]] if "expected" in case else [])
            if case["doc"] == {} and case["patch"] and "error" not in case:
                continue  # an empty annotations map is not stored (omitempty): nothing to add into
            if all(isinstance(d, dict) and all(isinstance(v, str) for v in d.values()) for d in docs):
                out.append((f"{suite}:{i}", case))
    return out


ANNOTATION_CASES = _annotation_cases()
PREFIX = "/metadata/annotations"


def _onto_annotations(operations):
    """The case's patch aimed at the annotations: valid pointers get the prefix; broken ones stay broken."""
    if not isinstance(operations, list):
        return operations
    out = []
    for op in operations:
        op = dict(op)
        for member in ("path", "from"):
            value = op.get(member)
            if isinstance(value, str) and (value == "" or value.startswith("/")):
                op[member] = PREFIX + value
        out.append(op)
    return out


async def test_json_patch_conformance_suites_pass_through_http_on_a_cluster_roles_annotations(server):
    """Every enabled json-patch-tests case that fits annotations (string values), as an HTTP PATCH."""
    passed, failures = 0, []
    async with server.client() as c:
        for i, (label, case) in enumerate(ANNOTATION_CASES):
            name = f"case-{i}"
            created = await make(c, server, name, annotations=case["doc"])
            r = await patch(c, server, JSON_PATCH, _onto_annotations(case["patch"]), name)
            stored = (await c.get(f"{server.rbac}/clusterroles/{name}")).json()
            if "error" in case:
                unchanged = stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
                ok = r.status_code in (400, 422) and unchanged
            else:
                ok = (r.status_code == 200 and r.json()["metadata"].get("annotations", {}) == case["expected"]
                      and stored["metadata"].get("annotations", {}) == case["expected"])
            if ok:
                passed += 1
            else:
                failures.append(f"{label} {case.get('comment', '')}: {r.status_code} {r.text[:200]}")
    print(f"json-patch-tests over HTTP: {passed}/{len(ANNOTATION_CASES)} passed")
    assert failures == []
    assert passed == len(ANNOTATION_CASES) >= 17


async def test_json_patch_adds_replaces_and_removes(server):
    async with server.client() as c:
        await make(c, server, labels={"a": "1", "b": "2"})
        ops = [{"op": "add", "path": "/metadata/labels/c", "value": "3"},
               {"op": "replace", "path": "/metadata/labels/a", "value": "one"},
               {"op": "remove", "path": "/metadata/labels/b"},
               {"op": "add", "path": "/rules/-", "value": {"verbs": ["list"], "apiGroups": [""], "resources": ["x"]}}]
        r = await patch(c, server, JSON_PATCH, ops)
        assert r.status_code == 200, r.text
        assert r.json()["metadata"]["labels"] == {"a": "one", "c": "3"}
        assert [rule["verbs"] for rule in r.json()["rules"]] == [["get"], ["list"]]


async def test_failed_json_patch_test_fails_the_whole_patch_with_422_and_applies_nothing(server):
    async with server.client() as c:
        created = await make(c, server, labels={"a": "1"})
        ops = [{"op": "add", "path": "/metadata/labels/b", "value": "2"},
               {"op": "test", "path": "/metadata/labels/a", "value": "9"}]
        r = await patch(c, server, JSON_PATCH, ops)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        assert r.json()["message"] == "testing value /metadata/labels/a failed: test failed"
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).json() == created


async def test_json_patch_test_of_resource_version_guards_against_lost_updates(server):
    async with server.client() as c:
        created = await make(c, server)
        rv = created["metadata"]["resourceVersion"]
        guard = {"op": "test", "path": "/metadata/resourceVersion", "value": rv}
        first = await patch(c, server, JSON_PATCH, [guard, {"op": "add", "path": "/metadata/labels",
                                                             "value": {"a": "b"}}])
        assert first.status_code == 200
        second = await patch(c, server, JSON_PATCH, [guard, {"op": "remove", "path": "/rules"}])
        assert second.status_code == 422


async def test_json_patch_that_is_not_a_list_of_operations_is_400(server):
    async with server.client() as c:
        await make(c, server)
        r = await patch(c, server, JSON_PATCH, {"op": "add"})
        assert r.status_code == 400


async def test_json_patch_over_10000_operations_is_413(server):
    async with server.client() as c:
        await make(c, server)
        ops = [{"op": "test", "path": "/kind", "value": "ClusterRole"}] * 10001
        r = await patch(c, server, JSON_PATCH, ops)
        assert r.status_code == 413
        assert r.json()["message"] == "The allowed maximum operations in a JSON patch is 10000, got 10001"


# ---- merge patch (RFC 7386) ---------------------------------------------------------------------

async def test_merge_patch_merges_maps_deletes_nulls_and_replaces_lists(server):
    async with server.client() as c:
        await make(c, server, labels={"a": "1", "b": "2"}, finalizers=["x/a"])
        doc = {"metadata": {"labels": {"a": None, "c": "3"}, "finalizers": ["x/b"]},
               "rules": [{"verbs": ["watch"], "apiGroups": [""], "resources": ["y"]}]}
        r = await patch(c, server, MERGE, doc)
        assert r.status_code == 200, r.text
        assert r.json()["metadata"]["labels"] == {"b": "2", "c": "3"}
        assert r.json()["metadata"]["finalizers"] == ["x/b"]  # lists are replaced whole
        assert r.json()["rules"] == doc["rules"]


# ---- strategic merge patch -----------------------------------------------------------------------

async def test_strategic_merge_patch_merges_finalizers_as_a_set(server):
    async with server.client() as c:
        await make(c, server, finalizers=["x/a", "x/b"])
        r = await patch(c, server, STRATEGIC, {"metadata": {"finalizers": ["x/b", "x/c"]}})
        assert r.status_code == 200, r.text
        assert r.json()["metadata"]["finalizers"] == ["x/a", "x/b", "x/c"]


async def test_strategic_merge_patch_merges_owner_references_by_uid(server):
    owner = {"apiVersion": "v1", "kind": "Namespace", "name": "n1", "uid": "u1"}
    async with server.client() as c:
        await make(c, server, ownerReferences=[owner])
        added = {"apiVersion": "v1", "kind": "Namespace", "name": "n2", "uid": "u2"}
        r = await patch(c, server, STRATEGIC, {"metadata": {"ownerReferences": [added]}})
        assert r.status_code == 200, r.text
        assert sorted(o["uid"] for o in r.json()["metadata"]["ownerReferences"]) == ["u1", "u2"]
        changed = dict(owner, controller=True)
        r = await patch(c, server, STRATEGIC, {"metadata": {"ownerReferences": [changed]}})
        by_uid = {o["uid"]: o for o in r.json()["metadata"]["ownerReferences"]}
        assert by_uid == {"u1": changed, "u2": added}


async def test_strategic_merge_patch_replaces_other_lists(server):
    async with server.client() as c:
        await make(c, server)
        rules = [{"verbs": ["list"], "apiGroups": [""], "resources": ["z"]}]
        r = await patch(c, server, STRATEGIC, {"rules": rules})
        assert r.status_code == 200 and r.json()["rules"] == rules


async def test_strategic_merge_patch_directives(server):
    owner = {"apiVersion": "v1", "kind": "Namespace", "name": "n1", "uid": "u1"}
    async with server.client() as c:
        await make(c, server, finalizers=["x/a", "x/b"], ownerReferences=[owner], labels={"k": "v"})
        doc = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/a"],
                            "ownerReferences": [{"uid": "u1", "$patch": "delete"}],
                            "labels": {"$patch": "replace", "new": "label"}}}
        r = await patch(c, server, STRATEGIC, doc)
        assert r.status_code == 200, r.text
        meta = r.json()["metadata"]
        assert meta["finalizers"] == ["x/b"] and not meta.get("ownerReferences") and meta["labels"] == {"new": "label"}


async def test_strategic_merge_patch_with_a_malformed_directive_is_400(server):
    async with server.client() as c:
        await make(c, server)
        r = await patch(c, server, STRATEGIC, {"metadata": {"labels": {"$patch": "explode"}}})
        assert r.status_code == 400


# ---- rules of every patch type -------------------------------------------------------------------

@pytest.mark.parametrize("content_type", ["application/json", "text/plain", "application/yaml"])
async def test_another_content_type_is_415(server, content_type):
    async with server.client() as c:
        await make(c, server)
        r = await c.patch(f"{server.rbac}/clusterroles/reader", content="{}", headers={"Content-Type": content_type})
        assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"
        assert r.json()["message"].startswith("the body of the request was in an unknown format - accepted media "
                                              "types include: application/json-patch+json, "
                                              "application/merge-patch+json, application/strategic-merge-patch+json, "
                                              "application/apply-patch+yaml")


@pytest.mark.parametrize("headers,doc", [
    (JSON_PATCH, [{"op": "replace", "path": "/rules/0/verbs", "value": []}]),
    (MERGE, {"rules": [{"verbs": []}]}),
    (STRATEGIC, {"rules": [{"verbs": ["get"]}]}),
])
async def test_patch_producing_an_invalid_object_is_422_and_changes_nothing(server, headers, doc):
    async with server.client() as c:
        created = await make(c, server)
        r = await patch(c, server, headers, doc)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid", r.text
        assert r.json()["message"].startswith(f'ClusterRole.rbac.authorization.{server.domain} "reader" is invalid')
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).json() == created


@pytest.mark.parametrize("headers,make_doc", [
    (MERGE, lambda rv: {"metadata": {"resourceVersion": rv, "labels": {"a": "b"}}}),
    (STRATEGIC, lambda rv: {"metadata": {"resourceVersion": rv, "labels": {"a": "b"}}}),
    (JSON_PATCH, lambda rv: [{"op": "replace", "path": "/metadata/resourceVersion", "value": rv},
                             {"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]),
])
async def test_conditional_patch_with_a_stale_resource_version_is_409(server, headers, make_doc):
    async with server.client() as c:
        created = await make(c, server)
        stale = created["metadata"]["resourceVersion"]
        fresh = await patch(c, server, MERGE, {"metadata": {"annotations": {"n": "1"}}})
        r = await patch(c, server, headers, make_doc(stale))
        assert r.status_code == 409 and r.json()["reason"] == "Conflict", r.text
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).json() == fresh.json()
        current = await patch(c, server, headers, make_doc(fresh.json()["metadata"]["resourceVersion"]))
        assert current.status_code == 200 and current.json()["metadata"]["labels"] == {"a": "b"}


async def test_patch_of_a_missing_object_is_404(server):
    async with server.client() as c:
        r = await patch(c, server, MERGE, {"metadata": {"labels": {"a": "b"}}}, "nope")
        assert r.status_code == 404


async def test_patch_changing_the_name_is_400(server):
    async with server.client() as c:
        await make(c, server)
        r = await patch(c, server, MERGE, {"metadata": {"name": "other"}})
        assert r.status_code == 400
        assert r.json()["message"] == "the name of the object (other) does not match the name on the URL (reader)"


async def test_force_on_a_non_apply_patch_is_422(server):
    async with server.client() as c:
        await make(c, server)
        r = await patch(c, server, MERGE, {}, force="true")
        assert r.status_code == 422
        assert r.json()["message"] == ('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be '
                                       "specified for non-apply patch")


async def test_patch_records_its_field_manager(server):
    async with server.client() as c:
        await make(c, server)
        r = await patch(c, server, MERGE, {"metadata": {"labels": {"a": "b"}}}, fieldManager="labeller")
        entries = {(e["manager"], e["operation"]): e for e in r.json()["metadata"]["managedFields"]}
        assert entries[("labeller", "Update")]["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}}


async def test_patch_without_field_manager_records_the_user_agent_up_to_its_slash(server):
    async with server.client(headers={"User-Agent": "mytool/1.2 (linux)"}) as c:
        await make(c, server)
        r = await patch(c, server, STRATEGIC, {"metadata": {"labels": {"a": "b"}}})
        managers = {(e["manager"], e["operation"]) for e in r.json()["metadata"]["managedFields"]}
        assert ("mytool", "Update") in managers


async def test_patch_that_changes_nothing_keeps_the_resource_version(server):
    async with server.client() as c:
        created = await make(c, server, labels={"a": "b"})
        r = await patch(c, server, MERGE, {"metadata": {"labels": {"a": "b"}}})
        assert r.status_code == 200
        assert r.json()["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_patch_of_a_namespaced_object(server):
    async with server.client() as c:
        role = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "Role",
                "metadata": {"name": "r", "namespace": "default"}, "rules": RULES}
        assert (await c.post(f"{server.rbac}/namespaces/default/roles", json=role)).status_code == 201
        url = f"{server.rbac}/namespaces/default/roles/r"
        r = await c.patch(url, content='{"metadata":{"labels":{"a":"b"}}}', headers=MERGE)
        assert r.status_code == 200 and r.json()["metadata"]["namespace"] == "default"
        moved = await c.patch(url, content='{"metadata":{"namespace":"elsewhere"}}', headers=MERGE)
        assert moved.status_code == 400
