"""CEL admission policies (issue 39): ValidatingAdmissionPolicy and MutatingAdmissionPolicy with their bindings,
as kube-apiserver's `admission/plugin/policy/{validating,mutating,generic}` plug-ins.

Contract: `ValidatingPolicies(context)` is a validating step and `MutatingPolicies(context)` a mutating one
(`runtime.server.admission.chain`), over the registry (`invocation.PolicyContext`: the admission context, its
authorizer `decide` and `admission_metrics`); `runtime.server.admission.steps` lists them first of their phase,
as kube orders its plug-ins. They read the policies, bindings, params and namespaces from the watch cache,
compile each policy once per resourceVersion (`source`), and refuse in kube's words.

Modules: `source` (policies in force, compiled once), `invocation` (matching a policy or binding, the CEL inputs),
`params` (paramKind, paramRef), `expressions` (compiled expressions, the evaluation scope with lazy `variables`
and cost budgets), `authorizer` (the `authorizer` CEL library), `values` (JSON to CEL and back, `Object{}` and
`JSONPatch{}` literals), `validator` and `validating` (validating policies), `mutator` and `mutating`
(mutating policies).

Caveats: expressions are not type-checked (cel-python has no checker): a wrong field or type shows when
evaluated, as an expression error under the failure policy, where kube refuses the policy when written; of
kube's `status.typeChecking` only undefined fields are reported (`runtime.machinery.celtypecheck`).
`matchConditions` are evaluated by the shared `runtime.server.admission.matching.MatchConditions`, with the `authorizer` variable and its library.
"""

from runtime.server.admission.policies.mutating import MutatingPolicies
from runtime.server.admission.policies.validating import ValidatingPolicies

__all__ = ["ValidatingPolicies", "MutatingPolicies"]
