"""A webhook client stand-in for the webhook dispatcher unit tests (tests/unit/admission/webhooks/): each POST is
recorded and answered by a function of the AdmissionReview sent, with no HTTP.

Contract: `FakeWebhookClient(answer)` has the `post_json(client_config, review, timeout=)` of
`runtime.server.admission.webhookclient.WebhookClient`; `answer(review)` returns the decoded answer or raises
`WebhookCallError`. `sent` lists (client_config, review, timeout) per call. `webhook_context(*configurations,
answer=)` is a `tests.support.policy_fakes.FakeContext` holding the configurations, with that client.
`allowing(**response)`, `denying(status)`, `patching(operations)` make answers echoing the review's uid.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable

from tests.support.policy_fakes import AR, FakeContext

__all__ = ["FakeWebhookClient", "webhook_context", "allowing", "denying", "patching", "configuration", "hook_spec"]

Answer = Callable[[dict[str, Any]], Any]


class FakeWebhookClient:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.sent: list[tuple[dict[str, Any], dict[str, Any], float]] = []

    async def post_json(self, client_config: dict[str, Any], payload: Any, *, timeout: float) -> Any:
        self.sent.append((client_config, payload, timeout))
        return self.answer(payload)


def webhook_context(*configurations: dict[str, Any], answer: Answer) -> FakeContext:
    context = FakeContext(*configurations)
    context.webhook_client = FakeWebhookClient(answer)  # type: ignore[attr-defined]
    return context


def _reply(review: dict[str, Any], **response: Any) -> dict[str, Any]:
    return {"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], **response}}


def allowing(**response: Any) -> Answer:
    return lambda review: _reply(review, allowed=True, **response)


def denying(status: dict[str, Any] | None = None, **response: Any) -> Answer:
    return lambda review: _reply(review, allowed=False, status=status, **response)


def patching(operations: list[dict[str, Any]], **response: Any) -> Answer:
    patch = base64.b64encode(json.dumps(operations).encode()).decode()
    return lambda review: _reply(review, allowed=True, patch=patch, patchType="JSONPatch", **response)


def hook_spec(name: str, **fields: Any) -> dict[str, Any]:
    """A webhook on every write of configmaps."""
    return {"name": name, "clientConfig": {"url": f"https://{name}/hook"},
            "rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], **fields}


def configuration(kind: str, name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    """A Validating- or MutatingWebhookConfiguration (`kind`) of `webhooks`."""
    return {"apiVersion": AR, "kind": kind, "metadata": {"name": name}, "webhooks": list(webhooks)}
