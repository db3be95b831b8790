"""`admissionregistration/v1` `MutatingAdmissionPolicy` and `MutatingAdmissionPolicyBinding` (Kubernetes v1.36's
`pkg/registry/admissionregistration/mutatingadmissionpolicy{,binding}`), cluster-scoped.

- Defaults (`SetDefaults_MutatingAdmissionPolicySpec`, `..MatchResources`):
  failurePolicy Fail; matchConstraints' and a binding's matchResources'
  matchPolicy Equivalent, selectors `{}`, rules' scope `*`. reinvocationPolicy
  is not defaulted: it is required.
- Policy (`ValidateMutatingAdmissionPolicy`): the name a DNS subdomain;
  failurePolicy; paramKind; matchConstraints required with a resource rule,
  whose operations exclude DELETE ("supported values" at
  `spec.matchConstraints.resourceRules.operations`, no index, as kube's);
  matchConditions; variables; mutations, one at least ("mutations must
  contain at least one item"): patchType required, ApplyConfiguration or
  JSONPatch, with its own member set and the other's not ("must be specified
  when patchType is ..." / "must not be specified when patchType is ..."),
  its expression required and compiling; reinvocationPolicy required, Never
  or IfNeeded.
- Binding (`ValidateMutatingAdmissionPolicyBinding`): policyName, paramRef
  (`bindings`), matchResources with the same operations rule.
- No status; generation 1 on create, counted on spec changes; a PUT of a missing object is 404.
- `kubectl get`: NAME MUTATIONS PARAMKIND AGE; a binding NAME POLICYNAME PARAMREF AGE.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, not_supported, required
from runtime.server.kinds.admissionregistration.bindings import param_ref_errors, policy_name_errors
from runtime.server.kinds.admissionregistration.rules import (
    cel_errors, default_match_resources, failure_policy_errors, match_conditions_errors, match_constraints_errors,
    match_resources_errors, operations_errors, param_kind_errors, variables_errors,
)
from runtime.server.kinds.admissionregistration.validatingpolicy import (
    PolicyKind, ValidatingAdmissionPolicyBindingStrategy, policy_columns)

__all__ = ["MutatingAdmissionPolicyStrategy", "MutatingAdmissionPolicyBindingStrategy", "PATCH_TYPES"]

#: A mutation's patch types, sorted as kube lists them.
PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"]
_MEMBERS = {"ApplyConfiguration": "applyConfiguration", "JSONPatch": "jsonPatch"}
_REINVOCATION_POLICIES = ["IfNeeded", "Never"]


def _mutation_errors(mutation: dict[str, Any], path: str) -> list[FieldError]:
    """`validateMutation`: the patchType union."""
    patch_type = mutation.get("patchType")
    if not patch_type:
        return [required(f"{path}.patchType")]
    if patch_type not in PATCH_TYPES:
        return [not_supported(f"{path}.patchType", patch_type, PATCH_TYPES)]
    member = _MEMBERS[patch_type]
    errs: list[FieldError] = []
    chosen = mutation.get(member)
    if chosen is None:
        errs.append(required(f"{path}.{member}", f"must be specified when patchType is {patch_type}"))
    else:
        expression = chosen.get("expression") or ""
        at = f"{path}.{member}.expression"
        errs += cel_errors(expression, at) if expression.strip() else [required(at)]
    other = next(m for m in _MEMBERS.values() if m != member)
    if mutation.get(other) is not None:
        errs.append(invalid(f"{path}.{other}", "{" + other + "}", f"must not be specified when patchType is "
                                                                 f"{patch_type}"))
    return errs


class MutatingAdmissionPolicyStrategy(PolicyKind):
    """See the module doc."""

    # kube's own words ("Mutation indicates"), its typo included.
    columns = policy_columns("mutations", "Mutations", "Mutation indicates the number of mutations rules defined in "
                                                       "this configuration")

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})  # a Go struct, never nil: its defaults always apply
        if spec.get("failurePolicy") is None:
            spec["failurePolicy"] = "Fail"
        if isinstance(spec.get("matchConstraints"), dict):
            default_match_resources(spec["matchConstraints"])

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        """`validateMutatingAdmissionPolicySpec`."""
        spec = obj.get("spec") or {}
        errs = failure_policy_errors(spec.get("failurePolicy"), "spec.failurePolicy", required_=True)
        if spec.get("paramKind") is not None:
            errs += param_kind_errors(spec["paramKind"], "spec.paramKind")
        constraints = spec.get("matchConstraints")
        errs += match_constraints_errors(constraints, "spec.matchConstraints")
        if constraints is not None:
            errs += operations_errors(constraints, "spec.matchConstraints.resourceRules.operations")
        errs += match_conditions_errors(spec.get("matchConditions") or [], "spec.matchConditions")
        errs += variables_errors(spec.get("variables") or [], "spec.variables")
        mutations = spec.get("mutations") or []
        if not mutations:
            errs.append(required("spec.mutations", "mutations must contain at least one item"))
        for i, mutation in enumerate(mutations):
            errs += _mutation_errors(mutation, f"spec.mutations[{i}]")
        policy = spec.get("reinvocationPolicy")
        if not policy:
            errs.append(required("spec.reinvocationPolicy"))
        elif policy not in _REINVOCATION_POLICIES:
            errs.append(not_supported("spec.reinvocationPolicy", policy, _REINVOCATION_POLICIES))
        return errs


class MutatingAdmissionPolicyBindingStrategy(ValidatingAdmissionPolicyBindingStrategy):
    """See the module doc: a ValidatingAdmissionPolicyBinding's defaults and columns, without validation actions."""

    policy_kind = "MutatingAdmissionPolicy"

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = policy_name_errors(spec.get("policyName") or "", "spec.policyName")
        errs += param_ref_errors(spec.get("paramRef"), "spec.paramRef")
        resources = spec.get("matchResources")
        errs += match_resources_errors(resources, "spec.matchResources")
        if resources is not None:
            errs += operations_errors(resources, "spec.matchResources.resourceRules.operations")
        return errs
