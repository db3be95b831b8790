"""Admission webhook configurations and reviewers for the webhook tests (tests/api/test_admission_webhooks*.py,
tests/e2e/test_kubectl_admission.py): a configuration object per webhook kind, and handlers for
`tests.support.webhookserver` that allow, deny or patch an AdmissionReview as a real webhook answers.

Contract: `validating_configuration(name, *webhooks)` / `mutating_configuration(...)` are
admissionregistration.k8s.io/v1 objects; `webhook(name, client_config, **fields)` one webhook matching
every operation on `resources` (default configmaps) of the core group. `allow(...)`, `deny(...)` and
`patch(...)` make handlers answering a v1 AdmissionReview with the request's uid (warnings, audit
annotations, a JSON patch). `reviews(server)` are the review requests a server got.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Awaitable, Callable

from tests.support.webhookserver import WebhookRequest, WebhookServer

__all__ = ["ADMISSION", "validating_configuration", "mutating_configuration", "webhook", "answer", "allow", "deny",
           "patch", "reviews", "CONFIGURATIONS"]

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CONFIGURATIONS = {"ValidatingWebhookConfiguration": f"{ADMISSION}/validatingwebhookconfigurations",
                  "MutatingWebhookConfiguration": f"{ADMISSION}/mutatingwebhookconfigurations"}

Handler = Callable[[WebhookRequest], Awaitable[Any]]


def webhook(name: str, client_config: dict[str, Any], *, resources: tuple[str, ...] = ("configmaps",),
            groups: tuple[str, ...] = ("",), operations: tuple[str, ...] = ("*",), **fields: Any) -> dict[str, Any]:
    return {"name": name, "clientConfig": client_config,
            "rules": [{"operations": list(operations), "apiGroups": list(groups), "apiVersions": ["*"],
                       "resources": list(resources)}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], **fields}


def _configuration(kind: str, name: str, webhooks: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": list(webhooks)}


def validating_configuration(name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return _configuration("ValidatingWebhookConfiguration", name, webhooks)


def mutating_configuration(name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return _configuration("MutatingWebhookConfiguration", name, webhooks)


def answer(request: WebhookRequest, **response: Any) -> dict[str, Any]:
    """A v1 AdmissionReview answering `request` (its uid) with `response`'s fields."""
    uid = request.json()["request"]["uid"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": uid, **response}}


def allow(**response: Any) -> Handler:
    async def handler(request: WebhookRequest) -> dict[str, Any]:
        return answer(request, allowed=True, **response)
    return handler


def deny(message: str = "", code: int | None = None, **response: Any) -> Handler:
    status: dict[str, Any] = {"message": message} if message else {}
    if code is not None:
        status["code"] = code

    async def handler(request: WebhookRequest) -> dict[str, Any]:
        return answer(request, allowed=False, status=status, **response)
    return handler


def patch(operations: list[dict[str, Any]] | Callable[[dict[str, Any]], list[dict[str, Any]]]) -> Handler:
    """Allow with a JSONPatch: `operations`, or what a function of the review's object answers."""
    async def handler(request: WebhookRequest) -> dict[str, Any]:
        ops = operations(request.json()["request"]["object"]) if callable(operations) else operations
        encoded = base64.b64encode(json.dumps(ops).encode()).decode()
        return answer(request, allowed=True, patchType="JSONPatch", patch=encoded)
    return handler


def reviews(server: WebhookServer) -> list[dict[str, Any]]:
    return [r.json() for r in server.requests]
