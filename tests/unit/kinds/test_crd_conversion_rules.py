"""A CRD's `spec.conversion` (runtime.server.kinds.crdconversion): apiextensions v1's defaults and
validateCustomResourceConversion, one test per rule, in kube-apiserver's words and paths."""

from __future__ import annotations

import copy

from runtime.server.kinds.crdconversion import conversion_errors, default_conversion, webhook_conversion


def _webhook(client_config=None, versions=("v1",)):
    webhook = {"conversionReviewVersions": list(versions)}
    if client_config is not None:
        webhook["clientConfig"] = client_config
    return {"conversion": {"strategy": "Webhook", "webhook": webhook}}


def _messages(spec, old=None):
    return [str(e) for e in conversion_errors(spec, old)]


URL = {"url": "https://conv.example.com/convert"}


def test_conversion_defaults_to_none_strategy():
    spec = {}
    default_conversion(spec)
    assert spec == {"conversion": {"strategy": "None"}}


def test_a_webhook_service_port_defaults_to_443():
    spec = _webhook({"service": {"name": "conv", "namespace": "ns"}})
    default_conversion(spec)
    assert spec["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443


def test_strategy_is_required():
    assert _messages({"conversion": {}}) == ["spec.conversion.strategy: Required value"]


def test_strategy_is_none_or_webhook():
    assert _messages({"conversion": {"strategy": "Magic"}}) == [
        'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"']


def test_webhook_strategy_requires_a_client_config():
    assert _messages(_webhook()) == [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"]


def test_webhook_client_config_takes_exactly_one_of_url_and_service():
    both = {**URL, "service": {"name": "conv", "namespace": "ns", "port": 443}}
    expected = ["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]
    assert _messages(_webhook(both)) == expected
    assert _messages(_webhook({"caBundle": "Cg=="})) == expected


def test_webhook_url_must_be_https_with_a_host():
    assert _messages(_webhook({"url": "http:///convert"})) == [
        'spec.conversion.webhookClientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; '
        "desired format: https://host[/path]",
        'spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: '
        "https://host[/path]"]


def test_webhook_url_takes_no_user_query_or_fragment():
    assert _messages(_webhook({"url": "https://me@conv.example.com/convert?x=1#top"})) == [
        'spec.conversion.webhookClientConfig.url: Invalid value: "me": user information is not permitted in the URL',
        'spec.conversion.webhookClientConfig.url: Invalid value: "top": fragments are not permitted in the URL',
        'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the '
        "URL"]


def test_webhook_service_name_and_namespace_are_required_at_each_others_path():
    assert _messages(_webhook({"service": {"namespace": "ns", "port": 443}})) == [
        "spec.conversion.webhookClientConfig.service.namespace: Required value"]
    assert _messages(_webhook({"service": {"name": "conv", "port": 443}})) == [
        "spec.conversion.webhookClientConfig.service.name: Required value"]


def test_webhook_service_port_is_a_valid_port_number():
    assert _messages(_webhook({"service": {"name": "conv", "namespace": "ns", "port": 0}})) == [
        "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 "
        "and 65535, inclusive"]


def test_webhook_service_path_is_slash_separated_dns_subdomains():
    service = {"name": "conv", "namespace": "ns", "port": 443}
    assert _messages(_webhook({"service": {**service, "path": "convert"}})) == [
        'spec.conversion.webhookClientConfig.service.path: Invalid value: "convert": must start with a \'/\'']
    assert _messages(_webhook({"service": {**service, "path": "/a//b"}})) == [
        'spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty']
    [bad] = _messages(_webhook({"service": {**service, "path": "/Convert"}}))
    assert bad.startswith('spec.conversion.webhookClientConfig.service.path: Invalid value: "/Convert": segment[0]: '
                          "a lowercase RFC 1123 subdomain")
    assert _messages(_webhook({"service": {**service, "path": "/convert/v1/"}})) == []


def test_conversion_review_versions_are_required():
    assert _messages(_webhook(URL, versions=())) == [
        "spec.conversion.conversionReviewVersions: Required value"]


def test_conversion_review_versions_must_include_v1_or_v1beta1():
    assert _messages(_webhook(URL, versions=("v2",))) == [
        'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, '
        "v1beta1"]


def test_conversion_review_versions_are_unique_dns1035_labels():
    assert _messages(_webhook(URL, versions=("v1", "v1", "V2"))) == [
        'spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version',
        'spec.conversion.conversionReviewVersions[2]: Invalid value: "V2": a DNS-1035 label must consist of lower '
        "case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric "
        "character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]


def test_an_update_keeps_unrecognized_review_versions_the_old_object_had():
    old = _webhook(URL, versions=("v3",))
    assert _messages(copy.deepcopy(old), old) == []
    assert _messages(_webhook(URL, versions=("v3",)), _webhook(URL)) != []


def test_none_strategy_takes_no_webhook():
    spec = {"conversion": {"strategy": "None", "webhook": {"clientConfig": URL, "conversionReviewVersions": ["v1"]}}}
    assert _messages(spec) == [
        "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
        "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"]


def test_a_valid_webhook_conversion_has_no_errors_and_is_a_webhook_conversion():
    spec = _webhook({"service": {"name": "conv", "namespace": "ns", "port": 8443, "path": "/convert"},
                     "caBundle": "Cg=="}, versions=("v1beta1", "v1"))
    assert _messages(spec) == [] and webhook_conversion(spec)
    assert not webhook_conversion({"conversion": {"strategy": "None"}})
