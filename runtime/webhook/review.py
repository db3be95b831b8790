"""The AdmissionReview codec and the one call every place makes: `review(webhook, body) -> response review`.

`review(webhook, body)` decodes an `admission.k8s.io/v1` or `v1beta1`
AdmissionReview (a dict, as decoded from JSON), types its request
(`typed_request`), awaits the webhook's `admit` and answers the
AdmissionReview of the same version with the response: `uid`, `allowed`,
`status` for a denial, `patch` (base64 JSON patch) and `patchType:
JSONPatch` for a change, `warnings`, `auditAnnotations`. The webhook server
(`runtime.webhook.server`), the in-process step (`runtime.webhook.inprocess`)
and a test env all call it, so one function answers the same in all three.

`decode_review(body)` checks the review first; `MalformedReview` carries
controller-runtime's words for what it refuses (the server answers 400).

Typing (`model_for`): the webhook's `model`, else the model bound to the
object's apiVersion and kind (`runtime.client.typed.bind_kind`), else the
built-in kind's (`runtime.models.catalog`, under any API domain), else
Kubernetes' generated model of that kind; none: the object stays a dict.
An object the model does not accept is answered as controller-runtime's
handlers answer a decode error: `Errored(400)`.

Caveats:
    `Patch(object=model)` is computed against the request's object as the
    model reads it (`patchdiff.carry_unknown`): what the model does not
    declare is kept, not removed, and a field set to None is removed.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from pydantic import BaseModel, ValidationError

from runtime.client.typed import bound_kind_of
from runtime.models.catalog import BUILTIN_KINDS
from runtime.webhook.patchdiff import carry_unknown, create_patch
from runtime.webhook.types import (
    Allowed, Answer, Denied, GroupVersionKind, GroupVersionResource, Patch, Request, UserInfo, Webhook,
)

__all__ = ["REVIEW_VERSIONS", "MalformedReview", "decode_review", "typed_request", "model_for", "review",
           "response_review", "errored"]

#: The AdmissionReview versions a webhook answers (what its configuration's admissionReviewVersions lists).
REVIEW_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")


class MalformedReview(ValueError):
    """A body that is not an AdmissionReview with a request (answered 400)."""


def decode_review(body: bytes | dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview `body` (JSON text or decoded), checked: a known version, kind AdmissionReview, a
    request with a uid. Raises MalformedReview in controller-runtime's (or Go's decoder's) words."""
    if isinstance(body, (bytes, bytearray)):
        if not body:
            raise MalformedReview("request body is empty")
        try:
            body = json.loads(body)
        except ValueError as exc:
            raise MalformedReview(f"couldn't get version/kind; json parse error: {exc}") from None
    if not isinstance(body, dict):
        raise MalformedReview("couldn't get version/kind; json parse error: not a JSON object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not api_version or not kind:
        raise MalformedReview(f"Object 'Kind' is missing in '{json.dumps(body, separators=(',', ':'))[:200]}'")
    if kind != "AdmissionReview" or api_version not in REVIEW_VERSIONS:
        raise MalformedReview(f'no kind "{kind}" is registered for version "{api_version}"')
    request = body.get("request")
    if not isinstance(request, dict) or not request:
        raise MalformedReview("got an empty AdmissionRequest")
    return body


def model_for(webhook: Webhook, obj: dict[str, Any] | None) -> type[BaseModel] | None:
    """The model `obj` is typed with for `webhook` (see the module doc), None for a dict."""
    if webhook.model is not None:
        return webhook.model
    if not obj:
        return None
    api_version, kind = obj.get("apiVersion") or "", obj.get("kind") or ""
    bound = bound_kind_of(api_version, kind)
    if bound is not None and bound.model is not None and not _generated(bound.model):
        return bound.model  # the author's binding wins
    group, _, version = api_version.rpartition("/")
    for info in BUILTIN_KINDS:
        # A built-in's group is its prefix under the server's domain (rbac.authorization.<domain>).
        if info.kind == kind and info.version == version and (group == info.group if info.group is not None else (
                group == info.group_prefix or (info.group_prefix and group.startswith(info.group_prefix + ".")))):
            return info.model
    return bound.model if bound is not None else None


def _generated(model: type[BaseModel]) -> bool:
    return model.__module__.startswith("runtime.models.k8s.")


def _typed(model: type[BaseModel] | None, raw: dict[str, Any] | None) -> Any:
    if raw is None or model is None:
        return copy.deepcopy(raw)
    return model.model_validate(copy.deepcopy(raw))


def _gvk(value: Any) -> GroupVersionKind | None:
    return None if not isinstance(value, dict) else GroupVersionKind(
        value.get("group") or "", value.get("version") or "", value.get("kind") or "")


def _gvr(value: Any) -> GroupVersionResource | None:
    return None if not isinstance(value, dict) else GroupVersionResource(
        value.get("group") or "", value.get("version") or "", value.get("resource") or "")


def typed_request(webhook: Webhook, request: dict[str, Any]) -> Request:
    """An AdmissionReview's `request` as a `Request` (objects typed by `model_for`). Raises pydantic's
    ValidationError for an object the model refuses."""
    raw, raw_old = request.get("object"), request.get("oldObject")
    model = model_for(webhook, raw if raw else raw_old)
    user = request.get("userInfo") or {}
    return Request(
        uid=request.get("uid") or "", kind=_gvk(request.get("kind")) or GroupVersionKind("", "", ""),
        resource=_gvr(request.get("resource")) or GroupVersionResource("", "", ""),
        operation=request.get("operation") or "",
        user_info=UserInfo(user.get("username") or "", user.get("uid") or "", tuple(user.get("groups") or ()),
                           {k: tuple(v) for k, v in (user.get("extra") or {}).items()}),
        object=_typed(model, raw), old_object=_typed(model, raw_old),
        raw_object=copy.deepcopy(raw), raw_old_object=copy.deepcopy(raw_old),
        name=request.get("name") or "", namespace=request.get("namespace") or "",
        sub_resource=request.get("subResource") or "", dry_run=bool(request.get("dryRun")),
        options=request.get("options"), request_kind=_gvk(request.get("requestKind")),
        request_resource=_gvr(request.get("requestResource")),
        request_sub_resource=request.get("requestSubResource") or "")


def errored(code: int, message: str) -> dict[str, Any]:
    """controller-runtime's `Errored(code, err)` response (without its uid): a denial with `code`."""
    return {"allowed": False, "status": {"code": code, "message": message}}


def _dump(obj: BaseModel) -> dict[str, Any]:
    return obj.model_dump(by_alias=True, exclude_none=True, mode="json")


def _patch_operations(answer: Patch, raw: dict[str, Any] | None) -> list[dict[str, Any]]:
    if answer.operations is not None:
        return [dict(op) for op in answer.operations]
    changed = answer.object
    if isinstance(changed, BaseModel):
        base = _dump(type(changed).model_validate(copy.deepcopy(raw))) if raw is not None else {}
        return create_patch(raw, carry_unknown(raw, base, _dump(changed)))
    if not isinstance(changed, dict):
        raise TypeError(f"Patch(object=) takes a dict or a model, not {type(changed).__name__}")
    return create_patch(raw, changed)


def _response(answer: Answer, raw: dict[str, Any] | None) -> dict[str, Any]:
    response: dict[str, Any]
    if isinstance(answer, Denied):
        response = {"allowed": False, "status": answer.status()}
    elif isinstance(answer, Patch):
        response = {"allowed": True}
        ops = _patch_operations(answer, raw)
        if ops:
            response["patch"] = base64.b64encode(json.dumps(ops, separators=(",", ":")).encode()).decode()
            response["patchType"] = "JSONPatch"
    elif isinstance(answer, Allowed):
        response = {"allowed": True}
    else:
        raise TypeError(f"admit returned {type(answer).__name__}, not Allowed, Denied or Patch")
    if answer.warnings:
        response["warnings"] = list(answer.warnings)
    if answer.audit_annotations:
        response["auditAnnotations"] = dict(answer.audit_annotations)
    return response


def response_review(body: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview answering `body` (its version, its request's uid) with `response`."""
    return {"apiVersion": body["apiVersion"], "kind": "AdmissionReview",
            "response": {"uid": body["request"].get("uid") or "", **response}}


async def review(webhook: Webhook, body: dict[str, Any]) -> dict[str, Any]:
    """Answer the AdmissionReview `body` (checked by `decode_review`) by `webhook.admit`. What `admit` raises
    (but cancellation) is answered `Errored(500)`, an object its model refuses `Errored(400)`."""
    request = body["request"]
    try:
        typed = typed_request(webhook, request)
    except ValidationError as exc:
        return response_review(body, errored(400, str(exc)))
    try:
        answer = await webhook.admit(typed)
        response = _response(answer, request.get("object"))
    except Exception as exc:  # the author's error answers the review (controller-runtime's Errored(500))
        return response_review(body, errored(500, str(exc) or type(exc).__name__))
    return response_review(body, response)
