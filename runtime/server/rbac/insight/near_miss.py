"""Near misses: rules that would allow a request but for exactly one thing.

Each kind names the one attribute in which it differs from a match; changing
only that makes the request allowed (the property tests check it):

- `Attribute`: a rule of a binding that applies fails on exactly one request
  attribute (`verb`, `apiGroup`, `resource`, `subresource`, `resourceName`,
  `nonResourceURL`) and `suggestion` is a value that would match (right
  resource, wrong verb).
- `Namespace`: a RoleBinding of another namespace applies to the user and a
  rule of its role allows everything else; `suggestion` is that namespace.
- `ClusterScope`: the same, for a resource the caller says is
  cluster-scoped: no namespace makes it match, since requests for it carry
  none; the message says to bind with a ClusterRoleBinding.
- `Aggregation`: an aggregated ClusterRole bound by a binding that applies
  does not select a ClusterRole (`sourceRole`) holding a rule that allows
  the request; `labels` set on that role would select it.
- `RoleRef`: a binding applies but its roleRef does not resolve, so its
  rules (if any were meant) are missing.

Pure: reads the `PolicySource`, matches with `runtime.server.rbac.rules`.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from runtime.models.insight import AttributeCheck, InsightObjectRef, NearMiss
from runtime.models.rbac import PolicyRule
from runtime.server.rbac.attributes import Attributes
from runtime.server.rbac.insight.aggregate import labels_to_select, selects
from runtime.server.rbac.insight.checks import NAMESPACE
from runtime.server.rbac.insight.refs import object_ref, role_ref, rule_of
from runtime.server.rbac.resolver import resolve_role_ref
from runtime.server.rbac.rules import rule_allows
from runtime.server.rbac.source import PolicySource
from runtime.server.rbac.subjects import applies_to_user

__all__ = [
    "ATTRIBUTE", "NAMESPACE_KIND", "CLUSTER_SCOPE", "AGGREGATION", "ROLE_REF",
    "ClusterScoped", "attribute_near_miss", "namespace_near_misses",
    "aggregation_near_misses", "role_ref_near_miss",
]

ATTRIBUTE = "Attribute"
NAMESPACE_KIND = "Namespace"
CLUSTER_SCOPE = "ClusterScope"
AGGREGATION = "Aggregation"
ROLE_REF = "RoleRef"

#: `cluster_scoped(api_group, resource)`: whether the server serves that resource cluster-scoped.
ClusterScoped = Callable[[str, str], bool]


def _values(values: Iterable[str]) -> str:
    return "[" + ", ".join(repr(v) for v in values) + "]"


def attribute_near_miss(binding: InsightObjectRef, role: InsightObjectRef, index: int, rule: PolicyRule,
                        checks: tuple[AttributeCheck, ...], verb: str) -> NearMiss | None:
    """Return the `Attribute` near miss of one evaluated rule, or None when it is not one."""
    failed = [c for c in checks if not c.matched]
    if len(failed) != 1 or failed[0].suggestion is None or failed[0].attribute == NAMESPACE:
        return None
    check = failed[0]
    message = (f"{binding} of {role}: rules[{index}] allows {check.attribute} "
               f"{_values(check.allowed)}, not {check.requested!r}")
    if check.attribute == "resourceName" and not check.requested:
        message += f" (a {verb} request without a name never matches resourceNames)"
    return NearMiss(ATTRIBUTE, check.attribute, binding, role, message, index, rule,
                    check.requested, check.suggestion)


def role_ref_near_miss(binding: InsightObjectRef, role: InsightObjectRef, error: str) -> NearMiss:
    """Return the `RoleRef` near miss of a binding that applies but whose roleRef does not resolve."""
    return NearMiss(ROLE_REF, "roleRef", binding, role,
                    f"{binding} applies but its roleRef does not resolve: {error}")


def _subject_applies(attrs: Attributes, binding: Mapping[str, Any], namespace: str) -> bool:
    return any(applies_to_user(attrs.user, s, namespace) for s in binding.get("subjects") or ())


def namespace_near_misses(attrs: Attributes, source: PolicySource,
                          cluster_scoped: ClusterScoped | None) -> list[NearMiss]:
    """Return `Namespace` / `ClusterScope` near misses: RoleBindings of other namespaces that would grant.

    None for a non-resource request (RoleBindings never grant those).
    """
    if not attrs.resource_request:
        return []
    scoped = cluster_scoped is not None and cluster_scoped(attrs.api_group, attrs.resource)
    found: list[NearMiss] = []
    for binding in source.list_role_bindings():
        namespace = (binding.get("metadata") or {}).get("namespace") or ""
        if not namespace or namespace == attrs.namespace:
            continue
        if not _subject_applies(attrs, binding, namespace):
            continue
        rules, error = resolve_role_ref(binding.get("roleRef") or {}, namespace, source)
        if error:
            continue
        ref, role = object_ref(binding), role_ref(binding)
        for index, rule in enumerate(rules):
            if not rule_allows(attrs, rule):
                continue
            if scoped:
                message = (f"{ref} of {role}: rules[{index}] allows this, but only in namespace "
                           f"{namespace!r}, and {attrs.resource!r} is cluster-scoped: requests for it "
                           f"carry no namespace, so only a ClusterRoleBinding can grant it")
                found.append(NearMiss(CLUSTER_SCOPE, NAMESPACE, ref, role, message, index,
                                      rule_of(rule), attrs.namespace))
            else:
                message = (f"{ref} of {role}: rules[{index}] allows this in namespace "
                           f"{namespace!r}, not {attrs.namespace!r}"
                           if attrs.namespace else
                           f"{ref} of {role}: rules[{index}] allows this in namespace "
                           f"{namespace!r} only, not across all namespaces")
                found.append(NearMiss(NAMESPACE_KIND, NAMESPACE, ref, role, message, index,
                                      rule_of(rule), attrs.namespace, namespace))
    return found


def aggregation_near_misses(attrs: Attributes, bound: Iterable[tuple[InsightObjectRef, Mapping[str, Any]]],
                            source: PolicySource) -> list[NearMiss]:
    """Return `Aggregation` near misses for `bound`: (binding that applies, aggregated ClusterRole) pairs.

    One per (aggregated role, source role, rule), under the first binding met.
    """
    found: list[NearMiss] = []
    seen: set[tuple[str, str, int]] = set()
    cluster_roles = list(source.list_cluster_roles())
    for binding, aggregated in bound:
        target = object_ref(aggregated)
        for other in cluster_roles:
            if selects(aggregated, other):
                continue
            other_ref = object_ref(other)
            for index, rule in enumerate(other.get("rules") or ()):
                key = (target.name, other_ref.name, index)
                if key in seen or not rule_allows(attrs, rule):
                    continue
                labels = labels_to_select(aggregated, other)
                if not labels:
                    continue
                seen.add(key)
                text = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
                message = (f"{other_ref} rules[{index}] allows this, but the aggregationRule of "
                           f"{target} (bound by {binding}) does not select it; labels {text} would")
                found.append(NearMiss(AGGREGATION, "labels", binding, target, message, index,
                                      rule_of(rule), source_role=other_ref,
                                      labels=dict(sorted(labels.items()))))
    return found
