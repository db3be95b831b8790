"""ValidatingWebhookConfiguration and MutatingWebhookConfiguration rules (Kubernetes' v1 SetDefaults_*Webhook,
ValidateValidatingWebhookConfiguration(Update), ValidateMutatingWebhookConfiguration, apiserver's webhook URL and
service validation, printers.go), on the strategies."""

from __future__ import annotations

import copy

import pytest

from tests.support.admission_objects import MWC, VWC, created, errors_of, update_errors, webhook


def test_a_webhook_is_defaulted_as_v1s():
    hook = created(VWC, "hooks", webhooks=[webhook(rules=[{"operations": ["CREATE"], "apiGroups": [""],
                                                           "apiVersions": ["v1"], "resources": ["pods"]}])])
    hook = hook["webhooks"][0]
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["timeoutSeconds"]) == ("Fail", "Equivalent", 10)
    assert (hook["namespaceSelector"], hook["objectSelector"], hook["rules"][0]["scope"]) == ({}, {}, "*")
    assert "reinvocationPolicy" not in hook and hook["sideEffects"] == "None"


def test_a_mutating_webhook_reinvocation_policy_defaults_to_never():
    hook = created(MWC, "hooks", webhooks=[webhook()])["webhooks"][0]
    assert hook["reinvocationPolicy"] == "Never"


def test_a_service_port_defaults_to_443():
    hook = created(VWC, "hooks", webhooks=[webhook(clientConfig={"service": {"name": "s", "namespace": "n"}})])
    assert hook["webhooks"][0]["clientConfig"]["service"]["port"] == 443


def test_a_valid_configuration_has_no_errors():
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook()])) == []
    assert errors_of(MWC, created(MWC, "hooks", webhooks=[webhook()])) == []


def test_side_effects_are_required_and_none_or_none_on_dry_run():
    missing = webhook()
    del missing["sideEffects"]
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[missing])) == [
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"]
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(sideEffects="Some")])) == [
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"']


def test_admission_review_versions_are_required_unique_and_include_a_known_one():
    missing = webhook()
    del missing["admissionReviewVersions"]
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[missing])) == [
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"]
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(admissionReviewVersions=["v2", "v2"])])) == [
        'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of '
        "v1, v1beta1"]


def test_webhook_names_are_fully_qualified_with_three_segments():
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(name="check.example")])) == [
        'webhooks[0].name: Invalid value: "check.example": should be a domain with at least three segments '
        "separated by dots"]
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(name="")])) == ["webhooks[0].name: Required value"]


def test_webhook_names_are_unique():
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(), webhook()])) == [
        'webhooks[1].name: Duplicate value: "check.example.com"']


def test_timeout_is_between_1_and_30_seconds():
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(timeoutSeconds=31)])) == [
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"]


def test_failure_and_match_policies_are_known_values():
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(failurePolicy="Maybe", matchPolicy="Loose")])) == [
        'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
        'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"']


def test_reinvocation_policy_is_never_or_if_needed():
    assert errors_of(MWC, created(MWC, "hooks", webhooks=[webhook(reinvocationPolicy="Always")])) == [
        'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']


def test_client_config_is_exactly_one_of_url_or_service():
    both = webhook(clientConfig={"url": "https://a.example.com", "service": {"name": "s", "namespace": "n"}})
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[both])) == [
        "webhooks[0].clientConfig: Required value: exactly one of url or service is required"]


def test_a_url_is_https_without_user_fragment_or_query():
    hook = webhook(clientConfig={"url": "http://me@hook.example.com/x?debug=1#top"})
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[hook])) == [
        'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired '
        "format: https://host[/path]",
        'webhooks[0].clientConfig.url: Invalid value: "me": user information is not permitted in the URL',
        'webhooks[0].clientConfig.url: Invalid value: "top": fragments are not permitted in the URL',
        'webhooks[0].clientConfig.url: Invalid value: "debug=1": query parameters are not permitted in the URL']


def test_a_url_has_a_host():
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[webhook(clientConfig={"url": "https:///x"})])) == [
        'webhooks[0].clientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]']


