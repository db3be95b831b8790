"""The insight kinds about one request or subject over HTTP: WhoCan, AccessExplanation, AccessMatrix.

Served in `insight.<domain>/v1`, virtual and create-only like the reviews,
answered from the authorizer's own index and authorized as the caller:
WhoCan needs list on bindings and roles, an explanation on the whole policy,
another subject's matrix create on SubjectAccessReviews. Token users come
from `--token-auth-file` (alice in devs and qa, bob, team/robot, root).
"""

from __future__ import annotations

import pytest

from runtime.machinery.serializer import protobuf
from tests.support.insight import ask, sar
from tests.support.rbac import bind, grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    await namespaces(srv, "team-a", "team-b")
    return srv


def rbac(srv: Server) -> str:
    return f"rbac.authorization.{srv.domain}"


def res(**attrs) -> dict:
    return {"resourceAttributes": attrs}


async def readers_of_roles(srv: Server) -> None:
    """team-a: Role reader (get, list roles) bound to alice, group devs and the service account team-a/robot;
    ClusterRole ops (create roles) bound cluster-wide to bob."""
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/namespaces/team-a/roles", json={
            "metadata": {"name": "reader"}, "rules": [rule(["get", "list"], ["roles"], [rbac(srv)])]}), 201)
    await bind(srv, "readers", "Role", "reader",
               [user("alice"), {"kind": "Group", "name": "devs"}, {"kind": "ServiceAccount", "name": "robot"}],
               namespace="team-a")
    await grant(srv, user("bob"), rule(["create", "list"], ["roles"], [rbac(srv)]), name="ops")


def subjects(answer: dict) -> set[tuple[str, str, str]]:
    return {(s["subject"]["kind"], s["subject"]["name"], s["subject"].get("namespace", ""))
            for s in answer["status"]["subjects"]}


# ---- discovery, OpenAPI, storage -----------------------------------------------------------------

