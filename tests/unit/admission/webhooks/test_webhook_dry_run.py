"""A dry-run request and a webhook's sideEffects, as kube's dispatchers: None and NoneOnDryRun are called with
dryRun true; Some and Unknown refuse the request with kube's 400 without a call."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.machinery import errors
from runtime.server.admission.webhooks import MutatingWebhooks, ValidatingWebhooks
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo
from tests.support.policy_fakes import SCHEME
from tests.support.webhook_fakes import allowing, configuration, hook_spec, webhook_context


def _dry_run_create() -> AdmissionRequest:
    rt = SCHEME.by_api_version_kind("v1", "ConfigMap")
    assert rt is not None
    return AdmissionRequest(UserInfo("alice"), rt, "create",
                            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}},
                            None, True)


@pytest.mark.parametrize("side_effects", ["None", "NoneOnDryRun"])
async def test_a_dry_run_calls_webhooks_without_side_effects_with_dry_run_true(side_effects):
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg",
                                            hook_spec("a", sideEffects=side_effects)), answer=allowing())
    await ValidatingWebhooks(context).validate(_dry_run_create())
    [(_, review, _)] = context.webhook_client.sent
    assert review["request"]["dryRun"] is True


@pytest.mark.parametrize("kind", ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"])
@pytest.mark.parametrize("side_effects", ["Some", "Unknown"])
async def test_a_dry_run_to_a_webhook_with_side_effects_is_kubes_400_without_a_call(kind, side_effects):
    context = webhook_context(configuration(kind, "cfg", hook_spec("a", sideEffects=side_effects)),
                              answer=allowing())
    step = ValidatingWebhooks(context) if kind.startswith("Validating") else MutatingWebhooks(context)
    with pytest.raises(errors.StatusError) as caught:
        await (step.validate(_dry_run_create()) if kind.startswith("Validating") else step.mutate(_dry_run_create()))
    assert (caught.value.code, caught.value.message) == (400, 'admission webhook "a" does not support dry run')
    assert context.webhook_client.sent == []


async def test_a_dry_run_to_a_webhook_with_side_effects_under_ignore_is_still_refused():
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg",
                                            hook_spec("a", sideEffects="Some", failurePolicy="Ignore")),
                              answer=allowing())
    with pytest.raises(errors.StatusError) as caught:
        await ValidatingWebhooks(context).validate(_dry_run_create())
    assert caught.value.code == 400
