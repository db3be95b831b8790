"""The insight kinds about the whole policy over HTTP: RBACLint, AggregationGraph, RBACDiff.

Each reads the policy the authorizer decides with and is authorized as the
caller. The lint also names what keeps a terminating namespace: every
object left and its finalizers (the server runs no controllers here, so a
deleted namespace stays terminating with its content).
"""

from __future__ import annotations

import pytest

from tests.support.insight import ask, sar
from tests.support.rbac import bind, grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    srv = await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))
    await namespaces(srv, "team-a")
    return srv


def rbac(srv: Server) -> str:
    return f"rbac.authorization.{srv.domain}"


def findings(answer: dict, kind: str) -> list[dict]:
    return [f for f in answer["status"]["findings"] if f["kind"] == kind]


# ---- RBACLint ------------------------------------------------------------------------------------

async def test_lint_ranks_risky_grants_and_finds_dangling_refs_and_missing_namespaces(srv):
    await grant(srv, user("alice"), rule(["get", "list"], ["secrets"]), name="secret-reader")
    await grant(srv, user("alice"), rule(["impersonate"], ["users"]), name="impersonator")
    await bind(srv, "dangling", "ClusterRole", "not-there", [user("bob")])
    await bind(srv, "ghost-sa", "ClusterRole", "secret-reader",
               [{"kind": "ServiceAccount", "name": "bot", "namespace": "gone"}])
    answer = await ask(srv, "RBACLint", {"minSeverity": "Low"})
    severities = [f["severity"] for f in answer["status"]["findings"]]
    ranks = ["Critical", "High", "Medium", "Low"]
    assert severities == sorted(severities, key=ranks.index) and "Info" not in severities
    risky = {f["object"]["name"]: f for f in findings(answer, "RiskyGrant")}
    assert risky["secret-reader"]["severity"] == "Critical" and "read secrets" in risky["secret-reader"]["message"]
    assert risky["impersonator"]["severity"] == "Critical"
    assert [f["object"]["name"] for f in findings(answer, "RoleRefNotFound")] == ["dangling"]
    missing = findings(answer, "SubjectNamespaceNotFound")
    assert [(f["object"]["name"], f["path"]) for f in missing] == [("ghost-sa", "subjects[0]")]


async def test_lint_traces_aggregated_rules_to_the_roles_they_came_from(srv):
    held, stale = rule(["get"], ["leases"], [f"coordination.{srv.domain}"]), rule(["list"], ["roles"], [rbac(srv)])
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json={
            "metadata": {"name": "src", "labels": {"team": "a"}}, "rules": [held]}), 201)
        await ok(await admin.post(f"{srv.rbac}/clusterroles", json={
            "metadata": {"name": "agg"}, "rules": [held, stale],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]}}), 201)
    answer = await ask(srv, "RBACLint", {"minSeverity": "Info"})
    traced = [(f["kind"], f["path"], f["severity"]) for f in answer["status"]["findings"]
              if f["object"]["name"] == "agg"]
    assert ("AggregatedRule", "rules[0]", "Info") in traced
    assert ("AggregatedRuleWithoutSource", "rules[1]", "Low") in traced
    assert next(f for f in findings(answer, "AggregatedRule") if f["object"]["name"] == "agg")["message"] == \
        "rules[0] comes from ClusterRole src"
    assert not findings(await ask(srv, "RBACLint", {"minSeverity": "Medium"}), "AggregatedRule")