async def test_insight_kinds_are_discovered_create_only_and_unstored(srv):
    async with srv.client() as c:
        listed = await ok(await c.get(f"/apis/insight.{srv.domain}/v1"))
        assert {r["kind"]: r["verbs"] for r in listed["resources"]} == {
            k: ["create"] for k in ("AccessExplanation", "WhoCan", "AccessMatrix", "RBACLint",
                                    "AggregationGraph", "RBACDiff")}
        assert all("storageVersionHash" not in r and not r["namespaced"] for r in listed["resources"])
        groups = await ok(await c.get("/apis"))
        assert f"insight.{srv.domain}" in {g["name"] for g in groups["groups"]}
        assert (await c.get(f"/apis/insight.{srv.domain}/v1/whocans")).status_code == 405
        index = await ok(await c.get("/openapi/v3"))
        doc = await ok(await c.get(index["paths"][f"apis/insight.{srv.domain}/v1"]["serverRelativeURL"]))
    assert "post" in doc["paths"][f"/apis/insight.{srv.domain}/v1/whocans"]
    schema = doc["components"]["schemas"]["io.miniplane.insight.v1.WhoCan"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": f"insight.{srv.domain}", "kind": "WhoCan", "version": "v1"}]


async def test_a_protobuf_body_is_415_for_insight_kinds(srv):
    body = protobuf.encode({"apiVersion": f"authorization.{srv.domain}/v1", "kind": "SubjectAccessReview",
                            "spec": {"user": "x"}})
    async with srv.client() as c:
        r = await c.post(f"/apis/insight.{srv.domain}/v1/whocans", content=body,
                         headers={"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert r.status_code == 415, r.text


# ---- WhoCan --------------------------------------------------------------------------------------

async def test_who_can_lists_users_groups_and_service_accounts_with_their_grants(srv):
    await readers_of_roles(srv)
    answer = await ask(srv, "WhoCan", res(verb="list", resource="roles", group=rbac(srv), namespace="team-a"))
    assert subjects(answer) == {("User", "alice", ""), ("Group", "devs", ""), ("ServiceAccount", "robot", "team-a"),
                                ("User", "bob", ""), ("Group", "system:masters", "")}
    alice = next(s for s in answer["status"]["subjects"] if s["subject"]["name"] == "alice")
    assert alice["grants"] == [{"binding": {"kind": "RoleBinding", "name": "readers", "namespace": "team-a"},
                                "role": {"kind": "Role", "name": "reader", "namespace": "team-a"},
                                "ruleIndex": 0, "rule": rule(["get", "list"], ["roles"], [rbac(srv)])}]
    masters = next(s for s in answer["status"]["subjects"] if s["subject"]["name"] == "system:masters")
    assert masters["privileged"] is True
    elsewhere = await ask(srv, "WhoCan", res(verb="list", resource="roles", group=rbac(srv), namespace="team-b"))
    assert subjects(elsewhere) == {("User", "bob", ""), ("Group", "system:masters", "")}


async def test_who_can_agrees_with_a_subject_access_review_of_every_subject(srv):
    await readers_of_roles(srv)
    await grant(srv, {"kind": "Group", "name": "qa"}, rule(["impersonate"], ["users"], names=["carol"]),
                name="qa-impersonates")
    await grant(srv, user("dave"), rule(["get"], urls=["/healthz", "/metrics"]), name="probe")
    cases = [{"verb": "list", "resource": "roles", "group": rbac(srv), "namespace": "team-a"},
             {"verb": "create", "resource": "roles", "group": rbac(srv), "namespace": "team-b"},
             {"verb": "impersonate", "resource": "users", "name": "carol"},
             {"verb": "impersonate", "resource": "users", "name": "erin"},
             {"verb": "get", "path": "/metrics"}]
    people = [("alice", []), ("bob", []), ("carol", ["devs"]), ("zed", ["qa"]), ("dave", []),
              ("system:serviceaccount:team-a:robot", []), ("root", ["system:masters"])]
    for attrs in cases:
        spec = {"nonResourceAttributes": attrs} if "path" in attrs else res(**attrs)
        found = subjects(await ask(srv, "WhoCan", spec))
        names = {name for kind, name, _ in found if kind == "User"}
        names |= {f"system:serviceaccount:{ns}:{name}" for kind, name, ns in found if kind == "ServiceAccount"}
        groups = {name for kind, name, _ in found if kind == "Group"}
        for name, member_of in people:
            expected = await sar(srv, name, member_of, attrs)
            assert (name in names or bool(groups & set(member_of))) == expected, (attrs, name)


async def test_who_can_a_cluster_scoped_resource_ignores_rolebindings_and_a_namespace_counts_its_own(srv):
    await grant(srv, user("alice"), rule(["get"], ["clusterroles", "namespaces"], [rbac(srv), ""]),
                namespace="team-a", name="scoped")
    answer = await ask(srv, "WhoCan", res(verb="get", resource="clusterroles", group=rbac(srv), namespace="team-a"))
    assert ("User", "alice", "") not in subjects(answer) and "namespace" not in answer["status"]
    own = await ask(srv, "WhoCan", res(verb="get", resource="namespaces", name="team-a"))
    assert ("User", "alice", "") in subjects(own) and own["status"]["namespace"] == "team-a"


async def test_who_can_is_forbidden_unless_the_caller_may_list_bindings_and_roles(srv):
    denied = await ask(srv, "WhoCan", res(verb="get", resource="roles", namespace="team-a"), token="bob-token",
                       code=403)
    assert denied["reason"] == "Forbidden" and denied["details"]["kind"] == "whocans"
    assert denied["message"].startswith(f'whocans.insight.{srv.domain} is forbidden: User "bob" cannot list '
                                        f'resource "clusterroles"')
    await grant(srv, user("bob"), rule(["list"], ["clusterroles", "clusterrolebindings"], [rbac(srv)]))
    cluster_only = await ask(srv, "WhoCan", res(verb="get", resource="roles", namespace="team-a"),
                             token="bob-token", code=403)
    assert 'cannot list resource "roles"' in cluster_only["message"] and 'namespace "team-a"' in cluster_only["message"]
    await ask(srv, "WhoCan", res(verb="get", resource="roles"), token="bob-token")
    await grant(srv, user("bob"), rule(["list"], ["roles", "rolebindings"], [rbac(srv)]), namespace="team-a",
                role_kind="Role")
    await ask(srv, "WhoCan", res(verb="get", resource="roles", namespace="team-a"), token="bob-token")


@pytest.mark.parametrize("spec, causes", [
    ({}, [("FieldValueInvalid", "spec.resourceAttributes")]),
    ({"resourceAttributes": {"verb": "get", "resource": "roles"}, "nonResourceAttributes": {"verb": "get",
                                                                                            "path": "/x"}},
     [("FieldValueInvalid", "spec.nonResourceAttributes")]),
    ({"resourceAttributes": {"resource": "pods/log"}},
     [("FieldValueRequired", "spec.resourceAttributes.verb"), ("FieldValueInvalid", "spec.resourceAttributes.resource")]),
    ({"resourceAttributes": {"verb": "get", "resource": "pods", "labelSelector": {"rawSelector": "a=b"}}},
     [("FieldValueForbidden", "spec.resourceAttributes.labelSelector")]),
    ({"nonResourceAttributes": {"verb": "get", "path": "healthz"}},
     [("FieldValueInvalid", "spec.nonResourceAttributes.path")]),
])
async def test_bad_who_can_specs_are_422_with_field_paths(srv, spec, causes):
    answer = await ask(srv, "WhoCan", spec, code=422)
    assert answer["message"].startswith(f'WhoCan.insight.{srv.domain} "" is invalid: ')
    assert [(c["reason"], c["field"]) for c in answer["details"]["causes"]] == causes


async def test_an_unknown_field_is_a_400_under_strict_validation(srv):
    async with srv.client() as c:
        r = await c.post(f"/apis/insight.{srv.domain}/v1/whocans", params={"fieldValidation": "Strict"},
                         json={"apiVersion": f"insight.{srv.domain}/v1", "kind": "WhoCan",
                               "spec": {"resourceAttributes": {"verb": "get", "resource": "x"}, "bogus": 1}})
    assert r.status_code == 400 and 'unknown field "spec.bogus"' in r.json()["message"]


# ---- AccessExplanation ---------------------------------------------------------------------------

async def test_an_explanation_names_the_granting_rule_and_agrees_with_the_review(srv):
    await readers_of_roles(srv)
    attrs = {"verb": "get", "resource": "roles", "group": rbac(srv), "namespace": "team-a"}
    e = (await ask(srv, "AccessExplanation", {"user": "carol", "groups": ["devs"], **res(**attrs)}))["status"]
    assert e["allowed"] is await sar(srv, "carol", ["devs"], attrs) is True
    assert e["grantedBy"]["binding"] == {"kind": "RoleBinding", "name": "readers", "namespace": "team-a"}
    assert e["reason"].startswith('RBAC: allowed by RoleBinding "readers/team-a" of Role "reader"')
    checks = {c["attribute"]: c["matched"] for b in e["bindings"] for r in b["rules"] for c in r["checks"]
              if b["binding"]["name"] == "readers"}
    assert checks == {"verb": True, "apiGroup": True, "resource": True, "subresource": True,
                      "resourceName": True, "namespace": True}


async def test_an_explanation_shows_near_misses_a_wrong_verb_and_another_namespace(srv):
    await readers_of_roles(srv)
    wrong_verb = (await ask(srv, "AccessExplanation", {"user": "alice", **res(
        verb="delete", resource="roles", group=rbac(srv), namespace="team-a")}))["status"]
    assert wrong_verb["allowed"] is False
    miss = next(m for m in wrong_verb["nearMisses"] if m["kind"] == "Attribute")
    assert (miss["attribute"], miss["requested"], miss["suggestion"]) == ("verb", "delete", "get")
    other_namespace = (await ask(srv, "AccessExplanation", {"user": "alice", **res(
        verb="get", resource="roles", group=rbac(srv), namespace="team-b")}))["status"]
    miss = next(m for m in other_namespace["nearMisses"] if m["kind"] == "Namespace")
    assert miss["binding"]["namespace"] == "team-a" and miss["suggestion"] == "team-a"


async def test_an_explanation_says_a_rolebinding_cannot_grant_a_cluster_scoped_resource(srv):
    await grant(srv, user("alice"), rule(["get"], ["clusterroles"], [rbac(srv)]), namespace="team-a", name="cr")
    e = (await ask(srv, "AccessExplanation", {"user": "alice", **res(
        verb="get", resource="clusterroles", group=rbac(srv))}))["status"]
    assert e["allowed"] is False and e["scope"] == "Cluster"
    miss = next(m for m in e["nearMisses"] if m["binding"]["name"] == "cr")
    assert miss["kind"] == "ClusterScope" and "only a ClusterRoleBinding can grant it" in miss["message"]


async def test_an_explanation_traces_aggregation_and_names_the_labels_that_would_select_a_role(srv):
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json={
            "metadata": {"name": "agg"}, "rules": [],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]}}), 201)
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json={
            "metadata": {"name": "src"}, "rules": [rule(["get"], ["leases"], [f"coordination.{srv.domain}"])]}), 201)
    await bind(srv, "agg", "ClusterRole", "agg", [user("alice")])
    await bind(srv, "dangling", "ClusterRole", "nothing-yet", [user("alice")])
    e = (await ask(srv, "AccessExplanation", {"user": "alice", **res(
        verb="get", resource="leases", group=f"coordination.{srv.domain}", namespace="team-a")}))["status"]
    from_src = [m for m in e["nearMisses"] if m.get("sourceRole") == {"kind": "ClusterRole", "name": "src"}]
    assert [(m["kind"], m["labels"], m["role"]["name"]) for m in from_src] == [("Aggregation", {"team": "a"}, "agg")]
    assert [m["binding"]["name"] for m in e["nearMisses"] if m["kind"] == "RoleRef"] == ["dangling"]


