"""RBACAuthorizer: subjects, binding scope, order, reasons and evaluation errors."""

from runtime.server.rbac import (
    ALL_AUTHENTICATED, RBACAuthorizer, RBACIndex, UserInfo, non_resource_attributes,
    resource_attributes, service_account_groups, service_account_user,
)
from tests.support.rbac_objects import ALICE, RBAC, cluster_role, crb, group, rb, role, sa, user

READ_ROLES = [{"verbs": ["get", "list"], "apiGroups": [RBAC], "resources": ["roles"]}]


def list_roles(who, ns="team-a"):
    return resource_attributes(who, "list", "roles", api_group=RBAC, namespace=ns)


def authorizer(*objects):
    return RBACAuthorizer(RBACIndex(objects))


def test_user_subject_matches_by_name():
    authz = authorizer(cluster_role("reader", READ_ROLES), crb("b", "reader", [user("alice")]))
    assert authz.authorize(list_roles(ALICE)).allowed
    assert not authz.authorize(list_roles(UserInfo("bob"))).allowed


def test_group_subject_matches_members():
    authz = authorizer(cluster_role("reader", READ_ROLES), crb("b", "reader", [group("devs")]))
    assert authz.authorize(list_roles(UserInfo("carol", groups=("devs",)))).allowed
    assert not authz.authorize(list_roles(ALICE)).allowed


def test_role_binding_to_cluster_role_is_limited_to_its_namespace():
    authz = authorizer(cluster_role("reader", READ_ROLES),
                       rb("team-a", "b", "reader", [user("alice")], kind="ClusterRole"))
    assert authz.authorize(list_roles(ALICE, "team-a")).allowed
    assert not authz.authorize(list_roles(ALICE, "team-b")).allowed
    assert not authz.authorize(list_roles(ALICE, "")).allowed


def test_role_binding_to_role_uses_the_role_of_its_namespace():
    authz = authorizer(role("team-a", "reader", READ_ROLES), role("team-b", "reader", []),
                       rb("team-a", "b", "reader", [user("alice")]),
                       rb("team-b", "b", "reader", [user("alice")]))
    assert authz.authorize(list_roles(ALICE, "team-a")).allowed
    assert not authz.authorize(list_roles(ALICE, "team-b")).allowed


def test_cluster_role_binding_applies_in_every_namespace_and_cluster_wide():
    authz = authorizer(cluster_role("reader", READ_ROLES), crb("b", "reader", [user("alice")]))
    for ns in ("team-a", "team-b", ""):
        assert authz.authorize(list_roles(ALICE, ns)).allowed


def test_service_account_subject_namespace_defaults_to_role_binding_namespace():
    authz = authorizer(cluster_role("reader", READ_ROLES),
                       rb("team-a", "b", "reader", [sa("builder")], kind="ClusterRole"))
    assert authz.authorize(list_roles(service_account_user("team-a", "builder"))).allowed
    # the same name in another namespace is another account
    assert not authz.authorize(list_roles(service_account_user("team-b", "builder"))).allowed


def test_service_account_subject_with_namespace_matches_that_account():
    authz = authorizer(cluster_role("reader", READ_ROLES),
                       rb("team-a", "b", "reader", [sa("ci", "tools")], kind="ClusterRole"))
    assert authz.authorize(list_roles(service_account_user("tools", "ci"), "team-a")).allowed
    assert not authz.authorize(list_roles(service_account_user("team-a", "ci"), "team-a")).allowed


def test_service_account_subject_without_namespace_in_cluster_role_binding_never_matches():
    authz = authorizer(cluster_role("reader", READ_ROLES), crb("b", "reader", [sa("builder")]))
    decision = authz.authorize(list_roles(service_account_user("team-a", "builder")))
    assert not decision.allowed
    assert decision.evaluation_error == ""


def test_service_account_groups_are_the_authenticators_not_rbacs():
    assert service_account_groups("team-a") == ("system:serviceaccounts",
                                                 "system:serviceaccounts:team-a")
    authz = authorizer(cluster_role("reader", READ_ROLES),
                       crb("b", "reader", [group("system:serviceaccounts:team-a")]))
    assert authz.authorize(list_roles(service_account_user("team-a", "x"))).allowed
    # a bare UserInfo with the SA name but no groups gets nothing from group bindings
    assert not authz.authorize(list_roles(UserInfo("system:serviceaccount:team-a:x"))).allowed


def test_unknown_subject_kind_is_an_evaluation_error_and_other_rules_still_count():
    authz = authorizer(
        cluster_role("reader", READ_ROLES),
        crb("a-broken", "reader", [{"kind": "Robot", "name": "r2d2"}]),
        crb("b-good", "reader", [user("alice")]),
    )
    assert authz.authorize(list_roles(ALICE)).allowed
    decision = authz.authorize(list_roles(UserInfo("bob")))
    assert not decision.allowed
    assert decision.evaluation_error == \
        'ClusterRoleBinding "a-broken" subjects[0]: unsupported subject kind "Robot"'
    assert decision.reason == "RBAC: " + decision.evaluation_error


