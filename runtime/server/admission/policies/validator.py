"""A ValidatingAdmissionPolicy compiled, and evaluated once per (binding, param): kube's `validating.validator`.

`compile_validating(policy)` -> `CompiledValidating`: the validations, their
message expressions, the audit annotations, the variables and the match
conditions, each compiled once (`expressions.compile_cel`).

`CompiledValidating.validate(scope)` -> `ValidateResult` (kube's
`validator.Validate`):
- match conditions first (`runtime.server.admission.matching.MatchConditions`):
  one false skips the policy (no decisions); an error under failurePolicy
  Fail is one decision;
- each validation: true admits; false (or any non-true value) denies with
  the validation's `reason` (Invalid by default) and a message: the
  `messageExpression`'s string (trimmed; one over 5 KiB, with a line break,
  blank, non-string or failing falls back), else `message`, else `failed
  expression: <expression>`; an error is decided by the failure policy
  (Fail: deny with the error's words; Ignore: admit). Validations share one
  cost budget, message expressions the rest of it; the validations' budget
  spent is one decision `validation failed due to running out of cost
  budget, ...`, the messages' budget spent makes every decision not already
  an error `failed messageExpression: ...`;
- audit annotations (their own budget): a string value is published
  (trimmed; blank: excluded), null is excluded, any other type is an error
  (`valueExpression '<e>' resulted in unsupported return type: <type>.
  Return type must be either string or null.`); errors deny under Fail.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from celpy import celtypes

from runtime.server.admission.matching import MatchConditions
from runtime.server.admission.policies.authorizer import AUTHORIZER_FUNCTIONS
from runtime.server.admission.policies.expressions import (
    Budget, Expression, ExpressionError, OutOfBudget, Scope, compile_cel,
)

__all__ = ["Decision", "AuditAnnotation", "ValidateResult", "CompiledValidating", "compile_validating",
           "cel_type_name", "MAX_MESSAGE_BYTES"]

#: kube's `MaxEvaluatedMessageExpressionSizeBytes`.
MAX_MESSAGE_BYTES = 5 * 1024


@dataclass(frozen=True)
class Decision:
    """One validation's outcome: `action` admit|deny, `evaluation` admit|deny|error, kube's message."""

    action: str
    evaluation: str
    message: str = ""
    reason: str = ""
    seconds: float = 0.0

    @property
    def error_type(self) -> str:
        """kube's metric `error_type` of the decision (`validating.ErrorType`)."""
        if self.evaluation == "admit":
            return "no_error"
        if self.message.startswith("compilation"):
            return "compile_error"
        if self.message.startswith("validation failed due to running out of cost budget"):
            return "out_of_budget"
        return "internal_error"


@dataclass(frozen=True)
class AuditAnnotation:
    """An audit annotation's outcome: `action` publish|exclude|error."""

    key: str
    action: str
    value: str = ""
    error: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class ValidateResult:
    decisions: list[Decision] = field(default_factory=list)
    audit_annotations: list[AuditAnnotation] = field(default_factory=list)


def cel_type_name(value: Any) -> str:
    """The CEL type name of a value (cel-go's words in messages)."""
    for cel_type, name in ((celtypes.BoolType, "bool"), (celtypes.UintType, "uint"), (celtypes.IntType, "int"),
                           (celtypes.DoubleType, "double"), (celtypes.StringType, "string"),
                           (celtypes.BytesType, "bytes"), (celtypes.ListType, "list"), (celtypes.MapType, "map")):
        if isinstance(value, cel_type):
            return name
    return "null_type" if value is None else type(value).__name__


@dataclass(frozen=True)
class _Validation:
    expression: Expression
    message_expression: Expression | None
    message: str
    reason: str


