"""The MutatingAdmissionPolicy admission step: kube's generic policy dispatcher and `mutating.dispatcher`.

`MutatingPolicies(context).mutate(request)`, for every policy some binding
names, in policy-name order, and each binding whose `matchResources` match,
once per param: the match conditions (a false one skips; an error is the
failure policy's), then each mutation in order (`mutator`) over
`request.obj`, the kind's defaults applied after each (kube defaults the
patched object). A DELETE has no object: nothing to mutate.

Reinvocation, as kube's `policyReinvokeContext` in `request.state`: a policy
whose mutations changed the object asks the chain to run the mutating phase
again (`state["reinvoke"]`); on that second pass only policies with
`reinvocationPolicy: IfNeeded` that ran before a later change run again
(the object changed after them: by a later policy, a webhook, or anything
since this step last ran).

Errors: a configuration error (paramKind, params) or a failed mutation or
match condition is kube's `PolicyError` (`policy '<p>' with binding '<b>'
denied request: <why>`); those of policies with failurePolicy Ignore are
dropped; the first refuses the request as kube's generic dispatcher does: a
403 whose message is that text alone, reason Invalid for a mutation's or a
condition's error (Forbidden otherwise), the text again as a cause.

Metrics: `apiserver_mutating_admission_policy_check_total` and its duration
(policy, policy_binding, error_type) per mutation evaluated, as Kubernetes 1.36.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from runtime.machinery import errors
from runtime.models.catalog import MUTATING_ADMISSION_POLICY, MUTATING_ADMISSION_POLICY_BINDING
from runtime.server.admission.matching import RequestFacts, cel_variables
from runtime.server.admission.policies.authorizer import AUTHORIZER_FUNCTIONS
from runtime.server.admission.policies.expressions import Scope
from runtime.server.admission.policies.invocation import PolicyContext, cel_inputs, criteria_match, namespace_object
from runtime.server.admission.policies.mutator import MUTATION_INPUTS, CompiledMutating, MutationError, compile_mutating
from runtime.server.admission.policies.params import ParamError, ParamKindError, collect_params, param_type
from runtime.server.admission.policies.source import Hook, PolicySource
from runtime.server.kinds import AdmissionRequest

__all__ = ["MutatingPolicies", "REINVOCATION_STATE"]

#: The key of this plug-in's reinvocation memory in `AdmissionRequest.state`.
REINVOCATION_STATE = "MutatingAdmissionPolicy"

Key = tuple[str, str, str]


class _Reinvocation:
    """kube's policyReinvokeContext: what ran, what may run again, the object as the step last left it."""

    def __init__(self) -> None:
        self.last_output: dict[str, Any] | None = None
        self.invoked: set[Key] = set()
        self.reinvoke: set[Key] = set()

    def require_reinvoking(self) -> None:
        self.reinvoke |= self.invoked
        self.invoked = set()


class _PolicyError(Exception):
    def __init__(self, policy: str, binding: str | None, message: str, reason: str = "") -> None:
        text = (f"policy '{policy}' with binding '{binding}' denied request: {message}" if binding is not None
                else f'policy "{policy}" denied request: {message}')
        super().__init__(text)
        self.text, self.reason = text, reason


class _InvalidForbidden(errors.StatusError):
    """kube's NewForbidden with its reason set to Invalid: code 403, reason Invalid (not filed as a reason)."""

    code = 403
    reason = "Invalid"
    details_always = True


def _refusal(request: AdmissionRequest, error: _PolicyError) -> errors.StatusError:
    """kube's generic dispatcher: NewForbidden's details, the policy error's text and reason, code 403."""
    rt = request.resource
    name = request.name or ((request.obj or {}).get("metadata") or {}).get("generateName") or ""
    cls = _InvalidForbidden if error.reason == "Invalid" else errors.Forbidden
    return cls(error.text, name=name, group=rt.group, kind=rt.plural, causes=[errors.Cause("", error.text)])


