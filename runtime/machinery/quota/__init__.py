"""Resource quota's accounting, pure: resource lists and what each kind's objects charge.

Contract: `resources` is Kubernetes' quota arithmetic on resource lists
(name -> `runtime.machinery.quantity.Quantity`) and its message format;
`evaluators` says, per kind, which quota names an object charges and how
much (`evaluator_for(rt)`), whether it falls in a quota's scopes, and the
requests a cpu or memory quota demands. No I/O: the ResourceQuota admission
(`runtime.server.admission`) and the quota controller
(`controllers.resourcequota`) both count with it.
"""

from runtime.machinery.quota.evaluators import (
    Evaluator, evaluator_for, is_best_effort, pod_limits, pod_requests, quota_matches, scope_selectors, usage_stats,
)
from runtime.machinery.quota.resources import (
    ResourceList, add, equal, is_zero, less_than_or_equal, mask, negative_names, parse_list, pretty, pretty_names,
    subtract, to_text,
)

__all__ = ["Evaluator", "evaluator_for", "is_best_effort", "pod_limits", "pod_requests", "quota_matches",
           "scope_selectors", "usage_stats", "ResourceList", "add", "equal", "is_zero", "less_than_or_equal", "mask",
           "negative_names", "parse_list", "pretty", "pretty_names", "subtract", "to_text"]
