"""kube's CEL matchConditions (`plugin/webhook/matchconditions`) and the CEL request variables, one test per
rule."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from runtime.machinery.options import ParsedDeleteOptions, WriteOptions
from runtime.machinery.scheme import Scheme
from runtime.server.admission.matching import (
    MatchConditions, RequestFacts, admission_request, cel_variables, equivalent,
)
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo

SCHEME = Scheme("k8s.io")
ALL = [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]


def _variables(operation: str = "create", labels: dict[str, str] | None = None, *, options: Any = None,
               dry_run: bool = False) -> dict[str, Any]:
    rt = SCHEME.by_resource("", "v1", "configmaps")
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "namespace": "ns", "labels": labels or {}}}
    old = None if operation == "create" else obj
    request = AdmissionRequest(UserInfo("alice", "u1", ("g",)), rt, operation, obj, old, dry_run, options=options)
    match = equivalent(RequestFacts.of(request), ALL, SimpleNamespace(scheme=SCHEME), None)
    return cel_variables(match, request)


def _conditions(*expressions: str, policy: str = "Fail") -> MatchConditions:
    return MatchConditions([{"name": f"c{i}", "expression": e} for i, e in enumerate(expressions)], policy)


def test_all_conditions_true_match():
    assert _conditions("true", "object.metadata.name == 'c'").evaluate(_variables()).matches


def test_any_false_condition_skips_naming_it():
    result = _conditions("true", "request.operation == 'UPDATE'").evaluate(_variables())
    assert (result.matches, result.error, result.failed_condition) == (False, "", "c1")


def test_a_false_condition_wins_over_an_error():
    result = _conditions("object.nonesuch == 1", "false").evaluate(_variables())
    assert (result.matches, result.error) == (False, "")


def test_an_error_under_fail_is_the_error_in_kubes_words():
    result = _conditions("object.nonesuch == 1").evaluate(_variables())
    assert not result.matches
    assert result.error == "expression 'object.nonesuch == 1' resulted in error: no such key: nonesuch"


def test_several_errors_are_aggregated():
    result = _conditions("object.a == 1", "object.b == 1").evaluate(_variables())
    assert result.error.startswith("[expression 'object.a == 1'") and result.error.endswith("no such key: b]")


def test_an_error_under_ignore_skips_without_an_error():
    result = _conditions("object.nonesuch == 1", policy="Ignore").evaluate(_variables())
    assert (result.matches, result.error) == (False, "")


def test_a_condition_that_does_not_compile_is_a_compilation_error():
    result = _conditions("object.(").evaluate(_variables())
    assert result.error.startswith("compilation error: ")


def test_a_condition_over_its_cost_budget_fails():
    conditions = MatchConditions([{"name": "big", "expression": "[1,2,3,4,5].all(x, [1,2,3,4,5].all(y, true))"}],
                                 "Fail", budget=10)
    assert "running out of cost budget" in conditions.evaluate(_variables()).error


def test_the_old_object_is_null_on_create_and_the_object_null_on_delete():
    assert _conditions("oldObject == null").evaluate(_variables("create")).matches
    assert _conditions("object == null", "oldObject.metadata.name == 'c'").evaluate(
        _variables("delete", options=ParsedDeleteOptions())).matches


def test_the_request_variable_carries_kubes_admission_request_fields():
    variables = _variables("create", options=WriteOptions(dry_run=True, field_manager="kubectl"), dry_run=True)
    assert _conditions("request.userInfo.username == 'alice'", "'g' in request.userInfo.groups",
                       "request.kind.kind == 'ConfigMap'", "request.resource.resource == 'configmaps'",
                       "request.namespace == 'ns'", "request.dryRun",
                       "request.options.fieldManager == 'kubectl'").evaluate(variables).matches


def test_the_admission_request_has_kubes_options_and_no_uid():
    rt = SCHEME.by_resource("", "v1", "configmaps")
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}
    request = AdmissionRequest(UserInfo("alice"), rt, "delete", obj, obj, True,
                               options=ParsedDeleteOptions(dry_run=True, grace_period_seconds=0,
                                                           propagation_policy="Foreground"))
    match = equivalent(RequestFacts.of(request), ALL, SimpleNamespace(scheme=SCHEME), None)
    review = admission_request(match, request)
    assert "uid" not in review and review["operation"] == "DELETE"
    assert review["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"],
                                 "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"}
    assert review["requestKind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
