"""The AdmissionReview a webhook is sent and what its answer must be, in kube-apiserver's words
(`admission/plugin/webhook/request/admissionreview.go`, `webhook/errors`, `util/webhook/error.go`).

- `create_review(hook, match, request, obj, old)`: the review in the first
  version of the webhook's `admissionReviewVersions` this server sends
  (`admission.k8s.io/v1`, `v1beta1`), with a new uid, and that uid; a
  webhook that accepts neither is a `CallingWebhookError`.
- `verify_response(uid, version, answer, mutating)`: kube's
  `VerifyAdmissionResponse`: a v1 answer must be a v1 AdmissionReview (its
  apiVersion and kind as sent) with the request's uid; a patch from a
  mutating webhook needs its patchType; a validating webhook's patch is
  ignored. Raises ValueError in kube's words.
- `denial(name, result)`: kube's `ToStatusErr`, the StatusError a denial
  answers: `admission webhook "x" denied the request: <message>`, the
  webhook's code (400 when below 400 or absent), reason and details.
- `CallingWebhookError` (kube's `ErrCallingWebhook`): the call failed;
  `failed calling webhook "x": <reason>`, and the HTTP status its metrics
  record. `WebhookRejection`: the webhook answered, and refused.
- `dry_run_unsupported(name)`: kube's 400 for a dry-run request to a webhook
  with side effects.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from typing import Any

from runtime.machinery import errors
from runtime.server.admission.matching import Match, admission_request
from runtime.server.admission.webhooks.hooks import Hook
from runtime.server.kinds import AdmissionRequest

__all__ = ["create_review", "verify_response", "denial", "dry_run_unsupported", "CallingWebhookError",
           "WebhookRejection", "Response", "REVIEW_VERSIONS"]

#: The AdmissionReview versions sent, by `admissionReviewVersions` name.
REVIEW_VERSIONS = {"v1": "admission.k8s.io/v1", "v1beta1": "admission.k8s.io/v1beta1"}
_REVIEW = "AdmissionReview"


class CallingWebhookError(Exception):
    """kube's `ErrCallingWebhook`: `reason` says why; `code` is the HTTP status its metrics record."""

    def __init__(self, webhook: str, reason: str, code: int) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')
        self.message = str(self)
        self.code = code


class WebhookRejection(Exception):
    """kube's `ErrWebhookRejection`: the webhook refused; `status` is the StatusError answered."""

    def __init__(self, status: errors.StatusError) -> None:
        super().__init__(status.message)
        self.status = status


@dataclass(frozen=True)
class Response:
    """A verified answer (kube's webhookrequest.AdmissionResponse)."""

    allowed: bool
    result: dict[str, Any] | None
    patch: bytes
    patch_type: str
    warnings: list[str]
    audit_annotations: dict[str, str]


def dry_run_unsupported(name: str) -> errors.BadRequest:
    """kube's `NewDryRunUnsupportedErr`."""
    return errors.BadRequest(f'admission webhook "{name}" does not support dry run')


def create_review(hook: Hook, match: Match, request: AdmissionRequest, obj: dict[str, Any] | None,
                  old: dict[str, Any] | None) -> tuple[str, str, dict[str, Any]]:
    """(uid, apiVersion, review) for `hook` (see the module doc); `obj`/`old` as the webhook's version shows
    them (None: null)."""
    api_version = next((REVIEW_VERSIONS[v] for v in hook.review_versions if v in REVIEW_VERSIONS), None)
    if api_version is None:
        raise CallingWebhookError(hook.name, "could not create admission objects: webhook does not accept v1 or "
                                             "v1beta1 AdmissionReview", 400)
    uid = str(uuid.uuid4())
    base = admission_request(match, request)
    # kube's AdmissionRequest field order; object and oldObject are never omitted (null when absent).
    body: dict[str, Any] = {"uid": uid}
    for key in ("kind", "resource", "subResource", "requestKind", "requestResource", "requestSubResource",
                "name", "namespace", "operation", "userInfo"):
        if key in base:
            body[key] = base[key]
    body["object"] = obj
    body["oldObject"] = old
    body["dryRun"] = base["dryRun"]
    body["options"] = base.get("options")
    return uid, api_version, {"kind": _REVIEW, "apiVersion": api_version, "request": body}


def _gvk_string(api_version: Any, kind: Any) -> str:
    """Go's GroupVersionKind.String(): `group/version, Kind=kind`."""
    group, _, version = str(api_version or "").rpartition("/")
    return f"{group}/{version}, Kind={kind or ''}"


def verify_response(uid: str, api_version: str, answer: Any, *, mutating: bool) -> Response:
    """kube's `VerifyAdmissionResponse` (see the module doc). Raises ValueError."""
    if not isinstance(answer, dict):
        got = {list: "array", str: "string", bool: "bool", int: "number", float: "number"}.get(type(answer), "value")
        raise TypeError(f"couldn't get version/kind; json parse error: json: cannot unmarshal {got} into Go value "
                        'of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                        '"json:\\"kind,omitempty\\"" }')
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ValueError("webhook response was absent")
    if api_version == REVIEW_VERSIONS["v1"]:
        # v1beta1 answers were never checked for these (kube keeps it so).
        if response.get("uid") != uid:
            raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
        if (answer.get("apiVersion"), answer.get("kind")) != (api_version, _REVIEW):
            raise ValueError(f"expected webhook response of {_gvk_string(api_version, _REVIEW)}, got "
                             f"{_gvk_string(answer.get('apiVersion'), answer.get('kind'))}")
    patch, patch_type = b"", ""
    if mutating and response.get("patch"):
        if not response.get("patchType"):
            raise ValueError("webhook returned response.patch but not response.patchType")
        patch_type = str(response["patchType"])
        try:
            patch = base64.b64decode(response["patch"], validate=True)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"illegal base64 data: {exc}") from None
    result = response.get("status")
    warnings = [w for w in response.get("warnings") or [] if isinstance(w, str)]
    annotations = {str(k): str(v) for k, v in (response.get("auditAnnotations") or {}).items()}
    return Response(bool(response.get("allowed")), result if isinstance(result, dict) else None, patch,
                    patch_type, warnings, annotations)


def denial(name: str, result: dict[str, Any] | None) -> errors.StatusError:
    """kube's `ToStatusErr` (see the module doc)."""
    status = dict(result or {})
    denied_by = f'admission webhook "{name}" denied the request'
    code = status.get("code")
    status["code"] = code if isinstance(code, int) and code >= 400 else 400
    if status.get("message"):
        status["message"] = f"{denied_by}: {status['message']}"
    elif status.get("reason"):
        status["message"] = f"{denied_by}: {status['reason']}"
    else:
        status["message"] = f"{denied_by} without explanation"
    return errors.status_from_dict(status)
