"""lint(): each finding, and the ranking of risky grants."""

from __future__ import annotations

from runtime.server.rbac import load_bootstrap_policy
from runtime.models.insight import InsightObjectRef, Severity
from runtime.server.rbac.insight import rule_risks
from runtime.server.rbac.insight import aggregate
from runtime.server.rbac.insight import lint
from tests.support.rbac_objects import (
    RBAC, cluster_role, crb, index, rb, role, rule, sa, user,
)

NAMESPACES = {"default", "team-a"}


def kinds(findings, kind):
    return [f for f in findings if f.kind == kind]


def test_role_ref_not_found():
    [f] = kinds(lint(index(rb("team-a", "b", "gone", [user("alice")])), NAMESPACES),
                "RoleRefNotFound")
    assert f.level is Severity.MEDIUM and f.object == InsightObjectRef("RoleBinding", "b", "team-a")
    assert f.path == "roleRef" and "not found" in f.message


def test_service_account_subject_in_a_namespace_that_does_not_exist():
    source = index(cluster_role("r"), crb("b", "r", [sa("bot", "ghost"), sa("ok", "default")]))
    [f] = kinds(lint(source, NAMESPACES), "SubjectNamespaceNotFound")
    assert f.path == "subjects[0]" and "'ghost'" in f.message


def test_service_account_subject_of_a_cluster_role_binding_without_namespace():
    source = index(cluster_role("r"), crb("b", "r", [sa("bot")]),
                   rb("team-a", "ok", "r", [sa("defaulted")], kind="ClusterRole"))
    [f] = kinds(lint(source, NAMESPACES), "ServiceAccountNamespaceMissing")
    assert f.object.kind == "ClusterRoleBinding" and f.level is Severity.LOW


def test_objects_left_in_a_namespace_that_does_not_exist():
    source = index(role("gone", "r"), rb("gone", "b", "r", [user("alice")]))
    assert {f.object.kind for f in kinds(lint(source, NAMESPACES), "NamespaceNotFound")} == {
        "Role", "RoleBinding"}


def test_invalid_subject():
    source = index(cluster_role("r"), crb("b", "r", [{"kind": "Robot", "name": "r2"},
                                                     {**user("alice"), "namespace": "x"}]))
    assert [f.path for f in kinds(lint(source, NAMESPACES), "InvalidSubject")] == [
        "subjects[0]", "subjects[1]"]


def test_unknown_verbs_and_rules_that_never_match():
    source = index(cluster_role("r", [rule(["get", "fetch"], ["pods"]),
                                      rule(["fetch"], ["pods"]),
                                      rule(["post"], urls=["/metrics"]),
                                      rule(["escalate", "approve", "*"], ["roles"], [RBAC]),
                                      {"verbs": ["get"], "resources": ["pods"]},
                                      {"verbs": [], "apiGroups": [""], "resources": ["pods"]}]))
    findings = lint(source, NAMESPACES)
    assert [f.path for f in kinds(findings, "UnknownVerb")] == ["rules[0].verbs", "rules[1].verbs"]
    never = {f.path: f.message for f in kinds(findings, "RuleNeverMatches")}
    assert set(never) == {"rules[1]", "rules[4]", "rules[5]"}
    assert "no apiGroups" in never["rules[4]"] and "no verbs" in never["rules[5]"]


def test_non_resource_urls_in_a_role():
    source = index(role("team-a", "r", [rule(["get"], urls=["/healthz"])]))
    [f] = kinds(lint(source, NAMESPACES), "NonResourceURLInRole")
    assert f.object == InsightObjectRef("Role", "r", "team-a")


def test_resource_names_with_create_never_match():
    source = index(cluster_role("r", [rule(["create", "get"], ["pods"], names=["web"])]))
    [f] = kinds(lint(source, NAMESPACES), "ResourceNamesNeverMatch")
    assert "create" in f.message and "get" not in f.message


def test_risky_grants_are_ranked_as_kubiscan_ranks_them():
    assert rule_risks(rule(["*"], ["*"], ["*"]))[0] == (Severity.CRITICAL, "every verb on every resource")
    assert rule_risks(rule(["escalate"], ["clusterroles"], [RBAC]))[0][0] is Severity.CRITICAL
    assert rule_risks(rule(["bind"], ["roles"], ["*"], names=["admin"]))[0][0] is Severity.CRITICAL
    assert rule_risks(rule(["impersonate"], ["users"], names=["root"]))[0][0] is Severity.CRITICAL
    assert rule_risks(rule(["list"], ["secrets"]))[0] == (Severity.CRITICAL, "read secrets")
    assert rule_risks(rule(["create"], ["rolebindings"], [RBAC]))[0][0] is Severity.HIGH
    assert rule_risks(rule(["get"], ["nodes/proxy"]))[0][0] is Severity.HIGH
    assert rule_risks(rule(["create"], ["pods/exec"]))[0][0] is Severity.HIGH
    assert rule_risks(rule(["*"], ["configmaps"])) == [(Severity.MEDIUM, "every verb (*)")]
    assert rule_risks(rule(["patch"], ["rolebindings"], [RBAC])) == [
        (Severity.LOW, "update rolebindings")]
    assert rule_risks(rule(["get", "list"], ["pods", "configmaps"])) == []
    assert rule_risks(rule(["list"], ["secrets"], ["example.com"])) == []


def test_risky_grant_findings_come_first():
    source = index(cluster_role("reader", [rule(["get"], ["pods"]), rule(["get"], ["secrets"])]),
                   rb("team-a", "b", "gone", [user("alice")]))
    findings = lint(source, NAMESPACES)
    assert findings[0].kind == "RiskyGrant" and findings[0].path == "rules[1]"
    assert [f.level.rank for f in findings] == sorted((f.level.rank for f in findings),
                                                         reverse=True)


def test_aggregated_rules_are_traced_to_the_cluster_role_they_came_from():
    agg = cluster_role("agg", selectors=[{"matchLabels": {"a": "1"}}])
    source = aggregate(index(agg, cluster_role("one", [rule(["get"], ["pods"])], labels={"a": "1"})))
    [f] = kinds(lint(source, NAMESPACES), "AggregatedRule")
    assert f.level is Severity.INFO and f.object.name == "agg" and "one" in f.message


def test_aggregated_rule_no_selected_role_holds_is_flagged():
    agg = cluster_role("agg", [rule(["get"], ["pods"])], selectors=[{"matchLabels": {"a": "1"}}])
    [f] = kinds(lint(index(agg), NAMESPACES), "AggregatedRuleWithoutSource")
    assert f.path == "rules[0]"


def test_malformed_aggregation_selector():
    bad = cluster_role("bad", selectors=[{"matchExpressions": [{"key": "a", "operator": "Nope"}]}])
    assert kinds(lint(index(bad), NAMESPACES), "AggregationSelectorInvalid")


def test_bootstrap_policy_lints_without_errors_only_risks_and_traces():
    source = aggregate(index(*load_bootstrap_policy("k8s.io")))
    found = {f.kind for f in lint(source, {"default", "kube-system", "kube-public"})}
    assert found <= {"RiskyGrant", "AggregatedRule"}
    assert lint(source, set())[0].to_dict()["severity"] == "Critical"
