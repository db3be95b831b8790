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

from runtime import models
from runtime.server.kinds.base import KindInfo, VirtualStrategy
from runtime.server.kinds.insight.policy import AggregationGraphStrategy, RBACDiffStrategy, RBACLintStrategy
from runtime.server.kinds.insight.queries import AccessExplanationStrategy, AccessMatrixStrategy, WhoCanStrategy
from runtime.models import insight as insight_models

__all__ = ["INSIGHT_KINDS", "INSIGHT_GROUP_PREFIX"]

#: The group of the insight kinds, without the domain.
INSIGHT_GROUP_PREFIX = "insight"
_CREATE_ONLY = ("create",)


def _kind(kind: str, plural: str, model: type[models.K8sModel]) -> KindInfo:
    return KindInfo(INSIGHT_GROUP_PREFIX, kind, plural, kind.lower(), False, model, verbs=_CREATE_ONLY,
                    virtual=True, categories=("insight",))


#: The insight kinds with their strategies, in discovery order.
INSIGHT_KINDS: tuple[tuple[KindInfo, type[VirtualStrategy]], ...] = (
    (_kind("AccessExplanation", "accessexplanations", insight_models.AccessExplanation),
     AccessExplanationStrategy),
    (_kind("WhoCan", "whocans", insight_models.WhoCan), WhoCanStrategy),
    (_kind("AccessMatrix", "accessmatrices", insight_models.AccessMatrix), AccessMatrixStrategy),
    (_kind("RBACLint", "rbaclints", insight_models.RBACLint), RBACLintStrategy),
    (_kind("AggregationGraph", "aggregationgraphs", insight_models.AggregationGraph),
     AggregationGraphStrategy),
    (_kind("RBACDiff", "rbacdiffs", insight_models.RBACDiff), RBACDiffStrategy),
)
