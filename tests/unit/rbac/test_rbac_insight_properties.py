"""Property tests over random policies: insight answers exactly what the authorizer decides.

Random policies hold Users, Groups and ServiceAccounts (with and without
namespace), ClusterRoles and Roles with wildcards, resourceNames,
subresources and non-resource URLs, aggregated ClusterRoles (chained), and
RoleBindings to ClusterRoles, plus roleRefs that do not resolve.

A property that loops over what an answer lists says how many it lists (or
counts, over the examples, that the loop ran): a loop over an empty answer
asserts nothing. The examples are derandomized, so the counts are fixed.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from runtime.server.rbac import (
    RBACAuthorizer, RBACIndex, SYSTEM_MASTERS, applies_to_user, resolve_role_ref, resource_attributes, rule_allows,
)
from runtime.models.insight import Access, InsightSubject
from runtime.server.rbac.insight import AGGREGATION, ATTRIBUTE, CLUSTER_SCOPE, MATRIX_VERBS, NAMESPACE_KIND, ROLE_REF, access_matrix, check_rule, policy_objects, probe_user, subjects_in, who_can_attributes, with_attribute
from runtime.server.rbac.insight import aggregate
from runtime.server.rbac.insight import diff
from runtime.server.rbac.insight import explain
from tests.support.rbac_objects import cluster_scoped
from tests.support.rbac_policies import (
    DIFF_SETTINGS, MASTER, SETTINGS, USERS, non_resource_requests, policies, requests, resource_requests,
    scenarios, url_rules, resource_rules,
)


@SETTINGS
@given(resource_rules | url_rules, requests)
def test_all_attribute_checks_match_exactly_when_the_rule_allows(rule, attrs):
    checks = check_rule(attrs, rule)
    # verb and URL; or verb, group, resource, subresource and name.
    assert len(checks) == (5 if attrs.resource_request else 2)
    assert all(c.matched for c in checks) == rule_allows(attrs, rule)


def _applying_bindings(attrs, source) -> list:
    """The bindings naming the request's user, found by brute force (not through the index explain reads)."""
    def names(binding, namespace):
        return any(applies_to_user(attrs.user, s, namespace) for s in binding.get("subjects") or ())
    cluster = [b for b in source.list_cluster_role_bindings() if names(b, "")]
    spaced = [b for b in source.list_role_bindings()
              if attrs.namespace and b["metadata"].get("namespace") == attrs.namespace and names(b, attrs.namespace)]
    return cluster + spaced


def test_every_explanation_verdict_agrees_with_the_authorizer():
    seen: Counter[str] = Counter()

    @SETTINGS
    @given(scenarios(), st.booleans())
    def check(scenario, master):
        source, attrs = scenario
        attrs = dataclasses.replace(attrs, user=MASTER) if master and attrs.verb == "list" else attrs
        decision = RBACAuthorizer(source).authorize(attrs)
        e = explain(attrs, source, cluster_scoped=cluster_scoped)
        assert (e.allowed, e.reason, e.evaluation_error) == (
            decision.allowed, decision.reason, decision.evaluation_error)
        privileged = SYSTEM_MASTERS in attrs.user.groups
        assert (e.granted_by is not None) == (decision.allowed and not privileged)
        if e.granted_by is not None:
            seen["granted"] += 1
            assert rule_allows(attrs, e.granted_by.rule.to_dict())
            assert f'"{e.granted_by.binding.name}' in decision.reason
        assert len(e.bindings) == len(_applying_bindings(attrs, source))
        for binding in e.bindings:
            for explained in binding.rules:
                seen["rules"] += 1
                assert explained.matched == rule_allows(attrs, explained.rule.to_dict())

    check()
    assert seen["granted"] and seen["rules"], seen


def _relabelled(source, role_name, labels):
    objects = []
    for obj in policy_objects(source):
        if obj["kind"] == "ClusterRole" and obj["metadata"]["name"] == role_name:
            meta = obj["metadata"]
            obj = {**obj, "metadata": {**meta, "labels": {**(meta.get("labels") or {}), **labels}}}
        objects.append(obj)
    return aggregate(RBACIndex(objects))


def _binding(source, ref):
    listing = (source.list_cluster_role_bindings() if ref.kind == "ClusterRoleBinding"
               else source.list_role_bindings())
    return next(b for b in listing if b["metadata"]["name"] == ref.name
                and (b["metadata"].get("namespace") or "") == ref.namespace)


