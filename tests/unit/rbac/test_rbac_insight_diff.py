"""diff(): permissions granted and revoked per subject and scope; aggregate() as the controller."""

from __future__ import annotations

from runtime.server.rbac import same_rules
from runtime.models.insight import InsightSubject, Permission
from runtime.server.rbac.insight import aggregate
from runtime.server.rbac.insight import diff
from tests.support.rbac_objects import (
    RBAC, cluster_role, crb, group, index, rb, role, rule, sa, user,
)

ALICE = InsightSubject("User", "alice")


def perms(*specs):
    return sorted(Permission(ns, verb, g, r) for ns, verb, g, r in specs)


def test_new_role_binding_grants_in_its_namespace_only():
    before = index(role("team-a", "r", [rule(["get"], ["pods"])]))
    after = index(role("team-a", "r", [rule(["get"], ["pods"])]),
                  rb("team-a", "b", "r", [user("alice")]))
    [change] = diff(before, after)
    assert change.subject == ALICE and change.revoked == []
    assert change.granted == perms(("team-a", "get", "", "pods"))


def test_wider_verb_grants_the_wildcard_and_revokes_nothing_it_covers():
    before = index(cluster_role("r", [rule(["get"], ["pods"])]), crb("b", "r", [user("alice")]))
    after = index(cluster_role("r", [rule(["*"], ["pods"])]), crb("b", "r", [user("alice")]))
    [change] = diff(before, after)
    assert change.granted == perms(("", "*", "", "pods")) and change.revoked == []
    [back] = diff(after, before)
    assert back.revoked == perms(("", "*", "", "pods")) and back.granted == []


def test_a_namespaced_grant_already_held_cluster_wide_is_no_change():
    base = [cluster_role("r", [rule(["get"], ["pods"])]), crb("b", "r", [group("devs")])]
    after = index(*base, rb("team-a", "extra", "r", [group("devs")], kind="ClusterRole"))
    assert diff(index(*base), after) == ()


def test_removing_a_cluster_grant_is_reported_once_at_cluster_scope():
    grant = [cluster_role("r", [rule(["list"], ["secrets"])]),
             crb("b", "r", [sa("bot", "tools")]),
             rb("team-a", "keep", "r2", [sa("bot", "tools")]),
             role("team-a", "r2", [rule(["get"], ["pods"])])]
    [change] = diff(index(*grant), index(*grant[2:]))
    assert change.subject == InsightSubject("ServiceAccount", "bot", "tools")
    assert change.revoked == perms(("", "list", "", "secrets")) and change.granted == []


def test_non_resource_urls_and_resource_names_are_kept_apart():
    after = index(cluster_role("r", [rule(["get"], urls=["/metrics"]),
                                     rule(["update"], ["configmaps"], names=["cfg"])]),
                  crb("b", "r", [user("alice")]))
    [change] = diff(index(), after)
    assert change.granted == [Permission("", "get", non_resource_url="/metrics"),
                              Permission("", "update", "", "configmaps", "cfg")]
    assert change.granted[0].to_dict() == {"verb": "get", "nonResourceURL": "/metrics"}
    assert change.granted[1].to_dict()["apiGroup"] == ""


def test_subjects_limits_the_answer():
    after = index(cluster_role("r", [rule(["get"], ["pods"])]),
                  crb("b", "r", [user("alice"), user("bob")]))
    assert [d.subject.name for d in diff(index(), after, [InsightSubject("User", "bob")])] == ["bob"]


def test_relabelling_an_aggregated_from_role_shows_as_the_rules_it_moves():
    agg = cluster_role("agg", selectors=[{"matchLabels": {"to-agg": "true"}}])
    binding = crb("b", "agg", [user("alice")])
    source_role = cluster_role("extra", [rule(["delete"], ["roles"], [RBAC])])
    labelled = cluster_role("extra", [rule(["delete"], ["roles"], [RBAC])], labels={"to-agg": "true"})
    [change] = diff(aggregate(index(agg, source_role, binding)),
                    aggregate(index(agg, labelled, binding)))
    assert change.granted == perms(("", "delete", RBAC, "roles"))


def test_aggregate_settles_chains_and_leaves_its_input_alone():
    view = cluster_role("view", [rule(["get"], ["pods"])], labels={"to-edit": "1"})
    edit = cluster_role("edit", labels={"to-admin": "1"}, selectors=[{"matchLabels": {"to-edit": "1"}}])
    admin = cluster_role("admin", selectors=[{"matchLabels": {"to-admin": "1"}}])
    original = index(admin, edit, view)
    filled = aggregate(original)
    assert same_rules(filled.get_cluster_role("admin")["rules"], [rule(["get"], ["pods"])])
    assert original.get_cluster_role("admin")["rules"] == []


def test_aggregate_leaves_a_role_with_a_malformed_selector_as_it_is():
    bad = cluster_role("bad", [rule(["get"], ["pods"])],
                       selectors=[{"matchExpressions": [{"key": "a", "operator": "Nope"}]}])
    assert aggregate(index(bad)).get_cluster_role("bad")["rules"] == [rule(["get"], ["pods"])]
