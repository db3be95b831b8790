"""Admission policies' CEL: expressions compiled once, evaluated in one scope per (policy, binding, param).

- `compile_cel(source)` -> `Expression` (its `Program`, or the compile error
  in kube's words, `compilation error: ...`, which evaluating it reports).
- `Scope(inputs, variables, limits)`: one invocation's activation. `inputs`
  are the CEL values of `object`, `oldObject`, `request`, `params`,
  `namespaceObject`, `authorizer` (and, for mutations, `Object`, `JSONPatch`,
  `jsonpatch`); `variables` the policy's `spec.variables`, evaluated lazily,
  in the scope, at most once each however many expressions read them
  (kube's composition context); a variable sees only those declared before it
  (kube refuses a reference to a later one). `Scope.run(expression, budget)` evaluates
  one expression and returns its value or raises `ExpressionError` in kube's
  words (`expression '<e>' resulted in error: <why>`); `Budget` is kube's
  runtime cost budget of a filter (validations then message expressions
  share one; audit annotations, match conditions and each mutation have
  their own): each call is bounded by the per-call limit, and a call over the
  budget raises `OutOfBudget` (`validation failed due to running out of cost
  budget, no further validation rules will be run`).

Limits are the CRD rules' (`runtime.server.schema.CELLimits`, in celpy units;
see `runtime.server.schema.cel.rules` for why they are Kubernetes' divided
by twenty).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from runtime.server.admission.policies.authorizer import AUTHORIZER_FUNCTIONS
from runtime.server.admission.policies.values import JSONPATCH_FUNCTIONS
from runtime.server.schema import CELLimits
from runtime.server.schema.cel.program import (
    CELCompileError, CELEvaluationError, CostExceeded, Meter, Program, compile_expression,
)

__all__ = ["Expression", "compile_cel", "Scope", "Budget", "ExpressionError", "OutOfBudget", "LIMITS",
           "COST_LIMIT_MESSAGE", "OUT_OF_BUDGET_MESSAGE"]

#: The limits policies run under (the CRD rules' defaults).
LIMITS = CELLimits()
COST_LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded"
OUT_OF_BUDGET_MESSAGE = ("validation failed due to running out of cost budget, no further validation rules will "
                         "be run")
#: The policies' library beyond Kubernetes' CRD one: the authorizer and JSON patch functions.
_FUNCTIONS: dict[str, Any] = {**AUTHORIZER_FUNCTIONS, **JSONPATCH_FUNCTIONS}


class ExpressionError(Exception):
    """An expression failed (compile or run time): `str()` is kube's text."""


class OutOfBudget(Exception):
    """The filter's cost budget is spent: no further expression of it runs."""


@dataclass(frozen=True)
class Expression:
    """A compiled expression, or the reason it does not compile."""

    source: str
    program: Program | None
    error: str = ""


@functools.lru_cache(maxsize=4096)
def compile_cel(source: str) -> Expression:
    """`source` compiled once (cached by text: policies that repeat an expression share it)."""
    try:
        return Expression(source, compile_expression(source))
    except CELCompileError as exc:
        return Expression(source, None, f"compilation error: {exc}")


class Budget:
    """A filter's runtime cost budget (`limits.per_request` units), spent by the expressions it runs."""

    def __init__(self, limits: CELLimits = LIMITS) -> None:
        self.limits = limits
        self.remaining = limits.per_request


class _Variables(celtypes.MapType):
    """`variables`: a map whose entries evaluate on first read (in the scope of the reading expression)."""

    def __init__(self, scope: "Scope") -> None:
        super().__init__()
        self.scope = scope

    def __getitem__(self, key: Any) -> Any:
        return self.scope.variable(str(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return self.scope.variable(str(key))

    def __contains__(self, key: object) -> bool:
        return str(key) in self.scope.variables


class Scope:
    """One invocation's activation (see the module doc)."""

    def __init__(self, inputs: Mapping[str, Any], variables: Mapping[str, Expression],
                 limits: CELLimits = LIMITS) -> None:
        self.variables = dict(variables)
        self._order = {name: index for index, name in enumerate(self.variables)}
        self._evaluating: list[int] = []
        self.limits = limits
        self.values: dict[str, Any] = {**inputs, "variables": _Variables(self)}
        self._done: dict[str, Any] = {}
        self._meter: Meter | None = None

    def variable(self, name: str) -> Any:
        """The value of variable `name` (a CEL error value if it fails), evaluated at most once."""
        expression = self.variables.get(name)
        index = self._order.get(name, -1)
        if expression is None or self._evaluating and index >= self._evaluating[-1]:
            return CELEvalError(f"no such key: {name}")
        if name in self._done:
            return self._done[name]
        if expression.program is None:
            value: Any = CELEvalError(f'composited variable "{name}" fails to compile: {expression.error}')
        else:
            meter = self._meter if self._meter is not None else Meter(self.limits.per_call)
            self._evaluating.append(index)
            try:
                value = expression.program.evaluate(self.values, meter, _FUNCTIONS)
            except CELEvaluationError as exc:
                value = CELEvalError(str(exc))
            finally:
                self._evaluating.pop()
        self._done[name] = value
        return value

    def run(self, expression: Expression, budget: Budget) -> Any:
        """The value of `expression`. Raises ExpressionError (its failure, in kube's words) or OutOfBudget."""
        if expression.program is None:
            raise ExpressionError(expression.error)
        if budget.remaining <= 0:
            raise OutOfBudget(OUT_OF_BUDGET_MESSAGE)
        meter = Meter(min(self.limits.per_call, budget.remaining))
        outer, self._meter = self._meter, meter
        try:
            return expression.program.evaluate(self.values, meter, _FUNCTIONS)
        except CostExceeded:
            if meter.limit < self.limits.per_call:
                raise OutOfBudget(OUT_OF_BUDGET_MESSAGE) from None
            raise ExpressionError(_failed(expression, COST_LIMIT_MESSAGE)) from None
        except CELEvaluationError as exc:
            raise ExpressionError(_failed(expression, str(exc))) from None
        finally:
            self._meter = outer
            budget.remaining -= min(meter.used, meter.limit)


def _failed(expression: Expression, why: str) -> str:
    return f"expression '{expression.source}' resulted in error: {why}"
