"""A CRD's ConversionReview (runtime.server.kinds.conversionwebhook): what is sent, what an answer must be, and
kube's words when it is not (webhook_converter.go), one test per rule; the webhook is a fake poster."""

from __future__ import annotations

import copy

import pytest

from runtime.server.admission.webhookclient import WebhookCallError
from runtime.server.kinds.conversionwebhook import (
    ConversionFailed, ConversionWebhook, RefusedObject, converted_objects, gvk_text, restored,
)

V1, V2 = "conv.example.com/v1", "conv.example.com/v2"
OBJ = {"apiVersion": V1, "kind": "Host", "metadata": {"name": "web", "namespace": "default", "uid": "u1",
                                                      "resourceVersion": "7", "labels": {"a": "1"}},
       "spec": {"host": "a"}}


def _crd(versions=("v1",), strategy="Webhook"):
    return {"metadata": {"name": "hosts.conv.example.com"},
            "spec": {"conversion": {"strategy": strategy, "webhook": {
                "clientConfig": {"url": "https://conv/convert"}, "conversionReviewVersions": list(versions)}}}}


class Poster:
    """Answers each review with `answer(review)`; records the reviews."""

    def __init__(self, answer):
        self.answer, self.reviews, self.timeouts = answer, [], []

    async def post_json(self, client_config, payload, *, timeout):
        self.reviews.append(payload)
        self.timeouts.append(timeout)
        return self.answer(payload)


def _success(review, change=lambda o: None):
    out = []
    for obj in review["request"]["objects"]:
        converted = dict(copy.deepcopy(obj), apiVersion=review["request"]["desiredAPIVersion"])
        change(converted)
        out.append(converted)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": review["request"]["uid"], "result": {"status": "Success"}, "convertedObjects": out}}


async def _convert(answer, objects=(OBJ,), versions=("v1",)):
    poster = Poster(answer)
    webhook = ConversionWebhook.of(_crd(versions))
    return await webhook.convert(poster, [copy.deepcopy(o) for o in objects], V2, kind="Host"), poster


def test_gvk_text_is_gos_group_version_kind_string():
    assert gvk_text(V1, "Host") == "conv.example.com/v1, Kind=Host" and gvk_text("v1", "Pod") == "/v1, Kind=Pod"


def test_only_a_webhook_strategy_has_a_webhook():
    assert ConversionWebhook.of(_crd(strategy="None")) is None


async def test_the_review_carries_a_fresh_uid_the_desired_version_and_the_objects_with_a_30s_timeout():
    _, poster = await _convert(_success)
    [review] = poster.reviews
    assert review["apiVersion"] == "apiextensions.k8s.io/v1" and review["kind"] == "ConversionReview"
    assert review["request"]["desiredAPIVersion"] == V2 and review["request"]["objects"] == [OBJ]
    assert len(review["request"]["uid"]) == 36 and poster.timeouts == [30.0]


async def test_the_review_version_is_the_first_listed_that_the_server_speaks():
    _, poster = await _convert(lambda r: dict(_success(r), apiVersion="apiextensions.k8s.io/v1beta1"),
                               versions=("v9", "v1beta1", "v1"))
    assert poster.reviews[0]["apiVersion"] == "apiextensions.k8s.io/v1beta1"


async def test_objects_already_in_the_desired_version_are_not_sent():
    already = dict(OBJ, apiVersion=V2)
    out, poster = await _convert(_success, objects=(already,))
    assert out == [already] and poster.reviews == []


async def test_a_list_is_one_review_and_answers_in_order():
    other = dict(copy.deepcopy(OBJ), apiVersion=V2)
    out, poster = await _convert(_success, objects=(OBJ, other, OBJ))
    assert len(poster.reviews) == 1 and len(poster.reviews[0]["request"]["objects"]) == 2
    assert [o["apiVersion"] for o in out] == [V2, V2, V2]


async def test_a_failed_call_is_a_500_without_a_reason_in_kubes_words():
    def down(review):
        raise WebhookCallError('Post "https://conv/convert?timeout=30s": context deadline exceeded')
    with pytest.raises(ConversionFailed) as caught:
        await _convert(down)
    status = caught.value.status()
    assert status["code"] == 500 and "reason" not in status
    assert status["message"] == ('conversion webhook for conv.example.com/v1, Kind=Host failed: Post '
                                 '"https://conv/convert?timeout=30s": context deadline exceeded')


