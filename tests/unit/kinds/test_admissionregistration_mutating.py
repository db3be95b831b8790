"""MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding rules (Kubernetes v1.36's
SetDefaults_MutatingAdmissionPolicySpec, ValidateMutatingAdmissionPolicy, validateMutation,
ValidateMutatingAdmissionPolicyBinding, printers.go), on the strategies."""

from __future__ import annotations

import copy

from tests.support.admission_objects import RULE, MAP, MAPB, created, errors_of, mutating_spec


def test_failure_policy_and_match_constraints_are_defaulted_and_reinvocation_is_not():
    spec = created(MAP, spec=mutating_spec(reinvocationPolicy=None))["spec"]
    assert spec["failurePolicy"] == "Fail" and spec["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert "reinvocationPolicy" not in spec


def test_a_valid_policy_has_no_errors():
    assert errors_of(MAP, created(MAP, spec=mutating_spec())) == []
    json_patch = [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/x'}]"}}]
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=json_patch))) == []


def test_reinvocation_policy_is_required_never_or_if_needed():
    assert errors_of(MAP, created(MAP, spec=mutating_spec(reinvocationPolicy=None))) == [
        "spec.reinvocationPolicy: Required value"]
    assert errors_of(MAP, created(MAP, spec=mutating_spec(reinvocationPolicy="Always"))) == [
        'spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']


def test_mutations_are_required():
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=[]))) == [
        "spec.mutations: Required value: mutations must contain at least one item"]


def test_a_mutation_patch_type_is_required_and_known():
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=[{}]))) == [
        "spec.mutations[0].patchType: Required value"]
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=[{"patchType": "Merge"}]))) == [
        'spec.mutations[0].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", '
        '"JSONPatch"']


def test_a_mutation_sets_the_member_of_its_patch_type_only():
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=[{"patchType": "JSONPatch"}]))) == [
        "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch"]
    both = [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"},
             "jsonPatch": {"expression": "[]"}}]
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=both))) == [
        'spec.mutations[0].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is '
        "ApplyConfiguration"]


def test_a_mutation_expression_is_required_and_compiles():
    blank = [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": " "}}]
    assert errors_of(MAP, created(MAP, spec=mutating_spec(mutations=blank))) == [
        "spec.mutations[0].applyConfiguration.expression: Required value"]
    broken = [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{"}}]
    [err] = errors_of(MAP, created(MAP, spec=mutating_spec(mutations=broken)))
    assert err.startswith('spec.mutations[0].jsonPatch.expression: Invalid value: "[JSONPatch{": compilation failed:')


def test_a_mutating_policy_cannot_match_delete():
    constraints = {"resourceRules": [{**RULE, "operations": ["CREATE", "DELETE"]}]}
    assert errors_of(MAP, created(MAP, spec=mutating_spec(matchConstraints=constraints))) == [
        'spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", '
        '"CONNECT", "CREATE", "UPDATE"']


def test_a_mutating_policy_needs_match_constraints_with_a_resource_rule():
    assert errors_of(MAP, created(MAP, spec=mutating_spec(matchConstraints={}))) == [
        "spec.matchConstraints.resourceRules: Required value"]


def test_generation_counts_spec_changes():
    old = created(MAP, spec=mutating_spec())
    old["metadata"]["generation"] = 1
    new = copy.deepcopy(old)
    new["spec"]["reinvocationPolicy"] = "IfNeeded"
    MAP.strategy.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2


def test_policy_columns_are_name_mutations_paramkind_age():
    assert [c["name"] for c in MAP.strategy.columns.definitions] == ["Name", "Mutations", "ParamKind", "Age"]
    assert MAP.strategy.columns.cells(created(MAP, spec=mutating_spec()))[:3] == ["replicas", 1, "<unset>"]


def test_a_valid_binding_has_no_errors_and_needs_no_validation_actions():
    assert errors_of(MAPB, created(MAPB, spec={"policyName": "replicas"})) == []


def test_a_mutating_binding_cannot_match_delete():
    resources = {"resourceRules": [{**RULE, "operations": ["DELETE"]}]}
    assert errors_of(MAPB, created(MAPB, spec={"policyName": "replicas", "matchResources": resources})) == [
        'spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", '
        '"CONNECT", "CREATE", "UPDATE"']


def test_a_mutating_binding_param_ref_and_policy_name_are_validated():
    assert errors_of(MAPB, created(MAPB, spec={"paramRef": {"name": "p"}})) == [
        "spec.policyName: Required value", "spec.paramRef.parameterNotFoundAction: Required value"]


def test_binding_columns_are_name_policyname_paramref_age():
    obj = created(MAPB, spec={"policyName": "replicas", "paramRef": {"name": "p", "parameterNotFoundAction": "Deny"}})
    assert [c["name"] for c in MAPB.strategy.columns.definitions] == ["Name", "PolicyName", "ParamRef", "Age"]
    assert MAPB.strategy.columns.cells(obj)[:3] == ["replicas", "replicas", "*/p"]
