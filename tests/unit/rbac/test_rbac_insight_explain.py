"""explain(): the authorizer's verdict as data, attribute checks, and each kind of near miss."""

from __future__ import annotations

from runtime.server.rbac import (
    RBACAuthorizer, SYSTEM_MASTERS, UserInfo, non_resource_attributes, resource_attributes,
)
from runtime.models.insight import InsightObjectRef
from runtime.server.rbac.insight import AGGREGATION, ATTRIBUTE, CLUSTER_SCOPE, NAMESPACE_KIND, ROLE_REF, with_attribute
from runtime.server.rbac.insight import aggregate
from runtime.server.rbac.insight import explain
from tests.support.rbac_objects import (
    ALICE, RBAC, cluster_role, cluster_scoped, crb, group, index, rb, role, rule, user,
)

READ_ROLES = rule(["get", "list"], ["roles"], [RBAC])


def list_roles(who=ALICE, ns="team-a", verb="list", **kw):
    return resource_attributes(who, verb, "roles", api_group=RBAC, namespace=ns, **kw)


def misses(explanation, kind=None):
    return [m for m in explanation.near_misses if kind is None or m.kind == kind]


def test_verdict_reason_and_granting_rule_are_the_authorizers():
    source = index(role("team-a", "reader", [rule(["watch"], ["pods"]), READ_ROLES]),
                   rb("team-a", "alice-reads", "reader", [user("alice")]))
    attrs = list_roles()
    e = explain(attrs, source)
    decision = RBACAuthorizer(source).authorize(attrs)
    assert e.allowed and (e.reason, e.evaluation_error) == (decision.reason, "")
    assert e.granted_by.binding == InsightObjectRef("RoleBinding", "alice-reads", "team-a")
    assert e.granted_by.role == InsightObjectRef("Role", "reader", "team-a")
    assert e.granted_by.rule_index == 1
    assert [r.matched for r in e.bindings[0].rules] == [False, True]


def test_system_masters_is_allowed_by_the_privileged_group_not_a_rule():
    admin = UserInfo("root", groups=(SYSTEM_MASTERS,))
    e = explain(list_roles(admin), index())
    assert e.allowed and e.privileged_group == SYSTEM_MASTERS and e.granted_by is None


def test_bindings_that_apply_are_listed_cluster_bindings_first_and_others_left_out():
    source = index(cluster_role("reader", [READ_ROLES]),
                   rb("team-a", "a-ns", "reader", [group("system:authenticated")], kind="ClusterRole"),
                   crb("a-cluster", "reader", [user("alice")]),
                   crb("bob-only", "reader", [user("bob")]),
                   rb("team-b", "elsewhere", "reader", [user("alice")], kind="ClusterRole"))
    e = explain(list_roles(), source)
    assert [b.binding.name for b in e.bindings] == ["a-cluster", "a-ns"]
    assert e.bindings[1].subject.kind == "Group" and e.granted_by.binding.name == "a-cluster"


def test_cluster_wide_request_reads_no_role_bindings():
    source = index(role("team-a", "reader", [READ_ROLES]),
                   rb("team-a", "alice-reads", "reader", [user("alice")]))
    e = explain(list_roles(ns=""), source)
    assert not e.allowed and e.bindings == []


def test_each_rule_is_checked_attribute_by_attribute_with_the_namespace_scope():
    source = index(role("team-a", "reader", [READ_ROLES]),
                   rb("team-a", "alice-reads", "reader", [user("alice")]))
    e = explain(list_roles(verb="delete", name="x"), source)
    checks = {c.attribute: c for c in e.bindings[0].rules[0].checks}
    assert list(checks) == ["verb", "apiGroup", "resource", "subresource", "resourceName",
                            "namespace"]
    assert not checks["verb"].matched and checks["verb"].allowed == ["get", "list"]
    assert all(checks[a].matched for a in ("apiGroup", "resource", "subresource",
                                           "resourceName", "namespace"))
    assert checks["namespace"].allowed == ["team-a"]


def test_non_resource_request_is_checked_on_verb_and_url():
    source = index(cluster_role("health", [rule(["get"], urls=["/healthz", "/readyz"])]),
                   crb("h", "health", [user("alice")]))
    e = explain(non_resource_attributes(ALICE, "get", "/livez"), source)
    checks = {c.attribute: c for c in e.bindings[0].rules[0].checks}
    assert set(checks) == {"verb", "nonResourceURL", "namespace"}
    assert checks["verb"].matched and not checks["nonResourceURL"].matched


def _only_attribute_miss(e):
    [miss] = misses(e, ATTRIBUTE)
    return miss


