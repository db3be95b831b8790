"""`admissionregistration/v1` `ValidatingAdmissionPolicy` and `ValidatingAdmissionPolicyBinding` (Kubernetes'
`pkg/registry/admissionregistration/validatingadmissionpolicy{,binding}`), cluster-scoped.

- Defaults (`SetDefaults_ValidatingAdmissionPolicySpec`, `..MatchResources`):
  failurePolicy Fail; matchConstraints' and a binding's matchResources'
  matchPolicy Equivalent, selectors `{}`, rules' scope `*`.
- Policy (`ValidateValidatingAdmissionPolicy`): the name a DNS subdomain;
  failurePolicy; paramKind; matchConstraints required with a resource rule;
  matchConditions; variables; validations or auditAnnotations, one at least:
  each validation's expression required and compiling, its messageExpression
  non-blank if set and compiling, its message non-blank if set and on one
  line, its reason Forbidden, Invalid or RequestEntityTooLarge; at most 20
  auditAnnotations, keys unique and `<policy name>/<key>` a qualified name,
  valueExpressions required, at most 5 KiB, compiling.
- Update: the same; unchanged matchConditions (and paramKind) are not checked again.
- Status (`status` subresource; `ValidateValidatingAdmissionPolicyStatus`):
  typeChecking's warnings need a warning and a fieldRef; conditions are
  metav1 Conditions (`condition_errors`). A create starts without a status; a
  write of the policy keeps the stored one.
- Binding (`ValidateValidatingAdmissionPolicyBinding`): policyName,
  paramRef (`bindings`), matchResources (kube names its path
  `spec.matchResouces`, a typo kept: clients see it), validationActions
  required, unique, Deny, Warn or Audit, not Deny with Warn.
- Generation 1 on create, counted on spec changes; a PUT of a missing object is 404.
- The writer's read access to a paramKind (a binding: to what its paramRef names) is authorized (`paramauth`).
- `kubectl get`: NAME VALIDATIONS PARAMKIND AGE; a binding NAME POLICYNAME PARAMREF AGE.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.machinery.validation.fielderrors import duplicate, invalid, not_supported, required, too_long
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.machinery.validation.names import qualified_name_errors
from runtime.server.kinds.admissionregistration.bindings import BINDING_COLUMNS, param_ref_errors, policy_name_errors
from runtime.server.kinds.admissionregistration.rules import (
    cel_errors, default_match_resources, failure_policy_errors, go_slice, match_conditions_errors,
    match_constraints_errors, match_resources_errors, param_kind_errors, param_kind_text, qualified_name_errors_at,
    variables_errors,
)
from runtime.server.kinds.admissionregistration.paramauth import authorize_param_kind, authorize_param_ref
from runtime.server.kinds.base import AdmissionRequest, PolicyContext, Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["PolicyKind", "policy_columns", "ValidatingAdmissionPolicyStrategy",
           "ValidatingAdmissionPolicyBindingStrategy", "VALIDATION_ACTIONS", "condition_errors"]

#: A binding's validation actions, sorted as kube lists them.
VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"]
_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
_MAX_AUDIT_ANNOTATIONS = 20
_MAX_VALUE_EXPRESSION = 5 * 1024
_NEWLINES = re.compile(r"[\n\r]+")
_CONDITION_STATUSES = ["False", "True", "Unknown"]
_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(_REASON_FMT)
_REASON_MSG = ("a condition reason must start with alphabetic character, optionally followed by a string of "
               "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. "
               "'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used "
               f"for validation is '{_REASON_FMT}')")
_AT_LEAST_ONE = "validations or auditAnnotations must contain at least one item"


def _validation_errors(validation: dict[str, Any], path: str) -> list[FieldError]:
    """`validateValidation`."""
    expression = validation.get("expression") or ""
    errs = cel_errors(expression, f"{path}.expression") if expression.strip() else [
        required(f"{path}.expression", "expression is not specified")]
    message_expression = validation.get("messageExpression") or ""
    if message_expression and not message_expression.strip():
        errs.append(invalid(f"{path}.messageExpression", message_expression, "must be non-empty if specified"))
    elif message_expression.strip():
        errs += cel_errors(message_expression, f"{path}.messageExpression")
    message = validation.get("message") or ""
    if message and not message.strip():
        errs.append(invalid(f"{path}.message", message, "message must be non-empty if specified"))
    elif _NEWLINES.search(message.strip()):
        errs.append(invalid(f"{path}.message", message, "message must not contain line breaks"))
    reason = validation.get("reason")
    if reason is not None and reason not in _REASONS:
        errs.append(not_supported(f"{path}.reason", reason, _REASONS))
    return errs


def _annotations_value(annotations: list[dict[str, Any]]) -> GoText:
    """Go's `%#v` of `[]admissionregistration.AuditAnnotation`."""
    items = ", ".join(f"admissionregistration.AuditAnnotation{{Key:{go_quote(a.get('key') or '')}, "
                      f"ValueExpression:{go_quote(a.get('valueExpression') or '')}}}" for a in annotations)
    return GoText(f"[]admissionregistration.AuditAnnotation{{{items}}}")


