"""Admission policies' CEL scope (`runtime.server.admission.policies.expressions`): kube's words for compile and
run-time errors, the per-call limit and the filter's budget, lazy variables; one test per rule."""

from __future__ import annotations

import pytest
from celpy import celtypes

from runtime.server.admission.policies.expressions import (
    COST_LIMIT_MESSAGE, OUT_OF_BUDGET_MESSAGE, Budget, Expression, ExpressionError, OutOfBudget, Scope, compile_cel,
)
from runtime.server.admission.policies.values import to_cel
from runtime.server.schema import CELLimits


def scope(variables: dict[str, str] | None = None, limits: CELLimits = CELLimits(), **inputs: object) -> Scope:
    compiled = {name: compile_cel(text) for name, text in (variables or {}).items()}
    return Scope({k: to_cel(v) for k, v in inputs.items()}, compiled, limits)


def test_a_compile_error_is_reported_as_a_compilation_error():
    expression = compile_cel("object.spec.replicas <=")
    with pytest.raises(ExpressionError, match=r"^compilation error: Syntax error"):
        scope(object={}).run(expression, Budget())


def test_a_run_time_error_names_the_expression_in_kubes_words():
    with pytest.raises(ExpressionError) as failed:
        scope(object={"spec": {}}).run(compile_cel("object.spec.replicas > 1"), Budget())
    assert str(failed.value) == "expression 'object.spec.replicas > 1' resulted in error: no such key: replicas"


def test_a_call_over_the_per_call_limit_is_cancelled():
    expression = compile_cel("object.items.all(i, object.items.all(j, i + j >= 0))")
    with pytest.raises(ExpressionError) as failed:
        scope(limits=CELLimits(per_call=500, per_request=100_000), object={"items": list(range(40))}).run(
            expression, Budget(CELLimits(per_call=500, per_request=100_000)))
    assert str(failed.value).endswith(f"resulted in error: {COST_LIMIT_MESSAGE}")


def test_a_spent_budget_stops_the_filter():
    limits = CELLimits(per_call=1_000, per_request=1_500)
    s, budget = scope(limits=limits, object={"items": list(range(30))}), Budget(limits)
    s.run(compile_cel("object.items.all(i, i >= 0)"), budget)
    with pytest.raises(OutOfBudget, match=f"^{OUT_OF_BUDGET_MESSAGE}$"):
        for _ in range(10):
            s.run(compile_cel("object.items.all(i, i >= 0)"), budget)


class CountingProgram:
    """A compiled variable that counts its evaluations."""

    def __init__(self, text: str) -> None:
        self.program = compile_cel(text).program
        self.calls = 0

    def evaluate(self, variables: object, meter: object, functions: object = None) -> object:
        self.calls += 1
        return self.program.evaluate(variables, meter, functions)


def test_variables_are_evaluated_lazily_and_at_most_once():
    twice, unused = CountingProgram("object.n * 2"), CountingProgram("object.missing")
    s = Scope({"object": to_cel({"n": 21})}, {"twice": Expression("object.n * 2", twice),  # type: ignore[arg-type]
                                              "unused": Expression("object.missing", unused)})  # type: ignore[arg-type]
    assert s.run(compile_cel("variables.twice + variables.twice"), Budget()) == celtypes.IntType(84)
    assert s.run(compile_cel("variables.twice == 42"), Budget())
    assert (twice.calls, unused.calls) == (1, 0)


def test_a_variable_sees_only_variables_declared_before_it():
    s = scope({"a": "variables.b + 1", "b": "1", "c": "variables.b + 1"})
    assert s.run(compile_cel("variables.c"), Budget()) == celtypes.IntType(2)
    with pytest.raises(ExpressionError, match="no such key: b"):
        s.run(compile_cel("variables.a"), Budget())


def test_a_variable_that_does_not_compile_fails_the_expression_reading_it():
    s = scope({"bad": "1 +"})
    with pytest.raises(ExpressionError, match='composited variable "bad" fails to compile: compilation error'):
        s.run(compile_cel("variables.bad == 2"), Budget())


def test_expressions_are_compiled_once_per_text():
    assert compile_cel("object.a == 1") is compile_cel("object.a == 1")


def test_a_trailing_comma_in_a_literal_compiles_as_cel_go_accepts_it():
    assert Scope({}, {}).run(compile_cel('[1, {"a": "x,]",},]'), Budget()) == to_cel([1, {"a": "x,]"}])
    assert compile_cel("[1,, 2]").error.startswith("compilation error: Syntax error")
