"""A CRD's conversion webhook: custom objects converted between versions with a `ConversionReview`.

Kubernetes' `webhookConverter` (apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go):

- `ConversionWebhook.of(crd)` (None unless `spec.conversion.strategy` is
  `Webhook`) names the webhook's `clientConfig` and the review version it
  speaks: the first of `conversionReviewVersions` that is v1 or v1beta1.
- `await webhook.convert(client, objects, desired, kind=)` sends the objects
  not already at apiVersion `desired` in one review (`request.uid` fresh,
  `desiredAPIVersion`, `objects`), POSTed by `client` (a
  `runtime.server.admission.webhookclient.WebhookClient`) with kube's 30 s
  timeout, and answers every object at `desired`, in order. The answer must
  be a ConversionReview of the version sent (v1: kind and apiVersion, and
  `response.uid` the request's), `result.status` Success (else its message
  is the error), as many objects as were sent, each of the desired
  apiVersion and the same kind, name, namespace and uid; only its labels
  and annotations may differ (valid ones): the rest of its metadata is the
  original's (`restoreObjectMeta`).
- Every failure raises `ConversionFailed`: a 500 without a reason and
  kube's words, `conversion webhook for <group>/<version>, Kind=<kind>
  failed: <why>` (or `returned invalid object ...`), where `<kind>` is the
  converted object's (a list's kind for a list). A 500 is kube's answer
  (`ErrorToAPIStatus` of a converter's error); miniplane keeps it, since
  it is the webhook's fault, not the client's (docs/kubernetes-differences.md).

`review_request`, `converted_objects` and `restored` are the pure steps.
"""

from __future__ import annotations

import copy
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from runtime.machinery import errors
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, too_long
from runtime.machinery.validation.labels import label_key_errors, label_value_errors
from runtime.server.admission.webhookclient import WebhookCallError

if TYPE_CHECKING:
    from runtime.machinery.storedobject import StoredObject

__all__ = ["ConversionFailed", "ConversionWebhook", "RemoteConverter", "CONVERSION_TIMEOUT", "RefusedObject", "gvk_text",
           "review_request", "converted_objects", "restored"]

#: Seconds kube-apiserver waits for a conversion webhook (its webhook client's default).
CONVERSION_TIMEOUT = 30.0
_GROUP = "apiextensions.k8s.io"
_ANNOTATIONS_MAX = 256 * 1024


class ConversionFailed(errors.StatusError):
    """A conversion that failed: 500 with kube's words and no reason (`ErrorToAPIStatus` of a plain error)."""

    code = 500
    reason = ""


class JSONPoster(Protocol):
    async def post_json(self, client_config: dict[str, Any], payload: Any, *, timeout: float) -> Any: ...


class RemoteConverter(ABC):
    """A kind whose versions may convert through a call out (a custom kind whose CRD has a conversion
    webhook). Mix it in; the registry finds it by `isinstance` and, when `converts_remotely`, awaits
    `to_version` on what it reads and `to_storage` on what it writes (`runtime.server.registry.conversion`)."""

    @property
    @abstractmethod
    def converts_remotely(self) -> bool:
        """Whether conversion calls out (else the kind's synchronous `present` does it all)."""

    @abstractmethod
    async def to_version(self, client: JSONPoster, objs: "list[StoredObject]", *,
                         listed: bool = False) -> "list[StoredObject]":
        """Stored objects in the kind's version (one call for all; `listed`: they are a list's)."""

    @abstractmethod
    async def to_storage(self, client: JSONPoster, obj: dict[str, Any]) -> dict[str, Any]:
        """An object of the kind's version in the storage version."""


def gvk_text(api_version: str, kind: str) -> str:
    """Go's `schema.GroupVersionKind.String()`: `group/version, Kind=kind` (`/v1, Kind=x` without a group)."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def review_request(review_version: str, objects: list[dict[str, Any]], desired: str, uid: str) -> dict[str, Any]:
    """The ConversionReview sent (kube's createConversionReviewObjects)."""
    return {"kind": "ConversionReview", "apiVersion": f"{_GROUP}/{review_version}",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}}