class MutatingPolicies:
    """The MutatingAdmissionPolicy plug-in (see the module doc)."""

    name = "MutatingAdmissionPolicy"

    def __init__(self, context: PolicyContext) -> None:
        self.context = context
        self.source: PolicySource[CompiledMutating] = PolicySource(
            context, MUTATING_ADMISSION_POLICY, MUTATING_ADMISSION_POLICY_BINDING, compile_mutating)

    async def mutate(self, request: AdmissionRequest) -> None:
        hooks = self.source.hooks()
        if not hooks or request.obj is None or request.operation == "delete":
            return
        facts = RequestFacts.of(request)
        if facts.exempt:
            return
        memory: _Reinvocation = request.state.setdefault(REINVOCATION_STATE, _Reinvocation())
        reinvoking = bool(request.state.get("reinvoking"))
        if reinvoking and memory.last_output != request.obj:
            memory.require_reinvoking()  # something after this step changed the object
        failures: list[_PolicyError] = []
        try:
            for hook in hooks:
                await self._dispatch(hook, facts, request, memory, reinvoking, failures)
        finally:
            memory.last_output = copy.deepcopy(request.obj)
        if failures:
            raise _refusal(request, failures[0])

    async def _dispatch(self, hook: Hook[CompiledMutating], facts: RequestFacts, request: AdmissionRequest,
                        memory: _Reinvocation, reinvoking: bool, failures: list[_PolicyError]) -> None:
        compiled, policy = hook.compiled, hook.name
        ignore = compiled.failure_policy == "Ignore"

        def fail(binding: str | None, message: str, reason: str = "") -> None:
            if not ignore:
                failures.append(_PolicyError(policy, binding, message, reason))

        spec = hook.policy.get("spec") or {}
        try:
            match = await criteria_match(self.context, spec.get("matchConstraints") or {}, facts, request)
        except errors.StatusError as exc:
            return fail(None, f"failed to configure policy: {exc.message}")
        if match is None:
            return
        param_rt = None
        if spec.get("paramKind") is not None:
            try:
                param_rt = param_type(self.context.scheme, spec["paramKind"])
            except ParamKindError as exc:
                return fail(None, f"failed to configure policy: {exc}")
        for binding in hook.bindings:
            name = binding["metadata"]["name"]
            bspec = binding.get("spec") or {}
            try:
                if await criteria_match(self.context, bspec.get("matchResources"), facts, request) is None:
                    continue
                params = await collect_params(self.context, param_rt, bspec.get("paramRef"), facts.namespace)
            except errors.StatusError as exc:
                fail(name, f"failed to configure binding: {exc.message}")
                continue
            except ParamError as exc:
                fail(name, f"failed to configure binding: {exc}")
                continue
            namespace = await namespace_object(self.context, facts)
            for param in params:
                key = (policy, name, _param_key(param))
                if reinvoking and key not in memory.reinvoke:
                    continue
                scope = Scope({**cel_inputs(self.context, match, request, param, namespace), **MUTATION_INPUTS},
                              compiled.variables)
                if compiled.match_conditions:
                    matched = compiled.match_conditions.evaluate(scope.values, AUTHORIZER_FUNCTIONS)
                    if matched.error:
                        fail(name, matched.error, "Invalid")
                        continue
                    if not matched.matches:
                        continue
                before = request.obj
                for index in range(len(compiled.mutations)):
                    started = time.perf_counter()
                    try:
                        patched = compiled.mutation(index, scope, request.obj, request.resource.strategy.merge_schema)
                    except MutationError as exc:
                        self._observe(policy, name, started, exc.error_type)
                        fail(name, str(exc), "Invalid")
                        continue
                    self._observe(policy, name, started, "no_error")
                    if patched is not request.obj:
                        request.resource.strategy.default(patched)
                        request.obj = patched
                        # later mutations and policies see the patched object
                        scope.values["object"] = cel_variables(match, request)["object"]
                if request.obj != before:
                    memory.require_reinvoking()
                    request.state["reinvoke"] = True
                if compiled.reinvocation_policy == "IfNeeded":
                    memory.invoked.add(key)

    def _observe(self, policy: str, binding: str, started: float, error_type: str) -> None:
        self.context.admission_metrics.policy_mutated(policy, binding, seconds=time.perf_counter() - started,
                                                      error_type=error_type)


def _param_key(param: dict[str, Any] | None) -> str:
    if param is None:
        return ""
    meta = param.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
