"""Random RBAC policies and requests (hypothesis strategies) for the insight property tests.

Contract: `policies()` draws a policy (an aggregated `RBACIndex`) holding
Users, Groups and ServiceAccounts (with and without namespace), subjects
that never match, ClusterRoles and Roles with wildcards, resourceNames,
subresources and non-resource URLs, aggregated ClusterRoles (chained),
RoleBindings to ClusterRoles and roleRefs that do not resolve;
`requests` a resource or non-resource request of one of `USERS`;
`scenarios()` a policy and a request, built near one of its grants two
times out of three. `SETTINGS` / `DIFF_SETTINGS` are the examples' budget.
"""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from runtime.server.rbac import (
    RBACIndex, SYSTEM_MASTERS, UserInfo, non_resource_attributes, resolve_role_ref, resource_attributes,
    service_account_user,
)
from runtime.server.rbac.insight import aggregate
from tests.support.rbac_objects import cluster_role, crb, group, rb, role, sa, user

__all__ = ["SETTINGS", "DIFF_SETTINGS", "USERS", "MASTER", "resource_rules", "url_rules", "policies",
           "resource_requests", "non_resource_requests", "requests", "near_requests", "scenarios"]

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
#: Two policies per example: fewer examples.
DIFF_SETTINGS = settings(SETTINGS, max_examples=30)

NAMESPACES = ["ns1", "ns2"]
VERBS = ["get", "list", "delete", "impersonate", "*"]
API_GROUPS = ["", "apps", "*"]
RESOURCES = ["pods", "pods/log", "*/log", "secrets", "users", "nodes", "*"]
URLS = ["/healthz", "/api/*", "/api", "*"]
LABELS = [{}, {"agg": "x"}, {"agg": "y"}, {"agg": "x", "tier": "top"}, {"tier": "top"}]
SELECTORS = [{"matchLabels": {"agg": "x"}},
             {"matchExpressions": [{"key": "agg", "operator": "In", "values": ["y"]}]},
             {"matchExpressions": [{"key": "agg", "operator": "Exists"}]}]
PLAIN_ROLES = ["cr0", "cr1", "cr2"]

USERS = [UserInfo("alice", groups=("devs",)), UserInfo("bob"),
         service_account_user("ns1", "bot"), UserInfo("carol", groups=("ops", "devs")),
         service_account_user("ns2", "bot")]
MASTER = UserInfo("root", groups=(SYSTEM_MASTERS,))


def _small(values, min_size=0, max_size=2):
    return st.lists(st.sampled_from(values), min_size=min_size, max_size=max_size, unique=True)


resource_rules = st.builds(
    lambda verbs, groups, resources, names: {"verbs": verbs, "apiGroups": groups,
                                             "resources": resources, "resourceNames": names},
    _small(VERBS, 1), _small(API_GROUPS, 1), _small(RESOURCES, 1), _small(["a", "b"], 0, 1))
url_rules = st.builds(lambda verbs, urls: {"verbs": verbs, "nonResourceURLs": urls},
                      _small(["get", "post", "*"], 1), _small(URLS, 1))
rules = st.lists(st.one_of(resource_rules, resource_rules, url_rules), min_size=1, max_size=3)

# A subject of unknown kind, or a User with a namespace, matches nobody and errors decisions.
UNMATCHABLE = [{"kind": "Robot", "name": "r2"}, {**user("alice"), "namespace": "ns1"}]

subjects = st.one_of(
    st.sampled_from(["alice", "bob", "carol"]).map(user),
    st.sampled_from(["alice", "bob", "carol"]).map(user),
    st.sampled_from(UNMATCHABLE),
    st.sampled_from(["devs", "ops"]).map(group),
    st.builds(sa, st.just("bot"), st.sampled_from([None, "ns1", "ns2"])))
subject_lists = st.lists(subjects, min_size=1, max_size=2)


