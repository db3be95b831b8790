"""`WebhookServer`: the example webhooks served over real HTTPS (its own CA), AdmissionReviews posted to it
directly; malformed reviews are 400; its configurations are written through a client.

Real sockets: trio's real clock (no autojump), each request bounded by a short deadline.
"""

from __future__ import annotations

import base64
import json
import ssl

import httpx
import pytest
import trio

from runtime.controller.testing import open_test_env
from runtime.webhook import WebhookServer
from runtime.webhook.certs import self_signed
from tests.support.python_admission import (
    DENY_LABELLED, DENY_MESSAGE, STAMP, STAMP_WEBHOOK, WEBHOOKS, configmap, configmap_review,
)

DEADLINE = 5


def _client(server: WebhookServer) -> httpx.AsyncClient:
    context = ssl.create_default_context(cadata=server.tls.ca_pem.decode())
    return httpx.AsyncClient(base_url=server.url, verify=context)


async def _post(server: WebhookServer, path: str, body: bytes, content_type: str = "application/json"):
    with trio.fail_after(DEADLINE):
        async with _client(server) as client:
            return await client.post(path, content=body, headers={"content-type": content_type})


@pytest.fixture
async def server(nursery):
    served = WebhookServer(WEBHOOKS)
    await nursery.start(served.run)
    return served


async def test_a_review_is_answered_over_https_by_its_webhooks_path(server):
    body = json.dumps(configmap_review(configmap(labels={"deny": "now"}))).encode()
    answer = await _post(server, DENY_LABELLED.served_path, body)
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json()["response"]["status"]["message"] == DENY_MESSAGE.format("now")


async def test_a_mutating_webhook_answers_its_patch(server):
    answer = await _post(server, STAMP_WEBHOOK.served_path, json.dumps(configmap_review(configmap())).encode())
    patch = json.loads(base64.b64decode(answer.json()["response"]["patch"]))
    assert patch == [{"op": "add", "path": "/metadata/labels", "value": {STAMP[0]: STAMP[1]}}]


async def test_a_v1beta1_review_is_answered_in_v1beta1(server):
    body = json.dumps(configmap_review(configmap(), version="admission.k8s.io/v1beta1")).encode()
    answer = await _post(server, DENY_LABELLED.served_path, body)
    assert answer.json()["apiVersion"] == "admission.k8s.io/v1beta1"


@pytest.mark.parametrize("body,content_type,words", [
    (b"", "application/json", "request body is empty"),
    (b"{}", "text/plain", "contentType=text/plain, expected application/json"),
    (b"[1", "application/json", "couldn't get version/kind; json parse error"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "application/json",
     "got an empty AdmissionRequest"),
])
async def test_a_malformed_review_is_400(server, body, content_type, words):
    answer = await _post(server, DENY_LABELLED.served_path, body, content_type)
    assert answer.status_code == 400 and words in answer.text


async def test_an_unknown_path_is_404(server):
    assert (await _post(server, "/validate/other.example.com", b"{}")).status_code == 404


async def test_a_get_is_405(server):
    with trio.fail_after(DEADLINE):
        async with _client(server) as client:
            assert (await client.get(DENY_LABELLED.served_path)).status_code == 405


async def test_its_certificate_is_refused_without_its_ca(server):
    with trio.fail_after(DEADLINE), pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient(base_url=server.url, verify=ssl.create_default_context(
                cadata=self_signed(["127.0.0.1"]).ca_pem.decode())) as client:
            await client.post(DENY_LABELLED.served_path, content=b"{}")


async def test_two_webhooks_at_one_path_are_refused():
    with pytest.raises(ValueError, match="same path"):
        WebhookServer([DENY_LABELLED, DENY_LABELLED])


async def test_its_configurations_are_written_with_url_and_ca_bundle(nursery):
    async with open_test_env(domain="k8s.io", controllers=False) as env:
        served = WebhookServer(WEBHOOKS, client=env.client, configuration_name="examples.example.com")
        await nursery.start(served.run)
        rt = env.registry.scheme.by_api_version_kind("admissionregistration.k8s.io/v1",
                                                     "ValidatingWebhookConfiguration")
        validating = await env.client.get(rt, "examples.example.com")
        [hook] = validating["webhooks"]
        assert hook["clientConfig"] == {"url": served.url + DENY_LABELLED.served_path,
                                        "caBundle": served.tls.ca_bundle}
        assert (hook["name"], hook["sideEffects"], hook["failurePolicy"], hook["timeoutSeconds"],
                hook["admissionReviewVersions"]) == (DENY_LABELLED.name, "None", "Fail", 10, ["v1", "v1beta1"])
        assert hook["rules"] == [rule.to_dict() for rule in DENY_LABELLED.rules]
        rt = env.registry.scheme.by_api_version_kind("admissionregistration.k8s.io/v1",
                                                     "MutatingWebhookConfiguration")
        [mutating] = (await env.client.get(rt, "examples.example.com"))["webhooks"]
        assert mutating["name"] == STAMP_WEBHOOK.name and mutating["reinvocationPolicy"] == "Never"


async def test_a_restart_replaces_its_configurations(nursery):
    async with open_test_env(domain="k8s.io", controllers=False) as env:
        for _ in range(2):
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as inner:
                    served = WebhookServer([DENY_LABELLED], client=env.client, configuration_name="x.example.com")
                    await inner.start(served.run)
                    scope.cancel()
        rt = env.registry.scheme.by_api_version_kind("admissionregistration.k8s.io/v1",
                                                     "ValidatingWebhookConfiguration")
        [hook] = (await env.client.get(rt, "x.example.com"))["webhooks"]
        assert hook["clientConfig"]["url"] == served.url + DENY_LABELLED.served_path
