"""Aggregation over a whole policy: `aggregate`, `aggregation_sources`, `labels_to_select`.

- `aggregate(source)` returns a new `RBACIndex` holding the same objects,
  every aggregated ClusterRole's rules replaced by what the aggregation
  controller would write (`runtime.server.rbac.aggregation.aggregate_rules`),
  repeated until nothing changes so chains (view into edit into admin)
  settle as the controller's successive reconciles do. Give it to the other
  insight functions when the source was not written by the controller (a
  diff of manifests, a test policy).
- `aggregation_sources(role, cluster_roles)` traces each rule of an
  aggregated ClusterRole to the ClusterRoles it came from.
- `labels_to_select(role, other)` returns the fewest labels to set on
  `other` so `role` aggregates it, or None when setting labels cannot (a
  `NotIn` or `DoesNotExist` on a label it has).

Caveats: a ClusterRole whose aggregationRule has a malformed selector keeps
its rules, as the controller leaves it (TerminalError). `aggregate` makes
at most one round more than there are aggregated roles, enough for any
chain; roles that select each other (a cycle) keep what that many rounds
give, where the controller would go on reconciling them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime.server.rbac.aggregation import aggregate_rules, aggregation_selectors, same_rules
from runtime.server.rbac.index import RBACIndex
from runtime.server.rbac.source import PolicySource
from runtime.machinery.selectors import SelectorError, label_selector_from_dict

__all__ = ["aggregate", "aggregation_sources", "labels_to_select", "selects", "policy_objects"]


def policy_objects(source: PolicySource) -> list[dict[str, Any]]:
    """Return every object `source` holds: ClusterRoles, Roles, ClusterRoleBindings, RoleBindings."""
    return [*source.list_cluster_roles(), *source.list_roles(),
            *source.list_cluster_role_bindings(), *source.list_role_bindings()]


def _name(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def aggregate(source: PolicySource) -> RBACIndex:
    """Return a new `RBACIndex` with aggregated ClusterRoles' rules filled in; `source` is unchanged."""
    roles = {_name(r): r for r in source.list_cluster_roles()}
    aggregated = sorted(n for n, r in roles.items() if r.get("aggregationRule"))
    for _ in range(len(aggregated) + 1):
        changed = False
        for name in aggregated:
            role = roles[name]
            try:
                rules = aggregate_rules(role, roles.values())
            except SelectorError:
                continue
            if not same_rules(rules, role.get("rules") or []):
                roles[name] = {**role, "rules": rules}
                changed = True
        if not changed:
            break
    return RBACIndex([*roles.values(), *source.list_roles(),
                      *source.list_cluster_role_bindings(), *source.list_role_bindings()])


def selects(role: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Return whether `role`'s aggregationRule selects `other` (never itself; False on a bad selector)."""
    if _name(role) == _name(other):
        return False
    try:
        return any(s.matches(_labels(other)) for s in aggregation_selectors(role))
    except SelectorError:
        return False


def _normal(rule: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rule.items() if v not in (None, [], "")}


def aggregation_sources(role: Mapping[str, Any],
                        cluster_roles: Iterable[Mapping[str, Any]]) -> tuple[tuple[str, ...], ...]:
    """Return, per rule of `role`, the names of the selected ClusterRoles holding an equal rule.

    An empty tuple for a rule no selected role holds (written by hand, or
    stale). All empty for a role without aggregationRule.
    """
    rules = role.get("rules") or ()
    if not role.get("aggregationRule"):
        return tuple(() for _ in rules)
    selected = sorted((r for r in cluster_roles if selects(role, r)), key=_name)
    held = [(_name(r), [_normal(x) for x in r.get("rules") or ()]) for r in selected]
    return tuple(tuple(name for name, normals in held if _normal(rule) in normals)
                 for rule in rules)


def _labels_for(selector: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, str] | None:
    wanted = dict(labels)
    for key, value in (selector.get("matchLabels") or {}).items():
        wanted[key] = value
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key") or "", expr.get("operator") or "", expr.get("values") or []
        if op == "In" and wanted.get(key) not in values and values:
            wanted[key] = values[0]
        elif op == "Exists" and key not in wanted:
            wanted[key] = "true"
        elif op == "NotIn" and key in wanted and wanted[key] in values:
            return None
        elif op == "DoesNotExist" and key in wanted:
            return None
    try:
        if not label_selector_from_dict(selector).matches(wanted):
            return None
    except SelectorError:
        return None
    return {k: v for k, v in wanted.items() if labels.get(k) != v}


def labels_to_select(role: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, str] | None:
    """Return the labels to set on `other` so `role` aggregates it ({} if it already does), or None."""
    if _name(role) == _name(other) or not role.get("aggregationRule"):
        return None
    best: dict[str, str] | None = None
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        if selector is None:
            continue
        found = _labels_for(selector, _labels(other))
        if found is not None and (best is None or len(found) < len(best)):
            best = found
    return best