async def test_an_explanation_defaults_to_the_caller_and_needs_the_whole_policy(srv):
    await grant(srv, user("alice"), rule(["list"], ["clusterroles", "clusterrolebindings", "roles",
                                                    "rolebindings"], [rbac(srv)]), name="policy-reader")
    mine = (await ask(srv, "AccessExplanation", res(verb="list", resource="roles", group=rbac(srv)),
                      token="alice-token"))["status"]
    assert mine["request"]["user"] == "alice" and mine["allowed"] is True
    denied = await ask(srv, "AccessExplanation", res(verb="list", resource="roles"), token="bob-token", code=403)
    assert "an AccessExplanation shows the bindings and roles of every namespace" in denied["message"]


# ---- AccessMatrix --------------------------------------------------------------------------------

async def test_a_matrix_marks_allowed_denied_and_allowed_by_wildcard(srv):
    await grant(srv, user("alice"), rule(["get", "list"], ["roles"], [rbac(srv)]), namespace="team-a",
                role_kind="Role", name="exact")
    await grant(srv, user("alice"), rule(["*"], ["leases"], ["*"]), namespace="team-a", name="wild")
    resources = [{"group": rbac(srv), "resource": "roles"}, {"group": f"coordination.{srv.domain}",
                                                             "resource": "leases"}]
    m = (await ask(srv, "AccessMatrix", {"user": "alice", "namespace": "team-a", "resources": resources,
                                         "verbs": ["get", "delete"]}))["status"]
    assert [(r["resource"], r["access"]) for r in m["rows"]] == [
        ("roles", {"get": "allowed", "delete": "denied"}),
        ("leases", {"get": "allowedByWildcard", "delete": "allowedByWildcard"})]


