"""Webhook configuration objects for `Webhook` descriptors, and writing them through a client.

`webhook_entry(webhook, client_config)` is the descriptor as one webhook of
a `ValidatingWebhookConfiguration` or `MutatingWebhookConfiguration`
(admissionregistration/v1's JSON form): name, clientConfig, rules,
failurePolicy, matchPolicy, namespaceSelector, objectSelector, sideEffects,
timeoutSeconds, admissionReviewVersions (v1, v1beta1) and, for a mutating
one, reinvocationPolicy.

`register(client, webhooks, name=, client_config=)` creates or replaces the
configuration objects called `name` (a validating one holding the
validating webhooks, a mutating one the mutating webhooks; a kind with none
is left alone), as kopf's managed webhook configuration: the API server
then calls the webhooks as any other. `client_config(webhook)` gives each
its `clientConfig`. The kinds are the client's scheme's
(`admissionregistration.<domain>/v1`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from runtime.client.interface import Client
from runtime.machinery import errors
from runtime.models.k8s.admissionregistration_v1 import (
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
)
from runtime.webhook.review import REVIEW_VERSIONS
from runtime.webhook.types import Webhook

__all__ = ["webhook_entry", "register"]


def webhook_entry(webhook: Webhook, client_config: dict[str, Any]) -> dict[str, Any]:
    """`webhook` as a webhook configuration's entry, called at `client_config`."""
    entry: dict[str, Any] = {
        "name": webhook.name,
        "clientConfig": client_config,
        "rules": [rule.to_dict() for rule in webhook.rules],
        "failurePolicy": webhook.failure_policy,
        "matchPolicy": webhook.match_policy,
        "namespaceSelector": dict(webhook.namespace_selector or {}),
        "objectSelector": dict(webhook.object_selector or {}),
        "sideEffects": webhook.side_effects,
        "timeoutSeconds": webhook.timeout_seconds,
        "admissionReviewVersions": [v.rpartition("/")[2] for v in REVIEW_VERSIONS],
    }
    if webhook.mutating:
        entry["reinvocationPolicy"] = webhook.reinvocation_policy
    return entry


async def register(client: Client, webhooks: Sequence[Webhook], *, name: str,
                   client_config: Callable[[Webhook], dict[str, Any]]) -> list[dict[str, Any]]:
    """Create or replace the configurations `name` for `webhooks` (see the module doc); returns the objects
    as stored. Raises what the client raises (e.g. Invalid for a configuration the server refuses)."""
    stored = []
    for model, mutating in ((ValidatingWebhookConfiguration, False), (MutatingWebhookConfiguration, True)):
        mine = [w for w in webhooks if w.mutating is mutating]
        if not mine:
            continue
        rt = client.resource(model)
        obj: dict[str, Any] = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": name},
                               "webhooks": [webhook_entry(w, client_config(w)) for w in mine]}
        try:
            current = await client.get(rt, name)
        except errors.NotFound:
            stored.append(await client.create(obj))
            continue
        obj["metadata"] = {**current["metadata"], "name": name}
        stored.append(await client.update(obj))
    return stored
