"""A webhook's matchConditions see kube's `authorizer` and `authorizer.requestResource` (webhook
matchconditions are compiled with the authorizer library): a condition can skip the call by what the
requester may do."""

from __future__ import annotations

from typing import Any

from runtime.server.admission.webhooks import ValidatingWebhooks
from tests.support.policy_fakes import FakeContext, request
from tests.support.webhook_fakes import allowing, configuration, hook_spec, webhook_context

SKIP_ADMINS = {"name": "not-an-admin",
               "expression": "!authorizer.group('').resource('secrets').namespace('ns').check('delete').allowed()"}
OWN_RESOURCE = {"name": "may-update-it", "expression": "authorizer.requestResource.check('update').allowed()"}


def _configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}


def _context(condition: dict[str, Any], allow: Any) -> tuple[FakeContext, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    answer = allowing()

    def recording(review: dict[str, Any]) -> Any:
        calls.append(review)
        return answer(review)

    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg",
                                            hook_spec("a", matchConditions=[condition])), answer=recording)
    context.allow = allow
    return context, calls


async def test_a_match_condition_asks_the_authorizer_about_the_requester():
    context, calls = _context(SKIP_ADMINS, lambda attrs: attrs.verb == "delete" and attrs.resource == "secrets")
    await ValidatingWebhooks(context).validate(request(_configmap()))
    assert calls == []  # alice may delete secrets: the condition is false, the webhook is not called
    asked = context.asked[-1]
    assert (asked.user.name, asked.verb, asked.resource, asked.namespace) == ("alice", "delete", "secrets", "ns")
    context, calls = _context(SKIP_ADMINS, lambda attrs: False)
    await ValidatingWebhooks(context).validate(request(_configmap()))
    assert len(calls) == 1


async def test_authorizer_request_resource_is_the_requests_own_resource():
    context, calls = _context(OWN_RESOURCE, lambda attrs: True)
    await ValidatingWebhooks(context).validate(request(_configmap()))
    asked = context.asked[-1]
    assert (asked.verb, asked.api_group, asked.resource, asked.namespace, asked.name) == (
        "update", "", "configmaps", "ns", "c")
    assert len(calls) == 1
