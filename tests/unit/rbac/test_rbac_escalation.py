"""Escalation prevention: covers, breakdown, and Kubernetes' refusal message."""

from runtime.server.rbac import (
    AGGREGATION_RULE_FORBIDDEN, FULL_AUTHORITY_RULES, RBACAuthorizer, RBACIndex, UserInfo,
    bind_attributes, breakdown_rule, compact_string, confirm_no_escalation, covers,
    escalate_attributes, escalation_allowed,
)

RBAC = "rbac.authorization.k8s.io"
BOB = UserInfo("bob", groups=("devs", "system:authenticated"))


def bound(rules, ns=""):
    role = {"kind": "ClusterRole", "metadata": {"name": "held"}, "rules": rules}
    if ns:
        binding = {"kind": "RoleBinding", "metadata": {"name": "b", "namespace": ns},
                   "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "held"},
                   "subjects": [{"kind": "User", "name": "bob"}]}
    else:
        binding = {"kind": "ClusterRoleBinding", "metadata": {"name": "b"},
                   "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "held"},
                   "subjects": [{"kind": "User", "name": "bob"}]}
    return RBACIndex([role, binding])


def test_breakdown_rule_splits_per_group_resource_verb_and_name():
    rule = {"apiGroups": ["a", "b"], "resources": ["r"], "verbs": ["get", "list"],
            "resourceNames": ["x", "y"]}
    parts = breakdown_rule(rule)
    assert len(parts) == 8
    assert {"apiGroups": ["a"], "resources": ["r"], "verbs": ["get"], "resourceNames": ["y"]} in parts
    assert breakdown_rule({"nonResourceURLs": ["/a", "/b"], "verbs": ["get"]}) == [
        {"nonResourceURLs": ["/a"], "verbs": ["get"]},
        {"nonResourceURLs": ["/b"], "verbs": ["get"]},
    ]


def test_covers_with_stars():
    owner = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    assert covers(owner, [{"apiGroups": [RBAC], "resources": ["roles", "roles/status"],
                           "verbs": ["get", "bind"], "resourceNames": ["x"]}]) == (True, [])


def test_covers_star_slash_subresource():
    owner = [{"apiGroups": [""], "resources": ["*/status"], "verbs": ["get"]}]
    assert covers(owner, [{"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]}])[0]
    assert not covers(owner, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])[0]


def test_covers_resource_names_only_cover_named_requests():
    owner = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["p"]}]
    assert covers(owner, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
                           "resourceNames": ["p"]}])[0]
    ok, missing = covers(owner, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    assert not ok
    assert missing == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]


def test_covers_non_resource_urls_by_prefix():
    owner = [{"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}]
    assert covers(owner, [{"nonResourceURLs": ["/apis/foo"], "verbs": ["get"]}])[0]
    assert not covers(owner, [{"nonResourceURLs": ["/api"], "verbs": ["get"]}])[0]
    # a resource rule never covers a non-resource one
    assert not covers([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
                      [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}])[0]


def test_covers_lists_each_missing_piece():
    owner = [{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["get"]}]
    ok, missing = covers(owner, [{"apiGroups": [RBAC], "resources": ["roles"],
                                  "verbs": ["get", "delete", "update"]}])
    assert not ok
    assert missing == [
        {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["delete"]},
        {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["update"]},
    ]


def test_compact_string_is_kubernetes_format():
    assert compact_string({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}) == \
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}'


def test_confirm_no_escalation_passes_when_rules_are_held():
    source = bound([{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["*"]}])
    assert confirm_no_escalation(BOB, "team-a", [
        {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["get", "list"]}], source) is None


def test_confirm_no_escalation_message_lists_missing_rules():
    source = bound([{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["get"]}])
    message = confirm_no_escalation(BOB, "team-a", [
        {"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["get", "delete", "update"]},
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
    ], source)
    assert message == (
        'user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC '
        'permissions not currently held:\n'
        '{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["delete" "update"]}\n'
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}')


def test_confirm_no_escalation_role_binding_rules_count_only_in_their_namespace():
    source = bound([{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["*"]}], ns="team-a")
    wanted = [{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["get"]}]
    assert confirm_no_escalation(BOB, "team-a", wanted, source) is None
    assert confirm_no_escalation(BOB, "team-b", wanted, source) is not None


def test_confirm_no_escalation_appends_resolution_errors():
    source = bound([])
    source.upsert({"kind": "ClusterRoleBinding", "metadata": {"name": "z"},
                   "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "ghost"},
                   "subjects": [{"kind": "User", "name": "bob"}]})
    message = confirm_no_escalation(
        BOB, "", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}], source)
    assert message.endswith(
        '{APIGroups:[""], Resources:["pods"], Verbs:["get"]}'
        f'; resolution errors: [clusterrole.{RBAC} "ghost" not found]')


def test_aggregation_rule_needs_full_authority():
    partial = bound([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])
    assert confirm_no_escalation(BOB, "", FULL_AUTHORITY_RULES, partial) is not None
    full = bound(list(FULL_AUTHORITY_RULES))
    assert confirm_no_escalation(BOB, "", FULL_AUTHORITY_RULES, full) is None
    assert AGGREGATION_RULE_FORBIDDEN == "must have cluster-admin privileges to use the aggregationRule"


def test_system_masters_may_escalate():
    assert escalation_allowed(UserInfo("root", groups=("system:masters",)))
    assert not escalation_allowed(BOB)


def test_escalate_verb_is_checked_on_roles_through_the_authorizer():
    attrs = escalate_attributes(BOB, api_group=RBAC, resource="roles", namespace="team-a", name="r")
    assert (attrs.verb, attrs.resource, attrs.api_group, attrs.api_version, attrs.namespace,
            attrs.name, attrs.resource_request) == ("escalate", "roles", RBAC, "*", "team-a", "r", True)
    source = bound([{"apiGroups": [RBAC], "resources": ["roles"], "verbs": ["escalate"]}])
    assert RBACAuthorizer(source).authorize(attrs).allowed


def test_bind_verb_is_checked_on_the_referenced_role_name():
    attrs = bind_attributes(BOB, {"apiGroup": RBAC, "kind": "ClusterRole", "name": "admin"}, "team-a")
    assert (attrs.verb, attrs.resource, attrs.name, attrs.namespace) == \
        ("bind", "clusterroles", "admin", "team-a")
    source = bound([{"apiGroups": [RBAC], "resources": ["clusterroles"], "verbs": ["bind"],
                     "resourceNames": ["admin"]}])
    authz = RBACAuthorizer(source)
    assert authz.authorize(attrs).allowed
    other = bind_attributes(BOB, {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"}, "team-a")
    assert not authz.authorize(other).allowed
    assert bind_attributes(BOB, {"apiGroup": RBAC, "kind": "Widget", "name": "x"}, "") is None
    assert bind_attributes(BOB, {"apiGroup": RBAC, "kind": "Role", "name": "r"}, "ns").resource == "roles"
