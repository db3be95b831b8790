"""`aggregation_graph(source)`: which ClusterRoles aggregate which, as nodes and edges.

A node per ClusterRole that aggregates (has an `aggregationRule`) or is
selected by one: its labels, its selectors (as label selector strings) and
how many rules it holds. An edge per (aggregating role, selected role), as
`runtime.server.rbac.aggregation` selects them (`selects`), with the indexes of the
aggregating role's rules that the selected role holds (`aggregation_sources`):
empty when the aggregation has not caught up yet. Chains (view into edit
into admin) are edges like any other. Sorted by name.

Pure: reads the ClusterRoles of a `PolicySource`.

Internal to `runtime.server.rbac.insight`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runtime.models.insight import AggregationEdge, AggregationGraphStatus, AggregationNode
from runtime.server.rbac.aggregation import aggregation_selectors
from runtime.server.rbac.insight.aggregate import aggregation_sources, selects
from runtime.server.rbac.source import PolicySource
from runtime.machinery.selectors import SelectorError

__all__ = ["aggregation_graph"]


def _name(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def _selectors(role: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
    try:
        return tuple(str(s) for s in aggregation_selectors(role)), ""
    except SelectorError as exc:
        return (), str(exc)


def aggregation_graph(source: PolicySource) -> AggregationGraphStatus:
    """Return the `AggregationGraph` status of the ClusterRoles in `source`."""
    roles = sorted(source.list_cluster_roles(), key=_name)
    edges: list[AggregationEdge] = []
    in_graph: set[str] = set()
    for role in roles:
        if not role.get("aggregationRule"):
            continue
        in_graph.add(_name(role))
        origins = aggregation_sources(role, roles)
        for other in roles:
            if selects(role, other):
                in_graph.add(_name(other))
                held = tuple(i for i, names in enumerate(origins) if _name(other) in names)
                edges.append(AggregationEdge(_name(role), _name(other), held))
    nodes = []
    for role in roles:
        if _name(role) not in in_graph:
            continue
        aggregated = bool(role.get("aggregationRule"))
        selectors, error = _selectors(role) if aggregated else ((), "")
        labels = dict(sorted(((role.get("metadata") or {}).get("labels") or {}).items()))
        nodes.append(AggregationNode(_name(role), aggregated, len(role.get("rules") or ()),
                                     labels, selectors, error))
    return AggregationGraphStatus(tuple(nodes), tuple(edges))
