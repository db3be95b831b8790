"""The AdmissionReview a webhook is sent (`webhooks.review.create_review`), as kube's
`webhook/request.CreateAdmissionObjects`: one rule per test."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.models import catalog
from runtime.server.admission.matching import RequestFacts, equivalent
from runtime.server.admission.webhooks.hooks import Hook, HookSource
from runtime.server.admission.webhooks.review import CallingWebhookError, create_review
from tests.support.policy_fakes import request
from tests.support.webhook_fakes import allowing, configuration, hook_spec, webhook_context


def _configmap(name: str = "c") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, "data": {"a": "1"}}


def _hook(**fields: Any) -> tuple[Any, Hook]:
    context = webhook_context(configuration("ValidatingWebhookConfiguration", "cfg", hook_spec("h.example.com",
                                                                                                **fields)),
                              answer=allowing())
    (hook,) = HookSource(context, catalog.VALIDATING_WEBHOOK_CONFIGURATION).hooks()
    return context, hook


def _review(hook: Hook, context: Any, operation: str = "create", **kw: Any) -> tuple[str, str, dict[str, Any]]:
    req = request(_configmap() if operation != "delete" else None, operation=operation,
                  old=_configmap() if operation != "create" else None)
    match = equivalent(RequestFacts.of(req), hook.rules, context, hook.match_policy)
    assert match is not None
    return create_review(hook, match, req, kw.get("obj", req.obj), kw.get("old", req.old))


def test_the_first_accepted_review_version_is_sent():
    context, hook = _hook(admissionReviewVersions=["v2", "v1beta1", "v1"])
    _, api_version, review = _review(hook, context)
    assert api_version == review["apiVersion"] == "admission.k8s.io/v1beta1"
    assert review["kind"] == "AdmissionReview"


def test_a_webhook_accepting_neither_v1_nor_v1beta1_is_a_calling_error():
    context, hook = _hook(admissionReviewVersions=["v2"])
    with pytest.raises(CallingWebhookError, match='failed calling webhook "h.example.com": could not create '
                                                  "admission objects"):
        _review(hook, context)


def test_each_review_has_a_new_uid_it_is_answered_with():
    context, hook = _hook()
    uid_a, _, first = _review(hook, context)
    uid_b, _, second = _review(hook, context)
    assert uid_a != uid_b
    assert (first["request"]["uid"], second["request"]["uid"]) == (uid_a, uid_b)


def test_the_request_names_kind_resource_operation_and_user_in_kubes_field_order():
    context, hook = _hook()
    _, _, review = _review(hook, context, "update")
    body = review["request"]
    assert list(body)[:3] == ["uid", "kind", "resource"]
    assert body["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert body["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert (body["operation"], body["name"], body["namespace"]) == ("UPDATE", "c", "ns")
    assert body["userInfo"]["username"] == "alice"
    assert list(body)[-4:] == ["object", "oldObject", "dryRun", "options"]


def test_object_and_old_object_are_null_not_omitted_when_absent():
    context, hook = _hook()
    _, _, created = _review(hook, context, "create")
    _, _, deleted = _review(hook, context, "delete", obj=None)
    assert created["request"]["oldObject"] is None and created["request"]["object"]["kind"] == "ConfigMap"
    assert deleted["request"]["object"] is None and deleted["request"]["oldObject"]["kind"] == "ConfigMap"
    assert "dryRun" in created["request"] and created["request"]["dryRun"] is False