def test_near_miss_right_resource_wrong_verb_suggests_a_verb_of_the_rule():
    source = index(role("team-a", "reader", [READ_ROLES]),
                   rb("team-a", "alice-reads", "reader", [user("alice")]))
    attrs = list_roles(verb="delete")
    miss = _only_attribute_miss(explain(attrs, source))
    assert (miss.attribute, miss.requested, miss.suggestion) == ("verb", "delete", "get")
    assert RBACAuthorizer(source).authorize(with_attribute(attrs, "verb", miss.suggestion)).allowed


def test_near_miss_wrong_api_group():
    source = index(cluster_role("r", [rule(["get"], ["roles"], ["other.io"])]),
                   crb("b", "r", [user("alice")]))
    miss = _only_attribute_miss(explain(list_roles(verb="get"), source))
    assert (miss.attribute, miss.suggestion) == ("apiGroup", "other.io")


def test_near_miss_wrong_resource_same_subresource():
    source = index(cluster_role("r", [rule(["get"], ["secrets/status"])]),
                   crb("b", "r", [user("alice")]))
    attrs = resource_attributes(ALICE, "get", "pods", subresource="status", namespace="n")
    miss = _only_attribute_miss(explain(attrs, source))
    assert (miss.attribute, miss.requested, miss.suggestion) == ("resource", "pods", "secrets")


def test_near_miss_right_resource_wrong_subresource():
    source = index(cluster_role("r", [rule(["get"], ["pods/log"])]), crb("b", "r", [user("alice")]))
    exec_ = resource_attributes(ALICE, "get", "pods", subresource="exec", namespace="n")
    miss = _only_attribute_miss(explain(exec_, source))
    assert (miss.attribute, miss.requested, miss.suggestion) == ("subresource", "exec", "log")


def test_near_miss_subresource_of_a_resource_rule_suggests_none():
    source = index(cluster_role("r", [rule(["get"], ["pods"])]), crb("b", "r", [user("alice")]))
    log = resource_attributes(ALICE, "get", "pods", subresource="log", namespace="n")
    miss = _only_attribute_miss(explain(log, source))
    assert (miss.attribute, miss.suggestion) == ("subresource", "")
    assert miss.to_dict()["suggestion"] == ""


def test_near_miss_resource_name_not_listed():
    source = index(cluster_role("r", [rule(["get", "list"], ["pods"], names=["web"])]),
                   crb("b", "r", [user("alice")]))
    get_db = resource_attributes(ALICE, "get", "pods", namespace="n", name="db")
    miss = _only_attribute_miss(explain(get_db, source))
    assert (miss.attribute, miss.suggestion) == ("resourceName", "web")
    list_all = with_attribute(with_attribute(get_db, "verb", "list"), "resourceName", "")
    listing = _only_attribute_miss(explain(list_all, source))
    assert "without a name" in listing.message


def test_near_miss_non_resource_url_prefix():
    source = index(cluster_role("r", [rule(["get"], urls=["/apis/*"])]),
                   crb("b", "r", [user("alice")]))
    attrs = non_resource_attributes(ALICE, "get", "/api")
    miss = _only_attribute_miss(explain(attrs, source))
    assert (miss.attribute, miss.suggestion) == ("nonResourceURL", "/apis/")
    assert RBACAuthorizer(source).authorize(with_attribute(attrs, "nonResourceURL", "/apis/")).allowed


def test_rule_off_by_two_attributes_is_not_a_near_miss():
    source = index(role("team-a", "reader", [READ_ROLES]),
                   rb("team-a", "alice-reads", "reader", [user("alice")]))
    e = explain(resource_attributes(ALICE, "delete", "pods", namespace="team-a"), source)
    assert misses(e) == []


def test_near_miss_role_binding_of_another_namespace_would_grant():
    source = index(cluster_role("reader", [READ_ROLES]),
                   rb("team-b", "alice-b", "reader", [user("alice")], kind="ClusterRole"))
    attrs = list_roles()
    [miss] = misses(explain(attrs, source))
    assert (miss.kind, miss.attribute, miss.suggestion) == (NAMESPACE_KIND, "namespace", "team-b")
    assert miss.binding == InsightObjectRef("RoleBinding", "alice-b", "team-b")
    assert RBACAuthorizer(source).authorize(with_attribute(attrs, "namespace", "team-b")).allowed
    [across] = misses(explain(list_roles(ns=""), source))
    assert across.kind == NAMESPACE_KIND and "across all namespaces" in across.message


