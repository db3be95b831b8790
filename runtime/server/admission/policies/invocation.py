"""What validating and mutating policies share per request: matching a policy or binding, and the CEL inputs.

- `await criteria_match(context, criteria, facts, request)`: kube's
  `matching.Matcher.Matches` over a policy's `matchConstraints` or a
  binding's `matchResources` (None: a binding without one matches
  everything): namespace and object selectors, `excludeResourceRules`, then
  `resourceRules` (none: the request's own resource), `matchPolicy`
  Equivalent through `runtime.server.admission.matching.equivalent`. Returns
  the `Match` (the version the policy sees) or None; a selector error (a
  missing namespace, a selector that does not parse) is raised as its
  StatusError only when the rules match, as kube's.
- `await namespace_object(context, facts)`: CEL's `namespaceObject`, kube's
  `CreateNamespaceObject` (the namespace's spec, status and chosen metadata;
  None for a cluster-scoped request and for a Namespace itself).
- `cel_inputs(context, match, request, param, namespace)`: `object`,
  `oldObject`, `request`, `params`, `namespaceObject`, `authorizer` as CEL
  values (`authorizer.requestResource` is the request's own resource).
- `ConfigError(policy, binding, message)`: a misconfigured policy or binding,
  kube's `failed to configure policy: ...` / `failed to configure binding: ...`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol

from runtime.machinery import errors
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.matching import (
    Match, RequestFacts, cel_variables, equivalent, namespace_selector_matches, object_selector_matches,
)
from runtime.server.admission.metrics import AdmissionMetrics
from runtime.server.admission.policies.authorizer import CELAuthorizer
from runtime.server.admission.policies.values import to_cel
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac import Decision
from runtime.server.rbac.attributes import Attributes

__all__ = ["PolicyContext", "ConfigError", "criteria_match", "namespace_object", "cel_inputs"]

_NAMESPACE_META = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")


class PolicyContext(AdmissionContext, Protocol):
    """The registry as policies use it: the admission context, its authorizer and metrics."""

    admission_metrics: AdmissionMetrics

    def decide(self, attrs: Attributes) -> Decision: ...


@dataclass(frozen=True)
class ConfigError:
    """A policy (binding None) or binding that cannot be evaluated, in kube's words."""

    policy: dict[str, Any]
    binding: dict[str, Any] | None
    message: str

    @property
    def text(self) -> str:
        what = "policy" if self.binding is None else "binding"
        return f"failed to configure {what}: {self.message}"


async def criteria_match(context: AdmissionContext, criteria: Mapping[str, Any] | None, facts: RequestFacts,
                         request: AdmissionRequest) -> Match | None:
    """The version the criteria match the request in, or None (see the module doc). Raises StatusError."""
    own = Match(facts, facts.rt, facts.gvr, facts.kind)
    if criteria is None:
        return own
    selector_error: errors.StatusError | None = None
    try:
        if not await namespace_selector_matches(criteria.get("namespaceSelector"), facts, request, context):
            return None
    except errors.StatusError as exc:
        selector_error = exc
    try:
        if not object_selector_matches(criteria.get("objectSelector"), request):
            return None
    except errors.StatusError as exc:
        selector_error = selector_error or exc
    policy = criteria.get("matchPolicy")
    if equivalent(facts, criteria.get("excludeResourceRules") or [], context, policy) is not None:
        return None
    rules = criteria.get("resourceRules") or []
    match = equivalent(facts, rules, context, policy) if rules else own
    if match is None:
        return None
    if selector_error is not None:
        raise selector_error
    return match


async def namespace_object(context: AdmissionContext, facts: RequestFacts) -> dict[str, Any] | None:
    """CEL's `namespaceObject` for the request (see the module doc)."""
    if not facts.namespace or facts.is_namespace:
        return None
    ns_rt = context.scheme.namespace_type
    key = ns_rt.storage_key(None, facts.namespace)
    found = context.kind_cache(ns_rt).get(key)
    if found is None:
        found = await context.read_current(ns_rt, key, facts.namespace)
    if found is None:
        raise errors.NotFound(f'namespaces "{facts.namespace}" not found', name=facts.namespace, kind="namespaces")
    obj = found.obj
    meta = obj.get("metadata") or {}
    out: dict[str, Any] = {"metadata": {k: meta[k] for k in _NAMESPACE_META if k in meta}}
    for part in ("spec", "status"):
        if part in obj:
            out[part] = obj[part]
    return out


def cel_inputs(context: PolicyContext, match: Match, request: AdmissionRequest, param: dict[str, Any] | None,
               namespace: dict[str, Any] | None) -> dict[str, Any]:
    """The CEL variables of one (policy, binding, param) evaluation, but `variables`."""
    facts = match.facts
    authorizer = CELAuthorizer(request.user, context.decide, group=facts.group, resource=facts.resource,
                               subresource=facts.subresource, namespace=facts.namespace, name=facts.name)
    return {**cel_variables(match, request), "params": to_cel(param), "namespaceObject": to_cel(namespace),
            "authorizer": authorizer}
