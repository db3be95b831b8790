"""The ValidatingAdmissionPolicy admission step: kube's `validating.dispatcher` over the policies in force.

`ValidatingPolicies(context).validate(request)`, for every policy some
binding names (`source.PolicySource`), in policy-name order:
1. the policy's `matchConstraints` match the request (`invocation.criteria_match`),
   else it is skipped; a policy whose paramKind names no served kind is a
   configuration error (`failed to configure policy: failed to find resource
   referenced by paramKind: ...`);
2. for each binding whose `matchResources` match: its params
   (`params.collect_params`; an error is `failed to configure binding: ...`),
   and the policy evaluated once per param (`validator`), in a `Scope` of
   `object`, `oldObject`, `request`, `params`, `namespaceObject`,
   `authorizer`, `variables`;
3. each denying decision is acted on by the binding's `validationActions`:
   Deny collects it; Warn answers `Validation failed for
   ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>` as a
   Warning; Audit records the audit annotation
   `validation.policy.admission.k8s.io/validation_failure` (JSON: message,
   policy, binding, expressionIndex, validationActions);
4. the policy's audit annotations are published as `<policy>/<key>` (the
   distinct values of all bindings and params joined by `, `); an
   annotation's error denies (failurePolicy Fail).
Configuration errors are dropped under failurePolicy Ignore.

The first denial refuses the request: kube's `admission.NewForbidden` with
the message `ValidatingAdmissionPolicy '<p>' with binding '<b>' denied
request: <message>` (`ValidatingAdmissionPolicy '<p>' denied request: ...`
for a policy's own misconfiguration), the decision's reason (Invalid unless
the validation names Forbidden or RequestEntityTooLarge) and its code (422,
403, 413), the message again as a cause.

Metrics: `apiserver_validating_admission_policy_check_total` and its
duration, per decision as kube's dispatcher counts them: deny, warn, audit
for a denial per action; allow only for an error admitted under Ignore.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.machinery import errors
from runtime.models.catalog import VALIDATING_ADMISSION_POLICY, VALIDATING_ADMISSION_POLICY_BINDING
from runtime.server.admission.matching import RequestFacts
from runtime.server.admission.policies.expressions import Scope
from runtime.server.admission.policies.invocation import (
    ConfigError, PolicyContext, cel_inputs, criteria_match, namespace_object,
)
from runtime.server.admission.policies.params import ParamError, ParamKindError, collect_params, param_type
from runtime.server.admission.policies.source import Hook, PolicySource
from runtime.server.admission.policies.validator import CompiledValidating, Decision, compile_validating
from runtime.server.kinds import AdmissionRequest

__all__ = ["ValidatingPolicies", "VALIDATION_FAILURE_ANNOTATION", "policy_refusal"]

VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"
_MAX_AUDIT_VALUE = 10 * 1024
_BY_REASON: dict[str, type[errors.StatusError]] = {
    "Forbidden": errors.Forbidden, "Invalid": errors.Invalid, "RequestEntityTooLarge": errors.RequestEntityTooLarge,
    "Unauthorized": errors.Unauthorized,
}


def policy_refusal(request: AdmissionRequest, message: str, reason: str) -> errors.StatusError:
    """kube's `admission.NewForbidden(a, message)` given the decision's reason and its code."""
    rt = request.resource
    obj = request.obj if request.obj is not None else request.old or {}
    meta = obj.get("metadata") or {}
    name = request.name or meta.get("generateName") or ""
    resource = rt.group_resource + (f"/{request.subresource}" if request.subresource else "")
    text = f'{resource} "{name}" is forbidden: {message}' if name else f"{resource} is forbidden: {message}"
    cls = _BY_REASON.get(reason, errors.BadRequest)
    return cls(text, name=name, group=rt.group, kind=rt.plural, causes=[errors.Cause("", message)])


def _go_struct_json(value: Any) -> str:
    """Go's `json.Marshal` of structs: fields in declaration order, compact, `<>&` escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Denial:
    def __init__(self, policy: str, binding: str | None, decision: Decision) -> None:
        self.policy, self.binding, self.decision = policy, binding, decision

    @property
    def message(self) -> str:
        if self.binding is None:
            return f"ValidatingAdmissionPolicy '{self.policy}' denied request: {self.decision.message}"
        return (f"ValidatingAdmissionPolicy '{self.policy}' with binding '{self.binding}' denied request: "
                f"{self.decision.message}")


