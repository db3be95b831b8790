"""The MutatingAdmissionWebhook step: matching mutating webhooks called one after another, their
JSON patches applied, reinvoked as kube-apiserver's `webhook/mutating` dispatcher.

`MutatingWebhooks(context).mutate(request)`, before the kind's validation:
each webhook (`HookSource`, kube's order) that matches the request
(`calls.should_call`; the admissionregistration kinds are never sent) is
called with the object as its matched version shows it (on CREATE without
the uid the registry set early: kube fills it after mutating admission; nor
a name the registry generated from generateName, with no request name:
kube generates it in BeforeCreate, after mutating admission).
An answer's `JSONPatch` (base64) is applied with the project's RFC 6902
engine to that object, which is then decoded as its kind (unknown fields
dropped, as kube's typed decoder) and defaulted again, and becomes the
request's object (in the version the request holds it). A failed patch is
kube's 500; a patch of a DELETE's (absent) object too.

Reinvocation (`reinvocationPolicy: IfNeeded`), as kube's
`webhookReinvokeContext`: a webhook whose patch changed the object asks the
chain for a second round (`request.state["reinvoke"]`), in which only
webhooks with IfNeeded that ran before a change (of a later webhook, or of
another plug-in since the webhooks last ran) are called again.

Audit annotations (kube's): `mutation.webhook.admission.k8s.io/round_<r>_index_<i>`
`{"configuration":..,"webhook":..,"mutated":..}` for each call,
`patch.webhook.admission.k8s.io/round_<r>_index_<i>` with the patch for each
applied, `failed-open.mutation.webhook.admission.k8s.io/...` for a failed
call under failurePolicy Ignore (i: the webhook's position among all).
Refusals as the validating step's, at the first one (calls are serial).

The patch annotation reaches the audit event only at level Request and up
(kube's `AddAnnotationWithLevel(..., LevelRequest)`).

Caveats: an object held in a version its
kind's `VersionConverter` cannot produce (a HorizontalPodAutoscaler update
through autoscaling/v1 patched by a webhook: the update holds the v2
object) is given back with its apiVersion only rewritten.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import trio

from runtime.machinery import errors
from runtime.machinery.options import Body
from runtime.machinery.patch import PatchError, apply_json_patch
from runtime.machinery.storedobject import StoredObject, copy_json
from runtime.models import catalog
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.matching import Match, RequestFacts, internal_error
from runtime.server.admission.webhooks.calls import call_hook, count, failed_open_key, should_call, with_warnings
from runtime.server.admission.webhooks.hooks import Hook, HookSource
from runtime.server.admission.webhooks.review import CallingWebhookError, WebhookRejection, denial
from runtime.server.kinds import AdmissionRequest

__all__ = ["MutatingWebhooks"]

_STATE = "MutatingAdmissionWebhook"


class _Reinvocation:
    """kube's webhookReinvokeContext: which webhooks a second round calls again."""

    def __init__(self) -> None:
        self.last_output: Any = None
        self.previously_invoked: set[str] = set()
        self.reinvoke: set[str] = set()

    def require_reinvoking_previous(self) -> None:
        self.reinvoke |= self.previously_invoked
        self.previously_invoked = set()


