"""A webhook's answer checked as kube's `VerifyAdmissionResponse` (`webhooks.review.verify_response`): one rule
per test, in kube's words."""

from __future__ import annotations

import base64

import pytest

from runtime.server.admission.webhooks.review import verify_response

V1 = "admission.k8s.io/v1"
V1BETA1 = "admission.k8s.io/v1beta1"
PATCH = base64.b64encode(b'[{"op":"add","path":"/data/b","value":"2"}]').decode()


def _answer(uid: str = "u1", api_version: str = V1, **response: object) -> dict[str, object]:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": {"uid": uid, **response}}


def test_a_v1_answer_with_another_uid_is_invalid():
    with pytest.raises(ValueError, match='expected response.uid="u1", got "u2"'):
        verify_response("u1", V1, _answer("u2", allowed=True), mutating=False)


def test_a_v1beta1_answer_is_not_checked_for_its_uid():
    assert verify_response("u1", V1BETA1, _answer("u2", V1BETA1, allowed=True), mutating=False).allowed


def test_a_v1_answer_of_another_kind_is_invalid_in_gvk_words():
    answer = {"apiVersion": V1BETA1, "kind": "AdmissionReview", "response": {"uid": "u1", "allowed": True}}
    with pytest.raises(ValueError, match="expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
                                         "got admission.k8s.io/v1beta1, Kind=AdmissionReview"):
        verify_response("u1", V1, answer, mutating=False)


def test_an_answer_without_a_response_is_invalid():
    with pytest.raises(ValueError, match="webhook response was absent"):
        verify_response("u1", V1, {"apiVersion": V1, "kind": "AdmissionReview"}, mutating=False)


def test_allowed_missing_means_not_allowed():
    assert verify_response("u1", V1, _answer(), mutating=False).allowed is False


def test_a_patch_without_a_patch_type_is_invalid_from_a_mutating_webhook():
    with pytest.raises(ValueError, match="webhook returned response.patch but not response.patchType"):
        verify_response("u1", V1, _answer(allowed=True, patch=PATCH), mutating=True)


def test_a_validating_webhooks_patch_is_ignored():
    response = verify_response("u1", V1, _answer(allowed=True, patch=PATCH), mutating=False)
    assert (response.patch, response.patch_type) == (b"", "")


def test_a_mutating_webhooks_patch_is_decoded_from_base64():
    response = verify_response("u1", V1, _answer(allowed=True, patch=PATCH, patchType="JSONPatch"), mutating=True)
    assert (response.patch, response.patch_type) == (base64.b64decode(PATCH), "JSONPatch")


def test_a_patch_that_is_not_base64_is_invalid():
    with pytest.raises(ValueError, match="illegal base64 data"):
        verify_response("u1", V1, _answer(allowed=True, patch="%%%", patchType="JSONPatch"), mutating=True)


def test_an_answer_that_is_not_an_object_is_a_decoding_failure():
    with pytest.raises(TypeError, match="cannot unmarshal array into Go value"):
        verify_response("u1", V1, [], mutating=False)


def test_warnings_and_audit_annotations_are_kept_as_strings():
    response = verify_response("u1", V1, _answer(allowed=True, warnings=["w1", 3], auditAnnotations={"k": 1}),
                               mutating=False)
    assert (response.warnings, response.audit_annotations) == (["w1"], {"k": "1"})
