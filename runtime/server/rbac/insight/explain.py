"""`explain(attrs, source)`: the whole RBAC evaluation of one request, as data.

The verdict is `RBACAuthorizer(source).authorize(attrs)`'s own (`allowed`,
`reason`, `evaluation_error`; `system:masters` allowed before any rule, as
`privileged_group`). Around it, the walk the authorizer makes, in its order:
every binding that applies to the user (ClusterRoleBindings, then
RoleBindings of the request namespace when it is not ""), the subject that
matched, the role its roleRef names (or why it does not resolve), and each
rule with one `AttributeCheck` per attribute (`runtime.server.rbac.insight.checks`,
plus `namespace`: the binding's scope). `granted_by` is the first rule all
of whose checks match, the one the authorizer's reason names. Rules of an
aggregated ClusterRole say which ClusterRoles they came from
(`aggregated_from`). Then the near misses (`runtime.server.rbac.insight.near_miss`).

Scope: RBAC does not know which resources are cluster-scoped; pass
`cluster_scoped(api_group, resource)` and the explanation says so when a
RoleBinding could never grant the request (`ClusterScope` near misses, and a
note when a namespaced request names a cluster-scoped resource, which real
requests never do).

Caveats: near misses read the whole policy (every RoleBinding, every
ClusterRole for aggregation), so `explain` costs O(policy), unlike a
decision. Bindings with a subject of unknown kind show only in
`evaluation_error`, as the authorizer reports them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from runtime.models.insight import (
    AccessExplanationStatus, AttributeCheck, BindingExplanation, ExplainedRequest, InsightGrant,
    InsightObjectRef, NearMiss, RuleExplanation,
)
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.authorizer import RBACAuthorizer
from runtime.server.rbac.insight.aggregate import aggregation_sources
from runtime.server.rbac.insight.checks import NAMESPACE, check_rule
from runtime.server.rbac.insight.near_miss import (
    ClusterScoped, aggregation_near_misses, attribute_near_miss,
    namespace_near_misses, role_ref_near_miss,
)
from runtime.server.rbac.insight.refs import object_ref, role_ref, rule_of, subject_of
from runtime.server.rbac.resolver import resolve_role_ref
from runtime.server.rbac.source import PolicySource
from runtime.server.rbac.subjects import applies_to_user
from runtime.server.rbac.user import SYSTEM_MASTERS

__all__ = ["explained_request", "explain"]

CLUSTER = "Cluster"
NAMESPACED = "Namespaced"


def explained_request(attrs: Attributes) -> ExplainedRequest:
    """Return the request `attrs` describes, as an explanation names it (who, and what)."""
    if not attrs.resource_request:
        return ExplainedRequest(attrs.user.name, attrs.user.groups, attrs.verb, False,
                                non_resource_url=attrs.path)
    return ExplainedRequest(attrs.user.name, attrs.user.groups, attrs.verb, True, attrs.namespace,
                            attrs.api_group, attrs.resource, attrs.subresource, attrs.name)


def _applying(attrs: Attributes, source: PolicySource
              ) -> Iterator[tuple[Mapping[str, Any], str, int]]:
    """Yield (binding, namespace, matched subject index) in the authorizer's order."""
    user = attrs.user
    walks = [("", source.cluster_role_bindings_for(user))]
    if attrs.namespace:
        walks.append((attrs.namespace, source.role_bindings_for(attrs.namespace, user)))
    for namespace, bindings in walks:
        for binding in bindings:
            for i, subject in enumerate(binding.get("subjects") or ()):
                if applies_to_user(user, subject, namespace):
                    yield binding, namespace, i
                    break


