"""Bootstrap policy: loading with the domain, authorizing with it, reconciling."""

import pytest

from runtime.server.rbac import (
    RBACAuthorizer, RBACIndex, UserInfo, default_policy_path, load_bootstrap_policy,
    non_resource_attributes, parse_bootstrap_policy, reconcile_binding, reconcile_role,
    resource_attributes,
)


def by_name(objs, kind):
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_bootstrap_policy_substitutes_the_domain():
    objs = load_bootstrap_policy("example.org")
    assert objs and all(o["apiVersion"] == "rbac.authorization.example.org/v1" for o in objs)
    assert default_policy_path().read_text().count("${DOMAIN}") > 0
    assert "${DOMAIN}" not in repr(objs)
    roles = by_name(objs, "ClusterRole")
    assert roles["system:basic-user"]["rules"][0]["apiGroups"] == ["authorization.example.org"]
    assert by_name(objs, "ClusterRoleBinding")["cluster-admin"]["roleRef"]["apiGroup"] == \
        "rbac.authorization.example.org"


def test_bootstrap_policy_holds_kubernetes_default_roles_and_bindings():
    objs = load_bootstrap_policy("k8s.io")
    assert set(by_name(objs, "ClusterRole")) == {
        "cluster-admin", "admin", "edit", "view", "system:aggregate-to-admin",
        "system:aggregate-to-edit", "system:aggregate-to-view", "system:auth-delegator", "system:basic-user",
        "system:discovery", "system:monitoring", "system:public-info-viewer"}
    bindings = by_name(objs, "ClusterRoleBinding")
    # Kubernetes' own (1.32): basic-user and discovery for authenticated users only.
    assert {n: [s["name"] for s in b["subjects"]] for n, b in bindings.items()} == {
        "cluster-admin": ["system:masters"],
        "system:basic-user": ["system:authenticated"],
        "system:discovery": ["system:authenticated"],
        "system:monitoring": ["system:monitoring"],
        "system:public-info-viewer": ["system:authenticated", "system:unauthenticated"],
    }
    for obj in objs:
        assert obj["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        assert obj["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] == "true"


def test_user_facing_roles_aggregate_by_label():
    roles = by_name(load_bootstrap_policy("k8s.io"), "ClusterRole")
    for name in ("admin", "edit", "view"):
        assert roles[name]["rules"] == []
        assert roles[name]["aggregationRule"]["clusterRoleSelectors"] == [
            {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{name}": "true"}}]
        assert roles[f"system:aggregate-to-{name}"]["metadata"]["labels"][
            f"rbac.authorization.k8s.io/aggregate-to-{name}"] == "true"


def test_bootstrap_policy_explicit_path(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("---\napiVersion: rbac.authorization.${DOMAIN}/v1\nkind: ClusterRole\n"
                    "metadata: {name: r}\n---\n")
    assert load_bootstrap_policy("svc.io", path) == [
        {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}}]
    with pytest.raises(ValueError):
        parse_bootstrap_policy("a: b", "")


def test_bootstrap_policy_grants_discovery_and_self_review_to_authenticated_users():
    authz = RBACAuthorizer(RBACIndex(load_bootstrap_policy("svc.io")))
    bob = UserInfo("bob", groups=("system:authenticated",))
    anon = UserInfo("system:anonymous", groups=("system:unauthenticated",))
    assert authz.authorize(non_resource_attributes(bob, "get", "/apis/foo")).allowed
    assert authz.authorize(resource_attributes(bob, "create", "selfsubjectrulesreviews",
                                               api_group="authorization.svc.io")).allowed
    assert authz.authorize(non_resource_attributes(anon, "get", "/version")).allowed
    assert not authz.authorize(non_resource_attributes(anon, "get", "/apis")).allowed
    assert not authz.authorize(resource_attributes(bob, "list", "roles",
                                                   api_group="rbac.authorization.svc.io",
                                                   namespace="a")).allowed


def test_reconcile_role_creates_when_missing():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRole")["system:discovery"]
    assert reconcile_role(None, wanted) == wanted


def test_reconcile_role_unchanged_is_none():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRole")["system:discovery"]
    stored = dict(wanted, metadata=dict(wanted["metadata"], resourceVersion="7"))
    assert reconcile_role(stored, wanted) is None


def test_reconcile_role_adds_missing_rules_and_keeps_user_rules():
    wanted = {"kind": "ClusterRole", "metadata": {"name": "r", "labels": {"a": "1"}},
              "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}]}
    stored = {"kind": "ClusterRole",
              "metadata": {"name": "r", "resourceVersion": "3", "labels": {"a": "mine", "b": "2"},
                           "annotations": {"note": "x"}},
              "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
                        {"apiGroups": ["x.io"], "resources": ["things"], "verbs": ["*"]}]}
    result = reconcile_role(stored, wanted)
    assert result["rules"] == stored["rules"] + [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]}]
    assert result["metadata"]["labels"] == {"a": "mine", "b": "2"}
    assert result["metadata"]["annotations"] == {"note": "x"}
    assert result["metadata"]["resourceVersion"] == "3"
    assert stored["rules"][0]["verbs"] == ["get"]  # input untouched


