"""`who_can` / `who_can_non_resource`: every subject the policy allows a request, and by what.

Answers from the bindings and roles (`PolicySource`), not by trying users:
for each ClusterRoleBinding, and each RoleBinding of the request's namespace
when it is not "" (the bindings the authorizer would read), the roleRef is
resolved and its rules matched with `rule_allows`; every subject of a
binding with a matching rule is allowed. A subject is reported as the
binding names it: a User, a ServiceAccount (namespace defaulted to the
RoleBinding's), or a Group, whose every member is allowed through it.
Group `system:masters` is always listed, `privileged`: its members are
allowed everything before RBAC is asked.

`impersonate` is a verb like any other: `who_can("impersonate", "users",
name="alice", source=...)` (also `groups`, `serviceaccounts` with a
namespace, `userextras/<key>` in `authentication.<domain>`).

Exact: a user is allowed by the authorizer iff it is a listed User or
ServiceAccount, or in a listed Group (the property tests compare with the
authorizer over every subject). Subjects that can never match (unknown kind,
a namespace on a User, a ServiceAccount without namespace in a
ClusterRoleBinding) are never listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime.models.insight import InsightGrant, InsightSubject, SubjectAccess
from runtime.server.rbac.attributes import Attributes, non_resource_attributes, resource_attributes
from runtime.server.rbac.insight.refs import binding_namespace, object_ref, role_ref, rule_of, subject_of
from runtime.server.rbac.resolver import resolve_role_ref
from runtime.server.rbac.rules import rule_allows
from runtime.server.rbac.source import PolicySource
from runtime.server.rbac.subjects import GROUP_KIND
from runtime.server.rbac.user import SYSTEM_MASTERS, UserInfo

__all__ = ["who_can", "who_can_non_resource", "who_can_attributes"]

# Matching a rule never reads the user; this one only fills the field.
_NOBODY = UserInfo("")


def _grants(attrs: Attributes, binding: Mapping[str, Any], source: PolicySource) -> list[InsightGrant]:
    namespace = binding_namespace(binding)
    rules, error = resolve_role_ref(binding.get("roleRef") or {}, namespace, source)
    if error:
        return []
    ref, role = object_ref(binding), role_ref(binding)
    return [InsightGrant(ref, role, i, rule_of(rule)) for i, rule in enumerate(rules)
            if rule_allows(attrs, rule)]


def who_can_attributes(attrs: Attributes, source: PolicySource) -> tuple[SubjectAccess, ...]:
    """Return who may make the request `attrs` describes (its user is ignored), sorted by subject."""
    bindings: Iterable[Mapping[str, Any]] = source.list_cluster_role_bindings()
    if attrs.resource_request and attrs.namespace:
        bindings = [*bindings, *(b for b in source.list_role_bindings()
                                 if binding_namespace(b) == attrs.namespace)]
    found: dict[InsightSubject, list[InsightGrant]] = {}
    for binding in bindings:
        grants = _grants(attrs, binding, source)
        if not grants:
            continue
        namespace = binding_namespace(binding)
        for raw in binding.get("subjects") or ():
            subject = subject_of(raw, namespace)
            if subject is not None:
                held = found.setdefault(subject, [])
                held.extend(g for g in grants if g not in held)
    masters = InsightSubject(GROUP_KIND, SYSTEM_MASTERS)
    found.setdefault(masters, [])
    return tuple(SubjectAccess(s, tuple(found[s]), s == masters) for s in sorted(found, key=InsightSubject.sort_key))


def who_can(verb: str, resource: str, *, group: str = "", subresource: str = "",
            namespace: str = "", name: str = "",
            source: PolicySource) -> tuple[SubjectAccess, ...]:
    """Return who may `verb` `resource[/subresource]` of `group` in `namespace` ("" = cluster-wide), named `name`."""
    attrs = resource_attributes(_NOBODY, verb, resource, api_group=group, subresource=subresource,
                                namespace=namespace, name=name)
    return who_can_attributes(attrs, source)


def who_can_non_resource(verb: str, path: str, *,
                         source: PolicySource) -> tuple[SubjectAccess, ...]:
    """Return who may `verb` (lower-cased HTTP method) the non-resource URL `path`."""
    return who_can_attributes(non_resource_attributes(_NOBODY, verb, path), source)