def test_every_near_miss_differs_from_a_match_in_exactly_the_attribute_it_names():
    kinds: Counter[str] = Counter()

    @SETTINGS
    @given(scenarios())
    def check(scenario):
        source, attrs = scenario
        authorizer = RBACAuthorizer(source)
        for miss in explain(attrs, source, cluster_scoped=cluster_scoped).near_misses:
            kinds[miss.kind] += 1
            if miss.kind == ROLE_REF:
                binding = _binding(source, miss.binding)
                assert resolve_role_ref(binding["roleRef"], miss.binding.namespace, source)[1]
                continue
            rule = miss.rule.to_dict()
            if miss.kind == ATTRIBUTE:
                assert not rule_allows(attrs, rule)
                changed = with_attribute(attrs, miss.attribute, miss.suggestion)
                assert rule_allows(changed, rule) and authorizer.authorize(changed).allowed
            elif miss.kind in (NAMESPACE_KIND, CLUSTER_SCOPE):
                assert rule_allows(attrs, rule) and miss.binding.namespace != attrs.namespace
                assert (miss.kind == CLUSTER_SCOPE) == cluster_scoped(attrs.api_group, attrs.resource)
                moved = with_attribute(attrs, "namespace", miss.binding.namespace)
                assert authorizer.authorize(moved).allowed
            else:
                assert miss.kind == AGGREGATION and rule_allows(attrs, rule)
                fixed = _relabelled(source, miss.source_role.name, dict(miss.labels))
                assert RBACAuthorizer(fixed).authorize(attrs).allowed

    check()
    # The common kinds, in most examples; the rare ones come and go with the examples' seed (derived from
    # this function), and test_rbac_insight_explain has an example of each.
    assert {ATTRIBUTE, AGGREGATION} <= set(kinds), kinds


def test_who_can_agrees_exactly_with_brute_force_over_all_subjects():
    granted = 0

    @SETTINGS
    @given(scenarios())
    def check(scenario):
        nonlocal granted
        source, attrs = scenario
        authorizer = RBACAuthorizer(source)
        everyone = set(subjects_in(source)) | {InsightSubject("Group", SYSTEM_MASTERS)}
        brute = {s for s in everyone
                 if authorizer.authorize(dataclasses.replace(attrs, user=probe_user(s))).allowed}
        found = who_can_attributes(attrs, source)
        assert {s.subject for s in found} == brute and len(found) == len(brute)
        for access in found:
            assert access.privileged or access.grants
            granted += len(access.grants)
            assert all(rule_allows(attrs, g.rule.to_dict()) for g in access.grants)

    check()
    assert granted  # some subject was found through its grants, not only system:masters


def test_access_matrix_denies_exactly_what_the_authorizer_denies():
    cells: Counter[bool] = Counter()

    @SETTINGS
    @given(policies(), st.sampled_from(USERS), st.sampled_from(["", "ns1", "ns3"]))
    def check(source, who, namespace):
        resources = [("", "pods"), ("", "pods/log"), ("apps", "secrets"), ("", "users")]
        matrix = access_matrix(who, namespace, resources, source)
        authorizer = RBACAuthorizer(source)
        assert len(matrix.rows) == len(resources)
        for row in matrix.rows:
            assert list(row.access) == list(MATRIX_VERBS)
            resource, _, sub = row.resource.partition("/")
            for verb, access in row.access.items():
                attrs = resource_attributes(who, verb, resource, api_group=row.api_group,
                                            subresource=sub, namespace=namespace)
                cells[access == Access.DENIED] += 1
                assert (access == Access.DENIED) == (not authorizer.authorize(attrs).allowed)

    check()
    assert cells[True] and cells[False], cells  # both answers were checked


def test_diff_reports_a_permission_for_every_decision_that_changes():
    changed = 0

    @DIFF_SETTINGS
    @given(policies(), policies(), st.lists(resource_requests | non_resource_requests, min_size=1,
                                            max_size=4))
    def check(before, after, probes):
        nonlocal changed
        changes = {d.subject: d for d in diff(before, after)}
        named = set(subjects_in(before)) | set(subjects_in(after))
        for attrs in probes:
            for subject in named:
                request = dataclasses.replace(attrs, user=probe_user(subject))
                was = RBACAuthorizer(before).authorize(request).allowed
                now = RBACAuthorizer(after).authorize(request).allowed
                if was == now:
                    continue
                changed += 1
                change = changes[subject]
                listed = change.granted if now else change.revoked
                scopes = {"", request.namespace} if request.resource_request else {""}
                assert any(p.namespace in scopes and rule_allows(request, p.as_policy_rule())
                           for p in listed), (subject, request)

    check()
    assert changed  # some probed decision did change between the two policies
