"""access_matrix(): allowed / denied / allowed by wildcard, per resource and verb."""

from __future__ import annotations

from runtime.server.rbac import SYSTEM_MASTERS, UserInfo
from runtime.models.insight import Access
from runtime.server.rbac.insight import (
    MATRIX_VERBS, access_matrix, resources_named_in_rules,
)
from tests.support.rbac_objects import ALICE, RBAC, cluster_role, crb, index, rb, role, rule, user


def test_cells_are_allowed_denied_or_allowed_by_wildcard():
    source = index(role("team-a", "r", [rule(["get", "list"], ["pods"]),
                                       rule(["*"], ["configmaps"]),
                                       rule(["get"], ["*"], ["apps"])]),
                   rb("team-a", "b", "r", [user("alice")]))
    m = access_matrix(ALICE, "team-a", [("", "pods"), ("", "configmaps"), ("apps", "deployments")],
                      source)
    assert m.verbs == list(MATRIX_VERBS)
    assert m.cell("", "pods", "get") is Access.ALLOWED
    assert m.cell("", "pods", "delete") is Access.DENIED
    assert m.cell("", "configmaps", "delete") is Access.ALLOWED_BY_WILDCARD
    assert m.cell("apps", "deployments", "get") is Access.ALLOWED_BY_WILDCARD
    assert m.cell("apps", "deployments", "list") is Access.DENIED


def test_an_exact_rule_beside_a_wildcard_one_makes_the_cell_plainly_allowed():
    source = index(cluster_role("r", [rule(["*"], ["pods"]), rule(["get"], ["pods"])]),
                   crb("b", "r", [user("alice")]))
    m = access_matrix(ALICE, "", [("", "pods")], source)
    assert m.cell("", "pods", "get") is Access.ALLOWED
    assert m.cell("", "pods", "list") is Access.ALLOWED_BY_WILDCARD


def test_rules_limited_to_resource_names_do_not_grant_the_unnamed_cells():
    source = index(cluster_role("r", [rule(["get"], ["pods"], names=["web"])]),
                   crb("b", "r", [user("alice")]))
    assert access_matrix(ALICE, "n", [("", "pods")], source).cell("", "pods", "get") is Access.DENIED


def test_system_masters_is_allowed_everywhere():
    admin = UserInfo("root", groups=(SYSTEM_MASTERS,))
    m = access_matrix(admin, "x", [("", "pods/log")], index())
    assert set(m.rows[0].access.values()) == {Access.ALLOWED}


def test_resources_named_in_rules_skips_wildcards_and_keeps_subresources():
    source = index(cluster_role("a", [rule(["get"], ["pods", "pods/log", "*"], ["", "*"])]),
                   role("n", "b", [rule(["get"], ["roles", "*/scale"], [RBAC])]))
    assert resources_named_in_rules(source) == (("", "pods"), ("", "pods/log"), (RBAC, "roles"))


def test_matrix_to_dict_maps_verbs_to_cells():
    source = index(cluster_role("r", [rule(["get"], ["pods"])]), crb("b", "r", [user("alice")]))
    d = access_matrix(ALICE, "", [("", "pods")], source, verbs=("get", "list")).to_dict()
    assert d["rows"] == [{"apiGroup": "", "resource": "pods",
                          "access": {"get": "allowed", "list": "denied"}}]
    assert d["verbs"] == ["get", "list"] and "namespace" not in d