def test_near_miss_role_binding_never_grants_a_cluster_scoped_resource():
    source = index(cluster_role("node-reader", [rule(["get"], ["nodes"])]),
                   rb("team-a", "nodes-a", "node-reader", [user("alice")], kind="ClusterRole"))
    e = explain(resource_attributes(ALICE, "get", "nodes", name="n1"), source,
                cluster_scoped=cluster_scoped)
    [miss] = misses(e)
    assert miss.kind == CLUSTER_SCOPE and miss.suggestion is None
    assert "ClusterRoleBinding" in miss.message
    assert e.scope == "Cluster" and "cluster-scoped" in e.notes[0]


def test_namespaced_request_for_a_cluster_scoped_resource_is_allowed_but_noted():
    source = index(cluster_role("node-reader", [rule(["get"], ["nodes"])]),
                   rb("team-a", "nodes-a", "node-reader", [user("alice")], kind="ClusterRole"))
    attrs = resource_attributes(ALICE, "get", "nodes", namespace="team-a", name="n1")
    e = explain(attrs, source, cluster_scoped=cluster_scoped)
    assert e.allowed == RBACAuthorizer(source).authorize(attrs).allowed is True
    assert any("matches only because of it" in n for n in e.notes)


def test_near_miss_cluster_role_the_aggregation_does_not_select():
    agg = cluster_role("agg", selectors=[{"matchLabels": {"agg-to": "reader"}}])
    extra = cluster_role("extra", [READ_ROLES], labels={"team": "x"})
    policy = [agg, extra, crb("b", "agg", [user("alice")])]
    source = aggregate(index(*policy))
    attrs = list_roles()
    [miss] = misses(explain(attrs, source))
    assert (miss.kind, miss.attribute) == (AGGREGATION, "labels")
    assert miss.source_role == InsightObjectRef("ClusterRole", "extra") and miss.role.name == "agg"
    assert miss.to_dict()["labels"] == {"agg-to": "reader"}
    relabelled = dict(extra, metadata={"name": "extra", "labels": {"team": "x", **dict(miss.labels)}})
    fixed = aggregate(index(agg, relabelled, policy[2]))
    assert RBACAuthorizer(fixed).authorize(attrs).allowed


def test_aggregation_near_miss_sets_labels_for_in_and_exists_but_never_removes_one():
    extra = cluster_role("extra", [READ_ROLES], labels={"tier": "gold"})
    binding = crb("b", "agg", [user("alice")])
    expressions = cluster_role("agg", selectors=[{"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["silver"]},
        {"key": "rbac", "operator": "Exists"}]}])
    [miss] = misses(explain(list_roles(), aggregate(index(expressions, extra, binding))))
    assert dict(miss.labels) == {"tier": "silver", "rbac": "true"}
    refusing = cluster_role("agg", selectors=[{"matchExpressions": [
        {"key": "tier", "operator": "DoesNotExist"}]}])
    assert misses(explain(list_roles(), aggregate(index(refusing, extra, binding)))) == []


def test_near_miss_role_ref_that_does_not_resolve():
    source = index(rb("team-a", "dangling", "gone", [user("alice")]))
    e = explain(list_roles(), source)
    [miss] = misses(e)
    assert (miss.kind, miss.attribute) == (ROLE_REF, "roleRef")
    assert e.bindings[0].error and "not found" in miss.message
    assert e.evaluation_error == RBACAuthorizer(source).authorize(list_roles()).evaluation_error


def test_rules_of_an_aggregated_role_name_their_origin():
    agg = cluster_role("agg", selectors=[{"matchLabels": {"a": "1"}}])
    source = aggregate(index(agg, cluster_role("one", [READ_ROLES], labels={"a": "1"}),
                             crb("b", "agg", [user("alice")])))
    e = explain(list_roles(), source)
    assert e.bindings[0].aggregated and e.bindings[0].rules[0].aggregated_from == ["one"]


def test_to_dict_is_camel_case_and_omits_empty_fields():
    source = index(role("team-a", "reader", [READ_ROLES]),
                   rb("team-a", "alice-reads", "reader", [user("alice")]))
    d = explain(list_roles(), source).to_dict()
    assert d["allowed"] is True and d["grantedBy"]["ruleIndex"] == 0
    assert d["grantedBy"]["rule"]["apiGroups"] == [RBAC]
    assert d["request"]["resourceRequest"] is True and "subresource" not in d["request"]
    assert "nearMisses" not in d and "privilegedGroup" not in d
    check = d["bindings"][0]["rules"][0]["checks"][3]
    assert check == {"attribute": "subresource", "matched": True, "requested": "",
                     "allowed": ["roles"]}
