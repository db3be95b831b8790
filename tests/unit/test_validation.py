"""Semantic validation, one test per rule (the 422 causes and their Kubernetes messages)."""

from __future__ import annotations

from runtime.machinery.scheme import Scheme

RBAC = "rbac.authorization.svc.io"
SCHEME = Scheme()


def validate_object(kind: str, obj: dict, *, namespaced: bool, rbac_group: str = RBAC) -> list:
    """The kind's strategy's create rules (a namespaced kind asked without a namespace: none given)."""
    return SCHEME.by_kind(kind).strategy.validate(obj)


def validate_update(kind: str, new: dict, old: dict, *, namespaced: bool, rbac_group: str = RBAC) -> list:
    return SCHEME.by_kind(kind).strategy.validate_update(new, old)


def errs(kind: str, obj: dict, namespaced: bool = False) -> list[str]:
    obj.setdefault("metadata", {}).setdefault("name", "x")
    if namespaced:
        obj["metadata"].setdefault("namespace", "ns")
    return [str(e) for e in validate_object(kind, obj, namespaced=namespaced, rbac_group=RBAC)]


def test_name_or_generate_name_is_required():
    assert errs("ClusterRole", {"metadata": {"name": ""}}) == [
        "metadata.name: Required value: name or generateName is required"]


def test_rbac_names_are_path_segment_names():
    assert errs("ClusterRole", {"metadata": {"name": "system:basic-user"}}) == []
    assert errs("ClusterRole", {"metadata": {"name": "a/b"}}) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"]
    assert errs("ClusterRole", {"metadata": {"name": ".."}}) == ["metadata.name: Invalid value: \"..\": may not be '..'"]


def test_namespace_names_are_dns_labels():
    assert errs("Namespace", {"metadata": {"name": "team-a"}}) == []
    assert errs("Namespace", {"metadata": {"name": "Team_A"}})[0].startswith(
        'metadata.name: Invalid value: "Team_A": a lowercase RFC 1123 label')


def test_namespaced_kinds_need_a_namespace_and_cluster_kinds_refuse_one():
    assert errs("Role", {"metadata": {"name": "r"}}, namespaced=False)[0:0] == []
    assert "metadata.namespace: Required value" in [
        str(e) for e in validate_object("Role", {"metadata": {"name": "r"}}, namespaced=True, rbac_group=RBAC)]
    assert errs("ClusterRole", {"metadata": {"name": "r", "namespace": "a"}}) == [
        "metadata.namespace: Forbidden: not allowed on this type"]


def test_policy_rule_needs_verbs():
    assert "rules[0].verbs: Required value: verbs must contain at least one value" in errs(
        "ClusterRole", {"rules": [{"apiGroups": [""], "resources": ["x"]}]})


def test_resource_rule_needs_api_groups_and_resources():
    assert errs("ClusterRole", {"rules": [{"verbs": ["get"]}]}) == [
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource"]


def test_rule_is_either_resources_or_non_resource_urls():
    assert errs("ClusterRole", {"rules": [{"verbs": ["get"], "resources": ["x"], "nonResourceURLs": ["/a"]}]}) == [
        'rules[0].nonResourceURLs: Invalid value: []string{"/a"}: rules cannot apply to both regular resources and '
        "non-resource URLs"]


def test_namespaced_role_cannot_have_non_resource_urls():
    assert 'rules[0].nonResourceURLs: Invalid value: []string{"/a"}: namespaced rules cannot apply to non-resource ' \
        'URLs' in \
        errs("Role", {"rules": [{"verbs": ["get"], "nonResourceURLs": ["/a"]}]}, namespaced=True)


def test_non_resource_urls_are_not_checked_for_stars_as_kubernetes_validation():
    # ValidatePolicyRule does not look inside the URLs: a misplaced `*` is stored (and matches nothing).
    for url in ("/apis/*", "*", "/healthz", "/api*", "/*/x", "/a/*b"):
        assert errs("ClusterRole", {"rules": [{"verbs": ["get"], "nonResourceURLs": [url]}]}) == []


def test_resource_names_with_non_resource_urls_is_both():
    assert errs("ClusterRole", {"rules": [{"verbs": ["get"], "resourceNames": ["n"], "nonResourceURLs": ["/a"]}]}) \
        == ['rules[0].nonResourceURLs: Invalid value: []string{"/a"}: rules cannot apply to both regular resources '
            "and non-resource URLs"]


def test_role_ref_api_group_kind_and_name():
    out = errs("RoleBinding", {"roleRef": {"apiGroup": "x", "kind": "Foo"}}, namespaced=True)
    assert 'roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.svc.io"' in out
    assert 'roleRef.kind: Unsupported value: "Foo": supported values: "Role", "ClusterRole"' in out
    assert "roleRef.name: Required value" in out


def test_cluster_role_binding_can_only_bind_cluster_roles():
    out = errs("ClusterRoleBinding", {"roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"}})
    assert out == ['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"']


def test_subject_kinds_and_api_groups():
    ref = {"apiGroup": RBAC, "kind": "ClusterRole", "name": "r"}
    out = errs("ClusterRoleBinding", {"roleRef": ref, "subjects": [
        {"kind": "Robot", "name": "r2"}, {"kind": "User", "name": "u", "apiGroup": "x"},
        {"kind": "ServiceAccount", "name": "sa", "apiGroup": ""}]})
    assert out == ['subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
                   'subjects[1].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.svc.io"',
                   "subjects[2].namespace: Required value"]


def test_role_ref_cannot_change_on_update():
    old = {"metadata": {"name": "b"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"}}
    new = {"metadata": {"name": "b"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"}}
    out = [str(e) for e in validate_update("ClusterRoleBinding", new, old, namespaced=False, rbac_group=RBAC)]
    assert out == ['roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.svc.io", Kind:"ClusterRole", '
                   'Name:"edit"}: cannot change roleRef']


def test_label_keys_and_values_are_checked():
    out = errs("ClusterRole", {"metadata": {"name": "x", "labels": {"bad key": "v", "ok": "bad value!"}}})
    assert len(out) == 2 and all(e.startswith("metadata.labels") for e in out)


def test_aggregation_rule_selectors():
    out = errs("ClusterRole", {"aggregationRule": {"clusterRoleSelectors": [
        {"matchExpressions": [{"key": "a", "operator": "In"}]}]}})
    assert out == ["aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: "
                   "must be specified when `operator` is 'In' or 'NotIn'",
                   'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.']


def test_lease_durations_and_names():
    out = errs("Lease", {"metadata": {"name": "Bad_Name", "namespace": "ns"},
                         "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}}, namespaced=True)
    assert out[0].startswith('metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')
    assert out[1:] == ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
                       "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"]
