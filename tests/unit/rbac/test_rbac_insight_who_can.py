"""who_can(): every subject a binding names that the request is allowed for, from the index."""

from __future__ import annotations

from runtime.server.rbac import SYSTEM_MASTERS
from runtime.models.insight import InsightSubject
from runtime.server.rbac.insight import who_can_non_resource
from runtime.server.rbac.insight import who_can
from tests.support.rbac_objects import (
    RBAC, cluster_role, crb, group, index, rb, role, rule, sa, user,
)

DELETE_ROLES = rule(["delete"], ["roles"], [RBAC])


def subjects(found):
    return {(s.subject.kind, s.subject.name, s.subject.namespace) for s in found}


def test_system_masters_is_always_listed_as_privileged():
    [masters] = who_can("delete", "roles", group=RBAC, namespace="team-a", source=index())
    assert masters.subject == InsightSubject("Group", SYSTEM_MASTERS) and masters.privileged
    assert masters.grants == []


def test_users_groups_and_service_accounts_are_reported_as_the_binding_names_them():
    source = index(cluster_role("deleter", [DELETE_ROLES]),
                   crb("c", "deleter", [user("alice"), group("ops"), sa("bot", "tools")]),
                   role("team-a", "local", [DELETE_ROLES]),
                   rb("team-a", "r", "local", [sa("builder"), user("bob")]))
    found = who_can("delete", "roles", group=RBAC, namespace="team-a", source=source)
    assert subjects(found) == {("User", "alice", ""), ("Group", "ops", ""),
                               ("ServiceAccount", "bot", "tools"),
                               ("ServiceAccount", "builder", "team-a"), ("User", "bob", ""),
                               ("Group", SYSTEM_MASTERS, "")}
    bob = next(s for s in found if s.subject.name == "bob")
    assert [(g.binding.name, g.role.name, g.rule_index) for g in bob.grants] == [("r", "local", 0)]


def test_role_binding_to_a_cluster_role_grants_only_in_its_namespace():
    source = index(cluster_role("deleter", [DELETE_ROLES]),
                   rb("team-a", "r", "deleter", [user("alice")], kind="ClusterRole"))
    assert ("User", "alice", "") in subjects(
        who_can("delete", "roles", group=RBAC, namespace="team-a", source=source))
    assert ("User", "alice", "") not in subjects(
        who_can("delete", "roles", group=RBAC, namespace="team-b", source=source))
    assert ("User", "alice", "") not in subjects(
        who_can("delete", "roles", group=RBAC, source=source))


def test_impersonate_is_a_verb_like_any_other():
    source = index(cluster_role("imp", [rule(["impersonate"], ["users"], names=["admin"])]),
                   crb("c", "imp", [user("mallory")]))
    assert ("User", "mallory", "") in subjects(
        who_can("impersonate", "users", name="admin", source=source))
    assert ("User", "mallory", "") not in subjects(
        who_can("impersonate", "users", name="root", source=source))


def test_resource_names_and_subresources_are_matched_as_the_authorizer_does():
    source = index(cluster_role("logs", [rule(["get"], ["pods/log"], names=["web"])]),
                   crb("c", "logs", [user("alice")]))
    assert ("User", "alice", "") in subjects(
        who_can("get", "pods", subresource="log", namespace="n", name="web", source=source))
    assert ("User", "alice", "") not in subjects(
        who_can("get", "pods", namespace="n", name="web", source=source))


def test_non_resource_urls_are_granted_only_by_cluster_role_bindings():
    source = index(cluster_role("health", [rule(["get"], urls=["/healthz*"])]),
                   crb("c", "health", [group("system:authenticated")]),
                   rb("team-a", "r", "health", [user("bob")], kind="ClusterRole"))
    found = who_can_non_resource("get", "/healthz/ready", source=source)
    assert subjects(found) == {("Group", "system:authenticated", ""), ("Group", SYSTEM_MASTERS, "")}


def test_unresolvable_role_refs_and_unmatchable_subjects_grant_nobody():
    source = index(crb("dangling", "gone", [user("alice")]),
                   cluster_role("deleter", [DELETE_ROLES]),
                   crb("c", "deleter", [sa("no-namespace"), {"kind": "Robot", "name": "r2"}]))
    assert subjects(who_can("delete", "roles", group=RBAC, source=source)) == {
        ("Group", SYSTEM_MASTERS, "")}


def test_to_dict_lists_subject_and_grants():
    source = index(cluster_role("deleter", [DELETE_ROLES]), crb("c", "deleter", [user("alice")]))
    alice = next(s for s in who_can("delete", "roles", group=RBAC, source=source)
                 if s.subject.name == "alice")
    assert alice.to_dict() == {
        "subject": {"kind": "User", "name": "alice"},
        "grants": [{"binding": {"kind": "ClusterRoleBinding", "name": "c"},
                    "role": {"kind": "ClusterRole", "name": "deleter"}, "ruleIndex": 0,
                    "rule": {"verbs": ["delete"], "apiGroups": [RBAC], "resources": ["roles"]}}],
        "privileged": False}