@dataclass(frozen=True)
class CompiledValidating:
    """A policy's expressions, compiled (see the module doc)."""

    failure_policy: str
    validations: tuple[_Validation, ...]
    audit_annotations: tuple[tuple[str, Expression], ...]
    variables: dict[str, Expression]
    match_conditions: MatchConditions | None

    def _on_error(self, message: str, seconds: float = 0.0) -> Decision:
        action = "admit" if self.failure_policy == "Ignore" else "deny"
        return Decision(action, "error", message, seconds=seconds)

    def validate(self, scope: Scope) -> ValidateResult:
        """The decisions and audit annotations of one evaluation in `scope`."""
        if self.match_conditions:
            matched = self.match_conditions.evaluate(scope.values, AUTHORIZER_FUNCTIONS)
            if matched.error:
                return ValidateResult([self._on_error(matched.error)])
            if not matched.matches:
                return ValidateResult()
        budget = Budget(scope.limits)
        outcomes: list[tuple[_Validation, Any, str, float]] = []
        for validation in self.validations:
            started = time.perf_counter()
            try:
                value, error = scope.run(validation.expression, budget), ""
            except OutOfBudget as exc:
                return ValidateResult([self._on_error(str(exc))])
            except ExpressionError as exc:
                value, error = None, str(exc)
            outcomes.append((validation, value, error, time.perf_counter() - started))
        decisions = [self._decide(scope, budget, *outcome) for outcome in outcomes]
        if budget.remaining < 0:
            decisions = [d if d.evaluation == "error" else self._on_error(
                "failed messageExpression: validation failed due to running out of cost budget, no further "
                "validation rules will be run", d.seconds) for d in decisions]
        return ValidateResult(decisions, self._annotations(scope))

    def _decide(self, scope: Scope, budget: Budget, validation: _Validation, value: Any, error: str,
                seconds: float) -> Decision:
        if error:
            return self._on_error(error, seconds)
        if isinstance(value, celtypes.BoolType) and value:
            return Decision("admit", "admit", seconds=seconds)
        message = ""
        if validation.message_expression is not None:
            try:
                result = scope.run(validation.message_expression, budget)
            except OutOfBudget:
                budget.remaining = -1  # marks the messages' budget spent (see validate)
            except ExpressionError:
                result = None  # kube logs it and falls back
            else:
                if isinstance(result, str):
                    text = str(result).strip()
                    if len(text.encode()) <= MAX_MESSAGE_BYTES and "\n" not in text:
                        message = text
        if not message:
            message = validation.message.strip()
        if not message:
            message = f"failed expression: {validation.expression.source.strip()}"
        return Decision("deny", "deny", message, validation.reason or "Invalid", seconds)

    def _annotations(self, scope: Scope) -> list[AuditAnnotation]:
        budget = Budget(scope.limits)
        failed = "exclude" if self.failure_policy == "Ignore" else "error"
        out = []
        for key, expression in self.audit_annotations:
            started = time.perf_counter()
            try:
                value = scope.run(expression, budget)
            except (ExpressionError, OutOfBudget) as exc:
                out.append(AuditAnnotation(key, failed, error=str(exc), seconds=time.perf_counter() - started))
                continue
            seconds = time.perf_counter() - started
            if value is None:
                out.append(AuditAnnotation(key, "exclude", seconds=seconds))
            elif isinstance(value, str):
                text = str(value).strip()
                out.append(AuditAnnotation(key, "publish" if text else "exclude", text, seconds=seconds))
            else:
                out.append(AuditAnnotation(key, "error", error=(
                    f"valueExpression '{expression.source}' resulted in unsupported return type: "
                    f"{cel_type_name(value)}. Return type must be either string or null."), seconds=seconds))
        return out


def compile_validating(policy: dict[str, Any]) -> CompiledValidating:
    """Compile a ValidatingAdmissionPolicy's expressions (once per version: `source.PolicySource`)."""
    spec = policy.get("spec") or {}
    failure_policy = spec.get("failurePolicy") or "Fail"
    validations = tuple(_Validation(
        compile_cel(v.get("expression") or ""),
        compile_cel(v["messageExpression"]) if v.get("messageExpression") else None,
        v.get("message") or "", v.get("reason") or "") for v in spec.get("validations") or [])
    annotations = tuple((a.get("key") or "", compile_cel(a.get("valueExpression") or ""))
                        for a in spec.get("auditAnnotations") or [])
    variables = {v.get("name") or "": compile_cel(v.get("expression") or "") for v in spec.get("variables") or []}
    conditions = spec.get("matchConditions") or []
    return CompiledValidating(failure_policy, validations, annotations, variables,
                              MatchConditions(conditions, failure_policy) if conditions else None)
