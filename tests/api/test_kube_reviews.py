"""Review answers as kube-apiserver's (issue 16), and the spec's rule on selector operators."""

from __future__ import annotations

from tests.support.rbac import ok


def review(srv, kind: str, spec: dict) -> dict:
    return {"apiVersion": f"authorization.{srv.domain}/v1", "kind": kind, "spec": spec}


async def test_self_subject_rules_review_answers_its_status_only(server):
    async with server.client() as c:
        body = review(server, "SelfSubjectRulesReview", {"namespace": "default"})
        body["metadata"] = {"labels": {"a": "b"}}
        got = await ok(await c.post(f"/apis/authorization.{server.domain}/v1/selfsubjectrulesreviews", json=body), 201)
    assert got["spec"] == {} and not got["metadata"].get("labels")
    assert got["status"]["incomplete"] is False and got["status"]["resourceRules"]


async def test_review_validation_error_details_name_the_group_as_kubernetes(server):
    async with server.client() as c:
        r = await c.post(f"/apis/authorization.{server.domain}/v1/subjectaccessreviews",
                         json=review(server, "SubjectAccessReview", {"nonResourceAttributes": {"path": "/"}}))
    assert r.status_code == 422
    group = f"authorization.{server.domain}"
    assert r.json()["message"] == (f'.{group} "" is invalid: spec.user: Invalid value: "": at least one of user or '
                                   "group must be specified")
    assert r.json()["details"] == {"group": group, "causes": [
        {"reason": "FieldValueInvalid", "field": "spec.user",
         "message": 'Invalid value: "": at least one of user or group must be specified'}]}


async def test_review_selector_requirement_needs_an_operator(server):
    spec = {"user": "u", "resourceAttributes": {"verb": "list", "resource": "roles",
                                                "fieldSelector": {"requirements": [{"key": "metadata.name"}]}}}
    async with server.client() as c:
        r = await c.post(f"/apis/authorization.{server.domain}/v1/subjectaccessreviews",
                         json=review(server, "SubjectAccessReview", spec))
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [{
        "reason": "FieldValueNotSupported",
        "field": "spec.resourceAttributes.fieldSelector.requirements[0].operator",
        "message": 'Unsupported value: "": supported values: "In", "NotIn", "Exists", "DoesNotExist"'}]


async def test_review_selector_requirement_with_an_unknown_operator_is_422(server):
    spec = {"user": "u", "resourceAttributes": {"verb": "list", "resource": "roles", "labelSelector": {
        "requirements": [{"key": "a", "operator": "Gt", "values": ["1"]}]}}}
    async with server.client() as c:
        r = await c.post(f"/apis/authorization.{server.domain}/v1/subjectaccessreviews",
                         json=review(server, "SubjectAccessReview", spec))
    assert r.status_code == 422
    assert [c["field"] for c in r.json()["details"]["causes"]] == [
        "spec.resourceAttributes.labelSelector.requirements[0].operator"]