def converted_objects(review_version: str, uid: str, answer: Any) -> list[Any]:
    """The converted objects of a webhook's answer; raises ValueError with kube's words
    (getConvertedObjectsFromResponse) when the answer is not a successful review."""
    if not isinstance(answer, dict):
        raise ValueError(f"json: cannot unmarshal {_json_type(answer)} into Go value of type "
                         f"{review_version}.ConversionReview")
    if review_version == "v1":
        if (answer.get("apiVersion"), answer.get("kind")) != (f"{_GROUP}/v1", "ConversionReview"):
            got = gvk_text(str(answer.get("apiVersion") or ""), str(answer.get("kind") or ""))
            raise ValueError(f"expected webhook response of {_GROUP}/v1, Kind=ConversionReview, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ValueError("no response provided")
    if review_version == "v1" and (response.get("uid") or "") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    result = response.get("result") if isinstance(response.get("result"), dict) else {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise ValueError(str(result["message"]))
        raise ValueError(f"response.result.status was '{result.get('status') or ''}', not 'Success'")
    objects = response.get("convertedObjects")
    return list(objects) if isinstance(objects, list) else []


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "bool", type(None): "null"}.get(type(value), "number")


class RefusedObject(ValueError):
    """A converted object kube refuses; `step` says which check: `decode`, `identity` (apiVersion and
    kind), `meta` (name, namespace, uid) or `metadata` (labels and annotations)."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(message)
        self.step = step


def restored(original: dict[str, Any], converted: Any, desired: str) -> dict[str, Any]:
    """`converted` checked against `original` and given back its metadata but for labels and annotations
    (validateConvertedObject, restoreObjectMeta). Raises RefusedObject with kube's words."""
    if not isinstance(converted, dict):
        raise RefusedObject("decode", f"json: cannot unmarshal {_json_type(converted)} into Go value of type "
                                      "map[string]interface {}")
    if converted.get("apiVersion") != desired:
        raise RefusedObject("identity", f"invalid groupVersion (expected {desired}, received "
                                        f"{converted.get('apiVersion') or ''})")
    if converted.get("kind") != original.get("kind"):
        raise RefusedObject("identity", f"invalid kind (expected {original.get('kind')}, received "
                                        f"{converted.get('kind') or ''})")
    meta, out_meta = original.get("metadata") or {}, converted.get("metadata")
    for field, word in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        was = meta.get(field) or ""
        now = out_meta.get(field) if isinstance(out_meta, dict) else ""
        if (now or "") != was:
            raise RefusedObject("meta", f"must have the same {word}: {was} != {now or ''}")
    if out_meta is None:
        raise RefusedObject("metadata", "missing metadata in converted object")
    if not isinstance(out_meta, dict):
        raise RefusedObject("metadata", f"invalid metadata of type {_go_type(out_meta)} in converted object")
    result = dict(converted, metadata=copy.deepcopy(meta))
    for field in ("labels", "annotations"):
        value = out_meta.get(field)
        if value is None:
            result["metadata"].pop(field, None)
            continue
        if not isinstance(value, dict):
            raise RefusedObject("metadata", f"invalid metadata.{field} of type {_go_type(value)} in converted "
                                            "object")
        for k, v in value.items():
            if not isinstance(v, str):
                raise RefusedObject("metadata", f"metadata.{field}[{k}] must be a string, but is {_go_type(v)} "
                                                "in converted object")
        if value != (meta.get(field) or {}):
            problems = _label_errors(value) if field == "labels" else _annotation_errors(value)
            if problems:
                joined = str(problems[0]) if len(problems) == 1 else "[" + ", ".join(map(str, problems)) + "]"
                raise RefusedObject("metadata", joined)
        result["metadata"][field] = value
    return result


def _go_type(value: Any) -> str:
    return {list: "[]interface {}", str: "string", bool: "bool", dict: "map[string]interface {}",
            int: "int64", float: "float64"}.get(type(value), "<nil>")


def _label_errors(labels: dict[str, str]) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, value in labels.items():
        errs += [invalid("metadata.labels", key, p) for p in label_key_errors(key)]
        errs += [invalid("metadata.labels", value, p) for p in label_value_errors(value)]
    return errs


def _annotation_errors(annotations: dict[str, str]) -> list[FieldError]:
    # Kubernetes' path here is `metadata.annotation` (restoreObjectMeta's field.NewPath).
    errs = [invalid("metadata.annotation", key, p) for key in annotations for p in label_key_errors(key.lower())]
    if sum(len(k) + len(v) for k, v in annotations.items()) > _ANNOTATIONS_MAX:
        errs.append(too_long("metadata.annotation", _ANNOTATIONS_MAX))
    return errs


@dataclass(frozen=True)
class ConversionWebhook:
    """One CRD's conversion webhook (see the module doc)."""

    crd_name: str
    client_config: dict[str, Any]
    review_version: str | None  # None: the CRD names no version the server speaks
    timeout: float = CONVERSION_TIMEOUT

    @classmethod
    def of(cls, crd: dict[str, Any]) -> "ConversionWebhook | None":
        conversion = (crd.get("spec") or {}).get("conversion") or {}
        if conversion.get("strategy") != "Webhook":
            return None
        webhook = conversion.get("webhook") or {}
        versions = webhook.get("conversionReviewVersions") or []
        review = next((v for v in versions if v in ("v1", "v1beta1")), None)
        return cls(crd["metadata"]["name"], dict(webhook.get("clientConfig") or {}), review)

    async def convert(self, client: JSONPoster, objects: list[dict[str, Any]], desired: str, *,
                      kind: str) -> list[dict[str, Any]]:
        """`objects` at apiVersion `desired`, in order (see the module doc). `kind` names what is converted
        in errors: the objects' kind, or their list's. Raises ConversionFailed."""
        todo = [i for i, o in enumerate(objects) if o.get("apiVersion") != desired]
        if not todo:
            return objects
        source = objects[todo[0]].get("apiVersion") or ""
        what = gvk_text(source, kind)
        if self.review_version is None:
            raise ConversionFailed("no supported conversion review versions")
        uid = str(uuid.uuid4())
        review = review_request(self.review_version, [objects[i] for i in todo], desired, uid)
        try:
            answer = await client.post_json(self.client_config, review, timeout=self.timeout)
        except WebhookCallError as exc:
            raise ConversionFailed(f"conversion webhook for {what} failed: {exc.message}") from None
        try:
            converted = converted_objects(self.review_version, uid, answer)
        except ValueError as exc:
            raise ConversionFailed(f"conversion webhook for {what} failed: {exc}") from None
        if len(converted) != len(todo):
            raise ConversionFailed(f"conversion webhook for {what} returned {len(converted)} objects, expected "
                                   f"{len(todo)}")
        out = list(objects)
        for n, (i, new) in enumerate(zip(todo, converted)):
            try:
                out[i] = restored(objects[i], new, desired)
            except RefusedObject as exc:
                raise ConversionFailed(_refusal(what, exc, None if len(objects) == 1 else n)) from None
        return out


def _refusal(what: str, exc: RefusedObject, index: int | None) -> str:
    """kube's words for a converted object it refuses: one object's, or the `index`th of a list's (kube
    counts from 1 once the object decoded: it numbers after its increment)."""
    if index is None:
        where = {"decode": None, "identity": "invalid object at index 0", "meta": "invalid object",
                 "metadata": "invalid metadata"}[exc.step]
        return str(exc) if where is None else f"conversion webhook for {what} returned {where}: {exc}"
    where = {"decode": f"invalid converted object at index {index}",
             "identity": f"invalid converted object at index {index + 1}",
             "meta": f"invalid converted object at index {index + 1}",
             "metadata": f"invalid metadata in object at index {index + 1}"}[exc.step]
    return f"conversion webhook for {what} returned {where}: {exc}"
