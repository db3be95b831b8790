"""With no webhook configuration stored (or none that matches), the webhook steps cost a write nothing that grows
with the store: no AdmissionReview is built, no webhook is called, and the steps make the same few Python calls
whether the store holds ten objects or two hundred (counted, never timed)."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.server.admission.webhooks import MutatingWebhooks, ValidatingWebhooks, calls
from runtime.server.kinds import AdmissionRequest
from runtime.server.rbac.user import UserInfo
from tests.support.callcount import count_calls
from tests.support.webhook_fakes import configuration, hook_spec

#: Python calls of both webhook steps for one write with no configuration (measured: 7, a lookup each and
#: their frames), with a margin: work added per request for stores without webhooks fails here.
MAX_CALLS_WITHOUT_CONFIGURATIONS = 12


def _configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def _webhook_steps(env: Any) -> list[Any]:
    chain = env.registry.admission_chain
    return [s for s in (*chain.mutating, *chain.validating) if isinstance(s, (MutatingWebhooks, ValidatingWebhooks))]


async def _steps_calls(env: Any, name: str) -> int:
    """Python calls of the webhook steps admitting one ConfigMap create."""
    rt = env.scheme.by_api_version_kind("v1", "ConfigMap")
    request = AdmissionRequest(UserInfo("alice"), rt, "create", _configmap(name), None, False)
    steps = _webhook_steps(env)
    assert len(steps) == 2

    async def admit() -> None:
        for step in steps:
            await (step.mutate(request) if isinstance(step, MutatingWebhooks) else step.validate(request))
    await admit()  # warm: the steps find their kind caches once
    return (await count_calls(admit)).calls


async def test_a_write_without_configurations_builds_no_review_and_calls_no_webhook(monkeypatch):
    built: list[Any] = []
    posted: list[Any] = []
    real = calls.create_review
    monkeypatch.setattr(calls, "create_review", lambda *a: built.append(a) or real(*a))
    async with open_test_env(controllers=False) as env:
        async def post_json(*a: Any, **kw: Any) -> Any:
            posted.append(a)
        monkeypatch.setattr(env.registry.webhook_client, "post_json", post_json)
        for i in range(3):
            await env.client.create(_configmap(f"c{i}"))
    assert (built, posted) == ([], [])


@pytest.mark.parametrize("configured", [False, True], ids=["no configuration", "one matching nothing"])
async def test_the_webhook_steps_cost_the_same_whatever_the_store_holds(configured):
    async with open_test_env(controllers=False) as env:
        if configured:
            secrets_only = hook_spec("s.example.com")
            secrets_only["rules"][0]["resources"] = ["secrets"]
            config = configuration("ValidatingWebhookConfiguration", "cfg", secrets_only)
            config["apiVersion"] = f"admissionregistration.{env.scheme.domain}/v1"
            await env.client.create(config)
        for i in range(10):
            await env.client.create(_configmap(f"small{i}"))
        small = await _steps_calls(env, "probe-a")
        for i in range(190):
            await env.client.create(_configmap(f"large{i}"))
        large = await _steps_calls(env, "probe-b")
    assert large == small, (small, large)
    if not configured:
        assert small <= MAX_CALLS_WITHOUT_CONFIGURATIONS, small
