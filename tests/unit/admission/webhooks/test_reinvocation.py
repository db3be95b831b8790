"""reinvocationPolicy IfNeeded, as kube's `webhookReinvokeContext`: a webhook's change asks the chain for a second
round, in which only IfNeeded webhooks that ran before a change are called again, annotated as round 1."""

from __future__ import annotations

from typing import Any

from runtime.server.admission.webhooks import MutatingWebhooks
from tests.support.policy_fakes import request
from tests.support.webhook_fakes import allowing, configuration, hook_spec, patching, webhook_context


def _configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {}}


def _by_url(context: Any, answers: dict[str, Any]) -> None:
    client = context.webhook_client
    client.answer = lambda review: answers[client.sent[-1][0]["url"]](review)


def _called(context: Any) -> list[str]:
    return [config["url"].split("/")[2] for config, _, _ in context.webhook_client.sent]


async def _two_rounds(context: Any) -> Any:
    step, req = MutatingWebhooks(context), request(_configmap())
    await step.mutate(req)
    if req.state.get("reinvoke"):
        req.state["reinvoking"] = True  # what AdmissionChain does for the second round
        await step.mutate(req)
    return req


async def test_an_if_needed_webhook_is_called_again_after_a_later_webhooks_change():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg",
                                            hook_spec("first", reinvocationPolicy="IfNeeded"), hook_spec("second")),
                              answer=allowing())
    _by_url(context, {"https://first/hook": allowing(),
                      "https://second/hook": patching([{"op": "add", "path": "/data/x", "value": "1"}])})
    req = await _two_rounds(context)
    assert _called(context) == ["first", "second", "first"]
    assert "mutation.webhook.admission.k8s.io/round_1_index_0" in req.audit_annotations


async def test_a_never_webhook_is_not_called_again():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg", hook_spec("first"),
                                            hook_spec("second")), answer=allowing())
    _by_url(context, {"https://first/hook": allowing(),
                      "https://second/hook": patching([{"op": "add", "path": "/data/x", "value": "1"}])})
    await _two_rounds(context)
    assert _called(context) == ["first", "second"]


async def test_no_change_asks_for_no_second_round():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg",
                                            hook_spec("first", reinvocationPolicy="IfNeeded")), answer=allowing())
    req = await _two_rounds(context)
    assert "reinvoke" not in req.state and _called(context) == ["first"]


async def test_a_webhook_whose_own_change_is_the_last_is_not_called_again():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg",
                                            hook_spec("first", reinvocationPolicy="IfNeeded")),
                              answer=patching([{"op": "add", "path": "/data/x", "value": "1"}]))
    await _two_rounds(context)
    assert _called(context) == ["first"]


async def test_another_plugins_change_between_rounds_reinvokes_the_if_needed_webhooks():
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg",
                                            hook_spec("first", reinvocationPolicy="IfNeeded")), answer=allowing())
    step, req = MutatingWebhooks(context), request(_configmap())
    await step.mutate(req)
    req.obj = {**req.obj, "data": {"by": "a policy"}}
    req.state["reinvoking"] = True
    await step.mutate(req)
    assert _called(context) == ["first", "first"]
