"""A mutating webhook's JSON patch applied as kube's `callAttrMutatingHook`, and its audit annotations:
`mutation.webhook.admission.k8s.io/round_N_index_M` for every call, `patch.webhook.admission.k8s.io/round_N_index_M`
with the patch only when the request's audit level is Request or above (kube's `AddAnnotationWithLevel`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runtime.machinery import errors
from runtime.server.admission.webhooks import MutatingWebhooks
from runtime.server.kinds import AUDIT_ANNOTATIONS, AUDIT_LEVEL
from tests.support.policy_fakes import request
from tests.support.webhook_fakes import allowing, configuration, hook_spec, patching, webhook_context

ADD_X = [{"op": "add", "path": "/data/x", "value": "1"}]
MUTATION = "mutation.webhook.admission.k8s.io/round_0_index_1"
PATCH = "patch.webhook.admission.k8s.io/round_0_index_1"


def _configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {}}


def _context(answer: Any) -> Any:
    context = webhook_context(configuration("MutatingWebhookConfiguration", "cfg", hook_spec("quiet"),
                                            hook_spec("x.example.com")), answer=allowing())
    client = context.webhook_client
    client.answer = lambda review: (answer if client.sent[-1][0]["url"] == "https://x.example.com/hook"
                                    else allowing())(review)
    return context


async def _audited(level: str, answer: Any) -> tuple[Any, dict[str, str]]:
    """The request and its audit event's annotations, audited at `level`."""
    sink: dict[str, str] = {}
    annotations_token, level_token = AUDIT_ANNOTATIONS.set(sink), AUDIT_LEVEL.set(level)
    try:
        req = request(_configmap())
        await MutatingWebhooks(_context(answer)).mutate(req)
    finally:
        AUDIT_ANNOTATIONS.reset(annotations_token)
        AUDIT_LEVEL.reset(level_token)
    return req, sink


async def test_the_patch_is_applied_to_the_object():
    req, _ = await _audited("Metadata", patching(ADD_X))
    assert req.obj["data"] == {"x": "1"}


@pytest.mark.parametrize("level", ["Metadata", "Request", "RequestResponse"])
async def test_the_mutation_annotation_names_configuration_webhook_and_change_at_metadata_and_up(level):
    _, sink = await _audited(level, patching(ADD_X))
    assert json.loads(sink[MUTATION]) == {"configuration": "cfg", "webhook": "x.example.com", "mutated": True}
    assert json.loads(sink["mutation.webhook.admission.k8s.io/round_0_index_0"])["mutated"] is False


@pytest.mark.parametrize("level", ["Request", "RequestResponse"])
async def test_the_patch_annotation_is_recorded_at_audit_level_request_and_up(level):
    _, sink = await _audited(level, patching(ADD_X))
    assert json.loads(sink[PATCH]) == {"configuration": "cfg", "webhook": "x.example.com", "patch": ADD_X,
                                       "patchType": "JSONPatch"}


async def test_the_patch_annotation_is_not_recorded_at_audit_level_metadata():
    _, sink = await _audited("Metadata", patching(ADD_X))
    assert PATCH not in sink and MUTATION in sink


async def test_a_patch_that_does_not_apply_is_kubes_500():
    with pytest.raises(errors.StatusError) as caught:
        await _audited("Metadata", patching([{"op": "replace", "path": "/data/missing", "value": "1"}]))
    assert caught.value.code == 500


async def test_an_unsupported_patch_type_is_a_failed_call():
    answer = patching(ADD_X)

    def other_type(review: dict[str, Any]) -> Any:
        reply = answer(review)
        reply["response"]["patchType"] = "MergePatch"
        return reply
    with pytest.raises(errors.StatusError) as caught:
        await _audited("Metadata", other_type)
    assert caught.value.code == 500 and 'unsupported patch type "MergePatch"' in caught.value.message


async def test_an_empty_patch_changes_nothing_and_is_annotated_unmutated():
    req, sink = await _audited("Request", patching([]))
    assert req.obj["data"] == {} and json.loads(sink[MUTATION])["mutated"] is False and PATCH not in sink
