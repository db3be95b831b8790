"""Python admission in process: `runtime.webhook.Webhook` descriptors run as steps of the admission chain,
answered as kube-apiserver answers the same webhooks served over HTTPS.

`python_steps(context, admission)` picks the `Webhook`s out of the
registry's `admission` (what `open_test_env(admission=...)` and `miniplane
serve --admission-module` hand it; `AdmissionPlugin`s stay the registry's)
and answers (mutating step, validating step), each None when it has no
webhook of its phase. Per webhook, in order, as kube's webhook dispatchers:
- matched as its configuration would be (`runtime.server.admission.matching`:
  the admissionregistration kinds exempt, rules with matchPolicy,
  namespace and object selectors), seen in the matched version;
- called with the AdmissionReview v1 kube would send (a new uid; `object`
  null on DELETE; a mutating one shown no name the registry generated)
  through `runtime.webhook.review.review`, the webhook server's own codec,
  bounded by its `timeout_seconds`;
- a denial raised as kube's `ToStatusErr` (`webhooks.review.denial`, the one
  copy): `admission webhook "<name>" denied the request: <message>` with its
  code (below 400: 400); warnings
  answered; audit annotations recorded as `<webhook name>/<key>`;
- a mutating webhook's JSON patch applied to the object (a patch that does
  not apply: kube's 500 InternalError); reinvocation as kube's
  `reinvocationPolicy: IfNeeded` (`request.state`, see `AdmissionChain`);
- a call past its timeout: failurePolicy Ignore skips it (audited as kube's
  `failed-open.<type>.webhook.admission.k8s.io/round_<r>_index_<i>`),
  Fail refuses with kube's 500 `failed calling webhook "<name>": ...`;
- each call counted under the webhook's name as kube counts a webhook's
  (`webhooks.calls.count`: duration, rejections, fail-open).
"""

from __future__ import annotations

import base64
import copy
import json
import uuid
from dataclasses import replace
from typing import Any, Iterable

import trio

from runtime.machinery import errors
from runtime.machinery.patch import apply_json_patch
from runtime.machinery.storedobject import StoredObject
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.matching import (
    Match, RequestFacts, admission_request, equivalent, internal_error, namespace_selector_matches,
    object_selector_matches,
)
from runtime.server.admission.webhooks.calls import count
from runtime.server.admission.webhooks.review import CallingWebhookError, WebhookRejection, denial
from runtime.server.kinds import AdmissionRequest
from runtime.webhook.configuration import webhook_entry
from runtime.webhook.review import review
from runtime.webhook.types import Webhook

__all__ = ["PythonWebhooks", "python_steps"]

#: `request.state`'s key for the reinvocation memory of the mutating step.
_STATE = "python-admission"