def test_reconcile_role_unions_labels_and_annotations():
    wanted = {"kind": "ClusterRole", "metadata": {"name": "r", "labels": {"l": "1"},
                                                  "annotations": {"an": "1"}}, "rules": []}
    stored = {"kind": "ClusterRole", "metadata": {"name": "r", "labels": {"mine": "y"}}, "rules": []}
    result = reconcile_role(stored, wanted)
    assert result["metadata"]["labels"] == {"l": "1", "mine": "y"}
    assert result["metadata"]["annotations"] == {"an": "1"}


def test_reconcile_role_adds_missing_aggregation_selectors():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRole")["admin"]
    extra = {"matchLabels": {"example.com/aggregate": "true"}}
    stored = dict(wanted, aggregationRule={"clusterRoleSelectors": [extra]},
                  rules=[{"apiGroups": ["x"], "resources": ["y"], "verbs": ["get"]}])
    result = reconcile_role(stored, wanted)
    assert result["aggregationRule"]["clusterRoleSelectors"] == \
        [extra] + wanted["aggregationRule"]["clusterRoleSelectors"]
    assert result["rules"] == stored["rules"]  # aggregated rules are the controller's


def test_reconcile_role_leaves_autoupdate_false_alone():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRole")["system:discovery"]
    stored = {"kind": "ClusterRole", "metadata": {
        "name": "system:discovery",
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "false"}}, "rules": []}
    assert reconcile_role(stored, wanted) is None


def test_reconcile_binding_adds_missing_subjects_and_keeps_user_subjects():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRoleBinding")["system:public-info-viewer"]
    mine = {"apiGroup": "rbac.authorization.svc.io", "kind": "User", "name": "carol"}
    stored = dict(wanted, subjects=[wanted["subjects"][0], mine])
    result = reconcile_binding(stored, wanted)
    assert result["subjects"] == [wanted["subjects"][0], mine, wanted["subjects"][1]]
    assert reconcile_binding(result, wanted) is None


def test_reconcile_binding_with_other_role_ref_is_recreated():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRoleBinding")["cluster-admin"]
    stored = dict(wanted, roleRef=dict(wanted["roleRef"], name="view"))
    result = reconcile_binding(stored, wanted)
    assert result == wanted and result["roleRef"] != stored["roleRef"]


def test_reconcile_binding_leaves_autoupdate_false_alone():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRoleBinding")["system:discovery"]
    stored = dict(wanted, subjects=[], metadata=dict(
        wanted["metadata"], annotations={"rbac.authorization.kubernetes.io/autoupdate": "false"}))
    assert reconcile_binding(stored, wanted) is None


def test_reconcile_role_removes_aggregation_from_a_role_that_should_not_aggregate():
    wanted = by_name(load_bootstrap_policy("svc.io"), "ClusterRole")["system:discovery"]
    stored = dict(wanted, aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]})
    result = reconcile_role(stored, wanted)
    assert "aggregationRule" not in result
    assert result["rules"] == wanted["rules"]
