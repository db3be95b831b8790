"""The AdmissionReview codec (`runtime.webhook.review`): requests typed with the runtime's models, answers
encoded as kube-apiserver reads them, malformed reviews refused in controller-runtime's words."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import BaseModel

from runtime.client.typed import CustomResource, bind_kind
from runtime.machinery.patch import apply_json_patch
from runtime.models.core import ConfigMap
from runtime.models.k8s.apps_v1 import Deployment
from runtime.models.rbac import Role
from runtime.webhook import Allowed, Denied, Patch, Request, Rule, Webhook
from runtime.webhook.review import MalformedReview, decode_review, model_for, review, typed_request
from tests.support.python_admission import (
    ALWAYS_PATCH, DENIED_CODE, DENY_LABELLED, DENY_MESSAGE, STAMP, STAMP_WEBHOOK, WARNING, configmap,
    configmap_review,
)


def _patch_of(response: dict) -> list:
    assert response["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(response["patch"]))


class Widget(CustomResource):
    size: int = 0


WIDGETS = bind_kind(Widget, "example.com/v1", "widgets")


async def _seen(request: Request) -> Allowed:
    _seen.last = request  # type: ignore[attr-defined]
    return Allowed()


def _hook(**kw) -> Webhook:
    return Webhook("seen.example.com", _seen, rules=[Rule(["*"])], **kw)


def test_request_fields_are_read_from_the_review():
    body = configmap_review(configmap(labels={"a": "b"}), old=configmap(), operation="UPDATE", dry_run=True)
    request = typed_request(_hook(), body["request"])
    assert (request.uid, request.operation, request.name, request.namespace, request.dry_run) == (
        "705ab4f5-6393-11e8-b7cc-42010a800002", "UPDATE", "c", "default", True)
    assert (request.kind.kind, request.resource.resource, request.request_kind.version) == ("ConfigMap",
                                                                                            "configmaps", "v1")
    assert request.user_info.username == "alice" and request.user_info.groups == ("dev", "system:authenticated")
    assert request.user_info.extra == {"scopes": ("a",)}
    assert request.options == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}


def test_a_built_in_object_is_its_kinds_model():
    request = typed_request(_hook(), configmap_review(configmap(labels={"a": "b"}), old=configmap())["request"])
    assert isinstance(request.object, ConfigMap) and request.object.metadata.labels == {"a": "b"}
    assert isinstance(request.old_object, ConfigMap)
    assert request.raw_object == configmap(labels={"a": "b"})


def test_a_built_in_kind_is_typed_under_any_api_domain():
    assert model_for(_hook(), {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role"}) is Role
    assert model_for(_hook(), {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}) is Role
    assert model_for(_hook(), {"apiVersion": "apps/v1", "kind": "Deployment"}) is Deployment


def test_a_bound_custom_kind_is_its_bound_model():
    assert model_for(_hook(), {"apiVersion": "example.com/v1", "kind": "Widget"}) is Widget


def test_an_unknown_kind_stays_a_dict():
    obj = {"apiVersion": "other.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    assert model_for(_hook(), obj) is None
    body = configmap_review(obj)
    assert typed_request(_hook(), body["request"]).object == obj


def test_the_webhooks_model_wins():
    class Loose(BaseModel):
        kind: str

    assert model_for(_hook(model=Loose), configmap()) is Loose


async def test_allowed_answers_uid_and_allowed_in_the_reviews_version():
    for version in ("admission.k8s.io/v1", "admission.k8s.io/v1beta1"):
        answer = await review(DENY_LABELLED, configmap_review(configmap(), version=version, uid="u-7"))
        assert answer == {"apiVersion": version, "kind": "AdmissionReview",
                          "response": {"uid": "u-7", "allowed": True}}


async def test_denied_answers_its_status():
    answer = await review(DENY_LABELLED, configmap_review(configmap(labels={"deny": "why"})))
    assert answer["response"] == {"uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "allowed": False,
                                  "status": {"code": DENIED_CODE, "reason": "Forbidden",
                                             "message": DENY_MESSAGE.format("why")}}


async def test_warnings_are_answered():
    answer = await review(DENY_LABELLED, configmap_review(configmap(data={"warn": "1"})))
    assert answer["response"]["warnings"] == [WARNING]


async def test_audit_annotations_are_answered():
    async def annotate(request: Request) -> Allowed:
        return Allowed(audit_annotations={"checked": "yes"})

    answer = await review(Webhook("a.example.com", annotate, rules=[Rule(["*"])]), configmap_review(configmap()))
    assert answer["response"]["auditAnnotations"] == {"checked": "yes"}


async def test_a_changed_typed_object_is_answered_as_the_json_patch_to_it():
    obj = configmap(labels={"a": "b"}, data={"k": "v"})
    response = (await review(STAMP_WEBHOOK, configmap_review(obj)))["response"]
    assert _patch_of(response) == [{"op": "add", "path": f"/metadata/labels/{STAMP[0]}", "value": STAMP[1]}]
    assert apply_json_patch(obj, _patch_of(response))["metadata"]["labels"] == {"a": "b", STAMP[0]: STAMP[1]}


async def test_a_typed_patch_keeps_what_the_model_does_not_declare():
    obj = {**configmap(), "x-extension": {"kept": True}}
    response = (await review(STAMP_WEBHOOK, configmap_review(obj)))["response"]
    patched = apply_json_patch(obj, _patch_of(response))
    assert patched["x-extension"] == {"kept": True} and patched["metadata"]["labels"] == {STAMP[0]: STAMP[1]}


async def test_a_changed_dict_is_answered_as_the_json_patch_to_it():
    async def rename(request: Request) -> Patch:
        changed = dict(request.object, data={"k": "new"})
        return Patch(object=changed)

    hook = Webhook("a.example.com", rename, rules=[Rule(["*"])], mutating=True, model=None)
    obj = {"apiVersion": "other.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "data": {"k": "old"}}
    response = (await review(hook, configmap_review(obj)))["response"]
    assert _patch_of(response) == [{"op": "replace", "path": "/data/k", "value": "new"}]


async def test_patch_operations_are_answered_as_given():
    response = (await review(ALWAYS_PATCH, configmap_review(configmap())))["response"]
    assert _patch_of(response) == [{"op": "add", "path": "/metadata/annotations", "value": {"patched": "yes"}}]


async def test_an_unchanged_object_answers_no_patch():
    async def same(request: Request) -> Patch:
        return Patch(object=request.object)

    response = (await review(Webhook("a.example.com", same, rules=[Rule(["*"])], mutating=True),
                             configmap_review(configmap())))["response"]
    assert response == {"uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "allowed": True}


async def test_an_exception_in_admit_is_errored_500():
    response = (await review(STAMP_WEBHOOK, configmap_review(configmap(data={"explode": "1"}))))["response"]
    assert response["allowed"] is False
    assert response["status"] == {"code": 500, "message": "the stamp broke"}


async def test_an_answer_that_is_none_of_the_three_is_errored_500():
    async def nothing(request: Request) -> None:
        return None

    response = (await review(Webhook("a.example.com", nothing, rules=[Rule(["*"])]),  # type: ignore[arg-type]
                             configmap_review(configmap())))["response"]
    assert response["status"] == {"code": 500, "message": "admit returned NoneType, not Allowed, Denied or Patch"}


async def test_an_object_its_model_refuses_is_errored_400():
    body = configmap_review({**configmap(), "data": {"k": 1}})
    response = (await review(DENY_LABELLED, body))["response"]
    assert response["allowed"] is False and response["status"]["code"] == 400
    assert "data.k" in response["status"]["message"]


def test_an_empty_body_is_malformed():
    with pytest.raises(MalformedReview, match="request body is empty"):
        decode_review(b"")


def test_a_body_that_is_not_json_is_malformed():
    with pytest.raises(MalformedReview, match="couldn't get version/kind; json parse error"):
        decode_review(b"{not json")


def test_a_review_of_an_unknown_version_is_malformed():
    with pytest.raises(MalformedReview, match='no kind "AdmissionReview" is registered for version '
                                              '"admission.k8s.io/v2"'):
        decode_review(configmap_review(configmap(), version="admission.k8s.io/v2"))


def test_a_review_without_kind_is_malformed():
    with pytest.raises(MalformedReview, match="Object 'Kind' is missing"):
        decode_review(b'{"request": {}}')


def test_a_review_without_a_request_is_malformed():
    with pytest.raises(MalformedReview, match="got an empty AdmissionRequest"):
        decode_review(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode())

