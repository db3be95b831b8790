"""One evaluation of a ValidatingAdmissionPolicy (`runtime.server.admission.policies.validator`), as kube's
`validator.Validate`: decisions, messages, reasons, failure policy, budgets, audit annotations, match
conditions; one test per rule."""

from __future__ import annotations

from typing import Any

from runtime.server.admission.policies.expressions import Scope
from runtime.server.admission.policies.validator import compile_validating
from runtime.server.admission.policies.values import to_cel
from runtime.server.schema import CELLimits
from tests.support.policy_fakes import vap


def validate(obj: dict[str, Any], limits: CELLimits = CELLimits(), **spec: Any) -> Any:
    compiled = compile_validating(vap(**spec))
    return compiled.validate(Scope({"object": to_cel(obj), "request": to_cel({"operation": "CREATE"})},
                                   compiled.variables, limits))


def one(result: Any) -> tuple[str, str, str, str]:
    [decision] = result.decisions
    return decision.action, decision.evaluation, decision.message, decision.reason


def test_a_true_validation_admits():
    assert one(validate({"n": 1}, validations=[{"expression": "object.n < 5"}]))[:2] == ("admit", "admit")


def test_a_false_validation_denies_with_the_failed_expression_by_default():
    assert one(validate({"n": 9}, validations=[{"expression": " object.n < 5 "}])) == (
        "deny", "deny", "failed expression: object.n < 5", "Invalid")


def test_a_denial_says_the_validations_message_and_reason():
    assert one(validate({"n": 9}, validations=[{"expression": "object.n < 5", "message": " too many ",
                                                "reason": "Forbidden"}]))[2:] == ("too many", "Forbidden")


def test_a_message_expression_wins_over_the_message():
    spec = {"expression": "object.n < 5", "message": "static", "messageExpression": "'n is ' + string(object.n)"}
    assert one(validate({"n": 9}, validations=[spec]))[2] == "n is 9"


def test_a_message_expression_that_fails_or_is_not_one_line_falls_back():
    for expression in ("object.missing", "'two\\nlines'", "1", "'   '", "'x' * 2"):
        spec = {"expression": "false", "message": "static", "messageExpression": expression}
        assert one(validate({}, validations=[spec]))[2] == "static", expression


def test_a_message_expression_over_5_kib_falls_back():
    spec = {"expression": "false", "messageExpression": "'" + "x" * 5121 + "'"}
    assert one(validate({}, validations=[spec]))[2] == "failed expression: false"


def test_an_evaluation_error_denies_under_fail():
    assert one(validate({}, validations=[{"expression": "object.n < 5"}]))[:3] == (
        "deny", "error", "expression 'object.n < 5' resulted in error: no such key: n")


def test_an_evaluation_error_admits_under_ignore():
    assert one(validate({}, failurePolicy="Ignore", validations=[{"expression": "object.n < 5"}]))[:2] == (
        "admit", "error")


def test_a_spent_budget_is_one_decision():
    limits = CELLimits(per_call=400, per_request=600)
    spec = [{"expression": "object.items.all(i, i >= 0)"}] * 5
    assert one(validate({"items": list(range(20))}, limits, validations=spec))[2] == (
        "validation failed due to running out of cost budget, no further validation rules will be run")


def test_a_false_match_condition_skips_the_policy():
    result = validate({"n": 9}, validations=[{"expression": "object.n < 5"}],
                      matchConditions=[{"name": "never", "expression": "false"}])
    assert result.decisions == [] and result.audit_annotations == []


def test_a_failing_match_condition_is_the_failure_policys():
    spec = {"validations": [{"expression": "true"}],
            "matchConditions": [{"name": "bad", "expression": "object.missing"}]}
    assert one(validate({}, **spec))[:3] == ("deny", "error",
                                             "expression 'object.missing' resulted in error: no such key: missing")
    assert validate({}, failurePolicy="Ignore", **spec).decisions == []


def test_an_audit_annotation_publishes_its_trimmed_string():
    result = validate({"n": 128}, auditAnnotations=[
        {"key": "high-replica-count", "valueExpression": "' replicas set to ' + string(object.n) + ' '"}])
    [annotation] = result.audit_annotations
    assert (annotation.key, annotation.action, annotation.value) == ("high-replica-count", "publish",
                                                                     "replicas set to 128")


def test_an_audit_annotation_of_null_or_blank_is_excluded():
    result = validate({}, auditAnnotations=[{"key": "a", "valueExpression": "null"},
                                            {"key": "b", "valueExpression": "'  '"}])
    assert [a.action for a in result.audit_annotations] == ["exclude", "exclude"]


def test_an_audit_annotation_of_another_type_is_an_error():
    [annotation] = validate({}, auditAnnotations=[{"key": "a", "valueExpression": "1"}]).audit_annotations
    assert (annotation.action, annotation.error) == (
        "error", "valueExpression '1' resulted in unsupported return type: int. Return type must be either string "
                 "or null.")


def test_metric_error_types_are_kubes():
    assert one(validate({}, validations=[{"expression": "1 +"}]))[2].startswith("compilation error")
    [compiled] = validate({}, validations=[{"expression": "1 +"}]).decisions
    [denied] = validate({}, validations=[{"expression": "false"}]).decisions
    [admitted] = validate({}, validations=[{"expression": "true"}]).decisions
    assert (compiled.error_type, denied.error_type, admitted.error_type) == (
        "compile_error", "internal_error", "no_error")