def _explain_binding(attrs: Attributes, binding: Mapping[str, Any], namespace: str,
                     subject_index: int, source: PolicySource
                     ) -> tuple[BindingExplanation, Mapping[str, Any] | None]:
    """Return the binding's explanation, and its role when that is an aggregated ClusterRole."""
    ref, role = object_ref(binding), role_ref(binding)
    subject = subject_of((binding.get("subjects") or ())[subject_index], namespace)
    rules, error = resolve_role_ref(binding.get("roleRef") or {}, namespace, source)
    if error:
        return BindingExplanation(ref, subject, subject_index, role, error=error), None
    role_obj = (source.get_cluster_role(role.name) if role.kind == "ClusterRole"
                else source.get_role(namespace, role.name))
    aggregated = bool(role_obj and role_obj.get("aggregationRule"))
    origins: tuple[tuple[str, ...], ...] = ()
    if aggregated:
        origins = aggregation_sources(role_obj, source.list_cluster_roles())
    scope_check = AttributeCheck(NAMESPACE, True, attrs.namespace, (namespace or "*",))
    explained = []
    for index, rule in enumerate(rules):
        checks = (*check_rule(attrs, rule), scope_check)
        explained.append(RuleExplanation(index, rule_of(rule), all(c.matched for c in checks),
                                         checks, origins[index] if origins else ()))
    return (BindingExplanation(ref, subject, subject_index, role, tuple(explained),
                               aggregated=aggregated),
            role_obj if aggregated else None)


def _cluster_scope_notes(attrs: Attributes,
                         bindings: list[BindingExplanation]) -> tuple[str, ...]:
    notes = [f"{attrs.resource!r} is cluster-scoped: RoleBindings never grant it to real "
             f"requests, only ClusterRoleBindings do"]
    if attrs.namespace:
        granting = [b for b in bindings if b.binding.kind == "RoleBinding"
                    and any(r.matched for r in b.rules)]
        notes.append(f"the request names namespace {attrs.namespace!r}, which requests for a "
                     f"cluster-scoped resource never do"
                     + (f"; {granting[0].binding} matches only because of it" if granting else ""))
    return tuple(notes)


def explain(attrs: Attributes, source: PolicySource, *,
            cluster_scoped: ClusterScoped | None = None) -> AccessExplanationStatus:
    """Return the explanation of `attrs` against `source` (see the module doc). Never raises for bad policy."""
    decision = RBACAuthorizer(source).authorize(attrs)
    privileged = SYSTEM_MASTERS if SYSTEM_MASTERS in attrs.user.groups else ""
    bindings: list[BindingExplanation] = []
    aggregated: list[tuple[InsightObjectRef, Mapping[str, Any]]] = []
    near: list[NearMiss] = []
    granted: InsightGrant | None = None
    for binding, namespace, subject_index in _applying(attrs, source):
        explained, aggregated_role = _explain_binding(attrs, binding, namespace, subject_index,
                                                      source)
        bindings.append(explained)
        if explained.error:
            near.append(role_ref_near_miss(explained.binding, explained.role, explained.error))
            continue
        if aggregated_role is not None:
            aggregated.append((explained.binding, aggregated_role))
        for rule in explained.rules:
            if rule.matched and granted is None and not privileged:
                granted = InsightGrant(explained.binding, explained.role, rule.index, rule.rule)
            miss = attribute_near_miss(explained.binding, explained.role, rule.index, rule.rule,
                                       rule.checks, attrs.verb)
            if miss is not None:
                near.append(miss)
    near.extend(namespace_near_misses(attrs, source, cluster_scoped))
    near.extend(aggregation_near_misses(attrs, aggregated, source))
    scope = ""
    notes: tuple[str, ...] = ()
    if attrs.resource_request and cluster_scoped is not None:
        if cluster_scoped(attrs.api_group, attrs.resource):
            scope, notes = CLUSTER, _cluster_scope_notes(attrs, bindings)
        else:
            scope = NAMESPACED
    return AccessExplanationStatus(explained_request(attrs), decision.allowed, decision.reason,
                                   decision.evaluation_error, privileged, granted, tuple(bindings),
                                   tuple(near), scope, notes)