def test_a_service_name_and_namespace_are_reported_as_kube_swaps_them():
    hook = webhook(clientConfig={"service": {"name": "svc"}})
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[hook])) == [
        "webhooks[0].clientConfig.service.name: Required value"]


def test_a_service_port_is_valid():
    hook = webhook(clientConfig={"service": {"name": "s", "namespace": "n", "port": 70000}})
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[hook])) == [
        "webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and "
        "65535, inclusive"]


def test_a_service_path_starts_with_a_slash_and_has_subdomain_segments():
    hook = webhook(clientConfig={"service": {"name": "s", "namespace": "n", "path": "/ok//Bad"}})
    errs = errors_of(VWC, created(VWC, "hooks", webhooks=[hook]))
    assert errs[0] == 'webhooks[0].clientConfig.service.path: Invalid value: "/ok//Bad": segment[1] may not be empty'
    assert errs[1].startswith('webhooks[0].clientConfig.service.path: Invalid value: "/ok//Bad": segment[2]: a '
                              "lowercase RFC 1123 subdomain")
    relative = webhook(clientConfig={"service": {"name": "s", "namespace": "n", "path": "validate"}})
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[relative])) == [
        "webhooks[0].clientConfig.service.path: Invalid value: \"validate\": must start with a '/'"]


def test_selectors_are_validated():
    hook = webhook(namespaceSelector={"matchExpressions": [{"key": "env", "operator": "In"}]})
    assert errors_of(VWC, created(VWC, "hooks", webhooks=[hook])) == [
        "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'"]


def test_match_conditions_compile_as_cel():
    hook = webhook(matchConditions=[{"name": "not-system", "expression": "request.userInfo.username =="}])
    [err] = errors_of(VWC, created(VWC, "hooks", webhooks=[hook]))
    assert err.startswith('webhooks[0].matchConditions[0].expression: Invalid value: "request.userInfo.username ==": '
                          "compilation failed: Syntax error")


@pytest.mark.parametrize("strategy", [VWC, MWC], ids=["validating", "mutating"])
def test_an_update_keeps_allowing_side_effects_the_stored_object_had(strategy):
    old = created(strategy, "hooks", webhooks=[webhook()])
    old["webhooks"][0]["sideEffects"] = "Unknown"  # stored by an older server
    new = copy.deepcopy(old)
    new["webhooks"][0]["timeoutSeconds"] = 5
    assert update_errors(strategy, new, old) == []
    fresh = created(strategy, "hooks", webhooks=[webhook()])
    changed = copy.deepcopy(fresh)
    changed["webhooks"][0]["sideEffects"] = "Unknown"
    assert update_errors(strategy, changed, fresh) == [
        'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"']


def test_an_update_does_not_recompile_unchanged_match_conditions():
    old = created(VWC, "hooks", webhooks=[webhook(matchConditions=[{"name": "c", "expression": "true"}])])
    old["webhooks"][0]["matchConditions"][0]["expression"] = "a ==("  # stored by an older server
    new = copy.deepcopy(old)
    new["webhooks"][0]["timeoutSeconds"] = 5
    assert update_errors(VWC, new, old) == []


def test_generation_counts_webhook_changes():
    old = created(VWC, "hooks", webhooks=[webhook()])
    assert VWC.strategy.counts_generation  # the registry sets 1 on create
    old["metadata"]["generation"] = 1
    new = copy.deepcopy(old)
    new["webhooks"][0]["timeoutSeconds"] = 5
    VWC.strategy.prepare_for_update(new, old)
    assert new["metadata"]["generation"] == 2


def test_a_put_of_a_missing_configuration_is_not_a_create():
    assert VWC.strategy.allow_create_on_update is False and MWC.strategy.allow_create_on_update is False


def test_columns_are_name_webhooks_age():
    obj = created(MWC, "hooks", webhooks=[webhook(), webhook(name="other.example.com")])
    columns = MWC.strategy.columns
    assert [c["name"] for c in columns.definitions] == ["Name", "Webhooks", "Age"]
    assert columns.cells(obj)[:2] == ["hooks", 2]
