"""The author's descriptors (`runtime.webhook.types`): each refuses what the API server would refuse in a
webhook configuration, and answers carry controller-runtime's defaults."""

from __future__ import annotations

import pytest

from runtime.webhook import Allowed, Denied, Patch, Request, Rule, Webhook

PODS = Rule(["pods"])


async def _allow(request: Request) -> Allowed:
    return Allowed()


def test_webhook_name_needs_three_segments():
    with pytest.raises(ValueError, match="should be a domain with at least three segments separated by dots"):
        Webhook("deny.example", _allow, rules=[PODS])


def test_webhook_name_is_a_dns_subdomain():
    with pytest.raises(ValueError, match="is not a DNS-1123 subdomain"):
        Webhook("Deny.example.com", _allow, rules=[PODS])


@pytest.mark.parametrize("field,value", [("failure_policy", "Sometimes"), ("side_effects", "Some"),
                                         ("match_policy", "Loose")])
def test_webhook_policies_take_v1_values_only(field, value):
    with pytest.raises(ValueError, match=f"{field} '{value}' is not one of"):
        Webhook("a.example.com", _allow, rules=[PODS], **{field: value})


@pytest.mark.parametrize("seconds", [0, 31])
def test_webhook_timeout_is_between_1_and_30_seconds(seconds):
    with pytest.raises(ValueError, match="between 1 and 30"):
        Webhook("a.example.com", _allow, rules=[PODS], timeout_seconds=seconds)


def test_reinvocation_policy_is_a_mutating_webhooks():
    with pytest.raises(ValueError, match="mutating"):
        Webhook("a.example.com", _allow, rules=[PODS], reinvocation_policy="IfNeeded")
    assert Webhook("a.example.com", _allow, rules=[PODS], mutating=True,
                   reinvocation_policy="IfNeeded").reinvocation_policy == "IfNeeded"


def test_webhook_admits_by_at_least_one_rule():
    with pytest.raises(ValueError, match="at least one rule"):
        Webhook("a.example.com", _allow, rules=[])


def test_webhook_defaults_are_a_configurations():
    hook = Webhook("a.example.com", _allow, rules=[PODS])
    assert (hook.failure_policy, hook.side_effects, hook.timeout_seconds, hook.match_policy,
            hook.reinvocation_policy) == ("Fail", "None", 10, "Equivalent", "Never")


def test_served_path_defaults_by_kind_of_webhook():
    assert Webhook("a.example.com", _allow, rules=[PODS]).served_path == "/validate/a.example.com"
    assert Webhook("a.example.com", _allow, rules=[PODS], mutating=True).served_path == "/mutate/a.example.com"
    assert Webhook("a.example.com", _allow, rules=[PODS], path="/x").served_path == "/x"
    with pytest.raises(ValueError, match="does not start with /"):
        Webhook("a.example.com", _allow, rules=[PODS], path="x")


def test_rule_operations_are_admissionregistrations():
    with pytest.raises(ValueError, match="operation 'create' is not one of"):
        Rule(["pods"], operations=["create"])


def test_rule_scope_is_star_cluster_or_namespaced():
    with pytest.raises(ValueError, match="scope 'Global'"):
        Rule(["pods"], scope="Global")


def test_rule_in_json_form():
    assert Rule(["pods", "pods/status"], operations=["CREATE"], api_groups=[""], api_versions=["v1"],
                scope="Namespaced").to_dict() == {
        "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods", "pods/status"],
        "scope": "Namespaced"}


def test_denied_defaults_to_403_forbidden():
    assert Denied("no").status() == {"code": 403, "reason": "Forbidden", "message": "no"}


def test_denied_reason_follows_its_code():
    assert Denied("bad", code=422).status()["reason"] == "Invalid"
    assert Denied("bad", code=400, reason="Custom").status()["reason"] == "Custom"


def test_patch_takes_exactly_one_of_operations_and_object():
    with pytest.raises(ValueError, match="exactly one"):
        Patch()
    with pytest.raises(ValueError, match="exactly one"):
        Patch(operations=[], object={})