def test_namespace_on_user_subject_is_an_evaluation_error():
    bad = dict(user("alice"), namespace="team-a")
    authz = authorizer(cluster_role("reader", READ_ROLES), crb("b", "reader", [bad]))
    decision = authz.authorize(list_roles(ALICE))
    assert not decision.allowed
    assert decision.evaluation_error == ('ClusterRoleBinding "b" subjects[0]: User subject "alice" '
                                         'must not set a namespace (got "team-a")')


def test_missing_cluster_role_is_an_evaluation_error():
    authz = authorizer(crb("b", "ghost", [user("alice")]))
    decision = authz.authorize(list_roles(ALICE))
    assert decision == type(decision)(
        allowed=False,
        reason=f'RBAC: clusterrole.{RBAC} "ghost" not found',
        evaluation_error=f'clusterrole.{RBAC} "ghost" not found')


def test_unresolvable_role_ref_errors_are_aggregated_and_other_bindings_still_count():
    authz = authorizer(
        cluster_role("reader", READ_ROLES),
        crb("a", "ghost", [user("alice")]),
        crb("b", "reader", [user("alice")], kind="Role"),   # Role in a ClusterRoleBinding
        rb("team-a", "c", "reader", [user("alice")], kind="Widget"),
        rb("team-a", "d", "reader", [user("alice")], kind="ClusterRole"),
    )
    assert authz.authorize(list_roles(ALICE)).allowed
    decision = authz.authorize(resource_attributes(ALICE, "delete", "roles", api_group=RBAC,
                                                   namespace="team-a", name="x"))
    assert not decision.allowed
    assert decision.evaluation_error == (
        f'[clusterrole.{RBAC} "ghost" not found, role.{RBAC} "reader" not found, '
        'unsupported role reference kind: "Widget"]')


def test_identical_errors_are_reported_once():
    authz = authorizer(crb("a", "ghost", [user("alice")]), crb("b", "ghost", [user("alice")]))
    assert authz.authorize(list_roles(ALICE)).evaluation_error == \
        f'clusterrole.{RBAC} "ghost" not found'


def test_errors_of_bindings_that_do_not_apply_are_not_reported():
    authz = authorizer(crb("a", "ghost", [user("bob")]))
    assert authz.authorize(list_roles(ALICE)).evaluation_error == ""


def test_system_masters_is_allowed_everything_first():
    authz = authorizer(crb("a", "ghost", [group("system:masters")]))
    root = UserInfo("root", groups=("system:masters",))
    decision = authz.authorize(resource_attributes(root, "delete", "anything", api_group="x.io",
                                                   name="y"))
    assert decision.allowed and decision.reason == "" and decision.evaluation_error == ""
    assert authz.authorize(non_resource_attributes(root, "post", "/whatever")).allowed


def test_rbac_never_denies():
    decision = authorizer().authorize(list_roles(ALICE))
    assert (decision.allowed, decision.reason, decision.evaluation_error) == (False, "", "")


def test_reason_names_cluster_role_binding_role_and_user():
    authz = authorizer(cluster_role("y", READ_ROLES), crb("x", "y", [user("z")]))
    decision = authz.authorize(list_roles(UserInfo("z")))
    assert decision.reason == 'RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"'


def test_reason_names_role_binding_with_namespace_and_group():
    authz = authorizer(role("ns", "y", READ_ROLES), rb("ns", "x", "y", [group("z")]))
    decision = authz.authorize(list_roles(UserInfo("u", groups=("z",)), "ns"))
    assert decision.reason == 'RBAC: allowed by RoleBinding "x/ns" of Role "y" to Group "z"'


def test_reason_names_service_account_as_name_slash_namespace():
    authz = authorizer(role("ns", "y", READ_ROLES), rb("ns", "x", "y", [sa("builder")]))
    decision = authz.authorize(list_roles(service_account_user("ns", "builder"), "ns"))
    assert decision.reason == \
        'RBAC: allowed by RoleBinding "x/ns" of Role "y" to ServiceAccount "builder/ns"'


def test_reason_names_the_first_subject_that_matches():
    authz = authorizer(cluster_role("y", READ_ROLES),
                       crb("x", "y", [user("other"), group("devs"), user("z")]))
    decision = authz.authorize(list_roles(UserInfo("z", groups=("devs",))))
    assert decision.reason.endswith('to Group "devs"')


def test_cluster_role_bindings_are_evaluated_before_role_bindings():
    authz = authorizer(cluster_role("y", READ_ROLES), role("ns", "y", READ_ROLES),
                       crb("c", "y", [user("alice")]), rb("ns", "a", "y", [user("alice")]))
    assert "ClusterRoleBinding" in authz.authorize(list_roles(ALICE, "ns")).reason


def test_errors_met_before_an_allow_are_dropped():
    authz = authorizer(cluster_role("y", READ_ROLES), crb("a", "ghost", [user("alice")]),
                       crb("b", "y", [user("alice")]))
    decision = authz.authorize(list_roles(ALICE))
    assert decision.allowed and decision.evaluation_error == ""


def test_non_resource_rules_apply_through_cluster_role_bindings():
    authz = authorizer(cluster_role("disco", [{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}]),
                       crb("d", "disco", [group(ALL_AUTHENTICATED)]))
    assert authz.authorize(non_resource_attributes(ALICE, "get", "/apis/foo")).allowed
    assert not authz.authorize(non_resource_attributes(UserInfo("anon"), "get", "/apis/foo")).allowed
