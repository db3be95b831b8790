"""The ValidatingAdmissionWebhook step: every matching validating webhook called at once, as
kube-apiserver's `webhook/validating` dispatcher.

`ValidatingWebhooks(context).validate(request)`, after the kind's own
validation: the webhooks (`HookSource`, kube's order) that match the request
(`calls.should_call`; the admissionregistration kinds are never sent) are
called concurrently, each seeing the request in the version it matched.
When all have answered: the first refusal in webhook order is the answer
(a denial's StatusError; a failed call under failurePolicy Fail: kube's 500
`Internal error occurred: failed calling webhook "x": ...`; a dry-run
request to a webhook with side effects: 400). A failed call under Ignore
lets the request through, with kube's
`failed-open.validating.webhook.admission.k8s.io/round_0_index_<i>`
audit annotation (i counting the webhooks called). Warnings gathered so far travel with a refusal.
"""

from __future__ import annotations

from typing import Any

import trio

from runtime.machinery import errors
from runtime.models import catalog
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.matching import Match, RequestFacts, internal_error
from runtime.server.admission.webhooks.calls import call_hook, count, failed_open_key, should_call, with_warnings
from runtime.server.admission.webhooks.hooks import Hook, HookSource
from runtime.server.admission.webhooks.review import CallingWebhookError, WebhookRejection
from runtime.server.kinds import AdmissionRequest

__all__ = ["ValidatingWebhooks"]


class ValidatingWebhooks:
    """kube's ValidatingAdmissionWebhook plug-in (see the module doc)."""

    name = "ValidatingAdmissionWebhook"

    def __init__(self, context: AdmissionContext) -> None:
        self.context = context
        self.source = HookSource(context, catalog.VALIDATING_WEBHOOK_CONFIGURATION)

    async def validate(self, request: AdmissionRequest) -> None:
        hooks = self.source.hooks()
        if not hooks:
            return
        facts = RequestFacts.of(request)
        if facts.exempt:
            return
        relevant: list[tuple[Hook, Match]] = []
        for hook in hooks:
            match = await should_call(self.context, hook, facts, request)
            if match is not None:
                relevant.append((hook, match))
        if not relevant:
            return
        # The request as each matched version shows it, made once per version (kube's versionedAttrs).
        versions: dict[Any, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}
        for _, match in relevant:
            if match.kind not in versions:
                obj = None if request.operation == "delete" else match.present(request.obj)
                versions[match.kind] = (obj, match.present(request.old))
        outcomes: list[BaseException | None] = [None] * len(relevant)

        async def call(i: int, hook: Hook, match: Match) -> None:
            started = trio.current_time()
            obj, old = versions[match.kind]
            try:
                await call_hook(self.context, hook, match, request, obj, old, mutating=False)
            except (CallingWebhookError, WebhookRejection, errors.StatusError) as exc:
                outcomes[i] = exc
            count(self.context, hook.name, hook.ignores_failures, "validating", facts, outcomes[i],
                  trio.current_time() - started)

        async with trio.open_nursery() as nursery:
            for i, (hook, match) in enumerate(relevant):
                nursery.start_soon(call, i, hook, match)
        refusal: errors.StatusError | None = None
        for i, ((hook, _), outcome) in enumerate(zip(relevant, outcomes)):
            if outcome is None:
                continue
            if isinstance(outcome, CallingWebhookError):
                if hook.ignores_failures:
                    # kube numbers the webhooks called here, not all of them.
                    request.annotate(failed_open_key("validating", 0, i), hook.name)
                    continue
                found = internal_error(outcome.message)
            elif isinstance(outcome, WebhookRejection):
                found = outcome.status
            else:
                found = outcome
            refusal = refusal or found
        if refusal is not None:
            raise with_warnings(refusal, request)