async def test_own_matrix_is_anyones_and_anothers_needs_create_subjectaccessreviews(srv):
    mine = (await ask(srv, "AccessMatrix", {"namespace": "team-a"}, token="bob-token"))["status"]
    assert mine["user"] == "bob" and "system:authenticated" in mine["groups"]
    assert {r["resource"] for r in mine["rows"]} >= {"roles", "rolebindings", "leases"}
    assert "clusterroles" not in {r["resource"] for r in mine["rows"]}  # cluster-scoped: not in a namespace
    denied = await ask(srv, "AccessMatrix", {"user": "alice"}, token="bob-token", code=403)
    assert 'cannot create resource "subjectaccessreviews"' in denied["message"]
    await grant(srv, user("bob"), rule(["create"], ["subjectaccessreviews"], [f"authorization.{srv.domain}"]))
    theirs = (await ask(srv, "AccessMatrix", {"user": "alice"}, token="bob-token"))["status"]
    assert theirs["user"] == "alice" and "clusterroles" in {r["resource"] for r in theirs["rows"]}


async def test_bad_matrix_specs_are_422_with_field_paths(srv):
    answer = await ask(srv, "AccessMatrix", {"verbs": ["get", "*"], "resources": [{"group": "", "resource": ""},
                                                                                  {"resource": "a/b/c"}]}, code=422)
    assert [c["field"] for c in answer["details"]["causes"]] == [
        "spec.verbs[1]", "spec.resources[0].resource", "spec.resources[1].resource"]