def _audit_annotations_errors(annotations: list[dict[str, Any]], policy_name: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(annotations) > _MAX_AUDIT_ANNOTATIONS:
        errs.append(invalid(path, _annotations_value(annotations),
                            f"must not have more than {_MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
    keys: set[str] = set()
    for i, annotation in enumerate(annotations):
        at, key = f"{path}[{i}]", annotation.get("key") or ""
        if policy_name:
            errs += qualified_name_errors_at(f"{policy_name}/{key}", f"{at}.key")
        else:
            errs.append(invalid(f"{at}.key", key, "requires metadata.name be non-empty"))
        value = annotation.get("valueExpression") or ""
        if not value.strip():
            errs.append(required(f"{at}.valueExpression", "valueExpression is not specified"))
        elif len(value.strip()) > _MAX_VALUE_EXPRESSION:
            errs.append(required(f"{at}.valueExpression", f"must not exceed {_MAX_VALUE_EXPRESSION} bytes in length"))
        else:
            errs += cel_errors(value.strip(), f"{at}.valueExpression")
        if key in keys:
            errs.append(duplicate(f"{at}.key", key))
        keys.add(key)
    return errs


def condition_errors(conditions: list[dict[str, Any]], path: str) -> list[FieldError]:
    """apimachinery's `ValidateConditions`: types unique label names; status True, False or Unknown; a
    non-negative observedGeneration; a lastTransitionTime; a reason (a CamelCase word, at most 1024); a message of
    at most 32768."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        at, kind = f"{path}[{i}]", condition.get("type") or ""
        if kind in seen:
            errs.append(duplicate(f"{at}.type", kind))
        seen.add(kind)
        errs += [invalid(f"{at}.type", kind, msg) for msg in qualified_name_errors(kind)]
        status = condition.get("status") or ""
        if status not in _CONDITION_STATUSES:
            errs.append(not_supported(f"{at}.status", status, _CONDITION_STATUSES))
        if int(condition.get("observedGeneration") or 0) < 0:
            errs.append(invalid(f"{at}.observedGeneration", condition["observedGeneration"],
                                "must be greater than or equal to zero"))
        if not condition.get("lastTransitionTime"):
            errs.append(required(f"{at}.lastTransitionTime", "must be set"))
        reason = condition.get("reason") or ""
        if not reason:
            errs.append(required(f"{at}.reason", "must be set"))
        else:
            if not _REASON_RE.fullmatch(reason):
                errs.append(invalid(f"{at}.reason", reason, _REASON_MSG))
            if len(reason) > 1024:
                errs.append(too_long(f"{at}.reason", 1024))
        if len(condition.get("message") or "") > 32768:
            errs.append(too_long(f"{at}.message", 32768))
    return errs


def _status_errors(status: dict[str, Any]) -> list[FieldError]:
    """`validateValidatingAdmissionPolicyStatus`."""
    errs: list[FieldError] = []
    warnings = (status.get("typeChecking") or {}).get("expressionWarnings") or []
    for i, warning in enumerate(warnings):
        at = f"status.typeChecking.expressionWarnings[{i}]"
        if not warning.get("warning"):
            errs.append(required(f"{at}.warning"))
        if not (warning.get("fieldRef") or "").strip():
            errs.append(required(f"{at}.fieldRef"))
    return errs + condition_errors(status.get("conditions") or [], "status.conditions")


def policy_columns(member: str, title: str, description: str) -> Columns:
    """A policy kind's columns (kube's printers): NAME, the count of `spec.<member>` as `title`, PARAMKIND, AGE."""
    def cells(obj: dict[str, Any]) -> list[Any]:
        meta, spec = obj["metadata"], obj.get("spec") or {}
        return [meta.get("name", ""), len(spec.get(member) or []), param_kind_text(spec),
                age(meta.get("creationTimestamp"))]

    return Columns((
        NAME_COLUMN,
        column(title, description, type_="integer"),
        column("ParamKind", "ParamKind specifies the kind of resources used to parameterize this policy"),
        AGE_COLUMN,
    ), cells)


class PolicyKind(Strategy):
    """What the admission policy kinds share: cluster-scoped, DNS-subdomain names, generation counted, and
    the writer's read access to the params they name authorized (`paramauth`) once the object is well-formed.
    A binding names the kind of its policy in `policy_kind`; a policy has none."""

    name_rule = "dns-subdomain"
    kube_finalizers = False
    allow_create_on_update = False
    counts_generation = True
    policy_kind = ""

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        named = (request.obj.get("spec") or {}).get("paramRef" if self.policy_kind else "paramKind")
        if request.operation == "delete" or request.subresource or not named:
            return  # nothing to authorize: no validation run twice for it
        old = request.old
        if self.validate(request.obj) if old is None else self.validate_update(request.obj, old):
            return  # kube authorizes only a valid object: validation answers this one
        if self.policy_kind:
            await authorize_param_ref(self.scheme, policy, request, self.rt.group_kind, self.policy_kind)
        else:
            authorize_param_kind(self.scheme, policy, request, self.rt.group_kind)


class ValidatingAdmissionPolicyStrategy(PolicyKind):
    """See the module doc."""

    subresources = {"status": StatusSubresource()}
    columns = policy_columns("validations", "Validations", "Validations indicates the number of validation rules "
                                                           "defined in this configuration")

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})  # a Go struct, never nil: its defaults always apply
        if spec.get("failurePolicy") is None:
            spec["failurePolicy"] = "Fail"
        if isinstance(spec.get("matchConstraints"), dict):
            default_match_resources(spec["matchConstraints"])

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        obj.pop("status", None)  # PrepareForCreate: the status is the controller's

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return self._spec_errors(obj, check_match_conditions=True) + _status_errors(obj.get("status") or {})

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        unchanged = spec.get("paramKind") == old_spec.get("paramKind") and \
            spec.get("matchConditions") == old_spec.get("matchConditions")
        errs = validate_object_meta(new.get("metadata") or {}, namespaced=False, name_rule=self.name_rule)
        return errs + self._spec_errors(new, not unchanged) + _status_errors(new.get("status") or {})

    def _spec_errors(self, obj: dict[str, Any], check_match_conditions: bool) -> list[FieldError]:
        """`validateValidatingAdmissionPolicySpec`."""
        spec = obj.get("spec") or {}
        errs = failure_policy_errors(spec.get("failurePolicy"), "spec.failurePolicy", required_=True)
        if spec.get("paramKind") is not None:
            errs += param_kind_errors(spec["paramKind"], "spec.paramKind")
        errs += match_constraints_errors(spec.get("matchConstraints"), "spec.matchConstraints")
        if check_match_conditions:
            errs += match_conditions_errors(spec.get("matchConditions") or [], "spec.matchConditions")
        errs += variables_errors(spec.get("variables") or [], "spec.variables")
        validations, annotations = spec.get("validations") or [], spec.get("auditAnnotations") or []
        if not validations and not annotations:
            return errs + [required("spec.validations", _AT_LEAST_ONE), required("spec.auditAnnotations",
                                                                                 _AT_LEAST_ONE)]
        for i, validation in enumerate(validations):
            errs += _validation_errors(validation, f"spec.validations[{i}]")
        return errs + _audit_annotations_errors(annotations, obj["metadata"].get("name") or "",
                                                "spec.auditAnnotations")


def _validation_actions_errors(actions: list[str], path: str) -> list[FieldError]:
    """`validateValidationActions`."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            errs.append(not_supported(f"{path}[{i}]", action, VALIDATION_ACTIONS))
        if action in seen:
            errs.append(duplicate(f"{path}[{i}]", action))
        seen.add(action)
    if {"Deny", "Warn"} <= seen:
        errs.append(invalid(path, go_slice("admissionregistration.ValidationAction", actions),
                            "must not contain both Deny and Warn (repeating the same validation failure "
                            "information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(required(path, "at least one validation action is required"))
    return errs


class ValidatingAdmissionPolicyBindingStrategy(PolicyKind):
    """See the module doc."""

    columns = BINDING_COLUMNS
    policy_kind = "ValidatingAdmissionPolicy"

    def default(self, obj: dict[str, Any]) -> None:
        resources = (obj.get("spec") or {}).get("matchResources")
        if isinstance(resources, dict):
            default_match_resources(resources)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = policy_name_errors(spec.get("policyName") or "", "spec.policyName")
        errs += param_ref_errors(spec.get("paramRef"), "spec.paramRef")
        errs += match_resources_errors(spec.get("matchResources"), "spec.matchResouces")  # sic, as kube's
        return errs + _validation_actions_errors(spec.get("validationActions") or [], "spec.validationActions")
