"""A failed webhook call under its failurePolicy, as kube's dispatchers: Fail refuses with kube's 500, Ignore lets
the request through with the failed-open audit annotation; a denial is never a failure."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.machinery import errors
from runtime.server.admission.webhookclient import WebhookCallError
from runtime.server.admission.webhooks import MutatingWebhooks, ValidatingWebhooks
from tests.support.policy_fakes import request
from tests.support.webhook_fakes import allowing, configuration, denying, hook_spec, webhook_context

VALIDATING, MUTATING = "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"


def _configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}


def _refusing(review: dict[str, Any]) -> Any:
    raise WebhookCallError('Post "https://a/hook": dial tcp: connect: connection refused')


def _step(kind: str, context: Any) -> Any:
    return ValidatingWebhooks(context) if kind == VALIDATING else MutatingWebhooks(context)


async def _admit(step: Any, req: Any) -> None:
    await (step.validate(req) if isinstance(step, ValidatingWebhooks) else step.mutate(req))


@pytest.mark.parametrize("kind", [VALIDATING, MUTATING])
async def test_a_failed_call_under_fail_is_kubes_500_naming_the_webhook(kind):
    context = webhook_context(configuration(kind, "cfg", hook_spec("a", failurePolicy="Fail")), answer=_refusing)
    with pytest.raises(errors.StatusError) as caught:
        await _admit(_step(kind, context), request(_configmap()))
    assert caught.value.code == 500
    assert caught.value.message == ('Internal error occurred: failed calling webhook "a": failed to call webhook: '
                                    'Post "https://a/hook": dial tcp: connect: connection refused')


@pytest.mark.parametrize("kind,key", [(VALIDATING, "failed-open.validating.webhook.admission.k8s.io/round_0_index_0"),
                                      (MUTATING, "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0")])
async def test_a_failed_call_under_ignore_passes_with_the_failed_open_annotation(kind, key):
    context = webhook_context(configuration(kind, "cfg", hook_spec("a", failurePolicy="Ignore")), answer=_refusing)
    req = request(_configmap())
    await _admit(_step(kind, context), req)
    assert req.audit_annotations[key] == "a"
    assert context.admission_metrics.sample("apiserver_admission_webhook_fail_open_count",
                                            {"name": "a", "type": "validating" if kind == VALIDATING else "admit"}) == 1


async def test_a_failed_open_validating_webhook_is_numbered_among_the_webhooks_called():
    context = webhook_context(configuration(VALIDATING, "cfg", hook_spec("ok"), hook_spec("a", failurePolicy="Ignore")),
                              answer=allowing())
    client = context.webhook_client  # the last POST's target says which webhook answers
    client.answer = lambda review: (_refusing(review) if client.sent[-1][0]["url"] == "https://a/hook"
                                    else allowing()(review))
    req = request(_configmap())
    await ValidatingWebhooks(context).validate(req)
    assert req.audit_annotations == {"failed-open.validating.webhook.admission.k8s.io/round_0_index_1": "a"}


async def test_the_default_failure_policy_is_fail():
    context = webhook_context(configuration(VALIDATING, "cfg", hook_spec("a")), answer=_refusing)
    with pytest.raises(errors.StatusError) as caught:
        await ValidatingWebhooks(context).validate(request(_configmap()))
    assert caught.value.code == 500


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_a_denial_refuses_under_either_failure_policy(policy):
    context = webhook_context(configuration(VALIDATING, "cfg", hook_spec("a", failurePolicy=policy)),
                              answer=denying({"message": "no", "code": 403}))
    with pytest.raises(errors.StatusError) as caught:
        await ValidatingWebhooks(context).validate(request(_configmap()))
    assert (caught.value.code, caught.value.message) == (403, 'admission webhook "a" denied the request: no')


async def test_an_invalid_answer_under_ignore_passes_too():
    context = webhook_context(configuration(VALIDATING, "cfg", hook_spec("a", failurePolicy="Ignore")),
                              answer=lambda review: {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                                     "response": {"uid": "other", "allowed": False}})
    req = request(_configmap())
    await ValidatingWebhooks(context).validate(req)
    assert "failed-open.validating.webhook.admission.k8s.io/round_0_index_0" in req.audit_annotations
