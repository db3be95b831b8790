"""rules_for: what SelfSubjectRulesReview reports (Kubernetes' RulesFor + conversion)."""

from runtime.server.rbac import RBACIndex, UserInfo, load_bootstrap_policy, rules_for

RBAC = "rbac.authorization.svc.io"
ALICE = UserInfo("alice", groups=("system:authenticated",))


def crb(name, role_name, who="alice", kind="ClusterRole"):
    return {"kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role_name},
            "subjects": [{"kind": "User", "name": who}]}


def rb(ns, name, role_name, who="alice", kind="Role"):
    return {"kind": "RoleBinding", "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role_name},
            "subjects": [{"kind": "User", "name": who}]}


def source():
    return RBACIndex([
        {"kind": "ClusterRole", "metadata": {"name": "cluster-reader"}, "rules": [
            {"verbs": ["list"], "apiGroups": [RBAC], "resources": ["clusterroles"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
        ]},
        {"kind": "Role", "metadata": {"name": "editor", "namespace": "team-a"}, "rules": [
            {"verbs": ["get", "update"], "apiGroups": [RBAC], "resources": ["roles"],
             "resourceNames": ["r1"]},
        ]},
        {"kind": "Role", "metadata": {"name": "editor", "namespace": "team-b"}, "rules": [
            {"verbs": ["delete"], "apiGroups": [RBAC], "resources": ["roles"]},
        ]},
        crb("c", "cluster-reader"),
        rb("team-a", "a", "editor"),
        rb("team-b", "b", "editor"),
    ])


def test_rules_for_gives_cluster_and_namespace_rules_converted():
    resource_rules, non_resource_rules, incomplete, error = rules_for(ALICE, "team-a", source())
    assert resource_rules == [
        {"verbs": ["list"], "apiGroups": [RBAC], "resources": ["clusterroles"]},
        {"verbs": ["get", "update"], "apiGroups": [RBAC], "resources": ["roles"],
         "resourceNames": ["r1"]},
    ]
    assert non_resource_rules == [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]
    assert (incomplete, error) == (False, "")


def test_rules_for_excludes_role_bindings_of_other_namespaces():
    resource_rules, _, _, _ = rules_for(ALICE, "team-b", source())
    assert {"verbs": ["get", "update"], "apiGroups": [RBAC], "resources": ["roles"],
            "resourceNames": ["r1"]} not in resource_rules
    assert {"verbs": ["delete"], "apiGroups": [RBAC], "resources": ["roles"]} in resource_rules


def test_rules_for_empty_namespace_gives_cluster_rules_only():
    resource_rules, _, _, _ = rules_for(ALICE, "", source())
    assert resource_rules == [{"verbs": ["list"], "apiGroups": [RBAC], "resources": ["clusterroles"]}]


def test_rules_for_reports_resolution_errors_with_the_rules_found():
    idx = source()
    idx.upsert(crb("broken", "ghost"))
    resource_rules, _, incomplete, error = rules_for(ALICE, "", idx)
    assert resource_rules  # what was found still holds
    assert incomplete is False
    assert error == f'clusterrole.{RBAC} "ghost" not found'


def test_rules_for_system_masters_reports_star_rules():
    root = UserInfo("root", groups=("system:masters", "system:authenticated"))
    resource_rules, non_resource_rules, _, _ = rules_for(root, "team-a", RBACIndex())
    assert resource_rules == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
    assert non_resource_rules == [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def test_rules_for_system_masters_with_bootstrap_policy_lists_star_rules_once():
    root = UserInfo("root", groups=("system:masters", "system:authenticated"))
    idx = RBACIndex(load_bootstrap_policy("svc.io"))
    resource_rules, non_resource_rules, _, error = rules_for(root, "team-a", idx)
    assert resource_rules.count({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}) == 1
    assert non_resource_rules.count({"verbs": ["*"], "nonResourceURLs": ["*"]}) == 1
    assert {"verbs": ["create"], "apiGroups": ["authorization.svc.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]} in resource_rules
    assert error == ""
