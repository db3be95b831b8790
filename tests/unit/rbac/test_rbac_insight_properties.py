"""Property tests over random policies: insight answers exactly what the authorizer decides.

Random policies hold Users, Groups and ServiceAccounts (with and without
namespace), ClusterRoles and Roles with wildcards, resourceNames,
subresources and non-resource URLs, aggregated ClusterRoles (chained), and
RoleBindings to ClusterRoles, plus roleRefs that do not resolve.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from runtime.rbac import (
    RBACAuthorizer, RBACIndex, SYSTEM_MASTERS, resolve_role_ref, resource_attributes, rule_allows,
)
from runtime.rbac.insight import (
    AGGREGATION, ATTRIBUTE, CLUSTER_SCOPE, NAMESPACE_KIND, ROLE_REF, Access, Subject,
    access_matrix, aggregate, check_rule, diff, explain, policy_objects, probe_user,
    subjects_in, who_can_attributes, with_attribute,
)
from tests.support.rbac_objects import cluster_scoped
from tests.support.rbac_policies import (
    DIFF_SETTINGS, MASTER, SETTINGS, USERS, non_resource_requests, policies, requests, resource_requests,
    scenarios, url_rules, resource_rules,
)


@SETTINGS
@given(resource_rules | url_rules, requests)
def test_all_attribute_checks_match_exactly_when_the_rule_allows(rule, attrs):
    assert all(c.matched for c in check_rule(attrs, rule)) == rule_allows(attrs, rule)


@SETTINGS
@given(scenarios(), st.booleans())
def test_every_explanation_verdict_agrees_with_the_authorizer(scenario, master):
    source, attrs = scenario
    attrs = dataclasses.replace(attrs, user=MASTER) if master and attrs.verb == "list" else attrs
    decision = RBACAuthorizer(source).authorize(attrs)
    e = explain(attrs, source, cluster_scoped=cluster_scoped)
    assert (e.allowed, e.reason, e.evaluation_error) == (
        decision.allowed, decision.reason, decision.evaluation_error)
    privileged = SYSTEM_MASTERS in attrs.user.groups
    assert (e.granted_by is not None) == (decision.allowed and not privileged)
    if e.granted_by is not None:
        assert rule_allows(attrs, e.granted_by.rule.as_policy_rule())
        assert f'"{e.granted_by.binding.name}' in decision.reason
    for binding in e.bindings:
        for explained in binding.rules:
            assert explained.matched == rule_allows(attrs, explained.rule.as_policy_rule())


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


@SETTINGS
@given(scenarios())
def test_every_near_miss_differs_from_a_match_in_exactly_the_attribute_it_names(scenario):
    source, attrs = scenario
    authorizer = RBACAuthorizer(source)
    for miss in explain(attrs, source, cluster_scoped=cluster_scoped).near_misses:
        if miss.kind == ROLE_REF:
            binding = _binding(source, miss.binding)
            assert resolve_role_ref(binding["roleRef"], miss.binding.namespace, source)[1]
            continue
        rule = miss.rule.as_policy_rule()
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


@SETTINGS
@given(scenarios())
def test_who_can_agrees_exactly_with_brute_force_over_all_subjects(scenario):
    source, attrs = scenario
    authorizer = RBACAuthorizer(source)
    everyone = set(subjects_in(source)) | {Subject("Group", SYSTEM_MASTERS)}
    brute = {s for s in everyone
             if authorizer.authorize(dataclasses.replace(attrs, user=probe_user(s))).allowed}
    found = who_can_attributes(attrs, source)
    assert {s.subject for s in found} == brute
    for access in found:
        assert all(rule_allows(attrs, g.rule.as_policy_rule()) for g in access.grants)
        assert access.privileged or access.grants


@SETTINGS
@given(policies(), st.sampled_from(USERS), st.sampled_from(["", "ns1", "ns3"]))
def test_access_matrix_denies_exactly_what_the_authorizer_denies(source, who, namespace):
    resources = [("", "pods"), ("", "pods/log"), ("apps", "secrets"), ("", "users")]
    matrix = access_matrix(who, namespace, resources, source)
    authorizer = RBACAuthorizer(source)
    for row in matrix.rows:
        resource, _, sub = row.resource.partition("/")
        for verb, access in row.access:
            attrs = resource_attributes(who, verb, resource, api_group=row.api_group,
                                        subresource=sub, namespace=namespace)
            assert (access is Access.DENIED) == (not authorizer.authorize(attrs).allowed)


@DIFF_SETTINGS
@given(policies(), policies(), st.lists(resource_requests | non_resource_requests, min_size=1,
                                        max_size=4))
def test_diff_reports_a_permission_for_every_decision_that_changes(before, after, probes):
    changes = {d.subject: d for d in diff(before, after)}
    named = set(subjects_in(before)) | set(subjects_in(after))
    for attrs in probes:
        for subject in named:
            request = dataclasses.replace(attrs, user=probe_user(subject))
            was = RBACAuthorizer(before).authorize(request).allowed
            now = RBACAuthorizer(after).authorize(request).allowed
            if was == now:
                continue
            change = changes[subject]
            listed = change.granted if now else change.revoked
            scopes = {"", request.namespace} if request.resource_request else {""}
            assert any(p.namespace in scopes and rule_allows(request, p.as_policy_rule())
                       for p in listed), (subject, request)