@st.composite
def policies(draw):
    objects = [cluster_role(name, draw(rules), draw(st.sampled_from(LABELS)))
               for name in PLAIN_ROLES]
    objects.append(cluster_role("agg", labels=draw(st.sampled_from(LABELS)),
                                selectors=draw(st.lists(st.sampled_from(SELECTORS), min_size=1,
                                                        max_size=2))))
    objects.append(cluster_role("top", selectors=[{"matchLabels": {"tier": "top"}}]))
    for ns in NAMESPACES:
        objects.append(role(ns, "r0", draw(rules)))
    cluster_refs = st.sampled_from([*PLAIN_ROLES, *PLAIN_ROLES, "agg", "top", "ghost"])
    for i in range(draw(st.integers(1, 3))):
        objects.append(crb(f"crb{i}", draw(cluster_refs), draw(subject_lists)))
    for i in range(draw(st.integers(1, 4))):
        ns = draw(st.sampled_from(NAMESPACES))
        kind = draw(st.sampled_from(["Role", "ClusterRole"]))
        name = draw(st.sampled_from(["r0", "r0", "r0", "ghost"])) if kind == "Role" else draw(cluster_refs)
        objects.append(rb(ns, f"rb{i}", name, draw(subject_lists), kind=kind))
    return aggregate(RBACIndex(objects))


resource_requests = st.builds(
    lambda who, verb, grp, res, sub, ns, name: resource_attributes(
        who, verb, res, api_group=grp, subresource=sub, namespace=ns, name=name),
    st.sampled_from(USERS), st.sampled_from(["get", "list", "delete", "create", "impersonate"]),
    st.sampled_from(["", "apps", "other"]), st.sampled_from(["pods", "secrets", "users", "nodes"]),
    st.sampled_from(["", "log", "exec"]), st.sampled_from(["", "ns1", "ns2", "ns3"]),
    st.sampled_from(["", "a", "c"]))
non_resource_requests = st.builds(
    non_resource_attributes, st.sampled_from(USERS), st.sampled_from(["get", "post"]),
    st.sampled_from(["/healthz", "/api", "/api/v1", "/apis"]))
requests = st.one_of(resource_requests, resource_requests, non_resource_requests)


def _user_for(draw, subject, namespace):
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return UserInfo(name, groups=tuple(draw(_small(["devs", "ops"]))))
    if kind == "Group":
        return UserInfo("zed", groups=(name,))
    return service_account_user(subject.get("namespace") or namespace or "ns1", name)


def _concrete(draw, values, wildcard):
    value = draw(st.sampled_from(values)) if values else wildcard
    return wildcard if value == "*" else value


@st.composite
def near_requests(draw, source):
    """A request built from a rule a binding grants, then maybe one attribute changed."""
    bindings = [*source.list_cluster_role_bindings(), *source.list_role_bindings()]
    if not bindings:
        return draw(requests)
    binding = draw(st.sampled_from(bindings))
    namespace = (binding["metadata"].get("namespace") if binding["kind"] == "RoleBinding"
                 else draw(st.sampled_from(["", "ns1", "ns3"])))
    who = _user_for(draw, draw(st.sampled_from(binding["subjects"])), namespace)
    granted, _ = resolve_role_ref(binding["roleRef"], namespace if binding["kind"] == "RoleBinding"
                                  else "", source)
    if not granted:
        return dataclasses.replace(draw(requests), user=who)
    rule = draw(st.sampled_from(list(granted)))
    verb = _concrete(draw, rule.get("verbs"), draw(st.sampled_from(["get", "delete"])))
    if rule.get("nonResourceURLs"):
        url = draw(st.sampled_from(rule["nonResourceURLs"]))
        path = url[:-1] + draw(st.sampled_from(["", "x"])) if url.endswith("*") else url
        return non_resource_attributes(who, verb, path)
    entry = draw(st.sampled_from(rule["resources"]))
    resource, _, sub = entry.partition("/")
    attrs = resource_attributes(
        who, verb, draw(st.sampled_from(["pods", "nodes"])) if resource == "*" else resource,
        api_group=_concrete(draw, rule.get("apiGroups"), "apps"), subresource=sub,
        namespace=namespace, name=_concrete(draw, rule.get("resourceNames"), "a"))
    if draw(st.integers(0, 2)) == 0:
        field, values = draw(st.sampled_from([
            ("verb", ["get", "list", "delete"]), ("api_group", ["", "apps", "other"]),
            ("resource", ["pods", "secrets", "nodes"]), ("subresource", ["", "log", "exec"]),
            ("name", ["", "a", "b"]), ("namespace", ["", "ns1", "ns2", "ns3"]),
            ("namespace", ["", "ns2"]), ("subresource", ["", "log"])]))
        attrs = dataclasses.replace(attrs, **{field: draw(st.sampled_from(values))})
    return attrs


@st.composite
def scenarios(draw):
    """A random policy and a request, built near one of its grants two times out of three."""
    source = draw(policies())
    attrs = draw(st.one_of(requests, near_requests(source), near_requests(source)))
    return source, attrs