class ValidatingPolicies:
    """The ValidatingAdmissionPolicy plug-in (see the module doc)."""

    name = "ValidatingAdmissionPolicy"

    def __init__(self, context: PolicyContext) -> None:
        self.context = context
        self.source: PolicySource[CompiledValidating] = PolicySource(
            context, VALIDATING_ADMISSION_POLICY, VALIDATING_ADMISSION_POLICY_BINDING, compile_validating)

    async def validate(self, request: AdmissionRequest) -> None:
        hooks = self.source.hooks()
        if not hooks:
            return
        facts = RequestFacts.of(request)
        if facts.exempt:
            return
        denials: list[_Denial] = []
        for hook in hooks:
            await self._dispatch(hook, facts, request, denials)
        if denials:
            first = denials[0]
            raise policy_refusal(request, first.message, first.decision.reason or "Invalid")

    def _config_error(self, error: ConfigError, denials: list[_Denial]) -> None:
        policy = error.policy
        if ((policy.get("spec") or {}).get("failurePolicy") or "Fail") == "Ignore":
            return
        binding = None if error.binding is None else error.binding["metadata"]["name"]
        denials.append(_Denial(policy["metadata"]["name"], binding, Decision("deny", "error", error.text)))

    async def _dispatch(self, hook: Hook[CompiledValidating], facts: RequestFacts, request: AdmissionRequest,
                        denials: list[_Denial]) -> None:
        spec = hook.policy.get("spec") or {}
        try:
            match = await criteria_match(self.context, spec.get("matchConstraints") or {}, facts, request)
        except errors.StatusError as exc:
            return self._config_error(ConfigError(hook.policy, None, exc.message), denials)
        if match is None:
            return
        param_rt = None
        if spec.get("paramKind") is not None:
            try:
                param_rt = param_type(self.context.scheme, spec["paramKind"])
            except ParamKindError as exc:
                return self._config_error(ConfigError(hook.policy, None, str(exc)), denials)
        annotations: dict[str, list[str]] = {}
        namespace: dict[str, Any] | None | bool = False  # read once, when a binding first needs it
        for binding in hook.bindings:
            bspec = binding.get("spec") or {}
            try:
                if await criteria_match(self.context, bspec.get("matchResources"), facts, request) is None:
                    continue
                params = await collect_params(self.context, param_rt, bspec.get("paramRef"), facts.namespace)
            except errors.StatusError as exc:
                self._config_error(ConfigError(hook.policy, binding, exc.message), denials)
                continue
            except ParamError as exc:
                self._config_error(ConfigError(hook.policy, binding, str(exc)), denials)
                continue
            if namespace is False:
                namespace = await namespace_object(self.context, facts)
            for param in params:
                scope = Scope(cel_inputs(self.context, match, request, param, namespace or None),
                              hook.compiled.variables)
                result = hook.compiled.validate(scope)
                self._act(hook.name, binding, result.decisions, request, denials)
                for annotation in result.audit_annotations:
                    if annotation.action == "publish":
                        values = annotations.setdefault(annotation.key, [])
                        value = annotation.value[:_MAX_AUDIT_VALUE]
                        if value not in values:
                            values.append(value)
                    elif annotation.action == "error":
                        decision = Decision("deny", "error", annotation.error, seconds=annotation.seconds)
                        denials.append(_Denial(hook.name, binding["metadata"]["name"], decision))
                        self._observe(hook.name, binding, "deny", decision)
        for key, values in annotations.items():
            request.annotate(f"{hook.name}/{key}", ", ".join(values))

    def _act(self, policy: str, binding: dict[str, Any], decisions: list[Decision], request: AdmissionRequest,
             denials: list[_Denial]) -> None:
        name = binding["metadata"]["name"]
        actions = (binding.get("spec") or {}).get("validationActions") or []
        for index, decision in enumerate(decisions):
            if decision.action == "admit":
                if decision.evaluation == "error":
                    self._observe(policy, binding, "allow", decision)
                continue
            for action in actions:
                if action == "Deny":
                    denials.append(_Denial(policy, name, decision))
                    self._observe(policy, binding, "deny", decision)
                elif action == "Audit":
                    request.annotate(VALIDATION_FAILURE_ANNOTATION, _go_struct_json([{
                        "message": decision.message, "policy": (binding.get("spec") or {}).get("policyName", ""),
                        "binding": name, "expressionIndex": index, "validationActions": actions,
                    }]))
                    self._observe(policy, binding, "audit", decision)
                elif action == "Warn":
                    request.warn(f"Validation failed for ValidatingAdmissionPolicy '{policy}' with binding "
                                 f"'{name}': {decision.message}")
                    self._observe(policy, binding, "warn", decision)

    def _observe(self, policy: str, binding: dict[str, Any], action: str, decision: Decision) -> None:
        self.context.admission_metrics.policy_checked(policy, binding["metadata"]["name"], action=action,
                                                      seconds=decision.seconds, error_type=decision.error_type)
