"""RBACIndex: the in-memory RoleSource, and that lookups visit only matching bindings."""

import pytest

from runtime.server.rbac import RBACAuthorizer, RBACIndex, RoleSource, UserInfo, resource_attributes

RBAC = "rbac.authorization.svc.io"
READ = [{"verbs": ["get", "list"], "apiGroups": [RBAC], "resources": ["roles"]}]


def crb(name, subjects, role_name="reader"):
    return {"kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role_name},
            "subjects": subjects}


def rb(ns, name, subjects, role_name="reader"):
    return {"kind": "RoleBinding", "metadata": {"name": name, "namespace": ns},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role_name},
            "subjects": subjects}


def names(bindings):
    return [b["metadata"]["name"] for b in bindings]


class CountingSource:
    """Wraps a RoleSource and counts the bindings the authorizer is handed."""

    def __init__(self, inner):
        self.inner = inner
        self.visited = 0

    def get_cluster_role(self, name):
        return self.inner.get_cluster_role(name)

    def get_role(self, namespace, name):
        return self.inner.get_role(namespace, name)

    def cluster_role_bindings_for(self, user):
        for b in self.inner.cluster_role_bindings_for(user):
            self.visited += 1
            yield b

    def role_bindings_for(self, namespace, user):
        for b in self.inner.role_bindings_for(namespace, user):
            self.visited += 1
            yield b


def test_index_is_a_role_source():
    assert isinstance(RBACIndex(), RoleSource)


def test_upsert_and_get_roles():
    idx = RBACIndex()
    idx.upsert({"kind": "ClusterRole", "metadata": {"name": "r"}, "rules": READ})
    idx.upsert({"kind": "Role", "metadata": {"name": "r", "namespace": "a"}, "rules": []})
    assert idx.get_cluster_role("r")["rules"] == READ
    assert idx.get_role("a", "r")["rules"] == []
    assert idx.get_role("b", "r") is None


def test_bindings_are_found_by_user_group_and_service_account():
    idx = RBACIndex([
        crb("by-user", [{"kind": "User", "name": "alice"}]),
        crb("by-group", [{"kind": "Group", "name": "devs"}]),
        crb("by-sa", [{"kind": "ServiceAccount", "name": "ci", "namespace": "tools"}]),
        crb("other", [{"kind": "User", "name": "bob"}]),
    ])
    assert names(idx.cluster_role_bindings_for(UserInfo("alice", groups=("devs",)))) == \
        ["by-group", "by-user"]
    assert names(idx.cluster_role_bindings_for(UserInfo("system:serviceaccount:tools:ci"))) == \
        ["by-sa"]


def test_role_binding_service_account_is_indexed_under_the_binding_namespace():
    idx = RBACIndex([rb("team-a", "b", [{"kind": "ServiceAccount", "name": "ci"}])])
    assert names(idx.role_bindings_for("team-a", UserInfo("system:serviceaccount:team-a:ci"))) == ["b"]
    assert idx.role_bindings_for("team-b", UserInfo("system:serviceaccount:team-a:ci")) == []


def test_unjudgeable_bindings_are_candidates_for_every_user():
    idx = RBACIndex([crb("odd", [{"kind": "Robot", "name": "x"}])])
    assert names(idx.cluster_role_bindings_for(UserInfo("anyone"))) == ["odd"]
    assert idx.statistics().unjudgeable_bindings == 1


def test_upsert_replaces_the_previous_subjects():
    idx = RBACIndex([crb("b", [{"kind": "User", "name": "alice"}])])
    idx.upsert(crb("b", [{"kind": "User", "name": "bob"}]))
    assert idx.cluster_role_bindings_for(UserInfo("alice")) == []
    assert names(idx.cluster_role_bindings_for(UserInfo("bob"))) == ["b"]


def test_remove_forgets_every_kind():
    objs = [{"kind": "ClusterRole", "metadata": {"name": "reader"}, "rules": READ},
            {"kind": "Role", "metadata": {"name": "r", "namespace": "a"}, "rules": READ},
            crb("c", [{"kind": "User", "name": "alice"}]),
            rb("a", "r", [{"kind": "Group", "name": "devs"}, {"kind": "Robot", "name": "x"}])]
    idx = RBACIndex(objs)
    for obj in objs:
        idx.remove(obj)
    stats = idx.statistics()
    assert (stats.cluster_roles, stats.roles, stats.cluster_role_bindings, stats.role_bindings,
            stats.unjudgeable_bindings) == (0, 0, 0, 0, 0)
    assert idx.role_bindings_for("a", UserInfo("u", groups=("devs",))) == []


def test_replace_starts_over():
    idx = RBACIndex([crb("old", [{"kind": "User", "name": "alice"}])])
    idx.replace([crb("new", [{"kind": "User", "name": "alice"}])])
    assert names(idx.cluster_role_bindings_for(UserInfo("alice"))) == ["new"]


def test_upsert_rejects_other_kinds():
    with pytest.raises(ValueError):
        RBACIndex().upsert({"kind": "Pod", "metadata": {"name": "p"}})


def test_decision_visits_only_matching_bindings():
    # 10,000 bindings for other users and groups; alice is in two of them.
    objs = [{"kind": "ClusterRole", "metadata": {"name": "reader"}, "rules": READ}]
    for i in range(5000):
        objs.append(crb(f"crb-{i}", [{"kind": "User", "name": f"user-{i}"},
                                     {"kind": "Group", "name": f"group-{i}"}]))
        objs.append(rb("team-a", f"rb-{i}", [{"kind": "ServiceAccount", "name": f"sa-{i}"}]))
    objs.append(crb("alice-crb", [{"kind": "User", "name": "alice"}], role_name="nothing"))
    objs.append(rb("team-a", "alice-rb", [{"kind": "User", "name": "alice"}]))
    source = CountingSource(RBACIndex(objs))
    # delete is granted by no rule, so the walk visits every candidate
    decision = RBACAuthorizer(source).authorize(
        resource_attributes(UserInfo("alice", groups=("group-7",)), "delete", "roles",
                            api_group=RBAC, namespace="team-a", name="x"))
    assert not decision.allowed
    assert source.visited == 3  # alice-crb, crb-7 (via group-7), alice-rb
