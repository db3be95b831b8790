"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding rules (Kubernetes' v1
SetDefaults_ValidatingAdmissionPolicySpec and _MatchResources, ValidateValidatingAdmissionPolicy(Update,
StatusUpdate), ValidateValidatingAdmissionPolicyBinding, printers.go), on the strategies."""

from __future__ import annotations

import copy

from tests.support.admission_objects import RULE, VAP, VAPB, binding_spec, created, errors_of, policy_spec, \
    update_errors


def test_failure_policy_and_match_constraints_are_defaulted():
    spec = created(VAP, spec=policy_spec())["spec"]
    constraints = spec["matchConstraints"]
    assert spec["failurePolicy"] == "Fail"
    assert (constraints["matchPolicy"], constraints["namespaceSelector"], constraints["objectSelector"]) == (
        "Equivalent", {}, {})
    assert constraints["resourceRules"][0]["scope"] == "*"


def test_a_valid_policy_has_no_errors():
    assert errors_of(VAP, created(VAP, spec=policy_spec())) == []


def test_match_constraints_are_required_with_a_resource_rule():
    spec = policy_spec()
    del spec["matchConstraints"]
    assert errors_of(VAP, created(VAP, spec=spec)) == ["spec.matchConstraints: Required value"]
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConstraints={}))) == [
        "spec.matchConstraints.resourceRules: Required value"]


def test_validations_or_audit_annotations_are_required():
    assert errors_of(VAP, created(VAP, spec=policy_spec(validations=[]))) == [
        "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
        "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"]


def test_a_validation_expression_is_required_and_compiles():
    assert errors_of(VAP, created(VAP, spec=policy_spec(validations=[{"expression": " "}]))) == [
        "spec.validations[0].expression: Required value: expression is not specified"]
    [err] = errors_of(VAP, created(VAP, spec=policy_spec(validations=[{"expression": "object.x <"}])))
    assert err.startswith('spec.validations[0].expression: Invalid value: "object.x <": compilation failed:')


def test_a_message_expression_is_non_blank_and_compiles():
    blank = [{"expression": "true", "messageExpression": "  "}]
    assert errors_of(VAP, created(VAP, spec=policy_spec(validations=blank))) == [
        'spec.validations[0].messageExpression: Invalid value: "  ": must be non-empty if specified']
    [err] = errors_of(VAP, created(VAP, spec=policy_spec(validations=[{"expression": "true",
                                                                       "messageExpression": "'a' +"}])))
    assert err.startswith("spec.validations[0].messageExpression: Invalid value: \"'a' +\": compilation failed:")


def test_a_message_is_non_blank_and_on_one_line():
    assert errors_of(VAP, created(VAP, spec=policy_spec(validations=[{"expression": "true", "message": " "}]))) == [
        'spec.validations[0].message: Invalid value: " ": message must be non-empty if specified']
    assert errors_of(VAP, created(VAP, spec=policy_spec(validations=[{"expression": "true",
                                                                      "message": "a\nb"}]))) == [
        'spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks']


def test_a_reason_is_forbidden_invalid_or_request_entity_too_large():
    assert errors_of(VAP, created(VAP, spec=policy_spec(validations=[{"expression": "true",
                                                                      "reason": "NotFound"}]))) == [
        'spec.validations[0].reason: Unsupported value: "NotFound": supported values: "Forbidden", "Invalid", '
        '"RequestEntityTooLarge"']


def test_audit_annotation_keys_are_unique_qualified_names_under_the_policy_name():
    annotations = [{"key": "high-replicas", "valueExpression": "'x'"}, {"key": "high-replicas",
                                                                        "valueExpression": "'y'"},
                   {"key": "bad key", "valueExpression": "'z'"}]
    errs = errors_of(VAP, created(VAP, spec=policy_spec(auditAnnotations=annotations)))
    assert errs[0] == 'spec.auditAnnotations[1].key: Duplicate value: "high-replicas"'
    assert errs[1].startswith('spec.auditAnnotations[2].key: Invalid value: "replicas/bad key": name part must')


def test_at_most_20_audit_annotations():
    annotations = [{"key": f"k{i}", "valueExpression": "'v'"} for i in range(21)]
    [err] = errors_of(VAP, created(VAP, spec=policy_spec(auditAnnotations=annotations)))
    assert err.startswith('spec.auditAnnotations: Invalid value: []admissionregistration.AuditAnnotation{'
                          'admissionregistration.AuditAnnotation{Key:"k0", ValueExpression:"\'v\'"}, ')
    assert err.endswith(": must not have more than 20 auditAnnotations")


def test_an_audit_annotation_value_expression_is_required_and_at_most_5_kib():
    assert errors_of(VAP, created(VAP, spec=policy_spec(auditAnnotations=[{"key": "k", "valueExpression": ""}]))) == [
        "spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified"]
    long = [{"key": "k", "valueExpression": "'" + "a" * 5200 + "'"}]
    assert errors_of(VAP, created(VAP, spec=policy_spec(auditAnnotations=long))) == [
        "spec.auditAnnotations[0].valueExpression: Required value: must not exceed 5120 bytes in length"]


def test_variables_are_cel_identifiers_with_expressions():
    variables = [{"name": "in", "expression": "1"}, {"name": "ok", "expression": ""}]
    assert errors_of(VAP, created(VAP, spec=policy_spec(variables=variables))) == [
        'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
        "spec.variables[1].expression: Required value: expression is not specified"]


def test_param_kind_has_a_group_version_and_a_kind():
    assert errors_of(VAP, created(VAP, spec=policy_spec(paramKind={"apiVersion": "example.com/"}))) == [
        'spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified',
        "spec.paramKind.kind: Required value"]


def test_match_conditions_are_unique_qualified_names_at_most_64():
    conditions = [{"name": "c", "expression": "true"}, {"name": "c", "expression": "true"}]
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConditions=conditions))) == [
        'spec.matchConditions[1].name: Duplicate value: "c"']
    many = [{"name": f"c{i}", "expression": "true"} for i in range(65)]
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConditions=many))) == [
        "spec.matchConditions: Too many: 65: must have at most 64 items"]


def test_resource_rules_wildcards_stand_alone():
    rule = {**RULE, "operations": ["*", "CREATE"], "apiGroups": ["*", "apps"], "resources": ["*/*", "pods"]}
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConstraints={"resourceRules": [rule]}))) == [
        "spec.matchConstraints.resourceRules[0].operations: Invalid value: "
        '[]admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not specify other operations',
        'spec.matchConstraints.resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, '
        "must not specify other API groups",
        'spec.matchConstraints.resourceRules[0].resources: Invalid value: []string{"*/*", "pods"}: if \'*/*\' is '
        "present, must not specify other resources"]


def test_resource_rules_subresource_wildcards_cover_others():
    rule = {**RULE, "resources": ["pods/*", "pods/status", "*", "deployments"]}
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConstraints={"resourceRules": [rule]}))) == [
        'spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "pods/status": if \'pods/*\' is present, '
        "must not specify pods/status",
        'spec.matchConstraints.resourceRules[0].resources: Invalid value: []string{"pods/*", "pods/status", "*", '
        "\"deployments\"}: if '*' is present, must not specify other resources without subresources"]


def test_resource_rules_operations_and_scope_are_known():
    rule = {**RULE, "operations": ["PATCH"], "scope": "Global"}
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConstraints={"resourceRules": [rule]}))) == [
        'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", '
        '"CONNECT", "CREATE", "DELETE", "UPDATE"',
        'spec.matchConstraints.resourceRules[0].scope: Unsupported value: "Global": supported values: "*", '
        '"Cluster", "Namespaced"']


def test_resource_names_are_unique_path_segments():
    rule = {**RULE, "resourceNames": ["a/b", "c", "c"]}
    assert errors_of(VAP, created(VAP, spec=policy_spec(matchConstraints={"resourceRules": [rule]}))) == [
        "spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: \"a/b\": may not contain '/'",
        'spec.matchConstraints.resourceRules[0].resourceNames[2]: Duplicate value: "c"']


def test_a_create_starts_without_a_status_and_a_policy_write_keeps_it():
    made = created(VAP, spec=policy_spec(), status={"observedGeneration": 7})
    assert "status" not in made
    made["metadata"]["generation"] = 1
    old = {**copy.deepcopy(made), "status": {"observedGeneration": 1}}
    new = copy.deepcopy(old)
    new["spec"]["validations"][0]["expression"] = "true"
    new["status"] = {"observedGeneration": 9}
    VAP.strategy.prepare_for_update(new, old)
    assert new["status"] == {"observedGeneration": 1} and new["metadata"]["generation"] == 2


def test_a_status_write_changes_only_the_status_and_not_the_generation():
    old = created(VAP, spec=policy_spec())
    old["metadata"]["generation"] = 1
    new = copy.deepcopy(old)
    new["spec"]["failurePolicy"] = "Ignore"
    new["status"] = {"observedGeneration": 1}
    VAP.strategy.prepare_for_update(new, old, VAP.strategy.subresources["status"])
    assert new["spec"]["failurePolicy"] == "Fail" and new["status"] == {"observedGeneration": 1}
    assert new["metadata"]["generation"] == 1


def test_status_type_checking_warnings_and_conditions_are_validated():
    obj = created(VAP, spec=policy_spec())
    obj["status"] = {"typeChecking": {"expressionWarnings": [{"fieldRef": "spec.validations[0].expression"}]},
                     "conditions": [{"type": "Ready", "status": "Maybe", "reason": "Fine",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    assert errors_of(VAP, obj) == [
        "status.typeChecking.expressionWarnings[0].warning: Required value",
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"']


def test_an_update_does_not_recheck_unchanged_match_conditions():
    old = created(VAP, spec=policy_spec(matchConditions=[{"name": "c", "expression": "true"}]))
    old["spec"]["matchConditions"][0]["expression"] = "a ==("  # stored by an older server
    new = copy.deepcopy(old)
    new["spec"]["failurePolicy"] = "Ignore"
    assert update_errors(VAP, new, old) == []
    new["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert len(update_errors(VAP, new, old)) == 1


def test_policy_columns_are_name_validations_paramkind_age():
    obj = created(VAP, spec=policy_spec(paramKind={"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"}))
    assert [c["name"] for c in VAP.strategy.columns.definitions] == ["Name", "Validations", "ParamKind", "Age"]
    assert VAP.strategy.columns.cells(obj)[:3] == ["replicas", 1, "rules.example.com/v1/ReplicaLimit"]
    assert VAP.strategy.columns.cells(created(VAP, spec=policy_spec()))[2] == "<unset>"


def test_binding_match_resources_are_defaulted():
    spec = created(VAPB, spec=binding_spec(matchResources={}))["spec"]
    assert spec["matchResources"] == {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}}


def test_a_valid_binding_has_no_errors():
    assert errors_of(VAPB, created(VAPB, spec=binding_spec())) == []


def test_binding_policy_name_is_a_required_subdomain():
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(policyName=""))) == ["spec.policyName: Required value"]
    [err] = errors_of(VAPB, created(VAPB, spec=binding_spec(policyName="Bad_Name")))
    assert err.startswith('spec.policyName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')


def test_validation_actions_are_required_unique_known_and_not_deny_with_warn():
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(validationActions=[]))) == [
        "spec.validationActions: Required value: at least one validation action is required"]
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(validationActions=["Deny", "Warn", "Warn", "Log"]))) == [
        'spec.validationActions[2]: Duplicate value: "Warn"',
        'spec.validationActions[3]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
        'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Warn", '
        '"Log"}: must not contain both Deny and Warn (repeating the same validation failure information in the API '
        "response and headers serves no purpose)"]


def test_param_ref_name_and_selector_are_exclusive_and_one_is_required():
    both = {"name": "limits", "selector": {}, "parameterNotFoundAction": "Deny"}
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(paramRef=both))) == [
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive"]
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(paramRef={"parameterNotFoundAction": "Allow"}))) == [
        "spec.paramRef: Required value: one of name or selector must be specified"]


def test_param_ref_parameter_not_found_action_is_required_allow_or_deny():
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(paramRef={"name": "limits"}))) == [
        "spec.paramRef.parameterNotFoundAction: Required value"]
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(paramRef={"name": "limits",
                                                                     "parameterNotFoundAction": "Skip"}))) == [
        'spec.paramRef.parameterNotFoundAction: Unsupported value: "Skip": supported values: "Deny", "Allow"']


def test_binding_match_resources_are_reported_at_kubes_misspelt_path():
    resources = {"resourceRules": [{**RULE, "operations": []}]}
    assert errors_of(VAPB, created(VAPB, spec=binding_spec(matchResources=resources))) == [
        "spec.matchResouces.resourceRules[0].operations: Required value"]


def test_binding_columns_are_name_policyname_paramref_age():
    columns = VAPB.strategy.columns
    assert [c["name"] for c in columns.definitions] == ["Name", "PolicyName", "ParamRef", "Age"]
    named = created(VAPB, spec=binding_spec(paramRef={"name": "limits", "namespace": "default",
                                                      "parameterNotFoundAction": "Deny"}))
    assert columns.cells(named)[:3] == ["replicas", "replicas", "default/limits"]
    unnamespaced = created(VAPB, spec=binding_spec(paramRef={"name": "limits", "parameterNotFoundAction": "Deny"}))
    assert columns.cells(unnamespaced)[2] == "*/limits"
    selected = created(VAPB, spec=binding_spec(paramRef={"selector": {"matchLabels": {"env": "test"}},
                                                         "parameterNotFoundAction": "Deny"}))
    assert columns.cells(selected)[2] == ("&LabelSelector{MatchLabels:map[string]string{env: test,},"
                                          "MatchExpressions:[]LabelSelectorRequirement{},}")
    assert columns.cells(created(VAPB, spec=binding_spec()))[2] == "<unset>"
