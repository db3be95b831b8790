"""The insight kinds of `insight.<domain>/v1`: questions about the RBAC policy, answered by the server.

Virtual (create only, never stored), served like the access reviews and
listed in discovery and OpenAPI. Each answers from `runtime.server.rbac.insight`
over the authorizer's own index, and checks first that the caller may read
what the answer shows (see `insight_queries` and `insight_policy` for who
may ask what):

| kind | resource | answers |
|---|---|---|
| AccessExplanation | accessexplanations | why a request is allowed or denied: bindings, rules, near misses |
| WhoCan | whocans | every subject allowed a request, with the grants |
| AccessMatrix | accessmatrices | allowed / denied / allowedByWildcard per resource and verb |
| RBACLint | rbaclints | findings ranked by severity; terminating namespaces' blockers |
| AggregationGraph | aggregationgraphs | which ClusterRoles aggregate which |
| RBACDiff | rbacdiffs | permissions granted and revoked per subject by applying objects |
"""

from __future__ import annotations

from runtime.machinery.kindinfo import KindInfo
from runtime.models import catalog
from runtime.server.kinds.base import VirtualStrategy
from runtime.server.kinds.insight.policy import AggregationGraphStrategy, RBACDiffStrategy, RBACLintStrategy
from runtime.server.kinds.insight.queries import AccessExplanationStrategy, AccessMatrixStrategy, WhoCanStrategy

__all__ = ["INSIGHT_STRATEGIES"]

#: The strategy of each insight kind (`runtime.models.catalog.INSIGHT_KINDS`).
INSIGHT_STRATEGIES: dict[KindInfo, type[VirtualStrategy]] = {
    catalog.ACCESS_EXPLANATION: AccessExplanationStrategy,
    catalog.WHO_CAN: WhoCanStrategy,
    catalog.ACCESS_MATRIX: AccessMatrixStrategy,
    catalog.RBAC_LINT: RBACLintStrategy,
    catalog.AGGREGATION_GRAPH: AggregationGraphStrategy,
    catalog.RBAC_DIFF: RBACDiffStrategy,
}
