"""ClusterRole aggregation as a pure function: the rules an aggregated ClusterRole holds.

As Kubernetes' `clusterroleaggregation_controller.go`: for each selector of
`aggregationRule.clusterRoleSelectors`, in order, the ClusterRoles it
matches sorted by name (never the role itself), each of their rules appended
unless an equal rule is already there. Rules compare as Kubernetes'
`Semantic.DeepEqual` does: an empty list equals an absent one.

The aggregation controller (`controllers/aggregation.py`) writes what
`aggregate_rules` returns; `runtime.server.rbac.insight.aggregate` applies it to a
whole policy. Pure: no I/O. Here, below the server, so that the controller over HTTP
(`miniplane controllers`) loads none of the server's RBAC; `runtime.server.rbac.aggregation`
names the same functions for the server's modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime.machinery.selectors import ParsedLabelSelector, label_selector_from_dict

__all__ = ["aggregation_selectors", "aggregate_rules", "same_rules"]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def aggregation_selectors(role: Mapping[str, Any]) -> list[ParsedLabelSelector]:
    """Return the parsed `aggregationRule.clusterRoleSelectors` of `role` ([] when none).

    Raises `SelectorError` for a malformed selector.
    """
    rule = role.get("aggregationRule") or {}
    return [label_selector_from_dict(s) for s in rule.get("clusterRoleSelectors") or []]


def _normal(rule: Mapping[str, Any]) -> dict[str, Any]:
    # Kubernetes compares with Semantic.DeepEqual: an empty list equals an absent one.
    return {k: v for k, v in rule.items() if v not in (None, [], "")}


def same_rules(a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]]) -> bool:
    """Return whether two rule lists are equal, in order, ignoring empty fields."""
    return [_normal(r) for r in a] == [_normal(r) for r in b]


def aggregate_rules(role: Mapping[str, Any],
                    roles: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the rules `role` aggregates from `roles`. Raises `SelectorError` for a malformed selector.

    The rule dicts returned are those of `roles` (not copies).
    """
    name = _meta(role).get("name")
    candidates = sorted((r for r in roles if _meta(r).get("name") != name),
                        key=lambda r: _meta(r).get("name") or "")
    rules: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    for selector in aggregation_selectors(role):
        for other in candidates:
            if not selector.matches(_meta(other).get("labels") or {}):
                continue
            for rule in other.get("rules") or []:
                if _normal(rule) not in seen:
                    seen.append(_normal(rule))
                    rules.append(rule)
    return rules
