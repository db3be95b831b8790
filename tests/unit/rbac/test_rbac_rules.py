"""Rule matching: one test per PolicyRule rule (Kubernetes' RuleAllows)."""

from runtime.server.rbac import UserInfo, non_resource_attributes, resource_attributes, rule_allows

RBAC = "rbac.authorization.svc.io"
ALICE = UserInfo("alice")


def res(verb, resource, *, group="", sub="", name="", ns=""):
    return resource_attributes(ALICE, verb, resource, api_group=group, subresource=sub,
                               name=name, namespace=ns)


def test_verb_star_matches_every_verb():
    rule = {"verbs": ["*"], "apiGroups": [RBAC], "resources": ["roles"]}
    for verb in ("get", "list", "delete", "escalate", "bind"):
        assert rule_allows(res(verb, "roles", group=RBAC), rule)


def test_verb_must_be_listed():
    rule = {"verbs": ["get"], "apiGroups": [RBAC], "resources": ["roles"]}
    assert rule_allows(res("get", "roles", group=RBAC), rule)
    assert not rule_allows(res("list", "roles", group=RBAC), rule)


def test_empty_string_api_group_is_the_core_group():
    rule = {"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}
    assert rule_allows(res("get", "namespaces", name="a"), rule)
    assert not rule_allows(res("get", "namespaces", group=RBAC, name="a"), rule)


def test_api_group_star_matches_every_group():
    rule = {"verbs": ["get"], "apiGroups": ["*"], "resources": ["roles"]}
    assert rule_allows(res("get", "roles", group=RBAC), rule)
    assert rule_allows(res("get", "roles"), rule)


def test_resource_star_matches_resources_and_subresources():
    rule = {"verbs": ["get"], "apiGroups": [RBAC], "resources": ["*"]}
    assert rule_allows(res("get", "roles", group=RBAC), rule)
    assert rule_allows(res("get", "clusterroles", group=RBAC, sub="status"), rule)


def test_star_slash_subresource_matches_that_subresource_of_any_resource():
    rule = {"verbs": ["update"], "apiGroups": [RBAC], "resources": ["*/status"]}
    assert rule_allows(res("update", "clusterroles", group=RBAC, sub="status", name="x"), rule)
    assert rule_allows(res("update", "roles", group=RBAC, sub="status", name="x"), rule)
    assert not rule_allows(res("update", "roles", group=RBAC, name="x"), rule)
    assert not rule_allows(res("update", "roles", group=RBAC, sub="scale", name="x"), rule)


def test_resource_rule_does_not_cover_its_subresource():
    rule = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    assert rule_allows(res("get", "pods", name="p"), rule)
    assert not rule_allows(res("get", "pods", sub="status", name="p"), rule)


def test_subresource_rule_does_not_cover_the_resource():
    rule = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/status"]}
    assert rule_allows(res("get", "pods", sub="status", name="p"), rule)
    assert not rule_allows(res("get", "pods", name="p"), rule)


def test_resource_names_allow_only_named_get():
    rule = {"verbs": ["get", "list", "create"], "apiGroups": [RBAC], "resources": ["roles"],
            "resourceNames": ["reader"]}
    assert rule_allows(res("get", "roles", group=RBAC, name="reader"), rule)
    assert not rule_allows(res("get", "roles", group=RBAC, name="writer"), rule)


def test_resource_names_never_match_list():
    rule = {"verbs": ["list"], "apiGroups": [RBAC], "resources": ["roles"],
            "resourceNames": ["reader"]}
    assert not rule_allows(res("list", "roles", group=RBAC, ns="a"), rule)


def test_resource_names_never_match_create():
    rule = {"verbs": ["create"], "apiGroups": [RBAC], "resources": ["roles"],
            "resourceNames": ["reader"]}
    assert not rule_allows(res("create", "roles", group=RBAC, ns="a"), rule)


def test_empty_resource_names_match_every_name_and_the_collection():
    rule = {"verbs": ["get", "list"], "apiGroups": [RBAC], "resources": ["roles"],
            "resourceNames": []}
    assert rule_allows(res("get", "roles", group=RBAC, name="any"), rule)
    assert rule_allows(res("list", "roles", group=RBAC), rule)


def test_non_resource_url_trailing_star_is_a_prefix_match():
    rule = {"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}
    assert rule_allows(non_resource_attributes(ALICE, "get", "/apis/foo"), rule)
    assert rule_allows(non_resource_attributes(ALICE, "get", "/apis/foo/v1"), rule)
    assert not rule_allows(non_resource_attributes(ALICE, "get", "/apis"), rule)
    assert not rule_allows(non_resource_attributes(ALICE, "get", "/api/v1"), rule)


def test_non_resource_url_exact_match():
    rule = {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
    assert rule_allows(non_resource_attributes(ALICE, "get", "/healthz"), rule)
    assert not rule_allows(non_resource_attributes(ALICE, "get", "/healthz/etcd"), rule)
    assert not rule_allows(non_resource_attributes(ALICE, "post", "/healthz"), rule)


def test_non_resource_url_star_matches_every_path():
    rule = {"verbs": ["*"], "nonResourceURLs": ["*"]}
    assert rule_allows(non_resource_attributes(ALICE, "post", "/anything/at/all"), rule)


def test_resource_rule_never_matches_non_resource_request():
    rule = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
    assert not rule_allows(non_resource_attributes(ALICE, "get", "/healthz"), rule)


def test_non_resource_rule_never_matches_resource_request():
    rule = {"verbs": ["*"], "nonResourceURLs": ["*"]}
    assert not rule_allows(res("get", "roles", group=RBAC, name="x"), rule)
