"""Whether a webhook is called for a request, the call itself, and how its outcome is counted, as
kube-apiserver's `webhook/generic.Webhook.ShouldCallHook` and the dispatchers' `callHook`.

- `should_call(context, hook, facts, request)`: the `Match` the webhook is
  called with, or None: its rules (exact, then matchPolicy Equivalent), then
  its namespace and object selectors (their errors answered only for a
  webhook whose rules match, as kube), then its matchConditions (false: not
  called; an error under Fail: kube's 403 `<resource> "<name>" is
  forbidden: <error>`; under Ignore: not called).
- `call_hook(context, hook, match, request, obj, old, mutating=)`: a
  dry-run request to a webhook with side effects is kube's 400; otherwise the
  AdmissionReview is POSTed through the context's webhook client, bounded
  by the webhook's timeoutSeconds; a failed call or a bad answer is a
  `CallingWebhookError` (`failed to call webhook: ...`, `received invalid
  webhook response: ...`); the answer's auditAnnotations are recorded as
  `<webhook>/<key>` and its warnings answered; a denial raises
  `WebhookRejection`. Returns the verified `Response`.
- `with_warnings(error, request)`: a refusal carries the warnings given so
  far as its Warning header (kube writes them before the answer's status),
  cut to kube's limits as every answer's (`runtime.machinery.warnings`).
- `count(context, name, ignores_failures, kind, facts, outcome, seconds)`:
  kube's metrics for one call (of a configuration's webhook or a Python one) (`apiserver_admission_webhook_admission_duration_seconds`,
  `..._request_total`, `..._rejection_count`, `..._fail_open_count`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery import errors
from runtime.machinery.warnings import warning_headers
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.matching import (
    Match, RequestFacts, cel_variables, equivalent, namespace_selector_matches, object_selector_matches,
)
from runtime.server.admission.policies.authorizer import AUTHORIZER_FUNCTIONS, CELAuthorizer
from runtime.server.admission.webhookclient import WebhookCallError
from runtime.server.admission.webhooks.hooks import Hook
from runtime.server.admission.webhooks.review import (
    CallingWebhookError, Response, WebhookRejection, create_review, denial, dry_run_unsupported, verify_response,
)
from runtime.server.kinds import AdmissionRequest

__all__ = ["should_call", "call_hook", "count", "failed_open_key", "with_warnings"]

_NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")


async def should_call(context: AdmissionContext, hook: Hook, facts: RequestFacts,
                      request: AdmissionRequest) -> Match | None:
    """kube's ShouldCallHook (see the module doc). Raises the selectors' StatusErrors, the conditions' 403."""
    match = equivalent(facts, hook.rules, context, hook.match_policy)
    if match is None:
        return None
    if not await namespace_selector_matches(hook.spec.get("namespaceSelector"), facts, request, context):
        return None
    if not object_selector_matches(hook.spec.get("objectSelector"), request):
        return None
    if hook.conditions:
        # kube compiles webhook matchConditions with the authorizer library (`authorizer`,
        # `authorizer.requestResource`), as policies' expressions.
        authorizer = CELAuthorizer(request.user, context.decide, group=facts.group, resource=facts.resource,
                                   subresource=facts.subresource, namespace=facts.namespace, name=facts.name)
        result = hook.conditions.evaluate({**cel_variables(match, request), "authorizer": authorizer},
                                          AUTHORIZER_FUNCTIONS)
        if result.error:
            resource = f"{facts.resource}.{facts.group}" if facts.group else facts.resource
            shown = f'{resource} "{facts.name}"' if facts.name else resource
            raise errors.Forbidden(f"{shown} is forbidden: {result.error}", name=facts.name, group=facts.group,
                                   kind=facts.resource)
        if not result.matches:
            return None
    return match


async def call_hook(context: AdmissionContext, hook: Hook, match: Match, request: AdmissionRequest,
                    obj: dict[str, Any] | None, old: dict[str, Any] | None, *, mutating: bool) -> Response:
    """One call of `hook` (see the module doc); `obj`/`old` as the webhook's version shows them."""
    if request.dry_run:
        if hook.side_effects is None:
            raise CallingWebhookError(hook.name, "Webhook SideEffects is nil", 400)
        if hook.side_effects not in _NO_SIDE_EFFECTS:
            raise dry_run_unsupported(hook.name)
    uid, api_version, review = create_review(hook, match, request, obj, old)
    try:
        answer = await context.webhook_client.post_json(hook.client_config, review, timeout=hook.timeout)
    except WebhookCallError as exc:
        # kube: an HTTP answer's own status, else the dispatcher's ("error calling webhook").
        code = exc.status if exc.status is not None and exc.status >= 300 else (503 if mutating else 400)
        raise CallingWebhookError(hook.name, f"failed to call webhook: {exc.message}", code) from None
    try:
        response = verify_response(uid, api_version, answer, mutating=mutating)
    except TypeError as exc:  # not an object: the client's decoding failed
        raise CallingWebhookError(hook.name, f"failed to call webhook: {exc}", 503 if mutating else 400) from None
    except ValueError as exc:
        raise CallingWebhookError(hook.name, f"received invalid webhook response: {exc}", 503) from None
    for key, value in response.audit_annotations.items():
        request.annotate(f"{hook.name}/{key}", value)
    for warning in response.warnings:
        request.warn(warning)
    if not response.allowed:
        raise WebhookRejection(denial(hook.name, response.result))
    return response


def with_warnings(error: errors.StatusError, request: AdmissionRequest) -> errors.StatusError:
    """`error`, answered with the request's warnings (one Warning header, the values comma-joined as HTTP
    allows; kube's recorder's headers: `runtime.machinery.warnings`)."""
    shown = warning_headers(request.warnings)
    if shown:
        error.headers["Warning"] = ", ".join(shown)
    return error


def failed_open_key(kind: str, round_: int, index: int) -> str:
    """kube's failed-open audit annotation key (`kind` validating|mutation)."""
    return f"failed-open.{kind}.webhook.admission.k8s.io/round_{round_}_index_{index}"


def count(context: AdmissionContext, name: str, ignores_failures: bool, kind: str, facts: RequestFacts,
          outcome: BaseException | None, seconds: float) -> None:
    """kube's metrics for one call of webhook `name` (`ignores_failures`: its failurePolicy is Ignore) whose
    `outcome` is None (allowed) or the error it ended with; `kind` is admit|validating. A configuration's
    webhook and an in-process Python one are counted alike."""
    metrics = getattr(context, "admission_metrics", None)
    if metrics is None:
        return
    operation = facts.operation
    if outcome is None:
        metrics.webhook_called(name, kind, operation, rejected=False, seconds=seconds, code=200)
    elif isinstance(outcome, CallingWebhookError):
        rejected = not ignores_failures
        if rejected:
            metrics.webhook_rejected(name, kind, operation, error_type="calling_webhook_error",
                                     code=outcome.code)
        else:
            metrics.webhook_failed_open(name, kind)
        metrics.webhook_called(name, kind, operation, rejected=rejected, seconds=seconds, code=outcome.code)
    elif isinstance(outcome, WebhookRejection):
        code = outcome.status.code
        metrics.webhook_rejected(name, kind, operation, error_type="no_error", code=code)
        metrics.webhook_called(name, kind, operation, rejected=True, seconds=seconds, code=code)
    else:
        metrics.webhook_rejected(name, kind, operation, error_type="apiserver_internal_error", code=0)
        metrics.webhook_called(name, kind, operation, rejected=True, seconds=seconds, code=0)
