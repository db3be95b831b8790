"""In-process Python admission is counted as kube counts a webhook, under the webhook's name:
`apiserver_admission_webhook_admission_duration_seconds` per call, `apiserver_admission_webhook_rejection_count`
per refusal (a denial: no_error with its code; a timeout under Fail: calling_webhook_error)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from runtime.machinery import errors
from runtime.server.admission.python import python_steps
from runtime.webhook import Webhook
from tests.support.policy_fakes import FakeContext, request
from tests.support.python_admission import ALWAYS_PATCH, DENIED_CODE, DENY_LABELLED, STAMP_WEBHOOK

DURATION = "apiserver_admission_webhook_admission_duration_seconds_count"
REJECTIONS = "apiserver_admission_webhook_rejection_count"


def _configmap(**labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns", "labels": labels}}


async def _validate(context: FakeContext, webhook: Webhook, obj: dict[str, Any]) -> None:
    _, validating = python_steps(context, [webhook])
    assert validating is not None
    await validating.validate(request(obj))


async def test_an_allowed_call_is_timed_under_the_webhooks_name_as_not_rejected():
    context = FakeContext()
    await _validate(context, DENY_LABELLED, _configmap())
    assert context.admission_metrics.sample(DURATION, {"name": DENY_LABELLED.name, "type": "validating",
                                                       "operation": "CREATE", "rejected": "false"}) == 1


async def test_a_denial_is_a_rejection_with_its_code():
    context = FakeContext()
    with pytest.raises(errors.StatusError):
        await _validate(context, DENY_LABELLED, _configmap(deny="yes"))
    metrics = context.admission_metrics
    assert metrics.sample(REJECTIONS, {"name": DENY_LABELLED.name, "type": "validating", "operation": "CREATE",
                                       "error_type": "no_error", "rejection_code": str(DENIED_CODE)}) == 1
    assert metrics.sample(DURATION, {"name": DENY_LABELLED.name, "type": "validating", "operation": "CREATE",
                                     "rejected": "true"}) == 1


async def test_a_mutating_webhooks_call_is_counted_as_admit():
    context = FakeContext()
    mutating, _ = python_steps(context, [STAMP_WEBHOOK, ALWAYS_PATCH])
    assert mutating is not None
    await mutating.mutate(request(_configmap()))
    for name in (STAMP_WEBHOOK.name, ALWAYS_PATCH.name):
        assert context.admission_metrics.sample(DURATION, {"name": name, "type": "admit", "operation": "CREATE",
                                                           "rejected": "false"}) == 1


async def _hangs(req: Any) -> Any:
    await trio.sleep_forever()


async def test_a_timeout_under_fail_is_a_calling_webhook_error_rejection(autojump_clock):
    context = FakeContext()
    slow = Webhook("slow.example.com", _hangs, rules=DENY_LABELLED.rules, timeout_seconds=1)
    with pytest.raises(errors.StatusError):
        await _validate(context, slow, _configmap())
    assert context.admission_metrics.sample(REJECTIONS, {
        "name": "slow.example.com", "type": "validating", "operation": "CREATE",
        "error_type": "calling_webhook_error", "rejection_code": "400"}) == 1


async def test_a_timeout_under_ignore_is_counted_as_failed_open(autojump_clock):
    context = FakeContext()
    slow = Webhook("slow.example.com", _hangs, rules=DENY_LABELLED.rules, timeout_seconds=1, failure_policy="Ignore")
    await _validate(context, slow, _configmap())
    assert context.admission_metrics.sample("apiserver_admission_webhook_fail_open_count",
                                            {"name": "slow.example.com", "type": "validating"}) == 1