def test_a_v1_answer_must_be_a_v1_conversion_review():
    with pytest.raises(ValueError, match="^expected webhook response of apiextensions.k8s.io/v1, "
                                         "Kind=ConversionReview, got /v1, Kind=Status$"):
        converted_objects("v1", "u", {"apiVersion": "v1", "kind": "Status"})


def test_an_answer_needs_a_response():
    with pytest.raises(ValueError, match="^no response provided$"):
        converted_objects("v1beta1", "u", {})


def test_a_v1_answer_must_carry_the_requests_uid_and_a_v1beta1_one_need_not():
    answer = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
              "response": {"uid": "other", "result": {"status": "Success"}, "convertedObjects": []}}
    with pytest.raises(ValueError, match='^expected response.uid="u", got "other"$'):
        converted_objects("v1", "u", answer)
    assert converted_objects("v1beta1", "u", answer) == []


def test_a_failed_result_is_its_message_or_its_status():
    def answer(result):
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": "u", "result": result}}
    with pytest.raises(ValueError, match="^no way$"):
        converted_objects("v1", "u", answer({"status": "Failure", "message": "no way"}))
    with pytest.raises(ValueError, match="^response.result.status was 'Failure', not 'Success'$"):
        converted_objects("v1", "u", answer({"status": "Failure"}))


async def test_an_answer_must_convert_as_many_objects_as_were_sent():
    def none(review):
        answer = _success(review)
        answer["response"]["convertedObjects"] = []
        return answer
    with pytest.raises(ConversionFailed, match="^conversion webhook for conv.example.com/v1, Kind=Host returned 0 "
                                               "objects, expected 1$"):
        await _convert(none)


def test_a_converted_object_keeps_the_originals_metadata_but_labels_and_annotations():
    converted = dict(copy.deepcopy(OBJ), apiVersion=V2)
    converted["metadata"].update(resourceVersion="99", labels={"b": "2"}, annotations={"x": "y"})
    out = restored(OBJ, converted, V2)
    assert out["metadata"] == dict(OBJ["metadata"], labels={"b": "2"}, annotations={"x": "y"})


def test_a_converted_object_without_labels_drops_them():
    converted = dict(copy.deepcopy(OBJ), apiVersion=V2)
    del converted["metadata"]["labels"]
    assert "labels" not in restored(OBJ, converted, V2)["metadata"]


def test_a_converted_object_must_be_of_the_desired_version_and_the_same_kind():
    with pytest.raises(RefusedObject, match=r"^invalid groupVersion \(expected conv.example.com/v2, received "
                                            r"conv.example.com/v1\)$"):
        restored(OBJ, copy.deepcopy(OBJ), V2)
    with pytest.raises(RefusedObject, match=r"^invalid kind \(expected Host, received Other\)$"):
        restored(OBJ, dict(copy.deepcopy(OBJ), apiVersion=V2, kind="Other"), V2)


async def test_a_renamed_object_is_refused_in_kubes_words_and_in_a_list_by_its_index():
    def rename(review):
        return _success(review, lambda o: o["metadata"].update(name="other"))
    with pytest.raises(ConversionFailed, match="^conversion webhook for conv.example.com/v1, Kind=Host returned "
                                               "invalid object: must have the same name: web != other$"):
        await _convert(rename)
    with pytest.raises(ConversionFailed, match="returned invalid converted object at index 1: must have the same "
                                               "name: web != other$"):
        await _convert(rename, objects=(OBJ, OBJ))


async def test_an_invalid_changed_label_is_refused():
    def bad_label(review):
        return _success(review, lambda o: o["metadata"].update(labels={"a": "not valid!"}))
    with pytest.raises(ConversionFailed, match='^conversion webhook for conv.example.com/v1, Kind=Host returned '
                                               'invalid metadata: metadata.labels: Invalid value: "not valid!": '):
        await _convert(bad_label)


async def test_a_crd_naming_no_review_version_the_server_speaks_cannot_convert():
    with pytest.raises(ConversionFailed, match="^no supported conversion review versions$"):
        await _convert(_success, versions=("v9",))
