"""RBACAuthorizer's decision cache: a decision is made once per (user, request) until the index changes.

- a decision asked again visits no binding (`bindings_visited` stays);
- any change to the index (a binding, a role, a relist) drops every decision: the next one is made afresh;
- what RBAC reads tells decisions apart (user, groups, verb, group, resource, subresource, namespace,
  name, path); what it does not read shares one (the uid, the API version);
- the cache holds at most `cache_size` decisions; a source without a `generation` is asked every time.
"""

from runtime.server.rbac import RBACAuthorizer, RBACIndex, UserInfo, non_resource_attributes, resource_attributes
from tests.support.rbac_objects import ALICE, RBAC, cluster_role, crb, rb, role, user

READ_ROLES = [{"verbs": ["get"], "apiGroups": [RBAC], "resources": ["roles"]}]


def get_role(who, ns="team-a", name="r", **kw):
    return resource_attributes(who, "get", "roles", api_group=RBAC, namespace=ns, name=name, **kw)


def visits(index: RBACIndex) -> int:
    return index.statistics().bindings_visited


def test_a_decision_asked_again_visits_no_binding():
    index = RBACIndex([cluster_role("reader", READ_ROLES), crb("b", "reader", [user("alice")])])
    authz = RBACAuthorizer(index)
    first = authz.authorize(get_role(ALICE))
    before = visits(index)
    assert before > 0
    for _ in range(3):
        assert authz.authorize(get_role(ALICE)) == first
    assert first.allowed and visits(index) == before


def test_a_change_to_the_index_drops_every_decision():
    index = RBACIndex([cluster_role("reader", READ_ROLES)])
    authz = RBACAuthorizer(index)
    assert not authz.authorize(get_role(ALICE)).allowed
    index.upsert(rb("team-a", "b", "reader", [user("alice")], kind="ClusterRole"))
    assert authz.authorize(get_role(ALICE)).allowed
    index.upsert(cluster_role("reader", []))  # the role's rules go: the binding grants nothing
    assert not authz.authorize(get_role(ALICE)).allowed
    index.upsert(cluster_role("reader", READ_ROLES))
    assert authz.authorize(get_role(ALICE)).allowed
    index.remove(rb("team-a", "b", "reader", []))
    assert not authz.authorize(get_role(ALICE)).allowed
    index.replace([role("team-a", "reader", READ_ROLES), rb("team-a", "b", "reader", [user("alice")])])
    assert authz.authorize(get_role(ALICE)).allowed


def test_what_rbac_reads_tells_decisions_apart_and_what_it_does_not_shares_one():
    index = RBACIndex([
        cluster_role("reader", [{"verbs": ["get"], "apiGroups": [RBAC], "resources": ["roles"],
                                 "resourceNames": ["r"]},
                                {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
        rb("team-a", "b", "reader", [user("alice")], kind="ClusterRole"),
        crb("urls", "reader", [{"kind": "Group", "name": "ops", "apiGroup": RBAC}])])
    authz = RBACAuthorizer(index)
    assert authz.authorize(get_role(ALICE)).allowed
    assert not authz.authorize(get_role(UserInfo("bob"))).allowed
    assert not authz.authorize(get_role(ALICE, ns="team-b")).allowed
    assert not authz.authorize(get_role(ALICE, name="other")).allowed
    assert not authz.authorize(get_role(ALICE, subresource="status")).allowed
    assert not authz.authorize(resource_attributes(ALICE, "list", "roles", api_group=RBAC, namespace="team-a")).allowed
    assert not authz.authorize(resource_attributes(ALICE, "get", "roles", api_group="", namespace="team-a",
                                                   name="r")).allowed
    ops = UserInfo("carol", groups=("ops",))
    assert authz.authorize(non_resource_attributes(ops, "get", "/healthz")).allowed
    assert not authz.authorize(non_resource_attributes(ops, "get", "/livez")).allowed
    assert not authz.authorize(non_resource_attributes(UserInfo("carol"), "get", "/healthz")).allowed
    before = visits(index)
    assert authz.authorize(get_role(UserInfo("alice", uid="another", groups=ALICE.groups), api_version="v1beta1")).allowed
    assert visits(index) == before


def test_the_cache_holds_at_most_cache_size_decisions():
    index = RBACIndex([cluster_role("reader", READ_ROLES), crb("b", "reader", [user("alice")])])
    authz = RBACAuthorizer(index, cache_size=2)
    for name in ("a", "b"):
        authz.authorize(get_role(ALICE, name=name))
    before = visits(index)
    authz.authorize(get_role(ALICE, name="a"))
    assert visits(index) == before  # both held
    authz.authorize(get_role(ALICE, name="c"))  # a third: the cache was full, it starts over
    before = visits(index)
    authz.authorize(get_role(ALICE, name="a"))
    assert visits(index) == before + 1


class _Unversioned:
    """A `RoleSource` that does not say when it changes (no `generation`)."""

    def __init__(self, index: RBACIndex) -> None:
        self.index = index

    def get_cluster_role(self, name):
        return self.index.get_cluster_role(name)

    def get_role(self, namespace, name):
        return self.index.get_role(namespace, name)

    def cluster_role_bindings_for(self, user):
        return self.index.cluster_role_bindings_for(user)

    def role_bindings_for(self, namespace, user):
        return self.index.role_bindings_for(namespace, user)


def test_a_source_without_a_generation_is_asked_every_time():
    index = RBACIndex([cluster_role("reader", READ_ROLES), crb("b", "reader", [user("alice")])])
    authz = RBACAuthorizer(_Unversioned(index))
    assert authz.authorize(get_role(ALICE)).allowed
    before = visits(index)
    assert authz.authorize(get_role(ALICE)).allowed
    assert visits(index) == before + 1