async def test_lint_names_a_terminating_namespaces_blockers_and_their_finalizers(srv):
    async with srv.client() as admin:
        await ok(await admin.post(f"{srv.rbac}/namespaces/team-a/roles", json={
            "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "rules": []}), 201)
        await ok(await admin.post(f"{srv.rbac}/namespaces/team-a/roles", json={"metadata": {"name": "free"}}), 201)
        await ok(await admin.delete("/api/v1/namespaces/team-a"))
    answer = await ask(srv, "RBACLint")
    (stuck,) = answer["status"]["terminatingNamespaces"]
    assert stuck["name"] == "team-a" and stuck["finalizers"] == ["kubernetes"] and stuck["deletionTimestamp"]
    assert [(b["kind"], b["name"], b.get("finalizers", [])) for b in stuck["blockers"]] == [
        ("Role", "free", []), ("Role", "held", ["example.com/hold"])]
    (blocked,) = findings(answer, "FinalizerBlocksNamespace")
    assert blocked["object"] == {"kind": "Role", "name": "held", "namespace": "team-a"}
    assert blocked["severity"] == "Medium" and "example.com/hold" in blocked["message"]


async def test_lint_leaves_unchecked_the_kinds_the_caller_may_not_list_in_a_terminating_namespace(srv):
    await grant(srv, user("bob"), rule(["list"], ["clusterroles", "clusterrolebindings", "roles",
                                                  "rolebindings"], [rbac(srv)]), rule(["list"], ["namespaces"]))
    async with srv.client() as admin:
        await ok(await admin.delete("/api/v1/namespaces/team-a"))
    (stuck,) = (await ask(srv, "RBACLint", token="bob-token"))["status"]["terminatingNamespaces"]
    assert f"leases.coordination.{srv.domain}" in stuck["unchecked"]
    assert f"roles.{rbac(srv)}" not in stuck["unchecked"]


async def test_lint_needs_the_policy_and_the_namespaces_and_a_known_severity(srv):
    denied = await ask(srv, "RBACLint", token="bob-token", code=403)
    assert "an RBACLint reads the whole policy and the namespaces" in denied["message"]
    bad = await ask(srv, "RBACLint", {"minSeverity": "Huge"}, code=422)
    assert [c["field"] for c in bad["details"]["causes"]] == ["spec.minSeverity"]


# ---- AggregationGraph ----------------------------------------------------------------------------

async def test_the_aggregation_graph_has_an_edge_per_selected_role(srv):
    graph = (await ask(srv, "AggregationGraph"))["status"]
    edges = {(e["aggregated"], e["source"]) for e in graph["edges"]}
    assert {("admin", "edit"), ("edit", "view"), ("view", "system:aggregate-to-view"),
            ("edit", "system:aggregate-to-edit"), ("admin", "system:aggregate-to-admin")} <= edges
    nodes = {n["name"]: n for n in graph["nodes"]}
    assert nodes["admin"]["aggregated"] and not nodes["system:aggregate-to-view"]["aggregated"]
    assert nodes["view"]["selectors"] == [f"{rbac(srv)}/aggregate-to-view=true"]
    denied = await ask(srv, "AggregationGraph", token="bob-token", code=403)
    assert 'cannot list resource "clusterroles"' in denied["message"]


# ---- RBACDiff ------------------------------------------------------------------------------------

def binding(srv: Server, name: str, role: str, subject: dict, namespace: str = "") -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{rbac(srv)}/v1", "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
            "metadata": meta, "roleRef": {"apiGroup": rbac(srv), "kind": "ClusterRole", "name": role},
            "subjects": [subject]}


async def test_diff_reports_permissions_granted_and_revoked_per_subject(srv):
    await grant(srv, user("bob"), rule(["get", "delete"], ["leases"], [f"coordination.{srv.domain}"]), name="leases")
    bob_less = {"apiVersion": f"{rbac(srv)}/v1", "kind": "ClusterRole", "metadata": {"name": "leases"},
                "rules": [rule(["get"], ["leases"], [f"coordination.{srv.domain}"])]}
    answer = await ask(srv, "RBACDiff", {"objects": [
        bob_less, binding(srv, "alice-leases", "leases", user("alice"), "team-a"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-z"}}]})
    changes = {c["subject"]["name"]: c for c in answer["status"]["subjects"]}
    assert changes["alice"]["granted"] == [{"namespace": "team-a", "verb": "get",
                                            "apiGroup": f"coordination.{srv.domain}", "resource": "leases"}]
    assert changes["bob"] == {"subject": {"kind": "User", "name": "bob"}, "revoked": [
        {"verb": "delete", "apiGroup": f"coordination.{srv.domain}", "resource": "leases"}]}
    assert answer["status"]["ignored"] == [{"kind": "Namespace", "name": "team-z"}]
    assert not await sar(srv, "alice", [], {"verb": "get", "resource": "leases", "namespace": "team-a",
                                            "group": f"coordination.{srv.domain}"})  # nothing was stored


async def test_diff_follows_aggregation_and_deletion(srv):
    await bind(srv, "alice-view", "ClusterRole", "view", [user("alice")], namespace="team-a")
    labelled = {"apiVersion": f"{rbac(srv)}/v1", "kind": "ClusterRole",
                "metadata": {"name": "read-leases", "labels": {f"{rbac(srv)}/aggregate-to-view": "true"}},
                "rules": [rule(["watch"], ["leases"], [f"coordination.{srv.domain}"])]}
    answer = await ask(srv, "RBACDiff", {"objects": [labelled]})
    (change,) = answer["status"]["subjects"]
    assert change["subject"]["name"] == "alice" and change["granted"] == [
        {"namespace": "team-a", "verb": "watch", "apiGroup": f"coordination.{srv.domain}", "resource": "leases"}]
    gone = await ask(srv, "RBACDiff", {"objects": [binding(srv, "alice-view", "view", user("alice"), "team-a")],
                                       "delete": True})
    (change,) = gone["status"]["subjects"]
    assert change["subject"]["name"] == "alice" and change["revoked"] and not change.get("granted")


async def test_bad_diff_objects_are_422_under_spec_objects(srv):
    answer = await ask(srv, "RBACDiff", {"objects": [
        {"apiVersion": f"{rbac(srv)}/v1", "kind": "ClusterRole", "metadata": {"name": "x"},
         "rules": [{"apiGroups": [""], "resources": ["pods"]}]},
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        binding(srv, "b", "view", user("a"), "team-a") | {"metadata": {"name": "b"}}]}, code=422)
    assert [(c["reason"], c["field"]) for c in answer["details"]["causes"]] == [
        ("FieldValueRequired", "spec.objects[0].rules[0].verbs"), ("FieldValueInvalid", "spec.objects[1].kind"),
        ("FieldValueRequired", "spec.objects[2].metadata.namespace")]


async def test_diff_needs_the_whole_policy(srv):
    await grant(srv, user("bob"), rule(["list"], ["clusterroles", "clusterrolebindings"], [rbac(srv)]))
    denied = await ask(srv, "RBACDiff", {"objects": []}, token="bob-token", code=403)
    assert 'cannot list resource "roles"' in denied["message"]