def _same(a: Any, b: Any) -> bool:
    """JSON equality (kube's semantic DeepEqual of the decoded objects): 1 is not true, key order ignored."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _go_json(value: Any) -> str:
    """Go's json.Marshal: compact, map keys sorted, <, > and & escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class MutatingWebhooks:
    """kube's MutatingAdmissionWebhook plug-in (see the module doc)."""

    name = "MutatingAdmissionWebhook"

    def __init__(self, context: AdmissionContext) -> None:
        self.context = context
        self.source = HookSource(context, catalog.MUTATING_WEBHOOK_CONFIGURATION)

    async def mutate(self, request: AdmissionRequest) -> None:
        hooks = self.source.hooks()
        if not hooks:
            return
        facts = RequestFacts.of(request)
        if facts.exempt:
            return
        if request.generated_name:
            facts = replace(facts, name="")  # kube names the object after mutating admission
        state = request.state.get(_STATE)
        if state is None:
            state = request.state[_STATE] = _Reinvocation()
        reinvoking = bool(request.state.get("reinvoking"))
        if reinvoking and not _same(state.last_output, request.obj):
            state.require_reinvoking_previous()  # another plug-in changed the object since
        try:
            for hook in hooks:
                await self._run(hook, facts, request, state, reinvoking)
        finally:
            state.last_output = copy_json(request.obj)

    async def _run(self, hook: Hook, facts: RequestFacts, request: AdmissionRequest, state: _Reinvocation,
                   reinvoking: bool) -> None:
        match = await should_call(self.context, hook, facts, request)
        if match is None:
            return
        if reinvoking and hook.uid not in state.reinvoke:
            return  # a second round never calls a webhook for the first time
        round_ = 1 if reinvoking else 0
        started = trio.current_time()
        changed, outcome = False, None
        try:
            changed = await self._call(hook, match, request, round_)
        except (CallingWebhookError, WebhookRejection, errors.StatusError) as exc:
            outcome = exc
        count(self.context, hook.name, hook.ignores_failures, "admit", facts, outcome,
              trio.current_time() - started)
        if changed:
            state.require_reinvoking_previous()
            request.state["reinvoke"] = True
        if hook.reinvocable:
            state.previously_invoked.add(hook.uid)
        if outcome is None:
            return
        if isinstance(outcome, CallingWebhookError):
            if hook.ignores_failures:
                request.annotate(failed_open_key("mutation", round_, hook.index), hook.name)
                return
            raise with_warnings(internal_error(outcome.message), request)
        raise with_warnings(outcome.status if isinstance(outcome, WebhookRejection) else outcome, request)

    async def _call(self, hook: Hook, match: Match, request: AdmissionRequest, round_: int) -> bool:
        """kube's callAttrMutatingHook: call, apply the patch to `request.obj`; whether it changed the object."""
        changed = False
        try:
            obj = None if request.operation == "delete" else match.present(request.obj)
            if obj is not None and request.operation == "create":
                hidden = ("uid", "name") if request.generated_name else ("uid",)
                obj = {**obj, "metadata": {k: v for k, v in (obj.get("metadata") or {}).items() if k not in hidden}}
            response = await call_hook(self.context, hook, match, request, obj, match.present(request.old),
                                       mutating=True)
            if not response.patch:
                return False
            try:
                operations = json.loads(response.patch)
            except ValueError as exc:
                raise CallingWebhookError(hook.name, f"received undecodable patch in webhook response: {exc}",
                                          503) from None
            if not isinstance(operations, list):
                raise CallingWebhookError(hook.name, "received undecodable patch in webhook response: json: cannot "
                                          "unmarshal object into Go value of type jsonpatch.Patch", 503)
            if not operations:
                return False
            if obj is None:
                raise internal_error(f'admission webhook "{hook.name}" attempted to modify the object, which is '
                                     "not supported for this operation")
            if response.patch_type != "JSONPatch":
                raise CallingWebhookError(hook.name, f'unsupported patch type "{response.patch_type}"',
                                          denial(hook.name, response.result).code)
            try:
                patched = apply_json_patch(obj, operations)
            except PatchError as exc:
                raise internal_error(str(exc)) from None
            patched = self._decoded(match, patched)
            changed = not _same(obj, patched)
            request.annotate(f"patch.webhook.admission.k8s.io/round_{round_}_index_{hook.index}", _go_json(
                {"configuration": hook.configuration, "webhook": hook.name, "patch": operations,
                 "patchType": "JSONPatch"}), level="Request")
            request.obj = self._restored(match, patched, request.obj, request.generated_name)
            return changed
        finally:
            request.annotate(f"mutation.webhook.admission.k8s.io/round_{round_}_index_{hook.index}", _go_json(
                {"configuration": hook.configuration, "webhook": hook.name, "mutated": changed}))

    @staticmethod
    def _own_kind(match: Match) -> bool:
        return match.kind == (match.rt.group, match.rt.version, match.rt.kind)

    def _decoded(self, match: Match, patched: Any) -> Any:
        """The patched object decoded as its kind (kube decodes into the typed object), and defaulted."""
        if not self._own_kind(match):
            return patched  # another kind's body (a Scale, a Binding): its own write checks it
        try:
            decoded, _ = match.rt.strategy.decode(Body(patched), "Ignore")
        except errors.StatusError as exc:
            raise internal_error(exc.message) from None
        match.rt.strategy.default(decoded)
        return decoded

    def _restored(self, match: Match, patched: dict[str, Any], current: dict[str, Any],
                  generated_name: bool) -> dict[str, Any]:
        """The patched object in the form the request holds `current` in."""
        meta = current.get("metadata") or {}
        if not self._own_kind(match):
            sub = match.rt.strategy.subresources.get(match.facts.subresource)
            if current.get("kind") != match.rt.kind or not hasattr(sub, "from_view"):
                return patched
            new = sub.from_view(patched, copy_json(current))  # a view written back into its object
            new.setdefault("metadata", {})["resourceVersion"] = meta.get("resourceVersion")
            return new
        if "uid" in meta:
            patched.setdefault("metadata", {})["uid"] = meta["uid"]  # set by the registry, hidden from the webhook
        if generated_name and not patched.setdefault("metadata", {}).get("name"):
            patched["metadata"]["name"] = meta.get("name")  # generated by the registry, hidden from the webhook
        target = current.get("apiVersion")
        if patched.get("apiVersion") == target:
            return patched
        rt = self.context.scheme.by_api_version_kind(target or "", current.get("kind") or "")
        if rt is not None and rt.strategy.converts:
            return rt.strategy.present(StoredObject("", patched, 0)).obj
        return {**patched, "apiVersion": target}