class PythonWebhooks:
    """The Python webhooks of one phase, as one step of the chain (see the module doc)."""

    def __init__(self, context: AdmissionContext, webhooks: Iterable[Webhook], *, mutating: bool) -> None:
        self.context = context
        self.mutating = mutating
        self.webhooks = tuple(w for w in webhooks if w.mutating is mutating)
        # A configuration's entry per webhook: what matching reads (the rules as the server would store them).
        self.entries = {w.name: webhook_entry(w, {}) for w in self.webhooks}
        self.name = "PythonMutatingAdmission" if mutating else "PythonValidatingAdmission"
        self._type = "mutation" if mutating else "validating"

    async def _match(self, webhook: Webhook, facts: RequestFacts, request: AdmissionRequest) -> Match | None:
        entry = self.entries[webhook.name]
        match = equivalent(facts, entry["rules"], self.context, entry["matchPolicy"])
        if match is None or not object_selector_matches(entry["objectSelector"], request):
            return None
        if not await namespace_selector_matches(entry["namespaceSelector"], facts, request, self.context):
            return None
        return match

    async def _call(self, webhook: Webhook, match: Match, request: AdmissionRequest,
                    index: int, round_: int) -> dict[str, Any] | None:
        """The webhook's response (None: failed open), counted as kube counts a webhook's call; raises for a
        failure under failurePolicy Fail."""
        obj = None if request.operation == "delete" else match.present(request.obj)
        if obj is not None and self.mutating and request.generated_name:
            # kube generates the name after mutating admission: such a webhook is shown none.
            obj = {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "name"}}
        body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": str(uuid.uuid4()), **admission_request(match, request), "object": obj,
            "oldObject": match.present(request.old)}}
        started = trio.current_time()
        response: dict[str, Any] | None = None
        with trio.move_on_after(webhook.timeout_seconds):
            response = (await review(webhook, body))["response"]
        outcome: Exception | None = None
        if response is None:
            # The dispatchers' code for a call that got no HTTP answer (`calls.call_hook`).
            outcome = CallingWebhookError(webhook.name, "context deadline exceeded", 503 if self.mutating else 400)
        elif not response.get("allowed"):
            outcome = WebhookRejection(denial(webhook.name, response.get("status")))
        count(self.context, webhook.name, webhook.failure_policy == "Ignore", "admit" if self.mutating else
              "validating", match.facts, outcome, trio.current_time() - started)
        if response is not None:
            return response
        if webhook.failure_policy == "Ignore":
            request.annotate(f"failed-open.{self._type}.webhook.admission.k8s.io/round_{round_}_index_{index}",
                             webhook.name)
            return None
        raise internal_error(outcome.message)

    def _answer(self, webhook: Webhook, response: dict[str, Any], request: AdmissionRequest) -> None:
        for warning in response.get("warnings") or ():
            request.warn(warning)
        for key, value in (response.get("auditAnnotations") or {}).items():
            request.annotate(f"{webhook.name}/{key}", value)
        if not response.get("allowed"):
            raise denial(webhook.name, response.get("status"))

    async def validate(self, request: AdmissionRequest) -> None:
        """Run each matching validating webhook; the first denial refuses."""
        facts = RequestFacts.of(request)
        if facts.exempt:
            return
        for index, webhook in enumerate(self.webhooks):
            match = await self._match(webhook, facts, request)
            if match is not None:
                response = await self._call(webhook, match, request, index, 0)
                if response is not None:
                    self._answer(webhook, response, request)

    async def mutate(self, request: AdmissionRequest) -> None:
        """Run each matching mutating webhook in order, applying its patch (reinvoked as kube's)."""
        facts = RequestFacts.of(request)
        if facts.exempt:
            return
        if request.generated_name:
            facts = replace(facts, name="")  # as the webhook dispatcher: no name before BeforeCreate
        reinvoking = bool(request.state.get("reinvoking"))
        memory = request.state.setdefault(_STATE, {"previously": set(), "reinvoke": set(), "last": None})
        if reinvoking and memory["last"] != request.obj:
            _require_reinvoking(memory)  # a later plug-in changed the object since these ran
        try:
            for index, webhook in enumerate(self.webhooks):
                if reinvoking and webhook.name not in memory["reinvoke"]:
                    continue
                match = await self._match(webhook, facts, request)
                if match is None:
                    continue
                response = await self._call(webhook, match, request, index, int(reinvoking))
                if response is None:
                    continue
                self._answer(webhook, response, request)
                if self._apply(response, match, request):
                    _require_reinvoking(memory)
                    request.state["reinvoke"] = True
                if webhook.reinvocation_policy == "IfNeeded":
                    memory["previously"].add(webhook.name)
        finally:
            memory["last"] = copy.deepcopy(request.obj)

    @staticmethod
    def _apply(response: dict[str, Any], match: Match, request: AdmissionRequest) -> bool:
        """Apply the response's JSON patch to `request.obj`; whether the object changed."""
        if not response.get("patch") or request.operation == "delete":
            return False
        if response.get("patchType") != "JSONPatch":
            raise internal_error(f'unsupported patch type "{response.get("patchType")}"')
        before = match.present(request.obj)
        try:
            after = apply_json_patch(before, json.loads(base64.b64decode(response["patch"])))
        except ValueError as exc:  # a PatchError, or a patch that is not JSON
            raise internal_error(str(exc)) from None
        if after == before:
            return False
        if match.equivalent and match.facts.rt.strategy.converts:
            after = match.facts.rt.strategy.present(StoredObject("", after, 0)).obj
        request.obj = after
        return True


def _require_reinvoking(memory: dict[str, Any]) -> None:
    """kube's `RequireReinvokingPreviouslyInvokedPlugins`: the IfNeeded webhooks that ran run again."""
    memory["reinvoke"] |= memory["previously"]
    memory["previously"] = set()


def python_steps(context: AdmissionContext,
                 admission: Iterable[object]) -> tuple[PythonWebhooks | None, PythonWebhooks | None]:
    """(mutating, validating) steps of the `Webhook`s in `admission` (None: no webhook of that phase)."""
    webhooks = [a for a in admission if isinstance(a, Webhook)]
    mutating = PythonWebhooks(context, webhooks, mutating=True)
    validating = PythonWebhooks(context, webhooks, mutating=False)
    return (mutating if mutating.webhooks else None), (validating if validating.webhooks else None)
